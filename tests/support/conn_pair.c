// SPDX-License-Identifier: MIT
/* Both ends of a set-up over a transport fixture, stepped from the test's thread. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "conn_pair.h"
#include "stall.h"
#include "util/clock.h"

static bool final(const struct iwx_conn *c)
{
	return c->state == IWX_CONN_ESTABLISHED || c->state == IWX_CONN_REJECTED ||
	       c->state == IWX_CONN_FAILED;
}

int conn_pair_connect(struct conn_pair *p, const struct iwx_conn_opts *o)
{
	int err = p->t->connect(p, o);

	p->connected = err == 0;
	return err;
}

void conn_pair_accept(struct conn_pair *p, const struct iwx_conn_opts *o)
{
	uint64_t end = iwx_now_ms() + STALL_MS;
	int n;

	while ((n = p->t->accept(p, o)) == -EAGAIN) {
		cr_assert_lt(iwx_now_ms(), end, "no connection to accept");
		p->t->wait(p);
	}
	cr_assert_eq(n, 0, "accept: %s", strerror(-n));
	p->accepted = true;
}

/* b answers, then (early) sends its 4 bytes. */
static void answer(struct conn_pair *p)
{
	p->answer_ret = iwx_conn_answer(p->b, &p->b_opts, p->reject);
	p->answered = true;
	if (p->early && p->b->state == IWX_CONN_ESTABLISHED)
		p->t->send_early(p, p->early);
}

void conn_pair_drive(struct conn_pair *p)
{
	uint64_t now, end = iwx_now_ms() + STALL_MS;
	int n;

	for (;;) {
		now = iwx_now_ms();
		if (!p->accepted) {
			n = p->t->accept(p, &p->b_opts);
			cr_assert(n == 0 || n == -EAGAIN, "accept: %s", strerror(-n));
			p->accepted = n == 0;
		}
		if (p->accepted) {
			iwx_conn_step(p->b, now);
			if (p->b->state == IWX_CONN_REQUEST_IN && !p->answered && !p->silent)
				answer(p);
		}
		iwx_conn_step(p->a, now);
		if (final(p->a) && p->accepted &&
		    (final(p->b) || (p->silent && p->b->state == IWX_CONN_REQUEST_IN)))
			break;
		cr_assert_lt(now, end, "set-up hangs: initiator %d, responder %d", p->a->state,
			     p->accepted ? (int)p->b->state : -1);
		p->t->wait(p);
	}
}

void conn_pair_drive_one(struct conn_pair *p, struct iwx_conn *c)
{
	uint64_t end = iwx_now_ms() + STALL_MS;

	while (iwx_conn_step(c, iwx_now_ms()) == -EAGAIN) {
		cr_assert_lt(iwx_now_ms(), end, "stuck in state %d", c->state);
		p->t->wait(p);
	}
}

void conn_assert_limits(const struct conn_pair *p, uint16_t a_ird, uint16_t a_ord, uint16_t b_ird,
			uint16_t b_ord)
{
	cr_assert_eq(p->a->agreed.ird, a_ird);
	cr_assert_eq(p->a->agreed.ord, a_ord);
	cr_assert_eq(p->b->agreed.ird, b_ird);
	cr_assert_eq(p->b->agreed.ord, b_ord);
}

void conn_assert_private_data(const struct conn_pair *p, const void *a_pd, uint16_t a_len,
			      const void *b_pd, uint16_t b_len)
{
	cr_assert_eq(p->b->peer_pd_len, a_len);
	cr_assert_arr_eq(p->b->peer_pd, a_pd, a_len);
	cr_assert_eq(p->a->peer_pd_len, b_len);
	cr_assert_arr_eq(p->a->peer_pd, b_pd, b_len);
}

void conn_assert_own_timeout(uint64_t t0)
{
	uint64_t dt = iwx_now_ms() - t0;

	cr_assert_geq(dt, CONN_SHORT_MS - 5);
	/* its own time-out, not the default 10 s (how late it fired is the machine's pace) */
	cr_assert_lt(dt, CONN_BOUND_MS, "timed out after %lu ms", (unsigned long)dt);
}

void conn_pair_fini(struct conn_pair *p)
{
	if (p->connected)
		iwx_conn_close(p->a);
	if (p->accepted)
		iwx_conn_close(p->b);
}
