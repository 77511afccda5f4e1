// SPDX-License-Identifier: MIT
/* The fast path's records and answers, on the engine's side (llp_tcp_fast.h). */
#include <stddef.h>
#include <string.h>

#include "proto/wire.h"

#include "llp_tcp_fast.h"

/* The slot is written by programs on other CPUs while this reads it. */
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

#define FIND_MAX	64	/* records looked through for one out of order */

uint32_t iwx_fast_rx_len(const struct iwx_fast_rx *f, const struct iwx_fp_rec *r)
{
	uint32_t ulen = (uint32_t)r->hdr[0] << 8 | r->hdr[1];
	uint32_t len = iwx_mpa_unmarked_len(ulen);

	return f->markers ? len + IWX_MPA_MARKER_LEN * iwx_mpa_markers_in(iwx_fast_rx_pos(f, r), len) :
			    len;
}

uint32_t iwx_fast_rx_payload(const struct iwx_fp_rec *r)
{
	return ((uint32_t)r->hdr[0] << 8 | r->hdr[1]) - IWX_DDP_TAGGED_HDR_LEN;
}

uint32_t iwx_fast_rx_pos(const struct iwx_fast_rx *f, const struct iwx_fp_rec *r)
{
	return r->seq - f->anchor;
}

void iwx_fast_rx_boundary(struct iwx_fast_rx *f, uint32_t pos)
{
	struct iwx_fp_slot *s = f->slot;
	uint32_t seq = f->anchor + pos, mark;
	int32_t ahead;

	if (!s || LOAD(s->state) != IWX_FP_PROPOSED)
		return;
	mark = LOAD(s->mark_seq);
	ahead = (int32_t)(mark - seq);
	if (ahead == 0)
		STORE(s->answer, IWX_FP_ANSWER(mark, IWX_FP_CONFIRM));
	else if (ahead < 0)	/* passed without a boundary there */
		STORE(s->answer, IWX_FP_ANSWER(mark, IWX_FP_DENY));
}

void iwx_fast_rx_release(struct iwx_fast_rx *f, uint32_t pos)
{
	if (f->slot)
		STORE(f->slot->release, IWX_FP_ANSWER(f->anchor + pos, IWX_FP_RELEASE));
}

void iwx_fast_rx_passed(struct iwx_fast_rx *f, uint32_t len_pos,
			const uint8_t crc[IWX_MPA_CRC_LEN])
{
	struct iwx_fast_past *p = f->past;

	if (!p)
		return;
	p->fpdu[p->n % IWX_FAST_PAST].len_pos = len_pos;
	memcpy(p->fpdu[p->n % IWX_FAST_PAST].crc, crc, IWX_MPA_CRC_LEN);
	p->n++;
}

/*
 * Did the parser take, where record r's FPDU starts, an FPDU with its CRC word? Positions
 * grow in the order the parser took them: halve. A marker may lead the FPDU, before its
 * ULPDU_LENGTH.
 */
static bool taken_so(const struct iwx_fast_rx *f, const struct iwx_fp_rec *r)
{
	const struct iwx_fast_past *p = f->past;
	uint32_t kept, first, lo = 0, hi, pos = iwx_fast_rx_pos(f, r), k;

	if (!p || !p->n)
		return false;
	kept = p->n < IWX_FAST_PAST ? p->n : IWX_FAST_PAST;
	first = p->n - kept;
	hi = kept;	/* the first at or after pos is in [lo, hi] */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if ((int32_t)(p->fpdu[(first + mid) % IWX_FAST_PAST].len_pos - pos) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == kept)
		return false;	/* after the newest */
	k = (first + lo) % IWX_FAST_PAST;
	return p->fpdu[k].len_pos - pos <= IWX_MPA_MARKER_LEN &&
	       !memcmp(p->fpdu[k].crc, r->trailer + r->trailer_len - IWX_MPA_CRC_LEN, IWX_MPA_CRC_LEN);
}

const struct iwx_fp_rec *iwx_fast_rx_peek(struct iwx_fast_rx *f, uint32_t pos)
{
	struct iwx_fp_slot *s = f->slot;

	if (!s)
		return NULL;
	for (;;) {
		uint32_t i = LOAD(s->tail) + f->n;
		const struct iwx_fp_rec *r;

		if (i == LOAD(s->head))
			return NULL;
		r = &s->ring[i & (IWX_FP_RING - 1)];
		/* committed records are never dropped: only the first one past them may be */
		if (f->n || (int32_t)(iwx_fast_rx_pos(f, r) - pos) >= 0)
			return r;
		if (iwx_fast_rx_acceptance(r) != IWX_FAST_RX_ACCEPTED && !taken_so(f, r))
			f->stale_bad = true;
		iwx_fast_rx_drop(f);	/* its bytes were read after all */
	}
}

void iwx_fast_rx_find(struct iwx_fast_rx *f, uint32_t at)
{
	struct iwx_fp_slot *s = f->slot;
	uint32_t first, head;

	if (!f->markers)
		return;	/* in stream order */
	first = LOAD(s->tail) + f->n;
	head = LOAD(s->head);
	/* records between tail and head are iwxd's: the programs write only at head */
	for (uint32_t i = first; i != head && i - first < FIND_MAX; i++) {
		struct iwx_fp_rec *r = &s->ring[i & (IWX_FP_RING - 1)], t;

		if (iwx_fast_rx_pos(f, r) != at)
			continue;
		if (i != first) {
			t = *r;
			*r = s->ring[first & (IWX_FP_RING - 1)];
			s->ring[first & (IWX_FP_RING - 1)] = t;
		}
		return;
	}
}

enum iwx_fast_rx_acceptance iwx_fast_rx_acceptance(const struct iwx_fp_rec *r)
{
	uint32_t a = LOAD(r->accepted);

	if ((a & ~IWX_FP_ACC_BITS) != IWX_FP_ACC_TAG(r->seq))
		return IWX_FAST_RX_UNCHECKED;	/* another record's mark, or none */
	if (a & IWX_FP_ACC_BAD)
		return IWX_FAST_RX_REFUTED;
	return a & IWX_FP_ACC_OK ? IWX_FAST_RX_ACCEPTED : IWX_FAST_RX_UNCHECKED;
}

void iwx_fast_rx_pop(struct iwx_fast_rx *f)
{
	f->n--;
	iwx_fast_rx_drop(f);
}

void iwx_fast_rx_drop(struct iwx_fast_rx *f)
{
	STORE(f->slot->tail, LOAD(f->slot->tail) + 1);
}

bool iwx_fast_rx_rewrites(const struct iwx_fp_rec *r, const struct iwx_ddp_seg *seg)
{
	uint32_t ulen = (uint32_t)r->hdr[0] << 8 | r->hdr[1];
	struct iwx_term_cause cause;
	struct iwx_ddp_seg placed;

	/* the programs placed only tagged segments that decode (iwx_check_tagged) */
	if (iwx_ddp_decode(r->hdr + IWX_MPA_HDR_LEN, ulen, &placed, &cause) || !placed.tagged)
		return false;
	return seg->tagged && seg->stag == placed.stag && placed.to >= seg->to &&
	       placed.to - seg->to <= seg->len && placed.len <= seg->len - (placed.to - seg->to);
}

void iwx_fast_rx_dropped(struct iwx_fast_rx *f, const struct iwx_fp_rec *r, uint32_t pos)
{
	/* two unlike placed at one position: one at least is not TCP's; and one left unsettled
	   elsewhere is not to be forgotten */
	f->clash = f->recheck && (f->recheck_pos != pos || f->clash ||
				  memcmp(f->dropped.hdr, r->hdr, sizeof(r->hdr)));
	f->dropped = *r;
	f->recheck_pos = pos;
	f->recheck = true;
}

bool iwx_fast_rx_settle_seg(struct iwx_fast_rx *f, uint32_t len_pos, const struct iwx_ddp_seg *seg)
{
	if (!f->recheck)
		return true;
	f->recheck = false;
	return !f->clash && len_pos - f->recheck_pos <= IWX_MPA_MARKER_LEN &&
	       iwx_fast_rx_rewrites(&f->dropped, seg);
}

bool iwx_fast_rx_settle_rec(struct iwx_fast_rx *f, uint32_t pos, const struct iwx_fp_rec *r)
{
	if (!f->recheck)
		return true;
	f->recheck = false;
	return !f->clash && pos == f->recheck_pos && !memcmp(f->dropped.hdr, r->hdr, sizeof(r->hdr));
}
