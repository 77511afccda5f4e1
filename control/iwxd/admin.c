// SPDX-License-Identifier: MIT
/* What `iwx status`, `iwx conns`, `iwx stags` and `iwx stats` show, and `iwx attach`: for root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sctp_io.h"
#include "fastpath.h"
#include "iwx_config.h"	/* made by the Makefile */
#include "outbox.h"
#include "util/clock.h"

/* A listing, sent in parts that each fit one message. */
struct listing {
	struct iwxd		*d;
	struct client		*c;
	const struct iwx_ipc_hdr *req;
	uint8_t			*buf;
	uint32_t		esize, n, cap;
};

static void listing_flush(struct listing *l, bool last)
{
	struct iwx_ipc_hdr h = { .op = l->req->op, .seq = l->req->seq, .len = l->n * l->esize,
				 .flags = last ? 0 : IWX_IPC_F_MORE };

	outbox_send(l->d, l->c, &h, l->buf, NULL, 0);
	l->n = 0;
}

static void listing_add(struct listing *l, const void *e)
{
	if (l->n == l->cap)
		listing_flush(l, false);
	memcpy(l->buf + (size_t)l->n++ * l->esize, e, l->esize);
}

static int count_mr(const struct iwx_region *mr, void *ctx)
{
	(void)mr;
	(*(uint32_t *)ctx)++;
	return 0;
}

static void status(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *req)
{
	struct iwx_ipc_status s = d->st;

	snprintf(s.release, sizeof(s.release), "%s", IWX_VERSION);
	s.version = IWX_IPC_VERSION;
	s.pid = getpid();
	s.uptime_ms = iwx_now_ms() - d->start_ms;
	s.crc_default = d->o.crc;
	s.settle_ms = d->o.settle_ms;
	for (struct client *x = d->clients; x; x = x->next)
		s.clients += x->hello;
	for (struct vcq *cq = d->cqs; cq; cq = cq->next)
		s.cqs++;
	for (struct listener *l = d->listeners; l; l = l->next)
		s.listeners++;
	for (struct pconn *p = d->pconns; p; p = p->next)
		s.conns_pending++;
	s.traffic = d->gone;
	IWX_LINK_EACH(struct vqp, q, &d->qps, link) {
		struct iwx_qp_stats qs;

		s.qps++;
		vqp_stats(q, &qs);
		vqp_stats_add(&s.traffic, &qs);
	}
	s.pds = iwx_mem_pd_count(d->mem);
	iwx_mem_for_each(d->mem, count_mr, &s.mrs);
	s.connected = d->nclients;
	s.max_clients = d->o.max[LIMIT_CLIENTS];
	s.arena_bytes = d->arena_bytes;
	s.arena_total = d->o.max[LIMIT_ARENA_TOTAL];
	s.arena_max = d->o.max[LIMIT_ARENA];
	s.max_pds = d->o.max[LIMIT_PDS];
	s.max_mrs = d->o.max[LIMIT_MRS];
	s.max_cqs = d->o.max[LIMIT_CQS];
	s.max_qps = d->o.max[LIMIT_QPS];
	s.max_srqs = d->o.max[LIMIT_SRQS];
	for (const struct vsrq *srq = d->srqs; srq; srq = srq->next)
		s.srqs++;
	s.max_listeners = d->o.max[LIMIT_LISTENERS];
	s.max_requests = d->o.max[LIMIT_REQUESTS];
	s.max_queued = d->o.max[LIMIT_QUEUED];
	s.maps = d->maps;
	s.maps_total = d->o.max[LIMIT_MAPS_TOTAL];
	s.max_maps = d->o.max[LIMIT_MAPS];
	for (struct user *u = d->users; u; u = u->next)
		s.users++;
	s.max_clients_per_user = d->o.max[LIMIT_CLIENTS_USER];
	s.memory_per_user = d->o.max[LIMIT_MEMORY_USER];
	s.user_share = USER_SHARE;
	s.departed_bytes = d->departed_bytes;
	s.lingering = d->nlingering;
	s.max_lingering = d->o.max[LIMIT_LINGER_USER];
	s.users_guaranteed = d->o.max[LIMIT_USERS];
	fastpath_status(d, &s);
	sctp_io_status(d, &s);
	outbox_reply(d, c, req, 0, &s, sizeof(s), NULL, 0);
}

static void list_conns(struct iwxd *d, struct listing *l)
{
	IWX_LINK_EACH(struct vqp, q, &d->qps, link) {
		struct iwx_ipc_conn_info e = {
			.qp = q->num, .client = q->owner->id, .pd = q->pd, .state = q->state,
			.mpa_rev = q->est.mpa_rev, .crc = q->est.crc, .markers_rx = q->est.markers_rx,
			.markers_tx = q->est.markers_tx, .ird = q->est.ird, .ord = q->est.ord,
			.emss = q->est.emss, .local_addr = q->est.local_addr,
			.peer_addr = q->est.peer_addr, .transport = q->est.transport,
			.ended = q->end_how, .term_layer = q->end_cause.layer,
			.term_etype = q->end_cause.etype, .term_ecode = q->end_cause.ecode,
			.rfc7306 = q->est.rfc7306,
		};

		vqp_stats(q, &e.traffic);
		e.sctp_xdp = q->sock.h && q->sock.t->via_xsk && q->sock.t->via_xsk(&q->sock);
		listing_add(l, &e);
	}
}

/* Is mr in its client's arena (else in memory moved out of the client's way)? */
static bool in_arena(const struct listing *l, const struct iwx_region *mr)
{
	for (const struct client *c = l->d->clients; c; c = c->next)
		if (c->ident == mr->owner)
			return mr->addr >= (uint8_t *)c->arena.base &&
			       mr->addr < (uint8_t *)c->arena.base + c->arena.size;
	return false;
}

static int add_stag(const struct iwx_region *mr, void *ctx)
{
	struct iwx_ipc_stag_info e = {
		.stag = mr->desc.stag, .client = mr->owner, .pd = mr->desc.pd, .valid = mr->desc.valid,
		.access = mr->desc.access, .in_arena = in_arena(ctx, mr), .base_to = mr->desc.base_to,
		.len = mr->desc.len,
	};

	listing_add(ctx, &e);
	return 0;
}

static void list_users(struct iwxd *d, struct listing *l)
{
	for (const struct user *u = d->users; u; u = u->next) {
		struct iwx_ipc_user_info e = {
			.uid = u->uid, .clients = u->clients, .bytes = u->bytes,
			.departed_bytes = u->departed_bytes, .departed = u->ndeparted,
			.pds = u->used[LIMIT_PDS], .mrs = u->used[LIMIT_MRS], .cqs = u->used[LIMIT_CQS],
			.qps = u->used[LIMIT_QPS], .listeners = u->used[LIMIT_LISTENERS],
			.maps = u->used[LIMIT_MAPS], .queued = u->queued, .lingering = u->lingering,
			.srqs = u->used[LIMIT_SRQS],
			.fp_conns = u->fp[SHARE_FP_CONNS - SHARE_FP_FIRST],
			.fp_mems = u->fp[SHARE_FP_MEMS - SHARE_FP_FIRST],
			.fp_stags = u->fp[SHARE_FP_STAGS - SHARE_FP_FIRST],
		};

		listing_add(l, &e);
	}
}

static int add_fp(void *ctx, const struct iwx_ipc_fp_info *e)
{
	listing_add(ctx, e);
	return 0;
}

void admin_request(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *req,
		   const void *body)
{
	struct listing l = { .d = d, .c = c, .req = req };

	switch (req->op) {
	case IWX_IPC_STATUS:
		status(d, c, req);
		return;
	case IWX_IPC_FP_ATTACH: {
		struct iwx_ipc_fp_attached a = { 0 };
		int err = fastpath_attach(d, body, &a);

		outbox_reply(d, c, req, err, err ? NULL : &a, err ? 0 : sizeof(a), NULL, 0);
		return;
	}
	case IWX_IPC_FP_DETACH:
		outbox_reply(d, c, req, fastpath_detach(d, body), NULL, 0, NULL, 0);
		return;
	case IWX_IPC_LIST_CONNS:
		l.esize = sizeof(struct iwx_ipc_conn_info);
		break;
	case IWX_IPC_LIST_STAGS:
		l.esize = sizeof(struct iwx_ipc_stag_info);
		break;
	case IWX_IPC_LIST_USERS:
		l.esize = sizeof(struct iwx_ipc_user_info);
		break;
	default:
		l.esize = sizeof(struct iwx_ipc_fp_info);
		break;
	}
	l.cap = (IWX_IPC_MAX - sizeof(struct iwx_ipc_hdr)) / l.esize;
	l.buf = malloc((size_t)l.cap * l.esize);
	if (!l.buf) {
		outbox_reply(d, c, req, -ENOMEM, NULL, 0, NULL, 0);
		return;
	}
	if (req->op == IWX_IPC_LIST_CONNS)
		list_conns(d, &l);
	else if (req->op == IWX_IPC_LIST_STAGS)
		iwx_mem_for_each(d->mem, add_stag, &l);
	else if (req->op == IWX_IPC_LIST_USERS)
		list_users(d, &l);
	else
		fastpath_list(d, add_fp, &l);
	listing_flush(&l, true);
	free(l.buf);
}
