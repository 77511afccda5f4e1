/* SPDX-License-Identifier: MIT */
/*
 * The set-up over kernel TCP (IPv4 or IPv6): connect or accept, then the MPA frames on
 * the stream, read exactly (never a byte of the first FPDU behind them). The result is
 * a connected socket in full operation, TCP_NODELAY.
 */
#ifndef IWX_CONN_TCP_H
#define IWX_CONN_TCP_H

#include <stdint.h>
#include <sys/socket.h>

#include "conn.h"
#include "proto/wire.h"

/* A set-up over TCP: iwx_conn_step and the rest of conn.h take &conn. */
struct iwx_conn_tcp {
	struct iwx_conn	conn;
	int		fd;		/* non-blocking; -1 once closed or taken by the lower layer */
	uint8_t		in[sizeof(struct iwx_mpa_rr) + IWX_MPA_MAX_PRIVDATA];	/* the frame read */
	uint16_t	in_done;
};

/* Active side: start connecting to peer. 0 (then step) or -errno at once. */
int iwx_conn_tcp_connect(struct iwx_conn_tcp *t, const struct sockaddr *peer, socklen_t len,
			 const struct iwx_conn_opts *o);

/* Passive side: a listening socket (non-blocking, SO_REUSEADDR) on addr. Returns fd or -errno. */
int iwx_conn_tcp_listen(const struct sockaddr *addr, socklen_t len, int backlog);

/* Passive side: accept one TCP connection from lfd and start reading its Request. */
int iwx_conn_tcp_accept(struct iwx_conn_tcp *t, int lfd, const struct iwx_conn_opts *o);

/* The socket of c, a struct iwx_conn_tcp's set-up: -1 once closed or taken by the lower layer. */
int iwx_conn_tcp_fd(const struct iwx_conn *c);

/* What to poll the socket for before the next step (POLLIN, POLLOUT; 0: no socket work). */
short iwx_conn_tcp_events(const struct iwx_conn *c);

/* Step with poll() until the state needs no socket work; for tools and tests. */
int iwx_conn_tcp_wait(struct iwx_conn *c);

#endif /* IWX_CONN_TCP_H */
