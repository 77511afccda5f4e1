// SPDX-License-Identifier: MIT
/* Built against an installed libiwx through pkg-config: the headers and library are usable. */
#include <stdio.h>

#include <iwx/crc32c.h>
#include <iwx/mpa.h>

int main(void)
{
	uint32_t crc = iwx_crc32c("123456789", 9);
	uint32_t mulpdu = iwx_mpa_mulpdu(1448, false);

	printf("libiwx: crc32c 0x%08x, MULPDU(1448) %u\n", crc, mulpdu);
	return crc == 0xe3069283 && mulpdu == 1442 ? 0 : 1;
}
