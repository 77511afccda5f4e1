// SPDX-License-Identifier: MIT
/*
 * The engine's side of a fast path slot (control/engine/llp_tcp_fast.c), on a slot in memory:
 * with markers, records come in the order their packets did, and the engine must find
 * the one at the position it reads next among those after it, and size each FPDU with
 * the markers that fall in it.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "proto/wire.h"

#include "llp_tcp_fast.h"

#define ANCHOR	1000000u	/* TCP sequence number of stream position 0 */

static struct iwx_fp_slot *slot;
static struct iwx_fast_rx f;

static void setup(void)
{
	slot = calloc(1, sizeof(*slot));
	cr_assert(slot);
	f = (struct iwx_fast_rx){ .slot = slot, .anchor = ANCHOR, .markers = true };
}

static void teardown(void)
{
	free(slot);
}

TestSuite(fast_rx, .init = setup, .fini = teardown);

/* The programs' record of a tagged FPDU of ulen bytes at stream position pos. */
static void add(uint32_t pos, uint16_t ulen)
{
	struct iwx_fp_rec *r = &slot->ring[slot->head++ & (IWX_FP_RING - 1)];

	memset(r, 0, sizeof(*r));
	r->seq = ANCHOR + pos;
	r->hdr[0] = ulen >> 8;
	r->hdr[1] = ulen & 0xff;
	r->trailer_len = iwx_mpa_pad_len(ulen) + IWX_MPA_CRC_LEN;
}

Test(fast_rx, an_fpdu_is_as_long_as_its_markers_make_it)
{
	add(0, 14 + 996);	/* 1016 bytes without markers: one leads it, one inside */
	add(1024, 14 + 488);	/* 508: one leads it, none follows */
	add(1536, 14 + 492);	/* 512: one leads it, one right before its CRC */
	add(2056, 14 + 400);	/* 420, from 8 past a mark: none */
	cr_assert_eq(iwx_fast_rx_len(&f, &slot->ring[0]), 1016 + 2 * IWX_MPA_MARKER_LEN);
	cr_assert_eq(iwx_fast_rx_len(&f, &slot->ring[1]), 508 + IWX_MPA_MARKER_LEN);
	cr_assert_eq(iwx_fast_rx_len(&f, &slot->ring[2]), 512 + 2 * IWX_MPA_MARKER_LEN);
	cr_assert_eq(iwx_fast_rx_len(&f, &slot->ring[3]), 420);
	cr_assert_eq(iwx_fast_rx_payload(&slot->ring[0]), 996);
	f.markers = false;
	cr_assert_eq(iwx_fast_rx_len(&f, &slot->ring[0]), 1016);
}

Test(fast_rx, the_record_that_fills_a_gap_is_found_behind_those_ahead_of_it)
{
	/* FPDUs of 1024 bytes on the wire; the one at 2048 came last (it was lost, then resent) */
	add(3072, 14 + 996);
	add(4096, 14 + 996);
	add(2048, 14 + 996);
	cr_assert_eq(iwx_fast_rx_len(&f, &slot->ring[0]), 1024);

	iwx_fast_rx_find(&f, 2048);
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 2048)), 2048, "the gap's record first");
	f.n = 1;	/* committed, as the engine does */
	f.bytes = 1024;
	iwx_fast_rx_find(&f, 3072);
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 2048)), 3072);
	f.n = 2;
	iwx_fast_rx_find(&f, 4096);
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 2048)), 4096);
	cr_assert_eq(slot->tail, 0, "nothing dropped");
}

Test(fast_rx, without_markers_records_stay_in_the_order_they_came)
{
	f.markers = false;
	add(3072, 14 + 996);
	add(2048, 14 + 996);
	iwx_fast_rx_find(&f, 2048);
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 2048)), 3072);
}

Test(fast_rx, a_record_not_among_the_next_is_not_looked_for_further)
{
	for (uint32_t i = 0; i < 64; i++)
		add(8192 + i * 1024, 14 + 996);
	add(2048, 14 + 996);	/* the 65th */
	iwx_fast_rx_find(&f, 2048);
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 2048)), 8192);
	/* records behind the position the engine reads are dropped on the way */
	slot->ring[0].seq = ANCHOR + 1024;
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 2048)), 9216);
	cr_assert_eq(slot->tail, 1);
}

/*
 * Without markers a record for bytes the engine read already came after it read them:
 * what it placed may have landed after TCP's bytes, over them. Unless TCP accepted its
 * FPDU the stream cannot be made right (stale_bad).
 */
Test(fast_rx, a_record_for_bytes_read_already_is_harmless_only_as_tcps_own)
{
	f.markers = false;
	add(1024, 14 + 996);
	slot->ring[0].accepted = IWX_FP_ACC_TAG(ANCHOR + 1024) | IWX_FP_ACC_OK;
	add(2048, 14 + 996);
	add(4096, 14 + 996);
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 2048)), 2048);
	cr_assert_not(f.stale_bad, "the first was TCP's own: no harm");
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 4096)), 4096);
	cr_assert(f.stale_bad, "the second was not judged TCP's");
	cr_assert_eq(slot->tail, 2);
}

/* The CRC word in the trailer of the newest record. */
static void crc_of_newest(uint32_t crc)
{
	struct iwx_fp_rec *r = &slot->ring[(slot->head - 1) & (IWX_FP_RING - 1)];

	memcpy(r->trailer + r->trailer_len - IWX_MPA_CRC_LEN, &crc, sizeof(crc));
}

/* The parser took an FPDU whose ULPDU_LENGTH is at len_pos, with this CRC word. */
static void taken(uint32_t len_pos, uint32_t crc)
{
	uint8_t b[4];

	memcpy(b, &crc, sizeof(b));
	iwx_fast_rx_passed(&f, len_pos, b);
}

/*
 * With markers, records behind the parser are common and harmless: a gap's FPDUs, come
 * behind the records placed ahead of it, and duplicates of an FPDU taken. Each is judged
 * by the FPDU the parser took at its position: TCP's, if its CRC word is the record's
 * (behind a leading marker too); else, unless TCP accepted it, stale_bad. Without the
 * past kept (no memory), or before the oldest kept, only TCP's acceptance clears one.
 */
Test(fast_rx, with_markers_a_record_behind_the_parser_is_judged_by_what_it_took)
{
	static struct iwx_fast_past past;

	f.past = &past;
	taken(1024, 0x11111111);
	taken(2052, 0x22222222);	/* a marker at 2048 leads it */
	taken(3072, 0x33333333);
	add(2048, 14 + 996);
	crc_of_newest(0x22222222);
	add(1024, 14 + 996);
	crc_of_newest(0x11111111);
	add(8192, 14 + 996);
	cr_assert_eq(iwx_fast_rx_pos(&f, iwx_fast_rx_peek(&f, 4096)), 8192);
	cr_assert_not(f.stale_bad, "the FPDUs taken there, TCP's: no harm");
	cr_assert_eq(slot->tail, 2);

	add(3072, 14 + 996);
	crc_of_newest(0x33333334);	/* another FPDU than the one taken there */
	slot->tail = slot->head - 1;
	iwx_fast_rx_peek(&f, 4096);
	cr_assert(f.stale_bad, "another FPDU placed where the parser took TCP's");

	f.stale_bad = false;
	add(1536, 14 + 996);	/* no FPDU taken at 1536 */
	crc_of_newest(0x22222222);
	slot->tail = slot->head - 1;
	iwx_fast_rx_peek(&f, 4096);
	cr_assert(f.stale_bad, "where no FPDU was taken");

	f.stale_bad = false;
	add(3072, 14 + 996);
	crc_of_newest(0x33333334);
	slot->ring[(slot->head - 1) & (IWX_FP_RING - 1)].accepted =
		IWX_FP_ACC_TAG(ANCHOR + 3072) | IWX_FP_ACC_OK;
	slot->tail = slot->head - 1;
	iwx_fast_rx_peek(&f, 4096);
	cr_assert_not(f.stale_bad, "TCP accepted it");

	/* the oldest forgotten: a record there can no longer be told TCP's */
	for (uint32_t i = 0; i < IWX_FAST_PAST; i++)
		taken(4096 + i * 1024, i);
	add(3072, 14 + 996);
	crc_of_newest(0x33333333);
	slot->tail = slot->head - 1;
	iwx_fast_rx_peek(&f, 4096 + IWX_FAST_PAST * 1024);
	cr_assert(f.stale_bad, "before the oldest kept");

	f.stale_bad = false;
	f.past = NULL;
	add(2048, 14 + 996);
	crc_of_newest(0x22222222);
	slot->tail = slot->head - 1;
	iwx_fast_rx_peek(&f, 4096);
	cr_assert(f.stale_bad, "no past kept");
}

/* A record's tagged header: ULPDU_LENGTH for len payload bytes, STag, TO. */
static struct iwx_fp_rec tagged_rec(uint32_t stag, uint64_t to, uint16_t len)
{
	struct iwx_fp_rec r = { 0 };
	uint16_t ulen = IWX_DDP_TAGGED_HDR_LEN + len;

	r.hdr[0] = ulen >> 8;
	r.hdr[1] = ulen & 0xff;
	r.hdr[2] = 0x80 | 0x01;	/* tagged, DDP version 1 */
	r.hdr[3] = 0x40;	/* RDMAP version 1, RDMA Write */
	for (int i = 0; i < 4; i++)
		r.hdr[4 + i] = stag >> (24 - 8 * i);
	for (int i = 0; i < 8; i++)
		r.hdr[8 + i] = to >> (56 - 8 * i);
	return r;
}

/*
 * A record iwxd dropped, against TCP's FPDU at its position: its placed bytes are made
 * right only where TCP's FPDU is tagged for the same STag over a range that holds them.
 */
Test(fast_rx, tcp_rewrites_a_dropped_record_only_over_all_it_placed)
{
	struct iwx_fp_rec r = tagged_rec(0x1234, 0x10000, 1000);
	struct iwx_ddp_seg tcp = { .tagged = true, .stag = 0x1234, .to = 0x10000, .len = 1000 };

	cr_assert(iwx_fast_rx_rewrites(&r, &tcp), "the same FPDU, other payload");
	tcp.len = 1400;
	cr_assert(iwx_fast_rx_rewrites(&r, &tcp), "a longer one from the same offset");
	tcp.to = 0x10000 - 400;
	cr_assert(iwx_fast_rx_rewrites(&r, &tcp), "one around it");
	tcp.to = 0x10000 - 401;
	cr_assert_not(iwx_fast_rx_rewrites(&r, &tcp), "the placed range's last byte outside");
	tcp = (struct iwx_ddp_seg){ .tagged = true, .stag = 0x1234, .to = 0x10000, .len = 999 };
	cr_assert_not(iwx_fast_rx_rewrites(&r, &tcp), "a shorter one: a byte placed past it");
	tcp.len = 1000;
	tcp.to = 0x10001;
	cr_assert_not(iwx_fast_rx_rewrites(&r, &tcp), "from a later offset");
	tcp.to = 0x10000;
	tcp.stag = 0x1235;
	cr_assert_not(iwx_fast_rx_rewrites(&r, &tcp), "another STag");
	tcp = (struct iwx_ddp_seg){ .tagged = false, .len = 1000 };
	cr_assert_not(iwx_fast_rx_rewrites(&r, &tcp), "untagged: a Send there");
	r = tagged_rec(0x1234, UINT64_MAX - 10, 1000);
	tcp = (struct iwx_ddp_seg){ .tagged = true, .stag = 0x1234, .to = UINT64_MAX - 10, .len = 1000 };
	cr_assert(iwx_fast_rx_rewrites(&r, &tcp), "at the top of the offsets, without overflow");
	r.hdr[3] = 0x80;	/* RDMAP version 2: no header the programs would have placed */
	cr_assert_not(iwx_fast_rx_rewrites(&r, &tcp), "a record whose header does not decode");
}

/*
 * A record dropped at a position is settled once the FPDU there is taken: from TCP's bytes
 * (its header right there, or behind a leading marker) or from a later record there, TCP's,
 * alike; an unlike one dropped there too, or the FPDU taken elsewhere, cannot settle it.
 */
Test(fast_rx, a_dropped_record_is_settled_by_the_fpdu_taken_where_it_was)
{
	struct iwx_fp_rec r = tagged_rec(0x1234, 0x10000, 1000), other = tagged_rec(0x1234, 0x10000, 1200);
	struct iwx_ddp_seg tcp = { .tagged = true, .stag = 0x1234, .to = 0x10000, .len = 1000 };

	cr_assert(iwx_fast_rx_settle_seg(&f, 5000, &tcp), "nothing dropped: nothing to settle");
	iwx_fast_rx_dropped(&f, &r, 5000);
	cr_assert(iwx_fast_rx_settle_seg(&f, 5000, &tcp), "TCP's FPDU there, the same");
	iwx_fast_rx_dropped(&f, &r, 5120);
	cr_assert(iwx_fast_rx_settle_seg(&f, 5124, &tcp), "... behind a leading marker");
	iwx_fast_rx_dropped(&f, &r, 6000);
	cr_assert_not(iwx_fast_rx_settle_seg(&f, 7000, &tcp), "an FPDU elsewhere");
	cr_assert(iwx_fast_rx_settle_seg(&f, 7000, &tcp), "settled once: nothing left");

	iwx_fast_rx_dropped(&f, &r, 8000);
	iwx_fast_rx_dropped(&f, &r, 8000);
	cr_assert(iwx_fast_rx_settle_rec(&f, 8000, &r), "a later record there, TCP's, alike");
	iwx_fast_rx_dropped(&f, &r, 9000);
	cr_assert_not(iwx_fast_rx_settle_rec(&f, 9000, &other), "... unlike it");
	iwx_fast_rx_dropped(&f, &r, 10000);
	iwx_fast_rx_dropped(&f, &other, 10000);
	cr_assert_not(iwx_fast_rx_settle_seg(&f, 10000, &tcp), "two unlike dropped at one position");
	iwx_fast_rx_dropped(&f, &r, 11000);
	iwx_fast_rx_dropped(&f, &r, 12000);
	cr_assert_not(iwx_fast_rx_settle_seg(&f, 12000, &tcp), "one left unsettled before");
}
