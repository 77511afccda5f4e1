// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for MPA Request/Reply frames (iwx_mpa_rr_decode/encode).
 *
 * Each input is used twice:
 *  - as a frame: decoded as a Request and as a Reply; the result must agree with the
 *    frame's fields, every prefix of a good frame must ask for more bytes, and
 *    re-encoding must give back the same frame (flag bits that mean nothing dropped)
 *    and decode to the same parameters;
 *  - as parameters for the encoder: a frame it accepts must decode to them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mpa.h"

#include "fuzz_check.h"

#define RR_HDR_LEN	sizeof(struct iwx_mpa_rr)
#define RR_MAX_LEN	(RR_HDR_LEN + IWX_MPA_MAX_PRIVDATA)
#define V2_LEN		sizeof(struct iwx_mpa_v2_ird_ord)


static bool params_eq(const struct iwx_mpa_rr_params *a, const struct iwx_mpa_rr_params *b)
{
	if (a->reply != b->reply || a->markers != b->markers || a->crc != b->crc ||
	    a->reject != b->reject || a->rev != b->rev || a->enhanced != b->enhanced ||
	    a->rdmap_ext != b->rdmap_ext)
		return false;
	if (a->enhanced && (a->ird != b->ird || a->ord != b->ord || a->p2p != b->p2p ||
			    a->rtr_send != b->rtr_send || a->rtr_write != b->rtr_write ||
			    a->rtr_read != b->rtr_read))
		return false;
	return a->pd_len == b->pd_len && (a->pd_len == 0 || !memcmp(a->pd, b->pd, a->pd_len));
}

/* Decode the first len bytes from a buffer of exactly that size, so ASan sees over-reads. */
static ssize_t decode_prefix(const uint8_t *data, size_t len, bool want_reply)
{
	struct iwx_mpa_rr_params p;
	uint8_t *copy = malloc(len ? len : 1);
	ssize_t r;

	CHECK(copy);
	memcpy(copy, data, len);
	r = iwx_mpa_rr_decode(copy, len, want_reply, &p);
	free(copy);
	return r;
}

static void check_decode(const uint8_t *data, size_t size, bool want_reply)
{
	const char *key = want_reply ? IWX_MPA_KEY_REP : IWX_MPA_KEY_REQ;
	size_t key_n = size < IWX_MPA_KEY_LEN ? size : IWX_MPA_KEY_LEN;
	struct iwx_mpa_rr_params p, q;
	uint8_t out[RR_MAX_LEN];
	size_t pd_total = 0, frame_len = 0;
	uint8_t flags = 0, rev = 0, meaningful;
	ssize_t r, e;

	if (size >= RR_HDR_LEN) {
		flags = data[16];
		rev = data[17];
		pd_total = (size_t)data[18] << 8 | data[19];
		frame_len = RR_HDR_LEN + pd_total;
	}
	r = iwx_mpa_rr_decode(data, size, want_reply, &p);

	/* the verdict follows from the fields, in the documented order */
	if (memcmp(data, key, key_n)) {
		CHECK(r == -EPROTO);
		return;
	}
	if (size < RR_HDR_LEN) {
		CHECK(r == 0);
		return;
	}
	if (rev != IWX_MPA_REV1 && rev != IWX_MPA_REV2) {
		CHECK(r == -EPROTONOSUPPORT);
		return;
	}
	if (pd_total > IWX_MPA_MAX_PRIVDATA) {
		CHECK(r == -EMSGSIZE);
		return;
	}
	if (size < frame_len) {
		CHECK(r == 0);
		return;
	}
	if (rev == IWX_MPA_REV2 && (flags & IWX_MPA_FLAG_ENHANCED) && pd_total < V2_LEN) {
		CHECK(r == -EBADMSG);
		return;
	}
	CHECK(r == (ssize_t)frame_len);

	CHECK(p.reply == want_reply);
	CHECK(p.rev == rev);
	CHECK(p.markers == !!(flags & IWX_MPA_FLAG_MARKERS));
	CHECK(p.crc == !!(flags & IWX_MPA_FLAG_CRC));
	CHECK(p.reject == (want_reply && (flags & IWX_MPA_FLAG_REJECT)));
	CHECK(p.enhanced == (rev == IWX_MPA_REV2 && (flags & IWX_MPA_FLAG_ENHANCED)));
	CHECK(p.rdmap_ext == !!(flags & IWX_MPA_FLAG_RDMAP_EXT));	/* iwx's bit, either frame */
	CHECK(p.pd_len + (p.enhanced ? V2_LEN : 0) == pd_total);
	CHECK(p.pd == data + RR_HDR_LEN + (p.enhanced ? V2_LEN : 0));
	if (p.enhanced) {
		uint16_t ird = data[20] << 8 | data[21], ord = data[22] << 8 | data[23];

		CHECK(p.ird == (ird & IWX_MPA_V2_VALUE_MASK));
		CHECK(p.ord == (ord & IWX_MPA_V2_VALUE_MASK));
		CHECK(p.p2p == !!(ird & IWX_MPA_V2_IRD_P2P));
		CHECK(p.rtr_send == !!(ird & IWX_MPA_V2_IRD_RTR_SEND));
		CHECK(p.rtr_write == !!(ord & IWX_MPA_V2_ORD_RTR_WRITE));
		CHECK(p.rtr_read == !!(ord & IWX_MPA_V2_ORD_RTR_READ));
	}

	/* a good frame cut short is incomplete, never an error */
	{
		size_t cuts[] = { 0, 1, IWX_MPA_KEY_LEN - 1, IWX_MPA_KEY_LEN, RR_HDR_LEN - 1,
				  RR_HDR_LEN, RR_HDR_LEN + 1, frame_len / 2, frame_len - 1 };

		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
			if (cuts[i] < frame_len)
				CHECK(decode_prefix(data, cuts[i], want_reply) == 0);
		CHECK(decode_prefix(data, frame_len, want_reply) == r);
	}

	/* re-encode: the same bytes, save flag bits that carry nothing */
	CHECK(iwx_mpa_rr_len(&p) == frame_len);
	CHECK(iwx_mpa_rr_encode(out, frame_len - 1, &p) == -ENOSPC);
	e = iwx_mpa_rr_encode(out, sizeof(out), &p);
	CHECK(e == r);
	meaningful = IWX_MPA_FLAG_MARKERS | IWX_MPA_FLAG_CRC | IWX_MPA_FLAG_RDMAP_EXT |
		     (want_reply ? IWX_MPA_FLAG_REJECT : 0) |
		     (rev == IWX_MPA_REV2 ? IWX_MPA_FLAG_ENHANCED : 0);
	CHECK(out[16] == (flags & meaningful));
	CHECK(!memcmp(out, data, 16));
	CHECK(!memcmp(out + 17, data + 17, frame_len - 17));

	CHECK(iwx_mpa_rr_decode(out, e, want_reply, &q) == e);
	CHECK(params_eq(&p, &q));
	/* and it is not the other kind of frame */
	CHECK(iwx_mpa_rr_decode(out, e, !want_reply, &q) == -EPROTO);
}

/* Parameters from the input's first bytes, private data from the rest. */
static void check_encode(const uint8_t *data, size_t size)
{
	struct iwx_mpa_rr_params p = { 0 }, q;
	uint8_t out[RR_MAX_LEN + 64];
	ssize_t e;
	bool valid;

	if (size < 8)
		return;
	p.reply = data[0] & 0x01;
	p.markers = data[0] & 0x02;
	p.crc = data[0] & 0x04;
	p.reject = data[0] & 0x08;
	p.enhanced = data[0] & 0x10;
	p.p2p = data[0] & 0x20;
	p.rtr_send = data[0] & 0x40;
	p.rtr_write = data[0] & 0x80;
	p.rtr_read = data[1] & 0x80;
	p.rdmap_ext = data[1] & 0x40;
	p.rev = data[1] & 0x3f;
	p.ird = data[2] << 8 | data[3];
	p.ord = data[4] << 8 | data[5];
	p.pd_len = data[6] << 8 | data[7];
	if (p.pd_len > size - 8)
		p.pd_len = size - 8;
	p.pd = p.pd_len ? data + 8 : NULL;

	valid = (p.rev == IWX_MPA_REV1 || p.rev == IWX_MPA_REV2) &&
		!(p.enhanced && p.rev != IWX_MPA_REV2) &&
		iwx_mpa_rr_len(&p) - RR_HDR_LEN <= IWX_MPA_MAX_PRIVDATA &&
		!(p.enhanced && (p.ird > IWX_MPA_V2_VALUE_MASK || p.ord > IWX_MPA_V2_VALUE_MASK));
	e = iwx_mpa_rr_encode(out, sizeof(out), &p);
	if (!valid) {
		CHECK(e == -EINVAL);
		return;
	}
	CHECK(e == (ssize_t)iwx_mpa_rr_len(&p));
	CHECK(iwx_mpa_rr_decode(out, e, p.reply, &q) == e);
	/* what the frame cannot carry: R in a Request */
	p.reject = p.reject && p.reply;
	CHECK(params_eq(&p, &q));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_decode(data, size, false);
	check_decode(data, size, true);
	check_encode(data, size);
	return 0;
}
