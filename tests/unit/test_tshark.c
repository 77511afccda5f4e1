// SPDX-License-Identifier: MIT
/*
 * Conformance against an independent decoder: build realistic iWARP exchanges with
 * the library (MPA set-up, Sends, segmented RDMA Write, Read Request and Response,
 * Terminate; RFC 7306's Atomic Requests and Responses and Immediate Data), write them
 * as a TCP flow into a pcap, and check that tshark's iwarp_mpa / iwarp_ddp_rdmap
 * dissectors read back every field we meant to send, call every CRC good, and raise
 * no warning or error beyond the two that tshark 4.0 (which predates RFC 6581) raises
 * on any revision-2 Request.
 *
 * Set IWX_TSHARK_KEEP=DIR to keep each capture as DIR/<test name>.pcap.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/crc32c.h"
#include "proto/ddp.h"
#include "proto/mpa.h"
#include "proto/rdmap.h"

#include "pcapgen.h"
#include "stall.h"
#include "testutil.h"

#define EMSS		1448	/* MSS 1460 less TCP timestamps, as Linux peers run */
#define MSS		1460
#define CPORT		42882
#define SPORT		7174
#define MAX_RECS	48
#define MAX_WIRE	PCAPGEN_MAX_PAYLOAD
#define MAX_MARKERS	4
#define MAX_REASM	4096	/* longest multi-segment Send, as tshark reassembles it */
#define VAL_MAX		(2 * MAX_REASM + 16)	/* a field as text: hex bytes at most */

/* ------------------------------------------------------------ what we sent */

struct config {
	const char	*name;
	uint8_t		rev;
	bool		enhanced;
	bool		req_crc, rep_crc;
	bool		req_markers, rep_markers;
	bool		reject;
	bool		rfc7306;	/* offered and accepted; its messages sent */
};

enum rec_kind { REC_REQ, REC_REP, REC_FPDU };

/* A Terminate as we mean it, written out here rather than taken from the library. */
struct term_exp {
	uint8_t		layer, etype, ecode;
	bool		m, d, r;		/* header control bits */
	uint16_t	seg_len;
	uint8_t		ddp_hdr[IWX_DDP_UNTAGGED_HDR_LEN];
};

/* One TCP segment of MPA data, and what it was meant to carry. */
struct rec {
	enum rec_kind		kind;
	enum pcapgen_dir	dir;
	int			frame;
	char			what[64];
	uint8_t			wire[MAX_WIRE];
	size_t			wire_len;

	/* Request / Reply: flags, revision, and the private data bytes expected */
	struct iwx_mpa_rr_params rr;
	uint8_t			pd[IWX_MPA_MAX_PRIVDATA];
	uint16_t		pd_len;

	/* FPDU */
	struct iwx_ddp_msg	msg;
	uint32_t		off, len;
	bool			last;
	bool			crc_on;
	uint8_t			crc[IWX_MPA_CRC_LEN];	/* as it should be on the wire */
	unsigned int		nmarkers;
	uint16_t		fpduptr[MAX_MARKERS];
	const uint8_t		*payload;
	uint8_t			view[MAX_WIRE];	/* the payload as tshark 4.0 shows it */
	unsigned int		first, nsegs;	/* the message's first record, its segments */
	bool			has_rreq;
	struct iwx_read_req	rreq;
	bool			has_term;
	struct term_exp		term;
	bool			has_areq;
	struct iwx_atomic_req	areq;
	bool			has_aresp;
	struct iwx_atomic_resp	aresp;
};

struct exchange {
	const struct config	*cfg;
	struct rec		recs[MAX_RECS];
	unsigned int		nrecs;
	unsigned int		nframes;
	unsigned int		nfpdus;
	bool			crc;
	int			corrupt;	/* FPDU index whose CRC is flipped, -1: none */
	const struct rec	*corrupted;	/* the record of that FPDU */

	/* generation state */
	struct pcapgen		*pg;
	struct iwx_mpa_tx	tx[2];
	bool			markers[2];	/* markers in what dir sends */
	uint32_t		pos[2];		/* stream position, counted by the test */
	uint32_t		mulpdu[2];
	uint8_t			data[16384];	/* message payloads */
	size_t			data_used;
};

static const struct config cfg_a = {
	.name = "rev2-crc", .rev = 2, .enhanced = true, .req_crc = true, .rep_crc = true,
};
static const struct config cfg_b = {
	.name = "rev2-nocrc", .rev = 2, .enhanced = true,
};
/* CRC asked by the Initiator only: either side's C bit turns it on both ways. */
static const struct config cfg_c = {
	.name = "rev1-crc-markers", .rev = 1, .req_crc = true,
	.req_markers = true, .rep_markers = true,
};
static const struct config cfg_d = {
	.name = "rev1-reject", .rev = 1, .req_crc = true, .reject = true,
};
static const struct config cfg_e = {
	.name = "rev2-crc-rfc7306", .rev = 2, .enhanced = true, .req_crc = true, .rep_crc = true,
	.rfc7306 = true,
};

static const char req_pd[] = "iwx conformance: initiator private data";
static const char rep_pd[] = "iwx conformance: responder says hello";
static const char rej_pd[] = "no thanks";

static const char *dir_name(enum pcapgen_dir d)
{
	return d == PCAPGEN_C2S ? "I->R" : "R->I";
}

static struct rec *new_rec(struct exchange *ex, enum rec_kind kind, enum pcapgen_dir dir)
{
	struct rec *r;

	cr_assert_lt(ex->nrecs, MAX_RECS);
	r = &ex->recs[ex->nrecs++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->dir = dir;
	return r;
}

static void emit_rec(struct exchange *ex, struct rec *r)
{
	r->frame = pcapgen_data(ex->pg, r->dir, r->wire, r->wire_len);
	cr_assert_gt(r->frame, 0, "pcapgen_data: %s", strerror(-r->frame));
}

static void mpa_frame(struct exchange *ex, enum pcapgen_dir dir, bool reply, bool markers,
		      bool crc, const char *pd)
{
	const struct config *c = ex->cfg;
	struct rec *r = new_rec(ex, reply ? REC_REP : REC_REQ, dir);
	uint16_t app_len = strlen(pd);
	ssize_t n;

	r->rr = (struct iwx_mpa_rr_params){
		.reply = reply, .markers = markers, .crc = crc, .rev = c->rev,
		.reject = reply && c->reject, .enhanced = c->enhanced, .rdmap_ext = c->rfc7306,
		.pd = (const uint8_t *)pd, .pd_len = app_len,
	};
	snprintf(r->what, sizeof(r->what), "%s MPA %s", dir_name(dir),
		 reply ? "Reply" : "Request");
	if (c->enhanced) {
		/*
		 * RFC 6581 §5: IRD then ORD lead the private data. Peer-to-peer: the
		 * Initiator offers zero-length Send or Read as RTR, the Responder picks
		 * Send and matches IRD to the Initiator's ORD.
		 */
		uint16_t ird_word, ord_word;

		r->rr.ird = reply ? 8 : 16;
		r->rr.ord = 8;
		r->rr.p2p = true;
		r->rr.rtr_send = true;
		r->rr.rtr_read = !reply;
		/* the bits written out: IRD word P2P 0x8000, RTR Send 0x4000; ORD word RTR Read 0x4000 */
		ird_word = r->rr.ird | 0x8000 | 0x4000;
		ord_word = r->rr.ord | (reply ? 0 : 0x4000);
		r->pd[0] = ird_word >> 8;
		r->pd[1] = ird_word;
		r->pd[2] = ord_word >> 8;
		r->pd[3] = ord_word;
		r->pd_len = 4;
	}
	memcpy(r->pd + r->pd_len, pd, app_len);
	r->pd_len += app_len;

	n = iwx_mpa_rr_encode(r->wire, sizeof(r->wire), &r->rr);
	cr_assert_eq(n, (ssize_t)(sizeof(struct iwx_mpa_rr) + r->pd_len),
		     "iwx_mpa_rr_encode(%s) = %zd", r->what, n);
	r->wire_len = n;
	emit_rec(ex, r);
}

/*
 * Where markers fall in an FPDU starting at stream position start, counted here
 * independently of the library (RFC 5044 §4.3): every 512th stream byte, FPDUPTR
 * back to the ULPDU_LENGTH field, 0 for a marker right in front of the FPDU.
 * Returns the FPDU's length on the wire.
 */
static size_t expect_markers(struct rec *r, uint32_t start, size_t content)
{
	uint32_t pos = start, len_pos = start;

	if (pos % IWX_MPA_MARKER_INTERVAL == 0) {
		r->fpduptr[r->nmarkers++] = 0;
		pos += IWX_MPA_MARKER_LEN;
		len_pos = pos;
	}
	for (size_t i = 0; i < content; i++, pos++) {
		if (i > 0 && pos % IWX_MPA_MARKER_INTERVAL == 0) {
			cr_assert_lt(r->nmarkers, MAX_MARKERS);
			r->fpduptr[r->nmarkers++] = pos - len_pos;
			pos += IWX_MPA_MARKER_LEN;
		}
	}
	return pos - start;
}

/*
 * The payload of r as tshark 4.0 shows it. Its marker removal (remove_markers() in
 * packet-iwarp-mpa.c) copies 512 bytes from one marker to the next where there
 * are 508, so from an FPDU's second marker on, what it shows takes in marker
 * bytes and skips as many payload bytes. Emulated from what we meant to send:
 * the FPDU content, with our expected markers, through tshark's copy loop.
 */
static void expect_view(struct rec *r, size_t hlen, size_t content_len, size_t wire_len)
{
	uint8_t content[MAX_WIRE], wire[MAX_WIRE], view[MAX_WIRE];
	size_t at = 0, c = 0, m = 0, first, view_len, tot = 0, cur, p = 0;

	if (r->nmarkers == 0) {
		memcpy(r->view, r->payload, r->len);
		return;
	}
	/* length field and header are not in the view's payload part: zeros will do */
	memset(content, 0, sizeof(content));
	memcpy(content + IWX_MPA_HDR_LEN + hlen, r->payload, r->len);
	memcpy(content + content_len - IWX_MPA_CRC_LEN, r->crc, IWX_MPA_CRC_LEN);
	/* markers where expect_markers() put them: 512 apart from the first */
	first = r->fpduptr[0];
	while (at < wire_len) {
		if (m < r->nmarkers && at == first + m * IWX_MPA_MARKER_INTERVAL) {
			wire[at++] = 0;
			wire[at++] = 0;
			wire[at++] = r->fpduptr[m] >> 8;
			wire[at++] = r->fpduptr[m];
			m++;
		} else {
			wire[at++] = content[c++];
		}
	}
	view_len = wire_len - IWX_MPA_MARKER_LEN * r->nmarkers;
	for (cur = first; tot < view_len;) {
		memcpy(view + tot, wire + p, cur);
		tot += cur;
		p += cur + IWX_MPA_MARKER_LEN;
		cur = view_len - tot < IWX_MPA_MARKER_INTERVAL ? view_len - tot :
							       IWX_MPA_MARKER_INTERVAL;
	}
	memcpy(r->view, view + IWX_MPA_HDR_LEN + hlen, r->len);
}

/* Cut msg into segments at the MULPDU, frame each into its own TCP segment. */
static void send_msg(struct exchange *ex, enum pcapgen_dir dir, const struct iwx_ddp_msg *msg,
		     const void *hdr_payload, const char *what)
{
	struct iwx_ddp_segmenter s;
	uint8_t hdr[IWX_DDP_UNTAGGED_HDR_LEN];
	uint32_t off, len, next_off = 0;
	unsigned int first = ex->nrecs, nsegs;
	const uint8_t *payload = hdr_payload;
	size_t hlen;

	if (!payload) {
		cr_assert_leq(ex->data_used + msg->len, sizeof(ex->data));
		payload = ex->data + ex->data_used;
		fill_pattern(ex->data + ex->data_used, msg->len, ex->nrecs + 1);
		ex->data_used += msg->len;
	}
	cr_assert_eq(iwx_ddp_segmenter_init(&s, msg, ex->mulpdu[dir]), 0);
	while ((hlen = iwx_ddp_segmenter_next(&s, hdr, &off, &len)) > 0) {
		struct rec *r = new_rec(ex, REC_FPDU, dir);
		size_t content, want;
		ssize_t n;
		uint32_t crc;

		/* the segmenter's contract, checked here rather than trusted */
		cr_assert_eq(hlen, iwx_rdmap_opcode_tagged(msg->opcode) ? 14u : 18u);
		cr_assert_eq(off, next_off, "%s: segment at %u, want %u", what, off, next_off);
		cr_assert_leq(hlen + len, ex->mulpdu[dir]);
		next_off = off + len;

		r->msg = *msg;
		r->off = off;
		r->len = len;
		r->last = next_off == msg->len;
		r->payload = payload + off;
		r->crc_on = ex->crc;
		content = IWX_MPA_HDR_LEN + hlen + len + iwx_mpa_pad_len(hlen + len) +
			  IWX_MPA_CRC_LEN;
		want = ex->markers[dir] ? expect_markers(r, ex->pos[dir], content) : content;

		n = iwx_mpa_fpdu_build(&ex->tx[dir], r->wire, sizeof(r->wire), hdr, hlen,
				       payload + off, len);
		cr_assert_eq(n, (ssize_t)want, "%s: FPDU of %zd bytes, want %zu", what, n, want);
		cr_assert_leq((size_t)n, EMSS, "%s: FPDU over the EMSS", what);
		r->wire_len = n;
		ex->pos[dir] += n;

		crc = ex->crc ? iwx_crc32c(r->wire, n - IWX_MPA_CRC_LEN) : 0;
		iwx_crc32c_put(r->crc, crc);
		expect_view(r, hlen, content, want);
		if ((int)ex->nfpdus == ex->corrupt) {
			r->wire[n - 2] ^= 0x01;	/* the expectation keeps the right CRC */
			ex->corrupted = r;
		}
		ex->nfpdus++;
		emit_rec(ex, r);
	}
	cr_assert(s.done && next_off == msg->len, "%s: message not fully segmented", what);
	nsegs = ex->nrecs - first;
	cr_assert(nsegs == 1 || msg->len <= MAX_REASM || iwx_rdmap_opcode_tagged(msg->opcode),
		  "%s: too long for the reassembled Send check", what);
	for (unsigned int i = first; i < ex->nrecs; i++) {
		struct rec *r = &ex->recs[i];

		cr_assert_eq(r->last, i == ex->nrecs - 1, "%s: L flag on segment %u", what, i - first);
		r->first = first;
		r->nsegs = nsegs;
		if (nsegs > 1)
			snprintf(r->what, sizeof(r->what), "%s %s seg %u/%u", dir_name(dir), what,
				 i - first + 1, nsegs);
		else
			snprintf(r->what, sizeof(r->what), "%s %s", dir_name(dir), what);
	}
}

static void send_plain(struct exchange *ex, enum pcapgen_dir dir, uint8_t opcode, uint32_t msn,
		       uint32_t inval, uint32_t len, const char *what)
{
	struct iwx_ddp_msg m = { .opcode = opcode, .msn = msn, .inval_stag = inval, .len = len };

	send_msg(ex, dir, &m, NULL, what);
}

static void send_tagged(struct exchange *ex, enum pcapgen_dir dir, uint8_t opcode, uint32_t stag,
			uint64_t to, uint32_t len, const char *what)
{
	struct iwx_ddp_msg m = { .opcode = opcode, .stag = stag, .to = to, .len = len };

	send_msg(ex, dir, &m, NULL, what);
}

static void ack(struct exchange *ex, enum pcapgen_dir dir)
{
	int f = pcapgen_ack(ex->pg, dir);

	cr_assert_gt(f, 0);
}

/*
 * RFC 7306, after the Read: a Fetch-Add and a Compare-and-Swap on queue 1 (MSN 2 and 3,
 * after the Read Request), their Responses on queue 3, a Write with Immediate Data and
 * Immediate Data with SE (the Initiator's next Send MSNs, from msn). Returns the MSN
 * after them.
 */
static uint32_t send_rfc7306(struct exchange *ex, uint32_t msn)
{
	static const struct iwx_atomic_req areq[2] = {
		{ .aop = IWX_AOP_FETCH_ADD, .req_id = 0x0a0b0c0d, .stag = 0x00c0ffee,
		  .to = 0x0000000010000008ull, .add_swap = 0x0123456789abcdefull,
		  .add_swap_mask = 0x8000000080000000ull, .compare_mask = ~0ull },
		{ .aop = IWX_AOP_CMP_SWAP, .req_id = 0xfeedf00d, .stag = 0x00c0ffee,
		  .to = 0x00007f0000002000ull, .add_swap = 0xfedcba9876543210ull,
		  .add_swap_mask = 0x00ff00ff00ff00ffull, .compare = 0x1122334455667788ull,
		  .compare_mask = 0xffffffff00000000ull },
	};
	static const struct iwx_atomic_resp aresp[2] = {
		{ .req_id = 0x0a0b0c0d, .orig = 0x8877665544332211ull },
		{ .req_id = 0xfeedf00d, .orig = 0x1122334455667788ull },
	};
	static const uint8_t imm[2][IWX_RDMAP_IMM_LEN] = {
		{ 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0 }, { 1, 2, 3, 4, 5, 6, 7, 8 },
	};
	static const char *const what[2] = { "Atomic Request FetchAdd", "Atomic Request CmpSwap" };
	uint8_t hdr[IWX_RDMAP_ATOMIC_REQ_LEN];
	struct iwx_ddp_msg m;
	struct rec *r;

	for (int i = 0; i < 2; i++) {
		iwx_atomic_req_encode(hdr, &areq[i]);
		m = (struct iwx_ddp_msg){ .opcode = IWX_OP_ATOMIC_REQ, .msn = 2 + i,
					  .len = IWX_RDMAP_ATOMIC_REQ_LEN };
		send_msg(ex, PCAPGEN_C2S, &m, hdr, what[i]);
		r = &ex->recs[ex->nrecs - 1];
		r->has_areq = true;
		r->areq = areq[i];
	}
	for (int i = 0; i < 2; i++) {
		iwx_atomic_resp_encode(hdr, &aresp[i]);
		m = (struct iwx_ddp_msg){ .opcode = IWX_OP_ATOMIC_RESP, .msn = 1 + i,
					  .len = IWX_RDMAP_ATOMIC_RESP_LEN };
		send_msg(ex, PCAPGEN_S2C, &m, hdr, "Atomic Response");
		r = &ex->recs[ex->nrecs - 1];
		r->has_aresp = true;
		r->aresp = aresp[i];
	}
	send_tagged(ex, PCAPGEN_C2S, IWX_OP_WRITE, 0x00c0ffee, 0x10000100, 64, "RDMA Write");
	m = (struct iwx_ddp_msg){ .opcode = IWX_OP_IMM, .msn = msn++, .len = IWX_RDMAP_IMM_LEN };
	send_msg(ex, PCAPGEN_C2S, &m, imm[0], "Immediate Data");
	m = (struct iwx_ddp_msg){ .opcode = IWX_OP_IMM_SE, .msn = msn++, .len = IWX_RDMAP_IMM_LEN };
	send_msg(ex, PCAPGEN_C2S, &m, imm[1], "Immediate Data with SE");
	ack(ex, PCAPGEN_S2C);
	return msn;
}

/*
 * The exchange: handshake, MPA set-up, then (unless rejected) Initiator Send, Send
 * with SE back, Send with Invalidate, a 5000-byte RDMA Write, a 2000-byte Send
 * with SE and Invalidate, a Read Request and its 3000-byte Read Response, RFC 7306's
 * messages when cfg says so, an empty Send the Responder has no buffer for, and the
 * Responder's Terminate about it.
 */
static void build_exchange(struct exchange *ex, const struct config *cfg, const char *path,
			   int corrupt)
{
	struct iwx_mpa_rr_params *req, *rep;
	struct iwx_mpa_mode mode_i, mode_r;
	struct iwx_read_req rreq = {
		.sink_stag = 0xdeadbe01, .sink_to = 0x00007f0000001000ull, .size = 3000,
		.src_stag = 0x0badf00d, .src_to = 0x0000000000200040ull,
	};
	struct iwx_term_cause cause;
	struct iwx_ddp_seg seg;
	const struct rec *empty;
	uint8_t rr_hdr[IWX_RDMAP_READ_REQ_LEN], term_hdr[IWX_TERM_MAX_LEN];
	uint8_t empty_hdr[IWX_DDP_UNTAGGED_HDR_LEN];
	struct iwx_ddp_msg m;
	struct iwx_term term;
	struct rec *r;
	uint32_t msn;
	int ret;

	memset(ex, 0, sizeof(*ex));
	ex->cfg = cfg;
	ex->corrupt = corrupt;
	ret = pcapgen_open(&ex->pg, path, CPORT, SPORT, MSS);
	cr_assert_eq(ret, 0, "pcapgen_open(%s): %s", path, strerror(-ret));

	mpa_frame(ex, PCAPGEN_C2S, false, cfg->req_markers, cfg->req_crc, req_pd);
	ack(ex, PCAPGEN_S2C);
	mpa_frame(ex, PCAPGEN_S2C, true, cfg->rep_markers, cfg->rep_crc,
		  cfg->reject ? rej_pd : rep_pd);
	ack(ex, PCAPGEN_C2S);
	req = &ex->recs[0].rr;
	rep = &ex->recs[1].rr;

	if (cfg->reject) {
		ret = pcapgen_close_flow(ex->pg, PCAPGEN_C2S);
		cr_assert_eq(ret, 0);
		goto out;
	}

	mode_i = iwx_mpa_mode_of(req, rep);
	mode_r = iwx_mpa_mode_of(rep, req);
	cr_assert_eq(mode_i.crc, cfg->req_crc || cfg->rep_crc);
	cr_assert_eq(mode_r.crc, mode_i.crc);
	cr_assert_eq(mode_i.markers_tx, cfg->rep_markers);
	cr_assert_eq(mode_r.markers_tx, cfg->req_markers);
	ex->crc = mode_i.crc;
	ex->markers[PCAPGEN_C2S] = cfg->rep_markers;
	ex->markers[PCAPGEN_S2C] = cfg->req_markers;
	iwx_mpa_tx_init(&ex->tx[PCAPGEN_C2S], &mode_i);
	iwx_mpa_tx_init(&ex->tx[PCAPGEN_S2C], &mode_r);
	for (int d = 0; d < 2; d++)
		ex->mulpdu[d] = iwx_mpa_mulpdu(EMSS, ex->markers[d]);

	/*
	 * The Initiator speaks first: in revision 1 the Responder waits for its first
	 * FPDU (RFC 5044 §7.1), in peer-to-peer revision 2 for the RTR (RFC 6581).
	 */
	msn = 1;
	if (cfg->enhanced)
		send_plain(ex, PCAPGEN_C2S, IWX_OP_SEND, msn++, 0, 0, "RTR (empty Send)");
	send_plain(ex, PCAPGEN_C2S, IWX_OP_SEND, msn++, 0, 64, "Send");
	ack(ex, PCAPGEN_S2C);
	send_plain(ex, PCAPGEN_S2C, IWX_OP_SEND_SE, 1, 0, 100, "Send with SE");
	send_plain(ex, PCAPGEN_C2S, IWX_OP_SEND_INV, msn++, 0x1234abcd, 37, "Send with Invalidate");
	send_tagged(ex, PCAPGEN_C2S, IWX_OP_WRITE, 0x00c0ffee, 0x10000123, 5000, "RDMA Write");
	ack(ex, PCAPGEN_S2C);
	send_plain(ex, PCAPGEN_C2S, IWX_OP_SEND_SE_INV, msn++, 0x0000ab01, 2000,
		   "Send with SE and Invalidate");

	iwx_read_req_encode(rr_hdr, &rreq);
	m = (struct iwx_ddp_msg){ .opcode = IWX_OP_READ_REQ, .msn = 1, .len = sizeof(rr_hdr) };
	send_msg(ex, PCAPGEN_C2S, &m, rr_hdr, "Read Request");
	r = &ex->recs[ex->nrecs - 1];
	r->has_rreq = true;
	r->rreq = rreq;
	ack(ex, PCAPGEN_S2C);
	send_tagged(ex, PCAPGEN_S2C, IWX_OP_READ_RESP, rreq.sink_stag, rreq.sink_to, rreq.size,
		    "Read Response");
	ack(ex, PCAPGEN_C2S);
	if (cfg->rfc7306)
		msn = send_rfc7306(ex, msn);

	send_plain(ex, PCAPGEN_C2S, IWX_OP_SEND, msn, 0, 0, "empty Send");
	empty = &ex->recs[ex->nrecs - 1];

	/*
	 * The Responder has no buffer for that MSN: DDP untagged error, code 2, with the
	 * segment's length and header copied (RFC 5040 §4.8, Figure 10). The receiver
	 * decodes the segment and the library builds the Terminate; what it must say
	 * is written out by hand below.
	 */
	cr_assert_eq(iwx_ddp_hdr_encode(empty_hdr, &empty->msg, 0, true), IWX_DDP_UNTAGGED_HDR_LEN);
	ret = iwx_ddp_decode(empty_hdr, sizeof(empty_hdr), &seg, &cause);
	cr_assert_eq(ret, 0, "iwx_ddp_decode of our own empty Send");
	iwx_term_init(&term, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), &seg, NULL);
	m = (struct iwx_ddp_msg){ .opcode = IWX_OP_TERMINATE, .msn = 1 };
	m.len = iwx_term_encode(term_hdr, &term);
	send_msg(ex, PCAPGEN_S2C, &m, term_hdr, "Terminate");
	r = &ex->recs[ex->nrecs - 1];
	r->has_term = true;
	r->term = (struct term_exp){
		.layer = IWX_LAYER_DDP, .etype = IWX_DDP_ETYPE_UNTAGGED,
		.ecode = IWX_DDP_U_MSN_NO_BUF, .m = true, .d = true, .r = false,
		.seg_len = IWX_DDP_UNTAGGED_HDR_LEN,
		/* L, DDP v1 | RDMAP v1 Send | Inval STag 0 | QN 0 | MSN | MO 0 */
		.ddp_hdr = { 0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
			     msn >> 24, msn >> 16, msn >> 8, msn, 0, 0, 0, 0 },
	};
	ret = pcapgen_close_flow(ex->pg, PCAPGEN_S2C);
	cr_assert_eq(ret, 0);
out:
	ex->nframes = pcapgen_frames(ex->pg);
	ret = pcapgen_close(ex->pg);
	ex->pg = NULL;
	cr_assert_eq(ret, 0, "pcapgen_close: %s", strerror(-ret));
}

/* ------------------------------------------------------------ the checker */

/* Failures found by the checker, as text. */
struct report {
	char		text[16384];
	size_t		len;
	unsigned int	failures;
};

__attribute__((format(printf, 2, 3)))
static void fail(struct report *rep, const char *fmt, ...)
{
	va_list ap;

	rep->failures++;
	if (rep->len + 1 >= sizeof(rep->text))
		return;
	va_start(ap, fmt);
	rep->len += vsnprintf(rep->text + rep->len, sizeof(rep->text) - rep->len, fmt, ap);
	va_end(ap);
	if (rep->len + 1 < sizeof(rep->text)) {
		rep->text[rep->len++] = '\n';
		rep->text[rep->len] = '\0';
	} else {
		rep->len = sizeof(rep->text) - 1;
	}
}

#define FIELDS(X)							\
	X(F_FRAME,	"frame.number")					\
	X(F_KEY_REQ,	"iwarp_mpa.key.req")				\
	X(F_KEY_REP,	"iwarp_mpa.key.rep")				\
	X(F_M,		"iwarp_mpa.marker_flag")			\
	X(F_C,		"iwarp_mpa.crc_flag")				\
	X(F_R,		"iwarp_mpa.rej_flag")				\
	X(F_RES,	"iwarp_mpa.res")				\
	X(F_REV,	"iwarp_mpa.rev")				\
	X(F_PDLEN,	"iwarp_mpa.pdlength")				\
	X(F_PD,		"iwarp_mpa.privatedata")			\
	X(F_ULPDULEN,	"iwarp_mpa.ulpdulength")			\
	X(F_PAD,	"iwarp_mpa.pad")				\
	X(F_CRC,	"iwarp_mpa.crc")				\
	X(F_CRC_CHECK,	"iwarp_mpa.crc_check")				\
	X(F_MRK_RES,	"iwarp_mpa.marker_res")				\
	X(F_MRK_PTR,	"iwarp_mpa.marker_fpduptr")			\
	X(F_T,		"iwarp_ddp.tagged_flag")			\
	X(F_L,		"iwarp_ddp.last_flag")				\
	X(F_DDP_RSVD,	"iwarp_ddp.rsvd")				\
	X(F_DV,		"iwarp_ddp.dv")					\
	X(F_RSVDULP,	"iwarp_ddp.rsvdulp")				\
	X(F_STAG,	"iwarp_ddp.stag")				\
	X(F_TO,		"iwarp_ddp.tagged_offset")			\
	X(F_QN,		"iwarp_ddp.qn")					\
	X(F_MSN,	"iwarp_ddp.msn")				\
	X(F_MO,		"iwarp_ddp.mo")					\
	X(F_RV,		"iwarp_rdma.version")				\
	X(F_RSV,	"iwarp_rdma.rsv")				\
	X(F_OP,		"iwarp_rdma.opcode")				\
	X(F_INVAL,	"iwarp_rdma.inval_stag")			\
	X(F_RDMA_RSVD,	"iwarp_rdma.reserved")				\
	X(F_SINKSTAG,	"iwarp_rdma.sinkstag")				\
	X(F_SINKTO,	"iwarp_rdma.sinkto")				\
	X(F_RDSZ,	"iwarp_rdma.rdmardsz")				\
	X(F_SRCSTAG,	"iwarp_rdma.srcstag")				\
	X(F_SRCTO,	"iwarp_rdma.srcto")				\
	X(F_TLAYER,	"iwarp_rdma.term_layer")			\
	X(F_TET,	"iwarp_rdma.term_etype")			\
	X(F_TET_RDMA,	"iwarp_rdma.term_etype_rdma")			\
	X(F_TET_DDP,	"iwarp_rdma.term_etype_ddp")			\
	X(F_TET_LLP,	"iwarp_rdma.term_etype_llp")			\
	X(F_TEC,	"iwarp_rdma.term_errcode")			\
	X(F_TEC_RDMA,	"iwarp_rdma.term_errcode_rdma")			\
	X(F_TEC_DDPT,	"iwarp_rdma.term_errcode_ddp_tagged")		\
	X(F_TEC_DDPU,	"iwarp_rdma.term_errcode_ddp_untagged")		\
	X(F_TEC_LLP,	"iwarp_rdma.term_errcode_llp")			\
	X(F_TM,		"iwarp_rdma.term_hdrct_m")			\
	X(F_TD,		"iwarp_rdma.hdrct_d")				\
	X(F_TR,		"iwarp_rdma.hdrct_r")				\
	X(F_TRSVD,	"iwarp_rdma.term_rsvd")				\
	X(F_TSEGLEN,	"iwarp_rdma.term_ddp_seg_len")			\
	X(F_TDDPH,	"iwarp_rdma.term_ddp_h")			\
	X(F_TRDMAH,	"iwarp_rdma.term_rdma_h")			\
	X(F_A_RSVD,	"iwarp_rdma.atomic.reserved")			\
	X(F_A_OP,	"iwarp_rdma.atomic.opcode")			\
	X(F_A_REQID,	"iwarp_rdma.atomic.request_identifier")		\
	X(F_A_STAG,	"iwarp_rdma.atomic.remote_stag")		\
	X(F_A_TO,	"iwarp_rdma.atomic.remote_tagged_offset")	\
	X(F_A_ADD,	"iwarp_rdma.atomic.add_data")			\
	X(F_A_ADDMASK,	"iwarp_rdma.atomic.add_mask")			\
	X(F_A_SWAP,	"iwarp_rdma.atomic.swap_data")			\
	X(F_A_SWAPMASK,	"iwarp_rdma.atomic.swap_mask")			\
	X(F_A_CMP,	"iwarp_rdma.atomic.compare_data")		\
	X(F_A_CMPMASK,	"iwarp_rdma.atomic.compare_mask")		\
	X(F_A_OREQID,	"iwarp_rdma.atomic.original_request_identifier") \
	X(F_A_ORIG,	"iwarp_rdma.atomic.original_remote_data_value")	\
	X(F_FRAGS,	"iwarp_rdma.send.fragment")			\
	X(F_NFRAGS,	"iwarp_rdma.send.fragment.count")		\
	X(F_REASM_LEN,	"iwarp_rdma.send.reassembled.length")		\
	X(F_DATA,	"data.data")

#define X_ENUM(id, name) id,
#define X_NAME(id, name) name,
enum field { FIELDS(X_ENUM) NFIELDS };
static const char *const field_names[NFIELDS] = { FIELDS(X_NAME) };

struct row {
	char v[NFIELDS][VAL_MAX];
};

__attribute__((format(printf, 3, 4)))
static void set(struct row *w, enum field f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->v[f], VAL_MAX, fmt, ap);
	va_end(ap);
}

/* tshark's -T fields formatting, as 4.0 prints it. */
static void set_bool(struct row *w, enum field f, bool b)
{
	set(w, f, "%s", b ? "1" : "0");
}

static void set_bytes(struct row *w, enum field f, const uint8_t *p, size_t n)
{
	char *o = w->v[f];

	cr_assert_lt(2 * n, (size_t)VAL_MAX);
	for (size_t i = 0; i < n; i++)
		o += sprintf(o, "%02x", p[i]);
	*o = '\0';
}

/* The fields tshark should show for r. */
static void expect_row(const struct exchange *ex, const struct rec *r, struct row *w)
{
	bool tagged = iwx_rdmap_opcode_tagged(r->msg.opcode);

	memset(w, 0, sizeof(*w));
	set(w, F_FRAME, "%d", r->frame);

	if (r->kind != REC_FPDU) {
		set_bytes(w, r->kind == REC_REQ ? F_KEY_REQ : F_KEY_REP,
			  (const uint8_t *)(r->kind == REC_REQ ? IWX_MPA_KEY_REQ : IWX_MPA_KEY_REP),
			  IWX_MPA_KEY_LEN);
		set_bool(w, F_M, r->rr.markers);
		set_bool(w, F_C, r->rr.crc);
		set_bool(w, F_R, r->rr.reject);
		/* tshark 4.0 counts H and iwx's RFC 7306 bit among the reserved bits (0x1f) */
		set(w, F_RES, "0x%02x", (r->rr.enhanced ? IWX_MPA_FLAG_ENHANCED : 0) |
					(r->rr.rdmap_ext ? IWX_MPA_FLAG_RDMAP_EXT : 0));
		set(w, F_REV, "%u", r->rr.rev);
		set(w, F_PDLEN, "%u", r->pd_len);
		if (r->pd_len)
			set_bytes(w, F_PD, r->pd, r->pd_len);
		return;
	}

	uint32_t hlen = tagged ? IWX_DDP_TAGGED_HDR_LEN : IWX_DDP_UNTAGGED_HDR_LEN;
	uint32_t ulpdu = hlen + r->len;
	uint8_t pad[3] = { 0 };

	set(w, F_ULPDULEN, "%u", ulpdu);
	if (iwx_mpa_pad_len(ulpdu))
		set_bytes(w, F_PAD, pad, iwx_mpa_pad_len(ulpdu));
	if (r->crc_on)
		set(w, F_CRC_CHECK, "0x%02x%02x%02x%02x", r->crc[0], r->crc[1], r->crc[2], r->crc[3]);
	else
		set(w, F_CRC, "0x00000000");
	if (r->nmarkers) {
		char *res = w->v[F_MRK_RES], *ptr = w->v[F_MRK_PTR];

		for (unsigned int i = 0; i < r->nmarkers; i++) {
			res += sprintf(res, "%s0x0000", i ? "," : "");
			ptr += sprintf(ptr, "%s%u", i ? "," : "", r->fpduptr[i]);
		}
	}

	set_bool(w, F_T, tagged);
	set_bool(w, F_L, r->last);
	set(w, F_DDP_RSVD, "0x00");
	set(w, F_DV, "%u", IWX_DDP_VERSION);
	if (tagged) {
		set(w, F_STAG, "0x%08x", r->msg.stag);
		set(w, F_TO, "0x%016llx", (unsigned long long)(r->msg.to + r->off));
	} else {
		set(w, F_QN, "%u", iwx_rdmap_opcode_qn(r->msg.opcode));
		set(w, F_MSN, "%u", r->msg.msn);
		set(w, F_MO, "%u", r->off);
	}
	set(w, F_RV, "%u", IWX_RDMAP_VERSION);
	set(w, F_RSV, "0x00");
	set(w, F_OP, "0x%02x", r->msg.opcode);
	if (!tagged) {
		/* RsvdULP: the RDMAP control byte, then the Invalidate STag or zero */
		uint32_t inval = iwx_rdmap_opcode_has_inval(r->msg.opcode) ? r->msg.inval_stag : 0;
		uint8_t ulp[5] = { iwx_rdmap_ctrl(r->msg.opcode), inval >> 24, inval >> 16,
				   inval >> 8, inval };

		set_bytes(w, F_RSVDULP, ulp, sizeof(ulp));
		/* RFC 7306's opcodes: tshark shows their RsvdULP, not the field within */
		if (iwx_rdmap_opcode_has_inval(r->msg.opcode))
			set(w, F_INVAL, "%u", inval);
		else if (r->msg.opcode < IWX_OP_COUNT_RFC5040)
			set(w, F_RDMA_RSVD, "00000000");
	}
	if (r->has_rreq) {
		set(w, F_SINKSTAG, "0x%08x", r->rreq.sink_stag);
		set(w, F_SINKTO, "0x%016llx", (unsigned long long)r->rreq.sink_to);
		set(w, F_RDSZ, "%u", r->rreq.size);
		set(w, F_SRCSTAG, "0x%08x", r->rreq.src_stag);
		set(w, F_SRCTO, "0x%016llx", (unsigned long long)r->rreq.src_to);
	}
	if (r->has_term) {
		const struct term_exp *t = &r->term;
		uint8_t seglen[2] = { t->seg_len >> 8, t->seg_len };

		/* a DDP untagged error: tshark names the fields after the layer and type */
		cr_assert(t->layer == IWX_LAYER_DDP && t->etype == IWX_DDP_ETYPE_UNTAGGED);
		set(w, F_TLAYER, "0x%02x", t->layer);
		set(w, F_TET_DDP, "0x%02x", t->etype);
		set(w, F_TEC_DDPU, "0x%02x", t->ecode);
		set_bool(w, F_TM, t->m);
		set_bool(w, F_TD, t->d);
		set_bool(w, F_TR, t->r);
		set(w, F_TRSVD, "0x0000");
		set_bytes(w, F_TSEGLEN, seglen, sizeof(seglen));
		set_bytes(w, F_TDDPH, t->ddp_hdr, sizeof(t->ddp_hdr));
	}
	if (r->has_areq) {
		const struct iwx_atomic_req *a = &r->areq;
		bool cs = a->aop == IWX_AOP_CMP_SWAP;

		/* tshark 4.0 shows the masks in hex, the rest in decimal */
		set(w, F_A_RSVD, "0");
		set(w, F_A_OP, "%u", a->aop);
		set(w, F_A_REQID, "%u", a->req_id);
		set(w, F_A_STAG, "%u", a->stag);
		set(w, F_A_TO, "%llu", (unsigned long long)a->to);
		set(w, cs ? F_A_SWAP : F_A_ADD, "%llu", (unsigned long long)a->add_swap);
		set(w, cs ? F_A_SWAPMASK : F_A_ADDMASK, "0x%016llx",
		    (unsigned long long)a->add_swap_mask);
		set(w, F_A_CMP, "%llu", (unsigned long long)a->compare);
		set(w, F_A_CMPMASK, "0x%016llx", (unsigned long long)a->compare_mask);
	}
	if (r->has_aresp) {
		set(w, F_A_OREQID, "%u", r->aresp.req_id);
		set(w, F_A_ORIG, "%llu", (unsigned long long)r->aresp.orig);
	}
	/*
	 * Wireshark's dissector does not know Immediate Data (opcodes 8 and 9, "Unknown"):
	 * tshark checks its headers' fields above (opcode, QN, MSN, MO), not its 8 bytes.
	 */
	if (r->has_rreq || r->has_term || r->has_areq || r->has_aresp ||
	    iwx_rdmap_opcode_imm(r->msg.opcode))
		return;
	if (tagged || r->nsegs == 1) {
		if (r->len)
			set_bytes(w, F_DATA, r->view, r->len);
	} else if (r->last) {
		/* tshark reassembles a segmented Send by MSN and shows it at the last segment */
		uint8_t msg[MAX_REASM];
		char *frags = w->v[F_FRAGS];

		for (unsigned int i = r->first; i < r->first + r->nsegs; i++) {
			const struct rec *s = &ex->recs[i];

			memcpy(msg + s->off, s->view, s->len);
			frags += sprintf(frags, "%s%d", i > r->first ? "," : "", s->frame);
		}
		set(w, F_NFRAGS, "%u", r->nsegs);
		set(w, F_REASM_LEN, "%u", r->msg.len);
		set_bytes(w, F_DATA, msg, r->msg.len);
	}
}

/*
 * Run tshark on pcap with args; its stdout in *out (malloc'd). Returns 0 or -errno;
 * a non-zero exit or anything on stderr but the root notice is a failure in rep.
 * IP and TCP checksums are checked too (pcapgen's frames must be clean), and the
 * RPC-over-RDMA and SMB Direct heuristics are off: our payloads are patterns, and
 * tshark 4.0's RPC-over-RDMA heuristic throws "Malformed" on a zero-length Send.
 */
static int run_tshark(const char *tmp, const char *pcap, const char *args, char **out,
		      struct report *rep)
{
	char cmd[4096], errpath[512], line[512];
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	FILE *p, *err;
	size_t n;
	int status;

	if (!buf)
		return -ENOMEM;
	snprintf(errpath, sizeof(errpath), "%s/tshark.err", tmp);
	snprintf(cmd, sizeof(cmd),
		 "HOME='%s' LC_ALL=C tshark -n -r '%s' -o tcp.desegment_tcp_streams:TRUE "
		 "-o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE "
		 "--disable-heuristic rpcrdma_iwarp --disable-heuristic smb_direct_iwarp "
		 "%s 2>'%s'",
		 tmp, pcap, args, errpath);
	p = popen(cmd, "r");
	if (!p) {
		free(buf);
		return -errno;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				pclose(p);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
	}
	buf[len] = '\0';
	status = pclose(p);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail(rep, "tshark %s: exit status %d", args, status);

	/* stderr: only the "Running as user root" notice is expected */
	err = fopen(errpath, "r");
	if (err) {
		while (fgets(line, sizeof(line), err))
			if (!strstr(line, "Running as user"))
				fail(rep, "tshark %s: stderr: %s", args, line);
		fclose(err);
		unlink(errpath);
	}
	*out = buf;
	return 0;
}

static const struct rec *rec_of_frame(const struct exchange *ex, int frame)
{
	for (unsigned int i = 0; i < ex->nrecs; i++)
		if (ex->recs[i].frame == frame)
			return &ex->recs[i];
	return NULL;
}

/* Report a field that differs; a long value from a little before where the two part. */
static void mismatch(struct report *rep, int frame, const struct rec *r, enum field f,
		     const char *got, const char *want)
{
	size_t n = 0, at;

	while (got[n] && got[n] == want[n])
		n++;
	at = n > 16 ? n - 16 : 0;
	fail(rep, "frame %d (%s): %s is '%s%.64s%s', want '%s%.64s%s'", frame,
	     r ? r->what : "TCP only", field_names[f],
	     at ? "..." : "", got + at, strlen(got + at) > 64 ? "..." : "",
	     at ? "..." : "", want + at, strlen(want + at) > 64 ? "..." : "");
}

/* Every frame's fields against what we encoded (frames not ours: no iWARP field). */
static void check_fields(const struct exchange *ex, char *out, struct report *rep)
{
	static struct row want;
	char *line, *save = NULL;
	unsigned int rows = 0;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *got[NFIELDS] = { 0 };
		char *rest = line;
		const struct rec *r;
		int frame;
		unsigned int f;

		for (f = 0; f < NFIELDS && rest; f++)
			got[f] = strsep(&rest, "\t");
		if (f != NFIELDS || rest) {
			fail(rep, "fields line %u: %u columns, want %d", rows + 1, f, NFIELDS);
			continue;
		}
		rows++;
		frame = atoi(got[F_FRAME]);
		r = rec_of_frame(ex, frame);
		if (r) {
			expect_row(ex, r, &want);
		} else {
			memset(&want, 0, sizeof(want));
			snprintf(want.v[F_FRAME], VAL_MAX, "%d", frame);
		}
		for (f = 1; f < NFIELDS; f++)
			if (strcmp(got[f], want.v[f]) != 0)
				mismatch(rep, frame, r, f, got[f], want.v[f]);
	}
	if (rows != ex->nframes)
		fail(rep, "tshark listed %u frames, the capture has %u", rows, ex->nframes);
}

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* tshark's own CRC verdicts: all good when CRC is on, none at all otherwise. */
static void check_crc_verdicts(const struct exchange *ex, const char *out, struct report *rep)
{
	unsigned int good = count(out, "(Good CRC32)"), bad = count(out, "Bad CRC32");
	unsigned int want = ex->crc ? ex->nfpdus : 0;

	if (good != want || bad != 0)
		fail(rep, "CRC verdicts: %u good, %u bad; want %u good, 0 bad", good, bad, want);
	if (strstr(out, "Malformed"))
		fail(rep, "tshark found a malformed packet");
}

/*
 * tshark -z expert: sections "Errors (n)", "Warns (n)", "Notes (n)", "Chats (n)",
 * each a table of "frequency group protocol summary". No error or warning other
 * than tshark 4.0's two complaints about a revision-2 Request, which must be there.
 */
static void check_expert(const struct exchange *ex, char *out, struct report *rep)
{
	static const char *const rev2[] = {
		"Res field is NOT set to zero as required by RFC 5044",
		"Rev field is NOT set to one as required by RFC 5044",
	};
	bool seen[2] = { false, false };
	bool in_bad = false;
	char *line, *save = NULL;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *s = line + strspn(line, " ");
		bool allowed = false;

		if (!strncmp(line, "Errors (", 8) || !strncmp(line, "Warns (", 7)) {
			in_bad = true;
			continue;
		}
		if (!strncmp(line, "Notes (", 7) || !strncmp(line, "Chats (", 7) ||
		    !strncmp(line, "Comments (", 10)) {
			in_bad = false;
			continue;
		}
		if (!in_bad || *s < '0' || *s > '9')
			continue;
		for (int i = 0; i < 2; i++) {
			if (ex->cfg->rev == IWX_MPA_REV2 && strstr(s, rev2[i])) {
				allowed = true;
				seen[i] = true;
			}
		}
		if (!allowed)
			fail(rep, "tshark expert: %s", s);
	}
	for (int i = 0; i < 2; i++)
		if (ex->cfg->rev == IWX_MPA_REV2 && !seen[i])
			fail(rep, "tshark expert: missing the expected rev-2 warning \"%s\"", rev2[i]);
}

/*
 * Check the capture at pcap against ex. Returns 0 when tshark agrees with every
 * field, -EPROTO with rep filled when it does not, or -errno when it cannot run.
 */
static int check_capture(const char *tmp, const char *pcap, const struct exchange *ex,
			 struct report *rep)
{
	char args[2048], *p = args, *out;
	int ret;

	memset(rep, 0, sizeof(*rep));
	p += sprintf(p, "-T fields -E separator=/t -E occurrence=a -E quote=n");
	for (int f = 0; f < NFIELDS; f++)
		p += sprintf(p, " -e %s", field_names[f]);

	ret = run_tshark(tmp, pcap, args, &out, rep);
	if (ret)
		return ret;
	check_fields(ex, out, rep);
	free(out);

	ret = run_tshark(tmp, pcap, "-V", &out, rep);
	if (ret)
		return ret;
	check_crc_verdicts(ex, out, rep);
	free(out);

	ret = run_tshark(tmp, pcap, "-q -z expert", &out, rep);
	if (ret)
		return ret;
	check_expert(ex, out, rep);
	free(out);

	return rep->failures ? -EPROTO : 0;
}

/* -------------------------------------------------------------- the tests */

static struct {
	char	path[64];
	char	pcap[128];
} tmp;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void tmp_make(void)
{
	strcpy(tmp.path, "/tmp/iwx-tshark-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp.path), "mkdtemp: %s", strerror(errno));
	snprintf(tmp.pcap, sizeof(tmp.pcap), "%s/exchange.pcap", tmp.path);
}

/* Runs after the test even when an assertion failed. */
static void tmp_remove(void)
{
	const char *keep = getenv("IWX_TSHARK_KEEP");

	if (!tmp.path[0])
		return;
	if (keep) {
		char dst[512];

		snprintf(dst, sizeof(dst), "%s/%s.pcap", keep, criterion_current_test->name);
		if (rename(tmp.pcap, dst))
			cr_log_warn("keep %s: %s", dst, strerror(errno));
	}
	nftw(tmp.path, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	tmp.path[0] = '\0';
}

static void conformance(const struct config *cfg)
{
	static struct exchange ex;
	static struct report rep;
	int ret;

	build_exchange(&ex, cfg, tmp.pcap, -1);
	ret = check_capture(tmp.path, tmp.pcap, &ex, &rep);
	cr_assert_eq(ret, 0, "%s: tshark disagrees (%u failures):\n%s", cfg->name, rep.failures,
		     rep.text);
}

TestSuite(tshark, .init = tmp_make, .fini = tmp_remove, .timeout = HANG_S);

Test(tshark, rev2_enhanced_crc)
{
	conformance(&cfg_a);
}

Test(tshark, rev2_enhanced_no_crc)
{
	conformance(&cfg_b);
}

Test(tshark, rev1_crc_markers_both_ways)
{
	conformance(&cfg_c);
}

Test(tshark, rev1_rejected)
{
	conformance(&cfg_d);
}

Test(tshark, rev2_crc_rfc7306)
{
	conformance(&cfg_e);
}

/* The same exchange with one CRC byte flipped: the checker must say so. */
Test(tshark, checker_catches_bad_crc)
{
	static struct exchange ex;
	static struct report rep;
	char want[128];
	int ret;

	/* FPDU 5: RTR, Send, Send with SE, Send with Invalidate, then RDMA Write segment 2 */
	build_exchange(&ex, &cfg_a, tmp.pcap, 5);
	cr_assert_not_null(ex.corrupted);
	ret = check_capture(tmp.path, tmp.pcap, &ex, &rep);
	cr_assert_eq(ret, -EPROTO, "the checker passed a capture with a bad CRC (%d)", ret);
	cr_assert(strstr(rep.text, ", 1 bad;"), "no CRC verdict failure in:\n%s", rep.text);
	snprintf(want, sizeof(want), "frame %d (%s): iwarp_mpa.crc_check", ex.corrupted->frame,
		 ex.corrupted->what);
	cr_assert(strstr(rep.text, want), "no crc_check mismatch on the damaged FPDU in:\n%s",
		  rep.text);
	cr_assert_eq(rep.failures, 2, "more than the damaged CRC reported:\n%s", rep.text);
}
