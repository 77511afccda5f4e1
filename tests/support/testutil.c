// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

size_t hex_decode(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (*hex) {
		unsigned int v;

		if (isspace((unsigned char)*hex) || *hex == '|') {
			hex++;
			continue;
		}
		if (n == cap || sscanf(hex, "%2x", &v) != 1 || !isxdigit((unsigned char)hex[1])) {
			fprintf(stderr, "hex_decode: bad input at '%.8s'\n", hex);
			abort();
		}
		out[n++] = v;
		hex += 2;
	}
	return n;
}

void fill_pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = x;
	}
}

/* Frames 17, 20, 22, 26 and 28 of shared/interop/captures/siw-rping-siw-crc.pcapng. */
const char *const siw_client_fpdus[] = {
	"0022 4143 00000000 00000000 00000001 00000000 0000564701ab8450 3ef3d100 00000040 5ef7297c",
	"004e c142 7c108b00 000055bf4ce09130 72646d612d70696e672d303a204142434445464748494a4b4c4d4e4f"
	"505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70717200 a87f8907",
	"0022 4143 00000000 00000000 00000002 00000000 0000564701ab5130 447a7c00 00000040 1c0a3646",
	"0022 4143 00000000 00000000 00000003 00000000 0000564701ab8450 3ef3d100 00000040 840c3d66",
	"004e c142 7c108b00 000055bf4ce09130 72646d612d70696e672d313a2042434445464748494a4b4c4d4e4f"
	"505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071727300 c3290b84",
	NULL,
};

/* Frames 19, 21, 23 and 24: Read Request, Send, RDMA Write, Send. */
const char *const siw_server_fpdus[] = {
	"002e 4141 00000000 00000001 00000001 00000000 7c108b00 000055bf4ce09130 00000040 3ef3d100"
	" 0000564701ab8450 209b7576",
	"0022 4143 00000000 00000000 00000001 00000000 00000000000000000000000000000000 84609a12",
	"004e c140 447a7c00 0000564701ab5130 72646d612d70696e672d303a204142434445464748494a4b4c4d4e4f"
	"505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70717200 9e1d86fc",
	"0022 4143 00000000 00000000 00000002 00000000 00000000000000000000000000000000 b3e68405",
	NULL,
};
