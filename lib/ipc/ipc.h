/* SPDX-License-Identifier: MIT */
/*
 * What libiwx and iwxd say to each other: requests and replies over a SOCK_SEQPACKET
 * Unix socket (one message each, descriptors attached where a reply hands over shared
 * memory or an eventfd), connection events from the daemon on the same socket, and
 * the layout of the memory they share for a queue pair's and a completion queue's rings.
 * Both sides are built from one tree: the version in HELLO catches a mismatch.
 */
#ifndef IWX_IPC_H
#define IWX_IPC_H

#include <stdint.h>
#include <sys/socket.h>

#include "ipc/ring.h"
#include "proto/fastpath_stats.h"
#include "proto/qp_stats.h"
#include <iwx/verbs.h>

#define IWX_IPC_VERSION		16
#ifndef IWX_DEFAULT_SOCKET	/* also in iwx/iwx.h, for applications */
#define IWX_DEFAULT_SOCKET	"/run/iwx/iwxd.sock"
#endif
#define IWX_IPC_MAX		65536	/* largest message, header included */
#define IWX_IPC_MAX_QP_DEPTH	4096	/* a work queue's most outstanding requests */
#define IWX_IPC_MAX_CQ_ENTRIES	1048576	/* ofi_rxm (libfabric) asks 262144; siw allows 3.2M */
#define IWX_IPC_PRIVDATA	512	/* MPA private data (RFC 5044 §7.1) */

enum iwx_ipc_op {
	IWX_IPC_HELLO = 1,	/* -> arena, doorbell, notify and doorbells' memfds */
	IWX_IPC_PD_ALLOC,
	IWX_IPC_PD_FREE,
	IWX_IPC_MR_REG,
	IWX_IPC_MR_DEREG,
	IWX_IPC_CQ_CREATE,	/* -> ring memfd */
	IWX_IPC_CQ_DESTROY,
	IWX_IPC_QP_CREATE,	/* -> ring memfd */
	IWX_IPC_QP_DESTROY,
	IWX_IPC_CONNECT,
	IWX_IPC_LISTEN,
	IWX_IPC_LISTEN_CLOSE,
	IWX_IPC_ACCEPT,
	IWX_IPC_REJECT,
	IWX_IPC_DISCONNECT,
	IWX_IPC_STATUS,		/* the daemon's state, for `iwx status` (root only) */
	IWX_IPC_LIST_CONNS,	/* replies in parts, IWX_IPC_F_MORE on all but the last */
	IWX_IPC_LIST_STAGS,
	IWX_IPC_MR_INVALIDATE,	/* the region's STag, locally */
	IWX_IPC_MR_REVALIDATE,	/* -> the STag under a new key */
	IWX_IPC_SHM_CREATE,	/* -> memory for pages moved out of the client's way: its fd */
	IWX_IPC_SHM_FREE,
	IWX_IPC_FP_ATTACH,	/* the fast path on an interface (root only) */
	IWX_IPC_FP_DETACH,
	IWX_IPC_FP_STATS,	/* -> struct iwx_ipc_fp_info entries, in parts */
	IWX_IPC_LIST_USERS,	/* -> struct iwx_ipc_user_info entries, in parts (root only) */
	IWX_IPC_SRQ_CREATE,	/* -> ring memfd */
	IWX_IPC_SRQ_DESTROY,
	IWX_IPC_SRQ_ARM,	/* its limit event */
	IWX_IPC_EVENT = 100,	/* daemon -> client, seq 0: struct iwx_ipc_event */
};

#define IWX_IPC_F_MORE	0x1	/* more parts of this reply follow */
#define IWX_IPC_F_WHY	0x2	/* an error reply whose body says why: struct iwx_ipc_why */

struct iwx_ipc_hdr {
	uint16_t	op;
	uint16_t	flags;
	uint32_t	seq;		/* echoed in the reply; 0 for events */
	int32_t		status;		/* reply: 0 or -errno */
	uint32_t	len;		/* bytes of body after this header */
};

/* ------------------------------------------------------------ bodies */

/* Why a request failed, where iwxd knows more than an errno: the limit, whose, its option. */
#define IWX_IPC_WHY_MAX	256
struct iwx_ipc_why {
	char	text[IWX_IPC_WHY_MAX];	/* a line, NUL-terminated within it */
};

struct iwx_ipc_hello {
	uint32_t	version;
	uint32_t	client_id;	/* reply: the low bits of the client's identity */
	uint64_t	arena_size;	/* request: wanted; reply: granted */
	uint32_t	arena_bpf;	/* reply: the arena is a BPF array map (else a memfd) */
	uint32_t	arena_map_id;
	/* reply: what this client may hold (iwxd's limits) and how large its queues may be */
	uint64_t	max_shared;	/* bytes: arena and registered memory */
	uint32_t	max_pds, max_mrs, max_cqs, max_qps;
	uint32_t	max_qp_depth, max_cq_entries;
	uint32_t	max_srqs;
	uint32_t	features;	/* reply: IWX_IPC_F_* (an older iwxd: 0) */
};

/* iwxd wakes a CQ armed IWX_CQ_ARMED_FUTEX with FUTEX_WAKE on its armed word */
#define IWX_IPC_F_CQ_FUTEX	1u
/* iwxd offers and accepts RFC 7306 (not --no-rfc7306): each connection says whether its peer did */
#define IWX_IPC_F_RFC7306	2u

struct iwx_ipc_id {		/* PD_ALLOC reply, PD_FREE, MR_DEREG, *_DESTROY, DISCONNECT, ... */
	uint32_t	id;
};

/*
 * Memory a registration outside the arena lives in: iwxd creates it (as it does the
 * arena: a BPF array map, or a memfd) and hands the client its fd; the client copies
 * its pages into it and maps it over them, so that both see the same bytes. iwxd never
 * reaches memory the client has not shared with it this way.
 */
struct iwx_ipc_shm {
	uint64_t	size;		/* request: bytes, whole pages; reply: granted */
	uint32_t	shm;		/* reply: its id (SHM_FREE names it in an iwx_ipc_id) */
	uint32_t	bpf;		/* reply: a BPF array map (else a memfd) */
	uint32_t	map_id;		/* reply */
	uint32_t	pad;
};

#define IWX_IPC_NOT_ARENA	UINT64_MAX
#define IWX_IPC_MR_PIECES	16	/* shared memories one registration outside the arena spans */

/* Whole pages of a shared memory, in the order they lie in the client's address space. */
struct iwx_ipc_mr_piece {
	uint32_t	shm;
	uint32_t	pad;
	uint64_t	off, len;	/* page-aligned, within the shared memory */
};

struct iwx_ipc_mr_reg {
	uint32_t	pd;
	uint32_t	access;		/* IWX_ACCESS_* */
	uint64_t	addr;		/* the client's address: also the base tagged offset */
	uint64_t	len;
	uint64_t	arena_off;	/* offset in the arena, or IWX_IPC_NOT_ARENA: */
	uint32_t	npieces;	/* ... the pages of [addr, addr + len) are these */
	uint32_t	stag;		/* reply */
	struct iwx_ipc_mr_piece	piece[IWX_IPC_MR_PIECES];
};

struct iwx_ipc_cq_create {
	uint32_t	entries;	/* request: wanted; reply: granted */
	uint32_t	cq;		/* reply */
	uint64_t	map_size;	/* reply: bytes of the ring memfd */
	uint32_t	bell;		/* reply: its bit in the doorbells */
	uint32_t	pad;
};

struct iwx_ipc_qp_create {
	uint32_t	pd, send_cq, recv_cq;
	uint32_t	sq_depth, rq_depth;	/* request: wanted; reply: granted */
	uint32_t	qp;			/* reply */
	uint64_t	map_size;		/* reply */
	uint32_t	bell;			/* reply: its bit in the doorbells */
	uint32_t	srq;			/* its receives come from this SRQ (0: its own) */
};

/*
 * A shared receive queue: a ring of receives (struct iwx_ipc_srq_shared's) that queue
 * pairs created on it take from, each when a Send begins that it has none for.
 */
struct iwx_ipc_srq_create {
	uint32_t	pd;
	uint32_t	depth;		/* request: wanted; reply: granted */
	uint32_t	limit;		/* IWX_IPC_EV_SRQ_LIMIT once fewer are posted (0: none) */
	uint32_t	srq;		/* reply */
	uint64_t	map_size;	/* reply: bytes of the ring memfd */
};

struct iwx_ipc_srq_arm {
	uint32_t	srq;
	uint32_t	limit;		/* 0: disarm */
};

struct iwx_ipc_cm_param {
	uint8_t		ird, ord, mpa_rev;
	int8_t		crc;		/* 0 default, 1 on, -1 off */
	uint8_t		markers, p2p;
	uint16_t	pd_len;
	int16_t		settle_ms;	/* 0 iwxd's default, -1 none, else ms (initiator) */
	uint8_t		transport;	/* connect: IWX_TRANSPORT_* */
	uint8_t		pd[IWX_IPC_PRIVDATA];
};

struct iwx_ipc_connect {
	uint32_t		qp;
	struct iwx_ipc_cm_param	param;
	struct sockaddr_storage	addr;
};

struct iwx_ipc_listen {
	struct sockaddr_storage	addr;		/* reply: the bound address */
	uint32_t		backlog;
	uint32_t		listener;	/* reply */
	uint32_t		transport;	/* IWX_TRANSPORT_* */
};

struct iwx_ipc_answer {		/* ACCEPT (qp) and REJECT */
	uint32_t		conn_id, qp;
	struct iwx_ipc_cm_param	param;
};

enum iwx_ipc_event_type {	/* the values of enum iwx_event_type */
	IWX_IPC_EV_CONNECT_REQUEST,
	IWX_IPC_EV_ESTABLISHED,
	IWX_IPC_EV_REJECTED,
	IWX_IPC_EV_UNREACHABLE,
	IWX_IPC_EV_DISCONNECTED,
	/* asynchronous events alone (iwx_get_async_event) */
	IWX_IPC_EV_SRQ_LIMIT = 16,	/* srq: fewer receives posted than its limit (now disarmed) */
	IWX_IPC_EV_QP_LAST_WQE,		/* qp, on an SRQ: its stream ended, it takes no more */
};

/* Where an active set-up failed (UNREACHABLE): what a user is told of an address that is no iWARP peer. */
enum {
	IWX_IPC_STEP_TRANSPORT,		/* the TCP connect (SCTP: its association) */
	IWX_IPC_STEP_MPA_REQUEST,	/* connected: the MPA Request going out */
	IWX_IPC_STEP_MPA_REPLY,		/* the Request sent: the peer's MPA Reply awaited */
	IWX_IPC_STEP_ACCEPTED,		/* passive, accepted: this side's MPA Reply going out */
};

struct iwx_ipc_event {
	uint32_t		type;
	uint32_t		qp, listener, conn_id;
	uint32_t		srq;
	int32_t			status;
	uint8_t			mpa_rev, crc, markers_rx, markers_tx;
	uint16_t		ird, ord;
	uint32_t		emss;		/* SCTP: the largest chunk (SCTP_MAXSEG) */
	uint32_t		transport;	/* IWX_TRANSPORT_* */
	uint8_t			terminated, local, layer, etype, ecode;
	uint8_t			step;		/* UNREACHABLE: where the set-up failed (IWX_IPC_STEP_*);
						   layer, etype, ecode: the MPA error behind -EPROTO */
	uint8_t			rfc7306;	/* ESTABLISHED: both sides agreed to RFC 7306 */
	uint8_t			rsvd;
	uint16_t		pd_len;
	uint8_t			pd[IWX_IPC_PRIVDATA];
	struct sockaddr_storage	local_addr, peer_addr;
};

/* STATUS reply: the daemon and its counters. */
struct iwx_ipc_status {
	char		release[32];	/* iwxd's (IWX_VERSION), NUL-terminated */
	uint32_t	version, pid;	/* the IPC's (IWX_IPC_VERSION); iwxd's pid */
	uint64_t	uptime_ms;
	uint32_t	clients, pds, mrs, cqs, qps, listeners, conns_pending;
	uint32_t	crc_default, settle_ms;
	uint64_t	conns_established, conns_failed, conns_rejected;
	uint64_t	terms_sent, terms_received;
	struct iwx_qp_stats traffic;		/* of queue pairs alive and gone */
	uint64_t	doorbells, wakeups;
	/* the limits (iwxd --help), and what all clients together use of theirs */
	uint32_t	connected, max_clients;	/* clients let in, devices or not (iwx too) */
	uint64_t	arena_bytes, arena_total;	/* of every arena */
	uint64_t	arena_max;		/* per client, as those below */
	uint32_t	max_pds, max_mrs, max_cqs, max_qps, max_listeners;
	uint32_t	max_requests;		/* connection requests announced, not answered */
	uint32_t	max_queued;		/* replies and events not read */
	uint32_t	maps, maps_total;	/* mappings of every client's memory in iwxd */
	uint32_t	max_maps;		/* per client */
	/* the fast path: the interfaces it is attached to (iwx attach) */
	uint32_t	fp_n;
	struct {
		char		ifname[16];
		uint32_t	mode;		/* IWX_FP_MODE_* */
		uint32_t	sctp_xsks;	/* SCTP's AF_XDP sockets on it (0: UDP's socket) */
	} fp[16];
	/* DDP over SCTP (docs/ddp-over-sctp.md) */
	struct {
		uint64_t	bad_crc;	/* packets dropped for their CRC32c */
		uint64_t	placed_chunks;	/* tagged chunks placed from their packet */
		uint64_t	placed_bytes;
		uint64_t	xsk_rx, xsk_tx;	/* packets through AF_XDP sockets */
		uint64_t	xsk_dropped;	/* frames not ours, or no TX frame free */
		uint64_t	udp_dropped;	/* datagrams: no path free, or a send refused */
		uint64_t	no_path;	/* packets to a peer whose path had gone, dropped */
		uint64_t	paths;		/* peers with a path now (max 1024) */
	} sctp;
	/* what the clients of one uid may hold together (LIST_USERS: what each holds) */
	uint32_t	users;			/* with clients, or memory they left, or lingering sockets */
	uint32_t	max_clients_per_user;
	uint64_t	memory_per_user;
	uint64_t	departed_bytes;		/* of arena_bytes: let go of by iwxd, still held by a client */
	uint32_t	lingering;		/* sockets read until the peer has seen our Terminate */
	uint32_t	user_share;		/* a user's clients hold this many clients' worth of each */
	uint64_t	linger_full;		/* ... closed at once instead: their user had max_lingering */
	uint32_t	max_lingering;		/* per user */
	uint32_t	users_guaranteed;	/* --users: each guaranteed 1/(2 x this) of each total */
	uint64_t	bells_muted;		/* clients muted for ringing for nothing (doorbell.c) */
	uint32_t	srqs, max_srqs;		/* shared receive queues; the most per client */
	uint64_t	spins_stopped;		/* yields that found iwxd's CPU held (serve.c, spin()) */
	uint64_t	spins_shared;		/* posts from a client on iwxd's CPU: no spin for them */
	uint64_t	cq_futex_wakes;		/* completions that woke a client asleep on its CQ's word */
};

/* LIST_USERS entry: what the clients of one uid hold, and what they left held (root's too). */
struct iwx_ipc_user_info {
	uint32_t	uid, clients;
	uint64_t	bytes;			/* memory shared with them, and held after iwxd let go */
	uint64_t	departed_bytes;		/* ... the latter */
	uint32_t	departed;		/* ... in so many objects */
	uint32_t	pds, mrs, cqs, qps, listeners, maps, queued, lingering;
	uint32_t	srqs;
	uint32_t	fp_conns, fp_mems, fp_stags;	/* the fast path's table entries */
};

/*
 * LIST_CONNS entry: one queue pair; the MPA fields hold what was agreed once mpa_rev != 0.
 * client (here and in LIST_STAGS): the client_id its HELLO was answered with.
 */
struct iwx_ipc_conn_info {
	uint32_t		qp, client, pd, state;	/* state: IWX_SHQ_* */
	uint8_t			mpa_rev, crc, markers_rx, markers_tx;
	uint16_t		ird, ord;
	uint32_t		emss;		/* SCTP: the largest chunk (SCTP_MAXSEG) */
	uint32_t		transport;	/* IWX_TRANSPORT_* */
	uint32_t		sctp_xdp;	/* SCTP: through an AF_XDP socket now, else UDP's */
	uint8_t			ended;		/* IWX_CONN_END_*: how the stream ended, if it has */
	uint8_t			term_layer, term_etype, term_ecode;	/* a Terminate's cause */
	uint8_t			rfc7306;	/* both sides agreed to RFC 7306 */
	uint8_t			rsvd[3];
	struct sockaddr_storage	local_addr, peer_addr;
	struct iwx_qp_stats	traffic;
};

#define IWX_CONN_END_NONE	0	/* still running */
#define IWX_CONN_END_CLOSED	1	/* closed or lost, without a Terminate */
#define IWX_CONN_END_TERM_SENT	2	/* this side found the error and sent a Terminate */
#define IWX_CONN_END_TERM_RCVD	3	/* the peer sent one */

/* FP_ATTACH, FP_DETACH: an interface of iwxd's network namespace. */
#define IWX_FP_MODE_TC		0	/* TC ingress (tcx): the default */
#define IWX_FP_MODE_XDP		1
/* FP_ATTACH flags */
#define IWX_FP_ATTACH_SCTP	(1u << 0)	/* SCTP's datagrams through AF_XDP sockets too
						   (an XDP program on the interface) */
/* (1u << 1) was: follow connections without the MPA CRC too; refused now (issue 41) */
#define IWX_FP_ATTACH_FLAGS	IWX_FP_ATTACH_SCTP
struct iwx_ipc_fp_attach {
	char		ifname[16];	/* IFNAMSIZ, NUL-terminated */
	uint32_t	mode;		/* IWX_FP_MODE_* */
	uint32_t	flags;		/* FP_ATTACH: IWX_FP_ATTACH_*; FP_DETACH: 0 */
};

/* FP_ATTACH reply, on success: what the user should know of where it attached. */
#define IWX_FP_NOTE_XDP_VETH	(1u << 0)	/* XDP on a veth: it cannot verify the TCP checksums
						   a peer leaves unfinished (offload), and skips those */
#define IWX_FP_NOTE_ON_SENDER	(1u << 1)	/* a veth whose receive, and so the programs' copy,
						   runs on the sending CPU (no RPS; at XDP, NAPI not
						   threaded) */
struct iwx_ipc_fp_attached {
	uint32_t	notes;		/* IWX_FP_NOTE_* */
	uint32_t	rsvd;
};

/* FP_STATS entry: an interface the fast path is attached to, or a connection it follows. */
#define IWX_FP_INFO_IFACE	0
#define IWX_FP_INFO_CONN	1
struct iwx_ipc_fp_info {
	uint32_t	kind;		/* IWX_FP_INFO_* */
	uint32_t	id;		/* ifindex, or queue pair */
	char		ifname[16];
	uint32_t	mode;		/* interface: IWX_FP_MODE_* */
	uint32_t	state;		/* connection: enum iwx_fp_state */
	struct iwx_fp_counters c;
};

/* LIST_STAGS entry: one registered region. */
struct iwx_ipc_stag_info {
	uint32_t	stag, client, pd;
	uint8_t		valid, access, in_arena, pad;
	uint64_t	base_to, len;
};

/*
 * Send one message (header, then len bytes of body) with nfds descriptors attached.
 * 0 or -errno. Never raises SIGPIPE.
 */
int iwx_ipc_send(int sock, const struct iwx_ipc_hdr *hdr, const void *body, const int *fds,
		 unsigned nfds);

/*
 * Receive one message: its header into *hdr, its body straight into body (cap bytes
 * at most: a longer one is an error), descriptors as iwx_fd_recv. Returns the body's
 * length, 0 for a message without one, -ECONNRESET at the end of the stream, -EPROTO
 * for a message that is not one of ours, or -errno.
 */
int iwx_ipc_recv(int sock, struct iwx_ipc_hdr *hdr, void *body, size_t cap, int *fds,
		 unsigned *nfds);

/*
 * The same, but every descriptor that came is the caller's, whatever the result, as
 * iwx_fd_recv_all (fds has room for IWX_FDPASS_ANY): iwxd's way, which closes none of a
 * client's descriptors on its loop's thread.
 */
int iwx_ipc_recv_all(int sock, struct iwx_ipc_hdr *hdr, void *body, size_t cap, int *fds,
		     unsigned *nfds);

/* The socket iwxd serves: given (if not NULL or empty), else $IWX_SOCKET, else the default. */
const char *iwx_ipc_socket_path(const char *given);

/*
 * A SOCK_SEQPACKET socket connected to path; with timeout_s > 0, connecting, sending
 * and receiving give up after that long. The fd or -errno (-ENAMETOOLONG, -ENOENT...).
 */
int iwx_ipc_connect(const char *path, int timeout_s);

/* ------------------------------------------------------ shared memory */

/* A queue pair's state as the client sees it (the daemon writes it). */
enum iwx_shq_state {
	IWX_SHQ_INIT,
	IWX_SHQ_CONNECTING,
	IWX_SHQ_RTS,
	IWX_SHQ_ERROR,
};

/*
 * A queue pair's memfd: this header, then sq_depth struct iwx_send_wr, then rq_depth
 * struct iwx_recv_wr (each array at IWX_IPC_QP_SQ_OFF / iwx_ipc_qp_rq_off).
 */
struct iwx_ipc_qp_shared {
	struct iwx_ring_ctl	sq, rq;		/* client produces, daemon consumes */
	_Alignas(64) uint32_t	state;		/* enum iwx_shq_state, daemon-written */
	uint32_t		rfc7306;	/* daemon: RFC 7306 agreed (written before RTS) */
};

/*
 * A CQ's armed word: iwxd takes it at the next completion, then writes the notify eventfd
 * (NOTIFY, or any other value but 0), or wakes the client sleeping on the word (FUTEX: one
 * system call for the client's wait where poll and read of the eventfd are two).
 */
#define IWX_CQ_ARMED_NOTIFY	1u
#define IWX_CQ_ARMED_FUTEX	2u

/* A completion queue's memfd: this header, then entries struct iwx_wc. */
struct iwx_ipc_cq_shared {
	struct iwx_ring_ctl	ring;		/* daemon produces, client consumes */
	_Alignas(64) uint32_t	armed;		/* client: notify on the next completion (IWX_CQ_ARMED_*) */
	uint32_t		need_room;	/* daemon: completions wait; ring after polling */
};

/* A shared receive queue's memfd: this header, then entries struct iwx_recv_wr. */
struct iwx_ipc_srq_shared {
	struct iwx_ring_ctl	ring;		/* client produces, daemon consumes */
};

/*
 * A client's doorbells (HELLO's fourth fd, IWX_IPC_BELLS_SIZE bytes): one bit per queue
 * pair and completion queue (its `bell`), which the client sets when it posts to the
 * queue pair, or when it polls a CQ that iwxd asked room of; and a summary bit per word
 * of them. iwxd takes them every turn, so that it looks only at what was rung, however
 * many queue pairs there are. What a client writes here tells iwxd only where to look.
 */
#define IWX_IPC_BELLS		(1u << 18)	/* bits: a client's queue pairs and CQs */
struct iwx_ipc_bells {
	uint32_t		need_wakeup;	/* daemon-written: it sleeps, write the eventfd */
	/* whose CPU a spin would take: 1 + the CPU the daemon took this client's bells on, */
	uint32_t		daemon_cpu;	/* ... daemon-written (0: not yet), */
	uint32_t		client_cpu;	/* ... and the client rang from, client-written (0: not said) */
	_Alignas(64) uint64_t	sum[IWX_IPC_BELLS / 64 / 64];	/* bit i of sum[j]: word 64j + i */
	uint64_t		bits[IWX_IPC_BELLS / 64];
};
#define IWX_IPC_BELLS_SIZE	IWX_IPC_ALIGN(sizeof(struct iwx_ipc_bells))

/*
 * Ring bell: its bit, then its word's summary bit (iwxd takes them in the other order).
 * A bit already set is not written again, so a busy queue pair's posts do not bounce
 * the line between client and daemon.
 */
static inline void iwx_ipc_bell_ring(struct iwx_ipc_bells *b, uint32_t bell)
{
	uint64_t *w = &b->bits[bell / 64 % (IWX_IPC_BELLS / 64)], *s = &b->sum[bell / 4096 % 64];
	uint64_t wm = 1ull << (bell % 64), sm = 1ull << (bell / 64 % 64);

	/*
	 * The post (its ring's prod) is seen before the bit is looked at: a bit found set is
	 * not written, and iwxd may take it at once and read the ring, which must hold the
	 * post. Without, the store can wait behind the load (x86's store buffer): the post
	 * stays unseen until the next ring, for ever for riostream, which then only polls.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(w, __ATOMIC_SEQ_CST) & wm))
		__atomic_fetch_or(w, wm, __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(s, __ATOMIC_SEQ_CST) & sm))
		__atomic_fetch_or(s, sm, __ATOMIC_SEQ_CST);
}

#define IWX_IPC_ALIGN(x)	(((x) + 63) & ~(uint64_t)63)
#define IWX_IPC_QP_SQ_OFF	IWX_IPC_ALIGN(sizeof(struct iwx_ipc_qp_shared))

static inline uint64_t iwx_ipc_qp_rq_off(uint32_t sq_depth)
{
	return IWX_IPC_QP_SQ_OFF + IWX_IPC_ALIGN((uint64_t)sq_depth * sizeof(struct iwx_send_wr));
}

static inline uint64_t iwx_ipc_qp_map_size(uint32_t sq_depth, uint32_t rq_depth)
{
	return iwx_ipc_qp_rq_off(sq_depth) + (uint64_t)rq_depth * sizeof(struct iwx_recv_wr);
}

#define IWX_IPC_CQ_OFF		IWX_IPC_ALIGN(sizeof(struct iwx_ipc_cq_shared))
#define IWX_IPC_SRQ_OFF		IWX_IPC_ALIGN(sizeof(struct iwx_ipc_srq_shared))

static inline uint64_t iwx_ipc_srq_map_size(uint32_t depth)
{
	return IWX_IPC_SRQ_OFF + (uint64_t)depth * sizeof(struct iwx_recv_wr);
}

static inline uint64_t iwx_ipc_cq_map_size(uint32_t entries)
{
	return IWX_IPC_CQ_OFF + (uint64_t)entries * sizeof(struct iwx_wc);
}

#endif /* IWX_IPC_H */
