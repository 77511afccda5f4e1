// SPDX-License-Identifier: MIT
/*
 * Forged segments: kernel TCP stays in charge of what the fast path places. An attacker
 * on the wire races the sender of a running RDMA Write with a copy of one of its segments
 * that carries other payload, with an MPA CRC that holds over it, and that the receiver's
 * TCP refuses (tests/bpf/faults.bpf.c, forge): an ACK of data never sent, a bad IPv4
 * header checksum, another host's MAC address, an old timestamp (alone, or one made old
 * by a segment just ahead of it), a VLAN tag the host has no device for. Or a copy the fast path
 * finds good in every way, that a filter after it drops (as a firewall would): what the
 * program cannot see. Then the segment itself comes, and TCP takes it. With MPA markers
 * (every packet says where its FPDUs are) too.
 *
 * The receiver must end byte-exact, the Write and the Send behind it complete, with no
 * Terminate; the fast path counts why it did not place the copy, or iwxd that TCP
 * accepted other bytes than the ones placed (and read those: fast_refuted). And with
 * the programs' checks of the ACK and timestamp left out (iwxd_unchecked), the copies
 * TCP refuses after iwx_accepted saw them are placed: TCP's verdict must still decide.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/crc32c.h"
#include "ipc/ipc.h"
#include "proto/wire.h"

#include "faults.h"
#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "stall.h"
#include "testutil.h"

#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)
#define ARGS		"--settle-ms 0"
#define LEN		(4u << 20)
#define FPDU_LEN	1448u	/* a full FPDU: the MSS of the veth (1500 bytes, timestamps) */
#define FLIP		200u	/* where in it the forged payload differs */
#define SEND_LEN	64u
#define RACES		5	/* raced_until_refuted's, at most */

static struct iwxd_pair pair;
static struct endpoint a, b;
static struct faults *injector, *filter;
static struct iwx_conn_param param;	/* markers: the fastpath_forged_markers suite */

/* The fast path on b, the Writes' target. */
static void start(uint32_t mode)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and BPF");
	if (getenv("IWX_TEST_FASTPATH"))	/* each suite here says where it attaches */
		unsetenv("IWX_TEST_FASTPATH");
	cr_assert_eq(iwxd_pair_up(&pair, ARGS, &a, &b, 2 * LEN), 0);
	cr_assert_eq(iwxd_pair_attach(&pair, 1, mode, 0), 0);
}

static void up(void)
{
	start(IWX_FP_MODE_TC);
}

static void up_markers(void)
{
	param.markers = true;
	start(IWX_FP_MODE_TC);
}

static void up_xdp(void)
{
	start(IWX_FP_MODE_XDP);
}

/*
 * iwxd_unchecked (Makefile): its programs leave out the checks TCP makes after
 * iwx_accepted's tracepoint (the ACK, PAWS), so they place the copies TCP then refuses.
 */
static void unchecked(uint32_t mode)
{
	const char *path = getenv("IWX_IWXD_UNCHECKED");

	path = path ? path : "build/tests/iwxd_unchecked";
	cr_assert_eq(access(path, X_OK), 0, "%s: not built (make %s)", path, path);
	setenv("IWX_IWXD", path, 1);	/* this test's process only */
	start(mode);
}

static void up_unchecked(void)
{
	unchecked(IWX_FP_MODE_TC);
}

static void down(void)
{
	faults_detach(injector);
	faults_detach(filter);
	injector = filter = NULL;
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(fastpath_forged, .init = up, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_forged_xdp, .init = up_xdp, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_forged_markers, .init = up_markers, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_forged_unchecked, .init = up_unchecked, .fini = down, .timeout = HANG_S);

/*
 * What to XOR into an FPDU's CRC so that it holds after its bytes at FLIP flip (0x5a5a):
 * CRC32c is affine, so the change is the same whatever the FPDU holds.
 */
static void forge_crc(uint8_t out[4])
{
	static uint8_t fpdu[FPDU_LEN - IWX_MPA_CRC_LEN];
	uint8_t was[4], now[4];

	memset(fpdu, 0, sizeof(fpdu));
	iwx_crc32c_put(was, iwx_crc32c(fpdu, sizeof(fpdu)));
	fpdu[FLIP] ^= 0x5a;
	fpdu[FLIP + 1] ^= 0x5a;
	iwx_crc32c_put(now, iwx_crc32c(fpdu, sizeof(fpdu)));
	for (int i = 0; i < 4; i++)
		out[i] = was[i] ^ now[i];
}

/* b's fast path counters, of its interface. */
static struct iwx_fp_counters counters_of_b(void)
{
	struct iwx_fp_counters c;

	cr_assert_eq(iwxd_pair_fp_counters(&pair, 1, IWX_FP_INFO_IFACE, &c), 0,
		     "b's fast path is attached nowhere");
	return c;
}

static struct iwx_qp_stats traffic_of_b(void)
{
	struct iwx_qp_stats t;

	cr_assert_eq(iwxd_pair_traffic(&pair, 1, &t), 0);
	return t;
}

static void expect_wc(struct endpoint *e, uint64_t id)
{
	struct iwx_wc wc;

	cr_assert_eq(endpoint_wc(e, &wc), 0, "a completion of %llu", (unsigned long long)id);
	cr_assert_eq(wc.wr_id, id);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "%llu: %s", (unsigned long long)id,
		     iwx_wc_status_name(wc.status));
}

/* The traffic each forgery races: a Write of LEN bytes from a to b and a Send behind it,
 * b's receive for it posted first (wr_ids 1, 2; 3). */
struct raced {
	struct buf	src, dst, msg, got;
};

static struct raced raced_new(void)
{
	return (struct raced){
		.src = buf_new(&a, NULL, LEN, IWX_ACCESS_LOCAL_WRITE, false),
		.dst = buf_new(&b, NULL, LEN, ALL_ACCESS, false),
		.msg = buf_new(&a, NULL, SEND_LEN, IWX_ACCESS_LOCAL_WRITE, false),
		.got = buf_new(&b, NULL, SEND_LEN, IWX_ACCESS_LOCAL_WRITE, false),
	};
}

static void post_raced(const struct raced *t, uint32_t pattern)
{
	fill_pattern(t->src.p, LEN, pattern);
	fill_pattern(t->msg.p, SEND_LEN, pattern + 1);
	memset(t->dst.p, 0, LEN);
	memset(t->got.p, 0, SEND_LEN);

	struct iwx_recv_wr recv = { .wr_id = 3, .num_sge = 1, .sge = { sge_of(&t->got, 0, SEND_LEN) } };
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1, .sge = { sge_of(&t->src, 0, LEN) },
				     .remote_addr = (uintptr_t)t->dst.p, .rkey = t->dst.mr->rkey };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(&t->msg, 0, SEND_LEN) } };

	cr_assert_eq(iwx_post_recv(b.qp, &recv), 0);
	cr_assert_eq(iwx_post_send(a.qp, &write), 0);
	cr_assert_eq(iwx_post_send(a.qp, &send), 0);
}

/* The injector anew for a race of its own (it counts segments from 0), no filter. */
static void inject(const struct faults_conf *c)
{
	faults_detach(injector);
	faults_detach(filter);
	injector = filter = NULL;
	cr_assert_eq(faults_attach(&injector, pair.ns.a, pair.ns.dev[0], c), 0);
}

/* b holds every byte a's Write and Send carried, not the forged ones; if not, which. */
static void expect_delivered(const struct raced *t)
{
	const uint8_t *got = t->dst.p, *want = t->src.p;
	size_t first = LEN, last = 0, n = 0;

	for (size_t i = 0; i < LEN; i++)
		if (got[i] != want[i]) {
			first = first == LEN ? i : first;
			last = i;
			n++;
		}
	cr_assert_eq(n, 0, "b holds what a wrote, not the forged bytes: %zu bytes differ, from %zu "
		     "to %zu (the first 0x%02x, a wrote 0x%02x)", n, first, last, got[first], want[first]);
	cr_assert_arr_eq(t->got.p, t->msg.p, SEND_LEN);
}

/*
 * On the connection made: a Write of LEN bytes from a to b and a Send behind it, the 40th
 * full segment since the injector came raced by a copy forged as how says: every byte as a
 * sent it, both complete, nothing terminated. Returns b's fast path counters.
 */
static struct iwx_fp_counters race(const struct raced *t, enum faults_forge how)
{
	struct faults_conf c = { .forge_at = FAULTS_AT(40), .forge_len = FPDU_LEN, .forge_flip = FLIP,
				 .forge_how = how };
	struct faults_counts n;

	forge_crc(c.forge_crc);
	inject(&c);
	if (how == FAULTS_FORGE_TOS)
		cr_assert_eq(faults_attach_filter(&filter, pair.ns.b, pair.ns.dev[1]), 0);

	post_raced(t, how + 11);
	expect_wc(&a, 1);
	expect_wc(&a, 2);
	expect_wc(&b, 3);	/* b took the Write, CRC and all, before the Send (RFC 5040 §5.5) */

	n = faults_counts(injector);
	cr_assert_eq(n.forged, 1, "one copy forged and sent ahead of its segment: %llu (of %llu)",
		     (unsigned long long)n.forged, (unsigned long long)n.forge_seen);
	if (how == FAULTS_FORGE_TOS)
		cr_assert_geq(faults_counts(filter).marked_dropped, 1,
			      "the filter dropped it (at XDP, each wire segment of it)");
	expect_delivered(t);
	return counters_of_b();
}

/* race on a connection of its own */
static struct iwx_fp_counters write_raced(enum faults_forge how)
{
	struct raced t;

	cr_assert_eq(endpoint_connect(&a, &b, false, &param), 0);
	t = raced_new();
	return race(&t, how);
}

/*
 * race until iwxd found a placed FPDU was not TCP's and read TCP's instead. A program that
 * lost the stream (a busy machine) places nothing there to refute, and race checks every
 * byte anyway: so again, up to RACES times, on one connection.
 */
static struct iwx_fp_counters raced_until_refuted(enum faults_forge how)
{
	uint64_t refuted = traffic_of_b().fast_refuted;
	struct iwx_fp_counters c;
	struct raced t;
	int races = 0;

	cr_assert_eq(endpoint_connect(&a, &b, false, &param), 0);
	t = raced_new();
	do {
		c = race(&t, how);
	} while (++races < RACES && traffic_of_b().fast_refuted == refuted);
	cr_assert_gt(traffic_of_b().fast_refuted, refuted,
		     "iwxd found the placed FPDU was not TCP's, and read TCP's (%d races)", races);
	return c;
}

/* A copy TCP refuses for why: the fast path did not place it, and says why. */
static void refused(enum faults_forge how, enum iwx_fp_skip why)
{
	struct iwx_fp_counters c = write_raced(how);

	cr_assert_geq(c.skipped[why], 1, "the copy not placed, for its reason (%d)", why);
	cr_assert_gt(c.placed_bytes, 0, "the fast path placed the rest");
}

Test(fastpath_forged, an_ack_of_data_never_sent)
{
	refused(FAULTS_FORGE_ACK, IWX_FP_SKIP_ACK);
}

Test(fastpath_forged, a_bad_ipv4_header_checksum)
{
	refused(FAULTS_FORGE_IP_SUM, IWX_FP_SKIP_IP_HEADER);
}

Test(fastpath_forged, another_hosts_mac_address)
{
	refused(FAULTS_FORGE_MAC, IWX_FP_SKIP_NOT_HOST);
}

Test(fastpath_forged, an_old_timestamp)
{
	refused(FAULTS_FORGE_PAWS, IWX_FP_SKIP_PAWS);
}

/* TCP would take it from VLAN 100's device; b has none, and drops it */
Test(fastpath_forged, a_vlan_this_host_does_not_have)
{
	refused(FAULTS_FORGE_VLAN, IWX_FP_SKIP_VLAN);
}

/* With markers every packet says where its FPDUs are: the copy is refused all the same */
Test(fastpath_forged_markers, an_ack_of_data_never_sent)
{
	refused(FAULTS_FORGE_ACK, IWX_FP_SKIP_ACK);
}

Test(fastpath_forged_xdp, an_ack_of_data_never_sent)
{
	refused(FAULTS_FORGE_ACK, IWX_FP_SKIP_ACK);
}

Test(fastpath_forged_xdp, another_hosts_mac_address)
{
	refused(FAULTS_FORGE_MAC, IWX_FP_SKIP_NOT_HOST);
}

/*
 * The copy with the segment's own timestamp, behind the segment's bytes one segment
 * earlier with a newer one: TCP takes that duplicate's timestamp as its latest, then
 * drops the copy, and the segment, as old (PAWS). A program that judges both before TCP
 * has taken the first (XDP: a NAPI poll's frames before the stack has any; TC: frames
 * that wait behind iwxd's hold on the socket) finds the copy's timestamp current: what
 * decides is what TCP then does with it. TCP's PAWS drops show the race was run; whether
 * the copy was placed depends on where the programs stand, so it is logged.
 */
static void newer_timestamp_ahead(void)
{
	int64_t paws = faults_tcp_stat(pair.ns.b, "PAWSEstab");
	uint64_t refuted = traffic_of_b().fast_refuted;
	struct iwx_fp_counters c = write_raced(FAULTS_FORGE_PAWS_RACE);

	cr_assert_gt(faults_tcp_stat(pair.ns.b, "PAWSEstab"), paws, "b's TCP dropped the copy as old");
	cr_log_info("refuted %llu -> %llu; skipped paws %llu; placed %llu FPDUs",
		    (unsigned long long)refuted, (unsigned long long)traffic_of_b().fast_refuted,
		    (unsigned long long)c.skipped[IWX_FP_SKIP_PAWS], (unsigned long long)c.placed_fpdus);
}

Test(fastpath_forged, an_old_timestamp_behind_a_newer_one)
{
	newer_timestamp_ahead();
}

Test(fastpath_forged_xdp, an_old_timestamp_behind_a_newer_one)
{
	newer_timestamp_ahead();
}

/*
 * At XDP the tag can travel beside the frame, as on a veth here, or a NIC that strips
 * tags: the program then sees the frame untagged and may place it (only a device-bound
 * program may ask for the tag); TCP never gets it, and iwxd reads TCP's bytes instead.
 * Whether the copy is placed depends on where the program stands in the stream when it
 * comes, so only what must hold either way is asserted: every byte as a sent it.
 */
Test(fastpath_forged_xdp, a_vlan_this_host_does_not_have)
{
	uint64_t refuted = traffic_of_b().fast_refuted;
	struct iwx_fp_counters c = write_raced(FAULTS_FORGE_VLAN);

	cr_log_info("refuted %llu -> %llu; skipped vlan %llu; placed %llu FPDUs",
		    (unsigned long long)refuted, (unsigned long long)traffic_of_b().fast_refuted,
		    (unsigned long long)c.skipped[IWX_FP_SKIP_VLAN], (unsigned long long)c.placed_fpdus);
}

/*
 * A copy good in every way the program can check, dropped after it: placed, and then not
 * what TCP accepted. iwxd takes TCP's bytes instead, over the placed ones.
 */
static void dropped_after_the_fast_path(void)
{
	struct iwx_fp_counters c = raced_until_refuted(FAULTS_FORGE_TOS);

	cr_assert_gt(c.placed_bytes, 0, "the fast path placed the rest");
}

Test(fastpath_forged, dropped_after_the_fast_path)
{
	dropped_after_the_fast_path();
}

Test(fastpath_forged_xdp, dropped_after_the_fast_path)
{
	dropped_after_the_fast_path();
}

/*
 * A copy placed that TCP refuses after the tracepoint where iwx_accepted judges it (with
 * its bytes, the same as placed): that judgment is void once TCP has not queued them, and
 * TCP's own segment, when it comes, is judged afresh. iwxd reads TCP's bytes. At TC only:
 * the judgment is the same whatever the hook, and at TC the copy, a GSO segment whole, was
 * placed in every run here (at XDP its wire segments may come while the program has lost
 * the stream, and then nothing is placed to refute: 1 run in 10 beside a busy loop).
 */
static void refused_by_tcp_after_the_hook(enum faults_forge how, enum iwx_fp_skip why)
{
	struct iwx_fp_counters c = raced_until_refuted(how);

	cr_assert_eq(c.skipped[why], 0, "the programs did not check it (iwxd_unchecked)");
}

Test(fastpath_forged_unchecked, an_ack_of_data_never_sent)
{
	refused_by_tcp_after_the_hook(FAULTS_FORGE_ACK, IWX_FP_SKIP_ACK);
}

Test(fastpath_forged_unchecked, an_old_timestamp)
{
	refused_by_tcp_after_the_hook(FAULTS_FORGE_PAWS, IWX_FP_SKIP_PAWS);
}

/*
 * A copy whose first FPDU takes the second in (its length over both, the CRC word at its
 * end not TCP's), with an ACK TCP refuses: placed over both FPDUs' range, refuted, and
 * TCP's FPDU there rewrites only the first's. What else was placed cannot be made right
 * by that FPDU: b ends the stream with the LLP's Terminate ("local catastrophic error"),
 * and its receive for the Send behind the Write completes flushed, never with success.
 * A program that lost the stream (a busy machine) places no copy: then every byte is a's,
 * all complete, and the race is run again, up to RACES times.
 */
Test(fastpath_forged_unchecked, an_fpdu_longer_than_tcps)
{
	struct faults_conf c = { .forge_at = FAULTS_AT(40), .forge_len = FPDU_LEN,
				 .forge_how = FAULTS_FORGE_LONGER };
	struct iwx_event ev;
	struct iwx_wc wc;
	struct raced t;
	int races = 0;

	cr_assert_eq(endpoint_connect(&a, &b, false, &param), 0);
	t = raced_new();
	for (;;) {
		inject(&c);
		post_raced(&t, 31 + races);
		cr_assert_eq(endpoint_wc(&b, &wc), 0, "b's receive completes");
		cr_assert_eq(wc.wr_id, 3);
		if (wc.status != IWX_WC_SUCCESS || ++races == RACES)
			break;
		expect_wc(&a, 1);	/* nothing placed: all a's */
		expect_wc(&a, 2);
		expect_delivered(&t);
	}
	cr_assert_eq(wc.status, IWX_WC_WR_FLUSH_ERR, "flushed, not %s (%d races)",
		     iwx_wc_status_name(wc.status), races);
	cr_assert_eq(faults_counts(injector).forged, 1, "one copy forged");
	cr_assert_eq(traffic_of_b().fast_unrepaired, 1, "iwxd found what it could not repair");
	cr_assert_eq(endpoint_event(&b, &ev, STALL_MS), 0, "b's stream ended");
	cr_assert_eq(ev.type, IWX_EVENT_DISCONNECTED);
	cr_assert(ev.term.terminated && ev.term.local, "b sent a Terminate: %s", ev.term.reason);
	cr_assert(ev.term.layer == IWX_LAYER_LLP && ev.term.etype == IWX_MPA_ETYPE &&
		  ev.term.ecode == IWX_MPA_EC_LOCAL_CATASTROPHIC, "the LLP's local catastrophic "
		  "error, not %u/%u/0x%02x (%s)", ev.term.layer, ev.term.etype, ev.term.ecode,
		  ev.term.reason);
}
