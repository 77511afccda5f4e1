/* SPDX-License-Identifier: MIT */
/*
 * Which of the memories iwxd made for clients (BPF maps named "iwx_arena") the kernel
 * still has, by map id: through an iterator program (bpf/arenas_live.bpf.c), which needs
 * CAP_BPF and CAP_PERFMON where asking of each id (BPF_MAP_GET_FD_BY_ID) needs
 * CAP_SYS_ADMIN, and which answers for all of them in one read.
 */
#ifndef IWXD_ARENAS_LIVE_H
#define IWXD_ARENAS_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct arenas_live;

/* Load the iterator (before privileges are dropped or after: CAP_BPF, CAP_PERFMON). NULL: none. */
struct arenas_live *arenas_live_open(void);
void arenas_live_close(struct arenas_live *l);

/* Read which exist now: 0, or -errno (then ask nothing of the reading until one succeeds). */
int arenas_live_read(struct arenas_live *l);
/* Did map id exist at the last reading? */
bool arenas_live_has(const struct arenas_live *l, uint32_t id);

#endif /* IWXD_ARENAS_LIVE_H */
