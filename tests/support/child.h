/* SPDX-License-Identifier: MIT */
/*
 * Child processes for tests: one that acts as another user (a group member that is not
 * root, say), and waiting for one without waiting forever.
 */
#ifndef IWX_CHILD_H
#define IWX_CHILD_H

#include <sys/types.h>

#define NOBODY		65534	/* uid nobody, gid nogroup */
#define CHILD_MS	10000	/* how long run_as waits */
#define CHILD_NO_DROP	200	/* the exit code of a child that could not become the user */

/*
 * Fork a child that drops to uid and gid (no supplementary groups), then exits with
 * fn(arg), an exit code below CHILD_NO_DROP. Its pid, or -1 if fork failed.
 */
pid_t child_as(uid_t uid, gid_t gid, int (*fn)(void *arg), void *arg);

/* Wait up to ms for pid to end: its wait status, or -1 (then it is killed). */
int child_wait(pid_t pid, int ms);

/* child_as, waited for (CHILD_MS): fn's result. The test fails if the child did not get there. */
int run_as(uid_t uid, gid_t gid, int (*fn)(void *arg), void *arg);

#endif /* IWX_CHILD_H */
