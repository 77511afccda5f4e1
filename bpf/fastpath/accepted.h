/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What TCP accepted (fastpath_maps.h: TCP stays in charge): where TCP takes up a segment,
 * each record whose FPDU lies in its new bytes is marked OK or BAD by its CRC, and the
 * marks made from the segment before are wiped if TCP did not queue it.
 */
#ifndef IWX_BPF_FP_ACCEPTED_H
#define IWX_BPF_FP_ACCEPTED_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#include "fastpath/maps.h"
#include "fastpath/packet.h"
#include "fastpath_maps.h"
#include "proto/wire.h"

#include "kernel.h"

/*
 * TCP takes up a segment of a followed, ESTABLISHED socket (tcp_rcv_established, under the
 * socket's lock). Where the records' FPDUs lie in its new bytes (from rcv_nxt on: what
 * TCP already has, it has from another segment), compare them with the segment's (their
 * CRC), and mark each (fastpath_maps.h: TCP stays in charge).
 */
struct acceptance {
	struct bpf_dynptr	*dp;		/* the segment from its TCP header */
	struct iwx_fp_slot	*s;
	const struct iwx_fp_conn *conn;
	__u32			seq, hlen;	/* its first payload byte's; where that is in dp */
	__u32			from, end;	/* its new bytes: [from, end) */
	__u32			i, tail;	/* after the next record back; the oldest's */
	bool			wipe;		/* [from, end) never entered the stream: unmark */
};

/* The record's CRC word against TCP's bytes there: 1 the same, 0 not in this read, -1 another. */
static __always_inline int same_crc(struct acceptance *a, const struct iwx_fp_rec *r, __u32 ulen)
{
	__u32 i = iwx_mpa_unmarked_len(ulen) - IWX_MPA_CRC_LEN, at, got, want;
	__u8 crc_at = (r->trailer_len - IWX_MPA_CRC_LEN) & 3;

	at = r->seq + (a->conn->markers ? iwx_mpa_marked_off(r->seq - a->conn->mark_base, i) : i);
	if (seq_before(at, a->from) || seq_before(a->end, at + 4))
		return 0;
	if (bpf_dynptr_read(&got, sizeof(got), a->dp, a->hlen + (at - a->seq), 0))
		return 0;
	__builtin_memcpy(&want, r->trailer + crc_at, sizeof(want));
	return got == want ? 1 : -1;
}

#define ACCEPT_MAX	1024	/* records looked at per segment: more than 64 KiB holds */
#define ACCEPT_MARKERS	64	/* ... with markers, where they come in no order */

/* How far an FPDU of ulen may reach in the stream: with markers, at most one for every
 * 512 bytes and one more at each end (RFC 5044 §4.3). */
static __always_inline __u32 wire_len(const struct iwx_fp_conn *conn, __u32 ulen)
{
	__u32 len = iwx_mpa_unmarked_len(ulen);

	return conn->markers ? len + IWX_MPA_MARKER_LEN * (len / IWX_MPA_MARKER_DATA + 2) : len;
}

/*
 * The next record back from the newest: those of this segment were written just now (the
 * program at the hook saw it first). In stream order without markers, one whose CRC lies
 * before the new bytes ends the walk: all before it lie further back.
 */
static long accept_one(__u32 n, struct acceptance *a)
{
	struct iwx_fp_rec *r;
	__u32 ulen, acc, seq;
	int same;

	if (a->i == a->tail || (a->conn->markers && n >= ACCEPT_MARKERS))
		return 1;
	r = &a->s->ring[--a->i & (IWX_FP_RING - 1)];
	seq = r->seq;
	ulen = (__u32)r->hdr[0] << 8 | r->hdr[1];
	if (!a->conn->markers && seq_before(seq + iwx_mpa_unmarked_len(ulen), a->from + 1))
		return 1;
	if (a->wipe) {	/* any mark on an FPDU that overlaps: the bytes were not TCP's */
		if (seq_before(seq, a->end) && seq_before(a->from, seq + wire_len(a->conn, ulen)))
			r->accepted = IWX_FP_ACC_TAG(seq);
		return 0;
	}
	acc = r->accepted;
	if ((acc & ~IWX_FP_ACC_BITS) != IWX_FP_ACC_TAG(seq))
		acc = IWX_FP_ACC_TAG(seq);	/* not marked yet */
	if (acc & (IWX_FP_ACC_OK | IWX_FP_ACC_BAD))
		return 0;
	/* one read per FPDU (fastpath_maps.h) */
	same = same_crc(a, r, ulen);
	acc |= same > 0 ? IWX_FP_ACC_OK : same < 0 ? IWX_FP_ACC_BAD : 0;
	r->accepted = acc;
	return 0;
}

/*
 * Without markers, records lie in stream order: the first that starts at or after the
 * segment's end, found by halving. Those after it are of packets the hook has seen and TCP
 * not yet (a batch of them, or while iwxd holds the socket): walked, they would cost a
 * step each for every segment. Should iwxd take records meanwhile, the walk just starts
 * elsewhere: a record it leaves unmarked is read, not trusted.
 */
static __always_inline __u32 after_segment(const struct acceptance *a)
{
	__u32 lo = 0, hi = a->i - a->tail;	/* counted from the oldest: the answer is in [lo, hi] */

	if (hi > IWX_FP_RING)
		return a->i;	/* iwxd took records meanwhile: the walk sorts it out */
	for (int k = 0; k < 13 && lo < hi; k++) {	/* 13: log2(IWX_FP_RING) + 1 */
		__u32 mid = lo + (hi - lo) / 2;

		if (seq_before(a->s->ring[(a->tail + mid) & (IWX_FP_RING - 1)].seq, a->end))
			lo = mid + 1;
		else
			hi = mid;
	}
	return a->tail + lo;
}

/*
 * The segment skb that TCP takes up for the socket sk: judge what it carries where records
 * are, after wiping the marks of the last segment judged should TCP have refused it.
 */
static __always_inline int judge_segment(struct sock *sk, const struct sk_buff *skb)
{
	struct acceptance a = {};
	struct bpf_dynptr dp;
	struct tcp_sock *tp;
	__u8 th[14];

	a.conn = bpf_sk_storage_get(&iwx_fp_socks, sk, NULL, 0);
	if (!a.conn || !(a.s = bpf_map_lookup_elem(&iwx_fp_slots, &a.conn->slot)))
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp || bpf_dynptr_from_skb((struct __sk_buff *)skb, 0, &dp) ||
	    bpf_dynptr_read(th, sizeof(th), &dp, 0, 0))
		return 0;
	a.dp = &dp;
	a.hlen = (th[12] >> 4) * 4;
	a.seq = (__u32)th[4] << 24 | (__u32)th[5] << 16 | (__u32)th[6] << 8 | th[7];
	if (skb->len <= a.hlen)
		return 0;	/* no data: an ACK */
	a.end = a.seq + (skb->len - a.hlen);
	a.from = seq_before(a.seq, tp->rcv_nxt) ? tp->rcv_nxt : a.seq;
	a.tail = *(volatile __u32 *)&a.s->tail;
	a.i = *(volatile __u32 *)&a.s->head;	/* published after their record (place) */
	/* TCP's verdict on the last segment judged: queued, rcv_nxt is past its bytes */
	if (a.s->judged_from != a.s->judged_end && seq_before(tp->rcv_nxt, a.s->judged_end)) {
		struct acceptance w = a;

		w.wipe = true;
		w.from = a.s->judged_from;
		w.end = a.s->judged_end;
		if (!w.conn->markers)
			w.i = after_segment(&w);
		bpf_loop(ACCEPT_MAX, accept_one, &w, 0);
		a.s->judged_from = a.s->judged_end = 0;
	}
	if (!seq_before(a.from, a.end))
		return 0;	/* nothing new */
	a.s->judged_from = a.from;
	a.s->judged_end = a.end;
	if (!a.conn->markers)
		a.i = after_segment(&a);
	bpf_loop(ACCEPT_MAX, accept_one, &a, 0);
	return 0;
}

#endif /* IWX_BPF_FP_ACCEPTED_H */
