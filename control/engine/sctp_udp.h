/* SPDX-License-Identifier: MIT */
/*
 * SCTP packets in UDP datagrams (RFC 6951's encapsulation): the paths of sctp.h on one
 * kernel UDP socket, each sending to its peer's address. A peer not seen before is
 * answered from its datagram's address (usrsctp knows it by a token derived from that
 * address with a key of the socket's, sctp.h), and gets a path, up to a bound, only once
 * it has returned a valid State Cookie: a blind spoofer can make none. A path made for a
 * set-up of ours is that set-up's until it ends; if the peer never sent a datagram on it,
 * it goes then (iwx_sctp_udp_put), else, as every other, once nothing has gone through
 * it for a while (iwx_sctp_udp_expire). Where AF_XDP cannot run, this is
 * how DDP over SCTP travels.
 */
#ifndef IWX_SCTP_UDP_H
#define IWX_SCTP_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sctp.h"

struct iwx_sctp_udp;
struct iwx_sctp_xsk;

/* A way to the peer that skips the UDP socket: frames through an XSK (sctp_xsk.h). */
struct iwx_sctp_xsk_route {
	struct iwx_sctp_xsk	*xsk;		/* NULL: none (yet) */
	uint8_t			mac[2][6];	/* Ethernet: ours [0], the peer's (or its router's) [1] */
	uint8_t			ip[2][16];	/* ours, the peer's: IPv4 in the first 4 bytes */
	bool			v6;
	uint16_t		port[2];	/* UDP, network order: ours, the peer's */
};

/* A path to one peer: its address, and the socket it goes through. */
struct iwx_sctp_udp_path {
	struct iwx_sctp_path	path;		/* first: what usrsctp knows the peer by */
	struct iwx_sctp_udp	*udp;
	struct sockaddr_storage	peer;
	socklen_t		peer_len;
	struct iwx_sctp_xsk_route route;	/* preferred while it has an XSK */
	uint64_t		used_ms;	/* a packet went either way then */
	unsigned		setups;		/* set-ups of ours that hold it (iwx_sctp_udp_path) */
	bool			heard;		/* the peer sent on it: an association may need it */
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

/*
 * The path to peer, made (and registered with the stack) if new, held for an association
 * this side starts until iwx_sctp_udp_put. NULL with errno (ENOSPC: max_paths reached).
 */
struct iwx_sctp_path *iwx_sctp_udp_path(struct iwx_sctp_udp *u, const struct sockaddr *peer,
					socklen_t len);

/*
 * The set-up that holds path ended, established or not: the path goes at once if no
 * other set-up holds it and the peer never sent on it (a silent address's: no association
 * of any side can need it), else when idle.
 */
void iwx_sctp_udp_put(struct iwx_sctp_path *path);

/*
 * A datagram from peer, its SCTP packet pkt[0, n) (the stack's until this returns), fed
 * to the stack: the socket's own, and those that came through an XSK, via the way back
 * through it, which the peer's path takes (a known peer's before its packet goes in, so
 * that the answers take it too).
 */
void iwx_sctp_udp_arrived(struct iwx_sctp_udp *u, const struct sockaddr *peer, socklen_t len,
			  void *pkt, size_t n, const struct iwx_sctp_xsk_route *via);

/* peer as the socket sees an IPv4 address and port (network order): mapped, on [::]. */
socklen_t iwx_sctp_udp_v4(const struct iwx_sctp_udp *u, uint32_t ip, uint16_t port,
			  struct sockaddr_storage *peer);

/* Free the paths no set-up holds and nothing went through for idle_ms: their associations are gone. */
void iwx_sctp_udp_expire(struct iwx_sctp_udp *u, uint64_t now_ms, uint64_t idle_ms);

/* How many paths it has. */
unsigned iwx_sctp_udp_paths(const struct iwx_sctp_udp *u);

/*
 * Every path that sends through xsk: its route, for the XSK to forget it (fn returns
 * nothing; paths stay).
 */
void iwx_sctp_udp_each_route(struct iwx_sctp_udp *u, void (*fn)(struct iwx_sctp_xsk_route *r,
								  void *arg), void *arg);

/* The port the socket is bound to, in network order; its address family. */
uint16_t iwx_sctp_udp_port(const struct iwx_sctp_udp *u);
int iwx_sctp_udp_family(const struct iwx_sctp_udp *u);

/*
 * Feed the stack what has arrived, at most budget datagrams. Returns how many, or
 * -errno. Datagrams from peers beyond max_paths are dropped (counted).
 */
int iwx_sctp_udp_input(struct iwx_sctp_udp *u, int budget);

/* Datagrams dropped: no room for another path, or a send the kernel refused. */
unsigned long iwx_sctp_udp_dropped(const struct iwx_sctp_udp *u);

#endif /* IWX_SCTP_UDP_H */
