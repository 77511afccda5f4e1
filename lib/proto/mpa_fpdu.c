// SPDX-License-Identifier: MIT
/* FPDU framing on transmit (RFC 5044 §4): length, ULPDU, pad, markers, CRC32c. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "proto/crc32c.h"
#include "proto/mpa.h"

void iwx_mpa_tx_init(struct iwx_mpa_tx *tx, const struct iwx_mpa_mode *mode)
{
	tx->crc = mode->crc;
	tx->markers = mode->markers_tx;
	tx->pos = 0;
}

static void put_marker(struct iwx_mpa_marking *m, uint16_t fpduptr)
{
	struct iwx_mpa_marker mk = { .rsvd = 0, .fpduptr = htons(fpduptr) };

	m->emit(m->ctx, &mk, sizeof(mk));
	m->pos += sizeof(mk);
}

size_t iwx_mpa_fpdu_len(const struct iwx_mpa_tx *tx, size_t ulpdu_len)
{
	size_t len = iwx_mpa_unmarked_len(ulpdu_len);

	return tx->markers ? len + IWX_MPA_MARKER_LEN * iwx_mpa_markers_in(tx->pos, len) : len;
}

void iwx_mpa_marking_start(struct iwx_mpa_marking *m, uint32_t pos, bool markers,
			   void (*emit)(void *ctx, const void *buf, size_t len), void *ctx)
{
	*m = (struct iwx_mpa_marking){ .pos = pos, .markers = markers, .emit = emit, .ctx = ctx };
	/* A marker where the FPDU starts points at the header that follows it: FPDUPTR 0. */
	if (markers && pos % IWX_MPA_MARKER_INTERVAL == 0)
		put_marker(m, 0);
	m->len_pos = m->pos;
}

void iwx_mpa_marking_put(struct iwx_mpa_marking *m, const void *buf, size_t len)
{
	const uint8_t *s = buf;

	while (len > 0) {
		size_t run = len;

		/* never on a mark here: the marker due there was put already */
		if (m->markers && run > iwx_mpa_marker_first(m->pos))
			run = iwx_mpa_marker_first(m->pos);
		m->emit(m->ctx, s, run);
		m->pos += run;
		s += run;
		len -= run;
		/*
		 * The CRC or more of the FPDU follows, so a marker due here is inside it,
		 * one right before the CRC included (covered by it, RFC 5044 §4.3).
		 */
		if (m->markers && m->pos % IWX_MPA_MARKER_INTERVAL == 0)
			put_marker(m, m->pos - m->len_pos);
	}
}

static void copy_out(void *ctx, const void *buf, size_t len)
{
	uint8_t **out = ctx;

	memcpy(*out, buf, len);
	*out += len;
}

static const uint8_t zeros[4];

ssize_t iwx_mpa_fpdu_buildv(struct iwx_mpa_tx *tx, uint8_t *out, size_t cap,
			    const void *hdr, size_t hdr_len,
			    const struct iovec *piece, unsigned npiece, size_t payload_len)
{
	size_t ulpdu_len = hdr_len + payload_len;
	struct iwx_mpa_marking m;
	uint8_t *at = out;
	uint16_t be_len = htons(ulpdu_len);
	size_t fpdu_len = iwx_mpa_fpdu_len(tx, ulpdu_len);
	uint32_t crc = 0;

	/* a marker's 16-bit FPDUPTR must reach back to the header: markers cap the FPDU */
	if (ulpdu_len > IWX_MPA_MAX_ULPDU || (tx->markers && fpdu_len > IWX_MPA_MAX_ULPDU))
		return -EMSGSIZE;
	if (cap < fpdu_len)
		return -ENOSPC;

	iwx_mpa_marking_start(&m, tx->pos, tx->markers, copy_out, &at);
	iwx_mpa_marking_put(&m, &be_len, sizeof(be_len));
	iwx_mpa_marking_put(&m, hdr, hdr_len);
	for (unsigned i = 0; i < npiece; i++)
		iwx_mpa_marking_put(&m, piece[i].iov_base, piece[i].iov_len);
	iwx_mpa_marking_put(&m, zeros, iwx_mpa_pad_len(ulpdu_len));
	if (tx->crc)
		crc = iwx_crc32c(out, at - out);
	iwx_crc32c_put(at, crc);
	at += IWX_MPA_CRC_LEN;

	tx->pos = m.pos + IWX_MPA_CRC_LEN;
	return at - out;
}

ssize_t iwx_mpa_fpdu_build(struct iwx_mpa_tx *tx, uint8_t *out, size_t cap,
			   const void *hdr, size_t hdr_len,
			   const void *payload, size_t payload_len)
{
	struct iovec piece = { .iov_base = (void *)payload, .iov_len = payload_len };

	return iwx_mpa_fpdu_buildv(tx, out, cap, hdr, hdr_len, &piece, 1, payload_len);
}

ssize_t iwx_mpa_fpdu_frame(struct iwx_mpa_tx *tx, uint8_t head[IWX_MPA_HEAD_MAX],
			   const void *hdr, size_t hdr_len,
			   const struct iovec *piece, unsigned npiece, size_t payload_len,
			   uint8_t tail[IWX_MPA_TAIL_MAX], size_t *tail_len)
{
	size_t ulpdu_len = hdr_len + payload_len, pad = iwx_mpa_pad_len(ulpdu_len);
	size_t head_len = IWX_MPA_HDR_LEN + hdr_len;
	uint32_t crc = 0;

	if (tx->markers)
		return -EINVAL;
	if (ulpdu_len > IWX_MPA_MAX_ULPDU || hdr_len > IWX_DDP_UNTAGGED_HDR_LEN)
		return -EMSGSIZE;
	head[0] = ulpdu_len >> 8;
	head[1] = ulpdu_len;
	memcpy(head + IWX_MPA_HDR_LEN, hdr, hdr_len);
	memset(tail, 0, pad);
	if (tx->crc) {
		uint32_t state = iwx_crc32c_update(IWX_CRC32C_INIT, head, head_len);

		for (unsigned i = 0; i < npiece; i++)
			state = iwx_crc32c_update(state, piece[i].iov_base, piece[i].iov_len);
		crc = iwx_crc32c_final(iwx_crc32c_update(state, tail, pad));
	}
	iwx_crc32c_put(tail + pad, crc);
	*tail_len = pad + IWX_MPA_CRC_LEN;
	tx->pos += head_len + payload_len + *tail_len;
	return head_len;
}
