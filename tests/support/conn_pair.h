/* SPDX-License-Identifier: MIT */
/*
 * Two ends of conn.h's set-up driven from the test's thread, so that one test body runs
 * over every transport: a initiates, b responds from a listener, or a hand-made peer
 * speaks to b as it likes. What differs is the transport fixture (struct conn_transport):
 * how b listens, how a connects, how the test waits, and how the hand-made peer frames
 * what it sends and reads. The TCP fixture is in tests/integration/test_conn.c, the SCTP
 * one in tests/unit/test_sctp_conn.c; the shared bodies are conn_tests.h's.
 */
#ifndef IWX_CONN_PAIR_H
#define IWX_CONN_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conn.h"

#define CONN_BOUND_MS	5000	/* a time-out under test fires before this: half the default */
#define CONN_SHORT_MS	300	/* the time-out under test */

struct conn_pair;

/* A transport fixture; its state holds the pair (container_of). */
struct conn_transport {
	/* What each end asks for, unless a test says otherwise. */
	const struct iwx_mpa_local *local;
	/* b's listener. */
	void	(*listen)(struct conn_pair *p);
	/* Start a's set-up towards b's port with o: 0 or -errno at once. */
	int	(*connect)(struct conn_pair *p, const struct iwx_conn_opts *o);
	/* Start b's set-up from the listener: 0, or -EAGAIN while nobody has come. */
	int	(*accept)(struct conn_pair *p, const struct iwx_conn_opts *o);
	/* Wait a little (20 ms at most) for what the ends still wait on, and take it in. */
	void	(*wait)(struct conn_pair *p);
	/* Is c's socket closed (or never opened)? */
	bool	(*closed)(const struct iwx_conn *c);
	/* b, just ESTABLISHED, sends 4 bytes of payload as its lower layer would frame them. */
	void	(*send_early)(struct conn_pair *p, const char text[4]);
	/* ... and they wait in a's socket, unread by the set-up, for a's lower layer. */
	void	(*recv_early)(struct conn_pair *p, const char text[4]);
	/* A hand-made Initiator connected to b's listener, its transport up. */
	void	(*raw_connect)(struct conn_pair *p);
	/* ... sends len bytes where an MPA frame goes (over SCTP, in a set-up chunk on stream 0); */
	void	(*raw_send)(struct conn_pair *p, const void *frame, size_t len);
	/* ... and receives a Reply with R from b. */
	void	(*raw_recv_reject)(struct conn_pair *p);
};

struct conn_pair {
	const struct conn_transport *t;
	struct iwx_conn		*a, *b;		/* a initiates, b responds: in the fixture's structs */
	bool			connected;	/* a's set-up has started */
	bool			accepted;	/* b's set-up has started */
	/* how conn_pair_drive has b answer */
	struct iwx_conn_opts	b_opts;
	bool			reject;		/* b rejects with b_opts' private data */
	bool			silent;		/* b never answers */
	const char		*early;		/* 4 bytes b sends right after its Reply */
	bool			answered;
	int			answer_ret;	/* iwx_conn_answer's */
};

/* Start a's set-up (t->connect), remembered for the suite's fini. */
int conn_pair_connect(struct conn_pair *p, const struct iwx_conn_opts *o);

/* Start b's set-up from the listener with o, waiting for the peer at most STALL_MS. */
void conn_pair_accept(struct conn_pair *p, const struct iwx_conn_opts *o);

/*
 * Step a, the listener and b (which answers as b_opts, reject and silent say, then sends
 * early) until neither end needs the socket: both done, or b silent in REQUEST_IN.
 */
void conn_pair_drive(struct conn_pair *p);

/* Step c alone (its peer is hand-made) until its state needs no socket work. */
void conn_pair_drive_one(struct conn_pair *p, struct iwx_conn *c);

/* Each end's IRD and ORD after the set-up. */
void conn_assert_limits(const struct conn_pair *p, uint16_t a_ird, uint16_t a_ord, uint16_t b_ird,
			uint16_t b_ord);

/* Each end got the private data the other sent: a_pd from a, b_pd from b. */
void conn_assert_private_data(const struct conn_pair *p, const void *a_pd, uint16_t a_len,
			      const void *b_pd, uint16_t b_len);

/* A time-out under test fired from t0 on: not early, and its own, not the default 10 s. */
void conn_assert_own_timeout(uint64_t t0);

/* The suite's fini, before the transport's: close both ends (what is left of them). */
void conn_pair_fini(struct conn_pair *p);

#endif /* IWX_CONN_PAIR_H */
