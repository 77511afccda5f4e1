// SPDX-License-Identifier: MIT
/*
 * What libiwx promises an application beyond moving bytes, through two real daemons:
 * its descriptors can drive a poll() loop (readable exactly when there is something to
 * take), a queue's depth is a limit, and its errors and names say what happened.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <iwx/iwx.h>

#include "capture.h"
#include "iwxd_pair.h"
#include "stall.h"

#define DAEMON_ARGS	"--settle-ms 0"
#define ARENA		(4u << 20)
#define EVENT_MS	STALL_MS	/* bound of every wait for something that must come: a hang */
#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)

static struct iwxd_pair pair;
static struct endpoint a, b;

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, DAEMON_ARGS, &a, &b, ARENA), 0);
}

static void down(void)
{
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_client, .init = up, .fini = down, .timeout = HANG_S);

/* ------------------------------------------------------------ a poll() loop */

/* Is fd readable within ms? */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* The next event of e as a poll() loop takes it: the event fd, then a get that never waits. */
static struct iwx_event next_event(struct endpoint *e, enum iwx_event_type want)
{
	struct iwx_event ev;
	int err;

	cr_assert(readable(iwx_event_fd(e->dev), EVENT_MS), "the event fd says '%s' is there",
		  iwx_event_name(want));
	err = iwx_get_event(e->dev, &ev, 0);
	cr_assert_eq(err, 0, "waiting for '%s': %s", iwx_event_name(want), iwx_strerror(err));
	cr_assert_eq(ev.type, want, "event '%s', want '%s'", iwx_event_name(ev.type),
		     iwx_event_name(want));
	return ev;
}

/* Nothing to take: the event fd is not readable, and a get says so. */
static void expect_quiet(struct endpoint *e)
{
	struct iwx_event ev;

	cr_assert_not(readable(iwx_event_fd(e->dev), 0), "the event fd is readable for nothing");
	cr_assert_eq(iwx_get_event(e->dev, &ev, 0), -EAGAIN);
}

/* Connect a to b through l, every event taken by next_event. */
static void connect_polled(struct iwx_listener *l)
{
	struct sockaddr_storage to;
	struct iwx_event ev;

	iwx_listener_addr(l, &to);
	cr_assert_eq(iwx_connect(a.qp, (struct sockaddr *)&to, sizeof(struct sockaddr_in), NULL), 0);
	ev = next_event(&b, IWX_EVENT_CONNECT_REQUEST);
	cr_assert_eq(iwx_accept(b.qp, ev.conn_id, NULL), 0);
	cr_assert_eq(next_event(&b, IWX_EVENT_ESTABLISHED).qp, b.qp);
	cr_assert_eq(next_event(&a, IWX_EVENT_ESTABLISHED).qp, a.qp);
	expect_quiet(&a);
	expect_quiet(&b);
}

/* A fresh queue pair for e, on its CQ, of the depths given (0: the default). */
static void new_qp(struct endpoint *e, uint32_t sq_depth, uint32_t rq_depth)
{
	struct iwx_qp_init_attr attr = { .send_cq = e->cq, .recv_cq = e->cq,
					 .sq_depth = sq_depth, .rq_depth = rq_depth };

	cr_assert_eq(iwx_destroy_qp(e->qp), 0);
	e->qp = iwx_create_qp(e->pd, &attr);
	cr_assert_not_null(e->qp, "iwx_create_qp: %s", iwx_strerror(errno));
}

static struct iwx_listener *listen_b(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct iwx_listener *l;

	inet_pton(AF_INET, NETNS_B4, &to.sin_addr);
	l = iwx_listen(b.dev, (struct sockaddr *)&to, sizeof(to), 8);
	cr_assert_not_null(l, "iwx_listen: %s", iwx_strerror(errno));
	return l;
}

/* The next completion of e, which must be wr_id's with status. */
static struct iwx_wc expect_wc(struct endpoint *e, uint64_t wr_id, uint8_t status)
{
	struct iwx_wc wc;
	int err = endpoint_wc(e, &wc);

	cr_assert_eq(err, 0, "a completion for wr %lu: %s", wr_id, iwx_strerror(err));
	cr_assert_eq(wc.wr_id, wr_id, "completion of wr %lu, want %lu", wc.wr_id, wr_id);
	cr_assert_eq(wc.status, status, "wr %lu: '%s'", wr_id, iwx_wc_status_name(wc.status));
	return wc;
}

static int post_write(struct endpoint *e, uint64_t wr_id, uint8_t flags, const struct buf *from,
		      const struct buf *to)
{
	struct iwx_send_wr wr = { .wr_id = wr_id, .opcode = IWX_WR_WRITE, .flags = flags,
				  .num_sge = 1, .sge = { sge_of(from, 0, 64) },
				  .remote_addr = (uintptr_t)to->p, .rkey = to->mr->rkey };

	return iwx_post_send(e->qp, &wr);
}

/*
 * Every event on both sides through a poll() loop: connect, a remote error, a new
 * connection and its graceful close, where the passive side's own iwx_disconnect
 * comes too late (the peer's close is in) and reads the DISCONNECTED event off the
 * socket while it waits for its answer. The event fd must stay readable for it.
 */
Test(daemon_client, event_fd_is_readable_while_an_event_waits)
{
	struct buf abuf = buf_new(&a, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf bbuf = buf_new(&b, NULL, 4096, ALL_ACCESS, false);
	struct iwx_listener *l = listen_b();
	struct iwx_send_wr read = { .wr_id = 2, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(&abuf, 64, 64) },
				    .remote_addr = (uintptr_t)bbuf.p, .rkey = bbuf.mr->rkey };
	char why[IWX_TERM_STR_LEN];
	struct iwx_event ev;
	int err;

	connect_polled(l);

	/* a Write with a wrong key: b terminates; a's wait for completions reads the socket */
	bbuf.mr->rkey ^= 1;
	cr_assert_eq(post_write(&a, 1, IWX_WR_SIGNALED, &abuf, &bbuf), 0);
	bbuf.mr->rkey ^= 1;
	cr_assert_eq(iwx_post_send(a.qp, &read), 0);
	cr_assert_str_eq(iwx_wc_opcode_name(expect_wc(&a, 1, IWX_WC_SUCCESS).opcode), "RDMA Write");
	expect_wc(&a, 2, IWX_WC_WR_FLUSH_ERR);
	ev = next_event(&a, IWX_EVENT_DISCONNECTED);
	cr_assert(ev.term.terminated && !ev.term.local);
	cr_assert_str_eq(iwx_term_str(&ev.term, why, sizeof(why)),
			 "DDP tagged buffer error: invalid STag", "the whole cause, named");
	cr_assert(next_event(&b, IWX_EVENT_DISCONNECTED).term.local);
	expect_quiet(&a);
	expect_quiet(&b);

	new_qp(&a, 0, 0);
	new_qp(&b, 0, 0);
	connect_polled(l);
	cr_assert_eq(iwx_disconnect(a.qp), 0);
	/* the peer's close is in: b's disconnect has nothing to close, and reads the event */
	cr_assert(readable(iwx_event_fd(b.dev), EVENT_MS), "b hears of a's close");
	err = iwx_disconnect(b.qp);
	cr_assert(err == 0 || err == -ENOTCONN, "iwx_disconnect: %s", iwx_strerror(err));
	ev = next_event(&b, IWX_EVENT_DISCONNECTED);
	cr_assert_not(ev.term.terminated || ev.term.local, "b: %s", ev.term.reason);
	ev = next_event(&a, IWX_EVENT_DISCONNECTED);
	cr_assert_not(ev.term.terminated, "a: %s", ev.term.reason);
	expect_quiet(&a);
	expect_quiet(&b);
	iwx_listener_destroy(l);
}

/*
 * The completion fd stays readable for the application's armed CQ though libiwx waits
 * on the same eventfd for a CQ of its own (iwx_wait_cq), until the application acks.
 */
Test(daemon_client, comp_fd_stays_readable_until_acked)
{
	struct buf abuf = buf_new(&a, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf bbuf = buf_new(&b, NULL, 4096, ALL_ACCESS, false);
	struct iwx_cq *idle = iwx_create_cq(a.dev, 16);
	struct iwx_wc wc;

	cr_assert_not_null(idle);
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	cr_assert_eq(iwx_req_notify_cq(a.cq), 0);
	cr_assert_eq(iwx_poll_cq(a.cq, 1, &wc), 0, "nothing before the arming");
	cr_assert_eq(post_write(&a, 1, IWX_WR_SIGNALED, &abuf, &bbuf), 0);
	cr_assert(readable(iwx_comp_fd(a.dev), EVENT_MS), "the armed CQ's completion wakes us");

	cr_assert_eq(iwx_wait_cq(idle, 1, &wc, 200), 0, "nothing on the other CQ");
	cr_assert(readable(iwx_comp_fd(a.dev), 0), "still readable: the application has not acked");
	iwx_ack_comp(a.dev);
	cr_assert_not(readable(iwx_comp_fd(a.dev), 0), "acked");
	cr_assert_eq(iwx_poll_cq(a.cq, 1, &wc), 1);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(iwx_destroy_cq(idle), 0);
}

/* ------------------------------------------------------------ queue depths */

#define DEPTH	4

/* a (the client) and b connected, a's queue pair DEPTH deep both ways. */
static void connect_shallow(void)
{
	struct iwx_qp_attr attr;

	new_qp(&a, DEPTH, DEPTH);
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	cr_assert_eq(iwx_query_qp(a.qp, &attr), 0);
	cr_assert_eq(attr.qp_num, iwx_qp_num(a.qp));
	cr_assert_eq(attr.state, IWX_QPS_RTS);
	cr_assert_eq(attr.sq_depth, DEPTH);
	cr_assert_eq(attr.rq_depth, DEPTH);
}

/* One request beyond the depth fails, and says why. */
static void expect_full(int err)
{
	cr_assert_eq(err, -ENOBUFS, "beyond the depth: %s", iwx_strerror(err));
	cr_assert(strstr(iwx_strerror(err), "queue is full"), "%s", iwx_strerror(err));
}

Test(daemon_client, send_queue_depth_is_a_limit)
{
	struct buf abuf = buf_new(&a, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf bbuf = buf_new(&b, NULL, 4096, ALL_ACCESS, false);

	connect_shallow();
	for (int i = 0; i < DEPTH; i++)
		cr_assert_eq(post_write(&a, i, IWX_WR_SIGNALED, &abuf, &bbuf), 0);
	usleep(100 * 1000);	/* iwxd has taken them off the ring, and completed them */
	expect_full(post_write(&a, 99, IWX_WR_SIGNALED, &abuf, &bbuf));

	/* every completion polled makes room for one, and gives its wr_id back */
	expect_wc(&a, 0, IWX_WC_SUCCESS);
	cr_assert_eq(post_write(&a, 10, IWX_WR_SIGNALED, &abuf, &bbuf), 0);
	expect_full(post_write(&a, 99, IWX_WR_SIGNALED, &abuf, &bbuf));
	for (int i = 1; i < DEPTH; i++)
		expect_wc(&a, i, IWX_WC_SUCCESS);
	expect_wc(&a, 10, IWX_WC_SUCCESS);

	/* unsignaled Writes count until a later completion of the send queue retires them */
	for (int i = 0; i < DEPTH - 1; i++)
		cr_assert_eq(post_write(&a, 20 + i, 0, &abuf, &bbuf), 0);
	cr_assert_eq(post_write(&a, 30, IWX_WR_SIGNALED, &abuf, &bbuf), 0);
	usleep(100 * 1000);
	expect_full(post_write(&a, 99, IWX_WR_SIGNALED, &abuf, &bbuf));
	expect_wc(&a, 30, IWX_WC_SUCCESS);
	for (int i = 0; i < DEPTH; i++)
		cr_assert_eq(post_write(&a, 40 + i, IWX_WR_SIGNALED, &abuf, &bbuf), 0);
	expect_full(post_write(&a, 99, IWX_WR_SIGNALED, &abuf, &bbuf));
	for (int i = 0; i < DEPTH; i++)
		expect_wc(&a, 40 + i, IWX_WC_SUCCESS);
}

Test(daemon_client, receive_queue_depth_is_a_limit)
{
	struct buf abuf = buf_new(&a, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf bbuf = buf_new(&b, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_send_wr send = { .wr_id = 7, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(&bbuf, 0, 16) } };
	struct iwx_recv_wr r = { .num_sge = 1, .sge = { sge_of(&abuf, 0, 64) } };

	connect_shallow();
	for (r.wr_id = 0; r.wr_id < DEPTH; r.wr_id++)
		cr_assert_eq(iwx_post_recv(a.qp, &r), 0);
	usleep(100 * 1000);
	expect_full(iwx_post_recv(a.qp, &r));

	cr_assert_eq(iwx_post_send(b.qp, &send), 0);
	expect_wc(&b, 7, IWX_WC_SUCCESS);
	expect_wc(&a, 0, IWX_WC_SUCCESS);
	cr_assert_eq(iwx_post_recv(a.qp, &r), 0, "room for one more");
	expect_full(iwx_post_recv(a.qp, &r));
}

/*
 * A send CQ full of completions the application has not polled stops nothing else:
 * Sends keep arriving into the receive CQ (perftest's server polls its send CQ only
 * once its send queue is full, and waits for receives until then), and the send
 * completions that had no room come, in order, once it polls.
 */
Test(daemon_client, a_full_send_cq_does_not_stop_receives)
{
	struct iwx_cq *scq = iwx_create_cq(a.dev, DEPTH);
	struct iwx_qp_init_attr attr = { .send_cq = scq, .recv_cq = a.cq, .sq_depth = DEPTH,
					 .rq_depth = 2 * DEPTH };
	struct buf abuf = buf_new(&a, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf bbuf = buf_new(&b, NULL, 4096, ALL_ACCESS, false);
	struct iwx_send_wr send = { .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED, .num_sge = 1,
				    .sge = { sge_of(&bbuf, 0, 16) } };
	struct iwx_recv_wr r = { .num_sge = 1, .sge = { sge_of(&abuf, 64, 64) } };
	struct iwx_wc wc;

	cr_assert_not_null(scq);
	cr_assert_eq(iwx_destroy_qp(a.qp), 0);
	a.qp = iwx_create_qp(a.pd, &attr);
	cr_assert_not_null(a.qp, "iwx_create_qp: %s", iwx_strerror(errno));
	for (r.wr_id = 100; r.wr_id < 100 + 2 * DEPTH; r.wr_id++)
		cr_assert_eq(iwx_post_recv(a.qp, &r), 0);
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	for (int i = 0; i < DEPTH; i++)
		cr_assert_eq(post_write(&a, i, IWX_WR_SIGNALED, &abuf, &bbuf), 0);
	usleep(100 * 1000);	/* the send CQ is full: DEPTH completions, none polled */

	for (int i = 0; i < 2 * DEPTH; i++) {
		send.wr_id = 200 + i;
		cr_assert_eq(iwx_post_send(b.qp, &send), 0);
		expect_wc(&b, 200 + i, IWX_WC_SUCCESS);
		cr_assert_eq(iwx_wait_cq(a.cq, 1, &wc, EVENT_MS), 1, "Send %d arrived", i);
		cr_assert_eq(wc.wr_id, 100 + (uint64_t)i);
		cr_assert_eq(wc.opcode, IWX_WC_RECV);
	}
	for (int i = 0; i < DEPTH; i++) {
		cr_assert_eq(iwx_wait_cq(scq, 1, &wc, EVENT_MS), 1);
		cr_assert_eq(wc.wr_id, (uint64_t)i, "in order");
	}
	cr_assert_eq(iwx_destroy_qp(a.qp), 0);
	a.qp = NULL;
	cr_assert_eq(iwx_destroy_cq(scq), 0);
}

/*
 * Destroying a connected queue pair closes its stream as the kernel's iWARP does: what
 * completed (handed to TCP, much of it still in the socket's buffer) reaches the peer,
 * then the close; no reset throws it away. perftest's server destroys its queue pairs
 * right after its last Send completes, and its peer waits for that Send.
 */
Test(daemon_client, destroy_delivers_what_completed)
{
	size_t len = 2u << 20;
	struct buf big = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, true);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, true);
	struct buf msg = buf_new(&a, NULL, 64, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf rcv = buf_new(&b, NULL, 64, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .num_sge = 1,
				     .sge = { sge_of(&big, 0, (uint32_t)len) },
				     .remote_addr = (uintptr_t)dst.p, .rkey = dst.mr->rkey };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(&msg, 0, 16) } };
	struct iwx_recv_wr r = { .wr_id = 3, .num_sge = 1, .sge = { sge_of(&rcv, 0, 64) } };

	char pcap[160], dev[32], cmd[256];
	pid_t cap;
	FILE *f;
	int resets = -1;

	snprintf(pcap, sizeof(pcap), "%s/resets.pcap", pair.dir);
	snprintf(dev, sizeof(dev), "iwx%da", getpid());
	cap = capture_start(pair.ns.a, dev, pcap, "tcp[tcpflags] & tcp-rst != 0");
	cr_assert_gt(cap, 0);
	memset(big.p, 0x5a, len);
	strcpy((char *)msg.p, "the last word");
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	cr_assert_eq(iwx_post_recv(b.qp, &r), 0);
	cr_assert_eq(iwx_post_send(a.qp, &write), 0);
	cr_assert_eq(iwx_post_send(a.qp, &send), 0);
	expect_wc(&a, 2, IWX_WC_SUCCESS);	/* all of it is TCP's */
	cr_assert_eq(iwx_destroy_qp(a.qp), 0);
	a.qp = NULL;

	expect_wc(&b, 3, IWX_WC_SUCCESS);
	cr_assert_str_eq((char *)rcv.p, "the last word");
	cr_assert_eq(memcmp(dst.p, big.p, len), 0, "the Write before it, whole");
	cr_assert_not(next_event(&b, IWX_EVENT_DISCONNECTED).term.terminated, "a close");
	capture_stop(cap);
	snprintf(cmd, sizeof(cmd), "tshark -r %s 2>/dev/null | wc -l", pcap);
	f = popen(cmd, "r");
	cr_assert(f && fscanf(f, "%d", &resets) == 1);
	pclose(f);
	cr_assert_eq(resets, 0, "closed with a FIN: %d resets on the wire", resets);
	free(big.p);
	free(dst.p);
}

/* Completions still in the CQ when their queue pair goes keep the application's wr_id. */
Test(daemon_client, completions_outlive_their_queue_pair)
{
	struct buf abuf = buf_new(&a, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_recv_wr r = { .wr_id = 1234, .num_sge = 1, .sge = { sge_of(&abuf, 0, 64) } };
	struct iwx_wc wc;

	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	cr_assert_eq(iwx_post_recv(a.qp, &r), 0);
	cr_assert_eq(iwx_req_notify_cq(a.cq), 0);
	cr_assert_eq(iwx_disconnect(a.qp), 0);
	cr_assert(readable(iwx_comp_fd(a.dev), EVENT_MS), "the receive is flushed");
	new_qp(&a, 0, 0);
	cr_assert_eq(endpoint_wc(&a, &wc), 0);
	cr_assert_eq(wc.wr_id, 1234);
	cr_assert_eq(wc.status, IWX_WC_WR_FLUSH_ERR);
}

/*
 * Each work queue's flushed completions reach its own CQ, whatever waits for the other's:
 * b's receive CQ holds 4, its queue pair 16 receives, and the stream ends (a goes). With
 * the receives' flush waiting for room, b's Send posted then, and the Send CQ the only
 * one b polls (ib_send_lat's server, its peer's iwxd stopped), hung for ever.
 */
Test(daemon_client, a_full_receive_cq_does_not_hold_back_a_flushed_send)
{
	struct buf bbuf = buf_new(&b, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_cq *rcq = iwx_create_cq(b.dev, 4);
	struct iwx_qp_init_attr attr = { .send_cq = b.cq, .sq_depth = 16, .rq_depth = 16 };
	struct iwx_send_wr s = { .wr_id = 99, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&bbuf, 0, 64) } };

	cr_assert_not_null(rcq, "iwx_create_cq: %s", iwx_strerror(errno));
	attr.recv_cq = rcq;
	cr_assert_eq(iwx_destroy_qp(b.qp), 0);
	b.qp = iwx_create_qp(b.pd, &attr);
	cr_assert_not_null(b.qp, "iwx_create_qp: %s", iwx_strerror(errno));
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	for (uint64_t i = 0; i < 16; i++) {
		struct iwx_recv_wr r = { .wr_id = i, .num_sge = 1, .sge = { sge_of(&bbuf, 64 * i, 64) } };

		cr_assert_eq(iwx_post_recv(b.qp, &r), 0, "receive %lu", i);
	}
	endpoint_close(&a);	/* its daemon ends the stream */
	next_event(&b, IWX_EVENT_DISCONNECTED);
	cr_assert_eq(iwx_post_send(b.qp, &s), 0);
	expect_wc(&b, 99, IWX_WC_WR_FLUSH_ERR);	/* b.cq: the Send CQ alone */
	b.cq = rcq;
	for (uint64_t i = 0; i < 16; i++)
		expect_wc(&b, i, IWX_WC_WR_FLUSH_ERR);
}

/* ------------------------------------------------------------------ errors */

Test(daemon_client, a_full_arena_says_so)
{
	void *p;

	cr_assert_eq(iwx_device_arena_size(a.dev), ARENA, "the size asked for at iwx_open");
	cr_assert_null(iwx_alloc(a.dev, ARENA + 1));
	cr_assert_eq(errno, ENOMEM);
	cr_assert(strstr(iwx_strerror(ENOMEM), "arena is full") &&
		  strstr(iwx_strerror(-ENOMEM), "arena_size"), "%s", iwx_strerror(ENOMEM));
	p = iwx_alloc(a.dev, ARENA);
	cr_assert_not_null(p, "the whole arena");
	iwx_free(a.dev, p);
}
