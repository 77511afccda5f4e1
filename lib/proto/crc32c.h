/* SPDX-License-Identifier: MIT */
/* CRC32c (Castagnoli) as MPA uses it: the iSCSI CRC, sent least significant byte first. */
#ifndef IWX_CRC32C_H
#define IWX_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#define IWX_CRC32C_INIT 0xffffffffu

/* Continue a running CRC (start from IWX_CRC32C_INIT) over len more bytes. */
uint32_t iwx_crc32c_update(uint32_t state, const void *buf, size_t len);

/* The CRC value of a running state. */
static inline uint32_t iwx_crc32c_final(uint32_t state)
{
	return ~state;
}

/* CRC32c of one buffer. */
static inline uint32_t iwx_crc32c(const void *buf, size_t len)
{
	return iwx_crc32c_final(iwx_crc32c_update(IWX_CRC32C_INIT, buf, len));
}

/* The 4 CRC bytes of an FPDU, as they stand on the wire. */
static inline void iwx_crc32c_put(uint8_t out[4], uint32_t crc)
{
	out[0] = crc;
	out[1] = crc >> 8;
	out[2] = crc >> 16;
	out[3] = crc >> 24;
}

static inline uint32_t iwx_crc32c_get(const uint8_t in[4])
{
	return in[0] | in[1] << 8 | in[2] << 16 | (uint32_t)in[3] << 24;
}

#endif /* IWX_CRC32C_H */
