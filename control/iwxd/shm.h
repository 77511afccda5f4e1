/* SPDX-License-Identifier: MIT */
/*
 * Memory a client shares with iwxd for its registrations outside the arena (shm.c).
 * iwxd creates it, the client moves its pages into it (libiwx), and iwxd registers
 * what it maps itself: it never reaches the client's address space with its own rights.
 */
#ifndef IWXD_SHM_H
#define IWXD_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/ipc.h"

struct iwxd;
struct client;
struct iwx_arena;

/* SHM_CREATE: new shared memory of req->size bytes; its fd in *fd (iwxd keeps its own). */
int shm_create(struct iwxd *d, struct client *c, struct iwx_ipc_shm *req, int *fd);
/* SHM_FREE: -ENOENT not c's, -EBUSY while registrations use it. */
int shm_free(struct iwxd *d, struct client *c, uint32_t id);

/* MR_REG outside the arena: the region in the pieces the request names; its STag or -errno. */
int64_t shm_mr_reg(struct iwxd *d, struct client *c, const struct iwx_ipc_mr_reg *r);
/* MR_DEREG of any of c's regions: what it held in shared memory is let go. */
int shm_mr_dereg(struct iwxd *d, struct client *c, uint32_t stag);

/* The shared memory of c that holds [addr, addr + len) alone, as iwxd maps it; or NULL. */
const struct iwx_arena *shm_backing(const struct client *c, const void *addr, size_t len);

/* Unmap what is no longer registered and no queue pair of c refers to any more (at most
 * every RECLAIM_MS, shm.c: each look walks the queue pairs). */
void shm_reclaim(struct iwxd *d, struct client *c);
/* c is gone, and its queue pairs with it: unmap and close all it shared. */
void shm_client_gone(struct iwxd *d, struct client *c);

#endif /* IWXD_SHM_H */
