// SPDX-License-Identifier: MIT
/* Requests to iwxd on a raw IPC socket (raw_ipc.h). */
#include <errno.h>
#include <unistd.h>

#include "ipc/fdpass.h"
#include "ipc/ipc.h"

#include "raw_ipc.h"

int raw_call(int sock, uint16_t op, const void *req, uint32_t len, void *rep, size_t cap,
	     int *fds, unsigned *nfds)
{
	static uint32_t seq;
	struct iwx_ipc_hdr h = { .op = op, .seq = ++seq, .len = len }, r;
	unsigned keep = fds && nfds ? *nfds : 0, n;
	int got[IWX_FDPASS_MAX];
	int err = iwx_ipc_send(sock, &h, req, NULL, 0);

	if (err)
		return err;
	do {
		n = IWX_FDPASS_MAX;
		err = iwx_ipc_recv(sock, &r, rep, cap, got, &n);
		for (unsigned i = 0; i < n; i++) {
			if (r.op != IWX_IPC_EVENT && i < keep)
				fds[i] = got[i];
			else
				close(got[i]);
		}
	} while (err >= 0 && r.op == IWX_IPC_EVENT);
	if (nfds)
		*nfds = err >= 0 ? n : 0;
	if (err < 0)
		return err;
	return r.seq == h.seq && r.op == op ? r.status : -EPROTO;
}
