// SPDX-License-Identifier: MIT
/*
 * iwxd's capabilities once it serves (control/iwxd/privs.c): on every thread, exactly
 * the documented set (iwxd(8), dist/systemd/iwxd.service) effective, with CAP_SYS_ADMIN
 * permitted and bounding but not effective (libxdp's alone, and raised while it works),
 * nothing inheritable or ambient, and so it stays after an XDP attach; and what needs them still works after the
 * drop: the fast path attached at XDP and at TC with SCTP's AF_XDP sockets, BPF placing
 * an RDMA Write into a client's arena.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iwx/iwx.h>

#include "fastpath_maps.h"
#include "ipc/ipc.h"
#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "stall.h"

#define DAEMON_ARGS	"--settle-ms 0"
#define ARENA		(8u << 20)
#define WRITE_BYTES	(4u << 20)

#define CAP(c)		(UINT64_C(1) << (c))
/* the documented set: what requests need at any time, effective */
static const uint64_t documented = CAP(CAP_BPF) | CAP(CAP_PERFMON) | CAP(CAP_NET_ADMIN) |
	CAP(CAP_NET_RAW) | CAP(CAP_IPC_LOCK) | CAP(CAP_NET_BIND_SERVICE);
/* ... and permitted, with CAP_SYS_ADMIN for libxdp's calls alone */
static const uint64_t permitted = documented | CAP(CAP_SYS_ADMIN);

static struct iwxd_pair pair;
static struct endpoint a, b;

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	unsetenv("IWX_TEST_FASTPATH");	/* the tests attach it themselves */
	cr_assert_eq(iwxd_pair_up(&pair, DAEMON_ARGS, &a, &b, ARENA), 0);
}

static void down(void)
{
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_caps, .init = up, .fini = down, .timeout = HANG_S);

/* The set named (CapEff, CapPrm, ...) in a /proc/.../status file. */
static uint64_t cap_set(const char *status, const char *name)
{
	char line[256];
	uint64_t v = 0;
	bool found = false;
	FILE *f = fopen(status, "re");

	cr_assert_not_null(f, "%s", status);
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, strlen(name)) && line[strlen(name)] == ':' &&
			sscanf(line + strlen(name) + 1, "%" SCNx64, &v) == 1;
	fclose(f);
	cr_assert(found, "%s in %s", name, status);
	return v;
}

/* Every thread of daemon i holds the documented set, and no more; how many threads. */
static int expect_documented(int i)
{
	char dir[64], status[sizeof(dir) + 256 + 8];
	struct dirent *e;
	int threads = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pair.pid[i]);
	d = opendir(dir);
	cr_assert_not_null(d, "%s", dir);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(status, sizeof(status), "%s/%s/status", dir, e->d_name);
		cr_expect_eq(cap_set(status, "CapEff"), documented, "%s: CapEff %#" PRIx64 ", not %#" PRIx64,
			     status, cap_set(status, "CapEff"), documented);
		cr_expect_eq(cap_set(status, "CapPrm"), permitted, "%s: CapPrm", status);
		cr_expect_eq(cap_set(status, "CapBnd"), permitted, "%s: CapBnd", status);
		cr_expect_eq(cap_set(status, "CapInh"), 0, "%s: CapInh", status);
		cr_expect_eq(cap_set(status, "CapAmb"), 0, "%s: CapAmb", status);
		threads++;
	}
	closedir(d);
	return threads;
}

Test(daemon_caps, the_documented_set_once_serving)
{
	cr_assert_geq(expect_documented(0), 2, "the loop and the closer thread at least");
	cr_assert(iwxd_pair_logged(&pair, 0, "capabilities kept: "));
}

Test(daemon_caps, the_fast_path_after_the_drop)
{
	struct buf src = buf_new(&a, NULL, WRITE_BYTES, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, WRITE_BYTES, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE,
				 false);
	struct iwx_send_wr w = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(&src, 0, WRITE_BYTES) },
				 .remote_addr = (uintptr_t)dst.p, .rkey = dst.mr->rkey };
	struct iwx_fp_counters c;
	struct iwx_wc wc;

	/* BPF programs and maps; XDP through libxdp; tcx, AF_XDP sockets and their UMEM (SCTP's
	   XDP program cannot sit beside the fast path's without libxdp's dispatcher) */
	cr_assert_eq(iwxd_pair_attach(&pair, 0, IWX_FP_MODE_XDP, 0), 0);
	cr_assert_eq(iwxd_pair_attach(&pair, 1, IWX_FP_MODE_TC, IWX_FP_ATTACH_SCTP), 0);
	cr_assert(iwxd_pair_logged(&pair, 1, "through AF_XDP"), "SCTP's AF_XDP sockets made");
	/* libxdp had CAP_SYS_ADMIN for the attach, and the loop's thread gave it up again */
	cr_assert_geq(expect_documented(0), 2);
	for (uint32_t i = 0; i < WRITE_BYTES; i++)
		src.p[i] = (uint8_t)(i * 7 + 1);
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	cr_assert_eq(endpoint_wc(&a, &wc), 0);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "%s", iwx_wc_status_name(wc.status));
	/* the Write completes once sent: a Send behind it says it has all arrived */
	w = (struct iwx_send_wr){ .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED };
	cr_assert_eq(iwx_post_recv(b.qp, &(struct iwx_recv_wr){ .wr_id = 3 }), 0);
	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	cr_assert_eq(endpoint_wc(&b, &wc), 0);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "%s", iwx_wc_status_name(wc.status));
	cr_assert_eq(memcmp(dst.p, src.p, WRITE_BYTES), 0, "every byte of the Write");
	/* its programs followed the connection after the drop; how much they placed is the
	   machine's pace (a loaded one may see the Write in before they are in step): logged */
	cr_assert_eq(iwxd_pair_fp_counters(&pair, 1, IWX_FP_INFO_IFACE, &c), 0);
	cr_assert_gt(c.packets, 0, "BPF looked at the Write's packets");
	cr_log_info("placed by BPF: %llu of %u bytes", (unsigned long long)c.placed_bytes, WRITE_BYTES);
	/* what the fast path holds for each user (its fair shares): root's connection, its STag */
	cr_assert_eq(status_num(pair.sock[1], "fp_conns"), 1, "the connection followed, counted");
	cr_assert_eq(status_num(pair.sock[1], "fp_stags"), 1, "dst's STag published, counted");
	/* the fast path's own thread (its reaper) is as bare as the rest */
	cr_assert_geq(expect_documented(1), 3);
}
