// SPDX-License-Identifier: MIT
/* FPDU framing on transmit (RFC 5044 §4): length, ULPDU, pad, markers, CRC32c. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <iwx/crc32c.h>
#include <iwx/mpa.h>

void iwx_mpa_tx_init(struct iwx_mpa_tx *tx, const struct iwx_mpa_mode *mode)
{
	tx->crc = mode->crc;
	tx->markers = mode->markers_tx;
	tx->pos = 0;
}

static uint32_t to_next_marker(uint32_t pos)
{
	return IWX_MPA_MARKER_INTERVAL - pos % IWX_MPA_MARKER_INTERVAL;
}

size_t iwx_mpa_fpdu_len(const struct iwx_mpa_tx *tx, size_t ulpdu_len)
{
	size_t len = IWX_MPA_HDR_LEN + ulpdu_len + iwx_mpa_pad_len(ulpdu_len) + IWX_MPA_CRC_LEN;

	return tx->markers ? len + IWX_MPA_MARKER_LEN * iwx_mpa_markers_in(tx->pos, len) : len;
}

struct fpdu_writer {
	uint8_t		*out;
	size_t		at;
	uint32_t	pos;
	uint32_t	len_pos;
	bool		markers;
};

static void put_marker(struct fpdu_writer *w, uint16_t fpduptr)
{
	struct iwx_mpa_marker m = { .rsvd = 0, .fpduptr = htons(fpduptr) };

	memcpy(w->out + w->at, &m, sizeof(m));
	w->at += sizeof(m);
	w->pos += sizeof(m);
}

/* Copy n bytes of the FPDU, putting a marker wherever the stream reaches a 512-byte mark. */
static void put(struct fpdu_writer *w, const void *src, size_t n)
{
	const uint8_t *s = src;

	while (n > 0) {
		size_t run = n;

		if (w->markers) {
			if (w->pos % IWX_MPA_MARKER_INTERVAL == 0)
				put_marker(w, w->pos - w->len_pos);
			if (run > to_next_marker(w->pos))
				run = to_next_marker(w->pos);
		}
		memcpy(w->out + w->at, s, run);
		w->at += run;
		w->pos += run;
		s += run;
		n -= run;
	}
}

ssize_t iwx_mpa_fpdu_build(struct iwx_mpa_tx *tx, uint8_t *out, size_t cap,
			   const void *hdr, size_t hdr_len,
			   const void *payload, size_t payload_len)
{
	static const uint8_t zeros[4];
	size_t ulpdu_len = hdr_len + payload_len;
	struct fpdu_writer w = { .out = out, .pos = tx->pos, .markers = tx->markers };
	uint16_t be_len = htons(ulpdu_len);
	size_t fpdu_len = iwx_mpa_fpdu_len(tx, ulpdu_len);
	uint32_t crc = 0;

	/* a marker's 16-bit FPDUPTR must reach back to the header: markers cap the FPDU */
	if (ulpdu_len > IWX_MPA_MAX_ULPDU || (tx->markers && fpdu_len > IWX_MPA_MAX_ULPDU))
		return -EMSGSIZE;
	if (cap < fpdu_len)
		return -ENOSPC;

	/* A marker where the FPDU starts points at the header that follows it: FPDUPTR 0. */
	if (w.markers && w.pos % IWX_MPA_MARKER_INTERVAL == 0)
		put_marker(&w, 0);
	w.len_pos = w.pos;

	put(&w, &be_len, sizeof(be_len));
	put(&w, hdr, hdr_len);
	put(&w, payload, payload_len);
	put(&w, zeros, iwx_mpa_pad_len(ulpdu_len));
	/* A marker that falls right before the CRC is inside the FPDU and covered by it. */
	if (w.markers && w.pos % IWX_MPA_MARKER_INTERVAL == 0)
		put_marker(&w, w.pos - w.len_pos);
	if (tx->crc)
		crc = iwx_crc32c(out, w.at);
	iwx_crc32c_put(out + w.at, crc);
	w.at += IWX_MPA_CRC_LEN;

	tx->pos = w.pos + IWX_MPA_CRC_LEN;
	return w.at;
}
