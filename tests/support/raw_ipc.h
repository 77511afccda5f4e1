/* SPDX-License-Identifier: MIT */
/* Requests to iwxd on a raw IPC socket, as a client that does not use libiwx makes them. */
#ifndef IWX_RAW_IPC_H
#define IWX_RAW_IPC_H

#include <stddef.h>
#include <stdint.h>

/*
 * One request and its reply; events before it are skipped. The reply's status (0 or
 * iwxd's -errno), or the socket's -errno, or -EPROTO for a reply to another request.
 * Its body goes to rep (cap bytes). Of its descriptors, the first *nfds go to fds and
 * the rest are closed (fds NULL: all); *nfds (if not NULL) then says how many came.
 */
int raw_call(int sock, uint16_t op, const void *req, uint32_t len, void *rep, size_t cap,
	     int *fds, unsigned *nfds);
/* Why iwxd refused the last raw_call (IWX_IPC_F_WHY), or "". */
const char *raw_why(void);

#endif /* IWX_RAW_IPC_H */
