/* SPDX-License-Identifier: MIT */
/* MPA connection set-up (RFC 5044 §7, RFC 6581) and FPDU framing on transmit. */
#ifndef IWX_MPA_H
#define IWX_MPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "proto/wire.h"

/* An MPA Request or Reply, decoded. */
struct iwx_mpa_rr_params {
	bool		reply;		/* "MPA ID Rep Frame" */
	bool		markers;	/* M: the sender wants markers in what it receives */
	bool		crc;		/* C */
	bool		reject;		/* R (reply only) */
	uint8_t		rev;		/* 1 or 2 */
	bool		enhanced;	/* H: RFC 6581 IRD/ORD lead the private data (rev 2) */
	bool		rdmap_ext;	/* RFC 7306 offered (Request) or accepted (Reply): iwx's bit */
	/* RFC 6581 fields, meaningful when enhanced */
	uint16_t	ird, ord;
	bool		p2p, rtr_send, rtr_write, rtr_read;
	/* the application's private data (after the IRD/ORD words when enhanced) */
	const uint8_t	*pd;
	uint16_t	pd_len;
};

/* Bytes the frame for p takes on the wire. */
size_t iwx_mpa_rr_len(const struct iwx_mpa_rr_params *p);

/*
 * Encode p into out. Returns the frame length, -ENOSPC when cap is too small, or
 * -EINVAL for a frame MPA cannot carry (private data over 512 bytes, IRD/ORD over
 * 0x3fff, enhanced set-up with revision 1, an unknown revision).
 */
ssize_t iwx_mpa_rr_encode(uint8_t *out, size_t cap, const struct iwx_mpa_rr_params *p);

/*
 * Decode the frame at the start of buf. Returns its length once it is complete,
 * 0 when more bytes are needed, or a negative errno: -EPROTO wrong key (or a
 * Request where a Reply was expected), -EPROTONOSUPPORT unknown revision,
 * -EMSGSIZE private data over 512 bytes, -EBADMSG enhanced frame whose private
 * data cannot hold IRD/ORD. Every error is MPA's "invalid request/reply"
 * (IWX_MPA_EC_INVALID_RR). p->pd points into buf.
 */
ssize_t iwx_mpa_rr_decode(const uint8_t *buf, size_t len, bool want_reply,
			  struct iwx_mpa_rr_params *p);

/* What a connection uses once set-up is done, seen from one side. */
struct iwx_mpa_mode {
	uint8_t	rev;
	bool	crc;		/* both directions, if either side asked */
	bool	markers_rx;	/* this side asked for markers */
	bool	markers_tx;	/* the peer asked for markers */
};

struct iwx_mpa_mode iwx_mpa_mode_of(const struct iwx_mpa_rr_params *local,
				    const struct iwx_mpa_rr_params *peer);

/*
 * Largest ULPDU (DDP segment) that, framed, fits in one TCP segment of emss bytes
 * (RFC 5044 §6.1): EMSS less length field, CRC, pad and the markers that may fall in it.
 */
uint32_t iwx_mpa_mulpdu(uint32_t emss, bool markers);

/* Transmit side of a full-operation stream: knows where the next marker falls. */
struct iwx_mpa_tx {
	bool		crc;
	bool		markers;
	uint32_t	pos;		/* bytes sent since full operation began */
};

void iwx_mpa_tx_init(struct iwx_mpa_tx *tx, const struct iwx_mpa_mode *mode);

/*
 * The bytes an FPDU's CRC covers, in wire order, with the markers the stream has where it
 * reaches a 512-byte mark (RFC 5044 §4.3): what transmit writes, and what receive puts back
 * around bytes placed without markers. Each run between markers, and each marker, goes to
 * emit.
 */
struct iwx_mpa_marking {
	uint32_t	pos;		/* stream position of the next byte */
	uint32_t	len_pos;	/* of the FPDU's ULPDU_LENGTH field */
	bool		markers;
	void		(*emit)(void *ctx, const void *buf, size_t len);
	void		*ctx;
};

/* An FPDU starts at pos: a marker there leads it (FPDUPTR 0). */
void iwx_mpa_marking_start(struct iwx_mpa_marking *m, uint32_t pos, bool markers,
			   void (*emit)(void *ctx, const void *buf, size_t len), void *ctx);

/*
 * The next len bytes of the FPDU (ULPDU_LENGTH, ULPDU, pad; never the CRC), and a marker
 * wherever they reach a mark: what follows them, the CRC included, is the FPDU's.
 */
void iwx_mpa_marking_put(struct iwx_mpa_marking *m, const void *buf, size_t len);

/* Bytes the FPDU for a ulpdu_len-byte ULPDU takes on the wire if sent next. */
size_t iwx_mpa_fpdu_len(const struct iwx_mpa_tx *tx, size_t ulpdu_len);

/*
 * Frame one ULPDU, given as hdr (the DDP/RDMAP header) followed by payload, into
 * out: length field, markers, pad and CRC. Returns the FPDU length and advances
 * the stream position; -EMSGSIZE when the ULPDU exceeds 65535 bytes, or with
 * markers when the whole FPDU does (a marker could not point back to its header);
 * -ENOSPC when cap is too small.
 */
ssize_t iwx_mpa_fpdu_build(struct iwx_mpa_tx *tx, uint8_t *out, size_t cap,
			   const void *hdr, size_t hdr_len,
			   const void *payload, size_t payload_len);

/* The same, the payload in npiece pieces (payload_len bytes in all). */
ssize_t iwx_mpa_fpdu_buildv(struct iwx_mpa_tx *tx, uint8_t *out, size_t cap,
			    const void *hdr, size_t hdr_len,
			    const struct iovec *piece, unsigned npiece, size_t payload_len);

#define IWX_MPA_HEAD_MAX	(IWX_MPA_HDR_LEN + IWX_DDP_UNTAGGED_HDR_LEN)

/*
 * Frame one ULPDU on a stream without markers, its payload left where it is (to be sent
 * from there): the FPDU's head (length field and hdr) to head, its tail (pad and CRC) to
 * tail, the CRC computed over the payload's pieces in place. The head's length, *tail_len
 * the tail's; advances the stream position. -EINVAL with markers; -EMSGSIZE as above.
 */
ssize_t iwx_mpa_fpdu_frame(struct iwx_mpa_tx *tx, uint8_t head[IWX_MPA_HEAD_MAX],
			   const void *hdr, size_t hdr_len,
			   const struct iovec *piece, unsigned npiece, size_t payload_len,
			   uint8_t tail[IWX_MPA_TAIL_MAX], size_t *tail_len);

#endif /* IWX_MPA_H */
