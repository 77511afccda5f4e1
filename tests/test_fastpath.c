// SPDX-License-Identifier: MIT
/*
 * The fast path end to end: iwxd attaches its BPF programs at TC ingress in both
 * namespaces, and bulk RDMA Writes and Read Responses are placed by them. Every byte is
 * checked, and the counters must show that BPF, not iwxd, placed nearly all of them.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iwx/ipc.h>

#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "testutil.h"

#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)

static struct iwxd_pair pair;
static struct endpoint a, b;

/* Daemon i's counters: those of its interface (kind IFACE), or of connection qp. */
static struct iwx_fp_counters fp_counters(int i, uint32_t kind)
{
	struct iwx_ipc_fp_info e[8];
	struct iwx_fp_counters sum = { 0 };
	int sock = iwx_ipc_connect(pair.sock[i], 0);

	cr_assert_geq(sock, 0);
	memset(e, 0, sizeof(e));
	cr_assert_eq(raw_call(sock, IWX_IPC_FP_STATS, NULL, 0, e, sizeof(e), NULL, NULL), 0);
	close(sock);
	for (size_t k = 0; k < 8; k++)
		if (e[k].kind == kind && e[k].id) {
			sum = e[k].c;
			break;
		}
	return sum;
}

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and BPF");
	cr_assert_eq(iwxd_pair_up(&pair, "--settle-ms 0 --timeout-ms 2000 --arena-max 512M", &a, &b,
				  160u << 20), 0);
	if (!getenv("IWX_TEST_FASTPATH")) {	/* else iwxd_pair attached already */
		cr_assert_eq(iwxd_pair_attach(&pair, 0, IWX_FP_MODE_TC), 0);
		cr_assert_eq(iwxd_pair_attach(&pair, 1, IWX_FP_MODE_TC), 0);
	}
}

static void down(void)
{
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(fastpath, .init = up, .fini = down, .timeout = 120);

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

/* 64 MiB written and read back: BPF places at least 95% of the tagged bytes each way. */
Test(fastpath, bulk_writes_and_reads_are_placed_by_bpf)
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
	for (int k = 0; k < IWX_FP_SKIP_N; k++)
		if (at_b.skipped[k] || at_a.skipped[k])
			cr_log_info("skip %d: b %llu a %llu", k, (unsigned long long)at_b.skipped[k],
				    (unsigned long long)at_a.skipped[k]);
	cr_assert_geq(at_b.placed_bytes, 4 * len * 95 / 100, "Writes placed by BPF: %llu of %zu",
		      (unsigned long long)at_b.placed_bytes, 4 * len);
	cr_assert_geq(at_a.placed_bytes, len * 95 / 100, "Read Responses placed by BPF: %llu of %zu",
		      (unsigned long long)at_a.placed_bytes, len);
	free(want);
}
