// SPDX-License-Identifier: MIT
/*
 * iwxd over SCTP, for DDP over SCTP: usrsctp's associations, watched through sctp_io.c,
 * each holding the stack while it lives (transport.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <usrsctp.h>

#include "conn_sctp.h"
#include "daemon.h"
#include "util/container_of.h"
#include "sctp_io.h"

static int sctp_usable(const struct iwxd *d)
{
	return sctp_io_on(d) ? 0 : -EPROTONOSUPPORT;	/* iwxd --sctp-port 0 */
}

static struct iwx_conn_sctp *sctp_of(struct pconn *p)
{
	return container_of(p->conn, struct iwx_conn_sctp, conn);
}

/* An active set-up holds a path to its peer (one of iwxd's 1024) until it goes. */
static int sctp_connect(struct iwxd *d, struct pconn *p, const struct iwx_ipc_connect *req)
{
	struct client *c = p->owner;
	int err = 0;

	if (!user_exempt(c) && c->user->sctp_setups >= d->o.max[LIMIT_SCTP_USER])
		err = user_refuse(d, c, LIMIT_SCTP_USER, -ENOSPC);
	if (!err && !(p->path = sctp_io_path(d, &req->addr)))
		err = -errno;
	c->user->sctp_setups += p->path != NULL;
	if (!err)
		err = iwx_conn_sctp_connect(sctp_of(p), p->path, cm_port_of(&req->addr), &p->opts);
	p->conn->peer = req->addr;
	return err;
}

static void sctp_setup_free(struct iwxd *d, struct pconn *p)
{
	(void)d;
	if (p->path) {
		sctp_io_path_put(p->path);	/* after the close, which may still send on it */
		p->owner->user->sctp_setups--;
	}
}

/*
 * A listener on req's port (the address is the UDP socket's, any): port 0 takes the
 * first free one of the dynamic range (RFC 6335 §6).
 */
static int sctp_listen(struct iwxd *d, struct listener *l, const struct iwx_ipc_listen *req)
{
	uint16_t port = cm_port_of(&req->addr);

	for (uint32_t p = port ? port : 49152; p <= (port ? port : 65535U) && !l->h; p++) {
		if (!port && cm_port_allowed(d, l->owner, p))
			continue;
		l->h = iwx_conn_sctp_listen(p, (int)req->backlog);
		if (!l->h && (port || errno != EADDRINUSE))
			return -errno;
		port = l->h ? p : 0;
	}
	if (!l->h)
		return -EADDRINUSE;
	l->addr = req->addr;
	if (l->addr.ss_family == AF_INET)
		((struct sockaddr_in *)&l->addr)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&l->addr)->sin6_port = htons(port);
	sctp_io_watch(d, l->h, &l->w);
	sctp_io_hold(d);
	return 0;
}

static int sctp_accept(struct iwxd *d, struct listener *l, struct pconn *p)
{
	(void)d;
	return iwx_conn_sctp_accept(sctp_of(p), l->h, &p->opts);
}

static void sctp_listen_close(struct iwxd *d, struct listener *l)
{
	sctp_io_unwatch(d, l->h, &l->w);
	usrsctp_close(l->h);
	sctp_io_release(d);
}

/* A passive set-up's addresses, as the request names them. */
static void sctp_names(struct pconn *p)
{
	struct iwx_conn *c = p->conn;
	struct socket *so = iwx_conn_sctp_socket(c);

	if (p->listener && !c->peer.ss_family && so && !sctp_io_peer(so, &c->peer))
		c->local = p->listener->addr;
}

static void sctp_sock_of(const struct iwx_conn *c, int *fd, void **h)
{
	*fd = -1;
	*h = iwx_conn_sctp_socket(c);
}

static int sctp_watch(struct iwxd *d, struct conn_sock *s)
{
	sctp_io_watch(d, s->h, &s->w);
	return 0;
}

static void sctp_unwatch(struct iwxd *d, struct conn_sock *s)
{
	sctp_io_unwatch(d, s->h, &s->w);
}

static void sctp_abort_on_close(struct conn_sock *s)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	usrsctp_setsockopt(s->h, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

static bool sctp_via_xsk(const struct conn_sock *s)
{
	return sctp_io_via_xsk(s->h);
}

const struct transport transport_sctp = {
	.name = "SCTP",
	.id = IWX_TRANSPORT_SCTP,
	.conn_size = sizeof(struct iwx_conn_sctp),
	.usable = sctp_usable,
	.connect = sctp_connect,
	.listen = sctp_listen,
	.accept = sctp_accept,
	.listen_close = sctp_listen_close,
	.names = sctp_names,
	.setup_free = sctp_setup_free,
	.sock_of = sctp_sock_of,
	.hold = sctp_io_hold,
	.release = sctp_io_release,
	.watch = sctp_watch,
	.unwatch = sctp_unwatch,
	.abort_on_close = sctp_abort_on_close,
	.via_xsk = sctp_via_xsk,
};
