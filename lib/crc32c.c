// SPDX-License-Identifier: MIT
/* CRC32c through Intel ISA-L, which picks the fastest kernel this CPU has. */
#include <isa-l/crc.h>

#include <iwx/crc32c.h>

/* ISA-L's crc32_iscsi takes and returns the raw register: no pre- or post-inversion. */
uint32_t iwx_crc32c_update(uint32_t state, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len > 0) {
		int n = len > (1u << 30) ? 1 << 30 : (int)len;

		state = crc32_iscsi((unsigned char *)p, n, state);
		p += n;
		len -= n;
	}
	return state;
}
