// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * iwxd's SCTP through AF_XDP (control/engine/sctp_xsk.h): IPv4 UDP datagrams to iwxd's
 * SCTP port go to the AF_XDP socket of the queue they arrived on, before the kernel's UDP
 * sees them; everything else passes, and so does everything when that queue has no
 * socket (bpf_redirect_map's fallback), which the kernel's UDP socket then receives.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define MAX_QUEUES	64

const volatile __be16 sctp_port;	/* iwxd --sctp-port, in network order */

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} iwx_xsks SEC(".maps");

SEC("xdp")
int iwx_sctp_xsk(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	/* fragments and IP options are left to the kernel, whose UDP socket takes them */
	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP || (ip->frag_off & bpf_htons(0x3fff)) ||
	    udp->dest != sctp_port)
		return XDP_PASS;
	return bpf_redirect_map(&iwx_xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
