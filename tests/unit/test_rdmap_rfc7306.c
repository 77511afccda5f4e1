// SPDX-License-Identifier: MIT
/*
 * RFC 7306's headers: the Atomic Request and Response (§5.2) and Immediate Data (§6), their
 * bytes, their hostile lengths and values, the operations' arithmetic (§5.1), and what a
 * stream without RFC 7306 makes of them.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include <iwx/access.h>
#include "proto/mpa_setup.h"
#include "proto/rdmap.h"

#include "testutil.h"

static struct iwx_ddp_seg untagged_seg(uint8_t opcode, const uint8_t *pay, uint32_t len)
{
	struct iwx_ddp_seg s = {
		.last = true, .opcode = opcode, .qn = iwx_rdmap_opcode_qn(opcode), .msn = 1,
		.payload = pay, .len = len, .hdr_len = 18, .ulpdu_len = 18 + len,
	};
	return s;
}

static void assert_cause(struct iwx_term_cause got, struct iwx_term_cause want)
{
	cr_assert(iwx_cause_eq(got, want), "cause %u/%u/0x%02x, want %u/%u/0x%02x", got.layer,
		  got.etype, got.ecode, want.layer, want.etype, want.ecode);
}

/* §5.2.1 Figure 4: a Compare-and-Swap, field by field. */
Test(rdmap_rfc7306, atomic_request_golden)
{
	struct iwx_atomic_req ar = {
		.aop = IWX_AOP_CMP_SWAP, .req_id = 0x0a0b0c0d, .stag = 0x11223344,
		.to = 0x0102030405060708ull, .add_swap = 0x2122232425262728ull,
		.add_swap_mask = ~0ull, .compare = 0x3132333435363738ull, .compare_mask = 0xff00ull,
	}, back;
	uint8_t got[IWX_RDMAP_ATOMIC_REQ_LEN], want[IWX_RDMAP_ATOMIC_REQ_LEN];
	struct iwx_ddp_seg s = untagged_seg(IWX_OP_ATOMIC_REQ, got, sizeof(got));
	struct iwx_term_cause c;

	cr_assert_eq(hex_decode("00000002 0a0b0c0d 11223344 0102030405060708 2122232425262728 "
				"ffffffffffffffff 3132333435363738 000000000000ff00", want, sizeof(want)),
		     IWX_RDMAP_ATOMIC_REQ_LEN);
	iwx_atomic_req_encode(got, &ar);
	cr_assert_arr_eq(got, want, sizeof(want));
	cr_assert_eq(iwx_atomic_req_decode(&s, &back, &c), 0);
	cr_assert(back.aop == ar.aop && back.req_id == ar.req_id && back.stag == ar.stag &&
		  back.to == ar.to && back.add_swap == ar.add_swap &&
		  back.add_swap_mask == ar.add_swap_mask && back.compare == ar.compare &&
		  back.compare_mask == ar.compare_mask);
	/* the word's 28 other bits are reserved: ignored on receipt */
	got[0] = 0xff, got[3] = 0xf0;
	cr_assert_eq(iwx_atomic_req_decode(&s, &back, &c), 0);
	cr_assert_eq(back.aop, IWX_AOP_FETCH_ADD);
}

Test(rdmap_rfc7306, atomic_request_errors)
{
	struct iwx_atomic_req ar = { .aop = IWX_AOP_FETCH_ADD, .to = 64 };
	uint8_t pay[IWX_RDMAP_ATOMIC_REQ_LEN + 8] = { 0 };
	struct iwx_ddp_seg s = untagged_seg(IWX_OP_ATOMIC_REQ, pay, IWX_RDMAP_ATOMIC_REQ_LEN);
	struct iwx_term_cause c;

	iwx_atomic_req_encode(pay, &ar);
	cr_assert_eq(iwx_atomic_req_decode(&s, &ar, &c), 0);
	s.len = IWX_RDMAP_ATOMIC_REQ_LEN + 1;	/* longer than queue 1's buffer */
	cr_assert_eq(iwx_atomic_req_decode(&s, &ar, &c), -EPROTO);
	assert_cause(c, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG));
	s.len = IWX_RDMAP_READ_REQ_LEN;	/* a Read Request's length */
	cr_assert_eq(iwx_atomic_req_decode(&s, &ar, &c), -EPROTO);
	assert_cause(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED));
	s.len = IWX_RDMAP_ATOMIC_REQ_LEN;
	s.last = false;
	cr_assert_eq(iwx_atomic_req_decode(&s, &ar, &c), -EPROTO);
	s.last = true;
	for (uint8_t aop = 0; aop < 16; aop++) {	/* §5.1: 0 and 2, nothing else */
		pay[3] = aop;
		int err = iwx_atomic_req_decode(&s, &ar, &c);

		if (aop == IWX_AOP_FETCH_ADD || aop == IWX_AOP_CMP_SWAP) {
			cr_assert_eq(err, 0, "AOpCode %u", aop);
			continue;
		}
		cr_assert_eq(err, -EPROTO, "AOpCode %u", aop);
		assert_cause(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE));
	}
	pay[3] = IWX_AOP_FETCH_ADD;
	for (int off = 1; off < 8; off++) {	/* §8.2: a target not 8-byte aligned */
		pay[19] = 64 + off;
		cr_assert_eq(iwx_atomic_req_decode(&s, &ar, &c), -EPROTO);
		assert_cause(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_CATASTROPHIC_STREAM));
	}
}

/* §5.1.1's Fetch-Add, bit by bit as the RFC describes it: a set mask bit ends a field. */
static uint64_t fetch_add_bitwise(uint64_t old, uint64_t add, uint64_t mask)
{
	uint64_t out = 0, carry = 0;

	for (int i = 0; i < 64; i++) {
		uint64_t a = old >> i & 1, b = add >> i & 1;

		out |= (a ^ b ^ carry) << i;
		carry = mask >> i & 1 ? 0 : (a & b) | (carry & (a ^ b));
	}
	return out;
}

Test(rdmap_rfc7306, fetch_add_fields_end_where_the_mask_says)
{
	struct iwx_atomic_req ar = { .aop = IWX_AOP_FETCH_ADD };
	uint64_t x = 0x9e3779b97f4a7c15ull;

	ar.add_swap = 1;
	cr_assert_eq(iwx_atomic_apply(&ar, ~0ull), 0, "one 64-bit add wraps");
	/* two 32-bit fields: the low one's carry does not reach the high one */
	ar.add_swap = 0x0000000100000001ull;
	ar.add_swap_mask = 0x8000000080000000ull;
	cr_assert_eq(iwx_atomic_apply(&ar, 0x00000005ffffffffull), 0x0000000600000000ull);
	for (int i = 0; i < 20000; i++) {	/* xorshift: the same vectors every run */
		uint64_t v[3];

		for (int k = 0; k < 3; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			v[k] = x;
		}
		ar.add_swap = v[1];
		ar.add_swap_mask = i % 4 ? v[2] : 0;
		cr_assert_eq(iwx_atomic_apply(&ar, v[0]), fetch_add_bitwise(v[0], v[1], ar.add_swap_mask),
			     "old %#lx add %#lx mask %#lx", v[0], v[1], ar.add_swap_mask);
	}
}

Test(rdmap_rfc7306, compare_and_swap_under_masks)
{
	struct iwx_atomic_req ar = { .aop = IWX_AOP_CMP_SWAP, .compare = 7, .compare_mask = ~0ull,
				     .add_swap = 42, .add_swap_mask = ~0ull };

	cr_assert_eq(iwx_atomic_apply(&ar, 7), 42, "equal: swapped");
	cr_assert_eq(iwx_atomic_apply(&ar, 8), 8, "not equal: kept");
	/* compare the low byte only, swap the high half only */
	ar.compare = 0x55;
	ar.compare_mask = 0xff;
	ar.add_swap = 0xaaaaaaaabbbbbbbbull;
	ar.add_swap_mask = 0xffffffff00000000ull;
	cr_assert_eq(iwx_atomic_apply(&ar, 0x1234567800000055ull), 0xaaaaaaaa00000055ull);
	cr_assert_eq(iwx_atomic_apply(&ar, 0x1234567800000056ull), 0x1234567800000056ull);
}

Test(rdmap_rfc7306, atomic_response_and_immediate_data)
{
	struct iwx_atomic_resp r = { .req_id = 0xdeadbeef, .orig = 0x0102030405060708ull }, back;
	uint8_t got[16] = { 0 }, want[IWX_RDMAP_ATOMIC_RESP_LEN];
	struct iwx_ddp_seg s = untagged_seg(IWX_OP_ATOMIC_RESP, got, IWX_RDMAP_ATOMIC_RESP_LEN);
	struct iwx_term_cause c;
	uint64_t imm;

	hex_decode("deadbeef 0102030405060708", want, sizeof(want));
	iwx_atomic_resp_encode(got, &r);
	cr_assert_arr_eq(got, want, sizeof(want));
	cr_assert_eq(iwx_atomic_resp_decode(&s, &back, &c), 0);
	cr_assert(back.req_id == r.req_id && back.orig == r.orig);
	s.len = 13;
	cr_assert_eq(iwx_atomic_resp_decode(&s, &back, &c), -EPROTO);
	assert_cause(c, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG));
	s.len = 11;
	cr_assert_eq(iwx_atomic_resp_decode(&s, &back, &c), -EPROTO);
	assert_cause(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED));

	/* §6.3: exactly 8 bytes, one segment; verbs' 4 bytes are the first */
	s = untagged_seg(IWX_OP_IMM, want + 4, IWX_RDMAP_IMM_LEN);
	cr_assert_eq(iwx_imm_decode(&s, &imm, &c), 0);
	cr_assert_eq(imm, 0x0102030405060708ull);
	cr_assert_eq((uint32_t)(imm >> 32), 0x01020304);
	s.len = 7;
	cr_assert_eq(iwx_imm_decode(&s, &imm, &c), -EPROTO);
	assert_cause(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED));
	s.len = 9;
	cr_assert_eq(iwx_imm_decode(&s, &imm, &c), -EPROTO);
	assert_cause(c, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG));
	s.len = 8;
	s.mo = 8;
	cr_assert_eq(iwx_imm_decode(&s, &imm, &c), -EPROTO);
}

/* On a stream without RFC 7306 its messages get what RFC 5040 alone gives them. */
Test(rdmap_rfc7306, a_stream_without_it_refuses_its_messages)
{
	struct iwx_ddp_seg s = untagged_seg(IWX_OP_SEND, NULL, 0);
	struct iwx_term_cause c;

	cr_assert_eq(iwx_rdmap_check_rfc5040(&s, &c), 0);
	for (uint8_t op = IWX_OP_IMM; op <= IWX_OP_ATOMIC_REQ; op++) {
		s = untagged_seg(op, NULL, 0);
		cr_assert_eq(iwx_rdmap_check_rfc5040(&s, &c), -EPROTO, "opcode %u", op);
		assert_cause(c, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE));
	}
	s = untagged_seg(IWX_OP_ATOMIC_RESP, NULL, 0);	/* queue 3 first, as the decoder checks */
	cr_assert_eq(iwx_rdmap_check_rfc5040(&s, &c), -EPROTO);
	assert_cause(c, IWX_CAUSE_DDP_U(IWX_DDP_U_INVALID_QN));
}

/* iwx's offer (wire.h: MPA flags bit 0x01) is used only when both sides set it. */
Test(rdmap_rfc7306, agreed_only_when_offered_and_accepted)
{
	const struct iwx_mpa_local base = { .rev = 2, .crc = true, .ird = 4, .ord = 4 };
	static const struct { bool offer, accept, want; } t[] = {
		{ true, true, true }, { true, false, false }, { false, true, false }, { false, false, false },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct iwx_mpa_local init = base, resp = base;
		struct iwx_mpa_rr_params req, req_rx, rep, rep_rx;
		struct iwx_mpa_agreed ai, ar;
		struct iwx_term_cause c;
		uint8_t f[64];

		init.rdmap_ext = t[i].offer;
		resp.rdmap_ext = t[i].accept;
		iwx_mpa_setup_request(&init, NULL, 0, &req);
		cr_assert_gt(iwx_mpa_rr_encode(f, sizeof(f), &req), 0);
		cr_assert_eq(f[16], 0x50 | (t[i].offer ? IWX_MPA_FLAG_RDMAP_EXT : 0), "flags %#x", f[16]);
		cr_assert_gt(iwx_mpa_rr_decode(f, sizeof(f), false, &req_rx), 0);
		cr_assert_eq(iwx_mpa_setup_reply(&resp, &req_rx, NULL, 0, false, &rep, &ar, &c), 0);
		cr_assert_gt(iwx_mpa_rr_encode(f, sizeof(f), &rep), 0);
		cr_assert_eq(iwx_mpa_rr_decode(f, sizeof(f), true, &rep_rx) > 0, true);
		cr_assert_eq(iwx_mpa_setup_accept(&init, &req, &rep_rx, &ai, &c), 0);
		cr_assert_eq(ai.rdmap_ext, t[i].want, "row %zu", i);
		cr_assert_eq(ar.rdmap_ext, t[i].want, "row %zu", i);
	}
}

/* A Reply that sets the bit to a Request that did not offer it does not turn RFC 7306 on. */
Test(rdmap_rfc7306, an_unasked_acceptance_is_ignored)
{
	const struct iwx_mpa_local l = { .rev = 2, .crc = true, .ird = 4, .ord = 4, .rdmap_ext = true };
	struct iwx_mpa_rr_params req = { .rev = 2, .crc = true, .enhanced = true, .ird = 4, .ord = 4 };
	struct iwx_mpa_rr_params rep = req;
	struct iwx_mpa_agreed a;
	struct iwx_term_cause c;

	rep.reply = true;
	rep.rdmap_ext = true;
	cr_assert_eq(iwx_mpa_setup_accept(&l, &req, &rep, &a, &c), 0);
	cr_assert_not(a.rdmap_ext);
}

/* The right to be an atomic's target comes with local write only, as ibverbs has it. */
Test(rdmap_rfc7306, remote_atomic_needs_local_write)
{
	cr_assert_not(iwx_access_valid(IWX_ACCESS_REMOTE_ATOMIC));
	cr_assert(iwx_access_valid(IWX_ACCESS_REMOTE_ATOMIC | IWX_ACCESS_LOCAL_WRITE));
	cr_assert_not(iwx_access_valid(0x10));
}
