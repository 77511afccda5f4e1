// SPDX-License-Identifier: MIT
/* The streaming receive parser: same segments whatever the chunking, and the right Terminate. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/crc32c.h"
#include "proto/mpa_rx.h"
#include "proto/rdmap.h"

#include "testutil.h"

#define MAX_SEGS 64

/* What the segment callback saw, in order. */
struct seen {
	int		n;
	struct iwx_ddp_seg seg[MAX_SEGS];
	uint8_t		data[MAX_SEGS][4096];
	int		stop_at;	/* return -ECANCELED from this segment on (-1: never) */
	uint8_t		*place_buf;	/* place tagged payload here, at its TO */
	uint32_t	refuse_stag;	/* refuse tagged segments to this STag */
};

static int on_segment(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct seen *s = ctx;

	cr_assert_lt(s->n, MAX_SEGS);
	cr_assert_leq(seg->len, sizeof(s->data[0]));
	s->seg[s->n] = *seg;
	memcpy(s->data[s->n], seg->payload, seg->len);
	s->seg[s->n].payload = NULL;
	s->n++;
	return s->stop_at >= 0 && s->n > s->stop_at ? -ECANCELED : 0;
}

static int on_place(void *ctx, const struct iwx_ddp_seg *seg, uint8_t **dst,
		    struct iwx_term_cause *cause)
{
	struct seen *s = ctx;

	if (!seg->tagged)
		return 0;
	if (seg->stag == s->refuse_stag) {
		*cause = IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG);
		return -EPROTO;
	}
	if (s->place_buf)
		*dst = s->place_buf + seg->to;
	return 0;
}

static const struct iwx_mpa_rx_ops ops = { .segment = on_segment };
static const struct iwx_mpa_rx_ops place_ops = { .place = on_place, .segment = on_segment };

static struct iwx_mpa_rx *new_rx(bool crc, bool markers, const struct iwx_mpa_rx_ops *o,
				 struct seen *s)
{
	struct iwx_mpa_rx *rx = malloc(sizeof(*rx));
	struct iwx_mpa_mode mode = { .rev = 2, .crc = crc, .markers_rx = markers };

	cr_assert_not_null(rx);
	memset(s, 0, sizeof(*s));
	s->stop_at = -1;
	s->refuse_stag = 0xffffffff;
	iwx_mpa_rx_init(rx, &mode, o, s);
	return rx;
}

static void assert_same(const struct seen *a, const struct seen *b, const char *what)
{
	cr_assert_eq(a->n, b->n, "%s: %d segments, want %d", what, b->n, a->n);
	for (int i = 0; i < a->n; i++) {
		const struct iwx_ddp_seg *x = &a->seg[i], *y = &b->seg[i];

		cr_assert(x->tagged == y->tagged && x->last == y->last && x->opcode == y->opcode &&
			  x->stag == y->stag && x->to == y->to && x->qn == y->qn &&
			  x->msn == y->msn && x->mo == y->mo && x->inval_stag == y->inval_stag &&
			  x->len == y->len, "%s: segment %d differs", what, i);
		cr_assert_arr_eq(a->data[i], b->data[i], x->len, "%s: payload %d", what, i);
	}
}

Test(mpa_rx, siw_stream_golden)
{
	static uint8_t stream[1024];
	size_t len = 0;
	struct seen s;
	struct iwx_mpa_rx *rx = new_rx(true, false, &ops, &s);

	for (int i = 0; siw_client_fpdus[i]; i++)
		len += hex_decode(siw_client_fpdus[i], stream + len, sizeof(stream) - len);
	cr_assert_eq(iwx_mpa_rx_feed(rx, stream, len, NULL), 0);
	cr_assert_eq(s.n, 5);
	cr_assert(!s.seg[0].tagged && s.seg[0].opcode == IWX_OP_SEND && s.seg[0].msn == 1);
	cr_assert_eq(s.seg[0].len, 16);
	cr_assert(s.seg[1].tagged && s.seg[1].opcode == IWX_OP_READ_RESP);
	cr_assert_eq(s.seg[1].stag, 0x7c108b00);
	cr_assert_eq(s.seg[1].to, 0x000055bf4ce09130ull);
	cr_assert_eq(memcmp(s.data[1], "rdma-ping-0: ABC", 16), 0);
	cr_assert_eq(s.seg[2].msn, 2);
	cr_assert_eq(s.seg[3].msn, 3);
	cr_assert_eq(memcmp(s.data[4], "rdma-ping-1: BCD", 16), 0);
	cr_assert_eq(rx->stats.fpdus, 5);
	cr_assert_eq(rx->stats.bytes, len);
	free(rx);
}

/* A stream of every message kind, built with our transmit side. */
static size_t build_stream(uint8_t *out, size_t cap, bool crc, bool markers, uint32_t emss,
			   int *nsegs)
{
	struct iwx_mpa_mode mode = { .rev = 2, .crc = crc, .markers_tx = markers };
	struct iwx_mpa_tx tx;
	static uint8_t pay[3000];
	uint8_t term[IWX_TERM_MAX_LEN], rr[IWX_RDMAP_READ_REQ_LEN];
	struct iwx_read_req req = { .sink_stag = 0x100, .sink_to = 0xd00, .size = 100,
				    .src_stag = 0x200, .src_to = 0x10 };
	struct iwx_term t;
	size_t at = 0;

	if (nsegs)
		*nsegs = 0;
	iwx_mpa_tx_init(&tx, &mode);
	fill_pattern(pay, sizeof(pay), 11);
	iwx_read_req_encode(rr, &req);
	iwx_term_init(&t, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), NULL, NULL);
	size_t term_len = iwx_term_encode(term, &t);
	const struct { struct iwx_ddp_msg m; const uint8_t *p; } msgs[] = {
		{ { .opcode = IWX_OP_SEND, .msn = 1, .len = 16 }, pay },
		{ { .opcode = IWX_OP_WRITE, .stag = 0x300, .to = 0x40, .len = 3000 }, pay },
		{ { .opcode = IWX_OP_WRITE, .stag = 0x300, .to = 0, .len = 0 }, pay },
		{ { .opcode = IWX_OP_SEND_SE, .msn = 2, .len = 1 }, pay + 5 },
		{ { .opcode = IWX_OP_READ_REQ, .msn = 1, .len = sizeof(rr) }, rr },
		{ { .opcode = IWX_OP_READ_RESP, .stag = 0x100, .to = 0xd00, .len = 100 }, pay + 7 },
		{ { .opcode = IWX_OP_SEND_INV, .msn = 3, .inval_stag = 0x300, .len = 1500 }, pay + 9 },
		{ { .opcode = IWX_OP_SEND_SE_INV, .msn = 4, .inval_stag = 0x301, .len = 0 }, pay },
		{ { .opcode = IWX_OP_TERMINATE, .msn = 1, .len = term_len }, term },
	};

	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		struct iwx_ddp_segmenter sg;
		uint8_t hdr[18];
		uint32_t off, len;
		size_t hl;

		cr_assert_eq(iwx_ddp_segmenter_init(&sg, &msgs[i].m, iwx_mpa_mulpdu(emss, markers)), 0);
		while ((hl = iwx_ddp_segmenter_next(&sg, hdr, &off, &len))) {
			ssize_t n = iwx_mpa_fpdu_build(&tx, out + at, cap - at, hdr, hl,
						       msgs[i].p + off, len);

			cr_assert_gt(n, 0);
			cr_assert_leq((size_t)n, emss, "one FPDU per TCP segment");
			at += n;
			if (nsegs)
				(*nsegs)++;
		}
	}
	return at;
}

struct config { bool crc, markers; uint32_t emss; };
static const struct config configs[] = {
	{ true, false, 1448 }, { false, false, 1448 }, { true, true, 1448 },
	{ false, true, 536 }, { true, true, 9000 },
};

Test(mpa_rx, every_split_point_gives_the_same_segments)
{
	static uint8_t stream[16384];

	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		const struct config *cf = &configs[c];
		int nsegs;
		size_t len = build_stream(stream, sizeof(stream), cf->crc, cf->markers, cf->emss,
					  &nsegs);
		struct seen whole, split;
		struct iwx_mpa_rx *rx = new_rx(cf->crc, cf->markers, &ops, &whole);

		cr_assert_eq(iwx_mpa_rx_feed(rx, stream, len, NULL), 0);
		cr_assert_eq(whole.n, nsegs, "config %zu", c);
		cr_assert_geq(nsegs, 9);
		free(rx);
		for (size_t k = 0; k <= len; k++) {
			rx = new_rx(cf->crc, cf->markers, &ops, &split);
			cr_assert_eq(iwx_mpa_rx_feed(rx, stream, k, NULL), 0);
			cr_assert_eq(iwx_mpa_rx_feed(rx, stream + k, len - k, NULL), 0);
			assert_same(&whole, &split, "split");
			free(rx);
		}
		/* one byte at a time, and random chunk sizes */
		rx = new_rx(cf->crc, cf->markers, &ops, &split);
		for (size_t i = 0; i < len; i++)
			cr_assert_eq(iwx_mpa_rx_feed(rx, stream + i, 1, NULL), 0);
		assert_same(&whole, &split, "bytewise");
		free(rx);
		rx = new_rx(cf->crc, cf->markers, &ops, &split);
		srand(c);
		for (size_t i = 0, n; i < len; i += n) {
			n = 1 + rand() % 700;
			if (n > len - i)
				n = len - i;
			cr_assert_eq(iwx_mpa_rx_feed(rx, stream + i, n, NULL), 0);
		}
		assert_same(&whole, &split, "random");
		free(rx);
	}
}

/* Pull API with placement: tagged payload lands at its TO in the target buffer. */
Test(mpa_rx, pull_places_tagged_payload_directly)
{
	static uint8_t stream[16384], target[4096], pay[3000];
	size_t len = build_stream(stream, sizeof(stream), true, true, 1448, NULL);
	struct seen whole, pulled;
	struct iwx_mpa_rx *a = new_rx(true, true, &ops, &whole);
	struct iwx_mpa_rx *b = new_rx(true, true, &place_ops, &pulled);
	size_t at = 0;

	pulled.place_buf = target;
	cr_assert_eq(iwx_mpa_rx_feed(a, stream, len, NULL), 0);
	while (at < len) {
		uint8_t *dst;
		size_t n = iwx_mpa_rx_want(b, &dst);

		cr_assert_gt(n, 0);
		if (n > len - at)
			n = len - at;
		if (n > 100)
			n = 100;	/* a short read, as recv may return */
		memcpy(dst, stream + at, n);
		at += n;
		cr_assert_eq(iwx_mpa_rx_advance(b, n), 0);
	}
	assert_same(&whole, &pulled, "pull");
	fill_pattern(pay, sizeof(pay), 11);
	cr_assert_arr_eq(target + 0x40, pay, 3000, "RDMA Write placed at TO 0x40");
	cr_assert_eq(b->stats.placed, 3 + 1 + 1);	/* 3 Write segments, empty Write, Read Response */
	free(a);
	free(b);
}

/*
 * Pull stops short of a tagged message's last segment in its target (iwx_mpa_rx_may_pull): a
 * program may answer in its last byte as it lands, so its bytes are fed, their CRC taken
 * from the bytes fed, never read back from the target. Earlier segments are pulled.
 */
Test(mpa_rx, pull_leaves_a_messages_last_segment_to_feed)
{
	static uint8_t stream[16384], target[4096], pay[3000];
	size_t len = build_stream(stream, sizeof(stream), true, true, 1448, NULL);
	struct seen whole, pulled;
	struct iwx_mpa_rx *a = new_rx(true, true, &ops, &whole);
	struct iwx_mpa_rx *b = new_rx(true, true, &place_ops, &pulled);
	size_t at = 0, fed = 0, pulled_in = 0;

	pulled.place_buf = target;
	cr_assert_eq(iwx_mpa_rx_feed(a, stream, len, NULL), 0);
	while (at < len) {
		uint8_t *dst;
		size_t n = iwx_mpa_rx_want(b, &dst);
		bool in_target = dst >= target && dst < target + sizeof(target);

		cr_assert_gt(n, 0);
		if (n > len - at)
			n = len - at;
		if (!iwx_mpa_rx_may_pull(b)) {
			cr_assert(b->seg.tagged && b->seg.last);	/* or a marker inside it */
			fed += in_target ? n : 0;
			cr_assert_eq(iwx_mpa_rx_feed(b, stream + at, n, NULL), 0);
		} else {
			pulled_in += in_target ? n : 0;
			memcpy(dst, stream + at, n);
			cr_assert_eq(iwx_mpa_rx_advance(b, n), 0);
		}
		at += n;
	}
	assert_same(&whole, &pulled, "pull");
	fill_pattern(pay, sizeof(pay), 11);
	cr_assert_arr_eq(target + 0x40, pay, 3000, "RDMA Write placed at TO 0x40");
	cr_assert_gt(fed, 0, "the last segments' payload fed");
	cr_assert_gt(pulled_in, 0, "the Write's first segments pulled into the target");
	free(a);
	free(b);
}

static size_t one_fpdu(uint8_t *out, const struct iwx_ddp_msg *m, const void *pay, bool crc)
{
	struct iwx_mpa_mode mode = { .rev = 2, .crc = crc };
	struct iwx_mpa_tx tx;
	uint8_t hdr[18];
	size_t hl = iwx_ddp_hdr_encode(hdr, m, 0, true);

	iwx_mpa_tx_init(&tx, &mode);
	return iwx_mpa_fpdu_build(&tx, out, 4096, hdr, hl, pay, m->len);
}

static void fix_crc(uint8_t *f, size_t n)
{
	iwx_crc32c_put(f + n - 4, iwx_crc32c(f, n - 4));
}

static void assert_fails(struct iwx_mpa_rx *rx, struct iwx_term_cause want, bool with_seg)
{
	struct iwx_term_cause c;
	const struct iwx_ddp_seg *seg;

	cr_assert(iwx_mpa_rx_failed(rx, &c, &seg));
	cr_assert(iwx_cause_eq(c, want), "cause %u/%u/0x%02x, want %u/%u/0x%02x", c.layer,
		  c.etype, c.ecode, want.layer, want.etype, want.ecode);
	cr_assert_eq(seg != NULL, with_seg);
	/* and it stays failed */
	cr_assert_eq(iwx_mpa_rx_feed(rx, "x", 1, NULL), -EPROTO);
}

Test(mpa_rx, bad_crc_is_an_mpa_crc_error_even_in_a_damaged_header)
{
	static uint8_t f[2][4096];
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = 1, .len = 100 };
	size_t n;

	fill_pattern(f[1], sizeof(f[1]), 5);
	n = one_fpdu(f[0], &m, f[1] + 1000, true);
	struct seen s;

	/* from 2: the length field is covered by the marker and short-ULPDU tests */
	for (size_t at = 2; at < n - 4; at++) {
		struct iwx_mpa_rx *rx = new_rx(true, false, &ops, &s);

		memcpy(f[1], f[0], n);
		f[1][at] ^= 0x04;
		cr_assert_eq(iwx_mpa_rx_feed(rx, f[1], n, NULL), -EPROTO, "flip at %zu", at);
		assert_fails(rx, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), false);
		cr_assert_eq(s.n, 0, "no segment from a bad FPDU");
		free(rx);
	}
}

Test(mpa_rx, crc_off_ignores_the_crc_field)
{
	uint8_t f[4096], pay[10] = "0123456789";
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = 1, .len = 10 };
	size_t n = one_fpdu(f, &m, pay, false);
	struct seen s;
	struct iwx_mpa_rx *rx = new_rx(false, false, &ops, &s);

	f[n - 1] = 0x5a;
	cr_assert_eq(iwx_mpa_rx_feed(rx, f, n, NULL), 0);
	cr_assert_eq(s.n, 1);
	free(rx);
}

Test(mpa_rx, header_errors_with_good_crc_name_ddp_and_rdmap_errors)
{
	static const struct { uint8_t byte, val; struct iwx_term_cause want; } cases[] = {
		{ 2, 0x42, { IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_VERSION } },
		{ 3, 0x83, { IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_VERSION } },
		{ 3, 0x4c, { IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_OPCODE } },
		{ 11, 0x07, { IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_QN } },
	};
	static uint8_t good[2][4096], f[4096];
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = 2, .len = 30 };
	struct iwx_ddp_msg first = { .opcode = IWX_OP_SEND, .msn = 1, .len = 3 };
	size_t n0 = one_fpdu(good[0], &first, "abc", true);
	size_t n = one_fpdu(good[1], &m, good[0], true);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct seen s;
		struct iwx_mpa_rx *rx = new_rx(true, false, &ops, &s);
		const struct iwx_ddp_seg *seg;
		struct iwx_term_cause c;

		memcpy(f, good[1], n);
		f[cases[i].byte] = cases[i].val;
		fix_crc(f, n);
		cr_assert_eq(iwx_mpa_rx_feed(rx, good[0], n0, NULL), 0);
		cr_assert_eq(iwx_mpa_rx_feed(rx, f, n, NULL), -EPROTO);
		assert_fails(rx, cases[i].want, true);
		cr_assert_eq(s.n, 1, "the good FPDU before was delivered");
		/* the Terminate can copy the offending header and length */
		iwx_mpa_rx_failed(rx, &c, &seg);
		cr_assert_eq(seg->ulpdu_len, 18 + 30);
		cr_assert_arr_eq(seg->hdr, f + 2, 18);
		free(rx);
	}
}

Test(mpa_rx, short_ulpdu_is_an_mpa_error)
{
	/* ULPDU_LENGTH 0 and 6: too short for any DDP header */
	static const char *frames[] = {
		"0000 0000 00000000",
		"0006 4143 00000000 00000000",
	};

	for (size_t i = 0; i < 2; i++) {
		uint8_t f[64];
		size_t n = hex_decode(frames[i], f, sizeof(f));
		struct seen s;
		struct iwx_mpa_rx *rx = new_rx(true, false, &ops, &s);

		fix_crc(f, n);
		cr_assert_eq(iwx_mpa_rx_feed(rx, f, n, NULL), -EPROTO);
		assert_fails(rx, IWX_CAUSE_MPA(IWX_MPA_EC_MARKER), false);
		free(rx);
	}
}

Test(mpa_rx, a_marker_that_points_elsewhere_loses_framing)
{
	static uint8_t stream[16384];
	size_t len = build_stream(stream, sizeof(stream), true, true, 1448, NULL);
	struct seen s;
	struct iwx_mpa_rx *rx;

	/* the first marker (position 0) must be 0; the one at 512 points back into the Write */
	stream[3] = 4;
	rx = new_rx(true, true, &ops, &s);
	cr_assert_eq(iwx_mpa_rx_feed(rx, stream, len, NULL), -EPROTO);
	assert_fails(rx, IWX_CAUSE_MPA(IWX_MPA_EC_MARKER), false);
	free(rx);
	stream[3] = 0;
	stream[512 + 3] ^= 1;
	rx = new_rx(true, true, &ops, &s);
	cr_assert_eq(iwx_mpa_rx_feed(rx, stream, len, NULL), -EPROTO);
	assert_fails(rx, IWX_CAUSE_MPA(IWX_MPA_EC_MARKER), false);
	free(rx);
}

Test(mpa_rx, refused_placement_is_reported_after_a_good_crc)
{
	static uint8_t stream[16384];
	size_t len = build_stream(stream, sizeof(stream), true, false, 1448, NULL);
	struct seen s;
	struct iwx_mpa_rx *rx = new_rx(true, false, &place_ops, &s);
	const struct iwx_ddp_seg *seg;
	struct iwx_term_cause c;

	s.refuse_stag = 0x300;
	cr_assert_eq(iwx_mpa_rx_feed(rx, stream, len, NULL), -EPROTO);
	assert_fails(rx, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG), true);
	iwx_mpa_rx_failed(rx, &c, &seg);
	cr_assert_eq(seg->stag, 0x300);
	cr_assert_eq(s.n, 1, "only the Send before the Write was delivered");
	free(rx);
}

Test(mpa_rx, callback_stops_at_an_fpdu_boundary_and_resumes)
{
	static uint8_t stream[16384];
	size_t len = build_stream(stream, sizeof(stream), true, true, 1448, NULL);
	struct seen whole, s;
	struct iwx_mpa_rx *a = new_rx(true, true, &ops, &whole);
	struct iwx_mpa_rx *rx = new_rx(true, true, &ops, &s);
	size_t used, at = 0;

	cr_assert_eq(iwx_mpa_rx_feed(a, stream, len, NULL), 0);
	s.stop_at = 0;
	while (at < len) {
		int err = iwx_mpa_rx_feed(rx, stream + at, len - at, &used);

		cr_assert(err == 0 || err == -ECANCELED);
		at += used;
		s.stop_at = s.n;
	}
	assert_same(&whole, &s, "stop and go");
	free(a);
	free(rx);
}

Test(mpa_rx, advance_checks_its_argument)
{
	struct seen s;
	struct iwx_mpa_rx *rx = new_rx(true, false, &ops, &s);
	uint8_t *dst;

	cr_assert_eq(iwx_mpa_rx_want(rx, &dst), 2);
	cr_assert_eq(iwx_mpa_rx_advance(rx, 3), -EINVAL);
	cr_assert_eq(iwx_mpa_rx_advance(rx, 0), 0);
	free(rx);
}

/*
 * Placed FPDUs with markers: a sender, a parser fed the wire bytes as the socket would, and
 * one handed each Write as the fast path does (markers taken out, payload placed).
 */
struct marked {
	struct iwx_mpa_tx	tx;
	struct iwx_mpa_rx	*fed, *placed;
	struct seen		fed_seen, placed_seen;
	/* the last Write built, and what the fast path makes of it */
	uint8_t			wire[4096];
	size_t			wire_len;
	uint8_t			hdr[IWX_MPA_HDR_LEN + IWX_DDP_TAGGED_HDR_LEN];
	uint8_t			payload[4096];	/* where it was placed */
	uint8_t			trailer[3 + IWX_MPA_CRC_LEN];
	uint32_t		trailer_len;
	uint32_t		marks[8];	/* FPDU bytes (markers not counted) before each */
	int			nmarks;
};

static struct marked *new_marked(bool crc)
{
	struct iwx_mpa_mode mode = { .rev = 2, .crc = crc, .markers_tx = true };
	struct marked *t = calloc(1, sizeof(*t));

	cr_assert_not_null(t);
	iwx_mpa_tx_init(&t->tx, &mode);
	t->fed = new_rx(crc, true, &ops, &t->fed_seen);
	t->placed = new_rx(crc, true, &ops, &t->placed_seen);
	return t;
}

static void free_marked(struct marked *t)
{
	free(t->fed);
	free(t->placed);
	free(t);
}

/* Feed both parsers FPDUs of the stream (not placed). */
static void feed_both(struct marked *t, const uint8_t *f, size_t n)
{
	cr_assert_eq(iwx_mpa_rx_feed(t->fed, f, n, NULL), 0);
	cr_assert_eq(iwx_mpa_rx_feed(t->placed, f, n, NULL), 0);
}

/*
 * Sends until the stream is at position to. An exact fit always exists: the one length no
 * FPDU can take ends 4 bytes past a mark, where no FPDU starts (its marker would lead it).
 */
static void lead_to(struct marked *t, uint32_t to)
{
	static uint8_t f[2048], pay[2048];	/* a Send of up to 1100 bytes */
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = 1 };
	uint8_t hdr[IWX_DDP_UNTAGGED_HDR_LEN];

	fill_pattern(pay, sizeof(pay), 3);
	while (t->tx.pos != to) {
		uint32_t left = to - t->tx.pos;
		ssize_t n;

		cr_assert(left < 0x10000 && to % IWX_MPA_MARKER_INTERVAL != 4, "lead to %u", to);
		m.len = 0;
		if (left > 1100)
			m.len = 1000;
		else
			while (iwx_mpa_fpdu_len(&t->tx, sizeof(hdr) + m.len) < left)
				m.len++;
		iwx_ddp_hdr_encode(hdr, &m, 0, true);
		n = iwx_mpa_fpdu_build(&t->tx, f, sizeof(f), hdr, sizeof(hdr), pay, m.len);
		cr_assert(n > 0 && (left > 1100 || (size_t)n == left), "%zd bytes, %u left", n,
			  left);
		feed_both(t, f, n);
		m.msn++;
	}
}

/*
 * Build a tagged Write of len payload bytes where the stream is, and take it apart as the
 * fast path does: every marker checked (RFC 5044 §4.3) and skipped, the rest copied out.
 */
static void build_write(struct marked *t, uint32_t len, uint32_t seed)
{
	static uint8_t pay[4096], flat[4096 + 32];
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .stag = 0x300, .to = 0x40, .len = len };
	uint8_t hdr[IWX_DDP_TAGGED_HDR_LEN];
	uint32_t pos = t->tx.pos, len_pos = pos, k = 0;
	ssize_t n;

	cr_assert_leq(len, sizeof(pay));
	fill_pattern(pay, len, seed);
	iwx_ddp_hdr_encode(hdr, &m, 0, true);
	n = iwx_mpa_fpdu_build(&t->tx, t->wire, sizeof(t->wire), hdr, sizeof(hdr), pay, len);
	cr_assert_gt(n, 0);
	t->wire_len = n;
	t->nmarks = 0;
	for (size_t o = 0; o < t->wire_len;) {
		if ((pos + o) % IWX_MPA_MARKER_INTERVAL) {
			flat[k++] = t->wire[o++];
			continue;
		}
		if (o == 0)
			len_pos = pos + IWX_MPA_MARKER_LEN;
		cr_assert_lt(t->nmarks, 8);
		t->marks[t->nmarks++] = k;
		cr_assert_eq(t->wire[o] | t->wire[o + 1], 0, "reserved half of marker at %zu", o);
		cr_assert_eq(t->wire[o + 2] << 8 | t->wire[o + 3], o ? pos + o - len_pos : 0,
			     "FPDUPTR of the marker at %zu", o);
		o += IWX_MPA_MARKER_LEN;
	}
	t->trailer_len = iwx_mpa_pad_len(sizeof(hdr) + len) + IWX_MPA_CRC_LEN;
	cr_assert_eq(k, sizeof(t->hdr) + len + t->trailer_len);
	memcpy(t->hdr, flat, sizeof(t->hdr));
	memcpy(t->payload, flat + sizeof(t->hdr), len);
	memcpy(t->trailer, flat + sizeof(t->hdr) + len, t->trailer_len);
	cr_assert_arr_eq(t->payload, pay, len);
}

/* The Write to the fed parser as bytes, to the other as the fast path hands it over. */
static int place(struct marked *t)
{
	uint8_t fc[IWX_MPA_CRC_LEN], pc[IWX_MPA_CRC_LEN];
	int err;

	cr_assert_eq(iwx_mpa_rx_feed(t->fed, t->wire, t->wire_len, NULL), 0);
	err = iwx_mpa_rx_placed(t->placed, t->hdr, sizeof(t->hdr), t->payload, t->trailer,
				t->trailer_len);
	/* the CRC word as the FPDU brought it, whichever way it came in */
	iwx_mpa_rx_last_crc(t->fed, fc);
	iwx_mpa_rx_last_crc(t->placed, pc);
	cr_assert_arr_eq(pc, t->trailer + t->trailer_len - IWX_MPA_CRC_LEN, IWX_MPA_CRC_LEN);
	if (t->placed->crc)	/* else the test may change the trailer it places */
		cr_assert_arr_eq(fc, pc, IWX_MPA_CRC_LEN);
	return err;
}

/* The placed parser saw what the fed one saw and stands where the sender does. */
static void assert_placed_like_fed(struct marked *t)
{
	const struct iwx_mpa_rx *p = t->placed, *f = t->fed;

	cr_assert_eq(p->pos, t->tx.pos, "pos %u, the sender is at %u", p->pos, t->tx.pos);
	cr_assert_eq(p->pos, f->pos);
	cr_assert_eq(p->len_pos, f->len_pos);
	cr_assert_eq(p->stats.bytes, f->stats.bytes);
	cr_assert_eq(p->stats.markers, f->stats.markers);
	cr_assert_eq(p->stats.fpdus, f->stats.fpdus);
	cr_assert(iwx_mpa_rx_at_boundary(p));
	assert_same(&t->fed_seen, &t->placed_seen, "placed");
}

/* A Write of len bytes with nmarks markers at stream position pos, placed: the same as fed. */
static struct marked *placed_at(uint32_t pos, uint32_t len, int nmarks)
{
	struct marked *t = new_marked(true);
	const struct seen *s = &t->placed_seen;

	lead_to(t, pos);
	build_write(t, len, pos);
	cr_assert_eq(t->nmarks, nmarks, "%d markers in the Write at %u", t->nmarks, pos);
	cr_assert_eq(place(t), 0);
	assert_placed_like_fed(t);
	cr_assert_eq(t->placed->stats.placed, 1);
	cr_assert(s->seg[s->n - 1].tagged && s->seg[s->n - 1].stag == 0x300);
	cr_assert_eq(s->seg[s->n - 1].len, len);
	cr_assert_arr_eq(s->data[s->n - 1], t->payload, len);
	return t;
}

Test(mpa_rx_placed, leading_marker)
{
	struct marked *t = placed_at(2 * IWX_MPA_MARKER_INTERVAL, 200, 1);

	cr_assert_eq(t->marks[0], 0);
	cr_assert_eq(t->placed->len_pos, 2 * IWX_MPA_MARKER_INTERVAL + IWX_MPA_MARKER_LEN);
	free_marked(t);
}

Test(mpa_rx_placed, marker_inside_the_ddp_header)
{
	struct marked *t = placed_at(3 * IWX_MPA_MARKER_INTERVAL - 8, 100, 1);

	cr_assert_eq(t->marks[0], 8, "between the STag and the TO");
	free_marked(t);
}

Test(mpa_rx_placed, marker_inside_the_payload)
{
	struct marked *t = placed_at(4 * IWX_MPA_MARKER_INTERVAL - 100, 300, 1);

	cr_assert_eq(t->marks[0], 100);
	free_marked(t);
}

Test(mpa_rx_placed, several_markers_and_a_pad)
{
	struct marked *t = placed_at(5 * IWX_MPA_MARKER_INTERVAL + 200, 1501, 3);

	cr_assert_eq(t->trailer_len, 3 + IWX_MPA_CRC_LEN);
	cr_assert_eq(t->marks[0], 312);
	cr_assert_eq(t->marks[2], 312 + 2 * IWX_MPA_MARKER_DATA);
	free_marked(t);
}

Test(mpa_rx_placed, marker_right_before_the_crc)
{
	/* 16 header bytes, 110 payload, 2 pad: the CRC starts on the mark */
	struct marked *t = placed_at(8 * IWX_MPA_MARKER_INTERVAL - 128, 110, 1);

	cr_assert_eq(t->marks[0], sizeof(t->hdr) + 110 + 2);
	free_marked(t);
}

Test(mpa_rx_placed, no_marker_in_the_fpdu)
{
	struct marked *t = placed_at(5 * IWX_MPA_MARKER_INTERVAL + 100, 50, 0);

	cr_assert_eq(t->placed->len_pos, 5 * IWX_MPA_MARKER_INTERVAL + 100);
	free_marked(t);
}

/* Every phase an FPDU can start at, two placed in a row, then one fed: as if all were fed. */
Test(mpa_rx_placed, every_phase_of_the_marker_interval)
{
	for (uint32_t phase = 0; phase < IWX_MPA_MARKER_INTERVAL; phase += 4) {
		struct marked *t;
		uint32_t len = 1 + phase * 7 % 1200;

		if (phase == 4)
			continue;	/* a marker would lead an FPDU there, at 0 */
		t = new_marked(true);
		lead_to(t, IWX_MPA_MARKER_INTERVAL + phase);
		build_write(t, len, phase);
		cr_assert_eq(place(t), 0, "phase %u", phase);
		/* ends on a mark for some phases: the next one's marker leads it */
		build_write(t, 1213 - len, phase + 1);
		cr_assert_eq(place(t), 0, "phase %u, the one after", phase);
		lead_to(t, (t->tx.pos + 1100) / IWX_MPA_MARKER_INTERVAL * IWX_MPA_MARKER_INTERVAL);
		assert_placed_like_fed(t);
		free_marked(t);
	}
}

/* A payload byte changed once placed (near each marker, too) is a CRC error, after counting. */
Test(mpa_rx_placed, changed_payload_is_a_crc_error)
{
	static const uint32_t at[] = { 0, 295, 296, 803, 804, 1311, 1312, 1500 };

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		struct marked *t = new_marked(true);

		lead_to(t, 5 * IWX_MPA_MARKER_INTERVAL + 200);
		build_write(t, 1501, 5);
		t->payload[at[i]] ^= 0x10;
		cr_assert_eq(place(t), -EPROTO, "changed at %u", at[i]);
		assert_fails(t->placed, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), false);
		cr_assert_eq(t->placed_seen.n, t->fed_seen.n - 1, "no segment from a bad FPDU");
		cr_assert_eq(t->placed->pos, t->tx.pos);
		cr_assert_eq(t->placed->stats.markers, t->fed->stats.markers);
		free_marked(t);
	}
}

/*
 * The CRC covers the markers where they stood: the same pieces handed over at another
 * phase (other markers, other FPDUPTRs) do not pass, though no byte of them changed.
 */
Test(mpa_rx_placed, markers_put_back_where_they_stood)
{
	static const uint32_t built_at[] = { 2 * 512, 3 * 512 - 8, 4 * 512 - 100, 5 * 512 + 200 };

	for (size_t i = 0; i < sizeof(built_at) / sizeof(built_at[0]); i++) {
		struct marked *t = new_marked(true), *u = new_marked(true);

		lead_to(t, built_at[i]);
		build_write(t, 1501, 7);
		lead_to(u, built_at[i] + 8);
		cr_assert_eq(iwx_mpa_rx_placed(u->placed, t->hdr, sizeof(t->hdr), t->payload,
					       t->trailer, t->trailer_len), -EPROTO, "built at %u",
			     built_at[i]);
		assert_fails(u->placed, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), false);
		cr_assert_eq(place(t), 0);
		free_marked(t);
		free_marked(u);
	}
}

/* Without CRC the field is not looked at, and the markers still count where they fall. */
Test(mpa_rx_placed, crc_off_still_advances_over_the_markers)
{
	static const struct { uint32_t pos, len; int nmarks; } cases[] = {
		{ 2 * 512, 200, 1 }, { 3 * 512 - 8, 100, 1 }, { 5 * 512 + 200, 1501, 3 },
		{ 8 * 512 - 128, 110, 1 }, { 5 * 512 + 100, 50, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct marked *t = new_marked(false);

		lead_to(t, cases[i].pos);
		build_write(t, cases[i].len, 9);
		cr_assert_eq(t->nmarks, cases[i].nmarks);
		t->trailer[t->trailer_len - 1] = 0x5a;
		cr_assert_eq(place(t), 0, "at %u", cases[i].pos);
		assert_placed_like_fed(t);
		free_marked(t);
	}
}

/* Pieces that do not make an FPDU are refused before anything moves. */
Test(mpa_rx_placed, pieces_that_make_no_fpdu)
{
	struct marked *t = new_marked(true);
	uint32_t pos;

	lead_to(t, 3 * IWX_MPA_MARKER_INTERVAL - 8);
	build_write(t, 101, 1);
	pos = t->placed->pos;
	cr_assert_eq(iwx_mpa_rx_placed(t->placed, t->hdr, sizeof(t->hdr), t->payload, t->trailer,
				       t->trailer_len - 1), -EINVAL);
	cr_assert_eq(iwx_mpa_rx_placed(t->placed, t->hdr, 1, t->payload, t->trailer,
				       t->trailer_len), -EINVAL);
	cr_assert_eq(t->placed->pos, pos);
	cr_assert_eq(place(t), 0);
	assert_placed_like_fed(t);
	free_marked(t);
}
