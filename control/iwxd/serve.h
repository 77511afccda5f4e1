/* SPDX-License-Identifier: MIT */
/* iwxd serving: set up, the loop's turns, torn down (serve.c); main() is iwxd.c's. */
#ifndef IWXD_SERVE_H
#define IWXD_SERVE_H

#include <stdbool.h>

struct iwxd;

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
