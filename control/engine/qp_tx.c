// SPDX-License-Identifier: MIT
/*
 * The queue pair's transmit side: Sends, Writes, Read Requests, Read Responses and
 * Terminates, cut into the segments its lower layer pulls (RFC 5040 §5, RFC 5041 §5).
 */
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

static void start_terminate(struct engine_qp *qp)
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
static void start_read_response(struct engine_qp *qp)
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
		if (wr->sge[i].len && qp_resolve(qp, &wr->sge[i], is_read, &msg->src[i])) {
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
	struct inflight f = { .wr = *(const struct iwx_send_wr *)ring_at(&qp->sq, 0),
			      .given = qp->tx_given };

	/* RFC 5041 §5.4: a message is complete once the LLP has it (engine_qp_sent); a Read once answered */
	f.done = f.wr.opcode != IWX_WR_READ;
	qp->reads_out += !f.done;
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
void qp_transmit(struct engine_qp *qp, bool *want_write)
{
	*want_write = false;
	if (qp->hold_tx)
		return;
	qp->llp->ops->transmit(qp->llp, want_write);
	if (qp->term_built && qp->state == ENGINE_QP_CLOSING && qp->llp->ops->tx_idle(qp->llp))
		qp_enter_error(qp, qp->cause, true);
}
