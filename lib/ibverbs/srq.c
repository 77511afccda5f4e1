// SPDX-License-Identifier: MIT
/*
 * Shared receive queues on libiwx's (iwx_create_srq): receives posted once serve every
 * queue pair made on the SRQ, as siw has them. A resize is refused (EOPNOTSUPP), as siw
 * refuses it; the limit is armed with ibv_modify_srq and fires as an asynchronous event.
 */
#include <errno.h>
#include <stdlib.h>

#include "iwxv.h"

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct iwxv_context *c = iwxv_ctx(pd->context);
	struct iwx_srq_init_attr ia = { .depth = attr->attr.max_wr ? attr->attr.max_wr : 1 };
	struct iwx_srq_attr got;
	struct iwxv_srq *s;
	int err;

	/* ibv_create_srq(3): srq_limit is not for creation, and is not looked at */
	if (attr->attr.max_wr > c->lim.max_qp_depth || attr->attr.max_sge > IWX_MAX_SGE)
		return iwxv_fail(EINVAL);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	iwxv_lock(c);
	s->isrq = iwx_create_srq(((struct iwxv_pd *)pd)->ipd, &ia);
	err = s->isrq ? 0 : errno;
	if (!err) {
		s->next = c->srqs;
		c->srqs = s;
	}
	iwxv_unlock(c);
	if (err) {
		free(s);
		return iwxv_fail(err);
	}
	iwx_query_srq(s->isrq, &got);
	attr->attr.max_wr = got.depth;
	attr->attr.max_sge = IWX_MAX_SGE;
	s->srq = (struct ibv_srq){ .context = pd->context, .srq_context = attr->srq_context,
				   .pd = pd };
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct iwxv_srq *s = (struct iwxv_srq *)srq;
	struct iwxv_context *c = iwxv_ctx(srq->context);
	int err;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	iwxv_lock(c);
	err = -iwx_arm_srq(s->isrq, attr->srq_limit);
	iwxv_unlock(c);
	return err;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct iwxv_srq *s = (struct iwxv_srq *)srq;
	struct iwxv_context *c = iwxv_ctx(srq->context);
	struct iwx_srq_attr got;

	iwxv_lock(c);
	iwx_query_srq(s->isrq, &got);
	iwxv_unlock(c);
	*attr = (struct ibv_srq_attr){ .max_wr = got.depth, .max_sge = IWX_MAX_SGE,
				       .srq_limit = got.limit };
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct iwxv_srq *s = (struct iwxv_srq *)srq;
	struct iwxv_context *c = iwxv_ctx(srq->context);
	int err;

	iwxv_lock(c);
	err = -iwx_destroy_srq(s->isrq);
	if (!err)
		for (struct iwxv_srq **pp = &c->srqs; *pp; pp = &(*pp)->next)
			if (*pp == s) {
				*pp = s->next;
				break;
			}
	iwxv_unlock(c);
	if (!err)
		free(s);
	return err;
}

int iwxv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct iwxv_srq *s = (struct iwxv_srq *)srq;
	struct iwxv_context *c = iwxv_ctx(srq->context);
	int err = 0;

	iwxv_lock(c);
	for (; wr && !err; wr = err ? wr : wr->next) {
		struct iwx_recv_wr w;

		err = iwxv_recv_wr_of(wr, &w);
		if (!err)
			err = -iwx_post_srq_recv(s->isrq, &w);
		err = err == ENOBUFS ? ENOMEM : err;
	}
	iwxv_unlock(c);
	if (err)
		*bad = wr;
	return err;
}
