/* SPDX-License-Identifier: MIT */
/*
 * Memory iwxd shares with clients (shared.c): arenas, doorbells, rings and shm.c's memory,
 * charged to the client's user and to all clients' total from creation until the kernel
 * has freed it, however long the client keeps a descriptor or a mapping after iwxd let go
 * (a ring's, iwxd frees itself when the ring goes).
 */
#ifndef IWXD_SHARED_H
#define IWXD_SHARED_H

#include <stddef.h>
#include <stdint.h>

struct iwxd;
struct client;
struct user;
struct iwx_arena;

/*
 * Memory of size bytes (rounded up to pages) for client c, mapped here: 0, or -errno
 * (-ENOSPC beyond its user's --memory-per-user or --arena-total, logged once).
 */
int shared_create(struct iwxd *d, struct client *c, struct iwx_arena *a, size_t size);
/* ... its descriptor in *fd, the client's alone once sent: the mapping is all iwxd keeps. */
int shared_create_given(struct iwxd *d, struct client *c, struct iwx_arena *a, size_t size, int *fd);
/* Unmap and close a; its bytes stay charged to u until nothing holds it (a no-op if unset). */
void shared_destroy(struct iwxd *d, struct user *u, struct iwx_arena *a);

/*
 * A ring (a queue pair's, a CQ's, an SRQ's) of size bytes: as shared_create_given, in a
 * sealed memfd whose pages are made as they are touched (shared.c).
 */
int shared_ring_create(struct iwxd *d, struct client *c, struct iwx_arena *a, size_t size,
		       int *fd);
/* Unmap a ring and free its pages in every mapping: uncharged at once (a no-op if unset). */
void shared_ring_destroy(struct iwxd *d, struct user *u, struct iwx_arena *a);

/* Charge bytes to c's user and the total ahead of creating them: 0, or -ENOSPC (logged once). */
int shared_charge(struct iwxd *d, struct client *c, uint64_t bytes);
/*
 * iwxd no longer holds the memory of BPF map map_id (0: a memfd), bytes charged to u: they
 * are uncharged once the kernel has freed it.
 */
void shared_depart(struct iwxd *d, struct user *u, uint32_t map_id, uint64_t bytes);

/* iwxd starts: how it will know when the kernel has freed departed memory (arenas_live.h). */
void shared_start(struct iwxd *d);
/* Look at departed memory again when due (loop_due until then). */
void shared_timers(struct iwxd *d, uint64_t now);
/* iwxd stops, its clients gone: forget what they left, and their users. */
void shared_stop(struct iwxd *d);

#endif /* IWXD_SHARED_H */
