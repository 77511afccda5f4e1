// SPDX-License-Identifier: MIT
/* The SCTP DDP adaptation (draft-otis-sctp-ddp-00) as docs/ddp-over-sctp.md maps RDMAP onto it. */
#include <criterion/criterion.h>
#include <errno.h>

#include "proto/ddp_shim.h"
#include "proto/mpa.h"
#include "proto/rdmap.h"

#include "testutil.h"

/* the peer announced DDP_TAG_PLACE, as every peer iwx connects to must */
#define PEER_TAG	IWX_SHIM_IND_TAG

/* The chunk's user data: the shim header of msg's segment at off, then len bytes of pattern. */
static size_t chunk_of(uint8_t *chunk, const struct iwx_ddp_msg *msg, uint32_t off, uint32_t len,
		       bool last)
{
	size_t hlen = iwx_shim_hdr_encode(chunk, msg, off, last);

	fill_pattern(chunk + hlen, len, off);
	return hlen + len;
}

/* Decode a chunk that must be a good segment of msg at off, and check every field. */
static void assert_segment(const uint8_t *chunk, size_t n, const struct iwx_ddp_msg *msg,
			   uint32_t off, bool last)
{
	bool tagged = iwx_rdmap_opcode_tagged(msg->opcode);
	size_t hlen = tagged ? 20 : 28;
	uint8_t want[IWX_DDP_UNTAGGED_HDR_LEN];
	size_t want_len = iwx_ddp_hdr_encode(want, msg, off, last);
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;

	cr_assert_eq(iwx_shim_decode(chunk, n, PEER_TAG, &s, &c), 0, "opcode %u off %u",
		     msg->opcode, off);
	cr_assert_eq(s.tagged, tagged);
	cr_assert_eq(s.last, last);
	cr_assert_eq(s.opcode, msg->opcode);
	cr_assert_eq(s.rdmap_ctrl, 0x40 | msg->opcode);
	if (tagged) {
		cr_assert_eq(s.stag, msg->stag);
		cr_assert_eq(s.to, msg->to + off);
	} else {
		bool inval = iwx_rdmap_opcode_has_inval(msg->opcode);

		cr_assert_eq(s.inval_stag, inval ? msg->inval_stag : 0);
		cr_assert_eq(s.qn, iwx_rdmap_opcode_qn(msg->opcode));
		cr_assert_eq(s.msn, msg->msn);
		cr_assert_eq(s.mo, off);
	}
	cr_assert_eq(s.payload, chunk + hlen);
	cr_assert_eq(s.len, n - hlen);
	/* what the TCP path would have received for the same segment */
	cr_assert_eq(s.hdr_len, want_len);
	cr_assert_arr_eq(s.hdr, want, want_len);
	cr_assert_eq(s.ulpdu_len, want_len + s.len);
}

Test(ddp_shim, round_trip_every_opcode)
{
	static uint8_t chunk[1024];

	for (uint8_t op = 0; op < IWX_OP_COUNT; op++) {
		struct iwx_ddp_msg m = {
			.opcode = op, .stag = 0x5a5a0001 + op, .to = 0xfffffff000ull, .msn = 9 + op,
			.inval_stag = 0x77000000 | op, .len = 1000,
		};
		struct iwx_ddp_segmenter sg;
		uint32_t off, len, n = 0;
		bool last;

		cr_assert_eq(iwx_ddp_segmenter_init_payload(&sg, &m, 400), 0);
		while (iwx_ddp_segmenter_step(&sg, &off, &len, &last)) {
			/* first, middle, last */
			cr_assert_eq(off, 400 * n);
			cr_assert_eq(len, n < 2 ? 400 : 200);
			assert_segment(chunk, chunk_of(chunk, &m, off, len, last), &m, off, last);
			n++;
		}
		cr_assert_eq(n, 3);

		m.len = 0;
		cr_assert_eq(iwx_ddp_segmenter_init_payload(&sg, &m, 400), 0);
		cr_assert(iwx_ddp_segmenter_step(&sg, &off, &len, &last));
		cr_assert(last && off == 0 && len == 0);
		assert_segment(chunk, chunk_of(chunk, &m, 0, 0, true), &m, 0, true);
		cr_assert_not(iwx_ddp_segmenter_step(&sg, &off, &len, &last));
	}
}

Test(ddp_shim, write_header_bytes)
{
	struct iwx_ddp_msg m = {
		.opcode = IWX_OP_WRITE, .stag = 0x11223344, .to = 0x180000000ull, .len = 5000,
	};
	static const uint8_t last[] = {
		0x03, 0x40, 0x00, 0x14,				/* TAG_MODE, DISCLOSE, 20 */
		0x11, 0x22, 0x33, 0x44,				/* Data Sink STag */
		0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x0f, 0xa0,	/* TO + 4000 */
		0x40, 0x00, 0x00, 0x00,				/* RDMAP version 1, Write */
	};
	static const uint8_t first[] = {
		0x03, 0x00, 0x00, 0x14,
		0x11, 0x22, 0x33, 0x44,
		0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00,
		0x40, 0x00, 0x00, 0x00,
	};
	uint8_t h[IWX_SHIM_MAX_HDR_LEN];

	memset(h, 0xee, sizeof(h));
	cr_assert_eq(iwx_shim_hdr_encode(h, &m, 4000, true), sizeof(last));
	cr_assert_arr_eq(h, last, sizeof(last));
	cr_assert_eq(h[20], 0xee, "wrote past the tagged header");
	cr_assert_eq(iwx_shim_hdr_encode(h, &m, 0, false), sizeof(first));
	cr_assert_arr_eq(h, first, sizeof(first));
}

Test(ddp_shim, send_with_invalidate_header_bytes)
{
	struct iwx_ddp_msg m = {
		.opcode = IWX_OP_SEND_INV, .msn = 7, .inval_stag = 0xdeadbe01, .len = 3000,
	};
	static const uint8_t want[] = {
		0x01, 0x00, 0x00, 0x1c,				/* ANONYMOUS_MODE, 28 */
		0xde, 0xad, 0xbe, 0x01,				/* Invalidate STag */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0xa8,	/* MO 1448 */
		0x44, 0x00, 0x00, 0x00,				/* RDMAP v1, Send with Invalidate */
		0x00, 0x00, 0x00, 0x00,				/* QN 0 */
		0x00, 0x00, 0x00, 0x07,				/* MSN */
	};
	uint8_t h[IWX_SHIM_MAX_HDR_LEN];

	cr_assert_eq(iwx_shim_hdr_encode(h, &m, 1448, false), sizeof(want));
	cr_assert_arr_eq(h, want, sizeof(want));
	/* RFC 5040 §4.1: the Tag is zero for a Send that does not invalidate */
	m.opcode = IWX_OP_SEND;
	iwx_shim_hdr_encode(h, &m, 1448, false);
	cr_assert(h[4] == 0 && h[5] == 0 && h[6] == 0 && h[7] == 0);
	cr_assert_eq(h[16], 0x43);
}

Test(ddp_shim, streams)
{
	static const uint16_t want[IWX_OP_COUNT_RFC5040] = {	/* RFC 7306 is not used over SCTP */
		[IWX_OP_WRITE] = 4, [IWX_OP_READ_REQ] = 2, [IWX_OP_READ_RESP] = 4,
		[IWX_OP_SEND] = 1, [IWX_OP_SEND_INV] = 1, [IWX_OP_SEND_SE] = 1,
		[IWX_OP_SEND_SE_INV] = 1, [IWX_OP_TERMINATE] = 3,
	};

	for (uint8_t op = 0; op < IWX_OP_COUNT_RFC5040; op++)
		cr_assert_eq(iwx_shim_stream(op), want[op], "opcode %u", op);
	cr_assert_eq(IWX_SHIM_STREAMS, 5);
}

Test(ddp_shim, setup_chunk_is_recognised)
{
	struct iwx_mpa_rr_params req = {
		.rev = 2, .enhanced = true, .ird = 16, .ord = 16, .p2p = true, .rtr_write = true,
	}, got;
	static const uint8_t want_hdr[] = {
		0x01, 0x40, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t chunk[64];
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;
	size_t hlen = iwx_shim_setup_hdr(chunk);
	ssize_t flen = iwx_mpa_rr_encode(chunk + hlen, sizeof(chunk) - hlen, &req);

	cr_assert_eq(hlen, 16);
	cr_assert_arr_eq(chunk, want_hdr, sizeof(want_hdr));
	cr_assert_eq(flen, 24);
	cr_assert_eq(iwx_shim_decode(chunk, hlen + flen, PEER_TAG, &s, &c), IWX_SHIM_SETUP);
	cr_assert_eq(s.payload, chunk + 16);
	cr_assert_eq(s.len, 24);
	cr_assert(s.last);
	cr_assert_eq(s.hdr_len, 0);
	/* the frame itself is mpa.c's */
	cr_assert_eq(iwx_mpa_rr_decode(s.payload, s.len, false, &got), 24);
	cr_assert(got.enhanced && got.p2p && got.rtr_write && got.ird == 16);
	/* Tag and Offset mean nothing here */
	memset(chunk + 4, 0xff, 12);
	cr_assert_eq(iwx_shim_decode(chunk, hlen + flen, PEER_TAG, &s, &c), IWX_SHIM_SETUP);
	cr_assert_eq(s.len, 24);
}

/* A 28-byte untagged header: mode, header length, RDMAP control byte and QN as given. */
static size_t anon(uint8_t *b, uint8_t mode, uint16_t hlen, uint8_t rctrl, uint8_t qn)
{
	memset(b, 0, 40);
	b[0] = mode;
	b[1] = IWX_SHIM_FLAG_DISCLOSE;
	b[2] = hlen >> 8;
	b[3] = hlen & 0xff;
	b[16] = rctrl;
	b[23] = qn;
	b[27] = 1;	/* MSN 1 */
	return 40;	/* header plus 12 bytes of payload */
}

#define MODE		IWX_CAUSE_SHIM(IWX_SHIM_EC_MODE)
#define MALFORMED	IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED)

/* Decoding the n bytes at b, from a peer that announced ind, fails with exactly want. */
static void assert_refused(const uint8_t *b, size_t n, uint32_t ind, struct iwx_term_cause want)
{
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;

	cr_assert_eq(iwx_shim_decode(b, n, ind, &s, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, want), "cause %u/%u/0x%02x, want %u/%u/0x%02x",
		  c.layer, c.etype, c.ecode, want.layer, want.etype, want.ecode);
}

Test(ddp_shim, mode_errors)
{
	const uint8_t S = IWX_SHIM_MODE_STREAM, T = IWX_SHIM_MODE_TAG;
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;
	uint8_t b[40];

	/* draft-otis-sctp-ddp §3.2.1 R1: STREAM_MODE, whatever the peer said */
	assert_refused(b, anon(b, S, 28, 0x43, 0), PEER_TAG, MODE);
	assert_refused(b, anon(b, S, 28, 0x43, 0), IWX_SHIM_IND_STREAM, MODE);
	/* R2: TAG_MODE from a peer that did not announce DDP_TAG_PLACE */
	assert_refused(b, anon(b, T, 20, 0x40, 0), IWX_SHIM_IND_ANONYMOUS, MODE);
	assert_refused(b, anon(b, T, 20, 0x40, 0), IWX_SHIM_IND_STREAM, MODE);
	cr_assert_eq(iwx_shim_decode(b, anon(b, T, 20, 0x40, 0), PEER_TAG, &s, &c), 0);
	/* no such mode */
	assert_refused(b, anon(b, 0, 28, 0x43, 0), PEER_TAG, MODE);
	assert_refused(b, anon(b, 4, 28, 0x43, 0), PEER_TAG, MODE);
}

Test(ddp_shim, malformed_headers)
{
	static uint8_t b[IWX_SHIM_MAX_CHUNK + 1];
	const uint8_t A = IWX_SHIM_MODE_ANONYMOUS, T = IWX_SHIM_MODE_TAG;
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;

	/* each mode has exactly one header length for data */
	assert_refused(b, anon(b, T, 16, 0x40, 0), PEER_TAG, MALFORMED);
	assert_refused(b, anon(b, T, 24, 0x40, 0), PEER_TAG, MALFORMED);
	assert_refused(b, anon(b, T, 28, 0x40, 0), PEER_TAG, MALFORMED);
	assert_refused(b, anon(b, A, 20, 0x43, 0), PEER_TAG, MALFORMED);
	assert_refused(b, anon(b, A, 24, 0x43, 0), PEER_TAG, MALFORMED);
	assert_refused(b, anon(b, A, 32, 0x43, 0), PEER_TAG, MALFORMED);
	assert_refused(b, anon(b, A, 0, 0x43, 0), PEER_TAG, MALFORMED);
	/* a header longer than the chunk */
	anon(b, A, 28, 0x43, 0);
	assert_refused(b, 27, PEER_TAG, MALFORMED);
	cr_assert_eq(iwx_shim_decode(b, 28, PEER_TAG, &s, &c), 0);
	anon(b, T, 20, 0x40, 0);
	assert_refused(b, 19, PEER_TAG, MALFORMED);
	cr_assert_eq(iwx_shim_decode(b, 20, PEER_TAG, &s, &c), 0);
	/* shorter than the fixed part, or longer than one DATA chunk */
	assert_refused(b, 15, PEER_TAG, MALFORMED);
	assert_refused(b, 0, PEER_TAG, MALFORMED);
	cr_assert_eq(iwx_shim_decode(b, IWX_SHIM_MAX_CHUNK, PEER_TAG, &s, &c), 0);
	cr_assert_eq(s.len, 65519 - 20);
	cr_assert_eq(s.ulpdu_len, 65519 - 20 + 14);
	assert_refused(b, IWX_SHIM_MAX_CHUNK + 1, PEER_TAG, MALFORMED);
	/* an MO has 32 bits (RFC 5041 §4.3) */
	anon(b, A, 28, 0x43, 0);
	b[11] = 1;
	assert_refused(b, 40, PEER_TAG, MALFORMED);
	b[11] = 0;
	b[12] = 0xff;
	cr_assert_eq(iwx_shim_decode(b, 40, PEER_TAG, &s, &c), 0);
	cr_assert_eq(s.mo, 0xff000000u);
}

/* Errors above the shim: the causes iwx_ddp_decode gives, and the header a Terminate copies. */
Test(ddp_shim, rdmap_and_ddp_errors_as_over_mpa)
{
	const struct iwx_term_cause version = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_VERSION),
				    opcode = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE),
				    qn = IWX_CAUSE_DDP_U(IWX_DDP_U_INVALID_QN);
	const uint8_t A = IWX_SHIM_MODE_ANONYMOUS, T = IWX_SHIM_MODE_TAG;
	static const uint8_t want[] = {
		0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0,
	};
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;
	struct iwx_term t;
	uint8_t b[40];

	cr_assert_eq(iwx_shim_decode(b, anon(b, A, 28, 0x43, 0), PEER_TAG, &s, &c), 0);
	cr_assert_eq(iwx_shim_decode(b, anon(b, A, 28, 0x47, 2), PEER_TAG, &s, &c), 0);
	/* RDMAP version 0 and 2 */
	assert_refused(b, anon(b, A, 28, 0x03, 0), PEER_TAG, version);
	assert_refused(b, anon(b, T, 20, 0x80, 0), PEER_TAG, version);
	/* a tagged opcode in ANONYMOUS_MODE, an untagged one in TAG_MODE, a reserved one */
	assert_refused(b, anon(b, A, 28, 0x40, 0), PEER_TAG, opcode);
	assert_refused(b, anon(b, A, 28, 0x42, 0), PEER_TAG, opcode);
	assert_refused(b, anon(b, T, 20, 0x43, 0), PEER_TAG, opcode);
	assert_refused(b, anon(b, A, 28, 0x4c, 0), PEER_TAG, opcode);
	/* QN 3 does not exist; a Send on the Read Request queue is on the wrong one */
	assert_refused(b, anon(b, A, 28, 0x43, 3), PEER_TAG, qn);
	assert_refused(b, anon(b, A, 28, 0x43, 1), PEER_TAG, qn);

	/* the Terminate copies the RFC 5041 header of what was received, QN 1 included */
	cr_assert_eq(iwx_shim_decode(b, 40, PEER_TAG, &s, &c), -EPROTO);
	iwx_term_init(&t, c, &s, NULL);
	cr_assert(t.has_seg_len && t.has_ddp_hdr);
	cr_assert_eq(t.seg_len, 18 + 12);
	cr_assert_eq(t.ddp_hdr_len, 18);
	cr_assert_arr_eq(t.ddp_hdr, want, sizeof(want));
}

Test(ddp_shim, other_flags_are_ignored)
{
	uint8_t b[40];
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;

	/* ACK_REQUESTED, RELEASE_BUFFER and the reserved bits: only DISCLOSE means anything */
	anon(b, IWX_SHIM_MODE_ANONYMOUS, 28, 0x43, 0);
	b[1] = 0xff & ~IWX_SHIM_FLAG_DISCLOSE;
	cr_assert_eq(iwx_shim_decode(b, 40, PEER_TAG, &s, &c), 0);
	cr_assert_not(s.last);
	cr_assert_eq(s.hdr[0], 0x01, "no L in the equivalent header");
	b[1] = 0xff;
	cr_assert_eq(iwx_shim_decode(b, 40, PEER_TAG, &s, &c), 0);
	cr_assert(s.last);
	cr_assert_eq(s.hdr[0], 0x41);
}

Test(ddp_shim, max_payload)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .len = 10 };
	struct iwx_ddp_segmenter sg;

	/* SCTP_MAXSEG on a 1500-byte path: 1500 - 20 (IPv4) - 12 (common header) - 16 (DATA) */
	cr_assert_eq(iwx_shim_max_payload(1452, true), 1432);
	cr_assert_eq(iwx_shim_max_payload(1452, false), 1424);
	cr_assert_eq(iwx_shim_max_payload(21, true), 1);
	cr_assert_eq(iwx_shim_max_payload(20, true), 0);
	cr_assert_eq(iwx_shim_max_payload(28, false), 0);
	cr_assert_eq(iwx_shim_max_payload(1 << 20, true), 65519 - 20);
	cr_assert_eq(iwx_ddp_segmenter_init_payload(&sg, &m, iwx_shim_max_payload(28, false)),
		     -EINVAL);
	m.opcode = IWX_OP_COUNT;
	cr_assert_eq(iwx_ddp_segmenter_init_payload(&sg, &m, 100), -EINVAL);
}

Test(ddp_shim, one_mib_write_in_chunks)
{
	const uint32_t maxseg = 1452, mib = 1 << 20;
	struct iwx_ddp_msg m = {
		.opcode = IWX_OP_WRITE, .stag = 0xc0ffee07, .to = 0x7f0000001000ull, .len = mib,
	};
	uint32_t room = iwx_shim_max_payload(maxseg, true), off, len, next = 0, n = 0;
	struct iwx_ddp_segmenter sg;
	uint8_t h[IWX_SHIM_MAX_HDR_LEN];
	struct iwx_term_cause c;
	struct iwx_ddp_seg s;
	bool last;

	cr_assert_eq(iwx_ddp_segmenter_init_payload(&sg, &m, room), 0);
	while (iwx_ddp_segmenter_step(&sg, &off, &len, &last)) {
		size_t hlen = iwx_shim_hdr_encode(h, &m, off, last);

		cr_assert_eq(hlen, 20);
		cr_assert_leq(hlen + len, maxseg);
		cr_assert_eq(off, next);
		/* only the header's bytes are read */
		cr_assert_eq(iwx_shim_decode(h, hlen + len, PEER_TAG, &s, &c), 0);
		cr_assert_eq(s.to, m.to + off);
		cr_assert_eq(s.stag, m.stag);
		cr_assert_eq(s.len, len);
		cr_assert_eq(s.last, next + len == mib, "DISCLOSE on chunk %u", n);
		cr_assert_eq(h[1], s.last ? IWX_SHIM_FLAG_DISCLOSE : 0);
		next += len;
		n++;
	}
	/* 732 chunks of 1432 bytes, then 352 */
	cr_assert_eq(n, 733);
	cr_assert_eq(len, 352);
	cr_assert(last);
	cr_assert_eq(next, mib);
}

Test(ddp_shim, terminate_names)
{
	cr_assert_str_eq(iwx_term_etype_name(IWX_LAYER_LLP, IWX_SHIM_ETYPE),
			 "SCTP DDP adaptation error");
	cr_assert_str_eq(iwx_term_ecode_name(IWX_LAYER_LLP, IWX_SHIM_ETYPE, IWX_SHIM_EC_MODE),
			 "DDP mode not announced");
	cr_assert_str_eq(iwx_term_ecode_name(IWX_LAYER_LLP, IWX_SHIM_ETYPE, IWX_SHIM_EC_MALFORMED),
			 "malformed DDP header");
	cr_assert_str_eq(iwx_term_ecode_name(IWX_LAYER_LLP, IWX_SHIM_ETYPE, 3), "unknown");
	cr_assert_str_eq(iwx_term_etype_name(IWX_LAYER_LLP, IWX_MPA_ETYPE), "MPA error");
	cr_assert_str_eq(iwx_term_etype_name(IWX_LAYER_LLP, 2), "unknown");
}
