/* SPDX-License-Identifier: MIT */
/*
 * The receive side of a full-operation MPA stream: a resumable state machine that
 * takes the TCP byte stream in pieces of any size and yields validated DDP segments.
 *
 * Two ways to drive it, one state machine:
 *  - feed: hand it bytes you hold (iwx_mpa_rx_feed);
 *  - pull: ask where the next bytes belong (iwx_mpa_rx_want), read them from the
 *    socket straight there, then say how many came (iwx_mpa_rx_advance). With a
 *    place callback the payload of a segment lands directly in its target buffer.
 *    The CRC is then read back from there: pull no bytes into a target that its program
 *    may write as they land (iwx_mpa_rx_may_pull; feed's CRC reads the bytes fed).
 *
 * Errors are deferred to the end of the FPDU so that a damaged frame is reported
 * as a CRC error rather than as whatever its damaged header seemed to say
 * (RFC 5044 §7: the CRC is checked before DDP sees the segment). A marker that
 * does not point at the FPDU's header is reported at once: framing is lost.
 */
#ifndef IWX_MPA_RX_H
#define IWX_MPA_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/ddp.h"
#include "proto/mpa.h"
#include "proto/term.h"

struct iwx_mpa_rx_ops {
	/*
	 * Optional. Called once the DDP header is decoded and valid, before any payload
	 * byte: set *dst to where the seg->len payload bytes go (leave it NULL to keep
	 * them in the parser's buffer) and return 0; or refuse the segment by returning
	 * -EPROTO with *cause set: its payload is then dropped and the cause reported
	 * once the FPDU's CRC is known to be good. seg->payload is not valid yet.
	 */
	int (*place)(void *ctx, const struct iwx_ddp_seg *seg, uint8_t **dst,
		     struct iwx_term_cause *cause);
	/*
	 * A complete, validated segment (CRC good, header valid, accepted by place).
	 * seg->payload points at the bytes (in the place target, or the parser's
	 * buffer, valid until the next call). Return 0 to go on; a negative errno stops
	 * the parser at this FPDU boundary and is returned by feed/advance.
	 */
	int (*segment)(void *ctx, const struct iwx_ddp_seg *seg);
};

enum iwx_mpa_rx_state {
	IWX_RX_HDR,		/* ULPDU_LENGTH and the DDP header */
	IWX_RX_PAYLOAD,
	IWX_RX_TRAILER,		/* pad and CRC */
	IWX_RX_FAILED,
};

struct iwx_mpa_rx_stats {
	uint64_t	fpdus;		/* received whole, good or not */
	uint64_t	bytes;		/* stream bytes consumed, markers included */
	uint64_t	markers;
	uint64_t	placed;		/* segments whose payload went to a place target */
};

struct iwx_mpa_rx {
	/* configuration */
	bool			crc;
	bool			markers;
	const struct iwx_mpa_rx_ops *ops;
	void			*ctx;

	/* where the stream is */
	enum iwx_mpa_rx_state	state;
	uint32_t		pos;		/* stream position, modulo 2^32 */
	uint32_t		len_pos;	/* position of the FPDU's ULPDU_LENGTH field */
	uint32_t		crc_state;	/* over the FPDU so far, markers included */
	uint8_t			marker[IWX_MPA_MARKER_LEN];
	uint8_t			marker_got;	/* 0: not inside a marker */
	uint8_t			hdr[IWX_MPA_HDR_LEN + IWX_DDP_UNTAGGED_HDR_LEN];
	uint8_t			hdr_got;
	uint8_t			hdr_want;	/* grows as the length and control byte arrive */
	uint8_t			trailer[3 + IWX_MPA_CRC_LEN];
	uint8_t			trailer_got;
	uint8_t			trailer_len;	/* pad and CRC */

	/* the segment being received */
	struct iwx_ddp_seg	seg;
	uint8_t			*dst;		/* payload destination, NULL: dropped */
	uint32_t		got;		/* payload bytes received */
	bool			pending;	/* an error waits for the CRC verdict */
	struct iwx_term_cause	pending_cause;

	/* after IWX_RX_FAILED: why, and the segment it concerns (for the Terminate) */
	struct iwx_term_cause	cause;
	bool			cause_has_seg;
	struct iwx_ddp_seg	cause_seg;

	struct iwx_mpa_rx_stats	stats;
	uint8_t			drop[256];	/* sink for refused payload */
	uint8_t			buf[IWX_MPA_MAX_ULPDU];
};

/* Start receiving full operation with mode's CRC and markers (markers_rx). */
void iwx_mpa_rx_init(struct iwx_mpa_rx *rx, const struct iwx_mpa_mode *mode,
		     const struct iwx_mpa_rx_ops *ops, void *ctx);

/*
 * Consume len bytes. Returns 0 when all were consumed, the callback's negative
 * errno when it stopped (then *consumed says how far it got), or -EPROTO once the
 * stream is in error: iwx_mpa_rx_cause() tells why. consumed may be NULL.
 */
int iwx_mpa_rx_feed(struct iwx_mpa_rx *rx, const void *buf, size_t len, size_t *consumed);

/* Pull: how many bytes the parser takes next in one piece, and where they go. */
size_t iwx_mpa_rx_want(struct iwx_mpa_rx *rx, uint8_t **dst);

/* Pull: n (<= what want said) bytes were written to *dst. Returns as feed does. */
int iwx_mpa_rx_advance(struct iwx_mpa_rx *rx, size_t n);

/*
 * Pull: may the bytes want names be read straight there? Not a tagged message's last
 * segment into its target: a program may poll its last byte and answer in it as it lands
 * (riostream does), and advance would read the answer back for the CRC. Feed them instead.
 */
bool iwx_mpa_rx_may_pull(const struct iwx_mpa_rx *rx);

/*
 * A whole FPDU whose payload someone else placed already (the fast path), the parser between
 * FPDUs: it starts at rx->pos, with a leading marker when rx->pos is on a 512-byte mark. hdr
 * holds its ULPDU_LENGTH and DDP header (hdr_len bytes), payload its placed payload, trailer
 * its pad and CRC, all without markers (their FPDUPTRs are the caller's to check). Verified
 * (the CRC with the markers put back where they stood) and yielded as feed would, without
 * place() and byte by byte. Returns as feed does; -EINVAL when the parser is not between
 * FPDUs or the pieces do not make an FPDU.
 */
int iwx_mpa_rx_placed(struct iwx_mpa_rx *rx, const uint8_t *hdr, size_t hdr_len, uint8_t *payload,
		      const uint8_t *trailer, size_t trailer_len);

/*
 * The segment being received may not write its place target any more (the STag it was
 * placed through is gone): the rest of its payload goes to the parser's buffer, as if
 * place() had left it there, and what the target got stays. Nothing when no payload is
 * being placed.
 */
void iwx_mpa_rx_unplace(struct iwx_mpa_rx *rx);

/* Is the parser between FPDUs (nothing of the next one taken yet, no marker half read)? */
bool iwx_mpa_rx_at_boundary(const struct iwx_mpa_rx *rx);

/* The CRC word of the FPDU taken last (read or placed), as the wire has it; for segment(). */
void iwx_mpa_rx_last_crc(const struct iwx_mpa_rx *rx, uint8_t crc[IWX_MPA_CRC_LEN]);

/* Why the stream failed; seg (may be NULL) gets the segment concerned, if any. */
bool iwx_mpa_rx_failed(const struct iwx_mpa_rx *rx, struct iwx_term_cause *cause,
		       const struct iwx_ddp_seg **seg);

#endif /* IWX_MPA_RX_H */
