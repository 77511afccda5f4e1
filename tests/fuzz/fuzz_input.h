/* SPDX-License-Identifier: MIT */
/* A structured target's input, read field by field: past its end, zeros. */
#ifndef IWX_FUZZ_INPUT_H
#define IWX_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_in {
	const uint8_t	*p;
	size_t		n;		/* bytes left */
};

/* The next bytes (at most 4) as a big-endian number. */
static inline uint32_t fuzz_take(struct fuzz_in *in, unsigned bytes)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

#endif /* IWX_FUZZ_INPUT_H */
