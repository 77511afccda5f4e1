// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The fast path: places the payload of RDMA Writes and Read Responses into registered
 * memory as packets arrive, before TCP hands their bytes to anyone (fastpath_maps.h).
 * One parser for two hooks: TC ingress (iwx_tc) and XDP (iwx_xdp) differ only in how
 * the packet is reached (a dynptr over either) and what they know of its checksum.
 * Both pass every packet on unchanged: the fast path only ever adds a copy, and iwxd
 * does whatever it did not.
 *
 * Nothing is placed unless all hold: the connection is iwxd's and its socket is the
 * one the 4-tuple leads to; the packet is one kernel TCP would accept (tcp_refusal:
 * addressed to this host, untagged, a sound IP header, ACK and no RST, SYN or URG, a checksum
 * known to be good, an acceptable ACK and timestamp, an ESTABLISHED socket) and the FPDU
 * lies in the socket's receive window; the FPDU's start is certain and it ends in the
 * packet; no Send with Invalidate before it waits for iwxd; and the checks of
 * proto/ddp_check.h (RFC 5041 §7.1, RFC 5040 §7.2) pass. What the program cannot know
 * (netfilter, IPsec policy, a race with TCP's own state) iwxd learns otherwise: it takes
 * a placed FPDU only once TCP has accepted those very bytes (fastpath_maps.h).
 *
 * The rules and the work live in bpf/fastpath/, a job to a header, which this file alone
 * includes: the maps (maps.h), the packet parsed (packet.h), what TCP would refuse
 * (refusal.h), the walk over a segment's FPDUs (walk.h) and the placing of one
 * (place.h), what TCP accepted (accepted.h). Here: the programs, and a packet's way from
 * its hook to the walk (its connection, its socket, its slot).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <stdbool.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "fastpath/maps.h"
#include "fastpath/packet.h"
#include "fastpath/verdict.h"
#include "fastpath/refusal.h"
#include "fastpath/walk.h"
#include "fastpath/accepted.h"
#include "fastpath_maps.h"

#include "kernel.h"

#define CLAIM_TRIES	4096	/* a busy slot is tried this often (a few microseconds) */
#define PACKET_HOST	0	/* skb->pkt_type: addressed to this host (linux/if_packet.h) */

static __always_inline struct iwx_fp_cpu *cpu_enter(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct iwx_fp_cpu *c = bpf_map_lookup_elem(&iwx_fp_cpus, &cpu);

	if (c)
		__sync_fetch_and_add(&c->seq, 1);	/* odd: running, a full barrier on x86 */
	return c;
}

static __always_inline void cpu_leave(struct iwx_fp_cpu *c)
{
	if (c)
		__sync_fetch_and_add(&c->seq, 1);
}

/*
 * The socket the 4-tuple leads to: is it the connection's? Its window, and whether TCP
 * would refuse the segment (w->refusal, unless the packet is refused already).
 */
static __always_inline bool socket_of(void *ctx, struct pkt *p, const struct tcp_pkt *t,
				      const struct iwx_fp_conn *conn, struct walk *w)
{
	struct bpf_sock_tuple tuple = {};
	struct bpf_sock *sk;
	struct tcp_sock *tp;
	__u32 size;
	bool mine = false;

	if (t->key.v6) {
		__builtin_memcpy(tuple.ipv6.saddr, t->key.saddr, 16);
		__builtin_memcpy(tuple.ipv6.daddr, t->key.daddr, 16);
		tuple.ipv6.sport = t->key.sport;
		tuple.ipv6.dport = t->key.dport;
		size = sizeof(tuple.ipv6);
	} else {
		tuple.ipv4.saddr = t->key.saddr[0];
		tuple.ipv4.daddr = t->key.daddr[0];
		tuple.ipv4.sport = t->key.sport;
		tuple.ipv4.dport = t->key.dport;
		size = sizeof(tuple.ipv4);
	}
	sk = bpf_skc_lookup_tcp(ctx, &tuple, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return false;
	tp = bpf_skc_to_tcp_sock(sk);
	if (tp && tp->inet_conn.icsk_inet.sk.__sk_common.skc_cookie.counter == (long long)conn->cookie) {
		w->win_lo = tp->rcv_nxt;
		w->win_hi = tp->rcv_wup + tp->rcv_wnd;
		if (w->refusal == IWX_FP_NO_REFUSAL)
			w->refusal = tcp_refusal(p, t, tp);
		mine = true;
	}
	bpf_sk_release(sk);
	return mine;
}

/*
 * Take the connection's slot. Another CPU may hold it (a sender that moved between CPUs
 * has packets of one stream in two CPUs' backlogs): wait a little, for it walks one packet.
 */
struct claim {
	struct iwx_fp_slot	*s;
	bool			got;
};

static long try_claim(__u32 i, struct claim *c)
{
	(void)i;
	c->got = __sync_val_compare_and_swap(&c->s->busy, 0, 1) == 0;
	return c->got;
}

static __always_inline bool claim(struct iwx_fp_slot *s)
{
	struct claim c = { .s = s };

	bpf_loop(CLAIM_TRIES, try_claim, &c, 0);
	return c.got;
}

static __always_inline void fastpath(void *ctx, struct pkt *p)
{
	struct walk w = { .p = p };
	struct iwx_fp_cpu *cpu;
	const struct iwx_fp_conn *conn;
	struct iwx_fp_slot *s;
	struct tcp_pkt t;
	bool whole;

	if (!parse(p, &t))
		return;
	cpu = cpu_enter();
	conn = bpf_map_lookup_elem(&iwx_fp_conns, &t.key);
	if (!conn)
		goto out;
	s = bpf_map_lookup_elem(&iwx_fp_slots, &conn->slot);
	w.ifc = bpf_map_lookup_elem(&iwx_fp_ifaces, &p->ifindex);
	if (!s)
		goto out;
	w.refusal = packet_refusal(p, &t);
	if (!socket_of(ctx, p, &t, conn, &w))
		goto out;	/* a socket iwxd no longer has (it ended or iwxd died) */
	if (!claim(s)) {
		/* another CPU follows this stream: this packet's FPDUs go unseen, which is a gap */
		if (w.ifc)
			w.ifc->skipped[IWX_FP_SKIP_BUSY]++;
		ring(s, conn->slot, w.ifc);	/* and iwxd must read them */
		goto out;
	}
	w.s = s;
	w.conn = conn;
	w.off = t.payload;
	w.end = t.end;
	s->c.packets++;
	if (w.ifc)
		w.ifc->packets++;
	w.base = conn->mark_base;
	whole = conn->markers ? walk_marked(&w, t.seq, t.end - t.payload) :
				walk_packet(&w, t.seq, t.end - t.payload);
	wake_for(&w, t.seq, t.end - t.payload, whole);
	__sync_lock_test_and_set(&s->busy, 0);
out:
	cpu_leave(cpu);
}

SEC("tc")
int iwx_tc(struct __sk_buff *skb)
{
	struct sk_buff *kskb = bpf_cast_to_kern_ctx(skb);
	struct pkt p = { .len = skb->len, .ifindex = skb->ifindex };
	__u8 summed = BPF_CORE_READ_BITFIELD(kskb, ip_summed);

	/* PARTIAL: built on this host, never on a wire; UNNECESSARY: the device checked it */
	p.csum_good = summed == CHECKSUM_PARTIAL || summed == CHECKSUM_UNNECESSARY;
	p.other_host = skb->pkt_type != PACKET_HOST;	/* eth_type_trans said */
	p.vlan = skb->vlan_present;
	if (!bpf_dynptr_from_skb(skb, 0, &p.dp))
		fastpath(skb, &p);
	return TC_ACT_UNSPEC;	/* on to the next program, or to the stack */
}

/*
 * Is the frame addressed to the interface's own MAC address, as eth_type_trans will find
 * (PACKET_HOST)? Not another host's (promiscuous mode), nor broadcast or multicast.
 */
static __always_inline bool for_this_host(struct xdp_md *xdp, struct pkt *p)
{
	struct xdp_buff *x = bpf_cast_to_kern_ctx(xdp);
	const unsigned char *addr = BPF_CORE_READ(x, rxq, dev, dev_addr);
	__u8 mine[ETH_ALEN], dst[ETH_ALEN];

	if (!addr || bpf_probe_read_kernel(mine, sizeof(mine), addr) ||
	    bpf_dynptr_read(dst, sizeof(dst), &p->dp, 0, 0))
		return false;
	for (int i = 0; i < ETH_ALEN; i++)
		if (mine[i] != dst[i])
			return false;
	return true;
}

SEC("?xdp.frags")	/* loaded only by fastpath_xdp.c, through libxdp */
int iwx_xdp(struct xdp_md *xdp)
{
	struct pkt p = { .len = bpf_xdp_get_buff_len(xdp), .ifindex = xdp->ingress_ifindex };

	/* XDP is told nothing of checksums: the program checks them itself */
	if (!bpf_dynptr_from_xdp(xdp, 0, &p.dp)) {
		p.other_host = !for_this_host(xdp, &p);
		fastpath(xdp, &p);
	}
	return XDP_PASS;
}

/*
 * Every segment of an ESTABLISHED socket passes here first, the data TCP queues among
 * them, whichever way it came (fast path or not, from its backlog, before or after the
 * out-of-order queue). Data accepted elsewhere (in FIN_WAIT, say) leaves records unmarked:
 * iwxd reads those FPDUs itself.
 */
SEC("tp_btf/tcp_probe")
int iwx_accepted(__u64 *ctx)
{
	struct sock *sk = (void *)ctx[0];
	const struct sk_buff *skb = (const void *)ctx[1];

	return judge_segment(sk, skb);
}

/*
 * A socket's read position (copied_seq) and what TCP expects next (rcv_nxt), for the
 * socket whose cookie is anchor_cookie: together, under the socket's lock, which the
 * iterator holds. iwxd, the socket's only reader, asks between reads.
 */
SEC("iter/tcp")
int iwx_anchor(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;
	__u32 seq[2];

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp || tp->inet_conn.icsk_inet.sk.__sk_common.skc_cookie.counter != (long long)anchor_cookie)
		return 0;
	seq[0] = tp->copied_seq;
	seq[1] = tp->rcv_nxt;
	bpf_seq_write(ctx->meta->seq, seq, sizeof(seq));
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
