// SPDX-License-Identifier: MIT
/* RDMAP opcodes, Read Request header and the Terminate message (RFC 5040 §4.4, §4.8, §7.1). */
#include <criterion/criterion.h>
#include <errno.h>

#include "proto/rdmap.h"

#include "testutil.h"

Test(rdmap, opcode_table)
{
	static const struct { uint8_t op; bool tagged; uint32_t qn; const char *name; } t[] = {
		{ IWX_OP_WRITE, true, 0, "RDMA Write" },
		{ IWX_OP_READ_REQ, false, 1, "RDMA Read Request" },
		{ IWX_OP_READ_RESP, true, 0, "RDMA Read Response" },
		{ IWX_OP_SEND, false, 0, "Send" },
		{ IWX_OP_SEND_INV, false, 0, "Send with Invalidate" },
		{ IWX_OP_SEND_SE, false, 0, "Send with SE" },
		{ IWX_OP_SEND_SE_INV, false, 0, "Send with SE and Invalidate" },
		{ IWX_OP_TERMINATE, false, 2, "Terminate" },
		/* RFC 7306 §4.1 */
		{ IWX_OP_IMM, false, 0, "Immediate Data" },
		{ IWX_OP_IMM_SE, false, 0, "Immediate Data with SE" },
		{ IWX_OP_ATOMIC_REQ, false, 1, "Atomic Request" },
		{ IWX_OP_ATOMIC_RESP, false, 3, "Atomic Response" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cr_assert_eq(iwx_rdmap_opcode_tagged(t[i].op), t[i].tagged);
		if (!t[i].tagged)
			cr_assert_eq(iwx_rdmap_opcode_qn(t[i].op), t[i].qn);
		cr_assert_str_eq(iwx_rdmap_opcode_name(t[i].op), t[i].name);
		cr_assert_eq(iwx_rdmap_ctrl(t[i].op), 0x40 | t[i].op);
	}
	cr_assert_str_eq(iwx_rdmap_opcode_name(12), "reserved");
	cr_assert(iwx_rdmap_opcode_solicited(IWX_OP_IMM_SE) && !iwx_rdmap_opcode_solicited(IWX_OP_IMM));
	cr_assert(iwx_rdmap_opcode_has_inval(IWX_OP_SEND_INV) && iwx_rdmap_opcode_has_inval(IWX_OP_SEND_SE_INV));
	cr_assert(!iwx_rdmap_opcode_has_inval(IWX_OP_SEND));
	cr_assert(iwx_rdmap_opcode_solicited(IWX_OP_SEND_SE) && !iwx_rdmap_opcode_solicited(IWX_OP_SEND_INV));
}

Test(rdmap, read_request_golden)
{
	struct iwx_read_req rr = {
		.sink_stag = 0x11223344, .sink_to = 0x0102030405060708ull, .size = 0xa0b0c0d0,
		.src_stag = 0x55667788, .src_to = 0x1112131415161718ull,
	};
	uint8_t got[28], want[28];

	hex_decode("11223344 0102030405060708 a0b0c0d0 55667788 1112131415161718", want, 28);
	iwx_read_req_encode(got, &rr);
	cr_assert_arr_eq(got, want, 28);
}

static struct iwx_ddp_seg untagged_seg(uint8_t opcode, const uint8_t *pay, uint32_t len)
{
	struct iwx_ddp_seg s = {
		.last = true, .opcode = opcode, .qn = iwx_rdmap_opcode_qn(opcode), .msn = 1,
		.payload = pay, .len = len, .hdr_len = 18, .ulpdu_len = 18 + len,
	};
	return s;
}

Test(rdmap, read_request_must_be_one_whole_28_byte_message)
{
	uint8_t pay[40] = { 0 };
	struct iwx_read_req rr;
	struct iwx_term_cause c;
	struct iwx_ddp_seg s = untagged_seg(IWX_OP_READ_REQ, pay, 28);

	cr_assert_eq(iwx_read_req_decode(&s, &rr, &c), 0);
	s.len = 29;
	cr_assert_eq(iwx_read_req_decode(&s, &rr, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG)));
	s.len = 27;
	cr_assert_eq(iwx_read_req_decode(&s, &rr, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED)));
	s.len = 28;
	s.last = false;
	cr_assert_eq(iwx_read_req_decode(&s, &rr, &c), -EPROTO);
}

/* RFC 5040 Figure 10 decides which headers a Terminate copies. */
Test(rdmap, terminate_headers_follow_figure_10)
{
	uint8_t f[64], out[IWX_TERM_MAX_LEN];
	size_t n = hex_decode(siw_server_fpdus[0], f, sizeof(f));
	struct iwx_ddp_seg seg;
	struct iwx_term_cause c;
	struct iwx_read_req rr;
	struct iwx_term t, d;

	cr_assert_eq(iwx_ddp_decode(f + 2, n - 6, &seg, &c), 0);
	cr_assert_eq(iwx_read_req_decode(&seg, &rr, &c), 0);

	/* remote protection error on a Read Request: everything, R included */
	iwx_term_init(&t, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS), &seg, &rr);
	cr_assert(t.has_seg_len && t.has_ddp_hdr && t.has_rdma_hdr);
	cr_assert_eq(iwx_term_encode(out, &t), 4 + 2 + 18 + 28);
	cr_assert_eq(out[0], 0x01);	/* layer RDMAP, etype remote protection */
	cr_assert_eq(out[1], 0x01);
	cr_assert_eq(out[2], 0xe0);
	cr_assert_eq(out[3], 0);
	cr_assert_eq(out[4] << 8 | out[5], 46);
	cr_assert_arr_eq(out + 6, f + 2, 18);
	cr_assert_arr_eq(out + 24, f + 2 + 18, 28);

	/* a DDP error: segment length and DDP header, no RDMA header */
	iwx_term_init(&t, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), &seg, &rr);
	cr_assert(t.has_seg_len && t.has_ddp_hdr && !t.has_rdma_hdr);
	cr_assert_eq(iwx_term_encode(out, &t), 24);
	cr_assert_eq(out[0], 0x12);
	cr_assert_eq(out[1], 0x02);
	cr_assert_eq(out[2], 0xc0);

	/* LLP errors and catastrophic errors copy nothing */
	iwx_term_init(&t, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), &seg, NULL);
	cr_assert(!t.has_seg_len && !t.has_ddp_hdr && !t.has_rdma_hdr);
	cr_assert_eq(iwx_term_encode(out, &t), 4);
	cr_assert_eq(out[0], 0x20);
	cr_assert_eq(out[1], 0x02);
	iwx_term_init(&t, iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_CATASTROPHIC, 0), &seg, NULL);
	cr_assert_eq(iwx_term_encode(out, &t), 4);

	/* round trip through decode */
	iwx_term_init(&t, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS), &seg, &rr);
	n = iwx_term_encode(out, &t);
	struct iwx_ddp_seg ts = untagged_seg(IWX_OP_TERMINATE, out, n);

	cr_assert_eq(iwx_term_decode(&ts, &d, &c), 0);
	cr_assert(iwx_cause_eq(d.cause, t.cause));
	cr_assert(d.has_seg_len && d.has_ddp_hdr && d.has_rdma_hdr);
	cr_assert_eq(d.seg_len, 46);
	cr_assert_eq(d.ddp_hdr_len, 18);
	cr_assert_arr_eq(d.ddp_hdr, t.ddp_hdr, 18);
	cr_assert_arr_eq(d.rdma_hdr, t.rdma_hdr, 28);
}

Test(rdmap, terminate_tagged_copy_is_14_bytes)
{
	uint8_t f[128], out[IWX_TERM_MAX_LEN];
	size_t n = hex_decode(siw_server_fpdus[2], f, sizeof(f));
	struct iwx_ddp_seg seg, ts;
	struct iwx_term_cause c;
	struct iwx_term t, d;

	cr_assert_eq(iwx_ddp_decode(f + 2, n - 6, &seg, &c), 0);
	iwx_term_init(&t, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG), &seg, NULL);
	n = iwx_term_encode(out, &t);
	cr_assert_eq(n, 4 + 2 + 14);
	ts = untagged_seg(IWX_OP_TERMINATE, out, n);
	cr_assert_eq(iwx_term_decode(&ts, &d, &c), 0);
	cr_assert_eq(d.ddp_hdr_len, 14);
	cr_assert_eq(d.seg_len, 78);
	cr_assert(iwx_cause_eq(d.cause, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG)));
}

Test(rdmap, terminate_decode_errors)
{
	uint8_t pay[64] = { 0x12, 0x02, 0xc0, 0x00, 0x00, 0x18, 0x41 };
	struct iwx_ddp_seg s = untagged_seg(IWX_OP_TERMINATE, pay, 10);
	struct iwx_term_cause c;
	struct iwx_term t;

	/* D set but the copied header is cut short */
	cr_assert_eq(iwx_term_decode(&s, &t, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED)));
	s.len = 3;
	cr_assert_eq(iwx_term_decode(&s, &t, &c), -EPROTO);
	s.len = IWX_TERM_MAX_LEN + 1;
	cr_assert_eq(iwx_term_decode(&s, &t, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG)));
	s.len = 24;
	cr_assert_eq(iwx_term_decode(&s, &t, &c), 0);
}

Test(term, names)
{
	cr_assert_str_eq(iwx_term_layer_name(IWX_LAYER_DDP), "DDP");
	cr_assert_str_eq(iwx_term_etype_name(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED), "untagged buffer error");
	cr_assert_str_eq(iwx_term_ecode_name(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_MSN_NO_BUF),
			 "invalid MSN, no buffer available");
	cr_assert_str_eq(iwx_term_ecode_name(IWX_LAYER_LLP, IWX_MPA_ETYPE, IWX_MPA_EC_CRC), "MPA CRC error");
	cr_assert_str_eq(iwx_term_ecode_name(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, 0xff), "unspecified error");
	cr_assert_str_eq(iwx_term_ecode_name(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, 0x42), "unknown");
	cr_assert_str_eq(iwx_term_layer_name(9), "unknown");
}

Test(rdmap, message_offset_near_2_32_is_too_long_not_wrapped)
{
	uint8_t pay[32] = { 0 };
	struct iwx_read_req rr;
	struct iwx_term_cause c;
	struct iwx_ddp_seg s = untagged_seg(IWX_OP_READ_REQ, pay, 32);

	s.mo = 0xfffffff0;
	cr_assert_eq(iwx_read_req_decode(&s, &rr, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG)));
}
