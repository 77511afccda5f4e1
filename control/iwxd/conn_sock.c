// SPDX-License-Identifier: MIT
/* A connection's socket in iwxd's loop, whatever its transport (conn_sock.h). */
#include "conn_sock.h"
#include "daemon.h"

static bool held(const struct conn_sock *s)
{
	return s->w.fd >= 0 || s->h;
}

void conn_sock_init(struct conn_sock *s, const struct transport *t,
		    void (*fn)(struct iwxd *d, struct watch *w, uint32_t events))
{
	s->w.fd = -1;
	s->w.fn = fn;
	s->h = NULL;
	s->events = 0;
	s->t = t;
}

void conn_sock_take(struct iwxd *d, struct conn_sock *s, const struct transport *t, const struct iwx_conn *c)
{
	s->t = t;
	t->sock_of(c, &s->w.fd, &s->h);
	if (s->h && t->hold)
		t->hold(d);
}

int conn_sock_interest(struct iwxd *d, struct conn_sock *s, uint32_t events)
{
	int err = 0;

	if (events == s->events || s->w.fd < 0)
		return 0;
	if (!s->events)
		err = watch_add(&d->loop, &s->w, events);
	else if (!events)
		watch_del(&d->loop, &s->w);
	else
		watch_mod(&d->loop, &s->w, events);
	if (!err)
		s->events = events;
	return err;
}

int conn_sock_watch(struct iwxd *d, struct conn_sock *s)
{
	return s->t->watch(d, s);
}

/* Forget s's socket untouched if the set-up c closed it (the kernel took it off epoll). */
static void closed_under(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c, int *fd, void **h)
{
	s->t->sock_of(c, fd, h);
	if (held(s) && (s->h != *h || s->w.fd != *fd)) {
		s->w.fd = -1;
		watch_del(&d->loop, &s->w);	/* the loop's lists only */
		conn_sock_forget(d, s);
	}
}

int conn_sock_follow(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c)
{
	int fd;
	void *h;

	closed_under(d, s, c, &fd, &h);
	if (!held(s) && (fd >= 0 || h)) {
		conn_sock_take(d, s, s->t, c);
		if (!s->t->setup_events)
			return conn_sock_watch(d, s);	/* its stack says whenever anything changed */
	}
	return s->t->setup_events ? conn_sock_interest(d, s, s->t->setup_events(c)) : 0;
}

void conn_sock_abort_on_close(struct conn_sock *s)
{
	if (held(s))
		s->t->abort_on_close(s);
}

void conn_sock_forget(struct iwxd *d, struct conn_sock *s)
{
	if (s->h && s->t->release)
		s->t->release(d);
	s->h = NULL;
	s->w.fd = -1;
	s->events = 0;
}

void conn_sock_drop(struct iwxd *d, struct conn_sock *s)
{
	if (held(s))
		s->t->unwatch(d, s);
	conn_sock_forget(d, s);
}

void conn_sock_let_go(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c)
{
	int fd;
	void *h;

	closed_under(d, s, c, &fd, &h);
	conn_sock_drop(d, s);
}

void conn_sock_linger(struct iwxd *d, struct user *u, const struct conn_sock *s)
{
	if (held(s) && s->t->linger)
		s->t->linger(d, u, s);
}
