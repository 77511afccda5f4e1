/* SPDX-License-Identifier: MIT */
/*
 * The drop-in librdmacm: rdma-core's connection manager (<rdma/rdma_cma.h>, rdma-core
 * 44) on libiwx's connections, so that rping, qperf and perftest connect through iwxd.
 * One device context serves every id of the process (as rdma-core's librdmacm opens
 * each device once); its queue pairs are the drop-in libibverbs' (lib/ibverbs).
 *
 *   events.c    event channels, libiwx's events turned into rdma_cm's, in its order
 *   cm_id.c     ids: address and route resolution, listen, connect, accept, disconnect
 *   qp.c        rdma_create_qp and its CQs, QP attributes for applications' own QPs
 *   addrinfo.c  rdma_getaddrinfo
 *   ep.c        the synchronous endpoints: rdma_create_ep, rdma_get_request
 *   rsocket.c, rdata.c, ropts.c, riomap.c, rpoll.c: rsockets (rsocket.h)
 */
#ifndef IWX_RDMACM_CM_H
#define IWX_RDMACM_CM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>

#include <iwx/iwx.h>

#include "../ibverbs/iwxv.h"

/* An event waiting in its channel; ev first: the application's pointer. */
struct cm_event {
	struct rdma_cm_event	ev;
	uint8_t			private_data[IWX_MAX_PRIVATE_DATA];
	struct cm_event		*next;
};

struct cm_channel {
	struct rdma_event_channel ch;		/* ch.fd: epoll of the device's events and own_fd */
	int			own_fd;		/* eventfd: set while events are queued */
	bool			own_set;
	struct cm_event		*head, **tail;
	unsigned		waiters;	/* threads in rdma_get_cm_event (cm.lock) */
	bool			dead;		/* destroyed while one waited: kept for them */
};

struct cm_id {
	struct rdma_cm_id	id;
	struct cm_channel	*chan;
	bool			sync;		/* made without a channel: calls wait for their event */
	struct ibv_qp		*conn_qp;	/* the QP connected or accepted (id.qp, or by number) */
	struct iwx_listener	*listener;
	uint32_t		conn_id;	/* a connection request not yet answered */
	bool			requested, disconnected;
	bool			established;	/* ESTABLISHED given */
	bool			passive;	/* made by a connection request */
	bool			own_cqs;	/* rdma_create_qp made id.send_cq and id.recv_cq */
	/* rdma_connect's, to try again while nobody listens yet (events.c) */
	struct iwx_conn_param	param;
	uint8_t			param_pd[IWX_MAX_PRIVATE_DATA];
	uint64_t		connect_ms;	/* when rdma_connect was called */
	/* rdma_create_ep's listener: the QP each rdma_get_request makes (ep.c) */
	bool			ep_qp;
	struct ibv_qp_init_attr	ep_attr;
	struct ibv_pd		*ep_pd;
	struct cm_id		*next;
};

/* The process's connection manager: its one context, its ids. */
struct cm {
	pthread_mutex_t		lock;		/* before the context's lock, never after */
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;		/* for rdma_create_qp without one */
	struct cm_id		*ids;
};

extern struct cm cm;

/* Open the context once: 0, or -1 with errno (and a message: no iwxd). cm.lock held. */
int cm_init(void);

static inline struct cm_id *cm_id_of(struct rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

/* events.c: queue an event for id (cm.lock held); private data may be NULL. NULL: no memory. */
struct rdma_cm_event *cm_queue(struct cm_id *id, enum rdma_cm_event_type type, int status,
			       const struct rdma_conn_param *param, const void *pd, uint8_t pd_len);
/* ... take what libiwx has and queue it (cm.lock held). */
void cm_pump(void);
/* ... remove id's events not yet taken (cm.lock held). */
void cm_forget(struct cm_id *id);
/* ... move id to channel, with its events not yet taken, as the kernel's ucma moves them. */
void cm_move(struct cm_id *id, struct rdma_event_channel *channel);
/* Give id (a connection request's) a channel of its own and make it synchronous. 0 or -1. */
int cm_make_sync(struct cm_id *id);
/* Wait for the next event of a sync id: 0 when it is want, else -1 with errno. */
int cm_sync_wait(struct cm_id *id, enum rdma_cm_event_type want);

/* Connect id's QP as rdma_connect asked (again, after a refusal): 0 or -errno. cm.lock held. */
int cm_connect(struct cm_id *id);

/* The length of a socket address of family AF_INET or AF_INET6 (else 0). */
socklen_t cm_addr_len(const struct sockaddr *a);

#endif /* IWX_RDMACM_CM_H */
