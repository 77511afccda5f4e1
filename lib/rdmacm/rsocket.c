// SPDX-License-Identifier: MIT
/*
 * rsockets: the table of sockets, their set-up, connection events, shutdown and close.
 * Each socket has its own rdma_cm channel (non-blocking), completion channel and CQ;
 * whoever calls into a socket takes what they hold, so no thread runs behind it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cm.h"
#include "rsocket.h"
#include "util/clock.h"

/* fd -> socket, two levels so that lookups need no lock: pages are never freed. */
#define RS_PAGE		1024
#define RS_PAGES	1024
static _Atomic(struct rs *) *rs_pages[RS_PAGES];
static pthread_mutex_t rs_table_lock = PTHREAD_MUTEX_INITIALIZER;

#define RS_CLOSE_MS	2000	/* rclose's wait for what it sent to leave */

struct rs *rs_lookup(int fd)
{
	_Atomic(struct rs *) *page;

	if (fd < 0 || fd >= RS_PAGE * RS_PAGES)
		return NULL;
	page = __atomic_load_n(&rs_pages[fd / RS_PAGE], __ATOMIC_ACQUIRE);
	return page ? atomic_load(&page[fd % RS_PAGE]) : NULL;
}

static int rs_table_set(int fd, struct rs *rs)
{
	_Atomic(struct rs *) *page;

	if (fd >= RS_PAGE * RS_PAGES)
		return -EMFILE;
	pthread_mutex_lock(&rs_table_lock);
	page = rs_pages[fd / RS_PAGE];
	if (!page) {
		page = calloc(RS_PAGE, sizeof(*page));
		if (!page) {
			pthread_mutex_unlock(&rs_table_lock);
			return -ENOMEM;
		}
		__atomic_store_n(&rs_pages[fd / RS_PAGE], page, __ATOMIC_RELEASE);
	}
	atomic_store(&page[fd % RS_PAGE], rs);
	pthread_mutex_unlock(&rs_table_lock);
	return 0;
}

struct rs *rs_get_locked(int fd)
{
	struct rs *rs = rs_lookup(fd);

	if (!rs) {
		errno = EBADF;
		return NULL;
	}
	pthread_mutex_lock(&rs->lock);
	rs_progress(rs);
	return rs;
}

void rs_unlock(struct rs *rs)
{
	pthread_mutex_unlock(&rs->lock);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int watch(struct rs *rs, int fd)
{
	return epoll_ctl(rs->fd, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN });
}

/* A socket on channel ch and id (whose context becomes the socket). NULL with errno. */
static struct rs *rs_new(int domain, struct rdma_event_channel *ch, struct rdma_cm_id *id)
{
	struct rs *rs = calloc(1, sizeof(*rs));
	int err;

	if (!rs)
		return NULL;
	pthread_mutex_init(&rs->lock, NULL);
	rs->domain = domain;
	rs->ch = ch;
	rs->id = id;
	id->context = rs;
	rs->sndbuf = rs->rcvbuf = RS_RQ * RS_SLOT;
	rs->fd = epoll_create1(EPOLL_CLOEXEC);
	if (rs->fd < 0 || set_nonblock(ch->fd) || watch(rs, ch->fd))
		goto fail;
	err = rs_table_set(rs->fd, rs);
	if (err) {
		errno = -err;
		goto fail;
	}
	return rs;
fail:
	err = errno;
	if (rs->fd >= 0)
		close(rs->fd);
	free(rs);
	errno = err;
	return NULL;
}

int rsocket(int domain, int type, int protocol)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rs *rs;
	int err;

	if (domain != AF_INET && domain != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	/* rdma-core's datagram rsockets ride UD QPs, which iWARP does not have */
	if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_STREAM) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (protocol && protocol != IPPROTO_TCP) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	ch = rdma_create_event_channel();
	if (!ch)
		return -1;
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		goto fail_ch;
	rs = rs_new(domain, ch, id);
	if (!rs)
		goto fail_id;
	rs->nonblock = type & SOCK_NONBLOCK;
	return rs->fd;
fail_id:
	err = errno;
	rdma_destroy_id(id);
	errno = err;
fail_ch:
	err = errno;
	rdma_destroy_event_channel(ch);
	errno = err;
	return -1;
}

/* The QP, CQ and buffers of a socket about to connect or be accepted: 0 or -1 with errno. */
static int rs_setup(struct rs *rs)
{
	struct ibv_context *ctx = rs->id->verbs;
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = RS_SQ_DEPTH, .max_recv_wr = RS_RQ,
			 .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = RS_INLINE },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	size_t size = (size_t)(RS_RQ + RS_SQ) * RS_SLOT;

	rs->pd = ibv_alloc_pd(ctx);
	if (!rs->pd)
		return -1;
	rs->cc = ibv_create_comp_channel(ctx);
	if (!rs->cc || set_nonblock(rs->cc->fd) || watch(rs, rs->cc->fd))
		return -1;
	rs->cq = ibv_create_cq(ctx, RS_RQ + RS_SQ_DEPTH, rs, rs->cc, 0);
	if (!rs->cq || ibv_req_notify_cq(rs->cq, 0))
		return -1;
	a.send_cq = a.recv_cq = rs->cq;
	if (rdma_create_qp(rs->id, rs->pd, &a))
		return -1;
	rs->mem = aligned_alloc(4096, size);
	if (!rs->mem)
		return -1;
	rs->mr = ibv_reg_mr(rs->pd, rs->mem, size, IBV_ACCESS_LOCAL_WRITE);
	if (!rs->mr)
		return -1;
	for (uint32_t i = 0; i < RS_SQ; i++)
		rs->free_slot[i] = i;
	rs->nfree = RS_SQ;
	rs->credits = RS_RQ;
	return rs_post_recvs(rs);
}

static const struct rs_hello rs_hello_ours = {
	.magic = __builtin_bswap32(RS_MAGIC),
	.version = RS_VERSION,
};

static bool rs_hello_ok(const struct rdma_conn_param *p)
{
	const struct rs_hello *h = p->private_data;

	return h && p->private_data_len >= sizeof(*h) && ntohl(h->magic) == RS_MAGIC &&
	       h->version == RS_VERSION;
}

static void rs_conn_param(struct rdma_conn_param *p)
{
	*p = (struct rdma_conn_param){
		.private_data = &rs_hello_ours,
		.private_data_len = sizeof(rs_hello_ours),
		.retry_count = 7,
	};
}

void rs_fail(struct rs *rs, int err)
{
	if (rs->state == RS_ERROR)
		return;
	if (rs->state == RS_OPEN || rs->state == RS_CONNECTING)
		rdma_disconnect(rs->id);
	rs->state = RS_ERROR;
	rs->err = err;
}

static int status_err(int status, int dflt)
{
	return status < 0 ? -status : dflt;
}

/* A connection request on a listener: kept for raccept, or refused. */
static void rs_request(struct rs *rs, struct rdma_cm_event *ev)
{
	if (!rs_hello_ok(&ev->param.conn) || rs->nreq >= rs->backlog) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	rs->req[rs->nreq++] = ev->id;
}

static void rs_event(struct rs *rs, struct rdma_cm_event *ev)
{
	struct rdma_conn_param p;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		rs_request(rs, ev);
		break;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(rs->id, 2000))
			rs_fail(rs, errno);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		rs_conn_param(&p);
		if (rs_setup(rs) || rdma_connect(rs->id, &p))
			rs_fail(rs, errno);
		else
			rs->state = RS_CONNECTING;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (rs->state == RS_CONNECTING)
			rs->state = RS_OPEN;
		break;
	case RDMA_CM_EVENT_REJECTED:
		rs_fail(rs, ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rs_fail(rs, status_err(ev->status, EHOSTUNREACH));
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		rs_fail(rs, status_err(ev->status, ECONNREFUSED));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* what arrived before the disconnection is read first */
		rs_take_completions(rs);
		if (rs->state == RS_OPEN && !rs->fin_rcvd && !rs->fin_sent) {
			/* no FIN from the peer: its process or its iwxd died, as TCP's RST says */
			rs->state = RS_ERROR;
			rs->err = ECONNRESET;
		} else if (rs->state == RS_OPEN || rs->state == RS_CONNECTING) {
			rs->state = RS_CLOSED;
		}
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rs_fail(rs, ENODEV);
		break;
	default:
		break;
	}
}

void rs_progress(struct rs *rs)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(rs->ch, &ev) == 0) {
		struct rdma_cm_event copy = *ev;

		rdma_ack_cm_event(ev);
		rs_event(rs, &copy);
	}
	if (rs->cq)
		rs_take_completions(rs);
	if (rs->state == RS_OPEN)
		rs_send_pending(rs);
}

int rs_wait(struct rs *rs, int ms)
{
	struct pollfd p = { .fd = rs->fd, .events = POLLIN };
	int n;

	pthread_mutex_unlock(&rs->lock);
	n = poll(&p, 1, ms);
	pthread_mutex_lock(&rs->lock);
	rs_progress(rs);
	return n < 0 ? -1 : 0;
}

int rs_usable(struct rs *rs)
{
	switch (rs->state) {
	case RS_OPEN:
		return 0;
	case RS_ERROR:
		errno = rs->err;
		return -1;
	case RS_CLOSED:
		errno = EPIPE;
		return -1;
	case RS_CONNECTING:
	case RS_RESOLVING:
		errno = EAGAIN;
		return -1;
	default:
		errno = ENOTCONN;
		return -1;
	}
}

int rbind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct rs *rs = rs_get_locked(fd);
	int ret;

	if (!rs)
		return -1;
	if (!addr || len < cm_addr_len(addr) || !cm_addr_len(addr)) {
		errno = EINVAL;
		ret = -1;
	} else {
		ret = rdma_bind_addr(rs->id, (struct sockaddr *)addr);
	}
	rs_unlock(rs);
	return ret;
}

int rlisten(int fd, int backlog)
{
	struct rs *rs = rs_get_locked(fd);
	int ret;

	if (!rs)
		return -1;
	rs->backlog = backlog < 1 ? 1 : backlog > RS_BACKLOG ? RS_BACKLOG : backlog;
	ret = rdma_listen(rs->id, backlog);
	if (!ret)
		rs->state = RS_LISTEN;
	rs_unlock(rs);
	return ret;
}

void rs_copy_addr(struct sockaddr *to, socklen_t *len, const struct sockaddr *from)
{
	socklen_t n = cm_addr_len(from);

	if (!to || !len)
		return;
	memcpy(to, from, *len < n ? *len : n);
	*len = n;
}

/* Answer the request id with a socket of its own: its number, or -1 with errno. */
static int rs_accept_one(struct rs *lrs, struct rdma_cm_id *id, struct sockaddr *addr,
			 socklen_t *len)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param p;
	struct rs *rs = NULL;
	int err;

	if (!ch || rdma_migrate_id(id, ch))
		goto fail;
	rs = rs_new(lrs->domain, ch, id);
	if (!rs)
		goto fail;
	rs_conn_param(&p);
	if (rs_setup(rs) || rdma_accept(id, &p))
		goto fail;
	rs->state = RS_CONNECTING;	/* sends wait for ESTABLISHED; receives are posted */
	rs_copy_addr(addr, len, rdma_get_peer_addr(id));
	return rs->fd;
fail:
	err = errno;
	rdma_reject(id, NULL, 0);
	if (rs) {
		rs->state = RS_ERROR;
		rclose(rs->fd);
	} else {
		rdma_destroy_id(id);
		if (ch)
			rdma_destroy_event_channel(ch);
	}
	errno = err;
	return -1;
}

int raccept(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct rs *rs = rs_get_locked(fd);
	struct rdma_cm_id *id;
	int ret = -1;

	if (!rs)
		return -1;
	while (rs->state == RS_LISTEN && !rs->nreq) {
		if (rs->nonblock) {
			errno = EAGAIN;
			goto out;
		}
		if (rs_wait(rs, -1))
			goto out;
	}
	if (rs->state != RS_LISTEN) {
		errno = rs->state == RS_ERROR ? rs->err : EINVAL;
		goto out;
	}
	id = rs->req[0];
	memmove(rs->req, rs->req + 1, --rs->nreq * sizeof(rs->req[0]));
	ret = rs_accept_one(rs, id, addr, len);
out:
	rs_unlock(rs);
	return ret;
}

int rconnect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct rs *rs = rs_get_locked(fd);
	int ret = -1;

	if (!rs)
		return -1;
	if (rs->state != RS_IDLE) {
		errno = rs->state == RS_OPEN ? EISCONN : rs->state == RS_LISTEN ? EINVAL :
										  EALREADY;
		goto out;
	}
	if (!addr || !cm_addr_len(addr) || len < cm_addr_len(addr)) {
		errno = EINVAL;
		goto out;
	}
	if (rdma_resolve_addr(rs->id, NULL, (struct sockaddr *)addr, 2000))
		goto out;
	rs->state = RS_RESOLVING;
	rs_progress(rs);
	while (rs->state == RS_RESOLVING || rs->state == RS_CONNECTING) {
		if (rs->nonblock) {
			errno = EINPROGRESS;
			goto out;
		}
		if (rs_wait(rs, -1))
			goto out;
	}
	if (rs->state == RS_ERROR) {
		errno = rs->err;
		goto out;
	}
	ret = 0;
out:
	rs_unlock(rs);
	return ret;
}

int rshutdown(int fd, int how)
{
	struct rs *rs = rs_get_locked(fd);

	if (!rs)
		return -1;
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) {
		rs_unlock(rs);
		errno = EINVAL;
		return -1;
	}
	if (how != SHUT_WR)
		rs->shut_rd = true;
	if (how != SHUT_RD && rs->cq && !rs->fin_sent) {
		rs->fin_want = true;
		rs_progress(rs);
	}
	rs_unlock(rs);
	return 0;
}

/* Let the peer have our FIN and what we sent before it, for a while (rclose). */
static void rs_drain(struct rs *rs)
{
	uint64_t end = iwx_now_ms() + RS_CLOSE_MS;

	if (!rs->fin_sent)
		rs->fin_want = true;
	rs_progress(rs);
	while (rs->state == RS_OPEN && (!rs->fin_sent || rs->inflight) && iwx_now_ms() < end) {
		if (rs_wait(rs, (int)(end - iwx_now_ms())))
			break;
	}
}

int rclose(int fd)
{
	struct rs *rs = rs_get_locked(fd);

	if (!rs)
		return -1;
	if (rs->state == RS_OPEN)
		rs_drain(rs);
	if (rs->state == RS_OPEN || rs->state == RS_CONNECTING || rs->state == RS_CLOSED)
		rdma_disconnect(rs->id);
	for (uint32_t i = 0; i < rs->nreq; i++) {
		rdma_reject(rs->req[i], NULL, 0);
		rdma_destroy_id(rs->req[i]);
	}
	rs_table_set(fd, NULL);
	rs_iomap_free(rs);
	if (rs->id->qp)
		rdma_destroy_qp(rs->id);
	if (rs->mr)
		ibv_dereg_mr(rs->mr);
	free(rs->mem);
	if (rs->cq)
		ibv_destroy_cq(rs->cq);
	if (rs->cc)
		ibv_destroy_comp_channel(rs->cc);
	if (rs->pd)
		ibv_dealloc_pd(rs->pd);
	rdma_destroy_id(rs->id);
	rdma_destroy_event_channel(rs->ch);
	close(rs->fd);
	rs_unlock(rs);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
	return 0;
}
