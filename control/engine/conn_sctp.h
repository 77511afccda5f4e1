/* SPDX-License-Identifier: MIT */
/*
 * The set-up over SCTP, for DDP over SCTP (docs/ddp-over-sctp.md, "Set-up"): an SCTP
 * association on which both ends announced the Adaptation Layer Indication
 * DDP_TAG_PLACE, then the MPA Request and Reply (RFC 5044 §7.1 with RFC 6581), each in
 * one set-up chunk of the shim (draft-otis-sctp-ddp-00) on stream 0. Driven by the
 * caller's loop: it feeds the stack its packets (iwx_sctp_input, iwx_sctp_tick) and
 * steps each set-up after them. The result is an association in full operation for the
 * lower layer (llp_sctp.h): its socket, SCTP_MAXSEG (emss) and the TSN the peer's chunks
 * start from.
 *
 * What both ends agree is fixed: MPA revision 2 with the enhanced set-up (IRD/ORD),
 * peer-to-peer with a zero-length RDMA Write as RTR (RFC 6581 §6), no CRC and no markers
 * (SCTP has its CRC32c and keeps chunk boundaries). Only IRD, ORD and the private data of
 * the caller's options are used.
 *
 * FAILED's error: -ETIMEDOUT; -ECONNREFUSED (no association: nobody listens), -ECONNRESET
 * (the association ended or was aborted); -EPROTONOSUPPORT (the peer did not announce
 * DDP_TAG_PLACE: nothing was sent, the association is shut down); -EPROTO with cause (a
 * first chunk that is not a set-up chunk, a set-up chunk off stream 0, a bad MPA frame,
 * M or C set, a chunk where none may come, such as a second set-up chunk). REJECTED:
 * the Initiator's error is -ECONNREFUSED, with the Responder's private data. In FAILED
 * and REJECTED the socket is closed, gracefully (SHUTDOWN) where it could be;
 * iwx_conn_close is abortive when unread data waits, as TCP resets.
 */
#ifndef IWX_CONN_SCTP_H
#define IWX_CONN_SCTP_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "proto/wire.h"

struct socket;
struct iwx_sctp_path;

/* A set-up over SCTP: iwx_conn_step and the rest of conn.h take &conn. */
struct iwx_conn_sctp {
	struct iwx_conn	conn;
	struct socket	*so;		/* usrsctp one-to-one socket; NULL once closed or taken */
	uint32_t	peer_indication;	/* the peer's Adaptation Layer Indication (3) */
	uint32_t	peer_tsn;	/* TSN of the peer's set-up chunk: its first DATA chunk */
	uint32_t	assoc_id;
	bool		up;		/* SCTP_COMM_UP seen */
	bool		indicated;	/* SCTP_ADAPTATION_INDICATION seen */
	uint8_t		rx[IWX_SHIM_SETUP_HDR_LEN + sizeof(struct iwx_mpa_rr) + IWX_MPA_MAX_PRIVDATA];
};

/*
 * A listening socket (iwx_sctp_socket's settings, which accepted sockets inherit) on
 * port, for associations from any path. NULL with errno.
 */
struct socket *iwx_conn_sctp_listen(uint16_t port, int backlog);

/*
 * Initiator: start an association to port over path (the peer's name: its AF_CONN
 * address; this side binds port on it too). The Request is encoded at once from o:
 * o->pd need not outlive the call. 0 (then step) or -errno, with state FAILED.
 */
int iwx_conn_sctp_connect(struct iwx_conn_sctp *t, struct iwx_sctp_path *path, uint16_t port,
			  const struct iwx_conn_opts *o);

/*
 * Responder: take the next association that is up from listener and start reading its
 * Request. -EAGAIN when none is waiting; other -errno with state FAILED.
 */
int iwx_conn_sctp_accept(struct iwx_conn_sctp *t, struct socket *listener, const struct iwx_conn_opts *o);

/* The association of c, a struct iwx_conn_sctp's set-up: NULL once closed or taken by the lower layer. */
struct socket *iwx_conn_sctp_socket(const struct iwx_conn *c);

#endif /* IWX_CONN_SCTP_H */
