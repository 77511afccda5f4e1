// SPDX-License-Identifier: MIT
/*
 * What an RDMA application relies on when things go wrong, through libiwx and two real
 * daemons (an iwxd in each of two namespaces joined by a veth pair): every remote error
 * terminates the stream with the cause RFC 5040 §7 names, on both sides; every work
 * request still outstanding completes, flushed, rather than vanishing; set-up failures
 * come back as events; every way a connection ends is reported; and only those allowed
 * may use a daemon, and only their own memory.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/term.h"

#include "capture.h"
#include "child.h"
#include "conn_tcp.h"
#include "faults.h"
#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

#define DAEMON_ARGS	"--settle-ms 0 --timeout-ms 2000"
#define TIMEOUT_MS	2000		/* the daemons' --timeout-ms */
#define BUF_LEN		(1u << 20)
#define EVENT_MS	STALL_MS	/* a wait for what must come: bounded against a hang */
#define QUIET_MS	200		/* nothing more arrives in this long */
#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | \
			 IWX_ACCESS_REMOTE_READ)
/* RFC 5040 §4.8: the error of the side that terminates for a fault of its own */
#define LOCAL_CATASTROPHIC iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_CATASTROPHIC, 0)

static struct iwxd_pair pair;
static struct endpoint a, b;		/* a on daemon a, b on daemon b */
static struct endpoint other;		/* a second one, for the tests that need it */
static struct buf abuf, bbuf;		/* abuf local write only, bbuf every access */
static pid_t child = -1;

/* ----------------------------------------------------------------- set-up */

static void open_endpoints(void)
{
	cr_assert_eq(endpoint_open(&a, &pair, 0, 0), 0, "a device on iwxd a");
	cr_assert_eq(endpoint_open(&b, &pair, 1, 0), 0, "a device on iwxd b");
	abuf = buf_new(&a, NULL, BUF_LEN, IWX_ACCESS_LOCAL_WRITE, false);
	bbuf = buf_new(&b, NULL, BUF_LEN, ALL_ACCESS, false);
}

static void start(const char *args)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_start(&pair, args), 0, "two daemons");
	open_endpoints();
}

static void up(void)
{
	start(DAEMON_ARGS);
}

static void up_group(void)
{
	start(DAEMON_ARGS " -g nogroup");
}

static void down(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
	}
	if (other.dev)
		endpoint_close(&other);
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_errors, .init = up, .fini = down, .timeout = HANG_S);
TestSuite(daemon_access, .init = up_group, .fini = down, .timeout = HANG_S);

#define LINGER_CAP	4	/* daemon_linger's --max-lingering */

static void up_linger(void)
{
	start(DAEMON_ARGS " -g nogroup --max-lingering 4");
}

TestSuite(daemon_linger, .init = up_linger, .fini = down, .timeout = HANG_S);

/* ----------------------------------------------------- work and completions */

/* A signaled work request on one sge; rkey and raddr for Writes and Reads. */
static struct iwx_send_wr op(uint64_t wr_id, uint8_t opcode, struct iwx_sge sge, uint32_t rkey,
			     const void *raddr)
{
	return (struct iwx_send_wr){ .wr_id = wr_id, .opcode = opcode, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1, .sge = { sge }, .rkey = rkey,
				     .remote_addr = (uintptr_t)raddr };
}

static void post(struct endpoint *e, struct iwx_send_wr wr)
{
	int err = iwx_post_send(e->qp, &wr);

	cr_assert_eq(err, 0, "iwx_post_send of wr %lu: %s", wr.wr_id, iwx_strerror(err));
}

static void post_recv(struct endpoint *e, uint64_t wr_id, const struct buf *m, size_t off,
		      uint32_t len)
{
	struct iwx_recv_wr wr = { .wr_id = wr_id, .num_sge = 1, .sge = { sge_of(m, off, len) } };
	int err = iwx_post_recv(e->qp, &wr);

	cr_assert_eq(err, 0, "iwx_post_recv of wr %lu: %s", wr_id, iwx_strerror(err));
}

static struct iwx_wc expect_wc(struct endpoint *e, uint64_t wr_id, uint8_t opcode, uint8_t status)
{
	struct iwx_wc wc;
	int err = endpoint_wc(e, &wc);

	cr_assert_eq(err, 0, "a completion for wr %lu: %s", wr_id, iwx_strerror(err));
	cr_assert_eq(wc.wr_id, wr_id, "completion of wr %lu (%s), want wr %lu", wc.wr_id,
		     iwx_wc_status_name(wc.status), wr_id);
	cr_assert_eq(wc.opcode, opcode, "wr %lu: opcode %u, want %u", wr_id, wc.opcode, opcode);
	cr_assert_eq(wc.status, status, "wr %lu: '%s', want '%s'", wr_id,
		     iwx_wc_status_name(wc.status), iwx_wc_status_name(status));
	cr_assert_eq(wc.qp_num, iwx_qp_num(e->qp));
	return wc;
}

static void expect_no_wc(struct endpoint *e)
{
	struct iwx_wc wc;
	int n = iwx_wait_cq(e->cq, 1, &wc, QUIET_MS);

	cr_assert_eq(n, 0, "no more completions (got wr %lu: %s)", n > 0 ? wc.wr_id : 0,
		     n > 0 ? iwx_wc_status_name(wc.status) : iwx_strerror(n));
}

/* Once in error, whatever is posted completes flushed: no error return, no silence. */
static void expect_posts_flushed(struct endpoint *e, const struct buf *m)
{
	post(e, op(901, IWX_WR_SEND, sge_of(m, 0, 8), 0, NULL));
	expect_wc(e, 901, IWX_WC_SEND, IWX_WC_WR_FLUSH_ERR);
	post_recv(e, 902, m, 0, 8);
	expect_wc(e, 902, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_no_wc(e);
}

/* --------------------------------------------------------------- connections */

static struct iwx_event expect_event(struct endpoint *e, enum iwx_event_type type, int ms)
{
	struct iwx_event ev;
	int err = endpoint_event(e, &ev, ms);

	cr_assert_eq(err, 0, "waiting for '%s': %s", iwx_event_name(type), iwx_strerror(err));
	cr_assert_eq(ev.type, type, "event '%s' (status %d), want '%s'", iwx_event_name(ev.type),
		     ev.status, iwx_event_name(type));
	return ev;
}

/* A listener of e on namespace b's address; *to and *len say where to connect. */
static struct iwx_listener *listen_on_b(struct endpoint *e, bool v6, struct sockaddr_storage *to,
					socklen_t *len)
{
	struct iwx_listener *l;

	memset(to, 0, sizeof(*to));
	to->ss_family = v6 ? AF_INET6 : AF_INET;
	if (v6)
		inet_pton(AF_INET6, NETNS_B6, &((struct sockaddr_in6 *)to)->sin6_addr);
	else
		inet_pton(AF_INET, NETNS_B4, &((struct sockaddr_in *)to)->sin_addr);
	*len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	l = iwx_listen(e->dev, (struct sockaddr *)to, *len, 8);
	cr_assert_not_null(l, "iwx_listen: %s", iwx_strerror(errno));
	iwx_listener_addr(l, to);
	return l;
}

static void connect_to(struct endpoint *e, const struct sockaddr_storage *to, socklen_t len,
		       const struct iwx_conn_param *param)
{
	int err = iwx_connect(e->qp, (const struct sockaddr *)to, len, param);

	cr_assert_eq(err, 0, "iwx_connect: %s", iwx_strerror(err));
}

/* The ESTABLISHED event of e, which must be in RTS. */
static struct iwx_conn_info expect_established(struct endpoint *e)
{
	struct iwx_event ev = expect_event(e, IWX_EVENT_ESTABLISHED, EVENT_MS);

	cr_assert_eq(ev.qp, e->qp);
	cr_assert_eq(iwx_qp_state(e->qp), IWX_QPS_RTS);
	return ev.info;
}

/* Take the connection request on l and accept it onto e's queue pair. */
static struct iwx_conn_info accept_on(struct endpoint *e, struct iwx_listener *l,
				      const struct iwx_conn_param *param)
{
	struct iwx_event req = expect_event(e, IWX_EVENT_CONNECT_REQUEST, EVENT_MS);
	int err;

	cr_assert_eq(req.listener, l);
	err = iwx_accept(e->qp, req.conn_id, param);
	cr_assert_eq(err, 0, "iwx_accept: %s", iwx_strerror(err));
	return expect_established(e);
}

/* Connect x (the client) to y (on daemon b), both with param; info[2] (or NULL): both views. */
static void establish(struct endpoint *x, struct endpoint *y, bool v6,
		      const struct iwx_conn_param *param, struct iwx_conn_info *info)
{
	struct sockaddr_storage to;
	socklen_t len;
	struct iwx_listener *l = listen_on_b(y, v6, &to, &len);
	struct iwx_conn_info iy, ix;

	connect_to(x, &to, len, param);
	iy = accept_on(y, l, param);
	ix = expect_established(x);
	cr_assert_eq(iwx_listener_destroy(l), 0);
	if (info) {
		info[0] = ix;
		info[1] = iy;
	}
}

static void connect_ab(void)
{
	establish(&a, &b, false, NULL, NULL);
}

/* e's queue pair, replaced by a new one (in INIT) on cq. */
static void replace_qp(struct endpoint *e, struct iwx_cq *cq)
{
	struct iwx_qp *qp = iwx_create_qp(e->pd, &(struct iwx_qp_init_attr){ .send_cq = cq,
									.recv_cq = cq });

	cr_assert_not_null(qp, "a new QP: %s", iwx_strerror(errno));
	cr_assert_eq(iwx_destroy_qp(e->qp), 0);
	e->qp = qp;
	e->cq = cq;	/* an old CQ goes with the device */
}

/* e's queue pair, replaced by one on a completion queue of a single entry. */
static void one_entry_cq(struct endpoint *e)
{
	struct iwx_cq *cq = iwx_create_cq(e->dev, 1);

	cr_assert_not_null(cq, "a one-entry CQ: %s", iwx_strerror(errno));
	replace_qp(e, cq);
}

/* The DISCONNECTED event of e: its queue pair is in error. */
static struct iwx_term_info expect_disconnected(struct endpoint *e, bool local)
{
	struct iwx_event ev = expect_event(e, IWX_EVENT_DISCONNECTED, EVENT_MS);

	cr_assert_eq(ev.qp, e->qp);
	cr_assert_eq(ev.term.local, local, "local %d, want %d (%s)", ev.term.local, local,
		     ev.term.reason);
	cr_assert_eq(iwx_qp_state(e->qp), IWX_QPS_ERROR);
	return ev.term;
}

/* The stream of e ended without a Terminate (a close, or the stream lost): no cause. */
static void expect_closed(struct endpoint *e, bool local)
{
	struct iwx_term_info t = expect_disconnected(e, local);

	cr_assert_not(t.terminated, "no Terminate, but: %s", t.reason);
	cr_assert(!t.layer && !t.etype && !t.ecode, "no cause, but %u/%u/0x%02x", t.layer,
		  t.etype, t.ecode);
}

/* The stream of e ended with a Terminate of cause want, sent (local) or received. */
static struct iwx_term_info expect_terminated(struct endpoint *e, bool local,
					      struct iwx_term_cause want)
{
	struct iwx_term_info t = expect_disconnected(e, local);

	cr_assert(t.terminated, "a Terminate, but: %s", t.reason);
	cr_assert(t.layer == want.layer && t.etype == want.etype && t.ecode == want.ecode,
		  "cause %u/%u/0x%02x (%s), want %u/%u/0x%02x (%s)", t.layer, t.etype, t.ecode,
		  t.reason, want.layer, want.etype, want.ecode,
		  iwx_term_ecode_name(want.layer, want.etype, want.ecode));
	return t;
}

/*
 * Data moves, both ways: A writes len bytes into B's buffer and a Send behind the Write
 * tells B (which then sees every byte); A reads them back.
 */
static void transfer(size_t len)
{
	uint8_t *back = abuf.p + BUF_LEN / 2;

	fill_pattern(abuf.p, len, (uint32_t)len);
	post_recv(&b, 10, &bbuf, BUF_LEN - 64, 64);
	post(&a, op(11, IWX_WR_WRITE, sge_of(&abuf, 0, len), bbuf.mr->rkey, bbuf.p));
	post(&a, op(12, IWX_WR_SEND, sge_of(&abuf, 0, 16), 0, NULL));
	expect_wc(&a, 11, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	expect_wc(&a, 12, IWX_WC_SEND, IWX_WC_SUCCESS);
	cr_assert_eq(expect_wc(&b, 10, IWX_WC_RECV, IWX_WC_SUCCESS).byte_len, 16);
	cr_assert_arr_eq(bbuf.p + BUF_LEN - 64, abuf.p, 16, "the Send's bytes");
	cr_assert_arr_eq(bbuf.p, abuf.p, len, "the Write placed every byte");
	post(&a, op(13, IWX_WR_READ, sge_of(&abuf, BUF_LEN / 2, len), bbuf.mr->rkey, bbuf.p));
	cr_assert_eq(expect_wc(&a, 13, IWX_WC_RDMA_READ, IWX_WC_SUCCESS).byte_len, len);
	cr_assert_arr_eq(back, abuf.p, len, "the Read brought every byte back");
}

/* ------------------------------------------------------------ remote errors */

/*
 * A posts bad (wr 1), then a Read, a fenced Send (which waits for that Read) and a Write;
 * B has nrecv receives posted. B finds bad at fault and terminates with want; bad
 * completes with bad_status; everything behind it, and B's receives, complete flushed;
 * both queue pairs are in error, and what is posted afterwards is flushed too.
 */
static void remote_error(struct iwx_send_wr bad, uint8_t bad_status, int nrecv,
			 struct iwx_term_cause want)
{
	struct iwx_send_wr fenced = op(3, IWX_WR_SEND, sge_of(&abuf, 0, 16), 0, NULL);

	fenced.flags |= IWX_WR_FENCE;
	for (int i = 0; i < nrecv; i++)
		post_recv(&b, 100 + i, &bbuf, 64 * i, 64);
	post(&a, bad);
	post(&a, op(2, IWX_WR_READ, sge_of(&abuf, 4096, 64), bbuf.mr->rkey, bbuf.p));
	post(&a, fenced);
	post(&a, op(4, IWX_WR_WRITE, sge_of(&abuf, 0, 64), bbuf.mr->rkey, bbuf.p));

	expect_wc(&a, bad.wr_id, iwx_wc_opcode_of(bad.opcode), bad_status);
	expect_wc(&a, 2, IWX_WC_RDMA_READ, IWX_WC_WR_FLUSH_ERR);
	expect_wc(&a, 3, IWX_WC_SEND, IWX_WC_WR_FLUSH_ERR);
	expect_wc(&a, 4, IWX_WC_RDMA_WRITE, IWX_WC_WR_FLUSH_ERR);
	for (int i = 0; i < nrecv; i++)
		expect_wc(&b, 100 + i, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);

	expect_terminated(&a, false, want);
	expect_terminated(&b, true, want);
	expect_posts_flushed(&a, &abuf);
	expect_posts_flushed(&b, &bbuf);
}

/* An RDMA Write of 100 bytes from A to B's rkey at raddr. */
static struct iwx_send_wr bad_write(uint32_t rkey, const void *raddr)
{
	return op(1, IWX_WR_WRITE, sge_of(&abuf, 0, 100), rkey, raddr);
}

/*
 * A Write of 1 MiB that B refuses at its first segment, on a new connection each time:
 * B terminates while A is still sending, and A must still learn why (the Terminate
 * must not be lost to a reset from B's close): the Write completes with the remote
 * access error and A's DISCONNECTED event carries the cause, every time.
 */
/*
 * A 1 MiB Write from a refused by b: the Terminate reaches a while it still sends, and
 * the Write completes with its cause. With the fast path on b, b's receive buffer is
 * fixed at 4 MiB from the start at TC (iwxd --fastpath-rcvbuf), and TCP's own at XDP: a
 * may hand TCP the whole Write before the Terminate comes, and a Write TCP holds whole has completed (RFC 5040 §5.5,
 * rule 9); a then learns the cause from the event alone. Never flushed. true: the
 * completion carried the cause.
 */
static bool expect_big_write_refused(uint64_t wr_id, struct iwx_term_cause want)
{
	struct iwx_wc wc;

	if (!getenv("IWX_TEST_FASTPATH")) {
		expect_wc(&a, wr_id, IWX_WC_RDMA_WRITE, IWX_WC_REM_ACCESS_ERR);
		wc.status = IWX_WC_REM_ACCESS_ERR;
	} else {
		cr_assert_eq(endpoint_wc(&a, &wc), 0, "the Write's completion");
		cr_assert_eq(wc.wr_id, wr_id);
		cr_assert(wc.status == IWX_WC_REM_ACCESS_ERR || wc.status == IWX_WC_SUCCESS,
			  "the Write: '%s'", iwx_wc_status_name(wc.status));
	}
	expect_terminated(&a, false, want);
	expect_terminated(&b, true, want);
	return wc.status == IWX_WC_REM_ACCESS_ERR;
}

static void big_write_refused(uint32_t rkey, struct iwx_term_cause want)
{
	int with_cause = 0;

	for (int i = 0; i < 50; i++) {
		if (i) {
			replace_qp(&a, a.cq);
			replace_qp(&b, b.cq);
		}
		connect_ab();
		post(&a, op(1, IWX_WR_WRITE, sge_of(&abuf, 0, BUF_LEN), rkey, bbuf.p));
		with_cause += expect_big_write_refused(1, want);
	}
	cr_log_info("%d of 50 Writes completed with the cause, the rest before it came", with_cause);
}

Test(daemon_errors, big_write_with_wrong_key_learns_why)
{
	big_write_refused(bbuf.mr->rkey ^ 0x01, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

Test(daemon_errors, big_write_to_unknown_stag_learns_why)
{
	/* the index of no region (STags are drawn at random: the next one over is free) */
	big_write_refused(bbuf.mr->rkey ^ 0x100, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

struct raw_peer {
	struct iwx_conn_tcp	t;
	struct sockaddr_storage	to;
	socklen_t		len;
};

static int raw_peer_connect(void *arg)
{
	static const struct iwx_conn_opts o = { .local = { .rev = 2, .crc = true, .ird = 1,
							   .ord = 1 } };
	struct raw_peer *r = arg;

	return iwx_conn_tcp_connect(&r->t, (struct sockaddr *)&r->to, r->len, &o);
}

/*
 * A peer on namespace a that speaks MPA itself to y's listener on b: set up, then an FPDU
 * of nothing but zeros, which y's iwxd Terminates. The peer never reads or closes.
 */
static void raw_peer_breaks(struct raw_peer *r, struct endpoint *y)
{
	static const uint8_t zeros[64] = { 0x00, 0x3a };	/* 58 bytes of ULPDU, then CRC */
	struct iwx_listener *l = listen_on_b(y, false, &r->to, &r->len);
	struct iwx_event req;
	int err = netns_call(pair.ns.a, raw_peer_connect, r);
	struct iwx_conn *c = &r->t.conn;
	bool got = false;

	cr_assert_eq(err, 0, "connect from a: %s", strerror(-err));
	/* its Request goes out as the steps go, while y waits for it */
	for (int t = 0; t < EVENT_MS / 10 && !got; t++) {
		struct pollfd p = { .fd = r->t.fd, .events = iwx_conn_tcp_events(c) };

		if (iwx_conn_step(c, iwx_now_ms()) == -EAGAIN)
			poll(&p, 1, 5);
		got = iwx_get_event(y->dev, &req, 5) == 0;
	}
	cr_assert(got && req.type == IWX_EVENT_CONNECT_REQUEST, "y's connection request");
	err = iwx_accept(y->qp, req.conn_id, NULL);
	cr_assert_eq(err, 0, "iwx_accept: %s (conn state %d)", iwx_strerror(err), c->state);
	cr_assert_eq(iwx_conn_tcp_wait(c), 0, "%s", strerror(-c->error));
	cr_assert_eq(c->state, IWX_CONN_ESTABLISHED);
	expect_established(y);
	cr_assert_eq(iwx_listener_destroy(l), 0);
	cr_assert_eq(write(r->t.fd, zeros, sizeof(zeros)), (ssize_t)sizeof(zeros));
	cr_assert(expect_disconnected(y, true).terminated, "iwxd b sent a Terminate");
}

/*
 * A user whose peers make iwxd b send Terminates without end, and never close, holds as
 * many lingering sockets as it may; another user's Terminates still linger and reach a
 * peer still sending: every Write refused learns why.
 */
Test(daemon_linger, one_users_terminates_leave_another_its_lingering)
{
	static struct endpoint y[LINGER_CAP + 1];	/* nobody's, on b */
	static struct raw_peer x[LINGER_CAP + 1];	/* their peers, on a */
	int n = LINGER_CAP + 1;

	cr_assert_eq(chmod(pair.dir, 0711), 0, "nobody reaches the sockets (0660, nogroup)");
	for (int i = 0; i < n; i++) {
		cr_assert(!setegid(NOBODY) && !seteuid(NOBODY), "%m");
		cr_assert_eq(endpoint_open(&y[i], &pair, 1, 0), 0, "nobody's device on iwxd b");
		cr_assert(!seteuid(0) && !setegid(0), "%m");
		raw_peer_breaks(&x[i], &y[i]);
	}
	cr_assert_eq(status_num(pair.sock[1], "lingering"), LINGER_CAP, "nobody's connections: all it may");
	cr_assert_eq(status_num(pair.sock[1], "linger_full"), 1, "the one beyond, closed at once");
	cr_assert(iwxd_pair_logged(&pair, 1, "user 65534: at the limit of sockets of one user's "
				   "connections kept open after a Terminate"));

	/* root's big Writes, refused at their first segment while a still sends */
	for (int i = 0; i < 3; i++) {
		if (i) {
			replace_qp(&a, a.cq);
			replace_qp(&b, b.cq);
		}
		connect_ab();
		post(&a, op(1, IWX_WR_WRITE, sge_of(&abuf, 0, BUF_LEN), bbuf.mr->rkey ^ 1, bbuf.p));
		expect_big_write_refused(1, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
	}
	cr_assert_eq(status_num(pair.sock[1], "linger_full"), 1, "root's lingered: none closed at once");
	for (int i = 0; i < n; i++) {
		iwx_conn_close(&x[i].t.conn);
		endpoint_close(&y[i]);
	}
}

Test(daemon_errors, write_with_wrong_key)
{
	connect_ab();
	remote_error(bad_write(bbuf.mr->rkey ^ 0x01, bbuf.p), IWX_WC_SUCCESS, 2,
		     IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

Test(daemon_errors, write_beyond_bounds)
{
	connect_ab();
	remote_error(bad_write(bbuf.mr->rkey, bbuf.p + BUF_LEN - 50), IWX_WC_SUCCESS, 2,
		     IWX_CAUSE_DDP_T(IWX_DDP_T_BASE_BOUNDS));
}

Test(daemon_errors, write_without_remote_write_access)
{
	struct buf ro = buf_new(&b, NULL, 4096, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_READ, false);

	connect_ab();
	remote_error(bad_write(ro.mr->rkey, ro.p), IWX_WC_SUCCESS, 2,
		     IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS));
}

Test(daemon_errors, write_to_stag_of_another_pd)
{
	struct iwx_pd *pd2 = iwx_alloc_pd(b.dev);
	struct buf foreign;

	cr_assert_not_null(pd2, "a second protection domain");
	foreign = buf_new(&b, pd2, 4096, ALL_ACCESS, false);
	connect_ab();
	remote_error(bad_write(foreign.mr->rkey, foreign.p), IWX_WC_SUCCESS, 2,
		     IWX_CAUSE_DDP_T(IWX_DDP_T_STAG_NOT_ASSOC));
}

Test(daemon_errors, write_to_stag_the_peer_invalidated)
{
	struct buf victim = buf_new(&b, NULL, 4096, ALL_ACCESS, false);
	struct iwx_send_wr inv = op(5, IWX_WR_SEND_INV, sge_of(&abuf, 0, 8), 0, NULL);
	struct iwx_wc wc;

	inv.inval_stag = victim.mr->rkey;
	connect_ab();
	post_recv(&b, 50, &bbuf, 0, 64);
	post(&a, inv);
	expect_wc(&a, 5, IWX_WC_SEND, IWX_WC_SUCCESS);
	wc = expect_wc(&b, 50, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert(wc.with_inv, "the receive says the Send invalidated an STag");
	cr_assert_eq(wc.invalidated_stag, victim.mr->rkey);
	cr_assert_eq(wc.byte_len, 8);
	remote_error(bad_write(victim.mr->rkey, victim.p), IWX_WC_SUCCESS, 2,
		     IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

/* Local invalidation (iwx_invalidate_mr) fails a peer's Write just as a remote one does. */
Test(daemon_errors, write_to_stag_invalidated_locally)
{
	struct buf victim = buf_new(&b, NULL, 4096, ALL_ACCESS, false);

	cr_assert_eq(iwx_invalidate_mr(victim.mr), 0);
	connect_ab();
	remote_error(bad_write(victim.mr->rkey, victim.p), IWX_WC_SUCCESS, 2,
		     IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

/* Revalidated, the STag has a new key: Writes with it land, with the old key they fail. */
Test(daemon_errors, revalidated_stag_takes_a_new_key)
{
	struct buf victim = buf_new(&b, NULL, 4096, ALL_ACCESS, false);
	uint32_t old = victim.mr->rkey;

	cr_assert_eq(iwx_revalidate_mr(victim.mr), -EBUSY, "a valid STag is not revalidated");
	cr_assert_eq(iwx_invalidate_mr(victim.mr), 0);
	cr_assert_eq(iwx_revalidate_mr(victim.mr), 0);
	cr_assert_neq(victim.mr->rkey, old);
	cr_assert_eq(victim.mr->rkey >> 8, old >> 8, "same index, new key");
	cr_assert_eq(victim.mr->lkey, victim.mr->rkey);
	connect_ab();
	fill_pattern(abuf.p, 100, 3);
	post(&a, op(1, IWX_WR_WRITE, sge_of(&abuf, 0, 100), victim.mr->rkey, victim.p));
	post(&a, op(2, IWX_WR_READ, sge_of(&abuf, 4096, 100), victim.mr->rkey, victim.p));
	expect_wc(&a, 1, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	expect_wc(&a, 2, IWX_WC_RDMA_READ, IWX_WC_SUCCESS);
	cr_assert_arr_eq(victim.p, abuf.p, 100, "the Write with the new key landed");
	remote_error(bad_write(old, victim.p), IWX_WC_SUCCESS, 2,
		     IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

/* `iwx conns -j` of daemon i holds what, for its one queue pair. */
static void conns_say(int i, const char *what)
{
	char out[4096];

	cr_assert_eq(run_iwx(out, sizeof(out), "conns -j -s %s", pair.sock[i]), 0, "%s", out);
	cr_assert_not_null(strstr(out, what), "iwx conns of daemon %d: no '%s' in %s", i, what, out);
}

/* The receiver had none posted: both sides learn why, and so does `iwx conns` on each. */
Test(daemon_errors, send_with_no_receive_posted)
{
	connect_ab();
	remote_error(op(1, IWX_WR_SEND, sge_of(&abuf, 0, 10), 0, NULL), IWX_WC_SUCCESS, 0,
		     IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF));
	conns_say(1, "\"ended\": \"terminate_sent\"");
	conns_say(1, "no buffer");
	conns_say(0, "\"ended\": \"terminate_received\"");
	conns_say(0, "no buffer");
	for (int i = 0; i < 2; i++) {
		struct endpoint *e = i ? &b : &a;
		struct iwx_async_event ev;

		cr_assert_eq(iwx_get_async_event(e->dev, &ev, EVENT_MS), 0, "side %d: an async event", i);
		cr_assert_eq(ev.type, IWX_ASYNC_QP_FATAL);
		cr_assert_eq(ev.qp, e->qp);
		cr_assert(ev.term.terminated && ev.term.local == (i == 1), "side %d: sent by b", i);
		cr_assert(ev.term.layer == IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF).layer &&
			  ev.term.ecode == IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF).ecode,
			  "side %d: %s", i, ev.term.reason);
		cr_assert_eq(iwx_get_async_event(e->dev, &ev, 0), -EAGAIN, "one event");
	}
}

Test(daemon_errors, read_of_source_outside_bounds)
{
	uint8_t *near_end = bbuf.p + BUF_LEN - 10;

	connect_ab();
	remote_error(op(1, IWX_WR_READ, sge_of(&abuf, 0, 100), bbuf.mr->rkey, near_end),
		     IWX_WC_REM_ACCESS_ERR, 2, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS));
}

/* ------------------------------------------------------ MPA and set-up */

Test(daemon_errors, mpa_revision_1)
{
	struct iwx_conn_param p = { .mpa_rev = 1 };
	struct iwx_conn_info info[2];

	establish(&a, &b, false, &p, info);
	cr_assert_eq(info[0].mpa_rev, 1, "client: revision %u", info[0].mpa_rev);
	cr_assert_eq(info[1].mpa_rev, 1, "server: revision %u", info[1].mpa_rev);
	transfer(256 << 10);
}

/*
 * RFC 6581 peer-to-peer: both MPA frames say P2P, and the initiator's first FPDU is the
 * ready-to-receive message, a zero-length RDMA Write or Read that completes nothing.
 */
Test(daemon_errors, peer_to_peer_with_rtr)
{
	struct iwx_conn_param p = { .p2p = true };
	struct iwx_conn_info info[2];
	char pcap[128], dev[32], cmd[256], line[512];
	int p2p_frames = 0, first_fpdu_rtr = -1;
	pid_t cap;
	FILE *f;

	snprintf(pcap, sizeof(pcap), "%s/p2p.pcap", pair.dir);
	snprintf(dev, sizeof(dev), "iwx%da", getpid());
	cap = capture_start(pair.ns.a, dev, pcap, "tcp");
	cr_assert_gt(cap, 0);
	establish(&a, &b, false, &p, info);
	cr_assert_eq(info[0].mpa_rev, 2);
	transfer(256 << 10);
	expect_no_wc(&a);	/* the RTR completes nothing */
	expect_no_wc(&b);
	capture_stop(cap);

	snprintf(cmd, sizeof(cmd), "build/iwx decode %s", pcap);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "MPA Re") && strstr(line, "P2P 1"))
			p2p_frames++;
		else if (first_fpdu_rtr < 0 && strstr(line, "192.0.2.1:") &&
			 strstr(line, " > 192.0.2.2:") && strstr(line, "RDMA"))
			first_fpdu_rtr = (strstr(line, "RDMA Write") || strstr(line, "RDMA Read Request")) &&
					 strstr(line, "len 0") != NULL;
	}
	pclose(f);
	cr_assert_eq(p2p_frames, 2, "the Request and the Reply say P2P");
	cr_assert_eq(first_fpdu_rtr, 1, "the initiator's first FPDU is a zero-length Write or Read");
}

Test(daemon_errors, crc_off)
{
	struct iwx_conn_param p = { .crc = -1 };
	struct iwx_conn_info info[2];

	establish(&a, &b, false, &p, info);
	cr_assert_not(info[0].crc, "client: no CRC");
	cr_assert_not(info[1].crc, "server: no CRC");
	transfer(256 << 10);
}

Test(daemon_errors, markers)
{
	struct iwx_conn_param p = { .markers = true };
	struct iwx_conn_info info[2];

	establish(&a, &b, false, &p, info);
	for (int i = 0; i < 2; i++)
		cr_assert(info[i].markers_rx && info[i].markers_tx, "side %d: markers rx %d tx %d",
			  i, info[i].markers_rx, info[i].markers_tx);
	transfer(256 << 10);
}

Test(daemon_errors, ipv6)
{
	struct iwx_conn_info info[2];

	establish(&a, &b, true, NULL, info);
	cr_assert_eq(info[0].peer.ss_family, AF_INET6);
	cr_assert_eq(info[1].peer.ss_family, AF_INET6);
	transfer(256 << 10);
}

Test(daemon_errors, reject_with_private_data)
{
	struct iwx_conn_param p = { .private_data = "hello", .private_data_len = 5 };
	struct sockaddr_storage to;
	socklen_t len;
	struct iwx_listener *l = listen_on_b(&b, false, &to, &len);
	struct iwx_event ev;

	connect_to(&a, &to, len, &p);
	ev = expect_event(&b, IWX_EVENT_CONNECT_REQUEST, EVENT_MS);
	cr_assert_eq(ev.listener, l);
	cr_assert_eq(ev.private_data_len, 5);
	cr_assert_arr_eq(ev.private_data, "hello", 5);
	cr_assert_eq(iwx_reject(b.dev, ev.conn_id, "busy", 4), 0);

	ev = expect_event(&a, IWX_EVENT_REJECTED, EVENT_MS);
	cr_assert_eq(ev.qp, a.qp);
	cr_assert_eq(ev.private_data_len, 4);
	cr_assert_arr_eq(ev.private_data, "busy", 4);
	cr_assert_eq(iwx_qp_state(a.qp), IWX_QPS_INIT, "back in INIT, to connect again");
	cr_assert_eq(iwx_listener_destroy(l), 0);

	connect_ab();
	transfer(4096);
}

/* The connect a made to addr fails with an UNREACHABLE event of status want, its reason
   saying why; how long it took from t0. */
static int64_t unreachable_since(uint64_t t0, int want, const char *why)
{
	struct iwx_event ev = expect_event(&a, IWX_EVENT_UNREACHABLE, TIMEOUT_MS + EVENT_MS);

	cr_assert_eq(ev.qp, a.qp);
	cr_assert_eq(ev.status, want, "status %d (%s), want %d", ev.status, iwx_strerror(ev.status),
		     want);
	cr_assert(ev.term.reason && strstr(ev.term.reason, why), "reason '%s', want '%s'",
		  ev.term.reason ? ev.term.reason : "(none)", why);
	cr_assert_eq(iwx_qp_state(a.qp), IWX_QPS_INIT);
	return iwx_now_ms() - t0;
}

/* Connecting a to addr fails so. */
static int64_t unreachable(const struct sockaddr_in *addr, int want, const char *why)
{
	uint64_t t0 = iwx_now_ms();

	connect_to(&a, (const struct sockaddr_storage *)addr, sizeof(*addr), NULL);
	return unreachable_since(t0, want, why);
}

/* A TCP listener in b's namespace, on a port of its own: into *sa. */
static int listener_in_b(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = netns_socket(pair.ns.b, AF_INET, SOCK_STREAM | SOCK_CLOEXEC);

	cr_assert_geq(fd, 0, "a socket in namespace b: %s", strerror(-fd));
	cr_assert_eq(bind(fd, (struct sockaddr *)sa, sizeof(*sa)), 0, "bind: %m");
	cr_assert_eq(listen(fd, 4), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)sa, &len), 0);
	return fd;
}

static struct sockaddr_in addr_b(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, NETNS_B4, &sa.sin_addr);
	return sa;
}

Test(daemon_errors, peer_that_never_sends_its_mpa_frame)
{
	struct sockaddr_in sa = addr_b(0);
	int fd = listener_in_b(&sa);
	char line[128];
	int64_t ms;

	/* TCP connects (the kernel completes the handshake), then silence: never accepted */
	ms = unreachable(&sa, -ETIMEDOUT, "connected, but no MPA Reply came within the set-up time");
	close(fd);
	snprintf(line, sizeof(line), "with %s:%u failed (connected, waiting for the MPA Reply): ",
		 NETNS_B4, ntohs(sa.sin_port));
	cr_assert(iwxd_pair_logged(&pair, 0, line), "iwxd a's log names the peer: %s", line);
	/* not before the daemon's time-out; how long after it is the machine's pace */
	cr_assert_geq(ms, TIMEOUT_MS - 100, "gave up after %ld ms, before the daemon's %d ms", (long)ms,
		      TIMEOUT_MS);
}

Test(daemon_errors, nobody_listening)
{
	struct sockaddr_in sa = addr_b(9);	/* a fresh namespace listens on nothing */

	/* refused: the peer's RST, not a time-out */
	unreachable(&sa, -ECONNREFUSED, "nothing listens at the address");
}

/* A web server at the address: it takes the TCP connection and answers in HTTP. */
Test(daemon_errors, peer_that_answers_in_http)
{
	static const char http[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
	struct sockaddr_in sa = addr_b(0);
	int lfd = listener_in_b(&sa), fd;
	uint64_t t0 = iwx_now_ms();
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	char req[64], line[128];

	connect_to(&a, (const struct sockaddr_storage *)&sa, sizeof(sa), NULL);
	cr_assert_eq(poll(&p, 1, EVENT_MS), 1, "iwxd a connected");
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(fd, 0, "accept: %m");
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, EVENT_MS), 1, "the MPA Request came");
	cr_assert_gt(read(fd, req, sizeof(req)), 0);
	cr_assert_eq(write(fd, http, sizeof(http) - 1), (ssize_t)sizeof(http) - 1);
	unreachable_since(t0, -EPROTO, "connected, but the peer's reply is not a valid MPA Reply: "
			  "not an iWARP peer?");
	close(fd);
	close(lfd);
	snprintf(line, sizeof(line), "with %s:%u failed (connected, waiting for the MPA Reply): ",
		 NETNS_B4, ntohs(sa.sin_port));
	cr_assert(iwxd_pair_logged(&pair, 0, line), "iwxd a's log names the peer: %s", line);
}

/* A request the application never answers is rejected by iwxd at half its set-up time-out. */
Test(daemon_errors, unanswered_request_is_rejected)
{
	struct sockaddr_storage to;
	socklen_t len;
	struct iwx_listener *l = listen_on_b(&b, false, &to, &len);
	struct iwx_event ev;
	uint64_t t0 = iwx_now_ms(), ms;

	connect_to(&a, &to, len, NULL);
	expect_event(&b, IWX_EVENT_CONNECT_REQUEST, EVENT_MS);	/* and no answer */
	ev = expect_event(&a, IWX_EVENT_REJECTED, TIMEOUT_MS + EVENT_MS);
	ms = iwx_now_ms() - t0;
	cr_assert_eq(ev.qp, a.qp);
	cr_assert_eq(iwx_qp_state(a.qp), IWX_QPS_INIT, "free to connect again");
	/* by the answer's timer (half the set-up's), not before it: how long after is the pace's */
	cr_assert_geq(ms, TIMEOUT_MS / 2 - 100, "rejected after %ld ms, before half the daemon's %d ms",
		      (long)ms, TIMEOUT_MS);
	cr_assert(iwxd_pair_logged(&pair, 1, "not answered in time: rejected"));
	iwx_listener_destroy(l);
}

/* ---------------------------------------------------------------- teardown */

Test(daemon_errors, graceful_disconnect)
{
	connect_ab();
	post_recv(&a, 1, &abuf, 0, 64);
	post_recv(&b, 2, &bbuf, 0, 64);
	post_recv(&b, 3, &bbuf, 64, 64);
	cr_assert_eq(iwx_disconnect(a.qp), 0);
	expect_closed(&a, true);
	expect_closed(&b, false);
	expect_wc(&a, 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_wc(&b, 2, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_wc(&b, 3, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_posts_flushed(&a, &abuf);
	expect_posts_flushed(&b, &bbuf);
}

/* A close without a Terminate says so on both sides, with no cause (expect_closed). */
Test(daemon_errors, plain_close_reports_no_cause)
{
	connect_ab();
	cr_assert_eq(iwx_disconnect(b.qp), 0);
	expect_closed(&b, true);
	expect_closed(&a, false);
	cr_assert_eq(iwx_disconnect(a.qp), -ENOTCONN);
}

/* "the stream ends after what is queued" (iwx.h): a Write and a Send posted just before */
Test(daemon_errors, graceful_disconnect_delivers_what_was_posted)
{
	fill_pattern(abuf.p, BUF_LEN, 7);
	connect_ab();
	post_recv(&b, 1, &bbuf, BUF_LEN - 64, 64);
	post(&a, op(2, IWX_WR_WRITE, sge_of(&abuf, 0, BUF_LEN / 2), bbuf.mr->rkey, bbuf.p));
	post(&a, op(3, IWX_WR_SEND, sge_of(&abuf, 0, 64), 0, NULL));
	cr_assert_eq(iwx_disconnect(a.qp), 0);
	expect_wc(&a, 2, IWX_WC_RDMA_WRITE, IWX_WC_SUCCESS);
	expect_wc(&a, 3, IWX_WC_SEND, IWX_WC_SUCCESS);
	expect_wc(&b, 1, IWX_WC_RECV, IWX_WC_SUCCESS);
	cr_assert_arr_eq(bbuf.p, abuf.p, BUF_LEN / 2, "the Write arrived whole");
	cr_assert_arr_eq(bbuf.p + BUF_LEN - 64, abuf.p, 64, "the Send arrived");
	expect_closed(&a, true);
	expect_closed(&b, false);
}

/*
 * A disconnect never needs more CQ room than the application gave: with a one-entry
 * CQ on each side and several receives posted, DISCONNECTED comes on both sides at
 * once, and the flushed receives follow one by one as the application polls.
 */
static void disconnect_with_one_entry_cqs(struct endpoint *closer, struct endpoint *peer)
{
	enum { NRECV = 3 };

	one_entry_cq(&a);
	one_entry_cq(&b);
	connect_ab();
	for (int i = 0; i < NRECV; i++) {
		post_recv(&a, 10 + i, &abuf, 64 * i, 64);
		post_recv(&b, 20 + i, &bbuf, 64 * i, 64);
	}
	cr_assert_eq(iwx_disconnect(closer->qp), 0);
	expect_closed(closer, true);
	expect_closed(peer, false);
	cr_assert_eq(iwx_disconnect(peer->qp), -ENOTCONN, "the passive side is closed already");
	for (int i = 0; i < NRECV; i++) {
		expect_wc(&a, 10 + i, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
		expect_wc(&b, 20 + i, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	}
	expect_posts_flushed(&a, &abuf);
	expect_posts_flushed(&b, &bbuf);
}

Test(daemon_errors, disconnect_with_one_entry_cq)
{
	disconnect_with_one_entry_cqs(&a, &b);
}

Test(daemon_errors, disconnected_by_the_peer_with_one_entry_cq)
{
	disconnect_with_one_entry_cqs(&b, &a);
}

Test(daemon_errors, destroying_a_connected_qp_aborts)
{
	connect_ab();
	post_recv(&b, 1, &bbuf, 0, 64);
	post_recv(&b, 2, &bbuf, 64, 64);
	cr_assert_eq(iwx_destroy_qp(a.qp), 0);
	a.qp = NULL;
	expect_closed(&b, false);
	expect_wc(&b, 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_wc(&b, 2, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_posts_flushed(&b, &bbuf);
}

/* In a child: connect a device of its own on daemon a to `to`, say so on fd, wait to be killed. */
static void __attribute__((noreturn)) connecting_child(const struct sockaddr_storage *to,
						       socklen_t len, int fd)
{
	struct endpoint e;
	struct iwx_event ev;
	char said = 'E';

	if (endpoint_open(&e, &pair, 0, 0) ||
	    iwx_connect(e.qp, (const struct sockaddr *)to, len, NULL) ||
	    endpoint_event(&e, &ev, EVENT_MS) || ev.type != IWX_EVENT_ESTABLISHED)
		said = 'F';
	if (write(fd, &said, 1) != 1 || said != 'E')
		_exit(1);
	for (;;)
		pause();
}

Test(daemon_errors, peer_process_killed)
{
	struct sockaddr_storage to;
	socklen_t len;
	struct iwx_listener *l = listen_on_b(&b, false, &to, &len);
	struct pollfd p = { .events = POLLIN };
	int fds[2];
	char said = 0;

	cr_assert_eq(pipe(fds), 0);
	post_recv(&b, 1, &bbuf, 0, 64);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0)
		connecting_child(&to, len, fds[1]);
	accept_on(&b, l, NULL);
	p.fd = fds[0];
	cr_assert_eq(poll(&p, 1, EVENT_MS), 1, "the child says whether it is connected");
	cr_assert_eq(read(fds[0], &said, 1), 1);
	cr_assert_eq(said, 'E', "the child is connected");
	close(fds[0]);
	close(fds[1]);

	kill(child, SIGKILL);
	cr_assert(WIFSIGNALED(child_wait(child, CHILD_MS)));
	child = -1;
	expect_closed(&b, false);
	expect_wc(&b, 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_posts_flushed(&b, &bbuf);

	/* iwxd a cleaned up after its client and still serves: new devices there connect */
	endpoint_close(&a);
	endpoint_close(&b);
	open_endpoints();
	connect_ab();
	transfer(4096);
}

Test(daemon_errors, daemon_killed)
{
	struct iwx_event ev;
	struct iwx_wc wc;

	connect_ab();
	post_recv(&a, 1, &abuf, 0, 64);
	post_recv(&b, 2, &bbuf, 0, 64);
	iwxd_pair_kill(&pair, 1);

	cr_assert_eq(iwx_wait_cq(b.cq, 1, &wc, EVENT_MS), -ESHUTDOWN, "the device knows iwxd went");
	cr_assert_eq(iwx_get_event(b.dev, &ev, EVENT_MS), 0);
	cr_assert_eq(ev.type, IWX_EVENT_DEVICE_LOST, "event '%s'", iwx_event_name(ev.type));
	cr_assert_eq(iwx_get_event(b.dev, &ev, EVENT_MS), -ESHUTDOWN);
	cr_assert_eq(iwx_qp_state(b.qp), IWX_QPS_ERROR);

	expect_closed(&a, false);
	expect_wc(&a, 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	expect_posts_flushed(&a, &abuf);
}

/*
 * A program that polls its CQ in a loop, never waiting in libiwx, learns that iwxd went
 * away: iwx_poll_cq fails (it looks for the hang-up at most every 100 ms), posts fail,
 * and the asynchronous event says so once.
 */
Test(daemon_errors, a_busy_poller_learns_its_daemon_was_killed)
{
	struct pollfd p = { .fd = iwx_async_fd(a.dev), .events = POLLIN };
	struct iwx_async_event ev;
	uint64_t end;
	struct iwx_wc wc;
	int k = 0;

	connect_ab();
	post_recv(&a, 1, &abuf, 0, 64);
	cr_assert_eq(poll(&p, 1, 0), 0, "no asynchronous event while iwxd serves");
	cr_assert_eq(iwx_get_async_event(a.dev, &ev, 0), -EAGAIN);
	iwxd_pair_kill(&pair, 0);

	end = iwx_now_ms() + STALL_MS;	/* the socket's end tells it: an event, bounded against a hang */
	while (iwx_now_ms() < end && (k = iwx_poll_cq(a.cq, 1, &wc)) == 0)
		;
	cr_assert_eq(k, -ESHUTDOWN, "iwx_poll_cq: %d", k);
	cr_assert_eq(iwx_post_recv(a.qp, &(struct iwx_recv_wr){ .wr_id = 2, .num_sge = 1,
		.sge = { sge_of(&abuf, 0, 64) } }), -ESHUTDOWN);
	cr_assert_eq(poll(&p, 1, EVENT_MS), 1, "iwx_async_fd reads");
	cr_assert_eq(iwx_get_async_event(a.dev, &ev, 0), 0);
	cr_assert_eq(ev.type, IWX_ASYNC_DEVICE_FATAL);
	cr_assert_eq(poll(&p, 1, 0), 0, "told once: it reads no more");
	cr_assert_eq(iwx_get_async_event(a.dev, &ev, 0), -EAGAIN);
}

/* ------------------------------------------------------------ access control */

/* In a child: open a device on the daemon at socket path arg, allocate a PD: 0 or the errno. */
static int open_and_alloc(void *arg)
{
	IWX_OPTS(iwx_open_opts, o, .socket = arg, .arena_size = 1 << 20);
	struct iwx_device *dev = iwx_open(&o);

	if (!dev)
		return errno;
	return iwx_alloc_pd(dev) ? 0 : errno;
}

/* A child as uid and gid (no supplementary groups) opens a device on iwxd a: 0 or the errno. */
static int open_as(uid_t uid, gid_t gid)
{
	return run_as(uid, gid, open_and_alloc, pair.sock[0]);
}

/* Open iwxd a's socket file to everyone, so that only the daemon's own check stands. */
static void socket_open_to_all(void)
{
	cr_assert_eq(chmod(pair.sock[0], 0666), 0);
}

/* ------------------------------------------------------- iwxd as an ordinary user */

static char user_dir[64];

static void user_up(void)
{
	snprintf(user_dir, sizeof(user_dir), "/tmp/iwx-user-XXXXXX");
	cr_assert_not_null(mkdtemp(user_dir));
	cr_assert_eq(chmod(user_dir, 0777), 0);	/* nobody makes its socket there */
}

static void user_down(void)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", user_dir);
	if (system(cmd)) {
		/* nothing more to undo */
	}
}

TestSuite(daemon_user, .init = user_up, .fini = user_down, .timeout = HANG_S);

/*
 * In a child that is nobody already: become iwxd with the arguments in arg (NULL-ended),
 * its output in user_dir/iwxd.log.
 */
static int exec_iwxd(void *arg)
{
	const char **argv = arg;
	char log[96];
	int fd;

	snprintf(log, sizeof(log), "%s/iwxd.log", user_dir);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		return 126;
	argv[0] = iwxd_path();
	execv(argv[0], (char *const *)argv);
	return 127;
}

/* Does user_dir/iwxd.log hold what? */
static bool user_log_says(const char *what)
{
	char log[96], text[4096] = "";
	FILE *f;
	size_t n;

	snprintf(log, sizeof(log), "%s/iwxd.log", user_dir);
	f = fopen(log, "re");
	if (!f)
		return false;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return strstr(text, what) != NULL;
}

/* iwxd as nobody serves nobody's programs (and not another user's), from memfds. */
Test(daemon_user, an_ordinary_user_serves_her_own_programs)
{
	char sock[96];
	const char *argv[] = { NULL, "-v", "-s", sock, "--sctp-port", "0", NULL };	/* not the host's port */
	pid_t d;
	int i;

	snprintf(sock, sizeof(sock), "%s/iwxd.sock", user_dir);
	d = child_as(NOBODY, NOBODY, exec_iwxd, argv);
	cr_assert_gt(d, 0);
	for (i = 0; i < 100 && access(sock, F_OK); i++)
		usleep(50000);
	cr_assert_eq(access(sock, F_OK), 0, "iwxd as nobody serves %s", sock);
	cr_assert_eq(run_as(NOBODY, NOBODY, open_and_alloc, sock), 0, "nobody's program: served");
	cr_assert_eq(chmod(sock, 0666), 0);	/* so that only iwxd's own check stands */
	cr_assert_eq(run_as(NOBODY - 1, NOBODY - 1, open_and_alloc, sock), EACCES,
		     "another user's: refused by iwxd");
	kill(d, SIGTERM);
	cr_assert(WIFEXITED(child_wait(d, CHILD_MS)));
	cr_assert_neq(access(sock, F_OK), 0, "its socket went with it");
	cr_assert(user_log_says("not root (uid 65534): serving uid 65534's programs"), "it says so");
}

/* As an ordinary user, --group of a group she is not in: a message, a failure, no socket left. */
Test(daemon_user, a_group_not_her_own_fails_and_leaves_no_socket)
{
	char sock[96];
	const char *argv[] = { NULL, "-s", sock, "--sctp-port", "0", "-g", "root", NULL };
	int st;
	pid_t d;

	snprintf(sock, sizeof(sock), "%s/iwxd.sock", user_dir);
	d = child_as(NOBODY, NOBODY, exec_iwxd, argv);
	cr_assert_gt(d, 0);
	st = child_wait(d, CHILD_MS);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "iwxd fails: status %#x", st);
	cr_assert(user_log_says("cannot give it to --group's group (not root: only to a group of your own)"),
		  "iwxd says why");
	cr_assert_neq(access(sock, F_OK), 0, "no socket left behind");
}

Test(daemon_access, group_member_may_open)
{
	cr_assert_eq(iwxd_pair_reachable(&pair), 0);
	cr_assert_eq(open_as(NOBODY, NOBODY), 0, "uid and gid nogroup: allowed");
}

Test(daemon_access, non_member_is_refused)
{
	cr_assert_eq(iwxd_pair_reachable(&pair), 0);
	cr_assert_eq(open_as(NOBODY, 1), EACCES, "the socket (0660, group nogroup) refuses it");
	cr_assert_not(iwxd_pair_logged(&pair, 0, "refused a client"), "refused before reaching iwxd");
	socket_open_to_all();
	cr_assert_eq(open_as(NOBODY, 1), EACCES, "refused by iwxd itself: EACCES");
	cr_assert(iwxd_pair_logged(&pair, 0, "refused a client"), "iwxd says it refused the client");
}

Test(daemon_errors, unprivileged_user_refused_without_group)
{
	cr_assert_eq(iwxd_pair_reachable(&pair), 0);
	cr_assert_eq(open_as(NOBODY, NOBODY), EACCES, "the socket (0600, root's) refuses it");
	cr_assert_not(iwxd_pair_logged(&pair, 0, "refused a client"), "refused before reaching iwxd");
	socket_open_to_all();
	cr_assert_eq(open_as(NOBODY, NOBODY), EACCES, "refused by iwxd itself: EACCES");
	cr_assert(iwxd_pair_logged(&pair, 0, "refused a client"), "iwxd says it refused the client");
}

Test(daemon_errors, foreign_lkey_is_a_local_protection_error)
{
	struct buf obuf;

	/* two devices on iwxd a: other's Send gathers from memory of a's region */
	fill_pattern(abuf.p, 64, 9);
	cr_assert_eq(endpoint_open(&other, &pair, 0, 0), 0);
	obuf = buf_new(&other, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	establish(&other, &b, false, NULL, NULL);
	post_recv(&b, 1, &bbuf, 0, 64);
	post(&other, op(7, IWX_WR_SEND, sge_of(&abuf, 0, 64), 0, NULL));
	struct iwx_term_info t;

	expect_wc(&other, 7, IWX_WC_SEND, IWX_WC_LOC_PROT_ERR);
	/* each side's reason says whose error it was */
	t = expect_terminated(&other, true, LOCAL_CATASTROPHIC);
	cr_assert(strstr(t.reason, "an error of this side's own (the failed request's completion "
		  "says which)"), "%s", t.reason);
	t = expect_terminated(&b, false, LOCAL_CATASTROPHIC);
	cr_assert(strstr(t.reason, "an error of the peer's own"), "%s", t.reason);
	expect_wc(&b, 1, IWX_WC_RECV, IWX_WC_WR_FLUSH_ERR);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(bbuf.p[i], 0, "nothing of a's memory reached b");
	expect_posts_flushed(&other, &obuf);
}

/*
 * A Read whose sink is deregistered while its Response is on the way: the Response finds
 * the sink's STag invalid. That Read fails here with a local protection error (not
 * flushed), and both sides name what happened: a's Terminate says the Response's STag is
 * invalid. b's Response is held back (every segment with payload b sends dropped) until
 * the sink is gone, so that the order does not depend on the machine's pace.
 */
Test(daemon_errors, read_whose_sink_is_deregistered_fails_here)
{
	struct faults_conf drop_all = { .seed = 1, .drop_ppm = 1000000 }, none = { .seed = 1 };
	struct faults *f = NULL;
	struct iwx_term_info t;
	int64_t rx = 0;
	int err;

	connect_ab();
	err = faults_attach(&f, pair.ns.b, pair.ns.dev[1], &drop_all);
	if (err)
		cr_skip_test("no fault injector here: %s", strerror(-err));
	post(&a, op(1, IWX_WR_READ, sge_of(&abuf, 0, 4096), bbuf.mr->rkey, bbuf.p));
	for (int i = 0; i < STALL_MS / 10 && (rx = status_num(pair.sock[1], "rx_fpdus")) < 1; i++)
		usleep(10000);
	cr_assert_geq(rx, 1, "b took the Read Request");
	cr_assert_eq(iwx_dereg_mr(abuf.mr), 0, "a Read's sink may be deregistered");
	abuf.mr = NULL;
	faults_set(f, &none);
	expect_wc(&a, 1, IWX_WC_RDMA_READ, IWX_WC_LOC_PROT_ERR);
	t = expect_disconnected(&a, true);
	cr_assert(t.terminated && iwx_cause_eq(iwx_cause(t.layer, t.etype, t.ecode),
					       IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG)), "a: %s", t.reason);
	t = expect_disconnected(&b, false);
	cr_assert(t.terminated && iwx_cause_eq(iwx_cause(t.layer, t.etype, t.ecode),
					       IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG)), "b: %s", t.reason);
	faults_detach(f);
}
