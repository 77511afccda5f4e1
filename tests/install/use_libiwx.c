// SPDX-License-Identifier: MIT
/* Built against an installed libiwx through pkg-config: the headers and library are usable. */
#include <errno.h>
#include <stdio.h>

#include <iwx/crc32c.h>
#include <iwx/iwx.h>
#include <iwx/mpa.h>

int main(void)
{
	uint32_t crc = iwx_crc32c("123456789", 9);
	uint32_t mulpdu = iwx_mpa_mulpdu(1448, false);
	struct iwx_open_opts o = { .socket = "/nonexistent/iwxd.sock" };
	struct iwx_device *dev = iwx_open(&o);	/* the verbs API links; no daemon there */
	int err = errno;

	printf("libiwx: crc32c 0x%08x, MULPDU(1448) %u, iwx_open without a daemon: %s\n", crc,
	       mulpdu, dev ? "opened?" : iwx_strerror(err));
	return crc == 0xe3069283 && mulpdu == 1442 && !dev && err == ENOENT ? 0 : 1;
}
