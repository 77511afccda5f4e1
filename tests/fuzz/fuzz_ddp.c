// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the headers a peer chooses above MPA: DDP's (RFC 5041), RDMAP's
 * Read Request and Terminate (RFC 5040 §4.4, §4.8), RFC 7306's Atomic Request and
 * Response (§5.2) and Immediate Data (§6), and the SCTP adaptation's shim
 * (proto/ddp_shim.h), each decoded from the same hostile bytes.
 *
 * Input: byte 0 picks the shim's peer indication (low 2 bits); the rest is one ULPDU for
 * iwx_ddp_decode and one DATA chunk for iwx_shim_decode.
 *
 * What must hold, besides ASan's and UBSan's silence:
 * - a decode either fails with -EPROTO and a cause whose layer, type and code have
 *   names, or gives a segment whose header, written again, decodes to the same segment,
 *   its payload the bytes after the header and nothing beyond the input;
 * - a Read Request or Terminate decoded from such a segment encodes to bytes that
 *   decode to it again, and a Terminate built about the segment (what iwx sends back)
 *   decodes to what was built;
 * - an Atomic Request or Response decoded encodes to the bytes it came from (but for
 *   the bits of a request's first word above AOpCode: reserved), Immediate Data is its
 *   8 bytes; a request's operation (iwx_atomic_apply) holds §5.1's identities on
 *   operands and old values the input chose;
 * - a shim chunk decoded gives the segment iwx_ddp_decode gives for its RFC 5041
 *   equivalent header (seg->hdr) and payload.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "proto/ddp.h"
#include "proto/ddp_shim.h"
#include "proto/rdmap.h"
#include "proto/term.h"

#include "fuzz_check.h"

#define MAX_IN	(IWX_SHIM_MAX_HDR_LEN + 4096)

static void check_cause(int rc, struct iwx_term_cause c)
{
	CHECK(rc == -EPROTO);
	CHECK(iwx_term_layer_name(c.layer));
	CHECK(iwx_term_etype_name(c.layer, c.etype));
	CHECK(iwx_term_ecode_name(c.layer, c.etype, c.ecode));
}

/*
 * The fields a decode fills, compared (payload by content: the two may lie elsewhere);
 * the header as received too when same_hdr (a header written again has its reserved
 * bits clear, which a receiver does not check: RFC 5041 §4.2, §4.3).
 */
static void same_seg(const struct iwx_ddp_seg *a, const struct iwx_ddp_seg *b, bool same_hdr)
{
	CHECK(a->tagged == b->tagged && a->last == b->last && a->opcode == b->opcode);
	CHECK(a->rdmap_ctrl == b->rdmap_ctrl && a->len == b->len && a->hdr_len == b->hdr_len);
	CHECK(!same_hdr || !memcmp(a->hdr, b->hdr, a->hdr_len));
	if (a->tagged) {
		CHECK(a->stag == b->stag && a->to == b->to);
	} else {
		CHECK(a->qn == b->qn && a->msn == b->msn && a->mo == b->mo);
		CHECK(a->inval_stag == b->inval_stag);
	}
	CHECK(!a->len || !memcmp(a->payload, b->payload, a->len));
}

/* The segment as a ULPDU again: its header written, its payload after it. */
static void rewrite(const struct iwx_ddp_seg *seg)
{
	static uint8_t u[MAX_IN];
	struct iwx_term_cause cause;
	struct iwx_ddp_seg again;
	size_t hl = iwx_ddp_hdr_write(u, seg);

	CHECK(hl == seg->hdr_len && hl + seg->len <= sizeof(u));
	memcpy(u + hl, seg->payload, seg->len);
	CHECK(iwx_ddp_decode(u, hl + seg->len, &again, &cause) == 0);
	same_seg(seg, &again, false);
}

static void same_term(const struct iwx_term *a, const struct iwx_term *b)
{
	CHECK(iwx_cause_eq(a->cause, b->cause));
	CHECK(a->has_seg_len == b->has_seg_len && a->has_ddp_hdr == b->has_ddp_hdr &&
	      a->has_rdma_hdr == b->has_rdma_hdr);
	CHECK(!a->has_seg_len || a->seg_len == b->seg_len);
	CHECK(!a->has_ddp_hdr || (a->ddp_hdr_len == b->ddp_hdr_len &&
				  !memcmp(a->ddp_hdr, b->ddp_hdr, a->ddp_hdr_len)));
	CHECK(!a->has_rdma_hdr || !memcmp(a->rdma_hdr, b->rdma_hdr, sizeof(a->rdma_hdr)));
}

/* A Terminate's bytes as the payload of a segment on queue 2, decoded. */
static int term_of(const uint8_t *p, size_t len, struct iwx_term *t, struct iwx_term_cause *c)
{
	struct iwx_ddp_seg seg = { .opcode = IWX_OP_TERMINATE, .qn = 2, .last = true,
				   .payload = p, .len = (uint32_t)len };

	return iwx_term_decode(&seg, t, c);
}

/*
 * RFC 7306 §5.1 on the request's operands, against identities rather than a second
 * implementation: an old value and its variations the input chose.
 */
static void atomic_identities(const struct iwx_atomic_req *ar, uint64_t old)
{
	struct iwx_atomic_req a = *ar;
	/* the lowest field: bits 0 to the mask's lowest set bit (all 64 when none is) */
	uint64_t m = ar->add_swap_mask, low = m ? m ^ (m - 1) : ~0ull;

	if (ar->aop == IWX_AOP_CMP_SWAP) {
		uint64_t swapped = (old & ~m) | (ar->add_swap & m);
		uint64_t cmp = ar->compare;

		/* §5.1.2: equal under the compare mask swaps, under the swap mask only */
		CHECK(iwx_atomic_apply(ar, cmp) == ((cmp & ~m) | (ar->add_swap & m)));
		if ((old ^ cmp) & ar->compare_mask)
			CHECK(iwx_atomic_apply(ar, old) == old);
		a.compare_mask = 0;
		CHECK(iwx_atomic_apply(&a, old) == swapped);
		return;
	}
	/* §5.1.1: the lowest field is a plain sum, its carry out lost */
	CHECK(((iwx_atomic_apply(ar, old) ^ (old + ar->add_swap)) & low) == 0);
	a.add_swap = 0;
	CHECK(iwx_atomic_apply(&a, old) == old);	/* §1.1's probe changes nothing */
	a = *ar;
	a.add_swap_mask = 0;
	CHECK(iwx_atomic_apply(&a, old) == old + ar->add_swap);
	a.add_swap_mask = ~0ull;
	CHECK(iwx_atomic_apply(&a, old) == (old ^ ar->add_swap));	/* 64 one-bit fields */
}

/* RFC 7306's headers in a segment: each decodes to what encodes back, or fails named. */
static void rfc7306_hdrs(const struct iwx_ddp_seg *seg)
{
	uint8_t out[IWX_RDMAP_ATOMIC_REQ_LEN];
	struct iwx_term_cause cause;
	struct iwx_atomic_resp resp;
	struct iwx_atomic_req ar;
	uint64_t imm;
	int rc;

	if (seg->tagged)
		return;
	if (seg->opcode == IWX_OP_ATOMIC_REQ) {
		rc = iwx_atomic_req_decode(seg, &ar, &cause);
		if (rc) {
			check_cause(rc, cause);
			return;
		}
		iwx_atomic_req_encode(out, &ar);
		/* §5.2.1: the first word's bits above AOpCode are reserved, sent as zeros */
		CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0 &&
		      out[3] == (seg->payload[3] & IWX_ATOMIC_AOP_MASK));
		CHECK(!memcmp(out + 4, seg->payload + 4, IWX_RDMAP_ATOMIC_REQ_LEN - 4));
		CHECK(ar.to % IWX_RDMAP_ATOMIC_TARGET_LEN == 0);
		atomic_identities(&ar, ar.compare);
		atomic_identities(&ar, ar.to ^ ar.stag);
	} else if (seg->opcode == IWX_OP_ATOMIC_RESP) {
		rc = iwx_atomic_resp_decode(seg, &resp, &cause);
		if (rc) {
			check_cause(rc, cause);
			return;
		}
		iwx_atomic_resp_encode(out, &resp);
		CHECK(seg->len == IWX_RDMAP_ATOMIC_RESP_LEN);
		CHECK(!memcmp(out, seg->payload, IWX_RDMAP_ATOMIC_RESP_LEN));
	} else if (iwx_rdmap_opcode_imm(seg->opcode)) {
		rc = iwx_imm_decode(seg, &imm, &cause);
		if (rc) {
			check_cause(rc, cause);
			return;
		}
		imm = htobe64(imm);
		CHECK(seg->len == IWX_RDMAP_IMM_LEN && !memcmp(&imm, seg->payload, sizeof(imm)));
	}
}

/* What RDMAP makes of a segment: its Read Request, Terminate or RFC 7306 header, and the
   Terminate iwx would send about it. */
static void upper(const struct iwx_ddp_seg *seg)
{
	uint8_t out[IWX_TERM_MAX_LEN];
	struct iwx_term_cause cause;
	struct iwx_read_req rr, rr2;
	struct iwx_term t, t2;
	bool have_rr = false;
	int rc;

	if (seg->opcode == IWX_OP_READ_REQ && !seg->tagged) {
		rc = iwx_read_req_decode(seg, &rr, &cause);
		if (rc) {
			check_cause(rc, cause);
		} else {
			struct iwx_ddp_seg s2 = *seg;

			iwx_read_req_encode(out, &rr);
			s2.payload = out;
			s2.len = IWX_RDMAP_READ_REQ_LEN;
			CHECK(iwx_read_req_decode(&s2, &rr2, &cause) == 0);
			CHECK(rr.sink_stag == rr2.sink_stag && rr.sink_to == rr2.sink_to &&
			      rr.size == rr2.size && rr.src_stag == rr2.src_stag &&
			      rr.src_to == rr2.src_to);
			have_rr = true;
		}
	}
	if (seg->opcode == IWX_OP_TERMINATE && !seg->tagged) {
		rc = iwx_term_decode(seg, &t, &cause);
		if (rc) {
			check_cause(rc, cause);
		} else {
			CHECK(iwx_term_layer_name(t.cause.layer));
			CHECK(term_of(out, iwx_term_encode(out, &t), &t2, &cause) == 0);
			same_term(&t, &t2);
		}
	}
	rfc7306_hdrs(seg);
	/* the Terminate iwx sends about this segment, for a cause of each layer */
	iwx_term_init(&t, IWX_CAUSE_DDP_T(IWX_DDP_T_BASE_BOUNDS), seg, have_rr ? &rr : NULL);
	CHECK(term_of(out, iwx_term_encode(out, &t), &t2, &cause) == 0);
	same_term(&t, &t2);
	iwx_term_init(&t, IWX_CAUSE_RDMAP_OP(IWX_RDMAP_EC_OPCODE),
		      seg, have_rr ? &rr : NULL);
	CHECK(term_of(out, iwx_term_encode(out, &t), &t2, &cause) == 0);
	same_term(&t, &t2);
}

static void over_mpa(const uint8_t *u, size_t len)
{
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;
	int rc = iwx_ddp_decode(u, len, &seg, &cause);

	if (rc) {
		check_cause(rc, cause);
		return;
	}
	CHECK(seg.hdr_len == iwx_ddp_hdr_len(u[0]) && seg.hdr_len <= len);
	CHECK(seg.payload == u + seg.hdr_len && seg.len == len - seg.hdr_len);
	rewrite(&seg);
	upper(&seg);
}

static void over_sctp(const uint8_t *chunk, size_t len, uint32_t indication)
{
	static uint8_t u[MAX_IN];
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg, mpa;
	int rc = iwx_shim_decode(chunk, len, indication, &seg, &cause);

	if (rc < 0) {
		check_cause(rc, cause);
		return;
	}
	CHECK(seg.payload >= chunk && seg.payload + seg.len <= chunk + len);
	if (rc == IWX_SHIM_SETUP)
		return;
	CHECK(rc == 0);
	/* the same segment as over MPA: its RFC 5041 header, then its payload */
	CHECK(seg.hdr_len + seg.len <= sizeof(u));
	memcpy(u, seg.hdr, seg.hdr_len);
	memcpy(u + seg.hdr_len, seg.payload, seg.len);
	CHECK(iwx_ddp_decode(u, seg.hdr_len + seg.len, &mpa, &cause) == 0);
	same_seg(&seg, &mpa, true);
	upper(&seg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t indications[] = { IWX_SHIM_IND_TAG, IWX_SHIM_IND_ANONYMOUS,
						IWX_SHIM_IND_STREAM, 0 };

	if (size < 1 || size > MAX_IN)
		return 0;
	over_mpa(data + 1, size - 1);
	over_sctp(data + 1, size - 1, indications[data[0] & 3]);
	return 0;
}
