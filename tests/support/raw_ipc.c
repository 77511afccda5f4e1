// SPDX-License-Identifier: MIT
/* Requests to iwxd on a raw IPC socket (raw_ipc.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/fdpass.h"
#include "ipc/ipc.h"

#include "raw_ipc.h"

static char why[IWX_IPC_WHY_MAX];

int raw_call(int sock, uint16_t op, const void *req, uint32_t len, void *rep, size_t cap,
	     int *fds, unsigned *nfds)
{
	static uint32_t seq;
	struct iwx_ipc_hdr h = { .op = op, .seq = ++seq, .len = len }, r;
	unsigned keep = fds && nfds ? *nfds : 0, n;
	int got[IWX_FDPASS_MAX];
	/* room for the reply, an event, or why the request failed */
	size_t room = cap + sizeof(struct iwx_ipc_event) + sizeof(struct iwx_ipc_why);
	uint8_t *body = malloc(room);
	int err = body ? iwx_ipc_send(sock, &h, req, NULL, 0) : -ENOMEM;

	why[0] = 0;
	if (err) {
		free(body);
		return err;
	}
	do {
		n = IWX_FDPASS_MAX;
		err = iwx_ipc_recv(sock, &r, body, room, got, &n);
		for (unsigned i = 0; i < n; i++) {
			if (r.op != IWX_IPC_EVENT && i < keep)
				fds[i] = got[i];
			else
				close(got[i]);
		}
	} while (err >= 0 && r.op == IWX_IPC_EVENT);
	if (nfds)
		*nfds = err >= 0 ? n : 0;
	if (err > 0 && r.status < 0 && (r.flags & IWX_IPC_F_WHY))
		snprintf(why, sizeof(why), "%.*s", err, (const char *)body);
	else if (err > 0 && (size_t)err > cap)
		err = -EPROTO;	/* a body longer than the caller's: not the reply it asked for */
	else if (err > 0)
		memcpy(rep, body, (size_t)err);
	free(body);
	if (err < 0)
		return err;
	return r.seq == h.seq && r.op == op ? r.status : -EPROTO;
}

const char *raw_why(void)
{
	return why;
}
