// SPDX-License-Identifier: MIT
/* DDP headers (RFC 5041 §4) as RDMAP uses them (RFC 5040 §4.1), and segmentation (§5.2). */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "proto/ddp.h"
#include "proto/rdmap.h"

int iwx_ddp_decode(const uint8_t *ulpdu, size_t len, struct iwx_ddp_seg *seg,
		   struct iwx_term_cause *cause)
{
	uint8_t ctrl;
	size_t hlen;

	memset(seg, 0, sizeof(*seg));
	if (len < 1) {
		*cause = IWX_CAUSE_MPA(IWX_MPA_EC_MARKER);
		return -EPROTO;
	}
	ctrl = ulpdu[0];
	hlen = iwx_ddp_hdr_len(ctrl);
	if (len < hlen) {
		/* the ULPDU_LENGTH cannot hold the header it announces */
		*cause = IWX_CAUSE_MPA(IWX_MPA_EC_MARKER);
		return -EPROTO;
	}
	seg->tagged = ctrl & IWX_DDP_FLAG_TAGGED;
	seg->last = ctrl & IWX_DDP_FLAG_LAST;
	seg->rdmap_ctrl = ulpdu[1];
	seg->opcode = ulpdu[1] & IWX_RDMAP_OPCODE_MASK;
	seg->hdr_len = hlen;
	memcpy(seg->hdr, ulpdu, hlen);
	seg->ulpdu_len = len;
	seg->payload = ulpdu + hlen;
	seg->len = len - hlen;
	if (seg->tagged) {
		struct iwx_ddp_tagged_hdr h;

		memcpy(&h, ulpdu, sizeof(h));
		seg->stag = be32toh(h.stag);
		seg->to = be64toh(h.to);
	} else {
		struct iwx_ddp_untagged_hdr h;

		memcpy(&h, ulpdu, sizeof(h));
		seg->inval_stag = be32toh(h.inval_stag);
		seg->qn = be32toh(h.qn);
		seg->msn = be32toh(h.msn);
		seg->mo = be32toh(h.mo);
	}
	return iwx_ddp_check_seg(seg, cause);
}

int iwx_ddp_check_seg(const struct iwx_ddp_seg *seg, struct iwx_term_cause *cause)
{
	uint8_t opcode = seg->opcode;

	/* RFC 5041 §7.1 then RFC 5040 §7.2: DDP fields first, then RDMAP version and opcode. */
	if ((seg->hdr[0] & IWX_DDP_VERSION_MASK) != IWX_DDP_VERSION) {
		*cause = seg->tagged ? IWX_CAUSE_DDP_T(IWX_DDP_T_VERSION) :
				       IWX_CAUSE_DDP_U(IWX_DDP_U_VERSION);
		return -EPROTO;
	}
	if (!seg->tagged && seg->qn >= IWX_QN_COUNT) {
		*cause = IWX_CAUSE_DDP_U(IWX_DDP_U_INVALID_QN);
		return -EPROTO;
	}
	if ((seg->rdmap_ctrl & IWX_RDMAP_VERSION_MASK) >> IWX_RDMAP_VERSION_SHIFT !=
	    IWX_RDMAP_VERSION) {
		*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_VERSION);
		return -EPROTO;
	}
	if (opcode >= IWX_OP_COUNT || iwx_rdmap_opcode_tagged(opcode) != seg->tagged) {
		*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE);
		return -EPROTO;
	}
	/* Figure 4: each untagged opcode has its queue. */
	if (!seg->tagged && seg->qn != iwx_rdmap_opcode_qn(opcode)) {
		*cause = IWX_CAUSE_DDP_U(IWX_DDP_U_INVALID_QN);
		return -EPROTO;
	}
	return 0;
}

void iwx_ddp_seg_of_msg(struct iwx_ddp_seg *seg, const struct iwx_ddp_msg *msg, uint32_t off,
			bool last)
{
	*seg = (struct iwx_ddp_seg){
		.tagged = iwx_rdmap_opcode_tagged(msg->opcode),
		.last = last,
		.opcode = msg->opcode,
		.rdmap_ctrl = iwx_rdmap_ctrl(msg->opcode),
		.stag = msg->stag,
		.to = msg->to + off,
		/* RFC 5040 §4.1: zero unless the opcode invalidates */
		.inval_stag = iwx_rdmap_opcode_has_inval(msg->opcode) ? msg->inval_stag : 0,
		.qn = iwx_rdmap_opcode_qn(msg->opcode),
		.msn = msg->msn,
		.mo = off,
	};
}

size_t iwx_ddp_hdr_write(uint8_t *hdr, const struct iwx_ddp_seg *seg)
{
	uint8_t ctrl = (seg->last ? IWX_DDP_FLAG_LAST : 0) | IWX_DDP_VERSION;

	if (seg->tagged) {
		struct iwx_ddp_tagged_hdr h = {
			.ddp_ctrl = ctrl | IWX_DDP_FLAG_TAGGED,
			.rdmap_ctrl = seg->rdmap_ctrl,
			.stag = htobe32(seg->stag),
			.to = htobe64(seg->to),
		};

		memcpy(hdr, &h, sizeof(h));
		return sizeof(h);
	} else {
		struct iwx_ddp_untagged_hdr h = {
			.ddp_ctrl = ctrl,
			.rdmap_ctrl = seg->rdmap_ctrl,
			.inval_stag = htobe32(seg->inval_stag),
			.qn = htobe32(seg->qn),
			.msn = htobe32(seg->msn),
			.mo = htobe32(seg->mo),
		};

		memcpy(hdr, &h, sizeof(h));
		return sizeof(h);
	}
}

size_t iwx_ddp_hdr_encode(uint8_t *hdr, const struct iwx_ddp_msg *msg, uint32_t off, bool last)
{
	struct iwx_ddp_seg seg;

	iwx_ddp_seg_of_msg(&seg, msg, off, last);
	return iwx_ddp_hdr_write(hdr, &seg);
}

/* The length of the header of each segment of msg. */
static uint32_t msg_hdr_len(const struct iwx_ddp_msg *msg)
{
	return iwx_rdmap_opcode_tagged(msg->opcode) ? IWX_DDP_TAGGED_HDR_LEN :
						      IWX_DDP_UNTAGGED_HDR_LEN;
}

int iwx_ddp_segmenter_init(struct iwx_ddp_segmenter *s, const struct iwx_ddp_msg *msg,
			   uint32_t mulpdu)
{
	uint32_t hlen = msg_hdr_len(msg);

	if (mulpdu > IWX_MPA_MAX_ULPDU)
		mulpdu = IWX_MPA_MAX_ULPDU;
	if (mulpdu <= hlen)
		return -EINVAL;
	return iwx_ddp_segmenter_init_payload(s, msg, mulpdu - hlen);
}

int iwx_ddp_segmenter_init_payload(struct iwx_ddp_segmenter *s, const struct iwx_ddp_msg *msg,
				   uint32_t max_payload)
{
	if (msg->opcode >= IWX_OP_COUNT || max_payload == 0)
		return -EINVAL;
	s->msg = *msg;
	s->max_payload = max_payload;
	s->off = 0;
	s->done = false;
	return 0;
}

/* The next segment's payload, no longer than most (1 or more). */
static bool step_at_most(struct iwx_ddp_segmenter *s, uint32_t most, uint32_t *off, uint32_t *len,
			 bool *last)
{
	uint32_t left = s->msg.len - s->off;
	uint32_t n = left < s->max_payload ? left : s->max_payload;

	if (n > most)
		n = most;
	if (s->done)
		return false;
	*off = s->off;
	*len = n;
	*last = n == left;
	s->off += n;
	s->done = *last;
	return true;
}

bool iwx_ddp_segmenter_step(struct iwx_ddp_segmenter *s, uint32_t *off, uint32_t *len,
			    bool *last)
{
	return step_at_most(s, UINT32_MAX, off, len, last);
}

size_t iwx_ddp_segmenter_next_at_most(struct iwx_ddp_segmenter *s, uint32_t most, uint8_t *hdr,
				      uint32_t *off, uint32_t *len)
{
	uint32_t hlen = msg_hdr_len(&s->msg);
	bool last;

	if (!step_at_most(s, most > hlen ? most - hlen : 1, off, len, &last))
		return 0;
	return iwx_ddp_hdr_encode(hdr, &s->msg, *off, last);
}

size_t iwx_ddp_segmenter_next(struct iwx_ddp_segmenter *s, uint8_t *hdr,
			      uint32_t *off, uint32_t *len)
{
	return iwx_ddp_segmenter_next_at_most(s, UINT32_MAX, hdr, off, len);
}
