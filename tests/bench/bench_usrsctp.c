// SPDX-License-Identifier: MIT
/*
 * Plain usrsctp, the baseline of bench_engine --llp sctp: an association of the settings
 * the SCTP lower layer uses (iwx_sctp_socket(): no fragmentation, first-come first-served
 * scheduling, path MTU IWX_SCTP_PATH_MTU), no shim and no queue pair, on the same carrier
 * (bench_carrier.c: SCTP in UDP datagrams, one loop). scripts/bench-sctp.sh runs both.
 *
 *   bench_usrsctp -s [-a ADDR] [-p PORT]
 *   bench_usrsctp -c -a ADDR [-p PORT] [-t SECONDS]
 *
 * PORT (default 7175) is the server's UDP port and both ends' SCTP port. For SECONDS
 * (default 3) the client sends messages of SCTP_MAXSEG bytes, unordered, back to back, on
 * the stream RDMA Writes use, from an 8 MiB buffer in turn; the server reads them into one
 * of 8 MiB in turn and counts them. Then a FIN on stream 0 says how many bytes; the
 * server's FINACK, once they are all in, ends the measured time (as the FINACK ends a
 * Write's in bench.c). The lines printed are bench.c's (bench_util.c): the client's
 *   mode=plain size=MAXSEG depth=na seconds=... msgs=... bytes=... gbps=... client_cpu_pct=...
 *	client_cpu_ms=...
 * the server's
 *   role=server mode=plain size=MAXSEG depth=na rx_msgs=... rx_bytes=... server_cpu_pct=...
 *	server_cpu_ms=...
 * and, on stderr, the carrier's usrsctp counters. Exit status 0 on success, 1 on error.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <usrsctp.h>

#include "proto/ddp_shim.h"

#include "bench_util.h"
#include "sctp.h"
#include "conn_sctp.h"
#include "util/clock.h"

#define SETUP_MS	10000	/* the association, each control message */
#define ACCEPT_MS	30000	/* the server's wait for its client */
#define CONNECT_RETRY_MS 5000	/* the client retries a refused association this long */
#define LINGER_MS	3000	/* after FINACK: the peer's close */
#define TX_BUDGET	128	/* messages per turn, as llp_sctp.c's chunks */
#define RX_BUDGET	256	/* reads per turn, as llp_sctp.c */
#define BUF		(8u << 20)	/* the sender's source, the receiver's sink */
#define RX_ROOM		65536	/* the most one read may take (a DATA chunk's user data) */
#define DATA_SID	IWX_SHIM_STREAM_TAGGED	/* the stream the Writes use */
#define CTL_SID		0

enum { T_FIN = 1, T_FINACK };

/* FIN: v0 messages, v1 bytes sent; FINACK: v0, v1 received. Big-endian. */
struct ctl {
	uint32_t	type, pad;
	uint64_t	v[2];
} __attribute__((packed));

struct ep {
	bool		server;
	struct socket	*lso, *so;
	uint32_t	maxseg;
	uint8_t		*buf;
	uint64_t	off, msgs, bytes;	/* sent, or received */
	bool		got_fin, got_finack;
	struct ctl	fin, finack;
};

/* Read what waits: data counted into the sink, control, notifications. 0 or -errno. */
static int recv_some(struct ep *e, bool *busy)
{
	for (int budget = RX_BUDGET; budget > 0; budget--) {
		struct sctp_rcvinfo info;
		socklen_t info_len = sizeof(info);
		unsigned int info_type = 0;
		int flags = 0;
		struct ctl *m = e->server ? &e->fin : &e->finack;
		uint8_t *dst = e->server ? e->buf + e->off : (uint8_t *)m;
		size_t room = e->server ? RX_ROOM : sizeof(*m);
		ssize_t n;

		if (!(usrsctp_get_events(e->so) & SCTP_EVENT_READ))
			return 0;
		n = usrsctp_recvv(e->so, dst, room, NULL, NULL, &info, &info_len, &info_type, &flags);
		if (n < 0 && (errno == EWOULDBLOCK || errno == EAGAIN || errno == EINTR))
			return 0;
		if (n <= 0)
			return -ENOTCONN;	/* the peer shut the association down */
		if (flags & MSG_NOTIFICATION)
			continue;
		if (!(flags & MSG_EOR) || info_type != SCTP_RECVV_RCVINFO)
			return errf(-EPROTO, "a message longer than %zu bytes", room);
		if (info.rcv_sid == DATA_SID && e->server) {
			e->msgs++;
			e->bytes += n;
			e->off += n;
			if (e->off + RX_ROOM > BUF)
				e->off = 0;
			continue;
		}
		if (n == sizeof(*m) && dst != (uint8_t *)m)
			memcpy(m, dst, sizeof(*m));
		if (info.rcv_sid != CTL_SID || n != sizeof(*m) ||
		    be32toh(m->type) != (e->server ? T_FIN : T_FINACK))
			return errf(-EPROTO, "unexpected message of %zd bytes on stream %u", n,
				    info.rcv_sid);
		if (e->server)
			e->got_fin = true;
		else
			e->got_finack = true;
	}
	*busy = true;
	return 0;
}

/* One control message on stream 0. 0, -EAGAIN or -errno. */
static int send_ctl(struct ep *e, uint32_t type, uint64_t msgs, uint64_t bytes)
{
	struct ctl m = { .type = htobe32(type), .v = { htobe64(msgs), htobe64(bytes) } };
	struct sctp_sndinfo snd = { .snd_sid = CTL_SID };

	if (usrsctp_sendv(e->so, &m, sizeof(m), NULL, 0, &snd, sizeof(snd), SCTP_SENDV_SNDINFO, 0) < 0)
		return errno == EWOULDBLOCK || errno == EAGAIN ? -EAGAIN : -errno;
	return 0;
}

/* Messages of maxseg bytes, unordered, as many as the socket takes. */
static int send_some(struct ep *e, bool *busy)
{
	struct sctp_sndinfo snd = { .snd_sid = DATA_SID, .snd_flags = SCTP_UNORDERED };

	for (int budget = TX_BUDGET; budget > 0; budget--) {
		if (e->off + e->maxseg > BUF)
			e->off = 0;
		if (usrsctp_sendv(e->so, e->buf + e->off, e->maxseg, NULL, 0, &snd, sizeof(snd),
				  SCTP_SENDV_SNDINFO, 0) < 0) {
			if (errno == EWOULDBLOCK || errno == EAGAIN || errno == EINTR)
				return 0;
			return errf(-errno, "sending a message");
		}
		e->off += e->maxseg;
		e->bytes += e->maxseg;
		e->msgs++;
	}
	*busy = true;
	return 0;
}

static int get_maxseg(struct ep *e)
{
	struct sctp_assoc_value av = { .assoc_id = SCTP_FUTURE_ASSOC };
	socklen_t avlen = sizeof(av);

	if (usrsctp_getsockopt(e->so, IPPROTO_SCTP, SCTP_MAXSEG, &av, &avlen))
		return errf(-errno, "SCTP_MAXSEG");
	e->maxseg = av.assoc_value;
	return 0;
}

static int server(struct ep *e)
{
	uint64_t deadline = iwx_now_ms() + ACCEPT_MS, cpu0, wall0, cpu = 0, ms = 0;
	int err;

	while (!(e->so = usrsctp_accept(e->lso, NULL, NULL))) {
		if (errno != EWOULDBLOCK && errno != EAGAIN)
			return errf(-errno, "accepting the association");
		if (iwx_now_ms() >= deadline)
			return errf(-ETIMEDOUT, "no client within %d s", ACCEPT_MS / 1000);
		if ((err = carrier_pump(10)) < 0)
			return err;
	}
	if (usrsctp_set_non_blocking(e->so, 1))
		return errf(-errno, "a non-blocking socket");
	if ((err = get_maxseg(e)))
		return err;
	e->buf = xalloc(BUF);
	cpu0 = cpu_ns();
	wall0 = iwx_now_ms();
	/* no bound but the client's: it ends the association if it gives up */
	while (!e->got_fin || e->bytes < be64toh(e->fin.v[1])) {
		bool busy = false;

		if ((err = recv_some(e, &busy)) == -ENOTCONN)
			return errf(0, "the association ended after %lu bytes", (unsigned long)e->bytes);
		if (err)
			return err;
		if (e->got_fin && !ms) {
			cpu = cpu_ns() - cpu0;
			ms = iwx_now_ms() - wall0;
		}
		if ((err = carrier_pump(busy ? 0 : 10)) < 0)
			return err;
	}
	if (e->bytes != be64toh(e->fin.v[1]))
		return errf(-EPROTO, "%lu bytes received, %lu sent", (unsigned long)e->bytes,
			    (unsigned long)be64toh(e->fin.v[1]));
	deadline = iwx_now_ms() + SETUP_MS;
	while ((err = send_ctl(e, T_FINACK, e->msgs, e->bytes)) == -EAGAIN && iwx_now_ms() < deadline)
		carrier_pump(10);
	if (err)
		return errf(err, "sending FINACK");
	/* until the client closes */
	for (deadline = iwx_now_ms() + LINGER_MS; iwx_now_ms() < deadline;) {
		bool busy = false;

		if (recv_some(e, &busy))
			break;
		if ((err = carrier_pump(busy ? 0 : 10)) < 0)
			return err;
	}
	print_server("plain", e->maxseg, 0, e->msgs, e->bytes, cpu, ms);
	return 0;
}

/* The association's COMM_UP; -ECONNREFUSED when it could not start. */
static int wait_up(struct ep *e)
{
	uint64_t deadline = iwx_now_ms() + SETUP_MS;
	uint8_t buf[512];

	for (;;) {
		int err;

		while (usrsctp_get_events(e->so) & SCTP_EVENT_READ) {
			union sctp_notification n;
			int flags = 0;
			ssize_t r = usrsctp_recvv(e->so, buf, sizeof(buf), NULL, NULL, NULL, NULL,
						  NULL, &flags);

			if (r < 0)
				return errno == ENOTCONN ? -ECONNREFUSED : -errno;
			if (!(flags & MSG_NOTIFICATION) || (size_t)r < sizeof(n.sn_assoc_change))
				continue;
			memcpy(&n, buf, sizeof(n.sn_assoc_change));
			if (n.sn_header.sn_type != SCTP_ASSOC_CHANGE)
				continue;
			return n.sn_assoc_change.sac_state == SCTP_COMM_UP ? 0 : -ECONNREFUSED;
		}
		if (iwx_now_ms() >= deadline)
			return -ETIMEDOUT;
		if ((err = carrier_pump(10)) < 0)
			return err;
	}
}

/* As conn_sctp.c connects: bound to the path, on a port of its own. */
static int connect_to(struct ep *e, struct iwx_sctp_path *path, uint16_t port)
{
	struct sockaddr_conn sc = { .sconn_family = AF_CONN, .sconn_addr = path->token };
	uint64_t retry_end = iwx_now_ms() + CONNECT_RETRY_MS;
	int err;

	for (;;) {
		e->so = iwx_sctp_socket();
		if (!e->so)
			return errf(-errno, "an SCTP socket");
		sc.sconn_port = 0;
		if (usrsctp_bind(e->so, (struct sockaddr *)&sc, sizeof(sc)))
			return errf(-errno, "binding the SCTP socket");
		sc.sconn_port = htons(port);
		if (usrsctp_connect(e->so, (struct sockaddr *)&sc, sizeof(sc)) && errno != EINPROGRESS)
			return errf(-errno, "connecting");
		err = wait_up(e);
		if (!err)
			return get_maxseg(e);
		/* the server may still be starting */
		if (err != -ECONNREFUSED || iwx_now_ms() >= retry_end)
			return errf(err, "the association");
		usrsctp_close(e->so);
		e->so = NULL;
		carrier_pump(50);
	}
}

static int client(struct ep *e, const struct sockaddr_in *addr, double seconds)
{
	struct iwx_sctp_path *path = carrier_path(addr);
	uint64_t t0, end, cpu0, limit;
	bool fin = false;
	int err;

	if (!path || (err = connect_to(e, path, ntohs(addr->sin_port))))
		return path ? err : -EIO;
	e->buf = xalloc(BUF);
	for (uint64_t i = 0; i < BUF; i++)
		e->buf[i] = pattern(i);
	t0 = now_ns();
	end = t0 + (uint64_t)(seconds * 1e9);
	limit = iwx_now_ms() + (uint64_t)(seconds * 1000) + SETUP_MS;
	cpu0 = cpu_ns();
	while (!e->got_finack) {
		bool busy = false;

		if (!fin && now_ns() < end && (err = send_some(e, &busy)))
			return err;
		if (!fin && now_ns() >= end) {
			err = send_ctl(e, T_FIN, e->msgs, e->bytes);
			if (err && err != -EAGAIN)
				return errf(err, "sending FIN");
			fin = !err;
		}
		if ((err = recv_some(e, &busy)) == -ENOTCONN)
			return errf(0, "the association ended during the run");
		if (err)
			return err;
		if (iwx_now_ms() >= limit)
			return errf(-ETIMEDOUT, "no FINACK");
		if (!e->got_finack && (err = carrier_pump(busy ? 0 : 10)) < 0)
			return err;
	}
	double secs = (now_ns() - t0) / 1e9;
	uint64_t cpu = cpu_ns() - cpu0;

	if (be64toh(e->finack.v[1]) != e->bytes)
		return errf(-EIO, "the server received %lu bytes of %lu",
			    (unsigned long)be64toh(e->finack.v[1]), (unsigned long)e->bytes);
	print_goodput("plain", e->maxseg, 0, secs, e->msgs, e->bytes);
	print_client_cpu(cpu, secs);
	return 0;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: bench_usrsctp -s [-a ADDR] [-p PORT]\n"
		"       bench_usrsctp -c -a ADDR [-p PORT] [-t SECONDS]\n"
		"PORT: the server's UDP port and the SCTP port (default 7175); SECONDS 3\n");
	exit(status);
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(7175) };
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct ep e = { 0 };
	double seconds = 3;
	int role = -1, c, err;

	while ((c = getopt(argc, argv, "sca:p:t:h")) != -1) {
		if (c == 't')
			seconds = strtod(optarg, NULL);
		else if (c == 'h')
			usage(0);
		else if (common_opt(c, optarg, &role, &addr) != 1)
			usage(2);
	}
	if (optind != argc || role < 0 || (role == 0 && !addr.sin_addr.s_addr) ||
	    seconds < 0.01 || seconds > 3600)
		usage(2);
	e.server = role == 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (e.server) {
		err = carrier_open(&addr);
		if (!err && !(e.lso = iwx_conn_sctp_listen(ntohs(addr.sin_port), 1)))
			err = errf(-errno, "listening on SCTP port %u", ntohs(addr.sin_port));
		if (!err)
			err = server(&e);
	} else {
		err = carrier_open(&any);
		if (!err)
			err = client(&e, &addr, seconds);
	}
	if (e.so)
		usrsctp_close(e.so);
	if (e.lso)
		usrsctp_close(e.lso);
	carrier_close();
	free(e.buf);
	return err ? 1 : 0;
}
