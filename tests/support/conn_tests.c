// SPDX-License-Identifier: MIT
/* The set-up tests of conn_tests.h, on whichever transport the pair was given. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "proto/mpa.h"

#include "conn_tests.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

void conn_test_established_private_data_both_ways(struct conn_pair *p)
{
	static const uint8_t b_pd[] = "accepted";
	uint8_t a_pd[IWX_MPA_MAX_PRIVDATA - 4];
	struct iwx_conn_opts ao = { .local = *p->t->local, .pd = a_pd, .pd_len = sizeof(a_pd) };

	fill_pattern(a_pd, sizeof(a_pd), 7);
	ao.local.ird = 8;
	ao.local.ord = 4;
	p->b_opts = (struct iwx_conn_opts){ .local = *p->t->local, .pd = b_pd, .pd_len = sizeof(b_pd) };
	/* over TCP CRC is agreed all the same: the Initiator asked (over SCTP, never) */
	p->b_opts.local.crc = false;
	p->b_opts.local.ird = 2;
	p->b_opts.local.ord = 16;
	p->early = "S2C!";
	p->t->listen(p);
	cr_assert_eq(conn_pair_connect(p, &ao), 0);
	cr_assert(p->a->initiator);
	cr_assert_eq(p->a->state, IWX_CONN_CONNECTING);
	conn_pair_drive(p);

	cr_assert_eq(p->answer_ret, 0);
	cr_assert_eq(p->a->state, IWX_CONN_ESTABLISHED, "initiator: %d %s", p->a->state,
		     strerror(-p->a->error));
	cr_assert_eq(p->b->state, IWX_CONN_ESTABLISHED, "responder: %d %s", p->b->state,
		     strerror(-p->b->error));
	cr_assert(!p->b->initiator);
	for (int i = 0; i < 2; i++) {
		const struct iwx_conn *c = i ? p->b : p->a;

		cr_assert(!p->t->closed(c));
		cr_assert(c->agreed.enhanced);
		cr_assert_eq(c->agreed.mode.rev, 2);
		cr_assert(!c->agreed.mode.markers_rx && !c->agreed.mode.markers_tx);
		cr_assert_eq(c->agreed.initiator, !i);
	}
	/*
	 * responder: IRD min(2, initiator's ORD 4), ORD min(16, initiator's IRD 8);
	 * initiator: issues no more reads than the responder takes
	 */
	conn_assert_limits(p, 8, 2, 2, 8);
	cr_assert_eq(p->b->request.ird, 8);
	cr_assert_eq(p->b->request.ord, 4);
	conn_assert_private_data(p, a_pd, sizeof(a_pd), b_pd, sizeof(b_pd));

	/* what followed the Reply is still in the initiator's socket, for the lower layer */
	p->t->recv_early(p, "S2C!");
}

void conn_test_reject_with_private_data(struct conn_pair *p)
{
	static const uint8_t why[] = "no room at the inn";
	struct iwx_conn_opts ao = { .local = *p->t->local, .pd = (const uint8_t *)"let me in",
				    .pd_len = 9 };

	p->b_opts = (struct iwx_conn_opts){ .local = *p->t->local, .pd = why, .pd_len = sizeof(why) };
	p->reject = true;
	p->t->listen(p);
	cr_assert_eq(conn_pair_connect(p, &ao), 0);
	conn_pair_drive(p);

	cr_assert_eq(p->answer_ret, 0);
	cr_assert_eq(p->b->state, IWX_CONN_REJECTED);
	cr_assert_eq(p->b->error, 0);
	cr_assert(p->t->closed(p->b));
	cr_assert_eq(p->a->state, IWX_CONN_REJECTED);
	cr_assert_eq(p->a->error, -ECONNREFUSED);
	cr_assert(p->t->closed(p->a));
	conn_assert_private_data(p, "let me in", 9, why, sizeof(why));
}

void conn_test_silent_responder_times_out(struct conn_pair *p)
{
	struct iwx_conn_opts ao = { .local = *p->t->local, .timeout_ms = CONN_SHORT_MS };
	uint64_t t0 = iwx_now_ms();

	p->b_opts = (struct iwx_conn_opts){ .local = *p->t->local };
	p->silent = true;
	p->t->listen(p);
	cr_assert_eq(conn_pair_connect(p, &ao), 0);
	conn_pair_drive(p);
	conn_assert_own_timeout(t0);

	cr_assert_eq(p->a->state, IWX_CONN_FAILED);
	cr_assert_eq(p->a->error, -ETIMEDOUT, "%s", strerror(-p->a->error));
	cr_assert(p->t->closed(p->a));
	cr_assert_eq(p->b->state, IWX_CONN_REQUEST_IN);
}

/* A hand-made Initiator that never sends its Request: b gives up on time. */
void conn_test_silent_initiator_times_out(struct conn_pair *p)
{
	struct iwx_conn_opts bo = { .local = *p->t->local, .timeout_ms = CONN_SHORT_MS };
	uint64_t t0;

	p->t->listen(p);
	p->t->raw_connect(p);
	conn_pair_accept(p, &bo);
	t0 = iwx_now_ms();
	cr_assert_leq(p->b->deadline_ms, t0 + CONN_SHORT_MS);
	conn_pair_drive_one(p, p->b);
	conn_assert_own_timeout(t0);
	cr_assert_eq(p->b->state, IWX_CONN_FAILED);
	cr_assert_eq(p->b->error, -ETIMEDOUT, "%s", strerror(-p->b->error));
	cr_assert(p->t->closed(p->b));
}

/* Nothing listens on b's port: the transport refuses, and a fails with its socket closed. */
void conn_test_nobody_listens(struct conn_pair *p)
{
	struct iwx_conn_opts ao = { .local = *p->t->local, .timeout_ms = STALL_MS };

	cr_assert_eq(conn_pair_connect(p, &ao), 0);
	conn_pair_drive_one(p, p->a);
	cr_assert_eq(p->a->state, IWX_CONN_FAILED);
	cr_assert_eq(p->a->error, -ECONNREFUSED, "%s", strerror(-p->a->error));
	cr_assert(p->t->closed(p->a));
}

/* Something else than MPA where the Request goes: -EPROTO, and the peer sees a Reply with R. */
void conn_test_garbage_request_rejected(struct conn_pair *p)
{
	static const char http[] = "GET / HTTP/1.1\r\nHost: 192.0.2.2\r\nAccept: */*\r\n\r\n";
	struct iwx_conn_opts bo = { .local = *p->t->local, .timeout_ms = STALL_MS };

	p->t->listen(p);
	p->t->raw_connect(p);
	p->t->raw_send(p, http, sizeof(http) - 1);
	conn_pair_accept(p, &bo);
	conn_pair_drive_one(p, p->b);
	cr_assert_eq(p->b->state, IWX_CONN_FAILED);
	cr_assert_eq(p->b->error, -EPROTO, "%s", strerror(-p->b->error));
	cr_assert(iwx_cause_eq(p->b->cause, IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR)));
	cr_assert(p->t->closed(p->b));
	p->t->raw_recv_reject(p);
}

void conn_test_request_without_write_rtr(struct conn_pair *p)
{
	static const struct iwx_mpa_local read_rtr = { .rev = 2, .ird = 1, .ord = 1, .p2p = true,
						       .rtr = IWX_RTR_READ | IWX_RTR_SEND };
	struct iwx_conn_opts bo = { .local = *p->t->local, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req;
	uint8_t f[64];
	ssize_t n;

	bo.local.rtr = IWX_RTR_WRITE;
	iwx_mpa_setup_request(&read_rtr, NULL, 0, &req);
	n = iwx_mpa_rr_encode(f, sizeof(f), &req);
	cr_assert_gt(n, 0);
	p->t->listen(p);
	p->t->raw_connect(p);
	p->t->raw_send(p, f, n);
	conn_pair_accept(p, &bo);
	conn_pair_drive_one(p, p->b);
	cr_assert_eq(p->b->state, IWX_CONN_REQUEST_IN);
	cr_assert_eq(iwx_conn_answer(p->b, &bo, false), -EPROTO);
	cr_assert_eq(p->b->state, IWX_CONN_REJECTED);
	cr_assert_eq(p->b->error, -EPROTO);
	cr_assert(iwx_cause_eq(p->b->cause, IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR)));
	cr_assert(p->t->closed(p->b));
	p->t->raw_recv_reject(p);
}
