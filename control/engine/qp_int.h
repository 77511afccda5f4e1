/* SPDX-License-Identifier: MIT */
/*
 * The queue pair's insides, shared by its three files: qp.c (creation, state, errors,
 * completions, the API), qp_tx.c (what goes out) and qp_rx.c (what comes in). Not for
 * use outside them.
 */
#ifndef IWX_QP_INT_H
#define IWX_QP_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "proto/ddp.h"

#include "llp.h"
#include "qp.h"

/* A fixed-size queue of elements of one type. */
struct ring {
	uint8_t		*v;
	uint32_t	size, cap, head, n;
};

static inline void *ring_at(const struct ring *r, uint32_t i)
{
	return r->v + (size_t)((r->head + i) % r->cap) * r->size;
}

static inline int ring_push(struct ring *r, const void *e)
{
	if (r->n == r->cap)
		return -ENOMEM;
	memcpy(r->v + (size_t)((r->head + r->n) % r->cap) * r->size, e, r->size);
	r->n++;
	return 0;
}

static inline void ring_pop(struct ring *r)
{
	r->head = (r->head + 1) % r->cap;
	/* empty: start again at the front, so that only the deepest backlog's pages are touched */
	if (!--r->n)
		r->head = 0;
}

static inline uint32_t sge_total(const struct iwx_sge *sge, uint8_t n)
{
	uint64_t t = 0;

	for (uint8_t i = 0; i < n; i++)
		t += sge[i].len;
	return t > UINT32_MAX ? UINT32_MAX : t;
}

/* A piece of registered memory, mapped here: placed and sent without a copy. */
struct span {
	uint8_t		*p;
	uint32_t	len;
};

/*
 * A request handed to the LLP, waiting for its turn to complete: send-queue
 * completions come in the order requests were posted, so a Send behind a Read
 * completes after the Read's Response is in.
 */
struct inflight {
	struct iwx_send_wr	wr;
	bool			done;		/* a Read or atomic is done when its Response is in */
	uint8_t			status;
	uint32_t		given;		/* tx_given once its last segment was given */
	uint32_t		req_id;		/* an atomic's Request Identifier (RFC 7306 §5.2.1) */
};

/*
 * A peer's Read or Atomic Request being answered: in the order received, as they share
 * queue 1 (RFC 5040 §5.2.1, RFC 7306 §5.2 and §7).
 */
struct inbound_req {
	bool			atomic;
	union {
		struct iwx_read_req	rr;
		struct iwx_atomic_req	ar;	/* its target is looked up again when its turn comes */
	};
	struct span		src;		/* what a Read reads */
};

/* A message built in the queue pair itself: the largest is a Terminate or an Atomic Request. */
#define INLINE_MAX	(IWX_TERM_MAX_LEN > IWX_RDMAP_ATOMIC_REQ_LEN ? IWX_TERM_MAX_LEN : \
			 IWX_RDMAP_ATOMIC_REQ_LEN)

/* The message on its way out. */
struct tx_msg {
	bool			active;
	bool			from_sq;	/* the head of the send queue */
	bool			is_term;
	bool			imm_next;	/* the Write of a Write with Immediate */
	struct iwx_ddp_segmenter seg;
	struct span		src[IWX_MAX_SGE];
	uint8_t			nsrc;
	uint8_t			inline_buf[INLINE_MAX];
};

struct engine_qp {
	struct iwx_llp		*llp;		/* what carries the segments */
	enum engine_qp_state	state;
	struct iwx_mem		*mem;
	uint32_t		pd;
	struct iwx_mpa_agreed	agreed;

	struct ring		sq;		/* struct iwx_send_wr, head = next to send; its
						   v is the block of every ring (rings_init) */
	struct ring		rq;		/* struct iwx_recv_wr, head = next Send's buffer */
	struct ring		cq;		/* struct iwx_wc */
	uint32_t		rx_unpolled;	/* receive completions in cq */
	int			(*take_recv)(void *ctx, struct iwx_recv_wr *wr);	/* qp.h */
	void			*recv_ctx;
	struct ring		inflight;	/* struct inflight, in posting order */
	uint32_t		reads_out;	/* Reads and atomics in inflight awaiting their
						   Response: ORD counts both (RFC 7306 §5.2) */
	uint32_t		atomics_out;	/* ... the atomics: queue 3's buffers */
	struct ring		reqs_in;	/* struct inbound_req: the peer's, to answer */

	uint32_t		tx_msn[IWX_QN_COUNT];
	uint32_t		rx_msn[IWX_QN_COUNT];	/* next MSN expected on each queue */

	struct tx_msg		msg;
	bool			imm_pending;	/* the send queue head's Write is given: its
						   Immediate Data goes next */
	uint32_t		tx_given;	/* messages whose last segment went to the LLP */
	uint32_t		tx_sent;	/* ... and that it let go of (engine_qp_sent) */

	bool			hold_tx;	/* nothing goes out before the peer's first FPDU */
	struct span		rx_dst;		/* the segment in flight is received in place here
						   (p NULL: it is not); len 0 once it is whole */
	uint32_t		rx_stag;	/* ... through this STag (a Send's: its receive's lkey) */
	bool			rx_tagged;	/* ... a tagged segment's */
	bool			rx_staged;	/* ... or waits in the parser for its CRC (cut_next) */
	struct {
		bool		valid;		/* the last tagged segment was not its message's last */
		uint32_t	stag;
		uint64_t	to;		/* where it ended */
	}			rx_next;	/* the tagged segment that would continue it */
	bool			term_pending;	/* a Terminate must go out next */
	bool			term_built;	/* ... and is in the batch now */
	struct iwx_term		term;
	struct iwx_term_cause	cause;
	bool			cause_local;
	struct iwx_qp_stats stats;
};

/* The Terminate cause a buffer check's result names (proto/ddp_check.h). */
static inline struct iwx_term_cause qp_cause_of_check(uint32_t r)
{
	return iwx_cause(IWX_CHECK_LAYER(r), IWX_CHECK_ETYPE(r), IWX_CHECK_ECODE(r));
}

/* Add a completion to the engine's CQ (room for it is always kept: qp.h). */
void qp_complete(struct engine_qp *qp, const struct iwx_wc *wc);

/* Complete requests from the head of inflight while they are done. */
void qp_retire(struct engine_qp *qp);

/* The oldest Read (or atomic) still waiting for its Response (each kind's come in order). */
struct inflight *qp_oldest_pending(struct engine_qp *qp, bool atomic);

/* Stop for good, without a Terminate: every request flushes, the lower layer stops. */
void qp_enter_error(struct engine_qp *qp, struct iwx_term_cause cause, bool local);

/* An error found here: a Terminate goes out, every request flushes. Only the first counts. */
void qp_fail(struct engine_qp *qp, struct iwx_term_cause cause, const struct iwx_ddp_seg *seg,
	     const struct iwx_read_req *rr);

/* Bytes [to, to + len) of mr, checked by the caller (len > 0). */
struct span qp_span_of(const struct iwx_region *mr, uint64_t to, uint32_t len);

/* Resolve an sge to its bytes, checking region, PD and access (local_write for sinks). */
int qp_resolve(const struct engine_qp *qp, const struct iwx_sge *sge, bool local_write,
	       struct span *out);

/* Hand the lower layer what may go (qp_tx.c). */
void qp_transmit(struct engine_qp *qp, bool *want_write);

#endif /* IWX_QP_INT_H */
