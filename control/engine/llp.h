/* SPDX-License-Identifier: MIT */
/*
 * The lower layer under a queue pair: what carries its DDP segments to the peer and
 * brings the peer's back. MPA over a TCP socket (llp_tcp.h) is one. The queue pair
 * decides what goes out next and what an arriving segment means (qp_tx.c, qp_rx.c);
 * the lower layer frames and sends the segments it pulls, delivers the ones it receives
 * with their placement decided by the queue pair, and says when its stream is lost. So
 * the queue pair, its memory checks and its Terminates do not care what carries them.
 */
#ifndef IWX_LLP_H
#define IWX_LLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include <iwx/verbs.h>	/* IWX_MAX_SGE */

#include "proto/ddp.h"
#include "proto/term.h"

struct engine_qp;
struct iwx_qp_stats;
struct iwx_llp;

/* RFC 5040 §4.8: an error of our own, such as client memory gone under a request */
#define IWX_CAUSE_LOCAL_CATASTROPHIC iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_CATASTROPHIC, 0)

struct iwx_llp_ops {
	/*
	 * Send what the queue pair gives (engine_qp_next_segment), as much as the transport
	 * takes now, within a budget so that receiving is not starved. *want_write: wait
	 * until the transport can take more, then call again.
	 */
	void (*transmit)(struct iwx_llp *llp, bool *want_write);
	/* Take in what arrived, within a budget: each segment to engine_qp_place, engine_qp_take. */
	void (*receive)(struct iwx_llp *llp);
	/* Everything the queue pair gave has gone to the transport. */
	bool (*tx_idle)(const struct iwx_llp *llp);
	/*
	 * End the stream; with send_only (after a Terminate, or a graceful close), the
	 * sending half only: the peer may still be sending, and whoever closes must read it.
	 */
	void (*stop)(struct iwx_llp *llp, bool send_only);
	/* Does the lower layer hold a pointer into [base, base + len)? */
	bool (*refers_to)(const struct iwx_llp *llp, uintptr_t base, size_t len);
	/*
	 * The segment being received in place may not write its target any more: the rest
	 * of it goes elsewhere (iwx_mpa_rx_unplace). NULL for a layer that places a segment
	 * whole in one call (SCTP: chunk by chunk).
	 */
	void (*unplace)(struct iwx_llp *llp);
	/* Close the transport and free everything. */
	void (*destroy)(struct iwx_llp *llp);
};

struct iwx_llp {
	const struct iwx_llp_ops *ops;
	struct engine_qp		*qp;		/* the queue pair above: set by engine_qp_create */
	struct iwx_qp_stats *stats;	/* ... whose traffic counters this layer keeps */
	uint32_t		max_payload[2];	/* the largest untagged [0] and tagged [1] segment's payload */
	/*
	 * A segment's header is known good before its payload is placed (SCTP: the packet's
	 * checksum covers both); else a segment that does not continue the last is staged
	 * until its CRC is (MPA, qp_rx.c's cut_next).
	 */
	bool			checked;
};

/*
 * The next segment to send, as the queue pair gives it. Its payload stays where it is,
 * in pieces: in registered memory, which stays mapped until the lower layer says it let
 * go of the message (engine_qp_sent) while refers_to covers the pieces it still holds; or,
 * transient, in the queue pair's own memory, valid until the next call only.
 */
struct iwx_llp_seg {
	const struct iwx_ddp_msg *msg;		/* the message it belongs to */
	uint8_t			hdr[IWX_DDP_UNTAGGED_HDR_LEN];	/* its DDP header (RFC 5041 §4) */
	size_t			hdr_len;
	uint32_t		off, len;	/* its payload's place in the message */
	struct iovec		piece[IWX_MAX_SGE];	/* the payload: len bytes in all */
	uint8_t			npiece;
	bool			transient;	/* to be copied before the next call */
	bool			last;		/* the message's last segment */
	bool			term;		/* a Terminate: nothing may follow it (RFC 5040 §5.4) */
};

/* Copy a segment's payload to dst (s->len bytes). */
static inline void iwx_llp_seg_copy(const struct iwx_llp_seg *s, uint8_t *dst)
{
	for (uint8_t i = 0; i < s->npiece; i++) {
		memcpy(dst, s->piece[i].iov_base, s->piece[i].iov_len);
		dst += s->piece[i].iov_len;
	}
}

/* What the queue pair offers its lower layer (qp_tx.c, qp_rx.c). */

/*
 * The next segment to send, if any may go now; its DDP header and payload no more than
 * most bytes (at least IWX_LLP_SEG_MIN; UINT32_MAX: the lower layer's largest).
 */
#define IWX_LLP_SEG_MIN	(IWX_DDP_UNTAGGED_HDR_LEN + 32)
bool engine_qp_next_segment(struct engine_qp *qp, struct iwx_llp_seg *s, uint32_t most);

/*
 * The lower layer let go of the oldest message whose last segment it was given and had
 * not let go of yet: the transport took all of it, or it holds a copy. Only then does
 * the message complete (RFC 5041 §5.4: once the LLP has it), so that its source may be
 * reused.
 */
void engine_qp_sent(struct engine_qp *qp);

/*
 * An arriving segment whose header is known: where its payload goes (*dst, NULL for
 * none or not yet), or -EPROTO with the Terminate's cause. The signature of
 * iwx_mpa_rx_ops.place, ctx the queue pair.
 */
int engine_qp_place(void *qp, const struct iwx_ddp_seg *seg, uint8_t **dst,
		 struct iwx_term_cause *cause);

/* A whole, checked segment: act on it. 0, or -ENOTCONN once the queue pair stopped. */
int engine_qp_take(void *qp, const struct iwx_ddp_seg *seg);

/* The payload of the segment being received is going to [dst, dst + len) (dst NULL: not). */
void engine_qp_placing(struct engine_qp *qp, uint8_t *dst, uint32_t len);

/* Where a tagged segment's payload goes, or the Terminate's cause (RFC 5041 §7.2). */
int engine_qp_tagged_target(const struct engine_qp *qp, const struct iwx_ddp_seg *seg, uint8_t **dst,
			 struct iwx_term_cause *cause);

/* The lower layer found an error the peer must hear of: a Terminate goes out. */
void engine_qp_fail(struct engine_qp *qp, struct iwx_term_cause cause, const struct iwx_ddp_seg *seg);

/* The stream ended or broke without a Terminate (local: an error of ours, not the peer's close). */
void engine_qp_lost(struct engine_qp *qp, bool local);

#endif /* IWX_LLP_H */
