/* SPDX-License-Identifier: MIT */
/* The Internet checksum (RFC 1071), in host order: add bytes to a sum, fold it into the field. */
#ifndef IWX_UTIL_INET_CSUM_H
#define IWX_UTIL_INET_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Add len bytes at data, as big-endian 16-bit words (an odd last byte padded), to sum. */
static inline uint32_t iwx_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* The checksum field's value (host order) for a sum: its ones' complement, folded to 16 bits. */
static inline uint16_t iwx_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif /* IWX_UTIL_INET_CSUM_H */
