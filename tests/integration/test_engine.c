// SPDX-License-Identifier: MIT
/*
 * The software engine end to end: two network namespaces on a veth pair, kernel TCP,
 * the MPA set-up of conn.c and a queue pair on each side (qp_tcp.h), running the queue
 * pair tests of every transport (qp_tests.h) and TCP's own: FPDUs go to TCP whole, and
 * the traffic, captured on the veth, must decode in tshark with every CRC good and no
 * expert warning beyond tshark 4.0's two about revision 2.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "qp_tcp.h"
#include "qp_tests.h"
#include "stall.h"
#include "testutil.h"

#define PORT	7174

static struct qp_tcp tcp, tcp_zc;
static pid_t capture_pid = -1;
static char tmpdir[64];

static void fini(void)
{
	capture_stop(capture_pid);
	capture_pid = -1;
	qp_pair_fini(&tcp.pair);
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
	qp_tcp_init(&tcp, PORT);
}

TestSuite(engine, .init = init, .fini = fini, .timeout = HANG_S);

QP_TESTS(engine, &tcp.pair)

static void init_zc(void)
{
	qp_tcp_init(&tcp_zc, PORT + 1);
	tcp_zc.pair.zerocopy_min = 1;	/* every batch with payload from registered memory */
}

static void fini_zc(void)
{
	qp_pair_fini(&tcp_zc.pair);
}

/* The same with MSG_ZEROCOPY: completions wait for the kernel's notices (tcp_zc.h). */
TestSuite(engine_zc, .init = init_zc, .fini = fini_zc, .timeout = HANG_S);

QP_TESTS(engine_zc, &tcp_zc.pair)

/* Megabytes (qp_tests.h) in batches of FPDUs that each start a TCP segment (llp_tcp.c). */
Test(engine, most_fpdus_go_to_tcp_whole)
{
	struct iwx_qp_stats st;

	qp_test_write_read_and_send_megabytes(&tcp.pair);
	engine_qp_stats(tcp.pair.a.qp, &st);
	cr_log_info("A sent %lu FPDUs, %lu started a send() whole", st.tx_fpdus, st.tx_fpdus_aligned);
	cr_assert_geq(st.tx_fpdus_aligned * 100, st.tx_fpdus * 90, "most FPDUs go out whole");
}

/* Capture on A's veth end while a transfer runs; tshark must find nothing wrong. */
Test(engine, traffic_decodes_cleanly_in_tshark)
{
	struct qp_end *A = &tcp.pair.a, *B = &tcp.pair.b;
	char pcap[128], dev[32], filter[32];
	struct iwx_wc wa[4], wb[4];
	struct tshark_verdict v;

	strcpy(tmpdir, "/tmp/iwx-engine-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	snprintf(pcap, sizeof(pcap), "%s/veth.pcap", tmpdir);
	snprintf(dev, sizeof(dev), "iwx%da", getpid());
	snprintf(filter, sizeof(filter), "tcp port %d", PORT);
	capture_pid = capture_start(tcp.ns.a, dev, pcap, filter);
	cr_assert_gt(capture_pid, 0);

	qp_pair_connect(&tcp.pair);
	fill_pattern(A->buf, 1 << 20, 9);
	struct iwx_recv_wr recv = { .wr_id = 1, .num_sge = 1, .sge = { qp_sge(B, 2 << 20, 4096) } };
	struct iwx_send_wr ops[] = {
		{ .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		  .sge = { qp_sge(A, 0, 1 << 20) }, .rkey = B->stag, .remote_addr = (uintptr_t)B->buf },
		{ .wr_id = 2, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		  .sge = { qp_sge(A, 1 << 20, 100000) }, .rkey = B->stag, .remote_addr = (uintptr_t)B->buf },
		{ .wr_id = 3, .opcode = IWX_WR_SEND_SE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		  .sge = { qp_sge(A, 0, 3000) } },
	};

	cr_assert_eq(engine_qp_post_recv(B->qp, &recv), 0);
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(engine_qp_post_send(A->qp, &ops[i]), 0);
	qp_pair_run_until(&tcp.pair, 3, 1, wa, wb);
	capture_stop(capture_pid);
	capture_pid = -1;

	cr_assert_eq(tshark_check(pcap, &v), 0);
	cr_log_info("tshark: %u good CRCs, %u bad, %u warnings", v.good_crcs, v.bad_crcs, v.warnings);
	/* 1 MiB / 1428 + 100000 / 1428 + 3 Sends and the Read Request, at least */
	cr_assert_gt(v.good_crcs, 800);
	cr_assert_eq(v.bad_crcs, 0);
	cr_assert_eq(v.warnings, 0);
}
