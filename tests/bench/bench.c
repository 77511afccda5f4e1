// SPDX-License-Identifier: MIT
/*
 * RDMA Write, RDMA Read and Send goodput, and Send ping-pong round trips, over one
 * queue pair; and a plain-TCP ping-pong and plain-TCP messages to compare with. One program, server and
 * client, built twice: bench_verbs (libiwx and iwxd, the product path) and
 * bench_engine (the engine in this process); bench.h tells the difference.
 * scripts/bench.sh runs both over a veth pair, next to iperf3.
 *
 *   bench_X -s [-a ADDR] [-p PORT] [-D SOCKET] [-A ARENA] [-N] [-M] [--llp LLP]
 *           [-m tcp-pingpong [-S SIZE] | -m tcp-send]
 *   bench_X -c -a ADDR [-p PORT] [-D SOCKET] -m MODE [-S SIZE] [-t SECONDS] [-d DEPTH] [-N] [-M]
 *           [--llp LLP]
 *
 * MODE: write, write-imm, read, send (SIZE bytes each, DEPTH outstanding, default 1 MiB, 64 KiB
 * for send, depth 8), pingpong, tcp-pingpong (SIZE 8), tcp-send (SIZE bytes each on a
 * TCP socket, 64 KiB by default, with the Sends' flow control: see server_tcp_send).
 * write-imm: RDMA Writes with Immediate Data (RFC 7306, both iwxds offering it), each
 * taking one of the server's receives under the Sends' credits, its immediate data its
 * number, which the server checks. -D names iwxd's socket and -A
 * the server's arena (bench_verbs only: a server allocates its buffers once the client
 * says what it wants, from an arena opened before). --llp sctp (bench_engine only, both
 * sides) runs the queue pair on the DDP adaptation over usrsctp (llp_sctp.c), SCTP in UDP
 * datagrams to and from PORT, instead of MPA over TCP: scripts/bench-sctp.sh runs it.
 * -N asks for no MPA CRC, which takes both sides: either one asking for it turns it on. -M asks for MPA markers in what
 * this side receives (RFC 5044 §4.3; per direction: both sides for both). The client's first Send tells
 * the server the mode, size and depth, so the server needs -m only for tcp-pingpong
 * and tcp-send, which speak no iWARP (tcp-pingpong: and the client's -S, if not 8). The server answers with
 * its buffer's {addr, rkey, len} and how many Sends it has receives for; the client
 * sends no more than that beyond what the server's credit messages report taken. A
 * closing FIN/FINACK exchange confirms that every byte arrived (Writes and Sends
 * complete once TCP has them) and carries the server's counters back. Writes and Reads
 * are checked byte for byte afterwards. The server serves one client, then exits.
 * Control Sends are signaled one in CTL_SIGNAL (and those that must be), as an
 * application that wants no completion per message does.
 *
 * The client prints one line of key=value pairs, e.g.
 *   mode=write size=1048576 depth=8 seconds=3.01 msgs=... bytes=... gbps=... fpdus=...
 *	fpdus_aligned=... aligned_pct=... doorbells_c=... wakeups_c=... doorbells_s=...
 *	wakeups_s=... client_cpu_pct=... client_cpu_ms=...
 *   mode=pingpong size=8 seconds=3.00 n=... rtt_us_median=... rtt_us_p99=... fpdus=...
 * fpdus and fpdus_aligned count both sides' FPDUs from the first request measured to
 * the last (aligned_pct is "na" when a side could not tell); doorbells and wakeups are
 * those of the client's (_c) and the server's (_s) iwxd, 0 for the engine.
 * Exit status 0 on success, 1 on any error, with a message on stderr.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include "bench_util.h"
#include "util/clock.h"

#define SETUP_MS	10000	/* connect, MPA, and each control exchange */
#define ACCEPT_MS	30000	/* the server's wait for its client */
#define DRAIN_MS	10000	/* outstanding work after the measured time */
#define CONNECT_RETRY_MS 5000	/* the client retries a refused connect this long */
#define MAX_DEPTH	128	/* also the IRD/ORD asked for: MPA carries them in a byte */
#define MAX_SIZE	(256u << 20)
#define NSEND		64	/* control Send slots on each side */
#define CTL_SIGNAL	16	/* one control Send in this many is signaled */
#define NRECV_CTL	32	/* receives besides those for data Sends */
#define ARENA_DEFAULT	(64u << 20)

enum mode { M_WRITE, M_WRITE_IMM, M_READ, M_SEND, M_PINGPONG, M_TCP_PINGPONG, M_TCP_SEND,
	    M_COUNT };
static const char *const mode_names[M_COUNT] = {
	"write", "write-imm", "read", "send", "pingpong", "tcp-pingpong", "tcp-send",
};

/* Modes whose requests write the server's buffer; whose requests each take a receive there */
static bool mode_writes(enum mode m)
{
	return m == M_WRITE || m == M_WRITE_IMM;
}

static bool mode_takes_receives(enum mode m)
{
	return m == M_SEND || m == M_WRITE_IMM;
}

enum msg_type { T_HELLO = 1, T_INFO, T_DATA, T_CREDIT, T_FIN, T_FINACK, T_PING, T_PONG };

/* A control message, big-endian. Pings are its first 8 bytes: type and seq (in mode). */
struct ctl {
	uint32_t	type;
	uint32_t	mode;
	uint64_t	v[8];
} __attribute__((packed));

/*
 * HELLO  c->s  v0 size, v1 depth, v2 milliseconds
 * INFO   s->c  v0 buffer addr, v1 rkey, v2 buffer len, v3 data receives (send credits)
 * CREDIT s->c  v0 data Sends received and their receives posted again, cumulative
 * FIN    c->s  v0 messages, v1 bytes
 * FINACK s->c  v0 messages received, v1 bytes received, then the server's counters
 *              from INFO to FIN: v2 tx_fpdus, v3 tx_fpdus_aligned, v4 doorbells,
 *              v5 wakeups, v6 1 when they are valid; v7 1 when a Write landed wrong
 */

/* wr_id: kind in the top byte, slot (or control Send number) below */
enum { K_CTL = 1, K_DATA, K_RECV, K_HELLO };
#define WRID(k, i)	((uint64_t)(k) << 56 | (i))
#define WR_KIND(id)	((id) >> 56)
#define WR_IDX(id)	((id) & ((1ull << 56) - 1))

struct ep {
	bool		server;
	enum mode	mode;
	uint32_t	size, depth;
	uint32_t	ms;			/* measured time */

	struct rdma	*r;
	struct rdma_opts o;

	struct ctl	*hello;			/* server: the first receive */
	uint8_t		*rbuf;			/* receive slots */
	uint32_t	rlen, nrecv, rstag;
	uint8_t		*sbuf;			/* control Send slots, used in turn */
	uint32_t	slen, sstag;
	uint64_t	sposted, sdone;
	uint8_t		*data;			/* Write/Send source, Read sink; server: the target */
	uint64_t	dlen;
	uint32_t	dstag;

	/* client */
	uint64_t	raddr, rbuf_len;	/* the server's buffer */
	uint32_t	rkey;
	uint64_t	credits, credited;	/* data Sends the server takes: credits + credited */
	uint64_t	posted, done, out;	/* data requests */
	bool		got_info, got_finack;
	struct ctl	finack;
	uint32_t	pong_seq;

	/* server */
	bool		got_hello, got_fin;
	bool		closing;		/* the peer's close is expected: flushes are too */
	uint64_t	rx_msgs, rx_bytes, credit_every;
	struct rdma_counters base;		/* at INFO */
	uint64_t	cpu0, cpu1;		/* at INFO and at FIN */
};

/* n bytes the queue pair may use, registered with access. */
static void *buf_new(struct ep *e, uint64_t n, int access, uint32_t *stag)
{
	void *p = rdma_alloc(e->r, n);

	if (!p || rdma_reg(e->r, p, n, access, stag))
		return NULL;
	return p;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* ------------------------------------------------------------- the queue pair */

static const char *wc_status_name(uint8_t s)
{
	static const char *const names[] = {
		"success", "local length error", "local protection error",
		"remote access error", "remote operation error", "remote invalid request",
		"fatal error", "flushed",
	};
	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown status";
}

static int qp_failed(struct ep *e)
{
	rdma_report_failure(e->r);
	return -ECONNABORTED;
}

static int post_recv(struct ep *e, uint32_t slot)
{
	struct iwx_recv_wr wr = {
		.wr_id = WRID(K_RECV, slot), .num_sge = 1,
		.sge = { { (uintptr_t)(e->rbuf + (uint64_t)slot * e->rlen), e->rlen, e->rstag } },
	};
	int err = rdma_post_recv(e->r, &wr);

	return err ? errf(err, "posting a receive") : 0;
}

/*
 * Send the first len bytes of m from the next control slot. Signaled when signal says
 * so and one in CTL_SIGNAL otherwise: Sends complete in order, so each completion
 * frees its slot and those before it.
 */
static int send_ctl(struct ep *e, const struct ctl *m, uint32_t len, bool signal)
{
	uint32_t slot = e->sposted % NSEND;
	uint8_t *p = e->sbuf + (uint64_t)slot * e->slen;
	struct iwx_send_wr wr = {
		.wr_id = WRID(K_CTL, e->sposted), .opcode = IWX_WR_SEND,
		.num_sge = 1, .sge = { { (uintptr_t)p, len, e->sstag } },
	};
	int err;

	/* the peer's pace keeps this far off */
	if (e->sposted - e->sdone >= NSEND - CTL_SIGNAL)
		return errf(-ENOBUFS, "control Send slots not freed in time");
	if (len > e->slen)
		return errf(-EMSGSIZE, "control message of %u bytes", len);
	if (signal || (e->sposted + 1) % CTL_SIGNAL == 0)
		wr.flags = IWX_WR_SIGNALED;
	memset(p, 0, len);
	memcpy(p, m, len < sizeof(*m) ? len : sizeof(*m));
	err = rdma_post_send(e->r, &wr);
	if (err)
		return errf(err, "posting a Send");
	e->sposted++;
	return 0;
}

static int send_msg(struct ep *e, uint32_t type, const uint64_t *v, int n, bool signal)
{
	struct ctl m = { .type = htobe32(type), .mode = htobe32(e->mode) };

	for (int i = 0; i < n; i++)
		m.v[i] = htobe64(v[i]);
	return send_ctl(e, &m, sizeof(m), signal);
}

static int server_hello(struct ep *e);
static int server_recv(struct ep *e, const uint8_t *p, uint32_t len);
static int server_imm(struct ep *e, uint32_t imm);
static int client_recv(struct ep *e, const uint8_t *p, uint32_t len);

static int on_wc(struct ep *e, const struct iwx_wc *wc)
{
	uint64_t idx = WR_IDX(wc->wr_id);
	int err;

	if (wc->status == IWX_WC_WR_FLUSH_ERR)
		return e->closing ? 0 : qp_failed(e);	/* the cause is the queue pair's */
	if (wc->status != IWX_WC_SUCCESS) {
		static const char *const kinds[] = { "request", "control Send", "data request",
						     "receive", "receive" };
		uint64_t k = WR_KIND(wc->wr_id);

		errf(0, "%s (wr_id 0x%lx) failed: %s", kinds[k < 5 ? k : 0],
		     (unsigned long)wc->wr_id, wc_status_name(wc->status));
		return qp_failed(e);
	}
	switch (WR_KIND(wc->wr_id)) {
	case K_CTL:
		e->sdone = idx + 1;
		return 0;
	case K_DATA:
		e->done++;
		e->out--;
		return 0;
	case K_HELLO:
		return server_hello(e);
	case K_RECV:
		if (idx >= e->nrecv)
			return errf(-EPROTO, "completion of unknown receive %lu", (unsigned long)idx);
		if (wc->opcode == IWX_WC_RECV_IMM)
			err = e->server ? server_imm(e, wc->imm_data) :
					  errf(-EPROTO, "client: unexpected Immediate Data");
		else
			err = e->server ? server_recv(e, e->rbuf + idx * e->rlen, wc->byte_len) :
					  client_recv(e, e->rbuf + idx * e->rlen, wc->byte_len);
		/* the handlers copied what they need: the slot can take the next Send */
		return err ? err : post_recv(e, idx);
	}
	return errf(-EPROTO, "completion with unknown wr_id 0x%lx", (unsigned long)wc->wr_id);
}

/*
 * Take completions, waiting up to wait_ms when none are there. Returns completions
 * handled, or -errno (-ENOTCONN: the stream is gone, unreported; the caller decides
 * whether that is an error).
 */
static int pump(struct ep *e, int wait_ms)
{
	struct iwx_wc wc[64];
	int n = rdma_poll(e->r, wc, 64, wait_ms);

	if (n < 0 && n != -ENOTCONN)
		return errf(n, "polling completions");
	for (int i = 0; i < n; i++) {
		int err = on_wc(e, &wc[i]);

		if (err)
			return err;
	}
	return n;
}

/* Pump until *flag is set or ms pass. */
static int wait_flag(struct ep *e, const bool *flag, uint32_t ms, const char *what)
{
	uint64_t deadline = iwx_now_ms() + ms;

	while (!*flag) {
		int err;

		if (iwx_now_ms() >= deadline)
			return errf(-ETIMEDOUT, "waiting for %s", what);
		err = pump(e, 100);
		if (err == -ENOTCONN) {
			errf(0, "waiting for %s: the queue pair failed", what);
			return qp_failed(e);
		}
		if (err < 0)
			return err;
	}
	return 0;
}

/* Receive slots of rlen bytes and control Send slots of slen bytes, all posted. */
static int make_slots(struct ep *e, uint32_t nrecv, uint32_t rlen, uint32_t slen)
{
	int err;

	e->nrecv = nrecv;
	e->rlen = rlen;
	e->slen = slen;
	e->rbuf = buf_new(e, (uint64_t)nrecv * rlen, IWX_ACCESS_LOCAL_WRITE, &e->rstag);
	e->sbuf = buf_new(e, (uint64_t)NSEND * slen, 0, &e->sstag);
	if (!e->rbuf || !e->sbuf)
		return -ENOMEM;
	for (uint32_t i = 0; i < nrecv; i++)
		if ((err = post_recv(e, i)))
			return err;
	return 0;
}

/* Counters after minus before; valid only when both are. */
static struct rdma_counters counters_since(struct ep *e, const struct rdma_counters *before)
{
	struct rdma_counters c;

	rdma_counters(e->r, &c);
	c.valid = c.valid && before->valid;
	c.tx_fpdus -= before->tx_fpdus;
	c.tx_fpdus_aligned -= before->tx_fpdus_aligned;
	c.doorbells -= before->doorbells;
	c.wakeups -= before->wakeups;
	return c;
}

/* ----------------------------------------------------------------- server */

static int server_hello(struct ep *e)
{
	uint32_t mode = be32toh(e->hello->mode), ping_len;
	uint64_t size = be64toh(e->hello->v[0]), depth = be64toh(e->hello->v[1]);
	uint32_t data_recvs;
	int err;

	if (be32toh(e->hello->type) != T_HELLO || mode >= M_TCP_PINGPONG || size < 8 ||
	    size > MAX_SIZE || !depth || depth > MAX_DEPTH)
		return errf(-EPROTO, "bad HELLO (mode %u size %lu depth %lu)", mode,
			    (unsigned long)size, (unsigned long)depth);
	e->mode = mode;
	e->size = size;
	e->depth = depth;
	e->ms = be64toh(e->hello->v[2]);
	e->got_hello = true;

	/* Send mode: twice depth receives for data (the client's credits), more for control */
	data_recvs = mode_takes_receives(mode) ? 2 * e->depth : 0;
	ping_len = mode == M_PINGPONG || mode == M_SEND ? e->size : 0;
	e->credit_every = e->depth / 2 ? e->depth / 2 : 1;
	if ((err = make_slots(e, data_recvs + NRECV_CTL, max_u32(ping_len, sizeof(struct ctl)),
			      max_u32(mode == M_PINGPONG ? e->size : 0, sizeof(struct ctl)))))
		return err;
	if (mode_writes(mode) || mode == M_READ) {
		e->dlen = (uint64_t)e->size * e->depth;
		e->data = buf_new(e, e->dlen, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE |
				  IWX_ACCESS_REMOTE_READ, &e->dstag);
		if (!e->data)
			return -ENOMEM;
		if (mode == M_READ)
			for (uint64_t i = 0; i < e->dlen; i++)
				e->data[i] = pattern(i);
	}
	rdma_counters(e->r, &e->base);
	e->cpu0 = cpu_ns();
	return send_msg(e, T_INFO, (uint64_t[]){ (uintptr_t)e->data, e->dstag, e->dlen,
						 data_recvs }, 4, false);
}

/* Did every Write land where and as the client wrote it? */
static bool writes_landed(const struct ep *e, uint64_t msgs)
{
	uint64_t n = (msgs < e->depth ? msgs : e->depth) * e->size;

	for (uint64_t i = 0; i < n; i++)
		if (e->data[i] != pattern(i))
			return false;
	return true;
}

/* A data Send or Write with Immediate of len bytes arrived: its receive is reposted next */
static int server_data(struct ep *e, uint64_t len)
{
	e->rx_msgs++;
	e->rx_bytes += len;
	if (e->rx_msgs % e->credit_every == 0)
		return send_msg(e, T_CREDIT, &e->rx_msgs, 1, false);
	return 0;
}

/* Immediate Data: its Write's number, in order (RFC 7306 §7: completed once that Write is placed) */
static int server_imm(struct ep *e, uint32_t imm)
{
	if (e->mode != M_WRITE_IMM || imm != (uint32_t)e->rx_msgs)
		return errf(-EPROTO, "server: Immediate Data %u, expected Write %lu", imm,
			    (unsigned long)e->rx_msgs);
	return server_data(e, e->size);
}

static int server_recv(struct ep *e, const uint8_t *p, uint32_t len)
{
	struct ctl m = { 0 };
	struct rdma_counters c;

	memcpy(&m, p, len < sizeof(m) ? len : sizeof(m));
	switch (len >= 8 ? be32toh(m.type) : 0) {
	case T_DATA:
		return server_data(e, len);
	case T_PING:
		m.type = htobe32(T_PONG);
		return send_ctl(e, &m, len, false);
	case T_FIN:
		if (len < sizeof(m))
			break;
		e->cpu1 = cpu_ns();
		c = counters_since(e, &e->base);
		e->got_fin = true;
		/* signaled: the server ends once it knows this went out */
		return send_msg(e, T_FINACK, (uint64_t[]){ e->rx_msgs, e->rx_bytes, c.tx_fpdus,
							   c.tx_fpdus_aligned, c.doorbells,
							   c.wakeups, c.valid,
							   mode_writes(e->mode) &&
							   !writes_landed(e, be64toh(m.v[0])) },
				8, true);
	}
	return errf(-EPROTO, "server: unexpected message (type %u, %u bytes)", be32toh(m.type), len);
}

static int server_rdma(struct ep *e, const struct sockaddr_in *addr)
{
	struct iwx_recv_wr wr = { .wr_id = WRID(K_HELLO, 0), .num_sge = 1 };
	uint32_t stag;
	uint64_t deadline;
	int err;

	/* queue depths before the HELLO tells the mode: enough for any */
	e->o.sq_depth = NSEND + 8;
	e->o.rq_depth = 2 * MAX_DEPTH + NRECV_CTL + 8;
	e->o.ird = e->o.ord = MAX_DEPTH;
	e->r = rdma_listen(addr, &e->o);
	if (!e->r)
		return -EIO;
	/* the client speaks first: its HELLO finds this receive, posted before accepting */
	e->hello = buf_new(e, sizeof(*e->hello), IWX_ACCESS_LOCAL_WRITE, &stag);
	if (!e->hello)
		return -ENOMEM;
	wr.sge[0] = (struct iwx_sge){ (uintptr_t)e->hello, sizeof(*e->hello), stag };
	if ((err = rdma_post_recv(e->r, &wr)))
		return errf(err, "posting a receive");
	if ((err = rdma_accept(e->r, ACCEPT_MS)))
		return err;
	if ((err = wait_flag(e, &e->got_hello, SETUP_MS, "the client's HELLO")))
		return err;
	if ((err = wait_flag(e, &e->got_fin, e->ms + DRAIN_MS + SETUP_MS, "the client's FIN")))
		return err;

	/* FINACK out, then the client closes: that ends the stream, as expected */
	deadline = iwx_now_ms() + SETUP_MS;
	e->closing = true;
	for (;;) {
		if (iwx_now_ms() >= deadline)
			return errf(-ETIMEDOUT, "waiting for the client to close");
		err = pump(e, 100);
		if (err == -ENOTCONN) {
			if (e->sdone != e->sposted)
				return errf(-ECONNRESET, "the stream ended before the FINACK went out");
			break;
		}
		if (err < 0)
			return err;
	}
	print_server(mode_names[e->mode], e->size, e->depth, e->rx_msgs, e->rx_bytes,
		     e->cpu1 - e->cpu0, e->ms);
	return 0;
}

/* ----------------------------------------------------------------- client */

static int client_recv(struct ep *e, const uint8_t *p, uint32_t len)
{
	struct ctl m = { 0 };

	memcpy(&m, p, len < sizeof(m) ? len : sizeof(m));
	switch (len >= 8 ? be32toh(m.type) : 0) {
	case T_PONG:
		e->pong_seq = be32toh(m.mode);
		return 0;
	case T_CREDIT:
		if (len < sizeof(m))
			break;
		if (be64toh(m.v[0]) > e->credited)
			e->credited = be64toh(m.v[0]);
		return 0;
	case T_INFO:
		if (len < sizeof(m))
			break;
		e->raddr = be64toh(m.v[0]);
		e->rkey = be64toh(m.v[1]);
		e->rbuf_len = be64toh(m.v[2]);
		e->credits = be64toh(m.v[3]);
		e->got_info = true;
		return 0;
	case T_FINACK:
		if (len < sizeof(m))
			break;
		e->finack = m;
		e->got_finack = true;
		return 0;
	}
	return errf(-EPROTO, "client: unexpected message (type %u, %u bytes)", be32toh(m.type), len);
}

static int post_data(struct ep *e)
{
	uint32_t slot = e->posted % e->depth;
	uint64_t off = (uint64_t)slot * e->size;
	struct iwx_send_wr wr = {
		.wr_id = WRID(K_DATA, slot), .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { { (uintptr_t)(e->data + off), e->size, e->dstag } },
		.remote_addr = e->raddr + off, .rkey = e->rkey,
	};
	static const enum iwx_wr_opcode ops[] = { [M_WRITE] = IWX_WR_WRITE,
		[M_WRITE_IMM] = IWX_WR_WRITE_IMM, [M_READ] = IWX_WR_READ, [M_SEND] = IWX_WR_SEND };
	int err;

	wr.opcode = ops[e->mode];
	if (e->mode == M_WRITE_IMM)
		wr.imm_data = (uint32_t)e->posted;
	err = rdma_post_send(e->r, &wr);
	if (err)
		return errf(err, "posting a %s", mode_names[e->mode]);
	e->posted++;
	e->out++;
	return 0;
}

static bool may_post(const struct ep *e)
{
	return e->out < e->depth &&
	       (!mode_takes_receives(e->mode) || e->posted < e->credits + e->credited);
}

static int run_pump(struct ep *e, uint64_t deadline_ns, const char *what)
{
	uint64_t now = now_ns();
	int left_ms = now < deadline_ns ? (int)((deadline_ns - now) / 1000000) : 0;
	int err = pump(e, left_ms < 1 ? 1 : left_ms > 100 ? 100 : left_ms);

	if (err == -ENOTCONN) {
		errf(0, "%s: the queue pair failed", what);
		return qp_failed(e);
	}
	return err < 0 ? err : 0;
}

/* Both sides' counters over the measured time, and the client's CPU. */
static void print_counters(const struct ep *e, const struct rdma_counters *c, double secs,
			   uint64_t cpu)
{
	uint64_t fpdus = c->tx_fpdus + be64toh(e->finack.v[2]);
	uint64_t aligned = c->tx_fpdus_aligned + be64toh(e->finack.v[3]);

	printf(" fpdus=%lu fpdus_aligned=%lu", (unsigned long)fpdus, (unsigned long)aligned);
	if (c->valid && be64toh(e->finack.v[6]) && fpdus)
		printf(" aligned_pct=%.1f", 100.0 * aligned / fpdus);
	else
		printf(" aligned_pct=na");
	printf(" doorbells_c=%lu wakeups_c=%lu doorbells_s=%lu wakeups_s=%lu",
	       (unsigned long)c->doorbells, (unsigned long)c->wakeups,
	       (unsigned long)be64toh(e->finack.v[4]), (unsigned long)be64toh(e->finack.v[5]));
	print_client_cpu(cpu, secs);
}

static int finish(struct ep *e)
{
	int err = send_msg(e, T_FIN, (uint64_t[]){ e->done, e->done * e->size }, 2, false);

	return err ? err : wait_flag(e, &e->got_finack, SETUP_MS, "the server's FINACK");
}

static int client_stream(struct ep *e)
{
	struct rdma_counters base, c;
	uint64_t t0, end, cpu0, t1, cpu1, drain_end, bytes;
	double secs;
	int err;

	rdma_counters(e->r, &base);
	t0 = now_ns();
	end = t0 + (uint64_t)e->ms * 1000000;
	cpu0 = cpu_ns();
	while (now_ns() < end) {
		while (may_post(e))
			if ((err = post_data(e)))
				return err;
		if ((err = run_pump(e, end, "during the run")))
			return err;
	}
	drain_end = now_ns() + (uint64_t)DRAIN_MS * 1000000;
	while (e->out) {
		if (now_ns() >= drain_end)
			return errf(-ETIMEDOUT, "%lu requests still outstanding after %d s",
				    (unsigned long)e->out, DRAIN_MS / 1000);
		if ((err = run_pump(e, drain_end, "draining")))
			return err;
	}
	/* Reads are done once their data is here; Writes and Sends once the server says so */
	t1 = now_ns();
	cpu1 = cpu_ns();
	c = counters_since(e, &base);
	if ((err = finish(e)))
		return err;
	if (e->mode != M_READ) {
		t1 = now_ns();
		cpu1 = cpu_ns();
	}
	bytes = e->done * e->size;
	if (mode_takes_receives(e->mode) && (be64toh(e->finack.v[0]) != e->done ||
				  be64toh(e->finack.v[1]) != bytes))
		return errf(-EIO, "the server received %lu messages, %lu bytes, of %lu, %lu",
			    (unsigned long)be64toh(e->finack.v[0]),
			    (unsigned long)be64toh(e->finack.v[1]), (unsigned long)e->done,
			    (unsigned long)bytes);
	if (mode_writes(e->mode) && be64toh(e->finack.v[7]))
		return errf(-EIO, "the server's buffer differs from what was written");
	if (e->mode == M_READ)
		for (uint64_t i = 0; i < (e->done < e->depth ? e->done : e->depth) * e->size; i++)
			if (e->data[i] != pattern(i))
				return errf(-EIO, "byte %lu read differs from the server's",
					    (unsigned long)i);
	secs = (t1 - t0) / 1e9;
	print_goodput(mode_names[e->mode], e->size, e->depth, secs, e->done, bytes);
	print_counters(e, &c, secs, cpu1 - cpu0);
	return 0;
}

static int client_pingpong(struct ep *e)
{
	struct rdma_counters base, c;
	uint64_t t0, end, cpu0, t1, cpu1;
	size_t n = 0, cap;
	uint64_t *rtt = rtt_array(e->ms, &cap);
	uint32_t seq = 0;
	double secs;
	int err;

	rdma_counters(e->r, &base);
	t0 = now_ns();
	end = t0 + (uint64_t)e->ms * 1000000;
	cpu0 = cpu_ns();
	while (now_ns() < end && n < cap) {
		struct ctl m = { .type = htobe32(T_PING), .mode = htobe32(++seq) };
		uint64_t start = now_ns(), limit = start + (uint64_t)SETUP_MS * 1000000;

		if ((err = send_ctl(e, &m, e->size, false)))
			return err;
		while (e->pong_seq != seq) {
			if (now_ns() >= limit)
				return errf(-ETIMEDOUT, "no pong for ping %u", seq);
			if ((err = run_pump(e, limit, "ping-pong")))
				return err;
		}
		rtt[n++] = now_ns() - start;
	}
	t1 = now_ns();
	cpu1 = cpu_ns();
	c = counters_since(e, &base);
	if ((err = finish(e)))
		return err;
	if (!n)
		return errf(-EIO, "no round trip completed");
	secs = (t1 - t0) / 1e9;
	print_rtts("pingpong", e->size, rtt, n, secs);
	print_counters(e, &c, secs, cpu1 - cpu0);
	free(rtt);
	return 0;
}

/* The client's receive slots: count and size; its control Send slots' size. */
static void client_slots(const struct ep *e, uint32_t *nrecv, uint32_t *rlen, uint32_t *slen)
{
	uint32_t ping_len = e->mode == M_PINGPONG ? e->size : 0;

	*nrecv = 2 * e->depth + NRECV_CTL;
	*rlen = max_u32(ping_len, sizeof(struct ctl));
	*slen = max_u32(ping_len, sizeof(struct ctl));
}

static int client_rdma(struct ep *e, const struct sockaddr_in *addr)
{
	uint32_t nrecv, rlen, slen;
	uint64_t need;
	int err;

	client_slots(e, &nrecv, &rlen, &slen);
	if (e->mode != M_PINGPONG)
		e->dlen = (uint64_t)e->size * e->depth;
	/* the arena: what the buffers take, room for alignment, rounded up to MiB */
	need = e->dlen + (uint64_t)nrecv * rlen + (uint64_t)NSEND * slen + (1u << 20);
	e->o.arena = (need + (1u << 20) - 1) & ~(uint64_t)((1u << 20) - 1);
	e->o.sq_depth = e->depth + NSEND + 8;
	e->o.rq_depth = nrecv + 8;
	e->o.ird = e->o.ord = e->depth;
	e->r = rdma_connect(addr, &e->o, CONNECT_RETRY_MS);
	if (!e->r)
		return -EIO;
	if (e->mode == M_READ && rdma_ord(e->r) < e->depth)
		return errf(-EPROTO, "the server allows %u Reads in flight, not %u",
			    rdma_ord(e->r), e->depth);
	if ((err = make_slots(e, nrecv, rlen, slen)))
		return err;
	if (e->mode != M_PINGPONG) {
		e->data = buf_new(e, e->dlen, IWX_ACCESS_LOCAL_WRITE, &e->dstag);
		if (!e->data)
			return -ENOMEM;
		for (uint64_t i = 0; e->mode != M_READ && i < e->dlen; i++)
			e->data[i] = pattern(i);
		for (uint32_t i = 0; e->mode == M_SEND && i < e->depth; i++) {
			uint32_t t = htobe32(T_DATA);

			memcpy(e->data + (uint64_t)i * e->size, &t, sizeof(t));
		}
	}
	if ((err = send_msg(e, T_HELLO, (uint64_t[]){ e->size, e->depth, e->ms }, 3, false)) ||
	    (err = wait_flag(e, &e->got_info, SETUP_MS, "the server's INFO")))
		return err;
	if ((mode_writes(e->mode) || e->mode == M_READ) && e->rbuf_len < e->dlen)
		return errf(-EPROTO, "the server's buffer is %lu bytes, not %lu",
			    (unsigned long)e->rbuf_len, (unsigned long)e->dlen);
	if (mode_takes_receives(e->mode) && !e->credits)
		return errf(-EPROTO, "the server posted no receives for %s", mode_names[e->mode]);

	return e->mode == M_PINGPONG ? client_pingpong(e) : client_stream(e);
}

/* ------------------------------------------------------------- plain TCP */

static int tcp_opts(int fd)
{
	struct timeval tv = { .tv_sec = SETUP_MS / 1000 };
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return errf(-errno, "setsockopt");
	return 0;
}

/* 1: all len bytes moved, 0: the peer closed before the first, -errno */
static int io_full(int fd, void *buf, size_t len, bool out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? send(fd, (uint8_t *)buf + done, len - done, MSG_NOSIGNAL) :
				  recv(fd, (uint8_t *)buf + done, len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return done ? -ECONNRESET : 0;
		done += n;
	}
	return 1;
}

/* Listen on addr and take one client: its socket, options set, or -errno (said). */
static int tcp_accept(const struct sockaddr_in *addr)
{
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, fd, r;
	struct pollfd pl = { .fd = lfd, .events = POLLIN };

	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (const struct sockaddr *)addr, sizeof(*addr)) || listen(lfd, 1))
		return errf(-errno, "listening on port %u", ntohs(addr->sin_port));
	if (poll(&pl, 1, ACCEPT_MS) != 1)
		return errf(-ETIMEDOUT, "no client within %d s", ACCEPT_MS / 1000);
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0)
		return errf(-errno, "accept");
	return (r = tcp_opts(fd)) ? r : fd;
}

/* Connect to addr, retrying a refused connect for a while: the socket, options set, or -errno. */
static int tcp_connect(const struct sockaddr_in *addr)
{
	uint64_t retry_end = iwx_now_ms() + CONNECT_RETRY_MS;
	int fd, r;

	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errf(-errno, "socket");
		if (!connect(fd, (const struct sockaddr *)addr, sizeof(*addr)))
			break;
		r = -errno;
		close(fd);
		if (r != -ECONNREFUSED || iwx_now_ms() >= retry_end)
			return errf(r, "connecting to the server");
		usleep(50000);
	}
	return (r = tcp_opts(fd)) ? r : fd;
}

static int server_tcp(const struct sockaddr_in *addr, uint32_t size)
{
	uint8_t *buf = xalloc(size);
	uint64_t n = 0, t0, cpu0;
	int fd = tcp_accept(addr), r;

	if (fd < 0)
		return fd;
	t0 = now_ns();
	cpu0 = cpu_ns();
	while ((r = io_full(fd, buf, size, false)) == 1) {
		if ((r = io_full(fd, buf, size, true)) != 1)
			return errf(r ? r : -ECONNRESET, "sending a pong");
		n++;
	}
	if (r < 0)
		return errf(r, "receiving a ping");
	close(fd);
	free(buf);
	print_server("tcp-pingpong", size, 0, n, n * size, cpu_ns() - cpu0,
		     (now_ns() - t0) / 1000000);
	return 0;
}

static int client_tcp(const struct sockaddr_in *addr, uint32_t size, uint32_t ms)
{
	uint64_t t0, end, cpu0;
	uint8_t *buf = xalloc(size);
	size_t n = 0, cap;
	uint64_t *rtt = rtt_array(ms, &cap);
	int fd = tcp_connect(addr), r;

	if (fd < 0)
		return fd;
	t0 = now_ns();
	end = t0 + (uint64_t)ms * 1000000;
	cpu0 = cpu_ns();
	while (now_ns() < end && n < cap) {
		uint64_t start = now_ns();

		memcpy(buf, &n, sizeof(n) < size ? sizeof(n) : size);
		if ((r = io_full(fd, buf, size, true)) != 1)
			return errf(r ? r : -ECONNRESET, "sending a ping");
		if ((r = io_full(fd, buf, size, false)) != 1)
			return errf(r ? r : -ECONNRESET, "receiving a pong");
		rtt[n++] = now_ns() - start;
	}
	double secs = (now_ns() - t0) / 1e9;
	uint64_t cpu = cpu_ns() - cpu0;

	close(fd);
	print_rtts("tcp-pingpong", size, rtt, n, secs);
	print_client_cpu(cpu, secs);
	free(rtt);
	free(buf);
	return 0;
}

/*
 * tcp-send: SIZE-byte messages on a plain socket under the Sends' flow control (the
 * server's credits, above): the receiver returns its count of messages (8 bytes,
 * cumulative) each depth / 2 of them, and the sender stays within 2 x depth of the last
 * count. The client's first 8 bytes say the size and depth; its shutdown ends the stream,
 * and the server's last count confirms that every message arrived.
 */
static int server_tcp_send(const struct sockaddr_in *addr)
{
	uint32_t hello[2], size, depth;
	uint64_t bytes = 0, msgs = 0, every, count, t0, cpu0, window;
	uint8_t *buf;
	ssize_t n;
	int fd = tcp_accept(addr), r;

	if (fd < 0)
		return fd;
	if ((r = io_full(fd, hello, sizeof(hello), false)) != 1)
		return errf(r ? r : -ECONNRESET, "receiving the size and depth");
	size = be32toh(hello[0]);
	depth = be32toh(hello[1]);
	if (size < 8 || size > MAX_SIZE || !depth || depth > MAX_DEPTH)
		return errf(-EPROTO, "bad size %u or depth %u", size, depth);
	every = depth / 2 ? depth / 2 : 1;
	window = 2ull * depth * size;	/* the most the sender has in flight */
	buf = xalloc(window);
	t0 = now_ns();
	cpu0 = cpu_ns();
	/* into the whole window in turn, as Writes land all over their buffers */
	while ((n = recv(fd, buf + bytes % window, window - bytes % window, 0)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errf(-errno, "receiving messages");
		bytes += n;
		if (bytes / size / every == msgs / every) {
			msgs = bytes / size;
			continue;
		}
		msgs = bytes / size;
		count = htobe64(msgs);
		if ((r = io_full(fd, &count, sizeof(count), true)) != 1)
			return errf(r ? r : -ECONNRESET, "sending a count");
	}
	if (bytes % size)
		return errf(-EPROTO, "the stream ended inside a message");
	count = htobe64(msgs);
	if ((r = io_full(fd, &count, sizeof(count), true)) != 1)
		return errf(r ? r : -ECONNRESET, "sending the last count");
	print_server("tcp-send", size, depth, msgs, bytes, cpu_ns() - cpu0, (now_ns() - t0) / 1000000);
	close(fd);
	free(buf);
	return 0;
}

static int client_tcp_send(const struct sockaddr_in *addr, uint32_t size, uint32_t depth,
			   uint32_t ms)
{
	uint32_t hello[2] = { htobe32(size), htobe32(depth) };
	uint64_t sent = 0, counted = 0, count, t0, end, cpu0;
	uint8_t *msg = xalloc((size_t)size * depth);	/* one buffer per outstanding message */
	int fd = tcp_connect(addr), r;

	if (fd < 0)
		return fd;
	if ((r = io_full(fd, hello, sizeof(hello), true)) != 1)
		return errf(r ? r : -ECONNRESET, "sending the size and depth");
	t0 = now_ns();
	end = t0 + (uint64_t)ms * 1000000;
	cpu0 = cpu_ns();
	while (now_ns() < end) {
		if (sent < counted + 2ull * depth) {
			if ((r = io_full(fd, msg + sent % depth * size, size, true)) != 1)
				return errf(r ? r : -ECONNRESET, "sending a message");
			sent++;
		} else if ((r = io_full(fd, &count, sizeof(count), false)) == 1) {
			counted = be64toh(count);
		} else {
			return errf(r ? r : -ECONNRESET, "receiving a count");
		}
	}
	if (shutdown(fd, SHUT_WR))
		return errf(-errno, "shutdown");
	while ((r = io_full(fd, &count, sizeof(count), false)) == 1)
		counted = be64toh(count);
	if (r < 0)
		return errf(r, "receiving the last count");
	if (counted != sent)
		return errf(-EIO, "the server received %lu messages of %lu", (unsigned long)counted,
			    (unsigned long)sent);
	double secs = (now_ns() - t0) / 1e9;
	uint64_t cpu = cpu_ns() - cpu0;

	close(fd);
	print_goodput("tcp-send", size, depth, secs, sent, sent * size);
	print_client_cpu(cpu, secs);
	free(msg);
	return 0;
}

/* ------------------------------------------------------------------- main */

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: bench_%s -s [-a ADDR] [-p PORT] [-D SOCKET] [-A ARENA] [-N] [-M] [--llp LLP]\n"
		"                    [-m tcp-pingpong [-S SIZE] | -m tcp-send]\n"
		"       bench_%s -c -a ADDR [-p PORT] [-D SOCKET] -m MODE [-S SIZE] [-t SECONDS]\n"
		"                    [-d DEPTH] [-N] [-M] [--llp LLP] [-Z BYTES]\n"
		"MODE: write, write-imm, read, send, pingpong, tcp-pingpong, tcp-send\n"
		"SIZE default: 1 MiB (write, write-imm, read), 64 KiB (send, tcp-send), 8 (ping-pongs);\n"
		"DEPTH 8 (up to %d); SECONDS 3.\n"
		"-D: iwxd's socket, -A: the server's arena (default 64M): bench_verbs only\n"
		"-N: ask for no MPA CRC (both sides must)\n"
		"-M: ask for MPA markers in what this side receives\n"
		"--llp LLP: the lower layer, tcp (MPA over TCP, the default) or sctp (the DDP\n"
		"    adaptation over usrsctp, in UDP datagrams to and from -p PORT; no MPA CRC or\n"
		"    markers): bench_engine only, both sides\n"
		"-Z BYTES: send with MSG_ZEROCOPY from BYTES of payload per call (as iwxd\n"
		"    --zerocopy): bench_engine only, over TCP\n",
		rdma_backend, rdma_backend, MAX_DEPTH);
	exit(status);
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(7175) };
	struct ep e = { .mode = M_COUNT, .o = { .arena = ARENA_DEFAULT, .timeout_ms = SETUP_MS } };
	int role = -1, c, err;
	double seconds = 3;
	long long size = 0, depth = 8, arena, zc;
	static const struct option longs[] = { { "llp", required_argument, NULL, 'L' }, { 0 } };

	while ((c = getopt_long(argc, argv, "sca:p:m:S:t:d:D:A:NMZ:h", longs, NULL)) != -1) {
		switch (c) {
		case 'm':
			for (e.mode = 0; e.mode < M_COUNT; e.mode++)
				if (!strcmp(optarg, mode_names[e.mode]))
					break;
			if (e.mode == M_COUNT)
				usage(2);
			break;
		case 'S': size = parse_size(optarg); break;
		case 't': seconds = strtod(optarg, NULL); break;
		case 'd': depth = atol(optarg); break;
		case 'D': e.o.daemon = optarg; break;
		case 'N': e.o.no_crc = true; break;
		case 'M': e.o.markers = true; break;
		case 'Z':
			zc = parse_size(optarg);
			if (zc <= 0 || zc > UINT32_MAX)
				usage(2);
			e.o.zerocopy_min = zc;
			break;
		case 'L':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "sctp"))
				usage(2);
			e.o.llp = optarg;
			break;
		case 'A':
			arena = parse_size(optarg);
			if (arena <= 0)
				usage(2);
			e.o.arena = arena;
			break;
		case 'h': usage(0); break;
		default:
			if (common_opt(c, optarg, &role, &addr) != 1)
				usage(2);
		}
	}
	if (optind != argc || role < 0)
		usage(2);
	if (!size)
		size = mode_writes(e.mode) || e.mode == M_READ ? 1 << 20 :
		       e.mode == M_SEND || e.mode == M_TCP_SEND ? 64 << 10 : 8;
	if (size < 8 || size > MAX_SIZE ||
	    (role == 0 && (e.mode == M_COUNT || !addr.sin_addr.s_addr || seconds < 0.01 ||
			   seconds > 3600 || depth < 1 || depth > MAX_DEPTH)))
		usage(2);
	if (role == 1 && e.mode != M_COUNT && e.mode < M_TCP_PINGPONG)
		usage(2);
	e.server = role == 1;
	e.size = size;
	e.depth = depth;
	e.ms = seconds * 1000;
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (e.mode == M_TCP_PINGPONG)
		return (e.server ? server_tcp(&addr, e.size) : client_tcp(&addr, e.size, e.ms)) ? 1 : 0;
	if (e.mode == M_TCP_SEND)
		return (e.server ? server_tcp_send(&addr) :
				   client_tcp_send(&addr, e.size, e.depth, e.ms)) ? 1 : 0;

	err = e.server ? server_rdma(&e, &addr) : client_rdma(&e, &addr);
	if (e.r)
		rdma_close(e.r, !err && !e.server);
	return err ? 1 : 0;
}
