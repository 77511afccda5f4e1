/* SPDX-License-Identifier: MIT */
/*
 * Bytes placed into memory an application may read, and write, as they land (a byte
 * of an RDMA Write it polls, as riostream and ib_write_lat do): each byte stored once.
 * memcpy may store a byte twice (glibc's vector copies overlap their first and last
 * stores: 64 bytes are two stores of the same 64), and a program that saw the first
 * and wrote the byte since sees its old value come back, and waits for ever.
 */
#ifndef IWX_UTIL_PLACE_COPY_H
#define IWX_UTIL_PLACE_COPY_H

#include <stddef.h>
#include <stdint.h>

static inline void iwx_place_copy(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
	/* each byte once, at the speed of an ERMS copy */
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#else
	volatile uint8_t *d = dst;
	const uint8_t *s = src;

	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
#endif
}

#endif /* IWX_UTIL_PLACE_COPY_H */
