/* SPDX-License-Identifier: MIT */
/*
 * Closing descriptors on a thread of their own. The last close of a descriptor a client
 * passed, or of a socket with some waiting in its queue, runs that file's release, which
 * may wait as long as the client likes: a TCP socket with SO_LINGER waits there for its
 * unsent data to leave (socket(7)), behind a window its peer keeps shut. On the loop's
 * thread that would stop the daemon, its signals included; here it holds up only the
 * closes queued behind it.
 */
#ifndef IWXD_CLOSER_H
#define IWXD_CLOSER_H

#include <pthread.h>

struct closer {
	int		pipe[2];	/* descriptors to close, by number: loop -> thread */
	pthread_t	thread;
};

/* Start the thread (with the signal mask of the caller). 0 or -errno. */
int closer_start(struct closer *cl);

/* Close fd on the closer's thread; the caller no longer uses it. */
void closer_close(struct closer *cl, int fd);

/* Close what is queued and end the thread; a close that hangs is left to the exit. */
void closer_stop(struct closer *cl);

#endif /* IWXD_CLOSER_H */
