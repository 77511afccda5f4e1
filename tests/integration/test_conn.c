// SPDX-License-Identifier: MIT
/*
 * iWARP stream set-up over real TCP between two network namespaces on a veth pair: the
 * set-up tests of every transport (conn_tests.h) on the TCP fixture of conn_pair.h, and
 * TCP's own: the mode agreed with CRC, revision 1 with markers, an Initiator's own RTR
 * offer, addresses and MSS, iwx_conn_tcp_wait, a SYN nobody answers, a Request sharing
 * its segment, a peer hanging up half-way. Sockets are created in their namespace from a
 * short thread; both ends are then stepped from the test's own thread (needs root).
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

#include "conn_tcp.h"
#include "conn_tests.h"
#include "netns.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

#define PORT		4791

/* The TCP fixture: a in namespace a connects to b's listener in namespace b. */
static struct {
	struct conn_pair	pair;
	struct iwx_conn_tcp	a, b;	/* the pair's ends */
	struct netns_pair	ns;
	bool			v6;	/* over IPv6 rather than IPv4 */
	int			lfd;	/* b's listener */
	int			raw;	/* the hand-made Initiator's socket */
} tcp;

static struct netns_pair *const ns = &tcp.ns;
static const struct conn_transport tcp_transport;

static void ns_init(void)
{
	int err;

	tcp.pair.t = &tcp_transport;
	tcp.pair.a = &tcp.a.conn;
	tcp.pair.b = &tcp.b.conn;
	tcp.lfd = tcp.raw = -1;
	if (geteuid() != 0)
		cr_skip_test("needs root for network namespaces");
	err = netns_pair_setup(ns);
	cr_assert_eq(err, 0, "network namespaces: %s", strerror(-err));
}

static void ns_fini(void)
{
	conn_pair_fini(&tcp.pair);
	if (tcp.raw >= 0)
		close(tcp.raw);
	if (tcp.lfd >= 0)
		close(tcp.lfd);
	netns_pair_teardown(ns);
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
	fd = netns_call(ns->b, listen_fn, &a);
	cr_assert_geq(fd, 0, "listen: %s", strerror(-fd));
	return fd;
}

struct connect_args {
	struct iwx_conn_tcp		*c;
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
static int connect_from_a(struct iwx_conn_tcp *c, bool v6, const char *host, uint16_t port,
			  const struct iwx_conn_opts *o)
{
	struct connect_args a = { .c = c, .o = o };

	a.len = sa_make(&a.peer, v6, host, port);
	return netns_call(ns->a, connect_fn, &a);
}

/* A plain TCP socket of a's, connected to b's listener (a raw peer that speaks as it likes). */
static int raw_connect(void)
{
	struct sockaddr_storage ss;
	socklen_t len = sa_make(&ss, false, NETNS_B4, PORT), elen = sizeof(int);
	struct pollfd p;
	int fd, err = 0;

	fd = netns_socket(ns->a, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
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
static void accept_one(struct iwx_conn_tcp *c, int lfd, const struct iwx_conn_opts *o)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	cr_assert_eq(poll(&p, 1, STALL_MS), 1, "no connection to accept");
	cr_assert_eq(iwx_conn_tcp_accept(c, lfd, o), 0);
}

/* ------------------------------------------------ the fixture */

static void tcp_listen(struct conn_pair *p)
{
	(void)p;
	tcp.lfd = listen_b(tcp.v6);
}

static int tcp_connect(struct conn_pair *p, const struct iwx_conn_opts *o)
{
	(void)p;
	return connect_from_a(&tcp.a, tcp.v6, tcp.v6 ? NETNS_B6 : NETNS_B4, PORT, o);
}

static int tcp_accept(struct conn_pair *p, const struct iwx_conn_opts *o)
{
	(void)p;
	return iwx_conn_tcp_accept(&tcp.b, tcp.lfd, o);
}

/* Poll the listener until b is accepted, and each end's socket for what its state waits on. */
static void tcp_wait(struct conn_pair *p)
{
	struct pollfd f[3];
	int n = 0;

	if (!p->accepted && tcp.lfd >= 0)
		f[n++] = (struct pollfd){ .fd = tcp.lfd, .events = POLLIN };
	if (p->accepted && iwx_conn_tcp_events(p->b))
		f[n++] = (struct pollfd){ .fd = iwx_conn_tcp_fd(p->b), .events = iwx_conn_tcp_events(p->b) };
	if (p->connected && iwx_conn_tcp_events(p->a))
		f[n++] = (struct pollfd){ .fd = iwx_conn_tcp_fd(p->a), .events = iwx_conn_tcp_events(p->a) };
	poll(f, n, 20);
}

static bool tcp_closed(const struct iwx_conn *c)
{
	return iwx_conn_tcp_fd(c) == -1;
}

/* The bytes go on b's stream; the Reply and they are in a's socket before a reads a byte. */
static void tcp_send_early(struct conn_pair *p, const char text[4])
{
	cr_assert_eq(send(iwx_conn_tcp_fd(p->b), text, 4, MSG_NOSIGNAL), 4);
	wait_queued(iwx_conn_tcp_fd(p->a), sizeof(struct iwx_mpa_rr) + (p->b->agreed.enhanced ? 4 : 0) +
			       p->b_opts.pd_len + 4);
}

static void tcp_recv_early(struct conn_pair *p, const char text[4])
{
	uint8_t got[4];

	read_exact(iwx_conn_tcp_fd(p->a), got, 4);
	cr_assert_arr_eq(got, text, 4);
}

static void tcp_raw_connect(struct conn_pair *p)
{
	(void)p;
	tcp.raw = raw_connect();
}

static void tcp_raw_send(struct conn_pair *p, const void *frame, size_t len)
{
	(void)p;
	cr_assert_eq(send(tcp.raw, frame, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* The Reply's header, then the private data it announces (IRD/ORD, when enhanced). */
static void tcp_raw_recv_reject(struct conn_pair *p)
{
	struct iwx_mpa_rr_params rep;
	uint8_t f[sizeof(struct iwx_mpa_rr) + IWX_MPA_MAX_PRIVDATA];
	struct iwx_mpa_rr *h = (struct iwx_mpa_rr *)f;
	size_t n;

	(void)p;
	read_exact(tcp.raw, f, sizeof(*h));
	n = sizeof(*h) + ntohs(h->pd_len);
	cr_assert_leq(n, sizeof(f));
	read_exact(tcp.raw, f + sizeof(*h), n - sizeof(*h));
	cr_assert_eq(iwx_mpa_rr_decode(f, n, true, &rep), (ssize_t)n);
	cr_assert(rep.reject);
}

static const struct conn_transport tcp_transport = {
	.local = &rev2, .listen = tcp_listen, .connect = tcp_connect, .accept = tcp_accept,
	.wait = tcp_wait, .closed = tcp_closed, .send_early = tcp_send_early,
	.recv_early = tcp_recv_early, .raw_connect = tcp_raw_connect, .raw_send = tcp_raw_send,
	.raw_recv_reject = tcp_raw_recv_reject,
};

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

/* ------------------------------------------------ tests */

CONN_TESTS(conn, &tcp.pair)

/*
 * conn_tests.h's exchange over revision 2 both ways: CRC on, as the Initiator asked,
 * no RTR (client-server); the MSS and both ends' addresses; the stream carries on.
 */
static void enhanced_exchange(bool v6)
{
	struct conn_pair *p = &tcp.pair;
	uint32_t max_mss = v6 ? 1500 - 40 - 20 : 1500 - 20 - 20;
	uint8_t got[4];

	tcp.v6 = v6;
	conn_test_established_private_data_both_ways(p);
	for (int i = 0; i < 2; i++) {
		const struct iwx_mpa_agreed *a = i ? &p->b->agreed : &p->a->agreed;

		cr_assert(a->mode.crc, "CRC in both directions: the initiator asked");
		cr_assert_eq(a->rtr, 0);
	}
	cr_assert_gt(p->a->emss, 0);
	cr_assert_leq(p->a->emss, max_mss);
	cr_assert_gt(p->b->emss, 0);
	cr_assert_leq(p->b->emss, max_mss);
	check_addr(&p->a->local, v6, v6 ? NETNS_A6 : NETNS_A4, -1);
	check_addr(&p->a->peer, v6, v6 ? NETNS_B6 : NETNS_B4, PORT);
	check_addr(&p->b->local, v6, v6 ? NETNS_B6 : NETNS_B4, PORT);
	check_addr(&p->b->peer, v6, v6 ? NETNS_A6 : NETNS_A4,
		   ntohs(((struct sockaddr_in *)&p->a->local)->sin_port));

	/* and the stream carries on the other way */
	cr_assert_eq(send(iwx_conn_tcp_fd(p->a), "C2S!", 4, MSG_NOSIGNAL), 4);
	read_exact(iwx_conn_tcp_fd(p->b), got, 4);
	cr_assert_arr_eq(got, "C2S!", 4);
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
	struct conn_pair *p = &tcp.pair;
	struct iwx_conn_opts co = {
		.local = { .rev = 1, .markers = true, .ird = 3, .ord = 5 },
		.pd = cli_pd, .pd_len = sizeof(cli_pd),
	};

	p->b_opts = (struct iwx_conn_opts){ .local = rev2, .pd = srv_pd, .pd_len = sizeof(srv_pd) };
	p->early = "R1R1";
	tcp_listen(p);
	cr_assert_eq(conn_pair_connect(p, &co), 0);
	conn_pair_drive(p);

	cr_assert_eq(p->a->state, IWX_CONN_ESTABLISHED);
	cr_assert_eq(p->b->state, IWX_CONN_ESTABLISHED);
	cr_assert_eq(p->b->request.rev, 1);
	cr_assert(!p->b->request.enhanced);
	cr_assert_eq(p->a->agreed.mode.rev, 1);
	cr_assert_eq(p->b->agreed.mode.rev, 1);
	cr_assert(!p->a->agreed.enhanced && !p->b->agreed.enhanced);
	cr_assert(p->a->agreed.mode.crc && p->b->agreed.mode.crc);
	cr_assert(p->a->agreed.mode.markers_rx && !p->a->agreed.mode.markers_tx);
	cr_assert(!p->b->agreed.mode.markers_rx && p->b->agreed.mode.markers_tx);
	/* nothing exchanged: each keeps its own limits */
	conn_assert_limits(p, 3, 5, 16, 16);
	conn_assert_private_data(p, cli_pd, sizeof(cli_pd), srv_pd, sizeof(srv_pd));
	tcp_recv_early(p, "R1R1");
}

Test(conn, reject_with_private_data)
{
	conn_test_reject_with_private_data(&tcp.pair);
}

Test(conn, silent_responder_times_out)
{
	conn_test_silent_responder_times_out(&tcp.pair);
}

Test(conn, request_without_write_rtr)
{
	conn_test_request_without_write_rtr(&tcp.pair);
}

/*
 * Peer-to-peer with no RTR type in common, an iwx Initiator offering a Send only (over
 * SCTP it always offers a Write): the Responder rejects, -EPROTO, says why, and the
 * Initiator is refused.
 */
Test(conn, no_matching_rtr)
{
	struct conn_pair *p = &tcp.pair;
	struct iwx_conn_opts co = { .local = rev2 };

	co.local.p2p = true;
	co.local.rtr = IWX_RTR_SEND;
	p->b_opts = (struct iwx_conn_opts){ .local = rev2 };
	p->b_opts.local.rtr = IWX_RTR_WRITE | IWX_RTR_READ;
	tcp_listen(p);
	cr_assert_eq(conn_pair_connect(p, &co), 0);
	conn_pair_drive(p);

	cr_assert_eq(p->answer_ret, -EPROTO);
	cr_assert_eq(p->b->state, IWX_CONN_REJECTED);
	cr_assert_eq(p->b->error, -EPROTO);
	cr_assert(iwx_cause_eq(p->b->cause, IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR)));
	cr_assert_eq(p->a->state, IWX_CONN_REJECTED);
	cr_assert_eq(p->a->error, -ECONNREFUSED);
}

/* Same through iwx_conn_wait: it returns the refusal. */
Test(conn, wait_returns_refusal)
{
	struct iwx_conn_opts co = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_conn_tcp cli, srv;
	int lfd = listen_b(false);

	cr_assert_eq(connect_from_a(&cli, false, NETNS_B4, PORT, &co), 0);
	accept_one(&srv, lfd, &co);
	/* the initiator's handshake is done once the responder accepted: the Request goes out */
	cr_assert_eq(iwx_conn_step(&cli.conn, iwx_now_ms()), -EAGAIN);
	cr_assert_eq(cli.conn.state, IWX_CONN_WAIT_REPLY);
	cr_assert_eq(iwx_conn_tcp_wait(&srv.conn), 0);
	cr_assert_eq(srv.conn.state, IWX_CONN_REQUEST_IN);
	cr_assert_eq(iwx_conn_answer(&srv.conn, &(struct iwx_conn_opts){ .local = rev2 }, true), 0);
	cr_assert_eq(iwx_conn_tcp_wait(&srv.conn), 0);
	cr_assert_eq(srv.conn.state, IWX_CONN_REJECTED);
	cr_assert_eq(iwx_conn_tcp_wait(&cli.conn), -ECONNREFUSED);
	cr_assert_eq(cli.conn.peer_pd_len, 0);
	close(lfd);
}

/* Nobody answers the SYN (an address in the subnet that no one holds): connect times out. */
Test(conn, connect_times_out)
{
	struct iwx_conn_opts co = { .local = rev2, .timeout_ms = CONN_SHORT_MS };
	struct iwx_conn_tcp cli;
	uint64_t t0 = iwx_now_ms();

	cr_assert_eq(connect_from_a(&cli, false, "192.0.2.3", PORT, &co), 0);
	cr_assert_eq(cli.conn.state, IWX_CONN_CONNECTING);
	cr_assert_eq(iwx_conn_tcp_wait(&cli.conn), -ETIMEDOUT);
	conn_assert_own_timeout(t0);
}

/* A Request and the bytes after it in one segment: the Responder reads the Request only. */
Test(conn, responder_reads_only_the_request)
{
	struct iwx_conn_opts so = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req, rep;
	struct iwx_conn_tcp srv;
	int lfd = listen_b(false), raw = raw_connect();
	uint8_t f[64], got[4];
	ssize_t n;

	iwx_mpa_setup_request(&rev2, (const uint8_t *)"pd", 2, &req);
	n = iwx_mpa_rr_encode(f, sizeof(f), &req);
	cr_assert_gt(n, 0);
	memcpy(f + n, "ABCD", 4);
	cr_assert_eq(send(raw, f, n + 4, MSG_NOSIGNAL), n + 4);
	accept_one(&srv, lfd, &so);
	wait_queued(srv.fd, n + 4);
	cr_assert_eq(iwx_conn_tcp_wait(&srv.conn), 0);
	cr_assert_eq(srv.conn.state, IWX_CONN_REQUEST_IN);
	cr_assert_eq(srv.conn.peer_pd_len, 2);
	cr_assert_arr_eq(srv.conn.request.pd, "pd", 2);
	cr_assert_eq(iwx_conn_answer(&srv.conn, &so, false), 0);
	cr_assert_eq(iwx_conn_tcp_wait(&srv.conn), 0);
	cr_assert_eq(srv.conn.state, IWX_CONN_ESTABLISHED);
	read_exact(srv.fd, got, 4);
	cr_assert_arr_eq(got, "ABCD", 4);

	read_exact(raw, f, 24);
	cr_assert_eq(iwx_mpa_rr_decode(f, 24, true, &rep), 24);
	cr_assert(!rep.reject && rep.enhanced);
	iwx_conn_close(&srv.conn);
	close(raw);
	close(lfd);
}

/* The peer hangs up in the middle of its Request. */
Test(conn, peer_closes_early)
{
	struct iwx_conn_opts so = { .local = rev2, .timeout_ms = STALL_MS };
	struct iwx_conn_tcp srv;
	int lfd = listen_b(false), raw = raw_connect();

	cr_assert_eq(send(raw, IWX_MPA_KEY_REQ, 10, MSG_NOSIGNAL), 10);
	close(raw);
	accept_one(&srv, lfd, &so);
	cr_assert_eq(iwx_conn_tcp_wait(&srv.conn), -ECONNRESET);
	cr_assert_eq(srv.conn.state, IWX_CONN_FAILED);
	close(lfd);
}
