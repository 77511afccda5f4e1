// SPDX-License-Identifier: MIT
/* A client that rings its doorbells without end (ringer.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include <iwx/iwx.h>

#include "client.h"

#include "ringer.h"

#define READY_MS	20000	/* the ringer's set-up: a thousand queue pairs take a while */

int ringer_run(const char *socket, uint32_t nqps, int ready_fd)
{
	IWX_OPTS(iwx_open_opts, o, .socket = socket, .arena_size = 1u << 20);
	struct iwx_device *dev = iwx_open(&o);
	struct iwx_pd *pd = dev ? iwx_alloc_pd(dev) : NULL;
	struct iwx_ipc_bells *b;
	uint32_t words;

	if (!pd)
		return -errno;
	for (uint32_t i = 0; i < nqps; i++) {
		struct iwx_cq *cq = iwx_create_cq(dev, 1);
		struct iwx_qp_init_attr attr = { .send_cq = cq, .recv_cq = cq, .sq_depth = 1,
						 .rq_depth = 1 };

		if (!cq || !iwx_create_qp(pd, &attr))
			return -errno;
	}
	b = dev->bells;	/* libiwx's own: the page, and the eventfd it writes to ring (client.h) */
	/* a bit for each queue pair and CQ, the rest of the last word as well */
	words = (2 * nqps + 63) / 64;
	if (ready_fd >= 0 && write(ready_fd, "\n", 1) != 1)
		return -errno;
	for (;;) {
		for (uint32_t w = 0; w < words; w++)
			__atomic_store_n(&b->bits[w], ~0ull, __ATOMIC_RELAXED);
		for (uint32_t s = 0; s < (words + 63) / 64; s++)
			__atomic_store_n(&b->sum[s], ~0ull, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&b->need_wakeup, __ATOMIC_SEQ_CST))
			continue;
		if (write(dev->bell_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
			return -errno;
	}
}

pid_t ringer_start(const char *socket, uint32_t nqps)
{
	struct pollfd p = { .events = POLLIN };
	int fds[2], err;
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(-ringer_run(socket, nqps, fds[1]) & 0x7f);
	}
	err = pid < 0 ? -errno : 0;
	close(fds[1]);
	p.fd = fds[0];
	if (!err && (poll(&p, 1, READY_MS) != 1 || read(fds[0], &c, 1) != 1))
		err = -ETIMEDOUT;
	close(fds[0]);
	if (err && pid > 0)
		ringer_stop(pid);
	return err ? err : pid;
}

void ringer_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
