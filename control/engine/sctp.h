/* SPDX-License-Identifier: MIT */
/*
 * User-space SCTP for DDP over SCTP: usrsctp in AF_CONN mode, without threads of its
 * own, its packets carried by paths that the caller owns (a UDP socket, an AF_XDP
 * socket, a test's queue). One stack per process: the caller feeds it the packets
 * that arrive (iwx_sctp_input) and calls iwx_sctp_tick at least every
 * IWX_SCTP_TICK_MS; usrsctp's callbacks run inside those calls and inside calls
 * on its sockets, never on another thread.
 */
#ifndef IWX_SCTP_H
#define IWX_SCTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IWX_SCTP_TICK_MS	10	/* usrsctp's clock advances only when told */
#define IWX_SCTP_PATH_MTU	1460	/* SCTP packets of 1472 bytes: in UDP over IPv4, 1500 */
#define IWX_SCTP_PORT		9899	/* RFC 6951's UDP port for encapsulated SCTP */

struct socket;

/* Where one association's packets go: the address usrsctp knows the peer by. */
struct iwx_sctp_path {
	/* Send one SCTP packet (whole, checksummed); 0 or -errno, a loss SCTP recovers. */
	int	(*send)(struct iwx_sctp_path *path, const void *pkt, size_t len);
	/* Place tagged payload from the packets that arrive on it (sctp_place.h)? */
	bool	place;
};

/* The stack's own counters. */
struct iwx_sctp_stats {
	uint64_t	bad_crc;	/* packets dropped for their CRC32c */
	uint64_t	placed_chunks;	/* DATA chunks whose payload went from the packet to memory */
	uint64_t	placed_bytes;
};

/* Start the stack (once; later calls only count). 0 or -errno. */
int iwx_sctp_init(void);
/*
 * Stop it once every socket is closed and the last user calls this. Sockets whose
 * associations do not end within a second keep it up, for the next iwx_sctp_init.
 */
void iwx_sctp_finish(void);

/*
 * Let usrsctp reach a peer over path, and know it by path (AF_CONN sconn_addr); and no
 * longer (after iwx_sctp_finish: nothing to do, the path may simply be freed).
 */
void iwx_sctp_path_add(struct iwx_sctp_path *path);
void iwx_sctp_path_del(struct iwx_sctp_path *path);

/*
 * A packet that arrived on path, in a buffer that is the stack's until this returns: its
 * CRC32c is checked here (usrsctp's own check is off), and where path->place, the
 * tagged payload of known associations placed from it (sctp_place.h).
 */
void iwx_sctp_input(struct iwx_sctp_path *path, void *pkt, size_t len);

const struct iwx_sctp_stats *iwx_sctp_stats(void);

/* Run usrsctp's timers for the time passed since the last call. */
void iwx_sctp_tick(void);

/*
 * A non-blocking one-to-one SCTP socket set up as DDP needs it: the Adaptation Layer
 * Indication DDP_TAG_PLACE, no fragmentation, IWX_SCTP_PATH_MTU without path MTU
 * discovery, first-come first-served stream scheduling (TSNs in the order messages
 * are sent), no burst limit, no Nagle, each message's TSN on receive, and the
 * notifications the lower layer reads. NULL with errno.
 */
struct socket *iwx_sctp_socket(void);

#endif /* IWX_SCTP_H */
