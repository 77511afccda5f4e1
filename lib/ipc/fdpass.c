// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/fdpass.h"

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

ssize_t iwx_fd_recv_all(int sock, int *fds, unsigned *nfds, const struct iovec *iov, int iovcnt)
{
	/*
	 * Room for as many as a message can carry, and no more (so fds has room for all):
	 * the kernel would drop those that do not fit itself, in this thread, and that last
	 * close may block as well.
	 */
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(IWX_FDPASS_ANY * sizeof(int))];
	} ctl;
	struct msghdr msg = {
		.msg_iov = (struct iovec *)iov, .msg_iovlen = iovcnt, .msg_control = ctl.b,
		.msg_controllen = CMSG_LEN(IWX_FDPASS_ANY * sizeof(int)),
	};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

	*nfds = 0;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			memcpy(&fds[(*nfds)++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	return msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC) ? -EMSGSIZE : n;
}

ssize_t iwx_fd_recv(int sock, int *fds, unsigned *nfds, const struct iovec *iov, int iovcnt)
{
	int all[IWX_FDPASS_ANY];
	unsigned n;
	ssize_t r = iwx_fd_recv_all(sock, all, &n, iov, iovcnt);
	unsigned keep = r < 0 ? 0 : n < *nfds ? n : *nfds;

	for (unsigned i = 0; i < n; i++) {
		if (i < keep)
			fds[i] = all[i];
		else
			close(all[i]);
	}
	*nfds = keep;
	return r;
}
