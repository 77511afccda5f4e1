/* SPDX-License-Identifier: MIT */
/*
 * Protection domains, memory regions and their STags (RFC 5040 §2.1, §8.1.2): the
 * daemon's table of what remote peers may touch. An STag is a 24-bit index, drawn
 * at random so that peers cannot guess live ones, and an 8-bit consumer key.
 */
#ifndef IWX_MEM_H
#define IWX_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/ddp_check.h"

struct iwx_mem;

/*
 * A registered region: what the checks see, and where the bytes are in this process
 * (memory the client shares with the daemon: never the client's own address space).
 */
struct iwx_region {
	struct iwx_stag_desc	desc;	/* stag, pd, valid, access, base_to, len */
	uint8_t			*addr;	/* the byte at desc.base_to */
	uint64_t		owner;	/* the client that registered it: an identity never reused */
};

struct iwx_mem *iwx_mem_new(void);

/*
 * Told of every change to the regions, once made: gone, when non-zero, is an STag that
 * names nothing valid any more (invalidated, deregistered, or its key changed); now, when
 * not NULL, a region as it now is (registered, invalidated, revalidated). A watcher that
 * hands STags on (the fast path) must have stopped every use of gone when it returns.
 */
typedef void (*iwx_mem_watch_fn)(void *ctx, uint32_t gone, const struct iwx_region *now);
void iwx_mem_watch(struct iwx_mem *m, iwx_mem_watch_fn fn, void *ctx);
void iwx_mem_free(struct iwx_mem *m);

/* A new protection domain of owner. Returns its id (> 0) or -ENOMEM. */
int64_t iwx_mem_pd_alloc(struct iwx_mem *m, uint64_t owner);

/* Does protection domain pd exist and belong to owner? */
bool iwx_mem_pd_owned(const struct iwx_mem *m, uint64_t owner, uint32_t pd);

/* Protection domains of every owner, for `iwx status`. */
uint32_t iwx_mem_pd_count(const struct iwx_mem *m);

/* Deregister every region and free every protection domain of owner (a client gone). */
void iwx_mem_release_owner(struct iwx_mem *m, uint64_t owner);

/* Free a protection domain: -EBUSY while regions use it, -ENOENT if not owner's. */
int iwx_mem_pd_free(struct iwx_mem *m, uint64_t owner, uint32_t pd);

/*
 * Register len bytes at addr in pd with access (IWX_ACCESS_*), tagged offsets starting
 * at base_to. Returns the new STag (> 0 as int64) or -errno: -ENOENT pd not owner's,
 * -EINVAL bad arguments, -ENOSPC no STag left.
 */
int64_t iwx_mem_reg(struct iwx_mem *m, uint64_t owner, uint32_t pd, void *addr, uint64_t len,
		    uint64_t base_to, uint8_t access);

/* Deregister: -ENOENT when stag is not owner's. */
int iwx_mem_dereg(struct iwx_mem *m, uint64_t owner, uint32_t stag);

/*
 * The region an incoming STag names: matched on the full STag (index and key), valid
 * or invalidated; NULL when no such STag exists. The caller runs the checks of
 * proto/ddp_check.h on ->desc.
 */
const struct iwx_region *iwx_mem_lookup(const struct iwx_mem *m, uint32_t stag);

/*
 * Invalidate stag (RFC 5040 §5.3, Send with Invalidate; or a local invalidate):
 * 0, or -EINVAL when no such STag exists, -EACCES when it belongs to another PD than pd.
 * An invalidated STag stays in the table, failing the checks, until deregistered.
 */
int iwx_mem_invalidate(struct iwx_mem *m, uint32_t stag, uint32_t pd);

/* Make an invalidated STag valid again under a new key; returns the new STag or -errno. */
int64_t iwx_mem_revalidate(struct iwx_mem *m, uint64_t owner, uint32_t stag);

/* Visit every region (for `iwx stags`); stop when fn returns non-zero. */
int iwx_mem_for_each(const struct iwx_mem *m, int (*fn)(const struct iwx_region *mr, void *ctx),
		     void *ctx);

#endif /* IWX_MEM_H */
