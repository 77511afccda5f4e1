/* SPDX-License-Identifier: MIT */
/*
 * What each of iwxd's 32-bit ids names (loop_new_id gives them): a queue, a listener, a
 * connection request. Requests name them by id; finding one takes the same time however
 * many there are.
 */
#ifndef IWXD_IDS_H
#define IWXD_IDS_H

#include <stdbool.h>
#include <stdint.h>

struct id_entry;

struct ids {
	struct id_entry	*tab;
	uint32_t	cap, n;		/* a power of two, or 0; entries */
};

/* Room for one more: 0, or -ENOMEM. Ask before making what ids_add will name. */
int ids_room(struct ids *t);
/* id (not 0, not held) names obj, of kind (the caller's: a find names the kind it wants). */
void ids_add(struct ids *t, uint32_t id, uint32_t kind, void *obj);
void ids_del(struct ids *t, uint32_t id);
/* What id names, if it is of kind; else NULL. */
void *ids_find(const struct ids *t, uint32_t id, uint32_t kind);
bool ids_held(const struct ids *t, uint32_t id);
void ids_fini(struct ids *t);

#endif /* IWXD_IDS_H */
