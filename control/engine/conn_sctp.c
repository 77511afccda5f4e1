// SPDX-License-Identifier: MIT
/*
 * Establishing an iWARP association over SCTP: the association with the adaptation
 * indication checked, then the MPA Request and Reply in set-up chunks (docs/ddp-over-sctp.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <usrsctp.h>

#include "proto/ddp_shim.h"
#include "proto/mpa.h"

#include "sctp.h"
#include "conn_sctp.h"
#include "util/clock.h"

#define DEFAULT_TIMEOUT_MS	10000
#define DRAIN_MAX		64	/* reads before a close; what is left makes it an ABORT */

/* docs/ddp-over-sctp.md Set-up 2, 4: what both ends always agree, whatever else was asked */
static struct iwx_mpa_local sctp_local(const struct iwx_mpa_local *l)
{
	return (struct iwx_mpa_local){
		.rev = IWX_MPA_REV2, .ird = l->ird, .ord = l->ord,
		.p2p = true, .rtr = IWX_RTR_WRITE,
	};
}

static void conn_init(struct iwx_sctp_conn *c, const struct iwx_conn_opts *o, bool initiator)
{
	memset(c, 0, sizeof(*c));
	c->initiator = initiator;
	c->state = IWX_CONN_FAILED;
	c->opts = *o;
	c->opts.local = sctp_local(&o->local);
	c->opts.pd = NULL;
	c->opts.pd_len = 0;
	if (c->opts.timeout_ms <= 0)
		c->opts.timeout_ms = DEFAULT_TIMEOUT_MS;
}

/* Enter a state that waits on the peer: each wait gets its own deadline. */
static void enter(struct iwx_sctp_conn *c, enum iwx_conn_state s)
{
	c->state = s;
	c->deadline_ms = iwx_now_ms() + (uint64_t)c->opts.timeout_ms;
}

/*
 * Read and drop what the socket holds: usrsctp closes a socket with unread data
 * (notifications too) by an ABORT, which would also discard what is still queued to
 * send (a Reply with R). Bounded: a peer that floods gets its ABORT.
 */
static void drain(struct iwx_sctp_conn *c)
{
	for (int i = 0; i < DRAIN_MAX && (usrsctp_get_events(c->so) & SCTP_EVENT_READ); i++) {
		struct sctp_rcvinfo rcv;
		socklen_t infolen = sizeof(rcv);
		unsigned int infotype = 0;
		int flags = 0;

		if (usrsctp_recvv(c->so, c->rx, sizeof(c->rx), NULL, NULL, &rcv, &infolen,
				  &infotype, &flags) <= 0)
			break;
	}
}

/* Enter a final state (FAILED or REJECTED): the association is shut down, the socket closed. */
static void finish(struct iwx_sctp_conn *c, enum iwx_conn_state s, int err)
{
	if (c->so) {
		drain(c);
		usrsctp_close(c->so);
		c->so = NULL;
	}
	c->state = s;
	c->error = err;
}

/* The set-up chunk for the frame p: shim header, then the MPA frame, in buf. */
static int encode_setup(struct iwx_sctp_conn *c, const struct iwx_mpa_rr_params *p)
{
	size_t h = iwx_shim_setup_hdr(c->buf);
	ssize_t n = iwx_mpa_rr_encode(c->buf + h, sizeof(c->buf) - h, p);

	if (n < 0)
		return n == -ENOSPC ? -EINVAL : (int)n;
	c->buf_len = h + n;
	return 0;
}

/* Send the set-up chunk in buf: one unordered message on stream 0. 0, -EAGAIN or -errno. */
static int send_setup(struct iwx_sctp_conn *c)
{
	struct sctp_sndinfo si = {
		.snd_sid = IWX_SHIM_STREAM_SETUP,
		/* draft-otis-sctp-ddp §2.2: U on every chunk; B and E as SCTP never fragments */
		.snd_flags = SCTP_UNORDERED,
		.snd_ppid = htonl(IWX_SHIM_PPI),
		.snd_assoc_id = c->assoc_id,
	};
	ssize_t n;

	n = usrsctp_sendv(c->so, c->buf, c->buf_len, NULL, 0, &si, sizeof(si), SCTP_SENDV_SNDINFO, 0);
	if (n == c->buf_len)
		return 0;
	if (n >= 0)
		return -EIO;	/* a message is taken whole or not at all */
	if (errno == EWOULDBLOCK || errno == EAGAIN)
		return -EAGAIN;
	return errno == EPIPE || errno == ENOTCONN ? -ECONNRESET : -errno;
}

/* What a notification means for the set-up: 0 to go on, or why it failed. */
static int notification(struct iwx_sctp_conn *c, const uint8_t *buf, size_t len)
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
			c->up = true;
			c->assoc_id = n.sn_assoc_change.sac_assoc_id;
			return 0;
		case SCTP_CANT_STR_ASSOC:
			return -ECONNREFUSED;
		default:
			/* COMM_LOST, SHUTDOWN_COMP, RESTART: the association we set up is gone */
			return -ECONNRESET;
		}
	case SCTP_ADAPTATION_INDICATION:
		c->indicated = true;
		c->peer_indication = n.sn_adaptation_event.sai_adaptation_ind;
		/* draft-otis-sctp-ddp §3.1; iwx requires DDP_TAG_PLACE (docs/ddp-over-sctp.md) */
		return c->peer_indication == IWX_SHIM_IND_TAG ? 0 : -EPROTONOSUPPORT;
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
static int pull(struct iwx_sctp_conn *c, size_t *len, struct sctp_rcvinfo *rcv, int *flags)
{
	struct sockaddr_conn from;
	socklen_t fromlen, infolen;
	unsigned int infotype;
	bool was_up;
	ssize_t n;
	int err;

	for (int i = 0; i < DRAIN_MAX; i++) {
		/* recvv on an association still being set up fails with ENOTCONN: ask first */
		if (!(usrsctp_get_events(c->so) & SCTP_EVENT_READ))
			return c->up && !c->indicated ? -EPROTONOSUPPORT : 0;
		fromlen = sizeof(from);
		infolen = sizeof(*rcv);
		infotype = 0;
		*flags = 0;
		n = usrsctp_recvv(c->so, c->rx, sizeof(c->rx), (struct sockaddr *)&from, &fromlen,
				  rcv, &infolen, &infotype, flags);
		if (n < 0) {
			if (errno == EWOULDBLOCK || errno == EAGAIN)
				return c->up && !c->indicated ? -EPROTONOSUPPORT : 0;
			if (errno == ENOTCONN)
				return c->up ? -ECONNRESET : -ECONNREFUSED;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;	/* the peer shut the association down */
		if (*flags & MSG_NOTIFICATION) {
			was_up = c->up;
			err = notification(c, c->rx, n);
			if (err)
				return err;
			if (was_up && !c->indicated)
				return -EPROTONOSUPPORT;
			if (!(*flags & MSG_EOR)) {
				/* a notification longer than rx: none the set-up needs */
				drain(c);
				return -EIO;
			}
			continue;
		}
		if (!c->indicated)
			return -EPROTONOSUPPORT;
		if (infotype != SCTP_RECVV_RCVINFO)
			return -EIO;	/* iwx_sctp_socket asks for SCTP_RECVRCVINFO */
		*len = n;
		return 1;
	}
	return 0;
}

static int bad_frame(struct iwx_sctp_conn *c, uint8_t ecode)
{
	c->cause = IWX_CAUSE_MPA(ecode);
	return -EPROTO;
}

/*
 * The data message in rx (len bytes), which must be a whole set-up chunk on stream 0
 * holding exactly one frame, with M and C zero (docs/ddp-over-sctp.md Set-up 2). Decodes
 * it into *p (p->pd points into rx) and notes its TSN. 0 or -EPROTO with cause.
 */
static int take_setup(struct iwx_sctp_conn *c, size_t len, const struct sctp_rcvinfo *rcv,
		      int flags, bool want_reply, struct iwx_mpa_rr_params *p)
{
	struct iwx_ddp_seg seg;
	ssize_t r;
	int err;

	/* no end of record: longer than any set-up chunk */
	if (!(flags & MSG_EOR))
		return bad_frame(c, IWX_MPA_EC_INVALID_RR);
	err = iwx_shim_decode(c->rx, len, c->peer_indication, &seg, &c->cause);
	if (err < 0)
		return err;
	/* a DDP segment where the Request or Reply must be */
	if (err != IWX_SHIM_SETUP || rcv->rcv_sid != IWX_SHIM_STREAM_SETUP)
		return bad_frame(c, IWX_MPA_EC_INVALID_RR);
	r = iwx_mpa_rr_decode(seg.payload, seg.len, want_reply, p);
	if (r <= 0 || (size_t)r != seg.len)
		return bad_frame(c, IWX_MPA_EC_INVALID_RR);
	/* no markers in chunks, and SCTP's CRC32c instead of MPA's */
	if (p->markers || p->crc)
		return bad_frame(c, IWX_MPA_EC_INVALID_RR);
	c->peer_tsn = rcv->rcv_tsn;
	return 0;
}

static void keep_peer_pd(struct iwx_sctp_conn *c, struct iwx_mpa_rr_params *p)
{
	memcpy(c->peer_pd, p->pd, p->pd_len);
	c->peer_pd_len = p->pd_len;
	p->pd = c->peer_pd;
}

/*
 * The path MTU of a path that carries less than IWX_SCTP_PATH_MTU (SCTP in UDP over
 * IPv6), for the association before any chunk larger than a set-up chunk goes.
 */
static int path_mtu(struct iwx_sctp_conn *c)
{
	struct sctp_paddrparams pp = { .spp_assoc_id = c->assoc_id, .spp_flags = SPP_PMTUD_DISABLE };
	struct sockaddr *addrs = NULL;
	const struct iwx_sctp_path *path;

	if (usrsctp_getpaddrs(c->so, c->assoc_id, &addrs) < 1)
		return -ENOTCONN;
	path = iwx_sctp_path_of(((const struct sockaddr_conn *)addrs)->sconn_addr);
	usrsctp_freepaddrs(addrs);
	if (!path || !path->mtu)
		return 0;
	pp.spp_pathmtu = path->mtu;
	/* AF_CONN with no address: every path of the association */
	((struct sockaddr_conn *)&pp.spp_address)->sconn_family = AF_CONN;
	return usrsctp_setsockopt(c->so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp)) ?
	       -errno : 0;
}

static int established(struct iwx_sctp_conn *c)
{
	struct sctp_assoc_value av = { .assoc_id = c->assoc_id };
	socklen_t len = sizeof(av);
	int err = path_mtu(c);

	if (err)
		return err;
	if (usrsctp_getsockopt(c->so, IPPROTO_SCTP, SCTP_MAXSEG, &av, &len))
		return -errno;
	c->maxseg = av.assoc_value;
	c->state = IWX_CONN_ESTABLISHED;
	return 0;
}

/* Responder, bad Request: best effort, a Reply with R sent once without waiting. */
static void reject_invalid(struct iwx_sctp_conn *c)
{
	struct iwx_mpa_rr_params rep = { .reply = true, .reject = true, .rev = IWX_MPA_REV2 };

	if (encode_setup(c, &rep) == 0)
		send_setup(c);
}

/* Initiator: the Reply is in rx. 0 with the state final, or -errno. */
static int take_reply(struct iwx_sctp_conn *c, size_t len, const struct sctp_rcvinfo *rcv,
		      int flags)
{
	struct iwx_mpa_rr_params rep;
	int err;

	err = take_setup(c, len, rcv, flags, true, &rep);
	if (err)
		return err;
	keep_peer_pd(c, &rep);
	err = iwx_mpa_setup_accept(&c->opts.local, &c->request, &rep, &c->agreed, &c->cause);
	if (err == -ECONNREFUSED) {
		/* Set-up 3: the Responder shuts the association down; so does this side */
		finish(c, IWX_CONN_REJECTED, err);
		return 0;
	}
	if (err)
		return err;
	if (rep.rev != IWX_MPA_REV2 || !rep.enhanced)
		return bad_frame(c, IWX_MPA_EC_INVALID_RR);
	if (c->agreed.rtr != IWX_RTR_WRITE)
		return bad_frame(c, IWX_MPA_EC_NO_MATCHING_RTR);
	return established(c);
}

/* Responder: the Request is in rx. 0 in REQUEST_IN, or -EPROTO. */
static int take_request(struct iwx_sctp_conn *c, size_t len, const struct sctp_rcvinfo *rcv,
			int flags)
{
	int err = take_setup(c, len, rcv, flags, false, &c->request);

	if (err)
		return err;
	keep_peer_pd(c, &c->request);
	/* RFC 6581 §5, §9: revision 2 with IRD/ORD; the RTR is settled by the answer */
	if (c->request.rev != IWX_MPA_REV2 || !c->request.enhanced)
		return bad_frame(c, IWX_MPA_EC_INVALID_RR);
	c->state = IWX_CONN_REQUEST_IN;
	return 0;
}

/* One move: 1 when it entered a state with work to try at once, else 0, -EAGAIN or -errno. */
static int step_once(struct iwx_sctp_conn *c)
{
	struct sctp_rcvinfo rcv;
	size_t len = 0;
	int err, flags = 0;

	switch (c->state) {
	case IWX_CONN_CONNECTING:
		err = pull(c, &len, &rcv, &flags);
		if (err < 0)
			return err;
		/* Set-up 4: the Responder sends nothing before it has the Request */
		if (err == 1)
			return bad_frame(c, IWX_MPA_EC_INVALID_RR);
		if (!c->indicated)
			return -EAGAIN;
		enter(c, IWX_CONN_SEND_REQUEST);
		return 1;
	case IWX_CONN_SEND_REQUEST:
		err = send_setup(c);
		if (err)
			return err;
		enter(c, IWX_CONN_WAIT_REPLY);
		return 1;
	case IWX_CONN_WAIT_REPLY:
		err = pull(c, &len, &rcv, &flags);
		if (err <= 0)
			return err ? err : -EAGAIN;
		return take_reply(c, len, &rcv, flags);
	case IWX_CONN_WAIT_REQUEST:
		err = pull(c, &len, &rcv, &flags);
		if (err <= 0)
			return err ? err : -EAGAIN;
		return take_request(c, len, &rcv, flags);
	case IWX_CONN_REQUEST_IN:
		/* Set-up 4: the Initiator sends nothing before the Reply; a second set-up chunk fails */
		err = pull(c, &len, &rcv, &flags);
		if (err == 1)
			return bad_frame(c, IWX_MPA_EC_INVALID_RR);
		return err;
	case IWX_CONN_SEND_REPLY:
		err = send_setup(c);
		if (err)
			return err;
		if (c->buf[IWX_SHIM_SETUP_HDR_LEN + offsetof(struct iwx_mpa_rr, flags)] &
		    IWX_MPA_FLAG_REJECT) {
			/* Set-up 3: a reject, then a graceful shutdown */
			finish(c, IWX_CONN_REJECTED, c->error);
			return 0;
		}
		return established(c);
	default:
		return 0;
	}
}

int iwx_sctp_conn_step(struct iwx_sctp_conn *c, uint64_t now_ms)
{
	bool waits_on_peer;
	int err;

	while ((err = step_once(c)) == 1)
		;
	waits_on_peer = c->state != IWX_CONN_REQUEST_IN;
	if (err == -EAGAIN && waits_on_peer && now_ms >= c->deadline_ms)
		err = -ETIMEDOUT;
	if (err == -EAGAIN && waits_on_peer)
		return -EAGAIN;
	if (err && err != -EAGAIN) {
		if (err == -EPROTO && !c->initiator &&
		    (c->state == IWX_CONN_WAIT_REQUEST || c->state == IWX_CONN_REQUEST_IN))
			reject_invalid(c);
		finish(c, IWX_CONN_FAILED, err);
	}
	return 0;
}

struct socket *iwx_sctp_listen(uint16_t port, int backlog)
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

int iwx_sctp_conn_connect(struct iwx_sctp_conn *c, struct iwx_sctp_path *path, uint16_t port,
			  const struct iwx_conn_opts *o)
{
	struct sockaddr_conn sc = {
		.sconn_family = AF_CONN,
		.sconn_port = htons(port),
		.sconn_addr = path->token,
	};
	int err;

	conn_init(c, o, true);
	/* encode the Request now: o->pd need not outlive this call */
	iwx_mpa_setup_request(&c->opts.local, o->pd, o->pd_len, &c->request);
	err = encode_setup(c, &c->request);
	if (err)
		goto out;
	c->request.pd = NULL;
	c->request.pd_len = 0;

	c->so = iwx_sctp_socket();
	if (!c->so) {
		err = -errno;
		goto out;
	}
	/*
	 * Bound to the path, so that the association uses it alone; on a port of its own:
	 * port itself may be taken by a listener of the same stack (EADDRINUSE).
	 */
	sc.sconn_port = 0;
	err = usrsctp_bind(c->so, (struct sockaddr *)&sc, sizeof(sc));
	sc.sconn_port = htons(port);
	if (err) {
		err = -errno;
		goto out;
	}
	if (usrsctp_connect(c->so, (struct sockaddr *)&sc, sizeof(sc)) && errno != EINPROGRESS) {
		err = -errno;
		goto out;
	}
	enter(c, IWX_CONN_CONNECTING);
	return 0;
out:
	finish(c, IWX_CONN_FAILED, err);
	return err;
}

int iwx_sctp_conn_accept(struct iwx_sctp_conn *c, struct socket *listener,
			 const struct iwx_conn_opts *o)
{
	struct sockaddr_conn sc;
	socklen_t len = sizeof(sc);
	int err;

	conn_init(c, o, false);
	c->so = usrsctp_accept(listener, (struct sockaddr *)&sc, &len);
	if (!c->so) {
		err = errno == EWOULDBLOCK ? -EAGAIN : -errno;
		goto out;
	}
	if (usrsctp_set_non_blocking(c->so, 1)) {
		err = -errno;
		goto out;
	}
	/* COMM_UP and the indication wait in the socket: the association is up */
	enter(c, IWX_CONN_WAIT_REQUEST);
	return 0;
out:
	finish(c, IWX_CONN_FAILED, err);
	return err;
}

int iwx_sctp_conn_answer(struct iwx_sctp_conn *c, const struct iwx_conn_opts *o, bool reject)
{
	struct iwx_mpa_local l = sctp_local(&o->local);
	struct iwx_mpa_rr_params rep;
	struct iwx_mpa_agreed agreed;
	struct iwx_term_cause cause = { 0 };
	int ret, err;

	if (c->state != IWX_CONN_REQUEST_IN)
		return -EINVAL;
	/* what came while the application decided: the association may be gone */
	iwx_sctp_conn_step(c, iwx_now_ms());
	if (c->state != IWX_CONN_REQUEST_IN)
		return c->error;
	ret = iwx_mpa_setup_reply(&l, &c->request, o->pd, o->pd_len, reject, &rep, &agreed, &cause);
	if (!ret && !reject && !c->request.p2p) {
		/* RFC 6581 §6: peer-to-peer is what both ends always agree */
		cause = IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR);
		ret = -EPROTO;
		iwx_mpa_setup_reply(&l, &c->request, o->pd, o->pd_len, true, &rep, &agreed, &cause);
	}
	err = encode_setup(c, &rep);
	if (err)
		return err;
	c->opts = *o;
	c->opts.local = l;
	if (c->opts.timeout_ms <= 0)
		c->opts.timeout_ms = DEFAULT_TIMEOUT_MS;
	c->opts.pd = NULL;
	c->opts.pd_len = 0;
	if (!rep.reject)
		c->agreed = agreed;
	if (ret) {
		/* no matching RTR type (RFC 6581 §6): the Reply is a reject */
		c->cause = cause;
		c->error = ret;
	}
	enter(c, IWX_CONN_SEND_REPLY);
	iwx_sctp_conn_step(c, iwx_now_ms());
	if (c->state == IWX_CONN_FAILED)
		return c->error;
	return ret;
}

void iwx_sctp_conn_close(struct iwx_sctp_conn *c)
{
	if (c->so)
		usrsctp_close(c->so);
	c->so = NULL;
}
