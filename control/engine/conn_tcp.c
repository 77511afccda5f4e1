// SPDX-License-Identifier: MIT
/* Establishing an iWARP stream: TCP connect/accept, then the MPA set-up exchange (RFC 5044 §7.1). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/mpa.h"

#include "conn_tcp.h"
#include "util/clock.h"

#define DEFAULT_TIMEOUT_MS	10000
#define HDR_LEN			sizeof(struct iwx_mpa_rr)

static void conn_init(struct iwx_conn *c, const struct iwx_conn_opts *o, bool initiator)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->initiator = initiator;
	c->state = IWX_CONN_FAILED;
	c->opts = *o;
	if (c->opts.timeout_ms <= 0)
		c->opts.timeout_ms = DEFAULT_TIMEOUT_MS;
}

/* Enter a state that waits on the socket: each wait gets its own deadline. */
static void enter(struct iwx_conn *c, enum iwx_conn_state s, short events)
{
	c->state = s;
	c->events = events;
	c->deadline_ms = iwx_now_ms() + (uint64_t)c->opts.timeout_ms;
}

/* Enter a final state (FAILED or REJECTED): the socket is closed. */
static void finish(struct iwx_conn *c, enum iwx_conn_state s, int err)
{
	iwx_conn_close(c);
	c->state = s;
	c->error = err;
	c->events = 0;
}

static int set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ? -errno : 0;
}

/* Start reading one MPA frame into buf: its 20-byte header first. */
static void start_read(struct iwx_conn *c, enum iwx_conn_state s)
{
	c->buf_len = HDR_LEN;
	c->buf_done = 0;
	enter(c, s, POLLIN);
}

/* Start sending the len-byte frame already encoded in buf. */
static void start_send(struct iwx_conn *c, enum iwx_conn_state s, size_t len)
{
	c->buf_len = len;
	c->buf_done = 0;
	enter(c, s, POLLOUT);
}

int iwx_conn_connect(struct iwx_conn *c, const struct sockaddr *peer, socklen_t len,
		     const struct iwx_conn_opts *o)
{
	ssize_t n;
	int err;

	conn_init(c, o, true);
	if (len > sizeof(c->peer) || (peer->sa_family != AF_INET && peer->sa_family != AF_INET6)) {
		err = -EINVAL;
		goto out;
	}
	memcpy(&c->peer, peer, len);
	/* Encode the Request now: o->pd need not outlive this call. */
	iwx_mpa_setup_request(&o->local, o->pd, o->pd_len, &c->request);
	n = iwx_mpa_rr_encode(c->buf, sizeof(c->buf), &c->request);
	if (n < 0) {
		err = n == -ENOSPC ? -EINVAL : (int)n;
		goto out;
	}
	c->request.pd = NULL;
	c->request.pd_len = 0;
	c->opts.pd = NULL;
	c->opts.pd_len = 0;
	c->buf_len = n;

	c->fd = socket(peer->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		goto out;
	}
	err = set_nodelay(c->fd);
	if (err)
		goto out;
	if (connect(c->fd, peer, len) == 0) {
		start_send(c, IWX_CONN_SEND_REQUEST, n);
		return 0;
	}
	if (errno != EINPROGRESS) {
		err = -errno;
		goto out;
	}
	enter(c, IWX_CONN_CONNECTING, POLLOUT);
	return 0;
out:
	finish(c, IWX_CONN_FAILED, err);
	return err;
}

int iwx_conn_listen(const struct sockaddr *addr, socklen_t len, int backlog)
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

int iwx_conn_accept(struct iwx_conn *c, int lfd, const struct iwx_conn_opts *o)
{
	socklen_t len = sizeof(c->peer);
	int err;

	conn_init(c, o, false);
	c->fd = accept4(lfd, (struct sockaddr *)&c->peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c->fd < 0) {
		err = -errno;
		goto out;
	}
	err = set_nodelay(c->fd);
	if (err)
		goto out;
	start_read(c, IWX_CONN_WAIT_REQUEST);
	return 0;
out:
	finish(c, IWX_CONN_FAILED, err);
	return err;
}

/* 0 when connected, -EAGAIN while the handshake is under way, or why it failed. */
static int do_connect(struct iwx_conn *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int soerr = 0, n;

	n = poll(&pfd, 1, 0);
	if (n < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (n == 0)
		return -EAGAIN;
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		return -errno;
	return -soerr;
}

/* Send what is left of the frame in buf: 0 once all is out, -EAGAIN, or -errno. */
static int do_send(struct iwx_conn *c)
{
	ssize_t n;

	while (c->buf_done < c->buf_len) {
		n = send(c->fd, c->buf + c->buf_done, c->buf_len - c->buf_done,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -EAGAIN;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		c->buf_done += n;
	}
	return 0;
}

/*
 * Read the MPA frame into buf, never a byte past it: what follows is the first FPDU
 * and belongs to the engine. Returns 0 with *p once complete, -EAGAIN, -ECONNRESET
 * when the peer closed, or -EPROTO for a malformed frame.
 */
static int do_read(struct iwx_conn *c, bool want_reply, struct iwx_mpa_rr_params *p)
{
	struct iwx_mpa_rr hdr;
	ssize_t n, r;

	for (;;) {
		n = recv(c->fd, c->buf + c->buf_done, c->buf_len - c->buf_done, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -EAGAIN;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		c->buf_done += n;
		/* decode at every step: a wrong key fails as soon as its bytes are in */
		r = iwx_mpa_rr_decode(c->buf, c->buf_done, want_reply, p);
		if (r < 0)
			return -EPROTO;
		if (r > 0)
			return 0;
		if (c->buf_done == HDR_LEN) {
			/* header complete and valid (pd_len <= 512): now exactly the private data */
			memcpy(&hdr, c->buf, sizeof(hdr));
			c->buf_len = HDR_LEN + ntohs(hdr.pd_len);
		}
	}
}

static void keep_peer_pd(struct iwx_conn *c, struct iwx_mpa_rr_params *p)
{
	memcpy(c->peer_pd, p->pd, p->pd_len);
	c->peer_pd_len = p->pd_len;
	p->pd = c->peer_pd;
}

static void established(struct iwx_conn *c)
{
	socklen_t len;
	int mss = 0;

	len = sizeof(mss);
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) == 0 && mss > 0)
		c->emss = mss;
	len = sizeof(c->local);
	getsockname(c->fd, (struct sockaddr *)&c->local, &len);
	len = sizeof(c->peer);
	getpeername(c->fd, (struct sockaddr *)&c->peer, &len);
	c->state = IWX_CONN_ESTABLISHED;
	c->events = 0;
}

/* Passive side, malformed Request: best effort, a Reply with R sent once without waiting. */
static void reject_invalid(struct iwx_conn *c)
{
	struct iwx_mpa_rr_params rep = {
		.reply = true, .reject = true, .rev = c->opts.local.rev,
	};
	ssize_t n;
	int i;

	c->cause = IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR);
	if (rep.rev != IWX_MPA_REV1 && rep.rev != IWX_MPA_REV2)
		rep.rev = IWX_MPA_REV2;
	n = iwx_mpa_rr_encode(c->buf, sizeof(c->buf), &rep);
	if (n > 0 && send(c->fd, c->buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) == n) {
		/* no RST for the bytes left unread, which could overtake the Reply */
		shutdown(c->fd, SHUT_WR);
		for (i = 0; i < 64 && recv(c->fd, c->buf, sizeof(c->buf), MSG_DONTWAIT) > 0; i++)
			;
	}
}

/* One move: 1 when it entered a state with socket work to try at once, else 0 or -errno. */
static int step_once(struct iwx_conn *c)
{
	struct iwx_mpa_rr_params rep;
	int err;

	switch (c->state) {
	case IWX_CONN_CONNECTING:
		err = do_connect(c);
		if (err)
			return err;
		start_send(c, IWX_CONN_SEND_REQUEST, c->buf_len);
		return 1;
	case IWX_CONN_SEND_REQUEST:
		err = do_send(c);
		if (err)
			return err;
		start_read(c, IWX_CONN_WAIT_REPLY);
		return 1;
	case IWX_CONN_WAIT_REPLY:
		err = do_read(c, true, &rep);
		if (err) {
			if (err == -EPROTO)
				c->cause = IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR);
			return err;
		}
		keep_peer_pd(c, &rep);
		err = iwx_mpa_setup_accept(&c->opts.local, &c->request, &rep, &c->agreed, &c->cause);
		if (err == -ECONNREFUSED) {
			finish(c, IWX_CONN_REJECTED, err);
			return 0;
		}
		if (err)
			return err;
		established(c);
		return 0;
	case IWX_CONN_WAIT_REQUEST:
		err = do_read(c, false, &c->request);
		if (err) {
			if (err == -EPROTO)
				reject_invalid(c);
			return err;
		}
		keep_peer_pd(c, &c->request);
		c->state = IWX_CONN_REQUEST_IN;
		c->events = 0;
		return 0;
	case IWX_CONN_SEND_REPLY:
		err = do_send(c);
		if (err)
			return err;
		if (c->buf[offsetof(struct iwx_mpa_rr, flags)] & IWX_MPA_FLAG_REJECT)
			finish(c, IWX_CONN_REJECTED, c->error);
		else
			established(c);
		return 0;
	default:
		return 0;
	}
}

int iwx_conn_step(struct iwx_conn *c, uint64_t now_ms)
{
	int err;

	while ((err = step_once(c)) == 1)
		;
	if (err == -EAGAIN && now_ms >= c->deadline_ms)
		err = -ETIMEDOUT;
	if (err == -EAGAIN)
		return -EAGAIN;
	if (err)
		finish(c, IWX_CONN_FAILED, err);
	return 0;
}

int iwx_conn_answer(struct iwx_conn *c, const struct iwx_conn_opts *o, bool reject)
{
	struct iwx_mpa_rr_params rep;
	struct iwx_mpa_agreed agreed;
	struct iwx_term_cause cause = { 0 };
	int ret;
	ssize_t n;

	if (c->state != IWX_CONN_REQUEST_IN)
		return -EINVAL;
	ret = iwx_mpa_setup_reply(&o->local, &c->request, o->pd, o->pd_len, reject,
				  &rep, &agreed, &cause);
	/* the Request is no longer needed in buf: its private data is in peer_pd */
	n = iwx_mpa_rr_encode(c->buf, sizeof(c->buf), &rep);
	if (n < 0)
		return n == -ENOSPC ? -EINVAL : (int)n;
	c->opts = *o;
	if (c->opts.timeout_ms <= 0)
		c->opts.timeout_ms = DEFAULT_TIMEOUT_MS;
	c->opts.pd = NULL;
	c->opts.pd_len = 0;
	if (!rep.reject)
		c->agreed = agreed;
	if (ret) {
		/* no matching RTR type (RFC 6581 §6): the Reply is a reject */
		c->cause = cause;
		c->error = ret;
	}
	start_send(c, IWX_CONN_SEND_REPLY, n);
	iwx_conn_step(c, iwx_now_ms());
	if (c->state == IWX_CONN_FAILED)
		return c->error;
	return ret;
}

int iwx_conn_wait(struct iwx_conn *c)
{
	struct pollfd pfd;
	uint64_t now;
	int n;

	for (;;) {
		now = iwx_now_ms();
		if (iwx_conn_step(c, now) == 0)
			break;
		pfd.fd = c->fd;
		pfd.events = c->events;
		/* step returned -EAGAIN, so now < deadline */
		n = poll(&pfd, 1, c->deadline_ms - now > INT_MAX ? INT_MAX : (int)(c->deadline_ms - now));
		if (n < 0 && errno != EINTR) {
			finish(c, IWX_CONN_FAILED, -errno);
			break;
		}
	}
	return c->state == IWX_CONN_FAILED || c->state == IWX_CONN_REJECTED ? c->error : 0;
}

void iwx_conn_close(struct iwx_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
