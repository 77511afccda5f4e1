/* SPDX-License-Identifier: MIT */
/*
 * The fast path's shared state: what iwxd puts in the BPF maps of bpf/fastpath/maps.h,
 * and what the programs write back for iwxd to read (a connection's slot is memory both
 * map). No libc: the programs and user space build it alike.
 *
 * A connection's slot carries the programs' view of its stream: where the next FPDU
 * starts, and whether that is certain. It is certain only once iwxd has confirmed a
 * boundary the programs proposed (the idea of the kernel's NVMe-TCP DDP offload: the
 * hook proposes, software confirms), and stays so while the packets come in order.
 * Every FPDU placed leaves a record in the slot's ring, which iwxd takes instead of
 * reading the FPDU's bytes.
 *
 * With markers (RFC 5044 §4.3) in what a connection receives, every packet says where
 * its FPDUs start: the programs need no history of the stream, and place the FPDUs of
 * a packet that came out of order as well, before TCP has the bytes in front of it
 * (RFC 5041 §1.1). Records then come in the order packets did, not the stream's; each
 * says where its FPDU is, and its header and trailer are without the markers (which
 * the programs checked).
 *
 * TCP stays in charge. The programs at the hooks check what TCP would refuse, but cannot
 * see all of it (netfilter, IPsec policy, TCP's state moving on between the two), and a
 * record is only the word of a packet. So iwxd takes a placed FPDU only once TCP holds
 * those very bytes. iwx_accepted runs where TCP takes up each segment of an ESTABLISHED
 * socket (tracepoint tcp_probe, under the socket's lock, before TCP decides), and
 * compares each record with the segment's new bytes (from rcv_nxt on) there, marking it
 * OK or BAD. Whether TCP then queued them, it learns at the socket's next segment: if
 * rcv_nxt has not passed the last one's bytes, TCP refused them (PAWS, an unacceptable
 * ACK, any check after the tracepoint), and their marks are wiped; TCP's own copy, when
 * it comes, is judged afresh. iwxd judges a record once TCP holds its bytes (SIOCINQ):
 * the last segment judged over them is then the one TCP queued them from, so the mark
 * is TCP's verdict. (Bytes are judged before the segment that carried them is known to
 * be TCP's; no hook after TCP's decision runs BPF on this kernel: fentry on
 * tcp_queue_rcv is refused.)
 * A record TCP accepted other bytes for, or one no segment was compared with (data taken
 * outside ESTABLISHED, or cut otherwise), iwxd drops, and reads TCP's bytes as if nothing
 * had been placed: they land over the placed ones.
 *
 * Wake-ups: while placed FPDUs stream in, iwxd need not wake for each packet. It sets
 * the socket's SO_RCVLOWAT high and the slot's lazy flag, and the programs ring it (a
 * record in iwx_fp_bells) at the first packet it must read itself: one with bytes not
 * placed, or a message's last segment (LAST: a Read completes there, and a program may
 * poll a Write's last byte; a message of one segment too). A message's first segment
 * (FIRST) that is not its last does not ring: it waits for iwxd's next read, as the
 * placed FPDUs behind it do. wake_seq, where the last packet that rang ends, tells iwxd
 * whether one came before it went lazy. A bell is the slot's number, with
 * IWX_FP_BELL_STAY when the packet rang for a message's end only (all else in it placed,
 * or a message's first segment): iwxd then takes what there is and stays lazy (leaving
 * its low-water mark at each message's end cost a 1 MiB Write three or four system calls
 * more).
 */
#ifndef IWX_FASTPATH_MAPS_H
#define IWX_FASTPATH_MAPS_H

#include <linux/types.h>

#include "proto/ddp_check.h"
#include "proto/fastpath_stats.h"

#define IWX_FP_BELL_STAY	(1u << 31)	/* in a bell: iwxd may stay lazy */
#define IWX_FP_RING		4096	/* records per connection, a power of two: 6 MiB of FPDUs behind iwxd */
#define IWX_FP_COPY_ELEMS	17	/* a payload of up to 64 KiB spans at most 17 4-KiB elements */

/* A connection, as its packets arrive: source is the peer. IPv4 in the first word. */
struct iwx_fp_key {
	__u32	saddr[4];
	__u32	daddr[4];
	__be16	sport;
	__be16	dport;
	__u32	v6;
};

/* What iwxd says of a connection; fixed while it is in the map. */
struct iwx_fp_conn {
	__u64	cookie;		/* SO_COOKIE of its socket: placing needs that socket */
	__u32	slot;		/* index in the slots map */
	__u32	pd;		/* protection domain of its queue pair */
	__u8	markers;	/* markers in what it receives */
	__u8	pad[3];		/* (it receives the MPA CRC: iwxd follows no other) */
	__u32	mark_base;	/* markers: TCP sequence number of the stream's first byte */
};

/*
 * What TCP accepted where a record's FPDU is, as iwx_accepted found when iwxd read there:
 * OK when its CRC word is the record's, BAD when it differs. The CRC covers the header and
 * the payload, so equal CRCs say the FPDU is the one whose CRC iwxd then checks the placed
 * bytes against (a forger who knew TCP's bytes could match it, as he could fool the CRC on
 * any path). Without the CRC nothing would vouch for the payload: iwxd follows no such
 * connection (issue 41: the header alone let a forged payload stand).
 */
#define IWX_FP_ACC_OK		(1u << 4)
#define IWX_FP_ACC_BAD		(1u << 5)
#define IWX_FP_ACC_BITS		0x3fu
/*
 * The rest of the word is the record's seq (its low bits cleared): a mark counts only for
 * the record it was made for. iwx_accepted runs beside iwxd and the placing programs,
 * which may move or reuse an entry meanwhile; a mark left on another record is no mark.
 */
#define IWX_FP_ACC_TAG(seq)	((seq) & ~IWX_FP_ACC_BITS)

/* A placed FPDU: what iwxd needs of it without reading it from the socket. */
struct iwx_fp_rec {
	__u32	seq;		/* TCP sequence number of its start (a marker that leads it) */
	__u8	hdr[16];	/* ULPDU_LENGTH and the tagged DDP header, markers left out */
	__u8	trailer[7];	/* pad and CRC, markers left out */
	__u8	trailer_len;
	__u32	accepted;	/* IWX_FP_ACC_TAG(seq) | IWX_FP_ACC_*: iwx_accepted's */
};

/*
 * The tagged segment that would continue the message of the last one in the stream, as
 * its sender cuts them: the same STag, at the tagged offset where that one ended. Only
 * such a segment is placed before iwxd has checked its CRC, so a header the CRC fails
 * cannot aim its payload anywhere else; a message's first segment is iwxd's to place.
 * Ahead of a gap (markers), the first FPDU of a packet may begin up to slack bytes past
 * to: no more payload than the gap's bytes can have come before it.
 */
struct iwx_fp_cut {
	__u64	to;
	__u32	stag;
	__u32	valid;		/* 0: the last one ended its message, or is not known */
	__u32	slack;
	__u32	rsvd;
};

/* iwxd's answers: a sequence number and a verdict in one word that it stores at once. */
#define IWX_FP_ANSWER(seq, v)	(((__u64)(seq) << 32) | (v))
#define IWX_FP_CONFIRM		1u	/* the proposal at seq is a boundary */
#define IWX_FP_DENY		2u	/* it is not */
#define IWX_FP_RELEASE		3u	/* the FPDU at seq (a Send with Invalidate) is taken */

/* One connection's slot (a BPF_F_MMAPABLE array element). */
struct iwx_fp_slot {
	/* the programs' (one at a time, holding busy) */
	__u32	busy;
	__u32	state;		/* enum iwx_fp_state */
	__u32	next_seq;	/* PROPOSED, SYNC: where the next FPDU starts (markers: in order) */
	__u32	mark_seq;	/* PROPOSED: the boundary proposed */
	__u32	held;		/* a Send with Invalidate at hold_seq waits for iwxd */
	__u32	hold_seq;
	__u32	head;		/* records written */
	__u32	island_seq;	/* SYNC: packets followed after a gap span [island_seq, */
	__u32	island_end;	/* island_end); 0: none */
	__u32	wake_seq;	/* the end of the last packet iwxd must read itself */
	/* iwx_accepted's (under the socket's lock): the new bytes of the last segment it
	   judged, [judged_from, judged_end); TCP had not decided on them then */
	__u32	judged_from;
	__u32	judged_end;
	struct iwx_fp_cut cut;	/* PROPOSED, SYNC: at next_seq */
	struct iwx_fp_cut walk_cut;	/* the packet's walk's, where it has got to */
	struct iwx_fp_cut island_cut;	/* at island_end */
	/* iwxd's */
	__u32	tail;		/* records taken */
	__u32	lazy;		/* iwxd sleeps on its low-water mark: ring it (the programs clear it) */
	__u64	answer;		/* to the proposal: IWX_FP_ANSWER(mark_seq, CONFIRM or DENY) */
	__u64	release;	/* IWX_FP_ANSWER(hold_seq, IWX_FP_RELEASE) */
	struct iwx_fp_counters c;
	struct iwx_fp_rec ring[IWX_FP_RING];
};

/* A region the programs may place into: an STag and where its bytes are. */
struct iwx_fp_stag {
	struct iwx_stag_desc desc;
	__u32	mem;		/* index of its memory in the memories map */
	__u32	rsvd;
	__u64	off;		/* byte of that memory at base_to */
};

/* Per CPU: odd while a program on it may use what the maps held when it started. */
struct iwx_fp_cpu {
	__u32	seq;
	__u32	rsvd[15];	/* a cache line each */
};

#endif /* IWX_FASTPATH_MAPS_H */
