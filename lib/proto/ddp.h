/* SPDX-License-Identifier: MIT */
/* DDP segments (RFC 5041) carrying RDMAP (RFC 5040): headers, decoding, segmentation. */
#ifndef IWX_DDP_H
#define IWX_DDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/term.h"
#include "proto/wire.h"

/* One DDP segment, decoded to host byte order. */
struct iwx_ddp_seg {
	bool		tagged;
	bool		last;
	uint8_t		opcode;		/* enum iwx_rdmap_opcode */
	uint8_t		rdmap_ctrl;	/* raw RsvdULP byte: version, opcode */
	/* tagged buffer model */
	uint32_t	stag;
	uint64_t	to;
	/* untagged buffer model */
	uint32_t	inval_stag;
	uint32_t	qn;
	uint32_t	msn;
	uint32_t	mo;
	/* the ULP payload that follows the DDP header (a Read Request or Terminate header included) */
	const uint8_t	*payload;
	uint32_t	len;
	/*
	 * the header as received (over SCTP, its RFC 5041 equivalent), for a
	 * Terminate's copy (RFC 5040 §4.8)
	 */
	uint8_t		hdr[IWX_DDP_UNTAGGED_HDR_LEN];
	uint8_t		hdr_len;
	uint16_t	ulpdu_len;	/* the MPA ULPDU_LENGTH: header and payload */
};

/* Header length for a segment whose first byte (DDP control) is ctrl. */
static inline size_t iwx_ddp_hdr_len(uint8_t ddp_ctrl)
{
	return (ddp_ctrl & IWX_DDP_FLAG_TAGGED) ? IWX_DDP_TAGGED_HDR_LEN : IWX_DDP_UNTAGGED_HDR_LEN;
}

/*
 * Decode the DDP header at the start of a ULPDU of len bytes and check what can be
 * checked without any buffer: DDP version, RDMAP version, opcode, the tagged flag
 * and queue number each opcode must use (RFC 5040 §4.1 Figure 4, RFC 5041 §7.1).
 * Returns 0, or -EPROTO with *cause set to the Terminate the error calls for.
 * Only the header's bytes are read, so a receiver may call it before the payload
 * has arrived, with len the full ULPDU length. seg->payload points into ulpdu.
 */
int iwx_ddp_decode(const uint8_t *ulpdu, size_t len, struct iwx_ddp_seg *seg,
		   struct iwx_term_cause *cause);

/*
 * The checks iwx_ddp_decode makes, on a segment already decoded (the DDP version
 * is read from seg->hdr): for decoders of other framings, such as the SCTP shim.
 * Returns 0, or -EPROTO with *cause.
 */
int iwx_ddp_check_seg(const struct iwx_ddp_seg *seg, struct iwx_term_cause *cause);

/* Write the RFC 5041 header that carries seg's fields; returns its length, 14 or 18. */
size_t iwx_ddp_hdr_write(uint8_t *hdr, const struct iwx_ddp_seg *seg);

/* A message to segment: what RDMAP hands DDP (RFC 5041 §5.2). */
struct iwx_ddp_msg {
	uint8_t		opcode;		/* decides tagged/untagged and QN */
	uint32_t	stag;		/* tagged: Data Sink STag */
	uint64_t	to;		/* tagged: TO of the first byte */
	uint32_t	msn;		/* untagged */
	uint32_t	inval_stag;	/* Send with Invalidate variants */
	uint32_t	len;		/* ULP message length */
};

/*
 * Walks a message segment by segment, each payload no larger than a bound (for MPA,
 * what leaves each ULPDU within mulpdu): TO or MO advancing, L on the last, exactly
 * one segment for an empty message.
 */
struct iwx_ddp_segmenter {
	struct iwx_ddp_msg	msg;
	uint32_t		max_payload;
	uint32_t		off;
	bool			done;
};

/* Returns -EINVAL when mulpdu cannot hold the header plus one byte, or for a bad opcode. */
int iwx_ddp_segmenter_init(struct iwx_ddp_segmenter *s, const struct iwx_ddp_msg *msg,
			   uint32_t mulpdu);

/* Any bound on each segment's payload: -EINVAL when it is 0, or for a bad opcode. */
int iwx_ddp_segmenter_init_payload(struct iwx_ddp_segmenter *s, const struct iwx_ddp_msg *msg,
				   uint32_t max_payload);

/*
 * Next segment's payload: its offset in the message, its length and whether it is
 * the last. Returns false when done. The caller writes the header it frames with.
 */
bool iwx_ddp_segmenter_step(struct iwx_ddp_segmenter *s, uint32_t *off, uint32_t *len,
			    bool *last);

/*
 * Next segment: writes its header to hdr (18 bytes of room) and returns the header
 * length, with the payload's offset in the message and its length; 0 when done.
 */
size_t iwx_ddp_segmenter_next(struct iwx_ddp_segmenter *s, uint8_t *hdr,
			      uint32_t *off, uint32_t *len);

/*
 * The same, its ULPDU (header and payload) no longer than most this once, which leaves
 * room for the header and a byte: a segment may carry any part of its message.
 */
size_t iwx_ddp_segmenter_next_at_most(struct iwx_ddp_segmenter *s, uint32_t most, uint8_t *hdr,
				      uint32_t *off, uint32_t *len);

/*
 * The header fields of one segment of msg, payload at offset off, last or not
 * (payload, len and hdr are left zero): what every framing of a segment encodes.
 */
void iwx_ddp_seg_of_msg(struct iwx_ddp_seg *seg, const struct iwx_ddp_msg *msg, uint32_t off,
			bool last);

/* Encode the header of one segment of msg: payload at offset off, last or not. */
size_t iwx_ddp_hdr_encode(uint8_t *hdr, const struct iwx_ddp_msg *msg, uint32_t off, bool last);

#endif /* IWX_DDP_H */
