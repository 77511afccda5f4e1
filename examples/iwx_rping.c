// SPDX-License-Identifier: MIT
/*
 * rping's protocol (rdma-core's librdmacm/examples/rping.c, as the interop README
 * describes it) as a libiwx application served by iwxd, client or server, to prove
 * iwx against Linux's siw: per iteration the client Sends {buf, rkey, size} of its
 * start buffer, the server RDMA-Reads it, Sends "go", the client Sends its rdma
 * buffer's {buf, rkey, size}, the server RDMA-Writes the data back and Sends "done";
 * the client checks that what came back is what it offered.
 *
 *   iwx_rping -s [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [--no-crc] [--markers] [--rev 1|2] [--sctp]
 *             [--socket PATH]
 *   iwx_rping -c -a ADDR [-p PORT] [-C COUNT] [-S SIZE] [--no-crc] [--markers] [--rev 1|2] [--sctp]
 *             [--socket PATH]
 *
 * Exit status 0 when every iteration verified, 1 otherwise.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iwx/iwx.h>

#define TIMEOUT_MS	30000	/* TCG guests are slow */
#define ACCEPT_MS	(4 * TIMEOUT_MS)	/* the server waits longer: a guest boots first */
#define EVENT_MS	2000	/* the event that explains a failed completion follows it */

/* rping's message: where the peer may read or write, big-endian. */
struct rping_info {
	uint64_t	buf;
	uint32_t	rkey;
	uint32_t	size;
} __attribute__((packed));

struct rping {
	struct iwx_device	*dev;
	struct iwx_pd		*pd;
	struct iwx_cq		*cq;
	struct iwx_qp		*qp;
	struct iwx_listener	*listener;
	uint8_t			*start_buf, *rdma_buf;
	struct rping_info	*send_msg, *recv_msg;	/* in the arena too: placed directly */
	struct iwx_mr		*start_mr, *rdma_mr, *send_mr, *recv_mr;
	uint32_t		size;
	unsigned		done[IWX_WC_RECV + 1];	/* completions seen and not yet waited for */
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "iwx_rping: %s: %s\n", what, iwx_strerror(err));
	return 1;
}

static void print_term(const struct iwx_term_info *t)
{
	char why[IWX_TERM_STR_LEN];

	if (t->terminated)
		fprintf(stderr, "iwx_rping: stream terminated (%s): %s\n",
			t->local ? "here" : "by the peer", iwx_term_str(t, why, sizeof(why)));
	else
		fprintf(stderr, "iwx_rping: stream ended: %s\n", t->reason);
}

/*
 * Wait up to ms for an event of type want. Any other event that ends the connection
 * (or the device) is reported and fails the wait.
 */
static int wait_event(struct rping *r, enum iwx_event_type want, struct iwx_event *ev, int ms)
{
	int err;

	for (;;) {
		err = iwx_get_event(r->dev, ev, ms);
		if (err == -EAGAIN)
			return -ETIMEDOUT;
		if (err)
			return err;
		if (ev->type == want)
			return 0;
		switch (ev->type) {
		case IWX_EVENT_REJECTED:
			fprintf(stderr, "iwx_rping: the peer rejected the connection\n");
			return -ECONNREFUSED;
		case IWX_EVENT_UNREACHABLE:	/* the caller names the errno */
			fprintf(stderr, "iwx_rping: %s\n", ev->term.reason);
			return ev->status ? ev->status : -EHOSTUNREACH;
		case IWX_EVENT_DISCONNECTED:
			print_term(&ev->term);
			return -ECONNABORTED;
		case IWX_EVENT_DEVICE_LOST:
			return -ESHUTDOWN;
		default:
			break;	/* nothing else concerns us */
		}
	}
}

/*
 * After a failed or missing completion: say why the stream ended, if it did. A failed
 * completion means it has (every error ends the stream); its event follows shortly.
 */
static void explain(struct rping *r, int ms)
{
	struct iwx_event ev;

	while (iwx_get_event(r->dev, &ev, ms) == 0) {
		if (ev.type == IWX_EVENT_DISCONNECTED && ev.qp == r->qp) {
			print_term(&ev.term);
			return;
		}
		if (ev.type == IWX_EVENT_DEVICE_LOST) {
			fprintf(stderr, "iwx_rping: %s\n", iwx_strerror(-ESHUTDOWN));
			return;
		}
	}
}

/* Wait for a completion of kind op; completions of other kinds are counted for later. */
static int wait_op(struct rping *r, uint8_t op)
{
	struct iwx_wc wc;
	int n;

	while (!r->done[op]) {
		n = iwx_wait_cq(r->cq, 1, &wc, TIMEOUT_MS);
		if (n == 0) {
			fprintf(stderr, "iwx_rping: no completion in %d s\n", TIMEOUT_MS / 1000);
			explain(r, 0);
			return -ETIMEDOUT;
		}
		if (n < 0)
			return n;
		if (wc.status != IWX_WC_SUCCESS) {
			static const char *const what[] = { "Send", "RDMA Write", "RDMA Read",
							    "receive" };

			fprintf(stderr, "iwx_rping: %s (wr %" PRIu64 ") failed: %s\n",
				wc.opcode <= IWX_WC_RECV ? what[wc.opcode] : "request", wc.wr_id,
				iwx_wc_status_name(wc.status));
			explain(r, EVENT_MS);
			return -EIO;
		}
		if (wc.opcode <= IWX_WC_RECV)
			r->done[wc.opcode]++;
	}
	r->done[op]--;
	return 0;
}

static int post_recv(struct rping *r)
{
	struct iwx_recv_wr wr = { .wr_id = 1, .num_sge = 1,
				  .sge = { { (uintptr_t)r->recv_msg, sizeof(*r->recv_msg),
					     r->recv_mr->lkey } } };

	return iwx_post_recv(r->qp, &wr);
}

static int post_send_info(struct rping *r, const void *buf, uint32_t stag)
{
	struct iwx_send_wr wr = { .wr_id = 2, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1,
				  .sge = { { (uintptr_t)r->send_msg, sizeof(*r->send_msg),
					     r->send_mr->lkey } } };

	r->send_msg->buf = htobe64(buf ? (uintptr_t)buf : 0);
	r->send_msg->rkey = htobe32(buf ? stag : 0);
	r->send_msg->size = htobe32(buf ? r->size : 0);
	return iwx_post_send(r->qp, &wr);
}

static int post_rdma(struct rping *r, uint8_t op)
{
	struct iwx_send_wr wr = {
		.wr_id = 3, .opcode = op, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { { (uintptr_t)r->rdma_buf, be32toh(r->recv_msg->size), r->rdma_mr->lkey } },
		.remote_addr = be64toh(r->recv_msg->buf), .rkey = be32toh(r->recv_msg->rkey),
	};

	return iwx_post_send(r->qp, &wr);
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

	if ((err = post_send_info(r, r->start_buf, r->start_mr->rkey)) ||
	    (err = wait_op(r, IWX_WC_RECV)) || (err = post_recv(r)) ||	/* "go" */
	    (err = post_send_info(r, r->rdma_buf, r->rdma_mr->rkey)) ||
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
	fflush(stdout);
	return 0;
}

static int server_iteration(struct rping *r)
{
	int err;

	if ((err = wait_op(r, IWX_WC_RECV)) || (err = post_recv(r)))
		return err;
	if (be32toh(r->recv_msg->size) > r->size) {
		fprintf(stderr, "iwx_rping: the client offers %u bytes, more than -S %u\n",
			be32toh(r->recv_msg->size), r->size);
		return -EMSGSIZE;
	}
	if ((err = post_rdma(r, IWX_WR_READ)) || (err = wait_op(r, IWX_WC_RDMA_READ)))
		return err;
	if (r->size <= 256)
		printf("server ping data: %s\n", r->rdma_buf);
	else
		printf("RDMA Read %u bytes from the client's STag 0x%08x, then RDMA Write them back\n",
		       r->size, be32toh(r->recv_msg->rkey));
	fflush(stdout);
	if ((err = post_send_info(r, NULL, 0)) || (err = wait_op(r, IWX_WC_SEND)) ||
	    (err = wait_op(r, IWX_WC_RECV)) || (err = post_recv(r)) ||
	    (err = post_rdma(r, IWX_WR_WRITE)) || (err = post_send_info(r, NULL, 0)) ||
	    (err = wait_op(r, IWX_WC_SEND)))
		return err;
	return 0;
}

/* Device, PD, CQ, QP and the four registered buffers, all in the arena. */
static int setup(struct rping *r, const char *sock)
{
	/* both data buffers, the two messages and room for alignment */
	IWX_OPTS(iwx_open_opts, o, .socket = sock, .arena_size = 2 * (size_t)r->size + (64 << 10));
	struct iwx_qp_init_attr attr = { .sq_depth = 16, .rq_depth = 16 };

	r->dev = iwx_open(&o);
	if (!r->dev) {
		int err = errno;

		fprintf(stderr, "iwx_rping: iwxd at %s: %s\n", iwx_socket_path(&o),
			iwx_strerror(err));
		return -err;
	}
	r->pd = iwx_alloc_pd(r->dev);
	r->cq = r->pd ? iwx_create_cq(r->dev, 64) : NULL;
	attr.send_cq = attr.recv_cq = r->cq;
	r->qp = r->cq ? iwx_create_qp(r->pd, &attr) : NULL;
	if (!r->qp)
		return -errno;
	r->start_buf = iwx_alloc(r->dev, r->size);
	r->rdma_buf = iwx_alloc(r->dev, r->size);
	r->send_msg = iwx_alloc(r->dev, sizeof(*r->send_msg));
	r->recv_msg = iwx_alloc(r->dev, sizeof(*r->recv_msg));
	if (!r->start_buf || !r->rdma_buf || !r->send_msg || !r->recv_msg)
		return -ENOMEM;
	/* as rdma-core's rping: both buffers the peer may read and write */
	r->start_mr = iwx_reg_mr(r->pd, r->start_buf, r->size, IWX_ACCESS_LOCAL_WRITE |
				 IWX_ACCESS_REMOTE_READ | IWX_ACCESS_REMOTE_WRITE);
	r->rdma_mr = iwx_reg_mr(r->pd, r->rdma_buf, r->size, IWX_ACCESS_LOCAL_WRITE |
				IWX_ACCESS_REMOTE_READ | IWX_ACCESS_REMOTE_WRITE);
	r->send_mr = iwx_reg_mr(r->pd, r->send_msg, sizeof(*r->send_msg), 0);
	r->recv_mr = iwx_reg_mr(r->pd, r->recv_msg, sizeof(*r->recv_msg), IWX_ACCESS_LOCAL_WRITE);
	if (!r->start_mr || !r->rdma_mr || !r->send_mr || !r->recv_mr)
		return -errno;
	/* before connecting: the peer's first Send may follow the MPA exchange at once */
	return post_recv(r);
}

static void teardown(struct rping *r)
{
	struct iwx_mr *mrs[] = { r->start_mr, r->rdma_mr, r->send_mr, r->recv_mr };

	if (!r->dev)
		return;
	/* regions are ours to free (only a lost iwxd fails this); iwx_close takes the rest */
	for (size_t i = 0; i < sizeof(mrs) / sizeof(mrs[0]); i++)
		if (mrs[i])
			iwx_dereg_mr(mrs[i]);
	iwx_close(r->dev);
}

/* What the MPA exchange settled, from the ESTABLISHED event. */
static void print_info(const struct iwx_conn_info *i)
{
	printf("connected over %s: MPA rev %u, CRC %s, markers %s, IRD %u ORD %u, EMSS %u\n",
	       i->transport == IWX_TRANSPORT_SCTP ? "SCTP" : "TCP", i->mpa_rev, i->crc ? "on" : "off",
	       i->markers_rx ? (i->markers_tx ? "both ways" : "received") : i->markers_tx ? "sent" : "off",
	       i->ird, i->ord, i->emss);
	fflush(stdout);
}

static int serve(struct rping *r, const struct sockaddr_in *addr,
		 const struct iwx_conn_param *param)
{
	IWX_OPTS(iwx_listen_opts, lo, .backlog = 1, .transport = param->transport);
	struct iwx_event ev;
	int err;

	r->listener = iwx_listen_with(r->dev, (const struct sockaddr *)addr, sizeof(*addr), &lo);
	if (!r->listener)
		return fail("listen", errno);
	err = wait_event(r, IWX_EVENT_CONNECT_REQUEST, &ev, ACCEPT_MS);
	if (err)
		return fail("waiting for a connection request", err);
	err = iwx_accept(r->qp, ev.conn_id, param);
	if (err)
		return fail("accept", err);
	err = wait_event(r, IWX_EVENT_ESTABLISHED, &ev, TIMEOUT_MS);
	if (err)
		return fail("MPA set-up", err);
	/* as rping's server: one connection */
	iwx_listener_destroy(r->listener);
	r->listener = NULL;
	print_info(&ev.info);
	return 0;
}

static int connect_to(struct rping *r, const struct sockaddr_in *addr,
		      const struct iwx_conn_param *param)
{
	struct iwx_event ev;
	int err;

	err = iwx_connect(r->qp, (const struct sockaddr *)addr, sizeof(*addr), param);
	if (err)
		return fail("connect", err);
	err = wait_event(r, IWX_EVENT_ESTABLISHED, &ev, TIMEOUT_MS);
	if (err)
		return fail("connect", err);
	print_info(&ev.info);
	return 0;
}

/*
 * The end, as rping's: the client closes and the server waits for it. A Terminate
 * instead of a close means a peer found an error after all: fail then too.
 */
static int finish(struct rping *r, bool server)
{
	struct iwx_event ev;
	int err;

	if (!server && (err = iwx_disconnect(r->qp)))
		return fail("disconnect", err);
	err = wait_event(r, IWX_EVENT_DISCONNECTED, &ev, TIMEOUT_MS);
	if (err)
		return fail(server ? "waiting for the client to disconnect" :
				     "waiting for the disconnect", err);
	if (ev.term.terminated) {
		print_term(&ev.term);
		return 1;
	}
	return 0;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: iwx_rping -s|-c [-a ADDR] [-p PORT] [-C COUNT] [-S SIZE] [--no-crc] [--markers]\n"
		"                 [--rev 1|2] [--sctp] [--socket PATH]\n"
		"rping's protocol over iWARP through iwxd (libiwx); rdma-core's rping is its peer.\n"
		"  -s, -c          server or client\n"
		"  -a ADDR         IPv4 address: the server's to listen on (default any),\n"
		"                  the client's to connect to (required)\n"
		"  -p PORT         TCP (or SCTP) port (default 7174)\n"
		"  -C COUNT        iterations (default 1)\n"
		"  -S SIZE         bytes read and written per iteration, 16 to 64 MiB (default 64)\n"
		"  --no-crc        do not use the MPA CRC (the peer may still insist on it)\n"
		"  --markers       ask for MPA markers in what this side receives: with them the\n"
		"                  fast path places segments that come out of order. iwx peers\n"
		"                  only: Linux's siw refuses a connection with markers\n"
		"  --rev 1|2       MPA revision: the client's to ask for, the highest the server\n"
		"                  answers with (default 2, RFC 6581's enhanced set-up)\n"
		"  --sctp          over SCTP through the DDP adaptation shim, not MPA over TCP\n"
		"                  (iwx peers only, both sides: docs/ddp-over-sctp.md)\n"
		"  --socket PATH   iwxd's socket (default $IWX_SOCKET, else " IWX_DEFAULT_SOCKET ")\n"
		"Exit status 0 when every iteration verified, 1 otherwise.\n");
	exit(status);
}

/* A usage error: what was wrong, and where to look. */
__attribute__((format(printf, 1, 2), noreturn))
static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("iwx_rping: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'iwx_rping --help'.\n", stderr);
	exit(2);
}

/* optarg as a number from lo to hi, else a usage error naming the option. */
static long number(const char *opt, const char *what, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(optarg, &end, 0);
	if (errno || end == optarg || *end || v < lo || v > hi)
		bad_usage("%s takes %s, not '%s'", opt, what, optarg);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "no-crc", no_argument, NULL, 'n' }, { "markers", no_argument, NULL, 'm' },
		{ "rev", required_argument, NULL, 'r' }, { "sctp", no_argument, NULL, 't' },
		{ "socket", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	/* rping's IRD/ORD of 1 each */
	struct iwx_conn_param param = { .ird = 1, .ord = 1, .mpa_rev = 2, .crc = 1 };
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(7174) };
	struct rping r = { .size = 64 };
	const char *sock = NULL;
	int server = -1, count = 1, c, err, status = 1;

	while ((c = getopt_long(argc, argv, "sca:p:C:S:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': server = 1; break;
		case 'c': server = 0; break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &addr.sin_addr) != 1)
				bad_usage("-a takes an IPv4 address, not '%s'", optarg);
			break;
		case 'p': addr.sin_port = htons(number("-p", "a port from 1 to 65535", 1, 65535)); break;
		case 'C': count = number("-C", "a count from 1 to 2147483647", 1, INT_MAX); break;
		case 'S': r.size = number("-S", "a size from 16 to 67108864", 16, 64 << 20); break;
		case 'n': param.crc = -1; break;
		case 'm': param.markers = true; break;
		case 't': param.transport = IWX_TRANSPORT_SCTP; break;
		case 'r': param.mpa_rev = number("--rev", "1 or 2", 1, 2); break;
		case 'u': sock = optarg; break;
		case 'h': usage(0); break;
		default:	/* getopt said which option */
			fputs("Try 'iwx_rping --help'.\n", stderr);
			exit(2);
		}
	}
	if (optind != argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (server < 0)
		bad_usage("-s (server) or -c (client)?");
	if (!server && !addr.sin_addr.s_addr)
		bad_usage("-c needs the server's address: -a ADDR");

	err = setup(&r, sock);
	if (err) {
		if (r.dev)
			fail("set-up", err);
		goto out;
	}
	if (server ? serve(&r, &addr, &param) : connect_to(&r, &addr, &param))
		goto out;
	for (int i = 0; i < count; i++) {
		err = server ? server_iteration(&r) : client_iteration(&r, i, i == count - 1);
		if (err) {
			fail(server ? "server iteration" : "client iteration", err);
			goto out;
		}
	}
	if (finish(&r, server))
		goto out;
	printf("iwx_rping: %d iterations verified\n", count);
	status = 0;
out:
	teardown(&r);
	return status;
}
