// SPDX-License-Identifier: MIT
/*
 * iWARP set-up over SCTP (docs/ddp-over-sctp.md, "Set-up") in one process: both ends on
 * the one usrsctp stack, joined by an in-memory link that sees every packet. Side A
 * (the link's path a) is the Initiator and connects to path b; side B listens. The
 * MPA exchange with private data and IRD/ORD, the TSN each side's chunks start from,
 * reject, time-outs, peers that did not announce the adaptation indication, and peers
 * that send the wrong first chunk.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <usrsctp.h>

#include "proto/ddp_shim.h"
#include "proto/mpa.h"

#include "sctp.h"
#include "conn.h"
#include "sctp_link.h"
#include "stall.h"
#include "testutil.h"
#include "util/clock.h"

#define PORT		5001
#define BOUND_MS	5000	/* a time-out under test fires before this: half the default */
#define SHORT_MS	300	/* the time-out under test */

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
	cr_assert_eq(iwx_sctp_init(), 0);
	memset(&wire, 0, sizeof(wire));
	sctp_link_init(&link);
	sctp_link_set_tap(&link, tap, &wire);
}

static void suite_fini(void)
{
	sctp_link_destroy(&link);
	iwx_sctp_finish();
}

TestSuite(sctp_conn, .init = suite_init, .fini = suite_fini, .timeout = HANG_S);

/* crc, markers and revision 1 are asked for, to show that they are never agreed */
static const struct iwx_mpa_local local = { .rev = 1, .crc = true, .markers = true,
					     .ird = 16, .ord = 16 };

static bool final(const struct iwx_conn *c)
{
	return c->state == IWX_CONN_ESTABLISHED || c->state == IWX_CONN_REJECTED ||
	       c->state == IWX_CONN_FAILED;
}

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

static struct socket *listen_b(void)
{
	struct socket *so = iwx_conn_sctp_listen(PORT, 8);

	cr_assert_not_null(so, "listen: %s", strerror(errno));
	return so;
}

/* ------------------------------------------- both ends stepped from the test's thread */

struct run {
	struct iwx_conn	cli, srv;
	struct socket		*lso;
	bool			accepted, answered;
	struct iwx_conn_opts	srv_opts;
	bool			reject, silent;	/* silent: the Responder never answers */
	int			answer_ret;
	bool			early;	/* the Responder sends a chunk right after its Reply */
};

/* A Send of the untagged queue 0, as the lower layer would frame it: one chunk, its last. */
static size_t send_chunk(uint8_t *chunk, uint32_t msn, const char *text)
{
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = msn, .len = strlen(text) };
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

static void answer(struct run *r)
{
	uint8_t chunk[64];

	r->answer_ret = iwx_conn_answer(&r->srv, &r->srv_opts, r->reject);
	r->answered = true;
	if (r->early && r->srv.state == IWX_CONN_ESTABLISHED)
		sctp_send(r->srv.sctp.so, IWX_SHIM_STREAM_UNTAGGED, chunk, send_chunk(chunk, 1, "S2C!"));
}

/* Pump the link and step the Initiator, the listener and the Responder until both are done. */
static void drive(struct run *r)
{
	uint64_t now, end = iwx_now_ms() + STALL_MS;
	int n;

	for (;;) {
		sctp_link_pump(&link, 1);
		now = iwx_now_ms();
		if (!r->accepted) {
			n = iwx_conn_sctp_accept(&r->srv, r->lso, &r->srv_opts);
			cr_assert(n == 0 || n == -EAGAIN, "accept: %s", strerror(-n));
			r->accepted = n == 0;
		}
		if (r->accepted) {
			iwx_conn_step(&r->srv, now);
			if (r->srv.state == IWX_CONN_REQUEST_IN && !r->answered && !r->silent)
				answer(r);
		}
		iwx_conn_step(&r->cli, now);
		if (final(&r->cli) && r->accepted &&
		    (final(&r->srv) || (r->silent && r->srv.state == IWX_CONN_REQUEST_IN)))
			break;
		cr_assert_lt(now, end, "set-up hangs: initiator %d, responder %d", r->cli.state,
			     r->accepted ? (int)r->srv.state : -1);
	}
}

static void run_close(struct run *r)
{
	iwx_conn_close(&r->cli);
	if (r->accepted)
		iwx_conn_close(&r->srv);
	usrsctp_close(r->lso);
}

/* Step one end alone (the other is hand-made) until it needs no socket work. */
static void drive_one(struct iwx_conn *c)
{
	uint64_t end = iwx_now_ms() + STALL_MS;

	while (iwx_conn_step(c, iwx_now_ms()) == -EAGAIN) {
		cr_assert_lt(iwx_now_ms(), end, "stuck in state %d", c->state);
		sctp_link_pump(&link, 1);
	}
}

/* Accept one association as a Responder, then step it until it needs no socket work. */
static void accept_and_drive(struct iwx_conn *c, struct socket *lso,
			     const struct iwx_conn_opts *o)
{
	uint64_t end = iwx_now_ms() + STALL_MS;
	int n;

	while ((n = iwx_conn_sctp_accept(c, lso, o)) == -EAGAIN) {
		cr_assert_lt(iwx_now_ms(), end, "no association to accept");
		sctp_link_pump(&link, 1);
	}
	cr_assert_eq(n, 0, "accept: %s", strerror(-n));
	drive_one(c);
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

/* ------------------------------------------- tests */

/*
 * Private data both ways, IRD/ORD lowered as the MPA code decides, always revision 2,
 * peer-to-peer with a Write as RTR and no CRC or markers; each side's chunks start at
 * the TSN of its set-up chunk; the Initiator reads exactly the Reply.
 */
Test(sctp_conn, established_private_data_both_ways)
{
	static const uint8_t srv_pd[] = "accepted";
	uint8_t cli_pd[IWX_MPA_MAX_PRIVDATA - 4], got[64];
	struct iwx_conn_opts co = { .local = local, .pd = cli_pd, .pd_len = sizeof(cli_pd) };
	struct run r = { .early = true };
	struct iwx_term_cause cause;
	struct sctp_rcvinfo rcv;
	struct iwx_ddp_seg seg;
	size_t n;

	fill_pattern(cli_pd, sizeof(cli_pd), 7);
	co.local.ird = 8;
	co.local.ord = 4;
	r.srv_opts = (struct iwx_conn_opts){ .local = local, .pd = srv_pd, .pd_len = sizeof(srv_pd) };
	r.srv_opts.local.ird = 2;
	r.srv_opts.local.ord = 16;
	r.lso = listen_b();
	cr_assert_eq(iwx_conn_sctp_connect(&r.cli, &link.b, PORT, &co), 0);
	cr_assert(r.cli.initiator);
	cr_assert_eq(r.cli.state, IWX_CONN_CONNECTING);
	drive(&r);

	cr_assert_eq(r.answer_ret, 0);
	cr_assert_eq(r.cli.state, IWX_CONN_ESTABLISHED, "initiator: %d %s", r.cli.state,
		     strerror(-r.cli.error));
	cr_assert_eq(r.srv.state, IWX_CONN_ESTABLISHED, "responder: %d %s", r.srv.state,
		     strerror(-r.srv.error));
	cr_assert(!r.srv.initiator);
	for (int i = 0; i < 2; i++) {
		const struct iwx_conn *c = i ? &r.srv : &r.cli;

		cr_assert_not_null(c->sctp.so);
		cr_assert_eq(c->agreed.mode.rev, 2);
		cr_assert(c->agreed.enhanced);
		cr_assert_eq(c->agreed.rtr, IWX_RTR_WRITE);
		cr_assert(!c->agreed.mode.crc);
		cr_assert(!c->agreed.mode.markers_rx && !c->agreed.mode.markers_tx);
		cr_assert_eq(c->agreed.initiator, !i);
		cr_assert_eq(c->emss, 1444, "maxseg %u", c->emss);
		cr_assert_eq(c->sctp.peer_indication, IWX_SHIM_IND_TAG);
	}
	/* responder: IRD min(2, initiator's ORD 4), ORD min(16, initiator's IRD 8) */
	cr_assert_eq(r.srv.agreed.ird, 2);
	cr_assert_eq(r.srv.agreed.ord, 8);
	cr_assert_eq(r.cli.agreed.ird, 8);
	cr_assert_eq(r.cli.agreed.ord, 2);
	cr_assert_eq(r.srv.request.rev, 2);
	cr_assert(r.srv.request.enhanced && r.srv.request.p2p && r.srv.request.rtr_write);
	cr_assert(!r.srv.request.crc && !r.srv.request.markers);
	cr_assert_eq(r.srv.request.ird, 8);
	cr_assert_eq(r.srv.request.ord, 4);

	cr_assert_eq(r.srv.peer_pd_len, sizeof(cli_pd));
	cr_assert_arr_eq(r.srv.peer_pd, cli_pd, sizeof(cli_pd));
	cr_assert_eq(r.cli.peer_pd_len, sizeof(srv_pd));
	cr_assert_arr_eq(r.cli.peer_pd, srv_pd, sizeof(srv_pd));

	/* one set-up chunk each way, and the TSN each side's peer starts from is its TSN */
	cr_assert_eq(wire.setup[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.setup[SCTP_LINK_TO_A], 1);
	cr_assert_eq(r.srv.sctp.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_B]);
	cr_assert_eq(r.cli.sctp.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_A]);
	/* the Request and the Reply, and the Responder's early chunk */
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 2);
	check_wire();

	/* what followed the Reply is still in the Initiator's socket, for the lower layer */
	n = raw_recv(r.cli.sctp.so, got, sizeof(got), &rcv);
	cr_assert_eq(rcv.rcv_sid, IWX_SHIM_STREAM_UNTAGGED);
	cr_assert_eq(rcv.rcv_tsn, r.cli.sctp.peer_tsn + 1);
	cr_assert_eq(iwx_shim_decode(got, n, IWX_SHIM_IND_TAG, &seg, &cause), 0);
	cr_assert_eq(seg.opcode, IWX_OP_SEND);
	cr_assert_eq(seg.len, 4);
	cr_assert_arr_eq(seg.payload, "S2C!", 4);
	run_close(&r);
}

/* The Responder rejects with private data: the Initiator is refused and gets it; SHUTDOWN follows. */
Test(sctp_conn, reject_with_private_data)
{
	static const uint8_t why[] = "no room at the inn";
	struct iwx_conn_opts co = { .local = local, .pd = (const uint8_t *)"let me in", .pd_len = 9 };
	struct run r = { .reject = true };

	r.srv_opts = (struct iwx_conn_opts){ .local = local, .pd = why, .pd_len = sizeof(why) };
	r.lso = listen_b();
	cr_assert_eq(iwx_conn_sctp_connect(&r.cli, &link.b, PORT, &co), 0);
	drive(&r);

	cr_assert_eq(r.answer_ret, 0);
	cr_assert_eq(r.srv.state, IWX_CONN_REJECTED);
	cr_assert_eq(r.srv.error, 0);
	cr_assert_null(r.srv.sctp.so);
	cr_assert_eq(r.srv.peer_pd_len, 9);
	cr_assert_arr_eq(r.srv.peer_pd, "let me in", 9);
	cr_assert_eq(r.cli.state, IWX_CONN_REJECTED);
	cr_assert_eq(r.cli.error, -ECONNREFUSED);
	cr_assert_null(r.cli.sctp.so);
	cr_assert_eq(r.cli.peer_pd_len, sizeof(why));
	cr_assert_arr_eq(r.cli.peer_pd, why, sizeof(why));
	cr_assert_eq(r.cli.sctp.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_A]);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A] + wire.data[SCTP_LINK_TO_B], 2);
	check_wire();
	check_graceful();
	usrsctp_close(r.lso);
}

/* A Responder that takes the association and never answers: the Initiator gives up on time. */
Test(sctp_conn, silent_responder_times_out)
{
	struct iwx_conn_opts co = { .local = local, .timeout_ms = SHORT_MS };
	struct run r = { .silent = true };
	uint64_t t0 = iwx_now_ms(), dt;

	r.srv_opts = (struct iwx_conn_opts){ .local = local };
	r.lso = listen_b();
	cr_assert_eq(iwx_conn_sctp_connect(&r.cli, &link.b, PORT, &co), 0);
	drive(&r);
	dt = iwx_now_ms() - t0;

	cr_assert_eq(r.cli.state, IWX_CONN_FAILED);
	cr_assert_eq(r.cli.error, -ETIMEDOUT, "%s", strerror(-r.cli.error));
	cr_assert_null(r.cli.sctp.so);
	cr_assert_geq(dt, SHORT_MS - 5);
	/* its own time-out, not the default 10 s (how late it fired is the machine's pace) */
	cr_assert_lt(dt, BOUND_MS, "timed out after %lu ms", (unsigned long)dt);
	cr_assert_eq(r.srv.state, IWX_CONN_REQUEST_IN);
	/* the Request went out; nothing came back */
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
	check_wire();
	run_close(&r);
}

/* A hand-made Initiator that never sends its Request: the Responder gives up on time. */
Test(sctp_conn, silent_initiator_times_out)
{
	struct iwx_conn_opts so = { .local = local, .timeout_ms = SHORT_MS };
	struct socket *lso = listen_b(), *raw = raw_client(true);
	struct iwx_conn srv;
	uint64_t t0, dt;

	raw_wait_up(raw);
	cr_assert_eq(iwx_conn_sctp_accept(&srv, lso, &so), 0);
	t0 = iwx_now_ms();
	cr_assert_leq(srv.deadline_ms, t0 + SHORT_MS);
	drive_one(&srv);
	dt = iwx_now_ms() - t0;
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	cr_assert_eq(srv.error, -ETIMEDOUT, "%s", strerror(-srv.error));
	cr_assert_geq(dt, SHORT_MS - 5);
	/* its own time-out, not the default 10 s (how late it fired is the machine's pace) */
	cr_assert_lt(dt, BOUND_MS, "timed out after %lu ms", (unsigned long)dt);
	usrsctp_close(raw);
	usrsctp_close(lso);
}

/* Nothing listens on the port: the association is refused (an ABORT answers the INIT). */
Test(sctp_conn, nobody_listens)
{
	struct iwx_conn_opts co = { .local = local, .timeout_ms = STALL_MS };
	struct iwx_conn cli;

	cr_assert_eq(iwx_conn_sctp_connect(&cli, &link.b, PORT, &co), 0);
	drive_one(&cli);
	cr_assert_eq(cli.state, IWX_CONN_FAILED);
	cr_assert_eq(cli.error, -ECONNREFUSED, "%s", strerror(-cli.error));
	cr_assert_null(cli.sctp.so);
}

/* No association waiting: accept says so and leaves nothing behind. */
Test(sctp_conn, accept_without_association)
{
	struct iwx_conn_opts so = { .local = local };
	struct socket *lso = listen_b();
	struct iwx_conn srv;

	cr_assert_eq(iwx_conn_sctp_accept(&srv, lso, &so), -EAGAIN);
	cr_assert_null(srv.sctp.so);
	usrsctp_close(lso);
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
	struct iwx_conn cli;
	struct socket *raw;

	raw = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
	cr_assert_not_null(raw);
	cr_assert_eq(usrsctp_set_non_blocking(raw, 1), 0);
	cr_assert_eq(usrsctp_bind(raw, (struct sockaddr *)&sc, sizeof(sc)), 0);
	cr_assert_eq(usrsctp_listen(raw, 1), 0);
	cr_assert_eq(iwx_conn_sctp_connect(&cli, &link.b, PORT, &co), 0);
	drive_one(&cli);

	cr_assert_eq(cli.state, IWX_CONN_FAILED);
	cr_assert_eq(cli.error, -EPROTONOSUPPORT, "%s", strerror(-cli.error));
	cr_assert_null(cli.sctp.so);
	check_graceful();
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 0);
	usrsctp_close(raw);
}

/* The same from the other side: an Initiator without the indication is refused by the Responder. */
Test(sctp_conn, initiator_without_indication)
{
	struct iwx_conn_opts so = { .local = local, .timeout_ms = STALL_MS };
	struct socket *lso = listen_b(), *raw = raw_client(false);
	struct iwx_conn srv;

	accept_and_drive(&srv, lso, &so);
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	cr_assert_eq(srv.error, -EPROTONOSUPPORT, "%s", strerror(-srv.error));
	cr_assert_null(srv.sctp.so);
	check_graceful();
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 0);
	usrsctp_close(raw);
	usrsctp_close(lso);
}

/* And one that sends its Request at once: still refused, and nothing goes back. */
Test(sctp_conn, initiator_without_indication_sends_request)
{
	struct iwx_conn_opts so = { .local = local, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req = good_request();
	struct socket *lso = listen_b(), *raw = raw_client(false);
	struct iwx_conn srv;
	uint8_t chunk[128];

	raw_wait_up(raw);
	sctp_send(raw, IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &req));
	sctp_link_pump(&link, 0);
	accept_and_drive(&srv, lso, &so);
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	cr_assert_eq(srv.error, -EPROTONOSUPPORT, "%s", strerror(-srv.error));
	cr_assert_null(srv.sctp.so);
	check_graceful();
	cr_assert_eq(wire.data[SCTP_LINK_TO_B], 1);
	cr_assert_eq(wire.data[SCTP_LINK_TO_A], 0);
	usrsctp_close(raw);
	usrsctp_close(lso);
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
	struct socket *lso = listen_b(), *raw = raw_client(true);
	struct iwx_conn srv;
	struct sctp_rcvinfo rcv;
	uint8_t got[600];
	size_t n;

	raw_wait_up(raw);
	sctp_send(raw, sid, chunk, len);
	sctp_send(raw, sid, chunk, len);
	/* both in the Responder's socket before it reads */
	sctp_link_pump(&link, 0);
	accept_and_drive(&srv, lso, &so);
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	cr_assert_eq(srv.error, -EPROTO, "%s", strerror(-srv.error));
	cr_assert(iwx_cause_eq(srv.cause, want), "cause %u/%u/%u", srv.cause.layer,
		  srv.cause.etype, srv.cause.ecode);
	cr_assert_null(srv.sctp.so);
	check_graceful();
	n = raw_recv(raw, got, sizeof(got), &rcv);
	check_reject_reply(got, n, &rcv);
	cr_assert_eq(wire.data_not_ube[SCTP_LINK_TO_A], 0);
	cr_assert_eq(wire.setup_not_s0[SCTP_LINK_TO_A], 0);
	usrsctp_close(raw);
	usrsctp_close(lso);
}

Test(sctp_conn, first_chunk_not_setup)
{
	uint8_t chunk[64];

	bad_first_chunk(IWX_SHIM_STREAM_UNTAGGED, chunk, send_chunk(chunk, 1, "early"),
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
	struct socket *lso = listen_b(), *raw = raw_client(true);
	struct iwx_conn srv;
	struct sctp_rcvinfo rcv;
	uint8_t chunk[128], got[600];
	uint64_t end;
	size_t n;

	raw_wait_up(raw);
	n = setup_chunk(chunk, sizeof(chunk), &req);
	sctp_send(raw, IWX_SHIM_STREAM_SETUP, chunk, n);
	accept_and_drive(&srv, lso, &so);
	cr_assert_eq(srv.state, IWX_CONN_REQUEST_IN, "%d %s", srv.state, strerror(-srv.error));
	cr_assert_eq(srv.peer_pd_len, 2);
	cr_assert_eq(srv.sctp.peer_tsn, wire.first_setup_tsn[SCTP_LINK_TO_B]);

	sctp_send(raw, IWX_SHIM_STREAM_SETUP, chunk, n);
	end = iwx_now_ms() + STALL_MS;
	while (srv.state == IWX_CONN_REQUEST_IN) {
		cr_assert_lt(iwx_now_ms(), end, "second set-up chunk not seen");
		sctp_link_pump(&link, 1);
		cr_assert_eq(iwx_conn_step(&srv, iwx_now_ms()), 0);
	}
	cr_assert_eq(srv.state, IWX_CONN_FAILED);
	cr_assert_eq(srv.error, -EPROTO);
	cr_assert(iwx_cause_eq(srv.cause, IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR)));
	cr_assert_null(srv.sctp.so);
	cr_assert_eq(iwx_conn_answer(&srv, &so, false), -EINVAL);
	n = raw_recv(raw, got, sizeof(got), &rcv);
	check_reject_reply(got, n, &rcv);
	usrsctp_close(raw);
	usrsctp_close(lso);
}

/*
 * RFC 6581 §6: a Request that offers no zero-length Write as RTR: the answer is a reject,
 * -EPROTO with "no matching RTR", whatever the application wanted.
 */
Test(sctp_conn, request_without_write_rtr)
{
	static const struct iwx_mpa_local read_rtr = { .rev = 2, .ird = 1, .ord = 1, .p2p = true,
						       .rtr = IWX_RTR_READ | IWX_RTR_SEND };
	struct iwx_conn_opts so = { .local = local, .timeout_ms = STALL_MS };
	struct socket *lso = listen_b(), *raw = raw_client(true);
	struct iwx_mpa_rr_params req;
	struct iwx_conn srv;
	struct sctp_rcvinfo rcv;
	uint8_t chunk[128], got[600];
	size_t n;

	iwx_mpa_setup_request(&read_rtr, NULL, 0, &req);
	raw_wait_up(raw);
	sctp_send(raw, IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &req));
	accept_and_drive(&srv, lso, &so);
	cr_assert_eq(srv.state, IWX_CONN_REQUEST_IN);
	cr_assert_eq(iwx_conn_answer(&srv, &so, false), -EPROTO);
	cr_assert_eq(srv.state, IWX_CONN_REJECTED);
	cr_assert_eq(srv.error, -EPROTO);
	cr_assert(iwx_cause_eq(srv.cause, IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR)));
	cr_assert_null(srv.sctp.so);
	n = raw_recv(raw, got, sizeof(got), &rcv);
	check_reject_reply(got, n, &rcv);
	check_graceful();
	usrsctp_close(raw);
	usrsctp_close(lso);
}

/* A hand-made Responder answers with a Reply that has C set: the Initiator fails with -EPROTO. */
Test(sctp_conn, reply_with_crc)
{
	struct iwx_conn_opts co = { .local = local, .timeout_ms = STALL_MS };
	struct iwx_mpa_rr_params req, rep = {
		.reply = true, .rev = 2, .enhanced = true, .crc = true, .ird = 1, .ord = 1,
		.p2p = true, .rtr_write = true,
	};
	struct socket *lso = listen_b(), *acc = NULL;
	struct iwx_conn cli;
	struct sctp_rcvinfo rcv;
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;
	uint8_t got[600], chunk[128];
	uint64_t end = iwx_now_ms() + STALL_MS;
	size_t n;

	cr_assert_eq(iwx_conn_sctp_connect(&cli, &link.b, PORT, &co), 0);
	while (!(acc = usrsctp_accept(lso, NULL, NULL))) {
		cr_assert_lt(iwx_now_ms(), end, "no association to accept");
		sctp_link_pump(&link, 1);
		iwx_conn_step(&cli, iwx_now_ms());
	}
	cr_assert_eq(usrsctp_set_non_blocking(acc, 1), 0);
	while (cli.state != IWX_CONN_WAIT_REPLY) {
		cr_assert_lt(iwx_now_ms(), end, "no Request sent: %d", cli.state);
		sctp_link_pump(&link, 1);
		iwx_conn_step(&cli, iwx_now_ms());
	}
	n = raw_recv(acc, got, sizeof(got), &rcv);
	cr_assert_eq(rcv.rcv_sid, IWX_SHIM_STREAM_SETUP);
	cr_assert_eq(iwx_shim_decode(got, n, IWX_SHIM_IND_TAG, &seg, &cause), IWX_SHIM_SETUP);
	cr_assert_eq(iwx_mpa_rr_decode(seg.payload, seg.len, false, &req), (ssize_t)seg.len);
	cr_assert(req.p2p && req.rtr_write && req.enhanced && !req.crc && !req.markers);

	sctp_send(acc, IWX_SHIM_STREAM_SETUP, chunk, setup_chunk(chunk, sizeof(chunk), &rep));
	drive_one(&cli);
	cr_assert_eq(cli.state, IWX_CONN_FAILED);
	cr_assert_eq(cli.error, -EPROTO, "%s", strerror(-cli.error));
	cr_assert(iwx_cause_eq(cli.cause, IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR)));
	cr_assert_null(cli.sctp.so);
	usrsctp_close(acc);
	usrsctp_close(lso);
}
