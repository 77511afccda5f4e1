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

/*
 * Where one peer's packets go. usrsctp knows the peer by the path's token (its AF_CONN
 * sconn_addr), never dereferenced: the path's own address, or one the carrier derives
 * from the peer's address, so that a peer can be answered before it has a path
 * (iwx_sctp_input_unknown) and a path can go while usrsctp still names it.
 */
struct iwx_sctp_path {
	/* Send one SCTP packet (whole, checksummed); 0 or -errno, a loss SCTP recovers. */
	int	(*send)(struct iwx_sctp_path *path, const void *pkt, size_t len);
	/* Place tagged payload from the packets that arrive on it (sctp_place.h)? */
	bool	place;
	/* Its associations' path MTU where it is less than IWX_SCTP_PATH_MTU (IPv6: 1440); 0 */
	uint16_t mtu;
	void	*token;			/* set by iwx_sctp_path_add */
	struct iwx_sctp_path *hnext;	/* sctp.c's */
};

/* The stack's own counters. */
struct iwx_sctp_stats {
	uint64_t	bad_crc;	/* packets dropped for their CRC32c */
	uint64_t	placed_chunks;	/* DATA chunks whose payload went from the packet to memory */
	uint64_t	placed_bytes;
	uint64_t	no_path;	/* packets to a token whose path is gone, dropped */
};

/* Start the stack (once; later calls only count). 0 or -errno. */
int iwx_sctp_init(void);
/*
 * Stop it once every socket is closed and the last user calls this. Sockets whose
 * associations do not end within a second keep it up, for the next iwx_sctp_init.
 */
void iwx_sctp_finish(void);

/*
 * Let usrsctp reach a peer over path, and know it by token (NULL: the path's address);
 * and no longer: usrsctp's packets to the token are then dropped, so the path may be
 * freed at once, whatever associations still name it.
 */
void iwx_sctp_path_add(struct iwx_sctp_path *path, void *token);
void iwx_sctp_path_del(struct iwx_sctp_path *path);

/* The path usrsctp's token names, or NULL (none yet, or gone). */
struct iwx_sctp_path *iwx_sctp_path_of(const void *token);

/*
 * A packet that arrived on path, in a buffer that is the stack's until this returns: its
 * CRC32c is checked here (usrsctp's own check is off), and where path->place, the
 * tagged payload of known associations placed from it (sctp_place.h).
 */
void iwx_sctp_input(struct iwx_sctp_path *path, void *pkt, size_t len);

/*
 * A packet from a peer that has no path, known to usrsctp by token (the carrier's, from
 * the peer's address): what usrsctp answers now, an INIT-ACK with its State Cookie or an
 * ABORT, goes to reply(arg, ...). True when one answer was a COOKIE-ACK: the peer
 * returned a valid cookie, so it receives at its address and an association exists; only
 * then is a path worth making (a blind spoofer never gets one). RFC 4960 §5.1.
 */
bool iwx_sctp_input_unknown(void *token, void *pkt, size_t len,
			    int (*reply)(void *arg, const void *pkt, size_t len), void *arg);

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
