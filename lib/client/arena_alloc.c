// SPDX-License-Identifier: MIT
/*
 * First-fit allocation of a client's arena. The used blocks are kept sorted in one
 * array: an application allocates a few large buffers, not millions of small ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"

void arena_alloc_init(struct arena_alloc *a, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->size = size;
}

void arena_alloc_fini(struct arena_alloc *a)
{
	free(a->used);
	memset(a, 0, sizeof(*a));
}

int64_t arena_alloc_get(struct arena_alloc *a, size_t len, size_t align)
{
	size_t start = 0, i;

	if (!len || len > a->size)
		return -1;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct arena_block *u = realloc(a->used, cap * sizeof(*u));

		if (!u)
			return -1;
		a->used = u;
		a->cap = cap;
	}
	/* the gap before block i is [start, used[i].off); after the last, up to size */
	for (i = 0; i <= a->n; i++) {
		size_t end = i < a->n ? a->used[i].off : a->size;
		size_t off = (start + align - 1) & ~(align - 1);

		if (off <= end && end - off >= len) {
			memmove(&a->used[i + 1], &a->used[i], (a->n - i) * sizeof(*a->used));
			a->used[i] = (struct arena_block){ off, len };
			a->n++;
			return off;
		}
		if (i < a->n)
			start = a->used[i].off + a->used[i].len;
	}
	return -1;
}

int arena_alloc_put(struct arena_alloc *a, size_t off)
{
	for (size_t i = 0; i < a->n; i++) {
		if (a->used[i].off == off) {
			memmove(&a->used[i], &a->used[i + 1], (a->n - i - 1) * sizeof(*a->used));
			a->n--;
			return 0;
		}
	}
	return -EINVAL;
}
