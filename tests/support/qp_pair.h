/* SPDX-License-Identifier: MIT */
/*
 * Two engine queue pairs joined end to end, driven from the test's thread, so that one
 * test body runs over every transport: each end a queue pair (qp.h) with its memory, a
 * PD and one registered buffer, set up by conn.h's one machine. What differs is the
 * transport fixture (struct qp_transport): how the set-up starts and how the test waits
 * for traffic. qp_tcp.h: kernel TCP between two namespaces; qp_sctp.h: usrsctp over an
 * in-memory link, or in UDP between two namespaces.
 */
#ifndef IWX_QP_PAIR_H
#define IWX_QP_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "mem.h"
#include "qp.h"

#define QP_OWNER	1
#define QP_BUF_LEN	(40u << 20)	/* each end's: room for a 16 MiB Read behind 20 MiB */

struct qp_end {
	struct iwx_conn		*conn;	/* its set-up, in the fixture's struct; the socket is the queue pair's once made */
	struct iwx_mem		*mem;
	uint32_t		pd;
	uint32_t		stag;	/* all of buf: local write, remote read and write */
	uint8_t			*buf;	/* QP_BUF_LEN bytes */
	struct engine_qp	*qp;
};

struct qp_pair;

/* A transport fixture; its state holds the pair (container_of). */
struct qp_transport {
	/* Start the set-ups with o: b's listener, a's connect. */
	void	(*start)(struct qp_pair *p, const struct iwx_conn_opts *o);
	/* Start b's set-up from the listener: 0, or -EAGAIN while nobody has come. */
	int	(*accept)(struct qp_pair *p, const struct iwx_conn_opts *o);
	/* Both ESTABLISHED: keep what tests need of the sockets before the lower layers take them. */
	void	(*up)(struct qp_pair *p);
	/*
	 * Wait at most max_ms for traffic either way, or for room to send where want_write
	 * says an end has more, and take in what came.
	 */
	void	(*wait)(struct qp_pair *p, int max_ms, const bool want_write[2]);
	/* The ends are gone: close what start and the suite's init made. */
	void	(*stop)(struct qp_pair *p);
};

struct qp_pair {
	const struct qp_transport *t;
	struct qp_end		a, b;		/* a initiates, b responds */
	bool			accepted;	/* b's set-up has started */
	uint32_t		zerocopy_min;	/* TCP: both ends' (iwx_conn_opts), set before connecting */
};

/* Set up both connections, and a queue pair on each: ends a and b ready, buffers zeroed. */
void qp_pair_connect(struct qp_pair *p);

/* Let both queue pairs send and receive once, then wait for the transport (1 ms at most). */
void qp_pair_step(struct qp_pair *p);

/* Wait for the transport only, at most max_ms: for tests that step one end alone. */
void qp_pair_wait(struct qp_pair *p, int max_ms);

/* Step until a_wcs completions came from a into wa and b_wcs from b into wb (40 s at most). */
void qp_pair_run_until(struct qp_pair *p, int a_wcs, int b_wcs, struct iwx_wc *wa,
		       struct iwx_wc *wb);

/* Step until both queue pairs are in ERROR (10 s at most). */
void qp_pair_run_until_stopped(struct qp_pair *p);

/* The suite's fini: destroy both ends (what is left of them), then the transport's state. */
void qp_pair_fini(struct qp_pair *p);

/* len bytes at off in e's buffer, as a gather or scatter element. */
struct iwx_sge qp_sge(const struct qp_end *e, uint64_t off, uint32_t len);

/* e's queue pair left RTS with cause want, which it sent (local) or the peer did. */
void qp_assert_error(const struct qp_end *e, struct iwx_term_cause want, bool local);

#endif /* IWX_QP_PAIR_H */
