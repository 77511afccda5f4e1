/* SPDX-License-Identifier: MIT */
/*
 * Fair shares (shares.c): of what all users draw on together (memory, clients, the fast
 * path's tables), each user but root may count on a guaranteed part whenever it comes,
 * and take more only from what no other user is guaranteed.
 */
#ifndef IWXD_SHARES_H
#define IWXD_SHARES_H

#include <stdbool.h>
#include <stdint.h>

struct iwxd;
struct user;
struct client;

enum share {
	SHARE_MEMORY,		/* bytes of --arena-total: user.bytes */
	SHARE_CLIENTS,		/* clients of --max-clients: user.clients */
	SHARE_FP_CONNS,		/* connections the fast path follows: user.fp[] */
	SHARE_FP_MEMS,		/* memories it reaches */
	SHARE_FP_STAGS,		/* STags it places through */
	SHARE_N
};
#define SHARE_FP_FIRST	SHARE_FP_CONNS

/* What each user may count on of total: total / (2 x --users), rounded down. */
uint64_t share_guaranteed(const struct iwxd *d, uint64_t total);

/*
 * May u take n more of s, of which all users hold used of total? Within what it is
 * guaranteed, while there is any; beyond it, only what leaves every other user (and, up to
 * --users, every user yet to come) what it is guaranteed. Root takes what there is.
 */
bool share_room(const struct iwxd *d, struct user *u, enum share s, uint64_t n,
		uint64_t used, uint64_t total);
/*
 * Log, once until its user has room again, that c was refused beyond its share of s; for
 * memory and clients, what c's error reply says why (client.why).
 */
void share_refuse(const struct iwxd *d, struct client *c, enum share s, uint64_t total,
		  const char *action);

#endif /* IWXD_SHARES_H */
