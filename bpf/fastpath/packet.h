/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A packet as the programs see it: what its hook knows of it (struct pkt) and its
 * Ethernet, IP and TCP headers, parsed before anything is known of its connection.
 */
#ifndef IWX_BPF_FP_PACKET_H
#define IWX_BPF_FP_PACKET_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <stdbool.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fastpath_maps.h"

struct pkt {
	struct bpf_dynptr	dp;
	__u32			len;
	__u32			ifindex;
	bool			csum_good;	/* the hook knows the TCP checksum is good */
	bool			other_host;	/* not addressed to this host: IP will drop it */
	bool			vlan;		/* tagged (TC: the tag taken out of the frame) */
};

struct tcp_pkt {
	struct iwx_fp_key	key;
	__u32			l4, l4_len;	/* TCP header's offset, TCP length */
	__u32			payload, end;	/* TCP payload's offsets */
	__u32			seq, ack;
	__u32			opts;		/* the TCP options' offset (they end at payload) */
	__u8			flags;		/* byte 13 of the TCP header */
	bool			ip_bad;		/* an IP header the host drops, or one with options */
};

static __always_inline __u16 fold(__s64 sum)
{
	__u64 s = (__u32)sum;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

/* Ethernet, up to two VLAN tags (p->vlan: none is this device's), IPv4 or IPv6, TCP.
 * false: not for us. */
static __always_inline bool parse(struct pkt *p, struct tcp_pkt *t)
{
	struct ethhdr eth;
	struct tcphdr tcp;
	__u32 off = sizeof(eth), ip_end;
	__u16 proto;

	__builtin_memset(t, 0, sizeof(*t));
	if (bpf_dynptr_read(&eth, sizeof(eth), &p->dp, 0, 0))
		return false;
	proto = eth.h_proto;
	for (int i = 0; i < 2 && (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)); i++) {
		__be16 vlan[2];	/* TCI, encapsulated protocol */

		if (bpf_dynptr_read(vlan, sizeof(vlan), &p->dp, off, 0))
			return false;
		proto = vlan[1];
		off += sizeof(vlan);
		p->vlan = true;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_dynptr_read(&ip, sizeof(ip), &p->dp, off, 0) || ip.ihl < 5 ||
		    ip.protocol != IPPROTO_TCP || (ip.frag_off & bpf_htons(0x3fff)))
			return false;	/* fragments: TCP sees them once reassembled */
		/* ip_rcv_core drops a bad header sum; options (source routes) it may drop too */
		t->ip_bad = ip.version != 4 || ip.ihl != 5 || bpf_ntohs(ip.tot_len) < sizeof(ip) ||
			    fold(bpf_csum_diff(0, 0, (__be32 *)&ip, sizeof(ip), 0)) != 0xffff;
		t->key.saddr[0] = ip.saddr;
		t->key.daddr[0] = ip.daddr;
		ip_end = off + bpf_ntohs(ip.tot_len);
		off += ip.ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_dynptr_read(&ip6, sizeof(ip6), &p->dp, off, 0) || ip6.nexthdr != IPPROTO_TCP)
			return false;	/* extension headers: left to iwxd */
		t->ip_bad = ip6.version != 6;
		__builtin_memcpy(t->key.saddr, &ip6.saddr, 16);
		__builtin_memcpy(t->key.daddr, &ip6.daddr, 16);
		t->key.v6 = 1;
		off += sizeof(ip6);
		ip_end = off + bpf_ntohs(ip6.payload_len);
	} else {
		return false;
	}
	if (bpf_dynptr_read(&tcp, sizeof(tcp), &p->dp, off, 0) || tcp.doff < 5 || ip_end > p->len)
		return false;
	t->key.sport = tcp.source;
	t->key.dport = tcp.dest;
	t->l4 = off;
	t->l4_len = ip_end - off;
	t->payload = off + tcp.doff * 4;
	t->end = ip_end;
	t->seq = bpf_ntohl(tcp.seq);
	t->ack = bpf_ntohl(tcp.ack_seq);
	t->opts = off + sizeof(tcp);
	t->flags = ((__u8 *)&tcp)[13];
	/* no payload (an ACK, a bare FIN or RST): nothing to place, and no socket to look up */
	return t->payload < t->end;
}

/* Sequence numbers wrap: a is before b within half their space (RFC 9293 §3.4). */
static __always_inline bool seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

#endif /* IWX_BPF_FP_PACKET_H */
