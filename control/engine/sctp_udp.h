/* SPDX-License-Identifier: MIT */
/*
 * SCTP packets in UDP datagrams (RFC 6951's encapsulation): the paths of sctp.h on one
 * kernel UDP socket. A datagram from a peer not seen before makes a path for it (up to
 * a bound), so an association can start from either side; each path sends to its peer's
 * address. Where AF_XDP cannot run, this is how DDP over SCTP travels.
 */
#ifndef IWX_SCTP_UDP_H
#define IWX_SCTP_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "sctp.h"

struct iwx_sctp_udp;

/* A path to one peer: its address, and the socket it goes through. */
struct iwx_sctp_udp_path {
	struct iwx_sctp_path	path;		/* first: what usrsctp knows the peer by */
	struct iwx_sctp_udp	*udp;
	struct sockaddr_storage	peer;
	socklen_t		peer_len;
	struct iwx_sctp_udp_path *next;
};

/*
 * A non-blocking UDP socket bound to addr (port 0: any, IWX_SCTP_PORT the standard one),
 * taking paths for at most max_paths peers. NULL with errno.
 */
struct iwx_sctp_udp *iwx_sctp_udp_open(const struct sockaddr *addr, socklen_t len,
				       unsigned max_paths);
void iwx_sctp_udp_close(struct iwx_sctp_udp *u);

/* Its descriptor, to poll for input; and the address it is bound to. */
int iwx_sctp_udp_fd(const struct iwx_sctp_udp *u);
int iwx_sctp_udp_local(const struct iwx_sctp_udp *u, struct sockaddr_storage *addr);

/* The path to peer, made (and registered with the stack) if new. NULL with errno. */
struct iwx_sctp_path *iwx_sctp_udp_path(struct iwx_sctp_udp *u, const struct sockaddr *peer,
					socklen_t len);

/*
 * Feed the stack what has arrived, at most budget datagrams. Returns how many, or
 * -errno. Datagrams from peers beyond max_paths are dropped (counted).
 */
int iwx_sctp_udp_input(struct iwx_sctp_udp *u, int budget);

/* Datagrams dropped: no room for another path, or a send the kernel refused. */
unsigned long iwx_sctp_udp_dropped(const struct iwx_sctp_udp *u);

#endif /* IWX_SCTP_UDP_H */
