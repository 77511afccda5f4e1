// SPDX-License-Identifier: MIT
/*
 * The queue pair of an id: rdma_create_qp makes it on the id's context (with the CQs
 * and PD it lacks, as rdma-core does) and moves it to INIT, ready for receives before
 * the connection. Applications that make their own QP ask rdma_init_qp_attr what to
 * set, and connect it by number (rdma_conn_param.qp_num).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "cm.h"

static int fail(int err)
{
	errno = err;
	return -1;
}

/*
 * The CQs rdma_create_qp makes when the application gives none, as rdma-core does: one
 * for receives and one for sends, each with a completion channel of its own and the id
 * as its context (rdma_verbs.h's rdma_get_recv_comp and rdma_get_send_comp wait on them).
 */
static struct ibv_cq *make_cq(struct rdma_cm_id *cid, uint32_t n, struct ibv_comp_channel **ch)
{
	*ch = ibv_create_comp_channel(cid->verbs);
	return *ch ? ibv_create_cq(cid->verbs, n ? (int)n : 1, cid, *ch, 0) : NULL;
}

static void free_cqs(struct rdma_cm_id *cid)
{
	if (!cm_id_of(cid)->own_cqs)
		return;
	if (cid->send_cq)
		ibv_destroy_cq(cid->send_cq);
	if (cid->recv_cq)
		ibv_destroy_cq(cid->recv_cq);
	if (cid->send_cq_channel)
		ibv_destroy_comp_channel(cid->send_cq_channel);
	if (cid->recv_cq_channel)
		ibv_destroy_comp_channel(cid->recv_cq_channel);
	cid->send_cq = cid->recv_cq = NULL;
	cid->send_cq_channel = cid->recv_cq_channel = NULL;
	cm_id_of(cid)->own_cqs = false;
}

static int make_cqs(struct rdma_cm_id *cid, struct ibv_qp_init_attr_ex *a)
{
	if (a->send_cq && a->recv_cq)
		return 0;
	cm_id_of(cid)->own_cqs = true;
	if (!a->recv_cq && !(a->recv_cq = cid->recv_cq =
				     make_cq(cid, a->cap.max_recv_wr, &cid->recv_cq_channel)))
		goto fail;
	if (!a->send_cq && !(a->send_cq = cid->send_cq =
				     make_cq(cid, a->cap.max_send_wr, &cid->send_cq_channel)))
		goto fail;
	return 0;
fail:
	free_cqs(cid);
	return -1;
}

/* The PD of what an id makes when the application names none: the id's, else one of rdma_cm's. */
static struct ibv_pd *default_pd(struct rdma_cm_id *cid)
{
	if (cid->pd)
		return cid->pd;
	pthread_mutex_lock(&cm.lock);
	if (!cm.pd)
		cm.pd = ibv_alloc_pd(cm.ctx);
	pthread_mutex_unlock(&cm.lock);
	return cm.pd;
}

int rdma_create_qp_ex(struct rdma_cm_id *cid, struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
						       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	struct ibv_qp *qp;

	if (!cid->verbs || cid->qp)
		return fail(EINVAL);	/* resolve or bind first; one QP an id */
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd) {
		if (!(a->pd = default_pd(cid)))
			return -1;
		a->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (a->pd->context != cid->verbs)
		return fail(EINVAL);
	if (cid->srq && !a->srq)
		a->srq = cid->srq;	/* rdma_create_srq's, as rdma-core does */
	if (make_cqs(cid, a))
		return -1;
	qp = ibv_create_qp_ex(cid->verbs, a);
	if (!qp) {
		int err = errno;

		free_cqs(cid);
		return fail(err);
	}
	ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT);
	cid->qp = qp;
	cid->pd = a->pd;
	return 0;
}

int rdma_create_qp(struct rdma_cm_id *cid, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_context = attr->qp_context, .send_cq = attr->send_cq, .recv_cq = attr->recv_cq,
		.srq = attr->srq, .cap = attr->cap, .qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all, .comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0, .pd = pd,
	};

	if (rdma_create_qp_ex(cid, &a))
		return -1;
	attr->cap = a.cap;
	return 0;
}

void rdma_destroy_qp(struct rdma_cm_id *cid)
{
	if (!cid->qp)
		return;
	ibv_destroy_qp(cid->qp);	/* the id learns it (qp_destroyed) */
	cid->qp = NULL;
	free_cqs(cid);
}

/* What an iWARP QP needs set to go to *state (the kernel's iw_cm_init_qp_attr). */
int rdma_init_qp_attr(struct rdma_cm_id *cid, struct ibv_qp_attr *attr, int *mask)
{
	(void)cid;
	switch (attr->qp_state) {
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ;
		*mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS;
		return 0;
	case IBV_QPS_RTS:
		*mask = IBV_QP_STATE;
		return 0;
	default:
		return fail(EINVAL);
	}
}

/* For an application's own QP (IB's RTU): on iWARP the connection is established already. */
int rdma_establish(struct rdma_cm_id *cid)
{
	(void)cid;
	return 0;
}

/* The id's SRQ, which rdma_create_qp then uses: basic ones alone (iWARP has no XRC). */
int rdma_create_srq_ex(struct rdma_cm_id *cid, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;

	if (!cid->verbs || cid->srq || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return fail(EINVAL);
	if (attr->srq_type != IBV_SRQT_BASIC)
		return fail(EOPNOTSUPP);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		if (!(attr->pd = default_pd(cid)))
			return -1;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	srq = ibv_create_srq_ex(cid->verbs, attr);
	if (!srq)
		return -1;
	if (!cid->pd)
		cid->pd = attr->pd;
	cid->srq = srq;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *cid, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a = {
		.srq_context = attr->srq_context, .attr = attr->attr, .srq_type = IBV_SRQT_BASIC,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | (pd ? IBV_SRQ_INIT_ATTR_PD : 0), .pd = pd,
	};

	if (rdma_create_srq_ex(cid, &a))
		return -1;
	attr->attr = a.attr;
	return 0;
}

void rdma_destroy_srq(struct rdma_cm_id *cid)
{
	if (!cid->srq)
		return;
	ibv_destroy_srq(cid->srq);
	cid->srq = NULL;
}
