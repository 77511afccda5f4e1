/* SPDX-License-Identifier: MIT */
/*
 * What the fast path reports of itself: why it did not place an FPDU, what it counted,
 * and where a connection's stream stands. The programs keep them in their maps and a
 * connection's slot (bpf/), iwxd hands them to `iwx attach` over the IPC (ipc/ipc.h).
 * No libc: the programs and user space build it alike.
 */
#ifndef IWX_FASTPATH_STATS_H
#define IWX_FASTPATH_STATS_H

#include <linux/types.h>

/* Why an FPDU was not placed (the program counts each under one reason). */
#define IWX_FP_SKIPS(X)								\
	X(UNTAGGED,	"untagged",	"a Send, Read Request or Terminate: iwxd's")	\
	X(EMPTY,	"empty",	"a tagged segment without payload")		\
	X(FIRST,	"first",	"not the segment that continues its message: iwxd places it once its CRC holds") \
	X(LAST,		"last",		"a message's last segment, whose last byte a program may poll and answer in: iwxd places it once its CRC holds") \
	X(UNSYNC,	"unsync",	"start not certain: a gap iwxd has not confirmed, or no marker") \
	X(SPLIT,	"split",	"the FPDU does not end in the packet")	\
	X(HELD,		"held",		"behind a Send with Invalidate iwxd has not taken") \
	X(WINDOW,	"window",	"outside the socket's receive window")	\
	X(TCP_FLAGS,	"tcp_flags",	"RST, SYN, URG, or no ACK")		\
	X(NOT_HOST,	"not_host",	"a frame not addressed to this host (another MAC, broadcast, multicast)") \
	X(VLAN,		"vlan",		"a VLAN-tagged frame: TCP gets it from that VLAN's device, if any (attach there)") \
	X(IP_HEADER,	"ip_header",	"a bad IPv4 header checksum, IPv4 options, or a bad IP length") \
	X(ACK,		"ack",		"an ACK TCP refuses: of data not sent, or too old (RFC 5961 §5.2)") \
	X(PAWS,		"paws",		"an old timestamp, or none where the connection has them (RFC 7323 §5)") \
	X(TCP_STATE,	"tcp_state",	"the socket is not ESTABLISHED, or signs its segments (TCP-MD5, TCP-AO)") \
	X(CSUM,		"csum",		"the TCP checksum is not known good")	\
	X(HEADER,	"header",	"not a valid DDP/RDMAP header")		\
	X(STAG,		"stag",		"STag unknown to the fast path, or invalid")	\
	X(STAG_PD,	"stag_pd",	"STag of another protection domain")	\
	X(ACCESS,	"access",	"the region does not allow it")		\
	X(BOUNDS,	"bounds",	"outside the region")			\
	X(TO_WRAP,	"to_wrap",	"the tagged offset wraps")		\
	X(MEMORY,	"memory",	"the region's memory is not reachable by BPF")	\
	X(RING_FULL,	"ring_full",	"iwxd has not taken the records before it")	\
	X(MARKER,	"marker",	"a marker that does not point at its FPDU")	\
	X(BUSY,		"busy",		"another CPU had the connection")

#define IWX_FP_SKIP_ENUM(n, name, why)	IWX_FP_SKIP_##n,
enum iwx_fp_skip { IWX_FP_SKIPS(IWX_FP_SKIP_ENUM) IWX_FP_SKIP_N };
#undef IWX_FP_SKIP_ENUM

/* Counters, per connection (in its slot) and per interface (summed over CPUs). */
struct iwx_fp_counters {
	__u64	packets;	/* of known connections, looked at */
	__u64	placed_fpdus;
	__u64	placed_bytes;
	__u64	proposals;	/* boundaries proposed after a gap */
	__u64	confirmed;	/* ... and confirmed by iwxd */
	__u64	behind;		/* packets all before the next FPDU: resent, or inside a long one */
	__u64	stopped;	/* packets after the stream stopped (not walked) */
	__u64	bells;		/* times the programs woke iwxd from its low-water mark */
	__u64	ahead;		/* FPDUs placed out of order: from packets ahead of TCP's stream */
	__u64	skipped[IWX_FP_SKIP_N];
};

/* Where a connection's stream stands for the programs (its slot's state). */
enum iwx_fp_state {
	IWX_FP_UNSYNC,		/* no boundary known: propose one at the next packet */
	IWX_FP_PROPOSED,	/* mark_seq proposed, followed since; waits for iwxd */
	IWX_FP_SYNC,		/* next_seq is certain: place */
	IWX_FP_STOPPED,		/* the stream is broken or ended: place nothing more */
};

#endif /* IWX_FASTPATH_STATS_H */
