/* SPDX-License-Identifier: MIT */
/*
 * iwxd's objects: the clients (one per libiwx device), what they made (completion
 * queues, queue pairs, listeners) and the connections being set up, and the one
 * epoll loop that drives them all. Single-threaded (but for the closer, which shares
 * nothing but a pipe): nothing here takes a lock.
 *
 *   iwxd.c     options and main()
 *   serve.c    set-up and teardown, signals, the daemon's turn (and when it may sleep) (serve.h)
 *   loop.c     the event loop: epoll watches, timers by deadline, identifiers
 *   log.c      iwxd's log: a line per event on stderr, by level (log.h)
 *   closer.c   closing what clients may make linger, on a thread of its own (closer.h)
 *   session.c  a client: authentication, requests, resources, teardown
 *   outbox.c   what iwxd says to a client, in order (outbox.h)
 *   doorbell.c which of a client's queues rang: what the loop services
 *   shm.c      memory a client shares for registrations outside the arena (shm.h)
 *   regions.c  a region invalidated or gone: nothing more lands in it, by iwxd or BPF
 *   limits.c   what a client, a user's clients, and all together may hold; the refusal beyond it
 *   shared.c   memory shared with clients, charged until the kernel has freed it (shared.h)
 *   vqp.c      a queue pair's rings <-> the engine (qp.c) <-> completion rings
 *   vcq.c      a completion queue: its ring, shared with the client, and its wake-ups
 *   cm.c       connection management: connect, listen, accept, reject, disconnect
 *   conn_sock.c a set-up's or queue pair's socket in the loop, whatever its transport (conn_sock.h)
 *   transport*.c what iwxd does with each transport, a row each: TCP's, SCTP's (transport.h)
 *   linger.c   sockets that sent a Terminate, read until the peer's FIN before the close
 *   admin.c    status and listings for `iwx`
 *   fastpath.c the BPF programs that place as packets arrive, and their maps (fastpath.h)
 *   fastpath_xdp.c ... attached at XDP, through libxdp (fastpath_xdp.h)
 *   iface_props.c what an interface it attaches to is: a veth, steered (iface_props.h)
 *   sctp_io.c  SCTP for DDP over SCTP: the stack, its UDP socket, clock, readiness (sctp_io.h)
 */
#ifndef IWX_DAEMON_H
#define IWX_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>

#include "ipc/ipc.h"
#include "util/ids.h"
#include "util/list.h"

#include "arena.h"
#include "closer.h"
#include "conn.h"
#include "conn_sock.h"
#include "log.h"
#include "loop.h"
#include "llp_tcp.h"
#include "mem.h"
#include "qp.h"
#include "shares.h"

struct fastpath;
struct fp_follow;
struct outmsg;
struct shm;
struct shm_mr;
struct retired;
struct departed;
struct arenas_live;
struct sctp_io;
struct socket;

/*
 * What one client, one user's clients, and all of them together may hold: iwxd's options
 * (limits.c). A request beyond a limit fails with -ENOSPC (a client beyond max-clients or
 * max-clients-per-user: -EMFILE). A user's clients together hold at most USER_SHARE
 * (limits.c) clients' worth of each limit per client (limit_of_user), root's aside.
 */
enum iwxd_limit {
	/* per client, counted in client.used[] */
	LIMIT_PDS,
	LIMIT_MRS,
	LIMIT_CQS,
	LIMIT_QPS,
	LIMIT_SRQS,
	LIMIT_LISTENERS,
	LIMIT_REQUESTS,		/* CONNECT_REQUESTs announced to it, not answered yet */
	LIMIT_MAPS,		/* mappings of its memory here: arena, doorbells, rings, shm.c's */
	LIMIT_COUNTED,
	/* per client, counted where they are */
	LIMIT_QUEUED = LIMIT_COUNTED,	/* messages waiting for it to read: client.out_n */
	LIMIT_ARENA,		/* bytes it shares: its arena (-EFBIG beyond), shm.c's memory */
	/* per user */
	LIMIT_CLIENTS_USER,	/* clients connected: user.clients */
	LIMIT_MEMORY_USER,	/* bytes shared, and kept after iwxd let go (shared.c): user.bytes */
	LIMIT_LINGER_USER,	/* sockets lingering after a Terminate (linger.c): user.lingering */
	LIMIT_SCTP_USER,	/* SCTP connects in progress, each holding a path: user.sctp_setups */
	/* of all clients together */
	LIMIT_ARENA_TOTAL,	/* bytes all share (shared.c), and kept: iwxd.arena_bytes */
	LIMIT_CLIENTS,		/* clients connected: iwxd.nclients */
	LIMIT_MAPS_TOTAL,	/* mappings of every client's memory: iwxd.maps (vm.max_map_count) */
	LIMIT_USERS,		/* users guaranteed a part of each total (shares.c) */
	LIMIT_N
};

#define USER_SHARE	4	/* a user's clients together hold this many clients' worth */

struct limit_info {
	const char	*flag;		/* iwxd's option, without its "--" */
	const char	*what;		/* what it counts, for --help and the log */
	uint64_t	dflt;
	bool		bytes;		/* a size (256M), not a count */
	const char	*derived;	/* dflt 0: the default, from other limits (limits_derive) */
};

extern const struct limit_info limits[LIMIT_N];

/* The clients of one uid, together (limits.c): while it has any, or memory, or lingering sockets. */
struct user {
	uid_t			uid;
	uint32_t		clients;	/* let in */
	bool			clients_warned;	/* said it reached max-clients-per-user, until one goes */
	uint32_t		used[LIMIT_COUNTED];	/* its clients', summed */
	uint32_t		queued;		/* messages its clients have not read */
	uint64_t		bytes;		/* memory shared with its clients, or kept (shared.c) */
	uint64_t		departed_bytes;	/* ... of which iwxd let go, but something holds */
	struct departed		*departed;	/* ... each such memory */
	uint32_t		ndeparted;
	uint64_t		looked_ms;	/* ... when last looked at */
	uint32_t		lingering;	/* sockets of its connections lingering (linger.c) */
	uint32_t		sctp_setups;	/* its SCTP connects in progress (cm.c) */
	uint32_t		fp[SHARE_N - SHARE_FP_FIRST];	/* the fast path's table entries (shares.h) */
	uint32_t		share_warned;	/* fair shares (1 << SHARE_*) it was told of, until below */
	bool			linger_warned;	/* ... said it reached max-lingering, until below */
	struct user		*next;
};

struct client {
	struct watch		sock_w;		/* the control socket (SOCK_SEQPACKET) */
	struct watch		bell_w;		/* doorbell eventfd: the client rang while iwxd slept */
	struct iwx_ipc_bells	*bells;		/* doorbell.c: which of its queues rang */
	struct iwx_arena	bells_mem;	/* ... the memory it is in */
	struct bell		*bell;		/* ... what each bit stands for */
	uint32_t		bell_n, bell_cap, bell_free;
	struct iwx_link		bell_link;	/* on iwxd's bell_active: its bells are looked at */
	uint64_t		bell_quiet_ms;	/* ... until then, unless they ring before */
	uint32_t		bell_empty;	/* ... turns in a row its bells named no new work */
	uint64_t		bell_muted_ms;	/* ... not looked at until then (doorbell.c) */
	uint32_t		bell_mute_ms;	/* ... for so long, doubled each time */
	struct iwx_link		room_wait;	/* its queue pairs waiting for room in a CQ */
	struct iwx_link		ready;		/* its queue pairs to service, a share each turn (vqp.c) */
	struct iwx_link		ready_link;	/* on iwxd's ready: while its ready list is not empty */
	struct iwx_link		qps;		/* its queue pairs */
	int			notify_fd;	/* eventfd: an armed CQ got a completion */
	uint64_t		ident;		/* owns its PDs and regions (mem.c): never reused */
	uint32_t		id;		/* in logs and listings: ident's low bits */
	pid_t			pid;
	uid_t			uid;
	struct user		*user;		/* of uid; NULL while it is not let in */
	bool			hello;		/* HELLO done: the arena exists */
	bool			hello_tried;	/* HELLO asked for, done or failed: never again */
	bool			dead;		/* to be closed by the loop */
	int			refused;	/* -EACCES, -EMFILE (no room): its request's answer */
	struct outmsg		*out, **out_tail;	/* messages the socket had no room for */
	uint32_t		out_n;
	uint32_t		used[LIMIT_COUNTED];	/* what it holds, by LIMIT_* */
	uint32_t		warned;		/* limits (1 << LIMIT_*) it was told of */
	char			why[IWX_IPC_WHY_MAX];	/* why its request is refused (limits.c), or "" */
	uint32_t		warned_user;	/* ... its user's */
	bool			warned_memlock;	/* ... its RLIMIT_MEMLOCK */
	uint64_t		memlock;	/* --memlock: its RLIMIT_MEMLOCK at connect (RLIM_INFINITY: none) */
	struct iwx_arena	arena;
	struct shm		*shms;		/* memory shared for registrations outside the arena */
	uint32_t		shm_ids;	/* ... the last id given */
	size_t			shm_bytes;
	struct shm_mr		*shm_mrs;	/* registrations in it */
	struct retired		*retired;	/* mapped until no queue pair refers to it */
	uint64_t		reclaim_ms;	/* ... looked at again then (0: at once) */
	struct client		*next;
};

struct vcq {
	uint32_t		id;
	uint32_t		bell;		/* its bit in the owner's doorbells */
	struct client		*owner;
	struct iwxd		*d;		/* for vcq_push's counter */
	struct iwx_ipc_cq_shared *sh;	/* mem's */
	struct iwx_arena	mem;
	size_t			map_size;
	struct iwx_ring		ring;		/* daemon produces */
	uint32_t		users;		/* queue pairs using it */
	bool			room_asked;	/* need_room set since its bell was last taken */
	struct vcq		*next;
};

/* A client's shared receive queue (vsrq.c): a ring of receives its queue pairs take from. */
struct vsrq {
	uint32_t		id;
	struct iwxd		*d;		/* for vsrq_take's event */
	struct client		*owner;
	uint32_t		pd;
	struct iwx_ipc_srq_shared *sh;	/* mem's */
	struct iwx_arena	mem;
	size_t			map_size;
	struct iwx_ring		ring;		/* daemon consumes */
	uint32_t		limit;		/* armed: the event once fewer are posted (0: not) */
	uint32_t		users;		/* queue pairs on it */
	uint8_t			warned;		/* what the client broke, said once each (vsrq.c) */
	struct vsrq		*next;
};

/* What an id names (util/ids.h's kind). */
enum iwxd_kind {
	KIND_CQ = 1,
	KIND_QP,
	KIND_LISTENER,
	KIND_PCONN,
	KIND_SRQ,
};

struct bell;
struct pconn;
struct lingering;

struct vqp {
	uint32_t		num;
	uint32_t		bell;		/* its bit in the owner's doorbells */
	struct iwx_link		ready_link;	/* on its owner's ready list: serviced at a next turn */
	struct iwx_link		wait_link;	/* on the owner's room_wait */
	struct timer		timer;		/* at its earliest deadline: settle, close, lazy tick */
	struct client		*owner;
	uint32_t		pd;
	struct vcq		*scq, *rcq;
	struct vsrq		*srq;		/* its receives' (NULL: its own ring's) */
	struct iwx_ipc_qp_shared *sh;	/* mem's */
	struct iwx_arena	mem;
	size_t			map_size;
	struct iwx_ring		sq, rq;		/* daemon consumes */
	enum iwx_shq_state	state;
	struct pconn		*setup;		/* while CONNECTING */
	struct engine_qp	*eng;		/* the engine, once the stream is in full operation */
	struct iwx_llp		*llp;		/* ... its lower layer, MPA on TCP (the engine's) */
	struct fp_follow	*fp;		/* followed by the fast path: its state (fastpath.c's) */
	uint32_t		bell_sq, bell_rq;	/* the rings' producers at its last bell */
	bool			posted;		/* ready because the client posted (doorbell.c) */
	struct conn_sock	sock;		/* the stream once established (the engine's) */
	bool			blocked;	/* waits for the socket or for room in a CQ */
	bool			backlog;	/* the engine holds completions the CQs had no room for */
	uint8_t			wants_room;	/* ... it asked the client for room this turn (vqp.c) */
	struct vqp_parked {			/* completions waiting for room in their CQ (vqp.c): */
		struct iwx_wc	*wc;
		uint32_t	n, cap;		/* ... at most a queue's depth */
	}			parked[2];	/* ... sends' [0], receives' [1] */
	bool			ended;		/* DISCONNECTED said: the engine stays for its completions */
	uint8_t			end_how;	/* IWX_CONN_END_*, for iwx conns */
	struct iwx_term_cause	end_cause;	/* ... a Terminate's */
	int			settle_ms;	/* as Initiator: hold the first FPDU this long */
	uint64_t		settle_end_ms;	/* ... until then (0: not held) */
	bool			closing;	/* a graceful close was asked for */
	bool			fin_sent;
	uint32_t		close_mark;	/* ... when the send ring's producer stood here */
	uint64_t		close_ms;	/* abort if the stream has not ended by then */
	bool			corrupt;	/* the client broke its rings: left alone */
	struct iwx_ipc_event	est;		/* what was agreed: the ESTABLISHED event */
	struct iwx_mpa_agreed	agreed;
	struct iwx_qp_stats	gone;		/* counters of the engine, once it is gone */
	struct iwx_link		link;		/* on iwxd's qps */
	struct iwx_link		client_link;	/* on its owner's qps */
};

struct listener {
	struct watch		w;
	void			*h;		/* a handle of its transport's stack (w runs when it changes), else NULL */
	const struct transport	*t;
	uint32_t		id;
	struct client		*owner;
	struct sockaddr_storage	addr;
	struct listener		*next;
};

/* A stream being set up: active (qp set from the start) or passive (from a listener). */
struct pconn {
	struct conn_sock	sock;		/* the set-up's socket, as watched */
	uint32_t		id;
	struct iwx_conn		*conn;		/* the set-up, first in sock.t's struct of conn_size */
	struct iwx_sctp_path	*path;		/* over SCTP, active: the path it holds */
	struct client		*owner;
	struct listener		*listener;	/* passive */
	struct vqp		*qp;		/* active, or passive once accepted */
	bool			announced;	/* passive: CONNECT_REQUEST sent, answer awaited */
	uint64_t		answer_ms;	/* passive: reject unless answered by then */
	struct timer		timer;		/* at answer_ms, or at the set-up's deadline */
	struct iwx_conn_opts	opts;
	uint8_t			pd[IWX_IPC_PRIVDATA];
	struct pconn		*next;
};

struct iwxd_opts {
	const char	*socket;
	gid_t		gid;		/* members may connect; (gid_t)-1: root only */
	uid_t		owner;		/* iwxd's own user: its programs may connect */
	bool		crc;		/* ask for CRC unless the application says otherwise */
	bool		rfc7306;	/* offer and accept RFC 7306 (iwx peers only: wire.h) */
	int		settle_ms;	/* initiator: hold the first FPDU this long (siw) */
	int		timeout_ms;	/* TCP connect and each MPA frame of a set-up */
	int		close_ms;	/* a graceful close waits this long for the peer's */
	uint16_t	sctp_port;	/* UDP port of DDP over SCTP (RFC 6951); 0: none */
	bool		memlock;	/* hold each client to its RLIMIT_MEMLOCK too (limits.c) */
	int		spin_us;	/* after activity, turn this long without sleeping */
	uint32_t	zerocopy_min;	/* TCP: MSG_ZEROCOPY from this many bytes (0: never) */
	uint32_t	fp_rcvbuf;	/* a followed connection's SO_RCVBUF (0: TCP's autotuning) */
	uint64_t	max[LIMIT_N];
};

struct iwxd {
	struct loop		loop;
	struct iwx_ids		ids;		/* what each of the loop's ids names */
	struct closer		closer;
	struct watch		listen_w, signal_w;
	struct iwxd_opts	o;
	struct iwx_mem		*mem;
	struct fastpath		*fp;		/* fastpath.c, once first attached */
	struct sctp_io		*sctp;		/* sctp_io.c, unless --sctp-port 0 */
	struct client		*clients;
	struct user		*users;		/* of the clients, and of what they left (limits.c) */
	struct vcq		*cqs;
	struct vsrq		*srqs;
	struct iwx_link		qps;
	struct iwx_link		ready;		/* clients with queue pairs to service, in turn */
	struct iwx_link		bell_active;	/* clients whose bells rang lately (doorbell.c) */
	bool			asleep;		/* doorbell_sleep: clients are asked to write */
	uint64_t		spin_end_us;	/* the loop turns without sleeping until then */
	uint32_t		cpu;		/* 1 + the CPU this turn runs on (0: unknown) */
	bool			posted_here;	/* a client on that CPU rang this turn: no spin for it */
	uint64_t		spin_off_us;	/* ... but not before this: its CPU was held (spin()) */
	uint64_t		spin_backoff_us; /* how long the last such pause was */
	struct listener		*listeners;
	struct pconn		*pconns;
	struct lingering	*lingering;	/* linger.c: closed once the peer has read our Terminate */
	uint32_t		nlingering;
	uint32_t		nclients;	/* let in: held to max-clients (root aside) */
	uint32_t		nturned;	/* refused or turned away, until answered */
	bool			clients_warned;	/* said max-clients was reached, until one goes */
	uint64_t		arena_bytes;	/* shared with every client, and kept (shared.c) */
	uint64_t		departed_bytes;	/* ... of which iwxd let go, but something holds */
	uint64_t		departed_ms;	/* ... looked at again then (0: none) */
	struct arenas_live	*live;		/* ... how: which the kernel has (NULL: no BPF) */
	uint32_t		maps;		/* mappings of clients' memory (LIMIT_MAPS_TOTAL) */
	uint64_t		start_ms;
	uint64_t		accept_at_ms;	/* accepting paused until then; 0: not paused */
	bool			accept_warned;	/* said so, until accept catches up */
	bool			stop;
	struct iwx_ipc_status	st;	/* counters; the gauges are filled in by admin.c */
	struct iwx_qp_stats	gone;	/* counters of queue pairs destroyed */
};

/* session.c */
void session_accept(struct iwxd *d, struct watch *w, uint32_t events);
void session_close(struct iwxd *d, struct client *c);
/* Accept again once a pause for want of descriptors is over (loop_due until then). */
void session_timers(struct iwxd *d, uint64_t now);

/* limits.c */
/* The limits left 0 by the options, from the others (limit_info.derived). */
void limits_derive(uint64_t max[LIMIT_N]);
/* What one user's clients may hold of lim together. */
uint64_t limit_of_user(const struct iwxd *d, enum iwxd_limit lim);
/* uid's user, made on first use: NULL without memory. */
struct user *user_get(struct iwxd *d, uid_t uid);
/* u goes if it holds nothing any more (no client, memory or lingering socket). */
void user_forget(struct iwxd *d, struct user *u);
/* Is c held to no limit per user (root)? */
bool user_exempt(const struct client *c);
/* --memlock: read c's RLIMIT_MEMLOCK (at connect). 0, or -errno. */
int client_memlock_read(const struct iwxd *d, struct client *c);
/*
 * May c share bytes more of memory (arena, registered memory) within its RLIMIT_MEMLOCK?
 * 0, or -ENOMEM as the kernel's RDMA stack answers (logged once per client).
 */
int client_memlock_room(const struct iwxd *d, struct client *c, uint64_t bytes);
/*
 * Log that c is at limit lim, or its user is (_user), and what iwxd does about it (action);
 * what its error reply says why (client.why).
 */
void limit_warn(const struct iwxd *d, struct client *c, enum iwxd_limit lim, const char *action);
/* ... only the latter: c's, or its user's; c->why. */
const char *limit_why(const struct iwxd *d, struct client *c, enum iwxd_limit lim, bool user);
void limit_warn_user(const struct iwxd *d, struct client *c, enum iwxd_limit lim,
		     const char *action);
/*
 * May c have one more of what used[lim] counts, and its user? 0, or -ENOSPC, logged once
 * per client and limit. client_take and client_give count it for both.
 */
int client_room(const struct iwxd *d, struct client *c, enum iwxd_limit lim);
void client_take(struct client *c, enum iwxd_limit lim);
void client_give(struct client *c, enum iwxd_limit lim);
/* A request of c fails with err for limit lim, of c or of its user (logged once per client). */
int client_refuse(const struct iwxd *d, struct client *c, enum iwxd_limit lim, int err);
int user_refuse(const struct iwxd *d, struct client *c, enum iwxd_limit lim, int err);
/*
 * c's memory is to be mapped n more times here (LIMIT_MAPS, LIMIT_MAPS_TOTAL: the kernel
 * allows a process vm.max_map_count mappings, and every client's share that): 0, or
 * -ENOSPC. maps_give when they are unmapped.
 */
int maps_take(struct iwxd *d, struct client *c, uint32_t n);
void maps_give(struct iwxd *d, struct client *c, uint32_t n);

/* doorbell.c */
/* At HELLO: c's doorbells, mapped here; *memfd goes to the client. 0 or -errno. */
int doorbell_open(struct iwxd *d, struct client *c, int *memfd);
/* c wrote its eventfd: its bells are looked at again, every turn until they are quiet. */
void doorbell_wake(struct iwxd *d, struct client *c);
void doorbell_close(struct iwxd *d, struct client *c);
/* A bit of c's for a new queue pair q or completion queue cq (one of them): it, or -errno. */
int64_t doorbell_bind(struct client *c, struct vqp *q, struct vcq *cq);
void doorbell_unbind(struct client *c, uint32_t bell);
/*
 * Take what the active clients rang: queue pairs go on the ready list (vqp_ready,
 * vqp_room). Whether any client's bells named new work.
 */
bool doorbell_take(struct iwxd *d);
/*
 * Around a sleep: on, ask the active clients to write their eventfds after ringing too
 * (the others already do), and say whether iwxd may sleep (no bell rang meanwhile); off,
 * ask them no more.
 */
bool doorbell_sleep(struct iwxd *d, bool on);

/*
 * client_ring.c: the ring of a new CQ, SRQ or queue pair of c (lim: LIMIT_CQS, _SRQS,
 * _QPS), size bytes in mem, its descriptor in *memfd for the client: 0, or -errno
 * (-ENOSPC beyond a limit or a share). Counts one of lim, a mapping and the memory; the
 * caller checked its arguments, and adds the id it had room for.
 */
int client_ring_create(struct iwxd *d, struct client *c, enum iwxd_limit lim,
		       struct iwx_arena *mem, size_t size, int *memfd);
/* ... and uncounts them, freeing the ring's pages (shared_ring_destroy). */
void client_ring_destroy(struct iwxd *d, struct client *c, enum iwxd_limit lim,
			 struct iwx_arena *mem);
/* ... the same when the object's creation fails after it: *memfd, never sent, is closed too. */
void client_ring_abandon(struct iwxd *d, struct client *c, enum iwxd_limit lim,
			 struct iwx_arena *mem, int *memfd);

/* vcq.c */
struct vcq *vcq_create(struct iwxd *d, struct client *c, uint32_t entries, int *memfd, int *err);
void vcq_destroy(struct iwxd *d, struct vcq *cq);
struct vcq *vcq_find(struct iwxd *d, struct client *c, uint32_t id);
/* One completion into cq's ring (the caller saw room), and a wake-up if the client armed it. */
void vcq_push(struct vcq *cq, const struct iwx_wc *wc);
/* Completions wait for room in cq: the client rings the CQ's bell once it has polled. */
void vcq_ask_room(struct vcq *cq);

/* vsrq.c */
struct vsrq *vsrq_create(struct iwxd *d, struct client *c, const struct iwx_ipc_srq_create *req,
			 int *memfd, int *err);
void vsrq_destroy(struct iwxd *d, struct vsrq *srq);
struct vsrq *vsrq_find(struct iwxd *d, struct client *c, uint32_t id);
/*
 * The engine's take_recv (qp.h) for a queue pair on srq (ctx): the next receive posted,
 * or -ENOENT. Says so to the client once fewer than the armed limit are left.
 */
int vsrq_take(void *ctx, struct iwx_recv_wr *wr);

/* regions.c: iwx_mem's watcher, from the start */
void regions_watch(struct iwxd *d);

/* vqp.c */
struct vqp *vqp_create(struct iwxd *d, struct client *c, const struct iwx_ipc_qp_create *req,
		       int *memfd, int *err);
void vqp_destroy(struct iwxd *d, struct vqp *q);
struct vqp *vqp_find(struct iwxd *d, struct client *c, uint32_t num);
/* The stream of q is in full operation: run the engine on it (after the settle time). */
void vqp_established(struct iwxd *d, struct vqp *q, struct iwx_conn *conn, const struct transport *t);
/* The queue pair's state, here and in the page the client reads it from. */
void vqp_set_state(struct vqp *q, enum iwx_shq_state s);
/* q goes on its owner's ready list: serviced at the next turn its owner's share reaches it. */
void vqp_ready(struct iwxd *d, struct vqp *q);
/* Did the client post to q since its last bell? (doorbell.c: a bell of no new work) */
bool vqp_posted_since(struct vqp *q);
/* c made room in a CQ: its queue pairs that waited for some go on the ready list. */
void vqp_room(struct iwxd *d, struct client *c);
/*
 * Service each client's ready queue pairs, a share of the turn each, the rest carried to
 * the next turn; false if there were none.
 */
bool vqp_service_ready(struct iwxd *d);
void vqp_service(struct iwxd *d, struct vqp *q);
/* Graceful close (FIN after what TCP holds); the peer's close, or a time-out, ends it. */
int vqp_disconnect(struct iwxd *d, struct vqp *q);
/* q's traffic: its engine's, and that of engines it had before (it may reconnect). */
void vqp_stats(const struct vqp *q, struct iwx_qp_stats *s);
void vqp_stats_add(struct iwx_qp_stats *to, const struct iwx_qp_stats *s);

/* cm.c */
int cm_connect(struct iwxd *d, struct client *c, const struct iwx_ipc_connect *req);
int cm_listen(struct iwxd *d, struct client *c, struct iwx_ipc_listen *req);
int cm_listen_close(struct iwxd *d, struct client *c, uint32_t id);
int cm_answer(struct iwxd *d, struct client *c, const struct iwx_ipc_answer *req, bool reject);
int cm_disconnect(struct iwxd *d, struct client *c, uint32_t qp);
/* A client leaves: its listeners and set-ups go. */
void cm_client_gone(struct iwxd *d, struct client *c);
void cm_pconn_free(struct iwxd *d, struct pconn *p);
/* An address's length (0: a family it is not), and its port, for the transports. */
socklen_t cm_addr_len(const struct sockaddr_storage *a);
uint16_t cm_port_of(const struct sockaddr_storage *a);
/* May c listen on port (0: any)? 0, -EACCES (privileged), -EADDRINUSE (another client's). */
int cm_port_allowed(const struct iwxd *d, const struct client *c, uint16_t port);

/*
 * linger.c: fd (a socket whose engine sent a Terminate and shut its half) stays open,
 * its incoming bytes dropped, until the peer's FIN or 2 s; the caller closes fd as it
 * likes (linger holds a duplicate). Counted to u, which may have --max-lingering: beyond,
 * fd is left to close at once (counted in linger_full).
 */
void linger_start(struct iwxd *d, struct user *u, int fd);
/* Close every lingering socket now (iwxd stops). */
void linger_stop(struct iwxd *d);

/* admin.c: STATUS, LIST_CONNS, LIST_STAGS, FP_* for a root client; body: the request's. */
void admin_request(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *req,
		   const void *body);

#endif /* IWX_DAEMON_H */
