// SPDX-License-Identifier: MIT
/*
 * Faults on the wire, with the fast path off and on: the injector of tests/bpf/faults.bpf.c
 * drops, duplicates, reorders or corrupts the segments of 128 MiB of RDMA Writes (a to b,
 * in 1 MiB pieces) and of a 128 MiB RDMA Read (b to a). TCP repairs the first three:
 * every byte must arrive. A corruption keeps the segment TCP-valid, so only the MPA CRC
 * sees it: the stream must end with a Terminate for the CRC error, and no Write b took
 * may be wrong. Never silent corruption.
 *
 * A Write completes once TCP has its bytes, which says nothing of b. So each piece is
 * followed by a small Read of its end (a checkpoint): RFC 5040 §5.5 answers a Read
 * Request only once every message before it was delivered, so a checkpoint that
 * completes says b took, CRC and all, every Write before it.
 *
 * With markers (suite fastpath_faults_markers), the fast path places the segments that
 * come ahead of a gap, before TCP has the bytes in front of them: under reordering its
 * counters must show FPDUs placed out of order (under drops they show some when more
 * was sent before a loss was repaired).
 *
 * The faults are drawn from a seed (IWX_FAULTS_SEED overrides it, to reproduce a run):
 * the n-th segment meets the same fault in every run. With SEED, the first corruption
 * falls on segment 234 (of those with payload), and 128 MiB take at least 2048 of them
 * (64 KiB at most each): it always comes. Another seed may draw none before the end.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "proto/term.h"

#include "faults.h"
#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "stall.h"
#include "testutil.h"

#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)
#define LEN		(128u << 20)
#define PIECE		(1u << 20)
#define PIECES		(LEN / PIECE)
#define WINDOW		16	/* pieces in flight, two requests each: a queue pair holds 256 */
#define CK		16	/* bytes a checkpoint reads */
#define READ_ID		1000
#define EVENT_MS	STALL_MS	/* a wait for what must come: bounded against a hang */
#define SEED		0x5eedfa17ull

static struct iwxd_pair pair;
static struct endpoint a, b;
static struct faults *inj[2];	/* at egress of a's veth end (Writes), of b's (Read Responses) */
static bool htb;
static struct iwx_conn_param param;	/* markers: the fastpath_faults_markers suite */

static void up(bool fp)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and BPF");
	/* a: the Writes' source and the Read's sink; b: their target */
	cr_assert_eq(iwxd_pair_up(&pair, "--settle-ms 0 --arena-max 512M", &a, &b,
				  LEN * 2 + (4u << 20)), 0);
	if (fp && !getenv("IWX_TEST_FASTPATH"))	/* else iwxd_pair attached already */
		cr_assert_eq(iwxd_pair_attach_both(&pair, IWX_FP_MODE_TC), 0);
}

static void up_off(void)
{
	up(false);
}

static void up_on(void)
{
	up(true);
}

static void up_markers(void)
{
	param.markers = true;
	up(true);
}

static void down(void)
{
	for (int i = 0; i < 2; i++) {
		faults_detach(inj[i]);
		inj[i] = NULL;
		if (htb)
			faults_qdisc_del(i ? pair.ns.b : pair.ns.a, pair.ns.dev[i]);
	}
	htb = false;
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(fastpath_faults_off, .init = up_off, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_faults_markers, .init = up_markers, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_faults_on, .init = up_on, .fini = down, .timeout = HANG_S);

static uint64_t seed(void)
{
	const char *s = getenv("IWX_FAULTS_SEED");

	return s ? strtoull(s, NULL, 0) : SEED;
}

static const char *ns_of(int i)
{
	return i ? pair.ns.b : pair.ns.a;
}

/* Connect a to b, then the injector on both ends, idle (the handshake goes unharmed). */
static void connect_with_injectors(bool reorder)
{
	const struct faults_conf idle = { 0 };

	cr_assert_eq(endpoint_connect(&a, &b, false, &param), 0);
	for (int i = 0; i < 2; i++) {
		if (reorder) {
			cr_assert_eq(faults_htb_add(ns_of(i), pair.ns.dev[i]), 0, "htb on %s",
				     pair.ns.dev[i]);
			htb = true;
		}
		cr_assert_eq(faults_attach(&inj[i], ns_of(i), pair.ns.dev[i], &idle), 0,
			     "the injector on %s", pair.ns.dev[i]);
	}
}

/* The injector on end i did the fault c asks for, and says so. */
static void assert_injected(int i, const struct faults_conf *c)
{
	struct faults_counts n = faults_counts(inj[i]);

	cr_log_info("injector on %s, seed %#llx: %llu segments, %llu dropped, %llu duplicated, "
		    "%llu reordered, %llu corrupted (last at seq %llu)", pair.ns.dev[i],
		    (unsigned long long)c->seed, (unsigned long long)n.seen,
		    (unsigned long long)n.dropped, (unsigned long long)n.duplicated,
		    (unsigned long long)n.reordered, (unsigned long long)n.corrupted,
		    (unsigned long long)n.corrupt_seq);
	cr_assert(!c->drop_ppm || n.dropped, "nothing dropped");
	cr_assert(!c->dup_ppm || n.duplicated, "nothing duplicated");
	cr_assert(!c->reorder_ppm || n.reordered, "nothing reordered");
	cr_assert(!c->corrupt_ppm || n.corrupted, "nothing corrupted");
}

/* Post piece i: its Write, unsignaled, and its checkpoint. 0, or -errno once the stream ended. */
static int post_piece(const struct buf *src, const struct buf *dst, const struct buf *ck, uint32_t i)
{
	struct iwx_send_wr w = {
		.wr_id = READ_ID + 1 + i, .opcode = IWX_WR_WRITE, .num_sge = 1,
		.sge = { sge_of(src, (size_t)i * PIECE, PIECE) },
		.remote_addr = (uintptr_t)dst->p + (size_t)i * PIECE, .rkey = dst->mr->rkey,
	};
	struct iwx_send_wr r = {
		.wr_id = i, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { sge_of(ck, (size_t)i * CK, CK) },
		.remote_addr = (uintptr_t)dst->p + (size_t)(i + 1) * PIECE - CK, .rkey = dst->mr->rkey,
	};
	int err = iwx_post_send(a.qp, &w);

	return err ? err : iwx_post_send(a.qp, &r);
}

/*
 * Write src to dst piece by piece until all are confirmed or a completion fails (its
 * status in *failed, else IWX_WC_SUCCESS). Returns the pieces confirmed: b has taken
 * every Write up to there. Each one is checked.
 */
static uint32_t write_pieces(const struct buf *src, const struct buf *dst, const struct buf *ck,
			     enum iwx_wc_status *failed)
{
	uint32_t posted = 0, done = 0;
	struct iwx_wc wc;
	int err;

	*failed = IWX_WC_SUCCESS;
	while (done < PIECES) {
		while (posted < PIECES && posted - done < WINDOW && !post_piece(src, dst, ck, posted))
			posted++;
		err = endpoint_wc(&a, &wc);
		cr_assert_eq(err, 0, "no completion after piece %u: %s", done, iwx_strerror(err));
		if (wc.status != IWX_WC_SUCCESS) {
			*failed = wc.status;
			break;
		}
		cr_assert_eq(wc.wr_id, done, "checkpoint %lu, want %u", (unsigned long)wc.wr_id, done);
		done++;
	}
	for (uint32_t i = 0; i < done; i++) {
		size_t off = (size_t)i * PIECE;

		cr_assert_eq(memcmp(dst->p + off, src->p + off, PIECE), 0,
			     "piece %u, confirmed by its checkpoint, differs", i);
		cr_assert_eq(memcmp(ck->p + (size_t)i * CK, src->p + off + PIECE - CK, CK), 0,
			     "checkpoint %u read wrong bytes", i);
	}
	return done;
}

/* Read all of dst into back in one request: its completion's status. */
static enum iwx_wc_status read_all(const struct buf *back, const struct buf *dst)
{
	struct iwx_send_wr r = {
		.wr_id = READ_ID, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { sge_of(back, 0, LEN) }, .remote_addr = (uintptr_t)dst->p,
		.rkey = dst->mr->rkey,
	};
	struct iwx_wc wc;
	int err;

	cr_assert_eq(iwx_post_send(a.qp, &r), 0);
	err = endpoint_wc(&a, &wc);
	cr_assert_eq(err, 0, "no completion of the Read: %s", iwx_strerror(err));
	cr_assert_eq(wc.wr_id, READ_ID);
	return wc.status;
}

/* Daemon i's counters of its interface (IWX_IPC_FP_STATS). */
static struct iwx_fp_counters fp_counters(int i)
{
	struct iwx_fp_counters c;

	cr_assert_eq(iwxd_pair_fp_counters(&pair, i, IWX_FP_INFO_IFACE, &c), 0,
		     "daemon %d has no fast path counters", i);
	return c;
}

#define SKIP_NAME(n, name, why)	name,
static const char *const skip_names[] = { IWX_FP_SKIPS(SKIP_NAME) };

/*
 * The fast path of daemon i placed something; its skips show where it resynchronised
 * (unsync: after a gap, the FPDUs iwxd read itself until the programs were certain again).
 * With markers and segments reordered, some of it out of order.
 */
static void assert_placed(int i, bool reordered)
{
	struct iwx_fp_counters c = fp_counters(i);
	struct faults_counts f = faults_counts(inj[1 - i]);	/* on the way to daemon i */
	uint64_t gaps = f.dropped + f.reordered;
	char skips[512] = "";
	size_t n = 0;

	for (int k = 0; k < IWX_FP_SKIP_N; k++)
		if (c.skipped[k] && n < sizeof(skips))
			n += snprintf(skips + n, sizeof(skips) - n, " %s %llu", skip_names[k],
				      (unsigned long long)c.skipped[k]);
	cr_log_info("fast path of %s: %llu FPDUs placed (%llu bytes, %llu out of order), %llu "
		    "proposals, %llu confirmed; skipped:%s", pair.ns.dev[i],
		    (unsigned long long)c.placed_fpdus, (unsigned long long)c.placed_bytes,
		    (unsigned long long)c.ahead, (unsigned long long)c.proposals,
		    (unsigned long long)c.confirmed, n ? skips : " nothing");
	if (gaps)
		cr_log_info("fast path of %s: back in sync after %.1f FPDUs per gap (%llu unsync "
			    "for %llu segments dropped or reordered on the way)", pair.ns.dev[i],
			    (double)c.skipped[IWX_FP_SKIP_UNSYNC] / (double)gaps,
			    (unsigned long long)c.skipped[IWX_FP_SKIP_UNSYNC], (unsigned long long)gaps);
	cr_assert_gt(c.placed_fpdus, 0, "the fast path of %s placed nothing", pair.ns.dev[i]);
	if (param.markers && reordered)
		cr_assert_gt(c.ahead, 0, "with markers, the fast path of %s placed nothing out of "
			     "order", pair.ns.dev[i]);
}

/* Segments TCP in namespace ns queued out of order, so far. */
static int64_t ofo(const char *ns)
{
	int64_t n = faults_tcp_stat(ns, "TCPOFOQueue");

	cr_assert_geq(n, 0, "TcpExt TCPOFOQueue of %s", ns);
	return n;
}

/* The DISCONNECTED event of e: a Terminate for an MPA CRC error, sent (local) or received. */
static void expect_crc_terminate(struct endpoint *e, bool local)
{
	struct iwx_event ev;
	int err;

	do
		err = endpoint_event(e, &ev, EVENT_MS);
	while (!err && ev.type != IWX_EVENT_DISCONNECTED);
	cr_assert_eq(err, 0, "no DISCONNECTED event: %s", iwx_strerror(err));
	cr_assert(ev.term.terminated, "the stream ended without a Terminate: %s", ev.term.reason);
	cr_assert_eq(ev.term.local, local, "local %d, want %d (%s)", ev.term.local, local,
		     ev.term.reason);
	cr_assert(iwx_cause_eq(iwx_cause(ev.term.layer, ev.term.etype, ev.term.ecode),
			       IWX_CAUSE_MPA(IWX_MPA_EC_CRC)),
		  "cause %u/%u/0x%02x (%s), want the MPA CRC error", ev.term.layer, ev.term.etype,
		  ev.term.ecode, ev.term.reason);
}

#define REORDER_ROUNDS	8	/* transfers under reordering until TCP saw one out of order */

/*
 * Under the fault of c (one of drop, duplicate, reorder), the Writes a to b, then the
 * Read back b to a: every byte arrives, and the injector did its fault each way.
 */
static void repaired(struct faults_conf c, bool fp)
{
	struct buf src = buf_new(&a, NULL, LEN, 0, false);
	struct buf back = buf_new(&a, NULL, LEN, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf ck = buf_new(&a, NULL, PIECES * CK, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, LEN, ALL_ACCESS, false);
	const struct faults_conf idle = { 0 };
	enum iwx_wc_status st;
	int64_t ofo_before;

	c.seed = seed();
	fill_pattern(src.p, LEN, (uint32_t)c.seed);
	connect_with_injectors(c.reorder_ppm);

	/*
	 * A delayed segment is overtaken only by those sent while it waits: a slow sender
	 * (ASan, a busy machine) may send none then. Reordering is asked to have happened,
	 * so the transfer is done again, whole and checked each time, until TCP queued a
	 * segment out of order, at most REORDER_ROUNDS times.
	 */
	faults_set(inj[0], &c);
	ofo_before = ofo(pair.ns.b);
	for (int r = 0; r < (c.reorder_ppm ? REORDER_ROUNDS : 1); r++) {
		memset(dst.p, 0, LEN);
		cr_assert_eq(write_pieces(&src, &dst, &ck, &st), PIECES, "a Write failed: %s",
			     iwx_wc_status_name(st));
		cr_assert_eq(memcmp(dst.p, src.p, LEN), 0, "every byte written");
		if (ofo(pair.ns.b) > ofo_before)
			break;
	}
	faults_set(inj[0], &idle);
	assert_injected(0, &c);
	if (c.reorder_ppm) {
		int64_t n = ofo(pair.ns.b) - ofo_before;

		cr_log_info("b queued %lld segments out of order", (long long)n);
		cr_assert_gt(n, 0, "the Writes' segments came in order at b, %d times over",
			     REORDER_ROUNDS);
	}

	faults_set(inj[1], &c);
	ofo_before = ofo(pair.ns.a);
	for (int r = 0; r < (c.reorder_ppm ? REORDER_ROUNDS : 1); r++) {
		memset(back.p, 0, LEN);
		st = read_all(&back, &dst);
		cr_assert_eq(st, IWX_WC_SUCCESS, "the Read failed: %s", iwx_wc_status_name(st));
		cr_assert_eq(memcmp(back.p, src.p, LEN), 0, "every byte read back");
		if (ofo(pair.ns.a) > ofo_before)
			break;
	}
	assert_injected(1, &c);
	if (c.reorder_ppm) {
		int64_t n = ofo(pair.ns.a) - ofo_before;

		cr_log_info("a queued %lld segments out of order", (long long)n);
		cr_assert_gt(n, 0, "the Read Response's segments came in order at a, %d times over",
			     REORDER_ROUNDS);
	}
	if (fp) {
		/*
		 * Placed ahead of a gap: held to it under reordering, where a segment comes
		 * after the one behind it by construction. After a drop only if more was sent
		 * before the loss was repaired, which the senders' pattern decides: 0-42 FPDUs
		 * per 128 MiB for the Read, 12-2358 for the Writes, 0 in one CI run.
		 */
		assert_placed(1, c.reorder_ppm);
		assert_placed(0, c.reorder_ppm);
	}
}

/*
 * Writes a to b under corruption: b finds the CRC error and terminates; every Write b
 * confirmed before is exact (write_pieces checks).
 */
static void corrupt_writes(struct faults_conf c, bool fp)
{
	struct buf src = buf_new(&a, NULL, LEN, 0, false);
	struct buf ck = buf_new(&a, NULL, PIECES * CK, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, LEN, ALL_ACCESS, false);
	enum iwx_wc_status st;
	uint32_t done;

	c.seed = seed();
	fill_pattern(src.p, LEN, (uint32_t)c.seed);
	connect_with_injectors(false);
	faults_set(inj[0], &c);
	done = write_pieces(&src, &dst, &ck, &st);
	assert_injected(0, &c);
	cr_log_info("%u of %u pieces confirmed, then: %s", done, PIECES, iwx_wc_status_name(st));
	cr_assert_neq(st, IWX_WC_SUCCESS, "corrupted, and yet every Write was confirmed");
	expect_crc_terminate(&b, true);
	expect_crc_terminate(&a, false);
	cr_assert(iwxd_pair_logged(&pair, 1, "MPA CRC error"));
	if (fp)
		assert_placed(1, false);
}

/* A Read b to a under corruption: a finds the CRC error, terminates, and the Read fails. */
static void corrupt_read(struct faults_conf c, bool fp)
{
	struct buf back = buf_new(&a, NULL, LEN, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf dst = buf_new(&b, NULL, LEN, ALL_ACCESS, false);
	enum iwx_wc_status st;

	c.seed = seed();
	fill_pattern(dst.p, LEN, (uint32_t)c.seed);
	connect_with_injectors(false);
	faults_set(inj[1], &c);
	st = read_all(&back, &dst);
	assert_injected(1, &c);
	cr_assert_neq(st, IWX_WC_SUCCESS, "corrupted, and yet the Read completed (%s)",
		      memcmp(back.p, dst.p, LEN) ? "with wrong bytes" : "every byte right");
	expect_crc_terminate(&a, true);
	expect_crc_terminate(&b, false);
	cr_assert(iwxd_pair_logged(&pair, 0, "MPA CRC error"));
	if (fp)
		assert_placed(0, false);
}

/* The rates, per million segments. Corruption is rarer: the first one ends the stream. */
static const struct faults_conf drop_rates = { .drop_ppm = 10000 };
static const struct faults_conf dup_rates = { .dup_ppm = 10000 };
static const struct faults_conf reorder_rates = { .reorder_ppm = 20000 };
static const struct faults_conf corrupt_rates = { .corrupt_ppm = 500 };

/*
 * A corruption of an FPDU's tagged offset instead of its payload. Byte 13 of the FPDU (2
 * bytes ULPDU_LENGTH, 2 of control, 4 of STag, then the TO) holds bits 16 to 23 of the
 * TO: flipping 0x10 moves the payload 1 MiB back, onto a piece b confirmed, or ahead,
 * still inside the region. Neither iwxd nor the fast path places a segment before its
 * CRC is known unless it continues its message where the last one ended, so the moved
 * one waits for its CRC, and no confirmed byte changes.
 */
static const struct faults_conf tagged_offset_rates = {
	.corrupt_ppm = 500, .corrupt_at = FAULTS_AT(13), .corrupt_xor = 0x10,
};

#define FAULT_TESTS(suite, fp)						\
	Test(suite, drop) { repaired(drop_rates, fp); }			\
	Test(suite, duplicate) { repaired(dup_rates, fp); }		\
	Test(suite, reorder) { repaired(reorder_rates, fp); }		\
	Test(suite, corrupt_writes) { corrupt_writes(corrupt_rates, fp); }	\
	Test(suite, corrupt_read) { corrupt_read(corrupt_rates, fp); }	\
	Test(suite, corrupt_tagged_offset) { corrupt_writes(tagged_offset_rates, fp); }

FAULT_TESTS(fastpath_faults_off, false)
FAULT_TESTS(fastpath_faults_on, true)
FAULT_TESTS(fastpath_faults_markers, true)
