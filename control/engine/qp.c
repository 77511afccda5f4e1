// SPDX-License-Identifier: MIT
/*
 * The software queue pair: its state, errors and completions, and the API the daemon
 * calls (RFC 5040 §5-§7). What goes out is in qp_tx.c, what comes in in qp_rx.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "qp_int.h"

#define WR_INTERNAL	0x80	/* the RTR message: never completes to the application */

void qp_complete(struct engine_qp *qp, const struct iwx_wc *wc)
{
	/* sized to hold every request held at once: the caller's part is in qp.h */
	if (ring_push(&qp->cq, wc))
		abort();
	qp->rx_unpolled += iwx_wc_is_recv(wc->opcode);
}

static void complete_send_wr(struct engine_qp *qp, const struct iwx_send_wr *wr, uint8_t status,
			     uint32_t byte_len)
{
	struct iwx_wc wc = {
		.wr_id = wr->wr_id, .status = status, .opcode = iwx_wc_opcode_of(wr->opcode),
		.byte_len = byte_len,
	};

	if (wr->flags & WR_INTERNAL)
		return;
	if (status != IWX_WC_SUCCESS || (wr->flags & IWX_WR_SIGNALED))
		qp_complete(qp, &wc);
}

/* Has the lower layer let go of the message inflight f? */
static bool let_go(const struct engine_qp *qp, const struct inflight *f)
{
	return (int32_t)(qp->tx_sent - f->given) >= 0;
}

/* Complete requests from the head of inflight while they are done. */
void qp_retire(struct engine_qp *qp)
{
	while (qp->inflight.n) {
		const struct inflight *f = ring_at(&qp->inflight, 0);

		if (!f->done || !let_go(qp, f))
			return;
		complete_send_wr(qp, &f->wr, f->status, sge_total(f->wr.sge, f->wr.num_sge));
		ring_pop(&qp->inflight);
	}
}

struct inflight *qp_oldest_pending(struct engine_qp *qp, bool atomic)
{
	for (uint32_t i = 0; i < qp->inflight.n; i++) {
		struct inflight *f = ring_at(&qp->inflight, i);

		if (!f->done && iwx_wr_is_atomic(f->wr.opcode) == atomic)
			return f;
	}
	return NULL;
}

/* RFC 5040 §5.4 and §7: everything outstanding completes in error, in order. */
static void flush_all(struct engine_qp *qp)
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
	qp->reads_out = qp->atomics_out = 0;
	qp->imm_pending = false;
	while (qp->sq.n) {
		complete_send_wr(qp, ring_at(&qp->sq, 0), IWX_WC_WR_FLUSH_ERR, 0);
		ring_pop(&qp->sq);
	}
	while (qp->rq.n) {
		const struct iwx_recv_wr *wr = ring_at(&qp->rq, 0);
		struct iwx_wc wc = { .wr_id = wr->wr_id, .status = IWX_WC_WR_FLUSH_ERR,
				     .opcode = IWX_WC_RECV };

		qp_complete(qp, &wc);
		ring_pop(&qp->rq);
	}
	qp->reqs_in.n = 0;
	qp->msg.active = false;
}

/* Stop for good: no Terminate (one came in, or the stream is gone). */
void qp_enter_error(struct engine_qp *qp, struct iwx_term_cause cause, bool local)
{
	if (qp->state == ENGINE_QP_ERROR)
		return;
	if (qp->state == ENGINE_QP_RTS) {
		qp->cause = cause;
		qp->cause_local = local;
	}
	qp->state = ENGINE_QP_ERROR;
	qp->term_pending = false;
	flush_all(qp);
	/*
	 * After our Terminate, our half only: the peer may still be sending, and the caller
	 * must read its bytes before the last close (RFC 5040 §5.4).
	 */
	qp->llp->ops->stop(qp->llp, qp->term_built);
}

/*
 * A Read Response to a sink STag that is no longer valid (deregistered or invalidated
 * since the Read was posted): that Read fails here, a local protection error, not flushed;
 * the peer hears the tagged buffer error of its Response.
 */
static void sink_gone(struct engine_qp *qp, struct iwx_term_cause cause,
		      const struct iwx_ddp_seg *seg)
{
	struct inflight *f;

	if (!seg || !seg->tagged || seg->opcode != IWX_OP_READ_RESP ||
	    !iwx_cause_eq(cause, IWX_CAUSE_DDP_T(IWX_DDP_T_INVALID_STAG)))
		return;	/* a Response beyond a sink that is still there: the peer's error */
	f = qp_oldest_pending(qp, false);
	if (f && f->wr.sge[0].lkey == seg->stag) {
		f->done = true;
		f->status = IWX_WC_LOC_PROT_ERR;
	}
}

/*
 * An error found here: the Terminate goes out after the FPDU now being sent, nothing
 * after it (RFC 5040 §5.4), and every request is flushed. Only the first error counts.
 */
void qp_fail(struct engine_qp *qp, struct iwx_term_cause cause, const struct iwx_ddp_seg *seg,
	     const struct iwx_read_req *rr)
{
	if (qp->state != ENGINE_QP_RTS)
		return;
	sink_gone(qp, cause, seg);
	qp->cause = cause;
	qp->cause_local = true;
	qp->state = ENGINE_QP_CLOSING;
	iwx_term_init(&qp->term, cause, seg, rr);
	qp->term_pending = true;
	flush_all(qp);
}

/* ------------------------------------------------------------ local memory */

/* Bytes [to, to + len) of mr, checked by the caller (len > 0). */
struct span qp_span_of(const struct iwx_region *mr, uint64_t to, uint32_t len)
{
	return (struct span){ .p = mr->addr + (to - mr->desc.base_to), .len = len };
}

/* Resolve an sge to its bytes, checking region, PD and access (local_write for sinks). */
int qp_resolve(const struct engine_qp *qp, const struct iwx_sge *sge, bool local_write,
	       struct span *out)
{
	const struct iwx_region *mr = iwx_mem_lookup(qp->mem, sge->lkey);
	uint8_t need = local_write ? IWX_ACCESS_LOCAL_WRITE : 0;

	if (!mr || !mr->desc.valid || mr->desc.pd != qp->pd || (mr->desc.access & need) != need)
		return -EACCES;
	if (sge->addr < mr->desc.base_to || sge->addr - mr->desc.base_to > mr->desc.len ||
	    sge->len > mr->desc.len - (sge->addr - mr->desc.base_to))
		return -EACCES;
	*out = qp_span_of(mr, sge->addr, sge->len);
	return 0;
}

/* -------------------------------------------------------------------- API */

/*
 * Who may speak first. RFC 5044 §7.1.2: a revision-1 Responder sends nothing before
 * the Initiator's first FPDU. RFC 6581 §6: in peer-to-peer mode that first FPDU is
 * the agreed ready-to-receive message, a zero-length Write or Read (a zero-length
 * Send would take one of the Responder's receive buffers; iwx does not offer it).
 */
static void start_stream(struct engine_qp *qp)
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
static int rings_init(struct engine_qp *qp, uint32_t sq, uint32_t rq, uint32_t cq, uint32_t inflight,
		      uint32_t reqs_in)
{
	const struct {
		struct ring	*r;
		uint32_t	size, cap;
	} rings[] = {
		{ &qp->sq, sizeof(struct iwx_send_wr), sq },	/* first: sq.v is the block */
		{ &qp->rq, sizeof(struct iwx_recv_wr), rq },
		{ &qp->cq, sizeof(struct iwx_wc), cq },
		{ &qp->inflight, sizeof(struct inflight), inflight },
		{ &qp->reqs_in, sizeof(struct inbound_req), reqs_in },
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

struct engine_qp *engine_qp_create(struct iwx_llp *llp, const struct iwx_mpa_agreed *agreed,
			     struct iwx_mem *mem, uint32_t pd, const struct engine_qp_attr *attr)
{
	uint32_t sq = attr && attr->sq_depth ? attr->sq_depth : 256;
	uint32_t rq = attr && attr->rq_depth ? attr->rq_depth : 256;
	/* finished requests behind unanswered Reads: up to ORD Reads and a send queue's worth */
	uint64_t inflight = (uint64_t)sq + agreed->ord;
	/* a completion for every request held at once (see engine_qp_poll) */
	uint64_t cq = sq + inflight + rq;
	struct engine_qp *qp;

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
		engine_qp_destroy(qp);
		return NULL;
	}
	start_stream(qp);
	return qp;
}

void engine_qp_destroy(struct engine_qp *qp)
{
	if (!qp)
		return;
	qp->llp->ops->destroy(qp->llp);
	free(qp->sq.v);		/* every ring's block */
	free(qp);
}

int engine_qp_post_send(struct engine_qp *qp, const struct iwx_send_wr *wr)
{
	if (qp->state != ENGINE_QP_RTS)
		return -ENOTCONN;
	if (!iwx_send_wr_valid(wr))	/* which also keeps out WR_INTERNAL */
		return -EINVAL;
	if (iwx_wr_is_rfc7306(wr->opcode) && !qp->agreed.rdmap_ext)
		return -EOPNOTSUPP;	/* the peer did not agree to RFC 7306 */
	return ring_push(&qp->sq, wr);
}

int engine_qp_post_recv(struct engine_qp *qp, const struct iwx_recv_wr *wr)
{
	if (qp->state != ENGINE_QP_RTS)
		return -ENOTCONN;
	if (!iwx_recv_wr_valid(wr))
		return -EINVAL;
	return ring_push(&qp->rq, wr);
}

int engine_qp_transmit(struct engine_qp *qp, bool *want_write)
{
	bool ww = false;

	if (qp->state != ENGINE_QP_ERROR)
		qp_transmit(qp, &ww);
	if (want_write)
		*want_write = ww;
	return qp->state == ENGINE_QP_ERROR ? -ENOTCONN : 0;
}

int engine_qp_progress(struct engine_qp *qp, bool *want_write)
{
	if (qp->state == ENGINE_QP_RTS)
		qp->llp->ops->receive(qp->llp);
	return engine_qp_transmit(qp, want_write);
}

int engine_qp_poll(struct engine_qp *qp, struct iwx_wc *wc, int n)
{
	int i;

	for (i = 0; i < n && qp->cq.n; i++) {
		wc[i] = *(struct iwx_wc *)ring_at(&qp->cq, 0);
		ring_pop(&qp->cq);
		qp->rx_unpolled -= iwx_wc_is_recv(wc[i].opcode);
	}
	return i;
}

uint32_t engine_qp_unpolled(const struct engine_qp *qp)
{
	return qp->cq.n;
}

void engine_qp_abort(struct engine_qp *qp)
{
	qp_enter_error(qp, IWX_CAUSE_MPA(IWX_MPA_EC_STREAM_LOST), true);
}

enum engine_qp_state engine_qp_get_state(const struct engine_qp *qp)
{
	return qp->state;
}

void engine_qp_shut_send(struct engine_qp *qp)
{
	qp->llp->ops->stop(qp->llp, true);
}

bool engine_qp_tx_idle(const struct engine_qp *qp)
{
	return !qp->sq.n && !qp->msg.active && qp->llp->ops->tx_idle(qp->llp) && !qp->reqs_in.n &&
	       !qp->term_pending;
}

bool engine_qp_error(const struct engine_qp *qp, struct iwx_term_cause *cause, bool *local)
{
	if (qp->state == ENGINE_QP_RTS)
		return false;
	if (cause)
		*cause = qp->cause;
	if (local)
		*local = qp->cause_local;
	return true;
}

void engine_qp_stats(const struct engine_qp *qp, struct iwx_qp_stats *st)
{
	*st = qp->stats;
}

static bool span_within(const struct span *s, uintptr_t base, size_t len)
{
	return s->len && (uintptr_t)s->p < base + len && (uintptr_t)s->p + s->len > base;
}

bool engine_qp_refers_to(const struct engine_qp *qp, const void *addr, size_t len)
{
	uintptr_t base = (uintptr_t)addr;

	if (span_within(&qp->rx_dst, base, len))
		return true;
	for (uint8_t i = 0; qp->msg.active && i < qp->msg.nsrc; i++)
		if (span_within(&qp->msg.src[i], base, len))
			return true;
	for (uint32_t i = 0; i < qp->reqs_in.n; i++)
		if (span_within(&((const struct inbound_req *)ring_at(&qp->reqs_in, i))->src,
				base, len))
			return true;
	return qp->llp->ops->refers_to(qp->llp, base, len);
}

void engine_qp_stag_gone(struct engine_qp *qp, uint32_t stag)
{
	if (!qp->rx_dst.p || !qp->rx_dst.len || qp->rx_stag != stag || !qp->llp->ops->unplace)
		return;
	qp->llp->ops->unplace(qp->llp);
	/* at its end: take_tagged looks the STag up again, take_send scatters (resolve) */
	qp->rx_staged = qp->rx_tagged;
	qp->rx_dst = (struct span){ 0 };
}

void engine_qp_settle(struct engine_qp *qp, bool hold)
{
	if (qp->agreed.initiator && !(hold && qp->stats.rx_fpdus))	/* it spoke: it is ready */
		qp->hold_tx = hold;
}
