// SPDX-License-Identifier: MIT
/* The set-up over kernel TCP: connect/accept, and the MPA frames on the stream (RFC 5044 §7.1). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "proto/mpa.h"

#include "conn_tcp.h"
#include "llp_tcp.h"
#include "util/clock.h"
#include "util/container_of.h"

#define HDR_LEN		sizeof(struct iwx_mpa_rr)
#define DRAIN_MAX	64	/* reads after a reject, before the close */

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ? -errno : 0;
}

/* CONNECTING: 0 when connected, -EAGAIN while the handshake is under way, or why it failed. */
static struct iwx_conn_tcp *tcp_of(struct iwx_conn *c)
{
	return container_of(c, struct iwx_conn_tcp, conn);
}

int iwx_conn_tcp_fd(const struct iwx_conn *c)
{
	return container_of(c, const struct iwx_conn_tcp, conn)->fd;
}

static int tcp_ready(struct iwx_conn *c)
{
	struct iwx_conn_tcp *t = tcp_of(c);
	struct pollfd pfd = { .fd = t->fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int soerr = 0, n;

	n = poll(&pfd, 1, 0);
	if (n < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (n == 0)
		return -EAGAIN;
	if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		return -errno;
	return -soerr;
}

/* Send what is left of the frame in out: 0 once all is out, -EAGAIN, or -errno. */
static int tcp_send(struct iwx_conn *c)
{
	ssize_t n;

	while (c->out_done < c->out_len) {
		n = send(tcp_of(c)->fd, c->out + c->out_done, c->out_len - c->out_done,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -EAGAIN;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		c->out_done += n;
	}
	return 0;
}

/*
 * Read the MPA frame into in, never a byte past it: what follows is the first FPDU
 * and belongs to the engine. Returns 0 with *p once complete, -EAGAIN, -ECONNRESET
 * when the peer closed, or -EPROTO for a malformed frame.
 */
static int tcp_recv(struct iwx_conn *c, bool want_reply, struct iwx_mpa_rr_params *p)
{
	struct iwx_conn_tcp *t = tcp_of(c);
	size_t want = HDR_LEN;
	struct iwx_mpa_rr hdr;
	ssize_t n, r;

	for (;;) {
		if (t->in_done >= HDR_LEN) {
			/* header complete and valid (pd_len <= 512): now exactly the private data */
			memcpy(&hdr, t->in, sizeof(hdr));
			want = HDR_LEN + ntohs(hdr.pd_len);
		}
		n = recv(t->fd, t->in + t->in_done, want - t->in_done, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -EAGAIN;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		t->in_done += n;
		/* decode at every step: a wrong key fails as soon as its bytes are in */
		r = iwx_mpa_rr_decode(t->in, t->in_done, want_reply, p);
		if (r < 0)
			return iwx_conn_bad_frame(c, IWX_MPA_EC_INVALID_RR);
		if (r > 0) {
			t->in_done = 0;
			return 0;
		}
	}
}

/* REQUEST_IN: the stream is not read until the Reply is out. */
static int tcp_idle(struct iwx_conn *c)
{
	(void)c;
	return 0;
}

static int tcp_established(struct iwx_conn *c)
{
	struct iwx_conn_tcp *t = tcp_of(c);
	socklen_t len;
	int mss = 0;

	len = sizeof(mss);
	if (getsockopt(t->fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) == 0 && mss > 0)
		c->emss = mss;
	len = sizeof(c->local);
	getsockname(t->fd, (struct sockaddr *)&c->local, &len);
	len = sizeof(c->peer);
	getpeername(t->fd, (struct sockaddr *)&c->peer, &len);
	return 0;
}

static void tcp_reject(struct iwx_conn *c)
{
	struct iwx_conn_tcp *t = tcp_of(c);

	if (send(t->fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT) != c->out_len)
		return;
	/* no RST for the bytes left unread, which could overtake the Reply */
	shutdown(t->fd, SHUT_WR);
	for (int i = 0; i < DRAIN_MAX && recv(t->fd, t->in, sizeof(t->in), MSG_DONTWAIT) > 0; i++)
		;
}

static void tcp_close(struct iwx_conn *c)
{
	struct iwx_conn_tcp *t = tcp_of(c);

	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

static struct iwx_llp *tcp_llp_new(struct iwx_conn *c)
{
	struct iwx_conn_tcp *t = tcp_of(c);
	int fd = t->fd;

	t->fd = -1;		/* the lower layer's, closed with it */
	return iwx_llp_tcp_new(fd, &c->agreed, c->emss, c->opts.zerocopy_min);
}

static const struct iwx_conn_ops tcp_ops = {
	.name = "TCP",
	.ready = tcp_ready,
	.send = tcp_send,
	.recv = tcp_recv,
	.idle = tcp_idle,
	.established = tcp_established,
	.reject = tcp_reject,
	.finish = tcp_close,
	.close = tcp_close,
	.llp_new = tcp_llp_new,
};

/* Both sides: the options, and no socket yet. */
static int tcp_init(struct iwx_conn_tcp *t, const struct iwx_conn_opts *o, bool initiator)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = iwx_conn_init(&t->conn, &tcp_ops, o, initiator);
	t->fd = -1;
	return err;
}

int iwx_conn_tcp_connect(struct iwx_conn_tcp *t, const struct sockaddr *peer, socklen_t len,
			 const struct iwx_conn_opts *o)
{
	struct iwx_conn *c = &t->conn;
	int err = tcp_init(t, o, true);

	if (err)
		return iwx_conn_fail(c, err);
	if (len > sizeof(c->peer) || (peer->sa_family != AF_INET && peer->sa_family != AF_INET6))
		return iwx_conn_fail(c, -EINVAL);
	memcpy(&c->peer, peer, len);
	t->fd = socket(peer->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		return iwx_conn_fail(c, -errno);
	err = set_nodelay(t->fd);
	if (err)
		return iwx_conn_fail(c, err);
	if (connect(t->fd, peer, len) == 0) {
		iwx_conn_enter(c, IWX_CONN_SEND_REQUEST);
		return 0;
	}
	if (errno != EINPROGRESS)
		return iwx_conn_fail(c, -errno);
	iwx_conn_enter(c, IWX_CONN_CONNECTING);
	return 0;
}

int iwx_conn_tcp_listen(const struct sockaddr *addr, socklen_t len, int backlog)
{
	int fd, one = 1, err;

	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, addr, len) || listen(fd, backlog)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int iwx_conn_tcp_accept(struct iwx_conn_tcp *t, int lfd, const struct iwx_conn_opts *o)
{
	struct iwx_conn *c = &t->conn;
	socklen_t len = sizeof(c->peer);
	int err = tcp_init(t, o, false);

	if (err)
		return iwx_conn_fail(c, err);
	t->fd = accept4(lfd, (struct sockaddr *)&c->peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (t->fd < 0)
		return iwx_conn_fail(c, -errno);
	err = set_nodelay(t->fd);
	if (err)
		return iwx_conn_fail(c, err);
	iwx_conn_enter(c, IWX_CONN_WAIT_REQUEST);
	return 0;
}

short iwx_conn_tcp_events(const struct iwx_conn *c)
{
	switch (c->state) {
	case IWX_CONN_CONNECTING:
	case IWX_CONN_SEND_REQUEST:
	case IWX_CONN_SEND_REPLY:
		return POLLOUT;
	case IWX_CONN_WAIT_REPLY:
	case IWX_CONN_WAIT_REQUEST:
		return POLLIN;
	default:
		return 0;
	}
}

int iwx_conn_tcp_wait(struct iwx_conn *c)
{
	struct pollfd pfd;
	uint64_t now;
	int n;

	for (;;) {
		now = iwx_now_ms();
		if (iwx_conn_step(c, now) == 0)
			break;
		pfd.fd = iwx_conn_tcp_fd(c);
		pfd.events = iwx_conn_tcp_events(c);
		/* step returned -EAGAIN, so now < deadline */
		n = poll(&pfd, 1, c->deadline_ms - now > INT_MAX ? INT_MAX : (int)(c->deadline_ms - now));
		if (n < 0 && errno != EINTR) {
			iwx_conn_fail(c, -errno);
			break;
		}
	}
	return c->state == IWX_CONN_FAILED || c->state == IWX_CONN_REJECTED ? c->error : 0;
}
