// SPDX-License-Identifier: MIT
/*
 * What each id names (util/ids.h): an open-addressing hash table, linear probing, kept at
 * most half full, entries taken out by shifting back those that probed past them (no
 * tombstones, so that churn does not slow lookups).
 */
#include <errno.h>
#include <stdlib.h>

#include "util/ids.h"

#define MIN_BITS	4
#define MAX_BITS	31

struct iwx_id_entry {
	uint32_t	id;		/* 0: empty */
	uint32_t	kind;
	void		*obj;
};

static uint32_t mask(const struct iwx_ids *t)
{
	return (1u << t->bits) - 1;
}

/* Ids come mostly in sequence: Fibonacci hashing (the product's high bits) spreads them. */
static uint32_t home(const struct iwx_ids *t, uint32_t id)
{
	return (uint32_t)(id * 2654435769u) >> (32 - t->bits);
}

static void place(struct iwx_ids *t, struct iwx_id_entry e)
{
	uint32_t i = home(t, e.id);

	while (t->tab[i].id)
		i = (i + 1) & mask(t);
	t->tab[i] = e;
}

int iwx_ids_room(struct iwx_ids *t)
{
	struct iwx_ids old = *t;

	/* At most half full: a miss (a free id sought) probes 2.5 slots on average there, 8.5 at 3/4 */
	if (t->bits && 2ull * (t->n + 1) <= 1ull << t->bits)
		return 0;
	t->bits = t->bits ? t->bits + 1 : MIN_BITS;
	if (t->bits > MAX_BITS)
		goto fail;
	t->tab = calloc(1ull << t->bits, sizeof(*t->tab));
	if (!t->tab)
		goto fail;
	for (uint32_t i = 0; old.bits && i <= mask(&old); i++)
		if (old.tab[i].id)
			place(t, old.tab[i]);
	free(old.tab);
	return 0;
fail:
	*t = old;
	return -ENOMEM;
}

void iwx_ids_add(struct iwx_ids *t, uint32_t id, uint32_t kind, void *obj)
{
	place(t, (struct iwx_id_entry){ .id = id, .kind = kind, .obj = obj });
	t->n++;
}

static struct iwx_id_entry *slot_of(const struct iwx_ids *t, uint32_t id)
{
	if (!t->bits || !id)
		return NULL;
	for (uint32_t i = home(t, id); t->tab[i].id; i = (i + 1) & mask(t))
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

void *iwx_ids_next(const struct iwx_ids *t, uint32_t *pos, uint32_t kind)
{
	while (t->bits && *pos <= mask(t)) {
		const struct iwx_id_entry *e = &t->tab[(*pos)++];

		if (e->id && e->kind == kind)
			return e->obj;
	}
	return NULL;
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
	for (i = (hole + 1) & mask(t); t->tab[i].id; i = (i + 1) & mask(t)) {
		uint32_t h = home(t, t->tab[i].id);

		if (((i - h) & mask(t)) >= ((i - hole) & mask(t))) {
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
