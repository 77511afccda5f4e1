// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Which memories iwxd made for clients the kernel still has: an iterator over every BPF
 * map that writes the id of each named "iwx_arena" (control/engine/arena.c), in the
 * kernel's order, which is the ids' (map_idr). iwxd reads it where it would otherwise
 * ask BPF_MAP_GET_FD_BY_ID of each id, which takes CAP_SYS_ADMIN; an iterator takes
 * CAP_BPF and CAP_PERFMON, which iwxd keeps (control/iwxd/arenas_live.c).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "kernel.h"

static const char arena_name[] = "iwx_arena";

SEC("iter/bpf_map")
int iwx_arenas_live(struct bpf_iter__bpf_map *ctx)
{
	struct bpf_map *map = ctx->map;
	__u32 id;

	if (!map)
		return 0;
	for (int i = 0; i < (int)sizeof(arena_name); i++)
		if (map->name[i] != arena_name[i])
			return 0;
	id = map->id;
	bpf_seq_write(ctx->meta->seq, &id, sizeof(id));
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
