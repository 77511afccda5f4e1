// SPDX-License-Identifier: MIT
/* qp_pair.h over kernel TCP between two namespaces. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "qp_tcp.h"
#include "util/container_of.h"

struct listen_args {
	struct sockaddr_in addr;
};

static int do_listen(void *arg)
{
	struct listen_args *a = arg;

	return iwx_conn_tcp_listen((struct sockaddr *)&a->addr, sizeof(a->addr), 8);
}

struct connect_args {
	struct iwx_conn_tcp *c;
	struct sockaddr_in peer;
	const struct iwx_conn_opts *o;
};

static int do_connect(void *arg)
{
	struct connect_args *a = arg;

	return iwx_conn_tcp_connect(a->c, (struct sockaddr *)&a->peer, sizeof(a->peer), a->o);
}

/* Sockets are made in their namespace (netns_call) and driven from this thread. */
static void tcp_start(struct qp_pair *p, const struct iwx_conn_opts *o)
{
	struct qp_tcp *t = container_of(p, struct qp_tcp, pair);
	struct listen_args la = { .addr = { .sin_family = AF_INET, .sin_port = htons(t->port) } };
	struct connect_args ca = { .c = &t->conn[0], .o = o,
				   .peer = { .sin_family = AF_INET, .sin_port = htons(t->port) } };

	inet_pton(AF_INET, NETNS_B4, &la.addr.sin_addr);
	inet_pton(AF_INET, NETNS_B4, &ca.peer.sin_addr);
	t->lfd = netns_call(t->ns.b, do_listen, &la);
	cr_assert_geq(t->lfd, 0, "listen: %s", strerror(-t->lfd));
	cr_assert_eq(netns_call(t->ns.a, do_connect, &ca), 0);
}

static int tcp_accept(struct qp_pair *p, const struct iwx_conn_opts *o)
{
	struct qp_tcp *t = container_of(p, struct qp_tcp, pair);

	return iwx_conn_tcp_accept(&t->conn[1], t->lfd, o);
}

static void tcp_up(struct qp_pair *p)
{
	struct qp_tcp *t = container_of(p, struct qp_tcp, pair);

	/* both asked for CRCs: every FPDU of every test carries one */
	cr_assert(p->a.conn->agreed.mode.crc && p->b.conn->agreed.mode.crc);
	t->fd[0] = t->conn[0].fd;
	t->fd[1] = t->conn[1].fd;
}

/* A queue pair's socket for input and, if it has more to send, room; else the set-up's wants. */
static struct pollfd tcp_pollfd(const struct qp_tcp *t, int i, bool want_write)
{
	const struct qp_end *e = i ? &t->pair.b : &t->pair.a;

	if (e->qp)
		return (struct pollfd){ .fd = t->fd[i], .events = POLLIN | (want_write ? POLLOUT : 0) };
	if (i == 1 && !t->pair.accepted)
		return (struct pollfd){ .fd = t->lfd, .events = POLLIN };
	return (struct pollfd){ .fd = t->conn[i].fd, .events = iwx_conn_tcp_events(e->conn) };
}

static void tcp_wait(struct qp_pair *p, int max_ms, const bool want_write[2])
{
	struct qp_tcp *t = container_of(p, struct qp_tcp, pair);
	struct pollfd pfd[2] = { tcp_pollfd(t, 0, want_write[0]), tcp_pollfd(t, 1, want_write[1]) };

	poll(pfd, 2, max_ms);
}

static void tcp_stop(struct qp_pair *p)
{
	struct qp_tcp *t = container_of(p, struct qp_tcp, pair);

	if (t->lfd >= 0)
		close(t->lfd);
	t->lfd = -1;
	netns_pair_teardown(&t->ns);
}

static const struct qp_transport tcp = {
	.start = tcp_start, .accept = tcp_accept, .up = tcp_up, .wait = tcp_wait, .stop = tcp_stop,
};

void qp_tcp_init(struct qp_tcp *t, uint16_t port)
{
	*t = (struct qp_tcp){ .pair.t = &tcp, .port = port, .lfd = -1, .fd = { -1, -1 } };
	t->pair.a.conn = &t->conn[0].conn;
	t->pair.b.conn = &t->conn[1].conn;
	if (geteuid() != 0)
		cr_skip_test("needs root for network namespaces");
	cr_assert_eq(netns_pair_setup(&t->ns), 0, "network namespaces");
}
