// SPDX-License-Identifier: MIT
/*
 * Passes every packet: scripts/bench.sh attaches it to both veth ends for its baseline
 * of the XDP measurements, the veth as iwx's XDP mode leaves it (in XDP mode: no GRO,
 * the peer's TSO and GSO cleared) with nothing placed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx __attribute__((unused)))
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
