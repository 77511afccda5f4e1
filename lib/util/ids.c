// SPDX-License-Identifier: MIT
/*
 * What each id names (util/ids.h): an open-addressing hash table, linear probing, kept at most
 * half full, entries taken out by shifting back those that probed past them (no
 * tombstones, so that churn does not slow lookups).
 */
#include <errno.h>
#include <stdlib.h>

#include "util/ids.h"

struct iwx_id_entry {
	uint32_t	id;		/* 0: empty */
	uint32_t	kind;
	void		*obj;
};

/* Ids come mostly in sequence: Fibonacci hashing spreads them over the table. */
static uint32_t home(const struct iwx_ids *t, uint32_t id)
{
	return (uint32_t)(id * 2654435769u) & (t->cap - 1);
}

static void place(struct iwx_ids *t, struct iwx_id_entry e)
{
	uint32_t i = home(t, e.id);

	while (t->tab[i].id)
		i = (i + 1) & (t->cap - 1);
	t->tab[i] = e;
}

int iwx_ids_room(struct iwx_ids *t)
{
	struct iwx_id_entry *old = t->tab;
	uint32_t old_cap = t->cap, cap = t->cap ? 2 * t->cap : 256;

	if (2 * (t->n + 1) <= t->cap)
		return 0;
	if (cap < old_cap)
		return -ENOMEM;
	t->tab = calloc(cap, sizeof(*t->tab));
	if (!t->tab) {
		t->tab = old;
		return -ENOMEM;
	}
	t->cap = cap;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].id)
			place(t, old[i]);
	free(old);
	return 0;
}

void iwx_ids_add(struct iwx_ids *t, uint32_t id, uint32_t kind, void *obj)
{
	place(t, (struct iwx_id_entry){ .id = id, .kind = kind, .obj = obj });
	t->n++;
}

static struct iwx_id_entry *slot_of(const struct iwx_ids *t, uint32_t id)
{
	if (!t->cap || !id)
		return NULL;
	for (uint32_t i = home(t, id); t->tab[i].id; i = (i + 1) & (t->cap - 1))
		if (t->tab[i].id == id)
			return &t->tab[i];
	return NULL;
}

void *iwx_ids_find(const struct iwx_ids *t, uint32_t id, uint32_t kind)
{
	const struct iwx_id_entry *e = slot_of(t, id);

	return e && e->kind == kind ? e->obj : NULL;
}

bool iwx_ids_held(const struct iwx_ids *t, uint32_t id)
{
	return slot_of(t, id) != NULL;
}

void iwx_ids_del(struct iwx_ids *t, uint32_t id)
{
	struct iwx_id_entry *e = slot_of(t, id);
	uint32_t hole, i;

	if (!e)
		return;
	hole = (uint32_t)(e - t->tab);
	t->tab[hole].id = 0;
	t->n--;
	/* an entry after the hole whose home is not between the hole and it moves into it */
	for (i = (hole + 1) & (t->cap - 1); t->tab[i].id; i = (i + 1) & (t->cap - 1)) {
		uint32_t h = home(t, t->tab[i].id);

		if (((i - h) & (t->cap - 1)) >= ((i - hole) & (t->cap - 1))) {
			t->tab[hole] = t->tab[i];
			t->tab[i].id = 0;
			hole = i;
		}
	}
}

void iwx_ids_fini(struct iwx_ids *t)
{
	free(t->tab);
	*t = (struct iwx_ids){ 0 };
}
