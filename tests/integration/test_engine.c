// SPDX-License-Identifier: MIT
/*
 * The software engine end to end: two network namespaces on a veth pair, kernel TCP,
 * the MPA set-up of conn.c and a queue pair on each side, moving megabytes with every
 * RDMAP operation; the traffic, captured on the veth, must decode in tshark with
 * every CRC good and no expert warning beyond tshark 4.0's two about revision 2.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture.h"
#include "conn.h"
#include "mem.h"
#include "netns.h"
#include "llp_tcp.h"
#include "qp.h"
#include "testutil.h"
#include "util/clock.h"

#define OWNER	1
#define PORT	7174
#define BUF_LEN	(24u << 20)

struct end {
	struct iwx_conn	conn;
	struct iwx_mem	*mem;
	uint32_t	pd, stag;
	uint8_t		*buf;
	struct iwx_engine_qp	*qp;
};

static struct netns_pair ns;
static struct end A, B;	/* A: initiator in ns a, B: responder in ns b */
static int lfd = -1;
static pid_t capture_pid = -1;
static char tmpdir[64];

static void fini(void)
{
	struct end *ends[] = { &A, &B };

	capture_stop(capture_pid);
	capture_pid = -1;
	for (int i = 0; i < 2; i++) {
		if (ends[i]->qp)
			iwx_qp_destroy(ends[i]->qp);	/* closes the socket */
		else
			iwx_conn_close(&ends[i]->conn);
		iwx_mem_free(ends[i]->mem);
		free(ends[i]->buf);
		memset(ends[i], 0, sizeof(*ends[i]));
	}
	if (lfd >= 0)
		close(lfd);
	lfd = -1;
	netns_pair_teardown(&ns);
	if (tmpdir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd))
			cr_log_warn("could not remove %s", tmpdir);
		tmpdir[0] = '\0';
	}
}

static void init(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for network namespaces");
	cr_assert_eq(netns_pair_setup(&ns), 0, "network namespaces");
}

TestSuite(engine, .init = init, .fini = fini, .timeout = 60);

struct listen_args {
	struct sockaddr_in addr;
};

static int do_listen(void *arg)
{
	struct listen_args *a = arg;

	return iwx_conn_tcp_listen((struct sockaddr *)&a->addr, sizeof(a->addr), 8);
}

struct connect_args {
	struct iwx_conn *c;
	struct sockaddr_in peer;
	const struct iwx_conn_opts *o;
};

static int do_connect(void *arg)
{
	struct connect_args *a = arg;

	return iwx_conn_tcp_connect(a->c, (struct sockaddr *)&a->peer, sizeof(a->peer), a->o);
}

static const struct iwx_mpa_local local = {
	.rev = 2, .crc = true, .ird = 16, .ord = 16,
};

/* TCP and MPA set-up between the namespaces, both conns driven from this thread. */
static void establish(void)
{
	struct iwx_conn_opts o = { .local = local, .timeout_ms = 5000 };
	struct listen_args la = { .addr = { .sin_family = AF_INET, .sin_port = htons(PORT) } };
	struct connect_args ca = { .c = &A.conn, .o = &o,
				   .peer = { .sin_family = AF_INET, .sin_port = htons(PORT) } };
	bool accepted = false;

	inet_pton(AF_INET, NETNS_B4, &la.addr.sin_addr);
	inet_pton(AF_INET, NETNS_B4, &ca.peer.sin_addr);
	lfd = netns_call(ns.b, do_listen, &la);
	cr_assert_geq(lfd, 0, "listen: %s", strerror(-lfd));
	cr_assert_eq(netns_call(ns.a, do_connect, &ca), 0);

	for (int round = 0; round < 1000; round++) {
		struct pollfd p[2] = { { .fd = A.conn.tcp.fd, .events = iwx_conn_tcp_events(&A.conn) } };
		uint64_t now = iwx_now_ms();

		iwx_conn_step(&A.conn, now);
		if (!accepted) {
			if (iwx_conn_tcp_accept(&B.conn, lfd, &o) == 0)
				accepted = true;
			p[1] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		} else {
			iwx_conn_step(&B.conn, now);
			if (B.conn.state == IWX_CONN_REQUEST_IN)
				cr_assert_eq(iwx_conn_answer(&B.conn, &o, false), 0);
			p[1] = (struct pollfd){ .fd = B.conn.tcp.fd, .events = iwx_conn_tcp_events(&B.conn) };
		}
		if (A.conn.state == IWX_CONN_ESTABLISHED && B.conn.state == IWX_CONN_ESTABLISHED)
			return;
		cr_assert(A.conn.state != IWX_CONN_FAILED && B.conn.state != IWX_CONN_FAILED,
			  "set-up failed: %s / %s", strerror(-A.conn.error), strerror(-B.conn.error));
		poll(p, 2, 50);
	}
	cr_assert_fail("set-up did not finish");
}

static void make_qp(struct end *e)
{
	e->mem = iwx_mem_new();
	e->pd = iwx_mem_pd_alloc(e->mem, OWNER);
	e->buf = calloc(1, BUF_LEN);
	cr_assert_not_null(e->buf);
	e->stag = iwx_mem_reg(e->mem, OWNER, e->pd, e->buf, BUF_LEN, (uintptr_t)e->buf,
			      IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_READ |
			      IWX_ACCESS_REMOTE_WRITE);
	e->qp = iwx_qp_create(iwx_llp_tcp_new(e->conn.tcp.fd, &e->conn.agreed, e->conn.emss),
			       &e->conn.agreed, e->mem, e->pd, NULL);
	cr_assert_not_null(e->qp);
}

static void connect_pair(void)
{
	establish();
	make_qp(&A);
	make_qp(&B);
}

/* Run both queue pairs until wanted completions arrived on A (and B), bounded in time. */
static void run_until(int a_wcs, int b_wcs, struct iwx_wc *wa, struct iwx_wc *wb)
{
	int got_a = 0, got_b = 0;
	uint64_t deadline = iwx_now_ms() + 30000;

	while (got_a < a_wcs || got_b < b_wcs) {
		bool wwa, wwb;
		struct pollfd p[2] = { { .fd = A.conn.tcp.fd, .events = POLLIN },
				       { .fd = B.conn.tcp.fd, .events = POLLIN } };

		cr_assert_lt(iwx_now_ms(), deadline, "completions: A %d/%d B %d/%d", got_a,
			     a_wcs, got_b, b_wcs);
		iwx_qp_progress(A.qp, &wwa);
		iwx_qp_progress(B.qp, &wwb);
		got_a += iwx_qp_poll(A.qp, wa + got_a, a_wcs - got_a);
		got_b += iwx_qp_poll(B.qp, wb + got_b, b_wcs - got_b);
		p[0].events |= wwa ? POLLOUT : 0;
		p[1].events |= wwb ? POLLOUT : 0;
		poll(p, 2, 10);
	}
}

static struct iwx_sge sge(struct end *e, uint64_t off, uint32_t len)
{
	return (struct iwx_sge){ .addr = (uintptr_t)e->buf + off, .len = len, .lkey = e->stag };
}

static void write_read_and_send(void)
{
	const uint32_t wlen = 16u << 20, rlen = 8u << 20;
	struct iwx_wc wa[8], wb[8];
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1, .sge = { sge(&A, 0, wlen) } };
	struct iwx_send_wr read = { .wr_id = 2, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge(&A, wlen, rlen) } };
	struct iwx_send_wr send = { .wr_id = 3, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 2, .sge = { sge(&A, 100, 30000), sge(&A, 200000, 35536) } };
	struct iwx_recv_wr recv = { .wr_id = 9, .num_sge = 1, .sge = { sge(&B, wlen, 65536) } };

	cr_assert(A.conn.agreed.mode.crc && B.conn.agreed.mode.crc);
	fill_pattern(A.buf, wlen, 1);
	fill_pattern(B.buf + (4u << 20), rlen, 2);
	write.remote_addr = (uintptr_t)B.buf;
	write.rkey = B.stag;
	read.remote_addr = (uintptr_t)B.buf + (4u << 20);
	read.rkey = B.stag;

	cr_assert_eq(iwx_qp_post_recv(B.qp, &recv), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &write), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &send), 0);
	run_until(2, 1, wa, wb);
	/* RFC 5040 §5.5: the Send after the Write sees the Write's data placed */
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wa[1].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].byte_len, 65536);
	cr_assert_arr_eq(B.buf, A.buf, wlen);
	cr_assert_arr_eq(B.buf + wlen, A.buf + 100, 30000);
	cr_assert_arr_eq(B.buf + wlen + 30000, A.buf + 200000, 35536);

	fill_pattern(B.buf + (4u << 20), rlen, 2);	/* the Write overwrote it */
	cr_assert_eq(iwx_qp_post_send(A.qp, &read), 0);
	run_until(1, 0, wa, wb);
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wa[0].opcode, IWX_WC_RDMA_READ);
	cr_assert_arr_eq(A.buf + wlen, B.buf + (4u << 20), rlen);

	struct iwx_qp_stats st;

	iwx_qp_stats(A.qp, &st);
	cr_log_info("A sent %lu FPDUs, %lu started a send() whole", st.tx_fpdus, st.tx_fpdus_aligned);
	cr_assert_geq(st.tx_fpdus_aligned * 100, st.tx_fpdus * 90, "most FPDUs go out whole");
}

Test(engine, write_read_and_send_megabytes)
{
	connect_pair();
	write_read_and_send();
}

Test(engine, many_outstanding_writes_and_sends)
{
	enum { N = 64, LEN = 200000 };
	struct iwx_wc wa[N], wb[N];

	connect_pair();
	fill_pattern(A.buf, (size_t)N * LEN, 5);
	for (int i = 0; i < N; i++) {
		struct iwx_recv_wr r = { .wr_id = i, .num_sge = 1,
					 .sge = { sge(&B, (size_t)N * LEN + i * 64, 64) } };

		cr_assert_eq(iwx_qp_post_recv(B.qp, &r), 0);
	}
	for (int i = 0; i < N; i++) {
		struct iwx_send_wr w = { .wr_id = i, .opcode = i % 2 ? IWX_WR_WRITE : IWX_WR_SEND,
					 .flags = IWX_WR_SIGNALED, .num_sge = 1,
					 .sge = { sge(&A, (size_t)i * LEN, i % 2 ? LEN : 64) },
					 .rkey = B.stag, .remote_addr = (uintptr_t)B.buf + (size_t)i * LEN };

		cr_assert_eq(iwx_qp_post_send(A.qp, &w), 0);
	}
	run_until(N, N / 2, wa, wb);
	for (int i = 0; i < N; i++) {
		cr_assert_eq(wa[i].wr_id, (uint64_t)i, "in order");
		cr_assert_eq(wa[i].status, IWX_WC_SUCCESS);
		if (i % 2)
			cr_assert_arr_eq(B.buf + (size_t)i * LEN, A.buf + (size_t)i * LEN, LEN);
	}
	for (int i = 0; i < N / 2; i++) {
		cr_assert_eq(wb[i].wr_id, (uint64_t)i, "MSN order");
		cr_assert_arr_eq(B.buf + (size_t)N * LEN + i * 64, A.buf + (size_t)2 * i * LEN, 64);
	}
}

/* Capture on A's veth end while a transfer runs; tshark must find nothing wrong. */
Test(engine, traffic_decodes_cleanly_in_tshark)
{
	char pcap[128], dev[32];
	struct iwx_wc wa[4], wb[4];
	struct tshark_verdict v;

	strcpy(tmpdir, "/tmp/iwx-engine-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	snprintf(pcap, sizeof(pcap), "%s/veth.pcap", tmpdir);
	snprintf(dev, sizeof(dev), "iwx%da", getpid());
	capture_pid = capture_start(ns.a, dev, pcap, "tcp port 7174");
	cr_assert_gt(capture_pid, 0);

	connect_pair();
	fill_pattern(A.buf, 1 << 20, 9);
	struct iwx_recv_wr recv = { .wr_id = 1, .num_sge = 1, .sge = { sge(&B, 2 << 20, 4096) } };
	struct iwx_send_wr ops[] = {
		{ .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		  .sge = { sge(&A, 0, 1 << 20) }, .rkey = B.stag, .remote_addr = (uintptr_t)B.buf },
		{ .wr_id = 2, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		  .sge = { sge(&A, 1 << 20, 100000) }, .rkey = B.stag, .remote_addr = (uintptr_t)B.buf },
		{ .wr_id = 3, .opcode = IWX_WR_SEND_SE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		  .sge = { sge(&A, 0, 3000) } },
	};

	cr_assert_eq(iwx_qp_post_recv(B.qp, &recv), 0);
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(iwx_qp_post_send(A.qp, &ops[i]), 0);
	run_until(3, 1, wa, wb);
	capture_stop(capture_pid);
	capture_pid = -1;

	cr_assert_eq(tshark_check(pcap, &v), 0);
	cr_log_info("tshark: %u good CRCs, %u bad, %u warnings", v.good_crcs, v.bad_crcs, v.warnings);
	/* 1 MiB / 1428 + 100000 / 1428 + 3 Sends and the Read Request, at least */
	cr_assert_gt(v.good_crcs, 800);
	cr_assert_eq(v.bad_crcs, 0);
	cr_assert_eq(v.warnings, 0);
}
