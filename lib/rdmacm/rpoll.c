// SPDX-License-Identifier: MIT
/*
 * rpoll and rselect over rsockets and ordinary descriptors together (rping waits on its
 * event channel's fd with rpoll). An rsocket's state says its events; its fd, readable
 * whenever that may have changed, is what the wait polls, beside the ordinary ones.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "cm.h"
#include "rsocket.h"
#include "util/clock.h"

#define RPOLL_STACK	64

/* What poll would say of the rsocket. */
static short rs_revents(int fd, short events)
{
	struct rs *rs = rs_get_locked(fd);
	short r = 0;

	if (!rs)
		return POLLNVAL;
	switch (rs->state) {
	case RS_LISTEN:
		r = rs->nreq ? POLLIN : 0;
		break;
	case RS_OPEN:
		r = (rs_readable(rs) ? POLLIN : 0) | (rs_writable(rs) ? POLLOUT : 0);
		break;
	case RS_CLOSED:	/* the hang-up once what came before it is read: rstream -T a fails on it */
		r = POLLIN | (rs->nready ? 0 : POLLHUP);
		break;
	case RS_ERROR:	/* a failed connect included: rstream reads SO_ERROR after it */
		r = POLLIN | POLLOUT | POLLERR | POLLHUP;
		break;
	case RS_IDLE:
		r = POLLOUT | POLLHUP;	/* as Linux for a socket never connected */
		break;
	default:	/* connecting: what has arrived may be read already */
		r = rs_readable(rs) ? POLLIN : 0;
		break;
	}
	rs_unlock(rs);
	return r & (events | POLLERR | POLLHUP | POLLNVAL);
}

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd stack[RPOLL_STACK], *p = stack;
	uint64_t end = iwx_now_ms() + (timeout > 0 ? timeout : 0);
	int ret;

	if (nfds > RPOLL_STACK) {
		p = calloc(nfds, sizeof(*p));
		if (!p)
			return -1;
	}
	for (;;) {
		int ready = 0, left = timeout < 0 ? -1 : (int)(end - iwx_now_ms());

		for (nfds_t i = 0; i < nfds; i++) {
			p[i] = fds[i];
			fds[i].revents = 0;
			if (!rs_lookup(fds[i].fd))
				continue;
			p[i].events = POLLIN;
			fds[i].revents = rs_revents(fds[i].fd, fds[i].events);
			ready += !!fds[i].revents;
		}
		ret = poll(p, nfds, ready || (timeout >= 0 && left <= 0) ? 0 : left);
		if (ret < 0)
			break;
		ret = ready;
		for (nfds_t i = 0; i < nfds; i++) {
			if (rs_lookup(fds[i].fd))
				continue;
			fds[i].revents = p[i].revents;
			ret += !!p[i].revents;
		}
		/* else an rsocket's fd woke: look at its state again */
		if (ret || (timeout >= 0 && iwx_now_ms() >= end))
			break;
	}
	if (p != stack)
		free(p);
	return ret;
}

int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{
	struct pollfd *p;
	nfds_t n = 0;
	int ret;

	if (nfds < 0 || nfds > FD_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	p = calloc(nfds ? nfds : 1, sizeof(*p));
	if (!p)
		return -1;
	for (int fd = 0; fd < nfds; fd++) {
		short ev = (readfds && FD_ISSET(fd, readfds) ? POLLIN : 0) |
			   (writefds && FD_ISSET(fd, writefds) ? POLLOUT : 0) |
			   (exceptfds && FD_ISSET(fd, exceptfds) ? POLLPRI : 0);

		if (ev)
			p[n++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	ret = rpoll(p, n, timeout ? (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000) : -1);
	if (ret < 0)
		goto out;
	if (readfds)
		FD_ZERO(readfds);
	if (writefds)
		FD_ZERO(writefds);
	if (exceptfds)
		FD_ZERO(exceptfds);
	ret = 0;
	for (nfds_t i = 0; i < n; i++) {
		/* select reports a hang-up or an error as readable, as Linux's */
		if (readfds && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    (p[i].events & POLLIN)) {
			FD_SET(p[i].fd, readfds);
			ret++;
		}
		if (writefds && (p[i].revents & (POLLOUT | POLLERR)) && (p[i].events & POLLOUT)) {
			FD_SET(p[i].fd, writefds);
			ret++;
		}
		if (exceptfds && (p[i].revents & POLLPRI)) {
			FD_SET(p[i].fd, exceptfds);
			ret++;
		}
	}
out:
	free(p);
	return ret;
}
