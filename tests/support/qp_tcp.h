/* SPDX-License-Identifier: MIT */
/*
 * The TCP fixture of qp_pair.h: kernel TCP between two network namespaces (netns.h),
 * end a in namespace a connecting to b's listener in namespace b, the MPA set-up of
 * conn_tcp.h with CRCs; the test waits on the sockets with poll().
 */
#ifndef IWX_QP_TCP_H
#define IWX_QP_TCP_H

#include <stdint.h>

#include "conn_tcp.h"
#include "netns.h"
#include "qp_pair.h"

struct qp_tcp {
	struct qp_pair		pair;
	struct iwx_conn_tcp	conn[2];	/* a's and b's set-ups: pair.a.conn, pair.b.conn */
	struct netns_pair	ns;
	uint16_t		port;	/* b listens on it */
	int			lfd;	/* b's listener */
	int			fd[2];	/* a's and b's sockets, once up: the queue pairs' */
};

/* A suite's init: the namespaces (skips the test unless root); b will listen on port. */
void qp_tcp_init(struct qp_tcp *t, uint16_t port);

#endif /* IWX_QP_TCP_H */
