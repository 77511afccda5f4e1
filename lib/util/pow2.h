/* SPDX-License-Identifier: MIT */
/* The power of two at or above n (1 for 0): the size of a ring that holds n entries. */
#ifndef IWX_UTIL_POW2_H
#define IWX_UTIL_POW2_H

#include <stdint.h>

static inline uint32_t iwx_pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

#endif /* IWX_UTIL_POW2_H */
