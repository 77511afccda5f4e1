// SPDX-License-Identifier: MIT
/*
 * The software queue pair, two of them joined by a stream socket pair: every RDMAP
 * operation moves the right bytes, and every remote error class yields its
 * Terminate and the right completion status on both sides (RFC 5040 §5, §7).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>	/* MIN */
#include <sys/socket.h>
#include <unistd.h>

#include "proto/crc32c.h"
#include "proto/mpa_rx.h"

#include "bufpool.h"
#include "mem.h"
#include "llp_tcp.h"
#include "qp.h"
#include "qp_sockpair.h"
#include "stall.h"
#include "testutil.h"

TestSuite(qp, .init = qp_sockpair_setup, .fini = qp_sockpair_teardown, .timeout = HANG_S);

Test(qp, send_with_gather_and_scatter)
{
	struct iwx_send_wr wr = { .wr_id = 7, .opcode = IWX_WR_SEND_SE, .flags = IWX_WR_SIGNALED,
				  .num_sge = 3, .sge = { sge(&A, 0, 1000), sge(&A, 5000, 3000),
							 sge(&A, 9000, 1) } };
	struct iwx_recv_wr rwr = { .wr_id = 9, .num_sge = 2,
				   .sge = { sge(&B, 100, 2500), sge(&B, 10000, 5000) } };
	struct iwx_wc wc;

	fill_pattern(A.buf, 10000, 1);
	cr_assert_eq(engine_qp_post_recv(B.qp, &rwr), 0);
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
	pump();
	assert_wc(one_wc(&A), 7, IWX_WC_SEND, IWX_WC_SUCCESS);
	wc = one_wc(&B);
	assert_wc(wc, 9, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 4001);
	cr_assert(wc.solicited && !wc.with_inv);
	cr_assert_arr_eq(B.buf + 100, A.buf, 1000);
	cr_assert_arr_eq(B.buf + 1100, A.buf + 5000, 1500);
	cr_assert_arr_eq(B.buf + 10000, A.buf + 6500, 1500);
	cr_assert_eq(B.buf[11500], A.buf[9000]);
	no_wc(&A);
	no_wc(&B);
}

/* engine_qp_transmit sends what was posted and leaves what the socket holds unread. */
Test(qp, transmit_sends_without_reading)
{
	char peek;

	fill_pattern(A.buf, 64, 2);
	fill_pattern(B.buf + 4096, 64, 3);
	post_recv(&A, 1, 1024, 64);
	post_recv(&B, 2, 0, 64);
	post(&B, 3, IWX_WR_SEND, 4096, 64, 0, 0);
	cr_assert_eq(engine_qp_transmit(B.qp, NULL), 0);	/* B's Send waits in A's socket */
	post(&A, 4, IWX_WR_SEND, 0, 64, 0, 0);
	cr_assert_eq(engine_qp_transmit(A.qp, NULL), 0);
	cr_assert_eq(recv(A.fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT), 1, "B's Send still unread");
	cr_assert_eq(recv(B.fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT), 1, "A's Send went out");
	assert_wc(one_wc(&A), 4, IWX_WC_SEND, IWX_WC_SUCCESS);
	no_wc(&A);	/* and took nothing in */
	pump();
	assert_wc(one_wc(&B), 3, IWX_WC_SEND, IWX_WC_SUCCESS);
	assert_wc(one_wc(&B), 2, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B.buf, A.buf, 64);
	assert_wc(one_wc(&A), 1, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_arr_eq(A.buf + 1024, B.buf + 4096, 64);
}

Test(qp, write_then_send_sees_the_data)
{
	const uint32_t len = 3u << 20;

	fill_pattern(A.buf, len, 2);
	post_recv(&B, 1, BUF_LEN - 64, 64);
	post(&A, 10, IWX_WR_WRITE, 0, len, B.stag, (uintptr_t)B.buf + 17);
	post(&A, 11, IWX_WR_SEND, len, 8, 0, 0);
	pump();
	assert_wc(one_wc(&A), 10, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 11, IWX_WC_SEND, IWX_WC_SUCCESS);
	assert_wc(one_wc(&B), 1, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B.buf + 17, A.buf, len);

	struct iwx_qp_stats st;

	engine_qp_stats(B.qp, &st);
	cr_assert_gt(st.placed_segments, len / 1448, "Write payload placed straight into memory");
	engine_qp_stats(A.qp, &st);
	/* MULPDU for EMSS 1448 is 1442: 1428 bytes of Write payload per FPDU, then the Send */
	cr_assert_eq(st.tx_fpdus, (len + 1427) / 1428 + 1, "FPDUs sized to the EMSS");
	cr_assert_eq(st.tx_fpdus_aligned, st.tx_fpdus);
}

/*
 * A Write gathered from three pieces, far more than a batch: a batch TCP took only part
 * of stays with its queue pair across turns, every byte arrives in order, and queue pairs
 * gone idle hold no borrowed buffer (bufpool.h).
 */
Test(qp, buffers_are_held_while_busy_and_given_back_when_idle)
{
	const uint32_t len = 3u << 20;
	struct iwx_send_wr wr = {
		.wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 3,
		.sge = { sge(&A, 0, 1001), sge(&A, 1001, len - 2002), sge(&A, len - 1001, 1001) },
		.rkey = B.stag, .remote_addr = (uintptr_t)B.buf + 5,
	};

	fill_pattern(A.buf, len, 9);
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
	for (int i = 0; i < 100; i++)
		engine_qp_progress(A.qp, NULL);	/* until the socket is full: B reads nothing */
	cr_assert_eq(iwx_bufpool_lent(), 2, "the batch being sent, its bytes and its plan, alone");
	pump();
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B.buf + 5, A.buf, len);
	cr_assert_eq(iwx_bufpool_lent(), 0, "idle queue pairs hold no buffer");
}

Test(qp, reads_complete_in_order_beyond_ord)
{
	fill_pattern(B.buf, 1 << 20, 3);
	for (int i = 0; i < 10; i++)
		post(&A, 100 + i, IWX_WR_READ, (uint64_t)i << 17, 100000 + i, B.stag,
		     (uintptr_t)B.buf + ((uint64_t)i << 16));
	pump();
	for (int i = 0; i < 10; i++) {
		struct iwx_wc wc = one_wc(&A);

		assert_wc(wc, 100 + i, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
		cr_assert_eq(wc.byte_len, 100000u + i);
		cr_assert_arr_eq(A.buf + ((uint64_t)i << 17), B.buf + ((uint64_t)i << 16), 100000 + i);
	}
	no_wc(&B);
}

Test(qp, zero_length_operations)
{
	post_recv(&B, 1, 0, 0);
	post(&A, 1, IWX_WR_WRITE, 0, 0, 0xdead00, 0);	/* RFC 5041 §5.2: not checked */
	post(&A, 2, IWX_WR_READ, 0, 0, 0xbeef00, 0);	/* RFC 5040 §5.2.1: not validated */
	post(&A, 3, IWX_WR_SEND, 0, 0, 0, 0);
	pump();
	/* send-queue completions come in posting order, the Read's included */
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 2, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 3, IWX_WC_SEND, IWX_WC_SUCCESS);
	assert_wc(one_wc(&B), 1, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_eq(engine_qp_get_state(A.qp), ENGINE_QP_RTS);
}

Test(qp, fence_waits_for_reads)
{
	struct iwx_send_wr wr = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED | IWX_WR_FENCE,
				  .num_sge = 1, .sge = { sge(&A, 0, 16) } };

	post_recv(&B, 1, 0, 16);
	post(&A, 1, IWX_WR_READ, 0, 16, B.stag, (uintptr_t)B.buf + 4096);
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
	pump();
	/* the Send left only after the Read's Response came back */
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 2, IWX_WC_SEND, IWX_WC_SUCCESS);
}

Test(qp, send_with_invalidate)
{
	uint32_t victim = reg(&B, B.buf, 4096, IWX_ACCESS_REMOTE_WRITE);
	struct iwx_send_wr wr = { .wr_id = 5, .opcode = IWX_WR_SEND_INV, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1, .sge = { sge(&A, 0, 4) }, .inval_stag = victim };
	struct iwx_wc wc;

	post_recv(&B, 1, 0, 16);
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
	pump();
	wc = one_wc(&B);
	assert_wc(wc, 1, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert(wc.with_inv);
	cr_assert_eq(wc.invalidated_stag, victim);
	cr_assert_not(iwx_mem_lookup(B.mem, victim)->desc.valid);

	/* a Write through the invalidated STag is now an invalid STag */
	post(&A, 6, IWX_WR_WRITE, 0, 4, victim, (uintptr_t)B.buf);
	pump();
	assert_error(&B, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG), true);
	assert_error(&A, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG), false);
}

/* One bad RDMA Write: the target terminates with cause, the source learns it. */
static void bad_write(uint32_t stag, uint64_t raddr, uint32_t len, struct iwx_term_cause want)
{
	post_recv(&B, 1, 0, 16);
	post(&A, 1, IWX_WR_WRITE, 0, len, stag, raddr);
	post(&A, 2, IWX_WR_SEND, 0, 16, 0, 0);
	pump();
	assert_error(&B, want, true);
	assert_error(&A, want, false);
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);	/* the LLP took it */
	/* the Send after it never arrives: flushed at B, maybe sent or flushed at A */
	assert_wc(one_wc(&B), 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
}

Test(qp, write_to_unknown_stag)
{
	bad_write(B.stag ^ 0x100, (uintptr_t)B.buf, 100, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

Test(qp, write_with_wrong_key)
{
	bad_write(B.stag ^ 0x01, (uintptr_t)B.buf, 100, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

Test(qp, write_out_of_bounds)
{
	bad_write(B.stag, (uintptr_t)B.buf + BUF_LEN - 50, 100, IWX_CAUSE_DDP_T(IWX_DDP_T_BASE_BOUNDS));
}

Test(qp, write_without_remote_write_access)
{
	uint32_t ro = reg(&B, B.buf, 4096, IWX_ACCESS_REMOTE_READ);

	bad_write(ro, (uintptr_t)B.buf, 100, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS));
}

Test(qp, write_to_stag_of_another_pd)
{
	int64_t pd2 = iwx_mem_pd_alloc(B.mem, OWNER);
	int64_t other = iwx_mem_reg(B.mem, OWNER, pd2, B.buf, 4096, (uintptr_t)B.buf,
				    IWX_ACCESS_REMOTE_WRITE);

	cr_assert_gt(other, 0);
	bad_write(other, (uintptr_t)B.buf, 100, IWX_CAUSE_DDP_T(IWX_DDP_T_STAG_NOT_ASSOC));
}

Test(qp, send_with_no_posted_receive)
{
	post(&A, 1, IWX_WR_SEND, 0, 10, 0, 0);
	pump();
	assert_error(&B, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), true);
	assert_error(&A, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), false);
}

Test(qp, send_longer_than_the_receive_buffer)
{
	post_recv(&B, 1, 0, 3000);
	post(&A, 1, IWX_WR_SEND, 0, 5000, 0, 0);
	pump();
	assert_error(&B, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG), true);
	assert_wc(one_wc(&B), 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	assert_error(&A, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG), false);
}

Test(qp, read_with_bad_source_completes_in_error)
{
	post(&A, 1, IWX_WR_READ, 0, 100, B.stag, (uintptr_t)B.buf + BUF_LEN - 10);
	post(&A, 2, IWX_WR_SEND, 0, 4, 0, 0);
	pump();
	assert_error(&B, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS), true);
	assert_error(&A, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS), false);
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_READ, IWX_WC_REM_ACCESS_ERR);
}

Test(qp, read_of_unreadable_region)
{
	uint32_t wo = reg(&B, B.buf, 4096, IWX_ACCESS_REMOTE_WRITE);

	post(&A, 1, IWX_WR_READ, 0, 100, wo, (uintptr_t)B.buf);
	pump();
	assert_error(&B, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS), true);
	assert_wc(one_wc(&A), 1, IWX_WC_RDMA_READ, IWX_WC_REM_ACCESS_ERR);
}

Test(qp, reads_beyond_the_peers_ird)
{
	qp_sockpair_teardown();
	pair(agreed(4, 8), agreed(2, 4));	/* A may issue 8, B takes 2 */
	for (int i = 0; i < 8; i++)
		post(&A, i, IWX_WR_READ, 0, 10, B.stag, (uintptr_t)B.buf);
	pump();
	assert_error(&B, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), true);
	assert_error(&A, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), false);
}

Test(qp, send_with_invalidate_of_another_pds_stag)
{
	int64_t pd2 = iwx_mem_pd_alloc(B.mem, OWNER);
	int64_t other = iwx_mem_reg(B.mem, OWNER, pd2, B.buf, 4096, (uintptr_t)B.buf, 0);
	struct iwx_send_wr wr = { .wr_id = 5, .opcode = IWX_WR_SEND_SE_INV, .num_sge = 1,
				  .sge = { sge(&A, 0, 4) }, .inval_stag = other };

	post_recv(&B, 1, 0, 16);
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
	pump();
	assert_error(&B, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_CANNOT_INVALIDATE), true);
	assert_error(&A, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_CANNOT_INVALIDATE), false);
	cr_assert(iwx_mem_lookup(B.mem, other)->desc.valid, "not invalidated");
}

Test(qp, local_protection_error)
{
	struct iwx_send_wr wr = { .wr_id = 4, .opcode = IWX_WR_SEND, .num_sge = 1,
				  .sge = { { .addr = 0x1000, .len = 10, .lkey = 0x42 } } };

	post_recv(&B, 1, 0, 16);
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
	post(&A, 5, IWX_WR_SEND, 0, 4, 0, 0);
	pump();
	assert_wc(one_wc(&A), 4, IWX_WC_SEND, IWX_WC_LOC_PROT_ERR);
	assert_wc(one_wc(&A), 5, IWX_WC_SEND, IWX_WC_WR_FLUSH_ERR);
	assert_error(&A, iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_CATASTROPHIC, 0), true);
	assert_error(&B, iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_CATASTROPHIC, 0), false);
}

Test(qp, peer_gone_flushes_everything)
{
	post_recv(&B, 1, 0, 16);
	post(&B, 2, IWX_WR_READ, 0, 16, A.stag, (uintptr_t)A.buf);
	engine_qp_destroy(A.qp);	/* closes A's end */
	A.qp = NULL;
	for (int i = 0; i < 10 && engine_qp_get_state(B.qp) != ENGINE_QP_ERROR; i++) {
		engine_qp_progress(B.qp, NULL);
		poll(&(struct pollfd){ .fd = B.fd, .events = POLLIN }, 1, 20);
	}
	assert_error(&B, IWX_CAUSE_MPA(IWX_MPA_EC_STREAM_LOST), false);
	assert_wc(one_wc(&B), 2, IWX_WC_RDMA_READ, IWX_WC_WR_FLUSH_ERR);
	assert_wc(one_wc(&B), 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	cr_assert_eq(engine_qp_post_send(B.qp, &(struct iwx_send_wr){ .opcode = IWX_WR_SEND }), -ENOTCONN);
}

static uint64_t tx_fpdus(struct side *s)
{
	struct iwx_qp_stats st;

	engine_qp_stats(s->qp, &st);
	return st.tx_fpdus;
}

#define LOCAL_CATASTROPHIC	iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_CATASTROPHIC, 0)

/* A receive buffer that was never registered is a local error too, not a silent drop. */
Test(qp, send_into_unregistered_memory)
{
	struct iwx_recv_wr rwr = { .wr_id = 1, .num_sge = 1,
				   .sge = { { .addr = 0x1000, .len = 4096, .lkey = 0x4200 } } };

	cr_assert_eq(engine_qp_post_recv(B.qp, &rwr), 0);
	post(&A, 1, IWX_WR_SEND, 0, 100, 0, 0);
	pump();
	assert_wc(one_wc(&B), 1, IWX_WC_RECV, IWX_WC_LOC_PROT_ERR);
	assert_error(&B, LOCAL_CATASTROPHIC, true);
	assert_error(&A, LOCAL_CATASTROPHIC, false);
}

/* ------------------------------------------------------------ queue bounds */

#define SMALL_SQ	8
#define ORD		4	/* of agreed(4, 4) */

/* Post Write i: A's 16 bytes at 16 * i to the same place at B. false: A's send queue is full. */
static bool post_piece(int i)
{
	struct iwx_send_wr wr = {
		.wr_id = i, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { sge(&A, 16 * i, 16) }, .rkey = B.stag, .remote_addr = (uintptr_t)B.buf + 16 * i,
	};
	int err = engine_qp_post_send(A.qp, &wr);

	cr_assert(err == 0 || err == -ENOMEM, "post: %d", err);
	return !err;
}

/*
 * Post Writes from i on at A and run only A, so that the Response to a Read posted
 * before them is held back at B; until n are posted, or A takes no more. Returns the
 * number posted so far.
 */
static int post_behind_held_read(int i, int n)
{
	while (i < n) {
		if (post_piece(i)) {
			i++;
			continue;
		}
		uint64_t fpdus = tx_fpdus(&A);

		engine_qp_progress(A.qp, NULL);
		if (tx_fpdus(&A) == fpdus)
			break;	/* nothing left the send queue */
	}
	return i;
}

/*
 * While a Read waits for its Response, the Writes behind it finish but cannot
 * complete, and the send queue frees as they finish: more requests are then held
 * than the send queue and ORD account for. None may be lost.
 */
Test(qp, writes_behind_a_held_read_all_complete)
{
	const struct engine_qp_attr attr = { .sq_depth = SMALL_SQ };
	const int n = 3 * (SMALL_SQ + ORD + 1);
	int i, held;

	qp_sockpair_teardown();
	pair_with(agreed(4, ORD), agreed(4, 4), &attr);
	fill_pattern(A.buf, 16 * n, 6);
	fill_pattern(B.buf + BUF_LEN / 2, 4096, 7);
	post(&A, 1000, IWX_WR_READ, BUF_LEN / 2, 4096, B.stag, (uintptr_t)B.buf + BUF_LEN / 2);
	held = i = post_behind_held_read(0, n);
	while (i < n) {
		pump();	/* the Response comes in, the Writes behind it complete */
		i = post_behind_held_read(i, n);
	}
	pump();
	assert_wc(one_wc(&A), 1000, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
	for (i = 0; i < n; i++)
		assert_wc(one_wc(&A), i, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	no_wc(&A);
	cr_assert_arr_eq(B.buf, A.buf, 16 * n);
	cr_assert_arr_eq(A.buf + BUF_LEN / 2, B.buf + BUF_LEN / 2, 4096);
	cr_assert_gt(held, SMALL_SQ + ORD + 1, "more than sq + ORD + 1 Writes behind the Read");
	cr_assert_eq(engine_qp_get_state(A.qp), ENGINE_QP_RTS);
	cr_assert_eq(engine_qp_get_state(B.qp), ENGINE_QP_RTS);
}

/* Everything a queue pair can hold at once completes at once when the stream is lost. */
Test(qp, completion_queue_holds_everything_held)
{
	const struct engine_qp_attr attr = { .sq_depth = SMALL_SQ, .rq_depth = SMALL_SQ };
	struct iwx_term_cause cause;
	int i, n, nrecv = 0;

	qp_sockpair_teardown();
	pair_with(agreed(4, ORD), agreed(4, 4), &attr);
	post(&A, 1000, IWX_WR_READ, 0, 16, B.stag, (uintptr_t)B.buf);
	n = post_behind_held_read(0, 1000);
	cr_assert_gt(n, 2 * SMALL_SQ, "the send queue and the requests in flight are full");
	while (engine_qp_post_recv(A.qp, &(struct iwx_recv_wr){ .wr_id = 2000 + nrecv }) == 0)
		nrecv++;
	cr_assert_eq(nrecv, SMALL_SQ);
	engine_qp_destroy(B.qp);	/* closes B's end */
	B.qp = NULL;
	for (i = 0; i < 10 && engine_qp_get_state(A.qp) != ENGINE_QP_ERROR; i++) {
		engine_qp_progress(A.qp, NULL);
		poll(&(struct pollfd){ .fd = A.fd, .events = POLLIN }, 1, 20);
	}
	/* B left A's Writes unread: A may see a reset rather than the end of the stream */
	cr_assert(engine_qp_error(A.qp, &cause, NULL));
	cr_assert(iwx_cause_eq(cause, IWX_CAUSE_MPA(IWX_MPA_EC_STREAM_LOST)));
	assert_wc(one_wc(&A), 1000, IWX_WC_RDMA_READ, IWX_WC_WR_FLUSH_ERR);
	for (i = 0; i < n; i++) {
		struct iwx_wc wc = one_wc(&A);

		cr_assert_eq(wc.wr_id, (uint64_t)i);
		cr_assert(wc.status == IWX_WC_SUCCESS || wc.status == IWX_WC_WR_FLUSH_ERR);
	}
	for (i = 0; i < nrecv; i++)
		assert_wc(one_wc(&A), 2000 + i, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	no_wc(&A);
}

/* --------------------------------------------------- receive in turns */

#define BIG_LEN		(16u << 20)

static uint64_t rx_bytes(struct side *s)
{
	struct iwx_qp_stats st;

	engine_qp_stats(s->qp, &st);
	return st.rx_bytes;
}

/*
 * Read len bytes of src into dst, B's whole Response in A's socket before A reads
 * any of it; then run A as iwxd does, only while its socket is readable. Returns the
 * bytes A read in its first turn.
 */
static uint64_t read_at_once(uint8_t *dst, uint32_t dst_stag, const uint8_t *src,
			     uint32_t src_stag, uint32_t len, uint64_t wr_id)
{
	struct iwx_send_wr wr = {
		.wr_id = wr_id, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { { .addr = (uintptr_t)dst, .len = len, .lkey = dst_stag } },
		.rkey = src_stag, .remote_addr = (uintptr_t)src,
	};
	struct pollfd p = { .fd = A.fd, .events = POLLIN };
	uint64_t before, first = 0;
	bool ww = true;
	int turns;

	memset(dst, 0, len);
	cr_assert_eq(engine_qp_post_send(A.qp, &wr), 0);
	engine_qp_progress(A.qp, NULL);	/* the Request */
	for (turns = 0; ww && turns < 100000; turns++)
		engine_qp_progress(B.qp, &ww);
	cr_assert(engine_qp_tx_idle(B.qp), "B sent the whole Response of %u bytes", len);
	before = rx_bytes(&A);
	for (turns = 0; poll(&p, 1, 0) > 0 && turns < 100000; turns++) {
		engine_qp_progress(A.qp, NULL);
		if (!turns)
			first = rx_bytes(&A) - before;
	}
	cr_assert_eq(engine_qp_get_state(A.qp), ENGINE_QP_RTS);
	cr_assert_eq(engine_qp_unpolled(A.qp), 1,
		     "Read of %u bytes: A read its socket dry (%d turns), and no completion",
		     len, turns);
	assert_wc(one_wc(&A), wr_id, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
	cr_assert_arr_eq(dst, src, len);
	return first;
}

/*
 * A Response longer than one call of engine_qp_progress reads (receive works in turns,
 * so that transmit is not starved) completes once A has read its socket dry: iwxd
 * calls again only while the socket is readable, so a turn may leave nothing it read
 * unparsed. The first Read finds where a turn ends; the second ends its Response
 * there, in whole FPDUs (1428 bytes of payload in 1448 for EMSS 1448), so that the
 * last read of the first turn takes the last byte: as the FPDUs fall, a read into
 * the staging buffer, which the turn must parse before it returns.
 */
Test(qp, response_ending_with_a_turn_completes)
{
	int sndbuf = 4 * BIG_LEN;
	uint8_t *src, *dst;
	uint32_t src_stag, dst_stag, n;
	uint64_t turn;

	/* room for a whole Response in the socket: beyond wmem_max, so CAP_NET_ADMIN */
	if (setsockopt(B.fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		cr_skip_test("SO_SNDBUFFORCE: %s", strerror(errno));
	src = malloc(BIG_LEN);
	dst = malloc(BIG_LEN);
	cr_assert(src && dst);
	fill_pattern(src, BIG_LEN, 9);
	src_stag = reg(&B, src, BIG_LEN, IWX_ACCESS_REMOTE_READ);
	dst_stag = reg(&A, dst, BIG_LEN, IWX_ACCESS_LOCAL_WRITE);
	turn = read_at_once(dst, dst_stag, src, src_stag, BIG_LEN, 1);
	cr_assert_lt(turn, (uint64_t)BIG_LEN, "one turn read a %u-byte Response whole", BIG_LEN);
	n = turn / 1448;
	read_at_once(dst, dst_stag, src, src_stag, n * 1428, 2);
	free(src);
	free(dst);
}

/* ------------------------------------------------ Terminates on the wire */

Test(qp, bad_ddp_version_gets_its_terminate_on_the_wire)
{
	uint8_t u[18] = { 0x42, 0x43, [13] = 1 };	/* DDP version 2, Send, MSN 1 */
	struct iwx_term t;

	post_recv(&B, 1, 0, 16);
	raw_exchange(u, sizeof(u), &t);
	cr_assert(iwx_cause_eq(t.cause, IWX_CAUSE_DDP_U(IWX_DDP_U_VERSION)));
	cr_assert(t.has_seg_len && t.has_ddp_hdr && !t.has_rdma_hdr);
	cr_assert_eq(t.seg_len, 18);
	cr_assert_arr_eq(t.ddp_hdr, u, 18);
}

Test(qp, bad_opcode_gets_its_terminate_on_the_wire)
{
	uint8_t u[18] = { 0x41, 0x4d, [13] = 1 };	/* reserved opcode 13 */
	struct iwx_term t;

	raw_exchange(u, sizeof(u), &t);
	cr_assert(iwx_cause_eq(t.cause, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE)));
}

Test(qp, read_request_error_returns_the_rdma_header)
{
	uint8_t u[18 + 28] = { 0x41, 0x41, [9] = 1, [13] = 1 };
	struct iwx_read_req rr = { .sink_stag = 0x1234, .sink_to = 8, .size = 64,
				   .src_stag = 0x999900, .src_to = 0 };
	uint8_t want[28];
	struct iwx_term t;

	iwx_read_req_encode(u + 18, &rr);
	iwx_read_req_encode(want, &rr);
	raw_exchange(u, sizeof(u), &t);
	cr_assert(iwx_cause_eq(t.cause, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_INVALID_STAG)));
	cr_assert(t.has_ddp_hdr && t.has_rdma_hdr);
	cr_assert_arr_eq(t.rdma_hdr, want, 28);
}

Test(qp, bad_crc_gets_an_mpa_terminate)
{
	uint8_t f[64];
	struct iwx_mpa_mode mode = { .rev = 2, .crc = true };
	struct iwx_mpa_tx tx;
	uint8_t u[18] = { 0x41, 0x43, [13] = 1 };
	ssize_t n;

	post_recv(&B, 1, 0, 16);
	iwx_mpa_tx_init(&tx, &mode);
	n = iwx_mpa_fpdu_build(&tx, f, sizeof(f), u, 18, NULL, 0);
	f[n - 1] ^= 1;
	cr_assert_eq(write(A.fd, f, n), n);
	for (int i = 0; i < 50 && engine_qp_get_state(B.qp) != ENGINE_QP_ERROR; i++) {
		engine_qp_progress(B.qp, NULL);
		poll(&(struct pollfd){ .fd = B.fd, .events = POLLIN }, 1, 10);
	}
	assert_error(&B, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), true);
	n = read(A.fd, f, sizeof(f));
	/* length 0x16 (22): untagged header and a 4-byte Terminate with no copied headers */
	cr_assert_eq(n, 2 + 18 + 4 + 0 + 4);
	cr_assert_eq(f[20], 0x20);	/* layer LLP, MPA */
	cr_assert_eq(f[21], IWX_MPA_EC_CRC);
	cr_assert_eq(f[22], 0);		/* no M, D, R (RFC 5040 Figure 10) */
}

/* ------------------------------------------ placement before the CRC is known */

#define GUARD	0xa5
#define PIECE	2048	/* above the engine's threshold for receiving in place */

/* A tagged Write segment of PIECE bytes of pattern seed into B's buffer at off, framed. */
static size_t write_fpdu(uint8_t *f, size_t cap, uint64_t off, bool last, uint32_t seed, bool bad_crc)
{
	struct iwx_mpa_mode mode = { .rev = 2, .crc = true };
	struct iwx_ddp_tagged_hdr h = {
		.ddp_ctrl = IWX_DDP_FLAG_TAGGED | (last ? IWX_DDP_FLAG_LAST : 0) | IWX_DDP_VERSION,
		.rdmap_ctrl = IWX_RDMAP_VERSION << IWX_RDMAP_VERSION_SHIFT | IWX_OP_WRITE,
		.stag = htonl(B.stag), .to = htobe64((uintptr_t)B.buf + off),
	};
	static uint8_t payload[PIECE];
	struct iwx_mpa_tx tx;
	ssize_t n;

	fill_pattern(payload, PIECE, seed);
	iwx_mpa_tx_init(&tx, &mode);
	n = iwx_mpa_fpdu_build(&tx, f, cap, &h, sizeof(h), payload, PIECE);
	cr_assert_gt(n, 0);
	if (bad_crc)
		f[n - 1] ^= 1;
	return n;
}

/* The FPDUs in f to B, B run until it fails or has taken them. */
static void to_b(const uint8_t *f, size_t n)
{
	cr_assert_eq(write(A.fd, f, n), (ssize_t)n);
	for (int i = 0; i < 50 && engine_qp_get_state(B.qp) != ENGINE_QP_ERROR; i++) {
		engine_qp_progress(B.qp, NULL);
		poll(&(struct pollfd){ .fd = B.fd, .events = POLLIN }, 1, 10);
	}
}

static void assert_piece(uint64_t off, uint32_t seed)
{
	uint8_t want[PIECE];

	fill_pattern(want, PIECE, seed);
	cr_assert_arr_eq(B.buf + off, want, PIECE, "the piece at %llu is placed",
			 (unsigned long long)off);
}

static void assert_untouched(uint64_t off)
{
	for (uint32_t i = 0; i < PIECE; i++)
		cr_assert_eq(B.buf[off + i], GUARD, "byte %llu was written before its CRC was checked",
			     (unsigned long long)(off + i));
}

/*
 * A segment that does not continue the message as its sender cut it (here: a tagged
 * offset as a corruption of its header would make it) lands nowhere if its CRC fails.
 */
Test(qp, a_segment_cut_elsewhere_is_placed_only_once_its_crc_holds)
{
	uint8_t f[3 * (PIECE + 64)];
	size_t n;

	memset(B.buf, GUARD, 4 * PIECE);
	n = write_fpdu(f, sizeof(f), PIECE, false, 1, false);
	n += write_fpdu(f + n, sizeof(f) - n, 0, false, 2, true);	/* expected at 2 * PIECE */
	to_b(f, n);
	assert_error(&B, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), true);
	assert_piece(PIECE, 1);
	assert_untouched(0);
	assert_untouched(2 * PIECE);
}

/* The first segment of a message has nothing before it to follow: it waits for its CRC. */
Test(qp, a_first_segment_is_placed_only_once_its_crc_holds)
{
	uint8_t f[PIECE + 64];

	memset(B.buf, GUARD, PIECE);
	to_b(f, write_fpdu(f, sizeof(f), 0, true, 3, true));
	assert_error(&B, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), true);
	assert_untouched(0);
}

/* Segments that check are placed, whether they follow one another or not (RFC 5041 §5). */
Test(qp, segments_that_check_are_placed_wherever_they_were_cut)
{
	uint8_t f[4 * (PIECE + 64)];
	size_t n;

	memset(B.buf, GUARD, 5 * PIECE);
	n = write_fpdu(f, sizeof(f), 0, false, 4, false);
	n += write_fpdu(f + n, sizeof(f) - n, PIECE, false, 5, false);		/* follows */
	n += write_fpdu(f + n, sizeof(f) - n, 4 * PIECE, true, 6, false);	/* elsewhere */
	n += write_fpdu(f + n, sizeof(f) - n, 3 * PIECE, true, 7, false);	/* after a last */
	to_b(f, n);
	cr_assert_eq(engine_qp_get_state(B.qp), ENGINE_QP_RTS);
	assert_piece(0, 4);
	assert_piece(PIECE, 5);
	assert_piece(4 * PIECE, 6);
	assert_piece(3 * PIECE, 7);
	assert_untouched(2 * PIECE);
}

/* iwxd's watcher of B's regions (regions.c): a STag gone is gone for the queue pair too. */
static void b_region_changed(void *ctx, uint32_t gone, const struct iwx_region *now)
{
	(void)ctx;
	(void)now;
	if (gone)
		engine_qp_stag_gone(B.qp, gone);
}

/*
 * A segment received in place, half of it in when its STag is invalidated: the other half
 * lands nowhere, and the Write ends in a Terminate for the invalid STag (RFC 5041 §7.2).
 */
Test(qp, nothing_lands_after_an_invalidation_in_the_middle_of_a_segment)
{
	uint8_t f[2 * (PIECE + 64)];
	size_t n, first;

	memset(B.buf, GUARD, 3 * PIECE);
	iwx_mem_watch(B.mem, b_region_changed, NULL);
	first = write_fpdu(f, sizeof(f), 0, false, 8, false);
	n = first + write_fpdu(f + first, sizeof(f) - first, PIECE, true, 9, false);	/* follows: in place */
	to_b(f, first + PIECE / 2);
	cr_assert_eq(engine_qp_get_state(B.qp), ENGINE_QP_RTS);
	assert_piece(0, 8);
	cr_assert_eq(iwx_mem_invalidate(B.mem, B.stag, B.pd), 0);
	memset(B.buf + PIECE, GUARD, PIECE);	/* what landed before it returned may stay */
	to_b(f + first + PIECE / 2, n - first - PIECE / 2);
	assert_error(&B, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG), true);
	assert_untouched(PIECE);
}

/* ------------------------------------------------------ who speaks first */

static struct iwx_mpa_agreed with(uint8_t rev, uint8_t rtr, bool initiator)
{
	struct iwx_mpa_agreed a = agreed(4, 4);

	a.mode.rev = rev;
	a.enhanced = rev == 2;
	a.rtr = rtr;
	a.initiator = initiator;
	return a;
}

static void responder_speaks_after_initiator(uint8_t rev, uint8_t rtr, uint64_t initiator_fpdus)
{
	struct iwx_qp_stats st;

	qp_sockpair_teardown();
	pair(with(rev, rtr, true), with(rev, rtr, false));
	post_recv(&A, 1, 0, 16);
	post(&B, 2, IWX_WR_SEND, 0, 16, 0, 0);
	pump();
	engine_qp_stats(A.qp, &st);
	cr_assert_eq(st.tx_fpdus, initiator_fpdus, "the Initiator's RTR, or nothing");
	if (!rtr) {
		/* revision 1: the Responder waits for the Initiator's first FPDU */
		engine_qp_stats(B.qp, &st);
		cr_assert_eq(st.tx_fpdus, 0);
		no_wc(&A);
		post_recv(&B, 3, 0, 16);
		post(&A, 4, IWX_WR_SEND, 0, 16, 0, 0);
		pump();
		assert_wc(one_wc(&A), 4, IWX_WC_SEND, IWX_WC_SUCCESS);
		assert_wc(one_wc(&B), 3, IWX_WC_RECV, IWX_WC_SUCCESS);
	}
	assert_wc(one_wc(&B), 2, IWX_WC_SEND, IWX_WC_SUCCESS);
	assert_wc(one_wc(&A), 1, IWX_WC_RECV, IWX_WC_SUCCESS);
	no_wc(&A);	/* the RTR completes to nobody */
	no_wc(&B);
	cr_assert_eq(engine_qp_get_state(A.qp), ENGINE_QP_RTS);
	cr_assert_eq(engine_qp_get_state(B.qp), ENGINE_QP_RTS);
}

Test(qp, revision_1_responder_waits_for_the_initiators_first_fpdu)
{
	responder_speaks_after_initiator(1, 0, 0);
}

Test(qp, peer_to_peer_rtr_zero_length_write)
{
	responder_speaks_after_initiator(2, IWX_RTR_WRITE, 1);
}

Test(qp, peer_to_peer_rtr_zero_length_read)
{
	responder_speaks_after_initiator(2, IWX_RTR_READ, 1);
}

/* ------------------------------------------------------ shared receive queue */

/* The receives of a shared receive queue, as iwxd's vsrq_take hands them out. */
static struct {
	struct iwx_recv_wr	wr[8];
	int			n, taken;
} srq;

static int srq_take(void *ctx, struct iwx_recv_wr *wr)
{
	(void)ctx;
	if (srq.taken == srq.n)
		return -ENOENT;
	*wr = srq.wr[srq.taken++];
	return 0;
}

/* B's receives from srq (n of them, 64 bytes each from B's buffer, wr_id 100 + i), depth 8. */
static void pair_on_srq(int n)
{
	struct engine_qp_attr attr = { .rq_depth = 8, .take_recv = srq_take };

	qp_sockpair_teardown();
	pair_with(agreed(4, 4), agreed(4, 4), &attr);
	memset(&srq, 0, sizeof(srq));
	for (int i = 0; i < n; i++)
		srq.wr[i] = (struct iwx_recv_wr){ .wr_id = 100 + i, .num_sge = 1,
						  .sge = { sge(&B, i * 64, 64) } };
	srq.n = n;
}

/* A Send segment from A's side of the stream, framed by us: MSN msn, at offset mo. */
static void raw_send(uint32_t msn, uint32_t mo, bool last, const char *payload)
{
	uint8_t u[18] = { last ? 0x41 : 0x01, 0x43 }, f[256];	/* DDP 1, (L); RDMAP 1, Send */
	struct iwx_mpa_mode mode = { .rev = 2, .crc = true };
	struct iwx_mpa_tx tx;
	ssize_t n;

	u[10] = msn >> 24, u[11] = msn >> 16, u[12] = msn >> 8, u[13] = msn;
	u[14] = mo >> 24, u[15] = mo >> 16, u[16] = mo >> 8, u[17] = mo;
	iwx_mpa_tx_init(&tx, &mode);
	n = iwx_mpa_fpdu_build(&tx, f, sizeof(f), u, sizeof(u), payload, strlen(payload));
	cr_assert_eq(write(A.fd, f, n), n);
}

static void run_b(void)
{
	for (int i = 0; i < 20 && engine_qp_get_state(B.qp) != ENGINE_QP_ERROR; i++) {
		engine_qp_progress(B.qp, NULL);
		poll(&(struct pollfd){ .fd = B.fd, .events = POLLIN }, 1, 5);
	}
}

Test(qp, srq_receives_are_taken_as_sends_begin)
{
	struct iwx_wc wc;

	pair_on_srq(3);
	fill_pattern(A.buf, 64, 3);
	post(&A, 1, IWX_WR_SEND, 0, 10, 0, 0);
	post(&A, 2, IWX_WR_SEND, 0, 20, 0, 0);
	pump();
	cr_assert_eq(srq.taken, 2, "one receive a Send: %d taken", srq.taken);
	wc = one_wc(&B);
	assert_wc(wc, 100, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 10);
	wc = one_wc(&B);
	assert_wc(wc, 101, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 20);
	cr_assert_arr_eq(B.buf + 64, A.buf, 20);
}

/*
 * A later message's segment first (SCTP's chunks are unordered; RFC 5041 §5.3 orders
 * only the last segments): the SRQ's receives are taken in MSN order up to it.
 */
Test(qp, srq_receives_follow_msns_out_of_order)
{
	struct iwx_wc wc;

	pair_on_srq(3);
	raw_send(2, 0, false, "BB");
	raw_send(1, 0, true, "AAA");
	raw_send(2, 2, true, "bb");
	run_b();
	cr_assert_eq(engine_qp_get_state(B.qp), ENGINE_QP_RTS);
	cr_assert_eq(srq.taken, 2);
	wc = one_wc(&B);
	assert_wc(wc, 100, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert(wc.byte_len == 3 && !memcmp(B.buf, "AAA", 3), "MSN 1 in the first receive");
	wc = one_wc(&B);
	assert_wc(wc, 101, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert(wc.byte_len == 4 && !memcmp(B.buf + 64, "BBbb", 4), "MSN 2 in the second");
}

/* An MSN beyond what the queue pair may hold takes nothing: the SRQ's receives stay. */
Test(qp, srq_receives_stay_for_an_msn_beyond_the_depth)
{
	pair_on_srq(8);
	raw_send(9, 0, true, "far");
	run_b();
	cr_assert_eq(srq.taken, 0, "%d taken", srq.taken);
	assert_error(&B, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_RANGE), true);
}
