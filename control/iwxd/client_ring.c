// SPDX-License-Identifier: MIT
/*
 * The ring of a client's completion queue, shared receive queue or queue pair (vcq.c,
 * vsrq.c, vqp.c), and what it costs the client from creation to destruction: one of its
 * limit, room for an id, a mapping, and the ring's memory (shared.c), all charged to the
 * client and its user.
 */
#include <unistd.h>

#include "daemon.h"
#include "shared.h"

int client_ring_create(struct iwxd *d, struct client *c, enum iwxd_limit lim,
		       struct iwx_arena *mem, size_t size, int *memfd)
{
	int err = client_room(d, c, lim);

	if (!err)
		err = iwx_ids_room(&d->ids);
	if (!err)
		err = maps_take(d, c, 1);
	if (err)
		return err;
	err = shared_ring_create(d, c, mem, size, memfd);
	if (err)
		goto fail;
	client_take(c, lim);
	return 0;
fail:
	maps_give(d, c, 1);
	return err;
}

void client_ring_destroy(struct iwxd *d, struct client *c, enum iwxd_limit lim,
			 struct iwx_arena *mem)
{
	client_give(c, lim);
	shared_ring_destroy(d, c->user, mem);
	maps_give(d, c, 1);
}

void client_ring_abandon(struct iwxd *d, struct client *c, enum iwxd_limit lim,
			 struct iwx_arena *mem, int *memfd)
{
	client_ring_destroy(d, c, lim, mem);
	close(*memfd);
	*memfd = -1;
}
