/* SPDX-License-Identifier: MIT */
/*
 * The drop-in libibverbs: rdma-core's verbs (<infiniband/verbs.h>, rdma-core 44) on
 * libiwx, so that programs built against rdma-core run over iwxd unmodified. Its
 * objects wrap libiwx's; every call on a context holds the context's lock, as libiwx
 * wants one thread at a time and verbs applications post, poll and wait from several.
 *
 * The few calls below are exported under a private symbol version for the drop-in
 * librdmacm alone (lib/rdmacm), which connects the queue pairs made here.
 */
#ifndef IWX_IWXV_H
#define IWX_IWXV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include <iwx/iwx.h>

#define IWXV_DEVICE_NAME	"iwx0"
#define IWXV_ARENA		(16u << 20)	/* libiwx's arena: inline data and little else */
#define IWXV_MAX_INLINE		512		/* bytes of inline data a send may carry */

struct iwxv_cq;
struct iwxv_qp;
struct iwxv_srq;
struct iwxv_channel;
struct iwxv_pending;

struct iwxv_context {
	struct verbs_context	vctx;		/* vctx.context is the application's ibv_context */
	pthread_mutex_t		lock;
	struct iwx_device	*dev;
	struct iwx_device_limits lim;
	struct iwxv_cq		*cqs;
	struct iwxv_qp		*qps;
	struct iwxv_srq		*srqs;
	struct iwxv_mr		*mrs;
};

struct iwxv_pd {
	struct ibv_pd		pd;
	struct iwx_pd		*ipd;
};

struct iwxv_mr {
	struct ibv_mr		mr;
	struct iwx_mr		*imr;
	struct iwxv_mr		*next;		/* the context's, for local invalidation by rkey */
};

struct iwxv_channel {
	struct ibv_comp_channel	ch;		/* ch.fd: epoll of the device's wake-ups and own_fd */
	int			own_fd;		/* eventfd: set while fired holds a CQ */
	bool			own_set;
	struct iwxv_cq		*fired, **fired_tail;	/* woken CQs not yet given out */
};

struct iwxv_cq {
	struct ibv_cq		cq;
	struct iwx_cq		*icq;
	struct iwxv_channel	*channel;
	bool			on_fired;
	struct iwxv_cq		*next_fired;
	struct iwxv_cq		*next;
	/* local invalidations' completions, given before the ring's (qp.c) */
	struct ibv_wc		*made;
	uint32_t		nmade, made_cap;
};

struct iwxv_srq {
	struct ibv_srq		srq;
	struct iwx_srq		*isrq;
	struct iwxv_srq		*next;		/* the context's, for its asynchronous events */
};

/* A queue pair: ibv_qp_ex (whose first member is the ibv_qp) and what libiwx made. */
struct iwxv_qp {
	struct ibv_qp_ex	qpx;
	struct iwxv_context	*c;
	struct iwx_qp		*iqp;
	struct ibv_qp_cap	cap;		/* as granted */
	bool			sig_all, ex;
	enum ibv_qp_state	state;		/* as the application set it (until connected) */
	struct ibv_qp_attr	attr;		/* what it set besides */
	/* inline data: copied into 2 * sq depth slots of registered arena memory */
	uint8_t			*inl;
	struct iwx_mr		*inl_mr;
	uint32_t		inl_slot, inl_slots, posted;
	/* ibv_wr_*: the requests between wr_start and wr_complete */
	struct iwxv_pending	*batch;		/* qp_ex.c */
	uint32_t		nbatch, batch_cap;
	int			batch_err;
	struct iwxv_qp		*next;
};

static inline struct iwxv_context *iwxv_ctx(struct ibv_context *ctx)
{
	return (struct iwxv_context *)verbs_get_ctx(ctx);
}

static inline struct iwxv_qp *iwxv_qp(struct ibv_qp *qp)
{
	return (struct iwxv_qp *)qp;
}

static inline void iwxv_lock(struct iwxv_context *c)
{
	pthread_mutex_lock(&c->lock);
}

static inline void iwxv_unlock(struct iwxv_context *c)
{
	pthread_mutex_unlock(&c->lock);
}

/* errno = err (a positive errno), and the NULL a verb returns with it. */
void *iwxv_fail(int err);

/* device.c: the device's attributes, for ibv_query_device and its extended form. */
void iwxv_device_attr(struct iwxv_context *c, struct ibv_device_attr *a);

/* cq.c: a completion made here (a local invalidation's), polled before the ring's. */
int iwxv_cq_add(struct iwxv_cq *cq, const struct ibv_wc *wc);

/* qp.c: post one send request, built as libiwx's (the lock held). 0 or a positive errno. */
int iwxv_post_one(struct iwxv_qp *q, struct iwx_send_wr *w, bool inl, const struct ibv_sge *sg,
		  int nsg);
/* ... a local invalidation of the context's STag rkey, completed at once. */
int iwxv_local_inv(struct iwxv_qp *q, uint64_t wr_id, uint32_t rkey, bool signaled);

/* ... one ibv_recv_wr as libiwx's: 0 or EINVAL. */
int iwxv_recv_wr_of(const struct ibv_recv_wr *wr, struct iwx_recv_wr *w);

/* qp_ex.c: fill the ibv_wr_* operations of q->qpx. */
void iwxv_qp_ex_init(struct iwxv_qp *q);

/* The context's operations (device.c fills ctx->ops with them). */
struct ibv_qp *iwxv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
int iwxv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int iwxv_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int iwxv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int iwxv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int iwxv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* libibverbs exports these for providers (rdma-core's driver.h, not installed): device.c */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
const char *ibv_get_sysfs_path(void);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/* For the drop-in librdmacm (symbol version IWX_IBVERBS_PRIVATE). */
struct ibv_context *iwxv_open_default(void);	/* the context rdma_cm gives its ids */
struct iwx_device *iwxv_device(struct ibv_context *ctx);
/*
 * Add to the epoll epfd what ctx's iwx_event_fd (async: iwx_async_fd) watches, rather than
 * that epoll itself (client_watch): for the drop-ins' channels. 0 or -errno.
 */
int iwxv_watch(struct ibv_context *ctx, int epfd, bool async);
struct iwx_qp *iwxv_iwx_qp(struct ibv_qp *qp);
struct ibv_qp *iwxv_qp_by_num(struct ibv_context *ctx, uint32_t qp_num);
/*
 * The drop-in librdmacm's word when a QP goes (ibv_destroy_qp, before it does, outside
 * the context's lock): an rdma_cm id that connected it learns its connection is gone.
 */
void iwxv_on_qp_destroy(void (*fn)(struct ibv_qp *qp));
void iwxv_ctx_lock(struct ibv_context *ctx);
void iwxv_ctx_unlock(struct ibv_context *ctx);

#endif /* IWX_IWXV_H */
