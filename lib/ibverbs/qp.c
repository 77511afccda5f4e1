// SPDX-License-Identifier: MIT
/*
 * Queue pairs: RC only, connected by rdma_cm (the drop-in librdmacm). Work requests
 * are translated to libiwx's and go through its rings; inline data is copied into
 * registered memory of the queue pair's own, so the application's buffer is free as
 * soon as the post returns.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iwxv.h"
#include "util/pow2.h"
#include "util/say_once.h"

/* The send operations iwx carries: RFC 5040's, and RFC 7306's where the peer agrees. */
#define SEND_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV | \
			 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/*
 * The inline slots: 2 * depth, so that a post refused for a full queue overwrites none in
 * use; each of the inline size asked for rounded up to 64 bytes, at least 64, as providers
 * round it up to what their work requests hold (programs post inline on a QP asked for 0).
 */
static int inline_init(struct iwxv_qp *q, struct iwx_pd *ipd, uint32_t sq_depth)
{
	size_t len;

	q->inl_slot = q->cap.max_inline_data ? (q->cap.max_inline_data + 63) & ~63u : 64;
	q->cap.max_inline_data = q->inl_slot;
	q->inl_slots = 2 * sq_depth;
	len = (size_t)q->inl_slot * q->inl_slots;
	q->inl = iwx_alloc(q->c->dev, len);
	if (!q->inl)
		return ENOMEM;
	q->inl_mr = iwx_reg_mr(ipd, q->inl, len, IWX_ACCESS_LOCAL_WRITE);
	if (!q->inl_mr) {
		iwx_free(q->c->dev, q->inl);
		return errno;
	}
	return 0;
}

static void inline_fini(struct iwxv_qp *q)
{
	if (q->inl_mr)
		iwx_dereg_mr(q->inl_mr);
	iwx_free(q->c->dev, q->inl);
}

/*
 * A second queue pair on one SRQ, refused unless IWX_SHARED_SRQ=1: iWARP has no RNR retry,
 * so a Send that finds the SRQ empty ends its connection, and the receive credits iWARP
 * programs keep per QP (perftest's) cannot follow receives that any QP may take: they wait
 * for ever. Called locked.
 */
static bool srq_refused(struct iwxv_context *c, struct ibv_srq *srq)
{
	static bool said;
	const char *env = getenv("IWX_SHARED_SRQ");
	struct iwxv_qp *q;

	if (!srq || (env && !strcmp(env, "1")))
		return false;
	for (q = c->qps; q && q->qpx.qp_base.srq != srq; q = q->next)
		;
	if (!q)
		return false;
	iwx_say_once(&said, "libibverbs (iwx): a second queue pair on one shared receive queue: "
		     "iWARP has no RNR retry (a Send that finds it empty ends its connection) and "
		     "per-QP receive credits cannot follow it; IWX_SHARED_SRQ=1 allows it\n");
	return true;
}

struct ibv_qp *iwxv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct iwxv_context *c = iwxv_ctx(ctx);
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct iwx_qp_init_attr ia;
	struct iwx_qp_attr got;
	struct iwxv_qp *q;
	int err;

	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || !a->send_cq || !a->recv_cq)
		return iwxv_fail(EINVAL);
	if (a->qp_type != IBV_QPT_RC) {
		/* ibv_ud_pingpong and kin say only "Couldn't create QP" */
		static bool said;

		iwx_say_once(&said, "libibverbs (iwx): queue pair type %d: iWARP has reliable "
			     "connected queue pairs (IBV_QPT_RC) only, no UD, UC or XRC\n", a->qp_type);
		return iwxv_fail(EOPNOTSUPP);
	}
	if ((a->comp_mask & ~known) ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (a->send_ops_flags & ~SEND_OPS)))
		return iwxv_fail(EOPNOTSUPP);	/* no Send with immediate, atomic write, TSO, ... */
	if (a->cap.max_send_wr > c->lim.max_qp_depth || a->cap.max_recv_wr > c->lim.max_qp_depth ||
	    a->cap.max_send_sge > IWX_MAX_SGE || a->cap.max_recv_sge > IWX_MAX_SGE ||
	    a->cap.max_inline_data > IWXV_MAX_INLINE)
		return iwxv_fail(EINVAL);
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->c = c;
	ia = (struct iwx_qp_init_attr){
		.send_cq = ((struct iwxv_cq *)a->send_cq)->icq,
		.recv_cq = ((struct iwxv_cq *)a->recv_cq)->icq,
		.sq_depth = iwx_pow2_at_least(a->cap.max_send_wr ? a->cap.max_send_wr : 1),
		.rq_depth = iwx_pow2_at_least(a->cap.max_recv_wr ? a->cap.max_recv_wr : 1),
		.srq = a->srq ? ((struct iwxv_srq *)a->srq)->isrq : NULL,
	};
	iwxv_lock(c);
	if (srq_refused(c, a->srq)) {
		err = EOPNOTSUPP;
	} else {
		q->iqp = iwx_create_qp(((struct iwxv_pd *)a->pd)->ipd, &ia);
		err = q->iqp ? 0 : errno;
	}
	if (!err) {
		iwx_query_qp(q->iqp, &got);
		q->cap = (struct ibv_qp_cap){
			.max_send_wr = got.sq_depth, .max_recv_wr = a->srq ? 0 : got.rq_depth,
			.max_send_sge = IWX_MAX_SGE, .max_recv_sge = a->srq ? 0 : IWX_MAX_SGE,
			.max_inline_data = a->cap.max_inline_data,
		};
		err = inline_init(q, ((struct iwxv_pd *)a->pd)->ipd, got.sq_depth);
		if (err)
			iwx_destroy_qp(q->iqp);
	}
	if (!err) {
		q->qpx.qp_base.srq = a->srq;	/* for srq_refused, before the lock goes */
		q->next = c->qps;
		c->qps = q;
	}
	iwxv_unlock(c);
	if (err) {
		free(q);
		return iwxv_fail(err);
	}
	q->sig_all = a->sq_sig_all;
	q->ex = a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	q->state = IBV_QPS_RESET;
	a->cap = q->cap;
	q->qpx.qp_base = (struct ibv_qp){
		.context = ctx, .qp_context = a->qp_context, .pd = a->pd, .send_cq = a->send_cq,
		.recv_cq = a->recv_cq, .srq = a->srq, .handle = iwx_qp_num(q->iqp),
		.qp_num = iwx_qp_num(q->iqp),
		.state = IBV_QPS_RESET, .qp_type = IBV_QPT_RC,
	};
	pthread_mutex_init(&q->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&q->qpx.qp_base.cond, NULL);
	iwxv_qp_ex_init(q);
	return &q->qpx.qp_base;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_context = attr->qp_context, .send_cq = attr->send_cq, .recv_cq = attr->recv_cq,
		.srq = attr->srq, .cap = attr->cap, .qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};
	struct ibv_qp *qp = iwxv_create_qp_ex(pd->context, &a);

	if (qp)
		attr->cap = a.cap;
	return qp;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct iwxv_qp *q = iwxv_qp(qp);

	return q->ex ? &q->qpx : iwxv_fail(EOPNOTSUPP);
}

static void (*qp_destroy_hook)(struct ibv_qp *qp);

void iwxv_on_qp_destroy(void (*fn)(struct ibv_qp *qp))
{
	__atomic_store_n(&qp_destroy_hook, fn, __ATOMIC_RELEASE);
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct iwxv_qp *q = iwxv_qp(qp);
	struct iwxv_context *c = q->c;
	void (*hook)(struct ibv_qp *qp) = __atomic_load_n(&qp_destroy_hook, __ATOMIC_ACQUIRE);
	int err;

	if (hook)
		hook(qp);	/* destroying an iwx QP ends its connection */
	iwxv_lock(c);
	err = -iwx_destroy_qp(q->iqp);
	if (!err) {
		inline_fini(q);
		for (struct iwxv_qp **pp = &c->qps; *pp; pp = &(*pp)->next)
			if (*pp == q) {
				*pp = q->next;
				break;
			}
	}
	iwxv_unlock(c);
	if (err)
		return err;
	free(q->batch);
	free(q);
	return 0;
}

/* The state verbs show: iwx's once connected, else what the application last set. */
static enum ibv_qp_state state_of(struct iwxv_qp *q)
{
	switch (iwx_qp_state(q->iqp)) {
	case IWX_QPS_RTS:	return IBV_QPS_RTS;
	case IWX_QPS_ERROR:	return IBV_QPS_ERR;
	default:		return q->state;
	}
}

/*
 * rdma_cm drives the states; on iWARP the connection, not the QP's attributes, makes
 * a queue pair ready. Moving a connected one to ERR closes its stream (as a disconnect).
 */
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct iwxv_qp *q = iwxv_qp(qp);

	if (mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
		     IBV_QP_PORT | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
		     IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		     IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_AV | IBV_QP_DEST_QPN))
		return EOPNOTSUPP;
	iwxv_lock(q->c);
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IBV_QP_STATE) {
		enum iwx_qp_state now = iwx_qp_state(q->iqp);

		/*
		 * iWARP: rdma_cm's connection makes a QP ready, not a modify that names the
		 * peer (ibv_rc_pingpong's way); one without, as rdma_init_qp_attr gives it
		 * (cmtime's, before rdma_accept), is taken.
		 */
		if ((attr->qp_state == IBV_QPS_RTR || attr->qp_state == IBV_QPS_RTS) &&
		    (mask & (IBV_QP_AV | IBV_QP_DEST_QPN)) && now != IWX_QPS_RTS) {
			static bool said;

			iwxv_unlock(q->c);
			iwx_say_once(&said, "libibverbs (iwx): ibv_modify_qp to RTR or RTS with the "
				     "peer's address: an iWARP queue pair is connected by rdma_cm "
				     "(rdma_connect, rdma_accept), not by ibv_modify_qp\n");
			return ENOTCONN;
		}
		if (attr->qp_state == IBV_QPS_ERR && now == IWX_QPS_RTS)
			iwx_disconnect(q->iqp);
		q->state = attr->qp_state;
	}
	qp->state = state_of(q);
	iwxv_unlock(q->c);
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init)
{
	struct iwxv_qp *q = iwxv_qp(qp);

	(void)mask;	/* everything known is given */
	iwxv_lock(q->c);
	*attr = q->attr;
	attr->qp_state = attr->cur_qp_state = qp->state = state_of(q);
	attr->cap = q->cap;
	attr->path_mtu = IBV_MTU_1024;
	attr->port_num = 1;
	iwxv_unlock(q->c);
	*init = (struct ibv_qp_init_attr){
		.qp_context = qp->qp_context, .send_cq = qp->send_cq, .recv_cq = qp->recv_cq,
		.srq = qp->srq, .cap = q->cap, .qp_type = IBV_QPT_RC, .sq_sig_all = q->sig_all,
	};
	return 0;
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0;	/* placement order is not promised (RFC 5041 §5.3) */
}

/* ------------------------------------------------------------------ posting */

int iwxv_post_one(struct iwxv_qp *q, struct iwx_send_wr *w, bool inl, const struct ibv_sge *sg,
		  int nsg)
{
	int err;

	if (nsg < 0 || nsg > IWX_MAX_SGE)
		return EINVAL;
	if (q->sig_all)
		w->flags |= IWX_WR_SIGNALED;
	if (inl && w->opcode != IWX_WR_READ && !iwx_wr_is_atomic(w->opcode)) {
		uint8_t *slot;
		size_t total = 0;

		for (int i = 0; i < nsg; i++)
			total += sg[i].length;
		if (total > q->cap.max_inline_data)
			return EINVAL;
		slot = q->inl + (size_t)(q->posted % (q->inl_slots ? q->inl_slots : 1)) * q->inl_slot;
		for (int i = 0, off = 0; i < nsg; off += (int)sg[i].length, i++)
			memcpy(slot + off, (const void *)(uintptr_t)sg[i].addr, sg[i].length);
		w->num_sge = total ? 1 : 0;
		w->sge[0] = (struct iwx_sge){ (uintptr_t)slot, (uint32_t)total,
					      total ? q->inl_mr->lkey : 0 };
	} else {
		w->num_sge = (uint8_t)nsg;
		for (int i = 0; i < nsg; i++)
			w->sge[i] = (struct iwx_sge){ sg[i].addr, sg[i].length, sg[i].lkey };
	}
	err = -iwx_post_send(q->iqp, w);
	if (!err)
		q->posted++;
	/* verbs: a full queue is ENOMEM; posting before the connection is up, EINVAL */
	return err == ENOBUFS ? ENOMEM : err == ENOTCONN ? EINVAL : err;
}

/* One ibv_send_wr as libiwx's; 0 or a positive errno. */
static int send_wr_of(const struct ibv_send_wr *wr, struct iwx_send_wr *w)
{
	bool se = wr->send_flags & IBV_SEND_SOLICITED;

	*w = (struct iwx_send_wr){
		.wr_id = wr->wr_id,
		.flags = (wr->send_flags & IBV_SEND_SIGNALED ? IWX_WR_SIGNALED : 0) |
			 (wr->send_flags & IBV_SEND_FENCE ? IWX_WR_FENCE : 0),
	};
	switch (wr->opcode) {
	case IBV_WR_SEND:
		w->opcode = se ? IWX_WR_SEND_SE : IWX_WR_SEND;
		return 0;
	case IBV_WR_SEND_WITH_INV:
		w->opcode = se ? IWX_WR_SEND_SE_INV : IWX_WR_SEND_INV;
		w->inval_stag = wr->invalidate_rkey;
		return 0;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		w->opcode = wr->opcode == IBV_WR_RDMA_WRITE ? IWX_WR_WRITE : IWX_WR_READ;
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		return wr->opcode == IBV_WR_RDMA_READ && wr->num_sge != 1 ? EINVAL : 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM:	/* RFC 7306 §6: a Write, then Immediate Data */
		w->opcode = se ? IWX_WR_WRITE_IMM_SE : IWX_WR_WRITE_IMM;
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		w->imm_data = be32toh(wr->imm_data);
		return 0;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		w->opcode = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? IWX_WR_CMP_SWAP : IWX_WR_FETCH_ADD;
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->atomic.compare_add = wr->wr.atomic.compare_add;
		w->atomic.swap = wr->wr.atomic.swap;
		return 0;	/* one 8-byte sge, an aligned target: iwx_post_send checks */
	default:
		return EINVAL;	/* Send with immediate, binds: iWARP has no wire for them */
	}
}

int iwxv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct iwxv_qp *q = iwxv_qp(qp);
	int err = 0;

	iwxv_lock(q->c);
	for (; wr && !err; wr = err ? wr : wr->next) {
		struct iwx_send_wr w;

		if (wr->opcode == IBV_WR_LOCAL_INV) {
			err = iwxv_local_inv(q, wr->wr_id, wr->invalidate_rkey,
					     q->sig_all || (wr->send_flags & IBV_SEND_SIGNALED));
			continue;
		}
		err = send_wr_of(wr, &w);
		if (!err)
			err = iwxv_post_one(q, &w, wr->send_flags & IBV_SEND_INLINE, wr->sg_list,
					    wr->num_sge);
	}
	iwxv_unlock(q->c);
	if (err)
		*bad = wr;
	return err;
}

int iwxv_recv_wr_of(const struct ibv_recv_wr *wr, struct iwx_recv_wr *w)
{
	if (wr->num_sge < 0 || wr->num_sge > IWX_MAX_SGE)
		return EINVAL;
	*w = (struct iwx_recv_wr){ .wr_id = wr->wr_id, .num_sge = (uint8_t)wr->num_sge };
	for (int i = 0; i < wr->num_sge; i++)
		w->sge[i] = (struct iwx_sge){ wr->sg_list[i].addr, wr->sg_list[i].length,
					      wr->sg_list[i].lkey };
	return 0;
}

int iwxv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct iwxv_qp *q = iwxv_qp(qp);
	int err = 0;

	iwxv_lock(q->c);
	for (; wr && !err; wr = err ? wr : wr->next) {
		struct iwx_recv_wr w;

		err = iwxv_recv_wr_of(wr, &w);
		if (!err)
			err = -iwx_post_recv(q->iqp, &w);	/* EINVAL on an SRQ's QP */
		err = err == ENOBUFS ? ENOMEM : err;
	}
	iwxv_unlock(q->c);
	if (err)
		*bad = wr;
	return err;
}

/* ------------------------------------------------------ for the drop-in librdmacm */

struct iwx_qp *iwxv_iwx_qp(struct ibv_qp *qp)
{
	return iwxv_qp(qp)->iqp;
}

struct ibv_qp *iwxv_qp_by_num(struct ibv_context *ctx, uint32_t qp_num)
{
	struct iwxv_context *c = iwxv_ctx(ctx);
	struct ibv_qp *qp = NULL;

	iwxv_lock(c);
	for (struct iwxv_qp *q = c->qps; q && !qp; q = q->next)
		if (q->qpx.qp_base.qp_num == qp_num)
			qp = &q->qpx.qp_base;
	iwxv_unlock(c);
	return qp;
}
