// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the fast path's walk over a packet (bpf/fastpath.bpf.c), which
 * writes into registered memory: both programs, iwx_tc and iwx_xdp, run through
 * BPF_PROG_TEST_RUN on packets built from the input, for a real TCP connection between
 * two namespaces (tests/support/fastpath_rig.h), against STags and memories set up once.
 * At XDP a packet may pass a page: the test run puts the rest in fragments, as a NIC's
 * multi-buffer frames come (at TC it takes one linear page: GRO's packets are not reached).
 *
 * Input: a connection's state, then up to MAX_PACKETS packets of FPDUs
 *   state (4 bytes): hook, markers, the slot's state, whether a message is in flight (the
 *     cut) and to which STag and offset, a Send with Invalidate held, the ring nearly
 *     full; the stream position where the first packet starts (markers fall by it)
 *   each packet: how its sequence number is chosen (where the stream goes on, a resend,
 *     a jump), what TCP would refuse in it (flags, ACK, timestamp, a VLAN tag, one header
 *     byte changed), then its FPDUs, each built by the MPA encoder (lib/proto/mpa.c) from
 *     a descriptor: kind (Write, Read Response, Send, raw bytes), STag (one of the table
 *     or any), tagged offset (going on from the last, or any), payload length, its last
 *     flag, and a change to ULPDU_LENGTH after framing.
 * The programs' view stays coverage libFuzzer can see: each packet's counters (skip
 * reasons, placed, proposals, ...) and the slot's state after it are extra counters.
 *
 * What must hold, for every packet: the program passes it on; every record it writes
 * names a tagged FPDU of that packet whose STag is valid, of the connection's protection
 * domain, allows the operation (remote write for a Write, local write for a Read
 * Response), and holds [TO, TO + len); the record's header is the packet's. And after
 * each input, both memories are exactly what the records say: guard bytes everywhere
 * else, and at each record's place its payload as the packet carried it (markers left
 * out). Nothing is written that no record accounts for.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <endian.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iwx/access.h>

#include "fastpath_maps.h"
#include "proto/mpa.h"
#include "proto/wire.h"

#include "fastpath_rig.h"
#include "fuzz_check.h"
#include "fuzz_input.h"

#define MAX_PACKETS	4
#define MAX_FPDUS	12		/* in a packet */
#define MAX_PAYLOAD	3400		/* of a packet at TC: it fits BPF_PROG_TEST_RUN's page */
#define MAX_PAYLOAD_XDP	12000		/* at XDP: the rest of the page's worth in fragments */
#define GUARD		0xa5
#define PD		7u
#define TCPF_ACK	0x10

/* The memories: BPF arrays of 4 KiB elements, as iwxd registers them. */
static const uint32_t mem_elems[2] = { 4, 2 };
static uint8_t *mem[2], *want[2];

/* The STags iwxd would have published: each right, or wrong in one way. */
static const struct stag {
	uint32_t	stag, pd, mem;
	uint8_t		valid, access;
	uint64_t	base_to, len, off;	/* off: the region's first byte in its memory */
} stags[] = {
	{ 0x000100, PD, 0, 1, IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_LOCAL_WRITE, 0x10000, 8192, 1000 },
	{ 0x000201, PD, 0, 1, IWX_ACCESS_LOCAL_WRITE, 0, 3000, 9500 },	/* a Read's sink only */
	/* the last bytes of the other memory, the region's end at the tagged offsets' */
	{ 0x000302, PD, 1, 1, IWX_ACCESS_REMOTE_WRITE, 0ull - 8000, 8000, 192 },
	{ 0x000403, PD + 1, 0, 1, IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_LOCAL_WRITE, 0, 1000, 0 },
	{ 0x000504, PD, 0, 0, IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_LOCAL_WRITE, 0, 4096, 12000 },
	{ 0x000605, PD, 7, 1, IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_LOCAL_WRITE, 0, 4096, 0 },
	{ 0x000706, PD, 0, 1, IWX_ACCESS_REMOTE_READ, 0, 4096, 0 },
};
#define NSTAGS	(sizeof(stags) / sizeof(stags[0]))

static struct netns_pair ns;
static struct fastpath_bpf *skel;
static struct fp_rig_conn conn;
static struct iwx_fp_slot *slots;
static size_t slots_len;

/* What the programs did, as libFuzzer's coverage: per hook, markers, and start state. */
#define EVENTS	(IWX_FP_SKIP_N + 8 + 4 + 1)
/* XDP's test run: the frame's bytes before its fragments (a page less XDP's headroom, 256,
   and the fragments' list, 320) */
#define LINEAR	3520
__attribute__((section("__libfuzzer_extra_counters")))
static uint8_t seen[2][2][4][EVENTS];

/* FUZZ_FASTPATH_STATS=1: what the programs did over the run, printed at its end */
static uint64_t total[EVENTS];

static void teardown(void)
{
	static const char *const names[] = {
#define IWX_FP_SKIP_NAME(n, name, why) "skipped " name,
		IWX_FP_SKIPS(IWX_FP_SKIP_NAME)
#undef IWX_FP_SKIP_NAME
		"placed", "-", "proposals", "confirmed", "behind", "stopped", "bells", "ahead",
		"ended UNSYNC", "ended PROPOSED", "ended SYNC", "ended STOPPED",
		"placed from fragments",
	};

	if (getenv("FUZZ_FASTPATH_STATS"))
		for (int i = 0; i < EVENTS; i++)
			if (total[i])
				fprintf(stderr, "%-20s %llu\n", names[i], (unsigned long long)total[i]);
	netns_pair_teardown(&ns);
}

static void publish(void)
{
	int fd = bpf_map__fd(skel->maps.iwx_fp_stags);

	for (size_t i = 0; i < NSTAGS; i++) {
		const struct stag *s = &stags[i];
		struct iwx_fp_stag st = {
			.desc = { .stag = s->stag, .pd = s->pd, .valid = s->valid,
				  .access = s->access, .base_to = s->base_to, .len = s->len },
			.mem = s->mem, .off = s->off,
		};

		CHECK(!bpf_map_update_elem(fd, &s->stag, &st, 0));
	}
}

/* Namespaces, the programs, the maps and the connection, once; then this thread in b. */
static void setup(void)
{
	char path[64];
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "fuzz_fastpath: needs root (namespaces, BPF)\n");
		exit(1);
	}
	CHECK(!netns_pair_setup(&ns));
	atexit(teardown);
	skel = fastpath_bpf__open();
	CHECK(skel);
	bpf_program__set_autoload(skel->progs.iwx_xdp, true);
	bpf_map__set_max_entries(skel->maps.iwx_fp_cpus, libbpf_num_possible_cpus());
	CHECK(!fastpath_bpf__load(skel));
	for (int i = 0; i < 2; i++) {
		CHECK(fp_rig_memory(skel, i, mem_elems[i], &mem[i]) >= 0);
		want[i] = malloc(mem_elems[i] * 4096);
		CHECK(want[i]);
	}
	slots = fp_rig_slots(skel, &slots_len);
	CHECK(slots);
	publish();
	CHECK(!fp_rig_connect(&ns, skel, false, &conn));
	snprintf(path, sizeof(path), "/run/netns/%s", ns.b);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && !setns(fd, CLONE_NEWNET));
	close(fd);
}

/* ------------------------------------------------------------------ the input */

/* The connection's state for one input, and the peer's stream. */
struct run {
	bool			xdp, markers;
	uint32_t		state;
	uint32_t		mark_base;	/* TCP sequence number of stream position 0 */
	struct iwx_mpa_tx	tx;		/* the peer's framing and stream position */
	uint32_t		stag;		/* the last tagged FPDU's, and where it ended */
	uint64_t		to;
};

static const uint32_t states[4] = { IWX_FP_SYNC, IWX_FP_UNSYNC, IWX_FP_PROPOSED, IWX_FP_STOPPED };

static void set_conn(const struct run *r)
{
	struct iwx_fp_conn c = { .cookie = conn.cookie, .slot = 0, .pd = PD, .markers = r->markers,
				 .mark_base = r->mark_base };

	CHECK(!bpf_map_update_elem(bpf_map__fd(skel->maps.iwx_fp_conns), &conn.key, &c, 0));
}

/* The slot as iwxd leaves it between packets: state byte b0, cut from b1..b3. */
static void set_slot(struct run *r, uint8_t b0, uint8_t b1, uint16_t cut_to)
{
	struct iwx_fp_slot *s = &slots[0];
	uint32_t head = (uint32_t)b1 << 4;

	memset(s, 0, offsetof(struct iwx_fp_slot, ring));
	s->state = r->state;
	s->next_seq = conn.rcv_nxt;
	s->mark_seq = conn.rcv_nxt;
	s->head = head;
	s->tail = b0 & 0x40 ? head - (IWX_FP_RING - 2) : head;	/* the ring nearly full */
	s->lazy = !!(b0 & 0x80);
	if (b0 & 0x20) {	/* a Send with Invalidate waits for iwxd, a little ahead */
		s->held = 1;
		s->hold_seq = conn.rcv_nxt + (b1 & 0xf) * 64;
	}
	if (b0 & 0x04) {	/* a message in flight */
		r->stag = stags[b1 % NSTAGS].stag;
		r->to = stags[b1 % NSTAGS].base_to + cut_to;
		s->cut = (struct iwx_fp_cut){ .to = r->to, .stag = r->stag, .valid = 1,
					      .slack = cut_to & 0x7 ? 0 : cut_to >> 3 };
	}
}

/* ------------------------------------------------------------- the packets */

/*
 * One FPDU from its descriptor to out (cap bytes): its length, 0 when none fits. Payload
 * bytes count on from *fill, so each placed byte says where it came from.
 */
static size_t fpdu(struct run *r, struct fuzz_in *in, uint8_t *out, size_t cap, uint8_t *fill)
{
	uint8_t d = fuzz_take(in, 1), kind = d & 3, hdr[IWX_DDP_UNTAGGED_HDR_LEN + 4] = { 0 };
	uint32_t len = fuzz_take(in, 2) % 2048, hdr_len = IWX_DDP_TAGGED_HDR_LEN;
	uint8_t payload[2048];
	struct iwx_mpa_tx before = r->tx;
	ssize_t n;

	if (kind == 3) {	/* raw bytes, framed by nothing */
		len = len % 256;
		if (len > cap || len > in->n)
			return 0;
		memcpy(out, in->p, len);
		in->p += len;
		in->n -= len;
		r->tx.pos += len;
		return len;
	}
	for (uint32_t i = 0; i < len; i++)
		payload[i] = (*fill)++;
	if (kind < 2) {
		struct iwx_ddp_tagged_hdr *h = (void *)hdr;
		uint8_t which = (d >> 2) & 7;

		if (!(d & 0x20)) {	/* where the message goes on, or one of the table */
			r->stag = which < NSTAGS ? stags[which].stag : fuzz_take(in, 4);
			r->to = (which < NSTAGS ? stags[which].base_to : 0) + (int16_t)fuzz_take(in, 2);
		}
		h->ddp_ctrl = IWX_DDP_FLAG_TAGGED | IWX_DDP_VERSION | (d & 0x40 ? IWX_DDP_FLAG_LAST : 0);
		h->rdmap_ctrl = IWX_RDMAP_VERSION << IWX_RDMAP_VERSION_SHIFT |
				(kind ? IWX_OP_READ_RESP : IWX_OP_WRITE);
		h->stag = htobe32(r->stag);
		h->to = htobe64(r->to);
		r->to += len;
	} else {
		struct iwx_ddp_untagged_hdr *h = (void *)hdr;
		uint8_t op = (d >> 2) & 7;

		h->ddp_ctrl = IWX_DDP_VERSION | (d & 0x40 ? IWX_DDP_FLAG_LAST : 0);
		h->rdmap_ctrl = IWX_RDMAP_VERSION << IWX_RDMAP_VERSION_SHIFT | op;
		h->inval_stag = htobe32(stags[d >> 5 & 3].stag);
		h->msn = htobe32(1);
		hdr_len = IWX_DDP_UNTAGGED_HDR_LEN;
	}
	n = iwx_mpa_fpdu_build(&r->tx, out, cap, hdr, hdr_len, payload, len);
	if (n <= 0) {
		r->tx = before;
		return 0;
	}
	if (d & 0x80) {		/* ULPDU_LENGTH changed after framing: header byte 0 or 1 */
		uint32_t at = r->markers && before.pos % IWX_MPA_MARKER_INTERVAL == 0 ?
				      IWX_MPA_MARKER_LEN : 0;
		int8_t delta = fuzz_take(in, 1);

		out[at + (delta & 1)] += delta >> 1;
	}
	return n;
}

/* A record's payload byte i (counted without markers, after the 16-byte header) in p. */
static uint32_t rec_byte(const struct run *r, uint32_t fpdu_off, uint32_t seq, uint32_t i)
{
	return fpdu_off + (r->markers ? iwx_mpa_marked_off(seq - r->mark_base, i) : i);
}

static const struct stag *stag_of(uint32_t stag)
{
	for (size_t i = 0; i < NSTAGS; i++)
		if (stags[i].stag == stag)
			return &stags[i];
	return NULL;
}

/*
 * Each record the packet (TCP payload p, plen bytes from sequence number seq, hlen bytes
 * into the frame) left: sound, and its payload put where the memories should now hold
 * it. The records whose payload ends in XDP's fragments.
 */
static uint32_t check_records(const struct run *r, uint32_t from, uint32_t to, const uint8_t *p,
			      uint32_t plen, uint32_t seq, uint32_t hlen)
{
	uint32_t in_frags = 0;

	CHECK(to - from <= plen / 20);	/* the smallest tagged FPDU: 20 bytes */
	for (uint32_t k = from; k != to; k++) {
		const struct iwx_fp_rec *rec = &slots[0].ring[k % IWX_FP_RING];
		uint32_t off = rec->seq - seq, ulen = rec->hdr[0] << 8 | rec->hdr[1], len;
		const struct iwx_ddp_tagged_hdr *h = (const void *)(rec->hdr + IWX_MPA_HDR_LEN);
		uint8_t op = h->rdmap_ctrl & IWX_RDMAP_OPCODE_MASK;
		const struct stag *s = stag_of(be32toh(h->stag));
		uint64_t at = be64toh(h->to);

		CHECK(off < plen);
		CHECK(h->ddp_ctrl & IWX_DDP_FLAG_TAGGED);
		CHECK(op == IWX_OP_WRITE || op == IWX_OP_READ_RESP);
		CHECK(ulen > IWX_DDP_TAGGED_HDR_LEN);
		len = ulen - IWX_DDP_TAGGED_HDR_LEN;
		CHECK(s && s->valid && s->pd == PD && s->mem < 2);
		CHECK(s->access & (op == IWX_OP_WRITE ? IWX_ACCESS_REMOTE_WRITE : IWX_ACCESS_LOCAL_WRITE));
		CHECK(at >= s->base_to && at - s->base_to <= s->len && len <= s->len - (at - s->base_to));
		CHECK(rec_byte(r, off, rec->seq, IWX_MPA_HDR_LEN + IWX_DDP_TAGGED_HDR_LEN + len - 1) < plen);
		for (uint32_t i = 0; i < IWX_MPA_HDR_LEN + IWX_DDP_TAGGED_HDR_LEN; i++)
			CHECK(rec->hdr[i] == p[rec_byte(r, off, rec->seq, i)]);
		for (uint32_t i = 0; i < len; i++)
			want[s->mem][s->off + (at - s->base_to) + i] =
				p[rec_byte(r, off, rec->seq, IWX_MPA_HDR_LEN + IWX_DDP_TAGGED_HDR_LEN + i)];
		in_frags += r->xdp && hlen + rec_byte(r, off, rec->seq, IWX_MPA_HDR_LEN +
						IWX_DDP_TAGGED_HDR_LEN + len - 1) >= LINEAR;
	}
	return in_frags;
}

/* The packet's counters, and the slot's state after it, as coverage. */
static void count(const struct run *r, const struct iwx_fp_counters *was, uint32_t start,
		  uint32_t in_frags)
{
	const struct iwx_fp_counters *c = &slots[0].c;
	uint8_t *e = seen[r->xdp][r->markers][start];
	const __u64 *now = &c->placed_fpdus, *then = &was->placed_fpdus;

	for (int i = 0; i < IWX_FP_SKIP_N; i++)
		if (c->skipped[i] != was->skipped[i]) {
			e[i] += c->skipped[i] - was->skipped[i];
			total[i] += c->skipped[i] - was->skipped[i];
		}
	for (int i = 0; i < 8; i++)	/* placed_fpdus .. ahead, but placed_bytes */
		if (i != 1 && now[i] != then[i]) {
			e[IWX_FP_SKIP_N + i] += now[i] - then[i];
			total[IWX_FP_SKIP_N + i] += now[i] - then[i];
		}
	e[IWX_FP_SKIP_N + 8 + (slots[0].state & 3)]++;
	total[IWX_FP_SKIP_N + 8 + (slots[0].state & 3)]++;
	e[EVENTS - 1] += in_frags;
	total[EVENTS - 1] += in_frags;
}

/* One packet from the input: false when the input has ended. */
static bool packet(struct run *r, struct fuzz_in *in, uint8_t *fill)
{
	static uint8_t payload[MAX_PAYLOAD_XDP], frame[FP_RIG_XDP_FRAME_MAX];
	struct fp_rig_seg s = { .ack = conn.ack, .flags = TCPF_ACK, .ts = true, .tsval = conn.tsval };
	struct bpf_program *prog = r->xdp ? skel->progs.iwx_xdp : skel->progs.iwx_tc;
	uint8_t how = fuzz_take(in, 1), nf = fuzz_take(in, 1) % MAX_FPDUS + 1;
	uint32_t start = r->tx.pos, plen = 0, from = slots[0].head, state = slots[0].state & 3;
	const uint32_t most = r->xdp ? MAX_PAYLOAD_XDP : MAX_PAYLOAD;
	struct iwx_fp_counters was = slots[0].c;
	size_t flen;

	if (!in->n)
		return false;
	switch (how & 3) {
	case 0:	/* where the stream goes on */
		break;
	case 1:	/* a resend: back by up to 4 KiB */
		start -= fuzz_take(in, 2) % 4096;
		break;
	case 2:	/* a jump ahead, over a gap */
		start += fuzz_take(in, 2);
		break;
	case 3:	/* anywhere */
		start = fuzz_take(in, 4);
		break;
	}
	r->tx.pos = start;
	for (int i = 0; i < nf && in->n; i++)
		plen += fpdu(r, in, payload + plen, most - plen, fill);
	if (!plen)
		return in->n > 0;
	s.seq = r->mark_base + start;
	s.vlan = how & 0x04;
	if (how & 0x08)
		s.flags = fuzz_take(in, 1);
	s.ts = !(how & 0x10);
	if (how & 0x20)
		s.tsval -= fuzz_take(in, 2);
	if (how & 0x40)
		s.ack += (int16_t)fuzz_take(in, 2);
	flen = fp_rig_frame(frame, sizeof(frame), &conn.key, &s, payload, plen);
	CHECK(flen);
	if (how & 0x80) {	/* one byte of the headers changed */
		uint8_t at = fuzz_take(in, 1), x = fuzz_take(in, 1);

		frame[at % (flen - plen)] ^= x ? x : 1;
	}
	CHECK(fp_rig_run(prog, frame, flen) == (r->xdp ? 2 /* XDP_PASS */ : -1 /* TC_ACT_UNSPEC */));
	count(r, &was, state, check_records(r, from, slots[0].head, frame + (flen - plen), plen,
					    s.seq, flen - plen));
	return in->n > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct run r = { 0 };
	uint8_t b0, b1, fill = 0;
	uint16_t cut_to;

	if (!skel)
		setup();
	if (size < 4)
		return 0;
	b0 = fuzz_take(&in, 1);
	b1 = fuzz_take(&in, 1);
	cut_to = fuzz_take(&in, 2);
	r.xdp = b0 & 1;
	r.markers = b0 & 2;
	r.state = states[(b0 >> 3) & 3];
	/* where iwxd confirmed the stream: an FPDU's start, 4-aligned as every one is (RFC 5044
	   §4: the pad makes each FPDU a multiple of 4 bytes) */
	r.tx = (struct iwx_mpa_tx){ .crc = true, .markers = r.markers, .pos = fuzz_take(&in, 2) & ~3u };
	r.mark_base = conn.rcv_nxt - r.tx.pos;
	set_conn(&r);
	set_slot(&r, b0, b1, cut_to);
	for (int i = 0; i < 2; i++) {
		memset(mem[i], GUARD, mem_elems[i] * 4096);
		memset(want[i], GUARD, mem_elems[i] * 4096);
	}
	for (int i = 0; i < MAX_PACKETS && packet(&r, &in, &fill); i++)
		;
	for (int i = 0; i < 2; i++)
		for (size_t j = 0; memcmp(mem[i], want[i], mem_elems[i] * 4096) &&
				   j < mem_elems[i] * 4096; j++)
			if (mem[i][j] != want[i][j]) {
				fprintf(stderr, "memory %d byte %zu: %#x, no record puts %#x there\n", i, j,
					mem[i][j], want[i][j]);
				CHECK(!"every byte placed has a record");
			}
	return 0;
}
