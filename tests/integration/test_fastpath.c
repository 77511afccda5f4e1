// SPDX-License-Identifier: MIT
/*
 * The fast path end to end: iwxd attaches its BPF programs at TC ingress in both
 * namespaces, and bulk RDMA Writes and Read Responses are placed by them. Every byte is
 * checked, and the counters must show that BPF, not iwxd, placed nearly all of them.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/ipc.h"

#include "faults.h"
#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "stall.h"
#include "testutil.h"

#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)

static struct iwxd_pair pair;
static struct endpoint a, b;
static struct faults *injector;

/* Daemon i's counters: those of its interface (kind IFACE), or of its connection (CONN). */
static struct iwx_fp_counters fp_counters(int i, uint32_t kind)
{
	struct iwx_fp_counters c;
	int err = iwxd_pair_fp_counters(&pair, i, kind, &c);

	cr_assert(!err || err == -ENOENT, "daemon %d: %s", i, strerror(-err));
	return c;
}

static struct iwx_qp_stats traffic(int i)
{
	struct iwx_qp_stats t;

	cr_assert_eq(iwxd_pair_traffic(&pair, i, &t), 0);
	return t;
}

#define ARGS	"--settle-ms 0 --arena-max 512M"

static void start(uint32_t mode)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and BPF");
	if (getenv("IWX_TEST_FASTPATH"))	/* each suite here says where it attaches */
		unsetenv("IWX_TEST_FASTPATH");
	cr_assert_eq(iwxd_pair_up(&pair, ARGS, &a, &b, 160u << 20), 0);
	cr_assert_eq(iwxd_pair_attach_both(&pair, mode), 0);
}

static void up(void)
{
	start(IWX_FP_MODE_TC);
}

/* XDP on veth: native, the senders' checksum offload off (iwxd_pair_attach) */
static void up_xdp(void)
{
	start(IWX_FP_MODE_XDP);
}

static void down(void)
{
	faults_detach(injector);
	injector = NULL;
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(fastpath, .init = up, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_xdp, .init = up_xdp, .fini = down, .timeout = HANG_S);

static void post_rdma(struct endpoint *e, uint64_t id, uint8_t op, const struct buf *local,
		      const struct buf *remote, size_t len)
{
	struct iwx_send_wr wr = {
		.wr_id = id, .opcode = op, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { sge_of(local, 0, len) }, .remote_addr = (uintptr_t)remote->p,
		.rkey = remote->mr->rkey,
	};
	struct iwx_wc wc;

	cr_assert_eq(iwx_post_send(e->qp, &wr), 0);
	cr_assert_eq(endpoint_wc(e, &wc), 0);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "%s", iwx_wc_status_name(wc.status));
}

/*
 * 256 MiB written, 64 MiB read back, every byte exact, and BPF placed FPDUs each way, each
 * of them TCP's own. How much it places depends on the machine's load (each time the
 * programs lose the stream costs what iwxd has queued before it confirms a boundary
 * again): a benchmark's figure (scripts/bench.sh), logged here, never this test's verdict.
 */
static void bulk_writes_and_reads(void)
{
	const size_t len = 64u << 20;
	struct buf src = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	uint8_t *want = malloc(len);
	struct iwx_fp_counters at_b, at_a;

	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	fill_pattern(src.p, len, 7);
	memcpy(want, src.p, len);
	for (int round = 0; round < 4; round++)
		post_rdma(&a, 1 + round, IWX_WR_WRITE, &src, &dst, len);
	cr_assert_eq(memcmp(dst.p, want, len), 0, "every byte written");
	memset(src.p, 0, len);
	post_rdma(&a, 10, IWX_WR_READ, &src, &dst, len);
	cr_assert_eq(memcmp(src.p, want, len), 0, "every byte read back");

	at_b = fp_counters(1, IWX_FP_INFO_IFACE);
	at_a = fp_counters(0, IWX_FP_INFO_IFACE);
	cr_log_info("b: placed %llu FPDUs, %llu bytes; a: %llu FPDUs, %llu bytes",
		    (unsigned long long)at_b.placed_fpdus, (unsigned long long)at_b.placed_bytes,
		    (unsigned long long)at_a.placed_fpdus, (unsigned long long)at_a.placed_bytes);
	cr_log_info("placed by BPF: %llu of %zu tagged bytes",
		    (unsigned long long)(at_b.placed_bytes + at_a.placed_bytes), 5 * len);
	/* why BPF left FPDUs to iwxd */
	for (int k = 0; k < IWX_FP_SKIP_N; k++) {
		static const char *const why[] = {
#define SKIP_NAME(name, word, text) [IWX_FP_SKIP_##name] = word,
			IWX_FP_SKIPS(SKIP_NAME)
#undef SKIP_NAME
		};

		if (at_b.skipped[k] || at_a.skipped[k])
			cr_log_info("skipped, %s: b %llu, a %llu", why[k], (unsigned long long)at_b.skipped[k],
				    (unsigned long long)at_a.skipped[k]);
	}
	cr_assert_gt(at_b.placed_fpdus, 0, "Writes placed by BPF: none of %zu bytes", 4 * len);
	cr_assert_gt(at_a.placed_fpdus, 0, "Read Responses placed by BPF: none of %zu bytes", len);
	/* nothing forged here: TCP accepted every FPDU placed, and iwxd could tell */
	for (int i = 0; i < 2; i++) {
		struct iwx_qp_stats t = traffic(i);

		cr_log_info("%c: %llu FPDUs taken as placed, %llu refuted, %llu not checked", 'a' + i,
			    (unsigned long long)t.fast_fpdus, (unsigned long long)t.fast_refuted,
			    (unsigned long long)t.fast_unchecked);
		cr_assert_eq(t.fast_refuted, 0, "daemon %d", i);
	}
	free(want);
}

Test(fastpath, bulk_writes_and_reads_are_placed_by_bpf)
{
	bulk_writes_and_reads();
}

Test(fastpath_xdp, bulk_writes_and_reads_are_placed_by_bpf)
{
	bulk_writes_and_reads();
}

/* The receive buffer (ss's skmem rb) of namespace ns's one established TCP socket; -1. */
static long rcvbuf_in(const char *ns)
{
	char cmd[160], line[512];
	long rb = -1, n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip netns exec %s ss -tmnH state established", ns);
	f = popen(cmd, "r");
	cr_assert(f, "ss");
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, "skmem:(");

		if (at && (at = strstr(at, ",rb")) && n++ == 0)
			rb = strtol(at + 3, NULL, 10);
	}
	pclose(f);
	return n == 1 ? rb : -1;
}

/*
 * A connection the fast path follows receives into a buffer of iwxd's --fastpath-rcvbuf
 * (2 MiB, which the kernel doubles), not one TCP grows to tcp_rmem's most: TCP holds no
 * more unread than the programs' records cover, and they do not skip FPDUs for a full
 * ring while iwxd catches up (scripts/bench-placement.sh; a matter of pace, so not here).
 */
Test(fastpath, a_followed_connection_receives_into_a_bounded_buffer)
{
	const long want = 4l << 20;

	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	/* iwxd fixes it right after it announced the connection (a hang's bound: stall.h) */
	for (int i = 0; i < STALL_MS / 10 && (rcvbuf_in(pair.ns.a) != want || rcvbuf_in(pair.ns.b) != want); i++)
		usleep(10000);
	cr_assert_eq(rcvbuf_in(pair.ns.b), want, "b: rb %ld", rcvbuf_in(pair.ns.b));
	cr_assert_eq(rcvbuf_in(pair.ns.a), want, "a: rb %ld", rcvbuf_in(pair.ns.a));
}

/*
 * Not at XDP, where each segment reaches TCP in a page-sized buffer: a fixed buffer there
 * made TCP drop segments its window had let in, and stall (fastpath.c: fixed_rcvbuf).
 */
Test(fastpath_xdp, a_followed_connection_keeps_the_buffer_tcp_grows)
{
	struct iwx_fp_counters c;

	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	/* iwxd decides on the buffer before it follows the connection */
	for (int i = 0; i < STALL_MS / 10 && (iwxd_pair_fp_counters(&pair, 0, IWX_FP_INFO_CONN, &c) ||
					       iwxd_pair_fp_counters(&pair, 1, IWX_FP_INFO_CONN, &c)); i++)
		usleep(10000);
	cr_assert_eq(iwxd_pair_fp_counters(&pair, 1, IWX_FP_INFO_CONN, &c), 0, "b follows it");
	cr_assert_eq(iwxd_pair_fp_counters(&pair, 0, IWX_FP_INFO_CONN, &c), 0, "a follows it");
	cr_assert_gt(rcvbuf_in(pair.ns.b), 0);
	cr_assert_neq(rcvbuf_in(pair.ns.b), 4l << 20, "b's buffer was fixed");
	cr_assert_neq(rcvbuf_in(pair.ns.a), 4l << 20, "a's buffer was fixed");
}

/* A Send of 8 bytes from a to b with wr_id id, and b's completion of it. */
static void send_after(uint64_t id)
{
	struct buf msg = buf_new(&a, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf got = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_recv_wr recv = { .wr_id = id, .num_sge = 1, .sge = { sge_of(&got, 0, 8) } };
	struct iwx_send_wr send = { .wr_id = id, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(&msg, 0, 8) } };
	struct iwx_wc wc;

	cr_assert_eq(iwx_post_recv(b.qp, &recv), 0);
	cr_assert_eq(iwx_post_send(a.qp, &send), 0);
	cr_assert_eq(endpoint_wc(&b, &wc), 0, "b receives the Send");
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "%s", iwx_wc_status_name(wc.status));
	cr_assert_eq(endpoint_wc(&a, &wc), 0);
	cr_assert_eq(wc.wr_id, id);
}

/*
 * Without the MPA CRC nothing would tell a placed payload from TCP's (a forged one with
 * the right header would stand): iwxd does not follow the connection, nothing is placed,
 * and the Write arrives whole all the same.
 */
Test(fastpath, a_connection_without_the_crc_is_not_followed)
{
	const size_t len = 4u << 20;
	const struct iwx_conn_param no_crc = { .crc = -1 };
	struct buf src = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	struct iwx_fp_counters c;

	cr_assert_eq(endpoint_connect(&a, &b, false, &no_crc), 0);
	fill_pattern(src.p, len, 3);
	memset(dst.p, 0, len);
	post_rdma(&a, 1, IWX_WR_WRITE, &src, &dst, len);
	send_after(2);
	cr_assert_arr_eq(dst.p, src.p, len);
	cr_assert_eq(iwxd_pair_fp_counters(&pair, 1, IWX_FP_INFO_CONN, &c), -ENOENT,
		     "b follows no connection");
	cr_assert_eq(fp_counters(1, IWX_FP_INFO_IFACE).placed_bytes, 0, "nothing placed");
}

/*
 * A 32 MiB Write over a link of 100 Mbit/s (tbf on a's veth end), its first segment lost
 * when lose_first says so (a TSO segment: some 45 wire segments): every byte exact, and
 * BPF placed some of it. The share it places is scripts/bench-placement.sh's figure
 * (99.8-100 % there; 0.3 % once, when boundaries proposed were never confirmed), logged
 * here, not judged: a machine's pace must not decide a test.
 */
static void slow_link(bool lose_first)
{
	const size_t len = 32u << 20;
	struct buf src = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	const struct faults_conf first = { .drop_at = FAULTS_AT(0) };
	struct iwx_fp_counters at_b;

	cr_assert_eq(faults_rate_add(pair.ns.a, pair.ns.dev[0], "100mbit"), 0, "tbf on a's veth end");
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	if (lose_first)	/* after the MPA exchange: the Write's first segment */
		cr_assert_eq(faults_attach(&injector, pair.ns.a, pair.ns.dev[0], &first), 0);
	fill_pattern(src.p, len, 5);
	memset(dst.p, 0, len);
	post_rdma(&a, 1, IWX_WR_WRITE, &src, &dst, len);
	send_after(2);	/* the Write is in b's memory once the Send behind it is (RFC 5040 §5.5) */
	cr_assert_arr_eq(dst.p, src.p, len, "every byte written");
	if (lose_first)
		cr_assert_eq(faults_counts(injector).dropped, 1, "the first segment lost");
	at_b = fp_counters(1, IWX_FP_INFO_IFACE);
	cr_log_info("placed by BPF: %llu of %zu bytes; boundaries proposed %llu, confirmed %llu",
		    (unsigned long long)at_b.placed_bytes, len,
		    (unsigned long long)at_b.proposals, (unsigned long long)at_b.confirmed);
	cr_assert_gt(at_b.placed_fpdus, 0, "the Write placed by BPF: none of %zu bytes", len);
}

Test(fastpath, a_slow_link_is_placed)
{
	slow_link(false);
}

Test(fastpath, a_slow_link_that_lost_the_first_segment_is_placed)
{
	slow_link(true);
}

/* Post Writes of [from, to) from src to dst, in pieces of piece bytes, unsignaled but the last. */
static void post_writes(uint64_t id, const struct buf *src, const struct buf *dst, size_t from,
			size_t len, size_t piece)
{
	for (size_t off = from; off < from + len; off += piece) {
		struct iwx_send_wr wr = {
			.wr_id = id, .opcode = IWX_WR_WRITE, .num_sge = 1,
			.flags = off + piece >= from + len ? IWX_WR_SIGNALED : 0,
			.sge = { sge_of(src, off, piece) }, .remote_addr = (uintptr_t)dst->p + off,
			.rkey = dst->mr->rkey,
		};

		cr_assert_eq(iwx_post_send(a.qp, &wr), 0);
	}
}

/*
 * The completions on a until the stream ends; the rest of the test checks b's memory. Once
 * the queue pair is in error its flushed completions come in a burst: half a second without
 * one ends the wait (not endpoint_wc's ten seconds).
 */
static void drain_a(void)
{
	struct iwx_wc wc;

	while (iwx_wait_cq(a.cq, 1, &wc, iwx_qp_state(a.qp) == IWX_QPS_ERROR ? 500 : 10000) == 1)
		;
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/*
 * A local invalidation in the middle of a stream of Writes to its region: once it has
 * returned, not one more byte lands there, by BPF or by iwxd.
 */
static const struct iwx_conn_param with_markers = { .markers = true };

static void local_invalidation(const struct iwx_conn_param *p)
{
	const size_t len = 64u << 20, piece = 256u << 10;
	struct buf src = buf_new(&a, NULL, len, 0, false);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	struct iwx_fp_counters before;

	cr_assert_eq(endpoint_connect(&a, &b, false, p), 0);
	fill_pattern(src.p, len, 9);
	post_writes(1, &src, &dst, 0, 32 * piece, piece);	/* a queue pair holds 256: stay below */
	/* wait until the fast path is placing (a hang's bound: stall.h) */
	for (int i = 0; i < STALL_MS && !fp_counters(1, IWX_FP_INFO_IFACE).placed_fpdus; i++)
		usleep(1000);
	before = fp_counters(1, IWX_FP_INFO_IFACE);
	cr_assert_gt(before.placed_fpdus, 0, "the fast path places the Writes");
	cr_assert_eq(iwx_invalidate_mr(dst.mr), 0);
	memset(dst.p, 0xee, len);
	drain_a();
	usleep(100000);
	cr_assert(all_bytes(dst.p, len, 0xee), "bytes landed after the invalidation returned");
}

Test(fastpath, nothing_lands_after_a_local_invalidation)
{
	local_invalidation(NULL);
}

Test(fastpath, nothing_lands_after_a_local_invalidation_with_markers)
{
	local_invalidation(&with_markers);
}

/*
 * Writes, a Send with Invalidate of their region, more Writes to it: the ones before land,
 * the ones after never do (the stream ends), and nothing lands after the Send completed.
 * The fast path runs ahead of iwxd: it must wait behind the Send until iwxd has taken it.
 */
static void send_with_invalidate(const struct iwx_conn_param *p)
{
	const size_t len = 16u << 20, piece = 256u << 10;
	struct buf src = buf_new(&a, NULL, len, 0, false);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	struct buf msg = buf_new(&a, NULL, 64, 0, false), rbuf = buf_new(&b, NULL, 64, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_recv_wr r = { .wr_id = 50, .num_sge = 1, .sge = { sge_of(&rbuf, 0, 64) } };
	struct iwx_send_wr inv = { .wr_id = 51, .opcode = IWX_WR_SEND_INV, .flags = IWX_WR_SIGNALED,
				   .num_sge = 1, .sge = { sge_of(&msg, 0, 8) },
				   .inval_stag = dst.mr->rkey };
	struct iwx_wc wc;

	cr_assert_eq(iwx_post_recv(b.qp, &r), 0);
	cr_assert_eq(endpoint_connect(&a, &b, false, p), 0);
	fill_pattern(src.p, len, 10);
	post_writes(1, &src, &dst, 0, len / 2, piece);
	cr_assert_eq(iwx_post_send(a.qp, &inv), 0);
	post_writes(2, &src, &dst, len / 2, len / 2, piece);
	cr_assert_eq(endpoint_wc(&b, &wc), 0);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	cr_assert(wc.with_inv);
	cr_assert_eq(wc.invalidated_stag, dst.mr->rkey);
	cr_assert_eq(memcmp(dst.p, src.p, len / 2), 0, "the Writes before it landed");
	memset(dst.p, 0xee, len / 2);
	drain_a();
	usleep(100000);
	cr_assert(all_bytes(dst.p, len / 2, 0xee), "bytes landed after the Send with Invalidate completed");
	cr_assert(all_bytes(dst.p + len / 2, len / 2, 0), "a Write behind the Send with Invalidate landed");
}

Test(fastpath, nothing_lands_after_a_send_with_invalidate)
{
	send_with_invalidate(NULL);
}

Test(fastpath, nothing_lands_after_a_send_with_invalidate_with_markers)
{
	send_with_invalidate(&with_markers);
}

/* Programs at a hook of an interface: tcx ingress (how many) or XDP (1 if any). */
struct hook_query {
	const char	*dev;
	bool		xdp;
	uint32_t	n;
};

static int query_hook(void *arg)
{
	struct hook_query *q = arg;
	int ifindex = if_nametoindex(q->dev);
	uint32_t ids[8], id = 0;

	if (!ifindex)
		return -1;
	if (q->xdp) {
		if (bpf_xdp_query_id(ifindex, 0, &id))
			return -1;
		q->n = id != 0;
		return 0;
	}
	q->n = 8;
	/* BPF_TCX_INGRESS (46): newer than the uapi headers here */
	return bpf_prog_query(ifindex, 46, 0, NULL, ids, &q->n) ? -errno : 0;
}

/* How many programs are attached at daemon i's interface, at tcx ingress or at XDP. */
static uint32_t programs_at(int i, bool xdp)
{
	struct hook_query q = { .dev = pair.ns.dev[i], .xdp = xdp };

	cr_assert_eq(netns_call(i ? pair.ns.b : pair.ns.a, query_hook, &q), 0);
	return q.n;
}

/* A killed iwxd leaves no program behind: the kernel ends its links with it. */
Test(fastpath, a_killed_iwxd_leaves_no_program)
{
	cr_assert_eq(programs_at(1, false), 1);
	iwxd_pair_kill(&pair, 1);
	for (int i = 0; i < STALL_MS / 10 && programs_at(1, false); i++)
		usleep(10000);
	cr_assert_eq(programs_at(1, false), 0);
	cr_assert_eq(programs_at(0, false), 1, "the other daemon's stays");
}

/* Detach removes the program; attaching twice is refused. */
Test(fastpath, detach_removes_the_program)
{
	cr_assert_eq(iwxd_pair_attach(&pair, 0, IWX_FP_MODE_TC, 0), -EEXIST);
	cr_assert_eq(programs_at(0, false), 1);
	struct iwx_ipc_fp_attach req = { .mode = IWX_FP_MODE_TC };
	int sock = iwx_ipc_connect(pair.sock[0], 0);

	snprintf(req.ifname, sizeof(req.ifname), "%s", pair.ns.dev[0]);
	cr_assert_eq(raw_call(sock, IWX_IPC_FP_DETACH, &req, sizeof(req), NULL, 0, NULL, NULL), 0);
	cr_assert_eq(raw_call(sock, IWX_IPC_FP_DETACH, &req, sizeof(req), NULL, 0, NULL, NULL), -ENOENT);
	close(sock);
	cr_assert_eq(programs_at(0, false), 0);
}

/* libxdp's attachment outlives a killed iwxd; the next iwxd there removes it. */
Test(fastpath_xdp, a_restarted_iwxd_removes_what_a_dead_one_left)
{
	cr_assert_neq(programs_at(1, true), 0);
	iwxd_pair_kill(&pair, 1);
	cr_assert_neq(programs_at(1, true), 0, "still there: the kernel does not end it with iwxd");
	cr_assert_eq(iwxd_pair_respawn(&pair, 1, ARGS), 0);
	cr_assert_eq(programs_at(1, true), 0);
	for (int i = 0; i < STALL_MS / 10 && !iwxd_pair_logged(&pair, 1, "removed the XDP program a previous");
	     i++)
		usleep(10000);
	cr_assert(iwxd_pair_logged(&pair, 1, "removed the XDP program a previous iwxd left"));
	cr_assert_neq(programs_at(0, true), 0, "the other daemon's stays");
}
