// SPDX-License-Identifier: MIT
/* CRC32c through Intel ISA-L, which picks the fastest kernel this CPU has. */
#include <stdbool.h>

#include <isa-l/crc.h>

#include <iwx/crc32c.h>

#if defined(__x86_64__)
static bool have_avx;

static void __attribute__((constructor)) crc32c_probe_cpu(void)
{
	__builtin_cpu_init();
	have_avx = __builtin_cpu_supports("avx");
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

	while (len > 0) {
		int n = len > (1u << 30) ? 1 << 30 : (int)len;

		state = crc32_iscsi((unsigned char *)p, n, state);
		p += n;
		len -= n;
	}
	clear_upper_vector_state();
	return state;
}
