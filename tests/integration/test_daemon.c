// SPDX-License-Identifier: MIT
/*
 * iwxd and libiwx end to end: two namespaces joined by a veth pair, an iwxd in each,
 * and this process as the application on both sides. Every byte moved is checked.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "conn.h"
#include "ipc/ipc.h"
#include "iwxd_pair.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)

static struct iwxd_pair pair;
static struct endpoint a, b;

static void start(size_t arena, const char *opts)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, opts, &a, &b, arena), 0);
}

static void up(void)
{
	start(0, "--settle-ms 0 --arena-max 512M");
}

static void up_large(void)
{
	start(200u << 20, "--settle-ms 0 --arena-max 512M");
}

static void up_zerocopy(void)
{
	start(200u << 20, "--settle-ms 0 --arena-max 512M --zerocopy 16K");
}

static void down(void)
{
	iwxd_pair_down(&pair, &a, &b);
}

/*
 * The initiator holds its first FPDUs for siw's sake (--settle-ms, 200 by default), here
 * as long as iwxd holds them at most: a Send that was not held arrived long before the
 * hold would have ended, whatever the machine's pace.
 */
#define SETTLE_MS	10000
#define SETTLE_ARGS	"--settle-ms 10000"

static void up_settle(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, SETTLE_ARGS, &a, &b, 0), 0);
}

TestSuite(daemon, .init = up, .fini = down, .timeout = HANG_S);
TestSuite(daemon_settle, .init = up_settle, .fini = down, .timeout = HANG_S);
TestSuite(daemon_large, .init = up_large, .fini = down, .timeout = HANG_S);
TestSuite(daemon_zerocopy, .init = up_zerocopy, .fini = down, .timeout = HANG_S);

static void post_rdma(struct endpoint *e, uint64_t id, uint8_t op, uint8_t flags,
		      const struct buf *local, const struct buf *remote, size_t len)
{
	struct iwx_send_wr wr = {
		.wr_id = id, .opcode = op, .flags = flags, .num_sge = 1,
		.sge = { sge_of(local, 0, len) }, .remote_addr = (uintptr_t)remote->p,
		.rkey = remote->mr->rkey,
	};

	cr_assert_eq(iwx_post_send(e->qp, &wr), 0, "post %lu", (unsigned long)id);
}

static void post_recv(struct endpoint *e, uint64_t id, const struct buf *x, size_t len)
{
	struct iwx_recv_wr wr = { .wr_id = id, .num_sge = 1, .sge = { sge_of(x, 0, len) } };

	cr_assert_eq(iwx_post_recv(e->qp, &wr), 0);
}

/* The next completion of e: it must be id's, with op, and successful. */
static struct iwx_wc expect_wc(struct endpoint *e, uint64_t id, uint8_t op)
{
	struct iwx_wc wc;

	cr_assert_eq(endpoint_wc(e, &wc), 0, "a completion for %lu", (unsigned long)id);
	cr_assert_eq(wc.wr_id, id, "completion of %lu, expected %lu", (unsigned long)wc.wr_id,
		     (unsigned long)id);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "%lu: %s", (unsigned long)id,
		     iwx_wc_status_name(wc.status));
	cr_assert_eq(wc.opcode, op);
	cr_assert_eq(wc.qp_num, iwx_qp_num(e->qp));
	return wc;
}

static void connect_ab(void)
{
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
}

Test(daemon, write_read_send)
{
	const size_t len = 1 << 20;
	struct buf src = buf_new(&a, NULL, len, 0, false), back = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf msg = buf_new(&a, NULL, 64, 0, false), dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	struct buf rbuf = buf_new(&b, NULL, 64, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_wc wc;

	fill_pattern(src.p, len, 1);
	post_recv(&b, 9, &rbuf, 64);	/* receives may be posted before connecting */
	connect_ab();

	post_rdma(&a, 1, IWX_WR_WRITE, IWX_WR_SIGNALED, &src, &dst, len);
	expect_wc(&a, 1, IWX_WC_RDMA_WRITE);
	post_rdma(&a, 2, IWX_WR_READ, IWX_WR_SIGNALED, &back, &dst, len);
	expect_wc(&a, 2, IWX_WC_RDMA_READ);
	cr_assert_eq(memcmp(dst.p, src.p, len), 0, "the Write placed every byte");
	cr_assert_eq(memcmp(back.p, src.p, len), 0, "the Read brought every byte back");

	memcpy(msg.p, "hello, iwx", 11);
	struct iwx_send_wr s = { .wr_id = 3, .opcode = IWX_WR_SEND_SE, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&msg, 0, 11) } };
	cr_assert_eq(iwx_post_send(a.qp, &s), 0);
	expect_wc(&a, 3, IWX_WC_SEND);
	wc = expect_wc(&b, 9, IWX_WC_RECV);
	cr_assert_eq(wc.byte_len, 11);
	cr_assert(wc.solicited, "a Send with SE is solicited");
	cr_assert_not(wc.with_inv);
	cr_assert_str_eq((char *)rbuf.p, "hello, iwx");
}

/*
 * Writes, Reads and Sends from 0 bytes to 64 MiB, every byte checked, each Write's
 * source overwritten as soon as it completed.
 */
static void sizes_up_to_64_mib(void)
{
	static const size_t sizes[] = { 0, 1, 4095, 4097, (1 << 20) + 3, 64u << 20 };
	const size_t max = 64u << 20;
	struct buf src = buf_new(&a, NULL, max, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, max, ALL_ACCESS, false);
	uint64_t id = 1;

	connect_ab();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		fill_pattern(src.p, n, i + 100);
		memset(dst.p, 0, n ? n : 1);
		post_rdma(&a, id, IWX_WR_WRITE, IWX_WR_SIGNALED, &src, &dst, n);
		expect_wc(&a, id++, IWX_WC_RDMA_WRITE);
		/* read it back over the Write's source: a changed byte anywhere shows */
		memset(src.p, 0xee, n ? n : 1);
		post_rdma(&a, id, IWX_WR_READ, IWX_WR_SIGNALED, &src, &dst, n);
		cr_assert_eq(expect_wc(&a, id++, IWX_WC_RDMA_READ).byte_len, n);
		uint8_t *want = malloc(n ? n : 1);

		fill_pattern(want, n, i + 100);
		cr_assert_eq(memcmp(dst.p, want, n), 0, "%zu bytes written as sent", n);
		cr_assert_eq(memcmp(src.p, want, n), 0, "%zu bytes read back as written", n);

		/* and as a Send, into a receive of the whole buffer */
		struct iwx_send_wr s = { .wr_id = id, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
					 .num_sge = 1, .sge = { sge_of(&src, 0, n) } };

		memset(dst.p, 0, n ? n : 1);
		post_recv(&b, id, &dst, max);
		cr_assert_eq(iwx_post_send(a.qp, &s), 0);
		expect_wc(&a, id, IWX_WC_SEND);
		cr_assert_eq(expect_wc(&b, id++, IWX_WC_RECV).byte_len, n, "a %zu-byte Send", n);
		cr_assert_eq(memcmp(dst.p, want, n), 0, "%zu bytes received as sent", n);
		free(want);
	}
}

Test(daemon_large, sizes_up_to_64_mib)
{
	sizes_up_to_64_mib();
}

/* The same sent without a copy: completions wait for the kernel to let go of the pages. */
Test(daemon_zerocopy, sizes_up_to_64_mib)
{
	struct iwx_qp_stats st;

	sizes_up_to_64_mib();
	cr_assert_eq(iwxd_pair_traffic(&pair, 0, &st), 0);
	cr_assert_gt(st.tx_zc_calls, 0, "iwxd a sent without a copy");
}

/* A gathered Write from three regions, and a gathered Send into a scattered receive. */
Test(daemon, scatter_gather)
{
	struct buf s1 = buf_new(&a, NULL, 5000, 0, false), s2 = buf_new(&a, NULL, 7, 0, false);
	struct buf s3 = buf_new(&a, NULL, 70000, 0, false), dst = buf_new(&b, NULL, 80000, ALL_ACCESS, false);
	struct buf r1 = buf_new(&b, NULL, 3, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf r2 = buf_new(&b, NULL, 60000, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf r3 = buf_new(&b, NULL, 20000, IWX_ACCESS_LOCAL_WRITE, false);
	uint8_t *all = malloc(75007);
	struct iwx_send_wr w = {
		.wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 3,
		.sge = { sge_of(&s1, 0, 5000), sge_of(&s2, 0, 7), sge_of(&s3, 0, 70000) },
		.remote_addr = (uintptr_t)dst.p + 11, .rkey = dst.mr->rkey,
	};
	struct iwx_recv_wr r = { .wr_id = 2, .num_sge = 3,
				 .sge = { sge_of(&r1, 0, 3), sge_of(&r2, 0, 60000), sge_of(&r3, 0, 20000) } };
	struct iwx_wc wc;

	fill_pattern(s1.p, 5000, 1);
	fill_pattern(s2.p, 7, 2);
	fill_pattern(s3.p, 70000, 3);
	memcpy(all, s1.p, 5000);
	memcpy(all + 5000, s2.p, 7);
	memcpy(all + 5007, s3.p, 70000);
	cr_assert_eq(iwx_post_recv(b.qp, &r), 0);
	connect_ab();

	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	expect_wc(&a, 1, IWX_WC_RDMA_WRITE);
	w.wr_id = 3;
	w.opcode = IWX_WR_SEND;
	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	expect_wc(&a, 3, IWX_WC_SEND);
	wc = expect_wc(&b, 2, IWX_WC_RECV);
	/* the Send came after the Write on the stream: its data is all in place now */
	cr_assert_eq(memcmp(dst.p + 11, all, 75007), 0, "the three pieces, in order, at the offset");
	cr_assert_eq(dst.p[10], 0, "nothing before the offset");
	cr_assert_eq(dst.p[11 + 75007], 0, "nothing after the end");
	cr_assert_eq(wc.byte_len, 75007);
	cr_assert_eq(memcmp(r1.p, all, 3), 0);
	cr_assert_eq(memcmp(r2.p, all + 3, 60000), 0);
	cr_assert_eq(memcmp(r3.p, all + 60003, 15004), 0);
	cr_assert_eq(r3.p[15004], 0, "the scatter list's tail untouched");
	free(all);
}

/* RFC 5040 §5.5: a Send after Writes on one stream arrives after their data. */
Test(daemon, send_after_writes_sees_their_data)
{
	const size_t chunk = 256 << 10;
	const int writes = 32;
	struct buf src = buf_new(&a, NULL, chunk * writes, 0, false), msg = buf_new(&a, NULL, 8, 0, false);
	struct buf dst = buf_new(&b, NULL, chunk * writes, ALL_ACCESS, false);
	struct buf rbuf = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);

	fill_pattern(src.p, chunk * writes, 7);
	post_recv(&b, 100, &rbuf, 8);
	connect_ab();
	for (int i = 0; i < writes; i++) {
		struct iwx_send_wr w = {
			.wr_id = i, .opcode = IWX_WR_WRITE, .num_sge = 1,	/* unsignaled */
			.sge = { sge_of(&src, i * chunk, chunk) },
			.remote_addr = (uintptr_t)dst.p + i * chunk, .rkey = dst.mr->rkey,
		};

		cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	}
	struct iwx_send_wr s = { .wr_id = 99, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&msg, 0, 8) } };
	cr_assert_eq(iwx_post_send(a.qp, &s), 0);
	expect_wc(&b, 100, IWX_WC_RECV);
	/* checked the moment the Send is seen, before anything else can land */
	cr_assert_eq(memcmp(dst.p, src.p, chunk * writes), 0);
	expect_wc(&a, 99, IWX_WC_SEND);	/* unsignaled Writes complete nothing */
}

/* Many Reads outstanding, beyond the negotiated ORD: served in order, completed in order. */
Test(daemon, many_reads_complete_in_order)
{
	const int n = 64;
	const size_t len = 64 << 10;
	struct buf sink = buf_new(&a, NULL, len * n, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf src = buf_new(&b, NULL, len * n, ALL_ACCESS, false);
	struct iwx_conn_param p = { .ird = 4, .ord = 4 };

	fill_pattern(src.p, len * n, 3);
	cr_assert_eq(endpoint_connect(&a, &b, false, &p), 0);
	for (int i = 0; i < n; i++) {
		struct iwx_send_wr r = {
			.wr_id = i, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED, .num_sge = 1,
			.sge = { sge_of(&sink, i * len, len) },
			.remote_addr = (uintptr_t)src.p + (n - 1 - i) * len, .rkey = src.mr->rkey,
		};

		cr_assert_eq(iwx_post_send(a.qp, &r), 0);
	}
	for (int i = 0; i < n; i++)
		expect_wc(&a, i, IWX_WC_RDMA_READ);
	for (int i = 0; i < n; i++)
		cr_assert_eq(memcmp(sink.p + i * len, src.p + (n - 1 - i) * len, len), 0, "read %d", i);
}

/* A fenced Write waits for the Read before it: the Read sees the old bytes. */
Test(daemon, fence_orders_a_write_after_a_read)
{
	const size_t len = 4 << 20;
	struct buf sink = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf fresh = buf_new(&a, NULL, len, 0, false), x = buf_new(&b, NULL, len, ALL_ACCESS, false);

	fill_pattern(x.p, len, 1);
	fill_pattern(fresh.p, len, 2);
	connect_ab();
	post_rdma(&a, 1, IWX_WR_READ, IWX_WR_SIGNALED, &sink, &x, len);
	post_rdma(&a, 2, IWX_WR_WRITE, IWX_WR_SIGNALED | IWX_WR_FENCE, &fresh, &x, len);
	expect_wc(&a, 1, IWX_WC_RDMA_READ);
	expect_wc(&a, 2, IWX_WC_RDMA_WRITE);

	uint8_t *old = malloc(len);

	fill_pattern(old, len, 1);
	cr_assert_eq(memcmp(sink.p, old, len), 0, "the Read returned what was there before");
	/* a Write completes when TCP has it: a Read behind it sees it placed */
	post_rdma(&a, 3, IWX_WR_READ, IWX_WR_SIGNALED, &sink, &x, len);
	expect_wc(&a, 3, IWX_WC_RDMA_READ);
	cr_assert_eq(memcmp(x.p, fresh.p, len), 0, "then the Write landed");
	cr_assert_eq(memcmp(sink.p, fresh.p, len), 0);
	free(old);
}

/* Eight queue pairs between the same two daemons, all moving data at once. */
Test(daemon, many_queue_pairs_at_once)
{
	enum { N = 8 };
	const size_t len = 2 << 20;
	struct endpoint ea[N], eb[N];
	struct buf src[N], dst[N];

	connect_ab();	/* the suite's pair counts too */
	for (int i = 0; i < N; i++) {
		cr_assert_eq(endpoint_open(&ea[i], &pair, 0, 8 << 20), 0);
		cr_assert_eq(endpoint_open(&eb[i], &pair, 1, 8 << 20), 0);
		cr_assert_eq(endpoint_connect(&ea[i], &eb[i], i & 1, NULL), 0, "pair %d", i);
		src[i] = buf_new(&ea[i], NULL, len, 0, false);
		dst[i] = buf_new(&eb[i], NULL, len, ALL_ACCESS, false);
		fill_pattern(src[i].p, len, 50 + i);
	}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < 4; k++) {
			struct iwx_send_wr w = {
				.wr_id = k, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
				.sge = { sge_of(&src[i], k * (len / 4), len / 4) },
				.remote_addr = (uintptr_t)dst[i].p + k * (len / 4), .rkey = dst[i].mr->rkey,
			};

			cr_assert_eq(iwx_post_send(ea[i].qp, &w), 0);
		}
	for (int i = 0; i < N; i++) {
		for (int k = 0; k < 4; k++)
			expect_wc(&ea[i], k, IWX_WC_RDMA_WRITE);
	}
	/* a Write's completion is local: read each buffer back to know it all arrived */
	for (int i = 0; i < N; i++) {
		struct buf back = buf_new(&ea[i], NULL, len, IWX_ACCESS_LOCAL_WRITE, false);

		post_rdma(&ea[i], 9, IWX_WR_READ, IWX_WR_SIGNALED, &back, &dst[i], len);
		expect_wc(&ea[i], 9, IWX_WC_RDMA_READ);
		cr_assert_eq(memcmp(dst[i].p, src[i].p, len), 0, "pair %d", i);
		cr_assert_eq(memcmp(back.p, src[i].p, len), 0, "pair %d", i);
	}
	for (int i = 0; i < N; i++) {
		endpoint_close(&ea[i]);
		endpoint_close(&eb[i]);
	}
}

/* Memory outside the arena, moved into memory the daemon shares: every operation. */
Test(daemon, memory_outside_the_arena)
{
	const size_t len = 3 << 20;
	struct buf src = buf_new(&a, NULL, len, 0, true), back = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, true);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, true);
	struct buf msg = buf_new(&a, NULL, 100, 0, true), rbuf = buf_new(&b, NULL, 100, IWX_ACCESS_LOCAL_WRITE, true);
	struct iwx_wc wc;

	fill_pattern(src.p, len, 11);
	fill_pattern(msg.p, 100, 12);
	post_recv(&b, 5, &rbuf, 100);
	connect_ab();
	post_rdma(&a, 1, IWX_WR_WRITE, IWX_WR_SIGNALED, &src, &dst, len);
	expect_wc(&a, 1, IWX_WC_RDMA_WRITE);
	post_rdma(&a, 2, IWX_WR_READ, IWX_WR_SIGNALED, &back, &dst, len);
	expect_wc(&a, 2, IWX_WC_RDMA_READ);
	cr_assert_eq(memcmp(dst.p, src.p, len), 0);
	cr_assert_eq(memcmp(back.p, src.p, len), 0);

	struct iwx_send_wr s = { .wr_id = 3, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&msg, 0, 100) } };
	cr_assert_eq(iwx_post_send(a.qp, &s), 0);
	expect_wc(&a, 3, IWX_WC_SEND);
	wc = expect_wc(&b, 5, IWX_WC_RECV);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert_eq(memcmp(rbuf.p, msg.p, 100), 0);
	endpoint_close(&a);	/* the daemons let go of the memory before it is freed */
	endpoint_close(&b);
	free(src.p);
	free(back.p);
	free(dst.p);
	free(msg.p);
	free(rbuf.p);
}

/* 's' when the page at p is mapped shared (moved for a registration), 'p' when private. */
static char page_kind(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], perms[5] = "";
	unsigned long lo, hi;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= (uintptr_t)p &&
		    (uintptr_t)p < hi)
			break;
	fclose(f);
	return perms[3];
}

/*
 * Memory outside the arena moves, in place, into memory iwxd shares: whole pages, so
 * neighbours' bytes move too; pages already moved are shared by the next registration;
 * a registration over moved and unmoved pages takes both; deregistration moves them
 * back. The application's bytes survive every step, byte for byte.
 */
Test(daemon, registration_moves_pages_in_place)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 4 * page;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *want = malloc(len);
	struct buf src = buf_new(&b, NULL, 5000, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_mr *x, *y, *z;

	cr_assert_neq(m, MAP_FAILED);
	fill_pattern(m, len, 31);
	memcpy(want, m, len);
	x = iwx_reg_mr(a.pd, m + 100, 200, ALL_ACCESS);
	cr_assert_not_null(x, "%s", iwx_strerror(errno));
	cr_assert_eq(page_kind(m), 's', "the page moved");
	cr_assert_eq(page_kind(m + page), 'p', "its neighbour did not");
	cr_assert_arr_eq(m, want, len, "the bytes survived the move, the neighbours' too");
	y = iwx_reg_mr(a.pd, m + 1000, 100, IWX_ACCESS_REMOTE_READ);
	cr_assert_not_null(y, "the same page again: %s", iwx_strerror(errno));
	z = iwx_reg_mr(a.pd, m + page - 96, page + 5000 - page + 96, ALL_ACCESS);
	cr_assert_not_null(z, "over a moved page and two unmoved: %s", iwx_strerror(errno));
	cr_assert(page_kind(m + page) == 's' && page_kind(m + 2 * page) == 's');
	cr_assert_eq(page_kind(m + 3 * page), 'p');
	cr_assert_arr_eq(m, want, len);
	errno = 0;
	cr_assert_null(iwx_reg_mr(b.pd, m + 50, 10, 0), "another device, the same page");
	cr_assert_eq(errno, EBUSY, "%s", strerror(errno));

	/* the peer writes across the moved pages, and reads what a registered */
	fill_pattern(src.p, 5000, 32);
	connect_ab();
	struct iwx_send_wr w = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&src, 0, 5000) },
				 .remote_addr = (uintptr_t)m + page - 96, .rkey = z->rkey };
	cr_assert_eq(iwx_post_send(b.qp, &w), 0);
	memcpy(want + page - 96, src.p, 5000);
	/* answered after the Write is placed (RFC 5040 §5.2.1: in order) */
	struct iwx_send_wr r = { .wr_id = 2, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&src, 0, 100) },
				 .remote_addr = (uintptr_t)m + 1000, .rkey = y->rkey };
	cr_assert_eq(iwx_post_send(b.qp, &r), 0);
	expect_wc(&b, 1, IWX_WC_RDMA_WRITE);
	expect_wc(&b, 2, IWX_WC_RDMA_READ);
	cr_assert_arr_eq(m, want, len, "the Write landed where the application sees it");
	cr_assert_arr_eq(src.p, m + 1000, 100, "the Read brought a's bytes");

	cr_assert_eq(iwx_dereg_mr(z), 0);
	cr_assert_eq(page_kind(m + page), 'p', "no registration holds it: moved back");
	cr_assert_eq(page_kind(m), 's', "x and y still hold this one");
	cr_assert_eq(iwx_dereg_mr(x), 0);
	cr_assert_eq(iwx_dereg_mr(y), 0);
	for (size_t off = 0; off < len; off += page)
		cr_assert_eq(page_kind(m + off), 'p', "page %zu is private again", off / page);
	cr_assert_arr_eq(m, want, len, "and every byte is as it was");
	munmap(m, len);
	free(want);
}

/* Memory that cannot move gets a clear error, and stays as it was. */
Test(daemon, unmovable_memory_is_refused)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *shared = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t *none = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);

	cr_assert(shared != MAP_FAILED && none != MAP_FAILED);
	memset(shared, 7, page);
	errno = 0;
	cr_assert_null(iwx_reg_mr(a.pd, shared, 100, 0), "a shared mapping");
	cr_assert_eq(errno, EINVAL, "%s", strerror(errno));
	cr_assert_eq(page_kind(shared), 's');
	cr_assert_eq(shared[99], 7);
	cr_assert_eq(mprotect(none + page, page, PROT_NONE), 0);
	errno = 0;
	cr_assert_null(iwx_reg_mr(a.pd, none + page - 10, 20, 0), "a page that cannot be read");
	cr_assert_eq(errno, EFAULT, "%s", strerror(errno));
	cr_assert_eq(page_kind(none), 'p', "its readable neighbour did not move either");
	cr_assert_eq(munmap(none + page, page), 0);
	errno = 0;
	cr_assert_null(iwx_reg_mr(a.pd, none + page - 10, 20, 0), "a page not mapped at all");
	cr_assert_eq(errno, EFAULT, "%s", strerror(errno));
	munmap(shared, page);
	munmap(none, page);
}

/* The kernel's huge page pool: read it, or set it (old value back in *was). -1 if it cannot. */
static int huge_pages(long want, long *was)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r+");
	int ok = f && (!was || fscanf(f, "%ld", was) == 1) && fseek(f, 0, SEEK_SET) == 0 &&
		 fprintf(f, "%ld\n", want) > 0;

	if (f && fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

/* A file's shared mapping and hugetlb pages cannot move either. */
Test(daemon, file_and_hugetlb_memory_is_refused)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), huge = 2u << 20;
	int fd = memfd_create("iwx-test-file", MFD_CLOEXEC);
	uint8_t *file, *h;
	long was;

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, page), 0);
	file = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(file, MAP_FAILED);
	errno = 0;
	cr_assert_null(iwx_reg_mr(a.pd, file, 64, 0), "a file's shared mapping");
	cr_assert_eq(errno, EINVAL, "%s", strerror(errno));
	munmap(file, page);
	close(fd);

	cr_assert_eq(huge_pages(1, &was), 0, "a huge page for the test");
	h = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (h != MAP_FAILED) {
		h[0] = 1;
		errno = 0;
		cr_expect_null(iwx_reg_mr(a.pd, h, 64, 0), "hugetlb pages");
		cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
		cr_expect_eq(h[0], 1, "left as they were");
		munmap(h, huge);
	}
	cr_assert_eq(huge_pages(was, NULL), 0, "the pool as it was");
	if (h == MAP_FAILED)
		cr_skip_test("no huge page to be had here");
}

/* The daemons' traffic, captured on the veth: tshark finds every CRC good, nothing wrong. */
Test(daemon, traffic_decodes_cleanly_in_tshark)
{
	const size_t len = 1 << 20;
	struct buf src = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	struct buf rbuf = buf_new(&b, NULL, 4096, IWX_ACCESS_LOCAL_WRITE, false);
	struct tshark_verdict v;
	char pcap[128], dev[32];
	pid_t cap;

	snprintf(pcap, sizeof(pcap), "%s/veth.pcap", pair.dir);
	snprintf(dev, sizeof(dev), "iwx%da", getpid());
	cap = capture_start(pair.ns.a, dev, pcap, "tcp");
	cr_assert_gt(cap, 0);
	fill_pattern(src.p, len, 5);
	post_recv(&b, 1, &rbuf, 4096);
	connect_ab();
	post_rdma(&a, 1, IWX_WR_WRITE, IWX_WR_SIGNALED, &src, &dst, len);
	post_rdma(&a, 2, IWX_WR_READ, IWX_WR_SIGNALED, &src, &dst, 100000);

	struct iwx_send_wr s = { .wr_id = 3, .opcode = IWX_WR_SEND_SE, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&src, 0, 3000) } };
	cr_assert_eq(iwx_post_send(a.qp, &s), 0);
	expect_wc(&a, 1, IWX_WC_RDMA_WRITE);
	expect_wc(&a, 2, IWX_WC_RDMA_READ);
	expect_wc(&a, 3, IWX_WC_SEND);
	expect_wc(&b, 1, IWX_WC_RECV);
	cr_assert_eq(iwx_disconnect(a.qp), 0, "a graceful close, on the wire too");
	capture_stop(cap);

	cr_assert_eq(tshark_check(pcap, &v), 0);
	cr_log_info("tshark: %u good CRCs, %u bad, %u warnings", v.good_crcs, v.bad_crcs, v.warnings);
	/* 1 MiB / 1428 + 100000 / 1428 + the Send and the Read Request, at least */
	cr_assert_gt(v.good_crcs, 800);
	cr_assert_eq(v.bad_crcs, 0);
	cr_assert_eq(v.warnings, 0);
}

/*
 * A receiver whose small CQ is full, not polling: receives it posts meanwhile must be
 * in place before the daemon reads further Sends (else: a Terminate for want of a
 * buffer that was posted). Everything lands, in order, once it polls.
 */
Test(daemon, receives_posted_while_the_cq_is_full)
{
	struct iwx_cq *small = iwx_create_cq(b.dev, 2);
	struct endpoint bs = { .dev = b.dev, .pd = b.pd, .cq = small };
	struct buf src = buf_new(&a, NULL, 6 * 100, 0, false), rbuf = buf_new(&b, NULL, 6 * 100, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_wc wc[6];
	int got = 0;

	cr_assert_not_null(small);
	cr_assert_eq(iwx_poll_cq(small, 6, wc), 0);
	bs.qp = iwx_create_qp(b.pd, &(struct iwx_qp_init_attr){ .send_cq = small, .recv_cq = small });
	cr_assert_not_null(bs.qp);
	fill_pattern(src.p, 600, 77);
	for (int i = 0; i < 2; i++)
		post_recv(&bs, i, &(struct buf){ rbuf.p + i * 100, 100, rbuf.mr }, 100);
	cr_assert_eq(endpoint_connect(&a, &bs, false, NULL), 0);
	for (int i = 0; i < 6; i++) {
		struct iwx_send_wr s = { .wr_id = i, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
					 .num_sge = 1, .sge = { sge_of(&src, i * 100, 100) } };

		if (i == 2) {
			usleep(200000);	/* the first two fill the receiver's CQ */
			for (int k = 2; k < 6; k++)
				post_recv(&bs, k, &(struct buf){ rbuf.p + k * 100, 100, rbuf.mr }, 100);
			usleep(100000);
		}
		cr_assert_eq(iwx_post_send(a.qp, &s), 0);
	}
	for (int i = 0; i < 6; i++)
		expect_wc(&a, i, IWX_WC_SEND);
	usleep(200000);	/* the Sends reach the receiver's daemon while its CQ is still full */
	cr_assert_eq(iwx_qp_state(bs.qp), IWX_QPS_RTS, "no Terminate while the receiver waited");
	while (got < 6) {
		int n = iwx_wait_cq(small, 6 - got, wc + got, 5000);

		cr_assert_gt(n, 0, "completion %d", got);
		got += n;
	}
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(wc[i].status, IWX_WC_SUCCESS, "receive %d: %s", i, iwx_wc_status_name(wc[i].status));
		cr_assert_eq(wc[i].wr_id, (uint64_t)i);
	}
	cr_assert_eq(memcmp(rbuf.p, src.p, 600), 0);
}

/* Run a command in namespace ns; it must succeed. */
static void in_ns(const char *ns, const char *what)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "ip netns exec %s %s >/dev/null", ns, what);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/*
 * From `iwx decode --json` of pcap: one side's FPDUs, those that started a TCP segment,
 * and those that lay whole within one.
 */
static void fpdus_at_segment_start(const char *pcap, const char *side, unsigned *fpdus,
				   unsigned *at_start, unsigned *whole)
{
	char cmd[256], line[4096], key[64];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "build/iwx decode --json -q %s", pcap);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	snprintf(key, sizeof(key), "\"%s\":{\"fpdus\":", side);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key);

		if (p && strstr(line, "\"summary\"") &&
		    sscanf(p + strlen(key), "%u,\"fpdus_at_segment_start\":%u,\"bytes\":%*u,"
			   "\"markers\":%*u,\"fpdus_whole\":%u", fpdus, at_start, whole) == 3)
			found = true;
	}
	cr_assert_eq(pclose(f), 0, "%s: the capture decodes without error", cmd);
	cr_assert(found, "%s: no %s summary", cmd, side);
}

/*
 * RFC 5044 §5: a receiver that places segments on their own needs each to start with an
 * FPDU and hold whole ones. The engine hands TCP records of EMSS-sized FPDUs, smaller
 * ones packed; with offload off, the capture shows the segments TCP cut: every FPDU of
 * a Write, the Read Responses and the Sends, both ways, must lie whole within one, and
 * all but the few packed behind another start one (iwx decode reads the capture, not
 * our counters).
 *
 * One thing no sender on kernel TCP controls: when the receiver's window fills, TCP cuts
 * a segment at its edge, and the FPDUs after it in that packet start mid-segment. The
 * receivers get room for the whole transfer here (tcp_rmem), so that what is measured
 * is the engine's doing; the benchmark shows the share under a filling window.
 */
Test(daemon, every_tcp_segment_holds_whole_fpdus_on_the_wire)
{
	const size_t len = 4 << 20;
	struct buf src = buf_new(&a, NULL, len, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, len, ALL_ACCESS, false);
	struct buf rbuf = buf_new(&b, NULL, 4 << 16, IWX_ACCESS_LOCAL_WRITE, false);
	char pcap[128], dev_a[32], dev_b[32];
	unsigned fpdus, at_start, whole;
	pid_t cap;

	snprintf(dev_a, sizeof(dev_a), "iwx%da", getpid());
	snprintf(dev_b, sizeof(dev_b), "iwx%db", getpid());
	for (int i = 0; i < 2; i++) {
		const char *ns = i ? pair.ns.b : pair.ns.a;
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "ethtool -K %s tso off gso off", i ? dev_b : dev_a);
		in_ns(ns, cmd);
		in_ns(ns, "sysctl -w net.ipv4.tcp_rmem='4096 16777216 33554432'");
	}
	snprintf(pcap, sizeof(pcap), "%s/segments.pcap", pair.dir);
	cap = capture_start(pair.ns.a, dev_a, pcap, "tcp");
	cr_assert_gt(cap, 0);
	fill_pattern(src.p, len, 21);
	for (int i = 0; i < 4; i++)
		post_recv(&b, i, &(struct buf){ rbuf.p + (i << 16), 1 << 16, rbuf.mr }, 1 << 16);
	connect_ab();
	post_rdma(&a, 10, IWX_WR_WRITE, IWX_WR_SIGNALED, &src, &dst, len);
	post_rdma(&a, 11, IWX_WR_READ, IWX_WR_SIGNALED, &src, &dst, len);
	for (int i = 0; i < 4; i++) {
		struct iwx_send_wr s = { .wr_id = 20 + i, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
					 .num_sge = 1, .sge = { sge_of(&src, i << 16, 1 << 16) } };

		cr_assert_eq(iwx_post_send(a.qp, &s), 0);
	}
	expect_wc(&a, 10, IWX_WC_RDMA_WRITE);
	expect_wc(&a, 11, IWX_WC_RDMA_READ);
	for (int i = 0; i < 4; i++) {
		expect_wc(&a, 20 + i, IWX_WC_SEND);
		expect_wc(&b, i, IWX_WC_RECV);
	}
	capture_stop(cap);

	for (int i = 0; i < 2; i++) {
		const char *side = i ? "responder" : "initiator";

		fpdus_at_segment_start(pcap, side, &fpdus, &at_start, &whole);
		cr_log_info("%s: %u of %u FPDUs at a segment start, %u whole in one", side,
			    at_start, fpdus, whole);
		cr_assert_gt(fpdus, len / 1448, "%s: the Write, Sends or Read Responses at least", side);
		cr_assert_eq(whole, fpdus, "%s: %u of %u FPDUs whole in a segment", side, whole, fpdus);
		/* packed: a message's last FPDU with the next message's first, at most */
		cr_assert_geq(at_start + 8, fpdus, "%s: %u of %u FPDUs start a segment", side,
			      at_start, fpdus);
	}
	cr_assert_eq(memcmp(src.p, dst.p, len), 0);
}

/* A Send of 8 bytes from `from` to `to`, posted with its receive. */
static void post_send8(struct endpoint *from, struct endpoint *to, const struct buf *sbuf,
		       const struct buf *rbuf, uint64_t id)
{
	struct iwx_send_wr s = { .wr_id = id, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(sbuf, 0, 8) } };

	post_recv(to, id, rbuf, 8);
	cr_assert_eq(iwx_post_send(from->qp, &s), 0);
}

/* ... and both its completions, before the daemons' hold would have let it go. */
static void send8(struct endpoint *from, struct endpoint *to, const struct buf *sbuf,
		  const struct buf *rbuf, uint64_t id)
{
	uint64_t t0 = iwx_now_ms();

	post_send8(from, to, sbuf, rbuf, id);
	expect_wc(to, id, IWX_WC_RECV);
	expect_wc(from, id, IWX_WC_SEND);
	cr_assert_lt(iwx_now_ms() - t0, SETTLE_MS, "Send %llu was held", (unsigned long long)id);
}

/*
 * The initiator's hold is for a Responder that is not ready; one that speaks first is:
 * its Send arrives at once, and so does the initiator's answer (held before).
 */
Test(daemon_settle, a_responder_that_speaks_first_is_not_kept_waiting)
{
	struct buf sa = buf_new(&a, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf sb = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);

	connect_ab();
	send8(&b, &a, &sb, &sa, 1);
	send8(&a, &b, &sa, &sb, 2);
}

/*
 * The initiator speaking first is held (siw's case) until the peer speaks, unless its
 * connect says no hold.
 */
Test(daemon_settle, the_hold_is_the_connections_choice)
{
	struct buf sa = buf_new(&a, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf sb = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_conn_param none = { .settle_ms = IWX_SETTLE_NONE };
	struct iwx_wc wc;

	connect_ab();
	post_send8(&a, &b, &sa, &sb, 1);
	/* held: not there yet, however fast or slow the machine (the hold is 10 s) */
	cr_assert_eq(iwx_wait_cq(b.cq, 1, &wc, 200), 0, "the initiator's first Send was not held");
	send8(&b, &a, &sb, &sa, 2);	/* the responder speaks: the hold ends */
	expect_wc(&b, 1, IWX_WC_RECV);
	expect_wc(&a, 1, IWX_WC_SEND);
	endpoint_close(&a);
	endpoint_close(&b);
	cr_assert_eq(endpoint_open(&a, &pair, 0, 0), 0);
	cr_assert_eq(endpoint_open(&b, &pair, 1, 0), 0);
	sa = buf_new(&a, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	sb = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	cr_assert_eq(endpoint_connect(&a, &b, false, &none), 0);
	send8(&a, &b, &sa, &sb, 3);	/* no hold asked */
}
