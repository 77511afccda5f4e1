// SPDX-License-Identifier: MIT
/* DDP headers, segmentation (RFC 5041 §5.2 examples) and the buffer checks of §7.1. */
#include <criterion/criterion.h>
#include <errno.h>

#include "proto/ddp.h"
#include "proto/ddp_check.h"
#include "proto/rdmap.h"

#include "testutil.h"

static void assert_cause(struct iwx_term_cause c, uint8_t layer, uint8_t etype, uint8_t ecode)
{
	cr_assert(c.layer == layer && c.etype == etype && c.ecode == ecode,
		  "cause %u/%u/0x%02x, want %u/%u/0x%02x", c.layer, c.etype, c.ecode,
		  layer, etype, ecode);
}

Test(ddp_decode, siw_read_response_tagged)
{
	uint8_t f[128];
	size_t n = hex_decode(siw_client_fpdus[1], f, sizeof(f));
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;

	cr_assert_eq(iwx_ddp_decode(f + 2, n - 6, &s, &c), 0);
	cr_assert(s.tagged && s.last);
	cr_assert_eq(s.opcode, IWX_OP_READ_RESP);
	cr_assert_eq(s.stag, 0x7c108b00);
	cr_assert_eq(s.to, 0x000055bf4ce09130ull);
	cr_assert_eq(s.len, 64);
	cr_assert_eq(s.hdr_len, 14);
	cr_assert_eq(s.ulpdu_len, 78);
	cr_assert_str_eq((const char *)s.payload, "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr");
}

Test(ddp_decode, siw_read_request_untagged)
{
	uint8_t f[128];
	size_t n = hex_decode(siw_server_fpdus[0], f, sizeof(f));
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;
	struct iwx_read_req rr;

	cr_assert_eq(iwx_ddp_decode(f + 2, n - 6, &s, &c), 0);
	cr_assert(!s.tagged && s.last);
	cr_assert_eq(s.opcode, IWX_OP_READ_REQ);
	cr_assert_eq(s.qn, 1);
	cr_assert_eq(s.msn, 1);
	cr_assert_eq(s.mo, 0);
	cr_assert_eq(iwx_read_req_decode(&s, &rr, &c), 0);
	cr_assert_eq(rr.sink_stag, 0x7c108b00);
	cr_assert_eq(rr.sink_to, 0x000055bf4ce09130ull);
	cr_assert_eq(rr.size, 64);
	cr_assert_eq(rr.src_stag, 0x3ef3d100);
	cr_assert_eq(rr.src_to, 0x0000564701ab8450ull);
}

/* An 18-byte untagged header with the given first two bytes and QN. */
static size_t untagged(uint8_t *b, uint8_t ddp, uint8_t rdmap, uint32_t qn)
{
	memset(b, 0, 24);
	b[0] = ddp;
	b[1] = rdmap;
	b[9] = qn;
	b[13] = 1;	/* MSN 1 */
	return 24;	/* header plus 6 bytes of payload */
}

Test(ddp_decode, header_errors_name_the_rfc_terminate)
{
	uint8_t b[32];
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;

	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x43, 0), &s, &c), 0);
	/* DDP version 2 */
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x42, 0x43, 0), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_VERSION);
	b[0] = 0xc2;
	cr_assert_eq(iwx_ddp_decode(b, 14, &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_VERSION);
	/* RDMAP version 0 and 2 */
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x03, 0), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_VERSION);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x83, 0), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_VERSION);
	/* reserved opcode, and opcodes on the wrong buffer model */
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x4c, 0), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_OPCODE);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x40, 0), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_OPCODE);
	untagged(b, 0xc1, 0x43, 0);
	cr_assert_eq(iwx_ddp_decode(b, 14, &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_OPCODE);
	/* QN 4 does not exist; a Send on the Read Request queue is on the wrong one */
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x43, 4), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_QN);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x43, 3), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_QN);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x43, 1), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_QN);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x47, 2), &s, &c), 0);
	/* RFC 7306 §4.1: Immediate Data on QN 0, Atomic Requests on 1, Responses on 3, untagged */
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x48, 0), &s, &c), 0);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x49, 0), &s, &c), 0);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x4a, 1), &s, &c), 0);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x4b, 3), &s, &c), 0);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x4a, 0), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_QN);
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41, 0x4b, 1), &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_QN);
	untagged(b, 0xc1, 0x48, 0);
	cr_assert_eq(iwx_ddp_decode(b, 14, &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, IWX_RDMAP_EC_OPCODE);
	untagged(b, 0x41, 0x43, 0);
	/* a ULPDU too short for its header: the MPA length is wrong */
	cr_assert_eq(iwx_ddp_decode(b, 17, &s, &c), -EPROTO);
	assert_cause(c, IWX_LAYER_LLP, IWX_MPA_ETYPE, IWX_MPA_EC_MARKER);
	cr_assert_eq(iwx_ddp_decode(b, 0, &s, &c), -EPROTO);
}

Test(ddp_decode, reserved_bits_are_not_checked)
{
	uint8_t b[32];
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;

	/* RFC 5041 §4.1 and RFC 5040 §4.1: reserved bits are ignored on receive */
	cr_assert_eq(iwx_ddp_decode(b, untagged(b, 0x41 | 0x3c, 0x43 | 0x30, 0), &s, &c), 0);
}

struct seg_out {
	uint8_t hdr[18];
	size_t hlen;
	uint32_t off, len;
};

static int segment_all(const struct iwx_ddp_msg *m, uint32_t mulpdu, struct seg_out *out, int max)
{
	struct iwx_ddp_segmenter s;
	int n = 0;

	cr_assert_eq(iwx_ddp_segmenter_init(&s, m, mulpdu), 0);
	while (n < max && (out[n].hlen = iwx_ddp_segmenter_next(&s, out[n].hdr, &out[n].off,
								 &out[n].len)))
		n++;
	return n;
}

Test(ddp_segment, rfc5041_untagged_example)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = 7, .len = 2048 };
	struct seg_out o[4];
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;

	cr_assert_eq(segment_all(&m, 1500, o, 4), 2);
	cr_assert_eq(o[0].len, 1482);
	cr_assert_eq(o[1].off, 1482);
	cr_assert_eq(o[1].len, 566);
	cr_assert_eq(iwx_ddp_decode(o[0].hdr, 18 + o[0].len, &s, &c), 0);
	cr_assert(!s.last && s.mo == 0 && s.msn == 7 && s.qn == 0);
	cr_assert_eq(iwx_ddp_decode(o[1].hdr, 18 + o[1].len, &s, &c), 0);
	cr_assert(s.last && s.mo == 1482 && s.msn == 7);
}

/* A segment cut short once (to fill what is left of a TCP segment): the next ones go on from it. */
Test(ddp_segment, cut_short_once_then_full)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .stag = 0x100, .to = 4096, .len = 3000 };
	struct iwx_ddp_segmenter sg;
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;
	uint8_t hdr[18];
	uint32_t off, len;

	cr_assert_eq(iwx_ddp_segmenter_init(&sg, &m, 1500), 0);
	/* a ULPDU of 114 bytes: the tagged header's 14 and 100 of payload */
	cr_assert_eq(iwx_ddp_segmenter_next_at_most(&sg, 114, hdr, &off, &len), 14);
	cr_assert(off == 0 && len == 100);
	cr_assert_eq(iwx_ddp_decode(hdr, 14 + len, &s, &c), 0);
	cr_assert(!s.last && s.to == 4096);
	cr_assert_eq(iwx_ddp_segmenter_next(&sg, hdr, &off, &len), 14);
	cr_assert(off == 100 && len == 1486);
	/* room for the header alone still carries a byte, and the last says so */
	cr_assert_eq(iwx_ddp_segmenter_next_at_most(&sg, 10, hdr, &off, &len), 14);
	cr_assert(off == 1586 && len == 1);
	cr_assert_eq(iwx_ddp_segmenter_next(&sg, hdr, &off, &len), 14);
	cr_assert(off == 1587 && len == 1413);
	cr_assert_eq(iwx_ddp_decode(hdr, 14 + len, &s, &c), 0);
	cr_assert(s.last && s.to == 4096 + 1587);
	cr_assert_eq(iwx_ddp_segmenter_next(&sg, hdr, &off, &len), 0);
}

Test(ddp_segment, rfc5041_tagged_example)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .stag = 0xabcdef01, .to = 16384, .len = 2048 };
	struct seg_out o[4];
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;

	cr_assert_eq(segment_all(&m, 1500, o, 4), 2);
	cr_assert_eq(o[0].len, 1486);
	cr_assert_eq(o[1].len, 562);
	cr_assert_eq(iwx_ddp_decode(o[1].hdr, 14 + o[1].len, &s, &c), 0);
	cr_assert(s.tagged && s.last && s.to == 17870 && s.stag == 0xabcdef01);
	cr_assert_eq(iwx_ddp_decode(o[0].hdr, 14 + o[0].len, &s, &c), 0);
	cr_assert(!s.last && s.to == 16384);
}

Test(ddp_segment, zero_length_is_one_last_segment)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .len = 0 };
	struct seg_out o[2];
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;

	cr_assert_eq(segment_all(&m, 1442, o, 2), 1);
	cr_assert_eq(o[0].len, 0);
	cr_assert_eq(iwx_ddp_decode(o[0].hdr, 14, &s, &c), 0);
	cr_assert(s.last);
}

Test(ddp_segment, exact_multiple_and_inval_stag)
{
	struct iwx_ddp_msg m = {
		.opcode = IWX_OP_SEND_SE_INV, .msn = 1, .inval_stag = 0x1234, .len = 3 * 100,
	};
	struct seg_out o[8];
	struct iwx_ddp_seg s;
	struct iwx_term_cause c;

	cr_assert_eq(segment_all(&m, 118, o, 8), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(iwx_ddp_decode(o[i].hdr, 18 + o[i].len, &s, &c), 0);
		cr_assert_eq(s.inval_stag, 0x1234);
		cr_assert_eq(s.mo, 100u * i);
		cr_assert_eq(s.last, i == 2);
	}
	/* the Invalidate STag field is zero for opcodes that do not invalidate */
	m.opcode = IWX_OP_SEND;
	segment_all(&m, 118, o, 8);
	cr_assert_eq(iwx_ddp_decode(o[0].hdr, 18 + o[0].len, &s, &c), 0);
	cr_assert_eq(s.inval_stag, 0);
}

Test(ddp_segment, init_errors)
{
	struct iwx_ddp_segmenter s;
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .len = 10 };

	cr_assert_eq(iwx_ddp_segmenter_init(&s, &m, 18), -EINVAL);
	cr_assert_eq(iwx_ddp_segmenter_init(&s, &m, 19), 0);
	m.opcode = IWX_OP_COUNT;
	cr_assert_eq(iwx_ddp_segmenter_init(&s, &m, 1000), -EINVAL);
}

#define R(l, e, c) IWX_CHECK(l, e, c)

Test(ddp_check, tagged_in_rfc_order)
{
	struct iwx_stag_desc d = {
		.stag = 0x4201, .pd = 7, .valid = 1, .access = IWX_ACCESS_REMOTE_WRITE,
		.base_to = 0x1000, .len = 0x1000,
	};
	const __u8 W = IWX_ACCESS_REMOTE_WRITE;

	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, W, 0x1000, 0x1000), IWX_CHECK_OK);
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, W, 0x1fff, 1), IWX_CHECK_OK);
	cr_assert_eq(iwx_check_tagged(NULL, 0x4201, 7, W, 0x1000, 1),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_INVALID_STAG));
	cr_assert_eq(iwx_check_tagged(&d, 0x4202, 7, W, 0x1000, 1),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_INVALID_STAG), "wrong key");
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 8, W, 0x1000, 1),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_STAG_NOT_ASSOC));
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, IWX_ACCESS_LOCAL_WRITE, 0x1000, 1),
		     R(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_ACCESS));
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, W, 0xfff, 1),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_BASE_BOUNDS));
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, W, 0x1fff, 2),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_BASE_BOUNDS));
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, W, 0x2000, 1),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_BASE_BOUNDS));
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, W, ~0ull - 2, 8),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_TO_WRAP));
	d.valid = 0;
	cr_assert_eq(iwx_check_tagged(&d, 0x4201, 7, W, 0x1000, 1),
		     R(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_INVALID_STAG), "invalidated");
	/* RFC 5041 §5.2: a zero-length tagged segment is not checked */
	cr_assert_eq(iwx_check_tagged(NULL, 0, 0, W, 0, 0), IWX_CHECK_OK);
}

Test(ddp_check, read_source_is_rdmap_protection)
{
	struct iwx_stag_desc d = {
		.stag = 0x9900, .pd = 1, .valid = 1, .access = IWX_ACCESS_REMOTE_READ,
		.base_to = 0, .len = 64,
	};
	const uint8_t L = IWX_LAYER_RDMAP, E = IWX_RDMAP_ETYPE_REMOTE_PROT;

	cr_assert_eq(iwx_check_read_source(&d, 0x9900, 1, 0, 64), IWX_CHECK_OK);
	cr_assert_eq(iwx_check_read_source(NULL, 0x9900, 1, 0, 0), IWX_CHECK_OK, "zero length");
	cr_assert_eq(iwx_check_read_source(NULL, 0x9900, 1, 0, 1), R(L, E, IWX_RDMAP_EC_INVALID_STAG));
	cr_assert_eq(iwx_check_read_source(&d, 0x9900, 2, 0, 1), R(L, E, IWX_RDMAP_EC_STAG_NOT_ASSOC));
	cr_assert_eq(iwx_check_read_source(&d, 0x9900, 1, 1, 64), R(L, E, IWX_RDMAP_EC_BASE_BOUNDS));
	cr_assert_eq(iwx_check_read_source(&d, 0x9900, 1, ~0ull, 2), R(L, E, IWX_RDMAP_EC_TO_WRAP));
	d.access = IWX_ACCESS_REMOTE_WRITE;
	cr_assert_eq(iwx_check_read_source(&d, 0x9900, 1, 0, 1), R(L, E, IWX_RDMAP_EC_ACCESS));
}

Test(ddp_check, untagged_queue)
{
	struct iwx_untagged_queue q = { .next_msn = 5, .posted = 2 };
	const uint8_t L = IWX_LAYER_DDP, E = IWX_DDP_ETYPE_UNTAGGED;

	cr_assert_eq(iwx_check_untagged(&q, 5, 0, 100, 100), IWX_CHECK_OK);
	cr_assert_eq(iwx_check_untagged(&q, 6, 50, 50, 100), IWX_CHECK_OK);
	cr_assert_eq(iwx_check_untagged(NULL, 5, 0, 1, 100), R(L, E, IWX_DDP_U_INVALID_QN));
	cr_assert_eq(iwx_check_untagged(&q, 7, 0, 1, 100), R(L, E, IWX_DDP_U_MSN_NO_BUF));
	cr_assert_eq(iwx_check_untagged(&q, 9, 0, 1, 100), R(L, E, IWX_DDP_U_MSN_RANGE));
	cr_assert_eq(iwx_check_untagged(&q, 4, 0, 1, 100), R(L, E, IWX_DDP_U_MSN_RANGE), "old MSN");
	cr_assert_eq(iwx_check_untagged(&q, 5, 101, 0, 100), R(L, E, IWX_DDP_U_INVALID_MO));
	cr_assert_eq(iwx_check_untagged(&q, 5, 60, 41, 100), R(L, E, IWX_DDP_U_TOO_LONG));
	q.posted = 0;
	cr_assert_eq(iwx_check_untagged(&q, 5, 0, 0, 0), R(L, E, IWX_DDP_U_MSN_NO_BUF));
	/* MSNs wrap: 0xffffffff then 0 */
	q.next_msn = 0xffffffff;
	q.posted = 2;
	cr_assert_eq(iwx_check_untagged(&q, 0, 0, 1, 10), IWX_CHECK_OK);
}
