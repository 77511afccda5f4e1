// SPDX-License-Identifier: MIT
/*
 * DDP over SCTP through libiwx and two real daemons (docs/ddp-over-sctp.md): the
 * application picks the transport at connect and listen time and is otherwise the
 * same; iwxd carries SCTP in UDP between the namespaces (RFC 6951, --sctp-port), through
 * its UDP socket, or through AF_XDP sockets where the fast path is attached with
 * IWX_FP_ATTACH_SCTP (iwx attach --sctp).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include <iwx/iwx.h>
#include "proto/wire.h"

#include "capture.h"
#include "faults.h"
#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "stall.h"
#include "testutil.h"

#define DAEMON_ARGS	"--settle-ms 0"
#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)
#define BIG		(64u << 20)

static struct iwxd_pair pair;
static struct endpoint a, b;
static const struct iwx_conn_param over_sctp = { .transport = IWX_TRANSPORT_SCTP };

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, DAEMON_ARGS, &a, &b, 0), 0);
	cr_assert_eq(endpoint_connect(&a, &b, false, &over_sctp), 0, "connect over SCTP");
}

static void down(void)
{
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_sctp, .init = up, .fini = down, .timeout = HANG_S);

/* Is the fast path attached on both sides from the start (make test-fastpath)? */
static bool fastpath_env(void)
{
	const char *m = getenv("IWX_TEST_FASTPATH");

	return m && *m;
}

/*
 * Daemon i's fast path at TC with SCTP's AF_XDP sockets beside it (on: iwx attach --sctp),
 * or none.
 */
static void fast_path_tc(int i, bool on)
{
	static char out[4096];

	if (fastpath_env())
		cr_assert_eq(run_iwx(out, sizeof(out), "detach dev %s -s %s", pair.ns.dev[i],
				     pair.sock[i]), 0, "%s", out);
	if (on)
		cr_assert_eq(iwxd_pair_attach(&pair, i, IWX_FP_MODE_TC, IWX_FP_ATTACH_SCTP), 0);
}

/* A counter of daemon i's `iwx status -j`: the first "key": N. */
static uint64_t status_u64(int i, const char *key)
{
	static char out[16384];
	char pat[64];
	const char *at;

	cr_assert_eq(run_iwx(out, sizeof(out), "status -j -s %s", pair.sock[i]), 0, "%s", out);
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	at = strstr(out, pat);
	cr_assert_not_null(at, "no %s in %s", key, out);
	return strtoull(at + strlen(pat), NULL, 10);
}

/* `iwx conns` of daemon i names llp for its connections. */
static void assert_llp(int i, const char *llp)
{
	static char out[8192];
	char want[32];

	cr_assert_eq(run_iwx(out, sizeof(out), "conns -j -s %s", pair.sock[i]), 0, "%s", out);
	snprintf(want, sizeof(want), "\"llp\": \"%s\"", llp);
	cr_assert(strstr(out, want), "daemon %d, not %s: %s", i, llp, out);
}

static void expect_wc(struct endpoint *e, uint64_t wr_id, uint8_t status, uint32_t len)
{
	struct iwx_wc wc;
	int err = endpoint_wc(e, &wc);

	cr_assert_eq(err, 0, "a completion for wr %lu: %s", wr_id, iwx_strerror(err));
	cr_assert_eq(wc.wr_id, wr_id, "completion of wr %lu, want %lu", wc.wr_id, wr_id);
	cr_assert_eq(wc.status, status, "wr %lu: '%s'", wr_id, iwx_wc_status_name(wc.status));
	if (wc.opcode == IWX_WC_RECV)
		cr_assert_eq(wc.byte_len, len);
}

/* A Write, a Send behind it and a Read of len bytes, every byte checked, through iwxd. */
static void write_send_read(struct buf *src, struct buf *dst, uint32_t len)
{
	uint32_t slen = len < 65536 ? len : 65536;
	struct iwx_recv_wr recv = { .wr_id = 9, .num_sge = 1, .sge = { sge_of(dst, BIG, slen) } };
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1, .sge = { sge_of(src, 0, len) },
				     .remote_addr = (uintptr_t)dst->p, .rkey = dst->mr->rkey };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(src, 0, slen) } };
	struct iwx_send_wr read = { .wr_id = 3, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(src, BIG, len) },
				    .remote_addr = (uintptr_t)dst->p, .rkey = dst->mr->rkey };

	fill_pattern(src->p, len, len);
	memset(dst->p, 0, len);
	cr_assert_eq(iwx_post_recv(b.qp, &recv), 0);
	cr_assert_eq(iwx_post_send(a.qp, &write), 0);
	cr_assert_eq(iwx_post_send(a.qp, &send), 0);
	cr_assert_eq(iwx_post_send(a.qp, &read), 0);
	expect_wc(&a, 1, IWX_WC_SUCCESS, 0);
	expect_wc(&a, 2, IWX_WC_SUCCESS, 0);
	expect_wc(&b, 9, IWX_WC_SUCCESS, slen);
	expect_wc(&a, 3, IWX_WC_SUCCESS, 0);
	cr_assert_arr_eq(dst->p, src->p, len, "%u bytes written", len);
	cr_assert_arr_eq(dst->p + BIG, src->p, slen, "%u bytes sent", slen);
	cr_assert_arr_eq(src->p + BIG, dst->p, len, "%u bytes read back", len);
}

Test(daemon_sctp, every_operation_from_0_to_64_mib)
{
	static const uint32_t sizes[] = { 0, 1, 1424, 1425, 65536, 1u << 20, BIG };
	struct buf src = buf_new(&a, NULL, 2 * (size_t)BIG, ALL_ACCESS, true);
	struct buf dst = buf_new(&b, NULL, BIG + 65536, ALL_ACCESS, true);

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		write_send_read(&src, &dst, sizes[i]);
	free(src.p);
	free(dst.p);
}

/*
 * A bad RDMA Write on a connection of its own over SCTP: b sends the Terminate with the
 * cause TCP's gets (RFC 5041 §7.2, RFC 5040 §7.2), and a receives it.
 */
static void bad_write(uint32_t rkey_xor, size_t off, int access, bool other_pd, uint8_t layer,
		      uint8_t ecode)
{
	struct endpoint c = { 0 }, d = { 0 };
	struct iwx_event ev;

	cr_assert_eq(endpoint_open(&c, &pair, 0, 0), 0);
	cr_assert_eq(endpoint_open(&d, &pair, 1, 0), 0);
	cr_assert_eq(endpoint_connect(&c, &d, false, &over_sctp), 0);
	struct buf src = buf_new(&c, NULL, 4096, ALL_ACCESS, false);
	struct buf dst = buf_new(&d, other_pd ? iwx_alloc_pd(d.dev) : NULL, 4096, access, false);
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1, .sge = { sge_of(&src, 0, 100) },
				     .remote_addr = (uintptr_t)dst.p + off,
				     .rkey = dst.mr->rkey ^ rkey_xor };

	cr_assert_eq(iwx_post_send(c.qp, &write), 0);
	cr_assert_eq(endpoint_event(&d, &ev, 5000), 0);
	cr_assert_eq(ev.type, IWX_EVENT_DISCONNECTED);
	cr_assert(ev.term.terminated && ev.term.local, "d sent the Terminate");
	cr_assert_eq(ev.term.layer, layer, "%s", ev.term.reason);
	cr_assert_eq(ev.term.ecode, ecode, "%s", ev.term.reason);
	cr_assert_eq(endpoint_event(&c, &ev, 5000), 0);
	cr_assert_eq(ev.type, IWX_EVENT_DISCONNECTED);
	cr_assert(ev.term.terminated && !ev.term.local, "c received it");
	cr_assert_eq(ev.term.ecode, ecode, "%s", ev.term.reason);
	endpoint_close(&c);
	endpoint_close(&d);
}

Test(daemon_sctp, bad_writes_get_the_terminates_they_get_over_tcp)
{
	bad_write(0x100, 0, ALL_ACCESS, false, IWX_LAYER_DDP, IWX_DDP_T_INVALID_STAG);
	bad_write(0x01, 0, ALL_ACCESS, false, IWX_LAYER_DDP, IWX_DDP_T_INVALID_STAG);
	bad_write(0, 4096 - 50, ALL_ACCESS, false, IWX_LAYER_DDP, IWX_DDP_T_BASE_BOUNDS);
	bad_write(0, 0, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_READ, false, IWX_LAYER_RDMAP,
		  IWX_RDMAP_EC_ACCESS);
	bad_write(0, 0, ALL_ACCESS, true, IWX_LAYER_DDP, IWX_DDP_T_STAG_NOT_ASSOC);
}

/*
 * `iwx conns` says what carries each connection, and the peer on both sides: the UDP
 * socket, also beside a fast path attached without --sctp (make test-fastpath).
 */
Test(daemon_sctp, iwx_conns_shows_sctp)
{
	static char out[8192];

	for (int i = 0; i < 2; i++) {
		cr_assert_eq(run_iwx(out, sizeof(out), "conns -s %s", pair.sock[i]), 0, "%s", out);
		cr_assert(strstr(out, " LLP ") && strstr(out, " sctp/udp "), "%s", out);
		/* the peer as the application names it: its address, the SCTP port */
		cr_assert(strstr(out, i ? NETNS_A4 ":" : NETNS_B4 ":"), "%s", out);
		assert_llp(i, "sctp/udp");
	}
}

/*
 * With the fast path attached on both sides: SCTP's datagrams go through AF_XDP sockets,
 * and tagged payload is placed from their frames (the Write's at b, the Read Response's
 * at a), every byte checked.
 */
/*
 * A Write of len bytes and a Read of it back on a new connection (over IPv6 with v6),
 * every byte checked (the Read's answer follows the Write: RFC 5040 §5.5); then both
 * daemons say AF_XDP carries their connections.
 */
static void write_read_through_af_xdp(bool v6, uint32_t len)
{
	struct endpoint c = { 0 }, d = { 0 };
	struct iwx_wc wc;

	cr_assert_eq(endpoint_open(&c, &pair, 0, 0), 0);
	cr_assert_eq(endpoint_open(&d, &pair, 1, 0), 0);
	cr_assert_eq(endpoint_connect(&c, &d, v6, &over_sctp), 0);
	struct buf src = buf_new(&c, NULL, 2 * (size_t)len, ALL_ACCESS, false);
	struct buf dst = buf_new(&d, NULL, len, ALL_ACCESS, false);
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1, .sge = { sge_of(&src, 0, len) },
				     .remote_addr = (uintptr_t)dst.p, .rkey = dst.mr->rkey };
	struct iwx_send_wr read = { .wr_id = 2, .opcode = IWX_WR_READ, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(&src, len, len) },
				    .remote_addr = (uintptr_t)dst.p, .rkey = dst.mr->rkey };

	fill_pattern(src.p, len, len);
	cr_assert_eq(iwx_post_send(c.qp, &write), 0);
	cr_assert_eq(iwx_post_send(c.qp, &read), 0);
	for (uint64_t id = 1; id <= 2; id++) {
		cr_assert_eq(endpoint_wc(&c, &wc), 0);
		cr_assert_eq(wc.wr_id, id);
		cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	}
	cr_assert_arr_eq(dst.p, src.p, len, "written");
	cr_assert_arr_eq(src.p + len, src.p, len, "read back");
	for (int i = 0; i < 2; i++)
		assert_llp(i, "sctp/xdp");
	endpoint_close(&c);	/* and the buffers, in their arenas */
	endpoint_close(&d);
}

/*
 * With the fast path attached on both sides: SCTP's datagrams go through AF_XDP sockets,
 * and tagged payload is placed from their frames (the Write's at b, the Read Response's
 * at a).
 */
Test(daemon_sctp, through_af_xdp_tagged_payload_placed_from_the_frames)
{
	const uint32_t len = 4u << 20;
	uint64_t placed[2], rx[2];

	for (int i = 0; i < 2; i++) {
		fast_path_tc(i, true);
		cr_assert_eq(status_u64(i, "sctp_xsks"), 1, "an AF_XDP socket on the veth's one queue");
		placed[i] = status_u64(i, "placed_bytes");
		rx[i] = status_u64(i, "xsk_rx");
	}
	write_read_through_af_xdp(false, len);
	for (int i = 0; i < 2; i++) {
		cr_assert_gt(status_u64(i, "xsk_rx"), rx[i], "daemon %d: nothing through AF_XDP", i);
		cr_assert_geq(status_u64(i, "placed_bytes") - placed[i], len,
			      "daemon %d: placed from frames", i);
	}
}

/* Over IPv6 too (SCTP's chunks 20 bytes shorter, to fit: docs/ddp-over-sctp.md). */
Test(daemon_sctp, over_ipv6_through_af_xdp)
{
	fast_path_tc(0, true);
	fast_path_tc(1, true);
	write_read_through_af_xdp(true, 1u << 20);
}

/*
 * On the veth, SCTP in UDP: INIT and INIT-ACK announce DDP_TAG_PLACE (draft-otis-sctp-ddp
 * §2.1, §3.1) and every DATA chunk is unordered and whole (§2.2), for a new connection.
 * b sends through AF_XDP, a through its UDP socket: the same wire, each side its own
 * carrier; the capture on a's end sees both (an XSK's traffic passes no packet tap).
 */
Test(daemon_sctp, the_shim_on_the_wire)
{
	static char out[1 << 16];
	struct endpoint c = { 0 }, d = { 0 };
	char pcap[160];
	pid_t cap;

	fast_path_tc(0, false);
	fast_path_tc(1, true);
	/* b's kernel checksums in full too (its UDP socket may still send, for the suite's association) */
	cr_assert_eq(iwxd_pair_tx_offload_off(&pair, 1), 0);
	snprintf(pcap, sizeof(pcap), "%s/sctp.pcap", pair.dir);
	cap = capture_start(pair.ns.a, pair.ns.dev[0], pcap, "udp port 9899");
	cr_assert_gt(cap, 0);
	cr_assert_eq(endpoint_open(&c, &pair, 0, 0), 0);
	cr_assert_eq(endpoint_open(&d, &pair, 1, 0), 0);
	cr_assert_eq(endpoint_connect(&c, &d, false, &over_sctp), 0);
	struct buf src = buf_new(&c, NULL, 1u << 20, ALL_ACCESS, false);
	struct buf dst = buf_new(&d, NULL, 1u << 20, ALL_ACCESS, false);
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED,
				     .num_sge = 1, .sge = { sge_of(&src, 0, 1u << 20) },
				     .remote_addr = (uintptr_t)dst.p, .rkey = dst.mr->rkey };
	struct iwx_wc wc;

	cr_assert_eq(iwx_post_send(c.qp, &write), 0);
	cr_assert_eq(endpoint_wc(&c, &wc), 0);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	capture_stop(cap);
	assert_llp(0, "sctp/udp");
	assert_llp(1, "sctp/xdp");
	endpoint_close(&c);
	endpoint_close(&d);

	cr_assert_eq(tshark_fields(pcap, "sctp.parameter_type == 0xc006", "-e sctp.chunk_type "
				  "-e sctp.adaptation_layer_indication", out, sizeof(out)), 2, "%s", out);
	cr_assert_str_eq(out, "1\t0x00000003\n2\t0x00000003\n");
	int data = tshark_fields(pcap, "sctp.chunk_type == 0", "-e sctp.data_u_bit "
				"-e sctp.data_b_bit -e sctp.data_e_bit", out, sizeof(out));
	/* 1 MiB in chunks of 1424 bytes of payload: 737, and the set-up, the RTR */
	cr_assert_geq(data, 740, "packets with DATA chunks: %d", data);
	cr_assert_null(strchr(out, '0'), "a DATA chunk without U, B or E:\n%.400s", out);
	/* and SCTP's CRC32c good on every packet (ISA-L's, usrsctp's offloaded) */
	cr_assert_gt(tshark_fields(pcap, "sctp.checksum.status == 1", "-e frame.number", out,
				   sizeof(out)), 0, "tshark checked the checksums");
	cr_assert_eq(tshark_fields(pcap, "sctp.checksum.status != 1", "-e frame.number", out,
				   sizeof(out)), 0, "bad checksums in frames %s", out);
	/* b's frames, built whole for its AF_XDP socket: good IPv4 and UDP checksums */
	cr_assert_gt(tshark_fields(pcap, "ip.src == " NETNS_B4 " && sctp && udp.checksum.status == 1 "
				   "&& ip.checksum.status == 1", "-o udp.check_checksum:TRUE "
				   "-o ip.check_checksum:TRUE -e frame.number", out, sizeof(out)), 0,
		     "b's frames in the capture");
	cr_assert_eq(tshark_fields(pcap, "ip.src == " NETNS_B4 " && (udp.checksum.status != 1 || "
				   "ip.checksum.status != 1)", "-o udp.check_checksum:TRUE "
				   "-o ip.check_checksum:TRUE -e frame.number", out, sizeof(out)), 0,
		     "b's frames with bad checksums: %s", out);
}

/*
 * A Write of len bytes and a Send behind it, from a on its UDP socket to b through AF_XDP,
 * with the fault injector at a's egress as conf says. At the Send's completion at b, not
 * later, the whole Write must be in place (R5). What the injector did.
 */
static struct faults_counts write_send_through_faults(uint32_t len, const struct faults_conf *conf)
{
	struct endpoint c = { 0 }, d = { 0 };
	struct faults *f = NULL;
	struct faults_counts n;
	struct iwx_wc wc;

	fast_path_tc(0, false);
	fast_path_tc(1, true);
	cr_assert_eq(endpoint_open(&c, &pair, 0, 0), 0);
	cr_assert_eq(endpoint_open(&d, &pair, 1, 0), 0);
	cr_assert_eq(endpoint_connect(&c, &d, false, &over_sctp), 0);
	struct buf src = buf_new(&c, NULL, len, ALL_ACCESS, false);
	struct buf dst = buf_new(&d, NULL, len + 4096, ALL_ACCESS, false);
	struct iwx_recv_wr recv = { .wr_id = 9, .num_sge = 1, .sge = { sge_of(&dst, len, 4096) } };
	struct iwx_send_wr write = { .wr_id = 1, .opcode = IWX_WR_WRITE, .num_sge = 1,
				     .sge = { sge_of(&src, 0, len) },
				     .remote_addr = (uintptr_t)dst.p, .rkey = dst.mr->rkey };
	struct iwx_send_wr send = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				    .num_sge = 1, .sge = { sge_of(&src, 0, 64) } };

	fill_pattern(src.p, len, len);
	cr_assert_eq(iwx_post_recv(d.qp, &recv), 0);
	cr_assert_eq(faults_attach(&f, pair.ns.a, pair.ns.dev[0], conf), 0);
	cr_assert_eq(iwx_post_send(c.qp, &write), 0);
	cr_assert_eq(iwx_post_send(c.qp, &send), 0);
	cr_assert_eq(endpoint_wc(&d, &wc), 0);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	cr_assert_arr_eq(dst.p, src.p, len, "the Write before the Send");
	cr_assert_arr_eq(dst.p + len, src.p, 64, "the Send");
	cr_assert_eq(endpoint_wc(&c, &wc), 0);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	n = faults_counts(f);
	faults_detach(f);
	assert_llp(1, "sctp/xdp");
	endpoint_close(&c);
	endpoint_close(&d);
	return n;
}

/*
 * Loss on the wire: 3% of a's datagrams dropped, 1% duplicated. SCTP sends the lost
 * chunks again and b places them from the frames whenever they come; every byte arrives.
 */
Test(daemon_sctp, after_loss_a_send_completes_only_behind_its_whole_write)
{
	const struct faults_conf lossy = { .seed = 12, .drop_ppm = 30000, .dup_ppm = 10000,
					   .udp_port = 9899 };
	struct faults_counts n = write_send_through_faults(4u << 20, &lossy);

	cr_assert_gt(n.dropped, 10, "datagrams dropped: %lu of %lu", n.dropped, n.seen);
	cr_assert_gt(n.duplicated, 0, "datagrams duplicated: %lu of %lu", n.duplicated, n.seen);
}

/*
 * R5 exactly: the last chunk of a three-chunk Write is lost (the third datagram a sends),
 * the Send behind it arrives at once, and SCTP resends the lost chunk only on its
 * retransmission timer, a second on: the Send completes at b only then.
 */
Test(daemon_sctp, a_send_waits_for_the_lost_last_chunk_of_the_write_before_it)
{
	const struct faults_conf third = { .drop_at = FAULTS_AT(2), .udp_port = 9899 };
	/* three chunks of the tagged stream's largest payload */
	struct faults_counts n = write_send_through_faults(3 * 1424, &third);

	cr_assert_eq(n.dropped, 1);
	cr_assert_geq(n.seen, 5, "three chunks, the Send, the lost one again: %lu", n.seen);
}
