// SPDX-License-Identifier: MIT
/*
 * iwxd against an SCTP peer of the test's own making: this process's usrsctp stack (the
 * engine's sctp.h on a UDP socket of its own, sctp_udp.h) in namespace a, talking to the
 * iwxd of namespace b, whose application listens over SCTP. A peer that does not announce
 * DDP gets an association and nothing on it (draft-otis-sctp-ddp §3.1): though it sends
 * an MPA Request in a set-up chunk, no DATA chunk comes back, the application hears of no
 * connection request, and the association is shut down. And a blind spoofer, who sends
 * INITs from addresses it cannot receive at, costs iwxd nothing that stays: each INIT is
 * answered with its State Cookie, and no path is made for it (sctp_udp.h).
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <usrsctp.h>

#include "proto/crc32c.h"
#include "proto/ddp_shim.h"
#include <iwx/iwx.h>
#include "proto/mpa.h"
#include "proto/mpa_setup.h"

#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "sctp.h"
#include "sctp_udp.h"
#include "stall.h"

#define DAEMON_ARGS	"--settle-ms 0"

static struct iwxd_pair pair;
static struct endpoint a, b;
static struct iwx_sctp_udp *udp;	/* the test's SCTP in UDP, in namespace a */
static struct iwx_sctp_path *to_b;	/* b's iwxd */

static int open_udp(void *arg)
{
	struct sockaddr_in any = { .sin_family = AF_INET };

	(void)arg;
	inet_pton(AF_INET, NETNS_A4, &any.sin_addr);
	udp = iwx_sctp_udp_open((struct sockaddr *)&any, sizeof(any), 4);
	return udp ? 0 : -errno;
}

static void up(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(IWX_SCTP_PORT) };

	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, DAEMON_ARGS, &a, &b, 0), 0);
	cr_assert_eq(iwx_sctp_init(), 0);
	cr_assert_eq(netns_call(pair.ns.a, open_udp, NULL), 0);
	inet_pton(AF_INET, NETNS_B4, &to.sin_addr);
	to_b = iwx_sctp_udp_path(udp, (struct sockaddr *)&to, sizeof(to));
	cr_assert_not_null(to_b);
}

/* What arrived on the test's UDP socket into its stack, waiting up to ms; then timers. */
static void pump(int ms)
{
	struct pollfd p = { .fd = iwx_sctp_udp_fd(udp), .events = POLLIN };

	poll(&p, 1, ms);
	while (iwx_sctp_udp_input(udp, 64) == 64)
		;
	iwx_sctp_tick();
}

static void down(void)
{
	if (udp) {
		for (int i = 0; i < 20; i++)
			pump(10);	/* the associations' SHUTDOWN exchange */
		iwx_sctp_udp_close(udp);
		udp = NULL;
		iwx_sctp_finish();
	}
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_sctp_peer, .init = up, .fini = down, .timeout = HANG_S);

/* b's application listens over SCTP; the port iwxd gave it. */
static struct iwx_listener *listen_b(uint16_t *port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	IWX_OPTS(iwx_listen_opts, lo, .backlog = 4, .transport = IWX_TRANSPORT_SCTP);
	struct iwx_listener *l;

	s4->sin_family = AF_INET;
	inet_pton(AF_INET, NETNS_B4, &s4->sin_addr);
	l = iwx_listen_with(b.dev, (struct sockaddr *)s4, sizeof(*s4), &lo);
	cr_assert_not_null(l, "listen over SCTP: %s", iwx_strerror(errno));
	iwx_listener_addr(l, &ss);
	*port = ntohs(s4->sin_port);
	return l;
}

/* A plain SCTP socket, no Adaptation Layer Indication, telling of its association's changes. */
static struct socket *plain_socket(void)
{
	static const uint16_t events[] = { SCTP_ASSOC_CHANGE, SCTP_SHUTDOWN_EVENT };
	struct socket *so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);

	cr_assert_not_null(so);
	cr_assert_eq(usrsctp_set_non_blocking(so, 1), 0);
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		struct sctp_event ev = { .se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = events[i],
					 .se_on = 1 };

		cr_assert_eq(usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &ev, sizeof(ev)), 0);
	}
	return so;
}

/* An MPA Request (revision 2, IRD/ORD 4) in a set-up chunk, on so's association. */
static void send_request(struct socket *so)
{
	static const struct iwx_mpa_local local = { .rev = 2, .ird = 4, .ord = 4 };
	struct sctp_sndinfo si = { .snd_sid = IWX_SHIM_STREAM_SETUP, .snd_flags = SCTP_UNORDERED,
				   .snd_ppid = htonl(IWX_SHIM_PPI) };
	struct iwx_mpa_rr_params req;
	uint8_t chunk[256];
	size_t h = iwx_shim_setup_hdr(chunk);
	ssize_t n;

	iwx_mpa_setup_request(&local, NULL, 0, &req);
	n = iwx_mpa_rr_encode(chunk + h, sizeof(chunk) - h, &req);
	cr_assert_gt(n, 0);
	/* it fails when iwxd has ended the association already (ENOENT, ECONNRESET), as it should */
	usrsctp_sendv(so, chunk, h + n, NULL, 0, &si, sizeof(si), SCTP_SENDV_SNDINFO, 0);
}

Test(daemon_sctp_peer, a_peer_without_the_indication_gets_an_association_and_nothing_on_it)
{
	struct sockaddr_conn sc = { .sconn_family = AF_CONN, .sconn_addr = to_b->token };
	bool comm_up = false, ended = false;
	int data = 0;
	uint16_t port;
	struct iwx_listener *l = listen_b(&port);
	struct socket *so = plain_socket();
	struct iwx_event ev;

	cr_assert_eq(usrsctp_bind(so, (struct sockaddr *)&sc, sizeof(sc)), 0);
	sc.sconn_port = htons(port);
	cr_assert(usrsctp_connect(so, (struct sockaddr *)&sc, sizeof(sc)) == 0 || errno == EINPROGRESS);
	for (int i = 0; i < 500 && !ended; i++) {
		uint8_t buf[2048];
		struct sctp_rcvinfo info;
		socklen_t info_len = sizeof(info);
		unsigned int info_type = 0;
		int flags = 0;
		ssize_t n;

		pump(10);
		while (!ended && (n = usrsctp_recvv(so, buf, sizeof(buf), NULL, NULL, &info,
						     &info_len, &info_type, &flags)) >= 0) {
			const union sctp_notification *nt = (const void *)buf;

			if (!(flags & MSG_NOTIFICATION)) {
				data += n > 0;	/* a DATA chunk: the MPA Reply, say */
				ended |= n == 0;	/* the end of the association's data */
			} else if (nt->sn_header.sn_type == SCTP_SHUTDOWN_EVENT) {
				ended = true;
			} else if (nt->sn_header.sn_type == SCTP_ASSOC_CHANGE &&
				   nt->sn_assoc_change.sac_state == SCTP_COMM_UP) {
				comm_up = true;
				send_request(so);	/* as a DDP peer's first chunk */
			} else if (nt->sn_header.sn_type == SCTP_ASSOC_CHANGE) {
				ended = true;
			}
			flags = 0;
			info_len = sizeof(info);
		}
	}
	cr_assert(comm_up, "the association came up");
	cr_assert(ended, "b's iwxd ended the association");
	cr_assert_eq(data, 0, "DATA chunks from b's iwxd: %d", data);
	cr_assert_eq(endpoint_event(&b, &ev, 200), -EAGAIN, "b's application heard of it: event %d",
		     ev.type);
	usrsctp_close(so);
	iwx_listener_destroy(l);
}

/* A counter of b's `iwx status -j` "sctp" object: "key": N. */
static uint64_t sctp_status(const char *key)
{
	static char out[16384];
	char pat[64];
	const char *at;

	cr_assert_eq(run_iwx(out, sizeof(out), "status -j -s %s", pair.sock[1]), 0, "%s", out);
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	at = strstr(strstr(out, "\"sctp\": {") ?: out, pat);
	cr_assert_not_null(at, "no %s in %s", key, out);
	return strtoull(at + strlen(pat), NULL, 10);
}

struct spoofer {
	int	fd[32];		/* UDP sockets in namespace a, each a source the INIT claims */
};

static int open_spoofers(void *arg)
{
	struct spoofer *sp = arg;
	struct sockaddr_in any = { .sin_family = AF_INET };

	inet_pton(AF_INET, NETNS_A4, &any.sin_addr);
	for (int i = 0; i < 32; i++) {
		sp->fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		if (sp->fd[i] < 0 || bind(sp->fd[i], (struct sockaddr *)&any, sizeof(any)))
			return -errno;
	}
	return 0;
}

/* An SCTP INIT (RFC 4960 §3.3.2) to port, its CRC32c right. */
static size_t init_packet(uint8_t *pkt, uint16_t port, uint32_t tag)
{
	static const uint8_t chunk[20] = { 1, 0, 0, 20, 0, 0, 0, 0, 0, 1, 0, 0, 0, 10, 0, 10 };
	uint32_t crc;

	memset(pkt, 0, 12);
	pkt[0] = 0x30;	/* source port 12345 */
	pkt[1] = 0x39;
	pkt[2] = port >> 8;
	pkt[3] = port & 0xff;
	memcpy(pkt + 12, chunk, sizeof(chunk));
	memcpy(pkt + 16, &tag, 4);	/* Initiate Tag: any non-zero */
	memcpy(pkt + 28, &tag, 4);	/* Initial TSN */
	crc = iwx_crc32c(pkt, 32);
	iwx_crc32c_put(pkt + 8, crc);
	return 32;
}

Test(daemon_sctp_peer, inits_from_addresses_that_never_answer_make_no_paths)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(IWX_SCTP_PORT) };
	struct spoofer sp;
	uint16_t port;
	struct iwx_listener *l = listen_b(&port);
	uint64_t paths = sctp_status("paths");
	int answered = 0;

	inet_pton(AF_INET, NETNS_B4, &to.sin_addr);
	cr_assert_eq(netns_call(pair.ns.a, open_spoofers, &sp), 0);
	for (int i = 0; i < 32; i++) {
		uint8_t pkt[64];
		size_t n = init_packet(pkt, port, htonl(0x1000 + i));

		cr_assert_eq(sendto(sp.fd[i], pkt, n, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)n);
	}
	/* each INIT answered: an INIT-ACK (chunk type 2) with its cookie, to the source it named */
	for (int i = 0; i < 32; i++) {
		struct pollfd p = { .fd = sp.fd[i], .events = POLLIN };
		uint8_t pkt[2048];

		if (poll(&p, 1, 2000) == 1 && recv(sp.fd[i], pkt, sizeof(pkt), 0) > 12 && pkt[12] == 2)
			answered++;
		close(sp.fd[i]);
	}
	cr_assert_eq(answered, 32, "INIT-ACKs: %d of 32", answered);
	cr_assert_eq(sctp_status("paths"), paths, "paths made for sources that never answered");
	iwx_listener_destroy(l);
}
