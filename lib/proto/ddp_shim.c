// SPDX-License-Identifier: MIT
/* The SCTP DDP adaptation's DDP header (draft-otis-sctp-ddp-00 §2.2) carrying RDMAP. */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "proto/ddp_shim.h"
#include "proto/rdmap.h"

_Static_assert(sizeof(struct iwx_shim_hdr) == IWX_SHIM_SETUP_HDR_LEN, "fixed part");
_Static_assert(sizeof(struct iwx_shim_hdr) + sizeof(struct iwx_shim_rdmap_ctx) ==
	       IWX_SHIM_UNTAGGED_HDR_LEN, "untagged header");

size_t iwx_shim_hdr_encode(uint8_t *hdr, const struct iwx_ddp_msg *msg, uint32_t off, bool last)
{
	struct iwx_shim_rdmap_ctx ctx;
	struct iwx_shim_hdr h;
	struct iwx_ddp_seg seg;
	size_t hlen;

	iwx_ddp_seg_of_msg(&seg, msg, off, last);
	hlen = iwx_shim_hdr_len(seg.tagged);
	h = (struct iwx_shim_hdr){
		.mode = seg.tagged ? IWX_SHIM_MODE_TAG : IWX_SHIM_MODE_ANONYMOUS,
		/* draft-otis-sctp-ddp §3.2.2 S2: only a message's last chunk carries its signal */
		.flags = seg.last ? IWX_SHIM_FLAG_DISCLOSE : 0,
		.hdr_len = htobe16(hlen),
		.tag = htobe32(seg.tagged ? seg.stag : seg.inval_stag),
		.offset = htobe64(seg.tagged ? seg.to : seg.mo),
	};
	ctx = (struct iwx_shim_rdmap_ctx){
		.rdmap_ctrl = seg.rdmap_ctrl,
		.qn = htobe32(seg.qn),
		.msn = htobe32(seg.msn),
	};
	memcpy(hdr, &h, sizeof(h));
	/* a tagged chunk's Context ends after the control word */
	memcpy(hdr + sizeof(h), &ctx, hlen - sizeof(h));
	return hlen;
}

size_t iwx_shim_setup_hdr(uint8_t *hdr)
{
	struct iwx_shim_hdr h = {
		/* draft-otis-sctp-ddp §3.2.2 S2: a negotiation message is not placed */
		.mode = IWX_SHIM_MODE_ANONYMOUS,
		/* the frame is a whole message in one chunk */
		.flags = IWX_SHIM_FLAG_DISCLOSE,
		.hdr_len = htobe16(IWX_SHIM_SETUP_HDR_LEN),
	};

	memcpy(hdr, &h, sizeof(h));
	return sizeof(h);
}

uint16_t iwx_shim_stream(uint8_t opcode)
{
	if (iwx_rdmap_opcode_tagged(opcode))
		return IWX_SHIM_STREAM_TAGGED;
	return IWX_SHIM_STREAM_UNTAGGED + iwx_rdmap_opcode_qn(opcode);
}

uint32_t iwx_shim_max_payload(uint32_t maxseg, bool tagged)
{
	uint32_t hlen = iwx_shim_hdr_len(tagged);

	if (maxseg > IWX_SHIM_MAX_CHUNK)
		maxseg = IWX_SHIM_MAX_CHUNK;
	return maxseg > hlen ? maxseg - hlen : 0;
}

static int shim_error(struct iwx_term_cause *cause, uint8_t ecode)
{
	*cause = IWX_CAUSE_SHIM(ecode);
	return -EPROTO;
}

int iwx_shim_decode(const uint8_t *chunk, size_t len, uint32_t peer_indication,
		    struct iwx_ddp_seg *seg, struct iwx_term_cause *cause)
{
	struct iwx_shim_rdmap_ctx ctx;
	struct iwx_shim_hdr h;
	size_t hlen, want;
	uint64_t offset;

	memset(seg, 0, sizeof(*seg));
	/* draft-otis-sctp-ddp §2.2: SCTP never fragments, so a longer message was not one chunk */
	if (len < sizeof(h) || len > IWX_SHIM_MAX_CHUNK)
		return shim_error(cause, IWX_SHIM_EC_MALFORMED);
	memcpy(&h, chunk, sizeof(h));
	hlen = be16toh(h.hdr_len);
	switch (h.mode) {
	case IWX_SHIM_MODE_TAG:
		/* draft-otis-sctp-ddp §3.2.1 R2 */
		if (peer_indication != IWX_SHIM_IND_TAG)
			return shim_error(cause, IWX_SHIM_EC_MODE);
		want = IWX_SHIM_TAGGED_HDR_LEN;
		break;
	case IWX_SHIM_MODE_ANONYMOUS:
		want = hlen == IWX_SHIM_SETUP_HDR_LEN ? hlen : IWX_SHIM_UNTAGGED_HDR_LEN;
		break;
	default:
		/* draft-otis-sctp-ddp §3.2.1 R1: iwx refuses DDP_STREAM_PLACE at set-up anyway */
		return shim_error(cause, IWX_SHIM_EC_MODE);
	}
	if (hlen != want || hlen > len)
		return shim_error(cause, IWX_SHIM_EC_MALFORMED);

	/* draft-otis-sctp-ddp §2.2: flags other than Disclose are ignored */
	seg->last = h.flags & IWX_SHIM_FLAG_DISCLOSE;
	seg->payload = chunk + hlen;
	seg->len = len - hlen;
	if (hlen == IWX_SHIM_SETUP_HDR_LEN)
		return IWX_SHIM_SETUP;

	/* a tagged chunk's Context is the control word alone: qn and msn stay unread */
	memcpy(&ctx, chunk + sizeof(h), hlen - sizeof(h));
	offset = be64toh(h.offset);
	seg->tagged = h.mode == IWX_SHIM_MODE_TAG;
	seg->rdmap_ctrl = ctx.rdmap_ctrl;
	seg->opcode = ctx.rdmap_ctrl & IWX_RDMAP_OPCODE_MASK;
	if (seg->tagged) {
		seg->stag = be32toh(h.tag);
		seg->to = offset;
	} else {
		/* RFC 5041 §4.3: an MO has 32 bits */
		if (offset > UINT32_MAX)
			return shim_error(cause, IWX_SHIM_EC_MALFORMED);
		seg->inval_stag = be32toh(h.tag);
		seg->qn = be32toh(ctx.qn);
		seg->msn = be32toh(ctx.msn);
		seg->mo = offset;
	}
	seg->hdr_len = iwx_ddp_hdr_write(seg->hdr, seg);
	seg->ulpdu_len = seg->hdr_len + seg->len;
	return iwx_ddp_check_seg(seg, cause);
}
