// SPDX-License-Identifier: MIT
/*
 * iwx decode: the iWARP in a capture. For each TCP connection that opens with an MPA
 * Request and Reply (RFC 5044 §7.1, RFC 6581 §5), both directions go through the
 * library's receive parser; every DDP segment is printed in stream order, with the
 * header its RDMAP message carries (RFC 5040's Read Request and Terminate, RFC 7306's
 * Atomic Request and Response and Immediate Data), every failure with the Terminate
 * cause the parser gives.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mpa.h"
#include "proto/mpa_rx.h"
#include "proto/rdmap.h"
#include "proto/term.h"

#include "decode.h"
#include "json.h"
#include "tcp_streams.h"

#define HEX_MAX		64	/* payload bytes shown by --hex */
#define RR_HDR_LEN	sizeof(struct iwx_mpa_rr)
#define RR_MAX		(RR_HDR_LEN + IWX_MPA_MAX_PRIVDATA)
#define PENDING_MAX	(16u << 20)	/* full-operation bytes held while the peer's frame is awaited */

struct opts {
	bool	hex, quiet, json;
};

enum side_state {
	S_PREFIX,	/* too few bytes to tell whether an MPA key opens the stream */
	S_RR,		/* receiving the MPA Request or Reply */
	S_WAIT,		/* frame complete; later bytes held until the peer's frame is known */
	S_FPDU,		/* full operation, in the parser */
	S_IGNORE,	/* not decoded: not iWARP, rejected, or past an error */
};

enum conn_kind { K_UNKNOWN, K_IWARP, K_OTHER };

struct conn;

/* One direction of a connection, named by its sender. */
struct side {
	struct conn		*conn;
	int			dir;		/* index in tcp_conn.ep */
	enum side_state		state;
	bool			want_reply;
	uint8_t			rr[RR_MAX];
	size_t			rr_got;
	struct iwx_mpa_rr_params params;	/* pd points into rr */
	bool			rr_done, rr_shown;
	int			rr_error;	/* negative errno of a frame that failed */
	bool			rr_error_shown;
	uint64_t		rr_frame;
	uint8_t			*pending;
	size_t			pending_len, pending_cap;
	struct iwx_mpa_rx	*rx;
	struct iwx_mpa_rx_stats	stats;
	uint64_t		ops[IWX_OP_COUNT];
	uint64_t		ignored;	/* bytes not decoded */
	uint64_t		off;		/* stream bytes received */
	/* where captured segments' payloads began, from the last FPDU start looked up on */
	uint64_t		*seg_starts;
	size_t			seg_head, seg_n, seg_cap;
	uint64_t		fpdu_off;	/* where the FPDU being received began */
	uint64_t		fpdus_checked;	/* FPDUs whose start was looked up */
	uint64_t		fpdus_at_seg_start;
	uint64_t		fpdus_whole;	/* ... within one segment (RFC 5044 §5: none split) */
};

struct decoder;

struct conn {
	struct decoder		*dec;
	struct tcp_conn		*tc;		/* &info: the reader frees its own at the end */
	struct tcp_conn		info;
	enum conn_kind		kind;
	int			initiator;	/* the side that sent the Request */
	bool			shown, full, rejected, incomplete;
	bool			error;
	char			first_error[200];
	struct iwx_mpa_mode	mode;		/* the initiator's view */
	struct side		side[2];
	struct conn		*next;
};

struct decoder {
	struct opts		o;
	uint64_t		frame;
	struct conn		*first, *last;
};

/* ---------------------------------------------------------------- output */

static const char *src_str(const struct side *s, char buf[TCP_ENDPOINT_STRLEN])
{
	return tcp_endpoint_str(&s->conn->tc->ep[s->dir], buf);
}

static const char *dst_str(const struct side *s, char buf[TCP_ENDPOINT_STRLEN])
{
	return tcp_endpoint_str(&s->conn->tc->ep[!s->dir], buf);
}

static void json_line_str(const char *key, const char *v)
{
	printf(",\"%s\":", key);
	json_escape(stdout, v);
}

static void json_line_hex(const char *key, const uint8_t *p, size_t n)
{
	printf(",\"%s\":\"", key);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	putchar('"');
}

static void json_line_bool(const char *key, bool v)
{
	printf(",\"%s\":%s", key, v ? "true" : "false");
}

/* {"type":..,"conn":..[,"frame":..,"src":..,"dst":..] -- the caller adds fields and "}\n". */
static void json_line_begin(const char *type, const struct conn *c, const struct side *s, uint64_t frame)
{
	char a[TCP_ENDPOINT_STRLEN], b[TCP_ENDPOINT_STRLEN];

	printf("{\"type\":\"%s\",\"conn\":%u", type, c->tc->id);
	if (s)
		printf(",\"frame\":%" PRIu64 ",\"src\":\"%s\",\"dst\":\"%s\"", frame,
		       src_str(s, a), dst_str(s, b));
}

static void json_line_end(void)
{
	fputs("}\n", stdout);
}

/* "  <frame>  <src> > <dst>  " in front of each event of a side. */
static void text_begin(const struct side *s, uint64_t frame)
{
	char a[TCP_ENDPOINT_STRLEN], b[TCP_ENDPOINT_STRLEN];

	printf("  %6" PRIu64 "  %s > %s  ", frame, src_str(s, a), dst_str(s, b));
}

static void hex_dump(const uint8_t *p, size_t n)
{
	size_t show = n < HEX_MAX ? n : HEX_MAX;

	for (size_t off = 0; off < show; off += 16) {
		size_t k = show - off < 16 ? show - off : 16;

		printf("          %04zx  ", off);
		for (size_t i = 0; i < 16; i++)
			printf(i < k ? "%02x " : "   ", i < k ? p[off + i] : 0);
		putchar(' ');
		for (size_t i = 0; i < k; i++)
			putchar(p[off + i] >= 0x20 && p[off + i] < 0x7f ? p[off + i] : '.');
		putchar('\n');
	}
	if (n > show)
		printf("          ... %zu more bytes\n", n - show);
}

/* A growing string for one line. */
struct sbuf {
	char	s[512];
	size_t	len;
};

static void add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len >= sizeof(b->s))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, sizeof(b->s) - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n;
	if (b->len >= sizeof(b->s))
		b->len = sizeof(b->s) - 1;
}

static void add_cause(struct sbuf *b, struct iwx_term_cause c)
{
	add(b, "%s %s: %s", iwx_term_layer_name(c.layer), iwx_term_etype_name(c.layer, c.etype),
	    iwx_term_ecode_name(c.layer, c.etype, c.ecode));
}

/* The DDP fields of seg: "STag 0x.. TO 0x.. len 64 L", "QN 0 MSN 1 MO 0 len 16 L". */
static void add_ddp(struct sbuf *b, const struct iwx_ddp_seg *seg, bool with_len)
{
	if (seg->tagged)
		add(b, "STag 0x%08" PRIx32 " TO 0x%" PRIx64, seg->stag, seg->to);
	else
		add(b, "QN %" PRIu32 " MSN %" PRIu32 " MO %" PRIu32, seg->qn, seg->msn, seg->mo);
	if (with_len)
		add(b, " len %" PRIu32, seg->len);
	if (seg->last)
		add(b, " L");
	if (!seg->tagged && iwx_rdmap_opcode_has_inval(seg->opcode))
		add(b, " inval STag 0x%08" PRIx32, seg->inval_stag);
}

static void add_read_req(struct sbuf *b, const struct iwx_read_req *rr)
{
	add(b, "sink 0x%08" PRIx32 "@0x%" PRIx64 " src 0x%08" PRIx32 "@0x%" PRIx64 " size %" PRIu32,
	    rr->sink_stag, rr->sink_to, rr->src_stag, rr->src_to, rr->size);
}

static void json_line_cause(struct iwx_term_cause c)
{
	printf(",\"layer\":%u,\"etype\":%u,\"ecode\":%u", c.layer, c.etype, c.ecode);
	json_line_str("layer_name", iwx_term_layer_name(c.layer));
	json_line_str("etype_name", iwx_term_etype_name(c.layer, c.etype));
	json_line_str("ecode_name", iwx_term_ecode_name(c.layer, c.etype, c.ecode));
}

static void ensure_header(struct conn *c)
{
	struct side *i = &c->side[c->initiator];
	char a[TCP_ENDPOINT_STRLEN], b[TCP_ENDPOINT_STRLEN];

	if (c->shown)
		return;
	c->shown = true;
	if (c->dec->o.quiet || c->dec->o.json)
		return;
	printf("connection %u: %s > %s (from frame %" PRIu64 ")\n", c->tc->id, src_str(i, a),
	       dst_str(i, b), c->tc->first_frame);
}

/* Remember the first error of a connection, for its summary. */
static void conn_error(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void conn_error(struct conn *c, const char *fmt, ...)
{
	va_list ap;

	if (c->error)
		return;
	c->error = true;
	va_start(ap, fmt);
	vsnprintf(c->first_error, sizeof(c->first_error), fmt, ap);
	va_end(ap);
}

/* An error or a note about side s, in text or JSON. */
static void report(struct side *s, bool is_error, const char *what, const struct iwx_term_cause *cause,
		   const struct iwx_ddp_seg *seg)
{
	struct conn *c = s->conn;
	const struct opts *o = &c->dec->o;
	struct sbuf b = { .len = 0 };

	add(&b, "%s", what);
	if (cause) {
		add(&b, ": ");
		add_cause(&b, *cause);
		add(&b, " (layer %u, type %u, code 0x%02x)", cause->layer, cause->etype, cause->ecode);
	}
	if (seg) {
		add(&b, ", in %s ", iwx_rdmap_opcode_name(seg->opcode));
		add_ddp(&b, seg, true);
	}
	if (is_error)
		conn_error(c, "%s", b.s);
	if (o->quiet)
		return;
	if (o->json) {
		json_line_begin(is_error ? "error" : "note", c, s, c->dec->frame);
		json_line_str("what", what);
		if (cause)
			json_line_cause(*cause);
		if (seg) {
			json_line_str("opcode", iwx_rdmap_opcode_name(seg->opcode));
			printf(",\"ulpdu_len\":%u", seg->ulpdu_len);
		}
		json_line_end();
		return;
	}
	ensure_header(c);
	text_begin(s, c->dec->frame);
	printf("%s: %s\n", is_error ? "error" : "note", b.s);
}

/* --------------------------------------------------------------- set-up */

static const char *rtr_str(const struct iwx_mpa_rr_params *p, char buf[32])
{
	snprintf(buf, 32, "%s%s%s%s", p->rtr_send ? " send" : "", p->rtr_write ? " write" : "",
		 p->rtr_read ? " read" : "", p->rtr_send || p->rtr_write || p->rtr_read ? "" : " none");
	return buf;
}

static void show_rr(struct side *s)
{
	const struct iwx_mpa_rr_params *p = &s->params;
	const struct opts *o = &s->conn->dec->o;
	uint8_t flags = s->rr[16];	/* as on the wire: H in revision 1 or R in a Request show too */
	char rtr[32];

	s->rr_shown = true;
	if (o->quiet)
		return;
	if (o->json) {
		json_line_begin(p->reply ? "mpa_reply" : "mpa_request", s->conn, s, s->rr_frame);
		printf(",\"rev\":%u", p->rev);
		json_line_bool("m", flags & IWX_MPA_FLAG_MARKERS);
		json_line_bool("c", flags & IWX_MPA_FLAG_CRC);
		json_line_bool("r", flags & IWX_MPA_FLAG_REJECT);
		json_line_bool("h", flags & IWX_MPA_FLAG_ENHANCED);
		json_line_bool("rfc7306", flags & IWX_MPA_FLAG_RDMAP_EXT);
		if (flags & IWX_MPA_FLAG_RESERVED)
			printf(",\"reserved\":%u", flags & IWX_MPA_FLAG_RESERVED);
		if (p->enhanced) {
			printf(",\"ird\":%u,\"ord\":%u", p->ird, p->ord);
			json_line_bool("p2p", p->p2p);
			json_line_bool("rtr_send", p->rtr_send);
			json_line_bool("rtr_write", p->rtr_write);
			json_line_bool("rtr_read", p->rtr_read);
		}
		printf(",\"pd_len\":%u", p->pd_len);
		json_line_hex("pd", p->pd, p->pd_len);
		json_line_end();
		return;
	}
	text_begin(s, s->rr_frame);
	printf("%-18s rev %u M %d C %d R %d H %d", p->reply ? "MPA Reply" : "MPA Request", p->rev,
	       !!(flags & IWX_MPA_FLAG_MARKERS), !!(flags & IWX_MPA_FLAG_CRC),
	       !!(flags & IWX_MPA_FLAG_REJECT), !!(flags & IWX_MPA_FLAG_ENHANCED));
	/* iwx's bit: a Request offers RFC 7306, a Reply accepts it (wire.h) */
	if (flags & IWX_MPA_FLAG_RDMAP_EXT)
		printf(" RFC7306");
	if (flags & IWX_MPA_FLAG_RESERVED)
		printf(" Res 0x%x", flags & IWX_MPA_FLAG_RESERVED);
	if (p->enhanced)
		printf(" IRD %u ORD %u P2P %d RTR%s", p->ird, p->ord, p->p2p, rtr_str(p, rtr));
	printf(", private data %u bytes%s", p->pd_len, p->pd_len ? " " : "");
	for (unsigned int i = 0; i < p->pd_len; i++)
		printf("%02x", p->pd[i]);
	putchar('\n');
}

static void show_setup_error(struct side *s)
{
	struct iwx_term_cause cause = IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR);
	const char *frame = s->want_reply ? "MPA Reply" : "MPA Request";
	char what[120];

	s->rr_error_shown = true;
	switch (s->rr_error) {
	case -EPROTO:
		snprintf(what, sizeof(what), "no %s where one is due", frame);
		break;
	case -EPROTONOSUPPORT:
		snprintf(what, sizeof(what), "%s of unknown revision %u", frame, s->rr[17]);
		break;
	case -EMSGSIZE:
		snprintf(what, sizeof(what), "%s with %u bytes of private data, over %u", frame,
			 s->rr[18] << 8 | s->rr[19], IWX_MPA_MAX_PRIVDATA);
		break;
	case -EBADMSG:
		snprintf(what, sizeof(what), "enhanced %s too short for IRD and ORD", frame);
		break;
	default:
		snprintf(what, sizeof(what), "%s: %s", frame, strerror(-s->rr_error));
	}
	report(s, true, what, &cause, NULL);
}

/*
 * Print what the set-up frames came to so far, the Request first; all: the
 * connection is over, print the rest whatever the order.
 */
static void show_frames(struct conn *c, bool all)
{
	struct side *i = &c->side[c->initiator], *r = &c->side[!c->initiator];

	ensure_header(c);
	if (i->rr_done && !i->rr_shown)
		show_rr(i);
	if (i->rr_error && !i->rr_error_shown)
		show_setup_error(i);
	if (!all && !i->rr_shown && !i->rr_error)
		return;
	if (r->rr_done && !r->rr_shown)
		show_rr(r);
	if (r->rr_error && !r->rr_error_shown)
		show_setup_error(r);
}

static const char *onoff(bool b)
{
	return b ? "on" : "off";
}

static void show_mode(struct conn *c)
{
	const struct iwx_mpa_mode *m = &c->mode;
	const struct opts *o = &c->dec->o;

	if (o->quiet)
		return;
	if (o->json) {
		json_line_begin("mode", c, NULL, 0);
		printf(",\"rev\":%u", m->rev);
		json_line_bool("crc", m->crc);
		json_line_bool("markers_i2r", m->markers_tx);
		json_line_bool("markers_r2i", m->markers_rx);
		json_line_bool("rejected", c->rejected);
		json_line_end();
		return;
	}
	printf("  %6s  mode: rev %u, CRC %s, ", "", m->rev, onoff(m->crc));
	if (m->markers_tx == m->markers_rx)
		printf("markers %s", onoff(m->markers_tx));
	else
		printf("markers initiator>responder %s, responder>initiator %s",
		       onoff(m->markers_tx), onoff(m->markers_rx));
	printf("%s\n", c->rejected ? "; rejected by the responder" : "");
}

static void stop_side(struct side *s)
{
	s->ignored += s->pending_len;
	free(s->pending);
	s->pending = NULL;
	s->pending_len = s->pending_cap = 0;
	s->state = S_IGNORE;
}

static void feed_fpdus(struct side *s, const uint8_t *p, size_t len);
static const struct iwx_mpa_rx_ops seg_ops;

/* Both frames are in: full operation starts, each direction with its receiver's view. */
static int maybe_start(struct conn *c)
{
	struct side *i = &c->side[c->initiator], *r = &c->side[!c->initiator];

	if (c->kind != K_IWARP || !i->rr_done || !r->rr_done || i->rr_error || r->rr_error)
		return 0;
	c->mode = iwx_mpa_mode_of(&i->params, &r->params);
	c->rejected = r->params.reject;
	show_mode(c);
	if (c->rejected) {
		stop_side(i);
		stop_side(r);
		return 0;
	}
	c->full = true;
	for (int d = 0; d < 2; d++) {
		struct side *s = &c->side[d], *peer = &c->side[!d];
		struct iwx_mpa_mode m = iwx_mpa_mode_of(&peer->params, &s->params);

		s->rx = malloc(sizeof(*s->rx));
		if (!s->rx)
			return -ENOMEM;
		iwx_mpa_rx_init(s->rx, &m, &seg_ops, s);
		s->state = S_FPDU;
		s->fpdu_off = s->rr_got;	/* FPDUs follow the frame that began the stream */
	}
	for (int d = 0; d < 2; d++) {
		struct side *s = &c->side[d];

		if (s->pending_len)
			feed_fpdus(s, s->pending, s->pending_len);
		free(s->pending);
		s->pending = NULL;
		s->pending_len = s->pending_cap = 0;
	}
	return 0;
}

/* A frame MPA rejects (RFC 5044 §7.1): shown once the connection is known to be iWARP. */
static void setup_error(struct side *s, int err)
{
	s->rr_error = err;
	stop_side(s);
	if (s->conn->kind == K_IWARP)
		show_frames(s->conn, false);
}

/* Bytes still missing from the set-up frame; 0 once it is complete or can never be. */
static size_t rr_need(const struct side *s)
{
	size_t pd;

	if (s->rr_got < RR_HDR_LEN)
		return RR_HDR_LEN - s->rr_got;
	pd = (size_t)s->rr[18] << 8 | s->rr[19];
	if (pd > IWX_MPA_MAX_PRIVDATA)
		return 0;
	return RR_HDR_LEN + pd - s->rr_got;
}

/* The first bytes of s tell what the connection is: only a Request makes it iWARP. */
static void classify(struct side *s)
{
	struct conn *c = s->conn;
	size_t k = s->rr_got < IWX_MPA_KEY_LEN ? s->rr_got : IWX_MPA_KEY_LEN;
	bool req = !memcmp(s->rr, IWX_MPA_KEY_REQ, k);
	bool rep = !memcmp(s->rr, IWX_MPA_KEY_REP, k);

	if ((req || rep) && k < IWX_MPA_KEY_LEN)
		return;
	if (c->kind == K_IWARP) {
		/* the peer sent the Request: whatever this is, it is read as the Reply */
		s->state = S_RR;
		s->want_reply = true;
		return;
	}
	if (req) {
		c->kind = K_IWARP;
		c->initiator = s->dir;
		s->state = S_RR;
		s->want_reply = false;
		ensure_header(c);
		return;
	}
	if (rep) {
		/* wait for a Request the other way */
		s->state = S_RR;
		s->want_reply = true;
		return;
	}
	c->kind = K_OTHER;
	for (int d = 0; d < 2; d++) {
		c->side[d].ignored += c->side[d].rr_got;
		stop_side(&c->side[d]);
	}
}

/* Take bytes of the MPA Request or Reply; returns how many were used. */
static size_t take_rr(struct side *s, const uint8_t *p, size_t len)
{
	struct conn *c = s->conn;
	size_t n = rr_need(s);
	ssize_t r;

	if (n > len)
		n = len;
	memcpy(s->rr + s->rr_got, p, n);
	s->rr_got += n;
	if (s->state == S_PREFIX) {
		classify(s);
		if (s->state != S_RR)
			return n;
	}
	r = iwx_mpa_rr_decode(s->rr, s->rr_got, s->want_reply, &s->params);
	if (r < 0) {
		setup_error(s, (int)r);
	} else if (r > 0) {
		s->rr_done = true;
		s->rr_frame = c->dec->frame;
		s->state = S_WAIT;
		if (c->kind == K_IWARP)
			show_frames(c, false);
	}
	return n;
}

static int hold_pending(struct side *s, const uint8_t *p, size_t len)
{
	if (s->pending_len + len > PENDING_MAX) {
		report(s, true, "too much data before the peer's MPA frame; not decoded", NULL, NULL);
		stop_side(s);
		s->ignored += len;
		return 0;
	}
	if (s->pending_len + len > s->pending_cap) {
		size_t cap = s->pending_cap ? s->pending_cap : 4096;
		uint8_t *q;

		while (cap < s->pending_len + len)
			cap *= 2;
		q = realloc(s->pending, cap);
		if (!q)
			return -ENOMEM;
		s->pending = q;
		s->pending_cap = cap;
	}
	memcpy(s->pending + s->pending_len, p, len);
	s->pending_len += len;
	return 0;
}

/* ------------------------------------------------------- full operation */

/* The Terminate's header-control bits that are set: "M D R" (RFC 5040 §4.8). */
static const char *hdrct_str(const struct iwx_term *t, const char *sep, char buf[8])
{
	snprintf(buf, 8, "%s%s%s%s%s", t->has_seg_len ? "M" : "",
		 t->has_seg_len && t->has_ddp_hdr ? sep : "", t->has_ddp_hdr ? "D" : "",
		 (t->has_seg_len || t->has_ddp_hdr) && t->has_rdma_hdr ? sep : "",
		 t->has_rdma_hdr ? "R" : "");
	return buf;
}

/* The header of its own an RDMAP message carries after DDP's, decoded. */
struct rdmap_hdr {
	enum { H_NONE, H_READ_REQ, H_TERM, H_ATOMIC_REQ, H_ATOMIC_RESP, H_IMM } kind;
	union {
		struct iwx_read_req	rr;
		struct iwx_term		t;
		struct iwx_atomic_req	ar;
		struct iwx_atomic_resp	resp;
		uint64_t		imm;
	};
};

/* Each header as an error names it: "malformed Read Request". */
static const char *const hdr_names[] = {
	[H_READ_REQ] = "Read Request", [H_TERM] = "Terminate", [H_ATOMIC_REQ] = "Atomic Request",
	[H_ATOMIC_RESP] = "Atomic Response", [H_IMM] = "Immediate Data",
};

/*
 * The header seg's opcode says it carries: -EPROTO with *bad when it is malformed. RFC
 * 7306's are decoded whatever the MPA set-up agreed: decode shows what is on the wire.
 */
static int rdmap_hdr_decode(const struct iwx_ddp_seg *seg, struct rdmap_hdr *h,
			    struct iwx_term_cause *bad)
{
	switch (seg->opcode) {
	case IWX_OP_READ_REQ:
		h->kind = H_READ_REQ;
		return iwx_read_req_decode(seg, &h->rr, bad);
	case IWX_OP_TERMINATE:
		h->kind = H_TERM;
		return iwx_term_decode(seg, &h->t, bad);
	case IWX_OP_ATOMIC_REQ:
		h->kind = H_ATOMIC_REQ;
		return iwx_atomic_req_decode(seg, &h->ar, bad);
	case IWX_OP_ATOMIC_RESP:
		h->kind = H_ATOMIC_RESP;
		return iwx_atomic_resp_decode(seg, &h->resp, bad);
	case IWX_OP_IMM:
	case IWX_OP_IMM_SE:
		h->kind = H_IMM;
		return iwx_imm_decode(seg, &h->imm, bad);
	default:
		h->kind = H_NONE;
		return 0;
	}
}

/* RFC 7306 Figure 5's names; a decoded request holds one of the two. */
static const char *aop_name(uint8_t aop)
{
	return aop == IWX_AOP_CMP_SWAP ? "CmpSwap" : "FetchAdd";
}

/* The request's first operand, Add Data or Swap Data, and its mask (RFC 7306 §5.2.1). */
static const char *aop_operand(uint8_t aop)
{
	return aop == IWX_AOP_CMP_SWAP ? "swap" : "add";
}

static void json_rdmap_hdr(const struct rdmap_hdr *h)
{
	const struct iwx_atomic_req *ar = &h->ar;
	char hdrct[8];

	switch (h->kind) {
	case H_READ_REQ:
		printf(",\"sink_stag\":\"0x%08" PRIx32 "\",\"sink_to\":\"0x%" PRIx64
		       "\",\"size\":%" PRIu32 ",\"src_stag\":\"0x%08" PRIx32
		       "\",\"src_to\":\"0x%" PRIx64 "\"",
		       h->rr.sink_stag, h->rr.sink_to, h->rr.size, h->rr.src_stag, h->rr.src_to);
		break;
	case H_TERM:
		json_line_cause(h->t.cause);
		json_line_str("hdrct", hdrct_str(&h->t, "", hdrct));
		break;
	case H_ATOMIC_REQ:
		json_line_str("atomic_op", aop_name(ar->aop));
		printf(",\"req_id\":%" PRIu32 ",\"remote_stag\":\"0x%08" PRIx32
		       "\",\"remote_to\":\"0x%" PRIx64 "\",\"%s_data\":\"0x%" PRIx64
		       "\",\"%s_mask\":\"0x%" PRIx64 "\",\"compare_data\":\"0x%" PRIx64
		       "\",\"compare_mask\":\"0x%" PRIx64 "\"",
		       ar->req_id, ar->stag, ar->to, aop_operand(ar->aop), ar->add_swap,
		       aop_operand(ar->aop), ar->add_swap_mask, ar->compare, ar->compare_mask);
		break;
	case H_ATOMIC_RESP:
		printf(",\"orig_req_id\":%" PRIu32 ",\"orig_value\":\"0x%" PRIx64 "\"",
		       h->resp.req_id, h->resp.orig);
		break;
	case H_IMM:
		printf(",\"imm_data\":\"0x%016" PRIx64 "\"", h->imm);
		break;
	case H_NONE:
		break;
	}
}

/* A Terminate's cause, its header-control bits and the headers it copied. */
static void add_term(struct sbuf *b, const struct iwx_term *t)
{
	char hdrct[8];

	add_cause(b, t->cause);
	if (t->has_seg_len || t->has_ddp_hdr || t->has_rdma_hdr)
		add(b, " (%s)", hdrct_str(t, " ", hdrct));
	if (t->has_ddp_hdr) {
		struct iwx_ddp_seg about;
		struct iwx_term_cause ignore;

		/* the copied header may be the faulty one: show its fields whatever they say */
		iwx_ddp_decode(t->ddp_hdr, t->ddp_hdr_len, &about, &ignore);
		about.len = t->seg_len > t->ddp_hdr_len ? t->seg_len - t->ddp_hdr_len : 0;
		add(b, ", about %s ", iwx_rdmap_opcode_name(about.opcode));
		add_ddp(b, &about, t->has_seg_len);
	}
	if (t->has_rdma_hdr) {
		struct iwx_ddp_seg rseg = { .payload = t->rdma_hdr, .len = IWX_RDMAP_READ_REQ_LEN,
					    .last = true };
		struct iwx_read_req about;
		struct iwx_term_cause ignore;

		if (!iwx_read_req_decode(&rseg, &about, &ignore)) {
			add(b, ", Read Request ");
			add_read_req(b, &about);
		}
	}
}

/* The text after the opcode's name: the header h, or else DDP's fields. */
static void add_rdmap_hdr(struct sbuf *b, const struct rdmap_hdr *h, const struct iwx_ddp_seg *seg)
{
	const struct iwx_atomic_req *ar = &h->ar;

	switch (h->kind) {
	case H_READ_REQ:
		add_read_req(b, &h->rr);
		break;
	case H_TERM:
		add_term(b, &h->t);
		return;
	case H_ATOMIC_REQ:
		add(b, "%s id %" PRIu32 " remote 0x%08" PRIx32 "@0x%" PRIx64 " %s 0x%" PRIx64
		    " mask 0x%" PRIx64 ", compare 0x%" PRIx64 " mask 0x%" PRIx64, aop_name(ar->aop),
		    ar->req_id, ar->stag, ar->to, aop_operand(ar->aop), ar->add_swap,
		    ar->add_swap_mask, ar->compare, ar->compare_mask);
		break;
	case H_ATOMIC_RESP:
		add(b, "id %" PRIu32 " original 0x%" PRIx64, h->resp.req_id, h->resp.orig);
		break;
	case H_IMM:
		add(b, "data 0x%016" PRIx64, h->imm);
		break;
	case H_NONE:
		add_ddp(b, seg, true);
		return;
	}
	add(b, " MSN %" PRIu32, seg->msn);
}

static void show_segment(struct side *s, const struct iwx_ddp_seg *seg)
{
	const struct opts *o = &s->conn->dec->o;
	uint64_t frame = s->conn->dec->frame;
	struct iwx_term_cause bad;
	struct rdmap_hdr h;
	bool malformed = rdmap_hdr_decode(seg, &h, &bad) != 0;
	struct sbuf b = { .len = 0 };
	char what[64];

	if (malformed) {
		snprintf(what, sizeof(what), "malformed %s", hdr_names[h.kind]);
		h.kind = H_NONE;	/* shown as DDP's fields only */
	}
	if (!o->quiet && o->json) {
		json_line_begin("segment", s->conn, s, frame);
		json_line_str("opcode", iwx_rdmap_opcode_name(seg->opcode));
		printf(",\"op\":%u", seg->opcode);
		json_line_bool("tagged", seg->tagged);
		json_line_bool("last", seg->last);
		if (seg->tagged) {
			printf(",\"stag\":\"0x%08" PRIx32 "\",\"to\":\"0x%" PRIx64 "\"", seg->stag, seg->to);
		} else {
			printf(",\"qn\":%" PRIu32 ",\"msn\":%" PRIu32 ",\"mo\":%" PRIu32, seg->qn,
			       seg->msn, seg->mo);
			if (iwx_rdmap_opcode_has_inval(seg->opcode))
				printf(",\"inval_stag\":\"0x%08" PRIx32 "\"", seg->inval_stag);
		}
		printf(",\"len\":%" PRIu32, seg->len);
		json_rdmap_hdr(&h);
		if (o->hex)
			json_line_hex("payload", seg->payload, seg->len < HEX_MAX ? seg->len : HEX_MAX);
		json_line_end();
	} else if (!o->quiet) {
		add_rdmap_hdr(&b, &h, seg);
		text_begin(s, frame);
		printf("%-18s %s\n", iwx_rdmap_opcode_name(seg->opcode), b.s);
		if (o->hex)
			hex_dump(seg->payload, seg->len);
	}
	if (malformed)
		report(s, true, what, &bad, seg);
}

/*
 * The FPDU the parser completed last (counted in its stats, good or not): did it
 * begin where a captured segment's payload did? Its first byte is a marker in front
 * of its header when there is one, as its CRC covers that marker too.
 */
static void count_fpdu_start(struct side *s)
{
	uint64_t end = s->rr_got + s->rx->stats.bytes;
	size_t next;

	if (s->fpdus_checked == s->rx->stats.fpdus)
		return;
	s->fpdus_checked++;
	while (s->seg_head < s->seg_n && s->seg_starts[s->seg_head] < s->fpdu_off)
		s->seg_head++;
	next = s->seg_head;
	if (next < s->seg_n && s->seg_starts[next] == s->fpdu_off) {
		s->fpdus_at_seg_start++;
		next++;
	}
	/* whole in one segment: none began inside it (one beginning inside was seen by now) */
	if (next == s->seg_n || s->seg_starts[next] >= end)
		s->fpdus_whole++;
	s->fpdu_off = end;
}

/* A captured segment's payload began at stream offset off (they come in order). */
static int note_seg_start(struct side *s, uint64_t off)
{
	if (s->seg_n == s->seg_cap && s->seg_head) {
		s->seg_n -= s->seg_head;
		memmove(s->seg_starts, s->seg_starts + s->seg_head,
			s->seg_n * sizeof(*s->seg_starts));
		s->seg_head = 0;
	}
	if (s->seg_n == s->seg_cap) {
		size_t cap = s->seg_cap ? s->seg_cap * 2 : 64;
		uint64_t *q = realloc(s->seg_starts, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		s->seg_starts = q;
		s->seg_cap = cap;
	}
	s->seg_starts[s->seg_n++] = off;
	return 0;
}

static int on_segment(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct side *s = ctx;

	count_fpdu_start(s);
	s->ops[seg->opcode]++;
	show_segment(s, seg);
	return 0;
}

static const struct iwx_mpa_rx_ops seg_ops = { .segment = on_segment };

static void feed_fpdus(struct side *s, const uint8_t *p, size_t len)
{
	struct iwx_term_cause cause;
	const struct iwx_ddp_seg *seg;
	size_t used = 0;

	if (!iwx_mpa_rx_feed(s->rx, p, len, &used))
		return;
	count_fpdu_start(s);	/* one that failed its CRC is whole, and counted */
	s->ignored += len - used;
	if (iwx_mpa_rx_failed(s->rx, &cause, &seg))
		report(s, true, "stream failed", &cause, seg);
	else
		report(s, true, "stream stopped", NULL, NULL);
	s->state = S_IGNORE;
}

/* ------------------------------------------------------ stream callbacks */

static int on_open(void *ctx, struct tcp_conn *tc, uint64_t frame)
{
	struct decoder *dec = ctx;
	struct conn *c = calloc(1, sizeof(*c));

	(void)frame;
	if (!c)
		return -ENOMEM;
	c->dec = dec;
	c->info = *tc;
	c->tc = &c->info;
	for (int d = 0; d < 2; d++) {
		c->side[d].conn = c;
		c->side[d].dir = d;
	}
	tc->user = c;
	if (dec->last)
		dec->last->next = c;
	else
		dec->first = c;
	dec->last = c;
	return 0;
}

static int on_data(void *ctx, struct tcp_conn *tc, int dir, const uint8_t *p, size_t len,
		   bool seg_start, uint64_t frame)
{
	struct decoder *dec = ctx;
	struct side *s = &((struct conn *)tc->user)->side[dir];
	int err;

	dec->frame = frame;
	/* starts inside the MPA frame are passed over as FPDUs are counted */
	if (seg_start && s->state != S_IGNORE && (err = note_seg_start(s, s->off)))
		return err;
	s->off += len;
	while (len) {
		size_t n;

		switch (s->state) {
		case S_PREFIX:
		case S_RR:
			n = take_rr(s, p, len);
			p += n;
			len -= n;
			if (s->state == S_WAIT && (err = maybe_start(s->conn)))
				return err;
			break;
		case S_WAIT:
			return hold_pending(s, p, len);
		case S_FPDU:
			feed_fpdus(s, p, len);
			return 0;
		case S_IGNORE:
			s->ignored += len;
			return 0;
		}
	}
	return 0;
}

static int on_gap(void *ctx, struct tcp_conn *tc, int dir, uint64_t off, uint64_t lost,
		  uint64_t frame)
{
	struct conn *c = tc->user;
	struct side *s = &c->side[dir];
	char what[160];

	((struct decoder *)ctx)->frame = frame;
	if (c->kind != K_IWARP || s->state == S_IGNORE)
		return 0;
	if (lost)
		snprintf(what, sizeof(what), "%" PRIu64 " bytes missing from the capture at TCP stream "
			 "offset %" PRIu64 "; not decoded past them", lost, off);
	else
		snprintf(what, sizeof(what), "bytes missing from the capture at TCP stream offset %"
			 PRIu64 "; not decoded past them", off);
	if (c->dec->o.json && !c->dec->o.quiet) {
		conn_error(c, "%s", what);
		json_line_begin("error", c, s, frame);
		json_line_str("what", "bytes missing from the capture");
		printf(",\"offset\":%" PRIu64 ",\"lost\":%" PRIu64, off, lost);
		json_line_end();
	} else {
		report(s, true, what, NULL, NULL);
	}
	stop_side(s);
	return 0;
}

/* At the end of the connection, say what was left unfinished. */
static int on_close(void *ctx, struct tcp_conn *tc, uint64_t frame)
{
	struct conn *c = tc->user;

	((struct decoder *)ctx)->frame = frame;
	c->info = *tc;
	if (c->kind == K_IWARP)
		show_frames(c, true);
	for (int d = 0; d < 2 && c->kind == K_IWARP; d++) {
		struct side *s = &c->side[d];
		struct iwx_mpa_rx *rx = s->rx;

		if (s->state == S_FPDU && (rx->state != IWX_RX_HDR || rx->hdr_got || rx->marker_got))
			report(s, false, "the capture ends inside an FPDU", NULL, NULL);
		if ((s->state == S_RR || s->state == S_PREFIX) && s->rr_got) {
			c->incomplete = true;
			report(s, false, s->want_reply ? "the capture ends inside the MPA Reply" :
				       "the capture ends inside the MPA Request", NULL, NULL);
		}
	}
	if (c->kind == K_IWARP && !c->full && !c->rejected && !c->error)
		c->incomplete = true;
	for (int d = 0; d < 2; d++) {
		struct side *s = &c->side[d];

		if (s->rx) {
			s->stats = s->rx->stats;
			free(s->rx);
			s->rx = NULL;
		}
		s->ignored += s->pending_len;
		free(s->pending);
		s->pending = NULL;
		s->pending_len = 0;
		free(s->seg_starts);
		s->seg_starts = NULL;
		s->seg_head = s->seg_n = s->seg_cap = 0;
	}
	return 0;
}

/* -------------------------------------------------------------- summary */

static void add_side_summary(struct sbuf *b, const struct side *s)
{
	bool first = true;

	add(b, "%" PRIu64 " FPDUs, %" PRIu64 " bytes", s->stats.fpdus, s->stats.bytes);
	if (s->stats.markers)
		add(b, ", %" PRIu64 " markers", s->stats.markers);
	for (int op = 0; op < IWX_OP_COUNT; op++) {
		if (!s->ops[op])
			continue;
		add(b, "%s%s %" PRIu64, first ? " (" : ", ", iwx_rdmap_opcode_name(op), s->ops[op]);
		first = false;
	}
	if (!first)
		add(b, ")");
	/* tenths of a percent, rounded down: 100.0% only when every FPDU began a segment */
	if (s->stats.fpdus) {
		uint64_t t = s->fpdus_at_seg_start * 1000 / s->stats.fpdus;

		add(b, ", %" PRIu64 " of %" PRIu64 " FPDUs at a segment start (%" PRIu64 ".%" PRIu64 "%%)",
		    s->fpdus_at_seg_start, s->stats.fpdus, t / 10, t % 10);
	}
}

static void json_side_summary(const char *key, const struct side *s)
{
	bool first = true;

	printf(",\"%s\":{\"fpdus\":%" PRIu64 ",\"fpdus_at_segment_start\":%" PRIu64 ",\"bytes\":%"
	       PRIu64 ",\"markers\":%" PRIu64 ",\"fpdus_whole\":%" PRIu64 ",\"segments\":{", key,
	       s->stats.fpdus, s->fpdus_at_seg_start, s->stats.bytes, s->stats.markers,
	       s->fpdus_whole);
	for (int op = 0; op < IWX_OP_COUNT; op++) {
		if (!s->ops[op])
			continue;
		printf("%s\"%s\":%" PRIu64, first ? "" : ",", iwx_rdmap_opcode_name(op), s->ops[op]);
		first = false;
	}
	printf("}}");
}

static void show_summary(const struct conn *c, const struct opts *o)
{
	const struct side *i = &c->side[c->initiator], *r = &c->side[!c->initiator];
	char a[TCP_ENDPOINT_STRLEN], b[TCP_ENDPOINT_STRLEN];
	const struct iwx_mpa_mode *m = &c->mode;
	struct sbuf sb = { .len = 0 };

	if (o->json) {
		json_line_begin("summary", c, NULL, 0);
		json_line_str("src", src_str(i, a));
		json_line_str("dst", dst_str(i, b));
		json_line_bool("iwarp", c->kind == K_IWARP);
		if (c->kind == K_IWARP) {
			json_line_bool("full_operation", c->full);
			json_line_bool("rejected", c->rejected);
			if (c->full || c->rejected) {
				printf(",\"rev\":%u", m->rev);
				json_line_bool("crc", m->crc);
				json_line_bool("markers_i2r", m->markers_tx);
				json_line_bool("markers_r2i", m->markers_rx);
			}
			json_side_summary("initiator", i);
			json_side_summary("responder", r);
		}
		json_line_bool("error", c->error);
		if (c->error)
			json_line_str("first_error", c->first_error);
		json_line_end();
		return;
	}
	add(&sb, "summary %u: %s > %s ", c->tc->id, src_str(i, a), dst_str(i, b));
	if (c->kind != K_IWARP) {
		printf("%snot iWARP\n", sb.s);
		return;
	}
	add(&sb, "iWARP");
	if (c->full || c->rejected) {
		add(&sb, " rev %u, CRC %s, ", m->rev, onoff(m->crc));
		if (m->markers_tx == m->markers_rx)
			add(&sb, "markers %s", onoff(m->markers_tx));
		else
			add(&sb, "markers initiator>responder %s, responder>initiator %s",
			    onoff(m->markers_tx), onoff(m->markers_rx));
	}
	if (c->rejected)
		add(&sb, ", rejected");
	else if (c->incomplete && !c->full)
		add(&sb, ", set-up incomplete");
	if (c->full) {
		add(&sb, "; initiator ");
		add_side_summary(&sb, i);
		add(&sb, "; responder ");
		add_side_summary(&sb, r);
	}
	if (c->error)
		add(&sb, "; error: %s", c->first_error);
	else
		add(&sb, "; no errors");
	printf("%s\n", sb.s);
}

static void show_total(const struct decoder *dec, const struct tcp_streams_stats *st)
{
	unsigned int iwarp = 0, errors = 0;

	for (const struct conn *c = dec->first; c; c = c->next) {
		iwarp += c->kind == K_IWARP;
		errors += c->error;
	}
	if (dec->o.json) {
		printf("{\"type\":\"total\",\"frames\":%" PRIu64 ",\"connections\":%u,\"iwarp\":%u,"
		       "\"not_iwarp\":%u,\"errors\":%u}\n", st->frames, st->conns, iwarp,
		       st->conns - iwarp, errors);
		return;
	}
	printf("total: %" PRIu64 " frames, %u TCP connection%s (%u iWARP, %u not iWARP), %u with errors\n",
	       st->frames, st->conns, st->conns == 1 ? "" : "s", iwarp, st->conns - iwarp, errors);
}

/* ----------------------------------------------------------------- main */

void cmd_decode_usage(FILE *out)
{
	fputs("usage: iwx decode [options] FILE.pcap[ng]   (- reads standard input)\n"
	      "Decode the iWARP (MPA, DDP, RDMAP) in the TCP connections of a capture.\n"
	      "\n"
	      "  -x, --hex     dump segment payloads (first 64 bytes)\n"
	      "  -q, --quiet   print only the summary of each connection\n"
	      "  -j, --json    one JSON object per line\n"
	      "  -h, --help    show this help\n"
	      "\n"
	      "Each connection's summary counts, of each side's FPDUs, those at a segment\n"
	      "start: that begin a TCP segment of the capture, as the receiver saw it (a\n"
	      "capture at the receiver after GRO sees fewer, larger segments). 'iwx conns'\n"
	      "ALIGNED is the sender's count: FPDUs handed to TCP at the start of a packet.\n"
	      "\n"
	      "Exit status: 0 decoded without error, 1 an error in a stream or in reading the\n"
	      "file, 2 a usage error.\n", out);
}

int cmd_decode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hex", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct tcp_streams_ops ops = {
		.open = on_open, .data = on_data, .gap = on_gap, .close = on_close,
	};
	struct decoder dec = { .o = { false, false, false } };
	struct tcp_streams_stats st;
	char err[512];
	const char *file;
	bool failed;
	int opt, ret;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "xqjh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'x':
			dec.o.hex = true;
			break;
		case 'q':
			dec.o.quiet = true;
			break;
		case 'j':
			dec.o.json = true;
			break;
		case 'h':
			cmd_decode_usage(stdout);
			return IWX_EXIT_OK;
		default:
			if (optopt)
				fprintf(stderr, "iwx decode: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "iwx decode: unknown option '%s'\n", argv[optind - 1]);
			fputs("Try 'iwx decode --help'.\n", stderr);
			return IWX_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "iwx decode: %s\nTry 'iwx decode --help'.\n",
			argc == optind ? "no capture file given" : "one capture file at a time");
		return IWX_EXIT_USAGE;
	}
	file = argv[optind];
	ret = tcp_streams_read(file, &ops, &dec, &st, err, sizeof(err));
	failed = ret < 0;
	/* a file that could not be opened at all has no summary to show */
	if (!failed || st.frames)
		for (struct conn *c = dec.first; c; c = c->next)
			show_summary(c, &dec.o);
	if (!failed || st.frames)
		show_total(&dec, &st);
	fflush(stdout);
	if (failed)
		fprintf(stderr, "iwx decode: %s: %s\n", file, err);
	for (struct conn *c = dec.first; c;) {
		struct conn *next = c->next;

		failed |= c->error;
		for (int d = 0; d < 2; d++) {
			free(c->side[d].rx);
			free(c->side[d].pending);
			free(c->side[d].seg_starts);
		}
		free(c);
		c = next;
	}
	return failed ? IWX_EXIT_FAIL : IWX_EXIT_OK;
}
