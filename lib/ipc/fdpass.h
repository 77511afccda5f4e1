/* SPDX-License-Identifier: MIT */
/*
 * Passing file descriptors over a Unix socket (SCM_RIGHTS) together with a message:
 * how iwxd hands a client its arena, doorbells and rings. On a SOCK_STREAM socket the
 * descriptors arrive with the first byte of the message; SOCK_SEQPACKET keeps message
 * and descriptors together. The message is gathered from, or scattered to, iovcnt
 * pieces (a header and a body, say), so nobody copies it into one buffer first.
 */
#ifndef IWX_FDPASS_H
#define IWX_FDPASS_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#define IWX_FDPASS_MAX	4	/* descriptors one of our messages carries at most */
#define IWX_FDPASS_ANY	253	/* ... and any message: the kernel's SCM_MAX_FD (net/scm.h) */

/*
 * Send the iovcnt pieces of iov (at least one byte in all) on the Unix socket sock,
 * with the nfds (<= IWX_FDPASS_MAX) descriptors of fds attached. Returns the bytes
 * sent (a stream socket may take fewer; the descriptors went with the first) or
 * -errno. Never raises SIGPIPE.
 */
ssize_t iwx_fd_send(int sock, const int *fds, unsigned nfds, const struct iovec *iov, int iovcnt);

/*
 * Receive into the iovcnt pieces of iov, and the descriptors sent with the message:
 * up to *nfds go to fds (close-on-exec), *nfds says how many came. Returns the bytes
 * received (0 at end of stream) or -errno: -EMSGSIZE when a datagram did not fit (no
 * descriptor is kept). Descriptors beyond *nfds are closed.
 */
ssize_t iwx_fd_recv(int sock, int *fds, unsigned *nfds, const struct iovec *iov, int iovcnt);

/*
 * The same, but every descriptor that came is the caller's, whatever the result: *nfds
 * of them in fds, which has room for IWX_FDPASS_ANY. For a receiver that must not close
 * another process's descriptors itself, as the last close of one may block (a TCP
 * socket lingering, socket(7)).
 */
ssize_t iwx_fd_recv_all(int sock, int *fds, unsigned *nfds, const struct iovec *iov,
			int iovcnt);

#endif /* IWX_FDPASS_H */
