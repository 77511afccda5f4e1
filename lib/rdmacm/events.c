// SPDX-License-Identifier: MIT
/*
 * Event channels, and libiwx's connection events as rdma_cm delivers them for iWARP
 * (the kernel's cma_iw_handler): a connect refused or reset is REJECTED with
 * -ECONNREFUSED, a time-out UNREACHABLE with -ETIMEDOUT, any other failure
 * CONNECT_ERROR; a stream's end, whatever ended it, DISCONNECTED, once.
 *
 * A channel's fd is an epoll of the device's event fd and an eventfd of its own, set
 * while the channel has events queued: whoever reads the device's events hands each
 * to its id's channel, so a channel polls as rdma-core's and holds only its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "util/level.h"

#include "cm.h"
#include "util/clock.h"

struct cm cm = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Keep own_fd readable exactly while events are queued (cm.lock held). */
static void show_queued(struct cm_channel *c)
{
	iwx_level_set(c->own_fd, &c->own_set, c->head != NULL);
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cm_channel *c;
	int err = 0;

	pthread_mutex_lock(&cm.lock);
	if (cm_init())
		err = errno;
	pthread_mutex_unlock(&cm.lock);
	if (err) {
		errno = err;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->tail = &c->head;
	/* the device's socket and queue themselves, not its iwx_event_fd: an id without a
	   channel of the application's makes one of its own (iwxv_watch) */
	err = iwx_level_new(&c->ch.fd, &c->own_fd);
	if (!err && (err = iwxv_watch(cm.ctx, c->ch.fd, false)))
		iwx_level_drop(&c->ch.fd, &c->own_fd, err);
	if (err) {
		free(c);
		errno = -err;
		return NULL;
	}
	return &c->ch;
}

/*
 * A thread may still wait in rdma_get_cm_event (rping 44's cm_thread does, while main
 * destroys the channel and returns): rdma-core's waits on for good in its read(), for no
 * event comes to a closed channel, and so does ours; the channel and its descriptors
 * stay for it. Closed under it, the waiter would wake at the next reply iwxd sends to
 * anyone, find the descriptor gone and fail, and rping exits 255.
 */
void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_channel *c = (struct cm_channel *)channel;
	bool waited;

	pthread_mutex_lock(&cm.lock);
	while (c->head) {
		struct cm_event *e = c->head;

		c->head = e->next;
		free(e);
	}
	c->tail = &c->head;
	waited = c->waiters > 0;
	c->dead = waited;
	pthread_mutex_unlock(&cm.lock);
	if (waited)
		return;
	close(c->own_fd);
	close(c->ch.fd);
	free(c);
}

struct rdma_cm_event *cm_queue(struct cm_id *id, enum rdma_cm_event_type type, int status,
			       const struct rdma_conn_param *param, const void *pd, uint8_t pd_len)
{
	struct cm_channel *c = id->chan;
	struct cm_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;	/* out of memory: the event is lost, as libiwx would lose it */
	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	if (param)
		e->ev.param.conn = *param;
	if (pd && pd_len) {
		memcpy(e->private_data, pd, pd_len);
		e->ev.param.conn.private_data = e->private_data;
		e->ev.param.conn.private_data_len = pd_len;
	}
	*c->tail = e;
	c->tail = &e->next;
	show_queued(c);
	return &e->ev;
}

/* Take id's queued events (its own, and a listener's requests) out of its channel, in order. */
static struct cm_event *unqueue(struct cm_id *id)
{
	struct cm_channel *c = id->chan;
	struct cm_event **pp = &c->head, *taken = NULL, **tail = &taken;

	while (*pp) {
		struct cm_event *e = *pp;

		if (e->ev.id == &id->id || e->ev.listen_id == &id->id) {
			*pp = e->next;
			e->next = NULL;
			*tail = e;
			tail = &e->next;
		} else {
			pp = &e->next;
		}
	}
	c->tail = pp;
	show_queued(c);
	return taken;
}

void cm_forget(struct cm_id *id)
{
	struct cm_event *e = unqueue(id);

	while (e) {
		struct cm_event *next = e->next;

		free(e);
		e = next;
	}
}

/* A request's new id is on its listener's channel until it is taken (rdma-core's too). */
static void set_channel(struct cm_id *id, struct rdma_event_channel *channel)
{
	id->id.channel = channel;
	id->chan = (struct cm_channel *)channel;
}

void cm_move(struct cm_id *id, struct rdma_event_channel *to)
{
	struct cm_event *e = unqueue(id);

	set_channel(id, to);
	*id->chan->tail = e;
	for (; e; e = e->next) {
		if (e->ev.id != &id->id)
			set_channel(cm_id_of(e->ev.id), to);
		id->chan->tail = &e->next;
	}
	show_queued(id->chan);
}

/* The id whose connection is qp, or listens as l. */
static struct cm_id *id_of(const struct iwx_qp *qp, const struct iwx_listener *l)
{
	for (struct cm_id *i = cm.ids; i; i = i->next) {
		if (qp && i->conn_qp && iwxv_iwx_qp(i->conn_qp) == qp)
			return i;
		if (l && i->listener == l)
			return i;
	}
	return NULL;
}

/* rdma_conn_param's private_data_len is a byte: MPA's 512 do not all fit */
static uint8_t pd_len(const struct iwx_event *ev)
{
	return (uint8_t)(ev->private_data_len > UINT8_MAX ? UINT8_MAX : ev->private_data_len);
}

/* A connection request on listener: a new id, on the listener's channel (cm.lock held). */
static void requested(struct cm_id *lid, const struct iwx_event *ev)
{
	struct cm_id *id = calloc(1, sizeof(*id));
	struct rdma_cm_event *e;
	/* the peer's: its ORD is what it wants of our IRD, and the other way round */
	struct rdma_conn_param p = { .responder_resources = (uint8_t)ev->info.ord,
				     .initiator_depth = (uint8_t)ev->info.ird };

	if (!id) {
		iwxv_ctx_lock(cm.ctx);
		iwx_reject(iwxv_device(cm.ctx), ev->conn_id, NULL, 0);
		iwxv_ctx_unlock(cm.ctx);
		return;
	}
	id->id = (struct rdma_cm_id){
		.verbs = cm.ctx, .channel = lid->id.channel, .context = lid->id.context,
		.ps = lid->id.ps, .port_num = 1, .qp_type = IBV_QPT_RC,
	};
	memcpy(&id->id.route.addr.src_storage, &ev->info.local, sizeof(ev->info.local));
	memcpy(&id->id.route.addr.dst_storage, &ev->info.peer, sizeof(ev->info.peer));
	id->chan = lid->chan;
	id->conn_id = ev->conn_id;
	id->requested = id->passive = true;
	id->next = cm.ids;
	cm.ids = id;
	e = cm_queue(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &p, ev->private_data,
		     pd_len(ev));
	if (e)
		e->listen_id = &lid->id;
}

/*
 * A connect refused by TCP (nobody listening) within RETRY_MS of rdma_connect is tried
 * again: programs tell their peer where to connect before they listen (qperf 0.4.11
 * does), a race the kernel's slower address resolution usually hides. The listener
 * answers within milliseconds; a peer that rejects in MPA is not retried.
 */
#define RETRY_MS	2000
#define RETRY_GAP_US	10000

static bool refused_early(struct cm_id *id)
{
	if (iwx_now_ms() - id->connect_ms > RETRY_MS)
		return false;
	usleep(RETRY_GAP_US);
	return cm_connect(id) == 0;
}

/* One libiwx event as rdma_cm's (cm.lock held). */
static void translate(const struct iwx_event *ev)
{
	struct rdma_conn_param p = { .responder_resources = (uint8_t)ev->info.ird,
				     .initiator_depth = (uint8_t)ev->info.ord };
	struct cm_id *id;

	if (ev->type == IWX_EVENT_DEVICE_LOST) {
		for (id = cm.ids; id; id = id->next)
			cm_queue(id, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, NULL, NULL, 0);
		return;
	}
	if (ev->type == IWX_EVENT_CONNECT_REQUEST) {
		id = id_of(NULL, ev->listener);
		if (id) {
			requested(id, ev);
		} else {
			iwxv_ctx_lock(cm.ctx);
			iwx_reject(iwxv_device(cm.ctx), ev->conn_id, NULL, 0);
			iwxv_ctx_unlock(cm.ctx);
		}
		return;
	}
	id = id_of(ev->qp, NULL);
	if (!id)
		return;	/* its id is gone */
	switch (ev->type) {
	case IWX_EVENT_ESTABLISHED:
		id->conn_qp->state = IBV_QPS_RTS;
		id->established = true;
		/* the connection's own addresses, as rdma_get_local_addr then gives the kernel's */
		if (ev->info.local.ss_family && ev->info.peer.ss_family) {
			id->id.route.addr.src_storage = ev->info.local;
			id->id.route.addr.dst_storage = ev->info.peer;
		}
		/* rdma_cm gives the reply's private data to the active side alone */
		cm_queue(id, RDMA_CM_EVENT_ESTABLISHED, 0, &p, ev->private_data,
			 id->passive ? 0 : pd_len(ev));
		break;
	case IWX_EVENT_REJECTED:
		cm_queue(id, RDMA_CM_EVENT_REJECTED, -ECONNREFUSED, NULL, ev->private_data,
			 pd_len(ev));
		break;
	case IWX_EVENT_UNREACHABLE:
		if (ev->status == -ECONNREFUSED && refused_early(id))
			break;	/* tried again */
		cm_queue(id, ev->status == -ECONNREFUSED || ev->status == -ECONNRESET ?
				     RDMA_CM_EVENT_REJECTED :
			     ev->status == -ETIMEDOUT ? RDMA_CM_EVENT_UNREACHABLE :
							RDMA_CM_EVENT_CONNECT_ERROR,
			 ev->status, NULL, NULL, 0);
		break;
	case IWX_EVENT_DISCONNECTED:
		if (id->disconnected)
			break;
		id->disconnected = true;
		id->conn_qp->state = IBV_QPS_ERR;
		cm_queue(id, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, NULL, 0);
		break;
	default:
		break;
	}
}

void cm_pump(void)
{
	struct iwx_event ev;

	for (;;) {
		int err;

		iwxv_ctx_lock(cm.ctx);
		err = iwx_get_event(iwxv_device(cm.ctx), &ev, 0);
		iwxv_ctx_unlock(cm.ctx);
		if (err)
			return;
		translate(&ev);
	}
}

static bool nonblocking(int fd)
{
	return fcntl(fd, F_GETFL) & O_NONBLOCK;
}

/* A waiter on a channel destroyed under it (rdma_destroy_event_channel), cm.lock held. */
static _Noreturn void wait_for_good(void)
{
	pthread_mutex_unlock(&cm.lock);
	for (;;)
		pause();
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cm_channel *c = (struct cm_channel *)channel;
	struct cm_event *got = NULL;
	int err = 0;

	if (!event) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm.lock);
	c->waiters++;
	for (;;) {
		struct epoll_event e;
		int n;

		if (c->dead)
			wait_for_good();
		cm_pump();
		got = c->head;
		if (got) {
			c->head = got->next;
			if (!c->head)
				c->tail = &c->head;
			show_queued(c);
			break;
		}
		if (nonblocking(channel->fd)) {
			err = EAGAIN;
			break;
		}
		/* woken by any reply iwxd sends this process, not only by this channel's events */
		pthread_mutex_unlock(&cm.lock);
		n = epoll_wait(channel->fd, &e, 1, -1);
		err = errno;
		pthread_mutex_lock(&cm.lock);
		if (n < 0 && !c->dead)
			break;	/* EINTR too, as rdma-core's read() of its fd */
	}
	c->waiters--;
	pthread_mutex_unlock(&cm.lock);
	if (!got) {
		errno = err;
		return -1;
	}
	*event = &got->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	free(event);	/* the struct cm_event it begins */
	return 0;
}

int cm_sync_wait(struct cm_id *id, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int status;
	enum rdma_cm_event_type got;

	if (rdma_get_cm_event(id->id.channel, &ev))
		return -1;
	got = ev->event;
	status = ev->status;
	id->id.event = NULL;
	rdma_ack_cm_event(ev);
	if (got == want)
		return 0;
	errno = status < 0 ? -status : ECONNREFUSED;
	return -1;
}

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned)event < sizeof(names) / sizeof(names[0]) ? names[event] :
								    "UNKNOWN EVENT";
}
