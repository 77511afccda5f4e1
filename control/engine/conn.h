/* SPDX-License-Identifier: MIT */
/*
 * Establishing an iWARP connection: the MPA set-up exchange (RFC 5044 §7.1, RFC 6581),
 * written once over what a transport provides (struct iwx_conn_ops): kernel TCP
 * (conn_tcp.h) or an SCTP association with the shim's set-up chunks (conn_sctp.h). With
 * time-outs, private data and rejects. Non-blocking: the caller's loop steps many set-ups
 * at once, so one slow or silent peer holds up nobody. The result is a connection in
 * full operation for its lower layer (iwx_conn_llp_new) and what both sides agreed.
 */
#ifndef IWX_CONN_H
#define IWX_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/mpa_setup.h"
#include "proto/term.h"
#include "proto/wire.h"

struct iwx_llp;

struct iwx_conn_opts {
	struct iwx_mpa_local	local;		/* revision, CRC, markers, IRD/ORD, P2P/RTR */
	const uint8_t		*pd;		/* private data for the Request or Reply */
	uint16_t		pd_len;
	int			timeout_ms;	/* the transport's set-up, and the wait for each MPA frame; 0: 10 s */
	uint32_t		zerocopy_min;	/* TCP: MSG_ZEROCOPY from this many bytes (llp_tcp.h); 0: never */
};

enum iwx_conn_state {
	IWX_CONN_CONNECTING,	/* active: the transport's handshake under way */
	IWX_CONN_SEND_REQUEST,	/* active: MPA Request going out */
	IWX_CONN_WAIT_REPLY,	/* active: reading the Reply */
	IWX_CONN_WAIT_REQUEST,	/* passive: reading the Request */
	IWX_CONN_REQUEST_IN,	/* passive: Request read, the application must answer */
	IWX_CONN_SEND_REPLY,	/* passive: Reply going out */
	IWX_CONN_ESTABLISHED,	/* full operation */
	IWX_CONN_REJECTED,	/* a Reply with R was sent or received; the socket is closed */
	IWX_CONN_FAILED,	/* error holds why; the socket is closed */
};

/* The most room a transport's header may take before a set-up's MPA frame (ops->headroom). */
#define IWX_CONN_HEADROOM_MAX	16
/* The largest frame a set-up sends: a transport's header, then an MPA frame with the most private data. */
#define IWX_CONN_OUT_MAX	(IWX_CONN_HEADROOM_MAX + sizeof(struct iwx_mpa_rr) + IWX_MPA_MAX_PRIVDATA)

/*
 * A set-up, the first member of its transport's struct (struct iwx_conn_tcp, ...), which
 * holds the socket: the transport's functions make one, the ones below drive it.
 */
struct iwx_conn {
	const struct iwx_conn_ops *ops;		/* its transport */
	enum iwx_conn_state	state;
	bool			initiator;
	uint64_t		deadline_ms;	/* iwx_now_ms() (util/clock.h) by which the current wait ends */
	int			error;		/* -errno when FAILED or REJECTED (the transport's file says which) */
	enum iwx_conn_state	failed_in;	/* FAILED: the state it failed in */
	struct iwx_term_cause	cause;		/* MPA error behind an -EPROTO */
	struct iwx_mpa_rr_params request;	/* the Request, once sent or received */
	struct iwx_mpa_agreed	agreed;		/* once ESTABLISHED */
	uint32_t		emss;		/* once ESTABLISHED: TCP_MAXSEG, or SCTP_MAXSEG */
	struct sockaddr_storage	local, peer;	/* over TCP, once ESTABLISHED (SCTP: the caller's) */
	uint8_t			peer_pd[IWX_MPA_MAX_PRIVDATA];	/* the peer's private data */
	uint16_t		peer_pd_len;
	/* private to the set-up and its transport */
	struct iwx_conn_opts	opts;
	uint8_t			out[IWX_CONN_OUT_MAX];	/* the frame to send: headroom, then MPA */
	uint16_t		out_len, out_done;	/* its length; how much a stream took */
};

/*
 * What a transport does for the set-up. Each returns 0 when done, -EAGAIN when it must
 * wait on the peer (step again once the socket is ready), or -errno why the set-up fails
 * (-EPROTO with c->cause for a bad frame).
 */
struct iwx_conn_ops {
	const char	*name;		/* "TCP", "SCTP": for logs */
	uint8_t		headroom;	/* bytes of out before the MPA frame: the transport's header */
	/* docs/ddp-over-sctp.md Set-up 2, 4: revision 2 with IRD/ORD, peer-to-peer, the Write RTR only */
	bool		fixed_p2p;
	int	(*ready)(struct iwx_conn *c);		/* CONNECTING: is the transport up? */
	int	(*send)(struct iwx_conn *c);		/* out's frame, resumed where it stopped */
	/* one MPA frame into *p, its private data pointing into the transport's buffer */
	int	(*recv)(struct iwx_conn *c, bool want_reply, struct iwx_mpa_rr_params *p);
	int	(*idle)(struct iwx_conn *c);		/* REQUEST_IN: whatever the peer did meanwhile */
	int	(*established)(struct iwx_conn *c);	/* the transport's figures: emss, names */
	void	(*reject)(struct iwx_conn *c);		/* out's Reply with R, once, without waiting */
	void	(*finish)(struct iwx_conn *c);		/* FAILED or REJECTED: close, gracefully where it can */
	void	(*close)(struct iwx_conn *c);		/* close whatever the state */
	/* ESTABLISHED: its lower layer, which takes the socket (NULL with the socket closed) */
	struct iwx_llp *(*llp_new)(struct iwx_conn *c);
};

/*
 * Make what progress the transport allows without blocking, and check the deadline
 * against now_ms. Returns 0 when the state needs no more work from the socket
 * (REQUEST_IN, ESTABLISHED, REJECTED, FAILED), -EAGAIN when it waits on the peer.
 * In REQUEST_IN a step still asks the transport what the peer did (over SCTP, anything
 * but notifications fails the set-up).
 */
int iwx_conn_step(struct iwx_conn *c, uint64_t now_ms);

/*
 * Passive side, in REQUEST_IN: accept (reject = false) with o's private data and
 * limits, or reject with o->pd. Then step until ESTABLISHED or REJECTED. Returns 0
 * or -errno (-EPROTO and REJECTED when no RTR type matches; cause says so), -EINVAL in
 * another state.
 */
int iwx_conn_answer(struct iwx_conn *c, const struct iwx_conn_opts *o, bool reject);

/* ESTABLISHED: the lower layer of the connection, which takes its socket. NULL on failure. */
struct iwx_llp *iwx_conn_llp_new(struct iwx_conn *c);

/* Close the socket, whatever the state (abortive where unread data waits). */
void iwx_conn_close(struct iwx_conn *c);

/* For the transports: start c (state FAILED until they enter another); an Initiator's
 * Request is encoded at once from o (o->pd need not outlive the call): 0 or -errno. */
int iwx_conn_init(struct iwx_conn *c, const struct iwx_conn_ops *ops, const struct iwx_conn_opts *o,
		  bool initiator);
/* ... enter a state that waits on the peer, with a deadline of its own; */
void iwx_conn_enter(struct iwx_conn *c, enum iwx_conn_state s);
/* ... or fail now (the socket closed). Returns err. */
int iwx_conn_fail(struct iwx_conn *c, int err);
/* ... a bad frame: -EPROTO with the MPA error ecode. */
int iwx_conn_bad_frame(struct iwx_conn *c, uint8_t ecode);

#endif /* IWX_CONN_H */
