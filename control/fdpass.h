/* SPDX-License-Identifier: MIT */
/*
 * Passing a file descriptor over a Unix socket (SCM_RIGHTS) together with a message:
 * how iwxd hands a client its arena. On a SOCK_STREAM socket the descriptor arrives with
 * the first byte of the message; SOCK_SEQPACKET keeps message and descriptor together.
 */
#ifndef IWX_FDPASS_H
#define IWX_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Send len (>= 1) bytes of buf on the Unix socket sock, with fd attached unless fd < 0.
 * Returns the bytes sent (a stream socket may take fewer; the fd went with the first)
 * or -errno. Never raises SIGPIPE.
 */
ssize_t iwx_fd_send(int sock, int fd, const void *buf, size_t len);

/*
 * Receive up to cap bytes into buf and the descriptor sent with them, if any: *fd gets
 * it (close-on-exec) or -1. Returns the bytes received (0 at end of stream) or -errno:
 * -EMSGSIZE when a datagram or its descriptors did not fit (none is kept).
 * Descriptors beyond the first are closed.
 */
ssize_t iwx_fd_recv(int sock, int *fd, void *buf, size_t cap);

#endif /* IWX_FDPASS_H */
