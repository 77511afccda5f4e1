// SPDX-License-Identifier: MIT
/*
 * RFC 7306 between two engine queue pairs: atomics change the peer's memory and return what
 * it held, in order with Reads; a Write with Immediate takes a receive and completes it with
 * its 4 bytes; every hostile Atomic Request, Response or Immediate Data gets its Terminate;
 * and a stream that did not agree to RFC 7306 refuses it as RFC 5040 alone would.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "qp.h"
#include "qp_sockpair.h"
#include "stall.h"
#include "testutil.h"

#define WORD	4096	/* the offset in B's buffer of the word the atomics work on */

static struct iwx_mpa_agreed with_rfc7306(uint16_t ird, uint16_t ord)
{
	struct iwx_mpa_agreed a = agreed(ird, ord);

	a.rdmap_ext = true;
	return a;
}

static void setup(void)
{
	pair(with_rfc7306(4, 4), with_rfc7306(4, 4));
}

TestSuite(qp_rfc7306, .init = setup, .fini = qp_sockpair_teardown, .timeout = HANG_S);

/* B's word, open to atomics through the STag returned. */
static uint32_t atomic_target(uint64_t value)
{
	memcpy(B.buf + WORD, &value, sizeof(value));
	return reg(&B, B.buf, 2 * WORD, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_ATOMIC);
}

static uint64_t b_word(void)
{
	uint64_t v;

	memcpy(&v, B.buf + WORD, sizeof(v));
	return v;
}

/* What an atomic from A returned into its buffer at off. */
static uint64_t a_result(uint64_t off)
{
	uint64_t v;

	memcpy(&v, A.buf + off, sizeof(v));
	return v;
}

static int post_atomic(uint64_t wr_id, uint8_t op, uint64_t off, uint32_t rkey, uint64_t raddr,
		       uint64_t compare_add, uint64_t swap)
{
	struct iwx_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.atomic = { .result = sge(&A, off, IWX_ATOMIC_LEN), .compare_add = compare_add,
			    .swap = swap },
		.rkey = rkey, .remote_addr = raddr,
	};

	return engine_qp_post_send(A.qp, &wr);
}

static void post_write_imm(uint64_t wr_id, uint8_t op, uint32_t len, uint32_t imm)
{
	struct iwx_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { sge(&A, 0, len) }, .rkey = B.stag, .remote_addr = (uintptr_t)B.buf + 64,
		.imm_data = imm,
	};

	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
}

Test(qp_rfc7306, fetch_add_and_compare_and_swap)
{
	uint32_t t = atomic_target(10);
	uint64_t at = (uintptr_t)B.buf + WORD;

	cr_assert_eq(post_atomic(1, IWX_WR_FETCH_ADD, 0, t, at, 5, 0), 0);
	cr_assert_eq(post_atomic(2, IWX_WR_CMP_SWAP, 8, t, at, 15, 99), 0);
	cr_assert_eq(post_atomic(3, IWX_WR_CMP_SWAP, 16, t, at, 1, 7), 0);
	pump();
	assert_wc(one_wc(&A), 1, IWX_WC_FETCH_ADD, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 2, IWX_WC_CMP_SWAP, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 3, IWX_WC_CMP_SWAP, IWX_WC_SUCCESS);
	cr_assert_eq(a_result(0), 10, "Fetch-Add returns the old value");
	cr_assert_eq(a_result(8), 15, "equal: swapped, the old value returned");
	cr_assert_eq(a_result(16), 99, "not equal: kept, the value returned");
	cr_assert_eq(b_word(), 99);
	no_wc(&B);	/* the Responder's application sees nothing */
	cr_assert_eq(engine_qp_get_state(A.qp), ENGINE_QP_RTS);
	cr_assert_eq(engine_qp_get_state(B.qp), ENGINE_QP_RTS);
}

/* Twenty atomics, ORD 4: each waits its turn, each sees the one before it (RFC 7306 §7). */
Test(qp_rfc7306, more_atomics_than_ord_run_in_order)
{
	uint32_t t = atomic_target(0);

	for (int i = 0; i < 20; i++)
		cr_assert_eq(post_atomic(i, IWX_WR_FETCH_ADD, 8 * i, t, (uintptr_t)B.buf + WORD, 1, 0), 0);
	pump();
	for (int i = 0; i < 20; i++) {
		assert_wc(one_wc(&A), i, IWX_WC_FETCH_ADD, IWX_WC_SUCCESS);
		cr_assert_eq(a_result(8 * i), (uint64_t)i);
	}
	cr_assert_eq(b_word(), 20);
}

/* Read, atomic, Read of one word: the Responses go in the Requests' order (RFC 7306 §7). */
Test(qp_rfc7306, reads_and_atomics_answer_in_order)
{
	uint32_t t = atomic_target(41);
	uint64_t at = (uintptr_t)B.buf + WORD;

	post(&A, 1, IWX_WR_READ, 100, 8, B.stag, at);
	cr_assert_eq(post_atomic(2, IWX_WR_FETCH_ADD, 0, t, at, 1, 0), 0);
	post(&A, 3, IWX_WR_READ, 200, 8, B.stag, at);
	pump();
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 2, IWX_WC_FETCH_ADD, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 3, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
	cr_assert_eq(a_result(100), 41);
	cr_assert_eq(a_result(0), 41);
	cr_assert_eq(a_result(200), 42);
}

Test(qp_rfc7306, write_with_immediate_takes_a_receive)
{
	struct iwx_wc wc;

	fill_pattern(A.buf, 4096, 5);
	post_recv(&B, 7, 0, 0);	/* a receive with no buffer: the 4 bytes come in the completion */
	post_recv(&B, 8, 0, 0);
	post_write_imm(1, IWX_WR_WRITE_IMM, 4096, 0xdeadbeef);
	post_write_imm(2, IWX_WR_WRITE_IMM_SE, 0, 0x01020304);
	pump();
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 2, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	wc = one_wc(&B);
	assert_wc(wc, 7, IWX_WC_RECV_IMM, IWX_WC_SUCCESS);
	cr_assert_eq(wc.imm_data, 0xdeadbeef);
	cr_assert_eq(wc.byte_len, 0);
	cr_assert_not(wc.solicited);
	cr_assert_arr_eq(B.buf + 64, A.buf, 4096, "the Write landed before its completion");
	wc = one_wc(&B);
	assert_wc(wc, 8, IWX_WC_RECV_IMM, IWX_WC_SUCCESS);
	cr_assert_eq(wc.imm_data, 0x01020304);
	cr_assert(wc.solicited);
}

Test(qp_rfc7306, write_with_immediate_and_no_receive)
{
	post_write_imm(1, IWX_WR_WRITE_IMM, 16, 1);
	pump();
	assert_error(&B, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), true);
	assert_error(&A, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), false);
}

/* A target without the right: B's Terminate names the Request, A's atomic fails with it. */
Test(qp_rfc7306, atomic_without_the_right_is_a_remote_access_error)
{
	uint64_t at = (uintptr_t)B.buf + WORD;

	cr_assert_eq(post_atomic(1, IWX_WR_FETCH_ADD, 0, B.stag, at, 1, 0), 0);	/* no atomic right */
	pump();
	assert_error(&B, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS), true);
	assert_error(&A, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS), false);
	assert_wc(one_wc(&A), 1, IWX_WC_FETCH_ADD, IWX_WC_REM_ACCESS_ERR);
	cr_assert_eq(b_word(), 0, "nothing changed");
}

Test(qp_rfc7306, malformed_atomics_are_refused_locally)
{
	uint32_t t = atomic_target(0);

	cr_assert_eq(post_atomic(1, IWX_WR_FETCH_ADD, 0, t, (uintptr_t)B.buf + WORD + 4, 1, 0), -EINVAL,
		     "a target not 8-byte aligned");
	struct iwx_send_wr wr = { .opcode = IWX_WR_CMP_SWAP, .num_sge = 1,
				  .atomic = { .result = sge(&A, 0, 4) }, .rkey = t };

	cr_assert_eq(engine_qp_post_send(A.qp, &wr), -EINVAL, "a result of 4 bytes");
	wr.atomic.result.len = 8;
	wr.num_sge = 2;
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), -EINVAL, "two sges");
}

/* ----------------------------------------------------- hostile frames */

/* An untagged ULPDU on qn with opcode, MSN 1, and its payload. */
static size_t untagged(uint8_t *u, uint8_t opcode, uint32_t qn, const void *pay, size_t len)
{
	memset(u, 0, 18);
	u[0] = 0x41, u[1] = 0x40 | opcode, u[9] = qn, u[13] = 1;
	memcpy(u + 18, pay, len);
	return 18 + len;
}

static void assert_terminated(const uint8_t *u, size_t n, struct iwx_term_cause want)
{
	struct iwx_term t;

	raw_exchange(u, n, &t);
	cr_assert(iwx_cause_eq(t.cause, want), "cause %u/%u/0x%02x, want %u/%u/0x%02x", t.cause.layer,
		  t.cause.etype, t.cause.ecode, want.layer, want.etype, want.ecode);
	cr_assert(t.has_ddp_hdr && !t.has_rdma_hdr, "the DDP header copied (RFC 7306 §8.1)");
	cr_assert_arr_eq(t.ddp_hdr, u, 18);
	assert_error(&B, want, true);
}

static size_t atomic_req(uint8_t *u, uint8_t aop, uint32_t stag, uint64_t to)
{
	struct iwx_atomic_req ar = { .aop = aop, .req_id = 1, .stag = stag, .to = to,
				     .compare_mask = ~0ull };
	uint8_t pay[IWX_RDMAP_ATOMIC_REQ_LEN];

	iwx_atomic_req_encode(pay, &ar);
	return untagged(u, IWX_OP_ATOMIC_REQ, IWX_QN_READ_REQ, pay, sizeof(pay));
}

Test(qp_rfc7306, a_misaligned_target_is_a_catastrophic_stream_error)
{
	uint8_t u[128];

	assert_terminated(u, atomic_req(u, IWX_AOP_FETCH_ADD, atomic_target(3), (uintptr_t)B.buf + WORD + 2),
			  IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_CATASTROPHIC_STREAM));
	cr_assert_eq(b_word(), 3);
}

Test(qp_rfc7306, an_unknown_atomic_operation)
{
	uint8_t u[128];

	assert_terminated(u, atomic_req(u, 1, atomic_target(3), (uintptr_t)B.buf + WORD),
			  IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE));
	cr_assert_eq(b_word(), 3);
}

Test(qp_rfc7306, a_target_out_of_bounds)
{
	uint8_t u[128];

	assert_terminated(u, atomic_req(u, IWX_AOP_FETCH_ADD, atomic_target(3), (uintptr_t)B.buf + 2 * WORD),
			  IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS));
}

Test(qp_rfc7306, a_response_nobody_asked_for)
{
	uint8_t u[64], pay[IWX_RDMAP_ATOMIC_RESP_LEN] = { 0 };

	assert_terminated(u, untagged(u, IWX_OP_ATOMIC_RESP, IWX_QN_ATOMIC_RESP, pay, sizeof(pay)),
			  IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF));
}

Test(qp_rfc7306, immediate_data_of_the_wrong_length)
{
	uint8_t u[64], pay[9] = { 0 };

	post_recv(&B, 1, 0, 64);
	assert_terminated(u, untagged(u, IWX_OP_IMM, IWX_QN_SEND, pay, sizeof(pay)),
			  IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG));
}

/* ------------------------------------------ a stream without RFC 7306 */

static void without_rfc7306(void)
{
	qp_sockpair_teardown();
	pair(agreed(4, 4), agreed(4, 4));
}

Test(qp_rfc7306, not_agreed_its_requests_fail_locally)
{
	uint32_t t;

	without_rfc7306();
	t = atomic_target(0);
	cr_assert_eq(post_atomic(1, IWX_WR_FETCH_ADD, 0, t, (uintptr_t)B.buf + WORD, 1, 0), -EOPNOTSUPP);
	struct iwx_send_wr wr = { .opcode = IWX_WR_WRITE_IMM, .num_sge = 1, .sge = { sge(&A, 0, 8) },
				  .rkey = B.stag, .remote_addr = (uintptr_t)B.buf };

	cr_assert_eq(engine_qp_post_send(A.qp, &wr), -EOPNOTSUPP);
	cr_assert_eq(engine_qp_get_state(A.qp), ENGINE_QP_RTS);
}

Test(qp_rfc7306, not_agreed_its_messages_are_refused_as_rfc5040_would)
{
	uint8_t u[128], imm[8] = { 0 };

	without_rfc7306();
	post_recv(&B, 1, 0, 64);
	assert_terminated(u, untagged(u, IWX_OP_IMM, IWX_QN_SEND, imm, sizeof(imm)),
			  IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE));
}

Test(qp_rfc7306, not_agreed_queue_3_does_not_exist)
{
	uint8_t u[64], pay[IWX_RDMAP_ATOMIC_RESP_LEN] = { 0 };

	without_rfc7306();
	assert_terminated(u, untagged(u, IWX_OP_ATOMIC_RESP, IWX_QN_ATOMIC_RESP, pay, sizeof(pay)),
			  IWX_CAUSE_DDP_U(IWX_DDP_U_INVALID_QN));
}
