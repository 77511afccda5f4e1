// SPDX-License-Identifier: MIT
/*
 * Writes seed inputs for the fuzz targets, built with the library itself:
 *   make_seeds DIR  ->  DIR/fuzz_mpa_rr/seed-NNN, DIR/fuzz_mpa_rx/seed-NNN,
 *                       DIR/fuzz_ddp/seed-NNN, DIR/fuzz_ipc/seed-NNN, DIR/fuzz_decode/...,
 *                       DIR/fuzz_sctp_place/...
 * The input layouts are described at the top of each target.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ipc/ipc.h"
#include "ipc/ring.h"
#include "iwx/access.h"
#include "iwx/verbs.h"
#include "proto/ddp.h"
#include "proto/ddp_shim.h"
#include "proto/mpa.h"
#include "proto/rdmap.h"

#include "fuzz_ipc_input.h"

/* keep in step with fuzz_mpa_rx.c */
#define F_CRC		0x01
#define F_MARKERS	0x02
#define F_FRAMED	0x04
#define F_PLACE_PULL	0x08
#define F_STOP		0x10
#define F_CORRUPT	0x20
#define F_LARGE		0x40

struct buf {
	uint8_t	p[1 << 17];
	size_t	len;
};

static const char *outdir;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void mkdir_p(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
}

static void write_seed(const char *target, const void *data, size_t len)
{
	static unsigned n;
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir_p(path);	/* each target's directory, at its first seed */
	snprintf(path, sizeof(path), "%s/%s/seed-%03u", outdir, target, n++);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		die(path);
}

static void put(struct buf *b, const void *src, size_t n)
{
	if (b->len + n > sizeof(b->p)) {
		fprintf(stderr, "make_seeds: seed too large\n");
		exit(1);
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void put8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

/* ------------------------------------------------------------- MPA set-up */

static void rr_seed(const struct iwx_mpa_rr_params *p)
{
	uint8_t out[1024];
	ssize_t n = iwx_mpa_rr_encode(out, sizeof(out), p);

	if (n < 0) {
		fprintf(stderr, "make_seeds: rr encode: %zd\n", n);
		exit(1);
	}
	write_seed("fuzz_mpa_rr", out, n);
}

static void rr_seeds(void)
{
	static const uint8_t pd[] = "iwx private data";

	rr_seed(&(struct iwx_mpa_rr_params){ .rev = 1 });
	rr_seed(&(struct iwx_mpa_rr_params){ .rev = 1, .crc = true, .markers = true,
					     .pd = pd, .pd_len = sizeof(pd) });
	rr_seed(&(struct iwx_mpa_rr_params){ .reply = true, .rev = 1, .reject = true });
	rr_seed(&(struct iwx_mpa_rr_params){ .rev = 2, .crc = true, .enhanced = true,
					     .ird = 16, .ord = 16, .p2p = true,
					     .rtr_write = true, .pd = pd, .pd_len = 8 });
	rr_seed(&(struct iwx_mpa_rr_params){ .reply = true, .rev = 2, .enhanced = true,
					     .ird = 0x3fff, .ord = 1, .p2p = true,
					     .rtr_send = true, .rtr_read = true });
}

/* ----------------------------------------------------------- receive side */

/* One ULPDU: the DDP header for m at offset off, then payload. */
static size_t ulpdu(uint8_t *out, const struct iwx_ddp_msg *m, uint32_t off, bool last,
		    const void *payload, size_t len)
{
	size_t hl = iwx_ddp_hdr_encode(out, m, off, last);

	memcpy(out + hl, payload, len);
	return hl + len;
}

/* A mix of every opcode, as ULPDUs; returns how many. */
static size_t sample_ulpdus(uint8_t u[][512], size_t len[])
{
	uint8_t pay[400], rr[IWX_RDMAP_READ_REQ_LEN], term[IWX_TERM_MAX_LEN];
	uint8_t fa[IWX_RDMAP_ATOMIC_REQ_LEN], cs[IWX_RDMAP_ATOMIC_REQ_LEN];
	uint8_t resp[IWX_RDMAP_ATOMIC_RESP_LEN];
	struct iwx_read_req req = { .sink_stag = 0x1100, .sink_to = 0x1000, .size = 300,
				    .src_stag = 0x2200, .src_to = 0x8000 };
	struct iwx_atomic_req fetch_add = { .aop = IWX_AOP_FETCH_ADD, .req_id = 2, .stag = 0x3300,
					    .to = 0x3008, .add_swap = 0xff,
					    .add_swap_mask = 0x8080808080808080ull,
					    .compare_mask = ~0ull };
	struct iwx_atomic_req cmp_swap = { .aop = IWX_AOP_CMP_SWAP, .req_id = 3, .stag = 0x3300,
					   .to = 0x3010, .add_swap = 0x1234, .add_swap_mask = ~0ull,
					   .compare = 0x42, .compare_mask = 0xffff };
	struct iwx_term t;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = i * 7;
	iwx_read_req_encode(rr, &req);
	iwx_atomic_req_encode(fa, &fetch_add);
	iwx_atomic_req_encode(cs, &cmp_swap);
	iwx_atomic_resp_encode(resp, &(struct iwx_atomic_resp){ .req_id = 2, .orig = 0x1122ull });
	iwx_term_init(&t, IWX_CAUSE_DDP_T(IWX_DDP_T_BASE_BOUNDS), NULL, NULL);

	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_WRITE, .stag = 0x1234,
			.to = 0x10000 }, 0, false, pay, 100), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_WRITE, .stag = 0x1234,
			.to = 0x10000 }, 100, true, pay, 37), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_SEND, .msn = 1 },
		       0, true, pay, 300), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_READ_REQ, .msn = 1 },
		       0, true, rr, sizeof(rr)), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_READ_RESP, .stag = 0x1100,
			.to = 0x1000 }, 0, true, pay, 299), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_SEND_SE_INV, .msn = 2,
			.inval_stag = 0x4400 }, 0, true, pay, 1), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_WRITE, .stag = 0x1 },
		       0, true, pay, 0), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_TERMINATE, .msn = 1 },
		       0, true, term, iwx_term_encode(term, &t)), n++;
	/* RFC 7306 */
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_ATOMIC_REQ, .msn = 2 },
		       0, true, fa, sizeof(fa)), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_ATOMIC_REQ, .msn = 3 },
		       0, true, cs, sizeof(cs)), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_ATOMIC_RESP, .msn = 1 },
		       0, true, resp, sizeof(resp)), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_IMM, .msn = 3 },
		       0, true, pay, IWX_RDMAP_IMM_LEN), n++;
	len[n] = ulpdu(u[n], &(struct iwx_ddp_msg){ .opcode = IWX_OP_IMM_SE, .msn = 4 },
		       0, true, pay + 8, IWX_RDMAP_IMM_LEN), n++;
	return n;
}

/* Framed mode: the ULPDUs as raw records. */
static void rx_framed_seed(uint8_t flags, uint8_t feed, uint8_t pull)
{
	static uint8_t u[16][512];
	static struct buf b;
	size_t len[16], n = sample_ulpdus(u, len);

	b.len = 0;
	put8(&b, flags | F_FRAMED);
	put8(&b, feed);
	put8(&b, pull);
	if (flags & F_CORRUPT) {
		/* byte 300 of the stream, xor 0x40 */
		put(&b, "\x00\x01\x2c\x40", 4);
	}
	for (size_t i = 0; i < n; i++) {
		put8(&b, len[i] >> 8);
		put8(&b, len[i]);
		put(&b, u[i], len[i]);
	}
	write_seed("fuzz_mpa_rx", b.p, b.len);
}

/* Framed mode: one generated Write of 60000 bytes and a Send, from templates. */
static void rx_template_seed(uint8_t flags)
{
	static struct buf b;

	b.len = 0;
	put8(&b, flags | F_FRAMED | F_LARGE);
	put8(&b, 0xc0 | 13);	/* feed: random pieces up to 8 KiB */
	put8(&b, 0x80 | 10);	/* pull: reads of 671 bytes */
	put(&b, "\xc0\xea\x60\x00\x00\x12\x34\x07", 8);
	put(&b, "\xcb\x00\x05\x00\x00\x00\x01\x00hello", 13);
	write_seed("fuzz_mpa_rx", b.p, b.len);
}

/* Raw mode: the stream exactly as a sender frames it. */
static void rx_raw_seed(uint8_t flags, uint8_t feed, uint8_t pull)
{
	static uint8_t u[16][512];
	static struct buf b;
	struct iwx_mpa_mode mode = { .rev = 1, .crc = flags & F_CRC,
				     .markers_tx = flags & F_MARKERS };
	struct iwx_mpa_tx tx;
	size_t len[16], n = sample_ulpdus(u, len);

	iwx_mpa_tx_init(&tx, &mode);
	b.len = 0;
	put8(&b, flags);
	put8(&b, feed);
	put8(&b, pull);
	for (size_t i = 0; i < n; i++) {
		ssize_t k = iwx_mpa_fpdu_build(&tx, b.p + b.len, sizeof(b.p) - b.len,
					       u[i], len[i], NULL, 0);

		if (k < 0) {
			fprintf(stderr, "make_seeds: fpdu build: %zd\n", k);
			exit(1);
		}
		b.len += k;
	}
	write_seed("fuzz_mpa_rx", b.p, b.len);
}

static void rx_seeds(void)
{
	for (uint8_t mode = 0; mode < 4; mode++) {
		rx_framed_seed(mode, 0x00, 0x00);
		rx_framed_seed(mode | F_STOP | F_PLACE_PULL, 0x40, 0xc0 | 5);
		rx_framed_seed(mode | F_CORRUPT, 0xc0 | 7, 0x40 | 2);
		rx_template_seed(mode);
		rx_raw_seed(mode, 0x40 | 6, 0x00);
		rx_raw_seed(mode | F_PLACE_PULL, 0xc0 | 9, 0x40);
	}
}

/* ---------------------------------------------------------- DDP, the shim */

/* fuzz_ddp: an indication byte (0: DDP_TAG_PLACE, iwx's), then a ULPDU or a shim chunk. */
static void ddp_seed(uint8_t ind, const uint8_t *p, size_t len)
{
	static struct buf b;

	b.len = 0;
	put8(&b, ind);
	put(&b, p, len);
	write_seed("fuzz_ddp", b.p, b.len);
}

static void ddp_seeds(void)
{
	static const struct iwx_ddp_msg msgs[] = {
		{ .opcode = IWX_OP_WRITE, .stag = 0x1234, .to = 0x10000 },
		{ .opcode = IWX_OP_SEND, .msn = 1 },
		{ .opcode = IWX_OP_SEND_SE_INV, .msn = 2, .inval_stag = 0x4400 },
		{ .opcode = IWX_OP_READ_RESP, .stag = 0x1100, .to = 0x1000 },
	};
	static uint8_t u[16][512];
	uint8_t chunk[IWX_SHIM_MAX_HDR_LEN + 64];
	size_t len[16], n = sample_ulpdus(u, len);

	for (size_t i = 0; i < n; i++)
		ddp_seed(0, u[i], len[i]);
	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		size_t hl = iwx_shim_hdr_encode(chunk, &msgs[i], 0, true);

		memset(chunk + hl, 0x5a, 64);
		ddp_seed(0, chunk, hl + 64);
	}
	ddp_seed(1, chunk, iwx_shim_setup_hdr(chunk));
}

/* ------------------------------------------------------------ iwx decode */

/* fuzz_decode: a segment of direction dir (seq offset 0), its payload p. */
static void dec_seg(struct buf *b, uint8_t dir, const void *p, size_t len)
{
	uint16_t l = (uint16_t)len, off = 0;

	put8(b, dir);
	put(b, &off, 2);
	put(b, &l, 2);
	put(b, p, len);
}

/* A connection's MPA exchange, with the CRC (and markers), then every sample ULPDU
   each way, as iwx decode reads it from a capture. */
static void decode_seed(uint8_t out, bool markers)
{
	static struct buf b;
	static uint8_t u[16][512], f[1024];
	struct iwx_mpa_rr_params rr = { .rev = 1, .crc = true, .markers = markers };
	struct iwx_mpa_mode mode = { .rev = IWX_MPA_REV1, .crc = true,
				     .markers_rx = markers, .markers_tx = markers };
	struct iwx_mpa_tx tx[2];
	size_t len[16], n = sample_ulpdus(u, len);
	ssize_t k;

	b.len = 0;
	put8(&b, out);
	k = iwx_mpa_rr_encode(f, sizeof(f), &rr);
	dec_seg(&b, 0, f, (size_t)k);
	rr.reply = true;
	k = iwx_mpa_rr_encode(f, sizeof(f), &rr);
	dec_seg(&b, 1, f, (size_t)k);
	iwx_mpa_tx_init(&tx[0], &mode);
	iwx_mpa_tx_init(&tx[1], &mode);
	for (size_t i = 0; i < n; i++)
		for (uint8_t dir = 0; dir < 2; dir++) {
			k = iwx_mpa_fpdu_build(&tx[dir], f, sizeof(f), u[i], len[i], NULL, 0);
			if (k > 0)
				dec_seg(&b, dir, f, (size_t)k);
		}
	write_seed("fuzz_decode", b.p, b.len);
}

/* ----------------------------------------------- placement from SCTP packets */

/* fuzz_sctp_place: what the placer takes, then a packet: two whole DATA chunks carrying
   shim headers and payload (the second unpadded, last), a fragment between them. */
static void sctp_place_seed(uint8_t take)
{
	static struct buf b;
	static const struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .stag = 0x1234, .to = 0x10000 };
	struct iwx_sctp_common h = { 0 };
	uint8_t chunk[sizeof(struct iwx_sctp_data) + IWX_SHIM_MAX_HDR_LEN + 64];
	struct iwx_sctp_data *c = (void *)chunk;

	b.len = 0;
	put8(&b, take);
	put(&b, &h, sizeof(h));
	for (int i = 0; i < 3; i++) {
		size_t n = sizeof(*c) + iwx_shim_hdr_encode(chunk + sizeof(*c), &m, 0, true) +
			   (i == 2 ? 37 : 40);

		memset(c, 0, sizeof(*c));
		c->type = IWX_SCTP_CHUNK_DATA;
		c->flags = i == 1 ? IWX_SCTP_DATA_B : IWX_SCTP_DATA_U | IWX_SCTP_DATA_B | IWX_SCTP_DATA_E;
		c->len = htons((uint16_t)n);
		c->tsn = htonl(100 + i);
		memset(chunk + n - 37, 0x5a, 37);
		put(&b, chunk, i == 2 ? n : (n + 3) & ~(size_t)3);
	}
	write_seed("fuzz_sctp_place", b.p, b.len);
}

/* --------------------------------------------------- the fast path's walk */

static void put16be(struct buf *b, uint16_t v)
{
	put8(b, v >> 8);
	put8(b, v);
}

/* fuzz_fastpath (its input is described there): a message in flight to the table's STag
   `stag` at offset 0, in SYNC; two packets going on with it, the second ending it. kind 0
   is a Write, 1 a Read Response (its FPDU kinds). */
static void fastpath_seed(bool xdp, bool markers, uint8_t stag, uint8_t kind)
{
	static struct buf b;

	b.len = 0;
	put8(&b, xdp | markers << 1 | 0x04);	/* the cut valid, SYNC */
	put8(&b, stag);
	put16be(&b, 0);				/* the cut at the STag's base */
	put16be(&b, 500);			/* the stream's position: a marker 12 bytes on */
	put8(&b, 0);				/* where the stream goes on */
	put8(&b, 1);				/* two FPDUs */
	for (int i = 0; i < 2; i++) {
		put8(&b, 0x20 | kind);		/* going on from the last */
		put16be(&b, 1000);
	}
	put8(&b, 0);
	put8(&b, 0);				/* one FPDU, the message's last */
	put8(&b, 0x60 | kind);
	put16be(&b, 700);
	write_seed("fuzz_fastpath", b.p, b.len);
}

/* ------------------------------------------------- SCTP's receive, by TSN */

/* fuzz_sctp_rx (its input is described there): a chunk of TSN offset tsn, a Write of
   len bytes to to (kind 0; 0x08: its message's last). */
static void sctp_rx_chunk(struct buf *b, uint8_t tsn, uint8_t kind, uint16_t to, uint8_t len8)
{
	put8(b, 0);
	put8(b, tsn - 1);
	put8(b, kind);
	put16be(b, to);
	put8(b, len8);
	put8(b, tsn * 16);	/* fill */
}

/* A message of four chunks after a first read (usrsctp drained): in order, or out of
   order with a forged copy of a TSN usrsctp holds, near TSN 2^32 when wrap. */
static void sctp_rx_seed(bool shuffled, bool wrap)
{
	static const uint8_t order[2][5] = { { 1, 2, 3, 4, 0 }, { 2, 4, 2, 1, 3 } };
	static struct buf b;

	b.len = 0;
	put8(&b, wrap ? 0xf0 : 0);
	put8(&b, 3);	/* read: nothing yet */
	for (int i = 0; i < 5 && order[shuffled][i]; i++) {
		uint8_t tsn = order[shuffled][i];
		bool forged = shuffled && i == 2;

		sctp_rx_chunk(&b, tsn, tsn == 4 ? 0x08 : 0, forged ? 4000 : (tsn - 1) * 512, 64);
	}
	put8(&b, 3);
	write_seed("fuzz_sctp_rx", b.p, b.len);
}

/* ------------------------------------------------------------ iwxd's IPC */

/* fuzz_ipc: one request; patches are (body word, identifier handed so far) pairs. */
static void ipc_req(struct buf *b, uint16_t op, const void *body, uint16_t len,
		    unsigned npatch, const uint8_t patch[][2])
{
	put(b, &op, 2);
	put(b, &len, 2);
	put8(b, npatch);
	for (unsigned i = 0; i < npatch; i++)
		put(b, patch[i], 2);
	put(b, body, len);
}

/* fuzz_ipc: len bytes at off of the client's which-th shared memory (OP_SHARED). */
static void ipc_shared(struct buf *b, uint8_t which, uint32_t off, const void *p, uint16_t len)
{
	static uint8_t body[512];

	body[0] = which;
	memcpy(body + 1, &off, 4);
	memcpy(body + 5, p, len);
	ipc_req(b, FUZZ_IPC_OP_SHARED, body, (uint16_t)(5 + len), 0, NULL);
}

/* A client's usual opening (HELLO, a PD, two CQs, a QP, a region, a listener and a
   connection to it over lo, an SRQ, shared memory), and with undo what undoes it. */
static void ipc_seed(bool undo)
{
	static struct buf b;
	struct iwx_ipc_hello hello = { .version = FUZZ_IPC_CORPUS_VERSION, .arena_size = 1 << 20 };
	struct iwx_ipc_cq_create cq = { .entries = 16 };
	struct iwx_ipc_qp_create qp = { .sq_depth = 16, .rq_depth = 16 };
	struct iwx_ipc_srq_create srq = { .depth = 16 };
	struct iwx_ipc_mr_reg mr = { .access = IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE,
				     .addr = 0x10000, .len = 4096, .arena_off = 0 };
	struct iwx_ipc_shm shm = { .size = 4096 };
	struct iwx_ipc_listen ln = { .backlog = 4 };
	struct iwx_ipc_connect cn = { 0 };
	struct iwx_ipc_id id = { 0 };
	struct iwx_send_wr wr = { .wr_id = 1, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1, .sge = { { 0x10000, 64, 0 } } };
	uint32_t one = 1;
	struct sockaddr_in *sin = (void *)&ln.addr;
	/* identifiers in the order handed: 0 PD, 1 and 2 CQs, 3 QP, 4 STag, 5 listener */
	static const uint8_t to_pd[][2] = { { 0, 0 } }, to_qp[][2] = { { 0, 3 } },
			     qp_of[][2] = { { 0, 0 }, { 1, 1 }, { 2, 2 } }, to_stag[][2] = { { 0, 4 } },
			     to_ln[][2] = { { 0, 5 } };

	sin->sin_family = AF_INET;
	sin->sin_port = htons(7471);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memcpy(&cn.addr, &ln.addr, sizeof(cn.addr));
	b.len = 0;
	ipc_req(&b, IWX_IPC_HELLO, &hello, sizeof(hello), 0, NULL);
	ipc_req(&b, IWX_IPC_PD_ALLOC, NULL, 0, 0, NULL);
	ipc_req(&b, IWX_IPC_CQ_CREATE, &cq, sizeof(cq), 0, NULL);
	ipc_req(&b, IWX_IPC_CQ_CREATE, &cq, sizeof(cq), 0, NULL);
	ipc_req(&b, IWX_IPC_QP_CREATE, &qp, sizeof(qp), 3, qp_of);
	ipc_req(&b, IWX_IPC_MR_REG, &mr, sizeof(mr), 1, to_pd);
	ipc_req(&b, IWX_IPC_LISTEN, &ln, sizeof(ln), 0, NULL);
	ipc_req(&b, IWX_IPC_CONNECT, &cn, sizeof(cn), 1, to_qp);
	ipc_req(&b, IWX_IPC_SRQ_CREATE, &srq, sizeof(srq), 1, to_pd);
	ipc_req(&b, IWX_IPC_SHM_CREATE, &shm, sizeof(shm), 0, NULL);
	/* a Send posted on the QP (its memory is the 4th shared: doorbells, CQs, QP), unconnected */
	ipc_shared(&b, 3, IWX_IPC_QP_SQ_OFF, &wr, sizeof(wr));
	ipc_shared(&b, 3, offsetof(struct iwx_ipc_qp_shared, sq.prod), &one, sizeof(one));
	if (undo) {
		ipc_req(&b, IWX_IPC_MR_INVALIDATE, &id, sizeof(id), 1, to_stag);
		ipc_req(&b, IWX_IPC_MR_DEREG, &id, sizeof(id), 1, to_stag);
		ipc_req(&b, IWX_IPC_DISCONNECT, &id, sizeof(id), 1, to_qp);
		ipc_req(&b, IWX_IPC_QP_DESTROY, &id, sizeof(id), 1, to_qp);
		ipc_req(&b, IWX_IPC_LISTEN_CLOSE, &id, sizeof(id), 1, to_ln);
		ipc_req(&b, IWX_IPC_PD_FREE, &id, sizeof(id), 1, to_pd);
	}
	write_seed("fuzz_ipc", b.p, b.len);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	mkdir_p(outdir);
	rr_seeds();
	rx_seeds();
	ddp_seeds();
	ipc_seed(false);
	ipc_seed(true);
	for (uint8_t out = 0; out < 4; out++)
		decode_seed(out, out & 1);
	sctp_place_seed(0);
	sctp_place_seed(8);
	sctp_place_seed(0x7f);
	for (int i = 0; i < 4; i++) {
		fastpath_seed(i & 1, i & 2, 0, 0);
		fastpath_seed(i & 1, i & 2, 1, 1);
		sctp_rx_seed(i & 1, i & 2);
	}
	return 0;
}
