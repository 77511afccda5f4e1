/* SPDX-License-Identifier: MIT */
/*
 * The receiving engine's side of the fast path: a connection's slot (fastpath_maps.h),
 * read where the programs write it. It answers the programs' proposals of where an FPDU
 * starts, lets them place again after a Send with Invalidate it has taken, and hands the
 * queue pair the records of FPDUs already placed, so that it discards their bytes from
 * the socket instead of reading them. Stream positions are the parser's (from 0 at full
 * operation); the anchor turns them into TCP sequence numbers.
 */
#ifndef IWX_LLP_TCP_FAST_H
#define IWX_LLP_TCP_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fastpath_maps.h"
#include "proto/ddp.h"

/*
 * With markers, the FPDUs the parser took, newest last: where each began (its
 * ULPDU_LENGTH) and its CRC word, TCP's. A record that comes behind the parser is judged
 * by them (iwx_fast_rx_peek). As many as two rings of records span: a gap's record is
 * found behind those placed ahead of it, a window of FPDUs at most.
 */
#define IWX_FAST_PAST	(2 * IWX_FP_RING)

struct iwx_fast_past {
	uint32_t	n;		/* taken so far: the last IWX_FAST_PAST are kept */
	struct {
		uint32_t	len_pos;
		uint8_t		crc[IWX_MPA_CRC_LEN];
	} fpdu[IWX_FAST_PAST];
};

struct iwx_fast_rx {
	struct iwx_fp_slot	*slot;		/* NULL: no fast path */
	uint32_t		anchor;		/* TCP sequence number of stream position 0 */
	bool			markers;	/* in the stream: records leave them out */
	/* records committed to: their bytes are being discarded from the socket */
	uint32_t		n;		/* from the slot's tail on */
	uint32_t		bytes;		/* their FPDUs' length, together */
	uint32_t		have;		/* ... discarded so far */
	uint8_t			**dst;		/* where each one's payload is, here, by ring
						   index: IWX_FP_RING of them (NULL when n is 0
						   and none are borrowed, llp_tcp.c) */
	/* the record dropped at the parser's position, recheck_pos, its FPDU taken otherwise:
	   what it placed must be rewritten there (iwx_fast_rx_settle_*) */
	bool			recheck;
	bool			clash;		/* another, unlike it, was dropped there too */
	uint32_t		recheck_pos;
	struct iwx_fp_rec	dropped;
	bool			stale_bad;	/* a record came for bytes already read (peek) */
	struct iwx_fast_past	*past;		/* with markers (NULL: none kept) */
};

/* An FPDU's length on the wire, markers included, from its record. */
uint32_t iwx_fast_rx_len(const struct iwx_fast_rx *f, const struct iwx_fp_rec *r);

/* The payload bytes the FPDU of a record placed. */
uint32_t iwx_fast_rx_payload(const struct iwx_fp_rec *r);

/*
 * The parser is at an FPDU boundary, stream position pos: confirm the programs'
 * proposal if it is this one, deny it if the stream has passed it.
 */
void iwx_fast_rx_boundary(struct iwx_fast_rx *f, uint32_t pos);

/* The Send with Invalidate that began at pos is taken: the programs may place again. */
void iwx_fast_rx_release(struct iwx_fast_rx *f, uint32_t pos);

/*
 * The record after the committed ones, if the programs wrote one; records of FPDUs
 * before position pos (read from the socket after all) are dropped on the way. Such a
 * record's FPDU may have been placed after the parser took TCP's there, over it: unless
 * it is TCP's (accepted by TCP, or, with markers, the CRC of the FPDU the parser took at
 * its position), stale_bad is set: what it placed cannot be made right. Without markers
 * records come in stream order, so such a record came late; with markers, records of a
 * gap's FPDUs come behind those placed ahead of it, beyond find's reach, and a duplicate
 * stays behind the record committed at its position: TCP's own, judged by the past.
 */
const struct iwx_fp_rec *iwx_fast_rx_peek(struct iwx_fast_rx *f, uint32_t pos);

/*
 * With markers (else it does nothing): bring the record of the FPDU at stream position
 * at, if one of the next few is, to the front of those not committed (records come in the
 * order packets did, and the ones that fill a gap come after those placed ahead of it).
 */
void iwx_fast_rx_find(struct iwx_fast_rx *f, uint32_t at);

/* With markers (past kept): the parser took an FPDU at len_pos with this CRC word. */
void iwx_fast_rx_passed(struct iwx_fast_rx *f, uint32_t len_pos,
			const uint8_t crc[IWX_MPA_CRC_LEN]);

/* The stream position of a record. */
uint32_t iwx_fast_rx_pos(const struct iwx_fast_rx *f, const struct iwx_fp_rec *r);

/* What TCP accepted where a record's FPDU is (fastpath_maps.h: TCP stays in charge). */
enum iwx_fast_rx_acceptance {
	IWX_FAST_RX_ACCEPTED,	/* the record's FPDU (its CRC) */
	IWX_FAST_RX_REFUTED,	/* other bytes */
	IWX_FAST_RX_UNCHECKED,	/* not compared (yet): TCP may not have them */
};

enum iwx_fast_rx_acceptance iwx_fast_rx_acceptance(const struct iwx_fp_rec *r);

/* The record after the committed ones (none are) is dropped: its FPDU is read instead. */
void iwx_fast_rx_drop(struct iwx_fast_rx *f);

/*
 * A record dropped at the parser's position: TCP's FPDU there, its header decoded as seg,
 * rewrites every byte the record's FPDU placed only if it is tagged, with the same STag,
 * over a range that holds the record's. Else the placed bytes stay where TCP's never go.
 */
bool iwx_fast_rx_rewrites(const struct iwx_fp_rec *r, const struct iwx_ddp_seg *seg);

/* Record r, at stream position pos, is dropped: the FPDU there is taken otherwise. */
void iwx_fast_rx_dropped(struct iwx_fast_rx *f, const struct iwx_fp_rec *r, uint32_t pos);

/*
 * The FPDU at the dropped record's position is taken: from TCP's bytes, its ULPDU_LENGTH
 * at len_pos (a marker may lead it) and its header decoded as seg; or from record r at pos,
 * TCP's too and placed after the dropped one. false when what the dropped record placed is
 * not all rewritten so (or another unlike it was dropped there too): it cannot be made
 * right. true when nothing was dropped.
 */
bool iwx_fast_rx_settle_seg(struct iwx_fast_rx *f, uint32_t len_pos, const struct iwx_ddp_seg *seg);
bool iwx_fast_rx_settle_rec(struct iwx_fast_rx *f, uint32_t pos, const struct iwx_fp_rec *r);

/* The oldest committed record, taken: the slot may reuse its entry. */
void iwx_fast_rx_pop(struct iwx_fast_rx *f);

#endif /* IWX_LLP_TCP_FAST_H */
