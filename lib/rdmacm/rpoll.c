// SPDX-License-Identifier: MIT
/*
 * rsockets are not part of the drop-in; rpoll is, because rping waits on its event
 * channel's fd with it. On descriptors that are not rsockets, rdma-core's rpoll is poll.
 */
#include <poll.h>

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout);

int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}
