// SPDX-License-Identifier: MIT
/* A connection's socket in iwxd's loop: TCP's descriptor on epoll, or SCTP's association (conn_sock.h). */
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <usrsctp.h>

#include "conn_sock.h"
#include "daemon.h"
#include "sctp_io.h"

static uint32_t epoll_of(short poll_events)
{
	return (poll_events & POLLIN ? EPOLLIN : 0) | (poll_events & POLLOUT ? EPOLLOUT : 0);
}

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

int conn_sock_interest(struct iwxd *d, struct conn_sock *s, uint32_t events)
{
	int err = 0;

	if (events == s->events || s->so)
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
	if (!s->so)
		return conn_sock_interest(d, s, EPOLLIN);
	sctp_io_watch(d, s->so, &s->w);
	return 0;
}

/* Forget s's socket untouched if the set-up c closed it (the kernel took it off epoll). */
static void closed_under(struct iwxd *d, struct conn_sock *s, struct socket *so, int fd)
{
	if ((s->so || s->w.fd >= 0) && (s->so != so || s->w.fd != fd)) {
		s->w.fd = -1;
		watch_del(&d->loop, &s->w);	/* the loop's lists only */
		conn_sock_forget(d, s);
	}
}

int conn_sock_follow(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c, bool sctp)
{
	struct socket *so = sctp ? c->sctp.so : NULL;
	int fd = sctp ? -1 : c->tcp.fd;

	closed_under(d, s, so, fd);
	if (!s->so && s->w.fd < 0 && (so || fd >= 0)) {
		conn_sock_take(d, s, c, sctp);
		if (so)
			sctp_io_watch(d, so, &s->w);
	}
	return fd < 0 ? 0 : conn_sock_interest(d, s, epoll_of(iwx_conn_tcp_events(c)));
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

void conn_sock_let_go(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c, bool sctp)
{
	closed_under(d, s, sctp ? c->sctp.so : NULL, sctp ? -1 : c->tcp.fd);
	conn_sock_drop(d, s);
}

void conn_sock_linger(struct iwxd *d, struct user *u, const struct conn_sock *s)
{
	if (!s->so)
		linger_start(d, u, s->w.fd);
}
