// SPDX-License-Identifier: MIT
/* iwxd's event loop: epoll watches, the deadline of the timers, identifiers (loop.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "conn.h"
#include "loop.h"
#include "util/clock.h"
#include "util/container_of.h"

#define MAX_EVENTS	64

static void run_first(struct iwxd *d, struct watch *w, uint32_t events);

int loop_init(struct loop *l, bool (*id_in_use)(const struct loop *l, uint32_t id))
{
	int err;

	l->id_in_use = id_in_use;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->first_epfd = epoll_create1(EPOLL_CLOEXEC);
	l->first_w = (struct watch){ .fd = l->first_epfd, .fn = run_first };
	if (l->epfd < 0 || l->first_epfd < 0 || watch_add(l, &l->first_w, EPOLLIN)) {
		err = -errno;
		loop_fini(l);
		return err;
	}
	return 0;
}

void loop_fini(struct loop *l)
{
	free(l->heap);
	l->heap = NULL;
	l->nheap = l->ntimers = l->heap_cap = 0;
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->first_epfd >= 0)
		close(l->first_epfd);
	l->epfd = l->first_epfd = -1;
}

static int epfd_of(const struct loop *l, const struct watch *w)
{
	return w->first ? l->first_epfd : l->epfd;
}

int watch_add(struct loop *l, struct watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	w->first = false;
	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, w->fd, &ev) ? -errno : 0;
}

int watch_add_first(struct loop *l, struct watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	w->first = true;
	return epoll_ctl(l->first_epfd, EPOLL_CTL_ADD, w->fd, &ev) ? -errno : 0;
}

void watch_mod(struct loop *l, struct watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	epoll_ctl(epfd_of(l, w), EPOLL_CTL_MOD, w->fd, &ev);
}

void watch_del(struct loop *l, struct watch *w)
{
	if (w->fd >= 0)
		epoll_ctl(epfd_of(l, w), EPOLL_CTL_DEL, w->fd, NULL);
	for (int i = 0; i < l->batch_n; i++)
		if (l->batch[i].data.ptr == w)
			l->batch[i].data.ptr = NULL;
	for (int i = 0; i < l->first_batch_n; i++)
		if (l->first_batch[i].data.ptr == w)
			l->first_batch[i].data.ptr = NULL;
	for (struct watch **list = &l->ready; w->ready; list = &l->running) {
		for (struct watch **p = list; *p; p = &(*p)->ready_next) {
			if (*p == w) {
				*p = w->ready_next;
				w->ready = false;
				break;
			}
		}
		if (list == &l->running)
			break;
	}
}

void watch_ready(struct loop *l, struct watch *w)
{
	if (w->ready)
		return;
	w->ready = true;
	w->ready_next = l->ready;
	l->ready = w;
}

void loop_timers_begin(struct loop *l, uint64_t now, uint64_t idle_ms)
{
	l->due_ms = now + idle_ms;
}

void loop_due(struct loop *l, uint64_t at_ms)
{
	if (at_ms < l->due_ms)
		l->due_ms = at_ms;
}

/* ---------------------------------------------------------------- timers */

static void heap_put(struct loop *l, uint32_t i, struct timer *t)
{
	l->heap[i] = t;
	t->pos = i + 1;
}

/* t, at i, goes up while it is earlier than its parent, then down while later than a child. */
static void heap_fix(struct loop *l, uint32_t i)
{
	struct timer *t = l->heap[i];

	while (i && l->heap[(i - 1) / 2]->at_ms > t->at_ms) {
		heap_put(l, i, l->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= l->nheap)
			break;
		if (c + 1 < l->nheap && l->heap[c + 1]->at_ms < l->heap[c]->at_ms)
			c++;
		if (l->heap[c]->at_ms >= t->at_ms)
			break;
		heap_put(l, i, l->heap[c]);
		i = c;
	}
	heap_put(l, i, t);
}

static void heap_remove(struct loop *l, struct timer *t)
{
	uint32_t i = t->pos - 1;
	struct timer *last = l->heap[--l->nheap];

	t->pos = 0;
	if (last == t)
		return;
	l->heap[i] = last;
	heap_fix(l, i);
}

int timer_init(struct loop *l, struct timer *t,
	       void (*fn)(struct iwxd *d, struct timer *t, uint64_t now))
{
	/* room for every timer made: setting one never fails (doubling, as they come) */
	if (l->ntimers == l->heap_cap) {
		uint32_t cap = l->heap_cap ? 2 * l->heap_cap : 64;
		struct timer **more = reallocarray(l->heap, cap, sizeof(*more));

		if (!more)
			return -ENOMEM;
		l->heap = more;
		l->heap_cap = cap;
	}
	l->ntimers++;
	*t = (struct timer){ .fn = fn };
	return 0;
}

void timer_fini(struct loop *l, struct timer *t)
{
	timer_set(l, t, 0);
	l->ntimers--;
}

void timer_set(struct loop *l, struct timer *t, uint64_t at_ms)
{
	if (!at_ms) {
		if (t->pos)
			heap_remove(l, t);
		return;
	}
	if (t->pos) {
		if (t->at_ms != at_ms) {
			t->at_ms = at_ms;
			heap_fix(l, t->pos - 1);
		}
		return;
	}
	t->at_ms = at_ms;
	l->heap[l->nheap++] = t;
	heap_fix(l, l->nheap - 1);
}

void loop_timers_run(struct loop *l, struct iwxd *d, uint64_t now)
{
	/* as many as are set now, at most: one that sets itself for now again waits a turn */
	for (uint32_t n = l->nheap; n && l->nheap && l->heap[0]->at_ms <= now; n--) {
		struct timer *t = l->heap[0];

		heap_remove(l, t);
		t->fn(d, t, now);
	}
	if (l->nheap)
		loop_due(l, l->heap[0]->at_ms);
}

/* What watch_add_first's watches have ready, now. */
static void dispatch_first(struct loop *l, struct iwxd *d)
{
	struct epoll_event ev[MAX_EVENTS];
	int n = epoll_wait(l->first_epfd, ev, MAX_EVENTS, 0);

	l->first_batch = ev;
	l->first_batch_n = n > 0 ? n : 0;
	for (int i = 0; i < l->first_batch_n; i++) {
		struct watch *w = ev[i].data.ptr;

		if (w)
			w->fn(d, w, ev[i].events);
	}
	l->first_batch_n = 0;
}

static void run_first(struct iwxd *d, struct watch *w, uint32_t events)
{
	(void)events;
	dispatch_first(container_of(w, struct loop, first_w), d);
}

int loop_dispatch(struct loop *l, struct iwxd *d, bool may_sleep)
{
	struct epoll_event ev[MAX_EVENTS];
	uint64_t now = iwx_now_ms();
	int timeout = may_sleep && !l->ready && l->due_ms > now ? (int)(l->due_ms - now) : 0;
	int n;

	if (l->behind)	/* first what must not wait, then the oldest of the rest */
		dispatch_first(l, d);
	n = epoll_wait(l->epfd, ev, MAX_EVENTS, timeout);
	if (n < 0)
		return -errno;
	l->behind = n == MAX_EVENTS;
	/* what is ready runs first; what that makes ready runs at the next dispatch */
	l->running = l->ready;
	l->ready = NULL;
	for (struct watch *w; (w = l->running);) {
		l->running = w->ready_next;
		w->ready = false;
		w->fn(d, w, EPOLLIN);
	}
	l->batch = ev;
	l->batch_n = n;
	for (int i = 0; i < l->batch_n; i++) {
		struct watch *w = ev[i].data.ptr;

		if (w)
			w->fn(d, w, ev[i].events);
	}
	l->batch_n = 0;
	return n;
}

uint32_t loop_new_id(struct loop *l)
{
	/*
	 * Until the counter wraps every id is new; after, skip those still held (they cannot
	 * all be: 2^32 live objects would take more memory than iwxd may have).
	 */
	do {
		if (!++l->next_id) {
			l->ids_wrapped = true;
			l->next_id = 1;
		}
	} while (l->ids_wrapped && l->id_in_use(l, l->next_id));
	return l->next_id;
}

uint64_t loop_new_ident(struct loop *l)
{
	return ++l->next_ident;
}
