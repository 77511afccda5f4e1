// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for placement from the SCTP packet (control/engine/sctp_place.c):
 * before usrsctp sees a packet that arrived on a path, the placer of its association
 * places whole DATA chunks' payload and the chunk shrinks to what the placer left.
 *
 * Input: byte 0, what the placer takes of each whole chunk it is offered (0: nothing;
 * else that many bytes, at most the chunk's user data); the rest is the packet, its
 * common header's ports and Verification Tag those of the placer's association when
 * byte 0's top bit is clear (else as they come: another association, or none).
 *
 * What must hold, besides ASan's and UBSan's silence: every chunk offered lies whole in
 * the packet and is a DATA chunk with U, B and E; the packet comes back no longer, with
 * its chunks in the same order and count; each placed chunk lost exactly what was placed
 * (its length field says so, its header and the rest of its bytes kept); every other
 * chunk, and whatever follows the last whole one, byte for byte as it came.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "proto/wire.h"
#include "sctp_place.h"

#include "fuzz_check.h"

#define MAX_PKT		9000
#define MAX_CHUNKS	(MAX_PKT / 4)

static struct iwx_sctp_path path;
static struct iwx_sctp_placer placer;
static uint8_t take;			/* what the placer takes of each chunk */
static struct {
	size_t	off;			/* the chunk's offset in the packet as it came */
	size_t	placed;
} offered[MAX_CHUNKS];
static unsigned noffered;

static size_t place(struct iwx_sctp_placer *pl, uint32_t tsn, uint16_t sid, const uint8_t *data,
		    size_t len)
{
	static uint8_t sink[MAX_PKT];
	size_t n;

	(void)pl, (void)tsn, (void)sid;
	if (!data) {
		CHECK(len == 0);
		return 0;
	}
	CHECK(noffered < MAX_CHUNKS);
	n = take < len ? take : len;
	memcpy(sink, data, len);	/* ASan: all of it is in the packet */
	offered[noffered].placed = n;
	return offered[noffered++].placed;
}

/* The chunk at off of p (len bytes): its length, or 0 when no whole chunk is there. */
static size_t chunk_len(const uint8_t *p, size_t len, size_t off)
{
	size_t clen;

	if (len - off < 4)
		return 0;
	clen = (size_t)p[off + 2] << 8 | p[off + 3];
	return clen >= 4 && clen <= len - off ? clen : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pkt[MAX_PKT], in[MAX_PKT];
	struct iwx_sctp_stats st = { 0 };
	const struct iwx_sctp_common *h = (const void *)in;
	size_t len, out, off = sizeof(*h), o = sizeof(*h);
	unsigned k = 0;

	if (size < 1 + sizeof(*h) || size - 1 > MAX_PKT)
		return 0;
	if (!placer.place) {
		path.token = &path;
		placer = (struct iwx_sctp_placer){ .token = &path, .lport = htons(9899),
						   .pport = htons(40000), .vtag = htonl(0x1234abcd),
						   .place = place };
		iwx_sctp_placer_add(&placer);
	}
	take = data[0] & 0x7f;
	len = size - 1;
	memcpy(in, data + 1, len);
	if (!(data[0] & 0x80)) {
		struct iwx_sctp_common *c = (void *)in;

		c->sport = placer.pport;
		c->dport = placer.lport;
		c->vtag = placer.vtag;
	}
	memcpy(pkt, in, len);
	noffered = 0;
	out = iwx_sctp_place(&path, pkt, len, &st);
	CHECK(out <= len);
	if (h->sport != placer.pport || h->dport != placer.lport || h->vtag != placer.vtag) {
		CHECK(out == len && !memcmp(pkt, in, len) && !noffered);
		return 0;
	}
	CHECK(!memcmp(pkt, in, sizeof(*h)));
	/* chunk by chunk, as it came (off) and as it is (o) */
	for (size_t clen; (clen = chunk_len(in, len, off)); ) {
		size_t padded = (clen + 3) & ~(size_t)3, placed = 0;
		bool data_whole = in[off] == IWX_SCTP_CHUNK_DATA &&
				  clen > sizeof(struct iwx_sctp_data) && padded <= len - off &&
				  (in[off + 1] & (IWX_SCTP_DATA_U | IWX_SCTP_DATA_B | IWX_SCTP_DATA_E)) ==
				  (IWX_SCTP_DATA_U | IWX_SCTP_DATA_B | IWX_SCTP_DATA_E);

		if (in[off] == IWX_SCTP_CHUNK_DATA && clen >= sizeof(struct iwx_sctp_data) &&
		    data_whole) {
			CHECK(k < noffered);
			placed = offered[k++].placed;
		}
		if (padded > len - off)
			padded = len - off;
		if (placed) {
			size_t keep = clen - placed;

			CHECK(chunk_len(pkt, out, o) == keep);
			CHECK(!memcmp(pkt + o, in + off, 2) && !memcmp(pkt + o + 4, in + off + 4, keep - 4));
			o += (keep + 3) & ~(size_t)3;
		} else {
			CHECK(!memcmp(pkt + o, in + off, padded));
			o += padded;
		}
		off += padded;
	}
	CHECK(k == noffered);
	CHECK(out - o == len - off && !memcmp(pkt + o, in + off, len - off));
	CHECK(st.placed_chunks <= noffered);
	return 0;
}
