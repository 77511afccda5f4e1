// SPDX-License-Identifier: MIT
/* A queue pair's socket in iwxd's loop: TCP's descriptor on epoll, or SCTP's association (conn_sock.h). */
#include <sys/epoll.h>
#include <sys/socket.h>

#include <usrsctp.h>

#include "conn_sock.h"
#include "daemon.h"
#include "sctp_io.h"

void conn_sock_init(struct conn_sock *s, void (*fn)(struct iwxd *d, struct watch *w, uint32_t events))
{
	s->w.fd = -1;
	s->w.fn = fn;
	s->so = NULL;
	s->events = 0;
}

void conn_sock_take(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c, bool sctp)
{
	if (sctp) {
		s->so = c->sctp.so;
		sctp_io_hold(d);
	} else {
		s->w.fd = c->tcp.fd;
	}
}

int conn_sock_watch(struct iwxd *d, struct conn_sock *s)
{
	int err;

	if (s->so) {
		sctp_io_watch(d, s->so, &s->w);
		return 0;
	}
	err = watch_add(&d->loop, &s->w, EPOLLIN);
	s->events = err ? 0 : EPOLLIN;
	return err;
}

void conn_sock_interest(struct iwxd *d, struct conn_sock *s, uint32_t events)
{
	if (events == s->events || s->so)
		return;
	if (!s->events)
		watch_add(&d->loop, &s->w, events);
	else if (!events)
		watch_del(&d->loop, &s->w);
	else
		watch_mod(&d->loop, &s->w, events);
	s->events = events;
}

void conn_sock_abort_on_close(struct conn_sock *s)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (s->so)
		usrsctp_setsockopt(s->so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	else
		setsockopt(s->w.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

void conn_sock_forget(struct iwxd *d, struct conn_sock *s)
{
	if (s->so)
		sctp_io_release(d);
	s->so = NULL;
	s->w.fd = -1;
	s->events = 0;
}

void conn_sock_drop(struct iwxd *d, struct conn_sock *s)
{
	if (s->so)
		sctp_io_unwatch(d, s->so, &s->w);
	else
		conn_sock_interest(d, s, 0);
	conn_sock_forget(d, s);
}

void conn_sock_linger(struct iwxd *d, struct user *u, const struct conn_sock *s)
{
	if (!s->so)
		linger_start(d, u, s->w.fd);
}
