// SPDX-License-Identifier: MIT
/* A queue pair's lower layer: the SCTP DDP adaptation on a usrsctp association. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "proto/ddp_shim.h"

#include "llp_sctp.h"
#include "qp.h"
#include "sctp_place.h"
#include "util/container_of.h"

#define TX_BUDGET	128	/* chunks sent per transmit call, so receive is not starved */
#define RX_BUDGET	256	/* chunks read per receive call */
#define WINDOW		8192	/* TSNs tracked past the cumulative one: far beyond a receive window */
#define PLACED_SLOTS	1024	/* chunks placed from their packet and not yet read, by TSN */
/* usrsctp's netinet/sctp.h, not in usrsctp.h: an association's Verification Tags */
#define SCTP_GET_NONCE_VALUES	0x00001105

/* A message's last chunk, placed, waiting for the cumulative TSN (R5). */
struct held {
	uint32_t		tsn;
	struct iwx_ddp_seg	seg;
	uint8_t			*dst;		/* where place() put its payload, or NULL */
	uint8_t			*copy;		/* else its payload, for the queue pair to take */
};

/* A chunk whose payload its packet's placer put in memory (sctp_place.h). */
struct placed {
	uint32_t		tsn;
	uint32_t		len;		/* 0: a free slot */
};

struct llp_sctp {
	struct iwx_llp		llp;
	struct iwx_sctp_placer	placer;
	struct socket		*so;
	uint32_t		maxseg;

	uint8_t			*tx;		/* a chunk built, waiting for room in the socket */
	size_t			tx_len;
	uint16_t		tx_sid;

	uint8_t			*rx;		/* one chunk's user data, and a byte to see more */
	uint32_t		cum;		/* every TSN up to this one has arrived */
	uint64_t		seen[WINDOW / 64];	/* TSNs past cum that have, by TSN mod WINDOW */
	/*
	 * What usrsctp may hold and we have not read: TSNs past cum that a chunk has carried
	 * into the stack since the placer started (by TSN mod WINDOW), every TSN up to far,
	 * and before the first time we read all there was (drained), any.
	 */
	uint64_t		given[WINDOW / 64];
	uint32_t		far;
	bool			drained;
	struct held		*held;		/* in TSN order */
	uint32_t		n_held, cap_held;
	struct placed		*placed;	/* PLACED_SLOTS by TSN, when placing from packets */
};

static struct llp_sctp *sctp_of(struct iwx_llp *llp)
{
	return (struct llp_sctp *)llp;
}

/* ---------------------------------------------------------------- transmit */

static void sctp_transmit(struct iwx_llp *llp, bool *want_write)
{
	struct llp_sctp *t = sctp_of(llp);

	*want_write = false;
	for (int budget = TX_BUDGET; budget > 0; budget--) {
		if (!t->tx_len) {
			struct iwx_llp_seg s;
			size_t hl;

			if (!engine_qp_next_segment(llp->qp, &s, UINT32_MAX))
				return;
			hl = iwx_shim_hdr_encode(t->tx, s.msg, s.off, s.last);
			/* usrsctp_sendv takes one buffer: the chunk is a copy, the message let go */
			iwx_llp_seg_copy(&s, t->tx + hl);
			if (s.last)
				engine_qp_sent(llp->qp);
			t->tx_len = hl + s.len;
			t->tx_sid = iwx_shim_stream(s.msg->opcode);
			llp->stats->tx_fpdus++;
		}
		/* draft-otis-sctp-ddp §2.2: every chunk unordered, one message, never fragmented */
		struct sctp_sndinfo snd = { .snd_sid = t->tx_sid, .snd_flags = SCTP_UNORDERED,
					    .snd_ppid = htonl(IWX_SHIM_PPI) };

		if (usrsctp_sendv(t->so, t->tx, t->tx_len, NULL, 0, &snd, sizeof(snd),
				  SCTP_SENDV_SNDINFO, 0) < 0) {
			if (errno == EWOULDBLOCK || errno == EAGAIN || errno == EINTR) {
				*want_write = true;
				return;
			}
			engine_qp_lost(llp->qp, true);
			return;
		}
		llp->stats->tx_bytes += t->tx_len;
		t->tx_len = 0;
	}
	*want_write = true;
}

static bool sctp_tx_idle(const struct iwx_llp *llp)
{
	return !((const struct llp_sctp *)llp)->tx_len;
}

/* ----------------------------------------------------------------- receive */

/* A bitmap of WINDOW TSNs past cum, by TSN mod WINDOW. */
static bool bit(const uint64_t *map, uint32_t tsn)
{
	return map[tsn % WINDOW / 64] >> (tsn % 64) & 1;
}

static void mark(uint64_t *map, uint32_t tsn, bool on)
{
	uint64_t b = 1ull << (tsn % 64);

	map[tsn % WINDOW / 64] = on ? map[tsn % WINDOW / 64] | b : map[tsn % WINDOW / 64] & ~b;
}

static bool within(const struct llp_sctp *t, uint32_t tsn)
{
	return (int32_t)(tsn - t->cum) > 0 && tsn - t->cum <= WINDOW;
}

/* A TSN the peer may still deliver: past cum, within the window, not seen yet. */
static bool live(const struct llp_sctp *t, uint32_t tsn)
{
	return within(t, tsn) && !bit(t->seen, tsn);
}

/*
 * A chunk of tsn goes into the stack: true if usrsctp cannot hold tsn yet, because no
 * chunk has carried it there before. Were one in usrsctp's queue, unread, usrsctp would
 * drop this one as a duplicate (RFC 4960 §6.2) while its payload, placed, overwrote
 * the first's. usrsctp does not show its own record of TSNs (its mapping arrays are
 * private), so we keep one of everything it is given: every chunk passes the placer,
 * and usrsctp takes DATA only under the Verification Tag the placer checks (§8.5).
 */
static bool first_given(struct llp_sctp *t, uint32_t tsn)
{
	bool first;

	if (!within(t, tsn)) {
		if ((int32_t)(tsn - t->cum) > 0 && (int32_t)(tsn - t->far) > 0)
			t->far = tsn;	/* beyond the bitmap: no longer first when it comes within */
		return false;
	}
	first = !bit(t->given, tsn) && (int32_t)(tsn - t->far) > 0;
	mark(t->given, tsn, true);
	return first;
}

/*
 * The placer's: a tagged chunk in a packet that has just arrived (sctp_place.h). Its
 * payload goes to memory if the chunk is new, its slot free and the same checks as
 * chunk_in's pass; anything else is left whole for chunk_in, which reports the errors.
 */
static size_t place_early(struct iwx_sctp_placer *pl, uint32_t tsn, uint16_t sid,
			  const uint8_t *data, size_t len)
{
	struct llp_sctp *t = container_of(pl, struct llp_sctp, placer);
	struct placed *slot = &t->placed[tsn % PLACED_SLOTS];
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;
	uint8_t *dst;

	if (!first_given(t, tsn) || !data || !t->drained || sid != IWX_SHIM_STREAM_TAGGED ||
	    engine_qp_get_state(t->llp.qp) != ENGINE_QP_RTS || bit(t->seen, tsn) ||
	    (slot->len && slot->tsn != tsn && live(t, slot->tsn)) ||
	    iwx_shim_decode(data, len, IWX_SHIM_IND_TAG, &seg, &cause) || !seg.tagged ||
	    !seg.len || engine_qp_tagged_target(t->llp.qp, &seg, &dst, &cause))
		return 0;
	memcpy(dst, seg.payload, seg.len);	/* draft-otis-sctp-ddp §3.2.1 R3, from the packet */
	*slot = (struct placed){ .tsn = tsn, .len = seg.len };
	return seg.len;
}

/* Keep a message's last chunk until the cumulative TSN covers it. 0 or -ENOMEM. */
static int hold(struct llp_sctp *t, uint32_t tsn, const struct iwx_ddp_seg *seg, uint8_t *dst)
{
	struct held h = { .tsn = tsn, .seg = *seg, .dst = dst };
	uint32_t i;

	if (t->n_held == t->cap_held) {
		uint32_t cap = t->cap_held ? 2 * t->cap_held : 16;
		struct held *v = realloc(t->held, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->held = v;
		t->cap_held = cap;
	}
	if (!dst && seg->len) {
		h.copy = malloc(seg->len);
		if (!h.copy)
			return -ENOMEM;
		memcpy(h.copy, seg->payload, seg->len);
	}
	/* RFC 1982 serial arithmetic: TSNs past cum, in order */
	for (i = t->n_held; i > 0 && (int32_t)(t->held[i - 1].tsn - tsn) > 0; i--)
		;
	memmove(&t->held[i + 1], &t->held[i], (t->n_held - i) * sizeof(*t->held));
	t->held[i] = h;
	t->n_held++;
	return 0;
}

/*
 * Move the cumulative TSN over what has arrived, and let the held chunks it now covers
 * act, in TSN order: everything sent before each of them is placed (docs/ddp-over-sctp.md).
 */
static void advance(struct llp_sctp *t)
{
	uint32_t done = 0;

	while (bit(t->seen, t->cum + 1)) {
		mark(t->seen, t->cum + 1, false);
		mark(t->given, t->cum + 1, false);
		t->cum++;
	}
	if ((int32_t)(t->far - t->cum) < 0)
		t->far = t->cum;	/* never so far behind that serial arithmetic turns */
	while (done < t->n_held && (int32_t)(t->held[done].tsn - t->cum) <= 0) {
		struct held *h = &t->held[done++];

		if (engine_qp_get_state(t->llp.qp) == ENGINE_QP_RTS) {
			h->seg.payload = h->dst ? h->dst : h->copy;
			engine_qp_placing(t->llp.qp, h->dst, h->seg.len);
			engine_qp_take(t->llp.qp, &h->seg);
		}
		free(h->copy);
	}
	if (!done)
		return;
	memmove(t->held, t->held + done, (t->n_held - done) * sizeof(*t->held));
	t->n_held -= done;
}

/* One chunk's user data with its TSN and stream: place it, hold it or take it. */
static void chunk_in(struct llp_sctp *t, const uint8_t *data, size_t len, uint32_t tsn,
		     uint16_t sid)
{
	struct engine_qp *qp = t->llp.qp;
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;
	uint8_t *dst = NULL;
	uint32_t early = 0;	/* the payload the placer put in memory, the chunk shrunk */
	int r;

	if (t->placed && t->placed[tsn % PLACED_SLOTS].len &&
	    t->placed[tsn % PLACED_SLOTS].tsn == tsn) {
		early = t->placed[tsn % PLACED_SLOTS].len;
		t->placed[tsn % PLACED_SLOTS].len = 0;
	}
	if (!live(t, tsn)) {
		/* SCTP delivers each TSN once: a peer beyond any window we allow */
		engine_qp_fail(qp, IWX_CAUSE_LOCAL_CATASTROPHIC, NULL);
		return;
	}
	mark(t->seen, tsn, true);
	r = iwx_shim_decode(data, len, IWX_SHIM_IND_TAG, &seg, &cause);
	if (r == IWX_SHIM_SETUP || (!r && sid != iwx_shim_stream(seg.opcode))) {
		/* set-up is over; a chunk on another stream than its opcode's is not ours */
		r = -EPROTO;
		cause = IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED);
	}
	if (!r && early && seg.tagged && !seg.len) {
		seg.len = early;	/* checked again below: the STag may have gone since */
		t->llp.stats->fast_fpdus++;
		t->llp.stats->fast_bytes += early;
	} else {
		early = 0;
	}
	if (!r && engine_qp_place(qp, &seg, &dst, &cause))
		r = -EPROTO;
	if (r) {
		/* errors of the adaptation itself copy no DDP header (RFC 5040 Figure 10) */
		engine_qp_fail(qp, cause, cause.layer == IWX_LAYER_LLP ? NULL : &seg);
		return;
	}
	if (early)
		seg.payload = dst;
	else if (dst && seg.len)
		memcpy(dst, seg.payload, seg.len);	/* draft-otis-sctp-ddp §3.2.1 R3 */
	if (!seg.last)
		engine_qp_take(qp, &seg);
	else if (hold(t, tsn, &seg, dst))
		engine_qp_fail(qp, IWX_CAUSE_LOCAL_CATASTROPHIC, NULL);
	advance(t);
}

/* The association changed: it ended, or the peer closes (as TCP's FIN). */
static void notification_in(struct llp_sctp *t, const uint8_t *data, size_t len)
{
	const union sctp_notification *n = (const void *)data;

	if (len < sizeof(n->sn_header))
		return;
	if (n->sn_header.sn_type == SCTP_SHUTDOWN_EVENT)
		engine_qp_lost(t->llp.qp, false);
	else if (n->sn_header.sn_type == SCTP_ASSOC_CHANGE &&
		 len >= sizeof(n->sn_assoc_change) &&
		 (n->sn_assoc_change.sac_state == SCTP_COMM_LOST ||
		  n->sn_assoc_change.sac_state == SCTP_SHUTDOWN_COMP))
		engine_qp_lost(t->llp.qp, n->sn_assoc_change.sac_state == SCTP_COMM_LOST);
}

static void sctp_receive(struct iwx_llp *llp)
{
	struct llp_sctp *t = sctp_of(llp);

	for (int budget = RX_BUDGET; budget > 0 && engine_qp_get_state(llp->qp) == ENGINE_QP_RTS;
	     budget--) {
		struct sctp_rcvinfo info;
		socklen_t info_len = sizeof(info);
		unsigned int info_type = 0;
		int flags = 0;
		ssize_t n = usrsctp_recvv(t->so, t->rx, t->maxseg + 1, NULL, NULL, &info, &info_len,
					  &info_type, &flags);

		if (n < 0) {
			if (errno != EWOULDBLOCK && errno != EAGAIN && errno != EINTR)
				engine_qp_lost(llp->qp, true);
			/* what usrsctp held before the placer started is read: first_given knows the rest */
			t->drained |= errno == EWOULDBLOCK || errno == EAGAIN;
			return;
		}
		if (flags & MSG_NOTIFICATION) {
			notification_in(t, t->rx, n);
			continue;
		}
		if (n == 0) {
			engine_qp_lost(llp->qp, false);	/* the peer shut the association down */
			return;
		}
		llp->stats->rx_bytes += n;
		if (!(flags & MSG_EOR) || info_type != SCTP_RECVV_RCVINFO) {
			/* more than one chunk's worth: the peer let SCTP fragment (§2.2) */
			engine_qp_fail(llp->qp, IWX_CAUSE_SHIM(IWX_SHIM_EC_MALFORMED), NULL);
			return;
		}
		chunk_in(t, t->rx, n, info.rcv_tsn, info.rcv_sid);
	}
}

/* -------------------------------------------------------------- lifetime */

static void sctp_stop(struct iwx_llp *llp, bool send_only)
{
	/* SCTP's graceful shutdown delivers what is queued, the Terminate last (RFC 5040 §5.4) */
	usrsctp_shutdown(sctp_of(llp)->so, send_only ? SHUT_WR : SHUT_RDWR);
}

static bool sctp_refers_to(const struct iwx_llp *llp, uintptr_t base, size_t len)
{
	(void)llp;
	(void)base;
	(void)len;
	return false;	/* chunks are placed as they are read */
}

static void sctp_destroy(struct iwx_llp *llp)
{
	struct llp_sctp *t = sctp_of(llp);

	if (t->placed)
		iwx_sctp_placer_del(&t->placer);
	if (t->so)
		usrsctp_close(t->so);
	for (uint32_t i = 0; i < t->n_held; i++)
		free(t->held[i].copy);
	free(t->held);
	free(t->placed);
	free(t->tx);
	free(t->rx);
	free(t);
}

static const struct iwx_llp_ops sctp_ops = {
	.transmit = sctp_transmit, .receive = sctp_receive, .tx_idle = sctp_tx_idle,
	.stop = sctp_stop, .refers_to = sctp_refers_to, .destroy = sctp_destroy,
};

/*
 * Have chunks placed from their packets where the association's path does that: its
 * path's token (usrsctp's name for the peer, sctp.h), ports and our Verification Tag.
 */
static void placer_start(struct llp_sctp *t)
{
	struct sctp_get_nonce_values tags = { 0 };
	socklen_t tags_len = sizeof(tags);
	struct sockaddr *peer = NULL, *local = NULL;
	const struct sockaddr_conn *pc, *lc;
	const struct iwx_sctp_path *path;

	if (usrsctp_getpaddrs(t->so, 0, &peer) < 1)
		return;
	if (usrsctp_getladdrs(t->so, 0, &local) < 1)
		goto out;
	pc = (const struct sockaddr_conn *)peer;
	lc = (const struct sockaddr_conn *)local;
	path = iwx_sctp_path_of(pc->sconn_addr);
	if (!path || !path->place ||
	    usrsctp_getsockopt(t->so, IPPROTO_SCTP, SCTP_GET_NONCE_VALUES, &tags, &tags_len))
		goto out;
	t->placed = calloc(PLACED_SLOTS, sizeof(*t->placed));
	if (!t->placed)
		goto out;	/* chunk_in places everything */
	t->placer.token = pc->sconn_addr;
	t->placer.lport = lc->sconn_port;
	t->placer.pport = pc->sconn_port;
	t->placer.vtag = htonl(tags.gn_local_tag);
	t->placer.place = place_early;
	iwx_sctp_placer_add(&t->placer);
out:
	if (local)
		usrsctp_freeladdrs(local);
	usrsctp_freepaddrs(peer);
}

struct iwx_llp *iwx_llp_sctp_new(struct socket *so, uint32_t maxseg, uint32_t peer_tsn)
{
	struct llp_sctp *t = calloc(1, sizeof(*t));

	if (!t) {
		usrsctp_close(so);
		return NULL;
	}
	t->llp.ops = &sctp_ops;
	t->llp.checked = true;	/* SCTP's CRC32c covers a chunk before anything is read */
	t->llp.max_payload[0] = iwx_shim_max_payload(maxseg, false);
	t->llp.max_payload[1] = iwx_shim_max_payload(maxseg, true);
	t->so = so;
	t->maxseg = maxseg;
	t->cum = peer_tsn;	/* the set-up message: the peer's first chunk */
	t->far = peer_tsn;
	t->tx = malloc(maxseg);
	t->rx = malloc(maxseg + 1);
	if (!t->tx || !t->rx) {
		sctp_destroy(&t->llp);
		return NULL;
	}
	placer_start(t);
	return &t->llp;
}
