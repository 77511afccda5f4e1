// SPDX-License-Identifier: MIT
/* iwxd over kernel TCP: descriptors on epoll (transport.h). */
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn_tcp.h"
#include "daemon.h"
#include "util/container_of.h"

static struct iwx_conn_tcp *tcp_of(struct pconn *p)
{
	return container_of(p->conn, struct iwx_conn_tcp, conn);
}

static int tcp_connect(struct iwxd *d, struct pconn *p, const struct iwx_ipc_connect *req)
{
	(void)d;
	return iwx_conn_tcp_connect(tcp_of(p), (const struct sockaddr *)&req->addr,
				    cm_addr_len(&req->addr), &p->opts);
}

static int tcp_listen(struct iwxd *d, struct listener *l, const struct iwx_ipc_listen *req)
{
	socklen_t len = sizeof(l->addr);
	int fd = iwx_conn_tcp_listen((const struct sockaddr *)&req->addr, cm_addr_len(&req->addr),
				     (int)req->backlog);
	int err;

	l->w.fd = fd;
	err = fd < 0 ? fd : getsockname(fd, (struct sockaddr *)&l->addr, &len) ? -errno :
	      watch_add(&d->loop, &l->w, EPOLLIN);
	if (err && fd >= 0)
		close(fd);
	return err;
}

static int tcp_accept(struct iwxd *d, struct listener *l, struct pconn *p)
{
	(void)d;
	return iwx_conn_tcp_accept(tcp_of(p), l->w.fd, &p->opts);
}

static void tcp_listen_close(struct iwxd *d, struct listener *l)
{
	watch_del(&d->loop, &l->w);
	close(l->w.fd);
}

static void tcp_sock_of(const struct iwx_conn *c, int *fd, void **h)
{
	*fd = iwx_conn_tcp_fd(c);
	*h = NULL;
}

static int tcp_watch(struct iwxd *d, struct conn_sock *s)
{
	return conn_sock_interest(d, s, EPOLLIN);
}

static void tcp_unwatch(struct iwxd *d, struct conn_sock *s)
{
	conn_sock_interest(d, s, 0);
}

static uint32_t tcp_setup_events(const struct iwx_conn *c)
{
	short ev = iwx_conn_tcp_events(c);

	return (ev & POLLIN ? EPOLLIN : 0) | (ev & POLLOUT ? EPOLLOUT : 0);
}

static void tcp_abort_on_close(struct conn_sock *s)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(s->w.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

static void tcp_linger(struct iwxd *d, struct user *u, const struct conn_sock *s)
{
	linger_start(d, u, s->w.fd);
}

const struct transport transport_tcp = {
	.name = "TCP",
	.id = IWX_TRANSPORT_TCP,
	.fast_path = true,
	.first_fpdu_hold = true,
	.rx_level = true,
	.conn_size = sizeof(struct iwx_conn_tcp),
	.connect = tcp_connect,
	.listen = tcp_listen,
	.accept = tcp_accept,
	.listen_close = tcp_listen_close,
	.sock_of = tcp_sock_of,
	.watch = tcp_watch,
	.unwatch = tcp_unwatch,
	.setup_events = tcp_setup_events,
	.abort_on_close = tcp_abort_on_close,
	.linger = tcp_linger,
};
