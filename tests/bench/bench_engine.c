// SPDX-License-Identifier: MIT
/*
 * The benchmark's RDMA side (bench.h) on the engine of control/engine/, in this process:
 * no daemon, the program drives the queue pair and its TCP socket itself. Beside
 * bench_verbs, it shows what the path through iwxd costs.
 *
 * With --llp sctp (rdma_opts.llp), the queue pair runs on the DDP adaptation over SCTP
 * instead (llp_sctp.c), set up by conn_sctp.c, on this process's usrsctp stack in UDP
 * datagrams (bench_carrier.c): rdma_poll feeds the stack what came and runs its timers
 * every IWX_SCTP_TICK_MS, as iwxd does.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <usrsctp.h>

#include "proto/term.h"

#include "bench.h"
#include "bench_util.h"
#include "conn_sctp.h"
#include "conn_tcp.h"
#include "mem.h"
#include "llp_sctp.h"
#include "llp_tcp.h"
#include "qp.h"
#include "util/clock.h"

#define OWNER		1
#define EARLY_RECVS	4	/* receives posted before the queue pair exists */
#define MAX_BUFS	8

const char *const rdma_backend = "engine";

struct rdma {
	struct iwx_conn_tcp	tcp;
	struct iwx_conn_opts	copts;
	struct engine_qp_attr	attr;
	struct iwx_mem		*mem;
	uint32_t		pd;
	struct engine_qp	*qp;
	int			lfd;		/* server, until it accepts */
	struct iwx_recv_wr	early[EARLY_RECVS];
	int			nearly;
	void			*bufs[MAX_BUFS];
	int			nbufs;
	uint32_t		zerocopy_min;	/* -Z */
	/* --llp sctp */
	bool			sctp;
	struct iwx_conn_sctp	sconn;
	struct socket		*lso;		/* server: the listener */
	struct socket		*so;		/* the association, once the queue pair has it */
};

static void *fail(int err, const char *what)
{
	fprintf(stderr, "bench_engine: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return NULL;
}

static struct rdma *rdma_new(const struct rdma_opts *o)
{
	struct rdma *r = calloc(1, sizeof(*r));
	int64_t pd;

	if (!r)
		return fail(-ENOMEM, "allocating");
	r->lfd = -1;
	r->tcp.fd = -1;
	r->copts = (struct iwx_conn_opts){
		.local = { .rev = 2, .crc = !o->no_crc, .markers = o->markers, .ird = o->ird,
			   .ord = o->ord, .rdmap_ext = true },
		.timeout_ms = o->timeout_ms,
	};
	r->attr = (struct engine_qp_attr){ .sq_depth = o->sq_depth, .rq_depth = o->rq_depth };
	r->zerocopy_min = o->zerocopy_min;
	r->sctp = o->llp && !strcmp(o->llp, "sctp");
	if (r->sctp)	/* SCTP's CRC32c, chunks have no markers, and no RFC 7306 over SCTP */
		r->copts.local.crc = r->copts.local.markers = r->copts.local.rdmap_ext = false;
	r->mem = iwx_mem_new();
	pd = r->mem ? iwx_mem_pd_alloc(r->mem, OWNER) : -ENOMEM;
	if (pd < 0) {
		rdma_close(r, false);
		return fail(pd, "a protection domain");
	}
	r->pd = pd;
	return r;
}

/* The connection is in full operation: the queue pair on it, and the early receives. */
static int start_qp(struct rdma *r)
{
	int err;

	if (r->sctp) {
		r->so = r->sconn.so;
		r->sconn.so = NULL;	/* the lower layer's now */
		r->qp = engine_qp_create(iwx_llp_sctp_new(r->so, r->sconn.conn.emss, r->sconn.peer_tsn),
				       &r->sconn.conn.agreed, r->mem, r->pd, &r->attr);
	} else {
		r->qp = engine_qp_create(iwx_llp_tcp_new(r->tcp.fd, &r->tcp.conn.agreed, r->tcp.conn.emss,
						      r->zerocopy_min),
				       &r->tcp.conn.agreed, r->mem, r->pd, &r->attr);
	}
	if (!r->qp) {
		fail(-ENOMEM, "creating the queue pair");
		return -ENOMEM;
	}
	for (int i = 0; i < r->nearly; i++) {
		err = engine_qp_post_recv(r->qp, &r->early[i]);
		if (err) {
			fail(err, "posting a receive");
			return err;
		}
	}
	r->nearly = 0;
	return 0;
}

struct rdma *rdma_listen(const struct sockaddr_in *addr, const struct rdma_opts *o)
{
	struct rdma *r = rdma_new(o);

	if (!r)
		return NULL;
	if (r->sctp) {
		int err = carrier_open(addr);

		if (!err && !(r->lso = iwx_conn_sctp_listen(ntohs(addr->sin_port), 1)))
			err = errf(-errno, "listening on SCTP port %u", ntohs(addr->sin_port));
		if (err) {
			rdma_close(r, false);
			return NULL;
		}
		return r;
	}
	r->lfd = iwx_conn_tcp_listen((const struct sockaddr *)addr, sizeof(*addr), 1);
	if (r->lfd < 0) {
		fail(r->lfd, "listening");
		rdma_close(r, false);
		return NULL;
	}
	return r;
}

/* --llp sctp: the association and the MPA exchange in it, driving the carrier. */
static int sctp_accept(struct rdma *r, int ms)
{
	uint64_t deadline = iwx_now_ms() + ms;
	bool accepted = false;

	for (;;) {
		uint64_t now = iwx_now_ms();
		int err;

		if (now >= deadline)
			return errf(-ETIMEDOUT, accepted ? "the MPA set-up" : "waiting for the client");
		if ((err = carrier_pump(10)) < 0)
			return err;
		if (!accepted) {
			err = iwx_conn_sctp_accept(&r->sconn, r->lso, &r->copts);
			if (err == -EAGAIN)
				continue;
			if (err)
				return errf(err, "accepting the association");
			accepted = true;
			deadline = now + r->copts.timeout_ms;
		}
		iwx_conn_step(&r->sconn.conn, now);
		if (r->sconn.conn.state == IWX_CONN_REQUEST_IN &&
		    (err = iwx_conn_answer(&r->sconn.conn, &r->copts, false)))
			return errf(err, "answering the MPA Request");
		if (r->sconn.conn.state == IWX_CONN_ESTABLISHED)
			return start_qp(r);
		if (r->sconn.conn.state == IWX_CONN_FAILED || r->sconn.conn.state == IWX_CONN_REJECTED)
			return errf(r->sconn.conn.error, "the MPA set-up");
	}
}

/* --llp sctp: the client's association and MPA exchange; 0 or -errno (unreported). */
static int sctp_connect(struct rdma *r, struct iwx_sctp_path *path, uint16_t port)
{
	int err = iwx_conn_sctp_connect(&r->sconn, path, port, &r->copts);

	while (!err && r->sconn.conn.state != IWX_CONN_ESTABLISHED) {
		if ((err = carrier_pump(10)) < 0)
			return err;
		iwx_conn_step(&r->sconn.conn, iwx_now_ms());
		if (r->sconn.conn.state == IWX_CONN_FAILED || r->sconn.conn.state == IWX_CONN_REJECTED)
			err = r->sconn.conn.error ? r->sconn.conn.error : -EPROTO;
	}
	return err;
}

int rdma_accept(struct rdma *r, int ms)
{
	struct pollfd pl = { .fd = r->lfd, .events = POLLIN };
	int err;

	if (r->sctp)
		return sctp_accept(r, ms);

	if (poll(&pl, 1, ms) != 1) {
		fail(-ETIMEDOUT, "waiting for the client");
		return -ETIMEDOUT;
	}
	if ((err = iwx_conn_tcp_accept(&r->tcp, r->lfd, &r->copts))) {
		fail(err, "accept");
		return err;
	}
	close(r->lfd);
	r->lfd = -1;
	if ((err = iwx_conn_tcp_wait(&r->tcp.conn)) || r->tcp.conn.state != IWX_CONN_REQUEST_IN) {
		fail(err ? err : r->tcp.conn.error, "reading the MPA Request");
		return -EPROTO;
	}
	if ((err = iwx_conn_answer(&r->tcp.conn, &r->copts, false)) ||
	    (err = iwx_conn_tcp_wait(&r->tcp.conn)) || r->tcp.conn.state != IWX_CONN_ESTABLISHED) {
		fail(err ? err : r->tcp.conn.error, "MPA Reply");
		return -EPROTO;
	}
	return start_qp(r);
}

struct rdma *rdma_connect(const struct sockaddr_in *addr, const struct rdma_opts *o, int retry_ms)
{
	struct rdma *r = rdma_new(o);
	uint64_t retry_end = iwx_now_ms() + retry_ms;
	int err;

	if (!r)
		return NULL;
	if (r->sctp) {
		struct sockaddr_in any = { .sin_family = AF_INET };
		struct iwx_sctp_path *path;

		if (carrier_open(&any) || !(path = carrier_path(addr))) {
			rdma_close(r, false);
			return NULL;
		}
		/* the server may still be starting: retry a refused association for a while */
		while ((err = sctp_connect(r, path, ntohs(addr->sin_port))) == -ECONNREFUSED &&
		       iwx_now_ms() < retry_end) {
			iwx_conn_close(&r->sconn.conn);
			carrier_pump(50);
		}
	} else {
		/* the server may still be starting: retry a refused connect for a while */
		for (;;) {
			err = iwx_conn_tcp_connect(&r->tcp, (const struct sockaddr *)addr, sizeof(*addr),
					       &r->copts);
			if (!err)
				err = iwx_conn_tcp_wait(&r->tcp.conn);
			if (!err && r->tcp.conn.state != IWX_CONN_ESTABLISHED)
				err = r->tcp.conn.error ? r->tcp.conn.error : -EPROTO;
			if (err != -ECONNREFUSED || iwx_now_ms() >= retry_end)
				break;
			iwx_conn_close(&r->tcp.conn);
			usleep(50000);
		}
	}
	if (err || start_qp(r)) {
		if (err)
			fail(err, r->sctp ? "connecting to the server (SCTP and MPA set-up)" :
			     "connecting to the server (MPA set-up)");
		rdma_close(r, false);
		return NULL;
	}
	return r;
}

uint32_t rdma_ord(const struct rdma *r)
{
	return r->sctp ? r->sconn.conn.agreed.ord : r->tcp.conn.agreed.ord;
}

void rdma_close(struct rdma *r, bool graceful)
{
	(void)graceful;	/* closing the socket is an orderly close */
	if (r->qp)
		engine_qp_destroy(r->qp);	/* closes the socket (the association) */
	else if (r->sctp)
		iwx_conn_close(&r->sconn.conn);
	else
		iwx_conn_close(&r->tcp.conn);
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->lso)
		usrsctp_close(r->lso);
	if (r->sctp)
		carrier_close();	/* SCTP's SHUTDOWN, then the stack stops */
	if (r->mem)
		iwx_mem_free(r->mem);
	for (int i = 0; i < r->nbufs; i++)
		free(r->bufs[i]);
	free(r);
}

void *rdma_alloc(struct rdma *r, size_t len)
{
	void *p;

	if (r->nbufs == MAX_BUFS)
		return fail(-ENOBUFS, "allocating a buffer");
	p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!p)
		return fail(-ENOMEM, "allocating a buffer");
	memset(p, 0, len);	/* fault the pages in before anything is timed */
	r->bufs[r->nbufs++] = p;
	return p;
}

int rdma_reg(struct rdma *r, void *p, size_t len, int access, uint32_t *stag)
{
	int64_t s = iwx_mem_reg(r->mem, OWNER, r->pd, p, len, (uintptr_t)p, access);

	if (s < 0) {
		fail(s, "registering memory");
		return (int)s;
	}
	*stag = s;
	return 0;
}

int rdma_post_send(struct rdma *r, const struct iwx_send_wr *wr)
{
	return r->qp ? engine_qp_post_send(r->qp, wr) : -ENOTCONN;
}

int rdma_post_recv(struct rdma *r, const struct iwx_recv_wr *wr)
{
	if (r->qp)
		return engine_qp_post_recv(r->qp, wr);
	if (r->nearly == EARLY_RECVS)
		return -ENOMEM;
	r->early[r->nearly++] = *wr;
	return 0;
}

/*
 * --llp sctp: what came fed to the stack first, then the queue pair; when it has nothing
 * to report, wait on the UDP socket (up to the next tick) unless there is work at once:
 * data to read, or room for the chunks waiting (the budget ended the turn, not a full
 * socket).
 */
static int sctp_poll(struct rdma *r, struct iwx_wc *wc, int n, int wait_ms)
{
	bool ww = false;
	int err, k, ev;

	if ((err = carrier_pump(0)) < 0)
		return err;
	err = engine_qp_progress(r->qp, &ww);
	k = engine_qp_poll(r->qp, wc, n);
	if (k)
		return k;
	if (err)
		return -ENOTCONN;
	ev = usrsctp_get_events(r->so);
	err = carrier_pump((ev & SCTP_EVENT_READ) || (ww && (ev & SCTP_EVENT_WRITE)) ? 0 : wait_ms);
	return err < 0 ? err : 0;
}

int rdma_poll(struct rdma *r, struct iwx_wc *wc, int n, int wait_ms)
{
	if (r->sctp)
		return sctp_poll(r, wc, n, wait_ms);
	bool ww = false;
	int err = engine_qp_progress(r->qp, &ww);
	int k = engine_qp_poll(r->qp, wc, n);
	struct pollfd p = { .fd = r->tcp.fd, .events = POLLIN | (ww ? POLLOUT : 0) };

	if (k)
		return k;
	if (err)
		return -ENOTCONN;
	if (poll(&p, 1, wait_ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

void rdma_report_failure(struct rdma *r)
{
	struct iwx_term_cause c;
	bool local;

	if (r->qp && engine_qp_error(r->qp, &c, &local))
		fprintf(stderr, "bench_engine: stream terminated (%s): %s: %s\n",
			local ? "here" : "by the peer", iwx_term_etype_name(c.layer, c.etype),
			iwx_term_ecode_name(c.layer, c.etype, c.ecode));
}

void rdma_counters(struct rdma *r, struct rdma_counters *c)
{
	struct iwx_qp_stats st;

	memset(c, 0, sizeof(*c));
	if (!r->qp)
		return;
	engine_qp_stats(r->qp, &st);
	c->valid = true;
	c->tx_fpdus = st.tx_fpdus;
	c->tx_fpdus_aligned = st.tx_fpdus_aligned;
}
