// SPDX-License-Identifier: MIT
/*
 * iwxd's loop (control/iwxd/loop.c): the 32-bit ids that requests name queues, listeners
 * and connection requests by are never 0 and never one a live object holds, past the
 * counter's wrap too; a client's identity never repeats; timers run by deadline; what
 * must not wait (watch_add_first) is served before a backlog of other events.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

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

#define BACKLOG	512	/* connections, each ready (a close: readable until it goes): 8 waits' worth */

static unsigned runs_backlog, runs_client, backlog_at_client;

static void on_backlog(struct iwxd *d, struct watch *w, uint32_t events)
{
	(void)d, (void)w, (void)events;
	runs_backlog++;
}

static void on_client(struct iwxd *d, struct watch *w, uint32_t events)
{
	uint64_t v;

	(void)d, (void)events;
	cr_assert_eq(read(w->fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	if (!runs_client++)
		backlog_at_client = runs_backlog;
}

/*
 * A client's request that comes after hundreds of connections' events is served within
 * two dispatches, not after all of them (epoll hands out the oldest first: a client then
 * waited for every connection closing at once, and its library gave up after 10 s).
 */
Test(loop, a_client_is_served_before_a_backlog_of_connections)
{
	static struct watch backlog[BACKLOG];
	struct watch client = { .fn = on_client };
	int dispatches = 0;

	runs_backlog = runs_client = 0;
	for (int i = 0; i < BACKLOG; i++) {
		backlog[i] = (struct watch){ .fd = eventfd(1, EFD_CLOEXEC), .fn = on_backlog };
		cr_assert_geq(backlog[i].fd, 0, "%m");
		cr_assert_eq(watch_add(&l, &backlog[i], EPOLLIN), 0, "%m");
	}
	client.fd = eventfd(0, EFD_CLOEXEC);
	cr_assert_eq(watch_add_first(&l, &client, EPOLLIN), 0, "%m");
	cr_assert_eq(eventfd_write(client.fd, 1), 0);
	while (!runs_client && dispatches++ < BACKLOG)
		cr_assert_geq(loop_dispatch(&l, NULL, false), 0);
	cr_assert_eq(runs_client, 1);
	cr_assert_leq(dispatches, 2, "the client waited %d dispatches, behind %u connections' events",
		      dispatches, backlog_at_client);
	cr_assert_lt(backlog_at_client, BACKLOG);
	/* and the backlog is served on, every one of them */
	while (runs_backlog < 2 * BACKLOG && dispatches++ < 4 * BACKLOG)
		cr_assert_geq(loop_dispatch(&l, NULL, false), 0);
	cr_assert_geq(runs_backlog, 2 * BACKLOG, "each connection again and again (level-triggered)");
	watch_del(&l, &client);
	close(client.fd);
	for (int i = 0; i < BACKLOG; i++) {
		watch_del(&l, &backlog[i]);
		close(backlog[i].fd);
	}
}
