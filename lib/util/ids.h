/* SPDX-License-Identifier: MIT */
/*
 * What each nonzero 32-bit id names: iwxd's queues, listeners and connection requests (its
 * loop gives the ids, requests name them), libiwx's queue pairs (completions name them),
 * the engine's protection domains and memory regions (by number, by STag index). Finding
 * one takes the same time however many there are.
 */
#ifndef IWX_IDS_H
#define IWX_IDS_H

#include <stdbool.h>
#include <stdint.h>

struct iwx_id_entry;

struct iwx_ids {
	struct iwx_id_entry	*tab;
	uint32_t	n;		/* entries */
	unsigned int	bits;		/* 1 << bits slots, or none while 0 */
};

/* Room for one more: 0, or -ENOMEM. Ask before making what ids_add will name. */
int iwx_ids_room(struct iwx_ids *t);
/* id (not 0, not held) names obj, of kind (the caller's: a find names the kind it wants). */
void iwx_ids_add(struct iwx_ids *t, uint32_t id, uint32_t kind, void *obj);
void iwx_ids_del(struct iwx_ids *t, uint32_t id);
/* What id names, if it is of kind; else NULL. */
void *iwx_ids_find(const struct iwx_ids *t, uint32_t id, uint32_t kind);
bool iwx_ids_held(const struct iwx_ids *t, uint32_t id);
/*
 * The next object of kind from *pos (0 to start), which moves past it; NULL at the end.
 * Each is met once if nothing is added or deleted meanwhile: a deletion moves entries back.
 */
void *iwx_ids_next(const struct iwx_ids *t, uint32_t *pos, uint32_t kind);
void iwx_ids_fini(struct iwx_ids *t);

#endif /* IWX_IDS_H */
