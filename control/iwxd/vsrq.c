// SPDX-License-Identifier: MIT
/*
 * A client's shared receive queue in the daemon: a ring in memory shared with the
 * client (shared.c), which the client fills with receives and the engines of the queue
 * pairs created on it empty, each taking one as a Send begins that it holds none for
 * (qp.h's take_recv). Its limit event tells the client when few are left.
 */
#include <errno.h>
#include <stdlib.h>

#include "daemon.h"
#include "outbox.h"
#include "util/pow2.h"

struct vsrq *vsrq_create(struct iwxd *d, struct client *c, const struct iwx_ipc_srq_create *req,
			 int *memfd, int *err)
{
	uint32_t depth = req->depth ? req->depth : 256;
	struct vsrq *srq;

	if (depth > IWX_IPC_MAX_QP_DEPTH || req->limit > depth) {
		*err = -EINVAL;
		return NULL;
	}
	if (!iwx_mem_pd_owned(d->mem, c->ident, req->pd)) {
		*err = -ENOENT;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		*err = -ENOMEM;
		return NULL;
	}
	depth = iwx_pow2_at_least(depth);
	srq->map_size = iwx_ipc_srq_map_size(depth);
	*err = client_ring_create(d, c, LIMIT_SRQS, &srq->mem, srq->map_size, memfd);
	if (*err) {
		free(srq);
		return NULL;
	}
	srq->sh = srq->mem.base;
	iwx_ring_init(&srq->ring, &srq->sh->ring, (uint8_t *)srq->sh + IWX_IPC_SRQ_OFF, depth,
		      sizeof(struct iwx_recv_wr));
	srq->id = loop_new_id(&d->loop);
	iwx_ids_add(&d->ids, srq->id, KIND_SRQ, srq);
	srq->d = d;
	srq->owner = c;
	srq->pd = req->pd;
	srq->limit = req->limit;
	srq->next = d->srqs;
	d->srqs = srq;
	return srq;
}

struct vsrq *vsrq_find(struct iwxd *d, struct client *c, uint32_t id)
{
	struct vsrq *srq = iwx_ids_find(&d->ids, id, KIND_SRQ);

	return srq && srq->owner == c ? srq : NULL;
}

void vsrq_destroy(struct iwxd *d, struct vsrq *srq)
{
	IWX_LIST_UNLINK(&d->srqs, srq);
	iwx_ids_del(&d->ids, srq->id);
	client_ring_destroy(d, srq->owner, LIMIT_SRQS, &srq->mem);
	free(srq);
}

#define BROKE_RING	1	/* vsrq.warned: the ring's indices */
#define BROKE_RECV	2	/* ... a receive */

/* What srq's client broke, in the log once: a client of its own making may break it at every Send. */
static void warn_once(struct vsrq *srq, uint8_t what, const char *text)
{
	if (!(srq->warned & what))
		log_warn("client %u: srq %u: %s (said once)", srq->owner->id, srq->id, text);
	srq->warned |= what;
}

int vsrq_take(void *ctx, struct iwx_recv_wr *wr)
{
	struct vsrq *srq = ctx;
	uint32_t n = iwx_ring_ready(&srq->ring);

	if (n == UINT32_MAX) {
		warn_once(srq, BROKE_RING, "ring indices out of range: no receive taken");
		return -ENOENT;
	}
	for (; n; n--) {
		iwx_ring_read(&srq->ring, 0, wr);	/* a copy: the client cannot change it under us */
		iwx_ring_consume(&srq->ring, 1);
		if (iwx_recv_wr_valid(wr))
			break;
		warn_once(srq, BROKE_RECV, "malformed receive dropped");	/* libiwx checks first */
	}
	if (!n)
		return -ENOENT;
	/* the IB limit event: fewer left than the limit, once per arming */
	if (srq->limit && n - 1 < srq->limit) {
		struct iwx_ipc_event ev = { .type = IWX_IPC_EV_SRQ_LIMIT, .srq = srq->id };

		srq->limit = 0;
		outbox_event(srq->d, srq->owner, &ev);
	}
	return 0;
}
