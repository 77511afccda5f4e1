/* SPDX-License-Identifier: MIT */
/*
 * A connection's socket as iwxd's loop holds it, whatever the transport under it
 * (transport.h): a descriptor on epoll (TCP's), or a handle whose watch the transport's
 * own stack runs whenever it changes (an SCTP association: sctp_io.h). The set-up
 * (conn.h), then the engine, owns the socket and closes it; this is what iwxd watches
 * and asks of it meanwhile, so that cm.c and vqp.c need no branch on the transport.
 */
#ifndef IWXD_CONN_SOCK_H
#define IWXD_CONN_SOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"
#include "transport.h"

struct iwxd;
struct iwx_conn;
struct user;

struct conn_sock {
	struct watch	w;		/* w.fd: a descriptor epoll watches, else -1 */
	void		*h;		/* else a handle its transport's stack watches (SCTP's association) */
	uint32_t	events;		/* a descriptor: what epoll watches for; 0: not watched */
	const struct transport *t;	/* whose socket it is (NULL: none yet) */
};

/* None yet, over t (NULL: the transport is not known yet); fn runs when the socket is ready. */
void conn_sock_init(struct conn_sock *s, const struct transport *t,
		    void (*fn)(struct iwxd *d, struct watch *w, uint32_t events));

/* The socket of c over t, just established (before its lower layer takes it). */
void conn_sock_take(struct iwxd *d, struct conn_sock *s, const struct transport *t, const struct iwx_conn *c);

/*
 * Start watching it (EPOLLIN). A failure leaves it unwatched: 0 or -errno. A transport's
 * own stack says when anything changed, whatever was asked.
 */
int conn_sock_watch(struct iwxd *d, struct conn_sock *s);

/* A descriptor: wait for events only (0: not at all, so that not even a hang-up wakes us). 0 or -errno. */
int conn_sock_interest(struct iwxd *d, struct conn_sock *s, uint32_t events);

/*
 * A set-up's socket, after each of its steps: taken and watched once the set-up has one,
 * for what its state waits for (none while the application decides or once established);
 * forgotten untouched once the set-up closed it. 0, or -errno when it could not be watched.
 */
int conn_sock_follow(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c);
/* The set-up c goes, or hands its socket on: unwatched (what c closed, untouched), released. */
void conn_sock_let_go(struct iwxd *d, struct conn_sock *s, const struct iwx_conn *c);

/* A reset (TCP's RST, SCTP's ABORT) rather than a graceful end when it closes. */
void conn_sock_abort_on_close(struct conn_sock *s);

/* The engine is about to close it: unwatched, and the stack released. */
void conn_sock_drop(struct iwxd *d, struct conn_sock *s);
/* ... or it closed already (its lower layer failed): forgotten, never touched again. */
void conn_sock_forget(struct iwxd *d, struct conn_sock *s);

/* It closes with a Terminate or FIN behind: TCP lingers for the peer (linger.c); SCTP's SHUTDOWN waits itself. */
void conn_sock_linger(struct iwxd *d, struct user *u, const struct conn_sock *s);

#endif /* IWXD_CONN_SOCK_H */
