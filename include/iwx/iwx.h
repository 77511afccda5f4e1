/* SPDX-License-Identifier: MIT */
/*
 * libiwx: iWARP verbs for applications, served by the host's iwxd.
 *
 * The shape is that of libibverbs and librdmacm: open a device (a connection to the
 * iwxd of this host or network namespace), allocate protection domains, register
 * memory, create completion queues and queue pairs, connect or listen, post work
 * requests and poll completions. The work request and completion structs are those of
 * iwx/verbs.h.
 *
 * Posting and polling go through rings in memory shared with iwxd: no system call per
 * work request while the daemon is busy, one doorbell write when it sleeps. Everything
 * else is a request over the device's Unix socket.
 *
 * Errors: functions returning int give 0 (or a count) or -errno; those returning a
 * pointer give NULL and set errno. iwx_strerror() names iwx's own meanings. ENOSPC
 * from a call that makes something: the client holds as many as iwxd allows (its
 * limits: iwxd --help, iwx status), and iwx_strerror() says which.
 *
 * Threads: a device and everything made from it are used by one thread at a time
 * (serialise with a lock of your own if several threads share one).
 *
 * What a completion means, by opcode (RFC 5040 §5, RFC 5041 §5.4):
 *   IWX_WC_SEND        the whole message was handed to TCP: its buffers may be reused;
 *                      not that the peer has received it.
 *   IWX_WC_RDMA_WRITE  as a Send: the data left the gather list, nothing more is known.
 *   IWX_WC_RDMA_READ   the Read Response has arrived and is in the sink buffer in full.
 *   IWX_WC_RECV        a Send arrived and is in the receive buffer: byte_len bytes;
 *                      solicited when it was a Send with Solicited Event; with_inv and
 *                      invalidated_stag when it invalidated one of this side's STags.
 * Send-queue completions come in posting order: a Send posted behind a Read completes
 * after the Read. Unsignaled requests complete only with an error. When a queue pair
 * fails (a Terminate sent or received, the stream lost, a disconnect) every request
 * still outstanding completes with IWX_WC_WR_FLUSH_ERR, except the one that failed,
 * which carries the cause; the connection event says why the stream ended. The
 * queue pair's state is IWX_QPS_ERROR before the first such completion can be
 * polled. Flushed completions need no more room than the CQ has: those that do not
 * fit wait in iwxd and follow as the application polls. The IWX_EVENT_DISCONNECTED
 * event does not wait for them, nor for CQ room: it comes when the stream ends, after
 * the completions that fit (see "Closing a connection" below).
 */
#ifndef IWX_IWX_H
#define IWX_IWX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>	/* memset, for IWX_OPTS */
#include <sys/socket.h>

#include <iwx/access.h>	/* IWX_ACCESS_*: a registration's rights */
#include <iwx/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef IWX_DEFAULT_SOCKET	/* also in ipc/ipc.h, for the daemon */
#define IWX_DEFAULT_SOCKET	"/run/iwx/iwxd.sock"	/* overridden by $IWX_SOCKET */
#endif

struct iwx_device;
struct iwx_pd;
struct iwx_cq;
struct iwx_qp;
struct iwx_srq;
struct iwx_listener;

/*
 * Options structs (iwx_open_opts, iwx_listen_opts) grow at their end, as libbpf's do: sz,
 * the first member, is the size of the struct as the caller's iwx.h has it, which
 * IWX_OPTS sets. A field beyond the caller's sz takes its default; one beyond what the
 * library knows must be 0 (else EINVAL: the caller asked for what this libiwx cannot do).
 * A later release adds fields past the struct's earlier size, its tail padding included.
 *	IWX_OPTS(iwx_open_opts, o, .socket = path, .arena_size = 1 << 20);
 *	dev = iwx_open(&o);
 * A NULL opts is every default.
 */
#define IWX_OPTS(type, name, ...)						\
	struct type name = ({							\
		memset(&name, 0, sizeof(struct type));	/* padding too: read as 0 */	\
		(struct type){ .sz = sizeof(struct type), __VA_ARGS__ };		\
	})

/* ------------------------------------------------------------------ device */

struct iwx_open_opts {
	size_t		sz;		/* sizeof(struct iwx_open_opts): IWX_OPTS */
	const char	*socket;	/* NULL: $IWX_SOCKET, else IWX_DEFAULT_SOCKET */
	size_t		arena_size;	/* iwx_alloc's memory, mapped by the daemon too; 0: 64 MiB;
					   at most iwxd's --arena-max (1 GiB by default) */
};

/*
 * The socket iwx_open(opts) connects to: opts->socket, else $IWX_SOCKET, else the default
 * (which opts iwx_open refuses with EINVAL also get).
 */
const char *iwx_socket_path(const struct iwx_open_opts *opts);

/*
 * Connect to iwxd. NULL and errno: EINVAL opts not as IWX_OPTS makes them,
 * ENOENT/ECONNREFUSED no daemon, EACCES not allowed,
 * EMFILE iwxd serves as many clients as it may, EFBIG arena_size beyond what one client
 * may have, ENOSPC the arenas of all clients would take more than iwxd allows. Say
 * which socket was tried (iwx_socket_path(opts)) along with iwx_strerror(errno).
 */
struct iwx_device *iwx_open(const struct iwx_open_opts *opts);

/* Destroy everything made from the device and disconnect from iwxd. */
void iwx_close(struct iwx_device *dev);

/*
 * A message for err (negative or positive errno), with iwx's meaning where it has one.
 * Right after a call of this thread that iwxd refused (ENOSPC, EMFILE, ENOMEM, EACCES:
 * a limit), it also says why, in iwxd's words: the limit, the user or client held to it,
 * and the iwxd option that sets it ("... iwxd: user 1000 (client 7, pid 4242): at the
 * limit of ... (--memory-per-user 2147483648)"). The string is the thread's, until its
 * next call of iwx_strerror.
 */
const char *iwx_strerror(int err);

/*
 * Memory from the device's arena: shared with iwxd, where incoming RDMA data is placed
 * directly (and, with the fast path, by the kernel). Aligned to 64 bytes; NULL and
 * ENOMEM when the arena has no room for len (its size is fixed at iwx_open: choose it
 * with iwx_open_opts.arena_size). Memory registered anywhere else is moved into memory
 * shared with iwxd when it is registered (see iwx_reg_mr): as fast, once registered.
 */
void *iwx_alloc(struct iwx_device *dev, size_t len);
void iwx_free(struct iwx_device *dev, void *p);

/* The arena's size in bytes, as iwxd granted it. */
size_t iwx_device_arena_size(const struct iwx_device *dev);

/* What this client may hold of iwxd (its options, iwxd --help), and the queues' limits. */
struct iwx_device_limits {
	uint64_t	max_shared;	/* bytes of arena and registered memory together */
	uint32_t	max_pds, max_mrs, max_cqs, max_qps, max_srqs;
	uint32_t	max_qp_depth;	/* a send, receive or shared receive queue's depth */
	uint32_t	max_cq_entries;
	uint32_t	max_sge;	/* IWX_MAX_SGE */
	uint32_t	max_private_data;	/* bytes of MPA private data */
	uint32_t	max_rd_atomic;	/* RDMA Reads in flight, each way (ORD and IRD) */
};
void iwx_device_limits(const struct iwx_device *dev, struct iwx_device_limits *lim);

/*
 * Does iwxd offer RFC 7306 (atomics, Write with Immediate) to its peers? Each connection
 * then says whether its peer agreed (iwx_conn_info.rfc7306): only iwx peers do.
 */
bool iwx_device_rfc7306(const struct iwx_device *dev);

/* ------------------------------------------------------- protection, memory */

struct iwx_pd *iwx_alloc_pd(struct iwx_device *dev);
int iwx_dealloc_pd(struct iwx_pd *pd);		/* -EBUSY while regions or QPs use it */

/* A registered region. lkey and rkey are the same iWARP STag. */
struct iwx_mr {
	struct iwx_pd	*pd;
	void		*addr;
	size_t		length;
	uint32_t	lkey, rkey;
	int		access;		/* IWX_ACCESS_* */
};

/*
 * Register [addr, addr + length) with access (IWX_ACCESS_LOCAL_WRITE, _REMOTE_WRITE,
 * _REMOTE_READ). Tagged offsets are virtual addresses: a peer names byte p of the
 * region as rkey + (uint64_t)p, and so does an sge. Remote write access requires
 * local write (RFC 5040 §7.1 leaves that to the verbs; ibverbs requires it too).
 *
 * iwxd never reads or writes the application's address space itself. Memory outside
 * the arena is moved, in place, into memory iwxd shares with the application: its whole
 * pages (so the bytes of other objects on those pages too) are copied into it, and it is
 * mapped over the same addresses. Pointers and contents stay as they were. What that
 * changes, until the last registration of those pages is deregistered (the pages then
 * move back into private memory, contents kept):
 *   - after fork(), those pages are shared with the child, not copied (rdma-core's
 *     ibv_fork_init exists for the same reason): a child should not use them;
 *   - other threads must not write the pages while they move (during iwx_reg_mr and
 *     iwx_dereg_mr); madvise() and mlock() settings of those pages are not kept.
 * Errors (NULL and errno): EINVAL for memory that cannot move (a shared mapping, file-
 * backed or anonymous; hugetlb pages; device memory) or that spans the pages of more
 * than 16 earlier registrations; EBUSY for pages another device's registration or arena
 * holds; EFAULT for pages not mapped, or not readable; ENOSPC over the daemon's limit.
 */
struct iwx_mr *iwx_reg_mr(struct iwx_pd *pd, void *addr, size_t length, int access);
int iwx_dereg_mr(struct iwx_mr *mr);

/*
 * Invalidate the region's STag here (RFC 5040 §2.1, local invalidation): from now on a
 * peer's use of it terminates the stream, as after a Send with Invalidate naming it.
 */
int iwx_invalidate_mr(struct iwx_mr *mr);

/* Make an invalidated STag valid again under a new key: lkey and rkey change (-EBUSY: valid). */
int iwx_revalidate_mr(struct iwx_mr *mr);

/* ------------------------------------------------------- completion queues */

/* A completion queue of at least entries (rounded up to a power of two). */
struct iwx_cq *iwx_create_cq(struct iwx_device *dev, int entries);
int iwx_destroy_cq(struct iwx_cq *cq);		/* -EBUSY while a queue pair uses it */

/*
 * Take up to n completions, oldest first. Returns how many; once those left are taken,
 * -ESHUTDOWN when iwxd has gone away (looked for at most every 100 ms while the CQ is
 * empty, so that a program polling in a loop learns it). No system call but that look.
 */
int iwx_poll_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc);

/*
 * Ask for a wake-up on the next completion: the device's event fd (iwx_comp_fd)
 * becomes readable. As with ibv_req_notify_cq, poll once more after arming.
 */
int iwx_req_notify_cq(struct iwx_cq *cq);

/*
 * The completion event fd of the device (every CQ's wake-up): readable from the
 * completion that follows an iwx_req_notify_cq until iwx_ack_comp, which takes every
 * wake-up; then poll the CQs armed and arm them again. libiwx's own waits
 * (iwx_wait_cq) neither take its readiness away nor add to it.
 */
int iwx_comp_fd(struct iwx_device *dev);
void iwx_ack_comp(struct iwx_device *dev);

/*
 * iwx_ack_comp, saying which CQs woke: up to n of those whose arming fired go into
 * cqs, each once (more stay for the next call, and keep the fd readable). Returns how
 * many.
 */
int iwx_ack_comp_cqs(struct iwx_device *dev, struct iwx_cq **cqs, int n);

/*
 * Wait up to timeout_ms (-1: for ever) until cq has a completion: poll, yielding the
 * CPU, for up to $IWX_SPIN_US microseconds (default 100; 0: not at all; not while cq's
 * waits outlast it), then arm, poll, sleep. Returns the number taken into wc (>= 1), 0
 * on time-out, or -ESHUTDOWN when iwxd has gone away (every queue pair is then lost).
 */
int iwx_wait_cq(struct iwx_cq *cq, int n, struct iwx_wc *wc, int timeout_ms);

/* -------------------------------------------------------------- queue pairs */

/*
 * A queue's depth is the number of its requests that may be outstanding: posted, and
 * not yet retired by a completion taken with iwx_poll_cq (or iwx_wait_cq). As in
 * verbs, a completion retires its request and every request of the same queue posted
 * before it, so unsignaled sends count until a later completion of the send queue:
 * signal at least one send in every sq_depth.
 */
struct iwx_qp_init_attr {
	struct iwx_cq	*send_cq, *recv_cq;
	uint32_t	sq_depth, rq_depth;	/* 0: 256 each; rounded up to a power of two */
	struct iwx_srq	*srq;		/* receives from this SRQ (of the same PD), rq_depth unused */
};

struct iwx_qp *iwx_create_qp(struct iwx_pd *pd, const struct iwx_qp_init_attr *attr);

/* Destroy a queue pair; a connected one's stream is closed at once (see below). */
int iwx_destroy_qp(struct iwx_qp *qp);

uint32_t iwx_qp_num(const struct iwx_qp *qp);

enum iwx_qp_state {
	IWX_QPS_INIT,		/* created, not connected: receives may be posted */
	IWX_QPS_CONNECTING,
	IWX_QPS_RTS,		/* connected: everything may be posted */
	IWX_QPS_ERROR,		/* the stream ended; everything posted is flushed */
};
enum iwx_qp_state iwx_qp_state(const struct iwx_qp *qp);

struct iwx_qp_attr {
	uint32_t		qp_num;
	enum iwx_qp_state	state;
	uint32_t		sq_depth, rq_depth;	/* as granted: the most outstanding */
};

/* What a queue pair is: 0 with *attr. */
int iwx_query_qp(const struct iwx_qp *qp, struct iwx_qp_attr *attr);

/*
 * Post one work request. 0, or -ENOBUFS when the queue is full (as many requests are
 * outstanding as its depth, see iwx_qp_init_attr: poll completions first), -EINVAL
 * malformed (too many sges, a Read without exactly one sink sge, an atomic without one
 * 8-byte sge or with a target not 8-byte aligned), -ENOTCONN a send before the queue
 * pair is connected, -EOPNOTSUPP an RFC 7306 operation on a connection whose peer did not
 * agree to it (iwx_conn_info.rfc7306), -ESHUTDOWN once iwxd has gone away (as
 * iwx_poll_cq finds it). A malformed sge (outside
 * its region, no access) is found by the daemon and completes with
 * IWX_WC_LOC_PROT_ERR, terminating the stream as RFC 5040 §7.1 requires.
 */
int iwx_post_send(struct iwx_qp *qp, const struct iwx_send_wr *wr);
int iwx_post_recv(struct iwx_qp *qp, const struct iwx_recv_wr *wr);	/* -EINVAL: on an SRQ */

/* ---------------------------------------------------- shared receive queues */

/*
 * A shared receive queue: receives posted to it serve every queue pair created on it,
 * each taking the next one as a Send begins for which it holds none (so a queue pair
 * holds only the receives of the Sends it is receiving). Their completions go to the
 * queue pair's receive CQ, naming it; a queue pair whose stream ends flushes those it
 * holds, and the rest stay for the others. A Send that finds the SRQ empty terminates
 * its stream, as one that finds a queue pair's own receive queue empty (RFC 5040 §4.8).
 *
 * depth: the receives that may be outstanding (posted, not retired by their completion
 * polled); 0: 256; rounded up to a power of two, at most max_qp_depth. limit: as
 * iwx_arm_srq's.
 */
struct iwx_srq_init_attr {
	uint32_t	depth;
	uint32_t	limit;
};

struct iwx_srq *iwx_create_srq(struct iwx_pd *pd, const struct iwx_srq_init_attr *attr);
int iwx_destroy_srq(struct iwx_srq *srq);	/* -EBUSY while a queue pair is on it */

/* As iwx_post_recv: 0, -ENOBUFS (depth outstanding), -EINVAL, -ESHUTDOWN. */
int iwx_post_srq_recv(struct iwx_srq *srq, const struct iwx_recv_wr *wr);

/*
 * Arm the limit event: IWX_ASYNC_SRQ_LIMIT once a queue pair's take leaves fewer than
 * limit receives posted, then disarmed (0 disarms now). -EINVAL above the depth.
 */
int iwx_arm_srq(struct iwx_srq *srq, uint32_t limit);

struct iwx_srq_attr {
	uint32_t	depth;		/* as granted */
	uint32_t	limit;		/* as last armed here (0: none, or fired since) */
};
int iwx_query_srq(const struct iwx_srq *srq, struct iwx_srq_attr *attr);

/* --------------------------------------------------------- connections (CM) */

#define IWX_MAX_RD_ATOMIC	255	/* iwx_conn_param's ird and ord at most */

#define IWX_MAX_PRIVATE_DATA	512	/* bytes of MPA private data (RFC 5044 §7.1) */

struct iwx_conn_param {
	const void	*private_data;		/* MPA private data, up to 512 bytes */
	uint16_t	private_data_len;
	uint8_t		ird, ord;		/* inbound/outbound RDMA Reads in flight; 0: 16 */
	uint8_t		mpa_rev;		/* 0: 2 (RFC 6581); 1 for peers that need it */
	int8_t		crc;			/* 0: the daemon's default (on); 1 on; -1 off */
	bool		markers;		/* ask for MPA markers on what we receive */
	bool		p2p;			/* connect: RFC 6581 peer-to-peer with an RTR */
	int16_t		settle_ms;		/* connect: see below; 0: iwxd --settle-ms */
	uint8_t		transport;		/* connect: IWX_TRANSPORT_*; 0: TCP */
};

/*
 * Settling (connect only): for a Responder that misses an FPDU sent before it is ready
 * (Linux's siw, which attaches its queue pair only after its MPA Reply is out), iwxd
 * holds what this side sends for settle_ms after ESTABLISHED, as rdma_cm's round trip
 * does for siw's own clients. It delays only this side's first messages, and only
 * until the Responder's first FPDU arrives, which ends the hold; what the Responder
 * sends is received at once. IWX_SETTLE_NONE: no hold (any iwx peer); 1 to
 * IWX_SETTLE_MAX: that many ms; 0: iwxd's --settle-ms (200 ms unless set).
 */
#define IWX_SETTLE_NONE		(-1)
#define IWX_SETTLE_MAX		10000

/* Connect qp (in INIT) to addr; the outcome arrives as an event. */
int iwx_connect(struct iwx_qp *qp, const struct sockaddr *addr, socklen_t len,
		const struct iwx_conn_param *param);

/*
 * Listen on addr (port 0: any; iwx_listener_addr says which). Connection requests
 * arrive as IWX_EVENT_CONNECT_REQUEST events, answered with iwx_accept or iwx_reject
 * within half the daemon's set-up time-out (iwxd --timeout-ms, 10 s by default),
 * after which iwxd rejects them itself.
 */
struct iwx_listener *iwx_listen(struct iwx_device *dev, const struct sockaddr *addr,
				socklen_t len, int backlog);

/*
 * The same on a transport of choice (opts: IWX_OPTS; NULL, TCP with iwxd's backlog;
 * EINVAL when not valid). Over SCTP the port is SCTP's, inside the UDP datagrams that
 * reach iwxd's --sctp-port on any of its addresses. A connection request's transport
 * is its listener's.
 */
struct iwx_listen_opts {
	size_t		sz;			/* sizeof(struct iwx_listen_opts): IWX_OPTS */
	int		backlog;		/* 0: iwxd's default */
	uint8_t		transport;		/* IWX_TRANSPORT_* */
};
struct iwx_listener *iwx_listen_with(struct iwx_device *dev, const struct sockaddr *addr,
				     socklen_t len, const struct iwx_listen_opts *opts);
int iwx_listener_addr(const struct iwx_listener *l, struct sockaddr_storage *addr);
int iwx_listener_destroy(struct iwx_listener *l);

/* Answer a connection request: accept onto qp (in INIT), or reject with private data. */
int iwx_accept(struct iwx_qp *qp, uint32_t conn_id, const struct iwx_conn_param *param);
int iwx_reject(struct iwx_device *dev, uint32_t conn_id, const void *private_data,
	       uint16_t private_data_len);

/*
 * Graceful close: every request posted before the call is sent, then the stream is
 * closed (TCP FIN) and IWX_EVENT_DISCONNECTED follows once the peer closes too (or
 * after 10 s, abortively). Requests posted after the call, and RDMA Reads whose
 * Response has not arrived by then, complete flushed. -ENOTCONN once the stream has
 * ended (or before it was established).
 *
 * Closing a connection
 *
 * One side, the active closer, calls iwx_disconnect. The other, passive, side calls
 * nothing: it receives IWX_EVENT_DISCONNECTED (term.terminated 0, term.local 0), and
 * iwx_disconnect there answers -ENOTCONN, which is harmless: calling it after the
 * event is the intended idiom for code that does not know which side it is
 * (examples/iwx_rping.c: the client disconnects, the server waits for the event).
 * On each side, in this order:
 *   1. requests posted before the close complete as usual (the closer's are sent first);
 *   2. the queue pair goes to IWX_QPS_ERROR, and everything still outstanding (posted
 *      receives, Reads unanswered, requests posted after the close) completes with
 *      IWX_WC_WR_FLUSH_ERR, in posting order, as far as the CQ has room;
 *   3. IWX_EVENT_DISCONNECTED: term.terminated 0 and layer, etype, ecode 0; term.local
 *      1 on the closer (also when the peer did not close within 10 s and iwxd gave up),
 *      0 on the passive side (also when the stream was lost or reset);
 *   4. the flushed completions the CQ had no room for, as the application polls; and
 *      whatever is posted from then on completes flushed.
 * An error ends the stream with a Terminate instead (RFC 5040 §7): the request that
 * failed completes with its cause (IWX_WC_REM_ACCESS_ERR for a Read, or a Write still
 * being sent, that the peer refused: a bad STag, key, bounds or access; a Write handed
 * to TCP whole has completed already; IWX_WC_LOC_PROT_ERR for a Read whose sink was
 * deregistered before its Response came), the rest flushed, and the event on both sides
 * has term.terminated 1 and the Terminate's layer, etype and ecode (term.local 1 on
 * the side that sent it; for a local catastrophic error, an error of the sender's own,
 * term.reason says whose it was). iwxd keeps a socket that sent a Terminate open until the
 * peer has closed too (2 s at most), so that the peer reads the Terminate even while
 * it is still sending. iwx_destroy_qp of a connected queue pair (or a client that goes)
 * closes its stream at once, as the kernel's iWARP does: what TCP already holds (every
 * request completed) still reaches the peer, then the FIN, and no reset overtakes it;
 * requests not yet sent are dropped. The peer sees a close (terminated 0, local 0).
 *
 * A connection that cannot be set up returns the queue pair to IWX_QPS_INIT with
 * IWX_EVENT_UNREACHABLE: status -ECONNREFUSED at once when nobody listens;
 * -EHOSTUNREACH when no host answers at the address on the link (after about 3 s,
 * when the kernel's neighbour discovery gives up); -ETIMEDOUT when the TCP connect or
 * the MPA exchange takes longer than the daemon's set-up time-out (iwxd --timeout-ms,
 * 10 s by default, so earlier than -EHOSTUNREACH if set below 3 s); -EPROTO for an MPA
 * exchange that fails. The event's term.reason says where: an address that takes the
 * TCP connection but answers no MPA (a web server, a silent listener) is "connected, but
 * the peer's reply is not a valid MPA Reply: not an iWARP peer?", or "... no MPA Reply
 * came within the set-up time ...". With no route to the address at all, iwx_connect
 * itself returns -ENETUNREACH and no event follows.
 */
int iwx_disconnect(struct iwx_qp *qp);

enum iwx_event_type {
	IWX_EVENT_CONNECT_REQUEST,	/* on a listener: conn_id, peer, private data, info */
	IWX_EVENT_ESTABLISHED,		/* qp is in RTS; info holds what was agreed, private data the
					   peer's (the MPA Reply's, at the initiator) */
	IWX_EVENT_REJECTED,		/* the peer rejected; its private data */
	IWX_EVENT_UNREACHABLE,		/* connect failed: status, see "Closing a connection" */
	IWX_EVENT_DISCONNECTED,		/* the stream ended; term says why */
	IWX_EVENT_DEVICE_LOST,		/* iwxd went away: every queue pair is lost */
};

/* What the MPA exchange settled. */
struct iwx_conn_info {
	uint8_t			mpa_rev;
	bool			crc, markers_rx, markers_tx;
	uint16_t		ird, ord;
	uint32_t		emss;		/* effective MSS: one FPDU per TCP segment (SCTP: chunk) */
	uint8_t			transport;	/* IWX_TRANSPORT_*: what carries it */
	bool			rfc7306;	/* ESTABLISHED: atomics and immediate data agreed */
	struct sockaddr_storage	local, peer;
};

/* Why a stream ended (RFC 5040 §7: layer, error type, error code of the Terminate). */
struct iwx_term_info {
	bool		terminated;	/* a Terminate was sent or received (else a close or loss) */
	bool		local;		/* this side detected the error or closed */
	uint8_t		layer, etype, ecode;
	const char	*reason;	/* readable, static: the error code's name, or how it closed */
};

/*
 * The whole cause, e.g. "DDP tagged buffer error: invalid STag" (layer, error type,
 * error code), or how the stream closed; into buf (IWX_TERM_STR_LEN is enough).
 * Returns buf.
 */
#define IWX_TERM_STR_LEN	128
char *iwx_term_str(const struct iwx_term_info *t, char *buf, size_t len);

struct iwx_event {
	enum iwx_event_type	type;
	struct iwx_qp		*qp;		/* ESTABLISHED, REJECTED, UNREACHABLE, DISCONNECTED */
	struct iwx_listener	*listener;	/* CONNECT_REQUEST */
	uint32_t		conn_id;	/* CONNECT_REQUEST: to accept or reject */
	int			status;		/* UNREACHABLE: -errno */
	struct iwx_conn_info	info;		/* CONNECT_REQUEST (what the peer asked), ESTABLISHED */
	struct iwx_term_info	term;		/* DISCONNECTED; UNREACHABLE: reason says where the
						   set-up failed (and layer, etype, ecode the MPA
						   error behind -EPROTO) */
	uint16_t		private_data_len;
	uint8_t			private_data[IWX_MAX_PRIVATE_DATA];
};

/*
 * The next connection event: waits up to timeout_ms (0: do not wait, -1: for ever).
 * 0 with *ev, -EAGAIN when none came in time, -ESHUTDOWN when iwxd went away (an
 * IWX_EVENT_DEVICE_LOST is delivered once first).
 */
int iwx_get_event(struct iwx_device *dev, struct iwx_event *ev, int timeout_ms);

/*
 * For poll()/epoll: readable (level-triggered) while iwx_get_event(dev, &ev, 0) has an
 * event to give, including events other calls read off the socket to iwxd while they
 * waited for their answer; readable for good once iwxd went away (-ESHUTDOWN).
 */
int iwx_event_fd(struct iwx_device *dev);

/*
 * Asynchronous events: what befalls the device or a queue pair outside any call, as
 * verbs' ibv_get_async_event reports it. IWX_ASYNC_DEVICE_FATAL: iwxd went away, every
 * queue pair is lost (iwx_poll_cq and the posts fail with -ESHUTDOWN); given once.
 * IWX_ASYNC_QP_FATAL: qp's stream ended with a Terminate, sent or received (term says
 * which, and why); its requests complete flushed. IWX_ASYNC_QP_LAST_WQE: qp, on an SRQ,
 * takes no more receives from it (its stream ended; follows QP_FATAL if there is one).
 * IWX_ASYNC_SRQ_LIMIT: srq's armed limit was reached (iwx_arm_srq). A queue pair or SRQ
 * destroyed before its event is taken has none.
 */
enum iwx_async_type {
	IWX_ASYNC_DEVICE_FATAL = 1,
	IWX_ASYNC_QP_FATAL,
	IWX_ASYNC_QP_LAST_WQE,
	IWX_ASYNC_SRQ_LIMIT,
};

struct iwx_async_event {
	enum iwx_async_type	type;
	struct iwx_qp		*qp;	/* QP_FATAL, QP_LAST_WQE */
	struct iwx_srq		*srq;	/* SRQ_LIMIT */
	struct iwx_term_info	term;	/* QP_FATAL */
};

/*
 * The next asynchronous event: waits up to timeout_ms (0: do not wait, -1: for ever).
 * 0 with *ev, -EAGAIN when none came in time, -EINTR when a signal came first.
 */
int iwx_get_async_event(struct iwx_device *dev, struct iwx_async_event *ev, int timeout_ms);

/*
 * For poll()/epoll, from any thread: readable while iwx_get_async_event(dev, &ev, 0) has
 * an event to give, or may have (a message from iwxd not yet read, which can be one).
 */
int iwx_async_fd(struct iwx_device *dev);

/* Has iwxd gone away? (A look at the socket: for slow paths, not for each poll.) */
bool iwx_lost(struct iwx_device *dev);

/* Names, for messages: "established", "remote access error", "RDMA Write". */
const char *iwx_event_name(enum iwx_event_type t);
const char *iwx_wc_status_name(enum iwx_wc_status s);
const char *iwx_wc_opcode_name(enum iwx_wc_opcode op);

#ifdef __cplusplus
}
#endif

#endif /* IWX_IWX_H */
