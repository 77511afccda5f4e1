// SPDX-License-Identifier: MIT
/* qp_pair.h over usrsctp: through an in-memory link, or in UDP between two namespaces. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <usrsctp.h>

#include "qp_sctp.h"
#include "util/container_of.h"

static void sctp_start(struct qp_pair *p, const struct iwx_conn_opts *o)
{
	struct qp_sctp *s = container_of(p, struct qp_sctp, pair);

	s->lso = iwx_conn_sctp_listen(s->port, 4);
	cr_assert_not_null(s->lso, "listen: %s", strerror(errno));
	cr_assert_eq(iwx_conn_sctp_connect(&s->conn[0], s->to_b, s->port, o), 0);
}

static int sctp_accept(struct qp_pair *p, const struct iwx_conn_opts *o)
{
	struct qp_sctp *s = container_of(p, struct qp_sctp, pair);

	return iwx_conn_sctp_accept(&s->conn[1], s->lso, o);
}

static void sctp_up(struct qp_pair *p)
{
	struct qp_sctp *s = container_of(p, struct qp_sctp, pair);

	s->a_so = s->conn[0].so;
}

/* The pair's ends are the fixture's set-ups. */
static void qp_sctp_ends(struct qp_sctp *s)
{
	s->pair.a.conn = &s->conn[0].conn;
	s->pair.b.conn = &s->conn[1].conn;
}

static void close_listener(struct qp_sctp *s)
{
	if (s->lso)
		usrsctp_close(s->lso);
	s->lso = NULL;
}

/* ------------------------------------------------------------ over the link */

static void link_wait(struct qp_pair *p, int max_ms, const bool want_write[2])
{
	(void)want_write;	/* room in usrsctp's buffer comes with the SACKs the pump delivers */
	sctp_link_pump(&container_of(p, struct qp_sctp, pair)->link, max_ms);
}

static void link_stop(struct qp_pair *p)
{
	struct qp_sctp *s = container_of(p, struct qp_sctp, pair);

	close_listener(s);
	sctp_link_destroy(&s->link);
	iwx_sctp_finish();
}

static const struct qp_transport over_link = {
	.start = sctp_start, .accept = sctp_accept, .up = sctp_up, .wait = link_wait, .stop = link_stop,
};

void qp_sctp_link_init(struct qp_sctp *s, uint16_t port)
{
	*s = (struct qp_sctp){ .pair.t = &over_link, .port = port };
	qp_sctp_ends(s);
	cr_assert_eq(iwx_sctp_init(), 0);
	sctp_link_init(&s->link);
	s->link.a.place = s->link.b.place = true;
	s->to_b = &s->link.b;
}

/* ------------------------------------------------- in UDP between namespaces */

/* What arrived on either UDP socket into the stack, waiting up to max_ms; then timers. */
static void udp_wait(struct qp_pair *p, int max_ms, const bool want_write[2])
{
	struct qp_sctp *s = container_of(p, struct qp_sctp, pair);
	struct pollfd pfd[2] = { { .fd = iwx_sctp_udp_fd(s->udp[0]), .events = POLLIN },
				 { .fd = iwx_sctp_udp_fd(s->udp[1]), .events = POLLIN } };

	(void)want_write;	/* as over the link: the SACKs bring room */
	poll(pfd, 2, max_ms);
	for (int i = 0; i < 2; i++)
		while (iwx_sctp_udp_input(s->udp[i], 64) == 64)
			;
	iwx_sctp_tick();
}

static void udp_stop(struct qp_pair *p)
{
	struct qp_sctp *s = container_of(p, struct qp_sctp, pair);

	close_listener(s);
	for (int i = 0; s->udp[0] && i < 20; i++)
		qp_pair_wait(p, 10);	/* the associations' SHUTDOWN exchange */
	for (int i = 0; i < 2; i++) {
		iwx_sctp_udp_close(s->udp[i]);
		s->udp[i] = NULL;
	}
	iwx_sctp_finish();
	netns_pair_teardown(&s->ns);
}

static const struct qp_transport in_udp = {
	.start = sctp_start, .accept = sctp_accept, .up = sctp_up, .wait = udp_wait, .stop = udp_stop,
};

struct udp_open_args {
	struct sockaddr_in	addr;
	struct iwx_sctp_udp	*u;
};

static int do_udp_open(void *arg)
{
	struct udp_open_args *a = arg;

	a->u = iwx_sctp_udp_open((struct sockaddr *)&a->addr, sizeof(a->addr), 16);
	return a->u ? 0 : -errno;
}

void qp_sctp_udp_init(struct qp_sctp *s, uint16_t port)
{
	struct udp_open_args oa = { .addr = { .sin_family = AF_INET } };
	struct udp_open_args ob = { .addr = { .sin_family = AF_INET,
					      .sin_port = htons(IWX_SCTP_PORT) } };

	*s = (struct qp_sctp){ .pair.t = &in_udp, .port = port };
	qp_sctp_ends(s);
	if (geteuid() != 0)
		cr_skip_test("needs root for network namespaces");
	cr_assert_eq(netns_pair_setup(&s->ns), 0, "network namespaces");
	cr_assert_eq(iwx_sctp_init(), 0);
	inet_pton(AF_INET, NETNS_A4, &oa.addr.sin_addr);
	inet_pton(AF_INET, NETNS_B4, &ob.addr.sin_addr);
	cr_assert_eq(netns_call(s->ns.a, do_udp_open, &oa), 0);
	cr_assert_eq(netns_call(s->ns.b, do_udp_open, &ob), 0);
	s->udp[0] = oa.u;
	s->udp[1] = ob.u;
	s->to_b = iwx_sctp_udp_path(s->udp[0], (struct sockaddr *)&ob.addr, sizeof(ob.addr));
	cr_assert_not_null(s->to_b);
}
