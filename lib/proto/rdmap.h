/* SPDX-License-Identifier: MIT */
/* RDMAP (RFC 5040): opcodes, the Read Request header and the Terminate message. */
#ifndef IWX_RDMAP_H
#define IWX_RDMAP_H

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

/* RFC 5040 Figure 4: the queue an untagged opcode must use. */
static inline uint32_t iwx_rdmap_opcode_qn(uint8_t opcode)
{
	return opcode == IWX_OP_READ_REQ ? IWX_QN_READ_REQ :
	       opcode == IWX_OP_TERMINATE ? IWX_QN_TERMINATE : IWX_QN_SEND;
}

static inline bool iwx_rdmap_opcode_has_inval(uint8_t opcode)
{
	return opcode == IWX_OP_SEND_INV || opcode == IWX_OP_SEND_SE_INV;
}

static inline bool iwx_rdmap_opcode_solicited(uint8_t opcode)
{
	return opcode == IWX_OP_SEND_SE || opcode == IWX_OP_SEND_SE_INV;
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
