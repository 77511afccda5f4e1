// SPDX-License-Identifier: MIT
/* Two engine queue pairs over a transport fixture: set-up, running, tear-down. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "qp_pair.h"
#include "util/clock.h"

/* What both ends ask; SCTP's set-up takes only IRD and ORD of it (conn_sctp.h). */
static const struct iwx_mpa_local mpa_local = {
	.rev = 2, .crc = true, .ird = 16, .ord = 16,
};

static void make_qp(struct qp_end *e)
{
	int64_t stag;

	e->mem = iwx_mem_new();
	cr_assert_not_null(e->mem);
	e->pd = iwx_mem_pd_alloc(e->mem, QP_OWNER);
	e->buf = calloc(1, QP_BUF_LEN);
	cr_assert_not_null(e->buf);
	stag = iwx_mem_reg(e->mem, QP_OWNER, e->pd, e->buf, QP_BUF_LEN, (uintptr_t)e->buf,
			   IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_READ | IWX_ACCESS_REMOTE_WRITE);
	cr_assert_gt(stag, 0, "iwx_mem_reg: %s", strerror((int)-stag));
	e->stag = stag;
	e->qp = engine_qp_create(iwx_conn_llp_new(e->conn), &e->conn->agreed, e->mem, e->pd, NULL);
	cr_assert_not_null(e->qp);
}

/* Both set-ups driven from this thread until ESTABLISHED, b accepting what a asks. */
static void establish(struct qp_pair *p)
{
	struct iwx_conn_opts o = { .local = mpa_local, .timeout_ms = 5000,
				   .zerocopy_min = p->zerocopy_min };
	uint64_t deadline = iwx_now_ms() + 10000;

	p->t->start(p, &o);
	while (p->a.conn->state != IWX_CONN_ESTABLISHED || !p->accepted ||
	       p->b.conn->state != IWX_CONN_ESTABLISHED) {
		uint64_t now = iwx_now_ms();

		cr_assert_lt(now, deadline, "set-up did not finish");
		iwx_conn_step(p->a.conn, now);
		if (!p->accepted) {
			p->accepted = p->t->accept(p, &o) == 0;
		} else {
			iwx_conn_step(p->b.conn, now);
			if (p->b.conn->state == IWX_CONN_REQUEST_IN)
				cr_assert_eq(iwx_conn_answer(p->b.conn, &o, false), 0);
			cr_assert_neq(p->b.conn->state, IWX_CONN_FAILED, "b's set-up failed: %s",
				      strerror(-p->b.conn->error));
		}
		cr_assert_neq(p->a.conn->state, IWX_CONN_FAILED, "a's set-up failed: %s",
			      strerror(-p->a.conn->error));
		qp_pair_wait(p, 10);
	}
}

void qp_pair_connect(struct qp_pair *p)
{
	establish(p);
	p->t->up(p);
	make_qp(&p->a);
	make_qp(&p->b);
}

void qp_pair_step(struct qp_pair *p)
{
	bool want_write[2];

	engine_qp_progress(p->a.qp, &want_write[0]);
	engine_qp_progress(p->b.qp, &want_write[1]);
	p->t->wait(p, 1, want_write);
}

void qp_pair_wait(struct qp_pair *p, int max_ms)
{
	static const bool no_write[2];

	p->t->wait(p, max_ms, no_write);
}

void qp_pair_run_until(struct qp_pair *p, int a_wcs, int b_wcs, struct iwx_wc *wa,
		       struct iwx_wc *wb)
{
	int got_a = 0, got_b = 0;
	uint64_t deadline = iwx_now_ms() + 40000;

	for (;;) {
		got_a += engine_qp_poll(p->a.qp, wa + got_a, a_wcs - got_a);
		got_b += engine_qp_poll(p->b.qp, wb + got_b, b_wcs - got_b);
		if (got_a == a_wcs && got_b == b_wcs)
			return;
		cr_assert_lt(iwx_now_ms(), deadline, "completions: a %d/%d b %d/%d", got_a, a_wcs,
			     got_b, b_wcs);
		qp_pair_step(p);
	}
}

void qp_pair_run_until_stopped(struct qp_pair *p)
{
	uint64_t deadline = iwx_now_ms() + 10000;

	while (engine_qp_get_state(p->a.qp) != ENGINE_QP_ERROR ||
	       engine_qp_get_state(p->b.qp) != ENGINE_QP_ERROR) {
		cr_assert_lt(iwx_now_ms(), deadline, "states: a %d b %d",
			     engine_qp_get_state(p->a.qp), engine_qp_get_state(p->b.qp));
		qp_pair_step(p);
	}
}

void qp_pair_fini(struct qp_pair *p)
{
	struct qp_end *ends[] = { &p->a, &p->b };

	for (int i = 0; i < 2; i++) {
		if (ends[i]->qp)
			engine_qp_destroy(ends[i]->qp);	/* closes the socket */
		else
			iwx_conn_close(ends[i]->conn);
		iwx_mem_free(ends[i]->mem);
		free(ends[i]->buf);
		memset(ends[i], 0, sizeof(*ends[i]));
	}
	p->accepted = false;
	if (p->t)
		p->t->stop(p);
}

struct iwx_sge qp_sge(const struct qp_end *e, uint64_t off, uint32_t len)
{
	return (struct iwx_sge){ .addr = (uintptr_t)e->buf + off, .len = len, .lkey = e->stag };
}

void qp_assert_error(const struct qp_end *e, struct iwx_term_cause want, bool local)
{
	struct iwx_term_cause c;
	bool l;

	cr_assert(engine_qp_error(e->qp, &c, &l), "queue pair in error");
	cr_assert(iwx_cause_eq(c, want), "cause %u/%u/0x%02x, want %u/%u/0x%02x", c.layer, c.etype,
		  c.ecode, want.layer, want.etype, want.ecode);
	cr_assert_eq(l, local);
}
