/* SPDX-License-Identifier: MIT */
/*
 * A queue pair in software: RDMAP over DDP on a lower layer (llp.h: MPA over TCP, in
 * llp_tcp.h). Posts Sends, RDMA Writes and Reads, serves the peer's Reads from
 * registered memory, places incoming tagged data straight into it, takes Sends into
 * posted receives in MSN order, and on any error sends the Terminate RFC 5040 §7
 * names, flushes every outstanding request and ends the stream.
 * Non-blocking and single-threaded: the caller polls the transport and calls progress.
 */
#ifndef IWX_QP_H
#define IWX_QP_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/mpa_setup.h"
#include "proto/qp_stats.h"
#include "proto/rdmap.h"
#include <iwx/verbs.h>

#include "mem.h"

enum engine_qp_state {
	ENGINE_QP_RTS,		/* ready to send and receive */
	ENGINE_QP_CLOSING,		/* a Terminate is going out; then CLOSED */
	ENGINE_QP_ERROR,		/* stream terminated or lost; requests flushed */
};

struct engine_qp_attr {
	uint32_t	sq_depth, rq_depth, cq_depth;	/* 0: 256 each */
	/*
	 * Receives from a shared receive queue instead of engine_qp_post_recv, or posted since
	 * the last engine_qp_post_recv: take_recv gives the next one (0), or fails when none is
	 * posted. Asked when a Send begins that the queue pair holds no receive for; rq_depth
	 * then bounds the receives it holds, taken and not yet polled.
	 */
	int		(*take_recv)(void *ctx, struct iwx_recv_wr *wr);
	void		*recv_ctx;
};

struct engine_qp;

/*
 * A queue pair on llp, a connection in full operation with agreed (who speaks first,
 * IRD and ORD); memory of protection domain pd in mem. It takes llp: destroyed with
 * the queue pair, or at once when this fails (NULL; llp NULL fails too). After a
 * Terminate this side sent, only the sending half is shut: read the peer's bytes until
 * its FIN before the last close of the socket (iwxd's linger.c), or the close resets
 * the stream and may destroy the Terminate before the peer reads it.
 */
struct iwx_llp;
struct engine_qp *engine_qp_create(struct iwx_llp *llp, const struct iwx_mpa_agreed *agreed,
			     struct iwx_mem *mem, uint32_t pd, const struct engine_qp_attr *attr);
void engine_qp_destroy(struct engine_qp *qp);

/* Queue work. -ENOMEM queue full, -EINVAL malformed request, -ENOTCONN not in RTS. */
int engine_qp_post_send(struct engine_qp *qp, const struct iwx_send_wr *wr);
int engine_qp_post_recv(struct engine_qp *qp, const struct iwx_recv_wr *wr);

/*
 * Move data: receive whatever the socket holds, transmit what it takes. Returns 0,
 * or -ENOTCONN once the queue pair is in error (engine_qp_error says why).
 * *want_write tells whether the caller should also wait for POLLOUT.
 */
int engine_qp_progress(struct engine_qp *qp, bool *want_write);

/*
 * engine_qp_progress without the receive: for a caller that watches the socket
 * level-triggered and was told nothing, so that a receive would find nothing (one
 * system call saved per message it posts).
 */
int engine_qp_transmit(struct engine_qp *qp, bool *want_write);

/*
 * Take up to n completions. The queue pair keeps room for a completion of every
 * request it holds (send queue, those sent but not yet complete, receive queue), no
 * more: post nothing to it while completions wait, and they never overflow.
 */
int engine_qp_poll(struct engine_qp *qp, struct iwx_wc *wc, int n);

/* How many completions wait to be polled. */
uint32_t engine_qp_unpolled(const struct engine_qp *qp);

/*
 * End the stream now, as if it were lost (the peer did not finish a close in time):
 * everything outstanding is flushed, and the socket is shut down.
 */
void engine_qp_abort(struct engine_qp *qp);

enum engine_qp_state engine_qp_get_state(const struct engine_qp *qp);

/* A graceful close: nothing more goes out (TCP's FIN, SCTP's SHUTDOWN); receiving goes on. */
void engine_qp_shut_send(struct engine_qp *qp);

/*
 * Nothing left to transmit: no request waiting, no message or FPDU half sent, no
 * Read Response owed. What a graceful close waits for before its FIN.
 */
bool engine_qp_tx_idle(const struct engine_qp *qp);

/*
 * Why the queue pair left RTS: the Terminate cause, and whether this side sent it
 * (local) or the peer did. false while in RTS. A stream lost without a Terminate
 * reports IWX_MPA_EC_STREAM_LOST.
 */
bool engine_qp_error(const struct engine_qp *qp, struct iwx_term_cause *cause, bool *local);

/* Counters for `iwx status`. */
void engine_qp_stats(const struct engine_qp *qp, struct iwx_qp_stats *st);

/*
 * As Initiator, hold what goes out (hold), or let it go (!hold): for a peer that misses
 * an FPDU sent before it is ready, such as Linux's siw as Responder. The peer's first
 * FPDU lets it go too: a peer that has spoken is ready. A Responder's holds are the
 * protocol's (RFC 5044 §7.1.2, RFC 6581 §6) and stay as they are.
 */
void engine_qp_settle(struct engine_qp *qp, bool hold);

/*
 * Does qp hold a pointer into [addr, addr + len): a message being sent from it, a
 * peer's Read to answer from it, a segment being received into it? Memory it refers
 * to must stay mapped, whether or not it is still registered.
 */
bool engine_qp_refers_to(const struct engine_qp *qp, const void *addr, size_t len);

/*
 * STag stag was invalidated or deregistered: a segment qp receives in place through it
 * writes no more of it there. The rest waits in the parser, and the segment then fails
 * as any that names a gone STag does: a Terminate for a tagged one (RFC 5041 §7.2,
 * Invalid STag), a local protection error for a Send's receive.
 */
void engine_qp_stag_gone(struct engine_qp *qp, uint32_t stag);

#endif /* IWX_QP_H */
