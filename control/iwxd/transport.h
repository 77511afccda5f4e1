/* SPDX-License-Identifier: MIT */
/*
 * What iwxd does with each transport under MPA's set-up and DDP: one row a transport
 * (transport_tcp.c, transport_sctp.c), indexed by IWX_TRANSPORT_*, as rdma-core's
 * verbs_context_ops. cm.c, conn_sock.c, vqp.c and the fast path ask the row and never
 * name a transport: a third is new files and one row.
 *
 * A transport's socket is a descriptor that epoll watches (w.fd) or a handle the
 * transport's own stack watches (h); conn_sock.h keeps either.
 */
#ifndef IWXD_TRANSPORT_H
#define IWXD_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwx/verbs.h>

struct conn_sock;
struct iwx_conn;
struct iwx_ipc_connect;
struct iwx_ipc_listen;
struct iwxd;
struct listener;
struct pconn;
struct user;

struct transport {
	const char	*name;
	uint8_t		id;		/* IWX_TRANSPORT_*: its events and listings say it */
	/* the fast path's programs parse TCP segments: they follow its connections */
	bool		fast_path;
	/* siw's first FPDU: held by an Initiator until the Responder's (vqp.c) */
	bool		first_fpdu_hold;
	/*
	 * its sockets say readable for as long as they hold unread bytes (epoll, level-
	 * triggered): a queue pair's service that only a post asked for sends without
	 * reading first (vqp.c), and what it leaves unread is reported again
	 */
	bool		rx_level;
	/* a set-up over it: the size of its struct, whose first member is the struct iwx_conn */
	size_t		conn_size;

	/* 0, or -EPROTONOSUPPORT when this iwxd runs without it (NULL: always usable) */
	int	(*usable)(const struct iwxd *d);

	/* Set-up. p->conn started towards req->addr (p->opts filled): 0 or -errno. */
	int	(*connect)(struct iwxd *d, struct pconn *p, const struct iwx_ipc_connect *req);
	/* l listens on req->addr; l->addr names it, the port the stack chose included. */
	int	(*listen)(struct iwxd *d, struct listener *l, const struct iwx_ipc_listen *req);
	/* p->conn takes the next connection waiting on l: 0, -EAGAIN (none), -errno */
	int	(*accept)(struct iwxd *d, struct listener *l, struct pconn *p);
	void	(*listen_close)(struct iwxd *d, struct listener *l);
	/* p's set-up stepped: what the transport learns of its addresses meanwhile (NULL: none) */
	void	(*names)(struct pconn *p);
	/* p goes, its set-up closed: what connect held for it (NULL: nothing) */
	void	(*setup_free)(struct iwxd *d, struct pconn *p);

	/* The socket. c's now (*fd -1, *h NULL: none, closed or handed on). */
	void	(*sock_of)(const struct iwx_conn *c, int *fd, void **h);
	/* s took its socket, or let it go: what the transport's stack keeps for it */
	void	(*hold)(struct iwxd *d);
	void	(*release)(struct iwxd *d);
	/* Watch s (EPOLLIN, or whenever the stack says it changed): 0 or -errno. */
	int	(*watch)(struct iwxd *d, struct conn_sock *s);
	void	(*unwatch)(struct iwxd *d, struct conn_sock *s);
	/* What the set-up c waits for, as epoll events (0: no socket work) */
	uint32_t (*setup_events)(const struct iwx_conn *c);
	void	(*abort_on_close)(struct conn_sock *s);
	/* s closes with a Terminate or FIN behind: what waits for the peer's end (NULL: the stack's close) */
	void	(*linger)(struct iwxd *d, struct user *u, const struct conn_sock *s);
	/* Does s's traffic pass through AF_XDP sockets (iwx attach --sctp)? NULL: never. */
	bool	(*via_xsk)(const struct conn_sock *s);
};

#define IWX_TRANSPORT_N		2

extern const struct transport transport_tcp, transport_sctp;

/* IWX_TRANSPORT_* as a client names it: its row, or NULL (out of range). */
const struct transport *transport_by_id(uint32_t id);

#endif /* IWXD_TRANSPORT_H */
