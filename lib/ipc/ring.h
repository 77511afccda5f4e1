/* SPDX-License-Identifier: MIT */
/*
 * A single-producer single-consumer ring in memory shared between a client and iwxd:
 * work requests go one way (send and receive queues), completions the other.
 *
 * Each side keeps its own index privately and only publishes it, so a client that
 * scribbles over the shared indices can confuse only itself: the daemon never trusts
 * a count it did not check (iwx_ring_ready reports a corrupt ring) and copies an entry
 * out of shared memory before it validates it.
 */
#ifndef IWX_RING_H
#define IWX_RING_H

#include <stdint.h>
#include <string.h>

/* The shared part: indices on their own cache lines, free-running (wrap at 2^32). */
struct iwx_ring_ctl {
	_Alignas(64) uint32_t	prod;	/* written by the producer only */
	_Alignas(64) uint32_t	cons;	/* written by the consumer only */
};

/* One side's view: where the ring is, and this side's own index. */
struct iwx_ring {
	struct iwx_ring_ctl	*ctl;
	uint8_t			*entries;
	uint32_t		size;	/* entries, a power of two */
	uint32_t		esize;	/* bytes per entry */
	uint32_t		mine;	/* prod on the producer side, cons on the consumer side */
};

static inline void iwx_ring_init(struct iwx_ring *r, void *ctl, void *entries, uint32_t size,
				 uint32_t esize)
{
	r->ctl = ctl;
	r->entries = entries;
	r->size = size;
	r->esize = esize;
	r->mine = 0;
}

static inline void *iwx_ring_entry(const struct iwx_ring *r, uint32_t i)
{
	return r->entries + (size_t)((r->mine + i) & (r->size - 1)) * r->esize;
}

/* Producer: free slots (0 when the peer's index makes no sense). */
static inline uint32_t iwx_ring_space(const struct iwx_ring *r)
{
	uint32_t used = r->mine - __atomic_load_n(&r->ctl->cons, __ATOMIC_ACQUIRE);

	return used > r->size ? 0 : r->size - used;
}

/* Producer: publish n entries written at iwx_ring_entry(r, 0 .. n-1). */
static inline void iwx_ring_produce(struct iwx_ring *r, uint32_t n)
{
	r->mine += n;
	__atomic_store_n(&r->ctl->prod, r->mine, __ATOMIC_RELEASE);
}

/* Consumer: entries ready, or UINT32_MAX when the producer's index makes no sense. */
static inline uint32_t iwx_ring_ready(const struct iwx_ring *r)
{
	uint32_t n = __atomic_load_n(&r->ctl->prod, __ATOMIC_ACQUIRE) - r->mine;

	return n > r->size ? UINT32_MAX : n;
}

/* Consumer: copy the entry i places from the head (before trusting any of it). */
static inline void iwx_ring_read(const struct iwx_ring *r, uint32_t i, void *out)
{
	memcpy(out, iwx_ring_entry(r, i), r->esize);
}

/* Consumer: release n entries. */
static inline void iwx_ring_consume(struct iwx_ring *r, uint32_t n)
{
	r->mine += n;
	__atomic_store_n(&r->ctl->cons, r->mine, __ATOMIC_RELEASE);
}

#endif /* IWX_RING_H */
