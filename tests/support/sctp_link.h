/* SPDX-License-Identifier: MIT */
/*
 * An in-memory link between two AF_CONN endpoints of the one usrsctp stack of a test
 * process (sctp.h): no network, every packet seen, and any of them dropped or held back.
 *
 * usrsctp knows a peer by its path: path b leads to side B, path a to side A. A socket of
 * side A connects to sconn_addr = &link->b; its packets go out through b's send, and
 * side B receives them "from a" (iwx_sctp_input(&link->a, ...)), so B's answers go out
 * through a's send and reach A as input from b. sctp_link_pump() does the delivering:
 * send() only queues, because usrsctp's output callback runs inside usrsctp's calls and
 * must never feed it a packet back (that would re-enter it).
 */
#ifndef IWX_SCTP_LINK_H
#define IWX_SCTP_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sctp.h"

#define SCTP_LINK_QUEUE		512	/* packets queued per direction before send drops */

/* Which way a packet travels: to the endpoint that path a or path b names. */
enum sctp_link_dir {
	SCTP_LINK_TO_A,		/* sent through a's send, delivered as input from b */
	SCTP_LINK_TO_B,		/* sent through b's send, delivered as input from a */
};

enum sctp_link_verdict {
	SCTP_LINK_PASS,		/* deliver it now */
	SCTP_LINK_DROP,		/* lose it (counted) */
	SCTP_LINK_HOLD,		/* keep it back: asked again at every pump, later packets overtake it */
};

/*
 * Asked for every packet about to be delivered (held ones again at each pump). Runs
 * inside sctp_link_pump, outside usrsctp: it may look at anything, not call usrsctp.
 */
typedef enum sctp_link_verdict (*sctp_link_filter_fn)(void *arg, enum sctp_link_dir dir,
						      const uint8_t *pkt, size_t len);

/*
 * Told of every packet as it is sent, before the queue or the filter decide anything.
 * Runs inside usrsctp's output callback: it must not call usrsctp.
 */
typedef void (*sctp_link_tap_fn)(void *arg, enum sctp_link_dir dir, const uint8_t *pkt, size_t len);

struct sctp_link_pkt {
	uint8_t		*data;
	size_t		len;
};

struct sctp_link_queue {
	struct sctp_link_pkt	q[SCTP_LINK_QUEUE];	/* ring, oldest at head */
	unsigned		head, count;
	struct sctp_link_pkt	held[SCTP_LINK_QUEUE];	/* in the order they were held */
	unsigned		n_held;
	sctp_link_filter_fn	filter;
	void			*filter_arg;
	/* counters */
	unsigned long		sent, delivered, dropped_full, dropped_filter;
};

struct sctp_link {
	struct iwx_sctp_path	a, b;		/* the names of side A and side B */
	struct sctp_link_queue	to[2];		/* indexed by enum sctp_link_dir */
	sctp_link_tap_fn	tap;
	void			*tap_arg;
	bool			up;		/* paths registered; after destroy send drops all */
	unsigned long		dropped_down;	/* packets sent after destroy */
};

/*
 * Set link up and register both paths with the stack (iwx_sctp_init first). The storage
 * must outlive the stack: a lingering association may still send through it until
 * iwx_sctp_finish.
 */
void sctp_link_init(struct sctp_link *link);

/* The filter of one direction (NULL: pass everything). */
void sctp_link_set_filter(struct sctp_link *link, enum sctp_link_dir dir, sctp_link_filter_fn fn,
			  void *arg);

/* The tap, for both directions (NULL: none). */
void sctp_link_set_tap(struct sctp_link *link, sctp_link_tap_fn fn, void *arg);

/*
 * Deliver what is queued (and what the deliveries cause), then run usrsctp's timers;
 * while nothing has moved, wait for the timers, at most max_ms in all (0: do not wait).
 * Returns whether any packet was delivered or dropped.
 */
bool sctp_link_pump(struct sctp_link *link, int max_ms);

/* Pump until nothing has moved for idle_ms, at most max_ms in all; true when idle was reached. */
bool sctp_link_settle(struct sctp_link *link, int idle_ms, int max_ms);

/* Packets queued and held, both directions. */
unsigned sctp_link_pending(const struct sctp_link *link);

/*
 * Settle (close the sockets first: associations need their packets to end), deregister
 * both paths, free what is queued. Later sends are dropped.
 */
void sctp_link_destroy(struct sctp_link *link);

/* ---------------------------------------------------------------- reading packets */

#define SCTP_CHUNK_DATA		0
#define SCTP_CHUNK_INIT		1
#define SCTP_CHUNK_INIT_ACK	2
#define SCTP_CHUNK_SACK		3
#define SCTP_CHUNK_ABORT	6
#define SCTP_CHUNK_SHUTDOWN	7
#define SCTP_CHUNK_SHUTDOWN_ACK	8
#define SCTP_CHUNK_COOKIE_ECHO	10
#define SCTP_CHUNK_COOKIE_ACK	11
#define SCTP_CHUNK_SHUTDOWN_COMPLETE 14

/* DATA chunk flags (RFC 9260 §3.3.1) */
#define SCTP_DATA_FLAG_E	0x01
#define SCTP_DATA_FLAG_B	0x02
#define SCTP_DATA_FLAG_U	0x04

#define SCTP_COMMON_HDR_LEN	12
#define SCTP_DATA_HDR_LEN	16

/* One chunk of a packet; the DATA fields only for type SCTP_CHUNK_DATA. */
struct sctp_chunk {
	uint8_t		type, flags;
	uint16_t	len;		/* the chunk's Length field: header and value, no padding */
	const uint8_t	*value;		/* after the 4-byte chunk header */
	/* DATA */
	uint32_t	tsn;
	uint16_t	sid, ssn;
	uint32_t	ppid;		/* host order */
	const uint8_t	*user;		/* user data */
	size_t		user_len;
};

/*
 * The chunk at *off of an SCTP packet (start with *off = 0: the common header is
 * skipped); *off moves past it. Returns 1 with *c, 0 at the end, -1 if malformed.
 */
int sctp_pkt_next_chunk(const uint8_t *pkt, size_t len, size_t *off, struct sctp_chunk *c);

#endif /* IWX_SCTP_LINK_H */
