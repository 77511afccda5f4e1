// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iwx/fdpass.h>

#define MAX_FDS	8	/* room to take, and close, a few unexpected ones */

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

ssize_t iwx_fd_send(int sock, const int *fds, unsigned nfds, const struct iovec *iov, int iovcnt)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(IWX_FDPASS_MAX * sizeof(int))];
	} ctl;
	struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = iovcnt };
	ssize_t n;

	if (!iov_total(iov, iovcnt) || nfds > IWX_FDPASS_MAX)
		return -EINVAL;	/* descriptors need at least one byte to travel with */
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.b;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(&ctl.h), fds, nfds * sizeof(int));
	}
	n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

static void close_all(int *fds, unsigned *n)
{
	for (unsigned i = 0; i < *n; i++)
		close(fds[i]);
	*n = 0;
}

ssize_t iwx_fd_recv(int sock, int *fds, unsigned *nfds, const struct iovec *iov, int iovcnt)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(MAX_FDS * sizeof(int))];
	} ctl;
	struct msghdr msg = {
		.msg_iov = (struct iovec *)iov, .msg_iovlen = iovcnt, .msg_control = ctl.b,
		.msg_controllen = sizeof(ctl.b),
	};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	unsigned want = *nfds;

	*nfds = 0;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < want)
				fds[(*nfds)++] = got;
			else
				close(got);
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		close_all(fds, nfds);
		return -EMSGSIZE;
	}
	return n;
}
