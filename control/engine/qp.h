/* SPDX-License-Identifier: MIT */
/*
 * A queue pair in software: RDMAP over DDP over one MPA stream in full operation.
 * Posts Sends, RDMA Writes and Reads, serves the peer's Reads from registered memory,
 * places incoming tagged data straight into it (recv into the target: one copy), takes
 * Sends into posted receives in MSN order, and on any error sends the Terminate RFC
 * 5040 §7 names, flushes every outstanding request and closes the stream.
 * With the fast path (fast_rx.h), what BPF placed already is taken from its records
 * and discarded from the socket unread.
 * Non-blocking and single-threaded: the caller polls the socket and calls progress.
 */
#ifndef IWX_QP_H
#define IWX_QP_H

#include <stdbool.h>
#include <stdint.h>

#include <iwx/ipc.h>
#include <iwx/mpa_rx.h>
#include <iwx/mpa_setup.h>
#include <iwx/rdmap.h>
#include <iwx/verbs.h>

#include "mem.h"

enum iwx_qp_state {
	IWX_QP_RTS,		/* ready to send and receive */
	IWX_QP_CLOSING,		/* a Terminate is going out; then CLOSED */
	IWX_QP_ERROR,		/* stream terminated or lost; requests flushed */
};

struct iwx_qp_attr {
	uint32_t	sq_depth, rq_depth, cq_depth;	/* 0: 256 each */
};

struct iwx_qp;

/*
 * A queue pair on fd, a connection in full operation with agreed (from conn.c),
 * emss the connection's effective MSS; memory of protection domain pd in mem.
 * The QP does not own fd until iwx_qp_destroy, which closes it. After a Terminate
 * this side sent, only fd's sending half is shut: read the peer's bytes until its FIN
 * before the last close of fd (iwxd's linger.c), or the close resets the stream and
 * may destroy the Terminate before the peer reads it.
 */
struct iwx_qp *iwx_qp_create(int fd, const struct iwx_mpa_agreed *agreed, uint32_t emss,
			     struct iwx_mem *mem, uint32_t pd, const struct iwx_qp_attr *attr);
void iwx_qp_destroy(struct iwx_qp *qp);

/* Queue work. -ENOMEM queue full, -EINVAL malformed request, -ENOTCONN not in RTS. */
int iwx_qp_post_send(struct iwx_qp *qp, const struct iwx_send_wr *wr);
int iwx_qp_post_recv(struct iwx_qp *qp, const struct iwx_recv_wr *wr);

/*
 * Move data: receive whatever the socket holds, transmit what it takes. Returns 0,
 * or -ENOTCONN once the queue pair is in error (iwx_qp_error says why).
 * *want_write tells whether the caller should also wait for POLLOUT.
 */
int iwx_qp_progress(struct iwx_qp *qp, bool *want_write);

/*
 * Take up to n completions. The queue pair keeps room for a completion of every
 * request it holds (send queue, those sent but not yet complete, receive queue), no
 * more: post nothing to it while completions wait, and they never overflow.
 */
int iwx_qp_poll(struct iwx_qp *qp, struct iwx_wc *wc, int n);

/* How many completions wait to be polled. */
uint32_t iwx_qp_unpolled(const struct iwx_qp *qp);

/*
 * End the stream now, as if it were lost (the peer did not finish a close in time):
 * everything outstanding is flushed, and the socket is shut down.
 */
void iwx_qp_abort(struct iwx_qp *qp);

enum iwx_qp_state iwx_qp_get_state(const struct iwx_qp *qp);

/*
 * Nothing left to transmit: no request waiting, no message or FPDU half sent, no
 * Read Response owed. What a graceful close waits for before its FIN.
 */
bool iwx_qp_tx_idle(const struct iwx_qp *qp);

/*
 * Why the queue pair left RTS: the Terminate cause, and whether this side sent it
 * (local) or the peer did. false while in RTS. A stream lost without a Terminate
 * reports IWX_MPA_EC_STREAM_LOST.
 */
bool iwx_qp_error(const struct iwx_qp *qp, struct iwx_term_cause *cause, bool *local);

/* Counters for `iwx status` (struct iwx_qp_stats is in iwx/ipc.h: iwxd reports them as they are). */
void iwx_qp_stats(const struct iwx_qp *qp, struct iwx_qp_stats *st);

/*
 * As Initiator, hold what goes out (hold), or let it go (!hold): for a peer that misses
 * an FPDU sent before it is ready, such as Linux's siw as Responder. The peer's first
 * FPDU lets it go too: a peer that has spoken is ready. A Responder's holds are the
 * protocol's (RFC 5044 §7.1.2, RFC 6581 §6) and stay as they are.
 */
void iwx_qp_settle(struct iwx_qp *qp, bool hold);

/*
 * Does qp hold a pointer into [addr, addr + len): a message being sent from it, a
 * peer's Read to answer from it, a segment being received into it? Memory it refers
 * to must stay mapped, whether or not it is still registered.
 */
bool iwx_qp_refers_to(const struct iwx_qp *qp, const void *addr, size_t len);

/*
 * Take the records of what the fast path placed from slot (iwx/fastpath.h), whose
 * programs follow this stream; copied_seq is the socket's read position now, a TCP
 * sequence number (the engine reads nothing meanwhile). slot NULL: no fast path, once
 * the stream has ended (a record committed to would be lost). Returns whether the next
 * byte the engine reads starts an FPDU.
 */
struct iwx_fp_slot;
bool iwx_qp_fast(struct iwx_qp *qp, struct iwx_fp_slot *slot, uint32_t copied_seq);
/* While followed: the TCP sequence number of the next byte the engine reads. */
uint32_t iwx_qp_fast_seq(const struct iwx_qp *qp);
/* While followed: the TCP sequence number of full operation's first byte (markers count from it). */
uint32_t iwx_qp_fast_start(const struct iwx_qp *qp);

#endif /* IWX_QP_H */
