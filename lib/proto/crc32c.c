// SPDX-License-Identifier: MIT
/*
 * CRC32c through Intel ISA-L, which picks the fastest kernel this CPU has; pieces of a
 * few bytes (an FPDU's header, its pad) through the CPU's own CRC32C instruction.
 */
#include <stdbool.h>
#include <string.h>

#include <isa-l/crc.h>

#include "proto/crc32c.h"

/*
 * Below this, ISA-L's kernel costs more than the bytes: about 15 ns for a 14-byte
 * header on this machine's AVX-512 kernel against 50 for 1420 bytes.
 */
#define SMALL_LEN	32

#if defined(__x86_64__)
static bool have_avx, have_sse42;

static void __attribute__((constructor)) crc32c_probe_cpu(void)
{
	__builtin_cpu_init();
	have_avx = __builtin_cpu_supports("avx");
	have_sse42 = __builtin_cpu_supports("sse4.2");
}

/* SSE4.2's crc32 instruction is CRC32c, on the raw register like ISA-L's kernels. */
__attribute__((target("sse4.2"))) static uint32_t crc32c_small(uint32_t state, const uint8_t *p,
							      size_t len)
{
	uint64_t s = state, w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		s = __builtin_ia32_crc32di(s, w);
	}
	for (; len; p++, len--)
		s = __builtin_ia32_crc32qi((uint32_t)s, *p);
	return (uint32_t)s;
}

/*
 * ISA-L 2.30's AVX-512 kernel returns with the upper halves of the vector registers
 * dirty (no vzeroupper), and every SSE instruction after it then pays a transition
 * penalty: the receive parser ran 3-4x slower on 1448-byte FPDUs until this.
 */
static inline void clear_upper_vector_state(void)
{
	if (have_avx)
		__asm__ volatile("vzeroupper" ::: "memory");
}
#else
static inline void clear_upper_vector_state(void)
{
}
#endif

/* ISA-L's crc32_iscsi takes and returns the raw register: no pre- or post-inversion. */
uint32_t iwx_crc32c_update(uint32_t state, const void *buf, size_t len)
{
	const unsigned char *p = buf;

#if defined(__x86_64__)
	if (len < SMALL_LEN && have_sse42)
		return crc32c_small(state, p, len);
#endif
	while (len > 0) {
		int n = len > (1u << 30) ? 1 << 30 : (int)len;

		state = crc32_iscsi((unsigned char *)p, n, state);
		p += n;
		len -= n;
	}
	clear_upper_vector_state();
	return state;
}
