/* SPDX-License-Identifier: MIT */
/*
 * Establishing an iWARP association for DDP over SCTP (docs/ddp-over-sctp.md, "Set-up"):
 * an SCTP association on which both ends announced the Adaptation Layer Indication
 * DDP_TAG_PLACE, then the MPA Request and Reply (RFC 5044 §7.1 with RFC 6581), each in
 * one set-up chunk of the shim (draft-otis-sctp-ddp-00) on stream 0. Non-blocking and
 * driven like conn.h's TCP set-up, by the caller's loop: it feeds the stack its packets
 * (iwx_sctp_input, iwx_sctp_tick) and steps each set-up after them. The result is an
 * association in full operation for the lower layer (llp_sctp.h): its socket, SCTP_MAXSEG
 * and the TSN the peer's chunks start from.
 *
 * What both ends agree is fixed: MPA revision 2 with the enhanced set-up (IRD/ORD),
 * peer-to-peer with a zero-length RDMA Write as RTR (RFC 6581 §6), no CRC and no markers
 * (SCTP has its CRC32c and keeps chunk boundaries). Only IRD, ORD and the private data of
 * the caller's options are used.
 */
#ifndef IWX_CONN_SCTP_H
#define IWX_CONN_SCTP_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/mpa.h"
#include "proto/mpa_setup.h"
#include "proto/term.h"
#include "proto/wire.h"

#include "conn_tcp.h"

struct socket;
struct iwx_sctp_path;

/* The largest set-up chunk: the shim header and an MPA frame with the most private data. */
#define IWX_SCTP_SETUP_MAX	(IWX_SHIM_SETUP_HDR_LEN + sizeof(struct iwx_mpa_rr) + \
				 IWX_MPA_MAX_PRIVDATA)

struct iwx_sctp_conn {
	enum iwx_conn_state	state;		/* CONNECTING: association and indication */
	struct socket		*so;		/* usrsctp one-to-one socket; NULL once closed */
	bool			initiator;
	uint64_t		deadline_ms;	/* iwx_now_ms() clock: the current wait ends then */
	int			error;		/* -errno when FAILED or REJECTED (see below) */
	struct iwx_term_cause	cause;		/* MPA or shim error behind an -EPROTO */
	struct iwx_mpa_rr_params request;	/* the Request, once sent or received */
	struct iwx_mpa_agreed	agreed;		/* once ESTABLISHED */
	uint8_t			peer_pd[IWX_MPA_MAX_PRIVDATA];	/* the peer's private data */
	uint16_t		peer_pd_len;
	uint32_t		peer_indication;	/* the peer's Adaptation Layer Indication (3) */
	uint32_t		maxseg;		/* SCTP_MAXSEG of the association, once ESTABLISHED */
	uint32_t		peer_tsn;	/* TSN of the peer's set-up chunk: its first DATA chunk */
	/* private to conn_sctp.c */
	struct iwx_conn_opts	opts;
	uint32_t		assoc_id;
	bool			up;		/* SCTP_COMM_UP seen */
	bool			indicated;	/* SCTP_ADAPTATION_INDICATION seen */
	uint8_t			buf[IWX_SCTP_SETUP_MAX];	/* the set-up chunk to send */
	uint16_t		buf_len;
	uint8_t			rx[IWX_SCTP_SETUP_MAX];		/* what was read */
};

/*
 * A listening socket (iwx_sctp_socket's settings, which accepted sockets inherit) on
 * port, for associations from any path. NULL with errno.
 */
struct socket *iwx_sctp_listen(uint16_t port, int backlog);

/*
 * Initiator: start an association to port over path (the peer's name: its AF_CONN
 * address; this side binds port on it too). The Request is encoded at once from o:
 * o->pd need not outlive the call. 0 (then step) or -errno, with state FAILED.
 */
int iwx_sctp_conn_connect(struct iwx_sctp_conn *c, struct iwx_sctp_path *path, uint16_t port,
			  const struct iwx_conn_opts *o);

/*
 * Responder: take the next association that is up from listener and start reading its
 * Request. -EAGAIN when none is waiting; other -errno with state FAILED.
 */
int iwx_sctp_conn_accept(struct iwx_sctp_conn *c, struct socket *listener,
			 const struct iwx_conn_opts *o);

/*
 * Make what progress the socket allows and check the deadline against now_ms. Returns
 * 0 when the state needs no more socket work (REQUEST_IN, ESTABLISHED, REJECTED,
 * FAILED), -EAGAIN otherwise (step again after feeding the stack packets or time).
 *
 * FAILED's error: -ETIMEDOUT; -ECONNREFUSED (no association: nobody listens), -ECONNRESET
 * (the association ended or was aborted); -EPROTONOSUPPORT (the peer did not announce
 * DDP_TAG_PLACE: nothing was sent, the association is shut down); -EPROTO with cause (a
 * first chunk that is not a set-up chunk, a set-up chunk off stream 0, a bad MPA frame,
 * M or C set, a chunk where none may come, such as a second set-up chunk). REJECTED:
 * the Initiator's error is -ECONNREFUSED, with the Responder's private data.
 * In REQUEST_IN, a step still checks the socket: anything but notifications fails.
 * In FAILED and REJECTED the socket is closed, gracefully (SHUTDOWN) where it could be.
 */
int iwx_sctp_conn_step(struct iwx_sctp_conn *c, uint64_t now_ms);

/*
 * Responder, in REQUEST_IN: accept (reject = false) with o's private data and IRD/ORD,
 * or reject with o->pd (a Reply with R, then a graceful shutdown). Returns 0 or -errno:
 * -EPROTO and REJECTED when the Request offers no zero-length Write as RTR (cause says
 * so), -EINVAL in another state.
 */
int iwx_sctp_conn_answer(struct iwx_sctp_conn *c, const struct iwx_conn_opts *o, bool reject);

/*
 * Close the socket whatever the state (abortive when unread data waits, as TCP resets).
 * Once ESTABLISHED the lower layer takes so instead: set it to NULL then.
 */
void iwx_sctp_conn_close(struct iwx_sctp_conn *c);

#endif /* IWX_CONN_SCTP_H */
