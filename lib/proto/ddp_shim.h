/* SPDX-License-Identifier: MIT */
/*
 * DDP over SCTP through the SCTP DDP adaptation (draft-otis-sctp-ddp-00): the DDP
 * header that leads every DATA chunk, as iwx maps RDMAP onto it (docs/ddp-over-sctp.md).
 * Segments decode to the struct iwx_ddp_seg that the TCP path uses, so everything above
 * DDP, the Terminate's copy of the header included, is the same on both.
 */
#ifndef IWX_DDP_SHIM_H
#define IWX_DDP_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/ddp.h"
#include "proto/term.h"
#include "proto/wire.h"

/* iwx_shim_decode's answer for the set-up chunk, whose payload is an MPA Request or Reply. */
#define IWX_SHIM_SETUP	1

static inline size_t iwx_shim_hdr_len(bool tagged)
{
	return tagged ? IWX_SHIM_TAGGED_HDR_LEN : IWX_SHIM_UNTAGGED_HDR_LEN;
}

/*
 * Encode the header of one chunk of msg (IWX_SHIM_MAX_HDR_LEN bytes of room): payload
 * at offset off, DISCLOSE when last. Returns its length, 20 tagged or 28 untagged.
 */
size_t iwx_shim_hdr_encode(uint8_t *hdr, const struct iwx_ddp_msg *msg, uint32_t off, bool last);

/* Encode the header of the set-up chunk (16 bytes); the MPA frame follows it. */
size_t iwx_shim_setup_hdr(uint8_t *hdr);

/* The SCTP stream that carries the messages of opcode (a valid one). */
uint16_t iwx_shim_stream(uint8_t opcode);

/*
 * Largest payload of one chunk of a tagged or untagged message when a chunk carries at
 * most maxseg bytes of user data (SCTP_MAXSEG); 0 when that cannot hold the header and
 * one byte. For iwx_ddp_segmenter_init_payload, whose segments iwx_shim_hdr_encode frames.
 */
uint32_t iwx_shim_max_payload(uint32_t maxseg, bool tagged);

/*
 * Decode the user data of one DATA chunk, len bytes, from a peer whose Adaptation Layer
 * Indication was peer_indication, into seg exactly as iwx_ddp_decode fills it for the
 * same segment over MPA: seg->hdr is the equivalent RFC 5041 header, seg->ulpdu_len that
 * header's length plus the payload's. Returns 0 for a DDP segment, IWX_SHIM_SETUP for the
 * set-up chunk (only seg->payload, len and last are set), or -EPROTO with *cause: the
 * adaptation's own errors (LLP layer, IWX_SHIM_ETYPE), then iwx_ddp_check_seg's.
 */
int iwx_shim_decode(const uint8_t *chunk, size_t len, uint32_t peer_indication,
		    struct iwx_ddp_seg *seg, struct iwx_term_cause *cause);

#endif /* IWX_DDP_SHIM_H */
