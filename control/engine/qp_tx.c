// SPDX-License-Identifier: MIT
/*
 * The queue pair's transmit side: Sends, Writes, Read Requests, Read Responses and
 * Terminates, and RFC 7306's Immediate Data, Atomic Requests and Responses, cut into the
 * segments its lower layer pulls (RFC 5040 §5, RFC 5041 §5).
 */
#include <endian.h>
#include <string.h>
#include <sys/param.h>	/* MIN */
#include <sys/uio.h>

#include "qp_int.h"

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

static uint8_t wr_rdmap_opcode(uint8_t op)
{
	static const uint8_t map[] = {
		[IWX_WR_SEND] = IWX_OP_SEND, [IWX_WR_SEND_INV] = IWX_OP_SEND_INV,
		[IWX_WR_SEND_SE] = IWX_OP_SEND_SE, [IWX_WR_SEND_SE_INV] = IWX_OP_SEND_SE_INV,
		[IWX_WR_WRITE] = IWX_OP_WRITE, [IWX_WR_READ] = IWX_OP_READ_REQ,
		/* RFC 7306 §6: a Write with Immediate is a Write, then an Immediate Data message */
		[IWX_WR_WRITE_IMM] = IWX_OP_WRITE, [IWX_WR_WRITE_IMM_SE] = IWX_OP_WRITE,
		[IWX_WR_FETCH_ADD] = IWX_OP_ATOMIC_REQ, [IWX_WR_CMP_SWAP] = IWX_OP_ATOMIC_REQ,
	};
	return map[op];
}

static void start_msg(struct engine_qp *qp, const struct iwx_ddp_msg *m)
{
	/* checked at creation: every segment carries a payload */
	iwx_ddp_segmenter_init_payload(&qp->msg.seg, m,
				       qp->llp->max_payload[iwx_rdmap_opcode_tagged(m->opcode)]);
	qp->msg.active = true;
}

/* A message whose len bytes the queue pair built in msg.inline_buf. */
static void start_inline(struct engine_qp *qp, struct iwx_ddp_msg *m, uint32_t len)
{
	qp->msg.src[0] = (struct span){ .p = qp->msg.inline_buf, .len = len };
	qp->msg.nsrc = 1;
	m->len = len;
	start_msg(qp, m);
}

static void start_terminate(struct engine_qp *qp)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_TERMINATE, .msn = qp->tx_msn[IWX_QN_TERMINATE]++ };

	memset(&qp->msg, 0, sizeof(qp->msg));
	qp->msg.is_term = true;
	qp->term_pending = false;
	start_inline(qp, &m, iwx_term_encode(qp->msg.inline_buf, &qp->term));
}

/*
 * RFC 7306 §5.2.1: the operation, when its turn comes, on its target looked up again (it
 * may have gone since the Request came); atomic with respect to every other atomic iwxd
 * runs, and to the application's own atomics on that memory. Its Response, or the
 * Terminate the target calls for.
 */
static void start_atomic_response(struct engine_qp *qp, const struct iwx_atomic_req *ar)
{
	const struct iwx_region *mr = iwx_mem_lookup(qp->mem, ar->stag);
	uint32_t r = iwx_check_atomic_target(mr ? &mr->desc : NULL, ar->stag, qp->pd, ar->to);
	struct iwx_ddp_msg m = { .opcode = IWX_OP_ATOMIC_RESP,
				 .msn = qp->tx_msn[IWX_QN_ATOMIC_RESP]++ };
	struct iwx_atomic_resp resp = { .req_id = ar->req_id };
	uint64_t *p, want;

	if (r) {
		qp_fail(qp, qp_cause_of_check(r), NULL, NULL);
		return;
	}
	p = (uint64_t *)qp_span_of(mr, ar->to, IWX_RDMAP_ATOMIC_TARGET_LEN).p;
	if ((uintptr_t)p % IWX_RDMAP_ATOMIC_TARGET_LEN) {	/* mapped off its alignment */
		qp_fail(qp, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_CATASTROPHIC_STREAM), NULL, NULL);
		return;
	}
	resp.orig = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	do
		want = iwx_atomic_apply(ar, resp.orig);
	while (want != resp.orig &&
	       !__atomic_compare_exchange_n(p, &resp.orig, want, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_ACQUIRE));
	iwx_atomic_resp_encode(qp->msg.inline_buf, &resp);
	start_inline(qp, &m, IWX_RDMAP_ATOMIC_RESP_LEN);
}

/* RFC 5040 §5.2.2, RFC 7306 §7: Read and Atomic Responses go out in the order the Requests came. */
static void start_response(struct engine_qp *qp)
{
	struct inbound_req in = *(const struct inbound_req *)ring_at(&qp->reqs_in, 0);
	struct iwx_ddp_msg m = {
		.opcode = IWX_OP_READ_RESP, .stag = in.rr.sink_stag, .to = in.rr.sink_to,
		.len = in.rr.size,
	};

	ring_pop(&qp->reqs_in);	/* before an atomic's failure empties it */
	memset(&qp->msg, 0, sizeof(qp->msg));
	if (in.atomic) {
		start_atomic_response(qp, &in.ar);
		return;
	}
	qp->msg.src[0] = in.src;
	qp->msg.nsrc = 1;
	start_msg(qp, &m);
}

/* The Immediate Data message of the send queue head's Write with Immediate (RFC 7306 §6.2). */
static void start_imm(struct engine_qp *qp)
{
	const struct iwx_send_wr *wr = ring_at(&qp->sq, 0);
	struct iwx_ddp_msg m = { .opcode = wr->opcode == IWX_WR_WRITE_IMM_SE ? IWX_OP_IMM_SE : IWX_OP_IMM,
				 .msn = qp->tx_msn[IWX_QN_SEND]++ };
	uint32_t be = htobe32(wr->imm_data);	/* the first 4 of the 8 bytes, the rest zero */

	memset(&qp->msg, 0, sizeof(qp->msg));
	memcpy(qp->msg.inline_buf, &be, sizeof(be));
	qp->msg.from_sq = true;
	qp->imm_pending = false;
	start_inline(qp, &m, IWX_RDMAP_IMM_LEN);
}

/*
 * The send queue's head cannot be sent: its local memory is not what it claims, or
 * is gone. RFC 5040 §7.1 rule 1: a Terminate goes instead of the request, which
 * completes with a local protection error; after the requests before it, in order.
 */
static void fail_sq_head(struct engine_qp *qp)
{
	struct inflight f = { .wr = *(const struct iwx_send_wr *)ring_at(&qp->sq, 0), .done = true,
			      .status = IWX_WC_LOC_PROT_ERR, .given = qp->tx_given };

	ring_push(&qp->inflight, &f);	/* start_sq_head made sure of room */
	ring_pop(&qp->sq);
	qp_fail(qp, IWX_CAUSE_LOCAL_CATASTROPHIC, NULL, NULL);
}

/* Start the send queue's head, if its turn has come. false: nothing to start now. */
static bool start_sq_head(struct engine_qp *qp)
{
	const struct iwx_send_wr *wr = ring_at(&qp->sq, 0);
	struct iwx_ddp_msg m = { .opcode = wr_rdmap_opcode(wr->opcode) };
	bool is_read = wr->opcode == IWX_WR_READ, is_atomic = iwx_wr_is_atomic(wr->opcode);
	struct tx_msg *msg = &qp->msg;

	/*
	 * Finished messages wait in inflight behind an unanswered Read while the send
	 * queue frees up: start none that would find it full when finished.
	 */
	if (qp->inflight.n == qp->inflight.cap)
		return false;
	if ((wr->flags & IWX_WR_FENCE) && qp->reads_out)
		return false;	/* a fence waits for every earlier Read and atomic */
	if ((is_read || is_atomic) && qp->reads_out >= qp->agreed.ord)
		return false;	/* ORD: no more in flight than the peer takes (RFC 7306 §5.2) */

	memset(msg, 0, sizeof(*msg));
	for (uint8_t i = 0; i < wr->num_sge; i++) {
		if (wr->sge[i].len &&
		    qp_resolve(qp, &wr->sge[i], is_read || is_atomic, &msg->src[i])) {
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
	} else if (is_atomic) {
		/* §5.2.1: Fetch-Add sends compare 0 under an all-ones mask; the MSN names it */
		bool cas = wr->opcode == IWX_WR_CMP_SWAP;
		struct iwx_atomic_req ar = {
			.aop = cas ? IWX_AOP_CMP_SWAP : IWX_AOP_FETCH_ADD,
			.req_id = qp->tx_msn[IWX_QN_READ_REQ], .stag = wr->rkey, .to = wr->remote_addr,
			.add_swap = cas ? wr->atomic.swap : wr->atomic.compare_add,
			.add_swap_mask = cas ? ~0ull : 0,
			.compare = cas ? wr->atomic.compare_add : 0, .compare_mask = ~0ull,
		};

		iwx_atomic_req_encode(msg->inline_buf, &ar);
		msg->src[0] = (struct span){ .p = msg->inline_buf, .len = IWX_RDMAP_ATOMIC_REQ_LEN };
		msg->nsrc = 1;
		m.len = IWX_RDMAP_ATOMIC_REQ_LEN;
		m.msn = qp->tx_msn[IWX_QN_READ_REQ]++;
	} else if (m.opcode == IWX_OP_WRITE) {
		m.stag = wr->rkey;
		m.to = wr->remote_addr;
		m.len = sge_total(wr->sge, wr->num_sge);
		msg->imm_next = wr->opcode != IWX_WR_WRITE;
	} else {
		m.inval_stag = wr->inval_stag;
		m.len = sge_total(wr->sge, wr->num_sge);
		m.msn = qp->tx_msn[IWX_QN_SEND]++;
	}
	start_msg(qp, &m);
	return true;
}

/* The last segment of the current message is in the lower layer's hands. */
static void finish_msg(struct engine_qp *qp)
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
	if (msg->imm_next) {
		qp->imm_pending = true;	/* the head stays: its Immediate Data comes next */
		return;
	}
	struct inflight f = { .wr = *(const struct iwx_send_wr *)ring_at(&qp->sq, 0),
			      .given = qp->tx_given, .req_id = msg->seg.msg.msn };

	/*
	 * RFC 5041 §5.4: a message is complete once the LLP has it (engine_qp_sent); a Read
	 * or an atomic once answered
	 */
	f.done = f.wr.opcode != IWX_WR_READ && !iwx_wr_is_atomic(f.wr.opcode);
	qp->reads_out += !f.done;
	qp->atomics_out += iwx_wr_is_atomic(f.wr.opcode);
	ring_push(&qp->inflight, &f);	/* start_sq_head made sure of room */
	ring_pop(&qp->sq);
}

void engine_qp_sent(struct engine_qp *qp)
{
	qp->tx_sent++;
	qp_retire(qp);
}

bool engine_qp_next_segment(struct engine_qp *qp, struct iwx_llp_seg *s, uint32_t most)
{
	struct tx_msg *msg = &qp->msg;

	while (!msg->active) {
		if (qp->term_pending)
			start_terminate(qp);
		else if (qp->state != ENGINE_QP_RTS)
			return false;
		else if (qp->imm_pending)
			start_imm(qp);
		else if (qp->reqs_in.n)
			start_response(qp);
		else if ((!qp->sq.n || !start_sq_head(qp)) && !qp->term_pending)
			return false;
	}
	s->msg = &msg->seg.msg;
	s->hdr_len = iwx_ddp_segmenter_next_at_most(&msg->seg, most, s->hdr, &s->off, &s->len);
	s->npiece = pieces(msg->src, msg->nsrc, s->off, s->len, s->piece);
	/* a Read or Atomic Request's, a Terminate's payload is built in the message itself */
	s->transient = msg->nsrc == 1 && msg->src[0].p == msg->inline_buf;
	s->last = msg->seg.done;
	s->term = msg->is_term;
	if (s->last)
		finish_msg(qp);
	return true;
}

/* Hand the lower layer what may go; after a Terminate is out, stop (RFC 5040 §5.4). */
void qp_transmit(struct engine_qp *qp, bool *want_write)
{
	*want_write = false;
	if (qp->hold_tx)
		return;
	qp->llp->ops->transmit(qp->llp, want_write);
	if (qp->term_built && qp->state == ENGINE_QP_CLOSING && qp->llp->ops->tx_idle(qp->llp))
		qp_enter_error(qp, qp->cause, true);
}
