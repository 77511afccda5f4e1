/* SPDX-License-Identifier: MIT */
/* iwxd serving: set up, the loop's turns, torn down (serve.c); main() is iwxd.c's. */
#ifndef IWXD_SERVE_H
#define IWXD_SERVE_H

#include <stdbool.h>

struct iwxd;

#define IWXD_SPIN_US	100	/* --spin-us's default */

/* An iwxd as it runs with no options (serve_setup not yet called): main() reads its
   command line over this, fuzz_ipc sets its own few. */
void serve_init(struct iwxd *d);

/* The socket at d->o.socket listening, capabilities dropped, the threads started: 0, or
   -1 with why on stderr and nothing left behind. */
int serve_setup(struct iwxd *d);

/* One turn of the loop: doorbells, ready queue pairs, timers, then what epoll has; it
   may sleep in epoll only when may_sleep (and nothing is to be done). */
void serve_turn(struct iwxd *d, bool may_sleep);

/* Turns until d->stop (a signal). */
void serve_run(struct iwxd *d);

/* Every client closed, the fast path and the threads stopped, the socket removed. */
void serve_teardown(struct iwxd *d);

#endif /* IWXD_SERVE_H */
