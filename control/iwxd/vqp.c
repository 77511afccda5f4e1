// SPDX-License-Identifier: MIT
/*
 * A client's queue pair in the daemon: its send and receive rings feed the engine
 * (qp.c), and the engine's completions go to the client's completion rings (vcq.c).
 *
 * Nothing is dropped on the way. The engine takes work only while it has room and
 * only when none of its completions are waiting (so its own completion queue, sized
 * for everything it holds, cannot overflow); completions leave the engine only as far
 * as the client's rings have room, and a client that makes room is asked to ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "proto/term.h"

#include "daemon.h"
#include "fastpath.h"
#include "outbox.h"
#include "util/clock.h"
#include "util/container_of.h"
#include "util/pow2.h"

#define ROOM_SEND	1	/* vqp.wants_room: room asked of the send CQ, */
#define ROOM_RECV	2	/* ... of the receive CQ */
#define TURN_SHARE	64	/* queue pairs of one client serviced in a turn (issue 27) */

static void on_stream(struct iwxd *d, struct watch *w, uint32_t events);

/* Completions of q wait for room in cq (vcq_ask_room). */
static void ask_room(struct vqp *q, struct vcq *cq)
{
	vcq_ask_room(cq);
	q->wants_room |= cq == q->scq ? ROOM_SEND : ROOM_RECV;
}

static void complete(struct vqp *q, struct iwx_wc *wc)
{
	wc->qp_num = q->num;
	vcq_push(iwx_wc_is_recv(wc->opcode) ? q->rcq : q->scq, wc);
}

static struct vcq *cq_of(const struct vqp *q, bool recv)
{
	return recv ? q->rcq : q->scq;
}

/*
 * Completions their CQ has no room for wait here, in order, each work queue's on its own.
 * Send completions may wait while receives go on: a client that polls its send CQ only
 * once it has a send queue's worth in it (perftest's server, for its credit Writes) still
 * receives. Receive completions may wait once the stream has ended, and sends' go on: a
 * client that then polls only its send CQ (ib_send_lat's server, for the Send it posted
 * as the peer went) gets the Send's flush. While the stream runs, a full receive CQ
 * stops it instead (backlog), as it always has: a Send waits in TCP rather than taking a
 * receive the client cannot yet see. At most a work queue's depth wait, as many as a
 * client that keeps to its depth can have outstanding; beyond, or with one CQ for both,
 * everything waits in the engine. The room for them is made when the first must wait,
 * and goes when the last has left: a queue pair whose client keeps up holds none.
 */
static bool must_park(const struct vqp *q, bool recv)
{
	return q->parked[recv].n || !iwx_ring_space(&cq_of(q, recv)->ring);
}

/* Room to wait for one more of the work queue's, asking the client for room in its CQ. */
static bool can_park(struct vqp *q, bool recv)
{
	struct vqp_parked *p = &q->parked[recv];

	ask_room(q, cq_of(q, recv));
	if (q->scq == q->rcq || p->n == p->cap ||
	    (recv && q->eng && engine_qp_get_state(q->eng) != ENGINE_QP_ERROR))
		return false;
	return p->wc || (p->wc = malloc(p->cap * sizeof(*p->wc)));
}

/* Could a completion of either work queue be taken now, to its CQ or to wait? */
static bool room_for_any(struct vqp *q)
{
	bool room = true;

	for (int recv = 0; recv < 2; recv++)
		if (must_park(q, recv) && !can_park(q, recv))
			room = false;
	return room;
}

/* wc to its CQ, or to wait behind its work queue's; false when neither has room. */
static bool deliver(struct vqp *q, struct iwx_wc *wc)
{
	bool recv = iwx_wc_is_recv(wc->opcode);
	struct vqp_parked *p = &q->parked[recv];

	if (!must_park(q, recv)) {
		complete(q, wc);
		return true;
	}
	if (!can_park(q, recv))
		return false;
	wc->qp_num = q->num;
	p->wc[p->n++] = *wc;
	return true;
}

static void unpark(struct vqp *q, bool recv)
{
	struct vqp_parked *p = &q->parked[recv];
	uint32_t n = iwx_ring_space(&cq_of(q, recv)->ring);

	n = n < p->n ? n : p->n;
	for (uint32_t i = 0; i < n; i++)
		vcq_push(cq_of(q, recv), &p->wc[i]);
	if (n)
		memmove(p->wc, p->wc + n, (p->n - n) * sizeof(*p->wc));
	p->n -= n;
	if (p->n) {
		ask_room(q, cq_of(q, recv));
	} else {
		free(p->wc);
		p->wc = NULL;
	}
}

static bool parked(const struct vqp *q)
{
	return q->parked[0].n || q->parked[1].n;
}

/* Move the engine's completions to the client's rings, or to wait for room there. */
static void drain(struct vqp *q)
{
	struct iwx_wc wc;

	unpark(q, false);
	unpark(q, true);
	while (engine_qp_unpolled(q->eng)) {
		/* the next may be a receive's or a send's: room for either first */
		if (!room_for_any(q)) {
			q->backlog = true;	/* until the client polls and rings */
			q->blocked = true;
			return;
		}
		engine_qp_poll(q->eng, &wc, 1);
		deliver(q, &wc);
	}
	q->backlog = false;
}

/* ------------------------------------------------------------ queue pairs */

static void on_timer(struct iwxd *d, struct timer *t, uint64_t now);

struct vqp *vqp_find(struct iwxd *d, struct client *c, uint32_t num)
{
	struct vqp *q = iwx_ids_find(&d->ids, num, KIND_QP);

	return q && q->owner == c ? q : NULL;
}

struct vqp *vqp_create(struct iwxd *d, struct client *c, const struct iwx_ipc_qp_create *req,
		       int *memfd, int *err)
{
	struct vcq *scq = vcq_find(d, c, req->send_cq), *rcq = vcq_find(d, c, req->recv_cq);
	struct vsrq *srq = req->srq ? vsrq_find(d, c, req->srq) : NULL;
	uint32_t sq = req->sq_depth ? req->sq_depth : 256, rq = req->rq_depth ? req->rq_depth : 256;
	struct vqp *q;
	int64_t bell;

	if (!scq || !rcq || !iwx_mem_pd_owned(d->mem, c->ident, req->pd) || (req->srq && !srq)) {
		*err = -ENOENT;
		return NULL;
	}
	if (srq)
		rq = 1;		/* a ring of its own that nothing need use */
	/* an SRQ's receives are checked against the queue pair's PD as they are used */
	if (sq > IWX_IPC_MAX_QP_DEPTH || rq > IWX_IPC_MAX_QP_DEPTH || (srq && srq->pd != req->pd)) {
		*err = -EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		*err = -ENOMEM;
		return NULL;
	}
	sq = iwx_pow2_at_least(sq);
	rq = iwx_pow2_at_least(rq);
	q->parked[0].cap = sq;
	/* an SRQ's receives outstanding at the queue pair: as many as it holds */
	q->parked[1].cap = srq ? srq->ring.size : rq;
	q->map_size = iwx_ipc_qp_map_size(sq, rq);
	*err = client_ring_create(d, c, LIMIT_QPS, &q->mem, q->map_size, memfd);
	if (*err)
		goto fail;
	bell = doorbell_bind(c, q, NULL);
	if (bell < 0) {
		*err = (int)bell;
		goto fail_ring;
	}
	*err = timer_init(&d->loop, &q->timer, on_timer);
	if (*err)
		goto fail_bell;
	q->sh = q->mem.base;
	q->bell = (uint32_t)bell;
	iwx_ring_init(&q->sq, &q->sh->sq, (uint8_t *)q->sh + IWX_IPC_QP_SQ_OFF, sq,
		      sizeof(struct iwx_send_wr));
	iwx_ring_init(&q->rq, &q->sh->rq, (uint8_t *)q->sh + iwx_ipc_qp_rq_off(sq), rq,
		      sizeof(struct iwx_recv_wr));
	q->num = loop_new_id(&d->loop);
	iwx_ids_add(&d->ids, q->num, KIND_QP, q);
	q->owner = c;
	q->pd = req->pd;
	q->scq = scq;
	q->rcq = rcq;
	q->srq = srq;
	scq->users++;
	rcq->users++;
	if (srq)
		srq->users++;
	conn_sock_init(&q->sock, NULL, on_stream);
	iwx_link_add_tail(&d->qps, &q->link);
	iwx_link_add_tail(&c->qps, &q->client_link);
	return q;
fail_bell:
	doorbell_unbind(c, (uint32_t)bell);
fail_ring:
	client_ring_abandon(d, c, LIMIT_QPS, &q->mem, memfd);
fail:
	free(q);
	return NULL;
}

/* Seen by the client before the rings are read again (pairs with iwx_post_recv's fence). */
void vqp_set_state(struct vqp *q, enum iwx_shq_state s)
{
	q->state = s;
	__atomic_store_n(&q->sh->state, s, __ATOMIC_SEQ_CST);
}

void vqp_stats_add(struct iwx_qp_stats *to, const struct iwx_qp_stats *s)
{
	to->tx_fpdus += s->tx_fpdus;
	to->rx_fpdus += s->rx_fpdus;
	to->tx_bytes += s->tx_bytes;
	to->rx_bytes += s->rx_bytes;
	to->tx_fpdus_aligned += s->tx_fpdus_aligned;
	to->placed_segments += s->placed_segments;
	to->fast_fpdus += s->fast_fpdus;
	to->fast_bytes += s->fast_bytes;
	to->fast_discards += s->fast_discards;
	to->fast_refuted += s->fast_refuted;
	to->fast_unchecked += s->fast_unchecked;
	to->fast_unrepaired += s->fast_unrepaired;
	to->tx_zc_calls += s->tx_zc_calls;
	to->tx_zc_copied += s->tx_zc_copied;
}

/* Stop the engine and keep its counters; the socket closes with it. */
static void engine_stop(struct iwxd *d, struct vqp *q, bool abortive)
{
	struct iwx_qp_stats s;

	/*
	 * RST, not FIN: the application went away without a disconnect (once the stream has
	 * ended there is nothing to abort, and a reset would destroy our Terminate while
	 * linger.c waits for the peer to read it)
	 */
	if (abortive && !q->ended)
		conn_sock_abort_on_close(&q->sock);
	fastpath_conn_end(d, q);
	conn_sock_drop(d, &q->sock);
	if (q->eng) {
		engine_qp_stats(q->eng, &s);
		vqp_stats_add(&q->gone, &s);
		engine_qp_destroy(q->eng);	/* closes the socket */
		q->eng = NULL;
		q->llp = NULL;
	}
}

/* The stream ended (ev: DISCONNECTED): so the client learns, and that it takes no more from its SRQ. */
static void announce_end(struct iwxd *d, struct vqp *q, const struct iwx_ipc_event *ev)
{
	outbox_event(d, q->owner, ev);
	if (q->srq) {
		struct iwx_ipc_event last = { .type = IWX_IPC_EV_QP_LAST_WQE, .qp = q->num };

		outbox_event(d, q->owner, &last);
	}
}

/*
 * The engine stopped: tell the client why at once, whether or not its CQs have room
 * for the flushed completions (the engine keeps those until they have).
 */
static void stream_ended(struct iwxd *d, struct vqp *q)
{
	struct iwx_ipc_event ev = q->est;
	struct iwx_term_cause cause;
	bool local;

	engine_qp_error(q->eng, &cause, &local);
	ev.type = IWX_IPC_EV_DISCONNECTED;
	ev.terminated = !iwx_cause_eq(cause, IWX_CAUSE_MPA(IWX_MPA_EC_STREAM_LOST));
	ev.local = ev.terminated ? local : q->closing;
	if (ev.terminated) {	/* else there is no cause to give: STREAM_LOST is ours alone */
		ev.layer = cause.layer;
		ev.etype = cause.etype;
		ev.ecode = cause.ecode;
	}
	ev.pd_len = 0;
	if (ev.terminated && local) {
		d->st.terms_sent++;
		conn_sock_linger(d, q->owner->user, &q->sock);
	} else if (ev.terminated) {
		d->st.terms_received++;
	}
	if (ev.terminated && local) {
		struct iwx_qp_stats st;

		engine_qp_stats(q->eng, &st);
		if (st.fast_unrepaired)
			log_warn("qp %u: the fast path placed bytes TCP's FPDU there does not "
				 "rewrite (not TCP's): ending the stream", q->num);
	}
	if (ev.terminated)
		log_info("qp %u: stream ended: %s, %s: %s (Terminate %s)", q->num,
			 iwx_term_layer_name(cause.layer), iwx_term_etype_name(cause.layer, cause.etype),
			 iwx_term_ecode_name(cause.layer, cause.etype, cause.ecode),
			 local ? "sent" : "received");
	else
		log_info("qp %u: stream ended: closed", q->num);
	conn_sock_interest(d, &q->sock, 0);
	fastpath_conn_end(d, q);
	q->ended = true;
	q->end_how = !ev.terminated ? IWX_CONN_END_CLOSED :
		     local ? IWX_CONN_END_TERM_SENT : IWX_CONN_END_TERM_RCVD;
	q->end_cause = cause;
	q->close_ms = 0;
	vqp_set_state(q, IWX_SHQ_ERROR);
	announce_end(d, q, &ev);
}

/*
 * The engine has no receive for a Send that came: the client's next, if it posted one since
 * the turn took its receives in (engine_turn reads them before the stream, but the client
 * and the peer may both act between the two). A malformed one stays for move_ring to
 * complete with its error.
 */
static int take_recv(void *ctx, struct iwx_recv_wr *wr)
{
	struct vqp *q = ctx;
	uint32_t n = iwx_ring_ready(&q->rq);

	if (!n || n == UINT32_MAX)
		return -ENOENT;
	iwx_ring_read(&q->rq, 0, wr);	/* a copy: the client cannot change it under us */
	if (!iwx_recv_wr_valid(wr))
		return -EINVAL;
	iwx_ring_consume(&q->rq, 1);
	return 0;
}

static void start_engine(struct iwxd *d, struct vqp *q, struct iwx_conn *conn, const struct transport *t)
{
	struct engine_qp_attr attr = {
		.sq_depth = q->sq.size, .rq_depth = q->srq ? q->srq->ring.size : q->rq.size,
		.take_recv = q->srq ? vsrq_take : take_recv,
		.recv_ctx = q->srq ? (void *)q->srq : (void *)q,
	};

	conn_sock_take(d, &q->sock, t, conn);
	q->llp = iwx_conn_llp_new(conn);
	q->eng = engine_qp_create(q->llp, &q->agreed, d->mem, q->pd, &attr);
	if (!q->eng) {
		conn_sock_forget(d, &q->sock);	/* closed with the lower layer */
		q->llp = NULL;
	}
	if (!q->eng || conn_sock_watch(d, &q->sock)) {
		struct iwx_ipc_event ev = q->est;

		log_err("qp %u: cannot start the engine", q->num);
		engine_stop(d, q, true);
		vqp_set_state(q, IWX_SHQ_ERROR);
		ev.type = IWX_IPC_EV_DISCONNECTED;
		ev.local = 1;
		announce_end(d, q, &ev);
		return;
	}
	/*
	 * siw as Responder misses an FPDU sent before it attaches its QP: hold ours, as
	 * rdma_cm's round trip does. The engine receives meanwhile, and the Responder's
	 * first FPDU ends the hold. Held before the engine first reads: it may be there.
	 */
	if (q->agreed.initiator && q->settle_ms > 0 && t->first_fpdu_hold) {
		engine_qp_settle(q->eng, true);
		q->settle_end_ms = iwx_now_ms() + q->settle_ms;
	}
	fastpath_conn_start(d, q);
	vqp_service(d, q);
}

static void on_stream(struct iwxd *d, struct watch *w, uint32_t events)
{
	(void)events;
	vqp_service(d, container_of(w, struct vqp, sock.w));
}

void vqp_established(struct iwxd *d, struct vqp *q, struct iwx_conn *conn, const struct transport *t)
{
	q->setup = NULL;
	q->agreed = conn->agreed;
	outbox_event_of_conn(&q->est, conn);
	q->est.transport = t->id;
	q->est.type = IWX_IPC_EV_ESTABLISHED;
	q->est.qp = q->num;
	/* the peer's private data: an initiator's application learns the reply's here */
	q->est.pd_len = conn->peer_pd_len;
	memcpy(q->est.pd, conn->peer_pd, conn->peer_pd_len);
	q->sh->rfc7306 = conn->agreed.rdmap_ext;	/* published with RTS, which libiwx reads first */
	vqp_set_state(q, IWX_SHQ_RTS);
	d->st.conns_established++;
	outbox_event(d, q->owner, &q->est);
	start_engine(d, q, conn, t);
}

/* The hold is over (its time, or a close): what waits goes out. */
static void settle_end(struct iwxd *d, struct vqp *q)
{
	q->settle_end_ms = 0;
	if (q->eng) {
		engine_qp_settle(q->eng, false);
		vqp_service(d, q);
	}
}

/*
 * Move what the client posted on one ring into the engine; with no engine (the
 * stream ended), complete it as flushed (RFC 5040 §5.4). Stops, marking the queue
 * pair blocked, when the engine or a completion queue has no room, or while the
 * engine finishes a Terminate (what is left is flushed once it has).
 */
static void move_ring(struct vqp *q, bool recv)
{
	struct iwx_ring *r = recv ? &q->rq : &q->sq;
	union {
		struct iwx_send_wr	s;
		struct iwx_recv_wr	r;
	} wr;
	uint32_t n = iwx_ring_ready(r);

	/* closing: what was posted before the close goes out, what came after is flushed */
	if (!recv && q->closing && q->eng && n != UINT32_MAX && n > q->close_mark - r->mine) {
		n = q->close_mark - r->mine;
		q->blocked = true;
	}
	for (; n && n != UINT32_MAX; n--) {
		struct iwx_wc wc = { .opcode = IWX_WC_RECV };
		int err = -ENOTCONN;

		iwx_ring_read(r, 0, &wr);	/* a copy: the client cannot change it under us */
		if (q->eng)
			err = recv ? engine_qp_post_recv(q->eng, &wr.r) : engine_qp_post_send(q->eng, &wr.s);
		if (err == -ENOMEM || (err == -ENOTCONN && q->eng)) {
			q->blocked = true;
			return;
		}
		if (err) {
			/* malformed (the library checks, so a client of its own making) or flushed */
			wc.wr_id = recv ? wr.r.wr_id : wr.s.wr_id;
			wc.status = !q->eng ? IWX_WC_WR_FLUSH_ERR :
				    err == -EOPNOTSUPP ? IWX_WC_LOC_QP_OP_ERR : IWX_WC_LOC_PROT_ERR;
			if (!recv)
				wc.opcode = iwx_wc_opcode_of(wr.s.opcode);
			if (!deliver(q, &wc)) {
				q->blocked = true;
				return;
			}
		}
		iwx_ring_consume(r, 1);
	}
}

static bool rings_corrupt(const struct vqp *q)
{
	return iwx_ring_ready(&q->sq) == UINT32_MAX || iwx_ring_ready(&q->rq) == UINT32_MAX;
}

/*
 * The engine's turn; rx: read the socket first. false once it is gone: the stream ended
 * and its completions left.
 */
static bool engine_turn(struct iwxd *d, struct vqp *q, bool rx)
{
	bool want_write = false;

	drain(q);
	if (!q->ended) {
		if (q->backlog) {
			/*
			 * Completions wait for room in the client's CQs: take in neither work nor
			 * stream data (a Send could arrive before its receive leaves the ring).
			 * TCP holds the data; the client's poll rings the doorbell.
			 */
			conn_sock_interest(d, &q->sock, 0);
			return true;
		}
		move_ring(q, true);	/* receives first: a Send for them may be in */
		move_ring(q, false);
		if (rx)
			engine_qp_progress(q->eng, &want_write);
		else
			engine_qp_transmit(q->eng, &want_write);
		/* the state says error before the first flushed completion can be seen */
		if (engine_qp_get_state(q->eng) != ENGINE_QP_RTS && q->state == IWX_SHQ_RTS)
			vqp_set_state(q, IWX_SHQ_ERROR);
		drain(q);
		if (q->closing && !q->fin_sent && q->sq.mine == q->close_mark &&
		    engine_qp_tx_idle(q->eng)) {
			/* RFC 5040 §6: all that was posted before the close is in the LLP's hands */
			engine_qp_shut_send(q->eng);
			q->fin_sent = true;
		}
		if (engine_qp_get_state(q->eng) != ENGINE_QP_ERROR) {
			conn_sock_interest(d, &q->sock, EPOLLIN | (want_write ? EPOLLOUT : 0));
			fastpath_conn_turned(d, q);
			return true;
		}
		stream_ended(d, q);
	}
	if (q->backlog)
		return true;	/* the flushed completions leave the engine as the client polls */
	engine_stop(d, q, false);
	return false;
}

/* q's timer runs at the earliest of its deadlines. */
static void rearm(struct iwxd *d, struct vqp *q)
{
	uint64_t at = q->settle_end_ms, fp_at;

	if (q->eng && q->close_ms && (!at || q->close_ms < at))
		at = q->close_ms;
	if (q->eng && (fp_at = fastpath_conn_due(q)) && (!at || fp_at < at))
		at = fp_at;
	timer_set(&d->loop, &q->timer, at);
}

void vqp_ready(struct iwxd *d, struct vqp *q)
{
	struct client *c = q->owner;

	if (iwx_linked(&q->ready_link))
		return;
	iwx_link_add_tail(&c->ready, &q->ready_link);
	if (!iwx_linked(&c->ready_link))
		iwx_link_add_tail(&d->ready, &c->ready_link);
}

bool vqp_posted_since(struct vqp *q)
{
	uint32_t sq = __atomic_load_n(&q->sq.ctl->prod, __ATOMIC_ACQUIRE);
	uint32_t rq = __atomic_load_n(&q->rq.ctl->prod, __ATOMIC_ACQUIRE);
	bool posted = sq != q->bell_sq || rq != q->bell_rq;

	q->bell_sq = sq;
	q->bell_rq = rq;
	return posted;
}

void vqp_room(struct iwxd *d, struct client *c)
{
	while (!iwx_link_empty(&c->room_wait)) {
		struct vqp *q = container_of(c->room_wait.next, struct vqp, wait_link);

		iwx_link_del(&q->wait_link);
		vqp_ready(d, q);
	}
}

static void service(struct iwxd *d, struct vqp *q, bool rx)
{
	if (q->corrupt)
		return;
	if (rings_corrupt(q)) {
		log_warn("client %u: qp %u: ring indices out of range: queue pair abandoned",
			 q->owner->id, q->num);
		q->corrupt = true;
		conn_sock_interest(d, &q->sock, 0);
		engine_stop(d, q, true);
		vqp_set_state(q, IWX_SHQ_ERROR);
		return;
	}
	if (q->eng && engine_turn(d, q, rx))
		return;
	if (q->state == IWX_SHQ_ERROR) {
		/* flushed: each work queue's completions behind its own that wait, not the other's */
		unpark(q, false);
		unpark(q, true);
		move_ring(q, true);
		move_ring(q, false);
	}
}

/* rx: read the socket too (every service but one only a post asked for: serve_posted). */
static void serve(struct iwxd *d, struct vqp *q, bool rx)
{
	q->posted = false;
	q->blocked = false;
	q->wants_room = 0;
	service(d, q, rx);
	/*
	 * Completions wait for room in the client's CQs, or work for room in the engine: the
	 * client's poll rings a CQ's bell (vqp_room), the stream's progress runs on_stream. Room
	 * the client made before it could see need_room is seen here (the fence pairs with
	 * iwx_poll_cq's exchange of need_room after it consumed): no bell comes for it.
	 */
	if ((q->blocked || parked(q) || q->backlog) && !q->corrupt) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (((q->wants_room & ROOM_SEND) && iwx_ring_space(&q->scq->ring)) ||
		    ((q->wants_room & ROOM_RECV) && iwx_ring_space(&q->rcq->ring)))
			vqp_ready(d, q);
		else if (!iwx_linked(&q->wait_link))
			iwx_link_add_tail(&q->owner->room_wait, &q->wait_link);
	}
	rearm(d, q);	/* what it did may have set a deadline (a settle, a close, a lazy tick) */
}

void vqp_service(struct iwxd *d, struct vqp *q)
{
	serve(d, q, true);
}

/*
 * A service only a post asked for (doorbell.c) sends without reading a socket that says
 * whenever it is readable: the read would find nothing new, and costs a system call per
 * message. Not a lazy one (fastpath.c), which says so only past its low-water mark.
 */
static void serve_posted(struct iwxd *d, struct vqp *q)
{
	serve(d, q, !q->posted || !q->sock.t || !q->sock.t->rx_level || fastpath_conn_due(q));
}

/*
 * Up to TURN_SHARE of c's ready queue pairs, oldest first: however much one client rings,
 * it delays the others by its share of a turn. What its services make ready waits for the
 * next turn (each queue pair gets one service per turn), behind what the share left.
 */
static void service_share(struct iwxd *d, struct client *c)
{
	struct iwx_link mine;

	iwx_link_init(&mine);
	iwx_link_splice(&mine, &c->ready);
	for (uint32_t n = 0; n < TURN_SHARE && !iwx_link_empty(&mine); n++) {
		struct vqp *q = container_of(mine.next, struct vqp, ready_link);

		iwx_link_del(&q->ready_link);
		serve_posted(d, q);
	}
	iwx_link_splice(&mine, &c->ready);
	iwx_link_splice(&c->ready, &mine);
	if (!iwx_link_empty(&c->ready) && !iwx_linked(&c->ready_link))
		iwx_link_add_tail(&d->ready, &c->ready_link);
}

bool vqp_service_ready(struct iwxd *d)
{
	struct iwx_link turn;

	if (iwx_link_empty(&d->ready))
		return false;
	/* round-robin: each client that had work gets its share; one made ready meanwhile waits */
	iwx_link_init(&turn);
	iwx_link_splice(&turn, &d->ready);
	while (!iwx_link_empty(&turn)) {
		struct client *c = container_of(turn.next, struct client, ready_link);

		iwx_link_del(&c->ready_link);
		service_share(d, c);
	}
	return true;
}

/* Start or abort what is due by now. */
static void on_timer(struct iwxd *d, struct timer *t, uint64_t now)
{
	struct vqp *q = container_of(t, struct vqp, timer);

	fastpath_conn_timers(d, q, now);
	if (q->settle_end_ms && now >= q->settle_end_ms)
		settle_end(d, q);
	if (q->close_ms && q->eng && now >= q->close_ms) {
		log_info("qp %u: the close did not finish in time: aborting", q->num);
		/* at once, though completions wait for CQ room: the event needs none */
		engine_qp_abort(q->eng);
		vqp_set_state(q, IWX_SHQ_ERROR);
		stream_ended(d, q);
		vqp_service(d, q);
	}
	rearm(d, q);
}

int vqp_disconnect(struct iwxd *d, struct vqp *q)
{
	if (q->state != IWX_SHQ_RTS)
		return -ENOTCONN;
	if (q->closing)
		return 0;
	if (!q->eng)
		return 0;
	if (q->settle_end_ms)
		settle_end(d, q);	/* what was posted goes out before the FIN, now */
	q->closing = true;
	q->close_mark = __atomic_load_n(&q->sh->sq.prod, __ATOMIC_ACQUIRE);
	q->close_ms = iwx_now_ms() + (uint64_t)d->o.close_ms;	/* then abort (on_timer) */
	vqp_service(d, q);
	return 0;
}

void vqp_stats(const struct vqp *q, struct iwx_qp_stats *s)
{
	*s = q->gone;
	if (q->eng) {
		struct iwx_qp_stats live;

		engine_qp_stats(q->eng, &live);
		vqp_stats_add(s, &live);
	}
}

void vqp_destroy(struct iwxd *d, struct vqp *q)
{
	if (q->setup)
		cm_pconn_free(d, q->setup);
	conn_sock_interest(d, &q->sock, 0);
	if (q->eng && !q->ended && !q->corrupt) {
		/*
		 * Closed at once, as the kernel's iWARP closes a destroyed queue pair's socket:
		 * what TCP holds (completed sends among it) still goes out, then our FIN; what
		 * the peer sends is drained until its own, so that no reset overtakes it.
		 */
		engine_qp_shut_send(q->eng);
		conn_sock_linger(d, q->owner->user, &q->sock);	/* SCTP: usrsctp's close shuts down itself */
	}
	engine_stop(d, q, false);
	iwx_link_del(&q->ready_link);
	if (iwx_link_empty(&q->owner->ready))
		iwx_link_del(&q->owner->ready_link);	/* on the ready clients only with work */
	iwx_link_del(&q->wait_link);
	timer_fini(&d->loop, &q->timer);
	doorbell_unbind(q->owner, q->bell);
	iwx_link_del(&q->link);
	iwx_link_del(&q->client_link);
	iwx_ids_del(&d->ids, q->num);
	vqp_stats_add(&d->gone, &q->gone);
	q->scq->users--;
	q->rcq->users--;
	if (q->srq)
		q->srq->users--;
	client_ring_destroy(d, q->owner, LIMIT_QPS, &q->mem);
	free(q->parked[0].wc);
	free(q->parked[1].wc);
	free(q);
}
