// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

#define MAX_FDS	8	/* room to take, and close, a few unexpected ones */

ssize_t iwx_fd_send(int sock, int fd, const void *buf, size_t len)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (!len)
		return -EINVAL;	/* a descriptor needs at least one byte to travel with */
	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.b;
		msg.msg_controllen = sizeof(ctl.b);
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&ctl.h), &fd, sizeof(int));
	}
	n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

ssize_t iwx_fd_recv(int sock, int *fd, void *buf, size_t cap)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b),
	};
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

	*fd = -1;
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = got;
			else
				close(got);
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EMSGSIZE;
	}
	return n;
}
