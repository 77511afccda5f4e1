// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the headers a peer chooses above MPA: DDP's (RFC 5041), RDMAP's
 * Read Request and Terminate (RFC 5040 §4.4, §4.8), and the SCTP adaptation's shim
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
 * - a shim chunk decoded gives the segment iwx_ddp_decode gives for its RFC 5041
 *   equivalent header (seg->hdr) and payload.
 */
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

/* What RDMAP makes of a segment: its Read Request or Terminate, and the Terminate iwx
   would send about it. */
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
