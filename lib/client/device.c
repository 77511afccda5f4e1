// SPDX-License-Identifier: MIT
/* A libiwx device: the connection to iwxd, its arena, requests and connection events. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/level.h"
#include "proto/term.h"
#include "util/clock.h"

#include "client.h"
#include "opts.h"

#define DEFAULT_ARENA	(64u << 20)
#define CALL_TIMEOUT_MS	10000	/* iwxd answers at once; longer means it is stuck */
#define ALLOC_ALIGN	64
#define SPIN_US		100	/* $IWX_SPIN_US's default */
#define SPIN_US_MAX	1000000
#define LOOK_MS		100	/* client_lost looks at the socket at most this often */
#define PUMP_MAX	64	/* messages iwx_get_async_event takes off the socket at a time */

_Static_assert((int)IWX_EVENT_DISCONNECTED == IWX_IPC_EV_DISCONNECTED, "event numbering");
_Static_assert(IWX_MAX_PRIVATE_DATA == IWX_IPC_PRIVDATA, "private data");

/*
 * Keep ready_fd set exactly while iwx_get_event has something to give without reading
 * the socket: any call that waits for a reply may have queued events off it, and the
 * application's poll() on iwx_event_fd must still see them.
 */
static void show_ready(struct iwx_device *dev)
{
	iwx_level_set(dev->ready_fd, &dev->ready, dev->events || (dev->lost && !dev->lost_told));
}

static void lose(struct iwx_device *dev)
{
	if (!dev->lost) {
		dev->lost = true;
		/* hung up on our side too, whatever the cause: iwx_async_fd reads */
		shutdown(dev->sock, SHUT_RDWR);
		IWX_LINK_EACH(struct iwx_qp, q, &dev->qps, link)
			__atomic_store_n(&q->sh->state, IWX_SHQ_ERROR, __ATOMIC_RELEASE);
		show_ready(dev);
	}
}

/* Append a copy of ev to the list at *tail; false when out of memory. */
static bool queue_on(struct pending_event ***tail, const struct iwx_ipc_event *ev)
{
	struct pending_event *p = malloc(sizeof(*p));

	if (!p)
		return false;	/* out of memory: the event is lost, as a dropped datagram would be */
	p->ev = *ev;
	p->next = NULL;
	**tail = p;
	*tail = &p->next;
	return true;
}

static void queue_event(struct iwx_device *dev, const struct iwx_ipc_event *ev)
{
	bool async = ev->type >= IWX_IPC_EV_SRQ_LIMIT;	/* an asynchronous event alone */

	if (!async) {
		queue_on(&dev->events_tail, ev);
		show_ready(dev);
	}
	/* a stream that ended with a Terminate is its queue pair's asynchronous event too */
	if ((async || (ev->type == IWX_IPC_EV_DISCONNECTED && ev->terminated)) &&
	    queue_on(&dev->asyncs_tail, ev))
		iwx_level_set(dev->async_ready_fd, &dev->async_ready, true);
}

/* Every message iwxd sends a device: an event, or a reply to one of its requests. */
union inbound {
	struct iwx_ipc_event		ev;
	struct iwx_ipc_why		why;
	struct iwx_ipc_hello		hello;
	struct iwx_ipc_id		id;
	struct iwx_ipc_mr_reg		mr;
	struct iwx_ipc_cq_create	cq;
	struct iwx_ipc_qp_create	qp;
	struct iwx_ipc_listen		listen;
};

void (*client_why_shown)(const char *why);

/*
 * Why this thread's last request failed, as iwxd said: its errno, and the line; and room
 * for iwx_strerror's. A key's, not __thread: that would make libiwx need the dynamic
 * linker's __tls_get_addr, where it needs libc alone.
 */
struct why {
	int	err;
	char	text[IWX_IPC_WHY_MAX];
	char	line[IWX_IPC_WHY_MAX + 128];
};

static pthread_key_t why_key;
static pthread_once_t why_once = PTHREAD_ONCE_INIT;
static bool why_keyed;

static void why_key_make(void)
{
	why_keyed = !pthread_key_create(&why_key, free);
}

/* This thread's, made if make (NULL: none, or no memory for one). */
static struct why *why_here(bool make)
{
	struct why *w;

	pthread_once(&why_once, why_key_make);
	if (!why_keyed)
		return NULL;
	w = pthread_getspecific(why_key);
	if (!w && make && (w = calloc(1, sizeof(*w))) && pthread_setspecific(why_key, w)) {
		free(w);
		w = NULL;
	}
	return w;
}

static void told_why(int err, const char *text, size_t len)
{
	static bool shown;
	struct why *w = why_here(true);

	if (!w)
		return;
	len = strnlen(text, len < sizeof(w->text) ? len : sizeof(w->text) - 1);
	memcpy(w->text, text, len);
	w->text[len] = 0;
	w->err = -err;
	if (client_why_shown && !__atomic_exchange_n(&shown, true, __ATOMIC_RELAXED))
		client_why_shown(w->text);
}

/* Receive one message, waiting up to timeout_ms; events are queued, a reply returned. */
static int receive(struct iwx_device *dev, struct iwx_ipc_hdr *h, void *body, size_t cap,
		   int *fds, unsigned *nfds, int timeout_ms)
{
	struct pollfd p = { .fd = dev->sock, .events = POLLIN };
	union inbound in;
	int n;

	if (dev->lost)
		return -ESHUTDOWN;
	n = poll(&p, 1, timeout_ms);
	if (n <= 0)
		return n == 0 ? -EAGAIN : -errno;
	n = iwx_ipc_recv(dev->sock, h, &in, sizeof(in), fds, nfds);
	if (n == -ECONNRESET || n == -EPROTO) {
		lose(dev);
		n = -ESHUTDOWN;
	} else if (n >= 0 && h->op == IWX_IPC_EVENT) {
		if ((size_t)n == sizeof(in.ev))
			queue_event(dev, &in.ev);
		n = -EINTR;	/* not a reply */
	} else if (n > 0 && h->status < 0 && (h->flags & IWX_IPC_F_WHY)) {
		told_why(h->status, in.why.text, (size_t)n);
	} else if (n > 0 && cap) {
		memcpy(body, &in, (size_t)n < cap ? (size_t)n : cap);
	}
	return n;
}

int client_call(struct iwx_device *dev, uint16_t op, const void *req, uint32_t req_len,
		void *rep, uint32_t rep_cap, int *fds, unsigned *nfds)
{
	struct iwx_ipc_hdr h = { .op = op, .seq = ++dev->seq, .len = req_len };
	struct why *why;
	unsigned none = 0;
	int err;

	if (!nfds)
		nfds = &none;
	why = why_here(false);
	if (why)
		why->text[0] = 0;
	if (dev->lost)
		return -ESHUTDOWN;
	err = iwx_ipc_send(dev->sock, &h, req, NULL, 0);
	if (err) {
		lose(dev);
		return -ESHUTDOWN;
	}
	for (;;) {
		struct iwx_ipc_hdr r;
		unsigned want = *nfds;

		err = receive(dev, &r, rep, rep_cap, fds, &want, CALL_TIMEOUT_MS);
		if (err == -EINTR)
			continue;	/* an event came first */
		if (err < 0)
			return err == -EAGAIN ? -ETIMEDOUT : err;
		*nfds = want;
		if (r.seq != h.seq || r.op != op) {
			for (unsigned i = 0; i < want; i++)
				close(fds[i]);
			lose(dev);
			return -ESHUTDOWN;
		}
		return r.status;
	}
}

int client_pump(struct iwx_device *dev)
{
	struct iwx_ipc_hdr h;
	int err = receive(dev, &h, NULL, 0, NULL, NULL, 0);

	return err == -ESHUTDOWN ? err : 0;
}

/* client_pump: true when it took a message (and the device is not lost). */
static bool pump_one(struct iwx_device *dev)
{
	struct iwx_ipc_hdr h;
	int err = receive(dev, &h, NULL, 0, NULL, NULL, 0);

	return err != -EAGAIN && err != -ESHUTDOWN;
}

bool iwx_lost(struct iwx_device *dev)
{
	struct pollfd p = { .fd = dev->sock };	/* a hang-up is reported unasked */

	if (!dev->lost && poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
		lose(dev);
	return dev->lost;
}

bool client_lost(struct iwx_device *dev)
{
	uint64_t now;

	if (dev->lost)
		return true;
	now = iwx_now_ms();
	if (now < dev->look_ms)
		return false;
	dev->look_ms = now + LOOK_MS;
	return iwx_lost(dev);
}

void client_ring(struct iwx_device *dev, uint32_t bell)
{
	uint64_t one = 1;
	int cpu = sched_getcpu();

	/* for iwxd's spin (serve.c): whose CPU it would take; written only when it moved */
	if (cpu >= 0 && __atomic_load_n(&dev->bells->client_cpu, __ATOMIC_RELAXED) != (uint32_t)cpu + 1)
		__atomic_store_n(&dev->bells->client_cpu, (uint32_t)cpu + 1, __ATOMIC_RELAXED);
	iwx_ipc_bell_ring(dev->bells, bell);
	/* pairs with the daemon's: publish need_wakeup, then look at the doorbells */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dev->bells->need_wakeup, __ATOMIC_ACQUIRE) &&
	    write(dev->bell_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow in practice; a dead daemon shows elsewhere */
	}
}

const char *iwx_socket_path(const struct iwx_open_opts *opts)
{
	/* opts iwx_open refuses name no socket of their own: not read */
	return iwx_ipc_socket_path(opts_valid(opts, sizeof(*opts)) ? OPT(opts, socket, NULL) : NULL);
}

/* How long iwx_wait_cq polls before it sleeps: $IWX_SPIN_US (µs), else the default. */
static uint32_t spin_us(void)
{
	const char *s = getenv("IWX_SPIN_US");
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return SPIN_US;
	v = strtoul(s, &end, 10);
	return *end || v > SPIN_US_MAX ? SPIN_US : (uint32_t)v;
}

struct iwx_device *iwx_open(const struct iwx_open_opts *opts)
{
	struct iwx_ipc_hello hello = { .version = IWX_IPC_VERSION };
	struct iwx_device *dev;
	int fds[4] = { -1, -1, -1, -1 }, err;
	unsigned nfds = 4;

	if (!opts_valid(opts, sizeof(*opts))) {
		errno = EINVAL;
		return NULL;
	}
	hello.arena_size = OPT(opts, arena_size, 0) ?: DEFAULT_ARENA;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->bell_fd = dev->notify_fd = dev->event_fd = dev->async_fd = -1;
	dev->events_tail = &dev->events;
	dev->asyncs_tail = &dev->asyncs;
	dev->spin_us = spin_us();
	iwx_link_init(&dev->qps);
	dev->ready_fd = -1;
	dev->sock = iwx_ipc_connect(iwx_socket_path(opts), 0);
	if (dev->sock < 0) {
		err = dev->sock;
		goto fail;
	}
	/* one descriptor to poll: readable when the socket or the queue has an event */
	err = iwx_level_join(dev->sock, &dev->event_fd, &dev->ready_fd);
	if (err)
		goto fail;
	/* the socket (a message may be a queue pair's end; a hang-up, iwxd's) and the queue */
	err = iwx_level_join(dev->sock, &dev->async_fd, &dev->async_ready_fd);
	if (err)
		goto fail;
	err = client_call(dev, IWX_IPC_HELLO, &hello, sizeof(hello), &hello, sizeof(hello), fds,
			  &nfds);
	if (!err && nfds != 4)
		err = -EPROTO;
	if (err)
		goto fail;
	dev->bell_fd = fds[1];
	dev->notify_fd = fds[2];
	dev->client_id = hello.client_id;
	dev->arena_size = hello.arena_size;
	dev->cq_futex = hello.features & IWX_IPC_F_CQ_FUTEX;
	dev->rfc7306 = hello.features & IWX_IPC_F_RFC7306;
	dev->limits = (struct iwx_device_limits){
		.max_shared = hello.max_shared, .max_pds = hello.max_pds, .max_mrs = hello.max_mrs,
		.max_cqs = hello.max_cqs, .max_qps = hello.max_qps, .max_srqs = hello.max_srqs,
		.max_qp_depth = hello.max_qp_depth, .max_cq_entries = hello.max_cq_entries,
		.max_sge = IWX_MAX_SGE, .max_private_data = IWX_MAX_PRIVATE_DATA,
		.max_rd_atomic = IWX_MAX_RD_ATOMIC,
	};
	dev->arena = mmap(NULL, dev->arena_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	dev->bells = mmap(NULL, IWX_IPC_BELLS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[3], 0);
	close(fds[0]);
	close(fds[3]);
	fds[0] = fds[1] = fds[2] = fds[3] = -1;
	if (dev->arena == MAP_FAILED || dev->bells == MAP_FAILED) {
		err = -errno;
		if (dev->arena == MAP_FAILED)
			dev->arena = NULL;
		if (dev->bells == MAP_FAILED)
			dev->bells = NULL;
		goto fail;
	}
	arena_alloc_init(&dev->alloc, dev->arena_size);
	return dev;
fail:
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	iwx_close(dev);
	errno = -err;
	return NULL;
}

void iwx_close(struct iwx_device *dev)
{
	if (!dev)
		return;
	/* the daemon tears down what we made when the socket closes; free our side */
	IWX_LINK_EACH(struct iwx_qp, q, &dev->qps, link) {
		munmap(q->sh, q->map_size);
		free(q->swq.wr_id);
		free(q);
	}
	iwx_ids_fini(&dev->qp_nums);
	srq_free_all(dev);
	while (dev->cqs) {
		struct iwx_cq *cq = dev->cqs;

		dev->cqs = cq->next;
		munmap(cq->sh, cq->map_size);
		free(cq);
	}
	while (dev->mrs) {
		struct mr_entry *e = dev->mrs;

		dev->mrs = e->next;
		move_release(dev, e->held, e->nheld, false);	/* iwxd lets go as we hang up */
		free(e);
	}
	while (dev->pds) {
		struct iwx_pd *pd = dev->pds;

		dev->pds = pd->next;
		free(pd);
	}
	while (dev->listeners) {
		struct iwx_listener *l = dev->listeners;

		dev->listeners = l->next;
		free(l);
	}
	while (dev->events) {
		struct pending_event *p = dev->events;

		dev->events = p->next;
		free(p);
	}
	while (dev->asyncs) {
		struct pending_event *p = dev->asyncs;

		dev->asyncs = p->next;
		free(p);
	}
	if (dev->sock >= 0)
		close(dev->sock);
	if (dev->bell_fd >= 0)
		close(dev->bell_fd);
	if (dev->notify_fd >= 0)
		close(dev->notify_fd);
	if (dev->ready_fd >= 0)
		close(dev->ready_fd);
	if (dev->event_fd >= 0)
		close(dev->event_fd);
	if (dev->async_fd >= 0)
		close(dev->async_fd);
	if (dev->async_ready_fd >= 0)
		close(dev->async_ready_fd);
	if (dev->arena)
		munmap(dev->arena, dev->arena_size);
	if (dev->bells)
		munmap(dev->bells, IWX_IPC_BELLS_SIZE);
	arena_alloc_fini(&dev->alloc);
	free(dev);
}

void *iwx_alloc(struct iwx_device *dev, size_t len)
{
	int64_t off = arena_alloc_get(&dev->alloc, len, ALLOC_ALIGN);

	if (off < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return dev->arena + off;
}

size_t iwx_device_arena_size(const struct iwx_device *dev)
{
	return dev->arena_size;
}

bool iwx_device_rfc7306(const struct iwx_device *dev)
{
	return dev->rfc7306;
}

void iwx_device_limits(const struct iwx_device *dev, struct iwx_device_limits *lim)
{
	*lim = dev->limits;
}

void iwx_free(struct iwx_device *dev, void *p)
{
	if (p && (uint8_t *)p >= dev->arena && (uint8_t *)p < dev->arena + dev->arena_size)
		arena_alloc_put(&dev->alloc, (uint8_t *)p - dev->arena);
}

/* ------------------------------------------------------------------ events */

static const char *closed_by(bool local)
{
	return local ? "closed by this side" : "closed by the peer, or the stream was lost";
}

/* A catastrophic error (RFC 5040 §7.2) is one of the side that says so, not of a message it got. */
static bool catastrophic(const struct iwx_ipc_event *e)
{
	return (e->layer == IWX_LAYER_RDMAP && e->etype == IWX_RDMAP_ETYPE_CATASTROPHIC) ||
	       (e->layer == IWX_LAYER_LLP && e->etype == IWX_MPA_ETYPE &&
		e->ecode == IWX_MPA_EC_LOCAL_CATASTROPHIC);
}

static const char *term_reason(const struct iwx_ipc_event *e)
{
	if (!e->terminated)
		return closed_by(e->local);
	if (catastrophic(e))
		return e->local ? "an error of this side's own (the failed request's completion "
				  "says which), sent to the peer as a local catastrophic error" :
				  "an error of the peer's own (a local catastrophic error there), not "
				  "one of this side's messages";
	return iwx_term_ecode_name(e->layer, e->etype, e->ecode);
}

/* Why a connect failed (UNREACHABLE), where it failed: first of all, is the peer iWARP at all? */
static const char *unreachable_reason(const struct iwx_ipc_event *e)
{
	switch (e->step) {
	case IWX_IPC_STEP_TRANSPORT:
		return e->status == -ECONNREFUSED ? "nothing listens at the address (connection refused)" :
		       e->status == -EHOSTUNREACH ? "no host answers at the address" :
		       e->status == -ETIMEDOUT ? "no connection within the set-up time (iwxd --timeout-ms)" :
						 "the connect failed";
	case IWX_IPC_STEP_MPA_REQUEST:
		return "connected, but the peer closed before it took the MPA Request: not an iWARP peer?";
	case IWX_IPC_STEP_MPA_REPLY:
		if (e->status == -ETIMEDOUT)
			return "connected, but no MPA Reply came within the set-up time (iwxd "
			       "--timeout-ms): not an iWARP peer?";
		if (e->status == -EPROTO && e->layer == IWX_LAYER_LLP && e->ecode == IWX_MPA_EC_INVALID_RR)
			return "connected, but the peer's reply is not a valid MPA Reply: not an iWARP peer?";
		if (e->status == -EPROTO)
			return iwx_term_ecode_name(e->layer, e->etype, e->ecode);
		return "connected, but the peer closed without an MPA Reply: not an iWARP peer?";
	default:
		return "the connection was lost while this side's MPA Reply went out";
	}
}

char *iwx_term_str(const struct iwx_term_info *t, char *buf, size_t len)
{
	if (t->terminated)
		snprintf(buf, len, "%s %s: %s", iwx_term_layer_name(t->layer),
			 iwx_term_etype_name(t->layer, t->etype),
			 iwx_term_ecode_name(t->layer, t->etype, t->ecode));
	else
		snprintf(buf, len, "%s", closed_by(t->local));
	return buf;
}

static void event_of(struct iwx_device *dev, const struct iwx_ipc_event *e, struct iwx_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = (enum iwx_event_type)e->type;
	ev->qp = e->qp ? qp_of(dev, e->qp) : NULL;
	for (struct iwx_listener *l = dev->listeners; l && e->listener; l = l->next)
		if (l->id == e->listener)
			ev->listener = l;
	ev->conn_id = e->conn_id;
	ev->status = e->status;
	ev->info = (struct iwx_conn_info){
		.mpa_rev = e->mpa_rev, .crc = e->crc, .markers_rx = e->markers_rx,
		.markers_tx = e->markers_tx, .ird = e->ird, .ord = e->ord, .emss = e->emss,
		.transport = e->transport, .rfc7306 = e->rfc7306, .local = e->local_addr,
		.peer = e->peer_addr,
	};
	if (ev->type == IWX_EVENT_DISCONNECTED)
		ev->term = (struct iwx_term_info){
			.terminated = e->terminated, .local = e->local, .layer = e->layer,
			.etype = e->etype, .ecode = e->ecode, .reason = term_reason(e),
		};
	if (ev->type == IWX_EVENT_UNREACHABLE)
		ev->term = (struct iwx_term_info){
			.local = true, .layer = e->layer, .etype = e->etype, .ecode = e->ecode,
			.reason = unreachable_reason(e),
		};
	ev->private_data_len = e->pd_len > sizeof(ev->private_data) ? sizeof(ev->private_data) :
									  e->pd_len;
	memcpy(ev->private_data, e->pd, ev->private_data_len);
}

int iwx_get_event(struct iwx_device *dev, struct iwx_event *ev, int timeout_ms)
{
	struct pollfd p = { .fd = dev->sock, .events = POLLIN };

	for (;;) {
		struct pending_event *pe = dev->events;

		if (pe) {
			dev->events = pe->next;
			if (!dev->events)
				dev->events_tail = &dev->events;
			event_of(dev, &pe->ev, ev);
			free(pe);
			show_ready(dev);
			return 0;
		}
		if (dev->lost) {
			if (dev->lost_told)
				return -ESHUTDOWN;
			dev->lost_told = true;
			show_ready(dev);
			memset(ev, 0, sizeof(*ev));
			ev->type = IWX_EVENT_DEVICE_LOST;
			return 0;
		}
		/* wait for the socket, then take what is there */
		if (poll(&p, 1, timeout_ms) == 0)
			return -EAGAIN;
		client_pump(dev);
		if (!dev->events && !dev->lost && timeout_ms == 0)
			return -EAGAIN;
	}
}

int iwx_event_fd(struct iwx_device *dev)
{
	return dev->event_fd;
}

void client_forget_async(struct iwx_device *dev, uint32_t qp_num, uint32_t srq_id)
{
	struct pending_event **pp = &dev->asyncs;

	while (*pp) {
		struct pending_event *p = *pp;

		if ((qp_num && p->ev.qp == qp_num) || (srq_id && p->ev.srq == srq_id)) {
			*pp = p->next;
			free(p);
		} else {
			pp = &p->next;
		}
	}
	dev->asyncs_tail = pp;
	iwx_level_set(dev->async_ready_fd, &dev->async_ready, dev->asyncs != NULL);
}

/* An asynchronous event iwxd sent, as the application gets it: false when its object has gone. */
static bool async_of(struct iwx_device *dev, const struct iwx_ipc_event *p, struct iwx_async_event *ev)
{
	struct iwx_event e;

	*ev = (struct iwx_async_event){ 0 };
	switch (p->type) {
	case IWX_IPC_EV_SRQ_LIMIT:
		ev->type = IWX_ASYNC_SRQ_LIMIT;
		ev->srq = srq_of(dev, p->srq);
		if (ev->srq)
			ev->srq->limit = 0;	/* iwxd disarmed it */
		return ev->srq;
	case IWX_IPC_EV_QP_LAST_WQE:
		ev->type = IWX_ASYNC_QP_LAST_WQE;
		ev->qp = qp_of(dev, p->qp);
		return ev->qp;
	default:	/* a DISCONNECTED with a Terminate */
		event_of(dev, p, &e);
		ev->type = IWX_ASYNC_QP_FATAL;
		ev->qp = e.qp;
		ev->term = e.term;
		return ev->qp;
	}
}

/* The oldest asynchronous event waiting: false when none (is left). */
static bool take_async(struct iwx_device *dev, struct iwx_async_event *ev)
{
	while (dev->asyncs) {
		struct pending_event *p = dev->asyncs;
		bool live;

		dev->asyncs = p->next;
		if (!dev->asyncs)
			dev->asyncs_tail = &dev->asyncs;
		live = async_of(dev, &p->ev, ev);
		free(p);
		iwx_level_set(dev->async_ready_fd, &dev->async_ready, dev->asyncs != NULL);
		if (live)	/* else destroyed since */
			return true;
	}
	return false;
}

int iwx_get_async_event(struct iwx_device *dev, struct iwx_async_event *ev, int timeout_ms)
{
	struct pollfd p = { .fd = dev->async_fd, .events = POLLIN };
	int64_t deadline = (int64_t)iwx_now_ms() + timeout_ms;

	for (;;) {
		int n, left;

		if (take_async(dev, ev))
			return 0;
		if (dev->lost && !dev->fatal_told) {
			dev->fatal_told = true;
			epoll_ctl(dev->async_fd, EPOLL_CTL_DEL, dev->sock, NULL);	/* it reads no more */
			*ev = (struct iwx_async_event){ .type = IWX_ASYNC_DEVICE_FATAL };
			return 0;
		}
		left = timeout_ms < 0 ? -1 : (int)(deadline - (int64_t)iwx_now_ms());
		if (timeout_ms >= 0 && left < 0)
			left = 0;
		n = poll(&p, 1, left);
		if (n < 0)
			return -errno;
		/* what iwxd sent: events queued (a Terminate's among them), or its hang-up */
		for (int i = 0; n && !dev->lost && i < PUMP_MAX && pump_one(dev); i++)
			;
		if (!n || (!dev->asyncs && !dev->lost && left == 0))
			return -EAGAIN;
	}
}

int iwx_async_fd(struct iwx_device *dev)
{
	return dev->async_fd;
}

int client_watch(struct iwx_device *dev, int epfd, bool async)
{
	const int fds[] = { dev->sock, async ? dev->async_ready_fd : dev->ready_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &(struct epoll_event){ .events = EPOLLIN }))
			return -errno;
	return 0;
}

const char *iwx_event_name(enum iwx_event_type t)
{
	static const char *const names[] = {
		[IWX_EVENT_CONNECT_REQUEST] = "connect request", [IWX_EVENT_ESTABLISHED] = "established",
		[IWX_EVENT_REJECTED] = "rejected", [IWX_EVENT_UNREACHABLE] = "unreachable",
		[IWX_EVENT_DISCONNECTED] = "disconnected", [IWX_EVENT_DEVICE_LOST] = "device lost",
	};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown event";
}

static const char *meaning(int err)
{
	switch (err) {
	case ESHUTDOWN:
		return "iwxd went away";
	case ENOTCONN:
		return "the queue pair is not connected";
	case ENOENT:
		return "no such object (or no iwxd at the socket)";
	case EBUSY:
		return "still in use";
	case EFBIG:
		return "more arena than iwxd allows (--arena-max)";
	case ENOMEM:
		return "out of memory (iwx_alloc: the arena is full; iwx_open_opts.arena_size sizes it, "
		       "up to iwxd --arena-max)";
	case ENOBUFS:
		return "the send or receive queue is full: poll completions first (its depth: iwx_query_qp)";
	default:
		return strerror(err);
	}
}

const char *iwx_strerror(int err)
{
	struct why *w = why_here(false);

	err = err < 0 ? -err : err;
	if (!w || !w->text[0] || w->err != err)
		return meaning(err);
	snprintf(w->line, sizeof(w->line), "%s: iwxd: %s", meaning(err), w->text);
	return w->line;
}
