/* SPDX-License-Identifier: MIT */
/*
 * The shared memory arena: registered memory of one client, created by iwxd and mapped
 * by both. Its backing is a BPF array map with BPF_F_MMAPABLE, one 4096-byte element per
 * page, so that the fast path can place payload straight into it (element i holds the
 * arena's bytes [i * 4096, (i + 1) * 4096)). Where BPF is unavailable, a sealed memfd.
 * iwxd makes what it shares with a client this way (doorbells too): the kernel keeps a
 * map, under its id, while anything holds it, which is how iwxd knows when the memory is
 * really gone (control/iwxd/shared.c, arenas_live.h). Rings, which no program reaches, are memfds
 * (iwx_arena_create_memfd), whose pages iwxd can free itself.
 *
 * IWX_ARENA_NO_BPF=1 in the environment makes iwx_arena_create treat BPF as unavailable
 * (for tests, and for hosts where the map would work but should not be used).
 */
#ifndef IWX_ARENA_H
#define IWX_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IWX_ARENA_ELEM	4096u	/* value size of the map: one element per page */

struct iwx_arena {
	int		fd;	/* the map, or the memfd; -1 when not set up */
	void		*base;	/* MAP_SHARED mapping of size bytes; NULL when not set up */
	size_t		size;	/* a multiple of the page size (and of IWX_ARENA_ELEM) */
	bool		bpf;	/* fd is a BPF array map, not a memfd */
	uint32_t	map_id;	/* the map's id (bpf_map_get_fd_by_id); 0 for a memfd or a client */
};

/*
 * The bytes an arena of size bytes takes: size rounded up to whole pages; 0 when it is
 * 0, overflows or needs more than 2^32 elements.
 */
size_t iwx_arena_size(size_t size);

/*
 * Create an arena of size bytes, rounded up to whole pages, zero-filled. BPF first;
 * when BPF is unavailable (no permission, no bpf(), a kernel without mmapable arrays)
 * and allow_fallback, a memfd sealed against resizing, so that a client cannot shrink
 * it under the daemon. Returns 0 or -errno: -EINVAL size 0 or more than 2^32 elements,
 * -ENOMEM (also from the kernel for more than it can hold), or BPF's error when it is
 * unavailable and !allow_fallback. On failure a->fd is -1 and a->base NULL.
 */
int iwx_arena_create(struct iwx_arena *a, size_t size, bool allow_fallback);

/*
 * A sealed memfd arena, even where BPF is available: for memory no BPF program reaches
 * (rings), whose pages are made only as they are touched, and can be freed at once
 * (iwx_arena_free_pages). Returns as iwx_arena_create.
 */
int iwx_arena_create_memfd(struct iwx_arena *a, size_t size);

/*
 * Free the pages of a memfd arena now, in every process that maps it (MADV_REMOVE: a
 * hole punched in the memfd): what another process maps there reads zeros, and what it
 * writes there again is its own. 0, or -errno (-EINVAL for a BPF map's, which the kernel
 * frees with the map).
 */
int iwx_arena_free_pages(struct iwx_arena *a);

/*
 * The client side: map size bytes of an arena fd received from iwxd (bpf says which
 * kind). Takes ownership of fd on success only. -EINVAL when fd is smaller than size.
 */
int iwx_arena_map(struct iwx_arena *a, int fd, size_t size, bool bpf);

/* Unmap and close; a no-op on an arena not set up (base NULL). */
void iwx_arena_destroy(struct iwx_arena *a);

#endif /* IWX_ARENA_H */
