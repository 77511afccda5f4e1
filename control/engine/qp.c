// SPDX-License-Identifier: MIT
/* The software queue pair: RDMAP message processing over one MPA stream (RFC 5040 §5-§7). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>	/* MIN */
#include <sys/uio.h>

#include "proto/ddp.h"

#include "llp.h"
#include "qp.h"
#include "util/place_copy.h"

#define WR_INTERNAL	0x80	/* the RTR message: never completes to the application */

/* A fixed-size queue of elements of one type. */
struct ring {
	uint8_t		*v;
	uint32_t	size, cap, head, n;
};

static void *ring_at(const struct ring *r, uint32_t i)
{
	return r->v + (size_t)((r->head + i) % r->cap) * r->size;
}

static int ring_push(struct ring *r, const void *e)
{
	if (r->n == r->cap)
		return -ENOMEM;
	memcpy(r->v + (size_t)((r->head + r->n) % r->cap) * r->size, e, r->size);
	r->n++;
	return 0;
}

static void ring_pop(struct ring *r)
{
	r->head = (r->head + 1) % r->cap;
	/* empty: start again at the front, so that only the deepest backlog's pages are touched */
	if (!--r->n)
		r->head = 0;
}

static uint32_t sge_total(const struct iwx_sge *sge, uint8_t n)
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
	bool			done;		/* a Read is done when its Response is placed */
	uint8_t			status;
	uint32_t		given;		/* tx_given once its last segment was given */
};

/* A peer's Read Request being answered (RFC 5040 §5.2.1: in the order received). */
struct inbound_read {
	struct iwx_read_req	rr;
	struct span		src;
};

/* The message on its way out. */
struct tx_msg {
	bool			active;
	bool			from_sq;	/* the head of the send queue */
	bool			is_term;
	struct iwx_ddp_segmenter seg;
	struct span		src[IWX_MAX_SGE];
	uint8_t			nsrc;
	uint8_t			inline_buf[IWX_TERM_MAX_LEN];
};

struct iwx_engine_qp {
	struct iwx_llp		*llp;		/* what carries the segments */
	enum iwx_qp_state	state;
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
	uint32_t		reads_out;	/* Reads in inflight awaiting their Response */
	struct ring		reads_in;	/* struct inbound_read: the peer's, to answer */

	uint32_t		tx_msn[IWX_QN_COUNT];
	uint32_t		rx_msn[IWX_QN_COUNT];	/* next MSN expected on each queue */

	struct tx_msg		msg;
	uint32_t		tx_given;	/* messages whose last segment went to the LLP */
	uint32_t		tx_sent;	/* ... and that it let go of (iwx_qp_sent) */

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
	struct iwx_qp_stats	stats;
};

static void complete(struct iwx_engine_qp *qp, const struct iwx_wc *wc)
{
	/* sized to hold every request held at once: the caller's part is in qp.h */
	if (ring_push(&qp->cq, wc))
		abort();
	qp->rx_unpolled += wc->opcode == IWX_WC_RECV;
}

static void complete_send_wr(struct iwx_engine_qp *qp, const struct iwx_send_wr *wr, uint8_t status,
			     uint32_t byte_len)
{
	struct iwx_wc wc = {
		.wr_id = wr->wr_id, .status = status, .opcode = iwx_wc_opcode_of(wr->opcode),
		.byte_len = byte_len,
	};

	if (wr->flags & WR_INTERNAL)
		return;
	if (status != IWX_WC_SUCCESS || (wr->flags & IWX_WR_SIGNALED))
		complete(qp, &wc);
}

/* Has the lower layer let go of the message inflight f? */
static bool let_go(const struct iwx_engine_qp *qp, const struct inflight *f)
{
	return (int32_t)(qp->tx_sent - f->given) >= 0;
}

/* RFC 5040 §5.4 and §7: everything outstanding completes in error, in order. */
static void flush_all(struct iwx_engine_qp *qp)
{
	while (qp->inflight.n) {
		const struct inflight *f = ring_at(&qp->inflight, 0);

		/* one the lower layer still held may not have reached the peer */
		bool done = f->done && let_go(qp, f);

		complete_send_wr(qp, &f->wr, done ? f->status : IWX_WC_WR_FLUSH_ERR,
				 done && f->status == IWX_WC_SUCCESS ?
				 sge_total(f->wr.sge, f->wr.num_sge) : 0);
		ring_pop(&qp->inflight);
	}
	qp->reads_out = 0;
	while (qp->sq.n) {
		complete_send_wr(qp, ring_at(&qp->sq, 0), IWX_WC_WR_FLUSH_ERR, 0);
		ring_pop(&qp->sq);
	}
	while (qp->rq.n) {
		const struct iwx_recv_wr *wr = ring_at(&qp->rq, 0);
		struct iwx_wc wc = { .wr_id = wr->wr_id, .status = IWX_WC_WR_FLUSH_ERR,
				     .opcode = IWX_WC_RECV };

		complete(qp, &wc);
		ring_pop(&qp->rq);
	}
	qp->reads_in.n = 0;
	qp->msg.active = false;
}

/* Stop for good: no Terminate (one came in, or the stream is gone). */
static void enter_error(struct iwx_engine_qp *qp, struct iwx_term_cause cause, bool local)
{
	if (qp->state == IWX_QP_ERROR)
		return;
	if (qp->state == IWX_QP_RTS) {
		qp->cause = cause;
		qp->cause_local = local;
	}
	qp->state = IWX_QP_ERROR;
	qp->term_pending = false;
	flush_all(qp);
	/*
	 * After our Terminate, our half only: the peer may still be sending, and the caller
	 * must read its bytes before the last close (RFC 5040 §5.4).
	 */
	qp->llp->ops->stop(qp->llp, qp->term_built);
}

static struct inflight *oldest_read(struct iwx_engine_qp *qp);

/*
 * A Read Response to a sink STag that is no longer valid (deregistered or invalidated
 * since the Read was posted): that Read fails here, a local protection error, not flushed;
 * the peer hears the tagged buffer error of its Response.
 */
static void sink_gone(struct iwx_engine_qp *qp, struct iwx_term_cause cause,
		      const struct iwx_ddp_seg *seg)
{
	struct inflight *f;

	if (!seg || !seg->tagged || seg->opcode != IWX_OP_READ_RESP ||
	    !iwx_cause_eq(cause, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG)))
		return;	/* a Response beyond a sink that is still there: the peer's error */
	f = oldest_read(qp);
	if (f && f->wr.sge[0].lkey == seg->stag) {
		f->done = true;
		f->status = IWX_WC_LOC_PROT_ERR;
	}
}

/*
 * An error found here: the Terminate goes out after the FPDU now being sent, nothing
 * after it (RFC 5040 §5.4), and every request is flushed. Only the first error counts.
 */
static void fail(struct iwx_engine_qp *qp, struct iwx_term_cause cause, const struct iwx_ddp_seg *seg,
		 const struct iwx_read_req *rr)
{
	if (qp->state != IWX_QP_RTS)
		return;
	sink_gone(qp, cause, seg);
	qp->cause = cause;
	qp->cause_local = true;
	qp->state = IWX_QP_CLOSING;
	iwx_term_init(&qp->term, cause, seg, rr);
	qp->term_pending = true;
	flush_all(qp);
}

/* ------------------------------------------------------------ local memory */

/* Bytes [to, to + len) of mr, checked by the caller (len > 0). */
static struct span span_of(const struct iwx_region *mr, uint64_t to, uint32_t len)
{
	return (struct span){ .p = mr->addr + (to - mr->desc.base_to), .len = len };
}

/* Resolve an sge to its bytes, checking region, PD and access (local_write for sinks). */
static int resolve(const struct iwx_engine_qp *qp, const struct iwx_sge *sge, bool local_write,
		   struct span *out)
{
	const struct iwx_region *mr = iwx_mem_lookup(qp->mem, sge->lkey);
	uint8_t need = local_write ? IWX_ACCESS_LOCAL_WRITE : 0;

	if (!mr || !mr->desc.valid || mr->desc.pd != qp->pd || (mr->desc.access & need) != need)
		return -EACCES;
	if (sge->addr < mr->desc.base_to || sge->addr - mr->desc.base_to > mr->desc.len ||
	    sge->len > mr->desc.len - (sge->addr - mr->desc.base_to))
		return -EACCES;
	*out = span_of(mr, sge->addr, sge->len);
	return 0;
}

/* The len bytes of the span list from off on, as pieces; how many. */
static uint8_t pieces(const struct span *s, uint8_t n, uint32_t off, uint32_t len,
		      struct iovec *out)
{
	uint8_t k = 0;

	for (uint8_t i = 0; i < n && len; i++) {
		if (off >= s[i].len) {
			off -= s[i].len;
			continue;
		}
		uint32_t run = MIN(len, s[i].len - off);

		out[k++] = (struct iovec){ .iov_base = s[i].p + off, .iov_len = run };
		len -= run;
		off = 0;
	}
	return k;
}

/* ---------------------------------------------------------------- transmit */

static uint8_t wr_rdmap_opcode(uint8_t op)
{
	static const uint8_t map[] = {
		[IWX_WR_SEND] = IWX_OP_SEND, [IWX_WR_SEND_INV] = IWX_OP_SEND_INV,
		[IWX_WR_SEND_SE] = IWX_OP_SEND_SE, [IWX_WR_SEND_SE_INV] = IWX_OP_SEND_SE_INV,
		[IWX_WR_WRITE] = IWX_OP_WRITE, [IWX_WR_READ] = IWX_OP_READ_REQ,
	};
	return map[op];
}

static void start_msg(struct iwx_engine_qp *qp, const struct iwx_ddp_msg *m)
{
	/* checked at creation: every segment carries a payload */
	iwx_ddp_segmenter_init_payload(&qp->msg.seg, m,
				       qp->llp->max_payload[iwx_rdmap_opcode_tagged(m->opcode)]);
	qp->msg.active = true;
}

static void start_terminate(struct iwx_engine_qp *qp)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_TERMINATE, .msn = qp->tx_msn[IWX_QN_TERMINATE]++ };

	memset(&qp->msg, 0, sizeof(qp->msg));
	m.len = iwx_term_encode(qp->msg.inline_buf, &qp->term);
	qp->msg.src[0] = (struct span){ .p = qp->msg.inline_buf, .len = m.len };
	qp->msg.nsrc = 1;
	qp->msg.is_term = true;
	qp->term_pending = false;
	start_msg(qp, &m);
}

/* RFC 5040 §5.2.2: Read Responses go out in the order the Requests came. */
static void start_read_response(struct iwx_engine_qp *qp)
{
	const struct inbound_read *in = ring_at(&qp->reads_in, 0);
	struct iwx_ddp_msg m = {
		.opcode = IWX_OP_READ_RESP, .stag = in->rr.sink_stag, .to = in->rr.sink_to,
		.len = in->rr.size,
	};

	memset(&qp->msg, 0, sizeof(qp->msg));
	qp->msg.src[0] = in->src;
	qp->msg.nsrc = 1;
	start_msg(qp, &m);
	ring_pop(&qp->reads_in);
}

/*
 * The send queue's head cannot be sent: its local memory is not what it claims, or
 * is gone. RFC 5040 §7.1 rule 1: a Terminate goes instead of the request, which
 * completes with a local protection error; after the requests before it, in order.
 */
static void fail_sq_head(struct iwx_engine_qp *qp)
{
	struct inflight f = { .wr = *(const struct iwx_send_wr *)ring_at(&qp->sq, 0), .done = true,
			      .status = IWX_WC_LOC_PROT_ERR, .given = qp->tx_given };

	ring_push(&qp->inflight, &f);	/* start_sq_head made sure of room */
	ring_pop(&qp->sq);
	fail(qp, IWX_CAUSE_LOCAL_CATASTROPHIC, NULL, NULL);
}

/* Start the send queue's head, if its turn has come. false: nothing to start now. */
static bool start_sq_head(struct iwx_engine_qp *qp)
{
	const struct iwx_send_wr *wr = ring_at(&qp->sq, 0);
	struct iwx_ddp_msg m = { .opcode = wr_rdmap_opcode(wr->opcode) };
	bool is_read = wr->opcode == IWX_WR_READ;
	struct tx_msg *msg = &qp->msg;

	/*
	 * Finished messages wait in inflight behind an unanswered Read while the send
	 * queue frees up: start none that would find it full when finished.
	 */
	if (qp->inflight.n == qp->inflight.cap)
		return false;
	if ((wr->flags & IWX_WR_FENCE) && qp->reads_out)
		return false;	/* a fence waits for every earlier Read */
	if (is_read && qp->reads_out >= qp->agreed.ord)
		return false;	/* ORD: no more Reads in flight than the peer takes */

	memset(msg, 0, sizeof(*msg));
	for (uint8_t i = 0; i < wr->num_sge; i++) {
		if (wr->sge[i].len && resolve(qp, &wr->sge[i], is_read, &msg->src[i])) {
			fail_sq_head(qp);
			return false;
		}
	}
	msg->nsrc = wr->num_sge;
	msg->from_sq = true;

	if (is_read) {
		struct iwx_read_req rr = {
			.sink_stag = wr->sge[0].lkey, .sink_to = wr->sge[0].addr,
			.size = wr->sge[0].len, .src_stag = wr->rkey, .src_to = wr->remote_addr,
		};

		iwx_read_req_encode(msg->inline_buf, &rr);
		msg->src[0] = (struct span){ .p = msg->inline_buf, .len = IWX_RDMAP_READ_REQ_LEN };
		msg->nsrc = 1;
		m.len = IWX_RDMAP_READ_REQ_LEN;
		m.msn = qp->tx_msn[IWX_QN_READ_REQ]++;
	} else if (wr->opcode == IWX_WR_WRITE) {
		m.stag = wr->rkey;
		m.to = wr->remote_addr;
		m.len = sge_total(wr->sge, wr->num_sge);
	} else {
		m.inval_stag = wr->inval_stag;
		m.len = sge_total(wr->sge, wr->num_sge);
		m.msn = qp->tx_msn[IWX_QN_SEND]++;
	}
	start_msg(qp, &m);
	return true;
}

/* Complete requests from the head of inflight while they are done. */
static void retire(struct iwx_engine_qp *qp)
{
	while (qp->inflight.n) {
		const struct inflight *f = ring_at(&qp->inflight, 0);

		if (!f->done || !let_go(qp, f))
			return;
		complete_send_wr(qp, &f->wr, f->status, sge_total(f->wr.sge, f->wr.num_sge));
		ring_pop(&qp->inflight);
	}
}

/* The oldest Read still waiting for its Response (Responses come in order). */
static struct inflight *oldest_read(struct iwx_engine_qp *qp)
{
	for (uint32_t i = 0; i < qp->inflight.n; i++) {
		struct inflight *f = ring_at(&qp->inflight, i);

		if (!f->done)
			return f;
	}
	return NULL;
}

/* The last segment of the current message is in the lower layer's hands. */
static void finish_msg(struct iwx_engine_qp *qp)
{
	struct tx_msg *msg = &qp->msg;

	msg->active = false;
	qp->tx_given++;
	if (msg->is_term) {
		qp->term_built = true;	/* once it is given, nothing follows (§5.4) */
		return;
	}
	if (!msg->from_sq)
		return;
	struct inflight f = { .wr = *(const struct iwx_send_wr *)ring_at(&qp->sq, 0),
			      .given = qp->tx_given };

	/* RFC 5041 §5.4: a message is complete once the LLP has it (iwx_qp_sent); a Read once answered */
	f.done = f.wr.opcode != IWX_WR_READ;
	qp->reads_out += !f.done;
	ring_push(&qp->inflight, &f);	/* start_sq_head made sure of room */
	ring_pop(&qp->sq);
}

void iwx_qp_sent(struct iwx_engine_qp *qp)
{
	qp->tx_sent++;
	retire(qp);
}

bool iwx_qp_next_segment(struct iwx_engine_qp *qp, struct iwx_llp_seg *s, uint32_t most)
{
	struct tx_msg *msg = &qp->msg;

	while (!msg->active) {
		if (qp->term_pending)
			start_terminate(qp);
		else if (qp->state != IWX_QP_RTS)
			return false;
		else if (qp->reads_in.n)
			start_read_response(qp);
		else if ((!qp->sq.n || !start_sq_head(qp)) && !qp->term_pending)
			return false;
	}
	s->msg = &msg->seg.msg;
	s->hdr_len = iwx_ddp_segmenter_next_at_most(&msg->seg, most, s->hdr, &s->off, &s->len);
	s->npiece = pieces(msg->src, msg->nsrc, s->off, s->len, s->piece);
	/* a Read Request's or a Terminate's payload is built in the message itself */
	s->transient = msg->nsrc == 1 && msg->src[0].p == msg->inline_buf;
	s->last = msg->seg.done;
	s->term = msg->is_term;
	if (s->last)
		finish_msg(qp);
	return true;
}

/* Hand the lower layer what may go; after a Terminate is out, stop (RFC 5040 §5.4). */
static void transmit(struct iwx_engine_qp *qp, bool *want_write)
{
	*want_write = false;
	if (qp->hold_tx)
		return;
	qp->llp->ops->transmit(qp->llp, want_write);
	if (qp->term_built && qp->state == IWX_QP_CLOSING && qp->llp->ops->tx_idle(qp->llp))
		enter_error(qp, qp->cause, true);
}

/* ----------------------------------------------------------------- receive */

static struct iwx_term_cause cause_of_check(uint32_t r)
{
	return iwx_cause(IWX_CHECK_LAYER(r), IWX_CHECK_ETYPE(r), IWX_CHECK_ECODE(r));
}

/* The receive buffer a Send of MSN msn goes to, if posted. */
static const struct iwx_recv_wr *recv_wr_for(const struct iwx_engine_qp *qp, uint32_t msn)
{
	uint32_t i = msn - qp->rx_msn[IWX_QN_SEND];

	return i < qp->rq.n ? ring_at(&qp->rq, i) : NULL;
}

/*
 * A segment of MSN msn comes that the queue pair holds no receive for: the next ones of
 * the shared receive queue, or posted since (take_recv, qp.h), in MSN order up to msn
 * (over SCTP, whose chunks are unordered, a later message's may come first), while the
 * receives held and their completions stay within the ring's room. NULL if too few.
 */
static const struct iwx_recv_wr *take_posted_recv(struct iwx_engine_qp *qp, uint32_t msn)
{
	uint32_t need = msn - qp->rx_msn[IWX_QN_SEND] - qp->rq.n + 1;
	uint32_t held = qp->rq.n + qp->rx_unpolled;
	struct iwx_recv_wr wr;

	if (!qp->take_recv || held >= qp->rq.cap || need > qp->rq.cap - held)
		return NULL;
	while (need--)
		if (qp->take_recv(qp->recv_ctx, &wr) || !iwx_recv_wr_valid(&wr) || ring_push(&qp->rq, &wr))
			return NULL;
	return recv_wr_for(qp, msn);
}

/* Where bytes [mo, mo+len) of a receive buffer are, if within one sge here, and its *lkey. */
static uint8_t *recv_target(const struct iwx_engine_qp *qp, const struct iwx_recv_wr *wr, uint32_t mo,
			    uint32_t len, uint32_t *lkey)
{
	for (uint8_t i = 0; i < wr->num_sge; i++) {
		if (mo < wr->sge[i].len) {
			struct span s;

			if (len > wr->sge[i].len - mo || resolve(qp, &wr->sge[i], true, &s))
				return NULL;
			*lkey = wr->sge[i].lkey;
			return s.p + mo;
		}
		mo -= wr->sge[i].len;
	}
	return NULL;
}

void iwx_qp_placing(struct iwx_engine_qp *qp, uint8_t *dst, uint32_t len)
{
	qp->rx_dst = (struct span){ .p = dst, .len = dst ? len : 0 };
}

int iwx_qp_tagged_target(const struct iwx_engine_qp *qp, const struct iwx_ddp_seg *seg, uint8_t **dst,
			 struct iwx_term_cause *cause)
{
	const struct iwx_region *mr = iwx_mem_lookup(qp->mem, seg->stag);
	uint8_t need = seg->opcode == IWX_OP_WRITE ? IWX_ACCESS_REMOTE_WRITE : IWX_ACCESS_LOCAL_WRITE;
	uint32_t r = iwx_check_tagged(mr ? &mr->desc : NULL, seg->stag, qp->pd, need, seg->to,
				      seg->len);

	if (r) {
		*cause = cause_of_check(r);
		return -EPROTO;
	}
	*dst = seg->len ? mr->addr + (seg->to - mr->desc.base_to) : NULL;
	return 0;
}

/*
 * Is a tagged segment the one its sender cut after the last, same STag and tagged offset
 * where that one ended? Only such a segment is received in place, before its FPDU's CRC
 * is known: a header the CRC will fail cannot aim it elsewhere (siw terminates on any
 * other; RFC 5041 does not forbid them, so they are staged and placed once the CRC holds).
 */
static bool cut_next(const struct iwx_engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	return qp->rx_next.valid && seg->stag == qp->rx_next.stag && seg->to == qp->rx_next.to;
}

int iwx_qp_place(void *ctx, const struct iwx_ddp_seg *seg, uint8_t **dst,
		 struct iwx_term_cause *cause)
{
	struct iwx_engine_qp *qp = ctx;
	struct iwx_untagged_queue q;
	uint32_t r, buf_len;

	if (seg->tagged) {
		if (iwx_qp_tagged_target(qp, seg, dst, cause))
			return -EPROTO;
		if (!qp->llp->checked && !cut_next(qp, seg)) {
			*dst = NULL;	/* into the parser's buffer: take_tagged places it */
			qp->rx_staged = seg->len != 0;
		}
		iwx_qp_placing(qp, *dst, seg->len);
		qp->rx_stag = seg->stag;
		qp->rx_tagged = true;
		return 0;
	}

	/* untagged: one buffer per message on each queue (RFC 5041 §7.1) */
	q.next_msn = qp->rx_msn[seg->qn];
	switch (seg->qn) {
	case IWX_QN_SEND: {
		const struct iwx_recv_wr *wr = recv_wr_for(qp, seg->msn);

		if (!wr)
			wr = take_posted_recv(qp, seg->msn);	/* from an SRQ, or posted since */
		q.posted = qp->rq.n;
		buf_len = wr ? sge_total(wr->sge, wr->num_sge) : 0;
		r = iwx_check_untagged(&q, seg->msn, seg->mo, seg->len, buf_len);
		if (!r && seg->len)
			*dst = recv_target(qp, wr, seg->mo, seg->len, &qp->rx_stag);
		/* else the payload waits in the parser's buffer, to be scattered */
		iwx_qp_placing(qp, *dst, seg->len);
		qp->rx_tagged = false;
		break;
	}
	case IWX_QN_READ_REQ:
		/* the Read Request queue holds IRD requests (RFC 5040 §5.2.2) */
		q.posted = qp->agreed.ird > qp->reads_in.n ? qp->agreed.ird - qp->reads_in.n : 0;
		r = iwx_check_untagged(&q, seg->msn, seg->mo, seg->len, IWX_RDMAP_READ_REQ_LEN);
		break;
	default:
		q.posted = 1;
		r = iwx_check_untagged(&q, seg->msn, seg->mo, seg->len, IWX_TERM_MAX_LEN);
		break;
	}
	if (r) {
		*cause = cause_of_check(r);
		return -EPROTO;
	}
	return 0;
}

static int scatter(const struct iwx_engine_qp *qp, const struct iwx_recv_wr *wr, uint32_t mo,
		   const uint8_t *src, uint32_t len)
{
	for (uint8_t i = 0; i < wr->num_sge && len; i++) {
		struct span s;
		int err;

		if (mo >= wr->sge[i].len) {
			mo -= wr->sge[i].len;
			continue;
		}
		err = resolve(qp, &wr->sge[i], true, &s);
		if (err)
			return err;
		uint32_t k = MIN(len, s.len - mo);

		iwx_place_copy(s.p + mo, src, k);
		src += k;
		len -= k;
		mo = 0;
	}
	return 0;
}

/*
 * A tagged segment whose FPDU checked: place it if it was staged, its target looked up
 * again (it may have gone since its header came), and expect the one after it.
 */
static void take_tagged(struct iwx_engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct iwx_term_cause cause;
	uint8_t *dst;

	if (qp->rx_staged) {
		qp->rx_staged = false;
		if (iwx_qp_tagged_target(qp, seg, &dst, &cause)) {
			fail(qp, cause, seg, NULL);
			return;
		}
		iwx_place_copy(dst, seg->payload, seg->len);
	}
	qp->rx_next.valid = !seg->last;
	qp->rx_next.stag = seg->stag;
	qp->rx_next.to = seg->to + seg->len;
}

static void take_send(struct iwx_engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	/* place() found it posted; a message's last segment comes in MSN order (RFC 5041 §5.3) */
	const struct iwx_recv_wr *wr = recv_wr_for(qp, seg->msn);
	struct iwx_wc wc = { .wr_id = wr->wr_id, .opcode = IWX_WC_RECV };

	if (seg->len && !qp->rx_dst.p && scatter(qp, wr, seg->mo, seg->payload, seg->len)) {
		/* the receive buffer is not ours to write, or gone: it fails, then the stream */
		if (seg->msn == qp->rx_msn[IWX_QN_SEND]) {	/* else it is flushed with the rest */
			wc.status = IWX_WC_LOC_PROT_ERR;
			complete(qp, &wc);
			ring_pop(&qp->rq);
		}
		fail(qp, IWX_CAUSE_LOCAL_CATASTROPHIC, NULL, NULL);
		return;
	}
	if (!seg->last)
		return;
	if (iwx_rdmap_opcode_has_inval(seg->opcode)) {
		/* RFC 5040 §5.3: invalidate an STag of this stream, or terminate */
		if (iwx_mem_invalidate(qp->mem, seg->inval_stag, qp->pd)) {
			fail(qp, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_CANNOT_INVALIDATE), seg, NULL);
			return;
		}
		wc.with_inv = true;
		wc.invalidated_stag = seg->inval_stag;
	}
	wc.solicited = iwx_rdmap_opcode_solicited(seg->opcode);
	wc.byte_len = seg->mo + seg->len;
	complete(qp, &wc);
	ring_pop(&qp->rq);
	qp->rx_msn[IWX_QN_SEND]++;
}

static void take_read_request(struct iwx_engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct iwx_term_cause cause;
	struct inbound_read in = { 0 };
	const struct iwx_region *mr;
	uint32_t r;

	if (iwx_read_req_decode(seg, &in.rr, &cause)) {
		fail(qp, cause, seg, NULL);
		return;
	}
	mr = iwx_mem_lookup(qp->mem, in.rr.src_stag);
	r = iwx_check_read_source(mr ? &mr->desc : NULL, in.rr.src_stag, qp->pd, in.rr.src_to,
				  in.rr.size);
	if (r) {
		fail(qp, cause_of_check(r), seg, &in.rr);
		return;
	}
	if (in.rr.size)
		in.src = span_of(mr, in.rr.src_to, in.rr.size);
	ring_push(&qp->reads_in, &in);	/* place() kept it within IRD */
	qp->rx_msn[IWX_QN_READ_REQ]++;
}

static void take_read_response(struct iwx_engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct inflight *f = oldest_read(qp);

	if (!f) {
		fail(qp, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE), seg, NULL);
		return;
	}
	if (!seg->last)
		return;
	f->done = true;
	qp->reads_out--;
	retire(qp);
}

/*
 * What the peer's Terminate means for the request it names (RFC 5040 §4.8): a
 * protection error, RDMAP's or DDP's tagged buffer errors (a bad STag, key, bounds or
 * PD), is a remote access error.
 */
static uint8_t status_of_remote(struct iwx_term_cause c)
{
	if (c.layer == IWX_LAYER_RDMAP)
		return c.etype == IWX_RDMAP_ETYPE_REMOTE_PROT ? IWX_WC_REM_ACCESS_ERR : IWX_WC_REM_OP_ERR;
	if (c.layer == IWX_LAYER_DDP && c.etype == IWX_DDP_ETYPE_TAGGED)
		return IWX_WC_REM_ACCESS_ERR;
	return IWX_WC_REM_INV_REQ_ERR;
}

/*
 * Does the Terminate name a segment of the Write being sent from the send queue? Its
 * copy of the segment's DDP header (RFC 5040 §4.8) gives the STag and tagged offset.
 */
static bool term_names_sending_write(const struct iwx_engine_qp *qp, const struct iwx_term *t)
{
	const struct iwx_send_wr *wr = qp->sq.n ? ring_at(&qp->sq, 0) : NULL;
	struct iwx_term_cause ignored;
	struct iwx_ddp_seg seg;

	if (!qp->msg.active || !qp->msg.from_sq || !wr || wr->opcode != IWX_WR_WRITE ||
	    !t->has_ddp_hdr || iwx_ddp_decode(t->ddp_hdr, t->ddp_hdr_len, &seg, &ignored) ||
	    seg.opcode != IWX_OP_WRITE)
		return false;
	return seg.stag == wr->rkey && seg.to - wr->remote_addr <= sge_total(wr->sge, wr->num_sge);
}

static void take_terminate(struct iwx_engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct iwx_term t;
	struct iwx_term_cause cause;

	if (iwx_term_decode(seg, &t, &cause)) {
		enter_error(qp, cause, true);
		return;
	}
	/* A Terminate about one of our Reads completes that Read with the error. */
	struct inflight *f = t.has_rdma_hdr ? oldest_read(qp) : NULL;

	if (f) {
		f->done = true;
		f->status = status_of_remote(t.cause);
	} else if (term_names_sending_write(qp, &t)) {
		/* ... and so does one about the Write still going out: it failed, not flushed */
		struct inflight w = { .wr = *(const struct iwx_send_wr *)ring_at(&qp->sq, 0),
				      .done = true, .status = status_of_remote(t.cause),
				      .given = qp->tx_given };

		ring_push(&qp->inflight, &w);	/* start_sq_head made sure of room */
		ring_pop(&qp->sq);
	}
	enter_error(qp, t.cause, false);
}

int iwx_qp_take(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct iwx_engine_qp *qp = ctx;

	qp->stats.rx_fpdus++;
	qp->hold_tx = false;
	qp->rx_dst.len = 0;	/* whole: the parser is done with it */
	if (qp->state != IWX_QP_RTS)
		return -ENOTCONN;	/* RFC 5041 §7.1: drop everything after an error */
	if (seg->tagged) {
		take_tagged(qp, seg);
		if (qp->state != IWX_QP_RTS)
			return -ENOTCONN;
	}
	switch (seg->opcode) {
	case IWX_OP_WRITE:
		break;	/* placed by place() or take_tagged() */
	case IWX_OP_READ_RESP:
		take_read_response(qp, seg);
		break;
	case IWX_OP_READ_REQ:
		take_read_request(qp, seg);
		break;
	case IWX_OP_TERMINATE:
		take_terminate(qp, seg);
		break;
	default:
		take_send(qp, seg);
		break;
	}
	return qp->state != IWX_QP_RTS ? -ENOTCONN : 0;
}

void iwx_qp_fail(struct iwx_engine_qp *qp, struct iwx_term_cause cause, const struct iwx_ddp_seg *seg)
{
	qp->hold_tx = false;	/* the peer has spoken, if wrongly: the Terminate goes */
	fail(qp, cause, seg, NULL);
}

void iwx_qp_lost(struct iwx_engine_qp *qp, bool local)
{
	enter_error(qp, IWX_CAUSE_MPA(IWX_MPA_EC_STREAM_LOST), local);
}

/* -------------------------------------------------------------------- API */

/*
 * Who may speak first. RFC 5044 §7.1.2: a revision-1 Responder sends nothing before
 * the Initiator's first FPDU. RFC 6581 §6: in peer-to-peer mode that first FPDU is
 * the agreed ready-to-receive message, a zero-length Write or Read (a zero-length
 * Send would take one of the Responder's receive buffers; iwx does not offer it).
 */
static void start_stream(struct iwx_engine_qp *qp)
{
	const struct iwx_mpa_agreed *a = &qp->agreed;
	struct iwx_send_wr rtr = { .flags = WR_INTERNAL, .num_sge = 1 };

	if (!a->initiator) {
		qp->hold_tx = a->mode.rev == IWX_MPA_REV1 || a->rtr;
		return;
	}
	if (a->rtr & (IWX_RTR_WRITE | IWX_RTR_READ)) {
		rtr.opcode = a->rtr & IWX_RTR_WRITE ? IWX_WR_WRITE : IWX_WR_READ;
		ring_push(&qp->sq, &rtr);
	}
}

/*
 * The rings, in one block, not zeroed (an element is written before it is read): the
 * allocator touches the pages at a block's ends, and the elements' pages are touched as
 * they are used, so an idle queue pair's rings take little memory however deep they are.
 */
static int rings_init(struct iwx_engine_qp *qp, uint32_t sq, uint32_t rq, uint32_t cq, uint32_t inflight,
		      uint32_t reads_in)
{
	const struct {
		struct ring	*r;
		uint32_t	size, cap;
	} rings[] = {
		{ &qp->sq, sizeof(struct iwx_send_wr), sq },	/* first: sq.v is the block */
		{ &qp->rq, sizeof(struct iwx_recv_wr), rq },
		{ &qp->cq, sizeof(struct iwx_wc), cq },
		{ &qp->inflight, sizeof(struct inflight), inflight },
		{ &qp->reads_in, sizeof(struct inbound_read), reads_in },
	};
	const size_t n = sizeof(rings) / sizeof(rings[0]), align = _Alignof(max_align_t);
	size_t at[sizeof(rings) / sizeof(rings[0])], len = 0;
	uint8_t *block;

	for (size_t i = 0; i < n; i++) {
		at[i] = len;
		len += ((size_t)rings[i].size * rings[i].cap + align - 1) & ~(align - 1);
	}
	block = malloc(len);
	if (!block)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		*rings[i].r = (struct ring){ .v = block + at[i], .size = rings[i].size,
					     .cap = rings[i].cap };
	return 0;
}

struct iwx_engine_qp *iwx_qp_create(struct iwx_llp *llp, const struct iwx_mpa_agreed *agreed,
			     struct iwx_mem *mem, uint32_t pd, const struct iwx_qp_attr *attr)
{
	uint32_t sq = attr && attr->sq_depth ? attr->sq_depth : 256;
	uint32_t rq = attr && attr->rq_depth ? attr->rq_depth : 256;
	/* finished requests behind unanswered Reads: up to ORD Reads and a send queue's worth */
	uint64_t inflight = (uint64_t)sq + agreed->ord;
	/* a completion for every request held at once (see iwx_qp_poll) */
	uint64_t cq = sq + inflight + rq;
	struct iwx_engine_qp *qp;

	if (!llp)
		return NULL;
	qp = cq > UINT32_MAX ? NULL : calloc(1, sizeof(*qp));
	if (!qp) {
		llp->ops->destroy(llp);
		return NULL;
	}
	qp->llp = llp;
	llp->qp = qp;
	llp->stats = &qp->stats;
	qp->mem = mem;
	qp->pd = pd;
	qp->agreed = *agreed;
	if (attr) {
		qp->take_recv = attr->take_recv;
		qp->recv_ctx = attr->recv_ctx;
	}
	for (int i = 0; i < IWX_QN_COUNT; i++)
		qp->tx_msn[i] = qp->rx_msn[i] = 1;	/* RFC 5041 §4.3: MSNs start at one */
	/* a Read Request, a Terminate fit one segment */
	if (llp->max_payload[0] <= IWX_RDMAP_READ_REQ_LEN || !llp->max_payload[1] ||
	    rings_init(qp, sq, rq, cq, inflight, agreed->ird + 1)) {
		iwx_qp_destroy(qp);
		return NULL;
	}
	start_stream(qp);
	return qp;
}

void iwx_qp_destroy(struct iwx_engine_qp *qp)
{
	if (!qp)
		return;
	qp->llp->ops->destroy(qp->llp);
	free(qp->sq.v);		/* every ring's block */
	free(qp);
}

int iwx_qp_post_send(struct iwx_engine_qp *qp, const struct iwx_send_wr *wr)
{
	if (qp->state != IWX_QP_RTS)
		return -ENOTCONN;
	if (!iwx_send_wr_valid(wr))	/* which also keeps out WR_INTERNAL */
		return -EINVAL;
	return ring_push(&qp->sq, wr);
}

int iwx_qp_post_recv(struct iwx_engine_qp *qp, const struct iwx_recv_wr *wr)
{
	if (qp->state != IWX_QP_RTS)
		return -ENOTCONN;
	if (!iwx_recv_wr_valid(wr))
		return -EINVAL;
	return ring_push(&qp->rq, wr);
}

int iwx_qp_progress(struct iwx_engine_qp *qp, bool *want_write)
{
	bool ww = false;

	if (qp->state == IWX_QP_RTS)
		qp->llp->ops->receive(qp->llp);
	if (qp->state != IWX_QP_ERROR)
		transmit(qp, &ww);
	if (want_write)
		*want_write = ww;
	return qp->state == IWX_QP_ERROR ? -ENOTCONN : 0;
}

int iwx_qp_poll(struct iwx_engine_qp *qp, struct iwx_wc *wc, int n)
{
	int i;

	for (i = 0; i < n && qp->cq.n; i++) {
		wc[i] = *(struct iwx_wc *)ring_at(&qp->cq, 0);
		ring_pop(&qp->cq);
		qp->rx_unpolled -= wc[i].opcode == IWX_WC_RECV;
	}
	return i;
}

uint32_t iwx_qp_unpolled(const struct iwx_engine_qp *qp)
{
	return qp->cq.n;
}

void iwx_qp_abort(struct iwx_engine_qp *qp)
{
	enter_error(qp, IWX_CAUSE_MPA(IWX_MPA_EC_STREAM_LOST), true);
}

enum iwx_qp_state iwx_qp_get_state(const struct iwx_engine_qp *qp)
{
	return qp->state;
}

void iwx_qp_shut_send(struct iwx_engine_qp *qp)
{
	qp->llp->ops->stop(qp->llp, true);
}

bool iwx_qp_tx_idle(const struct iwx_engine_qp *qp)
{
	return !qp->sq.n && !qp->msg.active && qp->llp->ops->tx_idle(qp->llp) && !qp->reads_in.n &&
	       !qp->term_pending;
}

bool iwx_qp_error(const struct iwx_engine_qp *qp, struct iwx_term_cause *cause, bool *local)
{
	if (qp->state == IWX_QP_RTS)
		return false;
	if (cause)
		*cause = qp->cause;
	if (local)
		*local = qp->cause_local;
	return true;
}

void iwx_qp_stats(const struct iwx_engine_qp *qp, struct iwx_qp_stats *st)
{
	*st = qp->stats;
}

static bool span_within(const struct span *s, uintptr_t base, size_t len)
{
	return s->len && (uintptr_t)s->p < base + len && (uintptr_t)s->p + s->len > base;
}

bool iwx_qp_refers_to(const struct iwx_engine_qp *qp, const void *addr, size_t len)
{
	uintptr_t base = (uintptr_t)addr;

	if (span_within(&qp->rx_dst, base, len))
		return true;
	for (uint8_t i = 0; qp->msg.active && i < qp->msg.nsrc; i++)
		if (span_within(&qp->msg.src[i], base, len))
			return true;
	for (uint32_t i = 0; i < qp->reads_in.n; i++)
		if (span_within(&((const struct inbound_read *)ring_at(&qp->reads_in, i))->src,
				base, len))
			return true;
	return qp->llp->ops->refers_to(qp->llp, base, len);
}

void iwx_qp_stag_gone(struct iwx_engine_qp *qp, uint32_t stag)
{
	if (!qp->rx_dst.p || !qp->rx_dst.len || qp->rx_stag != stag || !qp->llp->ops->unplace)
		return;
	qp->llp->ops->unplace(qp->llp);
	/* at its end: take_tagged looks the STag up again, take_send scatters (resolve) */
	qp->rx_staged = qp->rx_tagged;
	qp->rx_dst = (struct span){ 0 };
}

void iwx_qp_settle(struct iwx_engine_qp *qp, bool hold)
{
	if (qp->agreed.initiator && !(hold && qp->stats.rx_fpdus))	/* it spoke: it is ready */
		qp->hold_tx = hold;
}
