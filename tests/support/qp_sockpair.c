// SPDX-License-Identifier: MIT
/* Two engine queue pairs on a stream socket pair, for the tests of the queue pair (qp_sockpair.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>	/* MIN */
#include <sys/socket.h>
#include <unistd.h>

#include "proto/mpa_rx.h"

#include "llp_tcp.h"
#include "qp_sockpair.h"


struct side A, B;

struct iwx_mpa_agreed agreed(uint16_t ird, uint16_t ord)
{
	struct iwx_mpa_agreed a = {
		.mode = { .rev = 2, .crc = true }, .enhanced = true, .ird = ird, .ord = ord,
	};
	return a;
}

uint32_t reg(struct side *s, void *addr, uint64_t len, uint8_t access)
{
	int64_t stag = iwx_mem_reg(s->mem, OWNER, s->pd, addr, len, (uintptr_t)addr, access);

	cr_assert_gt(stag, 0, "iwx_mem_reg: %s", strerror((int)-stag));
	return stag;
}

static void side_init(struct side *s, int fd, struct iwx_mpa_agreed ag,
		      const struct engine_qp_attr *attr)
{
	s->fd = fd;
	s->mem = iwx_mem_new();
	cr_assert_not_null(s->mem);
	s->pd = iwx_mem_pd_alloc(s->mem, OWNER);
	s->buf = calloc(1, BUF_LEN);
	cr_assert_not_null(s->buf);
	s->stag = reg(s, s->buf, BUF_LEN,
		      IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_READ | IWX_ACCESS_REMOTE_WRITE);
	s->qp = engine_qp_create(iwx_llp_tcp_new(fd, &ag, 1448, 0), &ag, s->mem, s->pd, attr);
	cr_assert_not_null(s->qp);
}

void pair_with(struct iwx_mpa_agreed a, struct iwx_mpa_agreed b,
		      const struct engine_qp_attr *attr)
{
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	side_init(&A, sv[0], a, attr);
	side_init(&B, sv[1], b, attr);
}

void pair(struct iwx_mpa_agreed a, struct iwx_mpa_agreed b)
{
	pair_with(a, b, NULL);
}

void qp_sockpair_setup(void)
{
	pair(agreed(4, 4), agreed(4, 4));
}

void qp_sockpair_teardown(void)
{
	struct side *sides[] = { &A, &B };

	for (int i = 0; i < 2; i++) {
		engine_qp_destroy(sides[i]->qp);
		iwx_mem_free(sides[i]->mem);
		free(sides[i]->buf);
		memset(sides[i], 0, sizeof(*sides[i]));
	}
}

/* Run both queue pairs until neither has anything left to do (bounded). */
void pump(void)
{
	for (int round = 0; round < 20000; round++) {
		bool wa, wb;
		struct pollfd p[2] = { { .fd = A.fd, .events = POLLIN }, { .fd = B.fd, .events = POLLIN } };

		engine_qp_progress(A.qp, &wa);
		engine_qp_progress(B.qp, &wb);
		/* a queue pair in error has shut its socket down: nothing more to wait for */
		if (engine_qp_get_state(A.qp) == ENGINE_QP_ERROR)
			p[0].fd = -1;
		if (engine_qp_get_state(B.qp) == ENGINE_QP_ERROR)
			p[1].fd = -1;
		if (wa)
			p[0].events |= POLLOUT;
		if (wb)
			p[1].events |= POLLOUT;
		if (poll(p, 2, 20) == 0)
			return;
	}
	cr_assert_fail("queue pairs still busy after 20000 rounds");
}

struct iwx_wc one_wc(struct side *s)
{
	struct iwx_wc wc;

	cr_assert_eq(engine_qp_poll(s->qp, &wc, 1), 1, "a completion");
	return wc;
}

void no_wc(struct side *s)
{
	struct iwx_wc wc;

	cr_assert_eq(engine_qp_poll(s->qp, &wc, 1), 0, "no more completions");
}

struct iwx_sge sge(struct side *s, uint64_t off, uint32_t len)
{
	struct iwx_sge g = { .addr = (uintptr_t)s->buf + off, .len = len, .lkey = s->stag };
	return g;
}

void post_recv(struct side *s, uint64_t wr_id, uint64_t off, uint32_t len)
{
	struct iwx_recv_wr wr = { .wr_id = wr_id, .num_sge = 1, .sge = { sge(s, off, len) } };

	cr_assert_eq(engine_qp_post_recv(s->qp, &wr), 0);
}

void post(struct side *s, uint64_t wr_id, uint8_t op, uint64_t off, uint32_t len,
		 uint32_t rkey, uint64_t raddr)
{
	struct iwx_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { sge(s, off, len) }, .rkey = rkey, .remote_addr = raddr,
	};

	cr_assert_eq(engine_qp_post_send(s->qp, &wr), 0);
}

void assert_wc(struct iwx_wc wc, uint64_t wr_id, uint8_t op, uint8_t status)
{
	cr_assert_eq(wc.wr_id, wr_id, "wr_id %lu, want %lu", wc.wr_id, wr_id);
	cr_assert_eq(wc.opcode, op, "opcode %u, want %u", wc.opcode, op);
	cr_assert_eq(wc.status, status, "status %u, want %u (wr %lu)", wc.status, status, wr_id);
}

void assert_error(struct side *s, struct iwx_term_cause want, bool local)
{
	struct iwx_term_cause c;
	bool l;

	cr_assert(engine_qp_error(s->qp, &c, &l), "queue pair in error");
	cr_assert(iwx_cause_eq(c, want), "cause %u/%u/0x%02x, want %u/%u/0x%02x", c.layer,
		  c.etype, c.ecode, want.layer, want.etype, want.ecode);
	cr_assert_eq(l, local);
	cr_assert_eq(engine_qp_get_state(s->qp), ENGINE_QP_ERROR);
}

struct wire_seen {
	int			n;
	struct iwx_ddp_seg	seg;
	uint8_t			payload[IWX_TERM_MAX_LEN];
};

static int wire_segment(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct wire_seen *w = ctx;

	w->seg = *seg;
	memcpy(w->payload, seg->payload, MIN(seg->len, sizeof(w->payload)));
	w->seg.payload = w->payload;
	w->n++;
	return 0;
}

/* Send raw bytes (framed by us) to B, run B, decode what B answers on the wire. */
void raw_exchange(const uint8_t *ulpdu, size_t len, struct iwx_term *t)
{
	static const struct iwx_mpa_rx_ops ops = { .segment = wire_segment };
	struct iwx_mpa_mode mode = { .rev = 2, .crc = true };
	struct iwx_mpa_tx tx;
	static struct iwx_mpa_rx rx;
	struct wire_seen w = { 0 };
	struct iwx_term_cause c;
	uint8_t f[4096], in[4096];
	ssize_t n;

	iwx_mpa_tx_init(&tx, &mode);
	n = iwx_mpa_fpdu_build(&tx, f, sizeof(f), ulpdu, len, NULL, 0);
	cr_assert_eq(write(A.fd, f, n), n);
	for (int i = 0; i < 50 && engine_qp_get_state(B.qp) != ENGINE_QP_ERROR; i++) {
		engine_qp_progress(B.qp, NULL);
		poll(&(struct pollfd){ .fd = B.fd, .events = POLLIN }, 1, 10);
	}
	iwx_mpa_rx_init(&rx, &mode, &ops, &w);
	n = read(A.fd, in, sizeof(in));
	cr_assert_gt(n, 0, "B answered");
	cr_assert_eq(iwx_mpa_rx_feed(&rx, in, n, NULL), 0, "B's Terminate is a valid FPDU");
	cr_assert_eq(w.n, 1);
	cr_assert_eq(w.seg.opcode, IWX_OP_TERMINATE);
	cr_assert_eq(w.seg.qn, IWX_QN_TERMINATE);
	cr_assert_eq(iwx_term_decode(&w.seg, t, &c), 0);
	/* and nothing after it: B closed the stream */
	cr_assert_eq(read(A.fd, in, sizeof(in)), 0);
}

