// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the MPA receive parser (proto/mpa_rx.h).
 *
 * Two parsers read the same stream: A through iwx_mpa_rx_feed in chunks, B through
 * iwx_mpa_rx_want/advance with short reads. They must deliver the same segments,
 * consume the same bytes and fail with the same cause. One of them places tagged
 * payload into exactly-sized heap buffers, so ASan sees any write past a segment.
 *
 * Input layout:
 *   byte 0   flags (F_*)
 *   byte 1   feed chunking  (top 2 bits pattern, low 6 bits parameter)
 *   byte 2   pull chunking  (same)
 *   [3 bytes corruption: 24-bit stream offset, xor value]   when F_CORRUPT
 *   then     the stream itself (raw), or records (F_FRAMED)
 *
 * Framed mode builds the stream with iwx_mpa_fpdu_build, so CRC and markers are
 * right and the fuzzer need not forge CRC32c. Without corruption the parsers must
 * give back exactly the ULPDUs framed, up to the first one iwx_ddp_decode or the
 * place policy rejects. With CRC on and one corrupted byte outside a length field,
 * they must deliver every FPDU before the damaged one and then fail with a CRC or
 * marker error.
 *
 * A record: a byte t, then
 *   t & 0x80 clear: raw ULPDU, length ((t & 0x7f) << 8 | next byte), bytes follow;
 *   t & 0x80 set:   a valid DDP/RDMAP header for opcode t & 7 (L from t & 0x40),
 *                   2 bytes payload length, 4 bytes STag/MSN, 1 byte fill; the
 *                   payload is taken from the input when t & 0x08, else a pattern
 *                   (its length modulo 2048 unless F_LARGE: a few bytes of input made
 *                   80 KiB streams, which took most of the fuzzer's time).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>	/* MIN */

#include "proto/ddp.h"
#include "proto/mpa.h"

#include "fuzz_check.h"
#include "proto/mpa_rx.h"
#include "proto/rdmap.h"

#define F_CRC		0x01
#define F_MARKERS	0x02
#define F_FRAMED	0x04
#define F_PLACE_PULL	0x08	/* B places tagged payload; otherwise A does */
#define F_STOP		0x10	/* the segment callback stops the parser every third segment */
#define F_CORRUPT	0x20
#define F_LARGE		0x40	/* patterned payloads up to the largest ULPDU; else under 2 KiB */

#define MAX_STREAM	(80 * 1024)	/* room for one FPDU of the largest ULPDU, with markers */
#define MAX_RECORDS	64
#define STOP_ERR	(-EAGAIN)

/* ------------------------------------------------------------ segment log */

struct log {
	uint8_t	*p;
	size_t	len, cap;
};

static void log_put(struct log *l, const void *src, size_t n)
{
	if (l->len + n > l->cap) {
		size_t cap = l->cap ? l->cap : 4096;

		while (cap < l->len + n)
			cap *= 2;
		l->p = realloc(l->p, cap);
		CHECK(l->p);
		l->cap = cap;
	}
	if (n)
		memcpy(l->p + l->len, src, n);
	l->len += n;
}

#define LOG_FIELD(l, v) do { __typeof__(v) v_ = (v); log_put((l), &v_, sizeof(v_)); } while (0)

/* Everything a segment tells its consumer, payload pointer aside. */
static void log_seg_hdr(struct log *l, const struct iwx_ddp_seg *s)
{
	LOG_FIELD(l, s->tagged);
	LOG_FIELD(l, s->last);
	LOG_FIELD(l, s->opcode);
	LOG_FIELD(l, s->rdmap_ctrl);
	LOG_FIELD(l, s->stag);
	LOG_FIELD(l, s->to);
	LOG_FIELD(l, s->inval_stag);
	LOG_FIELD(l, s->qn);
	LOG_FIELD(l, s->msn);
	LOG_FIELD(l, s->mo);
	LOG_FIELD(l, s->len);
	LOG_FIELD(l, s->hdr_len);
	LOG_FIELD(l, s->ulpdu_len);
	CHECK(s->hdr_len <= sizeof(s->hdr));
	log_put(l, s->hdr, s->hdr_len);
}

static void log_seg(struct log *l, const struct iwx_ddp_seg *s, const uint8_t *payload)
{
	log_seg_hdr(l, s);
	log_put(l, payload, s->len);
}

/* --------------------------------------------------------------- chunking */

struct chunker {
	uint8_t		pattern;
	uint8_t		param;
	uint32_t	rng;
	size_t		floor;
};

/*
 * Pieces are at least 1/64 of the stream: streams under 128 bytes (a header and more)
 * are cut anywhere, and a large one still takes few enough calls to keep the fuzzer
 * fast (1/4096 made a run of an 80 KiB stream thousands of calls: 3.4 k runs/s).
 */
static void chunker_init(struct chunker *c, uint8_t spec, size_t stream_len)
{
	c->pattern = spec >> 6;
	c->param = spec & 0x3f;
	c->rng = 0x9e3779b9u ^ spec;
	c->floor = stream_len >> 6;
}

/* Size of the next piece, at most left (> 0). */
static size_t chunk_next(struct chunker *c, size_t left)
{
	size_t n;

	switch (c->pattern) {
	case 0:
		n = left;
		break;
	case 1:
		n = c->param + 1;
		break;
	case 2:
		n = (size_t)(c->param + 1) * 61;
		break;
	default:
		c->rng = c->rng * 1103515245u + 12345u;
		n = 1 + (c->rng >> 8) % (1u << (c->param % 17));
		break;
	}
	if (n < c->floor)
		n = c->floor;
	return MIN(n, left);
}

/* --------------------------------------------------------------- callbacks */

struct side {
	struct iwx_mpa_rx	*rx;
	struct log		log;
	bool			places;
	bool			stop;
	uint32_t		nseg;
	uint8_t			*placed;	/* the target of the segment under way */
	uint32_t		placed_len;
};

/* Both sides refuse the same segments, whether or not they place them. */
static bool refuse(const struct iwx_ddp_seg *seg, struct iwx_term_cause *cause)
{
	if (seg->tagged && (seg->stag & 0xff) == 0x5a) {
		*cause = IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG);
		return true;
	}
	if (!seg->tagged && seg->qn == IWX_QN_SEND && (seg->msn & 0xff) == 0x5a) {
		*cause = IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_RANGE);
		return true;
	}
	return false;
}

static int place_cb(void *ctx, const struct iwx_ddp_seg *seg, uint8_t **dst,
		    struct iwx_term_cause *cause)
{
	struct side *s = ctx;

	CHECK(*dst == NULL);
	CHECK(seg->hdr_len + seg->len == seg->ulpdu_len);
	/* a target left from an FPDU that never completed */
	free(s->placed);
	s->placed = NULL;
	if (refuse(seg, cause))
		return -EPROTO;
	if (s->places && seg->tagged) {
		s->placed = malloc(seg->len ? seg->len : 1);
		CHECK(s->placed);
		s->placed_len = seg->len;
		*dst = s->placed;
	}
	return 0;
}

static int segment_cb(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct side *s = ctx;

	CHECK(seg->hdr_len == iwx_ddp_hdr_len(seg->hdr[0]));
	CHECK(seg->hdr_len + seg->len == seg->ulpdu_len);
	CHECK(seg->payload != NULL);
	if (s->placed) {
		CHECK(seg->tagged);
		CHECK(seg->payload == s->placed);
		CHECK(seg->len == s->placed_len);
	}
	log_seg(&s->log, seg, seg->payload);
	free(s->placed);
	s->placed = NULL;
	return s->stop && s->nseg++ % 3 == 2 ? STOP_ERR : 0;
}

static const struct iwx_mpa_rx_ops ops = { .place = place_cb, .segment = segment_cb };

/* ----------------------------------------------------------------- drivers */

/* Between FPDUs: where a stopping segment callback leaves the parser. */
static bool at_boundary(const struct iwx_mpa_rx *rx)
{
	return rx->state == IWX_RX_HDR && rx->hdr_got == 0 && rx->marker_got == 0;
}

/* Returns the stream bytes consumed. */
static size_t drive_feed(struct side *s, const uint8_t *buf, size_t n, struct chunker *ch)
{
	size_t at = 0;

	while (at < n) {
		size_t len = chunk_next(ch, n - at), used = ~(size_t)0;
		int err = iwx_mpa_rx_feed(s->rx, buf + at, len, &used);

		CHECK(used <= len);
		at += used;
		if (err == -EPROTO) {
			CHECK(iwx_mpa_rx_failed(s->rx, NULL, NULL));
			/* a failed stream takes nothing more */
			used = 1;
			CHECK(iwx_mpa_rx_feed(s->rx, buf, n, &used) == -EPROTO && used == 0);
			break;
		}
		CHECK(!iwx_mpa_rx_failed(s->rx, NULL, NULL));
		if (err == 0)
			CHECK(used == len);
		else
			CHECK(err == STOP_ERR && used > 0 && at_boundary(s->rx));
	}
	return at;
}

static size_t drive_pull(struct side *s, const uint8_t *buf, size_t n, struct chunker *ch)
{
	size_t at = 0, avail = 0;

	while (at < n) {
		uint8_t *dst, *dst2;
		size_t want, k;
		int err;

		if (avail == 0)
			avail = chunk_next(ch, n - at);
		want = iwx_mpa_rx_want(s->rx, &dst);
		if (want == 0) {
			CHECK(dst == NULL && iwx_mpa_rx_failed(s->rx, NULL, NULL));
			break;
		}
		CHECK(dst != NULL);
		CHECK(iwx_mpa_rx_want(s->rx, &dst2) == want && dst2 == dst);
		if (s->placed && s->rx->state == IWX_RX_PAYLOAD && s->rx->marker_got == 0 &&
		    (!s->rx->markers || s->rx->pos % IWX_MPA_MARKER_INTERVAL))
			CHECK(dst >= s->placed && dst + want <= s->placed + s->placed_len);
		k = MIN(want, avail);
		memcpy(dst, buf + at, k);
		err = iwx_mpa_rx_advance(s->rx, k);
		at += k;
		avail -= k;
		if (err == -EPROTO) {
			CHECK(iwx_mpa_rx_failed(s->rx, NULL, NULL));
			CHECK(iwx_mpa_rx_want(s->rx, &dst) == 0);
			CHECK(iwx_mpa_rx_advance(s->rx, 1) == -EPROTO);
			break;
		}
		CHECK(err == 0 || (err == STOP_ERR && at_boundary(s->rx)));
		CHECK(iwx_mpa_rx_advance(s->rx, 0) == 0);
	}
	return at;
}

/* ------------------------------------------------------------ framed input */

struct record {
	size_t	off, len;		/* the ULPDU, in the ulpdu buffer */
	size_t	fpdu_off, fpdu_len;	/* the FPDU, in the stream */
	size_t	len_off;		/* its ULPDU_LENGTH field */
};

struct framed {
	uint8_t		*ulpdus;
	size_t		ulpdus_len;
	struct record	rec[MAX_RECORDS];
	size_t		nrec;
};

static uint32_t get_be(const uint8_t **p, const uint8_t *end, int n)
{
	uint32_t v = 0;

	while (n-- > 0)
		v = v << 8 | (*p < end ? *(*p)++ : 0);
	return v;
}

/* Parse records from in and frame them into stream; returns the stream length. */
static size_t frame_records(const uint8_t *in, size_t in_len, const struct iwx_mpa_mode *mode,
			    struct framed *fr, uint8_t *stream, bool large)
{
	const uint8_t *p = in, *end = in + in_len;
	struct iwx_mpa_tx tx;
	size_t at = 0;

	iwx_mpa_tx_init(&tx, mode);
	while (p < end && fr->nrec < MAX_RECORDS) {
		uint8_t t = *p++;
		uint8_t *u = fr->ulpdus + fr->ulpdus_len;
		size_t hl = 0, len, flen;
		struct record *r;
		ssize_t n;

		if (!(t & 0x80)) {
			len = (t & 0x7f) << 8 | get_be(&p, end, 1);
			len = MIN(len, (size_t)(end - p));
			memcpy(u, p, len);
			p += len;
		} else {
			struct iwx_ddp_msg m = { .opcode = t & 7 };
			uint32_t pay = get_be(&p, end, 2), x = get_be(&p, end, 4);
			uint8_t fill = get_be(&p, end, 1);

			m.stag = x;
			m.to = (uint64_t)x << 20 | fill;
			m.msn = x;
			m.inval_stag = ~x;
			hl = iwx_ddp_hdr_encode(u, &m, fill, t & 0x40);
			pay = MIN(large ? pay : pay % 2048, IWX_MPA_MAX_ULPDU - hl);
			if (t & 0x08) {
				pay = MIN(pay, (size_t)(end - p));
				memcpy(u + hl, p, pay);
				p += pay;
			} else {
				/* a pattern, doubled up: a byte loop costs too much instrumented */
				for (uint32_t i = 0; i < MIN(pay, 64u); i++)
					u[hl + i] = (uint8_t)(i * 31 + fill);
				for (uint32_t i = 64; i < pay; i *= 2)
					memcpy(u + hl + i, u + hl, MIN(i, pay - i));
			}
			len = hl + pay;
		}
		flen = iwx_mpa_fpdu_len(&tx, len);
		if (mode->markers_tx && flen > IWX_MPA_MAX_ULPDU) {
			/* no marker could point back across it: the framer must refuse */
			CHECK(iwx_mpa_fpdu_build(&tx, stream + at, MAX_STREAM - at, u, hl ? hl : len,
						 u + (hl ? hl : len), hl ? len - hl : 0) == -EMSGSIZE);
			break;
		}
		if (at + flen > MAX_STREAM)
			break;
		r = &fr->rec[fr->nrec++];
		r->off = fr->ulpdus_len;
		r->len = len;
		r->fpdu_off = at;
		r->len_off = at + (mode->markers_tx && at % IWX_MPA_MARKER_INTERVAL == 0 ?
				   IWX_MPA_MARKER_LEN : 0);
		fr->ulpdus_len += len;
		n = iwx_mpa_fpdu_build(&tx, stream + at, MAX_STREAM - at, u, hl ? hl : len,
				       u + (hl ? hl : len), hl ? len - hl : 0);
		CHECK(n == (ssize_t)flen);
		CHECK(n % 4 == 0);
		r->fpdu_len = n;
		at += n;
		CHECK(tx.pos == at);
	}
	return at;
}

/*
 * What the parsers must report for the first upto records: the segments they
 * deliver into exp, and whether and why they stop. Returns true when a record is
 * rejected (then *cause and, if with_seg, seg describe it).
 */
static bool expect(const struct framed *fr, size_t upto, struct log *exp,
		   struct iwx_term_cause *cause, bool *with_seg, struct iwx_ddp_seg *seg)
{
	for (size_t i = 0; i < upto; i++) {
		const uint8_t *u = fr->ulpdus + fr->rec[i].off;

		if (iwx_ddp_decode(u, fr->rec[i].len, seg, cause)) {
			*with_seg = cause->layer != IWX_LAYER_LLP;
			return true;
		}
		if (refuse(seg, cause)) {
			*with_seg = true;
			return true;
		}
		log_seg(exp, seg, seg->payload);
	}
	return false;
}

/* ---------------------------------------------------------------- entry */

/* Kept from input to input: allocating a parser (64 KiB) and the logs anew each time
   was most of a run (ASan's allocator fills and maps what it hands out). */
static uint8_t *stream, *ulpdus;
static struct iwx_mpa_rx *rx_a, *rx_b;
static struct log log_a, log_b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct side a = { 0 }, b = { 0 };
	struct chunker ca, cb;
	struct iwx_mpa_mode mode = { .rev = IWX_MPA_REV1 };
	struct framed fr = { 0 };
	struct iwx_term_cause cause_a, cause_b;
	const struct iwx_ddp_seg *seg_a, *seg_b;
	bool failed_a, failed_b;
	size_t n, used_a, used_b, corrupt_at = 0;
	uint8_t flags, corrupt_xor = 0, ca_spec, cb_spec;

	if (size < 3)
		return 0;
	if (!stream) {
		stream = malloc(MAX_STREAM);
		/* the records taken so far, and the one being built */
		ulpdus = malloc(MAX_STREAM + IWX_MPA_MAX_ULPDU);
		rx_a = malloc(sizeof(*rx_a));
		rx_b = malloc(sizeof(*rx_b));
		CHECK(stream && ulpdus && rx_a && rx_b);
	}
	flags = data[0];
	ca_spec = data[1];
	cb_spec = data[2];
	data += 3;
	size -= 3;
	mode.crc = flags & F_CRC;
	mode.markers_rx = mode.markers_tx = flags & F_MARKERS;

	if (flags & F_FRAMED) {
		if (flags & F_CORRUPT) {
			const uint8_t *p = data;

			corrupt_at = get_be(&p, data + size, 3);
			corrupt_xor = get_be(&p, data + size, 1);
			corrupt_xor = corrupt_xor ? corrupt_xor : 1;
			n = p - data;
			data += n;
			size -= n;
		}
		fr.ulpdus = ulpdus;
		n = frame_records(data, size, &mode, &fr, stream, flags & F_LARGE);
		if (flags & F_CORRUPT) {
			if (n == 0)
				return 0;
			corrupt_at %= n;
			stream[corrupt_at] ^= corrupt_xor;
		}
	} else {
		n = MIN(size, (size_t)MAX_STREAM);
		memcpy(stream, data, n);
	}

	chunker_init(&ca, ca_spec, n);
	chunker_init(&cb, cb_spec, n);
	a.rx = rx_a;
	b.rx = rx_b;
	a.log = log_a;
	b.log = log_b;
	a.log.len = b.log.len = 0;
	a.places = !(flags & F_PLACE_PULL);
	b.places = !a.places;
	a.stop = b.stop = flags & F_STOP;
	iwx_mpa_rx_init(a.rx, &mode, &ops, &a);
	iwx_mpa_rx_init(b.rx, &mode, &ops, &b);

	used_a = drive_feed(&a, stream, n, &ca);
	used_b = drive_pull(&b, stream, n, &cb);

	/* the two drivers must agree on everything */
	CHECK(used_a == used_b);
	CHECK(a.log.len == b.log.len && (a.log.len == 0 || !memcmp(a.log.p, b.log.p, a.log.len)));
	failed_a = iwx_mpa_rx_failed(a.rx, &cause_a, &seg_a);
	failed_b = iwx_mpa_rx_failed(b.rx, &cause_b, &seg_b);
	CHECK(failed_a == failed_b);
	if (failed_a) {
		struct log la = { 0 }, lb = { 0 };

		CHECK(iwx_cause_eq(cause_a, cause_b));
		CHECK(!seg_a == !seg_b);
		if (seg_a) {
			log_seg_hdr(&la, seg_a);
			log_seg_hdr(&lb, seg_b);
			CHECK(la.len == lb.len && !memcmp(la.p, lb.p, la.len));
		}
		free(la.p);
		free(lb.p);
	} else {
		CHECK(used_a == n);
	}
	CHECK(a.rx->stats.bytes == used_a && b.rx->stats.bytes == used_b);
	CHECK(a.rx->stats.fpdus == b.rx->stats.fpdus);
	CHECK(a.rx->stats.markers == b.rx->stats.markers);
	CHECK((a.places ? b.rx : a.rx)->stats.placed == 0);

	/* framed streams: the parsers must give back what was framed */
	if ((flags & F_FRAMED) && (!(flags & F_CORRUPT) || mode.crc)) {
		struct log exp = { 0 };
		struct iwx_term_cause cause;
		struct iwx_ddp_seg seg;
		bool with_seg = false, rejected;
		size_t bad = fr.nrec;
		bool check = true;

		if (flags & F_CORRUPT) {
			/* the FPDU holding the damaged byte; a damaged length reframes the stream */
			for (bad = 0; bad < fr.nrec; bad++)
				if (corrupt_at < fr.rec[bad].fpdu_off + fr.rec[bad].fpdu_len)
					break;
			CHECK(bad < fr.nrec);
			if (corrupt_at - fr.rec[bad].len_off < IWX_MPA_HDR_LEN)
				check = false;
		}
		rejected = expect(&fr, bad, &exp, &cause, &with_seg, &seg);
		if (check) {
			CHECK(exp.len == a.log.len && (exp.len == 0 || !memcmp(exp.p, a.log.p, exp.len)));
			if (rejected) {
				CHECK(failed_a && iwx_cause_eq(cause, cause_a));
				CHECK(with_seg == !!seg_a);
				if (with_seg) {
					struct log le = { 0 }, la = { 0 };

					log_seg_hdr(&le, &seg);
					log_seg_hdr(&la, seg_a);
					CHECK(le.len == la.len && !memcmp(le.p, la.p, le.len));
					free(le.p);
					free(la.p);
				}
			} else if (flags & F_CORRUPT) {
				CHECK(failed_a);
				CHECK(iwx_cause_eq(cause_a, IWX_CAUSE_MPA(IWX_MPA_EC_CRC)) ||
				      iwx_cause_eq(cause_a, IWX_CAUSE_MPA(IWX_MPA_EC_MARKER)));
				CHECK(a.rx->stats.fpdus <= bad + 1);
			} else {
				CHECK(!failed_a);
				CHECK(a.rx->stats.fpdus == fr.nrec);
				CHECK(at_boundary(a.rx) && at_boundary(b.rx));
			}
		}
		free(exp.p);
	}

	free(a.placed);
	free(b.placed);
	log_a = a.log;	/* where realloc left them */
	log_b = b.log;
	return 0;
}
