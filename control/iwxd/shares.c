// SPDX-License-Identifier: MIT
/*
 * Fair shares (shares.h).
 *
 * Without taking back what a user holds (its memory is mapped by its programs, its
 * clients are connected), a share guaranteed to a user who comes later is a share kept
 * free for it. Half of each total is kept this way: each of up to --users users may count
 * on total / (2 x --users) of it, whenever it comes; the other half, and what users do not
 * use of their guaranteed part, is anyone's while it lasts (each user's ceiling aside:
 * --memory-per-user, --max-clients-per-user). Dividing by the users present instead
 * (total / (present + 1)) guarantees nothing to the third user to come after two took
 * their share, as nothing is given back. A user beyond --users is guaranteed nothing, and
 * root is held to none of it (it is the host's): both take what is free.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "shares.h"

static const char *const names[SHARE_N] = {
	[SHARE_MEMORY] = "bytes of --arena-total", [SHARE_CLIENTS] = "clients of --max-clients",
	[SHARE_FP_CONNS] = "connections the fast path follows",
	[SHARE_FP_MEMS] = "memories the fast path reaches",
	[SHARE_FP_STAGS] = "STags the fast path places through",
};

static uint64_t held(const struct user *u, enum share s)
{
	switch (s) {
	case SHARE_MEMORY:
		return u->bytes;
	case SHARE_CLIENTS:
		return u->clients;
	default:
		return u->fp[s - SHARE_FP_FIRST];
	}
}

uint64_t share_guaranteed(const struct iwxd *d, uint64_t total)
{
	return total / (2 * d->o.max[LIMIT_USERS]);
}

/* What is kept for users other than u: their unused guaranteed parts, and those of users to come. */
static uint64_t kept_for_others(const struct iwxd *d, const struct user *u, enum share s,
				uint64_t each)
{
	uint64_t kept = 0, others = 0;

	for (const struct user *x = d->users; x; x = x->next) {
		if (x == u || !x->uid)
			continue;
		others++;
		if (held(x, s) < each)
			kept += each - held(x, s);
	}
	if (others + 1 < d->o.max[LIMIT_USERS])
		kept += (d->o.max[LIMIT_USERS] - others - 1) * each;
	return kept;
}

bool share_room(const struct iwxd *d, struct user *u, enum share s, uint64_t n,
		uint64_t used, uint64_t total)
{
	uint64_t each = share_guaranteed(d, total), free = used < total ? total - used : 0;

	if (n > free || (u->uid && held(u, s) + n > each &&
			 free - n < kept_for_others(d, u, s, each)))
		return false;
	u->share_warned &= ~(1u << s);
	return true;
}

void share_refuse(const struct iwxd *d, struct client *c, enum share s, uint64_t total,
		  const char *action)
{
	struct user *u = c->user;
	char why[sizeof(c->why)];

	snprintf(why, sizeof(why), "user %u (client %u, pid %d): holds %" PRIu64 " %s, beyond the %"
		 PRIu64 " each of --users %" PRIu64 " is guaranteed: what is free is kept for other "
		 "users", (unsigned)u->uid, c->id, (int)c->pid, held(u, s), names[s],
		 share_guaranteed(d, total), d->o.max[LIMIT_USERS]);
	if (s < SHARE_FP_FIRST)	/* a request fails: its reply says why */
		memcpy(c->why, why, sizeof(why));
	if (!(u->share_warned & 1u << s))
		log_warn("%s: %s", why, action);
	u->share_warned |= 1u << s;
}
