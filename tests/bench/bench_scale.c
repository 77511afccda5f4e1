// SPDX-License-Identifier: MIT
/*
 * iwxd at scale (issue 13): many queue pairs between two iwxds, through libiwx. One
 * program, server and client; scripts/bench-scale.sh runs it over a veth pair.
 *
 *   bench_scale -s [-a ADDR] [-p PORT] [-D SOCKET]
 *   bench_scale -c -a ADDR [-p PORT] [-D SOCKET] -m MODE [-n N] [-k K] [-S SIZE] [-d DEPTH]
 *               [-t SECONDS]
 *
 * Every mode first sets up N queue pairs (created here and at the server, and
 * connected), K connects in flight (default 64), and holds them; then, by MODE:
 *   setup     nothing more (N default 1024): connections per second, from the first
 *             queue pair created to the last connection established.
 *   pingpong  N idle ones (default 0), and an 8-byte Send ping-pong on one more for
 *             SECONDS (default 3): round-trip median and p99; then, every connection
 *             still held, the resident memory of this side's iwxd and of the server's
 *             (from their STATUS: root only, else 0).
 *   write     on each of the N (default 1), DEPTH RDMA Writes of SIZE bytes outstanding
 *             (default 8 of 1 MiB) for SECONDS, then a Read that confirms they were all
 *             placed: aggregate goodput (seconds: until the last Read came back), and the
 *             least and most bytes one connection moved.
 * Every queue pair shares its side's one completion queue. The server accepts whatever
 * comes (the first byte of the MPA private data says what a connection is for, its reply
 * carries the Write target) and exits once every connection it accepted is gone: the
 * client holds them all until it has measured, then closes its device. N beyond iwxd's
 * per-client limits (1024 queue pairs, 4096 mappings: one for each) needs its --max-qps
 * and --max-maps raised, on both sides; and its --max-queued for the server's
 * disconnect events when the client goes.
 *
 * The client prints one line of key=value pairs, e.g.
 *   mode=setup conns=1024 inflight=64 setup_s=0.12 conns_per_s=8533
 *   mode=pingpong size=8 seconds=3.00 n=... rtt_us_median=... rtt_us_p99=...
 *	rtt_us_min=... rtt_us_max=... iwxd_rss_kb=... peer_iwxd_rss_kb=... conns=256 ...
 *   mode=write size=1048576 depth=8 seconds=3.00 msgs=... bytes=... gbps=...
 *	conn_bytes_min=... conn_bytes_max=... spread=1.08 conns=16 ...
 * (spread: most over least, "na" when one moved nothing), and the server "role=server
 * conns_most=N teardown_ms=T", T from the first connection's end to the last's. Exit
 * status 0 on success, 1 on any error, with a message on stderr.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include <iwx/iwx.h>

#include "bench_util.h"

#define SETUP_MS	10000	/* each connection's set-up */
#define WC_MS		60000	/* any wait for a completion: a connection starved shows as one */
#define SERVER_IDLE_MS	30000	/* the server gives up after this long without an event */
#define MAX_CONNS	65536
#define MAX_DEPTH	256	/* a queue pair's default depth */
#define MAX_INFLIGHT	256	/* iwxd's default --max-requests: requests not answered */
#define MAX_SIZE	(4u << 20)	/* the server's Write target */
#define SLOT		64	/* one ping or pong message */
#define PING_RECVS	16	/* receives posted on the ping-pong connection, each side */
#define WC_BATCH	64
#define RSS_ASK		UINT64_MAX	/* a ping the server answers with its iwxd's RSS */
#define WR_SEND		UINT64_MAX	/* wr_id of a ping or pong */

enum mode { M_SETUP, M_PINGPONG, M_WRITE, M_COUNT };
static const char *const mode_names[M_COUNT] = { "setup", "pingpong", "write" };

/* What a connection is for: the first byte of the client's MPA private data. */
enum conn_kind { C_IDLE = 1, C_PING, C_WRITE };

/* The server's MPA private data: its Write target, big-endian. */
struct target {
	uint64_t	addr;
	uint32_t	rkey, len;
} __attribute__((packed));

/* One side: a device on its iwxd, one PD, one CQ for every queue pair, one buffer. */
struct side {
	const char		*daemon;	/* iwxd's socket (NULL: $IWX_SOCKET, default) */
	struct iwx_device	*dev;
	struct iwx_pd		*pd;
	struct iwx_cq		*cq;
	uint8_t			*buf;		/* ping slots, then the Write source or target */
	struct iwx_mr		*mr;
	struct sockaddr_in	addr;		/* the server's */
};

static int fail(int err, const char *what)
{
	return errf(0, "%s: %s", what, iwx_strerror(err));
}

/*
 * Open the device with room for qps queue pairs and cq_entries completions, and a
 * buffer of len bytes (after the ping slots). 0 or -errno, said on stderr.
 */
static int side_open(struct side *s, uint32_t qps, uint32_t cq_entries, size_t len)
{
	size_t buf_len = 2 * PING_RECVS * SLOT + len;
	IWX_OPTS(iwx_open_opts, oo, .socket = s->daemon, .arena_size = buf_len + (1u << 20));
	struct iwx_device_limits lim;

	s->dev = iwx_open(&oo);
	if (!s->dev)
		return errf(0, "opening the device at %s: %s", iwx_socket_path(&oo),
			    iwx_strerror(errno));
	iwx_device_limits(s->dev, &lim);
	if (lim.max_qps < qps)
		return errf(0, "iwxd lets a client have %u queue pairs, %u needed: raise its "
			    "--max-qps (and --max-maps)", lim.max_qps, qps);
	s->pd = iwx_alloc_pd(s->dev);
	s->cq = s->pd ? iwx_create_cq(s->dev, cq_entries) : NULL;
	s->buf = s->cq ? iwx_alloc(s->dev, buf_len) : NULL;
	s->mr = s->buf ? iwx_reg_mr(s->pd, s->buf, buf_len, IWX_ACCESS_LOCAL_WRITE |
				    IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ) : NULL;
	if (!s->mr)
		return fail(-errno, "a protection domain, completion queue and buffer");
	memset(s->buf, 0, buf_len);	/* fault the pages in before anything is timed */
	return 0;
}

static struct iwx_qp *qp_new(struct side *s)
{
	struct iwx_qp_init_attr attr = { .send_cq = s->cq, .recv_cq = s->cq };
	struct iwx_qp *qp = iwx_create_qp(s->pd, &attr);

	if (!qp)
		fail(-errno, errno == ENOSPC ? "a queue pair (iwxd --max-qps, --max-maps?)" :
		     "a queue pair");
	return qp;
}

/* Ping slots: receives in [0, PING_RECVS), sends after them. */
static struct iwx_sge slot_sge(const struct side *s, uint32_t slot)
{
	return (struct iwx_sge){ (uintptr_t)(s->buf + slot * SLOT), SLOT, s->mr->lkey };
}

/* The buffer after the ping slots: the Write source, or the server's target. */
static uint8_t *data_area(const struct side *s)
{
	return s->buf + 2 * PING_RECVS * SLOT;
}

static int post_slot_recv(struct side *s, struct iwx_qp *qp, uint32_t slot)
{
	struct iwx_recv_wr wr = { .wr_id = slot, .num_sge = 1, .sge = { slot_sge(s, slot) } };
	int err = iwx_post_recv(qp, &wr);

	return err ? fail(err, "posting a receive") : 0;
}

/* Send v from send slot slot, signaled (its completion is taken and ignored). */
static int post_slot_send(struct side *s, struct iwx_qp *qp, uint32_t slot, uint64_t v)
{
	struct iwx_send_wr wr = {
		.wr_id = WR_SEND, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { slot_sge(s, PING_RECVS + slot) },
	};
	int err;

	wr.sge[0].len = sizeof(v);
	memcpy(s->buf + (PING_RECVS + slot) * SLOT, &v, sizeof(v));
	err = iwx_post_send(qp, &wr);
	return err ? fail(err, "posting a Send") : 0;
}

static int wc_failed(const struct iwx_wc *wc)
{
	return errf(0, "work request %#lx on queue pair %u: %s", (unsigned long)wc->wr_id,
		    wc->qp_num, iwx_wc_status_name(wc->status));
}

/* The resident memory of the iwxd at daemon in kB (STATUS, root only, names its pid); 0: unknown. */
static uint64_t iwxd_rss_kb(const char *daemon)
{
	IWX_OPTS(iwx_open_opts, oo, .socket = daemon);
	struct iwx_ipc_hdr h = { .op = IWX_IPC_STATUS, .seq = 1 };
	struct iwx_ipc_status st;
	unsigned long kb = 0;
	char path[64], line[128];
	int fd = iwx_ipc_connect(iwx_socket_path(&oo), 5), n = -ENOTCONN;
	FILE *f;

	if (fd >= 0 && !(n = iwx_ipc_send(fd, &h, NULL, NULL, 0)))
		n = iwx_ipc_recv(fd, &h, &st, sizeof(st), NULL, NULL);
	if (fd >= 0)
		close(fd);
	if (n != (int)sizeof(st) || h.status)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/status", st.pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && sscanf(line, "VmRSS: %lu", &kb) != 1)
		;
	if (f)
		fclose(f);
	return kb;
}

/* ------------------------------------------------------------------ server */

struct server {
	struct side		s;
	struct iwx_listener	*l;
	struct iwx_conn_param	param;		/* the reply: the target in private data */
	struct target		t;
	struct iwx_qp		*ping;		/* the ping-pong connection, while it lasts */
	uint32_t		live, most;
	uint64_t		first_gone;	/* when the first connection ended, ns */
};

static int server_event(struct server *sv, const struct iwx_event *ev)
{
	struct iwx_qp *qp;
	int err;

	switch (ev->type) {
	case IWX_EVENT_CONNECT_REQUEST:
		qp = qp_new(&sv->s);
		if (!qp) {
			iwx_reject(sv->s.dev, ev->conn_id, NULL, 0);
			return -ENOSPC;
		}
		if (ev->private_data_len && ev->private_data[0] == C_PING) {
			for (uint32_t i = 0; i < PING_RECVS; i++)
				if ((err = post_slot_recv(&sv->s, qp, i)))
					return err;
			sv->ping = qp;
		}
		err = iwx_accept(qp, ev->conn_id, &sv->param);
		if (err)
			return fail(err, "accepting");
		if (++sv->live > sv->most)
			sv->most = sv->live;
		return 0;
	case IWX_EVENT_ESTABLISHED:
		return 0;
	case IWX_EVENT_DISCONNECTED:
	case IWX_EVENT_UNREACHABLE:
	case IWX_EVENT_REJECTED:
		if (ev->qp == sv->ping)
			sv->ping = NULL;
		if (!sv->first_gone)
			sv->first_gone = now_ns();
		iwx_destroy_qp(ev->qp);
		sv->live--;
		return 0;
	default:
		return errf(0, "event '%s'", iwx_event_name(ev->type));
	}
}

/* Answer each ping with the same 8 bytes (RSS_ASK with iwxd's RSS). Completions taken, or -errno. */
static int server_poll(struct server *sv)
{
	struct iwx_wc wc[WC_BATCH];
	int n = iwx_poll_cq(sv->s.cq, WC_BATCH, wc), err;

	for (int i = 0; i < n; i++) {
		uint64_t v;

		if (wc[i].status == IWX_WC_WR_FLUSH_ERR)
			continue;	/* the ping-pong connection closing */
		if (wc[i].status != IWX_WC_SUCCESS)
			return wc_failed(&wc[i]);
		if (wc[i].opcode != IWX_WC_RECV || !sv->ping)
			continue;
		memcpy(&v, sv->s.buf + wc[i].wr_id * SLOT, sizeof(v));
		if (v == RSS_ASK)
			v = iwxd_rss_kb(sv->s.daemon);
		if ((err = post_slot_recv(&sv->s, sv->ping, wc[i].wr_id)) ||
		    (err = post_slot_send(&sv->s, sv->ping, wc[i].wr_id, v)))
			return err;
	}
	return n;
}

/* Serve until every connection accepted is gone (after the first one came). */
static int server_run(struct server *sv)
{
	struct pollfd fds[2] = {
		{ .fd = iwx_event_fd(sv->s.dev), .events = POLLIN },
		{ .fd = iwx_comp_fd(sv->s.dev), .events = POLLIN },
	};
	struct iwx_event ev;
	int err, n;

	for (;;) {
		while (!(err = iwx_get_event(sv->s.dev, &ev, 0)))
			if ((err = server_event(sv, &ev)))
				return err;
		if (err != -EAGAIN)
			return fail(err, "events");
		if (sv->most && !sv->live)
			return 0;
		if ((n = server_poll(sv)) < 0)
			return n;
		if (n)
			continue;
		/* nothing left: arm, look once more, sleep until either fd has something */
		iwx_req_notify_cq(sv->s.cq);
		if ((n = server_poll(sv)) < 0)
			return n;
		if (n)
			continue;
		n = poll(fds, 2, SERVER_IDLE_MS);
		if (n <= 0)
			return errf(n ? -errno : -ETIMEDOUT, "waiting for the client (%u of %u "
				    "connections left)", sv->live, sv->most);
		if (fds[1].revents)
			iwx_ack_comp(sv->s.dev);
	}
}

static int server_main(struct side *s)
{
	struct server sv = { .s = *s };
	int err;

	/* completions: those of one ping-pong connection; queue pairs: what iwxd allows */
	err = side_open(&sv.s, 0, 2 * PING_RECVS, MAX_SIZE);
	if (!err) {
		sv.t = (struct target){ .addr = htobe64((uintptr_t)data_area(&sv.s)),
					.rkey = htobe32(sv.s.mr->rkey), .len = htobe32(MAX_SIZE) };
		sv.param = (struct iwx_conn_param){ .private_data = &sv.t,
						    .private_data_len = sizeof(sv.t) };
		sv.l = iwx_listen(sv.s.dev, (const struct sockaddr *)&s->addr, sizeof(s->addr), 1024);
		if (!sv.l)
			err = fail(-errno, "listening");
	}
	if (!err)
		err = server_run(&sv);
	if (!err)
		printf("role=server conns_most=%u teardown_ms=%.0f\n", sv.most,
		       (now_ns() - sv.first_gone) / 1e6);
	iwx_close(sv.s.dev);
	return err;
}

/* ------------------------------------------------------------------ client */

struct client {
	struct side	s;
	struct iwx_qp	**qps;		/* in the order they were created */
	uint32_t	nqps;
	struct target	t;		/* the server's, host order */
};

/*
 * Connect n more queue pairs for kind, up to k at once; each established, or -errno.
 * The new ones are qps[nqps - n, nqps).
 */
static int connect_many(struct client *c, uint32_t n, uint32_t k, enum conn_kind kind)
{
	uint8_t what = kind;
	struct iwx_conn_param param = { .private_data = &what, .private_data_len = 1,
					.settle_ms = IWX_SETTLE_NONE };
	uint32_t started = 0, done = 0;
	struct iwx_event ev;
	int err;

	while (done < n) {
		for (; started < n && started - done < k; started++) {
			struct iwx_qp *qp = qp_new(&c->s);

			if (!qp)
				return -ENOSPC;
			c->qps[c->nqps++] = qp;
			if (kind == C_PING)
				for (uint32_t i = 0; i < PING_RECVS; i++)
					if ((err = post_slot_recv(&c->s, qp, i)))
						return err;
			err = iwx_connect(qp, (const struct sockaddr *)&c->s.addr, sizeof(c->s.addr),
					  &param);
			if (err)
				return fail(err, "connecting");
		}
		err = iwx_get_event(c->s.dev, &ev, SETUP_MS);
		if (err)
			return fail(err == -EAGAIN ? -ETIMEDOUT : err, "waiting for a connection");
		if (ev.type != IWX_EVENT_ESTABLISHED)
			return errf(0, "connection %u of %u: %s%s%s", done + 1, n,
				    iwx_event_name(ev.type), ev.status ? ": " : "",
				    ev.status ? iwx_strerror(ev.status) : "");
		if (!done++ && ev.private_data_len == sizeof(c->t)) {
			memcpy(&c->t, ev.private_data, sizeof(c->t));
			c->t = (struct target){ .addr = be64toh(c->t.addr), .rkey = be32toh(c->t.rkey),
						.len = be32toh(c->t.len) };
		}
	}
	return 0;
}

/*
 * Up to n completions, each successful, waiting up to WC_MS for the first. Count, or
 * -errno said on stderr with what was waited for and how many were outstanding.
 */
static int take(struct side *s, struct iwx_wc *wc, int n, const char *what, uint32_t out)
{
	int k = iwx_poll_cq(s->cq, n, wc);

	if (!k)
		k = iwx_wait_cq(s->cq, n, wc, WC_MS);
	if (k <= 0)
		return errf(k ? k : -ETIMEDOUT, "waiting for %s (%u outstanding)", what, out);
	for (int i = 0; i < k; i++)
		if (wc[i].status != IWX_WC_SUCCESS)
			return wc_failed(&wc[i]);
	return k;
}

/* Send v on the ping-pong queue pair, and wait for its answer (and the Send's completion). */
static int ping(struct client *c, struct iwx_qp *qp, uint64_t v, uint64_t *answer)
{
	bool sent = false, got = false;
	struct iwx_wc wc[4];
	int err, n;

	if ((err = post_slot_send(&c->s, qp, 0, v)))
		return err;
	while (!sent || !got) {
		if ((n = take(&c->s, wc, 4, "a ping-pong", 1)) < 0)
			return n;
		for (int i = 0; i < n; i++) {
			if (wc[i].opcode != IWX_WC_RECV) {
				sent = true;
				continue;
			}
			memcpy(answer, c->s.buf + wc[i].wr_id * SLOT, sizeof(*answer));
			if ((err = post_slot_recv(&c->s, qp, wc[i].wr_id)))
				return err;
			got = true;
		}
	}
	return 0;
}

static int client_pingpong(struct client *c, uint32_t ms)
{
	size_t n = 0, cap;
	uint64_t *rtt = rtt_array(ms, &cap), t0, end, v, peer_rss;
	struct iwx_qp *qp;
	int err;

	if ((err = connect_many(c, 1, 1, C_PING)))
		goto out;
	qp = c->qps[c->nqps - 1];
	t0 = now_ns();
	end = t0 + ms * 1000000ull;
	while (now_ns() < end && n < cap) {
		uint64_t start = now_ns();

		if ((err = ping(c, qp, n, &v)))
			goto out;
		if (v != n) {
			err = errf(0, "pong %lu for ping %zu", (unsigned long)v, n);
			goto out;
		}
		rtt[n++] = now_ns() - start;
	}
	if (!n) {
		err = errf(0, "no round trip completed");
		goto out;
	}
	print_rtts("pingpong", sizeof(v), rtt, n, (now_ns() - t0) / 1e9);
	if ((err = ping(c, qp, RSS_ASK, &peer_rss)))
		goto out;
	printf(" iwxd_rss_kb=%lu peer_iwxd_rss_kb=%lu", (unsigned long)iwxd_rss_kb(c->s.daemon),
	       (unsigned long)peer_rss);
out:
	free(rtt);
	return err;
}

/*
 * Every connection made (all C_WRITE) keeps depth Writes outstanding until ms have
 * passed; then an RDMA Read on each, whose Response follows the placement of its Writes
 * (RFC 5040 §5.4: a Read Request is processed after the Writes before it): what was
 * written over the time until the last Read came back.
 */
static int client_write(struct client *c, uint32_t size, uint32_t depth, uint32_t ms)
{
	uint32_t conns = c->nqps, out = 0;
	uint64_t *bytes = calloc(conns, sizeof(*bytes)), t0, end, total = 0, msgs = 0, lo, hi;
	struct iwx_wc wc[WC_BATCH];
	struct iwx_send_wr wr = { .opcode = IWX_WR_WRITE, .flags = IWX_WR_SIGNALED, .num_sge = 1 };
	bool more;
	int err = 0, n;

	if (!bytes)
		return errf(-ENOMEM, "allocating");
	if (size > c->t.len) {
		err = errf(0, "-S %u: the server's target holds %u bytes", size, c->t.len);
		goto out;
	}
	/* every Write from the same source to the same target: what they move is not checked */
	wr.sge[0] = (struct iwx_sge){ (uintptr_t)data_area(&c->s), size, c->s.mr->lkey };
	wr.remote_addr = c->t.addr;
	wr.rkey = c->t.rkey;
	t0 = now_ns();
	end = t0 + ms * 1000000ull;
	for (uint32_t i = 0; i < conns && !err; i++)
		for (uint32_t d = 0; d < depth && !err; d++, out++) {
			wr.wr_id = i;
			err = iwx_post_send(c->qps[i], &wr);
		}
	while (out && !err) {
		if ((n = take(&c->s, wc, WC_BATCH, "Writes", out)) < 0) {
			err = n;
			goto out;
		}
		more = now_ns() < end;
		for (int i = 0; i < n && !err; i++, out--) {
			bytes[wc[i].wr_id] += size;
			msgs++;
			wr.wr_id = wc[i].wr_id;
			if (more && !(err = iwx_post_send(c->qps[wr.wr_id], &wr)))
				out++;
		}
	}
	if (err) {
		err = fail(err, "posting a Write");
		goto out;
	}
	/* 8 bytes of the target into a ping slot */
	wr.opcode = IWX_WR_READ;
	wr.sge[0] = slot_sge(&c->s, 0);
	wr.sge[0].len = 8;
	for (uint32_t i = 0; i < conns; i++, out++)
		if ((err = iwx_post_send(c->qps[i], &wr))) {
			err = fail(err, "posting a Read");
			goto out;
		}
	for (; out; out -= n)
		if ((n = take(&c->s, wc, WC_BATCH, "Reads", out)) < 0) {
			err = n;
			goto out;
		}
	lo = hi = bytes[0];
	for (uint32_t i = 0; i < conns; i++) {
		total += bytes[i];
		lo = bytes[i] < lo ? bytes[i] : lo;
		hi = bytes[i] > hi ? bytes[i] : hi;
	}
	print_goodput("write", size, depth, (now_ns() - t0) / 1e9, msgs, total);
	printf(" conn_bytes_min=%lu conn_bytes_max=%lu spread=", (unsigned long)lo,
	       (unsigned long)hi);
	if (lo)
		printf("%.2f", (double)hi / lo);
	else
		printf("na");
out:
	free(bytes);
	return err;
}

static int client_main(struct side *s, enum mode mode, uint32_t n, uint32_t k, uint32_t size,
		       uint32_t depth, uint32_t ms)
{
	struct client c = { .s = *s };
	uint32_t qps = mode == M_PINGPONG ? n + 1 : n;
	uint32_t wcs = mode == M_WRITE ? n * depth : 2 * PING_RECVS;
	uint64_t t0 = now_ns(), t1;
	int err;

	c.qps = calloc(qps, sizeof(*c.qps));
	if (!c.qps)
		return errf(-ENOMEM, "allocating");
	err = side_open(&c.s, qps, wcs, mode == M_WRITE ? size : 0);
	if (err)
		goto out;
	t0 = now_ns();
	err = connect_many(&c, n, k, mode == M_WRITE ? C_WRITE : C_IDLE);
	t1 = now_ns();
	if (err)
		goto out;
	if (mode == M_SETUP)
		printf("mode=setup");
	else if (mode == M_PINGPONG)
		err = client_pingpong(&c, ms);
	else
		err = client_write(&c, size, depth, ms);
	if (!err)
		printf(" conns=%u inflight=%u setup_s=%.2f conns_per_s=%.0f", n, k, (t1 - t0) / 1e9,
		       n / ((t1 - t0) / 1e9));
out:
	if (!err)
		printf("\n");
	/* every queue pair with it: the server sees them all go, and exits */
	iwx_close(c.s.dev);
	free(c.qps);
	return err;
}

/* ------------------------------------------------------------------- main */

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: bench_scale -s [-a ADDR] [-p PORT] [-D SOCKET]\n"
		"       bench_scale -c -a ADDR [-p PORT] [-D SOCKET] -m MODE [-n N] [-k K] [-S SIZE]\n"
		"                   [-d DEPTH] [-t SECONDS]\n"
		"MODE: setup (N queue pairs, default 1024), pingpong (beside N idle ones, default 0),\n"
		"write (on N, default 1); K connects in flight (default 64, up to %d);\n"
		"SIZE default 1 MiB (up to %u), DEPTH 8 (up to %d, and N * DEPTH up to %d); SECONDS 3.\n"
		"-D: iwxd's socket (default $IWX_SOCKET, else " IWX_DEFAULT_SOCKET ")\n",
		MAX_INFLIGHT, MAX_SIZE, MAX_DEPTH, IWX_IPC_MAX_CQ_ENTRIES);
	exit(status);
}

int main(int argc, char **argv)
{
	struct side s = { .addr = { .sin_family = AF_INET, .sin_port = htons(7178) } };
	enum mode mode = M_COUNT;
	long long n = -1, k = 64, size = 1 << 20, depth = 8;
	double seconds = 3;
	int role = -1, c, err;

	while ((c = getopt(argc, argv, "sca:p:D:m:n:k:S:d:t:h")) != -1) {
		switch (c) {
		case 'm':
			for (mode = 0; mode < M_COUNT; mode++)
				if (!strcmp(optarg, mode_names[mode]))
					break;
			if (mode == M_COUNT)
				usage(2);
			break;
		case 'D': s.daemon = optarg; break;
		case 'n': n = atoll(optarg); break;
		case 'k': k = atoll(optarg); break;
		case 'S': size = parse_size(optarg); break;
		case 'd': depth = atoll(optarg); break;
		case 't': seconds = strtod(optarg, NULL); break;
		case 'h': usage(0); break;
		default:
			if (common_opt(c, optarg, &role, &s.addr) != 1)
				usage(2);
		}
	}
	if (n < 0)
		n = mode == M_SETUP ? 1024 : mode == M_WRITE ? 1 : 0;
	if (optind != argc || role < 0 || (role == 1 && mode != M_COUNT))
		usage(2);
	if (role == 0 && (mode == M_COUNT || !s.addr.sin_addr.s_addr || n > MAX_CONNS ||
			  (mode != M_PINGPONG && n < 1) || k < 1 || k > MAX_INFLIGHT || size < 1 ||
			  size > MAX_SIZE || depth < 1 || depth > MAX_DEPTH || seconds < 0.01 ||
			  seconds > 3600 || (mode == M_WRITE && n * depth > IWX_IPC_MAX_CQ_ENTRIES)))
		usage(2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (role == 1)
		err = server_main(&s);
	else
		err = client_main(&s, mode, n, k, size, depth, seconds * 1000);
	return err ? 1 : 0;
}
