/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Placing one FPDU whose start is certain and that ends in the packet: the checks of
 * proto/ddp_check.h on its STag, its markers, the copy of its payload from the packet
 * into registered memory, and its record in the slot's ring (iwx_place_fpdu).
 */
#ifndef IWX_BPF_FP_PLACE_H
#define IWX_BPF_FP_PLACE_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fastpath/maps.h"
#include "fastpath/verdict.h"
#include "fastpath_maps.h"
#include "proto/ddp_check.h"
#include "proto/wire.h"

#include "kernel.h"

/* reads of a payload of up to 64 KiB: the elements it spans, cut at each marker, each
 * taken in at most 9 reads (read_into) */
#define COPY_CHUNKS	(9 * (IWX_FP_COPY_ELEMS + IWX_MPA_MAX_ULPDU / IWX_MPA_MARKER_DATA + 1))
#define MAX_MARKERS	(IWX_MPA_MAX_ULPDU / IWX_MPA_MARKER_DATA + 2)	/* in an FPDU, or a packet */

static __always_inline __u32 reason_of_check(__u32 r)
{
	switch (IWX_CHECK_ECODE(r) | IWX_CHECK_LAYER(r) << 8) {
	case IWX_DDP_T_STAG_NOT_ASSOC | IWX_LAYER_DDP << 8:
		return IWX_FP_SKIP_STAG_PD;
	case IWX_DDP_T_BASE_BOUNDS | IWX_LAYER_DDP << 8:
		return IWX_FP_SKIP_BOUNDS;
	case IWX_DDP_T_TO_WRAP | IWX_LAYER_DDP << 8:
		return IWX_FP_SKIP_TO_WRAP;
	case IWX_RDMAP_EC_ACCESS | IWX_LAYER_RDMAP << 8:
		return IWX_FP_SKIP_ACCESS;
	default:
		return IWX_FP_SKIP_STAG;
	}
}

/*
 * Copy len payload bytes at packet offset from into mem at byte at, straight from the
 * packet into each element (4 KiB) it spans. Not bpf_dynptr_copy: from a GRO packet's
 * fragments it placed wrong bytes on Linux 6.18.
 */
struct copy {
	const struct bpf_dynptr	*src;
	void			*mem;
	__u32			mark;		/* markers: where one is in the packet */
	bool			markers;
	bool			failed;
};

/* A 4 KiB element of a memory, as a global function takes it. */
struct iwx_fp_elem {
	__u8	b[4096];
};

/*
 * n bytes of the packet at from into elem at eo (eo + n <= 4096), as many as one read
 * takes whose bounds the verifier can see: up to 4096 - 256 j from byte 256 j on, and
 * in the last 256 bytes up to the power of two that fits. The bytes read, 0 on failure.
 * Global, so verified once: not again for every path to each copy.
 */
__noinline int iwx_read_into(struct iwx_fp_elem *elem, __u32 eo, __u32 n,
			     const struct bpf_dynptr *src, __u32 from)
{
	__u32 cap = 1;

	if (!elem || eo > 4095)
		return 0;
#pragma unroll
	for (__u32 j = 1; j < 16; j++)
		if (eo <= 256 * j) {
			cap = 4096 - 256 * j;
			goto read;
		}
#pragma unroll
	for (__u32 k = 7; k > 0; k--)
		if (eo <= 4096 - (1u << k)) {
			cap = 1u << k;
			goto read;
		}
read:
	if (n > cap)
		n = cap;
	return bpf_dynptr_read(elem->b + eo, n, src, from, 0) ? 0 : n;
}

static long copy_chunk(__u32 i, struct copy *c)
{
	struct iwx_fp_copying *at = bpf_map_lookup_elem(&iwx_fp_copying, &zero_key);
	__u32 idx, eo, n;
	void *elem;
	int got;

	(void)i;	/* also called once directly (copy_out) */
	if (!at)
		goto fail;
	if (!at->left)
		return 1;
	idx = at->to / 4096;
	eo = at->to % 4096;
	n = 4096 - eo;
	if (n > at->left)
		n = at->left;
	if (c->markers) {
		/* no state carried from piece to piece but where it is: the verifier's loop ends */
		__u32 into = (at->from - c->mark) % IWX_MPA_MARKER_INTERVAL;

		if (!into) {
			at->from += IWX_MPA_MARKER_LEN;	/* checked already (markers_good) */
			into = IWX_MPA_MARKER_LEN;
		}
		if (n > IWX_MPA_MARKER_INTERVAL - into)
			n = IWX_MPA_MARKER_INTERVAL - into;
	}
	elem = bpf_map_lookup_elem(c->mem, &idx);
	got = iwx_read_into(elem, eo, n, c->src, at->from);
	if (got <= 0 || (__u32)got > n)
		goto fail;
	n = got;
	at->to += n;
	at->from += n;
	at->left -= n;
	return 0;
fail:
	c->failed = true;
	return 1;
}

/* Where the FPDU at off, stream position pos, has its byte i (markers left out) in the packet. */
static __always_inline __u32 at_byte(__u32 off, __u32 pos, __u32 i, const bool markers)
{
	return off + (markers ? iwx_mpa_marked_off(pos, i) : i);
}

/* The FPDU's payload, from its byte i on (markers left out), to mem at byte at. */
static __always_inline bool copy_out(const struct bpf_dynptr *dp, const struct fpdu *f, void *mem,
				     __u64 at, __u32 i, __u32 len)
{
	struct iwx_fp_copying *pos = bpf_map_lookup_elem(&iwx_fp_copying, &zero_key);
	struct copy c = { .src = dp, .mem = mem, .markers = f->markers,
			  .mark = f->markers ? f->off + iwx_mpa_marker_first(f->pos) : 0 };

	if (!pos)
		return false;
	pos->to = at;
	pos->from = at_byte(f->off, f->pos, i, f->markers);
	pos->left = len;
	/* most payloads lie in one element: their one piece without the loop */
	if (!f->markers && (copy_chunk(0, &c) || !pos->left))
		return !c.failed && !pos->left;
	bpf_loop(COPY_CHUNKS, copy_chunk, &c, 0);
	return !c.failed && !pos->left;
}

/* RFC 5044 §4.3: the FPDU's markers, each pointing back at its ULPDU_LENGTH (0: it leads). */
struct marks {
	const struct bpf_dynptr	*dp;
	__u32		off;		/* the FPDU's offset in the packet */
	__u32		first, n;	/* the first one's offset in the FPDU; how many */
	__u32		lead;		/* where ULPDU_LENGTH is: after a marker that leads */
	bool		good;
};

static long check_marker(__u32 j, struct marks *m)
{
	__u32 at = m->first + j * IWX_MPA_MARKER_INTERVAL, got;
	__u32 want = bpf_htonl(j == 0 && m->lead ? 0 : at - m->lead);	/* reserved bits zero */

	if (j >= m->n)
		return 1;
	if (bpf_dynptr_read(&got, sizeof(got), m->dp, m->off + at, 0) || got != want) {
		m->good = false;
		return 1;
	}
	return 0;
}

/*
 * Are the markers of the FPDU f (len bytes without them) all as they must be? iwxd takes
 * the FPDU without them, and puts them back for its CRC as they ought to have been.
 */
static __always_inline bool markers_good(const struct bpf_dynptr *dp, const struct fpdu *f,
					 __u32 len)
{
	struct marks m = { .dp = dp, .off = f->off, .first = iwx_mpa_marker_first(f->pos),
			   .n = iwx_mpa_markers_in(f->pos, len), .good = true };

	if (!f->markers)
		return true;
	m.lead = m.first ? 0 : IWX_MPA_MARKER_LEN;
	bpf_loop(MAX_MARKERS, check_marker, &m, 0);
	return m.good;
}

/*
 * The pad and CRC of the FPDU f, without markers, into f->tail, read with the next FPDU's
 * header where the packet holds it whole (read_hdr takes that from there): each read
 * walks the packet's fragments, and this saves one an FPDU. Their length, 0 on failure.
 * Global: the programs' calls share 512 bytes of stack, and it takes none of its caller's.
 */
__noinline __u32 iwx_read_tail(struct fpdu *f, const struct bpf_dynptr *dp)
{
	__u32 tl, at, n;

	if (!f)
		return 0;
	/* all but f settled before the read: nothing else is kept across it (no stack) */
	tl = (iwx_mpa_pad_len(f->ulen) & 3) + IWX_MPA_CRC_LEN;
	at = f->off + IWX_MPA_HDR_LEN + f->ulen;
	n = at + tl + TAGGED_HDR <= f->end ? tl + TAGGED_HDR : tl;
	f->next_off = n > tl ? at + tl : 0;
	f->next_at = tl;
	if (bpf_dynptr_read(f->tail, n, dp, at, 0)) {
		f->next_off = 0;
		return 0;
	}
	return tl;
}

/*
 * The pad and CRC of the FPDU f, with markers, into its record r: no marker falls in either
 * (both end 4-aligned, as markers are), one may between them. Global, as iwx_read_tail.
 */
__noinline bool iwx_read_marked_trailer(struct iwx_fp_rec *r, const struct fpdu *f,
					const struct bpf_dynptr *packet)
{
	struct bpf_dynptr local;	/* on this stack: kept across the reads, as the verifier follows */
	__u32 pad;

	if (!r || !f || bpf_dynptr_clone(packet, &local))
		return false;
	pad = iwx_mpa_pad_len(f->ulen) & 3;
	return !bpf_dynptr_read(r->trailer, pad, &local,
				at_byte(f->off, f->pos, IWX_MPA_HDR_LEN + f->ulen, true), 0) &&
	       !bpf_dynptr_read(r->trailer + pad, IWX_MPA_CRC_LEN, &local,
				at_byte(f->off, f->pos, IWX_MPA_HDR_LEN + f->ulen + pad, true), 0);
}

/*
 * The tagged FPDU f of slot s's stream, whole in the packet dp, its start certain: place
 * it or say why not (an IWX_FP_SKIP_ reason). Global, so verified once, not again on every
 * path that leads to it (two thirds of the program's verification when it was inlined).
 */
__noinline __u32 iwx_place_fpdu(struct iwx_fp_slot *s, struct iwx_fp_counters *ifc,
				const struct bpf_dynptr *packet, struct fpdu *f)
{
	struct bpf_dynptr local, *dp = &local;	/* one on this stack, for the loops' callbacks */
	const struct iwx_ddp_tagged_hdr *t;
	const struct iwx_fp_stag *st;
	__u32 stag, len, ulen, check, pad;
	struct iwx_fp_rec *r;
	__u8 op, need;
	void *mem;
	__u64 to;

	if (!s || !f || bpf_dynptr_clone(packet, &local))
		return IWX_FP_SKIP_MEMORY;	/* not so: the verifier asks */
	t = (const void *)(f->hdr + IWX_MPA_HDR_LEN);
	stag = bpf_ntohl(*(const __be32 *)(f->hdr + IWX_MPA_HDR_LEN + offsetof(typeof(*t), stag)));
	to = bpf_be64_to_cpu(*(const __be64 *)(f->hdr + IWX_MPA_HDR_LEN + offsetof(typeof(*t), to)));
	op = t->rdmap_ctrl & IWX_RDMAP_OPCODE_MASK;
	need = op == IWX_OP_WRITE ? IWX_ACCESS_REMOTE_WRITE : IWX_ACCESS_LOCAL_WRITE;
	ulen = f->ulen;
	if (ulen < IWX_DDP_TAGGED_HDR_LEN)
		return IWX_FP_SKIP_HEADER;	/* plausible() has said so: the verifier asks */
	len = ulen - IWX_DDP_TAGGED_HDR_LEN;
	pad = iwx_mpa_pad_len(ulen);

	/*
	 * A message's FPDUs follow one another under one STag: looked up once a walk (a hash
	 * lookup an FPDU was a tenth of the program). A copy is no staler than the entry: iwxd
	 * counts a change made once the programs that started before it have ended (quiesce).
	 */
	if (!f->st_held || f->st.desc.stag != stag) {
		st = bpf_map_lookup_elem(&iwx_fp_stags, &stag);
		if (!st)
			return IWX_FP_SKIP_STAG;
		f->st = *st;
		f->st_held = true;
	}
	st = &f->st;
	check = iwx_check_tagged(&st->desc, stag, f->pd, need, to, len);
	if (check)
		return reason_of_check(check);
	/* placed or not, a message's end is iwxd's now: a Read completes, a program may poll a
	   Write's last byte (a message of one segment too) */
	if (f->hdr[2] & IWX_DDP_FLAG_LAST)
		f->ends = true;
	if (!s->walk_cut.valid || stag != s->walk_cut.stag || to - s->walk_cut.to > s->walk_cut.slack)
		return IWX_FP_SKIP_FIRST;
	/* a program that polls a Write's last byte may write it as it lands: iwxd checks the
	   CRC over TCP's bytes, never read back from memory, and places it after (issue 44) */
	if (f->hdr[2] & IWX_DDP_FLAG_LAST)
		return IWX_FP_SKIP_LAST;
	if (s->head - s->tail >= IWX_FP_RING)
		return IWX_FP_SKIP_RING_FULL;
	if (!markers_good(dp, f, IWX_MPA_HDR_LEN + ulen + pad + IWX_MPA_CRC_LEN))
		return IWX_FP_SKIP_MARKER;
	mem = bpf_map_lookup_elem(&iwx_fp_mems, &st->mem);
	if (!mem || !copy_out(dp, f, mem, st->off + (to - st->desc.base_to), TAGGED_HDR, len))
		return IWX_FP_SKIP_MEMORY;

	r = &s->ring[s->head & (IWX_FP_RING - 1)];
	r->seq = f->seq;
	__builtin_memcpy(r->hdr, f->hdr, sizeof(r->hdr));
	/*
	 * Pad and CRC, read after the payload, whose copy has pulled their cache line in (read
	 * first, they cost a miss an FPDU). The walk saw the FPDU end in the packet, so neither
	 * read fails; were one to, the record's trailer is zeros, which iwxd judges against
	 * TCP's bytes as it does any (the bytes placed are accounted for by the record).
	 */
	if (f->markers ? !iwx_read_marked_trailer(r, f, dp) : !iwx_read_tail(f, dp))
		__builtin_memset(r->trailer, 0, sizeof(r->trailer));
	else if (!f->markers)
		__builtin_memcpy(r->trailer, f->tail, sizeof(r->trailer));	/* pad + 4 of them count */
	r->trailer_len = pad + IWX_MPA_CRC_LEN;
	r->accepted = 0;	/* unmarked (IWX_FP_ACC_TAG) */
	__sync_fetch_and_add(&s->head, 1);	/* the record, then its publication */
	s->c.placed_fpdus++;
	s->c.placed_bytes += len;
	if (f->ahead)
		s->c.ahead++;
	if (ifc) {
		ifc->placed_fpdus++;
		ifc->placed_bytes += len;
		if (f->ahead)
			ifc->ahead++;
	}
	return IWX_FP_PLACED;
}

#endif /* IWX_BPF_FP_PLACE_H */
