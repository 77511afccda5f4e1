// SPDX-License-Identifier: MIT
/*
 * iwxd at scale (issue 13): thousands of queue pairs connected at once between two iwxds
 * (iwxd_pair.h), every one of them still works (a Send on each, its bytes checked where
 * it lands), and closing them all completes and leaves neither daemon a connection.
 * This process is the application on both sides, one device on each daemon, one CQ each.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc.h"

#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "stall.h"
#include "testutil.h"

#define N		4096	/* queue pairs on each side */
#define INFLIGHT	64	/* connects not yet established */
#define MSG		64	/* one Send's bytes */
#define POLL_MS		100
#define SETUP_MS	(STALL_MS * 6)	/* iwxd's --timeout-ms and --close-ms: no set-up or close
					   here may time out, however slow */

static struct iwxd_pair pair;
static struct endpoint a, b;		/* a device, PD and CQ on each daemon; no qp of their own */
static struct iwx_qp *qa[N], *qb[N];	/* qa[i] is connected to qb[i] */
static struct buf src, dst;		/* slot i: the Send on qa[i], the receive on qb[i] */

/* A device on daemon i with one CQ for every queue pair's completions (one each). */
static void side_open(struct endpoint *e, int i)
{
	IWX_OPTS(iwx_open_opts, o, .socket = pair.sock[i]);

	e->dev = iwx_open(&o);
	cr_assert_not_null(e->dev, "device on daemon %d: %s", i, iwx_strerror(errno));
	e->pd = iwx_alloc_pd(e->dev);
	e->cq = e->pd ? iwx_create_cq(e->dev, N) : NULL;
	cr_assert_not_null(e->cq, "PD and CQ of %d: %s", N, iwx_strerror(errno));
}

static void up(void)
{
	struct rlimit rl;
	char args[128];

	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	/* a TCP socket for each queue pair in each iwxd, which inherits the limit from here */
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = rl.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0, "%m");
	cr_assert_gt(rl.rlim_cur, N + 256, "a descriptor limit of %lu is too low for %d queue pairs",
		     (unsigned long)rl.rlim_cur, N);
	/* a client's queue pairs, and their rings' mappings in iwxd */
	snprintf(args, sizeof(args), "--settle-ms 0 --timeout-ms %d --close-ms %d --max-qps %d "
		 "--max-maps %d", SETUP_MS, SETUP_MS, N, N + 64);
	cr_assert_eq(iwxd_pair_start(&pair, args), 0);
	side_open(&a, 0);
	side_open(&b, 1);
	src = buf_new(&a, NULL, N * MSG, 0, false);
	dst = buf_new(&b, NULL, N * MSG, IWX_ACCESS_LOCAL_WRITE, false);
}

static void down(void)
{
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_scale, .init = up, .fini = down, .timeout = HANG_S);

static struct iwx_qp *qp_new(struct endpoint *e)
{
	struct iwx_qp_init_attr attr = { .send_cq = e->cq, .recv_cq = e->cq };
	struct iwx_qp *qp = iwx_create_qp(e->pd, &attr);

	cr_assert_not_null(qp, "a queue pair: %s", iwx_strerror(errno));
	return qp;
}

/* Sleep until either device has an event or a completion, up to POLL_MS. */
static void wait_either(void)
{
	struct pollfd fds[] = {
		{ .fd = iwx_event_fd(a.dev), .events = POLLIN },
		{ .fd = iwx_event_fd(b.dev), .events = POLLIN },
		{ .fd = iwx_comp_fd(a.dev), .events = POLLIN },
		{ .fd = iwx_comp_fd(b.dev), .events = POLLIN },
	};

	iwx_req_notify_cq(a.cq);
	iwx_req_notify_cq(b.cq);
	poll(fds, 4, POLL_MS);
	iwx_ack_comp(a.dev);
	iwx_ack_comp(b.dev);
}

/* b's side of the set-up: a request names its qa index in its private data. */
static void serve_request(const struct iwx_event *ev)
{
	struct iwx_recv_wr wr = { .num_sge = 1 };
	uint32_t i;

	cr_assert_eq(ev->private_data_len, sizeof(i));
	memcpy(&i, ev->private_data, sizeof(i));
	cr_assert(i < N && !qb[i], "request for queue pair %u", i);
	qb[i] = qp_new(&b);
	wr.wr_id = i;
	wr.sge[0] = sge_of(&dst, (size_t)i * MSG, MSG);
	cr_assert_eq(iwx_post_recv(qb[i], &wr), 0);
	cr_assert_eq(iwx_accept(qb[i], ev->conn_id, NULL), 0);
}

/* Connect qa[i] to qb[i] for every i, INFLIGHT connects at a time. */
static void connect_all(void)
{
	struct sockaddr_storage ss = { .ss_family = AF_INET };
	struct sockaddr_in *to = (struct sockaddr_in *)&ss;
	struct iwx_listener *l;
	uint32_t started = 0, up_a = 0, up_b = 0;
	struct iwx_event ev;
	struct stall st;

	inet_pton(AF_INET, NETNS_B4, &to->sin_addr);
	l = iwx_listen(b.dev, (struct sockaddr *)to, sizeof(*to), 1024);
	cr_assert_not_null(l, "listen: %s", iwx_strerror(errno));
	iwx_listener_addr(l, &ss);	/* the port it was given */
	stall_start(&st, 0);
	while (up_a < N || up_b < N) {
		cr_assert_not(stall_stuck(&st, up_a + up_b), "set-up: %u of %u established in a, %u in b",
			      up_a, N, up_b);
		for (; started < N && started - up_a < INFLIGHT; started++) {
			struct iwx_conn_param p = { .private_data = &started,
						    .private_data_len = sizeof(started),
						    .settle_ms = IWX_SETTLE_NONE };

			qa[started] = qp_new(&a);
			cr_assert_eq(iwx_connect(qa[started], (struct sockaddr *)to, sizeof(*to), &p), 0);
		}
		while (!iwx_get_event(b.dev, &ev, 0)) {
			if (ev.type == IWX_EVENT_CONNECT_REQUEST) {
				serve_request(&ev);
				continue;
			}
			cr_assert_eq(ev.type, IWX_EVENT_ESTABLISHED, "b: event '%s'", iwx_event_name(ev.type));
			up_b++;
		}
		while (!iwx_get_event(a.dev, &ev, 0)) {
			cr_assert_eq(ev.type, IWX_EVENT_ESTABLISHED, "a, connection %u: '%s' (%s)", up_a,
				     iwx_event_name(ev.type), iwx_strerror(ev.status));
			up_a++;
		}
		wait_either();
	}
	iwx_listener_destroy(l);
}

/* Take n completions from e's CQ, each successful with opcode op; seen[wr_id] marks each. */
static void take_all(struct endpoint *e, uint32_t n, uint8_t op, bool *seen)
{
	struct iwx_wc wc[64];
	struct stall st;

	stall_start(&st, n);
	while (n) {
		int k = iwx_wait_cq(e->cq, 64, wc, POLL_MS);

		cr_assert_geq(k, 0, "%s", iwx_strerror(k));
		cr_assert_not(stall_stuck(&st, n), "%u completions still missing", n);
		for (int j = 0; j < k; j++, n--) {
			uint64_t i = wc[j].wr_id;

			cr_assert_eq(wc[j].status, IWX_WC_SUCCESS, "%lu: %s", (unsigned long)i,
				     iwx_wc_status_name(wc[j].status));
			cr_assert_eq(wc[j].opcode, op);
			cr_assert(i < N && !seen[i], "completion of %lu", (unsigned long)i);
			seen[i] = true;
		}
	}
}

/* Both daemons' STATUS, once neither has a queue pair or a connection being set up. */
static void wait_empty(struct iwx_ipc_status st[2])
{
	for (int i = 0; i < 2; i++) {
		int sock = iwx_ipc_connect(pair.sock[i], 5);
		struct stall left;

		cr_assert_geq(sock, 0, "STATUS of daemon %d", i);
		stall_start(&left, UINT64_MAX);
		do {
			cr_assert_eq(raw_call(sock, IWX_IPC_STATUS, NULL, 0, &st[i], sizeof(st[i]), NULL,
					      NULL), 0);
			cr_assert_not(stall_stuck(&left, st[i].qps + st[i].conns_pending),
				      "daemon %d: %u queue pairs, %u set-ups left", i, st[i].qps,
				      st[i].conns_pending);
			if (st[i].qps || st[i].conns_pending)
				usleep(POLL_MS * 1000);
		} while (st[i].qps || st[i].conns_pending);
		close(sock);
	}
}

/* iwxd i's resident memory (VmRSS), in KiB. */
static long rss_kib(int i)
{
	char path[64], line[128];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pair.pid[i]);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %m", path);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	cr_assert_geq(kib, 0, "no VmRSS in %s", path);
	return kib;
}

/*
 * A queue pair at rest costs iwxd what it holds (issue 42), not its rings' whole depth:
 * 256 send and 256 receive requests are 80 KiB of ring, of which a queue pair at rest
 * touches a page or two (b's, one receive posted). The bound is generous (32 KiB a queue
 * pair in either daemon); with every page of a ring made at once it was 96 KiB. Under
 * ASan (make test-asan, its iwxd too) the shadow and the allocator's redzones cost more
 * than the queue pair, and the test that follows connects as many: skipped there (make
 * test-fastpath runs it in the plain build).
 */
Test(daemon_scale, a_queue_pair_at_rest_costs_iwxd_what_it_holds)
{
	long before[2], after[2];

#ifdef __SANITIZE_ADDRESS__
	cr_skip_test("ASan's shadow and redzones, not the queue pair, would be measured");
#endif
	for (int i = 0; i < 2; i++)
		before[i] = rss_kib(i);
	connect_all();
	for (int i = 0; i < 2; i++) {
		after[i] = rss_kib(i);
		cr_log_info("iwxd %c: %ld KiB with %d queue pairs at rest, %ld KiB before: %.1f KiB "
			    "each", 'a' + i, after[i], N, before[i],
			    (double)(after[i] - before[i]) / N);
		cr_assert_leq(after[i] - before[i], 32L * N, "iwxd %c: %.1f KiB a queue pair",
			      'a' + i, (double)(after[i] - before[i]) / N);
	}
}

/* A queue pair of side whose stream ended, destroyed. */
static void gone(struct iwx_qp *qp, char side)
{
	uint32_t num;
	int err;

	cr_assert_not_null(qp, "%c: an event for a queue pair it does not have", side);
	num = iwx_qp_num(qp);
	err = iwx_destroy_qp(qp);
	cr_assert_eq(err, 0, "%c: destroying queue pair %u: %s", side, num, iwx_strerror(err));
}

Test(daemon_scale, thousands_of_queue_pairs_each_work_and_all_close)
{
	static bool sent[N], received[N];
	struct iwx_ipc_status st[2];
	uint32_t gone_a = 0, gone_b = 0;
	struct iwx_event ev;
	struct stall going;

	connect_all();

	/* a Send on each, its own bytes, into its own receive */
	for (uint32_t i = 0; i < N; i++) {
		struct iwx_send_wr wr = { .wr_id = i, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
					  .num_sge = 1, .sge = { sge_of(&src, (size_t)i * MSG, MSG) } };

		fill_pattern(src.p + (size_t)i * MSG, MSG, i);
		cr_assert_eq(iwx_post_send(qa[i], &wr), 0, "Send on %u", i);
	}
	take_all(&b, N, IWX_WC_RECV, received);
	take_all(&a, N, IWX_WC_SEND, sent);
	cr_assert_eq(memcmp(dst.p, src.p, (size_t)N * MSG), 0, "every Send landed in its receive");

	/* a closes every connection; each ends on both sides, and goes */
	for (uint32_t i = 0; i < N; i++)
		cr_assert_eq(iwx_disconnect(qa[i]), 0, "disconnect %u", i);
	stall_start(&going, 0);
	while (gone_a < N || gone_b < N) {
		cr_assert_not(stall_stuck(&going, gone_a + gone_b), "teardown: %u of %u ended in a, %u in b",
			      gone_a, N, gone_b);
		while (!iwx_get_event(a.dev, &ev, 0)) {
			cr_assert_eq(ev.type, IWX_EVENT_DISCONNECTED, "a: '%s'", iwx_event_name(ev.type));
			cr_assert(ev.term.local && !ev.term.terminated, "a: %s", ev.term.reason);
			gone(ev.qp, 'a');
			gone_a++;
		}
		while (!iwx_get_event(b.dev, &ev, 0)) {
			cr_assert_eq(ev.type, IWX_EVENT_DISCONNECTED, "b: '%s'", iwx_event_name(ev.type));
			cr_assert(!ev.term.local && !ev.term.terminated, "b: %s", ev.term.reason);
			gone(ev.qp, 'b');
			gone_b++;
		}
		wait_either();
	}
	wait_empty(st);
	for (int i = 0; i < 2; i++)
		cr_assert_geq(st[i].conns_established, N, "daemon %d", i);
}
