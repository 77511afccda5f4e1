// SPDX-License-Identifier: MIT
/*
 * Connection management, in the manner of rdma_cm: a client's connect, listen, accept
 * and reject drive conn.c's MPA set-up (RFC 5044 §7.1, RFC 6581) over TCP or SCTP in the
 * daemon's loop, and the outcome reaches the client as events. A stream in full operation is
 * handed to its queue pair (vqp.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "daemon.h"
#include "outbox.h"
#include "util/clock.h"
#include "util/container_of.h"

#define ACCEPT_BATCH	16

socklen_t cm_addr_len(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
	       a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;
}

/* The set-up options for an application's parameters; pd holds a copy of its private data. */
static void opts_of(const struct iwxd *d, const struct iwx_ipc_cm_param *p,
		    struct iwx_conn_opts *o, uint8_t *pd)
{
	memset(o, 0, sizeof(*o));
	o->local.rev = p->mpa_rev ? p->mpa_rev : IWX_MPA_REV2;
	o->local.crc = p->crc ? p->crc > 0 : d->o.crc;
	o->local.markers = p->markers;
	o->local.ird = p->ird ? p->ird : 16;
	o->local.ord = p->ord ? p->ord : 16;
	o->local.p2p = p->p2p;
	/* an Initiator's RTR is one it can send; a Responder's, those it can take (RFC 6581 §6) */
	o->local.rtr = IWX_RTR_WRITE | IWX_RTR_READ;
	o->local.rdmap_ext = d->o.rfc7306;	/* over TCP; SCTP's set-up leaves it out */
	o->pd_len = p->pd_len > IWX_IPC_PRIVDATA ? IWX_IPC_PRIVDATA : p->pd_len;
	memcpy(pd, p->pd, o->pd_len);
	o->pd = pd;
	o->timeout_ms = d->o.timeout_ms;
	o->zerocopy_min = d->o.zerocopy_min;
}

/* A request announced to the client is answered (or gone): it no longer counts. */
static void pconn_unannounce(struct pconn *p)
{
	if (p->announced)
		client_give(p->owner, LIMIT_REQUESTS);
	p->announced = false;
}

void cm_pconn_free(struct iwxd *d, struct pconn *p)
{
	pconn_unannounce(p);
	conn_sock_let_go(d, &p->sock, p->conn);
	iwx_conn_close(p->conn);
	if (p->sock.t->setup_free)
		p->sock.t->setup_free(d, p);
	if (p->qp && p->qp->setup == p)
		p->qp->setup = NULL;
	IWX_LIST_UNLINK(&d->pconns, p);
	iwx_ids_del(&d->ids, p->id);
	timer_fini(&d->loop, &p->timer);
	free(p->conn);
	free(p);
}

/* A queue pair whose set-up failed may try again. */
static void qp_back_to_init(struct vqp *q)
{
	q->setup = NULL;
	vqp_set_state(q, IWX_SHQ_INIT);
}

/* p's timer runs at its deadline: the application's answer's, or the set-up's next step's. */
static void pconn_rearm(struct iwxd *d, struct pconn *p)
{
	timer_set(&d->loop, &p->timer, p->announced ? p->answer_ms : p->conn->deadline_ms);
}

/* Tell the client of the peer's request (the set-up's socket is not watched meanwhile). */
static void announce(struct iwxd *d, struct pconn *p)
{
	struct iwx_conn *c = p->conn;
	struct iwx_ipc_event ev;

	/* what the peer asked, for the application to answer */
	outbox_event_of_conn(&ev, c);
	ev.transport = p->sock.t->id;
	ev.type = IWX_IPC_EV_CONNECT_REQUEST;
	ev.listener = p->listener->id;
	ev.conn_id = p->id;
	ev.mpa_rev = c->request.rev;
	ev.crc = c->request.crc;
	ev.markers_tx = c->request.markers;
	ev.ird = c->request.ird;
	ev.ord = c->request.ord;
	ev.pd_len = c->peer_pd_len;
	memcpy(ev.pd, c->peer_pd, c->peer_pd_len);
	p->announced = true;
	client_take(p->owner, LIMIT_REQUESTS);
	/*
	 * The application's answer is part of the set-up: unanswered by half its time
	 * limit, it is rejected, so an initiator with the same limit hears the reject
	 * rather than waiting out its own time.
	 */
	p->answer_ms = iwx_now_ms() + d->o.timeout_ms / 2;
	pconn_rearm(d, p);
	log_info("connection request %u from a peer on listener %u", p->id, p->listener->id);
	outbox_event(d, p->owner, &ev);
}

static int answer(struct iwxd *d, struct pconn *p, struct vqp *q, bool reject);

uint16_t cm_port_of(const struct sockaddr_storage *a)
{
	return ntohs(a->ss_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_port :
					       ((const struct sockaddr_in6 *)a)->sin6_port);
}

/* Where a set-up that failed in state s was, as its client's event says it. */
static uint8_t step_of(enum iwx_conn_state s)
{
	switch (s) {
	case IWX_CONN_CONNECTING:
		return IWX_IPC_STEP_TRANSPORT;
	case IWX_CONN_SEND_REQUEST:
		return IWX_IPC_STEP_MPA_REQUEST;
	case IWX_CONN_WAIT_REPLY:
		return IWX_IPC_STEP_MPA_REPLY;
	default:
		return IWX_IPC_STEP_ACCEPTED;
	}
}

/* ... and as iwxd's log says it. */
static const char *step_str(uint8_t step)
{
	static const char *const s[] = {
		[IWX_IPC_STEP_TRANSPORT] = "connecting",
		[IWX_IPC_STEP_MPA_REQUEST] = "connected, sending the MPA Request",
		[IWX_IPC_STEP_MPA_REPLY] = "connected, waiting for the MPA Reply",
		[IWX_IPC_STEP_ACCEPTED] = "accepted, sending the MPA Reply",
	};

	return s[step];
}

/* An address and port, as a log line names a peer. */
static const char *addr_str(const struct sockaddr_storage *a, char *buf, size_t cap)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	const void *in = a->ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)a)->sin_addr :
						    (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr;

	if (a->ss_family != AF_INET && a->ss_family != AF_INET6)
		return "an unknown peer";
	inet_ntop(a->ss_family, in, ip, sizeof(ip));
	snprintf(buf, cap, a->ss_family == AF_INET ? "%s:%u" : "[%s]:%u", ip, cm_port_of(a));
	return buf;
}

/* The set-up ended (the socket needs no more waiting): act on how. */
static void pconn_done(struct iwxd *d, struct pconn *p)
{
	struct iwx_conn *c = p->conn;
	struct iwx_ipc_event ev;

	/* TCP waits for nothing now: not watched while the application decides */
	conn_sock_follow(d, &p->sock, c);
	outbox_event_of_conn(&ev, c);
	switch (c->state) {
	case IWX_CONN_REQUEST_IN:
		if (!client_room(d, p->owner, LIMIT_REQUESTS)) {
			announce(d, p);
			return;
		}
		/* the client has enough to answer: the peer hears no, as if unanswered */
		log_info("connection request %u on listener %u: rejected", p->id, p->listener->id);
		answer(d, p, NULL, true);
		return;
	case IWX_CONN_ESTABLISHED:
		log_info("qp %u: established over %s: MPA rev %u, CRC %s, IRD %u ORD %u%s", p->qp->num,
			 c->ops->name, c->agreed.mode.rev, c->agreed.mode.crc ? "on" : "off",
			 c->agreed.ird, c->agreed.ord, c->agreed.rdmap_ext ? ", RFC 7306" : "");
		conn_sock_let_go(d, &p->sock, c);	/* the queue pair's now */
		vqp_established(d, p->qp, c, p->sock.t);
		break;
	case IWX_CONN_REJECTED:
		d->st.conns_rejected++;
		if (p->qp && c->initiator) {
			ev.type = IWX_IPC_EV_REJECTED;
			ev.qp = p->qp->num;
			ev.pd_len = c->peer_pd_len;
			memcpy(ev.pd, c->peer_pd, c->peer_pd_len);
			qp_back_to_init(p->qp);
			outbox_event(d, p->owner, &ev);
		} else if (p->qp) {
			qp_back_to_init(p->qp);	/* accepted, but no RTR type matched */
		}
		break;
	default: {
		char peer[INET6_ADDRSTRLEN + 8];
		uint8_t step = step_of(c->failed_in);

		d->st.conns_failed++;
		log_info("connection set-up %u with %s failed (%s): %s%s%s", p->id,
			 addr_str(&c->peer, peer, sizeof(peer)), step_str(step), strerror(-c->error),
			 c->error == -EPROTO ? ", " : "", c->error == -EPROTO ?
			 iwx_term_ecode_name(c->cause.layer, c->cause.etype, c->cause.ecode) : "");
		if (p->qp) {
			ev.type = IWX_IPC_EV_UNREACHABLE;
			ev.qp = p->qp->num;
			ev.status = c->error;
			ev.step = step;
			if (c->error == -EPROTO) {
				ev.layer = c->cause.layer;
				ev.etype = c->cause.etype;
				ev.ecode = c->cause.ecode;
			}
			qp_back_to_init(p->qp);
			outbox_event(d, p->owner, &ev);
		}
		break;
	}
	}
	cm_pconn_free(d, p);
}

/* What the transport learned of the set-up's addresses meanwhile. */
static void pconn_names(struct pconn *p)
{
	if (p->sock.t->names)
		p->sock.t->names(p);
}

static void pconn_step(struct iwxd *d, struct pconn *p)
{
	enum iwx_conn_state was = p->conn->state;
	int err = iwx_conn_step(p->conn, iwx_now_ms());

	pconn_names(p);
	/* an announced request waits for its answer, unless its step failed it */
	if (err != -EAGAIN && !(p->announced && p->conn->state == was)) {
		pconn_done(d, p);
		return;
	}
	conn_sock_follow(d, &p->sock, p->conn);
	pconn_rearm(d, p);
}

static void on_pconn(struct iwxd *d, struct watch *w, uint32_t events)
{
	(void)events;
	pconn_step(d, container_of(w, struct pconn, sock.w));
}

/* An unanswered request is rejected; a set-up whose step is due takes it. */
static void on_pconn_timer(struct iwxd *d, struct timer *t, uint64_t now)
{
	struct pconn *p = container_of(t, struct pconn, timer);
	struct iwx_ipc_answer reject = { .conn_id = p->id };

	if (p->announced && now >= p->answer_ms) {
		log_info("connection request %u not answered in time: rejected", p->id);
		cm_answer(d, p->owner, &reject, true);
	} else if (!p->announced && p->conn->deadline_ms && now >= p->conn->deadline_ms) {
		pconn_step(d, p);
	} else {
		pconn_rearm(d, p);
	}
}

static struct pconn *pconn_new(struct iwxd *d, struct client *c, const struct transport *t)
{
	struct pconn *p = iwx_ids_room(&d->ids) ? NULL : calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->conn = calloc(1, t->conn_size);
	if (!p->conn || timer_init(&d->loop, &p->timer, on_pconn_timer)) {
		free(p->conn);
		free(p);
		return NULL;
	}
	p->id = loop_new_id(&d->loop);
	iwx_ids_add(&d->ids, p->id, KIND_PCONN, p);
	p->owner = c;
	conn_sock_init(&p->sock, t, on_pconn);
	p->next = d->pconns;
	d->pconns = p;
	return p;
}

int cm_connect(struct iwxd *d, struct client *c, const struct iwx_ipc_connect *req)
{
	const struct transport *t = transport_by_id(req->param.transport);
	struct vqp *q = vqp_find(d, c, req->qp);
	struct pconn *p;
	int err;

	if (!q)
		return -ENOENT;
	if (q->state != IWX_SHQ_INIT)
		return -EISCONN;
	if (!cm_addr_len(&req->addr))
		return -EAFNOSUPPORT;
	if (!t)
		return -EINVAL;
	p = pconn_new(d, c, t);
	if (!p)
		return -ENOMEM;
	opts_of(d, &req->param, &p->opts, p->pd);
	err = t->usable ? t->usable(d) : 0;
	if (!err)
		err = t->connect(d, p, req);
	if (!err)
		err = conn_sock_follow(d, &p->sock, p->conn);
	if (err) {
		cm_pconn_free(d, p);
		return err;
	}
	p->qp = q;
	q->setup = p;
	/* the client's own connection: libiwx bounds it, anything else delays only it */
	q->settle_ms = req->param.settle_ms == 0 ? d->o.settle_ms :
		       req->param.settle_ms < 0 ? 0 : req->param.settle_ms;
	vqp_set_state(q, IWX_SHQ_CONNECTING);
	pconn_step(d, p);
	return 0;
}

static void on_listen(struct iwxd *d, struct watch *w, uint32_t events)
{
	struct listener *l = container_of(w, struct listener, w);
	struct iwx_ipc_cm_param none = { 0 };

	(void)events;
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct pconn *p = pconn_new(d, l->owner, l->t);

		if (!p)
			return;
		p->listener = l;
		opts_of(d, &none, &p->opts, p->pd);
		if (l->t->accept(d, l, p) || conn_sock_follow(d, &p->sock, p->conn)) {
			cm_pconn_free(d, p);
			return;
		}
		pconn_step(d, p);
	}
}

/* The lowest port anyone may bind in iwxd's network namespace, IPv6 too (ip-sysctl.rst). */
static unsigned int unprivileged_port_start(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "re");
	unsigned int port;

	if (!f)
		return 1024;
	if (fscanf(f, "%u", &port) != 1)
		port = 1024;
	fclose(f);
	return port;
}

/*
 * iwxd binds as root, for clients that may not be: one that is not gets no port it could
 * not bind itself (bind(2): EACCES), and no client a port another's listener holds, on
 * any address (the kernel would let a second bind in on another address).
 */
int cm_port_allowed(const struct iwxd *d, const struct client *c, uint16_t port)
{
	if (!port)
		return 0;	/* the kernel picks one nobody holds */
	if (c->uid != 0 && port < unprivileged_port_start())
		return -EACCES;
	for (const struct listener *l = d->listeners; l; l = l->next)
		if (l->owner != c && cm_port_of(&l->addr) == port)
			return -EADDRINUSE;
	return 0;
}

int cm_listen(struct iwxd *d, struct client *c, struct iwx_ipc_listen *req)
{
	const struct transport *t = transport_by_id(req->transport);
	struct listener *l;
	int err;

	if (!cm_addr_len(&req->addr))
		return -EAFNOSUPPORT;
	if (!t)
		return -EINVAL;
	err = t->usable ? t->usable(d) : 0;
	if (!err)
		err = client_room(d, c, LIMIT_LISTENERS);
	if (!err)
		err = cm_port_allowed(d, c, cm_port_of(&req->addr));
	if (!err)
		err = iwx_ids_room(&d->ids);
	if (err)
		return err;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->w.fn = on_listen;
	l->owner = c;
	l->t = t;
	if (!req->backlog)
		req->backlog = 64;
	err = t->listen(d, l, req);
	if (err) {
		free(l);
		return err;
	}
	l->id = loop_new_id(&d->loop);
	iwx_ids_add(&d->ids, l->id, KIND_LISTENER, l);
	l->owner = c;
	client_take(c, LIMIT_LISTENERS);
	l->next = d->listeners;
	d->listeners = l;
	req->addr = l->addr;
	req->listener = l->id;
	return 0;
}

static void listener_free(struct iwxd *d, struct listener *l)
{
	l->t->listen_close(d, l);
	for (struct pconn *p = d->pconns, *next; p; p = next) {
		next = p->next;
		if (p->listener == l && !p->qp)
			cm_pconn_free(d, p);
		else if (p->listener == l)
			p->listener = NULL;
	}
	client_give(l->owner, LIMIT_LISTENERS);
	IWX_LIST_UNLINK(&d->listeners, l);
	iwx_ids_del(&d->ids, l->id);
	free(l);
}

int cm_listen_close(struct iwxd *d, struct client *c, uint32_t id)
{
	struct listener *l = iwx_ids_find(&d->ids, id, KIND_LISTENER);

	if (!l || l->owner != c)
		return -ENOENT;
	listener_free(d, l);
	return 0;
}

/* Answer the peer's request: accept onto q, or reject; the set-up goes on with the reply. */
static int answer(struct iwxd *d, struct pconn *p, struct vqp *q, bool reject)
{
	int err;

	pconn_unannounce(p);
	err = iwx_conn_answer(p->conn, &p->opts, reject);
	pconn_names(p);
	if (q && !err) {
		p->qp = q;
		q->setup = p;
		vqp_set_state(q, IWX_SHQ_CONNECTING);
	}
	if (p->conn->state == IWX_CONN_SEND_REPLY && !conn_sock_follow(d, &p->sock, p->conn))
		pconn_step(d, p);
	else if (p->conn->state == IWX_CONN_REQUEST_IN)
		announce(d, p);		/* no answer could be made of it: ask again */
	else
		pconn_done(d, p);
	return err;
}

int cm_answer(struct iwxd *d, struct client *c, const struct iwx_ipc_answer *req, bool reject)
{
	struct pconn *p;
	struct vqp *q = NULL;

	p = iwx_ids_find(&d->ids, req->conn_id, KIND_PCONN);
	if (!p || p->owner != c || !p->announced)
		return -ENOENT;
	if (!reject) {
		q = vqp_find(d, c, req->qp);
		if (!q)
			return -ENOENT;
		if (q->state != IWX_SHQ_INIT)
			return -EISCONN;
	}
	opts_of(d, &req->param, &p->opts, p->pd);
	return answer(d, p, q, reject);
}

void cm_client_gone(struct iwxd *d, struct client *c)
{
	for (struct listener *l = d->listeners, *n; l; l = n) {
		n = l->next;
		if (l->owner == c)
			listener_free(d, l);
	}
	for (struct pconn *p = d->pconns, *n; p; p = n) {
		n = p->next;
		if (p->owner == c)
			cm_pconn_free(d, p);
	}
}

int cm_disconnect(struct iwxd *d, struct client *c, uint32_t num)
{
	struct vqp *q = vqp_find(d, c, num);

	if (!q)
		return -ENOENT;
	return vqp_disconnect(d, q);
}
