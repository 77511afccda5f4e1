// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The fast path: places the payload of RDMA Writes and Read Responses into registered
 * memory as packets arrive, before TCP hands their bytes to anyone (fastpath_maps.h).
 * One parser for two hooks: TC ingress (iwx_tc) and XDP (iwx_xdp) differ only in how
 * the packet is reached (a dynptr over either) and what they know of its checksum.
 * Both pass every packet on unchanged: the fast path only ever adds a copy, and iwxd
 * does whatever it did not.
 *
 * Nothing is placed unless all hold: the connection is iwxd's and its socket is the
 * one the 4-tuple leads to; the packet is one kernel TCP would accept (tcp_refusal:
 * addressed to this host, untagged, a sound IP header, ACK and no RST, SYN or URG, a checksum
 * known to be good, an acceptable ACK and timestamp, an ESTABLISHED socket) and the FPDU
 * lies in the socket's receive window; the FPDU's start is certain and it ends in the
 * packet; no Send with Invalidate before it waits for iwxd; and the checks of
 * proto/ddp_check.h (RFC 5041 §7.1, RFC 5040 §7.2) pass. What the program cannot know
 * (netfilter, IPsec policy, a race with TCP's own state) iwxd learns otherwise: it takes
 * a placed FPDU only once TCP has accepted those very bytes (fastpath_maps.h).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "proto/ddp_check.h"
#include "fastpath_maps.h"
#include "proto/wire.h"

#include "kernel.h"

#define MAX_FPDUS	4096	/* walked in one packet: 64 KiB of the smallest FPDUs (20 bytes) */
#define CSUM_CHUNK	512	/* bytes summed at a time when the program checks a checksum (the most
				   bpf_csum_diff takes) */
#define CSUM_CHUNKS	128	/* ... at most: 64 KiB */
#define CLAIM_TRIES	4096	/* a busy slot is tried this often (a few microseconds) */
/* reads of a payload of up to 64 KiB: the elements it spans, cut at each marker, each
 * taken in at most 9 reads (read_into) */
#define COPY_CHUNKS	(9 * (IWX_FP_COPY_ELEMS + IWX_MPA_MAX_ULPDU / IWX_MPA_MARKER_DATA + 1))
#define MAX_MARKERS	(IWX_MPA_MAX_ULPDU / IWX_MPA_MARKER_DATA + 2)	/* in an FPDU, or a packet */
#define TAGGED_HDR	(IWX_MPA_HDR_LEN + IWX_DDP_TAGGED_HDR_LEN)
/* TCP header byte 13 (RFC 9293 §3.1) */
#define TCPF_URG	0x20
#define TCPF_ACK	0x10
#define TCPF_RST	0x04
#define TCPF_SYN	0x02
#define TCPOPT_EOL	0
#define TCPOPT_NOP	1
#define TCPOPT_TS	8	/* RFC 7323 §3: kind 8, length 10, TSval, TSecr */
#define TCP_OPTS_MAX	40
#define PACKET_HOST	0	/* skb->pkt_type: addressed to this host (linux/if_packet.h) */
/* The Makefile's iwxd_unchecked leaves out the checks TCP makes after iwx_accepted's
 * tracepoint (the ACK, PAWS): its tests see TCP's verdict decide without them. */
#ifdef IWX_FP_TEST_NO_TCP_CHECKS
#define TCP_LATER_CHECKS	0
#else
#define TCP_LATER_CHECKS	1
#endif

/* ------------------------------------------------------------------- maps */

/* 4-tuple -> connection; iwxd fills it when a connection enters full operation. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct iwx_fp_key);
	__type(value, struct iwx_fp_conn);
} iwx_fp_conns SEC(".maps");

/*
 * The connection again, kept with its socket: what iwx_accepted asks of every segment the
 * host's TCP takes, answered at once for a socket iwxd does not follow (no lookup).
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct iwx_fp_conn);
} iwx_fp_socks SEC(".maps");

/* A connection's stream state, records and counters: memory iwxd maps too. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 64);	/* connections followed at once: 129 KiB each */
	__type(key, __u32);
	__type(value, struct iwx_fp_slot);
} iwx_fp_slots SEC(".maps");

/* STag -> the region and where its bytes are. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct iwx_fp_stag);
} iwx_fp_stags SEC(".maps");

/* The memories regions lie in: clients' arenas and shared memory, 4 KiB elements each. */
struct iwx_fp_mem {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__uint(key_size, 4);	/* sizes, no BTF types: libbpf 1.1 cannot size one for an inner map */
	__uint(value_size, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__array(values, struct iwx_fp_mem);
} iwx_fp_mems SEC(".maps");

/* ifindex -> counters of the interface. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct iwx_fp_counters);
} iwx_fp_ifaces SEC(".maps");

/* Per CPU: odd while a program runs there (iwxd waits for even after a change). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);	/* iwxd sets the number of possible CPUs */
	__type(key, __u32);
	__type(value, struct iwx_fp_cpu);
} iwx_fp_cpus SEC(".maps");

/* Per CPU: what the program sums when it checks a checksum. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, 4);
	__uint(value_size, 4096);
} iwx_fp_scratch SEC(".maps");

/*
 * Per CPU: where the copy in progress is (copy_chunk). In a map, not on the stack: the
 * verifier then sees one state for every piece, not one for each size a read takes.
 */
struct iwx_fp_copying {
	__u64	to;		/* the memory's byte the next piece goes to */
	__u32	from, left;	/* the packet's byte it comes from; the bytes still to copy */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iwx_fp_copying);
} iwx_fp_copying SEC(".maps");

/*
 * Per CPU: the FPDU the walk is at, as iwx_place_fpdu takes it (where it is, what it is,
 * no pointers: a global function's memory holds none). In a map, not on the stack: the
 * stack of the calls to the copy's reads stays under 512 bytes.
 */
struct fpdu {
	/* MPA, DDP and RDMAP headers, markers left out; aligned, so that STag and TO are
	   whole words (the tagged header's packed fields read byte by byte) */
	__u8	hdr[TAGGED_HDR] __attribute__((aligned(8)));
	__u32	ulen;			/* its ULPDU_LENGTH */
	__u32	off;			/* where it starts in the packet */
	__u32	seq;			/* the TCP sequence number of that start */
	__u32	pos;			/* the stream position of that start (markers) */
	__u32	pd;			/* the connection's protection domain */
	bool	markers;		/* the stream has MPA markers */
	bool	ahead;			/* the packet came before bytes in front of it */
	bool	completes;		/* out: a Read Response's last segment came */
	__u32	end;			/* the end of the packet's payload */
	/* out, without markers: its trailer and the next FPDU's header, read as one */
	__u32	next_off;		/* where that header is in the packet (0: not read; a
					   walk starts without, and offsets only grow in one) */
	__u32	next_at;		/* ... and in tail */
	__u8	tail[IWX_MPA_TAIL_MAX + TAGGED_HDR];
	/* the STag the walk placed through last, as it was then (iwx_place_fpdu) */
	struct iwx_fp_stag st;
	bool	st_held;		/* st holds one (a walk starts without) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fpdu);
} iwx_fp_fpdu SEC(".maps");

/* Slots whose iwxd is to wake up (fastpath_maps.h: Wake-ups): at most one record each
 * while lazy, so a page holds them all. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} iwx_fp_bells SEC(".maps");

/* iwx_anchor: the socket whose read position iwxd asks for. */
__u64 anchor_cookie;

/* The key of the per-CPU maps' one element: in .rodata, not on the stack of the calls that
   copy, whose frames together stay under the 512 bytes the verifier allows. */
static const __u32 zero_key = 0;

/* ------------------------------------------------------------ the packet */

struct pkt {
	struct bpf_dynptr	dp;
	__u32			len;
	__u32			ifindex;
	bool			csum_good;	/* the hook knows the TCP checksum is good */
	bool			other_host;	/* not addressed to this host: IP will drop it */
	bool			vlan;		/* tagged (TC: the tag taken out of the frame) */
};

struct tcp_pkt {
	struct iwx_fp_key	key;
	__u32			l4, l4_len;	/* TCP header's offset, TCP length */
	__u32			payload, end;	/* TCP payload's offsets */
	__u32			seq, ack;
	__u32			opts;		/* the TCP options' offset (they end at payload) */
	__u8			flags;		/* byte 13 of the TCP header */
	bool			ip_bad;		/* an IP header the host drops, or one with options */
};

static __always_inline __u16 fold(__s64 sum)
{
	__u64 s = (__u32)sum;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

/* Ethernet, up to two VLAN tags (p->vlan: none is this device's), IPv4 or IPv6, TCP.
 * false: not for us. */
static __always_inline bool parse(struct pkt *p, struct tcp_pkt *t)
{
	struct ethhdr eth;
	struct tcphdr tcp;
	__u32 off = sizeof(eth), ip_end;
	__u16 proto;

	__builtin_memset(t, 0, sizeof(*t));
	if (bpf_dynptr_read(&eth, sizeof(eth), &p->dp, 0, 0))
		return false;
	proto = eth.h_proto;
	for (int i = 0; i < 2 && (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)); i++) {
		__be16 vlan[2];	/* TCI, encapsulated protocol */

		if (bpf_dynptr_read(vlan, sizeof(vlan), &p->dp, off, 0))
			return false;
		proto = vlan[1];
		off += sizeof(vlan);
		p->vlan = true;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_dynptr_read(&ip, sizeof(ip), &p->dp, off, 0) || ip.ihl < 5 ||
		    ip.protocol != IPPROTO_TCP || (ip.frag_off & bpf_htons(0x3fff)))
			return false;	/* fragments: TCP sees them once reassembled */
		/* ip_rcv_core drops a bad header sum; options (source routes) it may drop too */
		t->ip_bad = ip.version != 4 || ip.ihl != 5 || bpf_ntohs(ip.tot_len) < sizeof(ip) ||
			    fold(bpf_csum_diff(0, 0, (__be32 *)&ip, sizeof(ip), 0)) != 0xffff;
		t->key.saddr[0] = ip.saddr;
		t->key.daddr[0] = ip.daddr;
		ip_end = off + bpf_ntohs(ip.tot_len);
		off += ip.ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_dynptr_read(&ip6, sizeof(ip6), &p->dp, off, 0) || ip6.nexthdr != IPPROTO_TCP)
			return false;	/* extension headers: left to iwxd */
		t->ip_bad = ip6.version != 6;
		__builtin_memcpy(t->key.saddr, &ip6.saddr, 16);
		__builtin_memcpy(t->key.daddr, &ip6.daddr, 16);
		t->key.v6 = 1;
		off += sizeof(ip6);
		ip_end = off + bpf_ntohs(ip6.payload_len);
	} else {
		return false;
	}
	if (bpf_dynptr_read(&tcp, sizeof(tcp), &p->dp, off, 0) || tcp.doff < 5 || ip_end > p->len)
		return false;
	t->key.sport = tcp.source;
	t->key.dport = tcp.dest;
	t->l4 = off;
	t->l4_len = ip_end - off;
	t->payload = off + tcp.doff * 4;
	t->end = ip_end;
	t->seq = bpf_ntohl(tcp.seq);
	t->ack = bpf_ntohl(tcp.ack_seq);
	t->opts = off + sizeof(tcp);
	t->flags = ((__u8 *)&tcp)[13];
	/* no payload (an ACK, a bare FIN or RST): nothing to place, and no socket to look up */
	return t->payload < t->end;
}

/* ------------------------------------------------------------ checksum */

struct csum_walk {
	struct bpf_dynptr	*dp;
	__u32			off, end;
	__s64			sum;
};

static long csum_chunk(__u32 i, struct csum_walk *w)
{
	__u32 n = w->end - w->off, zero = 0;
	__u8 *buf = bpf_map_lookup_elem(&iwx_fp_scratch, &zero);

	(void)i;
	if (w->off >= w->end)
		return 1;
	if (!buf)
		goto fail;
	if (n >= CSUM_CHUNK) {
		if (bpf_dynptr_read(buf, CSUM_CHUNK, w->dp, w->off, 0))
			goto fail;
		n = CSUM_CHUNK;
	} else {
		/* the last piece, zero-padded: the sum pads an odd byte with zero */
		__builtin_memset(buf, 0, CSUM_CHUNK);
		if (n == 0 || bpf_dynptr_read(buf, n & (CSUM_CHUNK - 1), w->dp, w->off, 0))
			goto fail;
	}
	w->sum = bpf_csum_diff(0, 0, (__be32 *)buf, CSUM_CHUNK, w->sum);
	w->off += n;
	return 0;
fail:
	w->sum = -1;
	return 1;
}

/* RFC 793 §3.1: the sum over the pseudo-header and the segment, its checksum included. */
static __always_inline bool tcp_csum_good(struct pkt *p, const struct tcp_pkt *t)
{
	struct {
		__u32	saddr[4], daddr[4];
		__be32	len;
		__be32	proto;
	} ph = {};
	struct csum_walk w = { .dp = &p->dp, .off = t->l4, .end = t->end };

	__builtin_memcpy(ph.saddr, t->key.saddr, 16);
	__builtin_memcpy(ph.daddr, t->key.daddr, 16);
	ph.len = bpf_htonl(t->l4_len);
	ph.proto = bpf_htonl(IPPROTO_TCP);
	/* IPv4 leaves the other address words zero: they add nothing */
	w.sum = bpf_csum_diff(0, 0, (__be32 *)&ph, sizeof(ph), 0);
	if (w.sum < 0)
		return false;
	bpf_loop(CSUM_CHUNKS, csum_chunk, &w, 0);
	return w.sum >= 0 && w.off == w.end && fold(w.sum) == 0xffff;
}

/* ------------------------------------------------------------ the walk */

/*
 * Besides the skip reasons (enum iwx_fp_skip, each a counter's index): the verdict on an
 * FPDU that is placed, and on a packet that nothing refuses whole. No reasons, so past
 * them all; under 128, so that x86 compares them in a one-byte immediate.
 */
#define IWX_FP_PLACED		64u
#define IWX_FP_NO_REFUSAL	65u
_Static_assert(IWX_FP_SKIP_N < IWX_FP_PLACED, "a skip reason would read as placed");

struct walk {
	struct pkt		*p;
	struct iwx_fp_slot	*s;
	const struct iwx_fp_conn *conn;
	struct iwx_fp_counters	*ifc;
	__u32			off, end;	/* the next FPDU and the end of the payload */
	__u32			seq;		/* of off */
	__u32			win_lo, win_hi;	/* rcv_nxt, right edge of the window */
	__u32			refusal;	/* a reason for the whole packet, or IWX_FP_NO_REFUSAL */
	__u32			base;		/* markers: TCP sequence number of stream position 0 */
	bool			ahead;		/* the packet came before bytes in front of it */
	bool			island;		/* followed, not placed: after a gap (walk_packet) */
	bool			bad;		/* a header that is not DDP/RDMAP */
	bool			unplaced;	/* an FPDU was skipped that iwxd must read soon */
	bool			completes;	/* a Read Response's last segment came */
};

static __always_inline bool seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline void skip(struct walk *w, __u32 why)
{
	if (why >= IWX_FP_SKIP_N)
		return;	/* not a reason: the bound the verifier needs on the counters' index */
	/* a message's first segment can wait for iwxd's next read: nothing waits on it */
	if (why != IWX_FP_SKIP_FIRST)
		w->unplaced = true;
	w->s->c.skipped[why]++;
	if (w->ifc)
		w->ifc->skipped[why]++;
}

/* A packet-level counter (its offset in struct iwx_fp_counters), per connection and interface. */
static __always_inline void count(struct walk *w, __u32 off)
{
	(*(__u64 *)((__u8 *)&w->s->c + off))++;
	if (w->ifc)
		(*(__u64 *)((__u8 *)w->ifc + off))++;
}

static __always_inline __u32 reason_of_check(__u32 r)
{
	switch (IWX_CHECK_ECODE(r) | IWX_CHECK_LAYER(r) << 8) {
	case IWX_DDP_T_STAG_NOT_ASSOC | IWX_LAYER_DDP << 8:
		return IWX_FP_SKIP_STAG_PD;
	case IWX_DDP_T_BASE_BOUNDS | IWX_LAYER_DDP << 8:
		return IWX_FP_SKIP_BOUNDS;
	case IWX_DDP_T_TO_WRAP | IWX_LAYER_DDP << 8:
		return IWX_FP_SKIP_TO_WRAP;
	case IWX_RDMAP_EC_ACCESS | IWX_LAYER_RDMAP << 8:
		return IWX_FP_SKIP_ACCESS;
	default:
		return IWX_FP_SKIP_STAG;
	}
}

/*
 * Copy len payload bytes at packet offset from into mem at byte at, straight from the
 * packet into each element (4 KiB) it spans. Not bpf_dynptr_copy: from a GRO packet's
 * fragments it placed wrong bytes on Linux 6.18.
 */
struct copy {
	const struct bpf_dynptr	*src;
	void			*mem;
	__u32			mark;		/* markers: where one is in the packet */
	bool			markers;
	bool			failed;
};

/* A 4 KiB element of a memory, as a global function takes it. */
struct iwx_fp_elem {
	__u8	b[4096];
};

/*
 * n bytes of the packet at from into elem at eo (eo + n <= 4096), as many as one read
 * takes whose bounds the verifier can see: up to 4096 - 256 j from byte 256 j on, and
 * in the last 256 bytes up to the power of two that fits. The bytes read, 0 on failure.
 * Global, so verified once: not again for every path to each copy.
 */
__noinline int iwx_read_into(struct iwx_fp_elem *elem, __u32 eo, __u32 n,
			     const struct bpf_dynptr *src, __u32 from)
{
	__u32 cap = 1;

	if (!elem || eo > 4095)
		return 0;
#pragma unroll
	for (__u32 j = 1; j < 16; j++)
		if (eo <= 256 * j) {
			cap = 4096 - 256 * j;
			goto read;
		}
#pragma unroll
	for (__u32 k = 7; k > 0; k--)
		if (eo <= 4096 - (1u << k)) {
			cap = 1u << k;
			goto read;
		}
read:
	if (n > cap)
		n = cap;
	return bpf_dynptr_read(elem->b + eo, n, src, from, 0) ? 0 : n;
}

static long copy_chunk(__u32 i, struct copy *c)
{
	struct iwx_fp_copying *at = bpf_map_lookup_elem(&iwx_fp_copying, &zero_key);
	__u32 idx, eo, n;
	void *elem;
	int got;

	(void)i;	/* also called once directly (copy_out) */
	if (!at)
		goto fail;
	if (!at->left)
		return 1;
	idx = at->to / 4096;
	eo = at->to % 4096;
	n = 4096 - eo;
	if (n > at->left)
		n = at->left;
	if (c->markers) {
		/* no state carried from piece to piece but where it is: the verifier's loop ends */
		__u32 into = (at->from - c->mark) % IWX_MPA_MARKER_INTERVAL;

		if (!into) {
			at->from += IWX_MPA_MARKER_LEN;	/* checked already (markers_good) */
			into = IWX_MPA_MARKER_LEN;
		}
		if (n > IWX_MPA_MARKER_INTERVAL - into)
			n = IWX_MPA_MARKER_INTERVAL - into;
	}
	elem = bpf_map_lookup_elem(c->mem, &idx);
	got = iwx_read_into(elem, eo, n, c->src, at->from);
	if (got <= 0 || (__u32)got > n)
		goto fail;
	n = got;
	at->to += n;
	at->from += n;
	at->left -= n;
	return 0;
fail:
	c->failed = true;
	return 1;
}

/* Where the FPDU at off, stream position pos, has its byte i (markers left out) in the packet. */
static __always_inline __u32 at_byte(__u32 off, __u32 pos, __u32 i, const bool markers)
{
	return off + (markers ? iwx_mpa_marked_off(pos, i) : i);
}

/* at_byte for the FPDU at w->off */
static __always_inline __u32 walk_byte(const struct walk *w, __u32 i, const bool markers)
{
	return at_byte(w->off, w->seq - w->base, i, markers);
}

/* The FPDU's payload, from its byte i on (markers left out), to mem at byte at. */
static __always_inline bool copy_out(const struct bpf_dynptr *dp, const struct fpdu *f, void *mem,
				     __u64 at, __u32 i, __u32 len)
{
	struct iwx_fp_copying *pos = bpf_map_lookup_elem(&iwx_fp_copying, &zero_key);
	struct copy c = { .src = dp, .mem = mem, .markers = f->markers,
			  .mark = f->markers ? f->off + iwx_mpa_marker_first(f->pos) : 0 };

	if (!pos)
		return false;
	pos->to = at;
	pos->from = at_byte(f->off, f->pos, i, f->markers);
	pos->left = len;
	/* most payloads lie in one element: their one piece without the loop */
	if (!f->markers && (copy_chunk(0, &c) || !pos->left))
		return !c.failed && !pos->left;
	bpf_loop(COPY_CHUNKS, copy_chunk, &c, 0);
	return !c.failed && !pos->left;
}

/* RFC 5044 §4.3: the FPDU's markers, each pointing back at its ULPDU_LENGTH (0: it leads). */
struct marks {
	const struct bpf_dynptr	*dp;
	__u32		off;		/* the FPDU's offset in the packet */
	__u32		first, n;	/* the first one's offset in the FPDU; how many */
	__u32		lead;		/* where ULPDU_LENGTH is: after a marker that leads */
	bool		good;
};

static long check_marker(__u32 j, struct marks *m)
{
	__u32 at = m->first + j * IWX_MPA_MARKER_INTERVAL, got;
	__u32 want = bpf_htonl(j == 0 && m->lead ? 0 : at - m->lead);	/* reserved bits zero */

	if (j >= m->n)
		return 1;
	if (bpf_dynptr_read(&got, sizeof(got), m->dp, m->off + at, 0) || got != want) {
		m->good = false;
		return 1;
	}
	return 0;
}

/*
 * Are the markers of the FPDU f (len bytes without them) all as they must be? iwxd takes
 * the FPDU without them, and puts them back for its CRC as they ought to have been.
 */
static __always_inline bool markers_good(const struct bpf_dynptr *dp, const struct fpdu *f,
					 __u32 len)
{
	struct marks m = { .dp = dp, .off = f->off, .first = iwx_mpa_marker_first(f->pos),
			   .n = iwx_mpa_markers_in(f->pos, len), .good = true };

	if (!f->markers)
		return true;
	m.lead = m.first ? 0 : IWX_MPA_MARKER_LEN;
	bpf_loop(MAX_MARKERS, check_marker, &m, 0);
	return m.good;
}

/*
 * The pad and CRC of the FPDU f, without markers, into f->tail, read with the next FPDU's
 * header where the packet holds it whole (read_hdr takes that from there): each read
 * walks the packet's fragments, and this saves one an FPDU. Their length, 0 on failure.
 * Global, and called before iwx_place_fpdu rather than by it: the programs' calls share
 * 512 bytes of stack, which it nearly takes.
 */
__noinline __u32 iwx_read_tail(struct fpdu *f, const struct bpf_dynptr *dp)
{
	__u32 tl, at, n;

	if (!f)
		return 0;
	/* all but f settled before the read: nothing else is kept across it (no stack) */
	tl = (iwx_mpa_pad_len(f->ulen) & 3) + IWX_MPA_CRC_LEN;
	at = f->off + IWX_MPA_HDR_LEN + f->ulen;
	n = at + tl + TAGGED_HDR <= f->end ? tl + TAGGED_HDR : tl;
	f->next_off = n > tl ? at + tl : 0;
	f->next_at = tl;
	if (bpf_dynptr_read(f->tail, n, dp, at, 0)) {
		f->next_off = 0;
		return 0;
	}
	return tl;
}

/*
 * The pad and CRC of the FPDU f, with markers, into its record r: no marker falls in either
 * (both end 4-aligned, as markers are), one may between them. Global, as iwx_read_tail.
 */
__noinline bool iwx_read_marked_trailer(struct iwx_fp_rec *r, const struct fpdu *f,
					const struct bpf_dynptr *packet)
{
	struct bpf_dynptr local;	/* on this stack: kept across the reads, as the verifier follows */
	__u32 pad;

	if (!r || !f || bpf_dynptr_clone(packet, &local))
		return false;
	pad = iwx_mpa_pad_len(f->ulen) & 3;
	return !bpf_dynptr_read(r->trailer, pad, &local,
				at_byte(f->off, f->pos, IWX_MPA_HDR_LEN + f->ulen, true), 0) &&
	       !bpf_dynptr_read(r->trailer + pad, IWX_MPA_CRC_LEN, &local,
				at_byte(f->off, f->pos, IWX_MPA_HDR_LEN + f->ulen + pad, true), 0);
}

/*
 * The tagged FPDU f of slot s's stream, whole in the packet dp, its start certain: place
 * it or say why not (an IWX_FP_SKIP_ reason). Global, so verified once, not again on every
 * path that leads to it (two thirds of the program's verification when it was inlined).
 */
__noinline __u32 iwx_place_fpdu(struct iwx_fp_slot *s, struct iwx_fp_counters *ifc,
				const struct bpf_dynptr *packet, struct fpdu *f)
{
	struct bpf_dynptr local, *dp = &local;	/* one on this stack, for the loops' callbacks */
	const struct iwx_ddp_tagged_hdr *t;
	const struct iwx_fp_stag *st;
	__u32 stag, len, ulen, check, pad;
	struct iwx_fp_rec *r;
	__u8 op, need;
	void *mem;
	__u64 to;

	if (!s || !f || bpf_dynptr_clone(packet, &local))
		return IWX_FP_SKIP_MEMORY;	/* not so: the verifier asks */
	t = (const void *)(f->hdr + IWX_MPA_HDR_LEN);
	stag = bpf_ntohl(*(const __be32 *)(f->hdr + IWX_MPA_HDR_LEN + offsetof(typeof(*t), stag)));
	to = bpf_be64_to_cpu(*(const __be64 *)(f->hdr + IWX_MPA_HDR_LEN + offsetof(typeof(*t), to)));
	op = t->rdmap_ctrl & IWX_RDMAP_OPCODE_MASK;
	need = op == IWX_OP_WRITE ? IWX_ACCESS_REMOTE_WRITE : IWX_ACCESS_LOCAL_WRITE;
	ulen = f->ulen;
	if (ulen < IWX_DDP_TAGGED_HDR_LEN)
		return IWX_FP_SKIP_HEADER;	/* plausible() has said so: the verifier asks */
	len = ulen - IWX_DDP_TAGGED_HDR_LEN;
	pad = iwx_mpa_pad_len(ulen);

	/*
	 * A message's FPDUs follow one another under one STag: looked up once a walk (a hash
	 * lookup an FPDU was a tenth of the program). A copy is no staler than the entry: iwxd
	 * counts a change made once the programs that started before it have ended (quiesce).
	 */
	if (!f->st_held || f->st.desc.stag != stag) {
		st = bpf_map_lookup_elem(&iwx_fp_stags, &stag);
		if (!st)
			return IWX_FP_SKIP_STAG;
		f->st = *st;
		f->st_held = true;
	}
	st = &f->st;
	check = iwx_check_tagged(&st->desc, stag, f->pd, need, to, len);
	if (check)
		return reason_of_check(check);
	if (op == IWX_OP_READ_RESP && (f->hdr[2] & IWX_DDP_FLAG_LAST))
		f->completes = true;	/* placed or not, its Read is iwxd's to complete now */
	if (!s->walk_cut.valid || stag != s->walk_cut.stag || to - s->walk_cut.to > s->walk_cut.slack)
		return IWX_FP_SKIP_FIRST;
	/* a program that polls a Write's last byte may write it as it lands: iwxd checks the
	   CRC over TCP's bytes, never read back from memory, and places it after (issue 44) */
	if (f->hdr[2] & IWX_DDP_FLAG_LAST)
		return IWX_FP_SKIP_LAST;
	if (s->head - s->tail >= IWX_FP_RING)
		return IWX_FP_SKIP_RING_FULL;
	if (!markers_good(dp, f, IWX_MPA_HDR_LEN + ulen + pad + IWX_MPA_CRC_LEN))
		return IWX_FP_SKIP_MARKER;
	mem = bpf_map_lookup_elem(&iwx_fp_mems, &st->mem);
	if (!mem || !copy_out(dp, f, mem, st->off + (to - st->desc.base_to), TAGGED_HDR, len))
		return IWX_FP_SKIP_MEMORY;

	r = &s->ring[s->head & (IWX_FP_RING - 1)];
	r->seq = f->seq;
	__builtin_memcpy(r->hdr, f->hdr, sizeof(r->hdr));
	/* pad and CRC: without markers, read already (iwx_read_tail) */
	if (!f->markers)
		__builtin_memcpy(r->trailer, f->tail, sizeof(r->trailer));	/* pad + 4 of them count */
	else if (!iwx_read_marked_trailer(r, f, dp))
		return IWX_FP_SKIP_HEADER;
	r->trailer_len = pad + IWX_MPA_CRC_LEN;
	r->accepted = 0;	/* unmarked (IWX_FP_ACC_TAG) */
	__sync_fetch_and_add(&s->head, 1);	/* the record, then its publication */
	s->c.placed_fpdus++;
	s->c.placed_bytes += len;
	if (f->ahead)
		s->c.ahead++;
	if (ifc) {
		ifc->placed_fpdus++;
		ifc->placed_bytes += len;
		if (f->ahead)
			ifc->ahead++;
	}
	return IWX_FP_PLACED;
}

/* Is hdr (ULPDU_LENGTH and what follows) the start of an FPDU of RDMAP over DDP? */
static __always_inline bool plausible(const __u8 *hdr, __u32 ulen)
{
	__u8 ddp = hdr[2], rdmap = hdr[3];
	__u32 need = ddp & IWX_DDP_FLAG_TAGGED ? IWX_DDP_TAGGED_HDR_LEN : IWX_DDP_UNTAGGED_HDR_LEN;

	return ulen >= need && (ddp & IWX_DDP_VERSION_MASK) == IWX_DDP_VERSION &&
	       !(ddp & IWX_DDP_RSVD_MASK) &&
	       (rdmap & IWX_RDMAP_VERSION_MASK) >> IWX_RDMAP_VERSION_SHIFT == IWX_RDMAP_VERSION &&
	       (rdmap & IWX_RDMAP_OPCODE_MASK) < IWX_OP_COUNT;
}

/*
 * As much of the header of the FPDU at w->off as the packet holds: all of a tagged one, or
 * its first word. Markers fall between words only, for FPDUs start 4-aligned, as they do.
 */
static __always_inline bool read_hdr(struct walk *w, struct fpdu *f, const bool markers)
{
	__u32 n = walk_byte(w, TAGGED_HDR - 1, markers) < w->end ? TAGGED_HDR : IWX_MPA_HDR_LEN + 2;
	__u8 *hdr = f->hdr;

	if (w->off >= w->end || walk_byte(w, IWX_MPA_HDR_LEN + 1, markers) >= w->end)
		return false;	/* the next FPDU starts in a later packet */
	if (!markers && w->off == f->next_off && f->next_at <= IWX_MPA_TAIL_MAX) {
		__builtin_memcpy(hdr, f->tail + f->next_at, TAGGED_HDR);	/* read with its trailer */
		return true;
	}
	if (n < TAGGED_HDR)	/* cut short: none of the last FPDU's bytes after the first word */
		__builtin_memset(hdr + IWX_MPA_HDR_LEN + 2, 0, TAGGED_HDR - IWX_MPA_HDR_LEN - 2);
	if (!markers)
		return !bpf_dynptr_read(hdr, n, &w->p->dp, w->off, 0);
	for (__u32 i = 0; i < TAGGED_HDR; i += 4)
		if (i < n && bpf_dynptr_read(hdr + i, 4, &w->p->dp, walk_byte(w, i, true), 0))
			return false;
	return true;
}

/* After the FPDU at w->off, its header read whole: the segment that would continue its message. */
static __always_inline void follow_cut(struct walk *w, const __u8 *hdr, __u32 ulen)
{
	const struct iwx_ddp_tagged_hdr *t = (const void *)(hdr + IWX_MPA_HDR_LEN);
	struct iwx_fp_cut *cut = &w->s->walk_cut;

	if (!(hdr[2] & IWX_DDP_FLAG_TAGGED))
		return;	/* a Send, say, between a Write's segments leaves the Write to go on */
	cut->valid = !(hdr[2] & IWX_DDP_FLAG_LAST);
	cut->stag = bpf_ntohl(t->stag);
	cut->to = bpf_be64_to_cpu(t->to) + ulen - IWX_DDP_TAGGED_HDR_LEN;
	cut->slack = 0;
}

/*
 * The FPDU at w->off, the walk's first if i is 0: place it or say why not, and step past it.
 * A callback per mode.
 */
static __always_inline long walk_one(__u32 i, struct walk *w, const bool markers)
{
	struct fpdu *f = bpf_map_lookup_elem(&iwx_fp_fpdu, &zero_key);
	struct iwx_fp_slot *s = w->s;
	__u32 ulen, fpdu, verdict;
	const __u8 *hdr;
	__u8 op;

	if (!f)
		return 1;
	if (!i) {	/* nothing kept from another walk */
		f->next_off = 0;
		f->st_held = false;
	}
	hdr = f->hdr;
	if (!read_hdr(w, f, markers))
		return 1;
	ulen = (__u32)hdr[0] << 8 | hdr[1];
	if (!plausible(hdr, ulen)) {
		skip(w, IWX_FP_SKIP_HEADER);
		w->bad = true;
		return 1;
	}
	fpdu = iwx_mpa_unmarked_len(ulen);
	if (markers)
		fpdu += IWX_MPA_MARKER_LEN * iwx_mpa_markers_in(w->seq - w->base, fpdu);
	op = hdr[3] & IWX_RDMAP_OPCODE_MASK;

	if (w->refusal != IWX_FP_NO_REFUSAL)
		verdict = w->refusal;
	else if (s->state != IWX_FP_SYNC || w->island)
		verdict = IWX_FP_SKIP_UNSYNC;
	else if (w->off + fpdu > w->end)
		verdict = IWX_FP_SKIP_SPLIT;
	else if (seq_before(w->seq, w->win_lo) || seq_before(w->win_hi, w->seq + fpdu))
		verdict = IWX_FP_SKIP_WINDOW;
	else if (s->held)
		verdict = IWX_FP_SKIP_HELD;
	else
		verdict = IWX_FP_PLACED;	/* unless the FPDU itself stands against it */

	if (!(hdr[2] & IWX_DDP_FLAG_TAGGED)) {
		if (verdict == IWX_FP_PLACED)
			verdict = IWX_FP_SKIP_UNTAGGED;
		/* what comes after an invalidation or a Terminate waits until iwxd has taken it */
		if (op == IWX_OP_SEND_INV || op == IWX_OP_SEND_SE_INV || op == IWX_OP_TERMINATE) {
			s->held = 1;
			/* where iwxd says it took it: its ULPDU_LENGTH, after a marker that leads */
			s->hold_seq = walk_byte(w, 0, markers) - w->off + w->seq;
		}
	} else if (verdict == IWX_FP_PLACED && ulen == IWX_DDP_TAGGED_HDR_LEN) {
		verdict = IWX_FP_SKIP_EMPTY;
	} else if (verdict == IWX_FP_PLACED) {
		f->ulen = ulen;
		f->off = w->off;
		f->seq = w->seq;
		f->pos = w->seq - w->base;
		f->pd = w->conn->pd;
		f->markers = markers;
		f->ahead = w->ahead;
		f->completes = false;
		f->end = w->end;
		verdict = !markers && !iwx_read_tail(f, &w->p->dp) ? IWX_FP_SKIP_HEADER :
			  iwx_place_fpdu(s, w->ifc, &w->p->dp, f);
		if (f->completes)
			w->completes = true;
	}
	if (verdict != IWX_FP_PLACED)
		skip(w, verdict);

	/* an FPDU that ends in the packet has its header whole in it */
	if (walk_byte(w, TAGGED_HDR - 1, markers) < w->end)
		follow_cut(w, hdr, ulen);
	else
		s->walk_cut.valid = 0;	/* its header is cut short: not known */
	w->seq += fpdu;
	if (w->off + fpdu > w->end)
		return 1;
	w->off += fpdu;
	return 0;
}

static long walk_plain(__u32 i, struct walk *w)
{
	return walk_one(i, w, false);
}

static long walk_marked_fpdu(__u32 i, struct walk *w)
{
	return walk_one(i, w, true);
}

/* Take iwxd's answers: a proposal confirmed or denied, a hold released. */
static __always_inline void take_answers(struct iwx_fp_slot *s, struct iwx_fp_counters *ifc)
{
	__u64 answer = *(volatile __u64 *)&s->answer;
	__u64 release = *(volatile __u64 *)&s->release;

	if (s->state == IWX_FP_PROPOSED) {
		if (answer == IWX_FP_ANSWER(s->mark_seq, IWX_FP_CONFIRM)) {
			s->state = IWX_FP_SYNC;
			s->c.confirmed++;
			if (ifc)
				ifc->confirmed++;
		} else if (answer == IWX_FP_ANSWER(s->mark_seq, IWX_FP_DENY)) {
			s->state = IWX_FP_UNSYNC;
		}
	}
	if (s->held && release == IWX_FP_ANSWER(s->hold_seq, IWX_FP_RELEASE))
		s->held = 0;
}

/* Follow the packet's FPDUs from ahead bytes in, starting at seq; w->seq: where that ends. */
static __always_inline bool follow(struct walk *w, __u32 seq, __u32 ahead, __u32 plen,
				   const bool markers)
{
	w->off += ahead;
	w->seq = seq;
	bpf_loop(MAX_FPDUS, markers ? walk_marked_fpdu : walk_plain, w, 0);
	/*
	 * Followed to the end of the packet, or into an FPDU that ends beyond it: on. Else a
	 * header that is not one, more FPDUs than a walk takes, or a header cut short.
	 */
	return !w->bad && !seq_before(w->seq, seq - ahead + plen);
}

/*
 * A packet after a gap (reordered on its way, or one before it was lost): follow it as an
 * island, from its start, as if that were an FPDU's (the sender aligns FPDUs to segments,
 * RFC 5044 §6.1), placing nothing. Should the stream, followed from its boundary, reach
 * the island's start, the island is as certain as the stream and the stream goes on from
 * its end; should it pass the start, the island is dropped. false: the gap is too much.
 */
static __always_inline bool island(const struct walk *w, __u32 seq, __u32 plen)
{
	struct iwx_fp_slot *s = w->s;
	struct walk iw = *w;	/* the packet walked as an island leaves w as it was */

	if (s->island_end && s->island_end != seq)
		return false;	/* a second gap */
	iw.island = true;
	s->walk_cut.valid = 0;
	if (!follow(&iw, seq, 0, plen, false)) {
		s->island_end = 0;
		return false;
	}
	if (!s->island_end)
		s->island_seq = seq;
	s->island_end = iw.seq;
	s->island_cut = s->walk_cut;
	return true;
}

/* The stream has reached seq: join the island there, or drop one passed. */
static __always_inline void join(struct iwx_fp_slot *s, __u32 seq)
{
	if (!s->island_end)
		return;
	if (seq == s->island_seq) {
		seq = s->island_end;
		s->cut = s->island_cut;	/* the island followed the FPDUs up to its end */
	} else if (!seq_before(seq, s->island_seq)) {
		s->island_end = 0;
	}
	if (seq == s->island_end)
		s->island_end = 0;
	s->next_seq = seq;
}

/*
 * One TCP segment of a connection iwxd knows, its slot held. true: every byte of it is in
 * FPDUs placed or in messages' first segments, which can wait for iwxd's next read (an
 * FPDU is placed only whole in one packet, so the packet starts at one).
 */
static __always_inline bool walk_packet(struct walk *w, __u32 seq, __u32 plen)
{
	struct iwx_fp_slot *s = w->s;
	__s32 ahead;

	take_answers(s, w->ifc);
	if (s->state == IWX_FP_STOPPED) {
		count(w, offsetof(struct iwx_fp_counters, stopped));
		return false;
	}
	ahead = (__s32)(s->next_seq - seq);
	/*
	 * An island only for a gap still to come (bytes TCP has had the program will not see),
	 * in sync or following a proposal: a proposal iwxd has yet to reach survives reordering.
	 */
	if (ahead < 0 && s->state != IWX_FP_UNSYNC && !seq_before(s->next_seq, w->win_lo) &&
	    island(w, seq, plen))
		return false;
	if (s->state == IWX_FP_UNSYNC || ahead < 0) {
		if (seq_before(seq, w->win_lo)) {
			/* old data TCP has had: no start to propose */
			count(w, offsetof(struct iwx_fp_counters, behind));
			return false;
		}
		/*
		 * No boundary known, or a gap the stream cannot bridge: propose this packet's
		 * start, follow the stream from it, and place again once iwxd has confirmed it.
		 */
		s->state = IWX_FP_PROPOSED;
		s->mark_seq = seq;
		s->next_seq = seq;
		s->cut.valid = 0;
		s->island_end = 0;
		s->c.proposals++;
		if (w->ifc)
			w->ifc->proposals++;
		ahead = 0;
	}
	if ((__u32)ahead >= plen) {
		/* all before the next FPDU: a retransmission, or inside a long FPDU */
		count(w, offsetof(struct iwx_fp_counters, behind));
		return false;
	}
	s->walk_cut = s->cut;
	if (follow(w, s->next_seq, ahead, plen, false)) {
		s->next_seq = w->seq;
		s->cut = s->walk_cut;
		join(s, w->seq);
		return !ahead && !w->unplaced && w->seq == seq + plen;
	}
	s->next_seq = w->seq;
	s->cut = s->walk_cut;
	/* a proposal that was wrong; or in sync, a stream iwxd will end with a Terminate */
	s->state = w->bad && s->state == IWX_FP_SYNC ? IWX_FP_STOPPED : IWX_FP_UNSYNC;
	return false;
}

/* An FPDU's start in a packet of a stream with markers, from the first marker that tells. */
struct find {
	struct walk	*w;
	__u32		pos, first, plen;	/* the packet's stream position, its first marker, length */
	__s32		start;			/* the FPDU's offset in the payload; -1: none found */
};

static long find_start(__u32 j, struct find *f)
{
	__u32 at = f->first + j * IWX_MPA_MARKER_INTERVAL;
	struct iwx_mpa_marker m;
	__u16 ptr;

	if (at + IWX_MPA_MARKER_LEN > f->plen ||
	    bpf_dynptr_read(&m, sizeof(m), &f->w->p->dp, f->w->off + at, 0))
		return 1;
	ptr = bpf_ntohs(m.fpduptr);
	if (!ptr) {
		f->start = at;	/* it leads an FPDU */
		return 1;
	}
	if (ptr > at || (ptr & 3))
		return 0;	/* its FPDU began in an earlier packet (or it is no marker) */
	/* its FPDU's ULPDU_LENGTH: right after a 512-byte mark, the FPDU is led by the marker
	   there, which lies before the packet (else it was found first): not whole in it */
	if ((f->pos + at - ptr) % IWX_MPA_MARKER_INTERVAL == IWX_MPA_MARKER_LEN)
		return 0;
	f->start = at - ptr;
	return 1;
}

/*
 * One TCP segment of a connection with markers, its slot held: wherever in the stream it
 * lies, in order or ahead of a gap, its markers say where its FPDUs start (RFC 5044 §4.3,
 * RFC 5041 §1.1). true: every byte of it is in FPDUs placed or in messages' first segments.
 */
static __always_inline bool walk_marked(struct walk *w, __u32 seq, __u32 plen)
{
	struct find f = { .w = w, .pos = seq - w->base, .plen = plen, .start = -1 };
	struct iwx_fp_slot *s = w->s;
	bool in_step;
	__s32 into;

	take_answers(w->s, w->ifc);
	if (!seq_before(w->win_lo, seq + plen)) {
		count(w, offsetof(struct iwx_fp_counters, behind));	/* old: TCP has had it */
		return false;
	}
	w->ahead = seq_before(w->win_lo, seq);
	/*
	 * In step with the stream as it came in order: walk on from where it got to, seeing
	 * every FPDU (a Send with Invalidate among them holds what follows). Else, from the
	 * first marker that tells.
	 */
	into = (__s32)(s->next_seq - seq);
	in_step = into >= 0 && (__u32)into < plen;
	s->walk_cut = s->cut;
	if (in_step) {
		f.start = into;
	} else {
		f.first = iwx_mpa_marker_first(f.pos);
		bpf_loop(MAX_MARKERS, find_start, &f, 0);
		if (f.start < 0) {
			skip(w, IWX_FP_SKIP_UNSYNC);
			return false;
		}
		/* the message in order may go on here, past what the gap before holds */
		s->walk_cut.slack = seq + f.start - s->next_seq;
		if ((__s32)s->walk_cut.slack < 0)
			s->walk_cut.valid = 0;	/* the stream in order is past it: not known */
	}
	if (!follow(w, seq + f.start, f.start, plen, true))
		return false;
	/* ahead of a gap, the stream in order has not got there: the gap is walked first */
	if (!w->ahead || in_step) {
		s->next_seq = w->seq;
		s->cut = s->walk_cut;
	}
	return !f.start && !w->unplaced && w->seq == seq + plen;
}

/* Wake iwxd if it sleeps on its low-water mark (fastpath_maps.h: Wake-ups). */
static __always_inline void ring(struct iwx_fp_slot *s, __u32 bell, struct iwx_fp_counters *ifc)
{
	/* an exchange, a full barrier: iwxd stores lazy, then reads wake_seq */
	if (!__sync_lock_test_and_set(&s->lazy, 0))
		return;
	bpf_ringbuf_output(&iwx_fp_bells, &bell, sizeof(bell), BPF_RB_FORCE_WAKEUP);
	__sync_fetch_and_add(&s->c.bells, 1);
	if (ifc)
		ifc->bells++;
}

/*
 * After the walk: a packet with bytes in the window that iwxd must read itself (any not
 * in a placed FPDU or a message's first segment), or that completes a Read, moves wake_seq
 * to its end and rings; for a Read's end only (whole), iwxd may stay lazy.
 */
static __always_inline void wake_for(struct walk *w, __u32 seq, __u32 plen, bool whole)
{
	struct iwx_fp_slot *s = w->s;
	__u32 end = seq + plen;

	if (whole && !w->completes)
		return;
	if (!seq_before(w->win_lo, end))
		return;	/* all old: nothing TCP will queue */
	if (seq_before(s->wake_seq, end))
		s->wake_seq = end;
	ring(s, w->conn->slot | (whole ? IWX_FP_BELL_STAY : 0), w->ifc);
}

static __always_inline struct iwx_fp_cpu *cpu_enter(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct iwx_fp_cpu *c = bpf_map_lookup_elem(&iwx_fp_cpus, &cpu);

	if (c)
		__sync_fetch_and_add(&c->seq, 1);	/* odd: running, a full barrier on x86 */
	return c;
}

static __always_inline void cpu_leave(struct iwx_fp_cpu *c)
{
	if (c)
		__sync_fetch_and_add(&c->seq, 1);
}

/* ---------------------------------------------------- what TCP would refuse */

/* The TCP options, walked as tcp_parse_options walks them: EOL ends them, NOP is one byte,
 * the rest kind, length, data. */
struct opts {
	__u8	o[TCP_OPTS_MAX];
	__u32	n, i;		/* their length; where the walk is */
	__u32	tsval;
	int	found;		/* 1: TSval; 0: none; -1: options TCP would not read */
};

static long opt_one(__u32 k, struct opts *w)
{
	__u32 i = w->i, len;

	(void)k;
	if (i >= w->n || i >= TCP_OPTS_MAX || w->o[i] == TCPOPT_EOL)
		return 1;
	if (w->o[i] == TCPOPT_NOP) {
		w->i++;
		return 0;
	}
	if (i + 1 >= w->n || i + 1 >= TCP_OPTS_MAX)
		goto bad;
	len = w->o[i + 1];
	if (len < 2 || i + len > w->n)
		goto bad;
	if (w->o[i] == TCPOPT_TS) {
		if (len != 10 || i + 6 > TCP_OPTS_MAX)
			goto bad;
		w->tsval = (__u32)w->o[i + 2] << 24 | (__u32)w->o[i + 3] << 16 |
			   (__u32)w->o[i + 4] << 8 | w->o[i + 5];
		w->found = 1;
		return 1;
	}
	w->i += len;
	return 0;
bad:
	w->found = -1;
	return 1;
}

/* The segment's TSval: 1 found, 0 none, -1 options TCP would not read. */
static __always_inline int tcp_tsval(struct pkt *p, const struct tcp_pkt *t, __u32 *tsval)
{
	struct opts w = { .n = t->payload - t->opts };

	if (!w.n)
		return 0;
	if (w.n > TCP_OPTS_MAX || bpf_dynptr_read(w.o, w.n, &p->dp, t->opts, 0))
		return -1;
	/* NOP, NOP, timestamps first, as Linux sends them (RFC 7323 Appendix A): no walk */
	if (w.n >= 12 && w.o[0] == TCPOPT_NOP && w.o[1] == TCPOPT_NOP && w.o[2] == TCPOPT_TS &&
	    w.o[3] == 10) {
		*tsval = (__u32)w.o[4] << 24 | (__u32)w.o[5] << 16 | (__u32)w.o[6] << 8 | w.o[7];
		return 1;
	}
	bpf_loop(TCP_OPTS_MAX, opt_one, &w, 0);
	*tsval = w.tsval;
	return w.found;
}

/*
 * Would kernel TCP refuse this segment of an ESTABLISHED connection before it queues its
 * bytes? A reason, or IWX_FP_NO_REFUSAL. What tcp_validate_incoming and tcp_ack check
 * against the socket's state: the timestamp (PAWS, RFC 7323 §5: TSval not older than
 * ts_recent; stricter than TCP, which lets a segment without one through), the ACK (RFC
 * 5961 §5.2: not of data never sent, not older than the peer's largest window), segment
 * signatures (TCP-MD5, TCP-AO: the program cannot check them).
 */
static __always_inline __u32 tcp_refusal(struct pkt *p, const struct tcp_pkt *t, struct tcp_sock *tp)
{
	__u32 una = tp->snd_una, win = tp->max_window, tsval;
	__u64 acked = tp->bytes_acked;
	int ts;

	if (tp->inet_conn.icsk_inet.sk.__sk_common.skc_state != TCP_ESTABLISHED)
		return IWX_FP_SKIP_TCP_STATE;
	if ((bpf_core_field_exists(tp->md5sig_info) && tp->md5sig_info) ||
	    (bpf_core_field_exists(tp->ao_info) && tp->ao_info))
		return IWX_FP_SKIP_TCP_STATE;
	if (!TCP_LATER_CHECKS)
		return IWX_FP_NO_REFUSAL;
	if (acked < win)
		win = acked;
	if (seq_before(tp->snd_nxt, t->ack) || seq_before(t->ack, una - win))
		return IWX_FP_SKIP_ACK;
	if (!BPF_CORE_READ_BITFIELD(tp, rx_opt.tstamp_ok))
		return IWX_FP_NO_REFUSAL;
	ts = tcp_tsval(p, t, &tsval);
	if (ts != 1 || (tp->rx_opt.ts_recent && seq_before(tsval, tp->rx_opt.ts_recent)))
		return IWX_FP_SKIP_PAWS;
	return IWX_FP_NO_REFUSAL;
}

/* The packet, before its socket is looked at: a reason to refuse all of it, or none
 * (IWX_FP_NO_REFUSAL). */
static __always_inline __u32 packet_refusal(struct pkt *p, const struct tcp_pkt *t)
{
	if ((t->flags & (TCPF_URG | TCPF_RST | TCPF_SYN | TCPF_ACK)) != TCPF_ACK)
		return IWX_FP_SKIP_TCP_FLAGS;	/* urgent data leaves the stream (RFC 9293 §3.8.5) */
	if (p->other_host)
		return IWX_FP_SKIP_NOT_HOST;
	/* a VLAN's frames reach TCP through its device (vlan_do_receive), TC there sees
	   them untagged; where none is, the host drops them */
	if (p->vlan)
		return IWX_FP_SKIP_VLAN;
	if (t->ip_bad)
		return IWX_FP_SKIP_IP_HEADER;
	if (!p->csum_good && !tcp_csum_good(p, t))
		return IWX_FP_SKIP_CSUM;
	return IWX_FP_NO_REFUSAL;
}

/*
 * The socket the 4-tuple leads to: is it the connection's? Its window, and whether TCP
 * would refuse the segment (w->refusal, unless the packet is refused already).
 */
static __always_inline bool socket_of(void *ctx, struct pkt *p, const struct tcp_pkt *t,
				      const struct iwx_fp_conn *conn, struct walk *w)
{
	struct bpf_sock_tuple tuple = {};
	struct bpf_sock *sk;
	struct tcp_sock *tp;
	__u32 size;
	bool mine = false;

	if (t->key.v6) {
		__builtin_memcpy(tuple.ipv6.saddr, t->key.saddr, 16);
		__builtin_memcpy(tuple.ipv6.daddr, t->key.daddr, 16);
		tuple.ipv6.sport = t->key.sport;
		tuple.ipv6.dport = t->key.dport;
		size = sizeof(tuple.ipv6);
	} else {
		tuple.ipv4.saddr = t->key.saddr[0];
		tuple.ipv4.daddr = t->key.daddr[0];
		tuple.ipv4.sport = t->key.sport;
		tuple.ipv4.dport = t->key.dport;
		size = sizeof(tuple.ipv4);
	}
	sk = bpf_skc_lookup_tcp(ctx, &tuple, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return false;
	tp = bpf_skc_to_tcp_sock(sk);
	if (tp && tp->inet_conn.icsk_inet.sk.__sk_common.skc_cookie.counter == (long long)conn->cookie) {
		w->win_lo = tp->rcv_nxt;
		w->win_hi = tp->rcv_wup + tp->rcv_wnd;
		if (w->refusal == IWX_FP_NO_REFUSAL)
			w->refusal = tcp_refusal(p, t, tp);
		mine = true;
	}
	bpf_sk_release(sk);
	return mine;
}

/*
 * Take the connection's slot. Another CPU may hold it (a sender that moved between CPUs
 * has packets of one stream in two CPUs' backlogs): wait a little, for it walks one packet.
 */
struct claim {
	struct iwx_fp_slot	*s;
	bool			got;
};

static long try_claim(__u32 i, struct claim *c)
{
	(void)i;
	c->got = __sync_val_compare_and_swap(&c->s->busy, 0, 1) == 0;
	return c->got;
}

static __always_inline bool claim(struct iwx_fp_slot *s)
{
	struct claim c = { .s = s };

	bpf_loop(CLAIM_TRIES, try_claim, &c, 0);
	return c.got;
}

static __always_inline void fastpath(void *ctx, struct pkt *p)
{
	struct walk w = { .p = p };
	struct iwx_fp_cpu *cpu;
	const struct iwx_fp_conn *conn;
	struct iwx_fp_slot *s;
	struct tcp_pkt t;
	bool whole;

	if (!parse(p, &t))
		return;
	cpu = cpu_enter();
	conn = bpf_map_lookup_elem(&iwx_fp_conns, &t.key);
	if (!conn)
		goto out;
	s = bpf_map_lookup_elem(&iwx_fp_slots, &conn->slot);
	w.ifc = bpf_map_lookup_elem(&iwx_fp_ifaces, &p->ifindex);
	if (!s)
		goto out;
	w.refusal = packet_refusal(p, &t);
	if (!socket_of(ctx, p, &t, conn, &w))
		goto out;	/* a socket iwxd no longer has (it ended or iwxd died) */
	if (!claim(s)) {
		/* another CPU follows this stream: this packet's FPDUs go unseen, which is a gap */
		if (w.ifc)
			w.ifc->skipped[IWX_FP_SKIP_BUSY]++;
		ring(s, conn->slot, w.ifc);	/* and iwxd must read them */
		goto out;
	}
	w.s = s;
	w.conn = conn;
	w.off = t.payload;
	w.end = t.end;
	s->c.packets++;
	if (w.ifc)
		w.ifc->packets++;
	w.base = conn->mark_base;
	whole = conn->markers ? walk_marked(&w, t.seq, t.end - t.payload) :
				walk_packet(&w, t.seq, t.end - t.payload);
	wake_for(&w, t.seq, t.end - t.payload, whole);
	__sync_lock_test_and_set(&s->busy, 0);
out:
	cpu_leave(cpu);
}

SEC("tc")
int iwx_tc(struct __sk_buff *skb)
{
	struct sk_buff *kskb = bpf_cast_to_kern_ctx(skb);
	struct pkt p = { .len = skb->len, .ifindex = skb->ifindex };
	__u8 summed = BPF_CORE_READ_BITFIELD(kskb, ip_summed);

	/* PARTIAL: built on this host, never on a wire; UNNECESSARY: the device checked it */
	p.csum_good = summed == CHECKSUM_PARTIAL || summed == CHECKSUM_UNNECESSARY;
	p.other_host = skb->pkt_type != PACKET_HOST;	/* eth_type_trans said */
	p.vlan = skb->vlan_present;
	if (!bpf_dynptr_from_skb(skb, 0, &p.dp))
		fastpath(skb, &p);
	return TC_ACT_UNSPEC;	/* on to the next program, or to the stack */
}

/*
 * Is the frame addressed to the interface's own MAC address, as eth_type_trans will find
 * (PACKET_HOST)? Not another host's (promiscuous mode), nor broadcast or multicast.
 */
static __always_inline bool for_this_host(struct xdp_md *xdp, struct pkt *p)
{
	struct xdp_buff *x = bpf_cast_to_kern_ctx(xdp);
	const unsigned char *addr = BPF_CORE_READ(x, rxq, dev, dev_addr);
	__u8 mine[ETH_ALEN], dst[ETH_ALEN];

	if (!addr || bpf_probe_read_kernel(mine, sizeof(mine), addr) ||
	    bpf_dynptr_read(dst, sizeof(dst), &p->dp, 0, 0))
		return false;
	for (int i = 0; i < ETH_ALEN; i++)
		if (mine[i] != dst[i])
			return false;
	return true;
}

SEC("?xdp.frags")	/* loaded only by fastpath_xdp.c, through libxdp */
int iwx_xdp(struct xdp_md *xdp)
{
	struct pkt p = { .len = bpf_xdp_get_buff_len(xdp), .ifindex = xdp->ingress_ifindex };

	/* XDP is told nothing of checksums: the program checks them itself */
	if (!bpf_dynptr_from_xdp(xdp, 0, &p.dp)) {
		p.other_host = !for_this_host(xdp, &p);
		fastpath(xdp, &p);
	}
	return XDP_PASS;
}

/* ------------------------------------------------------- what TCP accepted */

/*
 * TCP takes up a segment of a followed, ESTABLISHED socket (tcp_rcv_established, under the
 * socket's lock). Where the records' FPDUs lie in its new bytes (from rcv_nxt on: what
 * TCP already has, it has from another segment), compare them with the segment's (their
 * CRC), and mark each (fastpath_maps.h: TCP stays in charge).
 */
struct acceptance {
	struct bpf_dynptr	*dp;		/* the segment from its TCP header */
	struct iwx_fp_slot	*s;
	const struct iwx_fp_conn *conn;
	__u32			seq, hlen;	/* its first payload byte's; where that is in dp */
	__u32			from, end;	/* its new bytes: [from, end) */
	__u32			i, tail;	/* after the next record back; the oldest's */
	bool			wipe;		/* [from, end) never entered the stream: unmark */
};

/* The record's CRC word against TCP's bytes there: 1 the same, 0 not in this read, -1 another. */
static __always_inline int same_crc(struct acceptance *a, const struct iwx_fp_rec *r, __u32 ulen)
{
	__u32 i = iwx_mpa_unmarked_len(ulen) - IWX_MPA_CRC_LEN, at, got, want;
	__u8 crc_at = (r->trailer_len - IWX_MPA_CRC_LEN) & 3;

	at = r->seq + (a->conn->markers ? iwx_mpa_marked_off(r->seq - a->conn->mark_base, i) : i);
	if (seq_before(at, a->from) || seq_before(a->end, at + 4))
		return 0;
	if (bpf_dynptr_read(&got, sizeof(got), a->dp, a->hlen + (at - a->seq), 0))
		return 0;
	__builtin_memcpy(&want, r->trailer + crc_at, sizeof(want));
	return got == want ? 1 : -1;
}

#define ACCEPT_MAX	1024	/* records looked at per segment: more than 64 KiB holds */
#define ACCEPT_MARKERS	64	/* ... with markers, where they come in no order */

/* How far an FPDU of ulen may reach in the stream: with markers, at most one for every
 * 512 bytes and one more at each end (RFC 5044 §4.3). */
static __always_inline __u32 wire_len(const struct iwx_fp_conn *conn, __u32 ulen)
{
	__u32 len = iwx_mpa_unmarked_len(ulen);

	return conn->markers ? len + IWX_MPA_MARKER_LEN * (len / IWX_MPA_MARKER_DATA + 2) : len;
}

/*
 * The next record back from the newest: those of this segment were written just now (the
 * program at the hook saw it first). In stream order without markers, one whose CRC lies
 * before the new bytes ends the walk: all before it lie further back.
 */
static long accept_one(__u32 n, struct acceptance *a)
{
	struct iwx_fp_rec *r;
	__u32 ulen, acc, seq;
	int same;

	if (a->i == a->tail || (a->conn->markers && n >= ACCEPT_MARKERS))
		return 1;
	r = &a->s->ring[--a->i & (IWX_FP_RING - 1)];
	seq = r->seq;
	ulen = (__u32)r->hdr[0] << 8 | r->hdr[1];
	if (!a->conn->markers && seq_before(seq + iwx_mpa_unmarked_len(ulen), a->from + 1))
		return 1;
	if (a->wipe) {	/* any mark on an FPDU that overlaps: the bytes were not TCP's */
		if (seq_before(seq, a->end) && seq_before(a->from, seq + wire_len(a->conn, ulen)))
			r->accepted = IWX_FP_ACC_TAG(seq);
		return 0;
	}
	acc = r->accepted;
	if ((acc & ~IWX_FP_ACC_BITS) != IWX_FP_ACC_TAG(seq))
		acc = IWX_FP_ACC_TAG(seq);	/* not marked yet */
	if (acc & (IWX_FP_ACC_OK | IWX_FP_ACC_BAD))
		return 0;
	/* one read per FPDU (fastpath_maps.h) */
	same = same_crc(a, r, ulen);
	acc |= same > 0 ? IWX_FP_ACC_OK : same < 0 ? IWX_FP_ACC_BAD : 0;
	r->accepted = acc;
	return 0;
}

/*
 * Without markers, records lie in stream order: the first that starts at or after the
 * segment's end, found by halving. Those after it are of packets the hook has seen and TCP
 * not yet (a batch of them, or while iwxd holds the socket): walked, they would cost a
 * step each for every segment. Should iwxd take records meanwhile, the walk just starts
 * elsewhere: a record it leaves unmarked is read, not trusted.
 */
static __always_inline __u32 after_segment(const struct acceptance *a)
{
	__u32 lo = 0, hi = a->i - a->tail;	/* counted from the oldest: the answer is in [lo, hi] */

	if (hi > IWX_FP_RING)
		return a->i;	/* iwxd took records meanwhile: the walk sorts it out */
	for (int k = 0; k < 13 && lo < hi; k++) {	/* 13: log2(IWX_FP_RING) + 1 */
		__u32 mid = lo + (hi - lo) / 2;

		if (seq_before(a->s->ring[(a->tail + mid) & (IWX_FP_RING - 1)].seq, a->end))
			lo = mid + 1;
		else
			hi = mid;
	}
	return a->tail + lo;
}

/*
 * Every segment of an ESTABLISHED socket passes here first, the data TCP queues among
 * them, whichever way it came (fast path or not, from its backlog, before or after the
 * out-of-order queue). Data accepted elsewhere (in FIN_WAIT, say) leaves records unmarked:
 * iwxd reads those FPDUs itself.
 */
SEC("tp_btf/tcp_probe")
int iwx_accepted(__u64 *ctx)
{
	struct sock *sk = (void *)ctx[0];
	const struct sk_buff *skb = (const void *)ctx[1];
	struct acceptance a = {};
	struct bpf_dynptr dp;
	struct tcp_sock *tp;
	__u8 th[14];

	a.conn = bpf_sk_storage_get(&iwx_fp_socks, sk, NULL, 0);
	if (!a.conn || !(a.s = bpf_map_lookup_elem(&iwx_fp_slots, &a.conn->slot)))
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp || bpf_dynptr_from_skb((struct __sk_buff *)skb, 0, &dp) ||
	    bpf_dynptr_read(th, sizeof(th), &dp, 0, 0))
		return 0;
	a.dp = &dp;
	a.hlen = (th[12] >> 4) * 4;
	a.seq = (__u32)th[4] << 24 | (__u32)th[5] << 16 | (__u32)th[6] << 8 | th[7];
	if (skb->len <= a.hlen)
		return 0;	/* no data: an ACK */
	a.end = a.seq + (skb->len - a.hlen);
	a.from = seq_before(a.seq, tp->rcv_nxt) ? tp->rcv_nxt : a.seq;
	a.tail = *(volatile __u32 *)&a.s->tail;
	a.i = *(volatile __u32 *)&a.s->head;	/* published after their record (place) */
	/* TCP's verdict on the last segment judged: queued, rcv_nxt is past its bytes */
	if (a.s->judged_from != a.s->judged_end && seq_before(tp->rcv_nxt, a.s->judged_end)) {
		struct acceptance w = a;

		w.wipe = true;
		w.from = a.s->judged_from;
		w.end = a.s->judged_end;
		if (!w.conn->markers)
			w.i = after_segment(&w);
		bpf_loop(ACCEPT_MAX, accept_one, &w, 0);
		a.s->judged_from = a.s->judged_end = 0;
	}
	if (!seq_before(a.from, a.end))
		return 0;	/* nothing new */
	a.s->judged_from = a.from;
	a.s->judged_end = a.end;
	if (!a.conn->markers)
		a.i = after_segment(&a);
	bpf_loop(ACCEPT_MAX, accept_one, &a, 0);
	return 0;
}

/*
 * A socket's read position (copied_seq) and what TCP expects next (rcv_nxt), for the
 * socket whose cookie is anchor_cookie: together, under the socket's lock, which the
 * iterator holds. iwxd, the socket's only reader, asks between reads.
 */
SEC("iter/tcp")
int iwx_anchor(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;
	__u32 seq[2];

	if (!skc)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp || tp->inet_conn.icsk_inet.sk.__sk_common.skc_cookie.counter != (long long)anchor_cookie)
		return 0;
	seq[0] = tp->copied_seq;
	seq[1] = tp->rcv_nxt;
	bpf_seq_write(ctx->meta->seq, seq, sizeof(seq));
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
