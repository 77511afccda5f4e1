// SPDX-License-Identifier: MIT
/*
 * rdma_cm ids over libiwx: address and route resolution (local: the kernel's routing
 * of this network namespace chooses the source; iwxd makes the TCP connection), bind,
 * listen, connect, accept, reject, disconnect. Their outcomes arrive as events
 * (events.c) in rdma_cm's order: ADDR_RESOLVED, ROUTE_RESOLVED, then ESTABLISHED (or
 * REJECTED, UNREACHABLE, CONNECT_ERROR) on the active side; CONNECT_REQUEST, then
 * ESTABLISHED on the passive; DISCONNECTED on both when the stream ends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cm.h"
#include "util/clock.h"
#include "util/say_once.h"

static int fail(int err)
{
	errno = err;
	return -1;
}

/*
 * A QP going (ibv_destroy_qp or rdma_destroy_qp): an iwx QP is its connection, so the id
 * that connected it is disconnected, as the kernel's rdma_cm tells it once the QP's
 * stream closes; and forgets the QP.
 */
static void qp_destroyed(struct ibv_qp *qp)
{
	pthread_mutex_lock(&cm.lock);
	for (struct cm_id *id = cm.ids; id; id = id->next) {
		if (id->conn_qp != qp)
			continue;
		id->conn_qp = NULL;
		if (id->established && !id->disconnected) {
			id->disconnected = true;
			cm_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL, 0);
		}
	}
	pthread_mutex_unlock(&cm.lock);
}

int cm_init(void)
{
	if (cm.ctx)
		return 0;
	cm.ctx = iwxv_open_default();	/* says why on failure */
	if (cm.ctx)
		iwxv_on_qp_destroy(qp_destroyed);
	return cm.ctx ? 0 : -1;
}

socklen_t cm_addr_len(const struct sockaddr *a)
{
	return !a ? 0 : a->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
			a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **out, void *context,
		   enum rdma_port_space ps)
{
	struct cm_id *id;
	bool sync = !channel;

	if (ps != RDMA_PS_TCP) {
		/* programs such as udaddy and mckey exit silently on it: say why, once */
		static bool said;

		iwx_say_once(&said, "librdmacm (iwx): port space %#x: iWARP has reliable "
			     "connections (RDMA_PS_TCP) only, no UD or multicast\n", ps);
		return fail(EOPNOTSUPP);
	}
	if (sync && !(channel = rdma_create_event_channel()))
		return -1;
	id = calloc(1, sizeof(*id));
	if (!id) {
		if (sync)
			rdma_destroy_event_channel(channel);
		return -1;
	}
	id->id = (struct rdma_cm_id){ .channel = channel, .context = context, .ps = ps,
				      .qp_type = IBV_QPT_RC };
	id->chan = (struct cm_channel *)channel;
	id->sync = sync;
	pthread_mutex_lock(&cm.lock);
	id->next = cm.ids;
	cm.ids = id;
	pthread_mutex_unlock(&cm.lock);
	*out = &id->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *cid)
{
	struct cm_id *id = cm_id_of(cid);

	pthread_mutex_lock(&cm.lock);
	iwxv_ctx_lock(cm.ctx);
	if (id->listener)
		iwx_listener_destroy(id->listener);
	if (id->requested)	/* a request never answered: refuse it now */
		iwx_reject(iwxv_device(cm.ctx), id->conn_id, NULL, 0);
	iwxv_ctx_unlock(cm.ctx);
	cm_forget(id);
	for (struct cm_id **pp = &cm.ids; *pp; pp = &(*pp)->next)
		if (*pp == id) {
			*pp = id->next;
			break;
		}
	pthread_mutex_unlock(&cm.lock);
	if (id->sync)
		rdma_destroy_event_channel(cid->channel);
	free(id);
	return 0;
}

static __be16 port_of(const struct sockaddr *a)
{
	return a->sa_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_port :
	       a->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)a)->sin6_port : 0;
}

/*
 * Port 0: the kernel's rdma_cm gives a port at bind, which programs read back
 * (rdma_get_src_port) and send to their peer before they listen (qperf). Take one the
 * kernel has free for TCP here; iwxd listens on it, with address reuse, at rdma_listen.
 */
static int pick_port(struct sockaddr_storage *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)a, cm_addr_len((struct sockaddr *)a)) ||
	    getsockname(fd, (struct sockaddr *)a, &len))
		err = errno;
	close(fd);
	return err;
}

/*
 * Whether a bound id has a device: the kernel's rdma_cm gives it the RNIC whose interface
 * has the address, and none for a wildcard. Nor for loopback, which no RNIC serves (the
 * kernel fails ENODEV there; bound here all the same, for programs on one host).
 * libfabric's verbs provider relies on it: an id bound to "localhost" without a device
 * makes it offer the device's own addresses, where its passive endpoints then listen.
 */
static bool on_device(const struct sockaddr *a)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)a;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)a;

	if (a->sa_family == AF_INET)
		return in->sin_addr.s_addr != htonl(INADDR_ANY) &&
		       ntohl(in->sin_addr.s_addr) >> 24 != IN_LOOPBACKNET;
	return !IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) && !IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

int rdma_bind_addr(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	socklen_t len = cm_addr_len(addr);
	int err;

	if (!len)
		return fail(EAFNOSUPPORT);
	memset(&cid->route.addr.src_storage, 0, sizeof(cid->route.addr.src_storage));
	memcpy(&cid->route.addr.src_storage, addr, len);
	if (!port_of(addr) && (err = pick_port(&cid->route.addr.src_storage)))
		return fail(err);
	cid->verbs = on_device(addr) ? cm.ctx : NULL;
	cid->port_num = cid->verbs ? 1 : 0;
	return 0;
}

/* The source address the kernel would use towards dst (no packet is sent). */
static int source_for(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, dst, cm_addr_len(dst)) || getsockname(fd, (struct sockaddr *)src, &len))
		err = errno;
	close(fd);
	if (!err && src->ss_family == AF_INET)
		((struct sockaddr_in *)src)->sin_port = 0;
	else if (!err)
		((struct sockaddr_in6 *)src)->sin6_port = 0;
	return err;
}

int rdma_resolve_addr(struct rdma_cm_id *cid, struct sockaddr *src, struct sockaddr *dst,
		      int timeout_ms)
{
	struct cm_id *id = cm_id_of(cid);
	struct sockaddr_storage from;
	socklen_t len = cm_addr_len(dst);
	int err;

	(void)timeout_ms;	/* answered at once: the routing table is local */
	if (!len)
		return fail(EAFNOSUPPORT);
	if (src && rdma_bind_addr(cid, src))
		return -1;
	memset(&cid->route.addr.dst_storage, 0, sizeof(cid->route.addr.dst_storage));
	memcpy(&cid->route.addr.dst_storage, dst, len);
	err = source_for(dst, &from);
	if (!err && !src)
		cid->route.addr.src_storage = from;
	cid->verbs = cm.ctx;
	cid->port_num = 1;
	pthread_mutex_lock(&cm.lock);
	cm_queue(id, err ? RDMA_CM_EVENT_ADDR_ERROR : RDMA_CM_EVENT_ADDR_RESOLVED, -err, NULL,
		 NULL, 0);
	pthread_mutex_unlock(&cm.lock);
	return id->sync ? cm_sync_wait(id, RDMA_CM_EVENT_ADDR_RESOLVED) : 0;
}

int rdma_resolve_route(struct rdma_cm_id *cid, int timeout_ms)
{
	struct cm_id *id = cm_id_of(cid);

	(void)timeout_ms;	/* TCP finds its own route */
	if (!cid->route.addr.dst_storage.ss_family)
		return fail(EINVAL);
	pthread_mutex_lock(&cm.lock);
	cm_queue(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL, 0);
	pthread_mutex_unlock(&cm.lock);
	return id->sync ? cm_sync_wait(id, RDMA_CM_EVENT_ROUTE_RESOLVED) : 0;
}

int rdma_listen(struct rdma_cm_id *cid, int backlog)
{
	struct cm_id *id = cm_id_of(cid);
	struct sockaddr *a = &cid->route.addr.src_addr;
	struct sockaddr_storage got;
	int err = 0;

	if (!cm_addr_len(a))
		return fail(EINVAL);	/* bind first */
	pthread_mutex_lock(&cm.lock);
	iwxv_ctx_lock(cm.ctx);
	id->listener = iwx_listen(iwxv_device(cm.ctx), a, cm_addr_len(a), backlog > 0 ? backlog : 128);
	if (!id->listener)
		err = errno;
	else if (!iwx_listener_addr(id->listener, &got))
		cid->route.addr.src_storage = got;	/* the port, when 0 was asked */
	iwxv_ctx_unlock(cm.ctx);
	pthread_mutex_unlock(&cm.lock);
	return err ? fail(err) : 0;
}

/* The queue pair a connect or accept uses: the id's, or the application's by number. */
static struct ibv_qp *qp_for(struct rdma_cm_id *cid, const struct rdma_conn_param *p)
{
	if (cid->qp)
		return cid->qp;
	return p && cm.ctx ? iwxv_qp_by_num(cm.ctx, p->qp_num) : NULL;
}

/* rdma_cm's parameters as libiwx's; 0 (unset) takes iwx's defaults. */
static struct iwx_conn_param param_of(const struct rdma_conn_param *p)
{
	struct iwx_conn_param q = { 0 };

	if (p) {
		q.private_data = p->private_data;
		q.private_data_len = p->private_data ? p->private_data_len : 0;
		q.ird = p->responder_resources;
		q.ord = p->initiator_depth;
	}
	return q;
}

int cm_connect(struct cm_id *id)
{
	struct sockaddr *dst = &id->id.route.addr.dst_addr;
	int err;

	iwxv_ctx_lock(cm.ctx);
	err = iwx_connect(iwxv_iwx_qp(id->conn_qp), dst, cm_addr_len(dst), &id->param);
	iwxv_ctx_unlock(cm.ctx);
	return err;
}

int rdma_connect(struct rdma_cm_id *cid, struct rdma_conn_param *p)
{
	struct cm_id *id = cm_id_of(cid);
	struct ibv_qp *qp = qp_for(cid, p);
	int err;

	if (!qp || !cm_addr_len(&cid->route.addr.dst_addr))
		return fail(EINVAL);	/* resolve the address and make the QP first */
	pthread_mutex_lock(&cm.lock);
	id->conn_qp = qp;
	id->param = param_of(p);
	if (id->param.private_data_len) {
		memcpy(id->param_pd, id->param.private_data, id->param.private_data_len);
		id->param.private_data = id->param_pd;
	}
	id->connect_ms = iwx_now_ms();
	err = -cm_connect(id);
	pthread_mutex_unlock(&cm.lock);
	if (err)
		return fail(err);
	return id->sync ? cm_sync_wait(id, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

int rdma_accept(struct rdma_cm_id *cid, struct rdma_conn_param *p)
{
	struct cm_id *id = cm_id_of(cid);
	struct ibv_qp *qp = qp_for(cid, p);
	struct iwx_conn_param q = param_of(p);
	int err;

	if (!id->requested)
		return fail(EINVAL);	/* not a connection request's id */
	if (!qp)
		return fail(EINVAL);
	pthread_mutex_lock(&cm.lock);
	id->conn_qp = qp;
	iwxv_ctx_lock(cm.ctx);
	err = -iwx_accept(iwxv_iwx_qp(qp), id->conn_id, &q);
	iwxv_ctx_unlock(cm.ctx);
	if (!err)
		id->requested = false;
	pthread_mutex_unlock(&cm.lock);
	if (err)
		return fail(err);
	return id->sync ? cm_sync_wait(id, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

int rdma_reject(struct rdma_cm_id *cid, const void *private_data, uint8_t len)
{
	struct cm_id *id = cm_id_of(cid);
	int err;

	if (!id->requested)
		return fail(EINVAL);
	pthread_mutex_lock(&cm.lock);
	iwxv_ctx_lock(cm.ctx);
	err = -iwx_reject(iwxv_device(cm.ctx), id->conn_id, private_data, private_data ? len : 0);
	iwxv_ctx_unlock(cm.ctx);
	id->requested = false;
	pthread_mutex_unlock(&cm.lock);
	return err ? fail(err) : 0;
}

/*
 * A graceful close (RFC 5040 §6: requests posted before it are sent first). After the
 * stream has ended already, as when the peer closed first, there is nothing to do.
 */
int rdma_disconnect(struct rdma_cm_id *cid)
{
	struct cm_id *id = cm_id_of(cid);
	int err = 0;

	pthread_mutex_lock(&cm.lock);
	if (id->conn_qp) {
		iwxv_ctx_lock(cm.ctx);
		err = -iwx_disconnect(iwxv_iwx_qp(id->conn_qp));
		iwxv_ctx_unlock(cm.ctx);
	}
	pthread_mutex_unlock(&cm.lock);
	if (!id->conn_qp)
		return fail(EINVAL);
	return err && err != ENOTCONN ? fail(err) : 0;
}

int rdma_set_option(struct rdma_cm_id *cid, int level, int optname, void *optval, size_t optlen)
{
	(void)cid, (void)optname, (void)optval, (void)optlen;
	/* TOS, address reuse, v6-only, ACK time-out: TCP's own business under iwxd */
	return level == RDMA_OPTION_ID ? 0 : fail(ENOSYS);
}

__be16 rdma_get_src_port(struct rdma_cm_id *cid)
{
	return port_of(&cid->route.addr.src_addr);
}

__be16 rdma_get_dst_port(struct rdma_cm_id *cid)
{
	return port_of(&cid->route.addr.dst_addr);
}

static void move_to(struct cm_id *id, struct rdma_event_channel *channel, bool sync)
{
	pthread_mutex_lock(&cm.lock);
	cm_move(id, channel);
	id->sync = sync;
	pthread_mutex_unlock(&cm.lock);
}

/*
 * As rdma-core's: to the application's channel, or (NULL) to one of the id's own that its
 * calls wait on; an id that had its own channel loses it.
 */
int rdma_migrate_id(struct rdma_cm_id *cid, struct rdma_event_channel *channel)
{
	struct cm_id *id = cm_id_of(cid);
	struct rdma_event_channel *own = id->sync ? cid->channel : NULL;

	if (!channel)
		return id->sync ? fail(EINVAL) : cm_make_sync(id);
	if (channel == cid->channel)
		return 0;
	move_to(id, channel, false);
	if (own)
		rdma_destroy_event_channel(own);
	return 0;
}

int cm_make_sync(struct cm_id *id)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch)
		return -1;
	move_to(id, ch, true);
	return 0;
}

int rdma_notify(struct rdma_cm_id *cid, enum ibv_event_type event)
{
	(void)cid, (void)event;
	return 0;	/* the connection, not the QP, says when it is established */
}

struct ibv_context **rdma_get_devices(int *num)
{
	struct ibv_context **list = calloc(2, sizeof(*list));

	if (!list)
		return NULL;
	pthread_mutex_lock(&cm.lock);
	if (!cm_init())
		list[0] = cm.ctx;
	pthread_mutex_unlock(&cm.lock);
	if (num)
		*num = list[0] ? 1 : 0;
	return list;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

int rdma_join_multicast(struct rdma_cm_id *cid, struct sockaddr *addr, void *context)
{
	(void)cid, (void)addr, (void)context;
	return fail(EOPNOTSUPP);	/* a connection stack: no datagrams */
}

int rdma_leave_multicast(struct rdma_cm_id *cid, struct sockaddr *addr)
{
	(void)cid, (void)addr;
	return fail(EOPNOTSUPP);
}

int rdma_join_multicast_ex(struct rdma_cm_id *cid, struct rdma_cm_join_mc_attr_ex *attr,
			   void *context)
{
	(void)cid, (void)attr, (void)context;
	return fail(EOPNOTSUPP);
}

int rdma_set_local_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	(void)cid, (void)ece;
	return fail(EOPNOTSUPP);
}

int rdma_get_remote_ece(struct rdma_cm_id *cid, struct ibv_ece *ece)
{
	(void)cid, (void)ece;
	return fail(EOPNOTSUPP);
}

int rdma_reject_ece(struct rdma_cm_id *cid, const void *private_data, uint8_t len)
{
	return rdma_reject(cid, private_data, len);
}
