/* SPDX-License-Identifier: MIT */
/* What iwxd says to a client: replies and events, in order (outbox.c). */
#ifndef IWXD_OUTBOX_H
#define IWXD_OUTBOX_H

#include "ipc/ipc.h"

#include "conn.h"

struct iwxd;
struct client;

void outbox_init(struct client *c);
/* Drop what still waits: the client is gone. */
void outbox_clear(struct client *c);
/* The socket has room again: send what waits. */
void outbox_flush(struct iwxd *d, struct client *c);

void outbox_send(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *h, const void *body,
		 const int *fds, unsigned nfds);
void outbox_reply(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *req, int status,
		  const void *body, uint32_t len, const int *fds, unsigned nfds);
/* Answer req with err: why, where a limit refused it (client.why, sent as IWX_IPC_F_WHY). */
void outbox_refuse(struct iwxd *d, struct client *c, const struct iwx_ipc_hdr *req, int err);
void outbox_event(struct iwxd *d, struct client *c, const struct iwx_ipc_event *ev);
/* An event's description of a connection: what was agreed, and the addresses. */
void outbox_event_of_conn(struct iwx_ipc_event *ev, const struct iwx_conn *conn);

#endif /* IWXD_OUTBOX_H */
