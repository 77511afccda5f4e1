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
