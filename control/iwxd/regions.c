// SPDX-License-Identifier: MIT
/*
 * What follows when a region changes (iwx_mem's watcher): once an invalidation or a
 * deregistration has returned, nothing more lands in the region, by iwxd or by BPF. A
 * queue pair receiving a segment into it in place (its payload can span the loop's
 * turns, as TCP hands it over) writes no more of it there; the fast path's map of
 * regions follows the change (fastpath.c).
 */
#include "daemon.h"
#include "fastpath.h"
#include "mem.h"
#include "qp.h"

static void region_changed(void *ctx, uint32_t gone, const struct iwx_region *now)
{
	struct iwxd *d = ctx;
	const struct iwx_region *mr = gone ? iwx_mem_lookup(d->mem, gone) : NULL;

	if (d->fp)
		fastpath_region_changed(d, gone, now);
	if (!mr)
		return;
	/* only its owner's queue pairs reach it: its PD is that client's */
	for (struct client *c = d->clients; c; c = c->next) {
		if (c->ident != mr->owner)
			continue;
		IWX_LINK_EACH(struct vqp, q, &c->qps, client_link)
			if (q->eng)
				engine_qp_stag_gone(q->eng, gone);
		return;
	}
}

void regions_watch(struct iwxd *d)
{
	iwx_mem_watch(d->mem, region_changed, d);
}
