// SPDX-License-Identifier: MIT
/* A queue pair's lower layer: MPA FPDUs on a kernel TCP socket (RFC 5044). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/param.h>	/* MIN */
#include <sys/socket.h>
#include <unistd.h>

#include "proto/mpa.h"
#include "proto/mpa_rx.h"

#include "bufpool.h"
#include "llp_tcp_fast.h"
#include "llp_tcp.h"
#include "qp.h"
#include "tcp_zc.h"

#define STAGE_LEN	65536	/* read-ahead for headers; payload is received in place */
#define DIRECT_MIN	1024	/* receive straight into the target from this many bytes (where
				   iwx_mpa_rx_may_pull says so) */
#define TX_BUDGET	128	/* FPDUs built per transmit call, so receive is not starved */
#define BATCH_BYTES	131072	/* FPDUs filled per batch, at most: two GSO packets (BENCHMARKS.md) */
#define BATCH_FPDUS	160	/* ... and at most this many */
#define BATCH_PIECES	256	/* ... in at most this many pieces (IOV_MAX is 1024) */
#define COPY_MAX	512	/* payloads up to this are copied: cheaper than a piece of their own */
#define RX_BUDGET	256	/* socket reads per receive call */
#define FPDU_BUF	(IWX_MPA_MAX_ULPDU + 1024)
/* a zero-copy batch's bytes of our own: heads and tails, or one transient FPDU */
#define ZC_OWN_BYTES	(BATCH_FPDUS * (IWX_MPA_HEAD_MAX + IWX_MPA_TAIL_MAX) + IWX_TERM_MAX_LEN)

/*
 * Borrowed while a batch is being sent (its bytes of our own), while bytes are being
 * staged, while the fast path's records are committed to (bufpool.h)
 */
static struct iwx_bufpool batch_pool = IWX_BUFPOOL_INIT(BATCH_BYTES + FPDU_BUF);
static struct iwx_bufpool zc_own_pool = IWX_BUFPOOL_INIT(ZC_OWN_BYTES);	/* ... held until
									   the kernel let go */
static struct iwx_bufpool stage_pool = IWX_BUFPOOL_INIT(STAGE_LEN);
static struct iwx_bufpool targets_pool = IWX_BUFPOOL_INIT(IWX_FP_RING * sizeof(uint8_t *));

/*
 * A batch's pieces and FPDUs, borrowed while one is being sent (5 KiB that a queue pair
 * at rest does not hold).
 */
struct tx_plan {
	struct iovec	piece[BATCH_PIECES];
	uint32_t	fpdu_start[BATCH_FPDUS];	/* where each FPDU of the batch begins */
	bool		fpdu_ends_msg[BATCH_FPDUS];	/* its message's last */
	bool		fpdu_starts_rec[BATCH_FPDUS];	/* a record (one sendmsg) starts here */
	bool		fpdu_starts_win[BATCH_FPDUS];	/* ... or an EMSS-long stretch of one */
};

static struct iwx_bufpool plan_pool = IWX_BUFPOOL_INIT(sizeof(struct tx_plan));

struct llp_tcp {
	struct iwx_llp		llp;
	int			fd;

	struct iwx_mpa_tx	tx;
	/*
	 * The batch being sent: whole FPDUs, back to back, as pieces: heads, tails and
	 * copied payloads in own, other payloads where they are in registered memory.
	 */
	struct tx_plan		*plan;		/* NULL: none borrowed, nothing left to send */
	uint32_t		npiece;
	uint32_t		piece_at;	/* the first piece not wholly sent */
	uint8_t			*own;		/* NULL: none borrowed, nothing left to send */
	size_t			own_len;
	bool			zc_used;	/* a call sent some of the batch without a copy */
	size_t			fpdu_len, fpdu_sent;
	uint32_t		nfpdu;
	uint32_t		cur;		/* the FPDU fpdu_sent is in */
	bool			aligned;	/* what goes next starts a TCP segment */
	uint32_t		emss;
	struct iwx_tcp_zc	*zc;		/* MSG_ZEROCOPY (NULL: off) */

	struct iwx_mpa_rx	*rx;
	uint8_t			*stage;		/* header read-ahead (NULL: none borrowed) */
	size_t			stage_len, stage_off;
	struct iwx_fast_rx	fast;		/* FPDUs the fast path placed */
};

static struct llp_tcp *tcp_of(struct iwx_llp *llp)
{
	return (struct llp_tcp *)llp;
}

static const struct llp_tcp *ctcp_of(const struct iwx_llp *llp)
{
	return (const struct llp_tcp *)llp;
}

/* ---------------------------------------------------------------- transmit */

/* Add len bytes at p to the batch, continuing its last piece if they follow it. */
static void put_piece(struct llp_tcp *t, void *p, size_t len)
{
	struct iovec *last = t->npiece ? &t->plan->piece[t->npiece - 1] : NULL;

	if (!len)
		return;
	if (last && (uint8_t *)last->iov_base + last->iov_len == p)
		last->iov_len += len;
	else
		t->plan->piece[t->npiece++] = (struct iovec){ .iov_base = p, .iov_len = len };
}

static struct iwx_bufpool *own_pool(const struct llp_tcp *t)
{
	return t->zc ? &zc_own_pool : &batch_pool;
}

static size_t own_cap(const struct llp_tcp *t)
{
	return own_pool(t)->len;
}

/*
 * Frame a segment into the batch: its payload sent from where it is, the head and tail
 * around it ours; or all of it copied, when small, transient or broken by markers.
 */
static size_t add_fpdu(struct llp_tcp *t, const struct iwx_llp_seg *s)
{
	uint8_t *at = t->own + t->own_len;
	size_t head_len, tail_len;
	ssize_t n;

	/* with zero copy, what is ours must be held until the kernel let go: no more than needed */
	if (s->transient || (!t->zc && (s->len <= COPY_MAX || t->tx.markers))) {
		n = iwx_mpa_fpdu_buildv(&t->tx, at, own_cap(t) - t->own_len, s->hdr, s->hdr_len,
					s->piece, s->npiece, s->len);
		if (n < 0)
			abort();	/* sized by MULPDU: cannot happen */
		put_piece(t, at, n);
		t->own_len += n;
		return n;
	}
	/* the tail right after the head: the next FPDU's head continues its piece */
	head_len = IWX_MPA_HDR_LEN + s->hdr_len;
	n = iwx_mpa_fpdu_frame(&t->tx, at, s->hdr, s->hdr_len, s->piece, s->npiece, s->len,
			       at + head_len, &tail_len);
	if (n < 0)
		abort();	/* no markers, sized by MULPDU: cannot happen */
	put_piece(t, at, head_len);
	for (uint8_t i = 0; i < s->npiece; i++) {
		put_piece(t, s->piece[i].iov_base, s->piece[i].iov_len);
		if (t->zc)
			iwx_tcp_zc_payload(t->zc, s->piece[i].iov_base, s->piece[i].iov_len);
	}
	put_piece(t, at + head_len, tail_len);
	t->own_len += head_len + tail_len;
	return head_len + s->len + tail_len;
}

/* The batch was sent: its buffer goes back, or waits for the kernel to let go of it. */
static void let_go_own(struct llp_tcp *t)
{
	if (t->own && t->zc_used)
		iwx_tcp_zc_hold(t->zc, t->own);	/* fill_batch made sure of room */
	else
		iwx_bufpool_put(own_pool(t), t->own);
	t->own = NULL;
	t->zc_used = false;
}

/*
 * The most a segment may take to fill the stretch of its record that FPDUs have used
 * used bytes of, framed without markers: UINT32_MAX when the stretch is empty, or when
 * too little is left for a segment worth its header (the next starts a record).
 */
static uint32_t stretch_room(const struct llp_tcp *t, size_t used)
{
	uint32_t most;

	if (!used || t->tx.markers)
		return UINT32_MAX;
	most = iwx_mpa_mulpdu(t->emss - used, false);
	return most >= IWX_LLP_SEG_MIN ? most : UINT32_MAX;
}

/*
 * Fill the next batch: whole FPDUs, back to back, in records, each sent by one sendmsg
 * ending in MSG_EOR. TCP starts a new packet for data after an end of record, and cuts
 * packets into segments at multiples of the MSS from their start, so a record whose
 * FPDUs each lie within one EMSS-long stretch of it goes out in segments that start with
 * an FPDU and hold whole ones (RFC 5044 §5): FPDUs of a full EMSS one per segment,
 * smaller ones packed. A segment after a smaller one is cut to fill its stretch (DDP may
 * cut a message anywhere), so that messages follow one another in one record, TCP's
 * packets as large as a bulk sender's; one that would still cross a stretch's end
 * (markers, or too little room) starts the next record. Every record ends in MSG_EOR:
 * once TCP has cut a packet off the MSS grid (a tbf at 1 Gbit/s did in one run of two),
 * it fills the rest with the next packet's bytes (tcp_grow_skb, Linux 6.10) unless an
 * end of record lies between them, and the grid stayed off for as long as data waited:
 * 2 100 segments, none of whose FPDUs the receiver's fast path could place. A batch
 * stops before BATCH_BYTES while a full-EMSS FPDU still fits: two GSO packets, not a
 * third of one FPDU. With zero copy a batch ends with a message (tcp_zc.h notes one per
 * batch). false: nothing to send.
 */
static bool fill_batch(struct llp_tcp *t, int *budget)
{
	size_t used = 0;	/* bytes of the current stretch FPDUs took */

	if (t->zc_used)
		let_go_own(t);	/* the kernel may still send from it */
	t->fpdu_len = t->fpdu_sent = t->own_len = 0;
	t->nfpdu = t->cur = t->npiece = t->piece_at = 0;
	if (t->zc && !iwx_tcp_zc_room(t->zc))
		return false;	/* the message this batch may end could not wait for the kernel */
	if (t->zc)
		iwx_tcp_zc_batch(t->zc);
	while (*budget > 0 && t->nfpdu < BATCH_FPDUS && t->fpdu_len + t->emss <= BATCH_BYTES &&
	       t->npiece + 2 + IWX_MAX_SGE <= BATCH_PIECES) {
		struct iwx_llp_seg s;
		size_t n;

		if (!engine_qp_next_segment(t->llp.qp, &s, stretch_room(t, used)))
			break;
		if ((!t->own && !(t->own = iwx_bufpool_get(own_pool(t)))) ||
		    (!t->plan && !(t->plan = iwx_bufpool_get(&plan_pool)))) {
			engine_qp_lost(t->llp.qp, true);	/* a Terminate would need the buffers */
			return false;
		}
		n = add_fpdu(t, &s);
		t->plan->fpdu_starts_rec[t->nfpdu] = !t->nfpdu || used + n > t->emss;
		if (t->plan->fpdu_starts_rec[t->nfpdu])
			used = 0;
		t->plan->fpdu_starts_win[t->nfpdu] = !used;
		used = (used + n) % t->emss;
		t->plan->fpdu_start[t->nfpdu] = t->fpdu_len;
		t->plan->fpdu_ends_msg[t->nfpdu++] = s.last;
		t->fpdu_len += n;
		t->llp.stats->tx_fpdus++;
		(*budget)--;
		if (t->zc && s.last)
			break;
	}
	return t->nfpdu > 0;
}

/* The FPDU after the record FPDU i is in (win: after its stretch of the record), or nfpdu. */
static uint32_t record_end(const struct llp_tcp *t, uint32_t i, bool win)
{
	while (++i < t->nfpdu && !(win ? t->plan->fpdu_starts_win[i] : t->plan->fpdu_starts_rec[i]))
		;
	return i;
}

/* Where FPDU i begins (nfpdu: the batch's end). */
static size_t fpdu_at(const struct llp_tcp *t, uint32_t i)
{
	return i < t->nfpdu ? t->plan->fpdu_start[i] : t->fpdu_len;
}

/* TCP has all of the message the batch ends: let go of it, or wait for the kernel to. */
static void msg_taken(struct llp_tcp *t)
{
	uint32_t k = t->zc ? iwx_tcp_zc_taken(t->zc) : 1;

	while (k--)
		engine_qp_sent(t->llp.qp);
}

/* Messages the kernel let go of since: completed. false: the stream is broken. */
static bool zc_reap(struct llp_tcp *t)
{
	int k = iwx_tcp_zc_reap(t->zc, t->fd);

	t->llp.stats->tx_zc_copied = t->zc->copied;
	if (k < 0)
		return false;
	while (k--)
		engine_qp_sent(t->llp.qp);
	return true;
}

/* sendmsg the batch's next len bytes, MSG_EOR after them. */
static ssize_t send_pieces(struct llp_tcp *t, size_t len)
{
	uint32_t k = t->piece_at;
	size_t before = 0, whole;
	struct msghdr mh = { .msg_iov = &t->plan->piece[t->piece_at] };
	int flags = MSG_NOSIGNAL | MSG_DONTWAIT | MSG_EOR;
	bool zc = t->zc && iwx_tcp_zc_use(t->zc);
	ssize_t n;

	while (before + t->plan->piece[k].iov_len < len)
		before += t->plan->piece[k++].iov_len;
	/* the last piece cut short for the call */
	whole = t->plan->piece[k].iov_len;
	t->plan->piece[k].iov_len = len - before;
	mh.msg_iovlen = k + 1 - t->piece_at;
	n = sendmsg(t->fd, &mh, flags | (zc ? MSG_ZEROCOPY : 0));
	if (n < 0 && zc && errno == ENOBUFS) {
		/* no room for the kernel's notice (optmem_max): a copy this time */
		zc = false;
		n = sendmsg(t->fd, &mh, flags);
	}
	if (n > 0 && zc) {
		iwx_tcp_zc_called(t->zc);
		t->llp.stats->tx_zc_calls++;
		t->zc_used = true;
	}
	t->plan->piece[k].iov_len = whole;
	return n;
}

/* n bytes of the batch's pieces were sent. */
static void skip_pieces(struct llp_tcp *t, size_t n)
{
	while (n) {
		struct iovec *v = &t->plan->piece[t->piece_at];
		size_t k = MIN(n, v->iov_len);

		v->iov_base = (uint8_t *)v->iov_base + k;
		v->iov_len -= k;
		n -= k;
		if (!v->iov_len)
			t->piece_at++;
	}
}

/* Does a stretch start at byte at of the batch (the batch's end: the next batch's first)? */
static bool stretch_starts_at(const struct llp_tcp *t, size_t at)
{
	uint32_t i = t->cur;

	while (fpdu_at(t, i) < at)
		i++;
	return fpdu_at(t, i) == at && (i == t->nfpdu || t->plan->fpdu_starts_win[i]);
}

static void send_batches(struct llp_tcp *t, bool *want_write)
{
	struct iwx_llp *llp = &t->llp;

	*want_write = false;
	for (int budget = TX_BUDGET; budget > 0 || t->fpdu_sent < t->fpdu_len;) {
		if (t->fpdu_sent == t->fpdu_len && !fill_batch(t, &budget))
			return;
		/*
		 * To the record's end; but when TCP took only part of it, up to the end of
		 * the stretch it stopped in, so that with MSG_EOR the stretches after it start
		 * a new packet again (the rest of a cut FPDU may have to start one of its own:
		 * TCP may have sent the part it took).
		 */
		bool at_fpdu = t->plan->fpdu_start[t->cur] == t->fpdu_sent;
		bool at_win = at_fpdu && t->plan->fpdu_starts_win[t->cur];
		uint32_t next = record_end(t, t->cur, !at_win);
		size_t end = fpdu_at(t, next);
		ssize_t n = send_pieces(t, end - t->fpdu_sent);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				*want_write = true;
				return;
			}
			engine_qp_lost(llp->qp, true);
			return;
		}
		/*
		 * FPDUs begun in a send from the start of a new TCP packet lie whole in a
		 * segment, as far as the sender can tell (an upper bound: retransmission may
		 * merge).
		 */
		for (uint32_t i = t->cur; t->aligned && at_fpdu && i < t->nfpdu &&
		     t->plan->fpdu_start[i] < t->fpdu_sent + n; i++)
			llp->stats->tx_fpdus_aligned++;
		t->fpdu_sent += n;
		/* all taken, its end of record holding; or stopped where a stretch starts */
		t->aligned = t->fpdu_sent == end ||
			     (t->aligned && at_win && stretch_starts_at(t, t->fpdu_sent));
		skip_pieces(t, n);
		for (; t->cur < t->nfpdu && fpdu_at(t, t->cur + 1) <= t->fpdu_sent; t->cur++)
			if (t->plan->fpdu_ends_msg[t->cur])
				msg_taken(t);
		llp->stats->tx_bytes += n;
	}
	*want_write = true;
}

static void tcp_transmit(struct iwx_llp *llp, bool *want_write)
{
	struct llp_tcp *t = tcp_of(llp);

	*want_write = false;
	if (t->zc && !iwx_tcp_zc_idle(t->zc) && !zc_reap(t)) {
		engine_qp_lost(llp->qp, false);
		return;
	}

	send_batches(t, want_write);
	/* a batch partly sent stays whole for the next turn (never lose or reorder bytes) */
	if (t->fpdu_sent == t->fpdu_len) {
		let_go_own(t);
		t->plan = iwx_bufpool_put(&plan_pool, t->plan);
	}
}

static bool tcp_tx_idle(const struct iwx_llp *llp)
{
	const struct llp_tcp *t = ctcp_of(llp);

	return t->fpdu_sent == t->fpdu_len && (!t->zc || iwx_tcp_zc_idle(t->zc));
}

/* ----------------------------------------------------------------- receive */

/* A segment taken: the fast path learns where the parser is (llp_tcp_fast.h). */
static int tcp_take(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct llp_tcp *t = ctx;
	int err = engine_qp_take(t->llp.qp, seg);
	uint8_t crc[IWX_MPA_CRC_LEN];

	if (err)
		return err;
	if (t->fast.past) {	/* what a record late behind the parser is judged by */
		iwx_mpa_rx_last_crc(t->rx, crc);
		iwx_fast_rx_passed(&t->fast, t->rx->len_pos, crc);
	}
	/* the fast path may place behind an invalidation once it is done (llp_tcp_fast.h) */
	if (iwx_rdmap_opcode_has_inval(seg->opcode))
		iwx_fast_rx_release(&t->fast, t->rx->len_pos);
	/*
	 * Not inside a run of records (fast.n): the programs propose only past the last one
	 * they placed, so no proposal lies within a run; fast_turn looks once it is taken,
	 * sparing a read of the slot's busiest line per placed FPDU.
	 */
	if (!t->fast.n)
		iwx_fast_rx_boundary(&t->fast, t->rx->pos);
	return 0;
}

/* Placed bytes that TCP's do not rewrite: the LLP cannot make them right (issue 41). */
#define IWX_CAUSE_UNREPAIRED	IWX_CAUSE_MPA(IWX_MPA_EC_LOCAL_CATASTROPHIC)

static int tcp_place(void *ctx, const struct iwx_ddp_seg *seg, uint8_t **dst,
		     struct iwx_term_cause *cause)
{
	struct llp_tcp *t = ctx;

	/* the FPDU at a dropped record's position: the placed bytes are made right, or the
	   stream ends (issue 41: never complete over bytes TCP did not deliver) */
	if (!iwx_fast_rx_settle_seg(&t->fast, t->rx->len_pos, seg)) {
		t->llp.stats->fast_unrepaired++;
		*cause = IWX_CAUSE_UNREPAIRED;
		return -EPROTO;
	}
	return engine_qp_place(t->llp.qp, seg, dst, cause);
}

static const struct iwx_mpa_rx_ops rx_ops = { .place = tcp_place, .segment = tcp_take };

static void rx_failed(struct llp_tcp *t)
{
	struct iwx_term_cause cause;
	const struct iwx_ddp_seg *seg;

	if (iwx_mpa_rx_failed(t->rx, &cause, &seg))
		engine_qp_fail(t->llp.qp, cause, seg);
}

/* Hand staged bytes to the parser. */
static void drain_stage(struct llp_tcp *t)
{
	size_t used = 0;
	int err = iwx_mpa_rx_feed(t->rx, t->stage + t->stage_off, t->stage_len - t->stage_off,
				  &used);

	t->stage_off += used;
	if (t->stage_off == t->stage_len)
		t->stage_off = t->stage_len = 0;
	if (err == -EPROTO)
		rx_failed(t);
}

/*
 * Where the payload of the FPDU a record describes is here, if the engine takes it on:
 * the checks the fast path ran, run again now, when the engine commits to discarding the
 * FPDU's bytes instead of reading them.
 */
static uint8_t *fast_target(const struct llp_tcp *t, const struct iwx_fp_rec *r)
{
	uint32_t ulen = (uint32_t)r->hdr[0] << 8 | r->hdr[1];
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;
	uint8_t *dst;

	if (iwx_ddp_decode(r->hdr + IWX_MPA_HDR_LEN, ulen, &seg, &cause) || !seg.tagged ||
	    (seg.opcode != IWX_OP_WRITE && seg.opcode != IWX_OP_READ_RESP) || !seg.len ||
	    r->trailer_len != iwx_mpa_pad_len(ulen) + IWX_MPA_CRC_LEN ||
	    engine_qp_tagged_target(t->llp.qp, &seg, &dst, &cause))
		return NULL;
	return dst;
}

/* Take the oldest committed record through the parser, its payload in place already. */
static void take_record(struct llp_tcp *t)
{
	struct iwx_fast_rx *f = &t->fast;
	uint32_t i = f->slot->tail & (IWX_FP_RING - 1);
	const struct iwx_fp_rec *r = &f->slot->ring[i];
	uint32_t len = iwx_fast_rx_len(f, r), payload = iwx_fast_rx_payload(r);
	int err;

	t->llp.stats->fast_fpdus++;
	t->llp.stats->fast_bytes += payload;
	engine_qp_placing(t->llp.qp, f->dst[i], payload);
	err = iwx_mpa_rx_placed(t->rx, r->hdr, sizeof(r->hdr), f->dst[i], r->trailer, r->trailer_len);
	f->have -= len;
	f->bytes -= len;
	iwx_fast_rx_pop(f);
	if (err == -EPROTO)
		rx_failed(t);
	else if (err == -EINVAL)	/* fast_target checked it could not be */
		engine_qp_fail(t->llp.qp, IWX_CAUSE_LOCAL_CATASTROPHIC, NULL);
}

/* Bytes TCP holds past the read position (SIOCINQ: rcv_nxt - copied_seq), or -1. */
static ssize_t tcp_held(const struct llp_tcp *t)
{
	int n;

	return ioctl(t->fd, SIOCINQ, &n) ? -1 : n;
}

/* What the programs placed cannot be made right (llp_tcp_fast.h): the stream ends. */
static void unrepaired(struct llp_tcp *t)
{
	t->llp.stats->fast_unrepaired++;
	engine_qp_fail(t->llp.qp, IWX_CAUSE_UNREPAIRED, NULL);
}

/*
 * The fast path's turn, the parser at stream position pos with nothing staged: commit to
 * the run of records that starts here that TCP accepted as placed, discard their bytes
 * from the socket, take them. A record is judged once TCP holds its bytes: TCP took them
 * from a segment iwx_accepted compared with it (fastpath_maps.h). Returns 1 when it made
 * progress, 0 when the socket is to be read as usual (up to *limit bytes: where the next
 * record starts), or recv's or ioctl's result when that failed or ended, or -1 with
 * EAGAIN when TCP has none of the bytes of the record in front yet.
 */
static ssize_t fast_turn(struct llp_tcp *t, size_t *limit)
{
	struct iwx_fast_rx *f = &t->fast;
	uint32_t pos = t->rx->pos;
	const struct iwx_fp_rec *r;
	ssize_t n, held = -1;	/* bytes TCP holds from pos on, once asked */

	*limit = SIZE_MAX;
	if (!f->slot)
		return 0;
	if (iwx_mpa_rx_at_boundary(t->rx)) {
		iwx_fast_rx_boundary(f, pos);
		while (f->n < IWX_FP_RING) {
			enum iwx_fast_rx_acceptance acc;
			uint32_t len;
			uint8_t *dst;

			iwx_fast_rx_find(f, pos + f->bytes);
			r = iwx_fast_rx_peek(f, pos);
			if (f->stale_bad) {
				unrepaired(t);
				return 1;
			}
			if (!r || iwx_fast_rx_pos(f, r) != pos + f->bytes)
				break;
			len = iwx_fast_rx_len(f, r);
			if (held < (ssize_t)(f->bytes + len)) {
				if (held >= 0 && f->n)
					break;	/* the rest on a later turn */
				n = tcp_held(t);
				if (n < 0)
					return n;
				held = f->have + n;
				if (!f->n && held == 0) {
					errno = EAGAIN;	/* nothing of it yet: it comes whole */
					return -1;
				}
				if (held < (ssize_t)(f->bytes + len) && f->n)
					break;
			}
			/* TCP holds part of it only (another cut of the stream): unchecked, read */
			acc = held < (ssize_t)(f->bytes + len) ? IWX_FAST_RX_UNCHECKED :
								   iwx_fast_rx_acceptance(r);
			/* TCP's bytes are the truth: else read them, over what was placed */
			dst = acc == IWX_FAST_RX_ACCEPTED ? fast_target(t, r) : NULL;
			if (dst && !f->dst && !(f->dst = iwx_bufpool_get(&targets_pool)))
				dst = NULL;	/* nowhere to note it: read as usual */
			if (!dst && f->n)
				break;	/* to be read when it comes first */
			if (!dst) {
				/* the engine reads it itself, and says why it may not be placed */
				if (acc == IWX_FAST_RX_REFUTED)
					t->llp.stats->fast_refuted++;
				else if (acc == IWX_FAST_RX_UNCHECKED)
					t->llp.stats->fast_unchecked++;
				iwx_fast_rx_dropped(f, r, pos);
				iwx_fast_rx_drop(f);
				continue;
			}
			/* one dropped here before it: this one, TCP's, placed later, must cover it */
			if (!f->n && !iwx_fast_rx_settle_rec(f, pos, r)) {
				unrepaired(t);
				return 1;
			}
			f->dst[(f->slot->tail + f->n) & (IWX_FP_RING - 1)] = dst;
			f->n++;
			f->bytes += iwx_fast_rx_len(f, r);
		}
	}
	if (!f->n) {
		r = iwx_fast_rx_peek(f, pos);
		if (f->stale_bad) {
			unrepaired(t);
			return 1;
		}
		if (r && (int32_t)(iwx_fast_rx_pos(f, r) - pos) > 0)
			*limit = iwx_fast_rx_pos(f, r) - pos;
		return 0;
	}
	if (f->have < f->bytes) {
		n = recv(t->fd, NULL, f->bytes - f->have, MSG_DONTWAIT | MSG_TRUNC);
		if (n <= 0)
			return n;
		t->llp.stats->rx_bytes += n;
		t->llp.stats->fast_discards++;
		f->have += n;
	}
	while (f->n && engine_qp_get_state(t->llp.qp) == ENGINE_QP_RTS &&
	       f->have >= iwx_fast_rx_len(f, &f->slot->ring[f->slot->tail & (IWX_FP_RING - 1)]))
		take_record(t);
	return 1;
}

static void tcp_receive(struct iwx_llp *llp)
{
	struct llp_tcp *t = tcp_of(llp);

	for (int budget = RX_BUDGET; budget > 0 && engine_qp_get_state(llp->qp) == ENGINE_QP_RTS;
	     budget--) {
		uint8_t *dst;
		size_t want, limit;
		ssize_t n;

		n = fast_turn(t, &limit);
		if (n > 0)
			continue;
		if (n < 0 || (n == 0 && t->fast.n))
			goto ended;
		want = MIN(iwx_mpa_rx_want(t->rx, &dst), limit);
		if (want >= DIRECT_MIN && iwx_mpa_rx_may_pull(t->rx)) {
			/* payload: straight from the socket into its target */
			n = recv(t->fd, dst, want, MSG_DONTWAIT);
			if (n > 0) {
				llp->stats->rx_bytes += n;
				if (iwx_mpa_rx_advance(t->rx, n) == -EPROTO)
					rx_failed(t);
				if ((size_t)n < want)
					break;	/* drained (epoll(7)): what comes next raises an event */
				continue;
			}
		} else {
			if (!t->stage && !(t->stage = iwx_bufpool_get(&stage_pool))) {
				engine_qp_lost(llp->qp, true);	/* cannot read on: an error of ours */
				break;
			}
			want = MIN(STAGE_LEN, limit);
			n = recv(t->fd, t->stage, want, MSG_DONTWAIT);
			if (n > 0) {
				llp->stats->rx_bytes += n;
				t->stage_len = n;
				/*
				 * Parsed now, not on the next turn: bytes taken from the
				 * socket raise no event, so a call may not end with any
				 * staged (all are taken unless the stream failed)
				 */
				drain_stage(t);
				if ((size_t)n < want)
					break;
				continue;
			}
		}
ended:
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		/* the stream ended or broke without a Terminate: what the kernel let go of completes */
		if (t->zc)
			zc_reap(t);
		engine_qp_lost(llp->qp, n < 0);
		break;
	}
	llp->stats->placed_segments = t->rx->stats.placed;
	/* all staged bytes are parsed unless the stream failed: those are kept, unread */
	if (!t->stage_len)
		t->stage = iwx_bufpool_put(&stage_pool, t->stage);
	if (!t->fast.n)
		t->fast.dst = iwx_bufpool_put(&targets_pool, t->fast.dst);
}

/* -------------------------------------------------------------- lifetime */

static void tcp_stop(struct iwx_llp *llp, bool send_only)
{
	/* tcp(7): a close with unread bytes resets, and may destroy the Terminate (RFC 5040 §5.4) */
	shutdown(tcp_of(llp)->fd, send_only ? SHUT_WR : SHUT_RDWR);
}

static bool span_within(const uint8_t *p, uint32_t n, uintptr_t base, size_t len)
{
	return n && (uintptr_t)p < base + len && (uintptr_t)p + n > base;
}

static void tcp_unplace(struct iwx_llp *llp)
{
	iwx_mpa_rx_unplace(tcp_of(llp)->rx);
}

static bool tcp_refers_to(const struct iwx_llp *llp, uintptr_t base, size_t len)
{
	const struct llp_tcp *t = ctcp_of(llp);
	const struct iwx_fast_rx *f = &t->fast;

	/* payloads still to be sent from where they are, or that the kernel still sends */
	for (uint32_t i = t->piece_at; t->plan && i < t->npiece; i++)
		if (span_within(t->plan->piece[i].iov_base, t->plan->piece[i].iov_len, base, len))
			return true;
	if (t->zc && iwx_tcp_zc_refers_to(t->zc, base, len))
		return true;
	for (uint32_t i = 0; i < f->n; i++) {
		uint32_t k = (f->slot->tail + i) & (IWX_FP_RING - 1);

		if (span_within(f->dst[k], iwx_fast_rx_payload(&f->slot->ring[k]), base, len))
			return true;
	}
	return false;
}

static void tcp_destroy(struct iwx_llp *llp)
{
	struct llp_tcp *t = tcp_of(llp);

	if (t->zc && !iwx_tcp_zc_idle(t->zc)) {
		/* reset: the kernel drops what it holds of ours now, before we give it back */
		struct linger l = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(t->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	if (t->fd >= 0)
		close(t->fd);
	free(t->rx);
	iwx_bufpool_put(own_pool(t), t->own);
	if (t->zc)
		iwx_tcp_zc_fini(t->zc);
	free(t->zc);
	iwx_bufpool_put(&stage_pool, t->stage);
	iwx_bufpool_put(&targets_pool, t->fast.dst);
	iwx_bufpool_put(&plan_pool, t->plan);
	free(t->fast.past);
	free(t);
}

static const struct iwx_llp_ops tcp_ops = {
	.transmit = tcp_transmit, .receive = tcp_receive, .tx_idle = tcp_tx_idle,
	.stop = tcp_stop, .refers_to = tcp_refers_to, .unplace = tcp_unplace, .destroy = tcp_destroy,
};

struct iwx_llp *iwx_llp_tcp_new(int fd, const struct iwx_mpa_agreed *agreed, uint32_t emss,
			       uint32_t zerocopy_min)
{
	struct llp_tcp *t = calloc(1, sizeof(*t));
	uint32_t mulpdu;

	if (!t) {
		close(fd);
		return NULL;
	}
	t->llp.ops = &tcp_ops;
	mulpdu = iwx_mpa_mulpdu(emss, agreed->mode.markers_tx);
	if (mulpdu > IWX_MPA_MAX_ULPDU)
		mulpdu = IWX_MPA_MAX_ULPDU;
	/* RFC 5044 §4.1: MULPDU bounds a ULPDU, the DDP header included */
	t->llp.max_payload[0] = mulpdu > IWX_DDP_UNTAGGED_HDR_LEN ? mulpdu - IWX_DDP_UNTAGGED_HDR_LEN : 0;
	t->llp.max_payload[1] = mulpdu > IWX_DDP_TAGGED_HDR_LEN ? mulpdu - IWX_DDP_TAGGED_HDR_LEN : 0;
	t->fd = fd;
	t->emss = emss;
	t->aligned = true;
	iwx_mpa_tx_init(&t->tx, &agreed->mode);
	t->rx = malloc(sizeof(*t->rx));
	if (!t->rx) {
		tcp_destroy(&t->llp);
		return NULL;
	}
	iwx_mpa_rx_init(t->rx, &agreed->mode, &rx_ops, t);
	/* zero copy where the socket takes it (markers: copies, 512 bytes apart); else copies */
	if (zerocopy_min && !agreed->mode.markers_tx && (t->zc = malloc(sizeof(*t->zc))) &&
	    iwx_tcp_zc_init(t->zc, fd, zerocopy_min, &zc_own_pool)) {
		free(t->zc);
		t->zc = NULL;
	}
	return &t->llp;
}

/* ------------------------------------------------------------- fast path */

bool iwx_llp_tcp_fast(struct iwx_llp *llp, struct iwx_fp_slot *slot, uint32_t copied_seq)
{
	struct llp_tcp *t = tcp_of(llp);

	iwx_bufpool_put(&targets_pool, t->fast.dst);	/* committed records are forgotten */
	free(t->fast.past);
	/* what has been read so far is stream position rx_bytes, modulo 2^32 */
	t->fast = (struct iwx_fast_rx){ .slot = slot,
					.anchor = copied_seq - (uint32_t)llp->stats->rx_bytes,
					.markers = t->rx->markers };
	/* without it (no memory), a record late behind the parser ends the stream unless TCP
	   accepted it: never silent, seldom (llp_tcp_fast.h) */
	if (slot && t->fast.markers)
		t->fast.past = calloc(1, sizeof(*t->fast.past));
	return !t->stage_len && iwx_mpa_rx_at_boundary(t->rx);
}

uint32_t iwx_llp_tcp_fast_seq(const struct iwx_llp *llp)
{
	return ctcp_of(llp)->fast.anchor + (uint32_t)llp->stats->rx_bytes;
}

uint32_t iwx_llp_tcp_fast_start(const struct iwx_llp *llp)
{
	return ctcp_of(llp)->fast.anchor;
}
