// SPDX-License-Identifier: MIT
/*
 * iwxd's identifiers (control/iwxd/loop.c): the 32-bit ids that requests name queues,
 * listeners and connection requests by are never 0 and never one a live object holds,
 * past the counter's wrap too; a client's identity never repeats.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "loop.h"

#define LIVE_MAX	4096

static uint32_t live[LIVE_MAX];
static unsigned nlive;

static bool in_use(const struct loop *l, uint32_t id)
{
	(void)l;
	for (unsigned i = 0; i < nlive; i++)
		if (live[i] == id)
			return true;
	return false;
}

/* A new id, checked against the live ones, and now live itself. */
static uint32_t new_id(struct loop *l)
{
	uint32_t id = loop_new_id(l);

	cr_assert_neq(id, 0, "0 names nothing");
	cr_assert_not(in_use(l, id), "id %u is live already", id);
	cr_assert_lt(nlive, LIVE_MAX);
	live[nlive++] = id;
	return id;
}

static void drop(unsigned i)
{
	live[i] = live[--nlive];
}

static struct loop l;

static void setup(void)
{
	nlive = 0;
	cr_assert_eq(loop_init(&l, in_use), 0);
}

static void teardown(void)
{
	loop_fini(&l);
}

TestSuite(loop, .init = setup, .fini = teardown);

Test(loop, ids_past_the_wrap_skip_live_ones)
{
	uint32_t first = new_id(&l);

	/* objects made early on live on while 2^32 more come and go */
	cr_assert_eq(first, 1);
	cr_assert_eq(new_id(&l), 2);
	l.next_id = 4;
	cr_assert_eq(new_id(&l), 5);
	l.next_id = UINT32_MAX - 2;
	cr_assert_eq(new_id(&l), UINT32_MAX - 1);
	cr_assert_eq(new_id(&l), UINT32_MAX);
	/* the wrap: 0 is skipped, and 1 and 2 are held still; 5 as well */
	cr_assert_eq(new_id(&l), 3);
	cr_assert_eq(new_id(&l), 4);
	cr_assert_eq(new_id(&l), 6);
	drop(0);	/* 1 goes: free to be had again once the counter comes round */
	l.next_id = UINT32_MAX - 1;
	cr_assert_eq(new_id(&l), 1, "past UINT32_MAX (live) and 0");
}

Test(loop, ids_never_live_through_the_wrap_under_churn)
{
	srand(1);
	/* ids of long-lived objects, spread over what the counter gives after the wrap */
	for (unsigned i = 0; i < 1000; i++)
		new_id(&l);
	for (unsigned i = 0; i < 500; i++)
		drop(rand() % nlive);
	l.next_id = UINT32_MAX - 2000;
	for (unsigned i = 0; i < 20000; i++) {
		new_id(&l);
		if (nlive > 1500)
			drop(rand() % nlive);
	}
}

Test(loop, identities_go_beyond_32_bits)
{
	l.next_ident = UINT32_MAX;
	cr_assert_eq(loop_new_ident(&l), 1ull << 32);
	cr_assert_eq(loop_new_ident(&l), (1ull << 32) + 1);
}

/* ------------------------------------------------------------- timers */

#define NTIMERS		200

static struct timer timers[NTIMERS];
static uint64_t ran_at[NTIMERS];
static unsigned nran;
static uint64_t order[NTIMERS];

static void on_timer(struct iwxd *d, struct timer *t, uint64_t now)
{
	(void)d;
	ran_at[t - timers] = now;
	order[nran++] = t->at_ms;
}

Test(loop, timers_run_by_deadline_however_many)
{
	srand(2);
	for (unsigned i = 0; i < NTIMERS; i++) {
		cr_assert_eq(timer_init(&l, &timers[i], on_timer), 0);
		timer_set(&l, &timers[i], 1000 + (uint64_t)(rand() % 500));
	}
	/* moved later, earlier, and taken off: the heap keeps its order */
	for (unsigned i = 0; i < NTIMERS; i += 3)
		timer_set(&l, &timers[i], 1000 + (uint64_t)(rand() % 500));
	for (unsigned i = 1; i < NTIMERS; i += 7)
		timer_set(&l, &timers[i], 0);
	loop_timers_begin(&l, 999, 60000);
	loop_timers_run(&l, NULL, 999);
	cr_assert_eq(nran, 0, "none is due before its time");
	cr_assert_leq(l.due_ms, 1499, "the loop sleeps until the earliest");
	loop_timers_run(&l, NULL, 1250);
	for (unsigned i = 1; i < nran; i++)
		cr_assert_leq(order[i - 1], order[i], "earliest first");
	for (unsigned i = 0; i < NTIMERS; i++) {
		bool off = i % 7 == 1;

		cr_assert_eq(ran_at[i] != 0, !off && timers[i].at_ms <= 1250,
			     "timer %u (at %llu) ran iff due and set", i,
			     (unsigned long long)timers[i].at_ms);
	}
	loop_timers_run(&l, NULL, 2000);
	for (unsigned i = 0; i < NTIMERS; i++) {
		cr_assert_eq(ran_at[i] != 0, i % 7 != 1, "timer %u", i);
		timer_fini(&l, &timers[i]);
	}
	cr_assert_eq(l.nheap, 0);
}
