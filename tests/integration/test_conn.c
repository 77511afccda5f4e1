// SPDX-License-Identifier: MIT
/*
 * iWARP stream set-up over real TCP between two network namespaces on a veth pair:
 * the MPA exchange with private data, RFC 6581 IRD/ORD, revision 1, reject, time-outs,
 * a peer speaking something else. Sockets are created in their namespace from a short
 * thread; both ends are then stepped from the test's own thread (needs root).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "proto/mpa.h"

#include "conn.h"
#include "netns.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

#define PORT		4791
#define BOUND_MS	5000	/* a time-out under test fires before this: half the default */
#define SHORT_MS	300	/* the time-out under test */

static struct netns_pair ns;

static void ns_init(void)
{
	int err;

	if (geteuid() != 0)
		cr_skip_test("needs root for network namespaces");
	err = netns_pair_setup(&ns);
	cr_assert_eq(err, 0, "network namespaces: %s", strerror(-err));
}

static void ns_fini(void)
{
	netns_pair_teardown(&ns);
}

TestSuite(conn, .init = ns_init, .fini = ns_fini, .timeout = HANG_S);

static const struct iwx_mpa_local rev2 = { .rev = 2, .crc = true, .ird = 16, .ord = 16 };

static socklen_t sa_make(struct sockaddr_storage *ss, bool v6, const char *host, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		cr_assert_eq(inet_pton(AF_INET6, host, &s6->sin6_addr), 1);
		return sizeof(*s6);
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	s4->sin_family = AF_INET;
	s4->sin_port = htons(port);
	cr_assert_eq(inet_pton(AF_INET, host, &s4->sin_addr), 1);
	return sizeof(*s4);
}

/* ------------------------------------------------ creating sockets in a namespace */

struct listen_args {
	struct sockaddr_storage	addr;
	socklen_t		len;
};

static int listen_fn(void *v)
{
	struct listen_args *a = v;

	return iwx_conn_tcp_listen((struct sockaddr *)&a->addr, a->len, 8);
}

/* An iWARP listener on b's address. */
static int listen_b(bool v6)
{
	struct listen_args a;
	int fd;

	a.len = sa_make(&a.addr, v6, v6 ? NETNS_B6 : NETNS_B4, PORT);
	fd = netns_call(ns.b, listen_fn, &a);
	cr_assert_geq(fd, 0, "listen: %s", strerror(-fd));
	return fd;
}

struct connect_args {
	struct iwx_conn			*c;
	struct sockaddr_storage		peer;
	socklen_t			len;
	const struct iwx_conn_opts	*o;
};

static int connect_fn(void *v)
{
	struct connect_args *a = v;

	return iwx_conn_tcp_connect(a->c, (struct sockaddr *)&a->peer, a->len, a->o);
}

/* Start an iWARP connect from a to host:port. */
static int connect_from_a(struct iwx_conn *c, bool v6, const char *host, uint16_t port,
			  const struct iwx_conn_opts *o)
{
	struct connect_args a = { .c = c, .o = o };

	a.len = sa_make(&a.peer, v6, host, port);
	return netns_call(ns.a, connect_fn, &a);
}

/* A plain TCP socket of a's, connected to b's listener (a raw peer that speaks as it likes). */
static int raw_connect(void)
{
	struct sockaddr_storage ss;
	socklen_t len = sa_make(&ss, false, NETNS_B4, PORT), elen = sizeof(int);
	struct pollfd p;
	int fd, err = 0;

	fd = netns_socket(ns.a, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert(connect(fd, (struct sockaddr *)&ss, len) == 0 || errno == EINPROGRESS);
	p = (struct pollfd){ .fd = fd, .events = POLLOUT };
	cr_assert_eq(poll(&p, 1, STALL_MS), 1);
	cr_assert_eq(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen), 0);
	cr_assert_eq(err, 0, "raw connect: %s", strerror(err));
	return fd;
}

/* Read exactly n bytes from a non-blocking socket, waiting at most STALL_MS in all. */
static void read_exact(int fd, void *buf, size_t n)
{
	uint64_t end = iwx_now_ms() + STALL_MS;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = recv(fd, (uint8_t *)buf + got, n - got, MSG_DONTWAIT);
		if (r > 0) {
			got += r;
			continue;
		}
		cr_assert(r < 0 && errno == EAGAIN, "read_exact: %zd bytes of %zu, then %s", got, n,
			  r == 0 ? "end of stream" : strerror(errno));
		cr_assert_lt(iwx_now_ms(), end, "read_exact: %zu bytes of %zu", got, n);
		poll(&p, 1, 20);
	}
}

/* Wait until fd has at least n bytes queued for reading. */
static void wait_queued(int fd, int n)
{
	uint64_t end = iwx_now_ms() + STALL_MS;
	int q = 0;

	for (;;) {
		cr_assert_eq(ioctl(fd, SIOCINQ, &q), 0);
		if (q >= n)
			return;
		cr_assert_lt(iwx_now_ms(), end, "%d bytes queued, want %d", q, n);
		usleep(1000);
	}
}

/* Accept one connection on lfd as an iWARP responder, waiting for it at most STALL_MS. */
static void accept_one(struct iwx_conn *c, int lfd, const struct iwx_conn_opts *o)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	cr_assert_eq(poll(&p, 1, STALL_MS), 1, "no connection to accept");
	cr_assert_eq(iwx_conn_tcp_accept(c, lfd, o), 0);
}

/* ------------------------------------------- both ends stepped from one thread */

struct run {
	struct iwx_conn		cli, srv;
	int			lfd;
	bool			accepted, answered;
	struct iwx_conn_opts	srv_opts;
	bool			reject;
	int			answer_ret;
	const char		*early;	/* 4 bytes the responder sends right after its Reply */
};

static bool needs_work(const struct iwx_conn *c)
{
	return c->state != IWX_CONN_ESTABLISHED && c->state != IWX_CONN_REJECTED &&
	       c->state != IWX_CONN_FAILED;
}

/* The responder answers, then (early) sends 4 bytes that must reach the initiator unread. */
static void answer(struct run *r)
{
	r->answer_ret = iwx_conn_answer(&r->srv, &r->srv_opts, r->reject);
	r->answered = true;
	if (!r->early || r->srv.state != IWX_CONN_ESTABLISHED)
		return;
	cr_assert_eq(send(r->srv.tcp.fd, r->early, 4, MSG_NOSIGNAL), 4);
	/* the Reply and these bytes are in the initiator's socket before it reads a byte */
	wait_queued(r->cli.tcp.fd, sizeof(struct iwx_mpa_rr) + (r->srv.agreed.enhanced ? 4 : 0) +
			       r->srv_opts.pd_len + 4);
}

/* Step the initiator, the listener and the responder until neither end needs the socket. */
static void drive(struct run *r)
{
	uint64_t now, end = iwx_now_ms() + STALL_MS;
	struct pollfd p[2];
	int n;

	for (;;) {
		now = iwx_now_ms();
		if (!r->accepted) {
			n = iwx_conn_tcp_accept(&r->srv, r->lfd, &r->srv_opts);
			cr_assert(n == 0 || n == -EAGAIN, "accept: %s", strerror(-n));
			r->accepted = n == 0;
		}
		if (r->accepted) {
			iwx_conn_step(&r->srv, now);
			if (r->srv.state == IWX_CONN_REQUEST_IN && !r->answered)
				answer(r);
		}
		iwx_conn_step(&r->cli, now);
		if (r->accepted && !needs_work(&r->srv) && r->srv.state != IWX_CONN_REQUEST_IN &&
		    !needs_work(&r->cli))
			break;
		cr_assert_lt(now, end, "set-up hangs: initiator %d, responder %d", r->cli.state,
			     r->accepted ? (int)r->srv.state : -1);
		n = 0;
		if (!r->accepted)
			p[n++] = (struct pollfd){ .fd = r->lfd, .events = POLLIN };
		else if (needs_work(&r->srv) && r->srv.state != IWX_CONN_REQUEST_IN)
			p[n++] = (struct pollfd){ .fd = r->srv.tcp.fd, .events = iwx_conn_tcp_events(&r->srv) };
		if (needs_work(&r->cli))
			p[n++] = (struct pollfd){ .fd = r->cli.tcp.fd, .events = iwx_conn_tcp_events(&r->cli) };
		poll(p, n, 20);
	}
}

static void run_close(struct run *r)
{
	iwx_conn_close(&r->cli);
	if (r->accepted)
		iwx_conn_close(&r->srv);
	close(r->lfd);
}

static void check_addr(const struct sockaddr_storage *ss, bool v6, const char *host, int port)
{
	char txt[INET6_ADDRSTRLEN];
	const void *a;
	int p;

	cr_assert_eq(ss->ss_family, v6 ? AF_INET6 : AF_INET);
	if (v6) {
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		p = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	} else {
		a = &((const struct sockaddr_in *)ss)->sin_addr;
		p = ntohs(((const struct sockaddr_in *)ss)->sin_port);
	}
	cr_assert_not_null(inet_ntop(ss->ss_family, a, txt, sizeof(txt)));
	cr_assert_str_eq(txt, host);
	if (port >= 0)
		cr_assert_eq(p, port);
}

/* Revision 2 both ways, the largest private data one way: IRD/ORD lowered, CRC on, and the
 * first bytes after each frame left in the socket for the engine. */
static void enhanced_exchange(bool v6)
{
	static const uint8_t srv_pd[] = "accepted";
	uint8_t cli_pd[IWX_MPA_MAX_PRIVDATA - 4], got[4];
	struct iwx_conn_opts co = { .local = rev2, .pd = cli_pd, .pd_len = sizeof(cli_pd) };
	struct run r = { .early = "S2C!" };
	uint32_t max_mss = v6 ? 1500 - 40 - 20 : 1500 - 20 - 20;

	fill_pattern(cli_pd, sizeof(cli_pd), 7);
	co.local.ird = 8;
	co.local.ord = 4;
	r.srv_opts = (struct iwx_conn_opts){ .local = rev2, .pd = srv_pd, .pd_len = sizeof(srv_pd) };
	r.srv_opts.local.crc = false;
	r.srv_opts.local.ird = 2;
	r.srv_opts.local.ord = 16;
	r.lfd = listen_b(v6);
	cr_assert_eq(connect_from_a(&r.cli, v6, v6 ? NETNS_B6 : NETNS_B4, PORT, &co), 0);
	cr_assert(r.cli.initiator);
	drive(&r);

	cr_assert_eq(r.answer_ret, 0);
	cr_assert_eq(r.cli.state, IWX_CONN_ESTABLISHED, "initiator: %d %s", r.cli.state,
		     strerror(-r.cli.error));
	cr_assert_eq(r.srv.state, IWX_CONN_ESTABLISHED);
	cr_assert(!r.srv.initiator);
	for (int i = 0; i < 2; i++) {
		const struct iwx_mpa_agreed *a = i ? &r.srv.agreed : &r.cli.agreed;

		cr_assert(a->enhanced);
		cr_assert_eq(a->mode.rev, 2);
		cr_assert(a->mode.crc, "CRC in both directions: the initiator asked");
		cr_assert(!a->mode.markers_rx && !a->mode.markers_tx);
		cr_assert_eq(a->rtr, 0);
	}
	/* responder: IRD min(2, initiator's ORD 4), ORD min(16, initiator's IRD 8) */
	cr_assert_eq(r.srv.agreed.ird, 2);
	cr_assert_eq(r.srv.agreed.ord, 8);
	/* initiator: issues no more reads than the responder takes */
	cr_assert_eq(r.cli.agreed.ord, 2);
	cr_assert_eq(r.cli.agreed.ird, 8);
	cr_assert_eq(r.srv.request.ird, 8);
	cr_assert_eq(r.srv.request.ord, 4);

	cr_assert_eq(r.srv.peer_pd_len, sizeof(cli_pd));
	cr_assert_arr_eq(r.srv.peer_pd, cli_pd, sizeof(cli_pd));
	cr_assert_eq(r.cli.peer_pd_len, sizeof(srv_pd));
	cr_assert_arr_eq(r.cli.peer_pd, srv_pd, sizeof(srv_pd));

	cr_assert_gt(r.cli.emss, 0);
	cr_assert_leq(r.cli.emss, max_mss);
	cr_assert_gt(r.srv.emss, 0);
	cr_assert_leq(r.srv.emss, max_mss);
	check_addr(&r.cli.local, v6, v6 ? NETNS_A6 : NETNS_A4, -1);
	check_addr(&r.cli.peer, v6, v6 ? NETNS_B6 : NETNS_B4, PORT);
	check_addr(&r.srv.local, v6, v6 ? NETNS_B6 : NETNS_B4, PORT);
	check_addr(&r.srv.peer, v6, v6 ? NETNS_A6 : NETNS_A4,
		   ntohs(((struct sockaddr_in *)&r.cli.local)->sin_port));

	/* what followed the Reply is still in the initiator's socket */
	read_exact(r.cli.tcp.fd, got, 4);
	cr_assert_arr_eq(got, "S2C!", 4);
	/* and the stream carries on the other way */
	cr_assert_eq(send(r.cli.tcp.fd, "C2S!", 4, MSG_NOSIGNAL), 4);
	read_exact(r.srv.tcp.fd, got, 4);
	cr_assert_arr_eq(got, "C2S!", 4);
	run_close(&r);
}

Test(conn, rev2_enhanced_private_data_both_ways)
{
	enhanced_exchange(false);
}

Test(conn, ipv6)
{
	enhanced_exchange(true);
}

/* A revision 1 Initiator with markers meets a revision 2 Responder that wants CRC. */
Test(conn, rev1_initiator)
{
	static const uint8_t cli_pd[] = "rev1 hello", srv_pd[] = "rev1 welcome";
	struct iwx_conn_opts co = {
		.local = { .rev = 1, .markers = true, .ird = 3, .ord = 5 },
		.pd = cli_pd, .pd_len = sizeof(cli_pd),
	};
	struct run r = { .early = "R1R1" };
	uint8_t got[4];

	r.srv_opts = (struct iwx_conn_opts){ .local = rev2, .pd = srv_pd, .pd_len = sizeof(srv_pd) };
	r.lfd = listen_b(false);
	cr_assert_eq(connect_from_a(&r.cli, false, NETNS_B4, PORT, &co), 0);
	drive(&r);

	cr_assert_eq(r.cli.state, IWX_CONN_ESTABLISHED);
	cr_assert_eq(r.srv.state, IWX_CONN_ESTABLISHED);
	cr_assert_eq(r.srv.request.rev, 1);
	cr_assert(!r.srv.request.enhanced);
	cr_assert_eq(r.cli.agreed.mode.rev, 1);
	cr_assert_eq(r.srv.agreed.mode.rev, 1);
	cr_assert(!r.cli.agreed.enhanced && !r.srv.agreed.enhanced);
	cr_assert(r.cli.agreed.mode.crc && r.srv.agreed.mode.crc);
	cr_assert(r.cli.agreed.mode.markers_rx && !r.cli.agreed.mode.markers_tx);
	cr_assert(!r.srv.agreed.mode.markers_rx && r.srv.agreed.mode.markers_tx);
	/* nothing exchanged: each keeps its own limits */
	cr_assert_eq(r.cli.agreed.ird, 3);
	cr_assert_eq(r.cli.agreed.ord, 5);
	cr_assert_eq(r.srv.agreed.ird, 16);
	cr_assert_eq(r.srv.agreed.ord, 16);
	cr_assert_eq(r.srv.peer_pd_len, sizeof(cli_pd));
	cr_assert_arr_eq(r.srv.peer_pd, cli_pd, sizeof(cli_pd));
	cr_assert_eq(r.cli.peer_pd_len, sizeof(srv_pd));
	cr_assert_arr_eq(r.cli.peer_pd, srv_pd, sizeof(srv_pd));
	read_exact(r.cli.tcp.fd, got, 4);
	cr_assert_arr_eq(got, "R1R1", 4);
	run_close(&r);
}

/* The Responder rejects with private data: the Initiator is refused and gets it. */
Test(conn, reject_with_private_data)
{
	static const uint8_t why[] = "no room at the inn";
	struct iwx_conn_opts co = { .local = rev2, .pd = (const uint8_t *)"let me in", .pd_len = 9 };
	struct run r = { .reject = true };

	r.srv_opts = (struct iwx_conn_opts){ .local = rev2, .pd = why, .pd_len = sizeof(why) };
	r.lfd = listen_b(false);
	cr_assert_eq(connect_from_a(&r.cli, false, NETNS_B4, PORT, &co), 0);
	drive(&r);

	cr_assert_eq(r.answer_ret, 0);
	cr_assert_eq(r.srv.state, IWX_CONN_REJECTED);
	cr_assert_eq(r.srv.tcp.fd, -1);
	cr_assert_eq(r.srv.peer_pd_len, 9);
	cr_assert_eq(r.cli.state, IWX_CONN_REJECTED);
	cr_assert_eq(r.cli.error, -ECONNREFUSED);
	cr_assert_eq(r.cli.tcp.fd, -1);
	cr_assert_eq(r.cli.peer_pd_len, sizeof(why));
	cr_assert_arr_eq(r.cli.peer_pd, why, sizeof(why));
	close(r.lfd);
}

/* Same through iwx_conn_wait: it returns the refusal. */
Test(conn, wait_returns_refusal)
{
	struct iwx_conn_opts co = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_conn cli, srv;
	int lfd = listen_b(false);

	cr_assert_eq(connect_from_a(&cli, false, NETNS_B4, PORT, &co), 0);
	accept_one(&srv, lfd, &co);
	/* the initiator's handshake is done once the responder accepted: the Request goes out */
	cr_assert_eq(iwx_conn_step(&cli, iwx_now_ms()), -EAGAIN);
	cr_assert_eq(cli.state, IWX_CONN_WAIT_REPLY);
	cr_assert_eq(iwx_conn_tcp_wait(&srv), 0);
	cr_assert_eq(srv.state, IWX_CONN_REQUEST_IN);
	cr_assert_eq(iwx_conn_answer(&srv, &(struct iwx_conn_opts){ .local = rev2 }, true), 0);
	cr_assert_eq(iwx_conn_tcp_wait(&srv), 0);
	cr_assert_eq(srv.state, IWX_CONN_REJECTED);
	cr_assert_eq(iwx_conn_tcp_wait(&cli), -ECONNREFUSED);
	cr_assert_eq(cli.peer_pd_len, 0);
	close(lfd);
}

/* Peer-to-peer with no RTR type in common: the Responder rejects, -EPROTO, and says why. */
Test(conn, no_matching_rtr)
{
	struct iwx_conn_opts co = { .local = rev2 };
	struct run r = { 0 };

	co.local.p2p = true;
	co.local.rtr = IWX_RTR_SEND;
	r.srv_opts = (struct iwx_conn_opts){ .local = rev2 };
	r.srv_opts.local.rtr = IWX_RTR_WRITE | IWX_RTR_READ;
	r.lfd = listen_b(false);
	cr_assert_eq(connect_from_a(&r.cli, false, NETNS_B4, PORT, &co), 0);
	drive(&r);

	cr_assert_eq(r.answer_ret, -EPROTO);
	cr_assert_eq(r.srv.state, IWX_CONN_REJECTED);
	cr_assert_eq(r.srv.error, -EPROTO);
	cr_assert(iwx_cause_eq(r.srv.cause, IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR)));
	cr_assert_eq(r.cli.state, IWX_CONN_REJECTED);
	cr_assert_eq(r.cli.error, -ECONNREFUSED);
	close(r.lfd);
}

/* A peer that connects and never sends its Request: the Responder gives up on time. */
Test(conn, silent_initiator_times_out)
{
	struct iwx_conn_opts so = { .local = rev2, .timeout_ms = SHORT_MS };
	struct iwx_conn srv;
	int lfd = listen_b(false), raw = raw_connect();
	uint64_t t0, dt;

	accept_one(&srv, lfd, &so);
	t0 = iwx_now_ms();
	cr_assert_leq(srv.deadline_ms, t0 + SHORT_MS);
	cr_assert_eq(iwx_conn_tcp_wait(&srv), -ETIMEDOUT);
	dt = iwx_now_ms() - t0;
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	cr_assert_eq(srv.tcp.fd, -1);
	cr_assert_geq(dt, SHORT_MS - 5);
	/* its own time-out, not the default 10 s (how late it fired is the machine's pace) */
	cr_assert_lt(dt, BOUND_MS, "timed out after %lu ms", (unsigned long)dt);
	close(raw);
	close(lfd);
}

/* A Responder that takes the connection and never replies: the Initiator gives up on time. */
Test(conn, silent_responder_times_out)
{
	struct iwx_conn_opts co = { .local = rev2, .timeout_ms = SHORT_MS };
	struct iwx_conn cli;
	int lfd = listen_b(false);	/* never accepted: the kernel completes the handshake */
	uint64_t t0 = iwx_now_ms(), dt;

	cr_assert_eq(connect_from_a(&cli, false, NETNS_B4, PORT, &co), 0);
	cr_assert_eq(iwx_conn_tcp_wait(&cli), -ETIMEDOUT);
	dt = iwx_now_ms() - t0;
	cr_assert_eq(cli.state, IWX_CONN_FAILED);
	cr_assert_geq(dt, SHORT_MS - 5);
	/* its own time-out, not the default 10 s (how late it fired is the machine's pace) */
	cr_assert_lt(dt, BOUND_MS, "timed out after %lu ms", (unsigned long)dt);
	close(lfd);
}

/* Nobody answers the SYN (an address in the subnet that no one holds): connect times out. */
Test(conn, connect_times_out)
{
	struct iwx_conn_opts co = { .local = rev2, .timeout_ms = SHORT_MS };
	struct iwx_conn cli;
	uint64_t t0 = iwx_now_ms(), dt;

	cr_assert_eq(connect_from_a(&cli, false, "192.0.2.3", PORT, &co), 0);
	cr_assert_eq(cli.state, IWX_CONN_CONNECTING);
	cr_assert_eq(iwx_conn_tcp_wait(&cli), -ETIMEDOUT);
	dt = iwx_now_ms() - t0;
	cr_assert_geq(dt, SHORT_MS - 5);
	/* its own time-out, not the default 10 s (how late it fired is the machine's pace) */
	cr_assert_lt(dt, BOUND_MS, "timed out after %lu ms", (unsigned long)dt);
}

/* No listener: TCP refuses. */
Test(conn, connection_refused)
{
	struct iwx_conn_opts co = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_conn cli;
	int err = connect_from_a(&cli, false, NETNS_B4, PORT, &co);

	if (err == 0)
		err = iwx_conn_tcp_wait(&cli);
	cr_assert_eq(err, -ECONNREFUSED, "got %s", strerror(-err));
	cr_assert_eq(cli.state, IWX_CONN_FAILED);
	cr_assert_eq(cli.error, -ECONNREFUSED);
	cr_assert_eq(cli.tcp.fd, -1);
}

/* Something else than MPA: -EPROTO, and the peer sees a Reply with R before the close. */
Test(conn, garbage_request_rejected)
{
	static const char http[] = "GET / HTTP/1.1\r\nHost: 192.0.2.2\r\nAccept: */*\r\n\r\n";
	struct iwx_conn_opts so = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params rep;
	struct iwx_conn srv;
	int lfd = listen_b(false), raw = raw_connect();
	uint8_t f[sizeof(struct iwx_mpa_rr)];

	cr_assert_eq(send(raw, http, sizeof(http) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(http) - 1);
	accept_one(&srv, lfd, &so);
	cr_assert_eq(iwx_conn_tcp_wait(&srv), -EPROTO);
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	cr_assert(iwx_cause_eq(srv.cause, IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR)));
	cr_assert_eq(srv.tcp.fd, -1);
	read_exact(raw, f, sizeof(f));
	cr_assert_eq(iwx_mpa_rr_decode(f, sizeof(f), true, &rep), (ssize_t)sizeof(f));
	cr_assert(rep.reject);
	close(raw);
	close(lfd);
}

/* A Request and the bytes after it in one segment: the Responder reads the Request only. */
Test(conn, responder_reads_only_the_request)
{
	struct iwx_conn_opts so = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req, rep;
	struct iwx_conn srv;
	int lfd = listen_b(false), raw = raw_connect();
	uint8_t f[64], got[4];
	ssize_t n;

	iwx_mpa_setup_request(&rev2, (const uint8_t *)"pd", 2, &req);
	n = iwx_mpa_rr_encode(f, sizeof(f), &req);
	cr_assert_gt(n, 0);
	memcpy(f + n, "ABCD", 4);
	cr_assert_eq(send(raw, f, n + 4, MSG_NOSIGNAL), n + 4);
	accept_one(&srv, lfd, &so);
	wait_queued(srv.tcp.fd, n + 4);
	cr_assert_eq(iwx_conn_tcp_wait(&srv), 0);
	cr_assert_eq(srv.state, IWX_CONN_REQUEST_IN);
	cr_assert_eq(srv.peer_pd_len, 2);
	cr_assert_arr_eq(srv.request.pd, "pd", 2);
	cr_assert_eq(iwx_conn_answer(&srv, &so, false), 0);
	cr_assert_eq(iwx_conn_tcp_wait(&srv), 0);
	cr_assert_eq(srv.state, IWX_CONN_ESTABLISHED);
	read_exact(srv.tcp.fd, got, 4);
	cr_assert_arr_eq(got, "ABCD", 4);

	read_exact(raw, f, 24);
	cr_assert_eq(iwx_mpa_rr_decode(f, 24, true, &rep), 24);
	cr_assert(!rep.reject && rep.enhanced);
	iwx_conn_close(&srv);
	close(raw);
	close(lfd);
}

/* The peer hangs up in the middle of its Request. */
Test(conn, peer_closes_early)
{
	struct iwx_conn_opts so = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_conn srv;
	int lfd = listen_b(false), raw = raw_connect();

	cr_assert_eq(send(raw, IWX_MPA_KEY_REQ, 10, MSG_NOSIGNAL), 10);
	close(raw);
	accept_one(&srv, lfd, &so);
	cr_assert_eq(iwx_conn_tcp_wait(&srv), -ECONNRESET);
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	close(lfd);
}
