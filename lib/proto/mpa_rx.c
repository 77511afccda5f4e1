// SPDX-License-Identifier: MIT
/* Receive state machine over a full-operation MPA stream (RFC 5044 §4-§6, RFC 5041 §7). */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/param.h>	/* MIN */

#include "proto/crc32c.h"
#include "proto/mpa_rx.h"
#include "util/place_copy.h"

static void start_fpdu(struct iwx_mpa_rx *rx)
{
	rx->state = IWX_RX_HDR;
	rx->hdr_got = 0;
	rx->hdr_want = IWX_MPA_HDR_LEN;
	rx->got = 0;
	rx->dst = NULL;
	rx->pending = false;
	rx->crc_state = IWX_CRC32C_INIT;
}

void iwx_mpa_rx_init(struct iwx_mpa_rx *rx, const struct iwx_mpa_mode *mode,
		     const struct iwx_mpa_rx_ops *ops, void *ctx)
{
	memset(rx, 0, offsetof(struct iwx_mpa_rx, drop));
	rx->crc = mode->crc;
	rx->markers = mode->markers_rx;
	rx->ops = ops;
	rx->ctx = ctx;
	start_fpdu(rx);
}

static void fail(struct iwx_mpa_rx *rx, struct iwx_term_cause cause, bool with_seg)
{
	rx->state = IWX_RX_FAILED;
	rx->cause = cause;
	rx->cause_has_seg = with_seg;
}

static uint16_t ulpdu_len(const struct iwx_mpa_rx *rx)
{
	uint16_t be;

	memcpy(&be, rx->hdr, sizeof(be));
	return ntohs(be);
}

static bool at_marker(const struct iwx_mpa_rx *rx)
{
	return rx->markers && (rx->marker_got > 0 || rx->pos % IWX_MPA_MARKER_INTERVAL == 0);
}

/* Bytes of the current state that may be taken before the next marker. */
static size_t clip_to_marker(const struct iwx_mpa_rx *rx, size_t n)
{
	if (!rx->markers)
		return n;
	return MIN(n, IWX_MPA_MARKER_INTERVAL - rx->pos % IWX_MPA_MARKER_INTERVAL);
}

size_t iwx_mpa_rx_want(struct iwx_mpa_rx *rx, uint8_t **dst)
{
	if (rx->state == IWX_RX_FAILED) {
		*dst = NULL;
		return 0;
	}
	if (at_marker(rx)) {
		*dst = rx->marker + rx->marker_got;
		return IWX_MPA_MARKER_LEN - rx->marker_got;
	}
	switch (rx->state) {
	case IWX_RX_HDR:
		*dst = rx->hdr + rx->hdr_got;
		return clip_to_marker(rx, rx->hdr_want - rx->hdr_got);
	case IWX_RX_PAYLOAD:
		if (!rx->dst) {
			*dst = rx->drop;
			return clip_to_marker(rx, MIN(rx->seg.len - rx->got, sizeof(rx->drop)));
		}
		*dst = rx->dst + rx->got;
		return clip_to_marker(rx, rx->seg.len - rx->got);
	default:
		*dst = rx->trailer + rx->trailer_got;
		return clip_to_marker(rx, rx->trailer_len - rx->trailer_got);
	}
}

/* RFC 5044 §4.3: a marker points back at its FPDU's ULPDU_LENGTH, or is 0 right in front of it. */
static int take_marker(struct iwx_mpa_rx *rx)
{
	struct iwx_mpa_marker m;
	uint32_t at = rx->pos - IWX_MPA_MARKER_LEN;
	bool leading = rx->state == IWX_RX_HDR && rx->hdr_got == 0;
	uint32_t want = leading ? 0 : at - rx->len_pos;

	memcpy(&m, rx->marker, sizeof(m));
	rx->marker_got = 0;
	rx->stats.markers++;
	/* want can pass 0xffff only in an FPDU no sender may build (see iwx_mpa_fpdu_build) */
	if (ntohs(m.fpduptr) != want) {
		fail(rx, IWX_CAUSE_MPA(IWX_MPA_EC_MARKER), false);
		return -EPROTO;
	}
	return 0;
}

/* The DDP header is complete: decode it and find where the payload goes. */
static void take_header(struct iwx_mpa_rx *rx)
{
	struct iwx_term_cause cause;
	uint16_t len = ulpdu_len(rx);
	int err;

	rx->state = IWX_RX_PAYLOAD;
	/* decode reads only the header bytes; the payload is still to come */
	err = iwx_ddp_decode(rx->hdr + IWX_MPA_HDR_LEN, len, &rx->seg, &cause);
	rx->seg.payload = NULL;
	if (err) {
		rx->pending = true;
		rx->pending_cause = cause;
		/* drop whatever of the ULPDU is left after the bytes read as header */
		rx->seg.len = len - (rx->hdr_got - IWX_MPA_HDR_LEN);
		return;
	}
	if (rx->ops && rx->ops->place) {
		if (rx->ops->place(rx->ctx, &rx->seg, &rx->dst, &cause)) {
			rx->dst = NULL;
			rx->pending = true;
			rx->pending_cause = cause;
			return;
		}
		if (rx->dst)
			rx->stats.placed++;
	}
	if (!rx->dst)
		rx->dst = rx->buf;
}

static void grow_header(struct iwx_mpa_rx *rx)
{
	uint16_t len;

	if (rx->hdr_got < rx->hdr_want)
		return;
	len = ulpdu_len(rx);
	if (rx->hdr_got == IWX_MPA_HDR_LEN) {
		/* next: the DDP control byte, which tells the header's length */
		rx->hdr_want = IWX_MPA_HDR_LEN + MIN(len, 1);
		if (len > 0)
			return;
	} else if (rx->hdr_got == IWX_MPA_HDR_LEN + 1) {
		rx->hdr_want = IWX_MPA_HDR_LEN + MIN(len, iwx_ddp_hdr_len(rx->hdr[IWX_MPA_HDR_LEN]));
		if (rx->hdr_got < rx->hdr_want)
			return;
	}
	take_header(rx);
}

static void start_trailer(struct iwx_mpa_rx *rx)
{
	rx->state = IWX_RX_TRAILER;
	rx->trailer_got = 0;
	rx->trailer_len = iwx_mpa_pad_len(ulpdu_len(rx)) + IWX_MPA_CRC_LEN;
}

/* Pad and CRC are in: give the verdict on the whole FPDU. */
static int finish_fpdu(struct iwx_mpa_rx *rx)
{
	uint32_t pad = rx->trailer_len - IWX_MPA_CRC_LEN;
	uint32_t sent = iwx_crc32c_get(rx->trailer + pad);

	rx->stats.fpdus++;
	if (rx->crc && iwx_crc32c_final(rx->crc_state) != sent) {
		fail(rx, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), false);
		return -EPROTO;
	}
	if (rx->pending) {
		/* a header too short to hold a DDP header is MPA's; the rest concern the segment */
		fail(rx, rx->pending_cause, rx->pending_cause.layer != IWX_LAYER_LLP);
		return -EPROTO;
	}
	rx->seg.payload = rx->dst;
	start_fpdu(rx);
	if (rx->ops && rx->ops->segment)
		return rx->ops->segment(rx->ctx, &rx->seg);
	return 0;
}

/*
 * n (> 0, <= what want said) bytes taken, src a copy of them for the CRC: feed's own,
 * never a place target when it has one. A program may poll a byte of its target and
 * write it as soon as it lands (riostream answers a Write in its last byte): read back
 * from there, the CRC would fail an FPDU that came whole.
 */
static int take(struct iwx_mpa_rx *rx, const uint8_t *src, size_t n)
{
	rx->stats.bytes += n;

	if (at_marker(rx)) {
		rx->crc_state = iwx_crc32c_update(rx->crc_state, src, n);
		rx->marker_got += n;
		rx->pos += n;
		return rx->marker_got == IWX_MPA_MARKER_LEN ? take_marker(rx) : 0;
	}

	switch (rx->state) {
	case IWX_RX_HDR:
		if (rx->hdr_got == 0)
			rx->len_pos = rx->pos;
		rx->crc_state = iwx_crc32c_update(rx->crc_state, src, n);
		rx->hdr_got += n;
		rx->pos += n;
		grow_header(rx);
		if (rx->state == IWX_RX_PAYLOAD && rx->seg.len == 0)
			start_trailer(rx);
		return 0;
	case IWX_RX_PAYLOAD:
		rx->crc_state = iwx_crc32c_update(rx->crc_state, src, n);
		rx->got += n;
		rx->pos += n;
		if (rx->got == rx->seg.len)
			start_trailer(rx);
		return 0;
	default: {
		/* the CRC covers the pad but not itself */
		uint32_t pad = rx->trailer_len - IWX_MPA_CRC_LEN;

		if (rx->trailer_got < pad)
			rx->crc_state = iwx_crc32c_update(rx->crc_state, src,
							  MIN(n, pad - rx->trailer_got));
		rx->trailer_got += n;
		rx->pos += n;
		return rx->trailer_got == rx->trailer_len ? finish_fpdu(rx) : 0;
	}
	}
}

int iwx_mpa_rx_advance(struct iwx_mpa_rx *rx, size_t n)
{
	uint8_t *dst;
	size_t max = iwx_mpa_rx_want(rx, &dst);

	if (max == 0)
		return -EPROTO;
	if (n > max)
		return -EINVAL;
	if (n == 0)
		return 0;
	return take(rx, dst, n);	/* pulled: where they were written is all there is */
}

int iwx_mpa_rx_feed(struct iwx_mpa_rx *rx, const void *buf, size_t len, size_t *consumed)
{
	const uint8_t *p = buf;
	size_t done = 0;
	int err = 0;

	while (done < len) {
		uint8_t *dst;
		size_t n = iwx_mpa_rx_want(rx, &dst);

		if (n == 0) {
			err = -EPROTO;
			break;
		}
		n = MIN(n, len - done);
		if (rx->state == IWX_RX_PAYLOAD && rx->dst && !at_marker(rx))
			iwx_place_copy(dst, p + done, n);	/* a place target: perhaps polled */
		else
			memcpy(dst, p + done, n);	/* the parser's own bytes */
		err = take(rx, p + done, n);
		done += n;
		if (err)
			break;
	}
	if (consumed)
		*consumed = done;
	return err;
}

/* A run of the FPDU, or a marker put back where it stood, into the CRC. */
static void crc_run(void *ctx, const void *buf, size_t len)
{
	uint32_t *c = ctx;

	*c = iwx_crc32c_update(*c, buf, len);
}

int iwx_mpa_rx_placed(struct iwx_mpa_rx *rx, const uint8_t *hdr, size_t hdr_len, uint8_t *payload,
		      const uint8_t *trailer, size_t trailer_len)
{
	uint32_t ulen, pad, len, markers = 0;
	bool crc_bad = false;
	struct iwx_term_cause cause;

	if (!iwx_mpa_rx_at_boundary(rx) || hdr_len < IWX_MPA_HDR_LEN)
		return -EINVAL;
	ulen = (uint32_t)hdr[0] << 8 | hdr[1];
	pad = iwx_mpa_pad_len(ulen);
	if (ulen < hdr_len - IWX_MPA_HDR_LEN || trailer_len != pad + IWX_MPA_CRC_LEN ||
	    iwx_ddp_decode(hdr + IWX_MPA_HDR_LEN, ulen, &rx->seg, &cause) ||
	    rx->seg.len != ulen - (hdr_len - IWX_MPA_HDR_LEN))
		return -EINVAL;
	len = IWX_MPA_HDR_LEN + ulen + pad + IWX_MPA_CRC_LEN;
	if (rx->markers)
		markers = iwx_mpa_markers_in(rx->pos, len);
	if (rx->crc) {
		/* the markers were taken out, but the CRC covers them (RFC 5044 §4.3) */
		struct iwx_mpa_marking m;
		uint32_t c = IWX_CRC32C_INIT;

		iwx_mpa_marking_start(&m, rx->pos, rx->markers, crc_run, &c);
		iwx_mpa_marking_put(&m, hdr, hdr_len);
		iwx_mpa_marking_put(&m, payload, rx->seg.len);
		iwx_mpa_marking_put(&m, trailer, pad);
		crc_bad = iwx_crc32c_final(c) != iwx_crc32c_get(trailer + pad);
	}
	/* a marker leading the FPDU stands before its ULPDU_LENGTH */
	rx->len_pos = rx->pos + (markers ? iwx_mpa_marked_off(rx->pos, 0) : 0);
	len += IWX_MPA_MARKER_LEN * markers;
	rx->pos += len;
	rx->stats.bytes += len;
	rx->stats.markers += markers;
	rx->stats.fpdus++;
	rx->stats.placed++;
	memcpy(rx->trailer, trailer, trailer_len);	/* as if read: last_crc */
	rx->trailer_len = trailer_len;
	if (crc_bad) {
		fail(rx, IWX_CAUSE_MPA(IWX_MPA_EC_CRC), false);
		return -EPROTO;
	}
	rx->seg.payload = payload;
	start_fpdu(rx);
	if (rx->ops && rx->ops->segment)
		return rx->ops->segment(rx->ctx, &rx->seg);
	return 0;
}

void iwx_mpa_rx_unplace(struct iwx_mpa_rx *rx)
{
	if (rx->state == IWX_RX_PAYLOAD && rx->dst && rx->dst != rx->buf)
		rx->dst = rx->buf;
}

bool iwx_mpa_rx_may_pull(const struct iwx_mpa_rx *rx)
{
	return !(rx->state == IWX_RX_PAYLOAD && rx->seg.tagged && rx->seg.last &&
		 rx->dst != rx->buf);
}

bool iwx_mpa_rx_at_boundary(const struct iwx_mpa_rx *rx)
{
	return rx->state == IWX_RX_HDR && rx->hdr_got == 0 && rx->marker_got == 0;
}

void iwx_mpa_rx_last_crc(const struct iwx_mpa_rx *rx, uint8_t crc[IWX_MPA_CRC_LEN])
{
	memcpy(crc, rx->trailer + rx->trailer_len - IWX_MPA_CRC_LEN, IWX_MPA_CRC_LEN);
}

bool iwx_mpa_rx_failed(const struct iwx_mpa_rx *rx, struct iwx_term_cause *cause,
		       const struct iwx_ddp_seg **seg)
{
	if (rx->state != IWX_RX_FAILED)
		return false;
	if (cause)
		*cause = rx->cause;
	if (seg)
		*seg = rx->cause_has_seg ? &rx->seg : NULL;
	return true;
}
