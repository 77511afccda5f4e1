// SPDX-License-Identifier: MIT
/* Framing of the messages between libiwx and iwxd (iwx/ipc.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iwx/fdpass.h>
#include <iwx/ipc.h>

int iwx_ipc_send(int sock, const struct iwx_ipc_hdr *hdr, const void *body, const int *fds,
		 unsigned nfds)
{
	size_t total = sizeof(*hdr) + hdr->len;
	uint8_t small[2048], *buf = small;
	ssize_t n;

	if (total > IWX_IPC_MAX)
		return -EMSGSIZE;
	if (total > sizeof(small) && !(buf = malloc(total)))
		return -ENOMEM;
	memcpy(buf, hdr, sizeof(*hdr));
	if (hdr->len)
		memcpy(buf + sizeof(*hdr), body, hdr->len);
	n = iwx_fd_send(sock, fds, nfds, buf, total);
	if (buf != small)
		free(buf);
	if (n < 0)
		return n;
	return (size_t)n == total ? 0 : -EPROTO;	/* SOCK_SEQPACKET: all or nothing */
}

int iwx_ipc_recv(int sock, struct iwx_ipc_hdr *hdr, void *body, size_t cap, int *fds,
		 unsigned *nfds)
{
	uint8_t *buf = malloc(IWX_IPC_MAX);
	unsigned none = 0;
	ssize_t n;
	int ret;

	if (!nfds)
		nfds = &none;
	if (!buf)
		return -ENOMEM;
	n = iwx_fd_recv(sock, fds, nfds, buf, IWX_IPC_MAX);
	if (n <= 0) {
		ret = n == 0 ? -ECONNRESET : (int)n;
		goto out;
	}
	memcpy(hdr, buf, (size_t)n < sizeof(*hdr) ? (size_t)n : sizeof(*hdr));
	if ((size_t)n < sizeof(*hdr) || hdr->len != n - sizeof(*hdr) || hdr->len > cap) {
		for (unsigned i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		ret = -EPROTO;
		goto out;
	}
	if (hdr->len)
		memcpy(body, buf + sizeof(*hdr), hdr->len);
	ret = hdr->len;
out:
	free(buf);
	return ret;
}
