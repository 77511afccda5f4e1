// SPDX-License-Identifier: MIT
/*
 * Completion queues and completion channels.
 *
 * libiwx has one wake-up per device (iwx_comp_fd) for every CQ armed; a channel is
 * verbs' wake-up for the CQs made with it. So a channel's fd is an epoll of the
 * device's wake-up and of an eventfd of its own: whoever takes the device's wake-up
 * (ibv_get_cq_event on any channel) hands each CQ that fired to its channel, whose
 * eventfd then stays readable until ibv_get_cq_event has given them all out. The fd
 * polls as rdma-core's does, and a waiter on one channel never takes another's events.
 * It watches no epoll (libiwx's descriptors, not iwx_async_fd): the kernel bounds the
 * wake-up paths through nested epolls, which stopped a program at 249 channels.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util/level.h"

#include "iwxv.h"
#include "util/pow2.h"

#define POLL_BATCH	32

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct iwxv_context *c = iwxv_ctx(ctx);
	struct iwxv_cq *cq;

	if (cqe < 1 || (uint32_t)cqe > c->lim.max_cq_entries || comp_vector != 0 ||
	    (channel && channel->context != ctx))
		return iwxv_fail(EINVAL);
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	iwxv_lock(c);
	cq->icq = iwx_create_cq(c->dev, cqe);
	if (cq->icq) {
		cq->next = c->cqs;
		c->cqs = cq;
	}
	iwxv_unlock(c);
	if (!cq->icq) {
		free(cq);
		return NULL;
	}
	cq->channel = (struct iwxv_channel *)channel;
	if (channel)
		__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_RELAXED);
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = (int)iwx_pow2_at_least((uint32_t)cqe);	/* as libiwx rounds it */
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	return &cq->cq;
}

/* Take cq off its channel's list of CQs that fired (the lock held). */
static void unfire(struct iwxv_cq *cq)
{
	struct iwxv_channel *ch = cq->channel;

	if (!cq->on_fired)
		return;
	for (struct iwxv_cq **pp = &ch->fired; *pp; pp = &(*pp)->next_fired) {
		if (*pp == cq) {
			*pp = cq->next_fired;
			break;
		}
	}
	ch->fired_tail = &ch->fired;
	while (*ch->fired_tail)
		ch->fired_tail = &(*ch->fired_tail)->next_fired;
	cq->on_fired = false;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct iwxv_context *c = iwxv_ctx(ibcq->context);
	struct iwxv_cq *cq = (struct iwxv_cq *)ibcq;
	int err;

	iwxv_lock(c);
	err = iwx_destroy_cq(cq->icq);
	if (!err) {
		for (struct iwxv_cq **pp = &c->cqs; *pp; pp = &(*pp)->next)
			if (*pp == cq) {
				*pp = cq->next;
				break;
			}
		if (cq->channel)
			unfire(cq);
	}
	iwxv_unlock(c);
	if (err)
		return -err;
	if (cq->channel)
		__atomic_sub_fetch(&cq->channel->ch.refcnt, 1, __ATOMIC_RELAXED);
	free(cq->made);
	free(cq);
	return 0;
}

int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq, (void)cqe;
	return EOPNOTSUPP;
}

int iwxv_cq_add(struct iwxv_cq *cq, const struct ibv_wc *wc)
{
	if (cq->nmade == cq->made_cap) {
		uint32_t cap = cq->made_cap ? cq->made_cap * 2 : 8;
		struct ibv_wc *m = realloc(cq->made, cap * sizeof(*m));

		if (!m)
			return ENOMEM;
		cq->made = m;
		cq->made_cap = cap;
	}
	cq->made[cq->nmade++] = *wc;
	return 0;
}

static enum ibv_wc_status status_of(uint8_t s)
{
	switch (s) {
	case IWX_WC_SUCCESS:		return IBV_WC_SUCCESS;
	case IWX_WC_LOC_LEN_ERR:	return IBV_WC_LOC_LEN_ERR;
	case IWX_WC_LOC_PROT_ERR:	return IBV_WC_LOC_PROT_ERR;
	case IWX_WC_REM_ACCESS_ERR:	return IBV_WC_REM_ACCESS_ERR;
	case IWX_WC_REM_OP_ERR:		return IBV_WC_REM_OP_ERR;
	case IWX_WC_REM_INV_REQ_ERR:	return IBV_WC_REM_INV_REQ_ERR;
	case IWX_WC_WR_FLUSH_ERR:	return IBV_WC_WR_FLUSH_ERR;
	case IWX_WC_LOC_QP_OP_ERR:	return IBV_WC_LOC_QP_OP_ERR;
	default:			return IBV_WC_FATAL_ERR;
	}
}

static enum ibv_wc_opcode opcode_of(uint8_t op)
{
	switch (op) {
	case IWX_WC_RDMA_WRITE:	return IBV_WC_RDMA_WRITE;
	case IWX_WC_RDMA_READ:	return IBV_WC_RDMA_READ;
	case IWX_WC_RECV:	return IBV_WC_RECV;
	case IWX_WC_FETCH_ADD:	return IBV_WC_FETCH_ADD;
	case IWX_WC_CMP_SWAP:	return IBV_WC_COMP_SWAP;
	case IWX_WC_RECV_IMM:	return IBV_WC_RECV_RDMA_WITH_IMM;
	default:		return IBV_WC_SEND;
	}
}

static void wc_of(const struct iwx_wc *w, struct ibv_wc *wc)
{
	*wc = (struct ibv_wc){
		.wr_id = w->wr_id, .status = status_of(w->status), .opcode = opcode_of(w->opcode),
		.vendor_err = w->status, .byte_len = w->byte_len, .qp_num = w->qp_num,
		.pkey_index = 0,
	};
	if (w->with_inv) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = w->invalidated_stag;
	}
	if (w->opcode == IWX_WC_RECV_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = htobe32(w->imm_data);	/* verbs keep it in network order */
	}
}

int iwxv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct iwxv_context *c = iwxv_ctx(ibcq->context);
	struct iwxv_cq *cq = (struct iwxv_cq *)ibcq;
	struct iwx_wc w[POLL_BATCH];
	int k = 0;

	iwxv_lock(c);
	for (; k < n && cq->nmade; k++) {
		wc[k] = cq->made[0];
		memmove(cq->made, cq->made + 1, --cq->nmade * sizeof(*cq->made));
	}
	while (k < n) {
		int want = n - k < POLL_BATCH ? n - k : POLL_BATCH;
		int got = iwx_poll_cq(cq->icq, want, w);

		if (got < 0) {
			k = k ? k : -1;
			break;
		}
		for (int i = 0; i < got; i++)
			wc_of(&w[i], &wc[k + i]);
		k += got;
		if (got < want)
			break;
	}
	iwxv_unlock(c);
	/*
	 * Programs poll an empty CQ in a loop (perftest does), as a hardware RNIC costs them
	 * nothing: here iwxd is the RNIC and needs the CPU. Yielding gave perftest's 64 KiB
	 * Writes 4x the bandwidth on two cores, and its latencies stayed as they were.
	 */
	if (!k)
		sched_yield();
	return k;
}

int iwxv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct iwxv_context *c = iwxv_ctx(ibcq->context);
	struct iwxv_cq *cq = (struct iwxv_cq *)ibcq;
	int err;

	(void)solicited_only;	/* any completion wakes: a superset, as verbs allows */
	iwxv_lock(c);
	err = iwx_req_notify_cq(cq->icq);
	iwxv_unlock(c);
	return -err;
}

/* ---------------------------------------------------------------- channels */

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct iwxv_context *c = iwxv_ctx(ctx);
	struct iwxv_channel *ch = calloc(1, sizeof(*ch));
	int err;

	if (!ch)
		return NULL;
	ch->fired_tail = &ch->fired;
	ch->ch.context = ctx;
	err = iwx_level_join(iwx_comp_fd(c->dev), &ch->ch.fd, &ch->own_fd);
	/* and the device's asynchronous events: a wait for completions ends with iwxd */
	if (!err && (err = iwxv_watch(ctx, ch->ch.fd, true)))
		iwx_level_drop(&ch->ch.fd, &ch->own_fd, err);
	if (err) {
		free(ch);
		return iwxv_fail(-err);
	}
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct iwxv_channel *ch = (struct iwxv_channel *)channel;

	if (__atomic_load_n(&channel->refcnt, __ATOMIC_RELAXED))
		return EBUSY;	/* CQs still use it */
	close(ch->own_fd);
	close(channel->fd);
	free(ch);
	return 0;
}

/* Keep own_fd readable exactly while the channel has a fired CQ to give (the lock held). */
static void show_fired(struct iwxv_channel *ch)
{
	iwx_level_set(ch->own_fd, &ch->own_set, ch->fired != NULL);
}

/* Take the device's wake-up and hand the CQs that fired to their channels (the lock held). */
static void distribute(struct iwxv_context *c)
{
	struct iwx_cq *woke[POLL_BATCH];
	int n = iwx_ack_comp_cqs(c->dev, woke, POLL_BATCH);

	for (int i = 0; i < n; i++) {
		for (struct iwxv_cq *cq = c->cqs; cq; cq = cq->next) {
			if (cq->icq != woke[i] || !cq->channel || cq->on_fired)
				continue;
			cq->on_fired = true;
			cq->next_fired = NULL;
			*cq->channel->fired_tail = cq;
			cq->channel->fired_tail = &cq->next_fired;
			show_fired(cq->channel);
		}
	}
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq_out, void **cq_context)
{
	struct iwxv_channel *ch = (struct iwxv_channel *)channel;
	struct iwxv_context *c = iwxv_ctx(channel->context);

	for (;;) {
		struct epoll_event e;
		struct iwxv_cq *cq;

		bool lost;

		iwxv_lock(c);
		distribute(c);
		cq = ch->fired;
		if (cq) {
			ch->fired = cq->next_fired;
			if (!ch->fired)
				ch->fired_tail = &ch->fired;
			cq->on_fired = false;
			show_fired(ch);
		}
		lost = !cq && iwx_lost(c->dev);
		iwxv_unlock(c);
		if (cq) {
			*cq_out = &cq->cq;
			*cq_context = cq->cq.cq_context;
			return 0;
		}
		if (lost) {
			errno = EIO;	/* as the kernel's channel of a device that is gone */
			return -1;
		}
		if (fcntl(channel->fd, F_GETFL) & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		if (epoll_wait(channel->fd, &e, 1, -1) < 0)
			return -1;	/* EINTR too: qperf ends its tests with a signal */
	}
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
