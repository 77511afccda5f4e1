// SPDX-License-Identifier: MIT
/*
 * The ibv_wr_* posting API of ibv_qp_ex (perftest's default): ibv_wr_start opens a
 * batch, each ibv_wr_<op> begins a request that the ibv_wr_set_* that follow complete,
 * and ibv_wr_complete posts the batch. What iWARP cannot carry makes the batch fail.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>

#include "iwxv.h"

/* A request being built: its libiwx form, and where its data is until the batch is posted. */
struct iwxv_pending {
	struct iwx_send_wr	w;
	bool			inl, inv;	/* inline data; a local invalidation */
	int			nsg;
	struct ibv_sge		sg[IWX_MAX_SGE];
};

static struct iwxv_qp *qp_of(struct ibv_qp_ex *qpx)
{
	return (struct iwxv_qp *)qpx;
}

static void fail(struct ibv_qp_ex *qpx, int err)
{
	struct iwxv_qp *q = qp_of(qpx);

	if (!q->batch_err)
		q->batch_err = err;
}

/* Begin a request of opcode: NULL (and the batch fails) when it does not fit. */
static struct iwxv_pending *begin(struct ibv_qp_ex *qpx, uint8_t opcode)
{
	struct iwxv_qp *q = qp_of(qpx);
	struct iwxv_pending *p;

	if (q->nbatch >= q->cap.max_send_wr) {
		fail(qpx, ENOMEM);	/* more than the queue can take */
		return NULL;
	}
	if (q->nbatch == q->batch_cap) {
		uint32_t cap = q->batch_cap ? q->batch_cap * 2 : 16;

		p = realloc(q->batch, cap * sizeof(*p));
		if (!p) {
			fail(qpx, ENOMEM);
			return NULL;
		}
		q->batch = p;
		q->batch_cap = cap;
	}
	p = &q->batch[q->nbatch++];
	*p = (struct iwxv_pending){
		.w = { .wr_id = qpx->wr_id, .opcode = opcode,
		       .flags = (qpx->wr_flags & IBV_SEND_SIGNALED ? IWX_WR_SIGNALED : 0) |
				(qpx->wr_flags & IBV_SEND_FENCE ? IWX_WR_FENCE : 0) },
		.inl = false,
	};
	return p;
}

static struct iwxv_pending *current(struct ibv_qp_ex *qpx)
{
	struct iwxv_qp *q = qp_of(qpx);

	if (!q->nbatch) {
		fail(qpx, EINVAL);	/* a set_* before any operation */
		return NULL;
	}
	return &q->batch[q->nbatch - 1];
}

static bool solicited(struct ibv_qp_ex *qpx)
{
	return qpx->wr_flags & IBV_SEND_SOLICITED;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	begin(qpx, solicited(qpx) ? IWX_WR_SEND_SE : IWX_WR_SEND);
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct iwxv_pending *p = begin(qpx, solicited(qpx) ? IWX_WR_SEND_SE_INV : IWX_WR_SEND_INV);

	if (p)
		p->w.inval_stag = rkey;
}

static void remote(struct ibv_qp_ex *qpx, uint8_t opcode, uint32_t rkey, uint64_t addr)
{
	struct iwxv_pending *p = begin(qpx, opcode);

	if (p) {
		p->w.rkey = rkey;
		p->w.remote_addr = addr;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	remote(qpx, IWX_WR_WRITE, rkey, addr);
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	remote(qpx, IWX_WR_READ, rkey, addr);
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct iwxv_pending *p = begin(qpx, IWX_WR_SEND);

	if (p) {
		p->inv = true;
		p->w.inval_stag = rkey;
	}
}

/* The current request's data: n pieces, inline (copied at posting) or registered. */
static void set_data(struct ibv_qp_ex *qpx, size_t n, bool inl, const struct ibv_sge *sg,
		     const struct ibv_data_buf *b)
{
	struct iwxv_pending *p = current(qpx);

	if (!p)
		return;
	if (n > IWX_MAX_SGE) {
		fail(qpx, EINVAL);
		return;
	}
	p->inl = inl;
	p->nsg = (int)n;
	for (size_t i = 0; i < n; i++)
		p->sg[i] = sg ? sg[i] : (struct ibv_sge){ .addr = (uintptr_t)b[i].addr,
							 .length = (uint32_t)b[i].length };
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *sg)
{
	set_data(qpx, n, false, sg, NULL);
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge sg = { .addr = addr, .length = len, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sg);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *b)
{
	set_data(qpx, n, true, NULL, b);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t len)
{
	struct ibv_data_buf b = { .addr = addr, .length = len };

	wr_set_inline_data_list(qpx, 1, &b);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct iwxv_qp *q = qp_of(qpx);

	q->nbatch = 0;
	q->batch_err = 0;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	wr_start(qpx);
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct iwxv_qp *q = qp_of(qpx);
	int err = q->batch_err;

	iwxv_lock(q->c);
	for (uint32_t i = 0; i < q->nbatch && !err; i++) {
		struct iwxv_pending *p = &q->batch[i];

		if (p->inv)
			err = iwxv_local_inv(q, p->w.wr_id, p->w.inval_stag,
					     q->sig_all || (p->w.flags & IWX_WR_SIGNALED));
		else if (p->w.opcode == IWX_WR_READ && p->nsg != 1)
			err = EINVAL;
		else
			err = iwxv_post_one(q, &p->w, p->inl, p->sg, p->nsg);
	}
	iwxv_unlock(q->c);
	wr_start(qpx);
	return err;
}

/* What iWARP has no wire for: Send with immediate, atomic write, memory windows, UD, XRC, TSO. */
static void wr_unsupported(struct ibv_qp_ex *qpx)
{
	fail(qpx, EOPNOTSUPP);
}

/* RFC 7306 §6, where the peer agreed (else the batch fails EOPNOTSUPP at ibv_wr_complete) */
static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct iwxv_pending *p = begin(qpx, solicited(qpx) ? IWX_WR_WRITE_IMM_SE : IWX_WR_WRITE_IMM);

	if (p) {
		p->w.rkey = rkey;
		p->w.remote_addr = addr;
		p->w.imm_data = be32toh(imm);
	}
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	(void)imm;
	wr_unsupported(qpx);
}

/* RFC 7306 §5: the result's sge follows (ibv_wr_set_sge) */
static void atomic(struct ibv_qp_ex *qpx, uint8_t opcode, uint32_t rkey, uint64_t addr,
		   uint64_t compare_add, uint64_t swap)
{
	struct iwxv_pending *p = begin(qpx, opcode);

	if (p) {
		p->w.rkey = rkey;
		p->w.remote_addr = addr;
		p->w.atomic.compare_add = compare_add;
		p->w.atomic.swap = swap;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t cmp,
			      uint64_t swap)
{
	atomic(qpx, IWX_WR_CMP_SWAP, rkey, addr, cmp, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	atomic(qpx, IWX_WR_FETCH_ADD, rkey, addr, add, 0);
}

static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *v)
{
	(void)rkey, (void)addr, (void)v;
	wr_unsupported(qpx);
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	(void)mw, (void)rkey, (void)info;
	wr_unsupported(qpx);
}

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	wr_unsupported(qpx);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	(void)ah, (void)qpn, (void)qkey;
	wr_unsupported(qpx);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	(void)srqn;
	wr_unsupported(qpx);
}

void iwxv_qp_ex_init(struct iwxv_qp *q)
{
	struct ibv_qp_ex *x = &q->qpx;

	x->wr_send = wr_send;
	x->wr_send_inv = wr_send_inv;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_local_inv = wr_local_inv;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send_imm = wr_send_imm;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_atomic_write = wr_atomic_write;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
}
