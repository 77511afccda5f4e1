// SPDX-License-Identifier: MIT
/* Pools of buffers borrowed while busy (bufpool.h). */
#include <sys/mman.h>

#include "bufpool.h"

static uint64_t lent;

/*
 * Mapped, not from malloc: an unmapped buffer's memory goes back to the system at once,
 * where a heap keeps what was freed (resident, when touched) for its next allocation.
 */
void *iwx_bufpool_get(struct iwx_bufpool *pool)
{
	void *buf = pool->free;

	if (buf) {
		pool->free = *(void **)buf;
		pool->nfree--;
	} else {
		buf = mmap(NULL, pool->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return NULL;
	}
	lent++;
	return buf;
}

void *iwx_bufpool_put(struct iwx_bufpool *pool, void *buf)
{
	if (!buf)
		return NULL;
	lent--;
	if (pool->nfree == IWX_BUFPOOL_KEEP) {
		munmap(buf, pool->len);
		return NULL;
	}
	*(void **)buf = pool->free;
	pool->free = buf;
	pool->nfree++;
	return NULL;
}

uint64_t iwx_bufpool_lent(void)
{
	return lent;
}
