/* SPDX-License-Identifier: MIT */
/*
 * The SCTP fixtures of qp_pair.h: two associations of the test process's one usrsctp
 * stack (sctp.h), set up by conn_sctp.h, their packets carried either by an in-memory
 * link (sctp_link.h: every packet seen, any dropped or held back) or in UDP between two
 * namespaces (sctp_udp.h, RFC 6951). The test waits by pumping the link, or polling
 * the two UDP sockets, and runs usrsctp's timers.
 */
#ifndef IWX_QP_SCTP_H
#define IWX_QP_SCTP_H

#include <stdint.h>

#include "conn_sctp.h"
#include "netns.h"
#include "qp_pair.h"
#include "sctp_link.h"
#include "sctp_udp.h"

struct socket;

struct qp_sctp {
	struct qp_pair		pair;
	struct iwx_conn_sctp	conn[2];	/* a's and b's set-ups: pair.a.conn, pair.b.conn */
	uint16_t		port;	/* b listens on it */
	struct iwx_sctp_path	*to_b;	/* a's name for b */
	struct socket		*lso;	/* b's listener */
	struct socket		*a_so;	/* a's association, once up: for a test's own chunks */
	struct sctp_link	link;	/* over the link */
	/* over UDP */
	struct netns_pair	ns;
	struct iwx_sctp_udp	*udp[2];	/* a's in namespace a, b's in b */
};

/*
 * A suite's init: the stack, and the link up with both paths placing tagged payload from
 * packets, as every carrier of iwxd's does. The link must outlive the stack: s is static.
 */
void qp_sctp_link_init(struct qp_sctp *s, uint16_t port);

/* A suite's init: the namespaces (skips the test unless root), the stack, a UDP socket in each. */
void qp_sctp_udp_init(struct qp_sctp *s, uint16_t port);

#endif /* IWX_QP_SCTP_H */
