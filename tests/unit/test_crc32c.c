// SPDX-License-Identifier: MIT
/*
 * CRC32c: published vectors (RFC 3720 §B.4), incremental use, every short length against
 * a bitwise reference, and a real peer's FPDU.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "proto/crc32c.h"

#include "testutil.h"

Test(crc32c, check_value)
{
	cr_assert_eq(iwx_crc32c("123456789", 9), 0xe3069283);
	cr_assert_eq(iwx_crc32c("", 0), 0);
}

Test(crc32c, rfc3720_vectors)
{
	uint8_t b[32];

	memset(b, 0, sizeof(b));
	cr_assert_eq(iwx_crc32c(b, 32), 0x8a9136aa);
	memset(b, 0xff, sizeof(b));
	cr_assert_eq(iwx_crc32c(b, 32), 0x62a8ab43);
	for (int i = 0; i < 32; i++)
		b[i] = i;
	cr_assert_eq(iwx_crc32c(b, 32), 0x46dd794e);
	for (int i = 0; i < 32; i++)
		b[i] = 31 - i;
	cr_assert_eq(iwx_crc32c(b, 32), 0x113fdb5c);
}

Test(crc32c, incremental_equals_one_shot_at_every_split)
{
	uint8_t b[777];

	fill_pattern(b, sizeof(b), 7);
	uint32_t whole = iwx_crc32c(b, sizeof(b));

	for (size_t i = 0; i <= sizeof(b); i++) {
		uint32_t s = iwx_crc32c_update(IWX_CRC32C_INIT, b, i);

		s = iwx_crc32c_update(s, b + i, sizeof(b) - i);
		cr_assert_eq(iwx_crc32c_final(s), whole, "split at %zu", i);
	}
}

/* One bit at a time, reflected polynomial 0x82F63B78: slow, and obviously right. */
static uint32_t crc32c_bitwise(uint32_t state, const uint8_t *p, size_t len)
{
	while (len--) {
		state ^= *p++;
		for (int k = 0; k < 8; k++)
			state = state >> 1 ^ (state & 1 ? 0x82f63b78u : 0);
	}
	return state;
}

/* Short pieces take the CPU's CRC32C instruction, long ones ISA-L: both agree with it. */
Test(crc32c, every_length_and_alignment_matches_the_bitwise_reference)
{
	uint8_t b[300];

	fill_pattern(b, sizeof(b), 11);
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len + off <= sizeof(b) && len <= 280; len++)
			cr_assert_eq(iwx_crc32c_update(0x12345678u, b + off, len),
				     crc32c_bitwise(0x12345678u, b + off, len), "%zu bytes at +%zu",
				     len, off);
}

Test(crc32c, siw_fpdu_crc_is_sent_least_significant_byte_first)
{
	uint8_t f[64];
	size_t n = hex_decode(siw_client_fpdus[0], f, sizeof(f));
	uint32_t crc = iwx_crc32c(f, n - 4);
	uint8_t wire[4];

	cr_assert_eq(crc, 0x7c29f75e);
	iwx_crc32c_put(wire, crc);
	cr_assert_arr_eq(wire, f + n - 4, 4);
	cr_assert_eq(iwx_crc32c_get(f + n - 4), crc);
}
