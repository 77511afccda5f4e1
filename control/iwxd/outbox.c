// SPDX-License-Identifier: MIT
/*
 * What iwxd says to a client (replies to its requests, events), in order: what the
 * socket has no room for waits in the client's queue, its descriptors duplicated, until
 * it has. A client that lets too much wait (iwxd --max-queued) is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/fdpass.h"

#include "daemon.h"
#include "outbox.h"

/* A message waiting for room in the client's socket. */
struct outmsg {
	struct iwx_ipc_hdr	h;
	int			fds[IWX_FDPASS_MAX];
	unsigned		nfds;
	struct outmsg		*next;
	uint8_t			body[];
};

static int enqueue(struct client *c, const struct iwx_ipc_hdr *h, const void *body,
		   const int *fds, unsigned nfds)
{
	struct outmsg *m = malloc(sizeof(*m) + h->len);

	if (!m)
		return -ENOMEM;
	m->h = *h;
	if (h->len)	/* a reply without a body may come without one (NULL) */
		memcpy(m->body, body, h->len);
	m->nfds = 0;
	m->next = NULL;
	for (unsigned i = 0; i < nfds; i++) {
		m->fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 0);
		if (m->fds[i] < 0)
			break;
		m->nfds++;
	}
	*c->out_tail = m;
	c->out_tail = &m->next;
	c->out_n++;
	if (c->user)	/* NULL: refused, waiting for its answer */
		c->user->queued++;
	return m->nfds == nfds ? 0 : -EMFILE;
}

static void outmsg_free(struct outmsg *m)
{
	for (unsigned i = 0; i < m->nfds; i++)
		close(m->fds[i]);
	free(m);
}

/* Send what waits, in order, while the socket takes it. */
void outbox_flush(struct iwxd *d, struct client *c)
{
	while (c->out && !c->dead) {
		struct outmsg *m = c->out;
		int err = iwx_ipc_send(c->sock_w.fd, &m->h, m->body, m->fds, m->nfds);

		if (err == -EAGAIN)
			return;
		if (err) {
			log_warn("client %u: %s: closing it", c->id, strerror(-err));
			c->dead = true;
			return;
		}
		c->out = m->next;
		if (!c->out)
			c->out_tail = &c->out;
		c->out_n--;
		if (c->user)
			c->user->queued--;
		outmsg_free(m);
	}
	watch_mod(&d->loop, &c->sock_w, EPOLLIN);
}

void outbox_send(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *h, const void *body,
		  const int *fds, unsigned nfds)
{
	int err = -EAGAIN;

	if (c->dead)
		return;
	if (!c->out)
		err = iwx_ipc_send(c->sock_w.fd, h, body, fds, nfds);
	if (err == -EAGAIN) {
		if (c->out_n >= d->o.max[LIMIT_QUEUED]) {
			limit_warn(d, c, LIMIT_QUEUED, "closing it");
			c->dead = true;
			return;
		}
		if (c->user && !user_exempt(c) &&
		    c->user->queued >= limit_of_user(d, LIMIT_QUEUED)) {
			limit_warn_user(d, c, LIMIT_QUEUED, "closing this client");
			c->dead = true;
			return;
		}
		err = enqueue(c, h, body, fds, nfds);
		if (!err && c->out_n == 1)
			watch_mod(&d->loop, &c->sock_w, EPOLLIN | EPOLLOUT);
	}
	if (err) {
		log_warn("client %u: cannot send (%s): closing it", c->id, strerror(-err));
		c->dead = true;
	}
}

void outbox_reply(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *req, int status,
		   const void *body, uint32_t len, const int *fds, unsigned nfds)
{
	struct iwx_ipc_hdr h = { .op = req->op, .seq = req->seq, .status = status, .len = len };

	outbox_send(d, c, &h, body, fds, nfds);
}

void outbox_refuse(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *req, int err)
{
	struct iwx_ipc_hdr h = { .op = req->op, .seq = req->seq, .status = err };
	size_t len = strnlen(c->why, sizeof(c->why) - 1);

	if (len) {
		c->why[len] = 0;
		h.flags = IWX_IPC_F_WHY;
		h.len = (uint32_t)len + 1;
	}
	outbox_send(d, c, &h, len ? c->why : NULL, NULL, 0);
}

void outbox_event(struct iwxd *d, struct client *c, const struct iwx_ipc_event *ev)
{
	struct iwx_ipc_hdr h = { .op = IWX_IPC_EVENT, .len = sizeof(*ev) };

	outbox_send(d, c, &h, ev, NULL, 0);
}

void outbox_event_of_conn(struct iwx_ipc_event *ev, const struct iwx_conn *conn)
{
	memset(ev, 0, sizeof(*ev));
	ev->mpa_rev = conn->agreed.mode.rev;
	ev->crc = conn->agreed.mode.crc;
	ev->markers_rx = conn->agreed.mode.markers_rx;
	ev->markers_tx = conn->agreed.mode.markers_tx;
	ev->ird = conn->agreed.ird;
	ev->ord = conn->agreed.ord;
	ev->rfc7306 = conn->agreed.rdmap_ext;
	ev->emss = conn->emss;
	ev->local_addr = conn->local;
	ev->peer_addr = conn->peer;
}

void outbox_init(struct client *c)
{
	c->out_tail = &c->out;
}

void outbox_clear(struct client *c)
{
	while (c->out) {
		struct outmsg *m = c->out;

		c->out = m->next;
		outmsg_free(m);
	}
	outbox_init(c);
	if (c->user)
		c->user->queued -= c->out_n;
	c->out_n = 0;
}
