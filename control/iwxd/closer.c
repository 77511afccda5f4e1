// SPDX-License-Identifier: MIT
/* Descriptors closed off the loop's thread (closer.h). */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "closer.h"
#include "log.h"

#define STOP_WAIT_S	1	/* closer_stop waits this long for the queue to be closed */

static void *run(void *arg)
{
	struct closer *cl = arg;
	int fd;

	/* pipe(7): writes of an int are atomic, so each read takes one whole */
	for (;;) {
		ssize_t n = read(cl->pipe[0], &fd, sizeof(fd));

		if (n == sizeof(fd))
			close(fd);
		else if (!(n < 0 && errno == EINTR))	/* a signal this thread took: read on */
			return NULL;	/* the end of the pipe: closer_stop */
	}
}

int closer_start(struct closer *cl)
{
	int err;

	if (pipe2(cl->pipe, O_CLOEXEC))
		return -errno;
	/* a full pipe means a close hangs and many wait behind it: the loop must not wait too */
	if (fcntl(cl->pipe[1], F_SETFL, O_NONBLOCK)) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&cl->thread, NULL, run, cl);
	if (!err)
		return 0;
fail:
	close(cl->pipe[0]);
	close(cl->pipe[1]);
	return err;
}

void closer_close(struct closer *cl, int fd)
{
	if (write(cl->pipe[1], &fd, sizeof(fd)) != sizeof(fd))
		/* closing it here could hang the loop: better one descriptor too many */
		log_warn("cannot queue descriptor %d for closing (%m): it stays open", fd);
}

void closer_stop(struct closer *cl)
{
	struct timespec until;

	close(cl->pipe[1]);
	clock_gettime(CLOCK_REALTIME, &until);	/* pthread_timedjoin_np(3) */
	until.tv_sec += STOP_WAIT_S;
	if (pthread_timedjoin_np(cl->thread, NULL, &until)) {
		/* the exit ends the thread: a lingering close gives up on its SIGKILL */
		log_warn("a descriptor's close hangs: not waiting for it");
		return;
	}
	close(cl->pipe[0]);
}
