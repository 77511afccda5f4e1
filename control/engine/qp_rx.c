// SPDX-License-Identifier: MIT
/*
 * The queue pair's receive side: where an arriving segment's payload goes (place), and
 * what the whole segment means (take): Sends and Immediate Data into posted receives in
 * MSN order, tagged data into registered memory, the peer's Read and Atomic Requests
 * queued to answer, Read and Atomic Responses and Terminates (RFC 5040 §5-§7, RFC 5041
 * §7, RFC 7306 §5-§6).
 */
#include <errno.h>
#include <sys/param.h>	/* MIN */

#include "util/place_copy.h"

#include "qp_int.h"

/* The receive buffer a Send of MSN msn goes to, if posted. */
static const struct iwx_recv_wr *recv_wr_for(const struct engine_qp *qp, uint32_t msn)
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
static const struct iwx_recv_wr *take_posted_recv(struct engine_qp *qp, uint32_t msn)
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
static uint8_t *recv_target(const struct engine_qp *qp, const struct iwx_recv_wr *wr, uint32_t mo,
			    uint32_t len, uint32_t *lkey)
{
	for (uint8_t i = 0; i < wr->num_sge; i++) {
		if (mo < wr->sge[i].len) {
			struct span s;

			if (len > wr->sge[i].len - mo || qp_resolve(qp, &wr->sge[i], true, &s))
				return NULL;
			*lkey = wr->sge[i].lkey;
			return s.p + mo;
		}
		mo -= wr->sge[i].len;
	}
	return NULL;
}

void engine_qp_placing(struct engine_qp *qp, uint8_t *dst, uint32_t len)
{
	qp->rx_dst = (struct span){ .p = dst, .len = dst ? len : 0 };
}

int engine_qp_tagged_target(const struct engine_qp *qp, const struct iwx_ddp_seg *seg, uint8_t **dst,
			 struct iwx_term_cause *cause)
{
	const struct iwx_region *mr = iwx_mem_lookup(qp->mem, seg->stag);
	uint8_t need = seg->opcode == IWX_OP_WRITE ? IWX_ACCESS_REMOTE_WRITE : IWX_ACCESS_LOCAL_WRITE;
	uint32_t r = iwx_check_tagged(mr ? &mr->desc : NULL, seg->stag, qp->pd, need, seg->to,
				      seg->len);

	if (r) {
		*cause = qp_cause_of_check(r);
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
static bool cut_next(const struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	return qp->rx_next.valid && seg->stag == qp->rx_next.stag && seg->to == qp->rx_next.to;
}

int engine_qp_place(void *ctx, const struct iwx_ddp_seg *seg, uint8_t **dst,
		 struct iwx_term_cause *cause)
{
	struct engine_qp *qp = ctx;
	struct iwx_untagged_queue q;
	uint32_t r, buf_len;

	if (!qp->agreed.rdmap_ext && iwx_rdmap_check_rfc5040(seg, cause))
		return -EPROTO;
	if (seg->tagged) {
		if (engine_qp_tagged_target(qp, seg, dst, cause))
			return -EPROTO;
		if (!qp->llp->checked && !cut_next(qp, seg)) {
			*dst = NULL;	/* into the parser's buffer: take_tagged places it */
			qp->rx_staged = seg->len != 0;
		}
		engine_qp_placing(qp, *dst, seg->len);
		qp->rx_stag = seg->stag;
		qp->rx_tagged = true;
		return 0;
	}

	/* untagged: one buffer per message on each queue (RFC 5041 §7.1) */
	q.next_msn = qp->rx_msn[seg->qn];
	switch (seg->qn) {
	case IWX_QN_SEND: {
		const struct iwx_recv_wr *wr = recv_wr_for(qp, seg->msn);
		/* Immediate Data takes a receive and writes nothing into it (RFC 7306 §6.3) */
		bool imm = iwx_rdmap_opcode_imm(seg->opcode);

		if (!wr)
			wr = take_posted_recv(qp, seg->msn);	/* from an SRQ, or posted since */
		q.posted = qp->rq.n;
		buf_len = imm ? IWX_RDMAP_IMM_LEN : wr ? sge_total(wr->sge, wr->num_sge) : 0;
		r = iwx_check_untagged(&q, seg->msn, seg->mo, seg->len, buf_len);
		if (!r && seg->len && !imm)
			*dst = recv_target(qp, wr, seg->mo, seg->len, &qp->rx_stag);
		/* else the payload waits in the parser's buffer, to be scattered */
		engine_qp_placing(qp, *dst, seg->len);
		qp->rx_tagged = false;
		break;
	}
	case IWX_QN_READ_REQ:
		/* it holds IRD Read and Atomic Requests (RFC 5040 §5.2.2, RFC 7306 §5.2) */
		q.posted = qp->agreed.ird > qp->reqs_in.n ? qp->agreed.ird - qp->reqs_in.n : 0;
		r = iwx_check_untagged(&q, seg->msn, seg->mo, seg->len,
				       seg->opcode == IWX_OP_ATOMIC_REQ ? IWX_RDMAP_ATOMIC_REQ_LEN :
				       IWX_RDMAP_READ_REQ_LEN);
		break;
	case IWX_QN_ATOMIC_RESP:
		/* a buffer for each atomic awaiting its Response (RFC 7306 §5.2.2) */
		q.posted = qp->atomics_out;
		r = iwx_check_untagged(&q, seg->msn, seg->mo, seg->len, IWX_RDMAP_ATOMIC_RESP_LEN);
		break;
	default:
		q.posted = 1;
		r = iwx_check_untagged(&q, seg->msn, seg->mo, seg->len, IWX_TERM_MAX_LEN);
		break;
	}
	if (r) {
		*cause = qp_cause_of_check(r);
		return -EPROTO;
	}
	return 0;
}

static int scatter(const struct engine_qp *qp, const struct iwx_recv_wr *wr, uint32_t mo,
		   const uint8_t *src, uint32_t len)
{
	for (uint8_t i = 0; i < wr->num_sge && len; i++) {
		struct span s;
		int err;

		if (mo >= wr->sge[i].len) {
			mo -= wr->sge[i].len;
			continue;
		}
		err = qp_resolve(qp, &wr->sge[i], true, &s);
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
static void take_tagged(struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct iwx_term_cause cause;
	uint8_t *dst;

	if (qp->rx_staged) {
		qp->rx_staged = false;
		if (engine_qp_tagged_target(qp, seg, &dst, &cause)) {
			qp_fail(qp, cause, seg, NULL);
			return;
		}
		iwx_place_copy(dst, seg->payload, seg->len);
	}
	qp->rx_next.valid = !seg->last;
	qp->rx_next.stag = seg->stag;
	qp->rx_next.to = seg->to + seg->len;
}

static void take_send(struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	/* place() found it posted; a message's last segment comes in MSN order (RFC 5041 §5.3) */
	const struct iwx_recv_wr *wr = recv_wr_for(qp, seg->msn);
	struct iwx_wc wc = { .wr_id = wr->wr_id, .opcode = IWX_WC_RECV };

	if (seg->len && !qp->rx_dst.p && scatter(qp, wr, seg->mo, seg->payload, seg->len)) {
		/* the receive buffer is not ours to write, or gone: it fails, then the stream */
		if (seg->msn == qp->rx_msn[IWX_QN_SEND]) {	/* else it is flushed with the rest */
			wc.status = IWX_WC_LOC_PROT_ERR;
			qp_complete(qp, &wc);
			ring_pop(&qp->rq);
		}
		qp_fail(qp, IWX_CAUSE_LOCAL_CATASTROPHIC, NULL, NULL);
		return;
	}
	if (!seg->last)
		return;
	if (iwx_rdmap_opcode_has_inval(seg->opcode)) {
		/* RFC 5040 §5.3: invalidate an STag of this stream, or terminate */
		if (iwx_mem_invalidate(qp->mem, seg->inval_stag, qp->pd)) {
			qp_fail(qp, IWX_CAUSE_RDMAP_PROT(IWX_RDMAP_EC_CANNOT_INVALIDATE), seg, NULL);
			return;
		}
		wc.with_inv = true;
		wc.invalidated_stag = seg->inval_stag;
	}
	wc.solicited = iwx_rdmap_opcode_solicited(seg->opcode);
	wc.byte_len = seg->mo + seg->len;
	qp_complete(qp, &wc);
	ring_pop(&qp->rq);
	qp->rx_msn[IWX_QN_SEND]++;
}

/* Immediate Data (RFC 7306 §6): place() found it a receive; its completion carries the bytes. */
static void take_imm(struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	const struct iwx_recv_wr *wr = recv_wr_for(qp, seg->msn);
	struct iwx_term_cause cause;
	uint64_t imm;

	if (iwx_imm_decode(seg, &imm, &cause)) {
		qp_fail(qp, cause, seg, NULL);
		return;
	}
	struct iwx_wc wc = { .wr_id = wr->wr_id, .opcode = IWX_WC_RECV_IMM,
			     .solicited = iwx_rdmap_opcode_solicited(seg->opcode),
			     .imm_data = imm >> 32 };	/* verbs' 4 bytes: the first */

	qp_complete(qp, &wc);
	ring_pop(&qp->rq);
	qp->rx_msn[IWX_QN_SEND]++;
}

/*
 * A Read Request (RFC 5040 §4.4) or Atomic Request (RFC 7306 §5.2.1), checked now
 * against its source or target so that the Terminate names its segment; answered when
 * its turn among the Responses comes (qp_tx.c), where an atomic's target is looked up
 * again.
 */
static void take_request(struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct inbound_req in = { .atomic = seg->opcode == IWX_OP_ATOMIC_REQ };
	const struct iwx_stag_desc *d;
	struct iwx_term_cause cause;
	const struct iwx_region *mr;
	uint32_t r;

	if (in.atomic ? iwx_atomic_req_decode(seg, &in.ar, &cause) :
			iwx_read_req_decode(seg, &in.rr, &cause)) {
		qp_fail(qp, cause, seg, NULL);
		return;
	}
	mr = iwx_mem_lookup(qp->mem, in.atomic ? in.ar.stag : in.rr.src_stag);
	d = mr ? &mr->desc : NULL;
	r = in.atomic ? iwx_check_atomic_target(d, in.ar.stag, qp->pd, in.ar.to) :
			iwx_check_read_source(d, in.rr.src_stag, qp->pd, in.rr.src_to, in.rr.size);
	if (r) {
		qp_fail(qp, qp_cause_of_check(r), seg, in.atomic ? NULL : &in.rr);
		return;
	}
	if (!in.atomic && in.rr.size)
		in.src = qp_span_of(mr, in.rr.src_to, in.rr.size);
	ring_push(&qp->reqs_in, &in);	/* place() kept it within IRD */
	qp->rx_msn[IWX_QN_READ_REQ]++;
}

/* The Response to our oldest atomic: its old value lands in the request's one sge. */
static void take_atomic_response(struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct inflight *f = qp_oldest_pending(qp, true);
	struct iwx_atomic_resp resp;
	struct iwx_term_cause cause;
	struct span dst;

	if (iwx_atomic_resp_decode(seg, &resp, &cause)) {
		qp_fail(qp, cause, seg, NULL);
		return;
	}
	if (!f || resp.req_id != f->req_id) {	/* place() made sure one awaits */
		qp_fail(qp, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED), seg, NULL);
		return;
	}
	if (qp_resolve(qp, &f->wr.atomic.result, true, &dst))
		f->status = IWX_WC_LOC_PROT_ERR;	/* deregistered since it was posted */
	else
		memcpy(dst.p, &resp.orig, sizeof(resp.orig));
	f->done = true;
	qp->reads_out--;
	qp->atomics_out--;
	qp->rx_msn[IWX_QN_ATOMIC_RESP]++;
	qp_retire(qp);
}

static void take_read_response(struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct inflight *f = qp_oldest_pending(qp, false);

	if (!f) {
		qp_fail(qp, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE), seg, NULL);
		return;
	}
	if (!seg->last)
		return;
	f->done = true;
	qp->reads_out--;
	qp_retire(qp);
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
static bool term_names_sending_write(const struct engine_qp *qp, const struct iwx_term *t)
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

/* Does the Terminate's copy of a DDP header name an Atomic Request (RFC 7306 §8.1)? */
static bool term_names_atomic(const struct iwx_term *t)
{
	struct iwx_term_cause ignored;
	struct iwx_ddp_seg seg;

	return t->has_ddp_hdr && !iwx_ddp_decode(t->ddp_hdr, t->ddp_hdr_len, &seg, &ignored) &&
	       seg.opcode == IWX_OP_ATOMIC_REQ;
}

static void take_terminate(struct engine_qp *qp, const struct iwx_ddp_seg *seg)
{
	struct iwx_term t;
	struct iwx_term_cause cause;

	if (iwx_term_decode(seg, &t, &cause)) {
		qp_enter_error(qp, cause, true);
		return;
	}
	/* A Terminate about one of our Reads or atomics completes it with the error. */
	struct inflight *f = t.has_rdma_hdr ? qp_oldest_pending(qp, false) :
			     term_names_atomic(&t) ? qp_oldest_pending(qp, true) : NULL;

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
	qp_enter_error(qp, t.cause, false);
}

int engine_qp_take(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct engine_qp *qp = ctx;

	qp->stats.rx_fpdus++;
	qp->hold_tx = false;
	qp->rx_dst.len = 0;	/* whole: the parser is done with it */
	if (qp->state != ENGINE_QP_RTS)
		return -ENOTCONN;	/* RFC 5041 §7.1: drop everything after an error */
	if (seg->tagged) {
		take_tagged(qp, seg);
		if (qp->state != ENGINE_QP_RTS)
			return -ENOTCONN;
	}
	switch (seg->opcode) {
	case IWX_OP_WRITE:
		break;	/* placed by place() or take_tagged() */
	case IWX_OP_READ_RESP:
		take_read_response(qp, seg);
		break;
	case IWX_OP_READ_REQ:
	case IWX_OP_ATOMIC_REQ:
		take_request(qp, seg);
		break;
	case IWX_OP_ATOMIC_RESP:
		take_atomic_response(qp, seg);
		break;
	case IWX_OP_IMM:
	case IWX_OP_IMM_SE:
		take_imm(qp, seg);
		break;
	case IWX_OP_TERMINATE:
		take_terminate(qp, seg);
		break;
	default:
		take_send(qp, seg);
		break;
	}
	return qp->state != ENGINE_QP_RTS ? -ENOTCONN : 0;
}

void engine_qp_fail(struct engine_qp *qp, struct iwx_term_cause cause, const struct iwx_ddp_seg *seg)
{
	qp->hold_tx = false;	/* the peer has spoken, if wrongly: the Terminate goes */
	qp_fail(qp, cause, seg, NULL);
}

void engine_qp_lost(struct engine_qp *qp, bool local)
{
	qp_enter_error(qp, IWX_CAUSE_MPA(IWX_MPA_EC_STREAM_LOST), local);
}
