// SPDX-License-Identifier: MIT
/*
 * Shared receive queues: a ring of receives shared with iwxd, which the queue pairs
 * created on it take from, and the slots that give their completions the application's
 * wr_id back in whatever order they come.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "client.h"

static void srq_free(struct iwx_srq *srq)
{
	if (srq->sh)
		munmap(srq->sh, srq->map_size);
	free(srq->wr_id);
	free(srq->held);
	free(srq->free);
	free(srq);
}

struct iwx_srq *iwx_create_srq(struct iwx_pd *pd, const struct iwx_srq_init_attr *attr)
{
	struct iwx_device *dev = pd->dev;
	struct iwx_ipc_srq_create req = { .pd = pd->id };
	struct iwx_srq *srq;
	unsigned nfds = 1;
	bool made;
	int fd, err;

	if (attr) {
		req.depth = attr->depth;
		req.limit = attr->limit;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	err = client_call(dev, IWX_IPC_SRQ_CREATE, &req, sizeof(req), &req, sizeof(req), &fd, &nfds);
	made = !err;
	if (!err && nfds != 1)
		err = -EPROTO;
	if (!err && !(srq->sh = client_map_rings(fd, req.map_size)))
		err = -errno;
	if (!err && (!req.depth || req.depth > IWX_IPC_MAX_QP_DEPTH ||
		     req.map_size < iwx_ipc_srq_map_size(req.depth)))
		err = -EPROTO;
	if (!err) {
		srq->wr_id = calloc(req.depth, sizeof(*srq->wr_id));
		srq->held = calloc(req.depth, sizeof(*srq->held));
		srq->free = calloc(req.depth, sizeof(*srq->free));
		if (!srq->wr_id || !srq->held || !srq->free)
			err = -ENOMEM;
	}
	if (err) {
		if (made) {
			struct iwx_ipc_id id = { req.srq };

			client_call(dev, IWX_IPC_SRQ_DESTROY, &id, sizeof(id), NULL, 0, NULL, NULL);
		}
		srq_free(srq);
		errno = -err;
		return NULL;
	}
	srq->dev = dev;
	srq->id = req.srq;
	srq->limit = req.limit;
	srq->depth = req.depth;
	srq->map_size = req.map_size;
	iwx_ring_init(&srq->ring, &srq->sh->ring, (uint8_t *)srq->sh + IWX_IPC_SRQ_OFF, req.depth,
		      sizeof(struct iwx_recv_wr));
	for (uint32_t i = 0; i < req.depth; i++)
		srq->free[i] = req.depth - 1 - i;	/* slot 0 first */
	srq->nfree = req.depth;
	srq->next = dev->srqs;
	dev->srqs = srq;
	return srq;
}

int iwx_destroy_srq(struct iwx_srq *srq)
{
	struct iwx_device *dev = srq->dev;
	struct iwx_ipc_id req = { srq->id };
	int err = srq->users ? -EBUSY :
		  client_call(dev, IWX_IPC_SRQ_DESTROY, &req, sizeof(req), NULL, 0, NULL, NULL);

	if (err && err != -ESHUTDOWN)
		return err;
	client_forget_async(dev, 0, srq->id);
	IWX_LIST_UNLINK(&dev->srqs, srq);
	srq_free(srq);
	return 0;
}

int iwx_post_srq_recv(struct iwx_srq *srq, const struct iwx_recv_wr *wr)
{
	struct iwx_recv_wr *e;
	uint32_t slot;

	if (!iwx_recv_wr_valid(wr))
		return -EINVAL;
	if (client_lost(srq->dev))
		return -ESHUTDOWN;
	if (!srq->nfree)
		return -ENOBUFS;
	slot = srq->free[--srq->nfree];
	srq->wr_id[slot] = wr->wr_id;
	srq->held[slot] = 1;
	e = iwx_ring_entry(&srq->ring, 0);
	memcpy(e, wr, sizeof(*wr));
	e->wr_id = slot;
	/* no doorbell: iwxd looks at the ring when a Send begins */
	iwx_ring_produce(&srq->ring, 1);
	return 0;
}

void srq_retire(struct iwx_srq *srq, struct iwx_wc *wc)
{
	uint64_t slot = wc->wr_id;

	if (slot >= srq->depth || !srq->held[slot])
		return;		/* none of ours */
	wc->wr_id = srq->wr_id[slot];
	srq->held[slot] = 0;
	srq->free[srq->nfree++] = (uint32_t)slot;
}

int iwx_arm_srq(struct iwx_srq *srq, uint32_t limit)
{
	struct iwx_ipc_srq_arm req = { .srq = srq->id, .limit = limit };
	int err = client_call(srq->dev, IWX_IPC_SRQ_ARM, &req, sizeof(req), NULL, 0, NULL, NULL);

	if (!err)
		srq->limit = limit;
	return err;
}

int iwx_query_srq(const struct iwx_srq *srq, struct iwx_srq_attr *attr)
{
	*attr = (struct iwx_srq_attr){ .depth = srq->depth, .limit = srq->limit };
	return 0;
}

void srq_free_all(struct iwx_device *dev)
{
	while (dev->srqs) {
		struct iwx_srq *srq = dev->srqs;

		dev->srqs = srq->next;
		srq_free(srq);
	}
}

struct iwx_srq *srq_of(struct iwx_device *dev, uint32_t id)
{
	struct iwx_srq *srq = dev->srqs;

	while (srq && srq->id != id)
		srq = srq->next;
	return srq;
}
