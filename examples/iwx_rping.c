// SPDX-License-Identifier: MIT
/*
 * rping's protocol (rdma-core's librdmacm/examples/rping.c, as the interop README
 * describes it) on iwx's software engine, client or server, to prove the engine
 * against Linux's siw: per iteration the client Sends {buf, rkey, size} of its
 * start buffer, the server RDMA-Reads it, Sends "go", the client Sends its rdma
 * buffer's {buf, rkey, size}, the server RDMA-Writes the data back and Sends "done";
 * the client checks that what came back is what it offered.
 *
 *   iwx_rping -s [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [--no-crc] [--rev 1|2]
 *   iwx_rping -c -a ADDR [-p PORT] [-C COUNT] [-S SIZE] [--no-crc] [--rev 1|2] [--settle-ms MS]
 *
 * Exit status 0 when every iteration verified, 1 otherwise.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "mem.h"
#include "qp.h"

#define OWNER		1
#define TIMEOUT_MS	30000	/* TCG guests are slow */

/* rping's message: where the peer may read or write, big-endian. */
struct rping_info {
	uint64_t	buf;
	uint32_t	rkey;
	uint32_t	size;
} __attribute__((packed));

struct rping {
	struct iwx_conn	conn;
	struct iwx_mem	*mem;
	struct iwx_qp	*qp;
	uint32_t	pd;
	uint8_t		*start_buf, *rdma_buf;
	struct rping_info send_msg, recv_msg;
	uint32_t	start_stag, rdma_stag, send_stag, recv_stag;
	uint32_t	size;
	unsigned	done[IWX_WC_RECV + 1];	/* completions seen and not yet waited for */
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "iwx_rping: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

static uint32_t reg(struct rping *r, void *p, uint32_t len, uint8_t access)
{
	int64_t stag = iwx_mem_reg(r->mem, OWNER, r->pd, p, len, (uintptr_t)p, access);

	if (stag < 0) {
		fail("register memory", (int)stag);
		exit(1);
	}
	return stag;
}

/* Drive the queue pair until one completion arrives (or the time is up). */
static int wait_wc(struct rping *r, struct iwx_wc *wc)
{
	uint64_t deadline = iwx_conn_now_ms() + TIMEOUT_MS;

	while (iwx_conn_now_ms() < deadline) {
		bool ww;
		struct pollfd p = { .fd = r->conn.fd, .events = POLLIN };
		int err = iwx_qp_progress(r->qp, &ww);

		if (iwx_qp_poll(r->qp, wc, 1) == 1)
			return wc->status == IWX_WC_SUCCESS ? 0 : -EIO;
		if (err) {
			struct iwx_term_cause c;
			bool local;

			iwx_qp_error(r->qp, &c, &local);
			fprintf(stderr, "iwx_rping: stream terminated (%s): %s: %s\n",
				local ? "here" : "by the peer", iwx_term_etype_name(c.layer, c.etype),
				iwx_term_ecode_name(c.layer, c.etype, c.ecode));
			return -ECONNABORTED;
		}
		p.events |= ww ? POLLOUT : 0;
		poll(&p, 1, 100);
	}
	return -ETIMEDOUT;
}

/* Wait for a completion of kind op; completions of other kinds are counted for later. */
static int wait_op(struct rping *r, uint8_t op)
{
	struct iwx_wc wc;
	int err;

	while (!r->done[op]) {
		err = wait_wc(r, &wc);
		if (err == -EIO)
			fprintf(stderr, "iwx_rping: wr %lu failed, status %u\n", wc.wr_id, wc.status);
		if (err)
			return err;
		r->done[wc.opcode]++;
	}
	r->done[op]--;
	return 0;
}

static int post_recv(struct rping *r)
{
	struct iwx_recv_wr wr = { .wr_id = 1, .num_sge = 1,
				  .sge = { { (uintptr_t)&r->recv_msg, sizeof(r->recv_msg), r->recv_stag } } };

	return iwx_qp_post_recv(r->qp, &wr);
}

static int post_send_info(struct rping *r, const void *buf, uint32_t stag)
{
	struct iwx_send_wr wr = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1,
				  .sge = { { (uintptr_t)&r->send_msg, sizeof(r->send_msg), r->send_stag } } };

	r->send_msg.buf = htobe64(buf ? (uintptr_t)buf : 0);
	r->send_msg.rkey = htobe32(buf ? stag : 0);
	r->send_msg.size = htobe32(buf ? r->size : 0);
	return iwx_qp_post_send(r->qp, &wr);
}

static int post_rdma(struct rping *r, uint8_t op)
{
	struct iwx_send_wr wr = {
		.wr_id = 3, .opcode = op, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { { (uintptr_t)r->rdma_buf, be32toh(r->recv_msg.size), r->rdma_stag } },
		.remote_addr = be64toh(r->recv_msg.buf), .rkey = be32toh(r->recv_msg.rkey),
	};

	return iwx_qp_post_send(r->qp, &wr);
}

static int client_iteration(struct rping *r, int i, bool last)
{
	int err;

	/* rping's pattern: "rdma-ping-N: " then a rotating run of printable characters */
	int n = snprintf((char *)r->start_buf, r->size, "rdma-ping-%d: ", i);

	for (uint32_t k = n; k < r->size - 1; k++)
		r->start_buf[k] = 'A' + (i + k - n) % 58;
	r->start_buf[r->size - 1] = 0;
	memset(r->rdma_buf, 0, r->size);

	if ((err = post_send_info(r, r->start_buf, r->start_stag)) ||
	    (err = wait_op(r, IWX_WC_RECV)) || (err = post_recv(r)) ||	/* "go" */
	    (err = post_send_info(r, r->rdma_buf, r->rdma_stag)) ||
	    (err = wait_op(r, IWX_WC_RECV)) || (!last && (err = post_recv(r))))	/* "done" */
		return err;
	if (memcmp(r->start_buf, r->rdma_buf, r->size)) {
		fprintf(stderr, "iwx_rping: iteration %d: data differs\n", i);
		return -EIO;
	}
	if (r->size <= 256)
		printf("ping data: %s\n", r->rdma_buf);
	else
		printf("iteration %d: Send {buf, rkey, size}; the server RDMA-Read %u bytes, "
		       "RDMA-Wrote them back; all %u bytes verified\n", i, r->size, r->size);
	return 0;
}

static int server_iteration(struct rping *r)
{
	int err;

	if ((err = wait_op(r, IWX_WC_RECV)) || (err = post_recv(r)))
		return err;
	if (be32toh(r->recv_msg.size) > r->size) {
		fprintf(stderr, "iwx_rping: the client offers %u bytes, more than -S %u\n",
			be32toh(r->recv_msg.size), r->size);
		return -EMSGSIZE;
	}
	if ((err = post_rdma(r, IWX_WR_READ)) || (err = wait_op(r, IWX_WC_RDMA_READ)))
		return err;
	if (r->size <= 256)
		printf("server ping data: %s\n", r->rdma_buf);
	else
		printf("RDMA Read %u bytes from the client's STag 0x%08x, then RDMA Write them back\n",
		       r->size, be32toh(r->recv_msg.rkey));
	if ((err = post_send_info(r, NULL, 0)) || (err = wait_op(r, IWX_WC_SEND)) ||
	    (err = wait_op(r, IWX_WC_RECV)) || (err = post_recv(r)) ||
	    (err = post_rdma(r, IWX_WR_WRITE)) || (err = post_send_info(r, NULL, 0)) ||
	    (err = wait_op(r, IWX_WC_SEND)))
		return err;
	return 0;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: iwx_rping -s|-c [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [--no-crc] [--rev 1|2]\n"
		"                 [--settle-ms MS (client: pause before the first Send, default 200)]\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "no-crc", no_argument, NULL, 'n' }, { "rev", required_argument, NULL, 'r' },
		{ "settle-ms", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct iwx_conn_opts o = { .local = { .rev = 2, .crc = true, .ird = 1, .ord = 1 },
				   .timeout_ms = TIMEOUT_MS };
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(7174) };
	struct rping r = { .size = 64 };
	int server = -1, count = 1, settle_ms = 200, c, err;

	while ((c = getopt_long(argc, argv, "sca:p:C:S:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': server = 1; break;
		case 'c': server = 0; break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &addr.sin_addr) != 1)
				usage(2);
			break;
		case 'p': addr.sin_port = htons(atoi(optarg)); break;
		case 'C': count = atoi(optarg); break;
		case 'S': r.size = atoi(optarg); break;
		case 'n': o.local.crc = false; break;
		case 'r': o.local.rev = atoi(optarg); break;
		case 'w': settle_ms = atoi(optarg); break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (server < 0 || count < 1 || r.size < 16 || r.size > (64u << 20) ||
	    (o.local.rev != 1 && o.local.rev != 2) || (!server && !addr.sin_addr.s_addr))
		usage(2);

	r.mem = iwx_mem_new();
	r.pd = iwx_mem_pd_alloc(r.mem, OWNER);
	r.start_buf = calloc(1, r.size);
	r.rdma_buf = calloc(1, r.size);
	if (!r.mem || !r.start_buf || !r.rdma_buf)
		return fail("memory", ENOMEM);
	r.start_stag = reg(&r, r.start_buf, r.size, IWX_ACCESS_REMOTE_READ);
	r.rdma_stag = reg(&r, r.rdma_buf, r.size, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE);
	r.send_stag = reg(&r, &r.send_msg, sizeof(r.send_msg), 0);
	r.recv_stag = reg(&r, &r.recv_msg, sizeof(r.recv_msg), IWX_ACCESS_LOCAL_WRITE);

	if (server) {
		int lfd = iwx_conn_listen((struct sockaddr *)&addr, sizeof(addr), 1);
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (lfd < 0)
			return fail("listen", lfd);
		if (poll(&p, 1, TIMEOUT_MS * 4) != 1 || (err = iwx_conn_accept(&r.conn, lfd, &o)))
			return fail("accept", ETIMEDOUT);
		close(lfd);
		if ((err = iwx_conn_wait(&r.conn)) || r.conn.state != IWX_CONN_REQUEST_IN)
			return fail("MPA request", err ? err : r.conn.error);
		if ((err = iwx_conn_answer(&r.conn, &o, false)) || (err = iwx_conn_wait(&r.conn)))
			return fail("MPA reply", err);
	} else {
		if ((err = iwx_conn_connect(&r.conn, (struct sockaddr *)&addr, sizeof(addr), &o)) ||
		    (err = iwx_conn_wait(&r.conn)))
			return fail("connect", err);
	}
	if (r.conn.state != IWX_CONN_ESTABLISHED)
		return fail("MPA set-up", r.conn.error);
	printf("connected: MPA rev %u, CRC %s, IRD %u ORD %u, EMSS %u\n", r.conn.agreed.mode.rev,
	       r.conn.agreed.mode.crc ? "on" : "off", r.conn.agreed.ird, r.conn.agreed.ord,
	       r.conn.emss);

	/*
	 * siw (Linux 6.1) as Responder attaches its QP to the socket only after its MPA
	 * Reply is out: an FPDU arriving in between stays unread until more data comes.
	 * Give it time, as rdma_cm's event round trip gives a siw Initiator.
	 */
	if (!server)
		usleep(settle_ms * 1000);
	r.qp = iwx_qp_create(r.conn.fd, &r.conn.agreed, r.conn.emss, r.mem, r.pd, NULL);
	if (!r.qp || (err = post_recv(&r)))
		return fail("queue pair", ENOMEM);
	for (int i = 0; i < count; i++) {
		err = server ? server_iteration(&r) : client_iteration(&r, i, i == count - 1);
		if (err)
			return fail(server ? "server iteration" : "client iteration", err);
	}
	if (server) {
		/* as rping's server, leave the disconnect to the client */
		struct iwx_wc wc;

		while (iwx_qp_get_state(r.qp) != IWX_QP_ERROR)
			if (wait_wc(&r, &wc) == -ETIMEDOUT)
				return fail("waiting for the client to disconnect", ETIMEDOUT);
	}
	printf("iwx_rping: %d iterations verified\n", count);
	iwx_qp_destroy(r.qp);
	iwx_mem_free(r.mem);
	free(r.start_buf);
	free(r.rdma_buf);
	return 0;
}
