// SPDX-License-Identifier: MIT
/*
 * rdma_cm's synchronous endpoints (rdma_create_ep, rdma_get_request, rdma_destroy_ep),
 * as rdmacm-utils' rdma_client and rdma_server use them with rdma_verbs.h: ids without
 * a channel of the application's, whose calls wait for their own outcome.
 */
#include <errno.h>
#include <stdlib.h>

#include <rdma/rdma_verbs.h>

#include "cm.h"

int rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cm_id *id;
	int err = 0;

	if (!out || !res || (!res->ai_src_addr && !res->ai_dst_addr)) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cid, NULL, res->ai_port_space ? res->ai_port_space : RDMA_PS_TCP))
		return -1;
	id = cm_id_of(cid);
	if (qp_init_attr)	/* as rdma-core: the QP is of the address's type */
		qp_init_attr->qp_type = res->ai_qp_type ? res->ai_qp_type : IBV_QPT_RC;
	if (res->ai_flags & RAI_PASSIVE) {
		err = rdma_bind_addr(cid, res->ai_src_addr);
		if (!err && qp_init_attr) {
			/* made for each request rdma_get_request takes */
			id->ep_qp = true;
			id->ep_attr = *qp_init_attr;
			id->ep_pd = pd;
		}
	} else {
		err = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000) ||
		      rdma_resolve_route(cid, 2000) ||
		      (qp_init_attr && rdma_create_qp(cid, pd, qp_init_attr));
	}
	if (err) {
		err = errno;
		rdma_destroy_ep(cid);
		errno = err;
		return -1;
	}
	*out = cid;
	return 0;
}

void rdma_destroy_ep(struct rdma_cm_id *cid)
{
	rdma_destroy_qp(cid);
	rdma_destroy_srq(cid);
	rdma_destroy_id(cid);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct cm_id *lid = cm_id_of(listen);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *cid;
	struct ibv_qp_init_attr attr;
	int err;

	if (!lid->sync || !lid->listener) {
		errno = EINVAL;	/* an endpoint's listener, listening */
		return -1;
	}
	if (rdma_get_cm_event(listen->channel, &ev))
		return -1;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		err = ev->status < 0 ? -ev->status : EINVAL;
		rdma_ack_cm_event(ev);
		errno = err;
		return -1;
	}
	cid = ev->id;
	rdma_ack_cm_event(ev);
	attr = lid->ep_attr;
	if (cm_make_sync(cm_id_of(cid)) ||
	    (lid->ep_qp && rdma_create_qp(cid, lid->ep_pd, &attr))) {
		err = errno;
		rdma_reject(cid, NULL, 0);
		rdma_destroy_ep(cid);
		errno = err;
		return -1;
	}
	*out = cid;
	return 0;
}
