/* SPDX-License-Identifier: MIT */
/*
 * An eventfd kept readable exactly while something is there to take (a level, as
 * poll() users expect of libiwx's and the drop-ins' descriptors), however many times
 * it is set. Internal to libiwx and the drop-ins; not installed.
 */
#ifndef IWX_LEVEL_H
#define IWX_LEVEL_H

#include <stdbool.h>
#include <stdint.h>
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

#endif /* IWX_LEVEL_H */
