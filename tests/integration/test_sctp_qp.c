// SPDX-License-Identifier: MIT
/*
 * Queue pairs on the SCTP lower layer (llp_sctp.c), end to end in one process: two
 * associations of the one usrsctp stack joined by an in-memory link (sctp_link.h),
 * set up by conn_sctp.c, moving data with every RDMAP operation. Every packet is
 * also written to a pcap, for tshark to read the shim's wire (draft-otis-sctp-ddp-00).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <usrsctp.h>

#include "proto/crc32c.h"
#include "proto/ddp_shim.h"
#include "proto/wire.h"

#include "capture.h"
#include "llp_sctp.h"
#include "mem.h"
#include "qp.h"
#include "sctp.h"
#include "conn.h"
#include "sctp_link.h"
#include "sctp_udp.h"
#include "netns.h"
#include "testutil.h"
#include "util/clock.h"

#define OWNER	1
#define PORT	7175
#define BUF_LEN	(40u << 20)

struct end {
	struct iwx_conn	conn;
	struct iwx_mem		*mem;
	uint32_t		pd, stag;
	uint8_t			*buf;
	struct iwx_engine_qp		*qp;
	struct socket		*so;	/* the association, the queue pair's once it has one */
};

static struct sctp_link link_;	/* outlives the stack: static */
static struct socket *lso;
static struct end A, B;	/* A initiates, B responds */

/* How packets travel: the in-memory link, or UDP between two namespaces (sctp_udp). */
static struct iwx_sctp_path *to_b;	/* A's name for B */
static void (*pump)(int max_ms);

static struct netns_pair ns;
static struct iwx_sctp_udp *udp[2];	/* A's in namespace a, B's in b */

static void link_pump(int max_ms)
{
	sctp_link_pump(&link_, max_ms);
}

/* What arrived on either UDP socket into the stack, waiting up to max_ms; then timers. */
static void udp_pump(int max_ms)
{
	struct pollfd p[2] = { { .fd = iwx_sctp_udp_fd(udp[0]), .events = POLLIN },
			       { .fd = iwx_sctp_udp_fd(udp[1]), .events = POLLIN } };

	poll(p, 2, max_ms);
	for (int i = 0; i < 2; i++)
		while (iwx_sctp_udp_input(udp[i], 64) == 64)
			;
	iwx_sctp_tick();
}

static void fini(void)
{
	struct end *ends[] = { &A, &B };

	for (int i = 0; i < 2; i++) {
		if (ends[i]->qp)
			iwx_qp_destroy(ends[i]->qp);	/* closes the association */
		else
			iwx_conn_close(&ends[i]->conn);
		iwx_mem_free(ends[i]->mem);
		free(ends[i]->buf);
		memset(ends[i], 0, sizeof(*ends[i]));
	}
	if (lso)
		usrsctp_close(lso);
	lso = NULL;
	if (pump == link_pump)
		sctp_link_destroy(&link_);
	for (int i = 0; udp[0] && i < 20; i++)
		pump(10);	/* the associations' SHUTDOWN exchange */
	for (int i = 0; i < 2; i++) {
		iwx_sctp_udp_close(udp[i]);
		udp[i] = NULL;
	}
	iwx_sctp_finish();
	netns_pair_teardown(&ns);
}

static void init(void)
{
	cr_assert_eq(iwx_sctp_init(), 0);
	sctp_link_init(&link_);
	link_.a.place = link_.b.place = true;	/* as every carrier of iwxd's does */
	to_b = &link_.b;
	pump = link_pump;
}

TestSuite(sctp_qp, .init = init, .fini = fini, .timeout = 60);

static const struct iwx_mpa_local local = { .rev = 2, .ird = 16, .ord = 16 };

static void establish(void)
{
	struct iwx_conn_opts o = { .local = local, .timeout_ms = 5000 };
	bool accepted = false;
	uint64_t deadline = iwx_now_ms() + 10000;

	lso = iwx_conn_sctp_listen(PORT, 4);
	cr_assert_not_null(lso, "listen: %s", strerror(errno));
	cr_assert_eq(iwx_conn_sctp_connect(&A.conn, to_b, PORT, &o), 0);
	while (A.conn.state != IWX_CONN_ESTABLISHED || !accepted ||
	       B.conn.state != IWX_CONN_ESTABLISHED) {
		uint64_t now = iwx_now_ms();

		cr_assert_lt(now, deadline, "set-up did not finish");
		pump(10);
		iwx_conn_step(&A.conn, now);
		if (!accepted) {
			accepted = iwx_conn_sctp_accept(&B.conn, lso, &o) == 0;
			continue;
		}
		iwx_conn_step(&B.conn, now);
		if (B.conn.state == IWX_CONN_REQUEST_IN)
			cr_assert_eq(iwx_conn_answer(&B.conn, &o, false), 0);
		cr_assert(A.conn.state != IWX_CONN_FAILED && B.conn.state != IWX_CONN_FAILED,
			  "set-up failed: %s / %s", strerror(-A.conn.error), strerror(-B.conn.error));
	}
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
	e->so = e->conn.sctp.so;
	e->conn.sctp.so = NULL;	/* the lower layer's now */
	e->qp = iwx_qp_create(iwx_llp_sctp_new(e->so, e->conn.emss, e->conn.sctp.peer_tsn),
			      &e->conn.agreed, e->mem, e->pd, NULL);
	cr_assert_not_null(e->qp);
}

static void connect_pair(void)
{
	establish();
	make_qp(&A);
	make_qp(&B);
}

/* Run both queue pairs and the link until wanted completions arrived, bounded in time. */
static void run_until(int a_wcs, int b_wcs, struct iwx_wc *wa, struct iwx_wc *wb)
{
	int got_a = 0, got_b = 0;
	uint64_t deadline = iwx_now_ms() + 40000;

	while (got_a < a_wcs || got_b < b_wcs) {
		cr_assert_lt(iwx_now_ms(), deadline, "completions: A %d/%d B %d/%d", got_a,
			     a_wcs, got_b, b_wcs);
		iwx_qp_progress(A.qp, NULL);
		iwx_qp_progress(B.qp, NULL);
		got_a += iwx_qp_poll(A.qp, wa + got_a, a_wcs - got_a);
		got_b += iwx_qp_poll(B.qp, wb + got_b, b_wcs - got_b);
		pump(1);
	}
}

static struct iwx_sge sge(struct end *e, uint64_t off, uint32_t len)
{
	return (struct iwx_sge){ .addr = (uintptr_t)e->buf + off, .len = len, .lkey = e->stag };
}

/* A Write, a Send behind it and a Read of len bytes each, every byte checked. */
static void write_send_read(uint32_t len)
{
	const uint64_t roff = 20u << 20;
	struct iwx_wc wa[3], wb[1];
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = len ? 1 : 0, .sge = { sge(&A, 0, len) },
				     .rkey = B.stag, .remote_addr = (uintptr_t)B.buf };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge(&A, 0, len < 65536 ? len : 65536) } };
	struct iwx_send_wr read = { .wr_id = 3, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge(&A, roff, len) },
				    .rkey = B.stag, .remote_addr = (uintptr_t)B.buf + roff };
	struct iwx_recv_wr recv = { .wr_id = 9, .num_sge = 1, .sge = { sge(&B, 16u << 20, 65536) } };

	memset(B.buf, 0, BUF_LEN);
	fill_pattern(A.buf, len, len);
	fill_pattern(B.buf + roff, len, len + 1);
	cr_assert_eq(iwx_qp_post_recv(B.qp, &recv), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &write), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &send), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &read), 0);
	run_until(3, 1, wa, wb);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(wa[i].status, IWX_WC_SUCCESS, "%u bytes: request %d", len, i);
		cr_assert_eq(wa[i].wr_id, (uint64_t)i + 1, "in posting order");
	}
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].byte_len, send.sge[0].len);
	cr_assert_arr_eq(B.buf, A.buf, len, "%u bytes written", len);
	cr_assert_arr_eq(B.buf + (16u << 20), A.buf, send.sge[0].len);
	cr_assert_arr_eq(A.buf + roff, B.buf + roff, len, "%u bytes read", len);
}

static const uint32_t sizes[] = { 0, 1, 1423, 1424, 1425, 1416, 65536, 1u << 20, 16u << 20 };

/* Every size, and how much tagged payload went from the packets into memory. */
static void every_size(uint64_t *placed_at_a, uint64_t *placed_at_b)
{
	struct iwx_qp_stats sa, sb;

	connect_pair();
	cr_assert_eq(A.conn.emss, 1444);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		write_send_read(sizes[i]);
	iwx_qp_stats(A.qp, &sa);
	iwx_qp_stats(B.qp, &sb);
	*placed_at_a = sa.fast_bytes;
	*placed_at_b = sb.fast_bytes;
}

Test(sctp_qp, every_operation_at_every_size)
{
	uint64_t all = 0, at_a, at_b, before = iwx_sctp_stats()->placed_bytes;

	every_size(&at_a, &at_b);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		all += sizes[i];
	/* every tagged byte from its packet: the Writes' at B, the Read Responses' at A */
	cr_assert_eq(at_b, all, "Write payload placed from packets: %lu of %lu", at_b, all);
	cr_assert_eq(at_a, all, "Read Response payload placed from packets: %lu of %lu", at_a, all);
	cr_assert_eq(iwx_sctp_stats()->placed_bytes - before, 2 * all);
}

static size_t largest;	/* the largest packet the tap saw */

static void tap_largest(void *arg, enum sctp_link_dir dir, const uint8_t *pkt, size_t len)
{
	(void)arg;
	(void)dir;
	(void)pkt;
	if (len > largest)
		largest = len;
}

/*
 * A path that carries less (SCTP in UDP over IPv6: 1440): its associations' chunks are
 * sized to it from the set-up on, and no packet is larger than it lets through.
 */
Test(sctp_qp, a_path_with_a_smaller_mtu_gets_smaller_chunks)
{
	link_.a.mtu = link_.b.mtu = IWX_SCTP_PATH_MTU - 20;
	sctp_link_set_tap(&link_, tap_largest, NULL);
	connect_pair();
	cr_assert_eq(A.conn.emss, 1424);
	cr_assert_eq(B.conn.emss, 1424);
	write_send_read(1u << 20);
	sctp_link_set_tap(&link_, NULL, NULL);
	/* 1472 bytes at IWX_SCTP_PATH_MTU (in UDP over IPv4, 1500): 20 fewer */
	cr_assert_eq(largest, 1452, "the largest SCTP packet: %zu bytes", largest);
}

/* A path that does not place from its packets: the lower layer places every chunk itself. */
Test(sctp_qp, every_operation_placed_by_the_lower_layer)
{
	uint64_t at_a, at_b;

	link_.a.place = link_.b.place = false;
	every_size(&at_a, &at_b);
	cr_assert_eq(at_a + at_b, 0);
}

/* Run both queue pairs and the link until both have stopped, bounded in time. */
static void run_until_stopped(void)
{
	uint64_t deadline = iwx_now_ms() + 10000;

	while (iwx_qp_get_state(A.qp) != IWX_QP_ERROR || iwx_qp_get_state(B.qp) != IWX_QP_ERROR) {
		cr_assert_lt(iwx_now_ms(), deadline, "states: A %d B %d",
			     iwx_qp_get_state(A.qp), iwx_qp_get_state(B.qp));
		iwx_qp_progress(A.qp, NULL);
		iwx_qp_progress(B.qp, NULL);
		pump(1);
	}
}

static void assert_error(struct end *e, struct iwx_term_cause want, bool local)
{
	struct iwx_term_cause c;
	bool l;

	cr_assert(iwx_qp_error(e->qp, &c, &l));
	cr_assert(iwx_cause_eq(c, want), "cause %u/%u/%u, want %u/%u/%u", c.layer, c.etype, c.ecode,
		  want.layer, want.etype, want.ecode);
	cr_assert_eq(l, local);
}

enum bad { UNKNOWN_STAG, WRONG_KEY, OUT_OF_BOUNDS, NO_REMOTE_WRITE, OTHER_PD, TO_WRAPS };

/*
 * One bad RDMA Write, then a Send: B terminates with want (RFC 5041 §7.2, the same
 * checks and causes as on TCP, draft-otis-sctp-ddp §3.2.1 R3), A learns it, and the
 * Send is never delivered.
 */
static void bad_write(enum bad how, struct iwx_term_cause want)
{
	struct iwx_recv_wr recv = { .wr_id = 7, .num_sge = 1, .sge = { sge(&B, 0, 16) } };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge(&A, 0, 16) } };
	struct iwx_send_wr wr = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1 };
	struct iwx_wc wc;

	connect_pair();
	recv.sge[0] = sge(&B, 0, 16);
	send.sge[0] = sge(&A, 0, 16);
	wr.sge[0] = sge(&A, 0, 100);
	wr.rkey = B.stag;
	wr.remote_addr = (uintptr_t)B.buf;
	switch (how) {
	case UNKNOWN_STAG:
		wr.rkey ^= 0x100;
		break;
	case WRONG_KEY:
		wr.rkey ^= 0x01;
		break;
	case OUT_OF_BOUNDS:
		wr.remote_addr += BUF_LEN - 50;
		break;
	case NO_REMOTE_WRITE:
		wr.rkey = iwx_mem_reg(B.mem, OWNER, B.pd, B.buf, 4096, (uintptr_t)B.buf,
				      IWX_ACCESS_REMOTE_READ);
		break;
	case OTHER_PD:
		wr.rkey = iwx_mem_reg(B.mem, OWNER, iwx_mem_pd_alloc(B.mem, OWNER), B.buf, 4096,
				      (uintptr_t)B.buf, IWX_ACCESS_REMOTE_WRITE);
		break;
	case TO_WRAPS:
		wr.remote_addr = UINT64_MAX - 10;
		break;
	}
	cr_assert_eq(iwx_qp_post_recv(B.qp, &recv), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &wr), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &send), 0);
	run_until_stopped();
	assert_error(&B, want, true);
	assert_error(&A, want, false);
	cr_assert_eq(iwx_qp_poll(B.qp, &wc, 1), 1);
	cr_assert_eq(wc.status, IWX_WC_WR_FLUSH_ERR, "the Send behind it is not delivered");
}

Test(sctp_qp, write_to_unknown_stag)
{
	bad_write(UNKNOWN_STAG, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

Test(sctp_qp, write_with_wrong_key)
{
	bad_write(WRONG_KEY, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG));
}

Test(sctp_qp, write_out_of_bounds)
{
	bad_write(OUT_OF_BOUNDS, IWX_CAUSE_DDP_T(IWX_DDP_T_BASE_BOUNDS));
}

Test(sctp_qp, write_without_remote_write_access)
{
	bad_write(NO_REMOTE_WRITE, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_ACCESS));
}

Test(sctp_qp, write_to_stag_of_another_pd)
{
	bad_write(OTHER_PD, IWX_CAUSE_DDP_T(IWX_DDP_T_STAG_NOT_ASSOC));
}

Test(sctp_qp, write_whose_tagged_offset_wraps)
{
	bad_write(TO_WRAPS, IWX_CAUSE_DDP_T(IWX_DDP_T_TO_WRAP));
}

Test(sctp_qp, send_with_no_posted_receive)
{
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .num_sge = 1 };

	connect_pair();
	send.sge[0] = sge(&A, 0, 10);
	cr_assert_eq(iwx_qp_post_send(A.qp, &send), 0);
	run_until_stopped();
	assert_error(&B, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), true);
	assert_error(&A, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), false);
}

Test(sctp_qp, read_with_bad_source_completes_in_error)
{
	struct iwx_send_wr read = { .wr_id = 1, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1 };
	struct iwx_wc wc;

	connect_pair();
	read.sge[0] = sge(&A, 0, 100);
	read.rkey = B.stag;
	read.remote_addr = (uintptr_t)B.buf + BUF_LEN - 10;
	cr_assert_eq(iwx_qp_post_send(A.qp, &read), 0);
	run_until_stopped();
	assert_error(&B, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS), true);
	assert_error(&A, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_BASE_BOUNDS), false);
	cr_assert_eq(iwx_qp_poll(A.qp, &wc, 1), 1);
	cr_assert_eq(wc.status, IWX_WC_REM_ACCESS_ERR);
}

/* A chunk of A's own making on the association under A's queue pair, unordered on sid. */
static void inject(const void *chunk, size_t len, uint16_t sid)
{
	struct sctp_sndinfo snd = { .snd_sid = sid, .snd_flags = SCTP_UNORDERED };

	cr_assert_geq(usrsctp_sendv(A.so, chunk, len, NULL, 0, &snd, sizeof(snd), SCTP_SENDV_SNDINFO,
				    0), 0, "sendv: %s", strerror(errno));
}

/* A chunk whose DDP header the shim refuses: B aborts with cause (R1, §2.2), A learns it. */
static void bad_chunk(uint8_t mode, uint16_t hdr_len, struct iwx_term_cause want)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .len = 8 };
	uint8_t chunk[IWX_SHIM_MAX_HDR_LEN + 8] = { 0 };
	struct iwx_shim_hdr h;

	connect_pair();
	m.stag = B.stag;
	m.to = (uintptr_t)B.buf;
	iwx_shim_hdr_encode(chunk, &m, 0, true);
	memcpy(&h, chunk, sizeof(h));
	h.mode = mode;
	h.hdr_len = htons(hdr_len);
	memcpy(chunk, &h, sizeof(h));
	memset(chunk + IWX_SHIM_TAGGED_HDR_LEN, 0xff, 8);
	inject(chunk, IWX_SHIM_TAGGED_HDR_LEN + 8, IWX_SHIM_STREAM_TAGGED);
	run_until_stopped();
	assert_error(&B, want, true);
	assert_error(&A, want, false);
	cr_assert_eq(B.buf[0] | B.buf[7], 0, "nothing placed");
}

Test(sctp_qp, stream_mode_was_not_announced)
{
	bad_chunk(IWX_SHIM_MODE_STREAM, IWX_SHIM_TAGGED_HDR_LEN, IWX_CAUSE_SHIM(IWX_SHIM_EC_MODE));
}

Test(sctp_qp, unknown_mode)
{
	bad_chunk(0, IWX_SHIM_TAGGED_HDR_LEN, IWX_CAUSE_SHIM(IWX_SHIM_EC_MODE));
}

Test(sctp_qp, header_length_that_is_not_the_modes)
{
	bad_chunk(IWX_SHIM_MODE_TAG, 24, IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED));
}

Test(sctp_qp, set_up_chunk_after_set_up)
{
	uint8_t chunk[IWX_SHIM_SETUP_HDR_LEN + 4] = { 0 };
	struct iwx_term_cause want = IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED);

	connect_pair();
	iwx_shim_setup_hdr(chunk);
	inject(chunk, sizeof(chunk), IWX_SHIM_STREAM_SETUP);
	run_until_stopped();
	assert_error(&B, want, true);
	assert_error(&A, want, false);
}

Test(sctp_qp, chunk_on_another_stream_than_its_opcodes)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE };
	uint8_t chunk[IWX_SHIM_TAGGED_HDR_LEN];
	struct iwx_term_cause want = IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED);

	connect_pair();
	m.stag = B.stag;
	iwx_shim_hdr_encode(chunk, &m, 0, true);
	inject(chunk, sizeof(chunk), IWX_SHIM_STREAM_UNTAGGED);
	run_until_stopped();
	assert_error(&B, want, true);
	assert_error(&A, want, false);
}

/* ------------------------------------------------------------ R5 and loss */

static struct {
	enum sctp_link_verdict	verdict;	/* for the packets of the Write's first chunk */
	uint64_t		to;		/* ... found by its tagged offset */
	unsigned		caught;		/* packets given the verdict (a retransmission too) */
	bool			send_passed;	/* a chunk of the Send behind it went through */
} r5;

static enum sctp_link_verdict catch_write_start(void *arg, enum sctp_link_dir dir,
						const uint8_t *pkt, size_t len)
{
	struct sctp_chunk c;
	size_t off = 0;
	bool send = false;

	(void)arg;
	if (dir != SCTP_LINK_TO_B || r5.verdict == SCTP_LINK_PASS)
		return SCTP_LINK_PASS;
	while (sctp_pkt_next_chunk(pkt, len, &off, &c) == 1) {
		struct iwx_shim_hdr h;

		if (c.type != SCTP_CHUNK_DATA || c.user_len < sizeof(h))
			continue;
		memcpy(&h, c.user, sizeof(h));
		if (h.mode == IWX_SHIM_MODE_TAG && be64toh(h.offset) == r5.to) {
			r5.caught++;
			return r5.verdict;
		}
		send |= c.sid == IWX_SHIM_STREAM_UNTAGGED;
	}
	r5.send_passed |= send;
	return SCTP_LINK_PASS;
}

/* A Write of 100000 bytes, then a Send; the Write's first chunk caught as r5.verdict says. */
static void write_then_send_with_first_chunk(enum sctp_link_verdict verdict)
{
	struct iwx_recv_wr recv = { .wr_id = 7, .num_sge = 1 };
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1 };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1 };

	connect_pair();
	recv.sge[0] = sge(&B, 1u << 20, 16);
	write.sge[0] = sge(&A, 0, 100000);
	write.rkey = B.stag;
	write.remote_addr = (uintptr_t)B.buf;
	send.sge[0] = sge(&A, 0, 16);
	fill_pattern(A.buf, 100000, 11);
	r5.verdict = verdict;
	r5.to = (uintptr_t)B.buf;
	sctp_link_set_filter(&link_, SCTP_LINK_TO_B, catch_write_start, NULL);
	cr_assert_eq(iwx_qp_post_recv(B.qp, &recv), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &write), 0);
	cr_assert_eq(iwx_qp_post_send(A.qp, &send), 0);
}

Test(sctp_qp, a_send_completes_only_once_the_write_before_it_is_placed)
{
	struct iwx_wc wa[2], wb[1];
	uint64_t deadline;

	write_then_send_with_first_chunk(SCTP_LINK_HOLD);
	deadline = iwx_now_ms() + 5000;
	while (!r5.send_passed) {
		cr_assert_lt(iwx_now_ms(), deadline, "the Send's chunk never came");
		iwx_qp_progress(A.qp, NULL);
		iwx_qp_progress(B.qp, NULL);
		pump(1);
	}
	for (int i = 0; i < 100; i++) {
		iwx_qp_progress(B.qp, NULL);
		pump(0);
		/* draft-otis-sctp-ddp §3.2.1 R5: the Send's signal waits for the cumulative TSN */
		cr_assert_eq(iwx_qp_poll(B.qp, wb, 1), 0, "the Send completed before the Write was placed");
	}
	cr_assert_gt(r5.caught, 0);
	/* the chunks after the missing one were placed as they came (RFC 5040 §5.5 rule 3) */
	cr_assert_arr_eq(B.buf + 50000, A.buf + 50000, 50000);
	cr_assert_eq(B.buf[0] | B.buf[1], 0, "the held chunk is not placed");

	r5.verdict = SCTP_LINK_PASS;	/* let it go */
	run_until(2, 1, wa, wb);
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B.buf, A.buf, 100000);
}

Test(sctp_qp, a_lost_chunk_is_sent_again_and_everything_arrives_in_order)
{
	struct iwx_wc wa[2], wb[1];

	write_then_send_with_first_chunk(SCTP_LINK_DROP);
	/* drop it once: SCTP sends it again, and that one passes */
	for (uint64_t deadline = iwx_now_ms() + 5000; !r5.caught;) {
		cr_assert_lt(iwx_now_ms(), deadline);
		iwx_qp_progress(A.qp, NULL);
		iwx_qp_progress(B.qp, NULL);
		pump(1);
	}
	r5.verdict = SCTP_LINK_PASS;
	run_until(2, 1, wa, wb);
	cr_assert_geq(link_.to[SCTP_LINK_TO_B].dropped_filter, 1, "a chunk was lost");
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B.buf, A.buf, 100000);
}

/* ------------------------------------------------------- forged duplicates */

static struct {
	uint8_t		pkt[2048];	/* the first packet to B with a tagged chunk, as sent */
	size_t		len;
	size_t		payload, payload_len;	/* where its chunk's DDP payload lies in it */
} forged;

static void tap_tagged(void *arg, enum sctp_link_dir dir, const uint8_t *pkt, size_t len)
{
	struct sctp_chunk c;
	size_t off = 0;

	(void)arg;
	if (dir != SCTP_LINK_TO_B || forged.len || len > sizeof(forged.pkt))
		return;
	while (sctp_pkt_next_chunk(pkt, len, &off, &c) == 1)
		if (c.type == SCTP_CHUNK_DATA && c.sid == IWX_SHIM_STREAM_TAGGED &&
		    c.user_len > IWX_SHIM_TAGGED_HDR_LEN) {
			memcpy(forged.pkt, pkt, len);
			forged.len = len;
			forged.payload = c.user - pkt + IWX_SHIM_TAGGED_HDR_LEN;
			forged.payload_len = c.user_len - IWX_SHIM_TAGGED_HDR_LEN;
			return;
		}
}

/*
 * An on-path sender with the association's Verification Tag sends a TSN again that B's
 * usrsctp holds and B's queue pair has not read yet, with other bytes. usrsctp drops it
 * as a duplicate (RFC 4960 §6.2), so none of its bytes may reach memory.
 */
Test(sctp_qp, a_forged_chunk_for_a_tsn_usrsctp_holds_places_nothing)
{
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1 };
	struct iwx_sctp_common *h = (struct iwx_sctp_common *)forged.pkt;
	uint64_t placed = iwx_sctp_stats()->placed_chunks;
	struct iwx_wc wa[1], wb[1];

	connect_pair();
	write.sge[0] = sge(&A, 0, 1000);
	write.rkey = B.stag;
	write.remote_addr = (uintptr_t)B.buf;
	fill_pattern(A.buf, 1000, 5);
	sctp_link_set_tap(&link_, tap_tagged, NULL);
	iwx_qp_progress(B.qp, NULL);	/* B reads all there is: from now on it places from packets */
	cr_assert_eq(iwx_qp_post_send(A.qp, &write), 0);
	/* the chunk reaches B's usrsctp; B's queue pair does not run again, so it is not read */
	for (uint64_t deadline = iwx_now_ms() + 5000; !forged.len || sctp_link_pending(&link_);) {
		cr_assert_lt(iwx_now_ms(), deadline, "the Write's chunk never went");
		iwx_qp_progress(A.qp, NULL);
		pump(1);
	}
	cr_assert_eq(forged.payload_len, 1000);
	cr_assert_eq(iwx_sctp_stats()->placed_chunks - placed, 1, "placed from its packet");
	cr_assert_arr_eq(B.buf, A.buf, 1000);

	memset(forged.pkt + forged.payload, 0xee, forged.payload_len);
	memset(&h->crc32c, 0, sizeof(h->crc32c));
	iwx_crc32c_put((uint8_t *)&h->crc32c, iwx_crc32c(forged.pkt, forged.len));
	iwx_sctp_input(&link_.a, forged.pkt, forged.len);	/* to B, as from A */
	cr_assert_arr_eq(B.buf, A.buf, 1000, "the forger's bytes overwrote the chunk usrsctp holds");

	run_until(1, 0, wa, wb);
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B.buf, A.buf, 1000);
}

/* ------------------------------------------------------------------ wire */

static pcap_dumper_t *dumper;

/* Every packet, in an IPv4 header of its own (192.0.2.1 is A), for tshark. */
static void tap_to_pcap(void *arg, enum sctp_link_dir dir, const uint8_t *pkt, size_t len)
{
	static uint8_t frame[20 + 65536];
	struct pcap_pkthdr ph = { .caplen = len + 20, .len = len + 20 };
	uint32_t sum;

	(void)arg;
	if (len > 65536)
		return;
	memset(frame, 0, 20);
	frame[0] = 0x45;
	frame[2] = (len + 20) >> 8;
	frame[3] = (len + 20) & 0xff;
	frame[8] = 64;
	frame[9] = 132;		/* SCTP */
	memcpy(frame + 12, (uint8_t[]){ 192, 0, 2, dir == SCTP_LINK_TO_B ? 1 : 2 }, 4);
	memcpy(frame + 16, (uint8_t[]){ 192, 0, 2, dir == SCTP_LINK_TO_B ? 2 : 1 }, 4);
	sum = iwx_csum_fold(iwx_csum_add(0, frame, 20));
	frame[10] = sum >> 8;
	frame[11] = sum & 0xff;
	memcpy(frame + 20, pkt, len);
	gettimeofday(&ph.ts, NULL);
	pcap_dump((u_char *)dumper, &ph, frame);
}

Test(sctp_qp, the_shim_on_the_wire_in_tshark)
{
	char pcap[] = "/tmp/iwx-sctp-XXXXXX", file[64], out[1 << 16];
	pcap_t *dead = pcap_open_dead(DLT_RAW, 65536);
	int fd = mkstemp(pcap);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(file, sizeof(file), "%s", pcap);
	dumper = pcap_dump_open(dead, file);
	cr_assert_not_null(dumper);
	sctp_link_set_tap(&link_, tap_to_pcap, NULL);
	connect_pair();
	write_send_read(200000);
	sctp_link_set_tap(&link_, NULL, NULL);
	pcap_dump_close(dumper);
	pcap_close(dead);

	/* draft-otis-sctp-ddp §2.1, §3.1: INIT and INIT-ACK announce DDP_TAG_PLACE */
	cr_assert_eq(tshark_fields(file, "sctp.parameter_type == 0xc006", "-e sctp.chunk_type "
				  "-e sctp.adaptation_layer_indication", out, sizeof(out)), 2, "%s", out);
	cr_assert_str_eq(out, "1\t0x00000003\n2\t0x00000003\n");
	/* §2.2: every DATA chunk unordered and whole: U, B and E set */
	int data = tshark_fields(file, "sctp.chunk_type == 0", "-e sctp.data_u_bit -e sctp.data_b_bit "
				"-e sctp.data_e_bit", out, sizeof(out));
	/* 200000 bytes written and read back, 65536 sent: 141 + 141 + 47 chunks and more */
	cr_assert_geq(data, 329, "packets with DATA chunks: %d", data);
	cr_assert_null(strchr(out, '0'), "a DATA chunk without U, B or E:\n%.400s", out);
	/* and SCTP's checksum good on every packet */
	cr_assert_gt(tshark_fields(file, "sctp.checksum.status == 1", "-e frame.number", out,
				   sizeof(out)), 0, "tshark checked the checksums");
	cr_assert_eq(tshark_fields(file, "sctp.checksum.status != 1", "-e frame.number", out,
				  sizeof(out)), 0, "bad checksums in frames %s", out);
	unlink(file);
}

/* ------------------------------------------------- over UDP between namespaces */

struct udp_open_args {
	struct sockaddr_in	addr;
	struct iwx_sctp_udp	*u;
};

static int do_udp_open(void *arg)
{
	struct udp_open_args *a = arg;

	a->u = iwx_sctp_udp_open((struct sockaddr *)&a->addr, sizeof(a->addr), 16);
	return a->u ? 0 : -errno;
}

static void udp_init(void)
{
	struct udp_open_args oa = { .addr = { .sin_family = AF_INET } };
	struct udp_open_args ob = { .addr = { .sin_family = AF_INET, .sin_port = htons(IWX_SCTP_PORT) } };

	if (geteuid() != 0)
		cr_skip_test("needs root for network namespaces");
	cr_assert_eq(netns_pair_setup(&ns), 0, "network namespaces");
	cr_assert_eq(iwx_sctp_init(), 0);
	inet_pton(AF_INET, NETNS_A4, &oa.addr.sin_addr);
	inet_pton(AF_INET, NETNS_B4, &ob.addr.sin_addr);
	cr_assert_eq(netns_call(ns.a, do_udp_open, &oa), 0);
	cr_assert_eq(netns_call(ns.b, do_udp_open, &ob), 0);
	udp[0] = oa.u;
	udp[1] = ob.u;
	to_b = iwx_sctp_udp_path(udp[0], (struct sockaddr *)&ob.addr, sizeof(ob.addr));
	cr_assert_not_null(to_b);
	pump = udp_pump;
}

TestSuite(sctp_udp, .init = udp_init, .fini = fini, .timeout = 60);

/* RFC 6951's encapsulation on a real wire: the same operations, every byte checked. */
Test(sctp_udp, every_operation_over_udp)
{
	connect_pair();
	write_send_read(0);
	write_send_read(1);
	write_send_read(4u << 20);
}

/*
 * A path may go while an association still names it (iwx_sctp_udp_expire): usrsctp's
 * packets to its token are then dropped and counted, never sent through freed memory.
 */
Test(sctp_udp, a_path_gone_under_a_live_association_drops_its_packets)
{
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .num_sge = 1 };
	uint64_t before = iwx_sctp_stats()->no_path;

	connect_pair();
	write_send_read(1);
	iwx_sctp_udp_put(to_b);	/* its set-up is over, as iwxd's cm.c says when */
	iwx_sctp_udp_expire(udp[0], iwx_now_ms(), 0);
	cr_assert_eq(iwx_sctp_udp_paths(udp[0]), 0);
	write.sge[0] = sge(&A, 0, 100);
	write.rkey = B.stag;
	write.remote_addr = (uintptr_t)B.buf;
	cr_assert_eq(iwx_qp_post_send(A.qp, &write), 0);
	for (int i = 0; i < 50 && iwx_sctp_stats()->no_path == before; i++) {
		iwx_qp_progress(A.qp, NULL);
		pump(10);
	}
	cr_assert_gt(iwx_sctp_stats()->no_path, before, "A's packets to B after its path went");
}
