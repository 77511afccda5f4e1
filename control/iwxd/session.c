// SPDX-License-Identifier: MIT
/*
 * A client of iwxd: one libiwx device on the Unix socket. Who may connect (root, and
 * the members of the configured group, by SO_PEERCRED), the requests it makes, and
 * everything it owns, which goes when it does: a client sees and touches only its own
 * protection domains, regions, completion queues, queue pairs and listeners.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/fdpass.h"

#include "daemon.h"
#include "outbox.h"
#include "shared.h"
#include "shm.h"
#include "util/clock.h"
#include "util/container_of.h"

#define DEFAULT_ARENA	(64u << 20)
#define REQ_BATCH	32	/* requests taken from one client before others get a turn */
#define ACCEPT_PAUSE_MS	250	/* out of descriptors: try accepting again after this long */
#define TURNED_MAX	64	/* clients not let in, waiting for their answer */

/* Is uid (with primary group gid) root, iwxd's own user or a member of the configured group? */
static bool allowed(const struct iwxd *d, uid_t uid, gid_t gid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	gid_t groups[256];
	int n = 256;

	if (uid == 0 || uid == d->o.owner)
		return true;
	if (d->o.gid == (gid_t)-1)
		return false;
	if (gid == d->o.gid)
		return true;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) || !res ||
	    getgrouplist(pw.pw_name, gid, groups, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (groups[i] == d->o.gid)
			return true;
	return false;
}

/*
 * The client wrote its eventfd: what rang is in its doorbells, which the loop takes from
 * now on. Watched edge-triggered and never read (a system call less per wake-up): each
 * write is an edge, and the count (2^64 - 2 before a write would block) is the client's.
 */
static void on_bell(struct iwxd *d, struct watch *w, uint32_t events)
{
	(void)events;
	d->st.doorbells++;
	doorbell_wake(d, container_of(w, struct client, bell_w));
}

/* What hello made goes: when the client does, or when hello fails part way. */
static void hello_undo(struct iwxd *d, struct client *c)
{
	if (c->bell_w.fd >= 0) {
		watch_del(&d->loop, &c->bell_w);
		close(c->bell_w.fd);
		c->bell_w.fd = -1;
	}
	if (c->notify_fd >= 0) {
		close(c->notify_fd);
		c->notify_fd = -1;
	}
	if (c->arena.base)
		maps_give(d, c, 2);	/* taken with it: its mapping and the doorbells' */
	shared_destroy(d, c->user, &c->arena);
	doorbell_close(d, c);
}

/* The body of each request; its reply's is written over it. */
union request {
	struct iwx_ipc_hello		hello;
	struct iwx_ipc_id		id;
	struct iwx_ipc_mr_reg		mr;
	struct iwx_ipc_shm		shm;
	struct iwx_ipc_cq_create	cq;
	struct iwx_ipc_qp_create	qp;
	struct iwx_ipc_srq_create	srq;
	struct iwx_ipc_srq_arm		srq_arm;
	struct iwx_ipc_connect		connect;
	struct iwx_ipc_listen		listen;
	struct iwx_ipc_answer		answer;
	struct iwx_ipc_fp_attach	fp;
};

/* What a request's handler leaves for its reply, besides the status it returns. */
struct reply {
	const struct iwx_ipc_hdr *req;	/* what it answers */
	uint32_t	len;		/* of the body; none goes with an error */
	int		fds[4];
	unsigned	nfds;
	bool		given;		/* the fds are the client's alone once sent (ring memfds) */
	int		close_fd;	/* closed once sent too, or -1 */
	bool		sent;		/* the handler answered itself */
};

static int req_hello(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	struct iwx_ipc_hello *h = &r->hello;
	size_t size = h->arena_size ? h->arena_size : DEFAULT_ARENA;
	int err;

	/* once per client, whatever became of the first: a retry could only leak or confuse */
	if (c->hello_tried)
		return -EALREADY;
	c->hello_tried = true;
	if (h->version != IWX_IPC_VERSION)
		return -EPROTONOSUPPORT;
	if (size > d->o.max[LIMIT_ARENA])
		return client_refuse(d, c, LIMIT_ARENA, -EFBIG);
	err = client_memlock_room(d, c, iwx_arena_size(size));
	if (err)
		return err;
	err = maps_take(d, c, 2);	/* the arena and the doorbells */
	if (err)
		return err;
	err = shared_create(d, c, &c->arena, size);
	if (err) {
		maps_give(d, c, 2);
		return err;
	}
	c->bell_w.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->bell_w.fn = on_bell;
	c->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	err = c->bell_w.fd < 0 || c->notify_fd < 0 ? -errno : doorbell_open(d, c, &out->fds[3]);
	if (!err)
		err = watch_add(&d->loop, &c->bell_w, EPOLLIN | EPOLLET);
	if (err) {
		if (c->bells)
			close(out->fds[3]);
		hello_undo(d, c);
		return err;
	}
	c->hello = true;
	h->client_id = c->id;
	h->arena_size = c->arena.size;
	h->arena_bpf = c->arena.bpf;
	h->arena_map_id = c->arena.map_id;
	h->max_shared = d->o.max[LIMIT_ARENA];
	h->max_pds = d->o.max[LIMIT_PDS];
	h->max_mrs = d->o.max[LIMIT_MRS];
	h->max_cqs = d->o.max[LIMIT_CQS];
	h->max_qps = d->o.max[LIMIT_QPS];
	h->max_srqs = d->o.max[LIMIT_SRQS];
	h->features = IWX_IPC_F_CQ_FUTEX | (d->o.rfc7306 ? IWX_IPC_F_RFC7306 : 0);
	h->max_qp_depth = IWX_IPC_MAX_QP_DEPTH;
	h->max_cq_entries = IWX_IPC_MAX_CQ_ENTRIES;
	out->fds[0] = c->arena.fd;
	out->fds[1] = c->bell_w.fd;
	out->fds[2] = c->notify_fd;
	out->nfds = 4;
	out->close_fd = out->fds[3];	/* the doorbells, mapped: only the client needs them */
	out->len = sizeof(*h);
	log_info("client %u (pid %d, uid %u): arena of %zu bytes in a %s", c->id, (int)c->pid,
		 (unsigned)c->uid, c->arena.size, c->arena.bpf ? "BPF array map" : "memfd");
	return 0;
}

static int req_pd_alloc(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = client_room(d, c, LIMIT_PDS);
	int64_t v = err ? err : iwx_mem_pd_alloc(d->mem, c->ident);

	err = v < 0 ? (int)v : 0;
	if (!err)
		client_take(c, LIMIT_PDS);
	r->id.id = v;
	out->len = sizeof(r->id);
	return err;
}

static bool pd_in_use(const struct iwxd *d, const struct client *c, uint32_t pd)
{
	(void)d;
	IWX_LINK_EACH(const struct vqp, q, &c->qps, client_link)
		if (q->pd == pd)
			return true;
	return false;
}

static int req_pd_free(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = pd_in_use(d, c, r->id.id) ? -EBUSY : iwx_mem_pd_free(d->mem, c->ident, r->id.id);

	(void)out;
	if (!err)
		client_give(c, LIMIT_PDS);
	return err;
}

static int64_t mr_reg(struct iwxd *d, struct client *c, const struct iwx_ipc_mr_reg *r)
{
	if (!iwx_access_valid(r->access) || !r->len)
		return -EINVAL;
	if (r->arena_off == IWX_IPC_NOT_ARENA)
		return shm_mr_reg(d, c, r);	/* in memory the client shared with us */
	if (r->arena_off > c->arena.size || r->len > c->arena.size - r->arena_off)
		return -EFAULT;
	return iwx_mem_reg(d->mem, c->ident, r->pd, (uint8_t *)c->arena.base + r->arena_off, r->len,
			   r->addr, r->access);
}

static int req_mr_reg(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = client_room(d, c, LIMIT_MRS);
	int64_t v = err ? err : mr_reg(d, c, &r->mr);

	err = v < 0 ? (int)v : 0;
	if (!err)
		client_take(c, LIMIT_MRS);
	r->mr.stag = v;
	out->len = sizeof(r->mr);
	return err;
}

static int req_mr_dereg(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = shm_mr_dereg(d, c, r->id.id);

	(void)out;
	if (!err)
		client_give(c, LIMIT_MRS);
	return err;
}

static int req_mr_invalidate(struct iwxd *d, struct client *c, union request *r,
			     struct reply *out)
{
	const struct iwx_region *mr = iwx_mem_lookup(d->mem, r->id.id);

	(void)out;
	return mr && mr->owner == c->ident ? iwx_mem_invalidate(d->mem, r->id.id, mr->desc.pd) :
					  -ENOENT;
}

static int req_mr_revalidate(struct iwxd *d, struct client *c, union request *r,
			     struct reply *out)
{
	int64_t v = iwx_mem_revalidate(d->mem, c->ident, r->id.id);

	r->id.id = v;
	out->len = sizeof(r->id);
	return v < 0 ? (int)v : 0;
}

static int req_shm_create(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = shm_create(d, c, &r->shm, &out->fds[0]);

	out->nfds = err ? 0 : 1;
	out->len = sizeof(r->shm);
	return err;
}

static int req_shm_free(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	(void)out;
	return shm_free(d, c, r->id.id);
}

static int req_cq_create(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = 0;
	struct vcq *cq = vcq_create(d, c, r->cq.entries, &out->fds[0], &err);

	if (cq) {
		r->cq.cq = cq->id;
		r->cq.entries = cq->ring.size;
		r->cq.map_size = cq->map_size;
		r->cq.bell = cq->bell;
		out->nfds = 1;
		out->given = true;
	}
	out->len = sizeof(r->cq);
	return err;
}

static int req_cq_destroy(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	struct vcq *cq = vcq_find(d, c, r->id.id);
	int err = !cq ? -ENOENT : cq->users ? -EBUSY : 0;

	(void)out;
	if (!err)
		vcq_destroy(d, cq);
	return err;
}

static int req_qp_create(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = 0;
	struct vqp *q = vqp_create(d, c, &r->qp, &out->fds[0], &err);

	if (q) {
		r->qp.qp = q->num;
		r->qp.sq_depth = q->sq.size;
		r->qp.rq_depth = q->rq.size;
		r->qp.map_size = q->map_size;
		r->qp.bell = q->bell;
		out->nfds = 1;
		out->given = true;
	}
	out->len = sizeof(r->qp);
	return err;
}

static int req_qp_destroy(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	struct vqp *q = vqp_find(d, c, r->id.id);

	(void)out;
	if (!q)
		return -ENOENT;
	vqp_destroy(d, q);
	return 0;
}

static int req_srq_create(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	int err = 0;
	struct vsrq *srq = vsrq_create(d, c, &r->srq, &out->fds[0], &err);

	if (srq) {
		r->srq.srq = srq->id;
		r->srq.depth = srq->ring.size;
		r->srq.map_size = srq->map_size;
		out->nfds = 1;
		out->given = true;
	}
	out->len = sizeof(r->srq);
	return err;
}

static int req_srq_destroy(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	struct vsrq *srq = vsrq_find(d, c, r->id.id);
	int err = !srq ? -ENOENT : srq->users ? -EBUSY : 0;

	(void)out;
	if (!err)
		vsrq_destroy(d, srq);
	return err;
}

static int req_srq_arm(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	struct vsrq *srq = vsrq_find(d, c, r->srq_arm.srq);

	(void)out;
	if (!srq)
		return -ENOENT;
	if (r->srq_arm.limit > srq->ring.size)
		return -EINVAL;
	srq->limit = r->srq_arm.limit;
	return 0;
}

static int req_connect(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	(void)out;
	return cm_connect(d, c, &r->connect);
}

static int req_listen(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	out->len = sizeof(r->listen);
	return cm_listen(d, c, &r->listen);
}

static int req_listen_close(struct iwxd *d, struct client *c, union request *r,
			    struct reply *out)
{
	(void)out;
	return cm_listen_close(d, c, r->id.id);
}

static int req_accept(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	(void)out;
	return cm_answer(d, c, &r->answer, false);
}

static int req_reject(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	(void)out;
	return cm_answer(d, c, &r->answer, true);
}

static int req_disconnect(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	(void)out;
	return cm_disconnect(d, c, r->id.id);
}

/* STATUS, the listings and FP_*: admin.c answers them itself, the listings in parts. */
static int req_admin(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	admin_request(d, c, out->req, r);
	out->sent = true;
	return 0;
}

static int req_unknown(struct iwxd *d, struct client *c, union request *r, struct reply *out)
{
	(void)d, (void)c, (void)r, (void)out;
	return -EOPNOTSUPP;
}

/* Who may send a request. */
enum sender {
	ANY_CLIENT,	/* HELLO itself */
	AFTER_HELLO,
	ROOT_ONLY,	/* HELLO or not: `iwx attach` asks nothing else */
	OWNER_ONLY,	/* ... root or iwxd's own user: `iwx status` and the other listings */
};

/* Each request: the length its body must have, who may send it, and what answers it. */
struct request_kind {
	uint32_t	len;
	enum sender	who;
	int (*handle)(struct iwxd *d, struct client *c, union request *r, struct reply *out);
};

#define BODY(name)	sizeof(struct iwx_ipc_##name)

static const struct request_kind requests[] = {
	[IWX_IPC_HELLO]		= { BODY(hello),	ANY_CLIENT,	req_hello },
	[IWX_IPC_PD_ALLOC]	= { 0,			AFTER_HELLO,	req_pd_alloc },
	[IWX_IPC_PD_FREE]	= { BODY(id),		AFTER_HELLO,	req_pd_free },
	[IWX_IPC_MR_REG]	= { BODY(mr_reg),	AFTER_HELLO,	req_mr_reg },
	[IWX_IPC_MR_DEREG]	= { BODY(id),		AFTER_HELLO,	req_mr_dereg },
	[IWX_IPC_CQ_CREATE]	= { BODY(cq_create),	AFTER_HELLO,	req_cq_create },
	[IWX_IPC_CQ_DESTROY]	= { BODY(id),		AFTER_HELLO,	req_cq_destroy },
	[IWX_IPC_QP_CREATE]	= { BODY(qp_create),	AFTER_HELLO,	req_qp_create },
	[IWX_IPC_QP_DESTROY]	= { BODY(id),		AFTER_HELLO,	req_qp_destroy },
	[IWX_IPC_CONNECT]	= { BODY(connect),	AFTER_HELLO,	req_connect },
	[IWX_IPC_LISTEN]	= { BODY(listen),	AFTER_HELLO,	req_listen },
	[IWX_IPC_LISTEN_CLOSE]	= { BODY(id),		AFTER_HELLO,	req_listen_close },
	[IWX_IPC_ACCEPT]	= { BODY(answer),	AFTER_HELLO,	req_accept },
	[IWX_IPC_REJECT]	= { BODY(answer),	AFTER_HELLO,	req_reject },
	[IWX_IPC_DISCONNECT]	= { BODY(id),		AFTER_HELLO,	req_disconnect },
	[IWX_IPC_STATUS]	= { 0,			OWNER_ONLY,	req_admin },
	[IWX_IPC_LIST_CONNS]	= { 0,			OWNER_ONLY,	req_admin },
	[IWX_IPC_LIST_STAGS]	= { 0,			OWNER_ONLY,	req_admin },
	[IWX_IPC_MR_INVALIDATE]	= { BODY(id),		AFTER_HELLO,	req_mr_invalidate },
	[IWX_IPC_MR_REVALIDATE]	= { BODY(id),		AFTER_HELLO,	req_mr_revalidate },
	[IWX_IPC_SHM_CREATE]	= { BODY(shm),		AFTER_HELLO,	req_shm_create },
	[IWX_IPC_SHM_FREE]	= { BODY(id),		AFTER_HELLO,	req_shm_free },
	[IWX_IPC_FP_ATTACH]	= { BODY(fp_attach),	ROOT_ONLY,	req_admin },
	[IWX_IPC_FP_DETACH]	= { BODY(fp_attach),	ROOT_ONLY,	req_admin },
	[IWX_IPC_FP_STATS]	= { 0,			OWNER_ONLY,	req_admin },
	[IWX_IPC_LIST_USERS]	= { 0,			OWNER_ONLY,	req_admin },
	[IWX_IPC_SRQ_CREATE]	= { BODY(srq_create),	AFTER_HELLO,	req_srq_create },
	[IWX_IPC_SRQ_DESTROY]	= { BODY(id),		AFTER_HELLO,	req_srq_destroy },
	[IWX_IPC_SRQ_ARM]	= { BODY(srq_arm),	AFTER_HELLO,	req_srq_arm },
};

/* An op not in the table is answered as it always was: as one on an id iwxd does not support. */
static const struct request_kind unknown = { BODY(id), AFTER_HELLO, req_unknown };

static const struct request_kind *kind_of(uint16_t op)
{
	if (op < sizeof(requests) / sizeof(requests[0]) && requests[op].handle)
		return &requests[op];
	return &unknown;
}

static void dispatch(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *h,
		     union request *r)
{
	const struct request_kind *k = kind_of(h->op);
	struct reply out = { .req = h, .close_fd = -1 };
	int err;

	c->why[0] = 0;	/* a refusal says why here */
	if (h->len != k->len)
		err = -EINVAL;
	else if (k->who == ROOT_ONLY && c->uid != 0)
		err = -EPERM;
	else if (k->who == OWNER_ONLY && c->uid != 0 && c->uid != d->o.owner)
		err = -EPERM;
	else if (k->who == AFTER_HELLO && !c->hello)
		err = -ENOTCONN;	/* HELLO first */
	else
		err = k->handle(d, c, r, &out);
	if (out.sent)
		return;
	if (err) {
		log_debug("client %u: request %u: %s", c->id, h->op, strerror(-err));
		outbox_refuse(d, c, h, err);	/* no body, no descriptors: why, where iwxd knows */
	} else {
		outbox_reply(d, c, h, 0, r, out.len, out.fds, out.nfds);
	}
	/* the arena, eventfds and shared memory stay ours too; the outbox sent a duplicate */
	for (unsigned i = 0; out.given && i < out.nfds; i++)
		close(out.fds[i]);
	if (out.close_fd >= 0)
		close(out.close_fd);
}

static void on_client(struct iwxd *d, struct watch *w, uint32_t events)
{
	struct client *c = container_of(w, struct client, sock_w);

	if (events & EPOLLOUT)
		outbox_flush(d, c);
	for (int i = 0; i < REQ_BATCH && !c->dead; i++) {
		struct iwx_ipc_hdr h;
		union request r;
		int fds[IWX_FDPASS_ANY];
		unsigned nfds;
		int n = iwx_ipc_recv_all(w->fd, &h, &r, sizeof(r), fds, &nfds);

		if (nfds) {
			/* no request carries one: what else it sends is not to be read either */
			log_warn("client %u (pid %d, uid %u) sent a descriptor: closing it", c->id,
				 (int)c->pid, (unsigned)c->uid);
			session_close(d, c);	/* its socket first: it hears at once */
			for (unsigned k = 0; k < nfds; k++)
				closer_close(&d->closer, fds[k]);
			return;
		}
		if (n == -EAGAIN)
			return;
		if (n < 0) {
			if (n != -ECONNRESET)
				log_warn("client %u: %s: closing it", c->id, strerror(-n));
			session_close(d, c);
			return;
		}
		if (c->refused) {
			/* answered, then hung up on: it has been read, so the answer reaches it */
			outbox_refuse(d, c, &h, c->refused);
			c->dead = true;
			return;
		}
		dispatch(d, c, &h, &r);
	}
}

/* Stop taking clients for a while: the listening socket would stay readable, and the loop spin. */
static void accept_pause(struct iwxd *d, const char *why)
{
	if (!d->accept_warned)
		log_warn("not accepting clients for now: %s", why);
	d->accept_warned = true;
	watch_mod(&d->loop, &d->listen_w, 0);
	d->accept_at_ms = iwx_now_ms() + ACCEPT_PAUSE_MS;
}

static void accept_resume(struct iwxd *d)
{
	if (!d->accept_at_ms)
		return;
	d->accept_at_ms = 0;
	watch_mod(&d->loop, &d->listen_w, EPOLLIN);
}

void session_timers(struct iwxd *d, uint64_t now)
{
	if (d->accept_at_ms && now >= d->accept_at_ms)
		accept_resume(d);
	else if (d->accept_at_ms)
		loop_due(&d->loop, d->accept_at_ms);
}

/* May this client in? 0 (c->user set), or the answer to its request, before iwxd hangs up on it. */
static int admit(struct iwxd *d, struct client *c, gid_t gid)
{
	struct user *u;
	int err;

	if (!allowed(d, c->uid, gid)) {
		snprintf(c->why, sizeof(c->why), "pid %d uid %u is neither root nor in iwxd's group "
			 "(--group)", (int)c->pid, (unsigned)c->uid);
		log_warn("refused a client: %s", c->why);
		return -EACCES;
	}
	/* root is let in all the same: `iwx status` must work when members took every place */
	if (c->uid != 0 && d->nclients >= d->o.max[LIMIT_CLIENTS]) {
		limit_why(d, c, LIMIT_CLIENTS, false);	/* its answer says why, each time */
		if (!d->clients_warned)
			log_warn("%s: turned away", c->why);
		d->clients_warned = true;
		return -EMFILE;
	}
	u = user_get(d, c->uid);
	if (!u)
		return -ENOMEM;
	if (!user_exempt(c) && u->clients >= d->o.max[LIMIT_CLIENTS_USER]) {
		limit_why(d, c, LIMIT_CLIENTS_USER, true);
		if (!u->clients_warned)
			log_warn("%s: turned away", c->why);
		u->clients_warned = true;
		return -EMFILE;
	}
	c->user = u;	/* for the log */
	if (!user_exempt(c) && !share_room(d, u, SHARE_CLIENTS, 1, d->nclients, d->o.max[LIMIT_CLIENTS])) {
		share_refuse(d, c, SHARE_CLIENTS, d->o.max[LIMIT_CLIENTS], "turned away");
		c->user = NULL;
		user_forget(d, u);
		return -EMFILE;
	}
	err = client_memlock_read(d, c);
	if (err) {
		user_forget(d, u);
		return err;
	}
	c->user = u;
	return 0;
}

void session_accept(struct iwxd *d, struct watch *w, uint32_t events)
{
	(void)events;
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd;
		struct client *c;

		fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN)
				d->accept_warned = false;	/* caught up: a new shortage is news */
			else	/* EMFILE, ENFILE, ENOMEM...: until a client goes, or a while */
				accept_pause(d, strerror(errno));
			return;
		}
		/* gone before it was taken (a probe that connected and closed): no place for it */
		if (recv(fd, &(char){ 0 }, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
			close(fd);	/* it sent nothing: no descriptors either */
			continue;
		}
		c = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ? NULL :
		    calloc(1, sizeof(*c));
		if (!c) {
			accept_pause(d, strerror(errno));
			closer_close(&d->closer, fd);	/* it may have sent descriptors already */
			return;
		}
		c->ident = loop_new_ident(&d->loop);
		iwx_link_init(&c->qps);
		iwx_link_init(&c->room_wait);
		iwx_link_init(&c->ready);
		c->id = (uint32_t)c->ident;
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->arena.fd = c->bells_mem.fd = c->bell_w.fd = c->notify_fd = -1;
		c->refused = admit(d, c, cred.gid);
		if (c->refused && d->nturned >= TURNED_MAX) {
			close(fd);	/* enough wait for their answer: hung up on without one */
			free(c);
			continue;
		}
		c->sock_w.fd = fd;
		c->sock_w.fn = on_client;
		outbox_init(c);
		if (watch_add_first(&d->loop, &c->sock_w, EPOLLIN)) {
			accept_pause(d, strerror(errno));
			closer_close(&d->closer, fd);
			if (c->user)
				user_forget(d, c->user);
			free(c);
			return;
		}
		if (c->refused) {
			d->nturned++;
		} else {
			d->nclients++;
			c->user->clients++;
		}
		c->next = d->clients;
		d->clients = c;
		log_info("client %u connected: pid %d uid %u", c->id, (int)c->pid, (unsigned)c->uid);
	}
}

void session_close(struct iwxd *d, struct client *c)
{
	log_info("client %u gone", c->id);
	IWX_LINK_EACH(struct vqp, q, &c->qps, client_link)
		vqp_destroy(d, q);
	cm_client_gone(d, c);
	for (struct vcq *cq = d->cqs, *n; cq; cq = n) {
		n = cq->next;
		if (cq->owner == c)
			vcq_destroy(d, cq);
	}
	for (struct vsrq *srq = d->srqs, *n; srq; srq = n) {
		n = srq->next;
		if (srq->owner == c)
			vsrq_destroy(d, srq);
	}
	iwx_mem_release_owner(d->mem, c->ident);
	shm_client_gone(d, c);
	watch_del(&d->loop, &c->sock_w);
	/* what it sent and iwxd did not read goes with the socket, descriptors included */
	closer_close(&d->closer, c->sock_w.fd);
	hello_undo(d, c);
	outbox_clear(c);
	if (c->refused) {
		d->nturned--;
	} else {
		d->nclients--;
		d->clients_warned = false;
		/* what went without a count of its own (PDs, MRs: iwx_mem_release_owner) */
		for (int lim = 0; lim < LIMIT_COUNTED; lim++)
			c->user->used[lim] -= c->used[lim];
		c->user->clients--;
		c->user->clients_warned = false;
		user_forget(d, c->user);
	}
	IWX_LIST_UNLINK(&d->clients, c);
	free(c);
	accept_resume(d);	/* a descriptor, and room, for the next */
}
