/* SPDX-License-Identifier: MIT */
/* The one clock of iwx's deadlines and timers: CLOCK_MONOTONIC, in milliseconds (and in µs for waits shorter than one). */
#ifndef IWX_UTIL_CLOCK_H
#define IWX_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t iwx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline uint64_t iwx_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

#endif /* IWX_UTIL_CLOCK_H */
