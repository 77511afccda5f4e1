// SPDX-License-Identifier: MIT
/*
 * What one client, and all of them together, may hold: the limits (daemon.h), their
 * options and defaults, and the refusal a request beyond one gets. The modules that
 * make a client's objects ask here before they do.
 */
#include <errno.h>
#include <inttypes.h>

#include "daemon.h"

const struct limit_info limits[LIMIT_N] = {
	[LIMIT_CLIENTS]		= { "max-clients", "clients connected at once", 1024 },
	[LIMIT_ARENA_TOTAL]	= { "arena-total", "bytes all clients share with iwxd (arenas, registered memory)", 4ull << 30, true },
	[LIMIT_ARENA]		= { "arena-max", "bytes one client shares with iwxd (its arena, registered memory)", 1ull << 30, true },
	[LIMIT_PDS]		= { "max-pds", "protection domains per client", 256 },
	[LIMIT_MRS]		= { "max-mrs", "memory regions per client", 65536 },
	[LIMIT_CQS]		= { "max-cqs", "completion queues per client", 1024 },
	[LIMIT_QPS]		= { "max-qps", "queue pairs per client", 1024 },
	[LIMIT_LISTENERS]	= { "max-listeners", "listeners per client", 64 },
	[LIMIT_REQUESTS]	= { "max-requests", "connection requests a client has not answered", 256 },
	[LIMIT_QUEUED]		= { "max-queued", "replies and events a client has not read", 8192 },
	/* a client's arena, its rings and registered memory are mapped here, one by one */
	[LIMIT_MAPS]		= { "max-maps", "mappings of one client's memory in iwxd", 4096 },
	[LIMIT_MAPS_TOTAL]	= { "maps-total", "mappings of all clients' memory (below vm.max_map_count)", 49152 },
};

void limit_warn(const struct iwxd *d, const struct client *c, enum iwxd_limit lim,
		const char *action)
{
	log_warn("client %u (pid %d, uid %u): at the limit of %s (--%s %" PRIu64 "): %s", c->id,
		 (int)c->pid, (unsigned)c->uid, limits[lim].what, limits[lim].flag, d->o.max[lim],
		 action);
}

/* Said once per client, not at every retry. */
int client_refuse(const struct iwxd *d, struct client *c, enum iwxd_limit lim, int err)
{
	if (!(c->warned & 1u << lim))
		limit_warn(d, c, lim, "refused");
	c->warned |= 1u << lim;
	return err;
}

int client_room(const struct iwxd *d, struct client *c, enum iwxd_limit lim)
{
	return c->used[lim] < d->o.max[lim] ? 0 : client_refuse(d, c, lim, -ENOSPC);
}

int maps_take(struct iwxd *d, struct client *c, uint32_t n)
{
	if (n > d->o.max[LIMIT_MAPS] - c->used[LIMIT_MAPS])
		return client_refuse(d, c, LIMIT_MAPS, -ENOSPC);
	if (n > d->o.max[LIMIT_MAPS_TOTAL] - d->maps)
		return client_refuse(d, c, LIMIT_MAPS_TOTAL, -ENOSPC);
	c->used[LIMIT_MAPS] += n;
	d->maps += n;
	return 0;
}

void maps_give(struct iwxd *d, struct client *c, uint32_t n)
{
	c->used[LIMIT_MAPS] -= n;
	d->maps -= n;
}
