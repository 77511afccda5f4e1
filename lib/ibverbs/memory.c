// SPDX-License-Identifier: MIT
/*
 * Protection domains and memory regions. Registering ordinary memory (malloc, memalign,
 * mmap) is libiwx's iwx_reg_mr: its pages move, in place, into memory iwxd shares, so
 * that data arriving for it lands in the application's buffer (see iwx/iwx.h for what
 * that changes: fork shares those pages). Tagged offsets are virtual addresses.
 */
#include <errno.h>
#include <stdlib.h>

#include "iwxv.h"

/* the real calls behind verbs.h's macros of the same names */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct iwxv_context *c = iwxv_ctx(ctx);
	struct iwxv_pd *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	iwxv_lock(c);
	p->ipd = iwx_alloc_pd(c->dev);
	iwxv_unlock(c);
	if (!p->ipd) {
		free(p);
		return NULL;
	}
	p->pd.context = ctx;
	p->pd.handle = (uint32_t)(uintptr_t)p->ipd;
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct iwxv_context *c = iwxv_ctx(pd->context);
	struct iwxv_pd *p = (struct iwxv_pd *)pd;
	int err;

	iwxv_lock(c);
	err = iwx_dealloc_pd(p->ipd);
	iwxv_unlock(c);
	if (err)
		return -err;
	free(p);
	return 0;
}

/* ibverbs' access flags as iwx's: -1 for what iWARP cannot give. */
static int access_of(unsigned int access)
{
	/* atomics cannot be used on iWARP, so allowing them allows nothing; the optional
	   bits (relaxed ordering) are hints a device may ignore */
	unsigned int ignored = IBV_ACCESS_OPTIONAL_RANGE;
	int a = 0;

	if (access & ~(ignored | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC))
		return -1;	/* memory windows, zero-based, on-demand paging, ... */
	if (access & IBV_ACCESS_LOCAL_WRITE)
		a |= IWX_ACCESS_LOCAL_WRITE;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		a |= IWX_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		a |= IWX_ACCESS_REMOTE_READ;
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		a |= IWX_ACCESS_REMOTE_ATOMIC;
	return a;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	struct iwxv_context *c = iwxv_ctx(pd->context);
	struct iwxv_mr *m;
	int a = access_of(access);

	if (a < 0)
		return iwxv_fail(EOPNOTSUPP);
	if (iova != (uintptr_t)addr)
		return iwxv_fail(EOPNOTSUPP);	/* iwx's tagged offsets are the addresses */
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	iwxv_lock(c);
	m->imr = iwx_reg_mr(((struct iwxv_pd *)pd)->ipd, addr, length, a);
	if (m->imr) {
		m->next = c->mrs;
		c->mrs = m;
	}
	iwxv_unlock(c);
	if (!m->imr) {
		free(m);
		return NULL;
	}
	m->mr = (struct ibv_mr){
		.context = pd->context, .pd = pd, .addr = addr, .length = length,
		.handle = m->imr->lkey, .lkey = m->imr->lkey, .rkey = m->imr->rkey,
	};
	return &m->mr;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct iwxv_context *c = iwxv_ctx(mr->context);
	struct iwxv_mr *m = (struct iwxv_mr *)mr, **pp;
	int err;

	iwxv_lock(c);
	err = iwx_dereg_mr(m->imr);
	if (!err)
		for (pp = &c->mrs; *pp; pp = &(*pp)->next)
			if (*pp == m) {
				*pp = m->next;
				break;
			}
	iwxv_unlock(c);
	if (err)
		return -err;
	free(m);
	return 0;
}

/* Re-registration in place is not an iwx verb: deregister and register again. */
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	(void)mr, (void)flags, (void)pd, (void)addr, (void)length, (void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	(void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
	return iwxv_fail(EOPNOTSUPP);
}

/* The registration whose rkey is rkey, or NULL (the lock held). */
static struct iwxv_mr *mr_of(struct iwxv_context *c, uint32_t rkey)
{
	for (struct iwxv_mr *m = c->mrs; m; m = m->next)
		if (m->imr->rkey == rkey)
			return m;
	return NULL;
}

int iwxv_local_inv(struct iwxv_qp *q, uint64_t wr_id, uint32_t rkey, bool signaled)
{
	struct iwxv_mr *m = mr_of(q->c, rkey);
	struct ibv_wc wc = {
		.wr_id = wr_id, .opcode = IBV_WC_LOCAL_INV, .qp_num = q->qpx.qp_base.qp_num,
	};

	if (!m)
		return EINVAL;
	wc.status = iwx_invalidate_mr(m->imr) ? IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS;
	if (!signaled && wc.status == IBV_WC_SUCCESS)
		return 0;
	return iwxv_cq_add((struct iwxv_cq *)q->qpx.qp_base.send_cq, &wc);
}
