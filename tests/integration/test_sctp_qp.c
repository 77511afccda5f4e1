// SPDX-License-Identifier: MIT
/*
 * Queue pairs on the SCTP lower layer (llp_sctp.c), end to end in one process: two
 * associations of the one usrsctp stack joined by an in-memory link (sctp_link.h),
 * set up by conn_sctp.c (qp_sctp.h), running the queue pair tests of every transport
 * (qp_tests.h) and SCTP's own: placement from packets, the path's MTU, the shim's
 * checks, R5's ordering, lost and forged chunks, and the shim's wire in tshark; then the
 * same over UDP between namespaces (sctp_udp).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <endian.h>
#include <errno.h>
#include <pcap/pcap.h>
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
#include "qp_sctp.h"
#include "qp_tests.h"
#include "sctp.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

#define PORT	7175

static struct qp_sctp sctp;	/* static: its link outlives the stack */
static struct qp_end *const A = &sctp.pair.a, *const B = &sctp.pair.b;	/* A initiates */

static void fini(void)
{
	qp_pair_fini(&sctp.pair);
}

static void init(void)
{
	qp_sctp_link_init(&sctp, PORT);
}

TestSuite(sctp_qp, .init = init, .fini = fini, .timeout = HANG_S);

QP_TESTS(sctp_qp, &sctp.pair)

/* Every size (qp_tests.h), and how much tagged payload went from the packets into memory. */
static uint64_t every_size(uint64_t *placed_at_a, uint64_t *placed_at_b)
{
	struct iwx_qp_stats sa, sb;

	qp_test_every_operation_at_every_size(&sctp.pair);
	cr_assert_eq(A->conn->emss, 1444);
	engine_qp_stats(A->qp, &sa);
	engine_qp_stats(B->qp, &sb);
	*placed_at_a = sa.fast_bytes;
	*placed_at_b = sb.fast_bytes;
	return qp_every_size_bytes();
}

Test(sctp_qp, every_tagged_byte_is_placed_from_its_packet)
{
	uint64_t all, at_a, at_b, before = iwx_sctp_stats()->placed_bytes;

	all = every_size(&at_a, &at_b);
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
	sctp.link.a.mtu = sctp.link.b.mtu = IWX_SCTP_PATH_MTU - 20;
	sctp_link_set_tap(&sctp.link, tap_largest, NULL);
	qp_pair_connect(&sctp.pair);
	cr_assert_eq(A->conn->emss, 1424);
	cr_assert_eq(B->conn->emss, 1424);
	qp_write_send_read(&sctp.pair, 1u << 20);
	sctp_link_set_tap(&sctp.link, NULL, NULL);
	/* 1472 bytes at IWX_SCTP_PATH_MTU (in UDP over IPv4, 1500): 20 fewer */
	cr_assert_eq(largest, 1452, "the largest SCTP packet: %zu bytes", largest);
}

/* A path that does not place from its packets: the lower layer places every chunk itself. */
Test(sctp_qp, every_operation_placed_by_the_lower_layer)
{
	uint64_t at_a, at_b;

	sctp.link.a.place = sctp.link.b.place = false;
	every_size(&at_a, &at_b);
	cr_assert_eq(at_a + at_b, 0);
}

/* A chunk of A's own making on the association under A's queue pair, unordered on sid. */
static void inject(const void *chunk, size_t len, uint16_t sid)
{
	struct sctp_sndinfo snd = { .snd_sid = sid, .snd_flags = SCTP_UNORDERED };

	cr_assert_geq(usrsctp_sendv(sctp.a_so, chunk, len, NULL, 0, &snd, sizeof(snd),
				    SCTP_SENDV_SNDINFO, 0), 0, "sendv: %s", strerror(errno));
}

/* A chunk whose DDP header the shim refuses: B aborts with cause (R1, §2.2), A learns it. */
static void bad_chunk(uint8_t mode, uint16_t hdr_len, struct iwx_term_cause want)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .len = 8 };
	uint8_t chunk[IWX_SHIM_MAX_HDR_LEN + 8] = { 0 };
	struct iwx_shim_hdr h;

	qp_pair_connect(&sctp.pair);
	m.stag = B->stag;
	m.to = (uintptr_t)B->buf;
	iwx_shim_hdr_encode(chunk, &m, 0, true);
	memcpy(&h, chunk, sizeof(h));
	h.mode = mode;
	h.hdr_len = htons(hdr_len);
	memcpy(chunk, &h, sizeof(h));
	memset(chunk + IWX_SHIM_TAGGED_HDR_LEN, 0xff, 8);
	inject(chunk, IWX_SHIM_TAGGED_HDR_LEN + 8, IWX_SHIM_STREAM_TAGGED);
	qp_pair_run_until_stopped(&sctp.pair);
	qp_assert_error(B, want, true);
	qp_assert_error(A, want, false);
	cr_assert_eq(B->buf[0] | B->buf[7], 0, "nothing placed");
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

	qp_pair_connect(&sctp.pair);
	iwx_shim_setup_hdr(chunk);
	inject(chunk, sizeof(chunk), IWX_SHIM_STREAM_SETUP);
	qp_pair_run_until_stopped(&sctp.pair);
	qp_assert_error(B, want, true);
	qp_assert_error(A, want, false);
}

Test(sctp_qp, chunk_on_another_stream_than_its_opcodes)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE };
	uint8_t chunk[IWX_SHIM_TAGGED_HDR_LEN];
	struct iwx_term_cause want = IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED);

	qp_pair_connect(&sctp.pair);
	m.stag = B->stag;
	iwx_shim_hdr_encode(chunk, &m, 0, true);
	inject(chunk, sizeof(chunk), IWX_SHIM_STREAM_UNTAGGED);
	qp_pair_run_until_stopped(&sctp.pair);
	qp_assert_error(B, want, true);
	qp_assert_error(A, want, false);
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

	qp_pair_connect(&sctp.pair);
	recv.sge[0] = qp_sge(B, 1u << 20, 16);
	write.sge[0] = qp_sge(A, 0, 100000);
	write.rkey = B->stag;
	write.remote_addr = (uintptr_t)B->buf;
	send.sge[0] = qp_sge(A, 0, 16);
	fill_pattern(A->buf, 100000, 11);
	r5.verdict = verdict;
	r5.to = (uintptr_t)B->buf;
	sctp_link_set_filter(&sctp.link, SCTP_LINK_TO_B, catch_write_start, NULL);
	cr_assert_eq(engine_qp_post_recv(B->qp, &recv), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &write), 0);
	cr_assert_eq(engine_qp_post_send(A->qp, &send), 0);
}

Test(sctp_qp, a_send_completes_only_once_the_write_before_it_is_placed)
{
	struct iwx_wc wa[2], wb[1];
	uint64_t deadline;

	write_then_send_with_first_chunk(SCTP_LINK_HOLD);
	deadline = iwx_now_ms() + STALL_MS;
	while (!r5.send_passed) {
		cr_assert_lt(iwx_now_ms(), deadline, "the Send's chunk never came");
		qp_pair_step(&sctp.pair);
	}
	for (int i = 0; i < 100; i++) {
		engine_qp_progress(B->qp, NULL);
		qp_pair_wait(&sctp.pair, 0);
		/* draft-otis-sctp-ddp §3.2.1 R5: the Send's signal waits for the cumulative TSN */
		cr_assert_eq(engine_qp_poll(B->qp, wb, 1), 0, "the Send completed before the Write was placed");
	}
	cr_assert_gt(r5.caught, 0);
	/* the chunks after the missing one were placed as they came (RFC 5040 §5.5 rule 3) */
	cr_assert_arr_eq(B->buf + 50000, A->buf + 50000, 50000);
	cr_assert_eq(B->buf[0] | B->buf[1], 0, "the held chunk is not placed");

	r5.verdict = SCTP_LINK_PASS;	/* let it go */
	qp_pair_run_until(&sctp.pair, 2, 1, wa, wb);
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B->buf, A->buf, 100000);
}

Test(sctp_qp, a_lost_chunk_is_sent_again_and_everything_arrives_in_order)
{
	struct iwx_wc wa[2], wb[1];

	write_then_send_with_first_chunk(SCTP_LINK_DROP);
	/* drop it once: SCTP sends it again, and that one passes */
	for (uint64_t deadline = iwx_now_ms() + STALL_MS; !r5.caught;) {
		cr_assert_lt(iwx_now_ms(), deadline);
		qp_pair_step(&sctp.pair);
	}
	r5.verdict = SCTP_LINK_PASS;
	qp_pair_run_until(&sctp.pair, 2, 1, wa, wb);
	cr_assert_geq(sctp.link.to[SCTP_LINK_TO_B].dropped_filter, 1, "a chunk was lost");
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_eq(wb[0].status, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B->buf, A->buf, 100000);
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

	qp_pair_connect(&sctp.pair);
	write.sge[0] = qp_sge(A, 0, 1000);
	write.rkey = B->stag;
	write.remote_addr = (uintptr_t)B->buf;
	fill_pattern(A->buf, 1000, 5);
	sctp_link_set_tap(&sctp.link, tap_tagged, NULL);
	engine_qp_progress(B->qp, NULL);	/* B reads all there is: from now on it places from packets */
	cr_assert_eq(engine_qp_post_send(A->qp, &write), 0);
	/* the chunk reaches B's usrsctp; B's queue pair does not run again, so it is not read */
	for (uint64_t deadline = iwx_now_ms() + STALL_MS; !forged.len || sctp_link_pending(&sctp.link);) {
		cr_assert_lt(iwx_now_ms(), deadline, "the Write's chunk never went");
		engine_qp_progress(A->qp, NULL);
		qp_pair_wait(&sctp.pair, 1);
	}
	cr_assert_eq(forged.payload_len, 1000);
	cr_assert_eq(iwx_sctp_stats()->placed_chunks - placed, 1, "placed from its packet");
	cr_assert_arr_eq(B->buf, A->buf, 1000);

	memset(forged.pkt + forged.payload, 0xee, forged.payload_len);
	memset(&h->crc32c, 0, sizeof(h->crc32c));
	iwx_crc32c_put((uint8_t *)&h->crc32c, iwx_crc32c(forged.pkt, forged.len));
	iwx_sctp_input(&sctp.link.a, forged.pkt, forged.len);	/* to B, as from A */
	cr_assert_arr_eq(B->buf, A->buf, 1000, "the forger's bytes overwrote the chunk usrsctp holds");

	qp_pair_run_until(&sctp.pair, 1, 0, wa, wb);
	cr_assert_eq(wa[0].status, IWX_WC_SUCCESS);
	cr_assert_arr_eq(B->buf, A->buf, 1000);
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
	sctp_link_set_tap(&sctp.link, tap_to_pcap, NULL);
	qp_pair_connect(&sctp.pair);
	qp_write_send_read(&sctp.pair, 200000);
	sctp_link_set_tap(&sctp.link, NULL, NULL);
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

static void udp_init(void)
{
	qp_sctp_udp_init(&sctp, PORT);
}

TestSuite(sctp_udp, .init = udp_init, .fini = fini, .timeout = HANG_S);

/* RFC 6951's encapsulation on a real wire: the same operations, the same errors. */
QP_TESTS(sctp_udp, &sctp.pair)

/*
 * A path may go while an association still names it (iwx_sctp_udp_expire): usrsctp's
 * packets to its token are then dropped and counted, never sent through freed memory.
 */
Test(sctp_udp, a_path_gone_under_a_live_association_drops_its_packets)
{
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .num_sge = 1 };
	uint64_t before = iwx_sctp_stats()->no_path;

	qp_pair_connect(&sctp.pair);
	qp_write_send_read(&sctp.pair, 1);
	iwx_sctp_udp_put(sctp.to_b);	/* its set-up is over, as iwxd's cm.c says when */
	iwx_sctp_udp_expire(sctp.udp[0], iwx_now_ms(), 0);
	cr_assert_eq(iwx_sctp_udp_paths(sctp.udp[0]), 0);
	write.sge[0] = qp_sge(A, 0, 100);
	write.rkey = B->stag;
	write.remote_addr = (uintptr_t)B->buf;
	cr_assert_eq(engine_qp_post_send(A->qp, &write), 0);
	for (int i = 0; i < 50 && iwx_sctp_stats()->no_path == before; i++) {
		engine_qp_progress(A->qp, NULL);
		qp_pair_wait(&sctp.pair, 10);
	}
	cr_assert_gt(iwx_sctp_stats()->no_path, before, "A's packets to B after its path went");
}
