// SPDX-License-Identifier: MIT
/*
 * iWARP set-up over SCTP (docs/ddp-over-sctp.md, "Set-up") in one process: both ends on
 * the one usrsctp stack, joined by an in-memory link that sees every packet. Side A
 * (the link's path a) is the Initiator and connects to path b; side B listens. The
 * set-up tests of every transport (conn_tests.h) on this fixture of conn_pair.h, with
 * what SCTP adds to their checks (the mode that is always agreed, the TSN each side's
 * chunks start from, the chunks on the wire, SHUTDOWN rather than ABORT); and SCTP's
 * own: peers that did not announce the adaptation indication, and peers that send the
 * wrong first chunk or a chunk where none may come.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <usrsctp.h>

#include "proto/ddp_shim.h"
#include "proto/mpa.h"

#include "sctp.h"
#include "conn_sctp.h"
#include "conn_tests.h"
#include "sctp_link.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

#define PORT		5001

/* What the link carried, per direction (enum sctp_link_dir). */
struct wire {
	unsigned	data[2];		/* DATA chunks */
	unsigned	data_not_ube[2];	/* DATA chunks without all of U, B and E */
	unsigned	setup[2];		/* DATA chunks that are set-up chunks */
	unsigned	setup_not_s0[2];	/* set-up chunks off stream 0 or with a PPI other than 0 */
	uint32_t	first_setup_tsn[2];
	unsigned	shutdown[2], abort[2];
	unsigned	malformed;
};

/* static: the stack may send through the link until iwx_sctp_finish */
static struct sctp_link link;
static struct wire wire;

/* The SCTP fixture: A connects over path b to B's listener. */
static struct {
	struct conn_pair	pair;
	struct iwx_conn_sctp	a, b;	/* the pair's ends */
	struct socket		*lso;	/* B's listener */
	struct socket		*raw;	/* a hand-made peer's socket */
} sctp;

static struct iwx_conn *const A = &sctp.a.conn, *const B = &sctp.b.conn;	/* A initiates */
static const struct conn_transport sctp_transport;

static bool is_setup_chunk(const struct sctp_chunk *c)
{
	uint8_t hdr[IWX_SHIM_SETUP_HDR_LEN];

	iwx_shim_setup_hdr(hdr);
	return c->user_len >= sizeof(hdr) && !memcmp(c->user, hdr, sizeof(hdr));
}

static void tap(void *arg, enum sctp_link_dir dir, const uint8_t *pkt, size_t len)
{
	struct wire *w = arg;
	struct sctp_chunk c;
	size_t off = 0;
	int r;

	while ((r = sctp_pkt_next_chunk(pkt, len, &off, &c)) == 1) {
		switch (c.type) {
		case SCTP_CHUNK_DATA:
			w->data[dir]++;
			if ((c.flags & 7) != (SCTP_DATA_FLAG_U | SCTP_DATA_FLAG_B | SCTP_DATA_FLAG_E))
				w->data_not_ube[dir]++;
			if (!is_setup_chunk(&c))
				break;
			if (!w->setup[dir]++)
				w->first_setup_tsn[dir] = c.tsn;
			if (c.sid != IWX_SHIM_STREAM_SETUP || c.ppid != IWX_SHIM_PPI)
				w->setup_not_s0[dir]++;
			break;
		case SCTP_CHUNK_SHUTDOWN:
			w->shutdown[dir]++;
			break;
		case SCTP_CHUNK_ABORT:
			w->abort[dir]++;
			break;
		}
	}
	if (r < 0)
		w->malformed++;
}

static void suite_init(void)
{
	sctp.pair.t = &sctp_transport;
	sctp.pair.a = A;
	sctp.pair.b = B;
	cr_assert_eq(iwx_sctp_init(), 0);
	memset(&wire, 0, sizeof(wire));
	sctp_link_init(&link);
	sctp_link_set_tap(&link, tap, &wire);
}

static void suite_fini(void)
{
	conn_pair_fini(&sctp.pair);
	if (sctp.raw)
		usrsctp_close(sctp.raw);
	if (sctp.lso)
		usrsctp_close(sctp.lso);
	sctp_link_destroy(&link);
	iwx_sctp_finish();
}

TestSuite(sctp_conn, .init = suite_init, .fini = suite_fini, .timeout = HANG_S);

/* crc, markers and revision 1 are asked for, to show that they are never agreed */
static const struct iwx_mpa_local local = { .rev = 1, .crc = true, .markers = true,
					     .ird = 16, .ord = 16 };

/* Every chunk on the wire as the doc has it: U, B, E; set-up chunks on stream 0, PPI 0. */
static void check_wire(void)
{
	for (int d = 0; d < 2; d++) {
		cr_assert_eq(wire.data_not_ube[d], 0, "DATA without U, B, E towards %c", "AB"[d]);
		cr_assert_eq(wire.setup_not_s0[d], 0, "set-up chunk off stream 0 towards %c", "AB"[d]);
	}
	cr_assert_eq(wire.malformed, 0);
}

/* Settle the link, then: the association ended with SHUTDOWN, never ABORT. */
static void check_graceful(void)
{
	cr_assert(sctp_link_settle(&link, 250, STALL_MS), "the link never went quiet");
	cr_assert_gt(wire.shutdown[SCTP_LINK_TO_A] + wire.shutdown[SCTP_LINK_TO_B], 0, "no SHUTDOWN");
	cr_assert_eq(wire.abort[SCTP_LINK_TO_A] + wire.abort[SCTP_LINK_TO_B], 0, "ABORT sent");
}

/* A Send of the untagged queue 0, as the lower layer would frame it: one chunk, its last. */
static size_t send_chunk(uint8_t *chunk, uint32_t msn, const char *text, uint32_t len)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = msn, .len = len };
	size_t h = iwx_shim_hdr_encode(chunk, &m, 0, true);

	memcpy(chunk + h, text, m.len);
	return h + m.len;
}

static void sctp_send(struct socket *so, uint16_t sid, const void *buf, size_t len)
{
	struct sctp_sndinfo si = { .snd_sid = sid, .snd_flags = SCTP_UNORDERED,
				   .snd_ppid = htonl(IWX_SHIM_PPI) };

	cr_assert_eq(usrsctp_sendv(so, buf, len, NULL, 0, &si, sizeof(si), SCTP_SENDV_SNDINFO, 0),
		     (ssize_t)len, "sendv: %s", strerror(errno));
}

/* ------------------------------------------- hand-made peers */

/* A socket of side A connecting to B's port: iwx's settings (with the indication) or plain. */
static struct socket *raw_client(bool indication)
{
	struct sockaddr_conn sc = { .sconn_family = AF_CONN, .sconn_port = htons(PORT),
				    .sconn_addr = link.b.token };
	int on = 1;
	struct socket *so = indication ? iwx_sctp_socket() :
			    usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);

	cr_assert_not_null(so);
	if (!indication) {
		cr_assert_eq(usrsctp_set_non_blocking(so, 1), 0);
		cr_assert_eq(usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &on, sizeof(on)), 0);
	}
	sc.sconn_port = 0;
	cr_assert_eq(usrsctp_bind(so, (struct sockaddr *)&sc, sizeof(sc)), 0, "bind: %s",
		     strerror(errno));
	sc.sconn_port = htons(PORT);
	cr_assert(usrsctp_connect(so, (struct sockaddr *)&sc, sizeof(sc)) == 0 || errno == EINPROGRESS,
		  "connect: %s", strerror(errno));
	return so;
}

/*
 * The next data message on so (notifications skipped), pumping the link for at most
 * STALL_MS. Returns its length.
 */
static size_t raw_recv(struct socket *so, uint8_t *buf, size_t cap, struct sctp_rcvinfo *rcv)
{
	uint64_t end = iwx_now_ms() + STALL_MS;

	for (;;) {
		socklen_t infolen = sizeof(*rcv);
		unsigned int infotype = 0;
		int flags = 0;
		ssize_t n;

		if (usrsctp_get_events(so) & SCTP_EVENT_READ) {
			n = usrsctp_recvv(so, buf, cap, NULL, NULL, rcv, &infolen, &infotype, &flags);
			cr_assert_gt(n, 0, "recvv: %zd %s", n, n < 0 ? strerror(errno) : "end");
			if (!(flags & MSG_NOTIFICATION)) {
				cr_assert(flags & MSG_EOR);
				return n;
			}
			continue;
		}
		cr_assert_lt(iwx_now_ms(), end, "nothing came");
		sctp_link_pump(&link, 1);
	}
}

/* Wait until a hand-made client's association is up (an iwx Responder accepts only then). */
static void raw_wait_up(struct socket *so)
{
	uint64_t end = iwx_now_ms() + STALL_MS;
	struct sctp_status st;
	socklen_t len;

	for (;;) {
		memset(&st, 0, sizeof(st));
		len = sizeof(st);
		if (usrsctp_getsockopt(so, IPPROTO_SCTP, SCTP_STATUS, &st, &len) == 0 &&
		    st.sstat_state == SCTP_ESTABLISHED)
			return;
		cr_assert_lt(iwx_now_ms(), end, "association not up");
		sctp_link_pump(&link, 1);
	}
}

/* A set-up chunk carrying the frame p. */
static size_t setup_chunk(uint8_t *chunk, size_t cap, const struct iwx_mpa_rr_params *p)
{
	size_t h = iwx_shim_setup_hdr(chunk);
	ssize_t n = iwx_mpa_rr_encode(chunk + h, cap - h, p);

	cr_assert_gt(n, 0);
	return h + n;
}

/* A Request as an iwx Initiator sends it. */
static struct iwx_mpa_rr_params good_request(void)
{
	static const struct iwx_mpa_local l = { .rev = 2, .ird = 4, .ord = 4, .p2p = true,
						.rtr = IWX_RTR_WRITE };
	struct iwx_mpa_rr_params req;

	iwx_mpa_setup_request(&l, (const uint8_t *)"hi", 2, &req);
	return req;
}

/* The chunk a hand-made peer received: a set-up chunk holding a Reply with R. */
static void check_reject_reply(const uint8_t *buf, size_t n, const struct sctp_rcvinfo *rcv)
{
	struct iwx_mpa_rr_params rep;
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;

	cr_assert_eq(rcv->rcv_sid, IWX_SHIM_STREAM_SETUP);
	cr_assert_eq(iwx_shim_decode(buf, n, IWX_SHIM_IND_TAG, &seg, &cause), IWX_SHIM_SETUP);
	cr_assert_eq(iwx_mpa_rr_decode(seg.payload, seg.len, true, &rep), (ssize_t)seg.len);
	cr_assert(rep.reject);
	cr_assert(!rep.crc && !rep.markers);
}

/* ------------------------------------------- the fixture */

static void sctp_listen(struct conn_pair *p)
{
	(void)p;
	sctp.lso = iwx_conn_sctp_listen(PORT, 8);
	cr_assert_not_null(sctp.lso, "listen: %s", strerror(errno));
}

static int sctp_connect(struct conn_pair *p, const struct iwx_conn_opts *o)
{
	(void)p;
	return iwx_conn_sctp_connect(&sctp.a, &link.b, PORT, o);
}

static int sctp_accept(struct conn_pair *p, const struct iwx_conn_opts *o)
{
	(void)p;
	return iwx_conn_sctp_accept(&sctp.b, sctp.lso, o);
}

static void sctp_wait(struct conn_pair *p)
{
	(void)p;
	sctp_link_pump(&link, 1);
}

static bool sctp_closed(const struct iwx_conn *c)
{
	return !iwx_conn_sctp_socket(c);
}

static void sctp_send_early(struct conn_pair *p, const char text[4])
{
	uint8_t chunk[64];

	sctp_send(iwx_conn_sctp_socket(p->b), IWX_SHIM_STREAM_UNTAGGED, chunk, send_chunk(chunk, 1, text, 4));
}

/* A's next chunk is B's Send, on its stream, the TSN after the Reply's. */
static void sctp_recv_early(struct conn_pair *p, const char text[4])
{
	struct iwx_term_cause cause;
	struct sctp_rcvinfo rcv;
	struct iwx_ddp_seg seg;
	uint8_t got[64];
	size_t n;

	n = raw_recv(iwx_conn_sctp_socket(p->a), got, sizeof(got), &rcv);
	cr_assert_eq(rcv.rcv_sid, IWX_SHIM_STREAM_UNTAGGED);
	cr_assert_eq(rcv.rcv_tsn, sctp.a.peer_tsn + 1);
	cr_assert_eq(iwx_shim_decode(got, n, IWX_SHIM_IND_TAG, &seg, &cause), 0);
	cr_assert_eq(seg.opcode, IWX_OP_SEND);
	cr_assert_eq(seg.len, 4);
	cr_assert_arr_eq(seg.payload, text, 4);
}

static void sctp_raw_connect(struct conn_pair *p)
{
	(void)p;
	sctp.raw = raw_client(true);
	raw_wait_up(sctp.raw);
}

static void sctp_raw_send(struct conn_pair *p, const void *frame, size_t len)
{
	uint8_t chunk[IWX_SHIM_SETUP_HDR_LEN + 128];
	size_t h = iwx_shim_setup_hdr(chunk);

	(void)p;
	cr_assert_leq(len, sizeof(chunk) - h);
	memcpy(chunk + h, frame, len);
	sctp_send(sctp.raw, IWX_SHIM_STREAM_SETUP, chunk, h + len);
}

static void sctp_raw_recv_reject(struct conn_pair *p)
{
	struct sctp_rcvinfo rcv;
	uint8_t got[600];
	size_t n;

	(void)p;
	n = raw_recv(sctp.raw, got, sizeof(got), &rcv);
	check_reject_reply(got, n, &rcv);
}

static const struct conn_transport sctp_transport = {
	.local = &local, .listen = sctp_listen, .connect = sctp_connect, .accept = sctp_accept,
	.wait = sctp_wait, .closed = sctp_closed, .send_early = sctp_send_early,
	.recv_early = sctp_recv_early, .raw_connect = sctp_raw_connect,
	.raw_send = sctp_raw_send, .raw_recv_reject = sctp_raw_recv_reject,
};

/* Accept one association as B, then step it until it needs no socket work. */
static void accept_and_drive(const struct iwx_conn_opts *o)
{
	conn_pair_accept(&sctp.pair, o);
	conn_pair_drive_one(&sctp.pair, B);
}

/* ------------------------------------------- tests */

CONN_TESTS(sctp_conn, &sctp.pair)

/*
 * conn_tests.h's exchange, and what SCTP fixes: always revision 2, peer-to-peer with a
 * Write as RTR and no CRC or markers, whatever was asked; each side's chunks start at the
 * TSN of its set-up chunk.
 */
Test(sctp_conn, established_private_data_both_ways)
{
	conn_test_established_private_data_both_ways(&sctp.pair);
	for (int i = 0; i < 2; i++) {
		const struct iwx_conn_sctp *t = i ? &sctp.b : &sctp.a;
		const struct iwx_conn *c = &t->conn;

		cr_assert_eq(c->agreed.rtr, IWX_RTR_WRITE);
		cr_assert(!c->agreed.mode.crc);
		cr_assert_eq(c->emss, 1444, "maxseg %u", c->emss);
		cr_assert_eq(t->peer_indication, IWX_SHIM_IND_TAG);
	}
	cr_assert_eq(B->request.rev, 2);
	cr_assert(B->request.enhanced && B->request.p2p && B->request.rtr_write);
	cr_assert(!B->request.crc && !B->request.markers);

	/* one set-up chunk each way, and the TSN each side's peer starts from is its TSN */
	cr_assert_eq(wire.setup[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.setup[SCTP_LINK_TO_A], 1);
	cr_assert_eq(sctp.b.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_B]);
	cr_assert_eq(sctp.a.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_A]);
	/* the Request and the Reply, and the Responder's early chunk */
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 2);
	check_wire();
}

/* ... and over SCTP, SHUTDOWN follows the reject. */
Test(sctp_conn, reject_with_private_data)
{
	conn_test_reject_with_private_data(&sctp.pair);
	cr_assert_eq(sctp.a.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_A]);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A] + wire.data[SCTP_LINK_TO_B], 2);
	check_wire();
	check_graceful();
}

Test(sctp_conn, silent_responder_times_out)
{
	conn_test_silent_responder_times_out(&sctp.pair);
	/* the Request went out; nothing came back */
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
	check_wire();
}

Test(sctp_conn, request_without_write_rtr)
{
	conn_test_request_without_write_rtr(&sctp.pair);
	check_graceful();
}

/* No association waiting: accept says so and leaves nothing behind. */
Test(sctp_conn, accept_without_association)
{
	struct iwx_conn_opts so = { .local = local };
	struct iwx_conn_sctp srv;

	sctp_listen(&sctp.pair);
	cr_assert_eq(iwx_conn_sctp_accept(&srv, sctp.lso, &so), -EAGAIN);
	cr_assert_null(srv.so);
}

/*
 * §3.1: a Responder whose INIT-ACK carries no Adaptation Layer Indication (a plain usrsctp
 * socket): the Initiator fails with -EPROTONOSUPPORT, sends no DATA chunk at all and shuts
 * the association down.
 */
Test(sctp_conn, responder_without_indication)
{
	struct iwx_conn_opts co = { .local = local, .timeout_ms = STALL_MS };
	struct sockaddr_conn sc = { .sconn_family = AF_CONN, .sconn_port = htons(PORT) };

	sctp.raw = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
	cr_assert_not_null(sctp.raw);
	cr_assert_eq(usrsctp_set_non_blocking(sctp.raw, 1), 0);
	cr_assert_eq(usrsctp_bind(sctp.raw, (struct sockaddr *)&sc, sizeof(sc)), 0);
	cr_assert_eq(usrsctp_listen(sctp.raw, 1), 0);
	cr_assert_eq(conn_pair_connect(&sctp.pair, &co), 0);
	conn_pair_drive_one(&sctp.pair, A);

	cr_assert_eq(A->state, IWX_CONN_FAILED);
	cr_assert_eq(A->error, -EPROTONOSUPPORT, "%s", strerror(-A->error));
	cr_assert_null(iwx_conn_sctp_socket(A));
	check_graceful();
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 0);
}

/* The same from the other side: an Initiator without the indication is refused by the Responder. */
Test(sctp_conn, initiator_without_indication)
{
	struct iwx_conn_opts so = { .local = local, .timeout_ms = STALL_MS };

	sctp_listen(&sctp.pair);
	sctp.raw = raw_client(false);
	accept_and_drive(&so);
	cr_assert_eq(B->state, IWX_CONN_FAILED);
	cr_assert_eq(B->error, -EPROTONOSUPPORT, "%s", strerror(-B->error));
	cr_assert_null(iwx_conn_sctp_socket(B));
	check_graceful();
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 0);
}

/* And one that sends its Request at once: still refused, and nothing goes back. */
Test(sctp_conn, initiator_without_indication_sends_request)
{
	struct iwx_conn_opts so = { .local = local, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req = good_request();
	uint8_t chunk[128];

	sctp_listen(&sctp.pair);
	sctp.raw = raw_client(false);
	raw_wait_up(sctp.raw);
	sctp_send(sctp.raw, IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &req));
	sctp_link_pump(&link, 0);
	accept_and_drive(&so);
	cr_assert_eq(B->state, IWX_CONN_FAILED);
	cr_assert_eq(B->error, -EPROTONOSUPPORT, "%s", strerror(-B->error));
	cr_assert_null(iwx_conn_sctp_socket(B));
	check_graceful();
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
}

/*
 * A hand-made Initiator sends something else than a set-up chunk on stream 0 holding a
 * revision 2 Request without M and C (twice: the second is left unread): the Responder
 * fails with -EPROTO ("invalid Request/Reply"), answers with a Reply with R and shuts
 * the association down.
 */
static void bad_first_chunk(uint16_t sid, const uint8_t *chunk, size_t len, struct iwx_term_cause want)
{
	struct iwx_conn_opts so = { .local = local, .timeout_ms = STALL_MS };

	sctp_listen(&sctp.pair);
	sctp_raw_connect(&sctp.pair);
	sctp_send(sctp.raw, sid, chunk, len);
	sctp_send(sctp.raw, sid, chunk, len);
	/* both in the Responder's socket before it reads */
	sctp_link_pump(&link, 0);
	accept_and_drive(&so);
	cr_assert_eq(B->state, IWX_CONN_FAILED);
	cr_assert_eq(B->error, -EPROTO, "%s", strerror(-B->error));
	cr_assert(iwx_cause_eq(B->cause, want), "cause %u/%u/%u", B->cause.layer,
		  B->cause.etype, B->cause.ecode);
	cr_assert_null(iwx_conn_sctp_socket(B));
	check_graceful();
	sctp_raw_recv_reject(&sctp.pair);
	cr_assert_eq(wire.data_not_ube[SCTP_LINK_TO_A], 0);
	cr_assert_eq(wire.setup_not_s0[SCTP_LINK_TO_A], 0);
}

Test(sctp_conn, first_chunk_not_setup)
{
	uint8_t chunk[64];

	bad_first_chunk(IWX_SHIM_STREAM_UNTAGGED, chunk, send_chunk(chunk, 1, "early", 5),
			IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR));
}

Test(sctp_conn, setup_chunk_off_stream_0)
{
	struct iwx_mpa_rr_params req = good_request();
	uint8_t chunk[128];

	bad_first_chunk(IWX_SHIM_STREAM_UNTAGGED, chunk, setup_chunk(chunk, sizeof(chunk), &req),
			IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR));
}

Test(sctp_conn, request_with_crc)
{
	struct iwx_mpa_rr_params req = good_request();
	uint8_t chunk[128];

	req.crc = true;
	bad_first_chunk(IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &req),
			IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR));
}

Test(sctp_conn, request_with_markers)
{
	struct iwx_mpa_rr_params req = good_request();
	uint8_t chunk[128];

	req.markers = true;
	bad_first_chunk(IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &req),
			IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR));
}

Test(sctp_conn, request_revision_1)
{
	static const struct iwx_mpa_local rev1 = { .rev = 1 };
	struct iwx_mpa_rr_params req;
	uint8_t chunk[128];

	iwx_mpa_setup_request(&rev1, NULL, 0, &req);
	bad_first_chunk(IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &req),
			IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR));
}

/* A chunk whose shim header is malformed: the shim's own cause. */
Test(sctp_conn, first_chunk_malformed)
{
	uint8_t chunk[16] = { IWX_SHIM_MODE_ANONYMOUS, IWX_SHIM_FLAG_DISCLOSE, 0, 24 };

	bad_first_chunk(IWX_SHIM_STREAM_SETUP, chunk, sizeof(chunk),
			IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED));
}

/* A second set-up chunk while the Responder's application decides: the set-up fails. */
Test(sctp_conn, second_setup_chunk)
{
	struct iwx_conn_opts so = { .local = local, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req = good_request();
	uint8_t chunk[128];
	uint64_t end;
	size_t n;

	sctp_listen(&sctp.pair);
	sctp_raw_connect(&sctp.pair);
	n = setup_chunk(chunk, sizeof(chunk), &req);
	sctp_send(sctp.raw, IWX_SHIM_STREAM_SETUP, chunk, n);
	accept_and_drive(&so);
	cr_assert_eq(B->state, IWX_CONN_REQUEST_IN, "%d %s", B->state, strerror(-B->error));
	cr_assert_eq(B->peer_pd_len, 2);
	cr_assert_eq(sctp.b.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_B]);

	sctp_send(sctp.raw, IWX_SHIM_STREAM_SETUP, chunk, n);
	end = iwx_now_ms() + STALL_MS;
	while (B->state == IWX_CONN_REQUEST_IN) {
		cr_assert_lt(iwx_now_ms(), end, "second set-up chunk not seen");
		sctp_link_pump(&link, 1);
		cr_assert_eq(iwx_conn_step(B, iwx_now_ms()), 0);
	}
	cr_assert_eq(B->state, IWX_CONN_FAILED);
	cr_assert_eq(B->error, -EPROTO);
	cr_assert(iwx_cause_eq(B->cause, IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR)));
	cr_assert_null(iwx_conn_sctp_socket(B));
	cr_assert_eq(iwx_conn_answer(B, &so, false), -EINVAL);
	sctp_raw_recv_reject(&sctp.pair);
}

/* A hand-made Responder answers with a Reply that has C set: the Initiator fails with -EPROTO. */
Test(sctp_conn, reply_with_crc)
{
	struct iwx_conn_opts co = { .local = local, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req, rep = {
		.reply = true, .rev = 2, .enhanced = true, .crc = true, .ird = 1, .ord = 1,
		.p2p = true, .rtr_write = true,
	};
	struct sctp_rcvinfo rcv;
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;
	uint8_t got[600], chunk[128];
	uint64_t end = iwx_now_ms() + STALL_MS;
	size_t n;

	sctp_listen(&sctp.pair);
	cr_assert_eq(conn_pair_connect(&sctp.pair, &co), 0);
	while (!(sctp.raw = usrsctp_accept(sctp.lso, NULL, NULL))) {
		cr_assert_lt(iwx_now_ms(), end, "no association to accept");
		sctp_link_pump(&link, 1);
		iwx_conn_step(A, iwx_now_ms());
	}
	cr_assert_eq(usrsctp_set_non_blocking(sctp.raw, 1), 0);
	while (A->state != IWX_CONN_WAIT_REPLY) {
		cr_assert_lt(iwx_now_ms(), end, "no Request sent: %d", A->state);
		sctp_link_pump(&link, 1);
		iwx_conn_step(A, iwx_now_ms());
	}
	n = raw_recv(sctp.raw, got, sizeof(got), &rcv);
	cr_assert_eq(rcv.rcv_sid, IWX_SHIM_STREAM_SETUP);
	cr_assert_eq(iwx_shim_decode(got, n, IWX_SHIM_IND_TAG, &seg, &cause), IWX_SHIM_SETUP);
	cr_assert_eq(iwx_mpa_rr_decode(seg.payload, seg.len, false, &req), (ssize_t)seg.len);
	cr_assert(req.p2p && req.rtr_write && req.enhanced && !req.crc && !req.markers);

	sctp_send(sctp.raw, IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &rep));
	conn_pair_drive_one(&sctp.pair, A);
	cr_assert_eq(A->state, IWX_CONN_FAILED);
	cr_assert_eq(A->error, -EPROTO, "%s", strerror(-A->error));
	cr_assert(iwx_cause_eq(A->cause, IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR)));
	cr_assert_null(iwx_conn_sctp_socket(A));
}
