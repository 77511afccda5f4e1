// SPDX-License-Identifier: MIT
/*
 * The benchmark's RDMA side (bench.h) through libiwx, the product path: the
 * application posts to rings it shares with its iwxd, the daemon moves the data over
 * TCP to the peer's iwxd, which places it in the peer application's arena. Buffers come
 * from the device's arena, as a fast application's would.
 *
 * The counters are iwxd's STATUS (ipc/ipc.h), asked for on a connection of their own
 * without HELLO: only root may, others get none (and the benchmark says "na").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include <iwx/iwx.h>

#include "bench.h"
#include "util/clock.h"

#define CLOSE_MS	2000	/* a graceful close waits this long for the stream's end */

const char *const rdma_backend = "verbs";

struct rdma {
	struct iwx_device	*dev;
	struct iwx_pd		*pd;
	struct iwx_cq		*cq;
	struct iwx_qp		*qp;
	struct iwx_listener	*l;		/* server, until it accepts */
	struct iwx_conn_param	param;
	uint32_t		ord;		/* as agreed */
	size_t			arena;
	int			timeout_ms;
	int			status_fd;	/* to iwxd, for STATUS */
	uint32_t		status_seq;
};

static void *fail(int err, const char *what)
{
	fprintf(stderr, "bench_verbs: %s: %s\n", what, iwx_strerror(err));
	return NULL;
}

static struct rdma *rdma_new(const struct rdma_opts *o)
{
	IWX_OPTS(iwx_open_opts, oo, .socket = o->daemon, .arena_size = o->arena);
	struct rdma *r = calloc(1, sizeof(*r));
	struct iwx_qp_init_attr attr = { .sq_depth = o->sq_depth, .rq_depth = o->rq_depth };

	if (o->llp && strcmp(o->llp, "tcp")) {
		free(r);
		return fail(-EOPNOTSUPP, "--llp sctp (bench_engine only)");
	}
	if (!r)
		return fail(-ENOMEM, "allocating");
	r->status_fd = -1;
	r->arena = o->arena;
	r->timeout_ms = o->timeout_ms;
	r->param = (struct iwx_conn_param){ .ird = o->ird, .ord = o->ord, .mpa_rev = 2,
					    .crc = o->no_crc ? -1 : 1, .markers = o->markers };
	r->dev = iwx_open(&oo);
	if (!r->dev) {
		fail(-errno, "opening the device (is iwxd serving its socket? see -D)");
		free(r);
		return NULL;
	}
	r->pd = iwx_alloc_pd(r->dev);
	r->cq = r->pd ? iwx_create_cq(r->dev, o->sq_depth + o->rq_depth) : NULL;
	attr.send_cq = attr.recv_cq = r->cq;
	r->qp = r->cq ? iwx_create_qp(r->pd, &attr) : NULL;
	if (!r->qp) {
		fail(-errno, "a protection domain, completion queue and queue pair");
		rdma_close(r, false);
		return NULL;
	}
	/* a connection for STATUS; none (counters unknown) where it cannot be had */
	r->status_fd = iwx_ipc_connect(iwx_socket_path(&oo), 0);
	return r;
}

/* The next connection event, up to ms. 0, or -errno said on stderr. */
static int event(struct rdma *r, struct iwx_event *ev, int ms, const char *what)
{
	int err = iwx_get_event(r->dev, ev, ms);

	if (err)
		fail(err == -EAGAIN ? -ETIMEDOUT : err, what);
	return err == -EAGAIN ? -ETIMEDOUT : err;
}

struct rdma *rdma_listen(const struct sockaddr_in *addr, const struct rdma_opts *o)
{
	struct rdma *r = rdma_new(o);

	if (!r)
		return NULL;
	r->l = iwx_listen(r->dev, (const struct sockaddr *)addr, sizeof(*addr), 1);
	if (!r->l) {
		fail(-errno, "listening");
		rdma_close(r, false);
		return NULL;
	}
	return r;
}

int rdma_accept(struct rdma *r, int ms)
{
	struct iwx_event ev;
	int err = event(r, &ev, ms, "waiting for the client");

	if (err)
		return err;
	if (ev.type != IWX_EVENT_CONNECT_REQUEST) {
		fprintf(stderr, "bench_verbs: waiting for the client: event '%s'\n",
			iwx_event_name(ev.type));
		return -EPROTO;
	}
	err = iwx_accept(r->qp, ev.conn_id, &r->param);
	if (err) {
		fail(err, "accepting");
		return err;
	}
	err = event(r, &ev, r->timeout_ms, "the connection's set-up");
	if (err)
		return err;
	if (ev.type != IWX_EVENT_ESTABLISHED) {
		fprintf(stderr, "bench_verbs: accepting: event '%s'\n", iwx_event_name(ev.type));
		return -EPROTO;
	}
	r->ord = ev.info.ord;
	iwx_listener_destroy(r->l);
	r->l = NULL;
	return 0;
}

struct rdma *rdma_connect(const struct sockaddr_in *addr, const struct rdma_opts *o, int retry_ms)
{
	struct rdma *r = rdma_new(o);
	uint64_t retry_end = iwx_now_ms() + (uint64_t)retry_ms;
	struct iwx_event ev;
	int err;

	if (!r)
		return NULL;
	/* the server may still be starting: retry a refused connect for a while */
	for (;;) {
		err = iwx_connect(r->qp, (const struct sockaddr *)addr, sizeof(*addr), &r->param);
		if (err) {
			fail(err, "connecting");
			break;
		}
		err = event(r, &ev, r->timeout_ms, "connecting");
		if (err)
			break;
		if (ev.type == IWX_EVENT_ESTABLISHED) {
			r->ord = ev.info.ord;
			return r;
		}
		if (ev.type != IWX_EVENT_UNREACHABLE || ev.status != -ECONNREFUSED ||
		    iwx_now_ms() >= retry_end) {
			fprintf(stderr, "bench_verbs: connecting: %s%s%s\n", iwx_event_name(ev.type),
				ev.status ? ": " : "", ev.status ? iwx_strerror(ev.status) : "");
			break;
		}
		usleep(50000);
	}
	rdma_close(r, false);
	return NULL;
}

uint32_t rdma_ord(const struct rdma *r)
{
	return r->ord;
}

void rdma_close(struct rdma *r, bool graceful)
{
	if (graceful && r->qp && iwx_qp_state(r->qp) == IWX_QPS_RTS && !iwx_disconnect(r->qp)) {
		uint64_t end = iwx_now_ms() + CLOSE_MS;
		struct iwx_event ev;

		while (iwx_now_ms() < end && !iwx_get_event(r->dev, &ev, (int)(end - iwx_now_ms())))
			if (ev.type == IWX_EVENT_DISCONNECTED || ev.type == IWX_EVENT_DEVICE_LOST)
				break;
	}
	iwx_close(r->dev);	/* and everything made from it, regions too */
	if (r->status_fd >= 0)
		close(r->status_fd);
	free(r);
}

void *rdma_alloc(struct rdma *r, size_t len)
{
	void *p = iwx_alloc(r->dev, len);

	if (!p) {
		fprintf(stderr, "bench_verbs: no room for %zu bytes in an arena of %zu (-A)\n", len,
			r->arena);
		return NULL;
	}
	memset(p, 0, len);	/* fault the pages in before anything is timed */
	return p;
}

int rdma_reg(struct rdma *r, void *p, size_t len, int access, uint32_t *stag)
{
	struct iwx_mr *mr = iwx_reg_mr(r->pd, p, len, access);

	if (!mr) {
		int err = -errno;

		fail(err, "registering memory");
		return err;
	}
	*stag = mr->lkey;
	return 0;
}

int rdma_post_send(struct rdma *r, const struct iwx_send_wr *wr)
{
	return iwx_post_send(r->qp, wr);
}

int rdma_post_recv(struct rdma *r, const struct iwx_recv_wr *wr)
{
	return iwx_post_recv(r->qp, wr);
}

int rdma_poll(struct rdma *r, struct iwx_wc *wc, int n, int wait_ms)
{
	int k = iwx_poll_cq(r->cq, n, wc);

	if (k)
		return k;
	if (iwx_qp_state(r->qp) == IWX_QPS_ERROR)
		return -ENOTCONN;	/* and every completion taken */
	/* arm, look again, sleep until the daemon signals one */
	k = iwx_wait_cq(r->cq, n, wc, wait_ms);
	if (k == -ESHUTDOWN || (!k && iwx_qp_state(r->qp) == IWX_QPS_ERROR))
		return -ENOTCONN;
	return k;
}

void rdma_report_failure(struct rdma *r)
{
	struct iwx_event ev;

	while (!iwx_get_event(r->dev, &ev, 500)) {
		if (ev.type == IWX_EVENT_DEVICE_LOST) {
			fprintf(stderr, "bench_verbs: iwxd went away\n");
			return;
		}
		if (ev.type == IWX_EVENT_DISCONNECTED) {
			fprintf(stderr, "bench_verbs: stream ended (%s%s): %s\n",
				ev.term.local ? "here" : "by the peer",
				ev.term.terminated ? ", Terminate" : "", ev.term.reason);
			return;
		}
	}
	fprintf(stderr, "bench_verbs: the queue pair failed, no reason given yet\n");
}

void rdma_counters(struct rdma *r, struct rdma_counters *c)
{
	struct iwx_ipc_hdr h = { .op = IWX_IPC_STATUS, .seq = ++r->status_seq };
	struct iwx_ipc_status st;
	int n = -ENOTCONN;

	memset(c, 0, sizeof(*c));
	if (r->status_fd >= 0 && !(n = iwx_ipc_send(r->status_fd, &h, NULL, NULL, 0)))
		n = iwx_ipc_recv(r->status_fd, &h, &st, sizeof(st), NULL, NULL);
	if (n != (int)sizeof(st) || h.status || h.seq != r->status_seq)
		return;
	c->valid = true;
	c->tx_fpdus = st.traffic.tx_fpdus;
	c->tx_fpdus_aligned = st.traffic.tx_fpdus_aligned;
	c->doorbells = st.doorbells;
	c->wakeups = st.wakeups;
}
