/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What kernel TCP would refuse, which the programs must not place: a packet's own flaws
 * (packet_refusal: its flags, whom it is for, a VLAN tag, its IP header, its checksum)
 * and, against its socket, what TCP checks before it queues the bytes (tcp_refusal: the
 * socket's state and signatures, the ACK, the timestamp). Each answers a skip reason or
 * IWX_FP_NO_REFUSAL, and changes nothing.
 */
#ifndef IWX_BPF_FP_REFUSAL_H
#define IWX_BPF_FP_REFUSAL_H

#include <linux/bpf.h>
#include <linux/in.h>
#include <stdbool.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fastpath/maps.h"
#include "fastpath/packet.h"
#include "fastpath/verdict.h"

#include "kernel.h"

#define CSUM_CHUNK	512	/* bytes summed at a time when the program checks a checksum (the most
				   bpf_csum_diff takes) */
#define CSUM_CHUNKS	128	/* ... at most: 64 KiB */

/* TCP header byte 13 (RFC 9293 §3.1) */
#define TCPF_URG	0x20
#define TCPF_ACK	0x10
#define TCPF_RST	0x04
#define TCPF_SYN	0x02
#define TCPOPT_EOL	0
#define TCPOPT_NOP	1
#define TCPOPT_TS	8	/* RFC 7323 §3: kind 8, length 10, TSval, TSecr */
#define TCP_OPTS_MAX	40

/* The Makefile's iwxd_unchecked leaves out the checks TCP makes after iwx_accepted's
 * tracepoint (the ACK, PAWS): its tests see TCP's verdict decide without them. */
#ifdef IWX_FP_TEST_NO_TCP_CHECKS
#define TCP_LATER_CHECKS	0
#else
#define TCP_LATER_CHECKS	1
#endif

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

#endif /* IWX_BPF_FP_REFUSAL_H */
