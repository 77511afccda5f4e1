/* SPDX-License-Identifier: MIT */
/*
 * The fast path, iwxd's side: the BPF programs of bpf/fastpath.bpf.c, loaded at the
 * first attach and attached to interfaces on request; the maps they read, kept to what
 * iwxd knows (connections in full operation, valid STags of memory BPF reaches); and
 * each connection's slot, handed to its engine (iwx_llp_tcp_fast).
 *
 * Exact ends: when a change of a region or a connection returns, no program anywhere
 * still uses what it replaced (each CPU's count, iwx_fp_cpu, is waited for).
 */
#ifndef IWXD_FASTPATH_H
#define IWXD_FASTPATH_H

#include <stdint.h>

#include "ipc/ipc.h"

struct iwx_region;
struct iwxd;
struct vqp;

/*
 * --fastpath-rcvbuf's default: a followed connection's SO_RCVBUF. The kernel doubles it,
 * and TCP holds at most that much unread (payload and its buffers' overhead): 4 MiB, within
 * the 6 MiB of full FPDUs a slot's records cover (IWX_FP_RING). TCP's own buffer grows to
 * tcp_rmem's most (32 MiB on some hosts): once iwxd lags further than the records cover,
 * the programs skip FPDUs ('ring_full'), iwxd copies them, lags further, and placing
 * collapses (19-68 % skipped in 3 s of 1 MiB Writes, BENCHMARKS.md).
 */
#define FP_RCVBUF	(2u << 20)

/* FP_ATTACH: attach to an interface (loading the programs the first time). 0 or -errno. */
int fastpath_attach(struct iwxd *d, const struct iwx_ipc_fp_attach *req,
		    struct iwx_ipc_fp_attached *out);
/* FP_DETACH: -ENOENT when not attached there. */
int fastpath_detach(struct iwxd *d, const struct iwx_ipc_fp_attach *req);
/* FP_STATS: the interfaces, then the connections, in listing entries. */
int fastpath_list(struct iwxd *d, int (*add)(void *ctx, const struct iwx_ipc_fp_info *e), void *ctx);

/* The interfaces attached, for STATUS. */
void fastpath_status(const struct iwxd *d, struct iwx_ipc_status *s);

/* q's engine runs on its stream in full operation / the stream has ended or goes. */
void fastpath_conn_start(struct iwxd *d, struct vqp *q);
void fastpath_conn_end(struct iwxd *d, struct vqp *q);

/*
 * Wake-ups (fastpath_maps.h): after q's engine had its turn, sleep on the socket's
 * low-water mark if placed FPDUs stream in; and the timer of a connection that does.
 */
void fastpath_conn_turned(struct iwxd *d, struct vqp *q);
void fastpath_conn_timers(struct iwxd *d, struct vqp *q, uint64_t now);
/* ... when its timer is due (0: none). */
uint64_t fastpath_conn_due(const struct vqp *q);

/*
 * A region changed (iwx_mem's watcher, regions.c): gone, a STag no longer to be placed
 * through, once no program does any more; now, a region as the programs are to see it.
 */
void fastpath_region_changed(struct iwxd *d, uint32_t gone, const struct iwx_region *now);

/* iwxd starts: remove what a dead iwxd left attached here (XDP). */
void fastpath_start(void);

/* iwxd stops: detach everything, free the programs and maps. */
void fastpath_stop(struct iwxd *d);

#endif /* IWXD_FASTPATH_H */
