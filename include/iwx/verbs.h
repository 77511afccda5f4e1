/* SPDX-License-Identifier: MIT */
/*
 * Work requests and work completions: what an application posts and polls through
 * libiwx (iwx/iwx.h), what travels through the shared rings to iwxd, and what the
 * daemon's queue pair consumes and produces. One layout end to end, no translation.
 */
#ifndef IWX_VERBS_H
#define IWX_VERBS_H

#include <stdbool.h>
#include <stdint.h>

/* A piece of local memory: addr is a tagged offset within the region of lkey. */
struct iwx_sge {
	uint64_t	addr;
	uint32_t	len;
	uint32_t	lkey;
};

#define IWX_MAX_SGE	8

enum iwx_wr_opcode {
	IWX_WR_SEND,
	IWX_WR_SEND_INV,
	IWX_WR_SEND_SE,
	IWX_WR_SEND_SE_INV,
	IWX_WR_WRITE,
	IWX_WR_READ,
	/*
	 * RFC 7306, on a connection whose peer agreed to it (else -EOPNOTSUPP): a Write then
	 * an Immediate Data message (with a Solicited Event), which takes one of the peer's
	 * receives; an atomic operation on 8 aligned bytes of the peer's memory, whose old
	 * value lands in the one sge.
	 */
	IWX_WR_WRITE_IMM,
	IWX_WR_WRITE_IMM_SE,
	IWX_WR_FETCH_ADD,
	IWX_WR_CMP_SWAP,
};

#define IWX_ATOMIC_LEN	8	/* the bytes an atomic operation works on */

/* An atomic's sge and operands, where a Send's gather list is (one sge, the rest unused). */
struct iwx_atomic_args {
	struct iwx_sge	result;		/* sge[0]: where the target's old value lands */
	uint64_t	compare_add;	/* Fetch-Add: what is added; Compare-and-Swap: compared */
	uint64_t	swap;		/* Compare-and-Swap: what is stored if equal */
};

#define IWX_WR_SIGNALED	0x1	/* complete with a work completion even on success */
#define IWX_WR_FENCE	0x2	/* wait for every earlier RDMA Read to complete */

struct iwx_send_wr {
	uint64_t	wr_id;
	uint8_t		opcode;		/* enum iwx_wr_opcode */
	uint8_t		flags;		/* IWX_WR_SIGNALED, IWX_WR_FENCE */
	uint8_t		num_sge;
	union {
		struct iwx_sge	sge[IWX_MAX_SGE];	/* gather list; a Read's sink (one sge) */
		struct iwx_atomic_args atomic;		/* Fetch-Add, Compare-and-Swap */
	};
	uint64_t	remote_addr;	/* Write/Read/atomic: the peer's tagged offset */
	uint32_t	rkey;		/* Write/Read/atomic: the peer's STag */
	union {
		uint32_t	inval_stag;	/* Send with Invalidate */
		uint32_t	imm_data;	/* Write with Immediate: its first 4 bytes (RFC 7306 §6) */
	};
};

struct iwx_recv_wr {
	uint64_t	wr_id;
	uint8_t		num_sge;
	struct iwx_sge	sge[IWX_MAX_SGE];	/* scatter list */
};

static inline bool iwx_wr_is_atomic(uint8_t opcode)
{
	return opcode == IWX_WR_FETCH_ADD || opcode == IWX_WR_CMP_SWAP;
}

/* Needs RFC 7306 on the connection. */
static inline bool iwx_wr_is_rfc7306(uint8_t opcode)
{
	return opcode >= IWX_WR_WRITE_IMM && opcode <= IWX_WR_CMP_SWAP;
}

/*
 * Well formed: a known opcode and flags, at most IWX_MAX_SGE sges, a Read with one
 * sink, an atomic with one sge of 8 bytes and an aligned target (RFC 7306 §5.1).
 * libiwx checks before posting; iwxd again, as a client may not be libiwx.
 */
static inline bool iwx_send_wr_valid(const struct iwx_send_wr *wr)
{
	return wr->opcode <= IWX_WR_CMP_SWAP && wr->num_sge <= IWX_MAX_SGE &&
	       !(wr->flags & ~(IWX_WR_SIGNALED | IWX_WR_FENCE)) &&
	       (wr->opcode != IWX_WR_READ || wr->num_sge == 1) &&
	       (!iwx_wr_is_atomic(wr->opcode) ||
		(wr->num_sge == 1 && wr->atomic.result.len == IWX_ATOMIC_LEN &&
		 !(wr->remote_addr % IWX_ATOMIC_LEN)));
}

static inline bool iwx_recv_wr_valid(const struct iwx_recv_wr *wr)
{
	return wr->num_sge <= IWX_MAX_SGE;
}

enum iwx_wc_status {
	IWX_WC_SUCCESS,
	IWX_WC_LOC_LEN_ERR,	/* a Send larger than the receive buffer */
	IWX_WC_LOC_PROT_ERR,	/* a local sge outside its region or without the access */
	IWX_WC_REM_ACCESS_ERR,	/* the peer refused our STag use (remote protection error) */
	IWX_WC_REM_OP_ERR,	/* the peer hit an operation error on our message */
	IWX_WC_REM_INV_REQ_ERR,	/* the peer found our message malformed (DDP/MPA error) */
	IWX_WC_FATAL_ERR,	/* the stream failed here */
	IWX_WC_WR_FLUSH_ERR,	/* flushed: the queue pair went to error first */
	IWX_WC_LOC_QP_OP_ERR,	/* an operation the connection does not do (RFC 7306 not agreed) */
};

enum iwx_wc_opcode {
	IWX_WC_SEND,
	IWX_WC_RDMA_WRITE,
	IWX_WC_RDMA_READ,
	IWX_WC_RECV,
	IWX_WC_FETCH_ADD,
	IWX_WC_CMP_SWAP,
	IWX_WC_RECV_IMM,	/* a receive the peer's Immediate Data took (imm_data) */
};

/* The completion opcode of a send work request. */
static inline uint8_t iwx_wc_opcode_of(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case IWX_WR_WRITE:
	case IWX_WR_WRITE_IMM:
	case IWX_WR_WRITE_IMM_SE:
		return IWX_WC_RDMA_WRITE;
	case IWX_WR_READ:
		return IWX_WC_RDMA_READ;
	case IWX_WR_FETCH_ADD:
		return IWX_WC_FETCH_ADD;
	case IWX_WR_CMP_SWAP:
		return IWX_WC_CMP_SWAP;
	default:
		return IWX_WC_SEND;
	}
}

/* A receive queue's completion (a send queue's otherwise). */
static inline bool iwx_wc_is_recv(uint8_t wc_opcode)
{
	return wc_opcode == IWX_WC_RECV || wc_opcode == IWX_WC_RECV_IMM;
}

struct iwx_wc {
	uint64_t	wr_id;
	uint8_t		status;		/* enum iwx_wc_status */
	uint8_t		opcode;		/* enum iwx_wc_opcode */
	bool		solicited;	/* a Send or Immediate Data with SE (receive side) */
	bool		with_inv;	/* the Send invalidated invalidated_stag (receive side) */
	uint32_t	byte_len;	/* receive: bytes of the Send (Immediate Data: 0); read: bytes read */
	union {
		uint32_t	invalidated_stag;
		uint32_t	imm_data;	/* IWX_WC_RECV_IMM */
	};
	uint32_t	qp_num;		/* the queue pair it belongs to (set by iwxd) */
};

/*
 * What carries RDMAP and DDP: MPA over TCP (RFC 5044), or SCTP through the DDP
 * adaptation shim (draft-otis-sctp-ddp-00, docs/ddp-over-sctp.md), whose SCTP packets
 * travel in UDP datagrams to the peer's iwxd (RFC 6951; iwxd --sctp-port).
 */
#define IWX_TRANSPORT_TCP	0
#define IWX_TRANSPORT_SCTP	1

#endif /* IWX_VERBS_H */
