/* SPDX-License-Identifier: MIT */
/*
 * Establishing an iWARP stream: a kernel TCP connection (IPv4 or IPv6) and the MPA
 * set-up exchange on it (RFC 5044 §7.1, RFC 6581), with time-outs, private data and
 * reject. Non-blocking: the daemon's event loop drives many set-ups at once, so one
 * slow or silent peer holds up nobody. The result is a connected socket in full
 * operation and what both sides agreed.
 */
#ifndef IWX_CONN_TCP_H
#define IWX_CONN_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/mpa_setup.h"

struct iwx_conn_opts {
	struct iwx_mpa_local	local;		/* revision, CRC, markers, IRD/ORD, P2P/RTR */
	const uint8_t		*pd;		/* private data for the Request or Reply */
	uint16_t		pd_len;
	int			timeout_ms;	/* TCP connect, and the wait for each MPA frame; 0: 10 s */
};

enum iwx_conn_state {
	IWX_CONN_CONNECTING,	/* active: TCP handshake under way */
	IWX_CONN_SEND_REQUEST,	/* active: MPA Request going out */
	IWX_CONN_WAIT_REPLY,	/* active: reading the Reply */
	IWX_CONN_WAIT_REQUEST,	/* passive: reading the Request */
	IWX_CONN_REQUEST_IN,	/* passive: Request read, the application must answer */
	IWX_CONN_SEND_REPLY,	/* passive: Reply going out */
	IWX_CONN_ESTABLISHED,	/* full operation */
	IWX_CONN_REJECTED,	/* a Reply with R was sent or received; the socket is closed */
	IWX_CONN_FAILED,	/* error holds why; the socket is closed */
};

struct iwx_conn {
	enum iwx_conn_state	state;
	int			fd;		/* TCP socket, non-blocking, TCP_NODELAY */
	bool			initiator;
	short			events;		/* POLLIN/POLLOUT to wait for before the next step */
	uint64_t		deadline_ms;	/* iwx_now_ms() (util/clock.h) by which the current wait ends */
	int			error;		/* -errno when FAILED: -ETIMEDOUT, -ECONNREFUSED, -EPROTO, ... */
	struct iwx_term_cause	cause;		/* MPA error behind an -EPROTO */
	struct iwx_mpa_rr_params request;	/* the Request, once sent or received */
	struct iwx_mpa_agreed	agreed;		/* once ESTABLISHED */
	uint32_t		emss;		/* effective MSS (TCP_MAXSEG), once ESTABLISHED */
	struct sockaddr_storage	local, peer;
	uint8_t			peer_pd[IWX_MPA_MAX_PRIVDATA];	/* the peer's private data */
	uint16_t		peer_pd_len;
	/* private to conn.c */
	struct iwx_conn_opts	opts;
	uint8_t			buf[sizeof(struct iwx_mpa_rr) + IWX_MPA_MAX_PRIVDATA];
	uint16_t		buf_len, buf_done;
};

/* Active side: start connecting to peer. 0 (then step) or -errno at once. */
int iwx_conn_connect(struct iwx_conn *c, const struct sockaddr *peer, socklen_t len,
		     const struct iwx_conn_opts *o);

/* Passive side: a listening socket (non-blocking, SO_REUSEADDR) on addr. Returns fd or -errno. */
int iwx_conn_listen(const struct sockaddr *addr, socklen_t len, int backlog);

/* Passive side: accept one TCP connection from lfd and start reading its Request. */
int iwx_conn_accept(struct iwx_conn *c, int lfd, const struct iwx_conn_opts *o);

/*
 * Make what progress the socket allows without blocking, and check the deadline
 * against now_ms. Returns 0 when the state needs no more socket work (REQUEST_IN,
 * ESTABLISHED, REJECTED, FAILED), -EAGAIN when it waits on c->fd for c->events.
 */
int iwx_conn_step(struct iwx_conn *c, uint64_t now_ms);

/*
 * Passive side, in REQUEST_IN: accept (reject = false) with o's private data and
 * limits, or reject with o->pd. Then step until ESTABLISHED or REJECTED. Returns 0
 * or -errno (-EPROTO and REJECTED when no RTR type matches; cause says so).
 */
int iwx_conn_answer(struct iwx_conn *c, const struct iwx_conn_opts *o, bool reject);

/* Step with poll() until the state needs no socket work; for tools and tests. */
int iwx_conn_wait(struct iwx_conn *c);

/* Close the socket, whatever the state. */
void iwx_conn_close(struct iwx_conn *c);

#endif /* IWX_CONN_TCP_H */
