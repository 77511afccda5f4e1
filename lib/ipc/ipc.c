// SPDX-License-Identifier: MIT
/* The messages between libiwx, iwx and iwxd (ipc/ipc.h): framing, the socket, its path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc/fdpass.h"
#include "ipc/ipc.h"

int iwx_ipc_send(int sock, const struct iwx_ipc_hdr *hdr, const void *body, const int *fds,
		 unsigned nfds)
{
	const struct iovec iov[2] = {
		{ (void *)hdr, sizeof(*hdr) }, { (void *)body, hdr->len },
	};
	size_t total = sizeof(*hdr) + hdr->len;
	ssize_t n;

	if (total > IWX_IPC_MAX)
		return -EMSGSIZE;
	n = iwx_fd_send(sock, fds, nfds, iov, hdr->len ? 2 : 1);
	if (n < 0)
		return n;
	return (size_t)n == total ? 0 : -EPROTO;	/* SOCK_SEQPACKET: all or nothing */
}

/* What iwx_fd_recv(_all) said of a message received into hdr and its body. */
static int framed(const struct iwx_ipc_hdr *hdr, ssize_t n)
{
	if (n == 0)
		return -ECONNRESET;
	if (n == -EMSGSIZE)
		return -EPROTO;	/* longer than any message of ours the caller expects */
	if (n < 0)
		return n;
	if ((size_t)n < sizeof(*hdr) || hdr->len != n - sizeof(*hdr))
		return -EPROTO;
	return hdr->len;
}

int iwx_ipc_recv(int sock, struct iwx_ipc_hdr *hdr, void *body, size_t cap, int *fds,
		 unsigned *nfds)
{
	const struct iovec iov[2] = { { hdr, sizeof(*hdr) }, { body, cap } };
	unsigned none = 0;
	int n;

	if (!nfds)
		nfds = &none;
	n = framed(hdr, iwx_fd_recv(sock, fds, nfds, iov, cap ? 2 : 1));
	if (n < 0) {
		for (unsigned i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
	}
	return n;
}

int iwx_ipc_recv_all(int sock, struct iwx_ipc_hdr *hdr, void *body, size_t cap, int *fds,
		     unsigned *nfds)
{
	const struct iovec iov[2] = { { hdr, sizeof(*hdr) }, { body, cap } };

	return framed(hdr, iwx_fd_recv_all(sock, fds, nfds, iov, cap ? 2 : 1));
}

const char *iwx_ipc_socket_path(const char *given)
{
	const char *env = getenv("IWX_SOCKET");

	if (given && *given)
		return given;
	return env && *env ? env : IWX_DEFAULT_SOCKET;
}

int iwx_ipc_connect(const char *path, int timeout_s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_s };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* SO_SNDTIMEO bounds connect() too */
	if ((timeout_s > 0 && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
			       setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
