/* SPDX-License-Identifier: MIT */
/*
 * iwxd's event loop: the descriptors it waits on (epoll), each with the function that
 * serves it; the earliest deadline of its timers; identifiers for what the daemon makes.
 * The daemon's modules use these services; iwxd.c decides when the loop may sleep.
 */
#ifndef IWXD_LOOP_H
#define IWXD_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

struct iwxd;

/*
 * Something the loop waits on: fn runs with the epoll events of fd; or, for what has no
 * descriptor (usrsctp's sockets), with EPOLLIN once watch_ready said so.
 */
struct watch {
	int		fd;
	void		(*fn)(struct iwxd *d, struct watch *w, uint32_t events);
	bool		ready;		/* on the loop's ready list */
	bool		first;		/* watch_add_first's */
	struct watch	*ready_next;
};

/*
 * A deadline kept by the loop, in a heap ordered by it: fn runs at the first turn at or
 * after at_ms (loop_timers_run), however many others wait.
 */
struct timer {
	uint64_t	at_ms;
	uint32_t	pos;		/* its place in the heap + 1; 0: not set */
	void		(*fn)(struct iwxd *d, struct timer *t, uint64_t now);
};

struct loop {
	int			epfd;
	int			first_epfd;	/* watch_add_first's, itself watched (first_w) in epfd */
	struct watch		first_w;
	bool			behind;		/* the last wait had more ready than it took */
	uint64_t		due_ms;		/* the earliest deadline asked for this turn */
	struct timer		**heap;		/* the timers set, earliest first */
	uint32_t		nheap, ntimers;	/* set; made (the heap has room for each) */
	uint32_t		heap_cap;
	uint32_t		next_id;
	bool			ids_wrapped;	/* next_id went round: an id may be held still */
	bool			(*id_in_use)(const struct loop *l, uint32_t id);
	uint64_t		next_ident;
	struct epoll_event	*batch;		/* the events being dispatched: watch_del scrubs them */
	int			batch_n;
	struct epoll_event	*first_batch;	/* ... and first_epfd's */
	int			first_batch_n;
	struct watch		*ready;		/* watch_ready's, to run at the next dispatch */
	struct watch		*running;	/* ... those of this dispatch not run yet */
};

/* id_in_use: does a live object hold id? (loop_new_id asks, once ids have wrapped) */
int loop_init(struct loop *l, bool (*id_in_use)(const struct loop *l, uint32_t id));
void loop_fini(struct loop *l);

int watch_add(struct loop *l, struct watch *w, uint32_t events);
/*
 * As watch_add, for what must not wait behind many others (the clients' sockets): epoll
 * hands out what is ready oldest first, and a client's request that came after thousands
 * of connections' events (all closing at once) waited for each of them. Once a wait takes
 * fewer than were ready, these run first at the next dispatch.
 */
int watch_add_first(struct loop *l, struct watch *w, uint32_t events);
void watch_mod(struct loop *l, struct watch *w, uint32_t events);
/* Stop watching; also forget w's events not yet dispatched, as w is about to go. */
void watch_del(struct loop *l, struct watch *w);

/* Run w (EPOLLIN) at the next dispatch, once however often this is called before. */
void watch_ready(struct loop *l, struct watch *w);

/* A new turn of timers: nothing is due before now + idle_ms unless loop_due says so. */
void loop_timers_begin(struct loop *l, uint64_t now, uint64_t idle_ms);
/* Something must run again at at_ms: the loop sleeps no longer than that. */
void loop_due(struct loop *l, uint64_t at_ms);

/* A timer that runs fn once set: 0, or -ENOMEM (its room in the heap is made now). */
int timer_init(struct loop *l, struct timer *t,
	       void (*fn)(struct iwxd *d, struct timer *t, uint64_t now));
/* The timer goes, set or not. */
void timer_fini(struct loop *l, struct timer *t);
/* Run t's fn at at_ms (0: not at all), whenever it was set for before. */
void timer_set(struct loop *l, struct timer *t, uint64_t at_ms);
/* Run the timers due by now (each once: one that sets itself again waits for the next turn); the next is loop_due. */
void loop_timers_run(struct loop *l, struct iwxd *d, uint64_t now);

/*
 * Wait for events, at most until the earliest deadline (or not at all unless may_sleep),
 * and run each ready watch's fn with d. Returns how many events came, or -errno.
 */
int loop_dispatch(struct loop *l, struct iwxd *d, bool may_sleep);

/*
 * An identifier for a new object (queue, listener, set-up), as requests name it: never 0,
 * and never one a live object holds, though the counter wraps.
 */
uint32_t loop_new_id(struct loop *l);

/*
 * A new client's identity, which owns its memory: never one an earlier client had
 * (2^64 of them would take longer than iwxd runs), unlike 32-bit ids.
 */
uint64_t loop_new_ident(struct loop *l);

#endif /* IWXD_LOOP_H */
