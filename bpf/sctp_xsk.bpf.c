// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * iwxd's SCTP through AF_XDP (control/engine/sctp_xsk.h): UDP datagrams to iwxd's SCTP
 * port, over IPv4 or IPv6, go to the AF_XDP socket of the queue they arrived on, before
 * the kernel's UDP sees them; everything else passes, and so does everything when that
 * queue has no socket (bpf_redirect_map's fallback), which the kernel's UDP socket then
 * receives. Fragments, IPv4 options and IPv6 extension headers are left to the kernel.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
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

/* The UDP header of an IPv4 or IPv6 datagram as the kernel's UDP would take it, or NULL. */
static __always_inline struct udphdr *udp_of(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct ipv6hdr *ip6 = (void *)(eth + 1);

	if ((void *)(eth + 1) > end)
		return NULL;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & bpf_htons(0x3fff)))
			return NULL;
		return (void *)(ip + 1);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return NULL;
		return (void *)(ip6 + 1);
	}
	return NULL;
}

SEC("xdp")
int iwx_sctp_xsk(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct udphdr *udp = udp_of(data, end);

	if (!udp || (void *)(udp + 1) > end || udp->dest != sctp_port)
		return XDP_PASS;
	return bpf_redirect_map(&iwx_xsks, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
