/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The walk over a TCP segment's FPDUs, its connection's slot held: where they start (in
 * step with the stream, after a gap as an island, or from markers), which of them the
 * rules let through to be placed (walk_one), iwxd's answers taken, and the wake-up
 * iwxd gets after the packet.
 */
#ifndef IWX_BPF_FP_WALK_H
#define IWX_BPF_FP_WALK_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fastpath/maps.h"
#include "fastpath/packet.h"
#include "fastpath/place.h"
#include "fastpath/verdict.h"
#include "fastpath_maps.h"
#include "proto/wire.h"

#define MAX_FPDUS	4096	/* walked in one packet: 64 KiB of the smallest FPDUs (20 bytes) */

struct walk {
	struct pkt		*p;
	struct iwx_fp_slot	*s;
	const struct iwx_fp_conn *conn;
	struct iwx_fp_counters	*ifc;
	__u32			off, end;	/* the next FPDU and the end of the payload */
	__u32			seq;		/* of off */
	__u32			win_lo, win_hi;	/* rcv_nxt, right edge of the window */
	__u32			refusal;	/* a reason for the whole packet, or IWX_FP_NO_REFUSAL */
	__u32			base;		/* markers: TCP sequence number of stream position 0 */
	bool			ahead;		/* the packet came before bytes in front of it */
	bool			island;		/* followed, not placed: after a gap (walk_packet) */
	bool			bad;		/* a header that is not DDP/RDMAP */
	bool			unplaced;	/* an FPDU was skipped that iwxd must read soon */
	bool			ends;		/* a message's last segment came: iwxd is rung for it */
};

static __always_inline void skip(struct walk *w, __u32 why)
{
	if (why >= IWX_FP_SKIP_N)
		return;	/* not a reason: the bound the verifier needs on the counters' index */
	/*
	 * A message's first segment can wait for iwxd's next read: nothing waits on it. Its
	 * last rings for itself (ends), and iwxd reads it without leaving its low-water mark.
	 */
	if (why != IWX_FP_SKIP_FIRST && why != IWX_FP_SKIP_LAST)
		w->unplaced = true;
	w->s->c.skipped[why]++;
	if (w->ifc)
		w->ifc->skipped[why]++;
}

/* A packet-level counter (its offset in struct iwx_fp_counters), per connection and interface. */
static __always_inline void count(struct walk *w, __u32 off)
{
	(*(__u64 *)((__u8 *)&w->s->c + off))++;
	if (w->ifc)
		(*(__u64 *)((__u8 *)w->ifc + off))++;
}

/* at_byte for the FPDU at w->off */
static __always_inline __u32 walk_byte(const struct walk *w, __u32 i, const bool markers)
{
	return at_byte(w->off, w->seq - w->base, i, markers);
}

/* Is hdr (ULPDU_LENGTH and what follows) the start of an FPDU of RDMAP over DDP? */
static __always_inline bool plausible(const __u8 *hdr, __u32 ulen)
{
	__u8 ddp = hdr[2], rdmap = hdr[3];
	__u32 need = ddp & IWX_DDP_FLAG_TAGGED ? IWX_DDP_TAGGED_HDR_LEN : IWX_DDP_UNTAGGED_HDR_LEN;

	return ulen >= need && (ddp & IWX_DDP_VERSION_MASK) == IWX_DDP_VERSION &&
	       !(ddp & IWX_DDP_RSVD_MASK) &&
	       (rdmap & IWX_RDMAP_VERSION_MASK) >> IWX_RDMAP_VERSION_SHIFT == IWX_RDMAP_VERSION &&
	       (rdmap & IWX_RDMAP_OPCODE_MASK) < IWX_OP_COUNT;
}

/*
 * As much of the header of the FPDU at w->off as the packet holds: all of a tagged one, or
 * its first word. Markers fall between words only, for FPDUs start 4-aligned, as they do.
 */
static __always_inline bool read_hdr(struct walk *w, struct fpdu *f, const bool markers)
{
	__u32 n = walk_byte(w, TAGGED_HDR - 1, markers) < w->end ? TAGGED_HDR : IWX_MPA_HDR_LEN + 2;
	__u8 *hdr = f->hdr;

	if (w->off >= w->end || walk_byte(w, IWX_MPA_HDR_LEN + 1, markers) >= w->end)
		return false;	/* the next FPDU starts in a later packet */
	if (!markers && w->off == f->next_off && f->next_at <= IWX_MPA_TAIL_MAX) {
		__builtin_memcpy(hdr, f->tail + f->next_at, TAGGED_HDR);	/* read with its trailer */
		return true;
	}
	if (n < TAGGED_HDR)	/* cut short: none of the last FPDU's bytes after the first word */
		__builtin_memset(hdr + IWX_MPA_HDR_LEN + 2, 0, TAGGED_HDR - IWX_MPA_HDR_LEN - 2);
	if (!markers)
		return !bpf_dynptr_read(hdr, n, &w->p->dp, w->off, 0);
	for (__u32 i = 0; i < TAGGED_HDR; i += 4)
		if (i < n && bpf_dynptr_read(hdr + i, 4, &w->p->dp, walk_byte(w, i, true), 0))
			return false;
	return true;
}

/* After the FPDU at w->off, its header read whole: the segment that would continue its message. */
static __always_inline void follow_cut(struct walk *w, const __u8 *hdr, __u32 ulen)
{
	const struct iwx_ddp_tagged_hdr *t = (const void *)(hdr + IWX_MPA_HDR_LEN);
	struct iwx_fp_cut *cut = &w->s->walk_cut;

	if (!(hdr[2] & IWX_DDP_FLAG_TAGGED))
		return;	/* a Send, say, between a Write's segments leaves the Write to go on */
	cut->valid = !(hdr[2] & IWX_DDP_FLAG_LAST);
	cut->stag = bpf_ntohl(t->stag);
	cut->to = bpf_be64_to_cpu(t->to) + ulen - IWX_DDP_TAGGED_HDR_LEN;
	cut->slack = 0;
}

/*
 * The FPDU at w->off, the walk's first if i is 0: place it or say why not, and step past it.
 * A callback per mode.
 */
static __always_inline long walk_one(__u32 i, struct walk *w, const bool markers)
{
	struct fpdu *f = bpf_map_lookup_elem(&iwx_fp_fpdu, &zero_key);
	struct iwx_fp_slot *s = w->s;
	__u32 ulen, fpdu, verdict;
	const __u8 *hdr;
	__u8 op;

	if (!f)
		return 1;
	if (!i) {	/* nothing kept from another walk */
		f->next_off = 0;
		f->st_held = false;
	}
	hdr = f->hdr;
	if (!read_hdr(w, f, markers))
		return 1;
	ulen = (__u32)hdr[0] << 8 | hdr[1];
	if (!plausible(hdr, ulen)) {
		skip(w, IWX_FP_SKIP_HEADER);
		w->bad = true;
		return 1;
	}
	fpdu = iwx_mpa_unmarked_len(ulen);
	if (markers)
		fpdu += IWX_MPA_MARKER_LEN * iwx_mpa_markers_in(w->seq - w->base, fpdu);
	op = hdr[3] & IWX_RDMAP_OPCODE_MASK;

	if (w->refusal != IWX_FP_NO_REFUSAL)
		verdict = w->refusal;
	else if (s->state != IWX_FP_SYNC || w->island)
		verdict = IWX_FP_SKIP_UNSYNC;
	else if (w->off + fpdu > w->end)
		verdict = IWX_FP_SKIP_SPLIT;
	else if (seq_before(w->seq, w->win_lo) || seq_before(w->win_hi, w->seq + fpdu))
		verdict = IWX_FP_SKIP_WINDOW;
	else if (s->held)
		verdict = IWX_FP_SKIP_HELD;
	else
		verdict = IWX_FP_PLACED;	/* unless the FPDU itself stands against it */

	if (!(hdr[2] & IWX_DDP_FLAG_TAGGED)) {
		if (verdict == IWX_FP_PLACED)
			verdict = IWX_FP_SKIP_UNTAGGED;
		/* what comes after an invalidation or a Terminate waits until iwxd has taken it */
		if (op == IWX_OP_SEND_INV || op == IWX_OP_SEND_SE_INV || op == IWX_OP_TERMINATE) {
			s->held = 1;
			/* where iwxd says it took it: its ULPDU_LENGTH, after a marker that leads */
			s->hold_seq = walk_byte(w, 0, markers) - w->off + w->seq;
		}
	} else if (verdict == IWX_FP_PLACED && ulen == IWX_DDP_TAGGED_HDR_LEN) {
		verdict = IWX_FP_SKIP_EMPTY;
	} else if (verdict == IWX_FP_PLACED) {
		f->ulen = ulen;
		f->off = w->off;
		f->seq = w->seq;
		f->pos = w->seq - w->base;
		f->pd = w->conn->pd;
		f->markers = markers;
		f->ahead = w->ahead;
		f->ends = false;
		f->end = w->end;
		verdict = iwx_place_fpdu(s, w->ifc, &w->p->dp, f);
		if (f->ends)
			w->ends = true;
	}
	if (verdict != IWX_FP_PLACED)
		skip(w, verdict);

	/* an FPDU that ends in the packet has its header whole in it */
	if (walk_byte(w, TAGGED_HDR - 1, markers) < w->end)
		follow_cut(w, hdr, ulen);
	else
		s->walk_cut.valid = 0;	/* its header is cut short: not known */
	w->seq += fpdu;
	if (w->off + fpdu > w->end)
		return 1;
	w->off += fpdu;
	return 0;
}

static long walk_plain(__u32 i, struct walk *w)
{
	return walk_one(i, w, false);
}

static long walk_marked_fpdu(__u32 i, struct walk *w)
{
	return walk_one(i, w, true);
}

/* Take iwxd's answers: a proposal confirmed or denied, a hold released. */
static __always_inline void take_answers(struct iwx_fp_slot *s, struct iwx_fp_counters *ifc)
{
	__u64 answer = *(volatile __u64 *)&s->answer;
	__u64 release = *(volatile __u64 *)&s->release;

	if (s->state == IWX_FP_PROPOSED) {
		if (answer == IWX_FP_ANSWER(s->mark_seq, IWX_FP_CONFIRM)) {
			s->state = IWX_FP_SYNC;
			s->c.confirmed++;
			if (ifc)
				ifc->confirmed++;
		} else if (answer == IWX_FP_ANSWER(s->mark_seq, IWX_FP_DENY)) {
			s->state = IWX_FP_UNSYNC;
		}
	}
	if (s->held && release == IWX_FP_ANSWER(s->hold_seq, IWX_FP_RELEASE))
		s->held = 0;
}

/* Follow the packet's FPDUs from ahead bytes in, starting at seq; w->seq: where that ends. */
static __always_inline bool follow(struct walk *w, __u32 seq, __u32 ahead, __u32 plen,
				   const bool markers)
{
	w->off += ahead;
	w->seq = seq;
	bpf_loop(MAX_FPDUS, markers ? walk_marked_fpdu : walk_plain, w, 0);
	/*
	 * Followed to the end of the packet, or into an FPDU that ends beyond it: on. Else a
	 * header that is not one, more FPDUs than a walk takes, or a header cut short.
	 */
	return !w->bad && !seq_before(w->seq, seq - ahead + plen);
}

/*
 * A packet after a gap (reordered on its way, or one before it was lost): follow it as an
 * island, from its start, as if that were an FPDU's (the sender aligns FPDUs to segments,
 * RFC 5044 §6.1), placing nothing. Should the stream, followed from its boundary, reach
 * the island's start, the island is as certain as the stream and the stream goes on from
 * its end; should it pass the start, the island is dropped. false: the gap is too much.
 */
static __always_inline bool island(const struct walk *w, __u32 seq, __u32 plen)
{
	struct iwx_fp_slot *s = w->s;
	struct walk iw = *w;	/* the packet walked as an island leaves w as it was */

	if (s->island_end && s->island_end != seq)
		return false;	/* a second gap */
	iw.island = true;
	s->walk_cut.valid = 0;
	if (!follow(&iw, seq, 0, plen, false)) {
		s->island_end = 0;
		return false;
	}
	if (!s->island_end)
		s->island_seq = seq;
	s->island_end = iw.seq;
	s->island_cut = s->walk_cut;
	return true;
}

/* The stream has reached seq: join the island there, or drop one passed. */
static __always_inline void join(struct iwx_fp_slot *s, __u32 seq)
{
	if (!s->island_end)
		return;
	if (seq == s->island_seq) {
		seq = s->island_end;
		s->cut = s->island_cut;	/* the island followed the FPDUs up to its end */
	} else if (!seq_before(seq, s->island_seq)) {
		s->island_end = 0;
	}
	if (seq == s->island_end)
		s->island_end = 0;
	s->next_seq = seq;
}

/*
 * One TCP segment of a connection iwxd knows, its slot held. true: every byte of it is in
 * FPDUs placed or in messages' first segments, which can wait for iwxd's next read (an
 * FPDU is placed only whole in one packet, so the packet starts at one).
 */
static __always_inline bool walk_packet(struct walk *w, __u32 seq, __u32 plen)
{
	struct iwx_fp_slot *s = w->s;
	__s32 ahead;

	take_answers(s, w->ifc);
	if (s->state == IWX_FP_STOPPED) {
		count(w, offsetof(struct iwx_fp_counters, stopped));
		return false;
	}
	ahead = (__s32)(s->next_seq - seq);
	/*
	 * An island only for a gap still to come (bytes TCP has had the program will not see),
	 * in sync or following a proposal: a proposal iwxd has yet to reach survives reordering.
	 */
	if (ahead < 0 && s->state != IWX_FP_UNSYNC && !seq_before(s->next_seq, w->win_lo) &&
	    island(w, seq, plen))
		return false;
	if (s->state == IWX_FP_UNSYNC || ahead < 0) {
		if (seq_before(seq, w->win_lo)) {
			/* old data TCP has had: no start to propose */
			count(w, offsetof(struct iwx_fp_counters, behind));
			return false;
		}
		/*
		 * No boundary known, or a gap the stream cannot bridge: propose this packet's
		 * start, follow the stream from it, and place again once iwxd has confirmed it.
		 */
		s->state = IWX_FP_PROPOSED;
		s->mark_seq = seq;
		s->next_seq = seq;
		s->cut.valid = 0;
		s->island_end = 0;
		s->c.proposals++;
		if (w->ifc)
			w->ifc->proposals++;
		ahead = 0;
	}
	if ((__u32)ahead >= plen) {
		/* all before the next FPDU: a retransmission, or inside a long FPDU */
		count(w, offsetof(struct iwx_fp_counters, behind));
		return false;
	}
	s->walk_cut = s->cut;
	if (follow(w, s->next_seq, ahead, plen, false)) {
		s->next_seq = w->seq;
		s->cut = s->walk_cut;
		join(s, w->seq);
		return !ahead && !w->unplaced && w->seq == seq + plen;
	}
	s->next_seq = w->seq;
	s->cut = s->walk_cut;
	/* a proposal that was wrong; or in sync, a stream iwxd will end with a Terminate */
	s->state = w->bad && s->state == IWX_FP_SYNC ? IWX_FP_STOPPED : IWX_FP_UNSYNC;
	return false;
}

/* An FPDU's start in a packet of a stream with markers, from the first marker that tells. */
struct find {
	struct walk	*w;
	__u32		pos, first, plen;	/* the packet's stream position, its first marker, length */
	__s32		start;			/* the FPDU's offset in the payload; -1: none found */
};

static long find_start(__u32 j, struct find *f)
{
	__u32 at = f->first + j * IWX_MPA_MARKER_INTERVAL;
	struct iwx_mpa_marker m;
	__u16 ptr;

	if (at + IWX_MPA_MARKER_LEN > f->plen ||
	    bpf_dynptr_read(&m, sizeof(m), &f->w->p->dp, f->w->off + at, 0))
		return 1;
	ptr = bpf_ntohs(m.fpduptr);
	if (!ptr) {
		f->start = at;	/* it leads an FPDU */
		return 1;
	}
	if (ptr > at || (ptr & 3))
		return 0;	/* its FPDU began in an earlier packet (or it is no marker) */
	/* its FPDU's ULPDU_LENGTH: right after a 512-byte mark, the FPDU is led by the marker
	   there, which lies before the packet (else it was found first): not whole in it */
	if ((f->pos + at - ptr) % IWX_MPA_MARKER_INTERVAL == IWX_MPA_MARKER_LEN)
		return 0;
	f->start = at - ptr;
	return 1;
}

/*
 * One TCP segment of a connection with markers, its slot held: wherever in the stream it
 * lies, in order or ahead of a gap, its markers say where its FPDUs start (RFC 5044 §4.3,
 * RFC 5041 §1.1). true: every byte of it is in FPDUs placed or in messages' first segments.
 */
static __always_inline bool walk_marked(struct walk *w, __u32 seq, __u32 plen)
{
	struct find f = { .w = w, .pos = seq - w->base, .plen = plen, .start = -1 };
	struct iwx_fp_slot *s = w->s;
	bool in_step;
	__s32 into;

	take_answers(w->s, w->ifc);
	if (!seq_before(w->win_lo, seq + plen)) {
		count(w, offsetof(struct iwx_fp_counters, behind));	/* old: TCP has had it */
		return false;
	}
	w->ahead = seq_before(w->win_lo, seq);
	/*
	 * In step with the stream as it came in order: walk on from where it got to, seeing
	 * every FPDU (a Send with Invalidate among them holds what follows). Else, from the
	 * first marker that tells.
	 */
	into = (__s32)(s->next_seq - seq);
	in_step = into >= 0 && (__u32)into < plen;
	s->walk_cut = s->cut;
	if (in_step) {
		f.start = into;
	} else {
		f.first = iwx_mpa_marker_first(f.pos);
		bpf_loop(MAX_MARKERS, find_start, &f, 0);
		if (f.start < 0) {
			skip(w, IWX_FP_SKIP_UNSYNC);
			return false;
		}
		/* the message in order may go on here, past what the gap before holds */
		s->walk_cut.slack = seq + f.start - s->next_seq;
		if ((__s32)s->walk_cut.slack < 0)
			s->walk_cut.valid = 0;	/* the stream in order is past it: not known */
	}
	if (!follow(w, seq + f.start, f.start, plen, true))
		return false;
	/* ahead of a gap, the stream in order has not got there: the gap is walked first */
	if (!w->ahead || in_step) {
		s->next_seq = w->seq;
		s->cut = s->walk_cut;
	}
	return !f.start && !w->unplaced && w->seq == seq + plen;
}

/* Wake iwxd if it sleeps on its low-water mark (fastpath_maps.h: Wake-ups). */
static __always_inline void ring(struct iwx_fp_slot *s, __u32 bell, struct iwx_fp_counters *ifc)
{
	/* an exchange, a full barrier: iwxd stores lazy, then reads wake_seq */
	if (!__sync_lock_test_and_set(&s->lazy, 0))
		return;
	bpf_ringbuf_output(&iwx_fp_bells, &bell, sizeof(bell), BPF_RB_FORCE_WAKEUP);
	__sync_fetch_and_add(&s->c.bells, 1);
	if (ifc)
		ifc->bells++;
}

/*
 * After the walk: a packet with bytes in the window that iwxd must read itself (any not
 * in a placed FPDU or a message's first or last segment), or that ends a message, moves
 * wake_seq to its end and rings; for a message's end only (whole), iwxd may stay lazy.
 */
static __always_inline void wake_for(struct walk *w, __u32 seq, __u32 plen, bool whole)
{
	struct iwx_fp_slot *s = w->s;
	__u32 end = seq + plen;

	if (whole && !w->ends)
		return;
	if (!seq_before(w->win_lo, end))
		return;	/* all old: nothing TCP will queue */
	if (seq_before(s->wake_seq, end))
		s->wake_seq = end;
	ring(s, w->conn->slot | (whole ? IWX_FP_BELL_STAY : 0), w->ifc);
}

#endif /* IWX_BPF_FP_WALK_H */
