// SPDX-License-Identifier: MIT
/*
 * Fair shares (control/iwxd/shares.c): whoever came first, each of up to --users users
 * gets the part it is guaranteed (total / (2 x users)) whenever it comes; a user alone
 * may borrow what is not kept for the others; root takes what is free. Users here take
 * a count of one share (the fast path's 64 followed connections) one at a time, as
 * conn_add does, until refused.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "daemon.h"
#include "shares.h"

#define USERS_MAX	40

static struct iwxd d;
static struct user users[USERS_MAX];
static uint64_t used;

static void setup(uint64_t nusers)
{
	memset(&d, 0, sizeof(d));
	memset(users, 0, sizeof(users));
	used = 0;
	d.o.max[LIMIT_USERS] = nusers;
}

/* User i (uid 1000 + i; 0: root) comes, as user_get adds it. */
static struct user *come(int i, uid_t uid)
{
	struct user *u = &users[i];

	u->uid = uid;
	u->next = d.users;
	d.users = u;
	return u;
}

/* u takes one at a time of total until refused: how many it got. */
static uint64_t take_all(struct user *u, uint64_t total)
{
	uint64_t got = 0;

	while (share_room(&d, u, SHARE_FP_CONNS, 1, used, total)) {
		u->fp[SHARE_FP_CONNS - SHARE_FP_FIRST]++;
		used++;
		got++;
	}
	return got;
}

TestSuite(shares);

Test(shares, twenty_users_one_after_the_other_each_get_theirs)
{
	uint64_t got[20];

	setup(32);	/* each guaranteed 64 / 64 = 1 */
	for (int i = 0; i < 20; i++)
		got[i] = take_all(come(i, 1000 + i), 64);
	cr_expect_eq(got[0], 64 - 31, "alone, it borrows all but what 31 others are kept");
	for (int i = 1; i < 20; i++)
		cr_expect_geq(got[i], 1, "user %d: %lu", i, (unsigned long)got[i]);
	cr_expect_geq(take_all(come(20, 2000), 64), 1, "and one more, late");
}

Test(shares, guaranteed_part_is_there_whatever_the_others_took)
{
	setup(2);	/* each guaranteed 64 / 4 = 16 */
	cr_expect_eq(take_all(come(0, 1000), 64), 48, "the other user's 16 are kept");
	cr_expect_eq(take_all(come(1, 1001), 64), 16, "the second gets its 16, no more");
	cr_expect_eq(used, 64);
}

Test(shares, what_a_present_user_does_not_use_is_kept_for_it)
{
	struct user *a, *b;

	setup(2);
	a = come(0, 1000);
	b = come(1, 1001);
	cr_expect(share_room(&d, b, SHARE_FP_CONNS, 1, used, 64));	/* b present, holding none */
	cr_expect_eq(take_all(a, 64), 48, "b's 16 stay free while b holds none of them");
	b->fp[0] = 10;
	used += 10;
	cr_expect_eq(take_all(b, 64), 6, "b may take up to its 16 (10 + 6)");
	cr_expect_not(share_room(&d, a, SHARE_FP_CONNS, 1, used, 64), "nothing free");
}

Test(shares, beyond_users_first_come_first_served)
{
	setup(1);	/* one user guaranteed 32 of 64 */
	cr_expect_eq(take_all(come(0, 1000), 64), 64, "none kept for a user yet to come");
	cr_expect_eq(take_all(come(1, 1001), 64), 0, "a second is guaranteed nothing");
}

Test(shares, root_takes_what_is_free_and_is_kept_nothing)
{
	setup(32);
	cr_expect_eq(take_all(come(0, 0), 64), 64, "root: the host's");
	setup(2);
	come(0, 0);
	cr_expect_eq(take_all(come(1, 1000), 64), 48, "root's presence keeps nothing for it");
}

Test(shares, several_at_once_within_or_beyond)
{
	struct user *a;

	setup(2);
	a = come(0, 1000);
	cr_expect(share_room(&d, a, SHARE_FP_CONNS, 48, used, 64), "48: all but the other's 16");
	cr_expect_not(share_room(&d, a, SHARE_FP_CONNS, 49, used, 64));
	cr_expect_not(share_room(&d, a, SHARE_FP_CONNS, 65, used, 64), "more than there is");
	cr_expect(share_room(&d, a, SHARE_MEMORY, 3ull << 30, 0, 4ull << 30),
		  "memory alike: 3 GiB of 4, 1 GiB kept for the other");
	cr_expect_not(share_room(&d, a, SHARE_MEMORY, (3ull << 30) + 1, 0, 4ull << 30));
}
