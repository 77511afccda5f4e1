// SPDX-License-Identifier: MIT
/*
 * The fast path's programs (bpf/fastpath.bpf.c) alone, through BPF_PROG_TEST_RUN: crafted
 * frames for a real TCP connection between two test namespaces, maps filled as iwxd
 * would. Each check refuses what it must, under the right counter, and what passes lands
 * exactly where its STag says; the guard bytes around the region stay as they were. Every
 * test runs twice: at TC ingress (iwx_tc; suites fastpath_bpf, fastpath_bpf6) and at XDP
 * (iwx_xdp; the same suites' _xdp twins).
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fastpath_maps.h"
#include "proto/mpa.h"
#include "proto/wire.h"

#include "fastpath_rig.h"
#include "stall.h"
#include "testutil.h"

#define MEM_ELEMS	4		/* the memory: 16 KiB */
#define GUARD		0xa5
#define STAG		0x123456u
#define PD		7u
#define BASE_TO		0x10000ull
#define REGION_OFF	1000u		/* the region's first byte in the memory */
#define REGION_LEN	8192u		/* ... and its length: it spans three elements */
#define WRITE_ACCESS	(IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_LOCAL_WRITE)

static struct netns_pair ns;
static struct fastpath_bpf *skel;
static int lfd = -1, cfd = -1, sfd = -1, mem_fd = -1;
static uint8_t *mem;
static struct iwx_fp_slot *slots;
static size_t slots_len;
static struct iwx_fp_key key;
static uint32_t rcv_nxt;
static bool v6;

/*
 * What the peer's segments carry, as TCP on this side accepts them: the ACK of what it
 * sent (the peer's rcv_nxt), and a timestamp (the connection agreed on them) no older
 * than the last one it saw (the peer's clock now, TCP_TIMESTAMP). The tests of what TCP
 * refuses change them.
 */
static struct {
	uint32_t	ack;
	bool		ts;	/* a timestamp option */
	uint32_t	tsval;
	uint8_t		dst_mac[6];
} seg, good_seg;
static bool at_xdp;	/* the program under test is iwx_xdp, not iwx_tc */

/* ------------------------------------------------------------- the connection */

static struct fp_rig_conn conn;

/* A TCP connection from namespace a (the peer) to b (this side, whose program runs). */
static void make_connection(void)
{
	struct iwx_fp_conn fc = { .slot = 0, .pd = PD };

	cr_assert_eq(fp_rig_connect(&ns, skel, v6, &conn), 0);
	lfd = conn.lfd;
	cfd = conn.cfd;
	sfd = conn.sfd;
	key = conn.key;
	fc.cookie = conn.cookie;
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.iwx_fp_conns), &key, &fc, 0), 0);
	rcv_nxt = conn.rcv_nxt;
	seg.ack = conn.ack;	/* what this side sent */
	seg.tsval = conn.tsval;
	seg.ts = true;
	memset(seg.dst_mac, 0, sizeof(seg.dst_mac));	/* BPF_PROG_TEST_RUN's device: loopback */
	good_seg = seg;
}

/* The peer's segments as TCP takes them again. */
static void make_good(void)
{
	seg = good_seg;
}

/* ----------------------------------------------------------------- the maps */

static void publish(uint32_t stag, uint32_t pd, uint8_t access, uint64_t base_to, uint64_t len)
{
	struct iwx_fp_stag st = {
		.desc = { .stag = stag, .pd = pd, .valid = 1, .access = access, .base_to = base_to,
			  .len = len },
		.mem = 0, .off = REGION_OFF,
	};

	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.iwx_fp_stags), &stag, &st, 0), 0);
}

static void setup_maps(void)
{
	mem_fd = fp_rig_memory(skel, 0, MEM_ELEMS, &mem);
	cr_assert_geq(mem_fd, 0);
	memset(mem, GUARD, MEM_ELEMS * 4096);
	slots = fp_rig_slots(skel, &slots_len);
	cr_assert_not_null(slots);
	publish(STAG, PD, WRITE_ACCESS, BASE_TO, REGION_LEN);
}

static void start(bool ipv6, bool xdp)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and BPF");
	v6 = ipv6;
	at_xdp = xdp;
	cr_assert_eq(netns_pair_setup(&ns), 0);
	skel = fastpath_bpf__open();
	cr_assert_not_null(skel);
	/* only the program under test: the verifier takes about half a second for each */
	bpf_program__set_autoload(skel->progs.iwx_tc, !xdp);
	bpf_program__set_autoload(skel->progs.iwx_xdp, xdp);	/* iwxd loads it through libxdp */
	bpf_map__set_max_entries(skel->maps.iwx_fp_cpus, libbpf_num_possible_cpus());
	cr_assert_eq(fastpath_bpf__load(skel), 0, "the verifier accepts the fast path");
	setup_maps();
	make_connection();
	/* the stream's start is certain: as if iwxd had confirmed it */
	slots[0].state = IWX_FP_SYNC;
	slots[0].next_seq = rcv_nxt;
}

static void up4(void)
{
	start(false, false);
}

static void up4_xdp(void)
{
	start(false, true);
}

static void up6(void)
{
	start(true, false);
}

static void up6_xdp(void)
{
	start(true, true);
}

static void down(void)
{
	if (slots)
		munmap(slots, slots_len);
	if (mem)
		munmap(mem, MEM_ELEMS * 4096);
	for (int *fd = (int[]){ lfd, cfd, sfd, mem_fd }, i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	lfd = cfd = sfd = mem_fd = -1;
	slots = NULL;
	mem = NULL;
	fastpath_bpf__destroy(skel);
	skel = NULL;
	netns_pair_teardown(&ns);
}

TestSuite(fastpath_bpf, .init = up4, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_bpf_xdp, .init = up4_xdp, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_bpf6, .init = up6, .fini = down, .timeout = HANG_S);
TestSuite(fastpath_bpf6_xdp, .init = up6_xdp, .fini = down, .timeout = HANG_S);

/* A test of both programs, one body: in suite (iwx_tc) and in suite_xdp (iwx_xdp). */
#define TEST_BOTH(suite, name)			\
	static void name(void);			\
	Test(suite, name)			\
	{					\
		name();				\
	}					\
	Test(suite##_xdp, name)			\
	{					\
		name();				\
	}					\
	static void name(void)

/* ---------------------------------------------------------------- the frames */

#define TCP_ACK	0x10
#define TCP_RST	0x04
#define TCP_SYN	0x02

struct frame {
	uint8_t		b[FP_RIG_FRAME_MAX];
	size_t		len;
};

/*
 * ULPDU_LENGTH and the DDP header of a tagged segment of len bytes, not its message's
 * last (mark_last makes it so): 16 bytes at p.
 */
static void tagged_head(uint8_t *p, uint8_t op, uint32_t stag, uint64_t to, uint32_t len)
{
	uint32_t ulen = IWX_DDP_TAGGED_HDR_LEN + len;
	struct iwx_ddp_tagged_hdr h = {
		.ddp_ctrl = IWX_DDP_FLAG_TAGGED | IWX_DDP_VERSION,
		.rdmap_ctrl = IWX_RDMAP_VERSION << IWX_RDMAP_VERSION_SHIFT | op,
		.stag = htonl(stag), .to = htobe64(to),
	};

	p[0] = ulen >> 8;
	p[1] = ulen;
	memcpy(p + 2, &h, sizeof(h));
}

/* The FPDU or header at p ends its message. */
static void mark_last(uint8_t *p)
{
	p[2] |= IWX_DDP_FLAG_LAST;
}

/*
 * A message to STAG is in flight, its next segment due at base + to: the segment before
 * it, as the program would have followed it (fastpath_maps.h, struct iwx_fp_cut).
 */
static void in_flight(uint64_t to)
{
	slots[0].cut = (struct iwx_fp_cut){ .to = BASE_TO + to, .stag = STAG, .valid = 1 };
}

/* An FPDU carrying a tagged segment (op: IWX_OP_WRITE or IWX_OP_READ_RESP) of len bytes. */
static size_t fpdu_tagged(uint8_t *p, uint8_t op, uint32_t stag, uint64_t to, const uint8_t *data,
			  uint32_t len)
{
	uint32_t ulen = IWX_DDP_TAGGED_HDR_LEN + len, pad = iwx_mpa_pad_len(ulen);

	tagged_head(p, op, stag, to, len);
	memcpy(p + 2 + IWX_DDP_TAGGED_HDR_LEN, data, len);
	memset(p + 2 + IWX_DDP_TAGGED_HDR_LEN + len, 0, pad);
	memcpy(p + 2 + ulen + pad, "\x11\x22\x33\x44", 4);	/* the program leaves the CRC to iwxd */
	return 2 + ulen + pad + 4;
}

/* An untagged Send (op IWX_OP_SEND, IWX_OP_SEND_INV, ...) of len bytes. */
static size_t fpdu_send(uint8_t *p, uint8_t op, uint32_t inval, uint32_t len)
{
	uint32_t ulen = IWX_DDP_UNTAGGED_HDR_LEN + len, pad = iwx_mpa_pad_len(ulen);
	struct iwx_ddp_untagged_hdr h = {
		.ddp_ctrl = IWX_DDP_FLAG_LAST | IWX_DDP_VERSION,
		.rdmap_ctrl = IWX_RDMAP_VERSION << IWX_RDMAP_VERSION_SHIFT | op,
		.inval_stag = htonl(inval), .qn = 0, .msn = htonl(1), .mo = 0,
	};

	p[0] = ulen >> 8;
	p[1] = ulen;
	memcpy(p + 2, &h, sizeof(h));
	memset(p + 2 + sizeof(h), 0x5a, len + pad);
	memset(p + 2 + ulen + pad, 0, 4);
	return 2 + ulen + pad + 4;
}

/* Ethernet (a VLAN tag if vlan), IP, TCP from the peer at seq with flags (and seg's ACK and
 * timestamp), then payload. */
static void frame_build(struct frame *f, bool vlan, uint32_t seq, uint8_t flags, const uint8_t *payload,
			size_t plen)
{
	struct fp_rig_seg s = { .seq = seq, .ack = seg.ack, .flags = flags, .ts = seg.ts,
				.tsval = seg.tsval, .vlan = vlan };

	memcpy(s.dst_mac, seg.dst_mac, sizeof(s.dst_mac));
	f->len = fp_rig_frame(f->b, sizeof(f->b), &key, &s, payload, plen);
	cr_assert_gt(f->len, 0, "the frame fits");
}

static struct frame frame;

static int run_in_b(void *arg)
{
	(void)arg;
	return fp_rig_run(at_xdp ? skel->progs.iwx_xdp : skel->progs.iwx_tc, frame.b, frame.len);
}

/* Run the program on the frame, as it arrives in namespace b; it passes every packet. */
static void run(void)
{
	cr_assert_eq(netns_call(ns.b, run_in_b, NULL), at_xdp ? 2 /* XDP_PASS */ : -1 /* TC_ACT_UNSPEC */);
}

static void send_fpdus(uint32_t seq, uint8_t flags, const uint8_t *fpdus, size_t len)
{
	frame_build(&frame, false, seq, flags, fpdus, len);
	run();
}

/* ------------------------------------------------------------------ checks */

static void assert_guards(size_t from, size_t to)
{
	for (size_t i = 0; i < MEM_ELEMS * 4096; i++)
		if (i < from || i >= to)
			cr_assert_eq(mem[i], GUARD, "guard byte %zu changed", i);
}

static uint64_t skipped(enum iwx_fp_skip why)
{
	return slots[0].c.skipped[why];
}

static void assert_nothing_placed(enum iwx_fp_skip why)
{
	cr_assert_eq(slots[0].c.placed_fpdus, 0);
	cr_assert_eq(slots[0].head, 0, "no record");
	cr_assert_eq(skipped(why), 1, "counted under reason %d", why);
	assert_guards(0, 0);
}

static uint8_t data[8192];

/* One Write, whole in one packet, in order: its bytes land at base + TO, and a record says so. */
static void places_one_write(void)
{
	uint8_t buf[2048];
	size_t n;

	fill_pattern(data, sizeof(data), 3);
	in_flight(3000);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO + 3000, data, 1401);
	frame_build(&frame, false, rcv_nxt, TCP_ACK, buf, n);
	run();
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(slots[0].c.placed_bytes, 1401);
	cr_assert_eq(memcmp(mem + REGION_OFF + 3000, data, 1401), 0, "the payload is at base + TO");
	assert_guards(REGION_OFF + 3000, REGION_OFF + 3000 + 1401);
	cr_assert_eq(slots[0].head, 1);
	cr_assert_eq(slots[0].ring[0].seq, rcv_nxt);
	cr_assert_eq(memcmp(slots[0].ring[0].hdr, buf, 16), 0, "the record holds the header");
	cr_assert_eq(slots[0].ring[0].trailer_len, iwx_mpa_pad_len(14 + 1401) + 4);
	cr_assert_eq(slots[0].next_seq, rcv_nxt + n);
	cr_assert(slots[0].cut.valid && slots[0].cut.to == BASE_TO + 3000 + 1401,
		  "the message goes on after it");
}

TEST_BOTH(fastpath_bpf, places_a_write_at_its_tagged_offset)
{
	places_one_write();
}

TEST_BOTH(fastpath_bpf6, places_a_write_over_ipv6)
{
	places_one_write();
}

/* Five FPDUs in one packet (as GRO merges them), one across two 4 KiB elements: all placed. */
TEST_BOTH(fastpath_bpf, many_fpdus_in_one_packet)
{
	uint8_t buf[4096];
	size_t n = 0;

	fill_pattern(data, sizeof(data), 4);
	in_flight(0);
	for (int i = 0; i < 5; i++)
		n += fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + i * 600, data + i * 600, 600);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].c.placed_fpdus, 5);
	cr_assert_eq(memcmp(mem + REGION_OFF, data, 3000), 0);
	assert_guards(REGION_OFF, REGION_OFF + 3000);
	cr_assert_eq(slots[0].head, 5);
	cr_assert_eq(slots[0].next_seq, rcv_nxt + n);
}

/* An FPDU cut by the packet's end is not placed; the next packet goes on after it. */
TEST_BOTH(fastpath_bpf, an_fpdu_cut_across_packets_is_left_and_followed)
{
	uint8_t buf[4096];
	size_t n, m;

	fill_pattern(data, sizeof(data), 5);
	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 1000);
	send_fpdus(rcv_nxt, TCP_ACK, buf, 600);
	assert_nothing_placed(IWX_FP_SKIP_SPLIT);
	/* the rest of it, then a whole one, the message going on after it */
	m = fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + 1000, data, 100);
	send_fpdus(rcv_nxt + 600, TCP_ACK, buf + 600, n - 600 + m);
	cr_assert_eq(slots[0].c.placed_fpdus, 1, "the FPDU after it is placed");
	cr_assert_eq(memcmp(mem + REGION_OFF + 1000, data, 100), 0);
	assert_guards(REGION_OFF + 1000, REGION_OFF + 1100);
}

/* A packet the 4-tuple does not name a known connection for: nothing at all. */
TEST_BOTH(fastpath_bpf, unknown_connection)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	key.sport ^= htons(1);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	key.sport ^= htons(1);
	cr_assert_eq(slots[0].c.packets, 0);
	cr_assert_eq(slots[0].head, 0);
	assert_guards(0, 0);
}

/* The right 4-tuple, but far outside the receive window: never placed. */
TEST_BOTH(fastpath_bpf, outside_the_window)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	slots[0].next_seq = rcv_nxt + (1u << 30);
	send_fpdus(rcv_nxt + (1u << 30), TCP_ACK, buf, n);
	assert_nothing_placed(IWX_FP_SKIP_WINDOW);
	/* and data TCP has had already: before rcv_nxt */
	slots[0].next_seq = rcv_nxt - 1000;
	send_fpdus(rcv_nxt - 1000, TCP_ACK, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_WINDOW), 2);
	cr_assert_eq(slots[0].head, 0);
	assert_guards(0, 0);
}

TEST_BOTH(fastpath_bpf, rst_syn_or_no_ack)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	send_fpdus(rcv_nxt, TCP_ACK | TCP_RST, buf, n);
	assert_nothing_placed(IWX_FP_SKIP_TCP_FLAGS);
	slots[0].next_seq = rcv_nxt;
	send_fpdus(rcv_nxt, TCP_ACK | TCP_SYN, buf, n);
	slots[0].next_seq = rcv_nxt;
	send_fpdus(rcv_nxt, 0, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_TCP_FLAGS), 3);
	cr_assert_eq(slots[0].head, 0);
	assert_guards(0, 0);
}

/* ------------------------------------------------- segments TCP would refuse */

/*
 * The next segment of a Write in flight, in a packet TCP would refuse (seg, and spoil on
 * the frame, make it so): nothing placed, counted under why; then the same segment as
 * TCP takes it, placed (what refused it was the check, nothing else).
 */
static bool tagged;	/* refused_then_placed's first frame has a VLAN tag */

static void refused_then_placed(void (*spoil)(struct frame *), enum iwx_fp_skip why)
{
	uint8_t buf[2048];
	size_t n;

	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);
	frame_build(&frame, tagged, rcv_nxt, TCP_ACK, buf, n);
	if (spoil)
		spoil(&frame);
	run();
	assert_nothing_placed(why);
	cr_assert_eq(slots[0].c.packets, 1);

	make_good();
	slots[0].next_seq = rcv_nxt;
	in_flight(0);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].c.placed_fpdus, 1, "as TCP takes it, it is placed");
	cr_assert_eq(memcmp(mem + REGION_OFF, data, 100), 0);
	assert_guards(REGION_OFF, REGION_OFF + 100);
}

/* RFC 5961 §5.2: an ACK of data this side never sent; TCP drops the segment */
TEST_BOTH(fastpath_bpf, an_ack_of_data_never_sent)
{
	seg.ack += 100000;
	refused_then_placed(NULL, IWX_FP_SKIP_ACK);
}

/* ... and one older than the peer's window allows (here: of nothing acknowledged yet) */
TEST_BOTH(fastpath_bpf, an_ack_too_old)
{
	seg.ack -= 1000;
	refused_then_placed(NULL, IWX_FP_SKIP_ACK);
}

/* RFC 7323 §5: PAWS drops a TSval older than the last one TCP took */
TEST_BOTH(fastpath_bpf, an_old_timestamp)
{
	seg.tsval -= 100000;
	refused_then_placed(NULL, IWX_FP_SKIP_PAWS);
}

/* The connection agreed on timestamps: a segment without one is not placed */
TEST_BOTH(fastpath_bpf, no_timestamp_where_agreed)
{
	seg.ts = false;
	refused_then_placed(NULL, IWX_FP_SKIP_PAWS);
}

static void another_host(void)
{
	memcpy(seg.dst_mac, "\x02\x00\x00\x00\x00\x01", 6);
}

/*
 * A frame for another host's MAC (promiscuous mode, a bridge): IP drops it. iwx_tc has
 * eth_type_trans's word for it (pkt_type), iwx_xdp compares the MAC with the device's.
 */
TEST_BOTH(fastpath_bpf, another_hosts_mac)
{
	another_host();
	refused_then_placed(NULL, IWX_FP_SKIP_NOT_HOST);
}

TEST_BOTH(fastpath_bpf, a_broadcast_frame)
{
	memset(seg.dst_mac, 0xff, 6);
	refused_then_placed(NULL, IWX_FP_SKIP_NOT_HOST);
}

/*
 * A frame tagged for a VLAN: TCP gets it from that VLAN's device, where TC sees it
 * untagged (vlan_do_receive), and where there is none the host drops it.
 */
TEST_BOTH(fastpath_bpf, a_vlan_tagged_frame)
{
	tagged = true;
	refused_then_placed(NULL, IWX_FP_SKIP_VLAN);
}

static void bad_ip_sum(struct frame *f)
{
	f->b[14 + 10] ^= 0x01;	/* the IPv4 header checksum's first byte */
}

/* ip_rcv_core drops a bad IPv4 header checksum (the TCP checksum does not cover it) */
TEST_BOTH(fastpath_bpf, a_bad_ipv4_header_checksum)
{
	refused_then_placed(bad_ip_sum, IWX_FP_SKIP_IP_HEADER);
}

static void urgent(struct frame *f)
{
	uint8_t *tcp = f->b + 14 + 20;

	tcp[13] |= 0x20;	/* URG: TCP takes the urgent byte out of the stream */
	tcp[16] = tcp[17] = 0;
	uint16_t c = iwx_csum_fold(iwx_csum_add(iwx_csum_add(IPPROTO_TCP + (f->len - 34), f->b + 26, 8), tcp,
					f->len - 34));

	tcp[16] = c >> 8;
	tcp[17] = c;
}

TEST_BOTH(fastpath_bpf, urgent_data)
{
	refused_then_placed(urgent, IWX_FP_SKIP_TCP_FLAGS);
}

/* A socket past ESTABLISHED (the peer closed its side: CLOSE_WAIT) places nothing */
TEST_BOTH(fastpath_bpf, a_socket_not_established)
{
	uint8_t buf[2048];
	size_t n;
	struct tcp_info ti = { 0 };
	socklen_t len = sizeof(ti);

	cr_assert_eq(shutdown(cfd, SHUT_WR), 0);
	for (int t = 0; t < STALL_MS / 5 && ti.tcpi_state != TCP_CLOSE_WAIT; t++) {
		usleep(5000);
		len = sizeof(ti);
		cr_assert_eq(getsockopt(sfd, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
	}
	cr_assert_eq(ti.tcpi_state, TCP_CLOSE_WAIT);
	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	assert_nothing_placed(IWX_FP_SKIP_TCP_STATE);
}

/* A segment TCP will drop for its checksum must not have been placed. */
TEST_BOTH(fastpath_bpf, bad_tcp_checksum)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	frame_build(&frame, false, rcv_nxt, TCP_ACK, buf, n);
	frame.b[frame.len - 10] ^= 0x40;	/* a payload byte: the checksum no longer matches */
	run();
	assert_nothing_placed(IWX_FP_SKIP_CSUM);
}

static void refused(uint8_t op, uint32_t stag, uint64_t to, uint32_t len, enum iwx_fp_skip why)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, op, stag, to, data, len);

	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	assert_nothing_placed(why);
	cr_assert_eq(slots[0].next_seq, rcv_nxt + n, "followed all the same");
}

TEST_BOTH(fastpath_bpf, unknown_stag)
{
	refused(IWX_OP_WRITE, STAG ^ 0x100, BASE_TO, 100, IWX_FP_SKIP_STAG);
}

TEST_BOTH(fastpath_bpf, stag_with_another_key)
{
	refused(IWX_OP_WRITE, STAG ^ 1, BASE_TO, 100, IWX_FP_SKIP_STAG);
}

TEST_BOTH(fastpath_bpf, invalid_stag)
{
	struct iwx_fp_stag st;
	uint32_t stag = STAG;

	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.iwx_fp_stags), &stag, &st), 0);
	st.desc.valid = 0;
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.iwx_fp_stags), &stag, &st, 0), 0);
	refused(IWX_OP_WRITE, STAG, BASE_TO, 100, IWX_FP_SKIP_STAG);
}

TEST_BOTH(fastpath_bpf, stag_of_another_protection_domain)
{
	publish(STAG, PD + 1, WRITE_ACCESS, BASE_TO, REGION_LEN);
	refused(IWX_OP_WRITE, STAG, BASE_TO, 100, IWX_FP_SKIP_STAG_PD);
}

TEST_BOTH(fastpath_bpf, no_remote_write_access)
{
	publish(STAG, PD, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_READ, BASE_TO, REGION_LEN);
	refused(IWX_OP_WRITE, STAG, BASE_TO, 100, IWX_FP_SKIP_ACCESS);
}

TEST_BOTH(fastpath_bpf, read_response_needs_local_write)
{
	publish(STAG, PD, IWX_ACCESS_REMOTE_WRITE, BASE_TO, REGION_LEN);
	refused(IWX_OP_READ_RESP, STAG, BASE_TO, 100, IWX_FP_SKIP_ACCESS);
}

TEST_BOTH(fastpath_bpf, read_response_is_placed)
{
	uint8_t buf[2048];
	size_t n;

	publish(STAG, PD, IWX_ACCESS_LOCAL_WRITE, BASE_TO, REGION_LEN);
	fill_pattern(data, sizeof(data), 6);
	in_flight(10);
	n = fpdu_tagged(buf, IWX_OP_READ_RESP, STAG, BASE_TO + 10, data, 1000);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(memcmp(mem + REGION_OFF + 10, data, 1000), 0);
	assert_guards(REGION_OFF + 10, REGION_OFF + 1010);
}

TEST_BOTH(fastpath_bpf, past_the_region_end)
{
	refused(IWX_OP_WRITE, STAG, BASE_TO + REGION_LEN - 50, 100, IWX_FP_SKIP_BOUNDS);
}

TEST_BOTH(fastpath_bpf, before_the_region)
{
	refused(IWX_OP_WRITE, STAG, BASE_TO - 1, 100, IWX_FP_SKIP_BOUNDS);
}

TEST_BOTH(fastpath_bpf, tagged_offset_wraps)
{
	publish(STAG, PD, WRITE_ACCESS, ~0ull - 200, 100);
	refused(IWX_OP_WRITE, STAG, ~0ull - 20, 100, IWX_FP_SKIP_TO_WRAP);
}

/* Not confirmed: the program proposes the packet's start and places nothing. */
TEST_BOTH(fastpath_bpf, uncertain_boundary_is_proposed_not_placed)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	slots[0].state = IWX_FP_UNSYNC;
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	assert_nothing_placed(IWX_FP_SKIP_UNSYNC);
	cr_assert_eq(slots[0].state, IWX_FP_PROPOSED);
	cr_assert_eq(slots[0].mark_seq, rcv_nxt);
	cr_assert_eq(slots[0].c.proposals, 1);

	/* iwxd confirms: the next packet, the message's next segment, is placed */
	slots[0].answer = IWX_FP_ANSWER(rcv_nxt, IWX_FP_CONFIRM);
	fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO + 100, data, 100);
	send_fpdus(rcv_nxt + n, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].state, IWX_FP_SYNC);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
}

/* A packet after a gap is followed as an island; the gap filled, the stream goes on past it. */
TEST_BOTH(fastpath_bpf, a_reordered_packet_is_joined)
{
	uint8_t buf[3][2048];
	size_t n = 0;

	in_flight(0);
	for (int i = 0; i < 3; i++)
		n = fpdu_tagged(buf[i], IWX_OP_WRITE, STAG, BASE_TO + i * 100, data, 100);
	send_fpdus(rcv_nxt + n, TCP_ACK, buf[1], n);
	assert_nothing_placed(IWX_FP_SKIP_UNSYNC);
	cr_assert_eq(slots[0].state, IWX_FP_SYNC, "still in sync");
	cr_assert_eq(slots[0].island_seq, rcv_nxt + n);
	cr_assert_eq(slots[0].island_end, rcv_nxt + 2 * n);
	/* the packet before it: placed, and the stream continues after the island */
	send_fpdus(rcv_nxt, TCP_ACK, buf[0], n);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(slots[0].next_seq, rcv_nxt + 2 * n);
	cr_assert_eq(slots[0].island_end, 0);
	cr_assert(slots[0].cut.valid && slots[0].cut.to == BASE_TO + 200,
		  "the message as the island left it");
	send_fpdus(rcv_nxt + 2 * n, TCP_ACK, buf[2], n);
	cr_assert_eq(slots[0].c.placed_fpdus, 2);
	cr_assert_eq(slots[0].c.proposals, 0, "never out of sync");
}

/* Two gaps: the boundary is lost; nothing placed until iwxd confirms a proposal. */
TEST_BOTH(fastpath_bpf, a_second_gap_loses_the_boundary)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	send_fpdus(rcv_nxt + n, TCP_ACK, buf, n);
	send_fpdus(rcv_nxt + 3 * n, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].state, IWX_FP_PROPOSED);
	cr_assert_eq(slots[0].mark_seq, rcv_nxt + 3 * n);
	cr_assert_eq(slots[0].c.proposals, 1);
	/* denied: proposed again at the next packet */
	slots[0].answer = IWX_FP_ANSWER(rcv_nxt + 3 * n, IWX_FP_DENY);
	send_fpdus(rcv_nxt + 5 * n, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].mark_seq, rcv_nxt + 5 * n);
	cr_assert_eq(slots[0].c.proposals, 2);
	cr_assert_eq(slots[0].head, 0);
	assert_guards(0, 0);
}

/* What is not DDP/RDMAP: the program stops following the stream (iwxd will end it). */
TEST_BOTH(fastpath_bpf, a_bad_header_stops_the_stream)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	buf[2] = 0x82;	/* DDP version 2 */
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	assert_nothing_placed(IWX_FP_SKIP_HEADER);
	cr_assert_eq(slots[0].state, IWX_FP_STOPPED);
	buf[2] = 0xc1;
	send_fpdus(rcv_nxt + n, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].head, 0, "nothing placed after it");
	cr_assert_eq(slots[0].c.stopped, 1, "and counted");
}

/* A packet resent, all before where the stream is: counted, not walked again. */
TEST_BOTH(fastpath_bpf, a_resent_packet_is_behind)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	in_flight(0);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(slots[0].c.behind, 1);
	cr_assert_eq(slots[0].head, 1);
}

/* A Send with Invalidate holds the Writes behind it until iwxd has taken it. */
TEST_BOTH(fastpath_bpf, writes_behind_a_send_with_invalidate_wait)
{
	uint8_t buf[4096];
	size_t s = fpdu_send(buf, IWX_OP_SEND_INV, STAG, 20), n;

	in_flight(0);
	n = s + fpdu_tagged(buf + s, IWX_OP_WRITE, STAG, BASE_TO, data, 100);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_UNTAGGED), 1);
	cr_assert_eq(skipped(IWX_FP_SKIP_HELD), 1);
	cr_assert_eq(slots[0].head, 0);
	assert_guards(0, 0);
	/* released: the Write's next segment is placed */
	slots[0].release = IWX_FP_ANSWER(rcv_nxt, IWX_FP_RELEASE);
	fpdu_tagged(buf + s, IWX_OP_WRITE, STAG, BASE_TO + 100, data, 100);
	send_fpdus(rcv_nxt + n, TCP_ACK, buf + s, n - s);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
}

/* iwxd has not taken the records: once the ring is full, nothing more is placed. */
TEST_BOTH(fastpath_bpf, a_full_ring_stops_placement)
{
	uint8_t buf[4096];
	size_t one = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 1), n = 0;

	/* iwxd is behind by all but 128 records; then two packets of 128 one-byte FPDUs */
	slots[0].head = IWX_FP_RING - 128;
	in_flight(0);
	for (int i = 0; i < 128; i++)
		n += fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + i, data, 1);
	cr_assert_eq(n, 128 * one);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	for (int i = 0; i < 128; i++)
		fpdu_tagged(buf + i * one, IWX_OP_WRITE, STAG, BASE_TO + 128 + i, data, 1);
	send_fpdus(rcv_nxt + n, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].c.placed_fpdus, 128);
	cr_assert_eq(skipped(IWX_FP_SKIP_RING_FULL), 128);
	cr_assert_eq(slots[0].next_seq, rcv_nxt + 2 * n, "followed all the same");
}

/*
 * A segment whose header does not continue its message (a tagged offset a corruption the
 * CRC will catch has moved) is left to iwxd, which checks the CRC first; so is the one
 * after it, which continues the message but not that header. The next is placed.
 */
TEST_BOTH(fastpath_bpf, a_segment_that_does_not_continue_its_message_is_left_to_iwxd)
{
	uint8_t buf[2048];
	size_t n;

	fill_pattern(data, sizeof(data), 13);
	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO + 1000, data, 100);
	n += fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + 100, data + 100, 100);
	n += fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + 200, data + 200, 100);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_FIRST), 2);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(memcmp(mem + REGION_OFF + 200, data + 200, 100), 0);
	assert_guards(REGION_OFF + 200, REGION_OFF + 300);
}

/*
 * A message's last segment is iwxd's (a program may poll its last byte and answer in it:
 * its CRC is checked over TCP's bytes, not read back), and so is the next message's first;
 * that one's second is placed.
 */
TEST_BOTH(fastpath_bpf, a_messages_last_and_the_next_ones_first_segment_are_left_to_iwxd)
{
	uint8_t buf[2048];
	size_t n, m;

	fill_pattern(data, sizeof(data), 14);
	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);
	mark_last(buf);
	m = n;
	n += fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + 100, data + 100, 100);
	n += fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + 200, data + 200, 100);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_LAST), 1);
	cr_assert_eq(skipped(IWX_FP_SKIP_FIRST), 1);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(slots[0].ring[0].seq, rcv_nxt + m + (n - m) / 2, "the third FPDU's record");
	cr_assert_eq(memcmp(mem + REGION_OFF + 200, data + 200, 100), 0);
	for (int i = 0; i < 200; i++)
		cr_assert_eq(mem[REGION_OFF + i], GUARD, "byte %d: a segment iwxd's placed", i);
}

/* An island that loses its way (a header cut by the packet's end) leaves the proposal intact. */
TEST_BOTH(fastpath_bpf, a_failed_island_proposes_from_the_packet_start)
{
	uint8_t buf[2048];
	size_t n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 100);

	memset(buf + n, 0, 2);	/* two bytes of a header: the boundary after them is lost */
	send_fpdus(rcv_nxt + n, TCP_ACK, buf, n + 2);
	cr_assert_eq(slots[0].state, IWX_FP_UNSYNC);
	cr_assert_eq(slots[0].c.proposals, 1);
	cr_assert_eq(slots[0].next_seq, rcv_nxt + 2 * n, "followed from the packet's start");
	cr_assert_eq(slots[0].head, 0);
}

/* ------------------------------------------------------------------ wake-ups */

static int bell_slot(void *ctx, void *d, size_t size)
{
	int *last = ctx;

	cr_assert_eq(size, sizeof(uint32_t));
	memcpy(last, d, sizeof(uint32_t));
	return 0;
}

/* Bells waiting in iwx_fp_bells (the last one's slot in *slot). */
static int bells(int *slot)
{
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(skel->maps.iwx_fp_bells), bell_slot,
						  slot, NULL);
	int n;

	cr_assert_not_null(rb);
	n = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return n;
}

/*
 * A lazy iwxd (asleep on its low-water mark) is rung for the first packet it must read
 * itself, once, and not for packets all placed; wake_seq tells it where that packet ends.
 */
TEST_BOTH(fastpath_bpf, a_lazy_iwxd_is_rung_for_what_it_must_read)
{
	uint8_t buf[2048];
	uint32_t seq = rcv_nxt;
	size_t n;
	int slot = -1;

	slots[0].lazy = 1;
	slots[0].wake_seq = seq;
	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 1000);
	send_fpdus(seq, TCP_ACK, buf, n);
	seq += n;
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(slots[0].lazy, 1, "a packet all placed: iwxd sleeps on");
	cr_assert_eq(bells(&slot), 0);
	cr_assert_eq(slots[0].wake_seq, rcv_nxt);

	/* a Send: iwxd's to read */
	n = fpdu_send(buf, IWX_OP_SEND, 0, 100);
	send_fpdus(seq, TCP_ACK, buf, n);
	seq += n;
	cr_assert_eq(slots[0].lazy, 0, "rung");
	cr_assert_eq(bells(&slot), 1);
	cr_assert_eq(slot, 0, "the bell names the slot");
	cr_assert_eq(slots[0].wake_seq, seq, "wake_seq: the end of the packet to read");
	cr_assert_eq(slots[0].c.bells, 1);

	/* not lazy: no bell, though wake_seq moves on */
	n = fpdu_send(buf, IWX_OP_SEND, 0, 100);
	send_fpdus(seq, TCP_ACK, buf, n);
	seq += n;
	cr_assert_eq(bells(&slot), 0);
	cr_assert_eq(slots[0].wake_seq, seq);

	/* an FPDU cut across packets is iwxd's too */
	slots[0].lazy = 1;
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 1000);
	send_fpdus(seq, TCP_ACK, buf, 500);
	cr_assert_eq(bells(&slot), 1);
	cr_assert_eq(slots[0].wake_seq, seq + 500);
	slots[0].lazy = 1;
	send_fpdus(seq + 500, TCP_ACK, buf + 500, n - 500);
	cr_assert_eq(bells(&slot), 1, "its rest as well");
	cr_assert_eq(slots[0].wake_seq, seq + n);
	cr_assert_eq(slots[0].c.bells, 3);
}

/*
 * The last segment of a Read Response completes a Read: left to iwxd, as every message's
 * last, and iwxd rung for it; the packet holds nothing else for iwxd, so the bell says
 * that it may stay lazy (it reads what TCP holds, without leaving its low-water mark).
 */
TEST_BOTH(fastpath_bpf, the_end_of_a_read_response_rings)
{
	uint8_t buf[2048];
	size_t n;
	int slot = -1;

	publish(STAG, PD, IWX_ACCESS_LOCAL_WRITE, BASE_TO, REGION_LEN);
	slots[0].lazy = 1;
	slots[0].wake_seq = rcv_nxt;
	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_READ_RESP, STAG, BASE_TO, data, 1000);
	mark_last(buf);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].c.placed_fpdus, 0);
	cr_assert_eq(skipped(IWX_FP_SKIP_LAST), 1);
	cr_assert_eq(bells(&slot), 1);
	cr_assert_eq((uint32_t)slot, 0 | IWX_FP_BELL_STAY, "slot 0: iwxd may stay lazy");
	cr_assert_eq(slots[0].wake_seq, rcv_nxt + n);
}

/*
 * A Write's last segment (a program may poll its last byte) rings too: placed FPDUs
 * before it in the packet leave the bell's STAY; a Send beside it takes it away.
 */
TEST_BOTH(fastpath_bpf, the_end_of_a_write_rings_and_iwxd_may_stay_lazy)
{
	uint8_t buf[2048];
	size_t n, m;
	int slot = -1;

	slots[0].lazy = 1;
	slots[0].wake_seq = rcv_nxt;
	in_flight(0);
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 500);
	n += fpdu_tagged(buf + n, IWX_OP_WRITE, STAG, BASE_TO + 500, data + 500, 500);
	mark_last(buf + n / 2);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(slots[0].c.placed_fpdus, 1, "the Write's middle");
	cr_assert_eq(skipped(IWX_FP_SKIP_LAST), 1);
	cr_assert_eq(bells(&slot), 1, "its end rings");
	cr_assert_eq((uint32_t)slot, 0 | IWX_FP_BELL_STAY, "slot 0: iwxd may stay lazy");
	cr_assert_eq(slots[0].wake_seq, rcv_nxt + n);

	/* the next Write's end with a Send behind it: iwxd must read the Send */
	slots[0].lazy = 1;
	m = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO + 1000, data, 500);
	m += fpdu_tagged(buf + m, IWX_OP_WRITE, STAG, BASE_TO + 1500, data + 500, 500);
	mark_last(buf + m / 2);
	m += fpdu_send(buf + m, IWX_OP_SEND, 0, 100);
	send_fpdus(rcv_nxt + n, TCP_ACK, buf, m);
	cr_assert_eq(bells(&slot), 1);
	cr_assert_eq((uint32_t)slot, 0, "slot 0: iwxd reads what follows");
	cr_assert_eq(slots[0].wake_seq, rcv_nxt + n + m);
}

/*
 * A message's first segment, left to iwxd, does not wake it: it waits for iwxd's next
 * read like the placed FPDUs behind it. Unless it is also the message's last: a Read
 * Response's completes its Read, and a program may poll a Write's last byte.
 */
TEST_BOTH(fastpath_bpf, a_first_segment_rings_only_where_its_message_ends)
{
	uint8_t buf[2048];
	size_t n;
	int slot = -1;

	publish(STAG, PD, IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_LOCAL_WRITE, BASE_TO, REGION_LEN);
	slots[0].lazy = 1;
	slots[0].wake_seq = rcv_nxt;
	n = fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 1000);
	send_fpdus(rcv_nxt, TCP_ACK, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_FIRST), 1);
	cr_assert_eq(bells(&slot), 0, "a Write's first segment: iwxd sleeps on");
	cr_assert_eq(slots[0].lazy, 1);
	cr_assert_eq(slots[0].wake_seq, rcv_nxt);

	/* a Read Response of one segment, its first and last */
	slots[0].cut.valid = 0;
	fpdu_tagged(buf, IWX_OP_READ_RESP, STAG, BASE_TO, data, 1000);
	mark_last(buf);
	send_fpdus(rcv_nxt + n, TCP_ACK, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_FIRST), 2);
	cr_assert_eq(bells(&slot), 1, "the Read completes with it");
	cr_assert_eq((uint32_t)slot, 0 | IWX_FP_BELL_STAY, "slot 0: iwxd may stay lazy");
	cr_assert_eq(slots[0].wake_seq, rcv_nxt + 2 * n);

	/* a Write of one segment, its first and last */
	slots[0].lazy = 1;
	fpdu_tagged(buf, IWX_OP_WRITE, STAG, BASE_TO, data, 1000);
	mark_last(buf);
	send_fpdus(rcv_nxt + 2 * n, TCP_ACK, buf, n);
	cr_assert_eq(skipped(IWX_FP_SKIP_FIRST), 3);
	cr_assert_eq(bells(&slot), 1, "its last byte may be polled");
	cr_assert_eq((uint32_t)slot, 0 | IWX_FP_BELL_STAY, "slot 0: iwxd may stay lazy");
	cr_assert_eq(slots[0].wake_seq, rcv_nxt + 3 * n);
}

/* ------------------------------------------------------------------- markers */

#define LO_IFINDEX	1	/* lo, where BPF_PROG_TEST_RUN's packets arrive, in any netns */

static struct iwx_mpa_tx peer;	/* the peer's framing (CRC, markers) and stream position */
static uint32_t mark_base;	/* the TCP sequence number of stream position 0 */

/* What the peer sent, stream positions [start, end) (the peer framed the FPDUs in it). */
static struct {
	uint8_t		b[8192];
	uint32_t	start, end;
} wire;

/*
 * Markers in what the connection receives, as iwxd hands it over: the stream's position
 * pos is at rcv_nxt, where the peer sends its next FPDU.
 */
static void with_markers(uint32_t pos)
{
	int fd = bpf_map__fd(skel->maps.iwx_fp_conns);
	struct iwx_fp_conn slot;

	mark_base = rcv_nxt - pos;
	cr_assert_eq(bpf_map_lookup_elem(fd, &key, &slot), 0);
	slot.markers = 1;
	slot.mark_base = mark_base;
	cr_assert_eq(bpf_map_update_elem(fd, &key, &slot, 0), 0);
	peer = (struct iwx_mpa_tx){ .crc = true, .markers = true, .pos = pos };
	wire.start = wire.end = pos;
}

static uint8_t *wire_at(uint32_t pos)
{
	return wire.b + (pos - wire.start);
}

/* The peer sends a Write of len bytes of d to base + to: the stream position of its FPDU. */
static uint32_t wire_write(uint64_t to, const uint8_t *d, uint32_t len)
{
	uint32_t at = wire.end;
	uint8_t head[16];
	ssize_t n;

	tagged_head(head, IWX_OP_WRITE, STAG, BASE_TO + to, len);
	n = iwx_mpa_fpdu_build(&peer, wire_at(at), sizeof(wire.b) - (at - wire.start),
			       head + IWX_MPA_HDR_LEN, IWX_DDP_TAGGED_HDR_LEN, d, len);
	cr_assert_gt(n, 0);
	wire.end = peer.pos;
	return at;
}

/* Stream positions [from, to) in one packet. */
static void send_wire(uint32_t from, uint32_t to)
{
	send_fpdus(mark_base + from, TCP_ACK, wire_at(from), to - from);
}

/* The test's own premise: the marker at pos points fpduptr bytes back. */
static void assert_marker(uint32_t pos, uint16_t fpduptr)
{
	uint8_t m[4] = { 0, 0, fpduptr >> 8, fpduptr };

	cr_assert_eq(pos % IWX_MPA_MARKER_INTERVAL, 0);
	cr_assert_eq(memcmp(wire_at(pos), m, 4), 0, "the marker at %u points %u back", pos,
		     fpduptr);
}

/*
 * Record i: the Write of len bytes to to at stream position at. Its header and its
 * trailer (pad, and the CRC the peer sent) are as they would be without markers.
 */
static void assert_record(uint32_t i, uint32_t at, uint64_t to, uint32_t len)
{
	const struct iwx_fp_rec *r = &slots[0].ring[i];
	struct iwx_mpa_tx t = { .markers = true, .pos = at };
	uint32_t ulen = IWX_DDP_TAGGED_HDR_LEN + len, pad = iwx_mpa_pad_len(ulen);
	uint8_t head[16], trailer[7] = { 0 };

	tagged_head(head, IWX_OP_WRITE, STAG, BASE_TO + to, len);
	memcpy(trailer + pad, wire_at(at + iwx_mpa_fpdu_len(&t, ulen) - IWX_MPA_CRC_LEN), 4);
	cr_assert_eq(r->seq, mark_base + at, "record %u: at its FPDU's start", i);
	cr_assert_eq(memcmp(r->hdr, head, sizeof(head)), 0, "record %u: the header", i);
	cr_assert_eq(r->trailer_len, pad + IWX_MPA_CRC_LEN);
	cr_assert_eq(memcmp(r->trailer, trailer, pad + IWX_MPA_CRC_LEN), 0, "record %u: pad, CRC",
		     i);
}

/* The program keeps counters for the interface only once iwxd has put it in the map. */
static void watch_iface(void)
{
	size_t size = sizeof(struct iwx_fp_counters) * libbpf_num_possible_cpus();
	struct iwx_fp_counters *zero = calloc(1, size);
	uint32_t ifindex = LO_IFINDEX;

	cr_assert_not_null(zero);
	cr_assert_eq(bpf_map_update_elem(bpf_map__fd(skel->maps.iwx_fp_ifaces), &ifindex, zero,
					 BPF_NOEXIST), 0);
	free(zero);
}

/* The interface's counters, summed over its CPUs. */
static struct iwx_fp_counters iface(void)
{
	int ncpu = libbpf_num_possible_cpus();
	struct iwx_fp_counters sum = { 0 }, *c = calloc(ncpu, sizeof(*c));
	uint32_t ifindex = LO_IFINDEX;

	cr_assert_not_null(c);
	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.iwx_fp_ifaces), &ifindex, c), 0);
	for (int i = 0; i < ncpu; i++)
		for (size_t k = 0; k < sizeof(sum) / sizeof(uint64_t); k++)
			((uint64_t *)&sum)[k] += ((uint64_t *)&c[i])[k];
	free(c);
	return sum;
}

/*
 * Two Writes in order. The first starts 4 bytes before a 512-byte mark, so a marker stands
 * inside its DDP header, and one right before its CRC; it crosses a 4 KiB element of the
 * memory. The second has a pad byte. Both land byte-exact; their records are without markers.
 */
TEST_BOTH(fastpath_bpf, markers_are_left_out_of_what_is_placed)
{
	uint32_t a, b;

	fill_pattern(data, sizeof(data), 7);
	with_markers(IWX_MPA_MARKER_INTERVAL - 4);
	watch_iface();
	in_flight(2000);
	a = wire_write(2000, data, 1512);
	b = wire_write(2000 + 1512, data + 1512, 999);
	assert_marker(a + 4, 4);		/* in the DDP header, before the STag */
	assert_marker(a + 1028, 1028);		/* in the payload */
	assert_marker(b - 8, b - 8 - a);	/* right before the CRC */
	assert_marker(b + 504, 504);
	send_wire(a, wire.end);
	cr_assert_eq(slots[0].c.placed_fpdus, 2);
	cr_assert_eq(slots[0].c.placed_bytes, 1512 + 999);
	cr_assert_eq(memcmp(mem + REGION_OFF + 2000, data, 1512 + 999), 0, "no marker in it");
	assert_guards(REGION_OFF + 2000, REGION_OFF + 2000 + 1512 + 999);
	cr_assert_eq(slots[0].head, 2);
	assert_record(0, a, 2000, 1512);
	assert_record(1, b, 2000 + 1512, 999);
	for (int why = 0; why < IWX_FP_SKIP_N; why++)
		cr_assert_eq(skipped(why), 0, "nothing skipped (reason %d)", why);
	cr_assert_eq(slots[0].c.ahead, 0, "in order");
	cr_assert_eq(iface().placed_fpdus, 2);
	cr_assert_eq(iface().ahead, 0);
}

/*
 * A packet ahead of rcv_nxt, after a gap: its markers say where its FPDU is, and it is
 * placed and counted ahead. The same bytes in order (the markers fall alike 2048 bytes
 * before) are placed, not ahead.
 */
TEST_BOTH(fastpath_bpf, a_packet_ahead_of_tcp_is_placed_by_its_markers)
{
	uint32_t a, b, n;

	fill_pattern(data, sizeof(data), 8);
	with_markers(0);
	watch_iface();
	in_flight(100);
	a = wire_write(100, data, 1200);
	wire.end = peer.pos = 2048;	/* what the gap holds does not matter */
	b = wire_write(100, data, 1200);
	n = wire.end - b;
	cr_assert_eq(memcmp(wire_at(a), wire_at(b), n), 0, "the same bytes at either position");
	send_wire(b, b + n);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(memcmp(mem + REGION_OFF + 100, data, 1200), 0);
	assert_guards(REGION_OFF + 100, REGION_OFF + 1300);
	assert_record(0, b, 100, 1200);
	cr_assert_eq(slots[0].c.ahead, 1);
	cr_assert_eq(iface().ahead, 1);

	memset(mem + REGION_OFF + 100, GUARD, 1200);
	send_wire(a, a + n);
	cr_assert_eq(slots[0].c.placed_fpdus, 2);
	cr_assert_eq(memcmp(mem + REGION_OFF + 100, data, 1200), 0, "placed again");
	assert_record(1, a, 100, 1200);
	cr_assert_eq(slots[0].c.ahead, 1, "in order: not ahead");
	cr_assert_eq(iface().ahead, 1);
	cr_assert_eq(iface().placed_fpdus, 2);
}

/*
 * A packet that starts inside an FPDU: the marker in that FPDU points before the packet,
 * the next marker at the next FPDU's header. The first is not placed, the next one is.
 */
TEST_BOTH(fastpath_bpf, a_packet_from_inside_an_fpdu_places_the_next)
{
	uint32_t b;

	fill_pattern(data, sizeof(data), 9);
	with_markers(0);
	in_flight(0);
	wire_write(0, data, 1500);
	b = wire_write(1500, data + 1500, 600);
	assert_marker(1024, 1020);	/* before the packet's start, 600 */
	assert_marker(b + 4, 4);
	send_wire(600, wire.end);
	cr_assert_eq(slots[0].c.placed_fpdus, 1);
	cr_assert_eq(slots[0].head, 1);
	assert_record(0, b, 1500, 600);
	cr_assert_eq(memcmp(mem + REGION_OFF + 1500, data + 1500, 600), 0);
	/* none of the first FPDU's bytes */
	assert_guards(REGION_OFF + 1500, REGION_OFF + 2100);
}

/* A marker inside an FPDU with a wrong FPDUPTR, or reserved bits set: none of it is placed. */
TEST_BOTH(fastpath_bpf, a_marker_that_does_not_point_at_its_fpdu_places_nothing)
{
	uint32_t a, b;

	fill_pattern(data, sizeof(data), 10);
	with_markers(0);
	in_flight(0);
	a = wire_write(0, data, 1500);
	b = wire_write(1500, data, 600);
	assert_marker(1024, 1020);
	wire_at(1024)[3] += 4;	/* 4 bytes too far back */
	send_wire(a, b);
	assert_nothing_placed(IWX_FP_SKIP_MARKER);

	assert_marker(2048, 2048 - b);
	wire_at(2048)[1] = 1;
	send_wire(b, wire.end);
	cr_assert_eq(skipped(IWX_FP_SKIP_MARKER), 2);
	cr_assert_eq(slots[0].head, 0);
	assert_guards(0, 0);
}

/*
 * Ahead of a gap, the message in order may go on in the packet, but no further than the
 * gap's bytes could carry it: a tagged offset before where it goes on, or past what the
 * gap holds, is left to iwxd.
 */
TEST_BOTH(fastpath_bpf, ahead_of_a_gap_only_where_the_message_can_have_got_to_is_placed)
{
	uint32_t b, c, d;

	fill_pattern(data, sizeof(data), 15);
	with_markers(0);
	in_flight(1000);
	wire_write(1000, data, 1200);	/* the gap: not sent */
	b = wire_write(500, data, 600);
	c = wire_write(1000 + 2 * b, data, 600);	/* at c, no more than c bytes came */
	d = wire_write(1000 + c, data, 600);		/* d - c bytes short of that */
	/* each in a packet of its own (a marker in each points at it), ahead of the gap */
	send_wire(b, c);
	send_wire(c, d);
	send_wire(d, wire.end);
	cr_assert_eq(skipped(IWX_FP_SKIP_FIRST), 2, "before the message, and past the gap");
	cr_assert_eq(slots[0].c.placed_fpdus, 1, "the third: within what the gap holds");
	cr_assert_eq(slots[0].c.ahead, 1);
	assert_record(0, d, 1000 + c, 600);
	cr_assert_eq(memcmp(mem + REGION_OFF + 1000 + c, data, 600), 0);
	assert_guards(REGION_OFF + 1000 + c, REGION_OFF + 1000 + c + 600);
}

/* No marker in the packet that points at an FPDU starting in it: nothing to place from. */
TEST_BOTH(fastpath_bpf, a_packet_without_a_marker_that_tells_is_unsync)
{
	fill_pattern(data, sizeof(data), 11);
	with_markers(0);
	wire_write(0, data, 3000);
	assert_marker(1024, 1020);
	assert_marker(1536, 1532);
	send_wire(600, 2000);
	assert_nothing_placed(IWX_FP_SKIP_UNSYNC);
	/* no marker at all */
	send_wire(700, 1000);
	cr_assert_eq(skipped(IWX_FP_SKIP_UNSYNC), 2);
	cr_assert_eq(slots[0].head, 0);
	assert_guards(0, 0);
}

/*
 * An FPDU that starts on a 512-byte mark is led by that marker (FPDUPTR 0), its header
 * after it: placed, its record at the marker. Found so in a packet's middle as well.
 */
TEST_BOTH(fastpath_bpf, an_fpdu_on_a_mark_is_led_by_its_marker)
{
	uint32_t a, b;

	fill_pattern(data, sizeof(data), 12);
	with_markers(0);
	in_flight(0);
	a = wire_write(0, data, 996);
	b = wire_write(996, data + 996, 700);
	cr_assert_eq(b, 1024);
	assert_marker(a, 0);
	assert_marker(b, 0);
	cr_assert_eq(wire_at(b + 4)[0] << 8 | wire_at(b + 4)[1], IWX_DDP_TAGGED_HDR_LEN + 700,
		     "ULPDU_LENGTH after the marker");
	assert_marker(b + 512, 508);
	send_wire(a, wire.end);
	cr_assert_eq(slots[0].c.placed_fpdus, 2);
	cr_assert_eq(memcmp(mem + REGION_OFF, data, 996 + 700), 0);
	assert_guards(REGION_OFF, REGION_OFF + 996 + 700);
	assert_record(0, a, 0, 996);
	assert_record(1, b, 996, 700);

	/*
	 * From inside the first, the stream in order back at its start (as if what came above
	 * had been ahead of it): the marker that leads the second is where it starts
	 */
	memset(mem + REGION_OFF + 996, GUARD, 700);
	slots[0].next_seq = mark_base + a;
	in_flight(0);
	send_wire(600, wire.end);
	cr_assert_eq(slots[0].c.placed_fpdus, 3);
	cr_assert_eq(memcmp(mem + REGION_OFF + 996, data + 996, 700), 0);
	assert_record(2, b, 996, 700);

	/*
	 * From right after that marker: the second's header is first in the packet, but its
	 * marker is not, and its record must start there: not placed (the next marker points
	 * back at the header, which follows a mark: a marker before the packet led it).
	 */
	memset(mem + REGION_OFF + 996, GUARD, 700);
	send_wire(b + 4, wire.end);
	cr_assert_eq(slots[0].c.placed_fpdus, 3, "an FPDU without its leading marker placed");
	cr_assert_eq(skipped(IWX_FP_SKIP_UNSYNC), 1);
	assert_guards(REGION_OFF, REGION_OFF + 996);
}
