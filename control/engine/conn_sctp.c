// SPDX-License-Identifier: MIT
/*
 * The set-up over SCTP: the association with the adaptation indication checked, then the
 * MPA Request and Reply in set-up chunks (docs/ddp-over-sctp.md); conn.c does the rest.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <usrsctp.h>

#include "proto/ddp_shim.h"
#include "proto/mpa.h"

#include "conn_sctp.h"
#include "llp_sctp.h"
#include "sctp.h"
#include "util/container_of.h"

#define DRAIN_MAX		64	/* reads before a close; what is left makes it an ABORT */

static struct iwx_conn_sctp *sctp_of(struct iwx_conn *c)
{
	return container_of(c, struct iwx_conn_sctp, conn);
}

struct socket *iwx_conn_sctp_socket(const struct iwx_conn *c)
{
	return container_of(c, const struct iwx_conn_sctp, conn)->so;
}

/*
 * Read and drop what the socket holds: usrsctp closes a socket with unread data
 * (notifications too) by an ABORT, which would also discard what is still queued to
 * send (a Reply with R). Bounded: a peer that floods gets its ABORT.
 */
static void drain(struct iwx_conn_sctp *t)
{
	for (int i = 0; i < DRAIN_MAX && (usrsctp_get_events(t->so) & SCTP_EVENT_READ); i++) {
		struct sctp_rcvinfo rcv;
		socklen_t infolen = sizeof(rcv);
		unsigned int infotype = 0;
		int flags = 0;

		if (usrsctp_recvv(t->so, t->rx, sizeof(t->rx), NULL, NULL, &rcv, &infolen,
				  &infotype, &flags) <= 0)
			break;
	}
}

/* Send the set-up chunk: the shim's header, then out's frame, as one unordered message on stream 0. */
static int sctp_send(struct iwx_conn *c)
{
	struct iwx_conn_sctp *t = sctp_of(c);
	struct sctp_sndinfo si = {
		.snd_sid = IWX_SHIM_STREAM_SETUP,
		/* draft-otis-sctp-ddp §2.2: U on every chunk; B and E as SCTP never fragments */
		.snd_flags = SCTP_UNORDERED,
		.snd_ppid = htonl(IWX_SHIM_PPI),
		.snd_assoc_id = t->assoc_id,
	};
	ssize_t n;

	iwx_shim_setup_hdr(c->out);
	n = usrsctp_sendv(t->so, c->out, c->out_len, NULL, 0, &si, sizeof(si), SCTP_SENDV_SNDINFO, 0);
	if (n == c->out_len)
		return 0;
	if (n >= 0)
		return -EIO;	/* a message is taken whole or not at all */
	if (errno == EWOULDBLOCK || errno == EAGAIN)
		return -EAGAIN;
	return errno == EPIPE || errno == ENOTCONN ? -ECONNRESET : -errno;
}

/* What a notification means for the set-up: 0 to go on, or why it failed. */
static int notification(struct iwx_conn_sctp *t, const uint8_t *buf, size_t len)
{
	union sctp_notification n;

	memset(&n, 0, sizeof(n));
	memcpy(&n, buf, len < sizeof(n) ? len : sizeof(n));
	if (len < sizeof(n.sn_header))
		return 0;
	switch (n.sn_header.sn_type) {
	case SCTP_ASSOC_CHANGE:
		switch (n.sn_assoc_change.sac_state) {
		case SCTP_COMM_UP:
			t->up = true;
			t->assoc_id = n.sn_assoc_change.sac_assoc_id;
			return 0;
		case SCTP_CANT_STR_ASSOC:
			return -ECONNREFUSED;
		default:
			/* COMM_LOST, SHUTDOWN_COMP, RESTART: the association we set up is gone */
			return -ECONNRESET;
		}
	case SCTP_ADAPTATION_INDICATION:
		t->indicated = true;
		t->peer_indication = n.sn_adaptation_event.sai_adaptation_ind;
		/* draft-otis-sctp-ddp §3.1; iwx requires DDP_TAG_PLACE (docs/ddp-over-sctp.md) */
		return t->peer_indication == IWX_SHIM_IND_TAG ? 0 : -EPROTONOSUPPORT;
	case SCTP_SHUTDOWN_EVENT:
		return -ECONNRESET;
	default:
		return 0;
	}
}

/*
 * Read the socket: notifications are handled, the first data message stops the reading.
 * Returns 1 with it in rx (*len bytes, *rcv, *flags), 0 when nothing is left to read,
 * or why the set-up failed.
 *
 * The peer announced an indication iff SCTP_ADAPTATION_INDICATION comes right behind
 * SCTP_COMM_UP: usrsctp queues both in the one call that brings the association up
 * (sctp_ulp_notify, SCTP_NOTIFY_ASSOC_UP). So anything else after COMM_UP, data or
 * another notification or an empty socket, means the peer announced none (§3.1).
 */
static int pull(struct iwx_conn_sctp *t, size_t *len, struct sctp_rcvinfo *rcv, int *flags)
{
	struct sockaddr_conn from;
	socklen_t fromlen, infolen;
	unsigned int infotype;
	bool was_up;
	ssize_t n;
	int err;

	for (int i = 0; i < DRAIN_MAX; i++) {
		/* recvv on an association still being set up fails with ENOTCONN: ask first */
		if (!(usrsctp_get_events(t->so) & SCTP_EVENT_READ))
			return t->up && !t->indicated ? -EPROTONOSUPPORT : 0;
		fromlen = sizeof(from);
		infolen = sizeof(*rcv);
		infotype = 0;
		*flags = 0;
		n = usrsctp_recvv(t->so, t->rx, sizeof(t->rx), (struct sockaddr *)&from, &fromlen,
				  rcv, &infolen, &infotype, flags);
		if (n < 0) {
			if (errno == EWOULDBLOCK || errno == EAGAIN)
				return t->up && !t->indicated ? -EPROTONOSUPPORT : 0;
			if (errno == ENOTCONN)
				return t->up ? -ECONNRESET : -ECONNREFUSED;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;	/* the peer shut the association down */
		if (*flags & MSG_NOTIFICATION) {
			was_up = t->up;
			err = notification(t, t->rx, n);
			if (err)
				return err;
			if (was_up && !t->indicated)
				return -EPROTONOSUPPORT;
			if (!(*flags & MSG_EOR)) {
				/* a notification longer than rx: none the set-up needs */
				drain(t);
				return -EIO;
			}
			continue;
		}
		if (!t->indicated)
			return -EPROTONOSUPPORT;
		if (infotype != SCTP_RECVV_RCVINFO)
			return -EIO;	/* iwx_sctp_socket asks for SCTP_RECVRCVINFO */
		*len = n;
		return 1;
	}
	return 0;
}

/* CONNECTING: the association is up and the peer announced DDP_TAG_PLACE. */
static int sctp_ready(struct iwx_conn *c)
{
	struct iwx_conn_sctp *t = sctp_of(c);
	struct sctp_rcvinfo rcv;
	size_t len = 0;
	int err, flags = 0;

	err = pull(t, &len, &rcv, &flags);
	if (err < 0)
		return err;
	/* Set-up 4: the Responder sends nothing before it has the Request */
	if (err == 1)
		return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
	return t->indicated ? 0 : -EAGAIN;
}

/*
 * The next data message, which must be a whole set-up chunk on stream 0 holding exactly
 * one frame, with M and C zero (docs/ddp-over-sctp.md Set-up 2). Decodes it into *p
 * (p->pd points into rx) and notes its TSN. 0, -EAGAIN, or -errno (-EPROTO with cause).
 */
static int sctp_recv(struct iwx_conn *c, bool want_reply, struct iwx_mpa_rr_params *p)
{
	struct iwx_conn_sctp *t = sctp_of(c);
	struct sctp_rcvinfo rcv;
	struct iwx_ddp_seg seg;
	size_t len = 0;
	int err, flags = 0;
	ssize_t r;

	err = pull(t, &len, &rcv, &flags);
	if (err <= 0)
		return err ? err : -EAGAIN;
	/* no end of record: longer than any set-up chunk */
	if (!(flags & MSG_EOR))
		return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
	err = iwx_shim_decode(t->rx, len, t->peer_indication, &seg, &c->cause);
	if (err < 0)
		return err;
	/* a DDP segment where the Request or Reply must be */
	if (err != IWX_SHIM_SETUP || rcv.rcv_sid != IWX_SHIM_STREAM_SETUP)
		return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
	r = iwx_mpa_rr_decode(seg.payload, seg.len, want_reply, p);
	if (r <= 0 || (size_t)r != seg.len)
		return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
	/* no markers in chunks, and SCTP's CRC32c instead of MPA's */
	if (p->markers || p->crc)
		return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
	t->peer_tsn = rcv.rcv_tsn;
	return 0;
}

/* REQUEST_IN. Set-up 4: the Initiator sends nothing before the Reply; a second set-up chunk fails. */
static int sctp_idle(struct iwx_conn *c)
{
	struct sctp_rcvinfo rcv;
	size_t len = 0;
	int err, flags = 0;

	err = pull(sctp_of(c), &len, &rcv, &flags);
	return err == 1 ? iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR) : err;
}

/*
 * The path MTU of a path that carries less than IWX_SCTP_PATH_MTU (SCTP in UDP over
 * IPv6), for the association before any chunk larger than a set-up chunk goes.
 */
static int path_mtu(struct iwx_conn_sctp *t)
{
	struct sctp_paddrparams pp = { .spp_assoc_id = t->assoc_id, .spp_flags = SPP_PMTUD_DISABLE };
	struct sockaddr *addrs = NULL;
	const struct iwx_sctp_path *path;

	if (usrsctp_getpaddrs(t->so, t->assoc_id, &addrs) < 1)
		return -ENOTCONN;
	path = iwx_sctp_path_of(((const struct sockaddr_conn *)addrs)->sconn_addr);
	usrsctp_freepaddrs(addrs);
	if (!path || !path->mtu)
		return 0;
	pp.spp_pathmtu = path->mtu;
	/* AF_CONN with no address: every path of the association */
	((struct sockaddr_conn *)&pp.spp_address)->sconn_family = AF_CONN;
	return usrsctp_setsockopt(t->so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp)) ?
	       -errno : 0;
}

static int sctp_established(struct iwx_conn *c)
{
	struct iwx_conn_sctp *t = sctp_of(c);
	struct sctp_assoc_value av = { .assoc_id = t->assoc_id };
	socklen_t len = sizeof(av);
	int err = path_mtu(t);

	if (err)
		return err;
	if (usrsctp_getsockopt(t->so, IPPROTO_SCTP, SCTP_MAXSEG, &av, &len))
		return -errno;
	c->emss = av.assoc_value;
	return 0;
}

static void sctp_reject(struct iwx_conn *c)
{
	sctp_send(c);
}

/* Set-up 3: a reject or a failure shuts the association down gracefully where it can. */
static void sctp_finish(struct iwx_conn *c)
{
	struct iwx_conn_sctp *t = sctp_of(c);

	if (!t->so)
		return;
	drain(t);
	usrsctp_close(t->so);
	t->so = NULL;
}

static void sctp_close(struct iwx_conn *c)
{
	struct iwx_conn_sctp *t = sctp_of(c);

	if (t->so)
		usrsctp_close(t->so);
	t->so = NULL;
}

static struct iwx_llp *sctp_llp_new(struct iwx_conn *c)
{
	struct iwx_conn_sctp *t = sctp_of(c);
	struct socket *so = t->so;

	t->so = NULL;	/* the lower layer's, closed with it */
	return iwx_llp_sctp_new(so, c->emss, t->peer_tsn);
}

_Static_assert(IWX_SHIM_SETUP_HDR_LEN <= IWX_CONN_HEADROOM_MAX, "the set-up chunk's header fits a set-up's out");

static const struct iwx_conn_ops sctp_ops = {
	.name = "SCTP",
	.headroom = IWX_SHIM_SETUP_HDR_LEN,
	.fixed_p2p = true,
	.ready = sctp_ready,
	.send = sctp_send,
	.recv = sctp_recv,
	.idle = sctp_idle,
	.established = sctp_established,
	.reject = sctp_reject,
	.finish = sctp_finish,
	.close = sctp_close,
	.llp_new = sctp_llp_new,
};

struct socket *iwx_conn_sctp_listen(uint16_t port, int backlog)
{
	struct sockaddr_conn sc = {
		.sconn_family = AF_CONN,
		.sconn_port = htons(port),
		.sconn_addr = NULL,	/* any path */
	};
	struct socket *so = iwx_sctp_socket();
	int err;

	if (!so)
		return NULL;
	if (usrsctp_bind(so, (struct sockaddr *)&sc, sizeof(sc)) || usrsctp_listen(so, backlog)) {
		err = errno;
		usrsctp_close(so);
		errno = err;
		return NULL;
	}
	return so;
}

/* Both sides: the options, and no association yet. */
static int sctp_init(struct iwx_conn_sctp *t, const struct iwx_conn_opts *o, bool initiator)
{
	memset(t, 0, sizeof(*t));
	return iwx_conn_init(&t->conn, &sctp_ops, o, initiator);
}

int iwx_conn_sctp_connect(struct iwx_conn_sctp *t, struct iwx_sctp_path *path, uint16_t port,
			  const struct iwx_conn_opts *o)
{
	struct iwx_conn *c = &t->conn;
	struct sockaddr_conn sc = {
		.sconn_family = AF_CONN,
		.sconn_port = 0,
		.sconn_addr = path->token,
	};
	int err = sctp_init(t, o, true);

	if (err)
		return iwx_conn_fail(c, err);
	t->so = iwx_sctp_socket();
	if (!t->so)
		return iwx_conn_fail(c, -errno);
	/*
	 * Bound to the path, so that the association uses it alone; on a port of its own:
	 * port itself may be taken by a listener of the same stack (EADDRINUSE).
	 */
	if (usrsctp_bind(t->so, (struct sockaddr *)&sc, sizeof(sc)))
		return iwx_conn_fail(c, -errno);
	sc.sconn_port = htons(port);
	if (usrsctp_connect(t->so, (struct sockaddr *)&sc, sizeof(sc)) && errno != EINPROGRESS)
		return iwx_conn_fail(c, -errno);
	iwx_conn_enter(c, IWX_CONN_CONNECTING);
	return 0;
}

int iwx_conn_sctp_accept(struct iwx_conn_sctp *t, struct socket *listener, const struct iwx_conn_opts *o)
{
	struct iwx_conn *c = &t->conn;
	struct sockaddr_conn sc;
	socklen_t len = sizeof(sc);

	sctp_init(t, o, false);
	t->so = usrsctp_accept(listener, (struct sockaddr *)&sc, &len);
	if (!t->so)
		return iwx_conn_fail(c, errno == EWOULDBLOCK ? -EAGAIN : -errno);
	if (usrsctp_set_non_blocking(t->so, 1))
		return iwx_conn_fail(c, -errno);
	/* COMM_UP and the indication wait in the socket: the association is up */
	iwx_conn_enter(c, IWX_CONN_WAIT_REQUEST);
	return 0;
}
