// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the SCTP lower layer's receive (control/engine/llp_sctp.c): the
 * DDP segments of an association's DATA chunks, placed from the packet as it arrives
 * (its placer, sctp_place.h) or as usrsctp hands them over, in any TSN order, with
 * duplicates and forged copies of a TSN, and messages' last chunks held until every
 * TSN before them has come (draft-otis-sctp-ddp §3.2.1 R5). The file is compiled in
 * here, its static functions and all; usrsctp and the queue pair above it are models
 * of this harness:
 * - usrsctp takes a chunk of a TSN it has not had (RFC 4960 §6.2: a duplicate is
 *   dropped) and hands its chunks over in the order they came (every chunk is
 *   unordered, §2.2 of the draft); the placer sees every chunk first, as sctp_place.c
 *   offers it, and the chunk reaches usrsctp without what was placed;
 * - the queue pair knows one STag, an exactly-sized region (ASan sees a byte past it),
 *   and stops at the first failure.
 *
 * Input: a byte, the set-up's TSN (near 2^32 when its top bit is set: TSNs wrap); then
 * events, each a byte e:
 *   e % 4 == 3: usrsctp's chunks are read (sctp_receive);
 *   else a chunk arrives: TSN offset (a byte; with e & 0x04, x 64: beyond the window),
 *     kind (a byte: Write, Read Response, Send, or raw bytes; its last flag, a bad STag,
 *     the wrong stream, not whole (the placer is not offered it)), tagged offset (2
 *     bytes), payload length (a byte, x 8), fill (a byte).
 *
 * What must hold, besides ASan's and UBSan's silence: a chunk the placer placed is one
 * usrsctp takes (else its bytes would stand for a chunk never delivered); every byte of
 * the region holds what it held or what a chunk usrsctp took puts there; a segment is
 * taken only while the queue pair runs, its payload where its STag and offset say, the
 * cumulative TSN never past a TSN usrsctp has not handed over; no more segments taken
 * than chunks handed over.
 */
#include <sys/param.h>	/* MIN */

#include "llp_sctp.c"

#include "fuzz_check.h"
#include "fuzz_input.h"

#define REGION		8192
#define STAG		0x1234u
#define GUARD		0xa5
#define MAXSEG		1400
#define SPAN		16384		/* TSNs the model follows past the set-up's */

/* ------------------------------------------------------- the queue pair, a model */

struct engine_qp {
	bool		failed;
	uint32_t	taken;
};

static struct engine_qp qp;
static struct iwx_qp_stats stats;
static struct llp_sctp *t;
static uint8_t *region;
static uint64_t allowed[REGION][4];	/* per byte, the values a chunk taken puts there */
static uint32_t allowed_end;		/* ... set below it this input (cleared after) */
static uint32_t tsn0;			/* the set-up's */

/* usrsctp, a model: what it took (by TSN offset), what it handed over, its queue */
static bool took[SPAN], handed[SPAN];
static uint32_t span_end;		/* TSN offsets set below it this input */

/* The harness's own loops, left out of the coverage libFuzzer follows (and pays for). */
#define HARNESS	__attribute__((no_sanitize("coverage"), noinline))
static uint32_t u_cum;			/* every TSN up to it taken */
static struct chunk {
	uint32_t	tsn;
	uint16_t	sid;
	uint16_t	len;
	uint8_t		data[MAXSEG];
} queue[64];
static unsigned q_head, q_len;

enum engine_qp_state engine_qp_get_state(const struct engine_qp *q)
{
	return q->failed ? ENGINE_QP_ERROR : ENGINE_QP_RTS;
}

int engine_qp_tagged_target(const struct engine_qp *q, const struct iwx_ddp_seg *seg, uint8_t **dst,
			 struct iwx_term_cause *cause)
{
	(void)q;
	if (seg->stag != STAG || seg->to > REGION || seg->len > REGION - seg->to) {
		*cause = iwx_cause(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_BASE_BOUNDS);
		return -EPROTO;
	}
	*dst = region + seg->to;
	return 0;
}

int engine_qp_place(void *q, const struct iwx_ddp_seg *seg, uint8_t **dst, struct iwx_term_cause *cause)
{
	*dst = NULL;
	return seg->tagged ? engine_qp_tagged_target(q, seg, dst, cause) : 0;
}

/* Every TSN of the set-up's + [1, n] handed over */
static HARNESS bool all_handed(uint32_t n)
{
	for (uint32_t i = 1; i <= n; i++)
		if (!handed[i])
			return false;
	return true;
}

int engine_qp_take(void *q, const struct iwx_ddp_seg *seg)
{
	struct engine_qp *p = q;

	CHECK(!p->failed);
	/* its payload in place: where the chunk was placed from the packet, if it was */
	CHECK(!seg->tagged || seg->payload < region || seg->payload >= region + REGION ||
	      seg->payload == region + seg->to);
	CHECK(all_handed(t->cum - tsn0));	/* R5: a last chunk acts once every TSN before it came */
	p->taken++;
	return 0;
}

void engine_qp_placing(struct engine_qp *q, uint8_t *dst, uint32_t len)
{
	(void)q;
	CHECK(!dst || (dst >= region && len <= REGION - (size_t)(dst - region)));
}

void engine_qp_fail(struct engine_qp *q, struct iwx_term_cause cause, const struct iwx_ddp_seg *seg)
{
	(void)cause;
	(void)seg;
	q->failed = true;
}

void engine_qp_lost(struct engine_qp *q, bool local)
{
	(void)local;
	q->failed = true;
}

/* transmit is not this target's */
bool engine_qp_next_segment(struct engine_qp *q, struct iwx_llp_seg *s, uint32_t most)
{
	(void)q;
	(void)s;
	(void)most;
	abort();
}

void engine_qp_sent(struct engine_qp *q)
{
	(void)q;
	abort();
}

/* ------------------------------------------------------------ usrsctp, a model */

static struct sockaddr_conn peer_addr = { .sconn_family = AF_CONN, .sconn_port = 0x1111 };
static struct sockaddr_conn local_addr = { .sconn_family = AF_CONN, .sconn_port = 0x2222 };
static struct iwx_sctp_path path = { .place = true };

struct iwx_sctp_path *iwx_sctp_path_of(const void *token)
{
	return token == &path ? &path : NULL;
}

void iwx_sctp_placer_add(struct iwx_sctp_placer *pl)
{
	(void)pl;
}

void iwx_sctp_placer_del(struct iwx_sctp_placer *pl)
{
	(void)pl;
}

int usrsctp_getpaddrs(struct socket *so, sctp_assoc_t id, struct sockaddr **raddrs)
{
	(void)so;
	(void)id;
	peer_addr.sconn_addr = &path;
	*raddrs = (struct sockaddr *)&peer_addr;
	return 1;
}

int usrsctp_getladdrs(struct socket *so, sctp_assoc_t id, struct sockaddr **raddrs)
{
	(void)so;
	(void)id;
	*raddrs = (struct sockaddr *)&local_addr;
	return 1;
}

void usrsctp_freepaddrs(struct sockaddr *addrs)
{
	(void)addrs;
}

void usrsctp_freeladdrs(struct sockaddr *addrs)
{
	(void)addrs;
}

int usrsctp_getsockopt(struct socket *so, int level, int name, void *value, socklen_t *len)
{
	(void)so;
	(void)level;
	CHECK(name == SCTP_GET_NONCE_VALUES && *len == sizeof(struct sctp_get_nonce_values));
	((struct sctp_get_nonce_values *)value)->gn_local_tag = 0xabcd;
	return 0;
}

ssize_t usrsctp_recvv(struct socket *so, void *dbuf, size_t len, struct sockaddr *from,
		      socklen_t *fromlen, void *info, socklen_t *infolen, unsigned int *infotype,
		      int *msg_flags)
{
	struct sctp_rcvinfo *ri = info;
	const struct chunk *c = &queue[q_head % 64];

	(void)so;
	(void)from;
	(void)fromlen;
	if (!q_len) {
		errno = EWOULDBLOCK;
		return -1;
	}
	CHECK(len > c->len && *infolen >= sizeof(*ri));
	memcpy(dbuf, c->data, c->len);
	memset(ri, 0, sizeof(*ri));
	ri->rcv_tsn = c->tsn;
	ri->rcv_sid = c->sid;
	*infotype = SCTP_RECVV_RCVINFO;
	*msg_flags = MSG_EOR;
	if (c->tsn - tsn0 < SPAN)
		handed[c->tsn - tsn0] = true;
	q_head++;
	q_len--;
	return c->len;
}

int usrsctp_shutdown(struct socket *so, int how)
{
	(void)so;
	(void)how;
	return 0;
}

void usrsctp_close(struct socket *so)
{
	(void)so;
}

ssize_t usrsctp_sendv(struct socket *so, const void *data, size_t len, struct sockaddr *to,
		      int addrcnt, void *info, socklen_t infolen, unsigned int infotype, int flags)
{
	(void)so, (void)data, (void)len, (void)to, (void)addrcnt, (void)info, (void)infolen;
	(void)infotype, (void)flags;
	abort();
}

/* usrsctp takes the chunk of tsn (len bytes at data) unless it had that TSN */
static bool u_takes(uint32_t tsn, uint16_t sid, const uint8_t *data, size_t len)
{
	uint32_t at = tsn - tsn0;
	struct chunk *c;

	if ((int32_t)(tsn - u_cum) <= 0 || at >= SPAN || took[at] || q_len == 64)
		return false;	/* a duplicate; or beyond what this model follows */
	took[at] = true;
	span_end = MAX(span_end, at + 1);
	while (u_cum - tsn0 + 1 < SPAN && took[u_cum - tsn0 + 1])
		u_cum++;
	c = &queue[(q_head + q_len++) % 64];
	c->tsn = tsn;
	c->sid = sid;
	c->len = len;
	memcpy(c->data, data, len);
	return true;
}

/* ------------------------------------------------------------------- the input */

/* The bytes of a chunk usrsctp took: values its place may hold */
static HARNESS void allow(uint32_t to, const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		allowed[to + i][p[i] / 64] |= 1ull << (p[i] % 64);
	allowed_end = MAX(allowed_end, to + len);
}

/* Every byte of the region as it was, or a value a chunk usrsctp took puts there */
static HARNESS bool region_sound(void)
{
	for (uint32_t i = 0; i < REGION; i++)
		if (region[i] != GUARD && !(allowed[i][region[i] / 64] >> (region[i] % 64) & 1)) {
			fprintf(stderr, "region byte %u: %#x, from no chunk SCTP took\n", i, region[i]);
			return false;
		}
	return true;
}

/* One chunk arrives: the placer sees it, then usrsctp. */
static void arrive(struct fuzz_in *in, uint8_t e)
{
	static const uint8_t ops[4] = { IWX_OP_WRITE, IWX_OP_READ_RESP, IWX_OP_SEND, IWX_OP_WRITE };
	uint32_t tsn = tsn0 + 1 + fuzz_take(in, 1) * (e & 0x04 ? 64 : 1);
	uint8_t kind = fuzz_take(in, 1), data[MAXSEG], fill;
	struct iwx_ddp_msg m = { .opcode = ops[kind & 3], .stag = kind & 0x10 ? STAG + 1 : STAG,
				 .msn = 1 };
	uint32_t to = fuzz_take(in, 2) % (REGION + 64), len = fuzz_take(in, 1) * 8u, hl, placed = 0;
	uint16_t sid;

	fill = fuzz_take(in, 1);
	m.to = to;
	hl = iwx_shim_hdr_encode(data, &m, 0, kind & 0x08);
	if ((kind & 3) == 3) {	/* raw bytes: whatever the peer puts in a chunk */
		hl = 0;
		len = MIN(MIN(len, in->n), MAXSEG);
		memcpy(data, in->p, len);
		in->p += len;
		in->n -= len;
	}
	len = MIN(len, MAXSEG - hl);
	for (uint32_t i = 0; i < len && (kind & 3) != 3; i++)	/* byte i says where it goes */
		data[hl + i] = fill + i;
	sid = kind & 0x20 ? 3 : iwx_shim_stream(m.opcode);
	if (t->placed && !(kind & 0x40))	/* U, B and E, as sctp_place.c offers a chunk */
		placed = t->placer.place(&t->placer, tsn, sid, data, hl + len);
	else if (t->placed)
		CHECK(t->placer.place(&t->placer, tsn, sid, NULL, 0) == 0);
	CHECK(placed <= len);
	if (!u_takes(tsn, sid, data, hl + len - placed)) {
		CHECK(!placed);	/* placed bytes of a chunk SCTP drops would stand */
		return;
	}
	if ((kind & 3) < 2 && m.stag == STAG && to <= REGION && len <= REGION - to)
		allow(to, data + hl, len);
}

/* FUZZ_SCTP_RX_STATS=1: what the layer did over the run, printed at its end */
static uint64_t inputs, failed, taken;

static void print_stats(void)
{
	fprintf(stderr, "inputs %llu, failed %llu, segments taken %llu, chunks placed from the "
		"packet %llu (%llu bytes)\n", (unsigned long long)inputs,
		(unsigned long long)failed, (unsigned long long)taken,
		(unsigned long long)stats.fast_fpdus, (unsigned long long)stats.fast_bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t b = fuzz_take(&in, 1);

	if (!region) {
		region = malloc(REGION);
		if (getenv("FUZZ_SCTP_RX_STATS"))
			atexit(print_stats);
	}
	CHECK(region);
	memset(region, GUARD, REGION);
	memset(allowed, 0, allowed_end * sizeof(allowed[0]));	/* what the last input set */
	memset(took, 0, span_end);
	memset(handed, 0, span_end);
	allowed_end = span_end = 0;
	q_head = q_len = 0;
	qp = (struct engine_qp){ 0 };
	tsn0 = b & 0x80 ? 0xffffff00u + b : 1000u + b;
	u_cum = tsn0;
	t = sctp_of(iwx_llp_sctp_new((struct socket *)&path, MAXSEG, tsn0));
	CHECK(t && t->placed);
	t->llp.qp = &qp;
	t->llp.stats = &stats;
	for (int i = 0; i < 256 && in.n; i++) {
		uint8_t e = fuzz_take(&in, 1);

		if (e % 4 == 3)
			sctp_receive(&t->llp);
		else
			arrive(&in, e);
	}
	sctp_receive(&t->llp);
	CHECK(qp.taken <= q_head);
	CHECK(region_sound());
	sctp_destroy(&t->llp);
	inputs++;
	failed += qp.failed;
	taken += qp.taken;
	return 0;
}
