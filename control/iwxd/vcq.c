// SPDX-License-Identifier: MIT
/*
 * A client's completion queue in the daemon: a ring in memory shared with the client
 * (shared.c), which iwxd fills (vqp.c) and the client polls, with its bell (doorbell.c)
 * for the client to say it made room, and a wake-up when the client armed it: a
 * FUTEX_WAKE on the armed word for libiwx's own sleep, an eventfd write for an
 * application's arming (ipc.h: IWX_CQ_ARMED_*).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon.h"
#include "util/pow2.h"

struct vcq *vcq_create(struct iwxd *d, struct client *c, uint32_t entries, int *memfd, int *err)
{
	struct vcq *cq;
	int64_t bell;

	if (!entries || entries > IWX_IPC_MAX_CQ_ENTRIES) {
		*err = -EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		*err = -ENOMEM;
		return NULL;
	}
	entries = iwx_pow2_at_least(entries);
	cq->map_size = iwx_ipc_cq_map_size(entries);
	*err = client_ring_create(d, c, LIMIT_CQS, &cq->mem, cq->map_size, memfd);
	if (*err)
		goto fail;
	cq->sh = cq->mem.base;
	iwx_ring_init(&cq->ring, &cq->sh->ring, (uint8_t *)cq->sh + IWX_IPC_CQ_OFF, entries,
		      sizeof(struct iwx_wc));
	bell = doorbell_bind(c, NULL, cq);
	if (bell < 0) {
		*err = (int)bell;
		goto fail_ring;
	}
	cq->bell = (uint32_t)bell;
	cq->id = loop_new_id(&d->loop);
	iwx_ids_add(&d->ids, cq->id, KIND_CQ, cq);
	cq->owner = c;
	cq->d = d;
	cq->next = d->cqs;
	d->cqs = cq;
	return cq;
fail_ring:
	client_ring_abandon(d, c, LIMIT_CQS, &cq->mem, memfd);
fail:
	free(cq);
	return NULL;
}

struct vcq *vcq_find(struct iwxd *d, struct client *c, uint32_t id)
{
	struct vcq *cq = iwx_ids_find(&d->ids, id, KIND_CQ);

	return cq && cq->owner == c ? cq : NULL;
}

void vcq_destroy(struct iwxd *d, struct vcq *cq)
{
	IWX_LIST_UNLINK(&d->cqs, cq);
	iwx_ids_del(&d->ids, cq->id);
	doorbell_unbind(cq->owner, cq->bell);
	client_ring_destroy(d, cq->owner, LIMIT_CQS, &cq->mem);
	free(cq);
}

void vcq_push(struct vcq *cq, const struct iwx_wc *wc)
{
	memcpy(iwx_ring_entry(&cq->ring, 0), wc, sizeof(*wc));
	iwx_ring_produce(&cq->ring, 1);
	uint32_t armed = __atomic_exchange_n(&cq->sh->armed, 0, __ATOMIC_SEQ_CST);
	uint64_t one = 1;

	/* armed (ipc.h): one wake-up, then the client arms again */
	if (armed == IWX_CQ_ARMED_FUTEX) {
		syscall(SYS_futex, &cq->sh->armed, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		cq->d->st.cq_futex_wakes++;
	} else if (armed && write(cq->owner->notify_fd, &one, sizeof(one)) < 0)
		log_debug("client %u: notify: %m", cq->owner->id);
}

void vcq_ask_room(struct vcq *cq)
{
	__atomic_store_n(&cq->sh->need_room, 1, __ATOMIC_SEQ_CST);
	cq->room_asked = true;
}
