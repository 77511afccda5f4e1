// SPDX-License-Identifier: MIT
/*
 * `iwx status`, `conns`, `stags` and `counters` against two live iwxds (iwxd_pair.h):
 * after a connection and one RDMA Write, what they print must match what was done.
 * `iwx attach`, `detach` and `stats` on the fast path: iwxd's refusals, and the
 * counters of an attached interface. Then the failures: no daemon, a client that is
 * not root, bad options. Run from the repository root, with build/iwx built.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "stall.h"
#include "testutil.h"

#define EXIT_FAIL	1	/* IWX_EXIT_FAIL of cli/exit.h: a runtime failure */
#define EXIT_USAGE	2
#define OUT_MAX		(64 << 10)

#define SRC_LEN		(64 << 10)	/* a's source of the Write, in its arena */
#define OUT_LEN		8192		/* a's region outside the arena */
#define DST_LEN		(128 << 10)	/* b's target of the Write */

static struct iwxd_pair pair;
static struct endpoint a, b;
static uint8_t outside[OUT_LEN];	/* outside the arena: shared with iwxd once registered */

/* How many times needle occurs in s. */
static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The line of s holding needle (a listing's object), into line; false if none. */
static bool line_of(const char *s, const char *needle, char *line, size_t cap)
{
	const char *p = strstr(s, needle), *bol, *e;

	if (!p)
		return false;
	for (bol = p; bol > s && bol[-1] != '\n'; bol--)
		;
	e = strchr(p, '\n');
	if (!e)
		e = p + strlen(p);
	snprintf(line, cap, "%.*s", (int)(e - bol), bol);
	return true;
}

/* RPS on b's end of the veth: its receive steered to CPU 0 (mask 1), or not (0). */
static void steer_b(unsigned mask)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "echo %x > /sys/class/net/%s/queues/rx-0/rps_cpus", mask,
		 pair.ns.dev[1]);
	cr_assert_eq(netns_exec(pair.ns.b, "sh", "-c", cmd, NULL), 0, "%s", cmd);
}

/* iwx attach on b's end of the veth at mode, its output in out; skipped without BPF. */
static void attach_b(char out[OUT_MAX], const char *mode)
{
	if (run_iwx(out, OUT_MAX, "attach dev %s -m %s -s %s", pair.ns.dev[1], mode,
		    pair.sock[1]) == EXIT_FAIL && strstr(out, "could not load or attach"))
		cr_skip_test("no BPF fast path here: %s", out);
}

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and for iwx's admin requests");
	cr_assert_eq(iwxd_pair_up(&pair, "--settle-ms 0", &a, &b, 0), 0);
	steer_b(1);	/* else attaching there warns (fastpath_attach_on_an_unsteered_veth_warns) */
}

static void down(void)
{
	iwxd_pair_down(&pair, &a, &b);
}

/* Registrations on both sides, a connection, one RDMA Write from a to b. */
struct setup {
	struct iwx_mr	*src, *out, *dst;
};

static void connect_and_write(struct setup *s)
{
	uint8_t *src = iwx_alloc(a.dev, SRC_LEN), *dst = iwx_alloc(b.dev, DST_LEN);
	struct iwx_wc wc;

	cr_assert(src && dst);
	fill_pattern(src, SRC_LEN, 7);
	s->src = iwx_reg_mr(a.pd, src, SRC_LEN, 0);
	s->out = iwx_reg_mr(a.pd, outside, OUT_LEN, IWX_ACCESS_LOCAL_WRITE |
			    IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ);
	s->dst = iwx_reg_mr(b.pd, dst, DST_LEN, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE);
	cr_assert(s->src && s->out && s->dst);
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);

	struct iwx_send_wr w = {
		.wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { { (uintptr_t)src, SRC_LEN, s->src->lkey } }, .remote_addr = (uintptr_t)dst,
		.rkey = s->dst->rkey,
	};
	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	cr_assert_eq(endpoint_wc(&a, &wc), 0);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "write: %s", iwx_wc_status_name(wc.status));
	/* the Write completes at a once sent: wait until b has placed it all */
	for (int t = 0; t < STALL_MS / 10 && memcmp(dst, src, SRC_LEN); t++)
		usleep(10000);
	cr_assert_eq(memcmp(dst, src, SRC_LEN), 0, "b placed every byte of the Write");
}

TestSuite(cli_admin, .init = up, .fini = down, .timeout = HANG_S);

Test(cli_admin, conns_json)
{
	static char out[OUT_MAX];
	struct setup s;
	char want[64];

	connect_and_write(&s);
	cr_assert_eq(run_iwx(out, sizeof(out), "conns -s %s -j", pair.sock[0]), 0, "%s", out);
	cr_assert_eq(count(out, "\"qp\": "), 1, "one queue pair on a:\n%s", out);
	cr_assert_eq(json_num(out, "qp"), iwx_qp_num(a.qp), "%s", out);
	cr_assert(strstr(out, "\"state\": \"rts\""), "%s", out);
	cr_assert(strstr(out, "\"local_addr\": \"" NETNS_A4 "\""), "%s", out);
	cr_assert(strstr(out, "\"peer_addr\": \"" NETNS_B4 "\""), "%s", out);
	cr_assert_eq(json_num(out, "mpa_rev"), 2, "%s", out);
	cr_assert(strstr(out, "\"crc\": true"), "%s", out);
	cr_assert(strstr(out, "\"rfc7306\": true"), "both iwxd agreed to RFC 7306: %s", out);
	cr_assert_gt(json_num(out, "peer_port"), 0, "%s", out);
	cr_assert_gt(json_num(out, "tx_fpdus"), 0, "%s", out);
	cr_assert_geq(json_num(out, "tx_bytes"), SRC_LEN, "%s", out);
	cr_assert_gt(json_num(out, "emss"), 0, "%s", out);
	cr_assert_eq(out[0], '[', "an array: %s", out);

	/* b, the Responder: the same connection from the other end, and the bytes came in */
	cr_assert_eq(run_iwx(out, sizeof(out), "conns --socket %s --json", pair.sock[1]), 0, "%s", out);
	cr_assert_eq(count(out, "\"qp\": "), 1, "%s", out);
	cr_assert(strstr(out, "\"state\": \"rts\""), "%s", out);
	cr_assert(strstr(out, "\"peer_addr\": \"" NETNS_A4 "\""), "%s", out);
	cr_assert_geq(json_num(out, "rx_bytes"), SRC_LEN, "%s", out);
	snprintf(want, sizeof(want), "\"qp\": %u,", iwx_qp_num(b.qp));
	cr_assert(strstr(out, want), "%s", out);
}

Test(cli_admin, stags_json)
{
	static char out[OUT_MAX];
	char line[1024], key[64], want[64];
	struct setup s;

	connect_and_write(&s);
	cr_assert_eq(run_iwx(out, sizeof(out), "stags -s %s -j", pair.sock[0]), 0, "%s", out);
	cr_assert_eq(count(out, "\"stag\": "), 2, "a registered two regions:\n%s", out);

	snprintf(key, sizeof(key), "\"stag\": \"0x%08x\"", s.src->lkey);
	cr_assert(line_of(out, key, line, sizeof(line)), "%s not in\n%s", key, out);
	cr_assert_eq(json_num(line, "len"), SRC_LEN, "%s", line);
	cr_assert(strstr(line, "\"access\": []"), "no rights but local read: %s", line);
	cr_assert(strstr(line, "\"valid\": true"), "%s", line);
	cr_assert(strstr(line, "\"in_arena\": true"), "%s", line);
	snprintf(want, sizeof(want), "\"base_to\": \"0x%" PRIxPTR "\"", (uintptr_t)s.src->addr);
	cr_assert(strstr(line, want), "%s in %s", want, line);

	snprintf(key, sizeof(key), "\"stag\": \"0x%08x\"", s.out->lkey);
	cr_assert(line_of(out, key, line, sizeof(line)), "%s not in\n%s", key, out);
	cr_assert_eq(json_num(line, "len"), OUT_LEN, "%s", line);
	cr_assert(strstr(line, "\"access\": [\"lw\", \"rw\", \"rr\"]"), "%s", line);
	cr_assert(strstr(line, "\"in_arena\": false"), "shared memory: %s", line);

	cr_assert_eq(run_iwx(out, sizeof(out), "stags -s %s -j", pair.sock[1]), 0, "%s", out);
	cr_assert_eq(count(out, "\"stag\": "), 1, "%s", out);
	snprintf(key, sizeof(key), "\"stag\": \"0x%08x\"", s.dst->rkey);
	cr_assert(line_of(out, key, line, sizeof(line)), "%s not in\n%s", key, out);
	cr_assert_eq(json_num(line, "len"), DST_LEN, "%s", line);
	cr_assert(strstr(line, "\"access\": [\"lw\", \"rw\"]"), "%s", line);
}

Test(cli_admin, status_and_counters_json)
{
	static char out[OUT_MAX];
	struct setup s;

	connect_and_write(&s);
	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", pair.sock[0]), 0, "%s", out);
	cr_assert_eq(out[0], '{', "one object: %s", out);
	cr_assert_eq(json_num(out, "qps"), 1, "%s", out);
	cr_assert_eq(json_num(out, "clients"), 1, "%s", out);
	cr_assert_eq(json_num(out, "mrs"), 2, "%s", out);
	cr_assert_eq(json_num(out, "pid"), pair.pid[0], "%s", out);
	cr_assert_eq(json_num(out, "settle_ms"), 0, "%s", out);
	cr_assert_eq(json_num(out, "conns_established"), 1, "%s", out);
	cr_assert_gt(json_num(out, "tx_fpdus"), 0, "the writer sent FPDUs: %s", out);
	cr_assert_geq(json_num(out, "tx_bytes"), SRC_LEN, "%s", out);
	cr_assert_leq(json_num(out, "tx_fpdus_aligned"), json_num(out, "tx_fpdus"), "%s", out);
	cr_assert(strstr(out, "\"crc_default\": true"), "%s", out);
	cr_assert_geq(json_num(out, "aligned_pct"), 0, "a share once FPDUs went: %s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", pair.sock[1]), 0, "%s", out);
	cr_assert_eq(json_num(out, "qps"), 1, "%s", out);
	cr_assert_gt(json_num(out, "rx_fpdus"), 0, "the target received FPDUs: %s", out);
	/* the target of a Write sends no FPDU (unless the daemon adds some): no share then */
	if (json_num(out, "tx_fpdus") == 0)
		cr_assert(strstr(out, "\"aligned_pct\": null"), "nothing sent, no share: %s", out);
	else
		cr_assert_geq(json_num(out, "aligned_pct"), 0, "%s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "counters -s %s -j", pair.sock[0]), 0, "%s", out);
	cr_assert_gt(json_num(out, "tx_fpdus"), 0, "%s", out);
	cr_assert_eq(json_num(out, "qps"), -1, "counters only: %s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "counters -s %s", pair.sock[0]), 0, "%s", out);
	cr_assert(strstr(out, "COUNTER") && strstr(out, "conns_established"), "%s", out);
}

/* The release, as debian/changelog's newest entry says (the one place it is written). */
static void changelog_release(char *v, size_t cap)
{
	FILE *f = fopen("debian/changelog", "r");
	char line[256];
	const char *lp, *rp;

	cr_assert_not_null(f);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	fclose(f);
	lp = strchr(line, '(');
	rp = lp ? strchr(lp, ')') : NULL;
	cr_assert(lp && rp && rp > lp + 1, "debian/changelog: %s", line);
	snprintf(v, cap, "%.*s", (int)(rp - lp - 1), lp + 1);
}

/* iwx, iwxd and a running iwxd's status all say the changelog's release. */
Test(cli_admin, versions_are_the_changelogs)
{
	static char out[OUT_MAX];
	char v[64], want[256], cmd[256];
	FILE *p;

	changelog_release(v, sizeof(v));
	cr_assert_eq(run_iwx(out, sizeof(out), "--version"), 0, "%s", out);
	snprintf(want, sizeof(want), "iwx %s\n", v);
	cr_assert_str_eq(out, want);

	snprintf(cmd, sizeof(cmd), "%s --version", iwxd_path());
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(out, sizeof(out), p));
	cr_assert_eq(pclose(p), 0, "%s", cmd);
	snprintf(want, sizeof(want), "iwxd %s\n", v);
	cr_assert_str_eq(out, want);

	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", pair.sock[0]), 0, "%s", out);
	snprintf(want, sizeof(want), "\"version\": \"%s\"", v);
	cr_assert(strstr(out, want), "want %s: %s", want, out);
	cr_assert_eq(json_num(out, "ipc_version"), IWX_IPC_VERSION, "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s", pair.sock[0]), 0, "%s", out);
	snprintf(want, sizeof(want), " %s (IPC %u)\n", v, IWX_IPC_VERSION);
	cr_assert(strstr(out, want), "want '%s': %s", want, out);
	/* and its first line, which it says without -v too, its time readable */
	snprintf(want, sizeof(want), " notice: version %s, serving %s", v, pair.sock[0]);
	cr_assert(iwxd_pair_logged(&pair, 0, want), "iwxd's log: %s", want);
	cr_assert(iwxd_pair_logged(&pair, 0, "iwxd 20"), "a date, not seconds since 1970");
}

Test(cli_admin, human_output)
{
	static char out[OUT_MAX];
	char want[64];
	struct setup s;

	connect_and_write(&s);
	cr_assert_eq(run_iwx(out, sizeof(out), "conns -s %s", pair.sock[0]), 0, "%s", out);
	cr_assert_eq(strncmp(out, "QP  CLIENT  STATE", 17), 0, "header first:\n%s", out);
	cr_assert_eq(count(out, "\n"), 2, "a header and one queue pair:\n%s", out);
	cr_assert(strstr(out, NETNS_B4 ":"), "%s", out);
	cr_assert(strstr(out, NETNS_A4 ":"), "%s", out);
	cr_assert(strstr(out, " rts "), "%s", out);
	cr_assert(strstr(out, "ENDED"), "the last column: %s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "stags -s %s", pair.sock[0]), 0, "%s", out);
	cr_assert_eq(strncmp(out, "STAG", 4), 0, "%s", out);
	snprintf(want, sizeof(want), "0x%08x", s.out->lkey);
	cr_assert(strstr(out, want), "%s", out);
	cr_assert(strstr(out, "lw rw rr"), "%s", out);
	cr_assert(strstr(out, "-- -- --"), "%s", out);
	cr_assert(strstr(out, " shared "), "%s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s", pair.sock[0]), 0, "%s", out);
	cr_assert(strstr(out, pair.sock[0]), "%s", out);
	cr_assert(strstr(out, "queue pairs"), "%s", out);
	cr_assert(strstr(out, "whole in a packet"), "%s", out);
}

/* ------------------------------------------------------- the fast path */

/* Before any attach: nothing to show, and what iwxd refuses without loading anything. */
Test(cli_admin, fastpath_not_attached)
{
	static char out[OUT_MAX];

	cr_assert_eq(run_iwx(out, sizeof(out), "stats -s %s", pair.sock[0]), 0, "%s", out);
	cr_assert_str_eq(out, "the fast path is not attached (iwx attach dev IFNAME)\n");
	cr_assert_eq(run_iwx(out, sizeof(out), "stats -s %s -j", pair.sock[0]), 0, "%s", out);
	cr_assert(strstr(out, "\"interfaces\": []") && strstr(out, "\"connections\": []"), "%s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "attach dev nonexistent0 -s %s", pair.sock[0]),
		     EXIT_FAIL, "%s", out);
	cr_assert(strstr(out, "no interface nonexistent0 in iwxd's network namespace"), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "attach dev lo --mode xdp -s %s", pair.sock[0]),
		     EXIT_FAIL, "%s", out);
	cr_assert(strstr(out, "lo cannot run XDP natively"), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "detach dev lo -s %s", pair.sock[0]), EXIT_FAIL,
		     "%s", out);
	cr_assert(strstr(out, "not attached to lo"), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "detach dev nonexistent0 -s %s", pair.sock[0]),
		     EXIT_FAIL, "%s", out);
	cr_assert(strstr(out, "no interface nonexistent0"), "%s", out);
}

/*
 * Attached to b's end of the veth (netns.c names it), the target of the Write: its
 * packets are counted, and b's queue pair is followed. Without --sctp, SCTP keeps its
 * UDP socket: no XDP program on the interface, which would cost its TCP GRO.
 */
Test(cli_admin, fastpath_attach_stats)
{
	static char out[OUT_MAX];
	char dev[16], want[64], line[4096];
	struct setup s;

	snprintf(dev, sizeof(dev), "iwx%db", (int)getpid());
	if (run_iwx(out, sizeof(out), "attach dev %s -s %s", dev, pair.sock[1]) == EXIT_FAIL &&
	    strstr(out, "could not load or attach"))
		cr_skip_test("no BPF fast path here: %s", out);
	snprintf(want, sizeof(want), "attached to %s (tc)\n", dev);
	cr_assert_str_eq(out, want);
	cr_assert_eq(run_iwx(out, sizeof(out), "attach dev %s -m tc -s %s", dev, pair.sock[1]),
		     EXIT_FAIL, "%s", out);
	snprintf(want, sizeof(want), "already attached to %s", dev);
	cr_assert(strstr(out, want), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "status -j -s %s", pair.sock[1]), 0, "%s", out);
	cr_assert(strstr(out, "\"sctp_xsks\": 0"), "no AF_XDP socket without --sctp: %s", out);

	connect_and_write(&s);
	cr_assert_eq(run_iwx(out, sizeof(out), "stats -s %s -j", pair.sock[1]), 0, "%s", out);
	snprintf(want, sizeof(want), "\"name\": \"%s\"", dev);
	cr_assert(line_of(out, want, line, sizeof(line)), "%s", out);
	cr_assert(strstr(line, "\"mode\": \"tc\""), "%s", line);
	cr_assert_gt(json_num(line, "packets"), 0, "the Write came in there: %s", line);
	cr_assert(strstr(line, "\"skipped\": {\"untagged\": "), "%s", line);
	cr_assert(strstr(line, "\"busy\": "), "every reason: %s", line);
	snprintf(want, sizeof(want), "\"qp\": %u,", iwx_qp_num(b.qp));
	cr_assert(line_of(out, want, line, sizeof(line)), "b's queue pair is followed: %s", out);
	cr_assert(strstr(line, "\"state\": \""), "%s", line);
	cr_assert_gt(json_num(line, "packets"), 0, "%s", line);
	cr_assert_eq(count(out, "\"qp\": "), 1, "%s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "stats -s %s", pair.sock[1]), 0, "%s", out);
	snprintf(want, sizeof(want), "interface %s (ifindex ", dev);
	cr_assert_eq(strncmp(out, want, strlen(want)), 0, "%s", out);
	cr_assert(strstr(out, "FPDUs placed") && strstr(out, "not placed"), "%s", out);
	cr_assert(strstr(out, "\nQP  STATE"), "the connections' table: %s", out);
	cr_assert(!strstr(out, "not attached"), "%s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "detach dev %s -s %s", dev, pair.sock[1]), 0, "%s", out);
	snprintf(want, sizeof(want), "detached from %s\n", dev);
	cr_assert_str_eq(out, want);
	cr_assert_eq(run_iwx(out, sizeof(out), "detach dev %s -s %s", dev, pair.sock[1]), EXIT_FAIL,
		     "%s", out);
	snprintf(want, sizeof(want), "not attached to %s", dev);
	cr_assert(strstr(out, want), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "stats -s %s", pair.sock[1]), 0, "%s", out);
	cr_assert(strstr(out, "the fast path is not attached"), "%s", out);
}

/*
 * At XDP on a veth: attached, and warned that packets whose TCP checksum the peer left
 * to offload (a veth's default) are not placed there.
 */
Test(cli_admin, fastpath_attach_xdp_on_a_veth_warns)
{
	static char out[OUT_MAX];
	char dev[16], want[64];

	snprintf(dev, sizeof(dev), "iwx%db", (int)getpid());
	attach_b(out, "xdp");
	snprintf(want, sizeof(want), "attached to %s (xdp)\n", dev);
	cr_assert(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "warning: %s is a veth", dev);
	cr_assert(strstr(out, want) && strstr(out, "ethtool -K PEER tx off"), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "detach dev %s -s %s", dev, pair.sock[1]), 0, "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "attach dev %s -s %s", dev, pair.sock[1]), 0, "%s", out);
	snprintf(want, sizeof(want), "attached to %s (tc)\n", dev);
	cr_assert_str_eq(out, want, "at tc, no warning (RPS steers the test's veth: up)");
}

/* An iwxd without CAP_SYS_ADMIN in its bounding set (a unit that leaves it out): XDP
   cannot be attached, and both iwx and iwxd's log say what it takes. */
Test(cli_admin, fastpath_attach_xdp_without_cap_sys_admin_says_what_it_takes)
{
	static char out[OUT_MAX];
	char sock[128], log[160];
	pid_t pid;
	int st;

	snprintf(sock, sizeof(sock), "%s.nosysadmin", pair.sock[1]);
	snprintf(log, sizeof(log), "%s.log", sock);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (!freopen(log, "w", stderr))
			_exit(127);
		execlp("ip", "ip", "netns", "exec", pair.ns.b, "setpriv", "--bounding-set",
		       "-sys_admin", iwxd_path(), "-s", sock, "--sctp-port", "0", (char *)NULL);
		_exit(126);
	}
	for (int i = 0; i < STALL_MS / 10 && access(sock, F_OK); i++)
		usleep(10000);
	st = run_iwx(out, sizeof(out), "attach dev %s -m xdp -s %s", pair.ns.dev[1], sock);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	unlink(sock);
	cr_assert_eq(st, EXIT_FAIL, "%s", out);
	cr_assert(strstr(out, "iwxd could not attach at XDP (Operation not permitted): libxdp "
			      "needs CAP_SYS_ADMIN for a moment and bpffs at /sys/fs/bpf"), "%s", out);
	{
		FILE *f = fopen(log, "r");
		size_t n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;

		if (f)
			fclose(f);
		out[n] = 0;
		unlink(log);
	}
	cr_assert(strstr(out, "cannot attach to") && strstr(out, "unless its unit's "
		  "CapabilityBoundingSet leaves it out"), "iwxd's log: %s", out);
}

/*
 * On a veth that RPS does not steer, with more than one CPU: attached, and warned that the
 * programs' copy runs on the sender's CPU; steered, no warning.
 */
Test(cli_admin, fastpath_attach_on_an_unsteered_veth_warns)
{
	static char out[OUT_MAX];
	char dev[16], want[96];

	snprintf(dev, sizeof(dev), "iwx%db", (int)getpid());
	steer_b(0);
	attach_b(out, "tc");
	snprintf(want, sizeof(want), "attached to %s (tc)\n", dev);
	cr_assert(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "warning: %s is a veth whose receive runs on the CPU", dev);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_assert(!strstr(out, want), "one CPU: nobody else's to run on: %s", out);
	else
		cr_assert(strstr(out, want) && strstr(out, "rps_cpus"), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "detach dev %s -s %s", dev, pair.sock[1]), 0, "%s", out);
	steer_b(1);
	cr_assert_eq(run_iwx(out, sizeof(out), "attach dev %s -s %s", dev, pair.sock[1]), 0, "%s", out);
	snprintf(want, sizeof(want), "attached to %s (tc)\n", dev);
	cr_assert_str_eq(out, want, "steered by RPS: no warning");
}

/* More STags than one message holds: the parts of the reply are joined, none lost. */
Test(cli_admin, stags_in_parts)
{
	const int n = 5000;	/* a part holds about 2000 */
	static char out[2 << 20];
	uint8_t *buf = iwx_alloc(a.dev, 4096);

	cr_assert_not_null(buf);
	for (int i = 0; i < n; i++)
		cr_assert_not_null(iwx_reg_mr(a.pd, buf, 64 + i, IWX_ACCESS_LOCAL_WRITE), "MR %d", i);
	cr_assert_eq(run_iwx(out, sizeof(out), "stags -s %s -j", pair.sock[0]), 0);
	cr_assert_eq(count(out, "\"stag\": "), n);
	cr_assert(strstr(out, "\"len\": 64}"));
	cr_assert(strstr(out, "\"len\": 5063}"));
	cr_assert_eq(run_iwx(out, sizeof(out), "stags -s %s", pair.sock[0]), 0);
	cr_assert_eq(count(out, "\n"), n + 1, "a header and a line per STag");
	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", pair.sock[0]), 0);
	cr_assert_eq(json_num(out, "mrs"), n, "%s", out);
}

/* A client that is neither root nor in iwxd's group. */
/* A child of nobody's running argv, its output into out (when not NULL); its pid. */
static pid_t as_nobody(const char *const argv[], int *out)
{
	int fd[2];
	pid_t pid;

	cr_assert_eq(pipe2(fd, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(125);
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
	close(fd[1]);
	if (out)
		*out = fd[0];
	else
		close(fd[0]);
	return pid;
}

/* All of fd into out; then the exit status of pid. */
static int output_of(int fd, pid_t pid, char *out, size_t cap)
{
	size_t n = 0;
	ssize_t k;
	int st;

	while (n < cap - 1 && (k = read(fd, out + n, cap - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = 0;
	close(fd);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cli_admin, not_root)
{
	char out[1024];
	int fd, st;
	pid_t pid;

	pid = as_nobody((const char *[]){ IWX_BIN, "status", "-s", pair.sock[0], NULL }, &fd);
	st = output_of(fd, pid, out, sizeof(out));
	if (st == 126)
		cr_skip_test("nobody may not run " IWX_BIN " here");
	cr_assert_eq(st, EXIT_FAIL, "%s", out);
	cr_assert(strstr(out, "permission denied: only root and the user iwxd runs as may inspect it"),
		  "%s", out);
	cr_assert(strstr(out, pair.sock[0]), "%s", out);
}

/* ------------------------------------------------ without a daemon */

Test(cli_admin_usage, no_daemon)
{
	static const char *const cmds[] = { "status", "conns", "stags", "counters", "stats",
					     "attach dev lo", "detach dev lo" };
	char out[4096];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cr_assert_eq(run_iwx(out, sizeof(out), "%s -s /nonexistent.sock", cmds[i]), EXIT_FAIL,
			     "%s: %s", cmds[i], out);
		cr_assert(strstr(out, "/nonexistent.sock"), "names the socket: %s", out);
		cr_assert(strstr(out, "iwxd -s /nonexistent.sock"), "says how to start: %s", out);
	}
	/* $IWX_SOCKET is the default */
	cr_assert_eq(setenv("IWX_SOCKET", "/nonexistent-env.sock", 1), 0);
	cr_assert_eq(run_iwx(out, sizeof(out), "status"), EXIT_FAIL, "%s", out);
	unsetenv("IWX_SOCKET");
	cr_assert(strstr(out, "/nonexistent-env.sock"), "%s", out);
}

Test(cli_admin_usage, bad_usage)
{
	static const char *const cmds[] = { "status", "conns", "stags", "counters", "stats" };
	char out[8192];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *c = cmds[i];

		cr_assert_eq(run_iwx(out, sizeof(out), "%s --bogus", c), EXIT_USAGE, "%s", out);
		cr_assert(strstr(out, "--bogus") && strstr(out, "--help"), "%s", out);
		cr_assert_eq(run_iwx(out, sizeof(out), "%s extra", c), EXIT_USAGE, "%s", out);
		cr_assert(strstr(out, "extra"), "%s", out);
		cr_assert_eq(run_iwx(out, sizeof(out), "%s -s", c), EXIT_USAGE, "%s", out);
		cr_assert_eq(run_iwx(out, sizeof(out), "%s -j -s /x.sock more", c), EXIT_USAGE, "%s", out);
		cr_assert_eq(run_iwx(out, sizeof(out), "%s --help", c), 0, "%s", out);
		cr_assert(strstr(out, "usage: iwx ") && strstr(out, "-s, --socket SOCKET") &&
			  strstr(out, "-j, --json"), "%s", out);
		cr_assert_eq(run_iwx(out, sizeof(out), "help %s", c), 0, "%s", out);
	}
	cr_assert_eq(run_iwx(out, sizeof(out), "--help"), 0, "%s", out);
	cr_assert(strstr(out, "status") && strstr(out, "conns") && strstr(out, "stags") &&
		  strstr(out, "counters") && strstr(out, "attach") && strstr(out, "detach") &&
		  strstr(out, "stats"), "the commands are listed: %s", out);
}

/* attach and detach: dev IFNAME, --mode for attach only; every mistake is exit 2. */
Test(cli_admin_usage, fastpath_bad_usage)
{
	static const struct bad_usage bad[] = {
		{ "attach", "missing 'dev IFNAME'" },
		{ "attach lo", "unexpected argument 'lo' (expected 'dev IFNAME')" },
		{ "attach dev", "'dev' needs an interface name" },
		{ "attach dev ''", "empty interface name" },
		{ "attach dev abcdefghijklmnop", "'abcdefghijklmnop' is longer than 15 bytes" },
		{ "attach dev lo --mode foo", "unknown mode 'foo' (tc or xdp)" },
		{ "attach dev lo -m", "option '-m' needs an argument" },
		{ "attach dev lo extra", "unexpected argument 'extra'" },
		{ "attach dev lo --bogus", "unknown option '--bogus'" },
		{ "attach dev lo -s ''", "empty socket path" },
		{ "detach", "missing 'dev IFNAME'" },
		{ "detach dev", "'dev' needs an interface name" },
		{ "detach dev lo --mode tc", "unknown option '--mode'" },
		{ "detach dev lo -m tc", "unknown option '-m'" },
		{ "detach dev lo lo", "unexpected argument 'lo'" },
	};
	char out[8192], want[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* a socket no iwxd serves: a command line let through would fail with 1 */
		cr_assert_eq(run_iwx(out, sizeof(out), "%.6s -s /nonexistent.sock%s", bad[i].args,
				     bad[i].args + 6), EXIT_USAGE, "%s: %s", bad[i].args, out);
		cr_assert(strstr(out, bad[i].says), "%s: %s", bad[i].args, out);
		snprintf(want, sizeof(want), "Try 'iwx %.6s --help'.", bad[i].args);
		cr_assert(strstr(out, want), "%s: %s", bad[i].args, out);
	}
	/* 15 bytes is a name: it gets as far as the socket */
	cr_assert_eq(run_iwx(out, sizeof(out), "attach dev abcdefghijklmno -s /nonexistent.sock"),
		     EXIT_FAIL, "%s", out);
	cr_assert(strstr(out, "/nonexistent.sock"), "%s", out);

	cr_assert_eq(run_iwx(out, sizeof(out), "attach --help"), 0, "%s", out);
	cr_assert(strstr(out, "usage: iwx attach dev IFNAME") && strstr(out, "-m, --mode MODE") &&
		  strstr(out, "-s, --socket SOCKET"), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "detach --help"), 0, "%s", out);
	cr_assert(strstr(out, "usage: iwx detach dev IFNAME") && !strstr(out, "--mode"), "%s", out);
	cr_assert_eq(run_iwx(out, sizeof(out), "help stats"), 0, "%s", out);
	cr_assert(strstr(out, "usage: iwx stats") && strstr(out, "ring_full"), "%s", out);
}

/* iwx_rping (examples/): a bad command line names what was wrong, in one line. */
Test(cli_admin_usage, iwx_rping_names_the_bad_argument)
{
	static const struct bad_usage bad[] = {
		{ "--bogus", "unrecognized option '--bogus'" },
		{ "", "iwx_rping: -s (server) or -c (client)?" },
		{ "-c", "iwx_rping: -c needs the server's address: -a ADDR" },
		{ "-c -a 192.0.2", "iwx_rping: -a takes an IPv4 address, not '192.0.2'" },
		{ "-s -C x", "iwx_rping: -C takes a count from 1 to 2147483647, not 'x'" },
		{ "-s -S 15", "iwx_rping: -S takes a size from 16 to 67108864, not '15'" },
		{ "-s -p 65536", "iwx_rping: -p takes a port from 1 to 65535, not '65536'" },
		{ "-s --rev 3", "iwx_rping: --rev takes 1 or 2, not '3'" },
		{ "-s extra", "iwx_rping: unexpected argument 'extra'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char cmd[256], out[4096];

		snprintf(cmd, sizeof(cmd), "build/iwx_rping %s", bad[i].args);
		cr_assert_eq(run_cmd(out, sizeof(out), cmd), EXIT_USAGE, "%s: %s", cmd, out);
		assert_usage_error(out, bad[i].says, "Try 'iwx_rping --help'.");
	}
}

/* An ordinary user's own iwxd (README, "Using it"): she may inspect it, not attach it. */
Test(cli_admin_usage, own_iwxd_is_inspected_by_its_owner)
{
	char dir[] = "/tmp/iwx-own-XXXXXX", sock[64], out[8192], pid_s[32];
	pid_t daemon, pid;
	int fd, st, ran;

	if (geteuid() != 0)
		cr_skip_test("needs root to become nobody");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chown(dir, 65534, 65534), 0);
	snprintf(sock, sizeof(sock), "%s/iwxd.sock", dir);
	daemon = as_nobody((const char *[]){ iwxd_path(), "-s", sock, "--sctp-port", "0", NULL },
			   NULL);
	for (int i = 0; i < STALL_MS / 10 && access(sock, F_OK); i++)
		usleep(10000);
	if (access(sock, F_OK)) {
		kill(daemon, SIGTERM);
		waitpid(daemon, &st, 0);
		rmdir(dir);
		cr_assert_fail("nobody's iwxd did not serve %s (exit %d)", sock, WEXITSTATUS(st));
	}

	pid = as_nobody((const char *[]){ IWX_BIN, "status", "-s", sock, "-j", NULL }, &fd);
	ran = st = output_of(fd, pid, out, sizeof(out));
	if (ran != 126) {
		snprintf(pid_s, sizeof(pid_s), "\"pid\": %d", (int)daemon);
		cr_expect_eq(st, 0, "nobody's iwx status of nobody's iwxd: %s", out);
		cr_expect(strstr(out, pid_s), "its own iwxd's status: %s", out);
		pid = as_nobody((const char *[]){ IWX_BIN, "attach", "dev", "lo", "-s", sock, NULL }, &fd);
		st = output_of(fd, pid, out, sizeof(out));
		cr_expect_eq(st, EXIT_FAIL, "%s", out);
		cr_expect(strstr(out, "only root may"), "%s", out);
	}
	kill(daemon, SIGTERM);
	cr_assert_eq(waitpid(daemon, &st, 0), daemon);
	unlink(sock);
	rmdir(dir);
	if (ran == 126)
		cr_skip_test("nobody may not run " IWX_BIN " here");
}
