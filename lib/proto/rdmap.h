/* SPDX-License-Identifier: MIT */
/*
 * RDMAP (RFC 5040): opcodes, the Read Request header and the Terminate message; RFC 7306's
 * Atomic Request and Response and Immediate Data.
 */
#ifndef IWX_RDMAP_H
#define IWX_RDMAP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/ddp.h"
#include "proto/term.h"
#include "proto/wire.h"

/* RDMAP control byte for opcode (RDMAP version 1). */
static inline uint8_t iwx_rdmap_ctrl(uint8_t opcode)
{
	return IWX_RDMAP_VERSION << IWX_RDMAP_VERSION_SHIFT | (opcode & IWX_RDMAP_OPCODE_MASK);
}

/* "RDMA Write", "Send with SE and Invalidate", ...; "reserved" past Terminate. */
const char *iwx_rdmap_opcode_name(uint8_t opcode);

/* RFC 5040 Figure 4: Write and Read Response are tagged, the rest untagged. */
static inline bool iwx_rdmap_opcode_tagged(uint8_t opcode)
{
	return opcode == IWX_OP_WRITE || opcode == IWX_OP_READ_RESP;
}

/* RFC 5040 Figure 4, RFC 7306 §4.1: the queue an untagged opcode must use. */
static inline uint32_t iwx_rdmap_opcode_qn(uint8_t opcode)
{
	switch (opcode) {
	case IWX_OP_READ_REQ:
	case IWX_OP_ATOMIC_REQ:
		return IWX_QN_READ_REQ;
	case IWX_OP_TERMINATE:
		return IWX_QN_TERMINATE;
	case IWX_OP_ATOMIC_RESP:
		return IWX_QN_ATOMIC_RESP;
	default:
		return IWX_QN_SEND;
	}
}

static inline bool iwx_rdmap_opcode_has_inval(uint8_t opcode)
{
	return opcode == IWX_OP_SEND_INV || opcode == IWX_OP_SEND_SE_INV;
}

static inline bool iwx_rdmap_opcode_solicited(uint8_t opcode)
{
	return opcode == IWX_OP_SEND_SE || opcode == IWX_OP_SEND_SE_INV || opcode == IWX_OP_IMM_SE;
}

static inline bool iwx_rdmap_opcode_imm(uint8_t opcode)
{
	return opcode == IWX_OP_IMM || opcode == IWX_OP_IMM_SE;
}

/*
 * On a stream without RFC 7306, a segment that uses it (its opcodes, queue 3) is what
 * RFC 5040 alone makes of it: -EPROTO with *cause an invalid queue number or opcode.
 */
static inline int iwx_rdmap_check_rfc5040(const struct iwx_ddp_seg *seg,
					  struct iwx_term_cause *cause)
{
	/* in iwx_ddp_check_seg's order: the queue number before the opcode */
	if (!seg->tagged && seg->qn >= IWX_QN_COUNT_RFC5040) {
		*cause = IWX_CAUSE_DDP_U(IWX_DDP_U_INVALID_QN);
		return -EPROTO;
	}
	if (seg->opcode >= IWX_OP_COUNT_RFC5040) {
		*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE);
		return -EPROTO;
	}
	return 0;
}

/* RFC 5040 §4.4 */
struct iwx_read_req {
	uint32_t	sink_stag;
	uint64_t	sink_to;
	uint32_t	size;
	uint32_t	src_stag;
	uint64_t	src_to;
};

void iwx_read_req_encode(uint8_t out[IWX_RDMAP_READ_REQ_LEN], const struct iwx_read_req *rr);

/*
 * Decode the Read Request header carried by a complete untagged segment on queue 1.
 * A segment that is not exactly one 28-byte message gets -EPROTO and the cause:
 * longer than the queue's 28-byte buffer is "DDP message too long", otherwise an
 * RDMAP remote operation error.
 */
int iwx_read_req_decode(const struct iwx_ddp_seg *seg, struct iwx_read_req *rr,
			struct iwx_term_cause *cause);

/* RFC 7306 §5.2.1: an Atomic Request, in host byte order. */
struct iwx_atomic_req {
	uint8_t		aop;		/* enum iwx_atomic_op */
	uint32_t	req_id;
	uint32_t	stag;
	uint64_t	to;
	uint64_t	add_swap, add_swap_mask;
	uint64_t	compare, compare_mask;
};

void iwx_atomic_req_encode(uint8_t out[IWX_RDMAP_ATOMIC_REQ_LEN], const struct iwx_atomic_req *ar);

/*
 * Decode the Atomic Request a complete untagged segment on queue 1 carries. -EPROTO
 * with *cause: a message other than one 52-byte segment (as a Read Request's), an
 * AOpCode RFC 7306 does not define (invalid opcode), a target not 8-byte aligned
 * (§8.2: catastrophic error, localized to the stream).
 */
int iwx_atomic_req_decode(const struct iwx_ddp_seg *seg, struct iwx_atomic_req *ar,
			  struct iwx_term_cause *cause);

/*
 * RFC 7306 §5.1: the value the target takes, old before the operation. Fetch-Add adds
 * each field the add mask's set bits end (a carry out of such a bit is lost; mask 0:
 * one 64-bit add); Compare-and-Swap stores the swap bits under the swap mask when old
 * equals compare under the compare mask.
 */
uint64_t iwx_atomic_apply(const struct iwx_atomic_req *ar, uint64_t old);

/* RFC 7306 §5.2.2: an Atomic Response. */
struct iwx_atomic_resp {
	uint32_t	req_id;
	uint64_t	orig;
};

void iwx_atomic_resp_encode(uint8_t out[IWX_RDMAP_ATOMIC_RESP_LEN], const struct iwx_atomic_resp *r);

/* Decode the one 12-byte segment of an Atomic Response on queue 3; -EPROTO with *cause. */
int iwx_atomic_resp_decode(const struct iwx_ddp_seg *seg, struct iwx_atomic_resp *r,
			   struct iwx_term_cause *cause);

/*
 * Decode Immediate Data (RFC 7306 §6.3: exactly 8 bytes, one segment): the 8 bytes as a
 * big-endian number, so that the first 4 (verbs' immediate) are its high half.
 */
int iwx_imm_decode(const struct iwx_ddp_seg *seg, uint64_t *imm, struct iwx_term_cause *cause);

/* A Terminate message (RFC 5040 §4.8), decoded or to encode. */
struct iwx_term {
	struct iwx_term_cause	cause;
	bool			has_seg_len;	/* M */
	bool			has_ddp_hdr;	/* D */
	bool			has_rdma_hdr;	/* R */
	uint16_t		seg_len;
	uint8_t			ddp_hdr[IWX_DDP_UNTAGGED_HDR_LEN];
	uint8_t			ddp_hdr_len;	/* 14 tagged, 18 untagged */
	uint8_t			rdma_hdr[IWX_RDMAP_READ_REQ_LEN];
};

/*
 * Build the Terminate for cause, about the incoming segment seg (NULL when the error
 * is not tied to one) and, for errors on a Read Request, its header rr. Which
 * headers are copied follows RFC 5040 Figure 10 and §7.1.
 */
void iwx_term_init(struct iwx_term *t, struct iwx_term_cause cause,
		   const struct iwx_ddp_seg *seg, const struct iwx_read_req *rr);

/* Encode the Terminate header (the payload of the QN 2 message). Returns its length. */
size_t iwx_term_encode(uint8_t out[IWX_TERM_MAX_LEN], const struct iwx_term *t);

/*
 * Decode the Terminate carried by a complete untagged segment on queue 2.
 * -EPROTO with *cause when it is malformed (too long for the Terminate queue's
 * buffer, or shorter than the headers its control bits announce).
 */
int iwx_term_decode(const struct iwx_ddp_seg *seg, struct iwx_term *t,
		    struct iwx_term_cause *cause);

#endif /* IWX_RDMAP_H */
