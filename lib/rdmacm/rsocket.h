/* SPDX-License-Identifier: MIT */
/*
 * rsockets (<rdma/rsocket.h>, rdma-core 44's API) on the drop-in's own rdma_cm and
 * verbs: a SOCK_STREAM rsocket is one RC QP, with a channel, a CQ and buffers of its own.
 *
 *   rsocket.c   the table of sockets, set-up, connection events, shutdown and close
 *   rdata.c     the stream: messages posted and taken, credits, rsend/rrecv and kin
 *   ropts.c     socket options, rfcntl, names
 *   riomap.c    riomap, riounmap, riowrite
 *   rpoll.c     rpoll and rselect
 *
 * An rsocket's number is a real fd of its own (an epoll of its rdma_cm channel and its
 * completion channel, readable whenever something of the socket may have changed), as
 * rdma-core's is its channel's fd: the preload library keeps its own table over them,
 * and rpoll takes them mixed with ordinary fds.
 *
 * The wire (ours: rdma-core's rsockets, whose iWARP mode writes data into the peer's
 * ring, do not talk to it). The connector's private data is a struct rs_hello, the
 * acceptor refuses any other. Then every Send is one message: a struct rs_hdr and len
 * bytes, into one of the peer's RS_RQ posted receives of RS_SLOT bytes. A Send costs
 * the sender one credit; it starts with RS_RQ and the receiver gives them back, in any
 * message's header, as it reposts the receives it has emptied. So no Send ever meets an
 * empty receive queue (which iWARP answers with a Terminate). The last credit only goes
 * on a message that gives credits back, so that neither side can be left with none.
 * riowrite is an RDMA Write into a region the peer announced (RS_OP_IOMAP), ordered
 * with the stream's Sends by the QP.
 */
#ifndef IWX_RDMACM_RSOCKET_H
#define IWX_RDMACM_RSOCKET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#define RS_SLOT		16384u		/* one message, header included */
#define RS_RQ		16		/* receives posted: RS_RQ * RS_SLOT received bytes */
#define RS_SQ		16		/* send slots: RS_SQ * RS_SLOT bytes in flight */
#define RS_SQ_DEPTH	(RS_SQ + 8)	/* a Send or Write per slot, and controls */
#define RS_INLINE	64		/* header-only messages go inline */
#define RS_MAX_IOMAP	8		/* regions a peer may announce; ours: RDMA_IOMAPSIZE */
#define RS_BACKLOG	64		/* connection requests a listener holds */

#define RS_MAGIC	0x69777852u	/* "iwxR" */
#define RS_VERSION	1

struct rs_hello {
	uint32_t	magic;		/* big-endian, as every field on the wire */
	uint8_t		version;
	uint8_t		zero[3];
};

enum rs_op {
	RS_OP_DATA = 1,		/* len bytes of the stream */
	RS_OP_CREDIT,		/* credits only */
	RS_OP_FIN,		/* the sender sends no more (shutdown, close) */
	RS_OP_IOMAP,		/* a struct rs_iomap_msg */
};

struct rs_hdr {
	uint8_t		op;
	uint8_t		zero;
	uint16_t	credits;	/* receives reposted since the last message */
	uint32_t	len;		/* payload bytes after the header */
};

struct rs_iomap_msg {
	uint32_t	index;		/* the region's slot, < RS_MAX_IOMAP */
	uint32_t	rkey;
	uint64_t	offset;		/* riowrite's offset of its first byte */
	uint64_t	addr;
	uint64_t	len;		/* 0: unmapped */
};

#define RS_MSG_MAX	(RS_SLOT - sizeof(struct rs_hdr))

enum rs_state {
	RS_IDLE,		/* made, perhaps bound */
	RS_LISTEN,
	RS_RESOLVING,		/* rconnect: address, then route */
	RS_CONNECTING,		/* connect sent or request accepted: for ESTABLISHED */
	RS_OPEN,
	RS_CLOSED,		/* disconnected: what was received can still be read */
	RS_ERROR,		/* err says why */
};

/* A region of ours the peer may write (riomap), or one of the peer's we may. */
struct rs_iomap {
	struct ibv_mr	*mr;		/* ours only */
	uint64_t	offset, addr, len;	/* len 0: free */
	uint32_t	rkey;
	bool		announce;	/* ours: to tell the peer */
};

struct rs {
	pthread_mutex_t		lock;
	int			fd;		/* the socket's number: an epoll (above) */
	int			domain;
	enum rs_state		state;
	int			err;		/* SO_ERROR, or why RS_ERROR */
	bool			nonblock;
	struct rdma_event_channel *ch;
	struct rdma_cm_id	*id;
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*cc;
	struct ibv_cq		*cq;
	uint8_t			*mem;		/* RS_RQ receive slots, then RS_SQ send slots */
	struct ibv_mr		*mr;
	/* receiving: slots with stream bytes, in their order; off into the first */
	uint8_t			ready[RS_RQ];
	uint32_t		rx_len[RS_RQ];	/* stream bytes in each slot */
	uint32_t		nready, ready_head, ready_off;
	uint32_t		to_return;	/* credits for the peer */
	bool			fin_rcvd, shut_rd;
	/* sending */
	uint32_t		credits;
	uint8_t			free_slot[RS_SQ];
	uint32_t		nfree;
	uint32_t		inflight;	/* posted, not completed */
	bool			fin_want, fin_sent;
	/* listening: requests not yet accepted */
	struct rdma_cm_id	*req[RS_BACKLOG];
	uint32_t		nreq, backlog;
	/* options kept for rgetsockopt */
	int			sndbuf, rcvbuf, nodelay, keepalive, reuseaddr, iomap_size;
	struct linger		linger;
	struct rs_iomap		local[RS_MAX_IOMAP], target[RS_MAX_IOMAP];
};

/* rsocket.c: the socket numbered fd, locked, and progress made on it; NULL, EBADF. */
struct rs *rs_get_locked(int fd);
/* ... the socket numbered fd or NULL, unlocked (rpoll: is fd one). */
struct rs *rs_lookup(int fd);
void rs_unlock(struct rs *rs);
/* ... take rdma_cm's events and completions, send what waits (the lock held). */
void rs_progress(struct rs *rs);
/* ... wait up to ms (-1: no end) for the socket to change: 0, or -1 with errno (EINTR). */
int rs_wait(struct rs *rs, int ms);
/* ... fail the socket with err (ECONNRESET, EPROTO, ...). */
void rs_fail(struct rs *rs, int err);
/* ... -1 with errno for a socket that cannot carry data now; 0 if it can. */
int rs_usable(struct rs *rs);
/* ... an address out, as accept and getsockname give it (cut to *len, *len its length). */
void rs_copy_addr(struct sockaddr *to, socklen_t *len, const struct sockaddr *from);

/* rdata.c */
int rs_post_recvs(struct rs *rs);
void rs_take_completions(struct rs *rs);
/* Post a message of up to RS_INLINE - header bytes inline: 0 or -1 (no room, or failed). */
int rs_post_ctrl(struct rs *rs, enum rs_op op, const void *payload, uint32_t len);
/* Room for one more Send (the credit rule above) and n more work requests. */
bool rs_can_post(const struct rs *rs, uint32_t n);
/* Send what waits: FIN, announcements, credits the peer wants back. */
void rs_send_pending(struct rs *rs);
bool rs_readable(const struct rs *rs);	/* rrecv would not wait */
bool rs_writable(const struct rs *rs);	/* ... rsend would not */
/* ... post a Send (or an RDMA Write to raddr, rkey) of a slot's len bytes: 0 or -1. */
int rs_post_slot(struct rs *rs, uint32_t slot, uint32_t len, uint64_t raddr, uint32_t rkey);
/* ... a free send slot's memory (rs_writable said there is one). */
uint8_t *rs_slot(struct rs *rs, uint32_t *slot);

/* riomap.c */
int rs_iomap_taken(struct rs *rs, const void *payload, uint32_t len);
void rs_iomap_announce(struct rs *rs);
void rs_iomap_free(struct rs *rs);

#endif /* IWX_RDMACM_RSOCKET_H */
