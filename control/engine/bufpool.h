/* SPDX-License-Identifier: MIT */
/*
 * Buffers a queue pair needs only while it is busy (a segment being gathered, a batch
 * of FPDUs being sent, bytes being staged), borrowed from a pool of one size when the
 * need comes and given back when it ends, so that an idle queue pair holds none. A pool
 * keeps a few buffers given back for the next borrower and unmaps the rest: a burst of
 * activity does not pin its memory for good.
 * Not thread-safe: the engine runs on one thread (qp.h), and so do its pools.
 */
#ifndef IWX_BUFPOOL_H
#define IWX_BUFPOOL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Buffers a pool keeps when given back: enough for the queue pairs busy at once in the
 * usual case, few enough to cost little (the largest, a batch of FPDUs, is 129 KiB).
 */
#define IWX_BUFPOOL_KEEP	8

struct iwx_bufpool {
	size_t		len;		/* of each buffer */
	void		*free;		/* buffers given back, each holding the next's address */
	uint32_t	nfree;
};

#define IWX_BUFPOOL_INIT(bytes)	{ .len = (bytes) }

/* A buffer of pool->len bytes, contents undefined; NULL when there is no memory. */
void *iwx_bufpool_get(struct iwx_bufpool *pool);

/* Give buf (from iwx_bufpool_get on pool, or NULL) back. Returns NULL: p = put(pool, p). */
void *iwx_bufpool_put(struct iwx_bufpool *pool, void *buf);

/* How many buffers this process's pools have lent and not had back. */
uint64_t iwx_bufpool_lent(void);

#endif /* IWX_BUFPOOL_H */
