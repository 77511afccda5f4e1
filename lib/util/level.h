/* SPDX-License-Identifier: MIT */
/*
 * An eventfd kept readable exactly while something is there to take (a level, as
 * poll() users expect of libiwx's and the drop-ins' descriptors), however many times
 * it is set. Internal to libiwx and the drop-ins; not installed.
 */
#ifndef IWX_UTIL_LEVEL_H
#define IWX_UTIL_LEVEL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* Make fd (an eventfd counted 0 or 1 by these calls alone) readable iff want; *now tracks it. */
static inline void iwx_level_set(int fd, bool *now, bool want)
{
	uint64_t v = 1;

	if (want == *now)
		return;
	*now = want;
	if ((want ? write(fd, &v, sizeof(v)) : read(fd, &v, sizeof(v))) < 0) {
		/* an eventfd counted 0 or 1: neither fails */
	}
}

/* Close what iwx_level_new made (both -1 after), and give back err. */
static inline int iwx_level_drop(int *epfd, int *own, int err)
{
	if (*own >= 0)
		close(*own);
	if (*epfd >= 0)
		close(*epfd);
	*own = *epfd = -1;
	return err;
}

/*
 * A descriptor readable while a level of one's own is set, or while what the caller adds
 * to it is readable: an epoll (*epfd) of a new eventfd (*own, for iwx_level_set). 0, or
 * -errno with nothing made (both -1).
 */
static inline int iwx_level_new(int *epfd, int *own)
{
	*own = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*epfd = epoll_create1(EPOLL_CLOEXEC);
	if (*own < 0 || *epfd < 0 ||
	    epoll_ctl(*epfd, EPOLL_CTL_ADD, *own, &(struct epoll_event){ .events = EPOLLIN }))
		return iwx_level_drop(epfd, own, -errno);
	return 0;
}

/* iwx_level_new, readable also while fd (level-triggered) is. */
static inline int iwx_level_join(int fd, int *epfd, int *own)
{
	int err = iwx_level_new(epfd, own);

	if (!err && epoll_ctl(*epfd, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN }))
		err = iwx_level_drop(epfd, own, -errno);
	return err;
}

#endif /* IWX_UTIL_LEVEL_H */
