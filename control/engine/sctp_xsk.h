/* SPDX-License-Identifier: MIT */
/*
 * SCTP in UDP through an AF_XDP socket: the same datagrams as sctp_udp.h's, on the same
 * port, taken off one interface queue before the kernel's UDP sees them (an XDP program
 * redirects them to the socket's xskmap slot) and sent by writing whole frames.
 *
 * A path of the UDP socket learns a route through an XSK from the peer's first frame that
 * arrives on it: our MAC and address as the frame was sent to, the peer's as it came
 * from. From then on the path sends through the XSK; until then, and wherever no XSK
 * runs, through the UDP socket. The wire is the same either way, so an iwx host with
 * AF_XDP and one without talk without knowing it. IPv4 and IPv6, without IP options or
 * extension headers; frames of up to 1500 bytes (larger packets take the UDP socket).
 */
#ifndef IWX_SCTP_XSK_H
#define IWX_SCTP_XSK_H

#include <stdint.h>

#include "sctp_udp.h"

struct iwx_sctp_xsk;

/* Its counters. */
struct iwx_sctp_xsk_stats {
	uint64_t	rx, tx;		/* SCTP packets in and out */
	uint64_t	rx_dropped;	/* frames that were not SCTP in UDP to our port, or no path */
	uint64_t	tx_dropped;	/* no frame free to send in: SCTP sends it again */
};

/*
 * An XSK on queue of ifname (copy mode), registered in xskmap_fd at index queue, whose
 * SCTP packets are u's: u's paths, u's port. NULL with errno.
 */
struct iwx_sctp_xsk *iwx_sctp_xsk_open(struct iwx_sctp_udp *u, const char *ifname, uint32_t queue,
				       int xskmap_fd);
/* Close it; the paths that sent through it go back to the UDP socket. */
void iwx_sctp_xsk_close(struct iwx_sctp_xsk *x);

/* Its descriptor, to poll for input. */
int iwx_sctp_xsk_fd(const struct iwx_sctp_xsk *x);

/* Feed the stack what has arrived, at most budget frames. Returns how many. */
int iwx_sctp_xsk_input(struct iwx_sctp_xsk *x, int budget);

/*
 * Queue one SCTP packet along route; 0, or -errno (the caller may use the UDP socket).
 * The kernel is told of queued frames every so many, and by iwx_sctp_xsk_flush, which
 * the caller's loop runs before it may sleep.
 */
int iwx_sctp_xsk_send(const struct iwx_sctp_xsk_route *route, const void *pkt, size_t len);
void iwx_sctp_xsk_flush(struct iwx_sctp_xsk *x);

const struct iwx_sctp_xsk_stats *iwx_sctp_xsk_stats(const struct iwx_sctp_xsk *x);

#endif /* IWX_SCTP_XSK_H */
