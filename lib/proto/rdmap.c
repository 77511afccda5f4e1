// SPDX-License-Identifier: MIT
/*
 * RDMAP messages with headers of their own: Read Request (RFC 5040 §4.4), Terminate (§4.8),
 * and RFC 7306's Atomic Request and Response (§5.2) and Immediate Data (§6).
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "proto/rdmap.h"

const char *iwx_rdmap_opcode_name(uint8_t opcode)
{
	static const char *const names[IWX_OP_COUNT] = {
		[IWX_OP_WRITE] = "RDMA Write",
		[IWX_OP_READ_REQ] = "RDMA Read Request",
		[IWX_OP_READ_RESP] = "RDMA Read Response",
		[IWX_OP_SEND] = "Send",
		[IWX_OP_SEND_INV] = "Send with Invalidate",
		[IWX_OP_SEND_SE] = "Send with SE",
		[IWX_OP_SEND_SE_INV] = "Send with SE and Invalidate",
		[IWX_OP_TERMINATE] = "Terminate",
		[IWX_OP_IMM] = "Immediate Data",
		[IWX_OP_IMM_SE] = "Immediate Data with SE",
		[IWX_OP_ATOMIC_REQ] = "Atomic Request",
		[IWX_OP_ATOMIC_RESP] = "Atomic Response",
	};

	return opcode < IWX_OP_COUNT ? names[opcode] : "reserved";
}

void iwx_read_req_encode(uint8_t out[IWX_RDMAP_READ_REQ_LEN], const struct iwx_read_req *rr)
{
	struct iwx_rdmap_read_req h = {
		.sink_stag = htobe32(rr->sink_stag),
		.sink_to = htobe64(rr->sink_to),
		.size = htobe32(rr->size),
		.src_stag = htobe32(rr->src_stag),
		.src_to = htobe64(rr->src_to),
	};

	memcpy(out, &h, sizeof(h));
}

/*
 * Read Requests and Terminates are untagged messages whose queue buffers hold
 * exactly one header: a message longer than that buffer is DDP's "too long"
 * (RFC 5041 §7.2), one that is not a single whole segment is malformed.
 */
static int check_single_segment(const struct iwx_ddp_seg *seg, uint32_t buf_len,
				struct iwx_term_cause *cause)
{
	if (seg->mo > buf_len || seg->len > buf_len - seg->mo) {
		*cause = IWX_CAUSE_DDP_U(IWX_DDP_U_TOO_LONG);
		return -EPROTO;
	}
	if (seg->mo != 0 || !seg->last) {
		*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED);
		return -EPROTO;
	}
	return 0;
}

/* A header of exactly len bytes (Read Request, RFC 7306's three): one whole segment of it */
static int check_exact_segment(const struct iwx_ddp_seg *seg, uint32_t len,
			       struct iwx_term_cause *cause)
{
	int err = check_single_segment(seg, len, cause);

	if (!err && seg->len != len) {
		*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED);
		err = -EPROTO;
	}
	return err;
}

int iwx_read_req_decode(const struct iwx_ddp_seg *seg, struct iwx_read_req *rr,
			struct iwx_term_cause *cause)
{
	struct iwx_rdmap_read_req h;
	int err = check_exact_segment(seg, IWX_RDMAP_READ_REQ_LEN, cause);

	if (err)
		return err;
	memcpy(&h, seg->payload, sizeof(h));
	rr->sink_stag = be32toh(h.sink_stag);
	rr->sink_to = be64toh(h.sink_to);
	rr->size = be32toh(h.size);
	rr->src_stag = be32toh(h.src_stag);
	rr->src_to = be64toh(h.src_to);
	return 0;
}

void iwx_atomic_req_encode(uint8_t out[IWX_RDMAP_ATOMIC_REQ_LEN], const struct iwx_atomic_req *ar)
{
	struct iwx_rdmap_atomic_req h = {
		.aop = htobe32(ar->aop & IWX_ATOMIC_AOP_MASK),
		.req_id = htobe32(ar->req_id),
		.stag = htobe32(ar->stag),
		.to = htobe64(ar->to),
		.add_swap = htobe64(ar->add_swap),
		.add_swap_mask = htobe64(ar->add_swap_mask),
		.compare = htobe64(ar->compare),
		.compare_mask = htobe64(ar->compare_mask),
	};

	memcpy(out, &h, sizeof(h));
}

int iwx_atomic_req_decode(const struct iwx_ddp_seg *seg, struct iwx_atomic_req *ar,
			  struct iwx_term_cause *cause)
{
	struct iwx_rdmap_atomic_req h;
	int err = check_exact_segment(seg, IWX_RDMAP_ATOMIC_REQ_LEN, cause);

	if (err)
		return err;
	memcpy(&h, seg->payload, sizeof(h));
	/* §5.2.1: the word's other 28 bits are reserved, ignored on receipt */
	ar->aop = be32toh(h.aop) & IWX_ATOMIC_AOP_MASK;
	ar->req_id = be32toh(h.req_id);
	ar->stag = be32toh(h.stag);
	ar->to = be64toh(h.to);
	ar->add_swap = be64toh(h.add_swap);
	ar->add_swap_mask = be64toh(h.add_swap_mask);
	ar->compare = be64toh(h.compare);
	ar->compare_mask = be64toh(h.compare_mask);
	if (ar->aop != IWX_AOP_FETCH_ADD && ar->aop != IWX_AOP_CMP_SWAP) {
		*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE);
		return -EPROTO;
	}
	if (ar->to % IWX_RDMAP_ATOMIC_TARGET_LEN) {	/* §8.2 */
		*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_CATASTROPHIC_STREAM);
		return -EPROTO;
	}
	return 0;
}

uint64_t iwx_atomic_apply(const struct iwx_atomic_req *ar, uint64_t old)
{
	uint64_t m = ar->add_swap_mask;

	if (ar->aop == IWX_AOP_CMP_SWAP)
		return (old ^ ar->compare) & ar->compare_mask ? old : (old & ~m) | (ar->add_swap & m);
	/*
	 * §5.1.1: a carry never crosses a bit the mask sets. Add with those bits clear, so
	 * that no carry leaves them; each of them is then the sum of its own bits and the
	 * carry into it, an exclusive or.
	 */
	return ((old & ~m) + (ar->add_swap & ~m)) ^ ((old ^ ar->add_swap) & m);
}

void iwx_atomic_resp_encode(uint8_t out[IWX_RDMAP_ATOMIC_RESP_LEN], const struct iwx_atomic_resp *r)
{
	struct iwx_rdmap_atomic_resp h = { .req_id = htobe32(r->req_id), .orig = htobe64(r->orig) };

	memcpy(out, &h, sizeof(h));
}

int iwx_atomic_resp_decode(const struct iwx_ddp_seg *seg, struct iwx_atomic_resp *r,
			   struct iwx_term_cause *cause)
{
	struct iwx_rdmap_atomic_resp h;
	int err = check_exact_segment(seg, IWX_RDMAP_ATOMIC_RESP_LEN, cause);

	if (err)
		return err;
	memcpy(&h, seg->payload, sizeof(h));
	r->req_id = be32toh(h.req_id);
	r->orig = be64toh(h.orig);
	return 0;
}

int iwx_imm_decode(const struct iwx_ddp_seg *seg, uint64_t *imm, struct iwx_term_cause *cause)
{
	uint64_t be;
	int err = check_exact_segment(seg, IWX_RDMAP_IMM_LEN, cause);

	if (err)
		return err;
	memcpy(&be, seg->payload, sizeof(be));
	*imm = be64toh(be);
	return 0;
}

static bool is_catastrophic(struct iwx_term_cause c)
{
	return (c.layer == IWX_LAYER_RDMAP && c.etype == IWX_RDMAP_ETYPE_CATASTROPHIC) ||
	       (c.layer == IWX_LAYER_DDP && c.etype == IWX_DDP_ETYPE_CATASTROPHIC);
}

void iwx_term_init(struct iwx_term *t, struct iwx_term_cause cause,
		   const struct iwx_ddp_seg *seg, const struct iwx_read_req *rr)
{
	memset(t, 0, sizeof(*t));
	t->cause = cause;
	/* RFC 5040 Figure 10: LLP errors and local catastrophic errors copy no header. */
	if (!seg || cause.layer == IWX_LAYER_LLP || is_catastrophic(cause))
		return;
	t->has_seg_len = true;
	t->has_ddp_hdr = true;
	t->seg_len = seg->ulpdu_len;
	t->ddp_hdr_len = seg->hdr_len;
	memcpy(t->ddp_hdr, seg->hdr, seg->hdr_len);
	/* §7.1 rule 3: an RDMAP-detected error on a Read Request returns its header too. */
	if (rr && cause.layer == IWX_LAYER_RDMAP) {
		t->has_rdma_hdr = true;
		iwx_read_req_encode(t->rdma_hdr, rr);
	}
}

size_t iwx_term_encode(uint8_t out[IWX_TERM_MAX_LEN], const struct iwx_term *t)
{
	struct iwx_rdmap_term_ctrl c = {
		.layer_etype = (t->cause.layer & 0xf) << 4 | (t->cause.etype & 0xf),
		.ecode = t->cause.ecode,
		.hdrct = (t->has_seg_len ? IWX_TERM_HDRCT_M : 0) |
			 (t->has_ddp_hdr ? IWX_TERM_HDRCT_D : 0) |
			 (t->has_rdma_hdr ? IWX_TERM_HDRCT_R : 0),
	};
	size_t len = sizeof(c);

	memcpy(out, &c, sizeof(c));
	if (t->has_ddp_hdr) {
		uint16_t be = htobe16(t->seg_len);

		memcpy(out + len, &be, sizeof(be));
		len += sizeof(be);
		memcpy(out + len, t->ddp_hdr, t->ddp_hdr_len);
		len += t->ddp_hdr_len;
	}
	if (t->has_rdma_hdr) {
		memcpy(out + len, t->rdma_hdr, IWX_RDMAP_READ_REQ_LEN);
		len += IWX_RDMAP_READ_REQ_LEN;
	}
	return len;
}

int iwx_term_decode(const struct iwx_ddp_seg *seg, struct iwx_term *t,
		    struct iwx_term_cause *cause)
{
	const uint8_t *p = seg->payload;
	size_t left = seg->len;
	struct iwx_rdmap_term_ctrl c;
	int err = check_single_segment(seg, IWX_TERM_MAX_LEN, cause);

	if (err)
		return err;
	memset(t, 0, sizeof(*t));
	if (left < sizeof(c))
		goto malformed;
	memcpy(&c, p, sizeof(c));
	p += sizeof(c);
	left -= sizeof(c);
	t->cause = iwx_cause(c.layer_etype >> 4, c.layer_etype & 0xf, c.ecode);
	t->has_seg_len = c.hdrct & IWX_TERM_HDRCT_M;
	t->has_ddp_hdr = c.hdrct & IWX_TERM_HDRCT_D;
	t->has_rdma_hdr = c.hdrct & IWX_TERM_HDRCT_R;

	/* The segment length is present with the DDP header (§4.8), as tshark reads it too. */
	if (t->has_ddp_hdr) {
		uint16_t be;

		if (left < IWX_TERM_SEGLEN_LEN + 1)
			goto malformed;

		memcpy(&be, p, sizeof(be));
		t->seg_len = be16toh(be);
		p += IWX_TERM_SEGLEN_LEN;
		left -= IWX_TERM_SEGLEN_LEN;
		t->ddp_hdr_len = iwx_ddp_hdr_len(p[0]);
		if (left < t->ddp_hdr_len)
			goto malformed;
		memcpy(t->ddp_hdr, p, t->ddp_hdr_len);
		p += t->ddp_hdr_len;
		left -= t->ddp_hdr_len;
	}
	if (t->has_rdma_hdr) {
		if (left < IWX_RDMAP_READ_REQ_LEN)
			goto malformed;
		memcpy(t->rdma_hdr, p, IWX_RDMAP_READ_REQ_LEN);
	}
	return 0;

malformed:
	*cause = IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_UNSPECIFIED);
	return -EPROTO;
}
