/* SPDX-License-Identifier: MIT */
/*
 * libiwx's insides: the objects behind the opaque handles of iwx/iwx.h and the request
 * path to iwxd they share. Not installed; hidden from the library's exported symbols.
 */
#ifndef IWX_CLIENT_H
#define IWX_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc.h"
#include <iwx/iwx.h>
#include "util/ids.h"
#include "util/list.h"

#define IWX_HIDDEN	__attribute__((visibility("hidden")))

/* First-fit allocation of the arena's bytes (arena_alloc.c). */
struct arena_block {
	size_t	off, len;
};

struct arena_alloc {
	size_t			size;
	struct arena_block	*used;	/* sorted by offset */
	size_t			n, cap;
};

IWX_HIDDEN void arena_alloc_init(struct arena_alloc *a, size_t size);
IWX_HIDDEN void arena_alloc_fini(struct arena_alloc *a);
/* An offset of len bytes aligned to align (a power of two), or -1 when there is no room. */
IWX_HIDDEN int64_t arena_alloc_get(struct arena_alloc *a, size_t len, size_t align);
/* Give back the block at off: 0, or -EINVAL when none starts there. */
IWX_HIDDEN int arena_alloc_put(struct arena_alloc *a, size_t off);

/* Pages moved into memory shared with iwxd, for registrations outside the arena (move.c). */
struct moved;

/*
 * Make the pages of [addr, addr + len) shared with iwxd, moving those not moved yet,
 * and name them in req's pieces; held[] (IWX_IPC_MR_PIECES) gets what the registration
 * holds. 0, or -errno: -EINVAL memory that cannot move (shared, hugetlb, device) or
 * that spans too many earlier registrations' pages, -EBUSY pages another device shares,
 * -EFAULT unmapped or unreadable.
 */
IWX_HIDDEN int move_acquire(struct iwx_device *dev, uintptr_t addr, size_t len,
			    struct iwx_ipc_mr_reg *req, struct moved **held);
/* Let go of what a registration held; the last user moves the pages back (tell: iwxd too). */
IWX_HIDDEN void move_release(struct iwx_device *dev, struct moved **held, uint32_t n, bool tell);

struct pending_event {
	struct iwx_ipc_event	ev;
	struct pending_event	*next;
};

struct iwx_device {
	int			sock;		/* SOCK_SEQPACKET to iwxd */
	int			bell_fd;	/* eventfd: wake the daemon */
	int			notify_fd;	/* eventfd: an armed CQ has a completion */
	int			ready_fd;	/* eventfd: set while events are queued */
	int			event_fd;	/* epoll of sock and ready_fd: iwx_event_fd */
	int			async_fd;	/* epoll of sock and async_ready_fd: iwx_async_fd */
	uint64_t		look_ms;	/* client_lost looks at the socket again then */
	bool			ready;		/* ready_fd is set */
	uint32_t		spin_us;	/* iwx_wait_cq polls this long before sleeping */
	bool			cq_futex;	/* iwxd wakes a CQ's sleeper by futex (IWX_IPC_F_CQ_FUTEX) */
	bool			rfc7306;	/* iwxd offers RFC 7306 (IWX_IPC_F_RFC7306) */
	uint32_t		seq;
	uint32_t		client_id;
	uint8_t			*arena;
	size_t			arena_size;
	struct iwx_ipc_bells	*bells;		/* shared with iwxd: what we rang */
	struct iwx_device_limits limits;	/* from iwxd's hello */
	struct arena_alloc	alloc;
	struct pending_event	*events, **events_tail;
	struct pending_event	*asyncs, **asyncs_tail;	/* DISCONNECTED with a Terminate */
	int			async_ready_fd;	/* eventfd in async_fd: set while asyncs */
	bool			async_ready;
	bool			fatal_told;	/* IWX_ASYNC_DEVICE_FATAL delivered */
	bool			lost;		/* iwxd went away */
	bool			lost_told;	/* IWX_EVENT_DEVICE_LOST delivered */
	struct iwx_pd		*pds;
	struct mr_entry		*mrs;
	struct moved		*moved;		/* sorted by address */
	struct iwx_cq		*cqs;
	struct iwx_srq		*srqs;
	struct iwx_link		qps;
	struct iwx_ids		qp_nums;	/* each queue pair by its number: completions name it */
	struct iwx_listener	*listeners;
};

struct iwx_pd {
	struct iwx_device	*dev;
	uint32_t		id;
	struct iwx_pd		*next;
};

/* A registration: the public struct iwx_mr, and the device's list of them. */
struct mr_entry {
	struct iwx_mr		mr;	/* first: the application's pointer */
	struct moved		*held[IWX_IPC_MR_PIECES];	/* outside the arena */
	uint32_t		nheld;
	struct mr_entry		*next;
};

struct iwx_cq {
	struct iwx_device	*dev;
	uint32_t		id;
	uint32_t		bell;		/* its bit in the device's doorbells */
	struct iwx_ipc_cq_shared *sh;
	size_t			map_size;
	struct iwx_ring		ring;		/* we consume */
	bool			app_armed;	/* by iwx_req_notify_cq, not yet acked */
	bool			app_fired;	/* ... and its wake-up came */
	uint32_t		translated;	/* ring entries before this have the application's wr_id */
	bool			slow;		/* its last wait outlasted the spin: the next sleeps at once */
	struct iwx_cq		*next;
};

/*
 * The requests of one work queue that are outstanding: posted, and not yet retired by
 * a completion polled (one retires every request of its queue posted before it, as
 * completions come in posting order). A request goes to iwxd with its sequence number
 * for wr_id; its completion brings the number back, and with it the application's.
 */
struct work_queue {
	uint64_t		*wr_id;		/* the application's, by sequence number */
	uint32_t		depth;		/* a power of two: the most outstanding */
	uint32_t		posted, retired;	/* sequence numbers, wrapping */
};

struct iwx_qp {
	struct iwx_device	*dev;
	uint32_t		num;
	uint32_t		bell;		/* its bit in the device's doorbells */
	struct iwx_ipc_qp_shared *sh;
	size_t			map_size;
	struct iwx_ring		sq, rq;		/* we produce */
	struct work_queue	swq, rwq;
	struct iwx_cq		*send_cq, *recv_cq;
	struct iwx_srq		*srq;		/* its receives' (NULL: rq's) */
	struct iwx_link		link;		/* on the device's qps */
};

/*
 * A shared receive queue. Its receives complete in no order iwx_qp's work queues could
 * follow (each queue pair takes the next as its Sends begin): a receive goes to iwxd with
 * a slot number for wr_id, and its completion frees the slot.
 */
struct iwx_srq {
	struct iwx_device	*dev;
	uint32_t		id;
	uint32_t		limit;		/* as armed (iwx_query_srq) */
	uint32_t		users;		/* queue pairs on it */
	struct iwx_ipc_srq_shared *sh;
	size_t			map_size;
	struct iwx_ring		ring;		/* we produce */
	uint32_t		depth;
	uint64_t		*wr_id;		/* the application's, by slot */
	uint8_t			*held;		/* by slot: posted, its completion not yet polled */
	uint32_t		*free;		/* the slots not held: a stack */
	uint32_t		nfree;
	struct iwx_srq		*next;
};

/* A completion of a receive from srq: give it the application's wr_id back, and free its slot. */
IWX_HIDDEN void srq_retire(struct iwx_srq *srq, struct iwx_wc *wc);

/* iwx_close: free every SRQ of dev (iwxd lets go of them as the socket closes). */
IWX_HIDDEN void srq_free_all(struct iwx_device *dev);

/* The device's SRQ numbered id, or NULL. */
IWX_HIDDEN struct iwx_srq *srq_of(struct iwx_device *dev, uint32_t id);

struct iwx_listener {
	struct iwx_device	*dev;
	uint32_t		id;
	struct sockaddr_storage	addr;
	struct iwx_listener	*next;
};

/*
 * One request to iwxd and its reply: req (req_len bytes) goes out, the reply's body
 * (up to rep_cap bytes) comes back into rep, and up to *nfds descriptors into fds
 * (nfds may be NULL). Events arriving meanwhile are queued. Returns the daemon's
 * status (0 or -errno), or -ESHUTDOWN once iwxd has gone away.
 */
IWX_HIDDEN int client_call(struct iwx_device *dev, uint16_t op, const void *req, uint32_t req_len,
			   void *rep, uint32_t rep_cap, int *fds, unsigned *nfds);

/*
 * Where iwxd said why a request of this thread failed (a limit, whose, its option): kept
 * until the thread's next request, for iwx_strerror. The drop-ins set client_why_shown to
 * be told too (once a process is enough: iwxd's log and `iwx status` have the rest).
 */
IWX_HIDDEN extern void (*client_why_shown)(const char *why);

/* Take one message from the socket if one is there: events are queued. -ESHUTDOWN once lost. */
IWX_HIDDEN int client_pump(struct iwx_device *dev);

/*
 * iwx_lost for calls that do not read the socket (a poll of an empty CQ, a post): it
 * looks for the socket's hang-up at most every LOOK_MS, a clock read otherwise.
 */
IWX_HIDDEN bool client_lost(struct iwx_device *dev);

/*
 * A queue pair (qp_num) or SRQ (srq_id) destroyed: its asynchronous events, if any wait,
 * go (its number may come back). 0 names none.
 */
IWX_HIDDEN void client_forget_async(struct iwx_device *dev, uint32_t qp_num, uint32_t srq_id);

/*
 * Add what iwx_event_fd (async: iwx_async_fd) watches, the socket and ready_fd (async:
 * async_ready_fd), to the epoll epfd itself rather than that epoll: the kernel bounds the
 * wake-up paths through nested epolls (fs/eventpoll.c: 500 a source one level down), and
 * a program may make a channel for every queue pair. 0 or -errno.
 */
IWX_HIDDEN int client_watch(struct iwx_device *dev, int epfd, bool async);

/* Map a ring memfd iwxd handed over; the fd is closed either way. NULL with errno. */
IWX_HIDDEN void *client_map_rings(int fd, size_t size);

/* The device's queue pair numbered num, or NULL. */
IWX_HIDDEN struct iwx_qp *qp_of(struct iwx_device *dev, uint32_t num);

/* Ring bell (a queue pair's or CQ's: it has something for iwxd), and wake iwxd if it sleeps. */
IWX_HIDDEN void client_ring(struct iwx_device *dev, uint32_t bell);

#endif /* IWX_CLIENT_H */
