// SPDX-License-Identifier: MIT
/* The queue pair tests of qp_tests.h, on whichever transport the pair was given. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"

#include "qp_tests.h"
#include "testutil.h"

/* Megabytes by RDMA Write, Send and Read, every byte checked. */
void qp_test_write_read_and_send_megabytes(struct qp_pair *p)
{
	const uint32_t wlen = 16u << 20, rlen = 8u << 20;
	struct qp_end *A = &p->a, *B = &p->b;
	struct iwx_wc wa[8], wb[8];
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1 };
	struct iwx_send_wr read = { .wr_id = 2, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1 };
	struct iwx_send_wr send = { .wr_id = 3, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 2 };
	struct iwx_recv_wr recv = { .wr_id = 9, .num_sge = 1 };

	qp_pair_connect(p);
	write.sge[0] = qp_sge(A, 0, wlen);
	read.sge[0] = qp_sge(A, wlen, rlen);
	send.sge[0] = qp_sge(A, 100, 30000);
	send.sge[1] = qp_sge(A, 200000, 35536);
	recv.sge[0] = qp_sge(B, wlen, 65536);
	fill_pattern(A->buf, wlen, 1);
	fill_pattern(B->buf + (4u << 20), rlen, 2);
	write.remote_addr = (uintptr_t)B->buf;
	write.rkey = B->stag;
	read.remote_addr = (uintptr_t)B->buf + (4u << 20);
	read.rkey = B->stag;

	cr_assert_eq(engine_qp_post_recv(B->qp, &recv), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &write), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &send), 0);
	qp_pair_run_until(p, 2, 1, wa, wb);
	/* RFC 5040 §5.5: the Send after the Write sees the Write's data placed */
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wa[1].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].byte_len, 65536);
	cr_assert_arr_eq(B->buf, A->buf, wlen);
	cr_assert_arr_eq(B->buf + wlen, A->buf + 100, 30000);
	cr_assert_arr_eq(B->buf + wlen + 30000, A->buf + 200000, 35536);

	fill_pattern(B->buf + (4u << 20), rlen, 2);	/* the Write overwrote it */
	cr_assert_eq(engine_qp_post_send(A->qp, &read), 0);
	qp_pair_run_until(p, 1, 0, wa, wb);
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wa[0].opcode, IWX_WC_RDMA_READ);
	cr_assert_arr_eq(A->buf + wlen, B->buf + (4u << 20), rlen);
}

/*
 * Writes and Sends in turn, a Send behind every Write: B's completion of that Send says
 * the Write before it was placed (RFC 5040 §5.5); A's of the Write says only that the
 * lower layer took it.
 */
void qp_test_many_outstanding_writes_and_sends(struct qp_pair *p)
{
	enum { N = 64, LEN = 200000 };
	struct qp_end *A = &p->a, *B = &p->b;
	struct iwx_wc wa[N], wb[N / 2];

	qp_pair_connect(p);
	fill_pattern(A->buf, (size_t)N * LEN, 5);
	for (int i = 0; i < N; i++) {
		struct iwx_recv_wr r = { .wr_id = i, .num_sge = 1,
					 .sge = { qp_sge(B, (size_t)N * LEN + i * 64, 64) } };

		cr_assert_eq(engine_qp_post_recv(B->qp, &r), 0);
	}
	for (int i = 0; i < N; i++) {
		struct iwx_send_wr w = { .wr_id = i, .opcode = i % 2 ? IWX_WR_SEND : IWX_WR_WRITE,
					 .flags = IWX_WR_SIGNALED, .num_sge = 1,
					 .sge = { qp_sge(A, (size_t)i * LEN, i % 2 ? 64 : LEN) },
					 .rkey = B->stag,
					 .remote_addr = (uintptr_t)B->buf + (size_t)i * LEN };

		cr_assert_eq(engine_qp_post_send(A->qp, &w), 0);
	}
	qp_pair_run_until(p, N, N / 2, wa, wb);
	for (int i = 0; i < N; i++) {
		cr_assert_eq(wa[i].wr_id, (uint64_t)i, "in order");
		cr_assert_eq(wa[i].status, IWX_WC_SUCCESS);
		if (i % 2 == 0)
			cr_assert_arr_eq(B->buf + (size_t)i * LEN, A->buf + (size_t)i * LEN, LEN,
					 "Write %d", i);
	}
	for (int i = 0; i < N / 2; i++) {
		cr_assert_eq(wb[i].wr_id, (uint64_t)i, "MSN order");
		cr_assert_eq(wb[i].status, IWX_WC_SUCCESS);
		cr_assert_arr_eq(B->buf + (size_t)N * LEN + i * 64, A->buf + (size_t)(2 * i + 1) * LEN,
				 64, "Send %d", 2 * i + 1);
	}
}

/* Overwrite the source of each Write in wc[from, to): it is the application's again. */
static void reuse_sources(struct qp_end *A, const struct iwx_wc *wc, int from, int to, uint32_t len)
{
	for (int k = from; k < to; k++) {
		cr_assert_eq(wc[k].status, IWX_WC_SUCCESS);
		memset(A->buf + wc[k].wr_id * len, 0xee, len);
	}
}

/*
 * A Write's source is the application's again once the Write completes (RFC 5041 §5.4:
 * the lower layer has it), even when it is sent from where it is, or without a copy.
 * B reads nothing while A sends until its transport takes no more (a copied Write may
 * complete then), then a little now and then, A overwriting the source of every Write
 * as soon as it completes: B has every Write as it was at posting.
 */
void qp_test_write_source_reused_once_completed(struct qp_pair *p)
{
	enum { N = 200, LEN = 16 << 10 };	/* a Write fits one batch of FPDUs */
	struct qp_end *A = &p->a, *B = &p->b;
	struct iwx_wc wa[N + 1], wb[1];
	uint8_t *want = malloc((size_t)N * LEN);
	int done = 0, early, got_b = 0, still = 0;
	uint64_t deadline;

	cr_assert_not_null(want);
	qp_pair_connect(p);
	struct iwx_recv_wr recv = { .wr_id = 9, .num_sge = 1,
				    .sge = { qp_sge(B, (size_t)N * LEN, 64) } };
	struct iwx_send_wr send = { .wr_id = N, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { qp_sge(A, (size_t)N * LEN, 64) } };

	/* one Send there and back first: the initiator sends nothing before the peer has */
	cr_assert_eq(engine_qp_post_recv(B->qp, &recv), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &send), 0);
	qp_pair_run_until(p, 1, 1, wa, wb);
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);

	fill_pattern(A->buf, (size_t)N * LEN, 7);
	memcpy(want, A->buf, (size_t)N * LEN);
	cr_assert_eq(engine_qp_post_recv(B->qp, &recv), 0);
	for (int i = 0; i < N; i++) {
		struct iwx_send_wr w = { .wr_id = i, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
					 .num_sge = 1, .sge = { qp_sge(A, (size_t)i * LEN, LEN) },
					 .rkey = B->stag, .remote_addr = (uintptr_t)B->buf + (size_t)i * LEN };

		cr_assert_eq(engine_qp_post_send(A->qp, &w), 0);
	}
	cr_assert_eq(engine_qp_post_send(A->qp, &send), 0);	/* B has all once it has this */
	/* A alone, until nothing more completes for 20 turns (2000 at most) */
	for (int turn = 0; turn < 2000 && still < 20 && done < N; turn++) {
		bool want_write;
		int n;

		engine_qp_progress(A->qp, &want_write);
		n = engine_qp_poll(A->qp, wa + done, N - done);
		reuse_sources(A, wa, done, done + n, LEN);
		done += n;
		still = n ? 0 : still + 1;
		usleep(1000);
	}
	cr_assert_lt(done, N, "the transport took all %d Writes: the test proves nothing", N);
	/* copied, some complete before B reads; without a copy, B reads the pages sent */
	if (!p->zerocopy_min)
		cr_assert_gt(done, 0, "no Write completed before B read");
	early = done;
	/* B now and then, A overwriting each source as soon as its Write completes */
	deadline = iwx_now_ms() + 30000;
	for (int turn = 0; done < N + 1 || !got_b; turn++) {
		bool want_write;
		int n;

		cr_assert_lt(iwx_now_ms(), deadline, "%d of %d Writes completed", done, N);
		engine_qp_progress(A->qp, &want_write);
		n = engine_qp_poll(A->qp, wa + done, N + 1 - done);
		reuse_sources(A, wa, done, done + n, LEN);
		done += n;
		if (turn % 4 == 0) {
			engine_qp_progress(B->qp, &want_write);
			got_b += engine_qp_poll(B->qp, wb, 1 - got_b);
		}
		qp_pair_wait(p, 1);
	}
	for (int i = 0; i <= N; i++) {
		cr_assert_eq(wa[i].wr_id, (uint64_t)i, "in order");
		cr_assert_eq(wa[i].status, IWX_WC_SUCCESS);
	}
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	for (int i = 0; i < N; i++)
		cr_assert_arr_eq(B->buf + (size_t)i * LEN, want + (size_t)i * LEN, LEN,
				 "Write %d (%d completed before B read)", i, early);
	free(want);
}

void qp_write_send_read(struct qp_pair *p, uint32_t len)
{
	const uint64_t roff = 20u << 20;
	struct qp_end *A = &p->a, *B = &p->b;
	struct iwx_wc wa[3], wb[1];
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = len ? 1 : 0, .sge = { qp_sge(A, 0, len) },
				     .rkey = B->stag, .remote_addr = (uintptr_t)B->buf };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { qp_sge(A, 0, len < 65536 ? len : 65536) } };
	struct iwx_send_wr read = { .wr_id = 3, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { qp_sge(A, roff, len) },
				    .rkey = B->stag, .remote_addr = (uintptr_t)B->buf + roff };
	struct iwx_recv_wr recv = { .wr_id = 9, .num_sge = 1, .sge = { qp_sge(B, 16u << 20, 65536) } };

	memset(B->buf, 0, QP_BUF_LEN);
	fill_pattern(A->buf, len, len);
	fill_pattern(B->buf + roff, len, len + 1);
	cr_assert_eq(engine_qp_post_recv(B->qp, &recv), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &write), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &send), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &read), 0);
	qp_pair_run_until(p, 3, 1, wa, wb);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(wa[i].status, IWX_WC_SUCCESS, "%u bytes: request %d", len, i);
		cr_assert_eq(wa[i].wr_id, (uint64_t)i + 1, "in posting order");
	}
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].byte_len, send.sge[0].len);
	cr_assert_arr_eq(B->buf, A->buf, len, "%u bytes written", len);
	cr_assert_arr_eq(B->buf + (16u << 20), A->buf, send.sge[0].len);
	cr_assert_arr_eq(A->buf + roff, B->buf + roff, len, "%u bytes read", len);
}

/*
 * A Write, a Send and a Read of each size, every byte checked: on each side of the
 * largest tagged and untagged payloads of SCTP's segments (at an EMSS of 1444: 1424 and
 * 1416, the shim's headers) and MPA's with CRCs (at 1448: 1428 and 1424), and megabytes.
 */
static const uint32_t sizes[] = {
	0, 1, 1416, 1423, 1424, 1425, 1427, 1428, 1429, 65536, 1u << 20, 16u << 20,
};

void qp_test_every_operation_at_every_size(struct qp_pair *p)
{
	qp_pair_connect(p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		qp_write_send_read(p, sizes[i]);
}

uint64_t qp_every_size_bytes(void)
{
	uint64_t all = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		all += sizes[i];
	return all;
}

/* ------------------------------------------------------------------ errors */

enum bad { UNKNOWN_STAG, WRONG_KEY, OUT_OF_BOUNDS, NO_REMOTE_WRITE, OTHER_PD, TO_WRAPS };

static uint32_t reg(struct qp_end *e, uint32_t pd, uint64_t len, uint8_t access)
{
	int64_t stag = iwx_mem_reg(e->mem, QP_OWNER, pd, e->buf, len, (uintptr_t)e->buf, access);

	cr_assert_gt(stag, 0, "iwx_mem_reg: %s", strerror((int)-stag));
	return stag;
}

/* One bad RDMA Write, then a Send: B terminates with want, A learns it, the Send never arrives. */
static void bad_write(struct qp_pair *p, enum bad how, struct iwx_term_cause want)
{
	struct qp_end *A = &p->a, *B = &p->b;
	struct iwx_recv_wr recv = { .wr_id = 7, .num_sge = 1 };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1 };
	struct iwx_send_wr wr = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1 };
	struct iwx_wc wc;

	qp_pair_connect(p);
	recv.sge[0] = qp_sge(B, 0, 16);
	send.sge[0] = qp_sge(A, 0, 16);
	wr.sge[0] = qp_sge(A, 0, 100);
	wr.rkey = B->stag;
	wr.remote_addr = (uintptr_t)B->buf;
	switch (how) {
	case UNKNOWN_STAG:
		wr.rkey ^= 0x100;
		break;
	case WRONG_KEY:
		wr.rkey ^= 0x01;
		break;
	case OUT_OF_BOUNDS:
		wr.remote_addr += QP_BUF_LEN - 50;
		break;
	case NO_REMOTE_WRITE:
		wr.rkey = reg(B, B->pd, 4096, IWX_ACCESS_REMOTE_READ);
		break;
	case OTHER_PD:
		wr.rkey = reg(B, iwx_mem_pd_alloc(B->mem, QP_OWNER), 4096, IWX_ACCESS_REMOTE_WRITE);
		break;
	case TO_WRAPS:
		wr.remote_addr = UINT64_MAX - 10;
		break;
	}
	cr_assert_eq(engine_qp_post_recv(B->qp, &recv), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &wr), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &send), 0);
	qp_pair_run_until_stopped(p);
	qp_assert_error(B, want, true);
	qp_assert_error(A, want, false);
	cr_assert_eq(engine_qp_poll(B->qp, &wc, 1), 1);
	cr_assert_eq(wc.status, IWX_WC_WR_FLUSH_ERR, "the Send behind it is not delivered");
}

#define BAD_WRITE(name, how, want) \
	void qp_test_##name(struct qp_pair *p) { bad_write(p, how, want); }

/*
 * RFC 5041 §7.1's checks of a tagged buffer, each with its §7.2 cause; access rights are
 * RDMAP's to check (RFC 5040 §7.2: a remote protection error).
 */
BAD_WRITE(write_to_unknown_stag, UNKNOWN_STAG, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG))
BAD_WRITE(write_with_wrong_key, WRONG_KEY, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG))
BAD_WRITE(write_out_of_bounds, OUT_OF_BOUNDS, IWX_CAUSE_DDP_T(IWX_DDP_T_BASE_BOUNDS))
BAD_WRITE(write_without_remote_write_access, NO_REMOTE_WRITE, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS))
BAD_WRITE(write_to_stag_of_another_pd, OTHER_PD, IWX_CAUSE_DDP_T(IWX_DDP_T_STAG_NOT_ASSOC))
BAD_WRITE(write_whose_tagged_offset_wraps, TO_WRAPS, IWX_CAUSE_DDP_T(IWX_DDP_T_TO_WRAP))

void qp_test_send_with_no_posted_receive(struct qp_pair *p)
{
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .num_sge = 1 };

	qp_pair_connect(p);
	send.sge[0] = qp_sge(&p->a, 0, 10);
	cr_assert_eq(engine_qp_post_send(p->a.qp, &send), 0);
	qp_pair_run_until_stopped(p);
	qp_assert_error(&p->b, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), true);
	qp_assert_error(&p->a, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), false);
}

/* RFC 5041 §7.1: a message longer than the buffer it goes to; the receive is flushed. */
void qp_test_send_longer_than_the_receive_buffer(struct qp_pair *p)
{
	struct iwx_recv_wr recv = { .wr_id = 7, .num_sge = 1 };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .num_sge = 1 };
	struct iwx_wc wc;

	qp_pair_connect(p);
	recv.sge[0] = qp_sge(&p->b, 0, 3000);
	send.sge[0] = qp_sge(&p->a, 0, 5000);
	cr_assert_eq(engine_qp_post_recv(p->b.qp, &recv), 0);
	cr_assert_eq(engine_qp_post_send(p->a.qp, &send), 0);
	qp_pair_run_until_stopped(p);
	qp_assert_error(&p->b, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG), true);
	qp_assert_error(&p->a, IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG), false);
	cr_assert_eq(engine_qp_poll(p->b.qp, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.status, IWX_WC_WR_FLUSH_ERR);
}

/* B may not invalidate what another PD holds (RFC 5040 §7.2); nothing is invalidated. */
void qp_test_send_with_invalidate_of_another_pds_stag(struct qp_pair *p)
{
	struct iwx_recv_wr recv = { .wr_id = 7, .num_sge = 1 };
	struct iwx_send_wr send = { .wr_id = 5, .opcode = IWX_WR_SEND_SE_INV, .num_sge = 1 };
	uint32_t other;

	qp_pair_connect(p);
	other = reg(&p->b, iwx_mem_pd_alloc(p->b.mem, QP_OWNER), 4096, 0);
	recv.sge[0] = qp_sge(&p->b, 0, 16);
	send.sge[0] = qp_sge(&p->a, 0, 4);
	send.inval_stag = other;
	cr_assert_eq(engine_qp_post_recv(p->b.qp, &recv), 0);
	cr_assert_eq(engine_qp_post_send(p->a.qp, &send), 0);
	qp_pair_run_until_stopped(p);
	qp_assert_error(&p->b, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_CANNOT_INVALIDATE), true);
	qp_assert_error(&p->a, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_CANNOT_INVALIDATE), false);
	cr_assert(iwx_mem_lookup(p->b.mem, other)->desc.valid, "not invalidated");
}

/* A Read Request B cannot answer: B terminates, A's Read completes in error. */
static void bad_read(struct qp_pair *p, uint32_t rkey, uint64_t off, struct iwx_term_cause want)
{
	struct iwx_send_wr read = { .wr_id = 1, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1 };
	struct iwx_wc wc;

	read.sge[0] = qp_sge(&p->a, 0, 100);
	read.rkey = rkey;
	read.remote_addr = (uintptr_t)p->b.buf + off;
	cr_assert_eq(engine_qp_post_send(p->a.qp, &read), 0);
	qp_pair_run_until_stopped(p);
	qp_assert_error(&p->b, want, true);
	qp_assert_error(&p->a, want, false);
	cr_assert_eq(engine_qp_poll(p->a.qp, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.opcode, IWX_WC_RDMA_READ);
	cr_assert_eq(wc.status, IWX_WC_REM_ACCESS_ERR);
}

void qp_test_read_with_bad_source_completes_in_error(struct qp_pair *p)
{
	qp_pair_connect(p);
	bad_read(p, p->b.stag, QP_BUF_LEN - 10, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS));
}

void qp_test_read_of_unreadable_region(struct qp_pair *p)
{
	qp_pair_connect(p);
	bad_read(p, reg(&p->b, p->b.pd, 4096, IWX_ACCESS_REMOTE_WRITE), 0,
		 IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS));
}
