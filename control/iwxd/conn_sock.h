/* SPDX-License-Identifier: MIT */
/*
 * A connection's socket as iwxd's loop holds it, whatever the transport under it: a TCP
 * descriptor on epoll, or an SCTP association whose watch usrsctp runs whenever it changes
 * (sctp_io.h). The set-up (conn.h), then the engine, owns the socket and closes it; this is
 * what iwxd watches and asks of it meanwhile, so that cm.c and vqp.c need no branch on
 * the transport to do so.
 */
#ifndef IWXD_CONN_SOCK_H
#define IWXD_CONN_SOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"

struct iwxd;
struct iwx_conn;
struct socket;
struct user;

struct conn_sock {
	struct watch	w;		/* w.fd: TCP's descriptor, else -1 */
	struct socket	*so;		/* SCTP's association, else NULL */
	uint32_t	events;		/* TCP: what epoll watches for; 0: not watched */
};

/* None yet; fn runs when the socket is ready. */
void conn_sock_init(struct conn_sock *s, void (*fn)(struct iwxd *d, struct watch *w, uint32_t events));

/* The socket of c, just established (before its lower layer takes it); over SCTP it holds the stack. */
void conn_sock_take(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c, bool sctp);

/*
 * Start watching it (EPOLLIN). A failure leaves it unwatched: 0 or -errno. Over SCTP
 * usrsctp says when anything changed, whatever was asked.
 */
int conn_sock_watch(struct iwxd *d, struct conn_sock *s);

/* TCP: wait for events only (0: not at all, so that not even a hang-up wakes us). 0 or -errno. */
int conn_sock_interest(struct iwxd *d, struct conn_sock *s, uint32_t events);

/*
 * A set-up's socket, after each of its steps: taken and watched once the set-up has one
 * (over SCTP it holds the stack), for what its state waits for (TCP; none while the
 * application decides or once established); forgotten untouched once the set-up closed
 * it. 0, or -errno when it could not be watched.
 */
int conn_sock_follow(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c, bool sctp);
/* The set-up c goes, or hands its socket on: unwatched (what c closed, untouched), released. */
void conn_sock_let_go(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c, bool sctp);

/* A reset (TCP's RST, SCTP's ABORT) rather than a graceful end when it closes. */
void conn_sock_abort_on_close(struct conn_sock *s);

/* The engine is about to close it: unwatched, and the stack released. */
void conn_sock_drop(struct iwxd *d, struct conn_sock *s);
/* ... or it closed already (its lower layer failed): forgotten, never touched again. */
void conn_sock_forget(struct iwxd *d, struct conn_sock *s);

/* It closes with a Terminate or FIN behind: TCP lingers for the peer (linger.c); SCTP's SHUTDOWN waits itself. */
void conn_sock_linger(struct iwxd *d, struct user *u, const struct conn_sock *s);

/* Is it a TCP stream (the fast path follows only those; siw's first FPDU hold is TCP's)? */
static inline bool conn_sock_tcp(const struct conn_sock *s)
{
	return !s->so;
}

#endif /* IWXD_CONN_SOCK_H */
