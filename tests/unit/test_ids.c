// SPDX-License-Identifier: MIT
/*
 * What ids name (util/ids.c): under churn of many ids, each found names
 * what it was given, of the kind asked for, and an id taken out names nothing, as a
 * plain list would answer; a walk meets each held of the kind asked for once.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util/ids.h"

#define N	20000

static uint32_t held[N];	/* id, or 0 */

Test(ids, churn_matches_a_plain_list)
{
	struct iwx_ids t = { 0 };
	unsigned live = 0;

	srand(3);
	for (unsigned round = 0; round < 200000; round++) {
		unsigned i = (unsigned)rand() % N;

		if (held[i]) {
			cr_assert_eq(iwx_ids_find(&t, held[i], 1 + i % 2), &held[i]);
			cr_assert_null(iwx_ids_find(&t, held[i], 2 - i % 2), "another kind");
			iwx_ids_del(&t, held[i]);
			cr_assert_not(iwx_ids_held(&t, held[i]));
			held[i] = 0;
			live--;
		} else {
			/* clustered ids, as the counter gives them, and some far apart */
			held[i] = round % 5 ? 1 + i * 4 : 0x80000000u + i;
			cr_assert_not(iwx_ids_held(&t, held[i]));
			cr_assert_eq(iwx_ids_room(&t), 0);
			iwx_ids_add(&t, held[i], 1 + i % 2, &held[i]);
			live++;
		}
		cr_assert_eq(t.n, live);
	}
	for (unsigned i = 0; i < N; i++)
		if (held[i])
			cr_assert_eq(iwx_ids_find(&t, held[i], 1 + i % 2), &held[i], "id %u", held[i]);
	cr_assert_not(iwx_ids_held(&t, 0), "0 names nothing");
	iwx_ids_fini(&t);
}

#define M	1000

static uint32_t obj[M];	/* each object holds its id */
static unsigned met[M];

/* How often a walk of kind meets each object. */
static void walk(const struct iwx_ids *t, uint32_t kind)
{
	uint32_t pos = 0, *o;

	memset(met, 0, sizeof(met));
	while ((o = iwx_ids_next(t, &pos, kind)))
		met[o - obj]++;
	cr_assert_null(iwx_ids_next(t, &pos, kind), "still the end");
}

Test(ids, next_meets_each_of_a_kind_once)
{
	struct iwx_ids t = { 0 };

	walk(&t, 1);
	for (unsigned i = 0; i < M; i++) {
		obj[i] = 1 + i * 7;
		cr_assert_eq(iwx_ids_room(&t), 0);
		iwx_ids_add(&t, obj[i], 1 + i % 2, &obj[i]);
	}
	for (uint32_t kind = 1; kind <= 3; kind++) {
		walk(&t, kind);
		for (unsigned i = 0; i < M; i++)
			cr_assert_eq(met[i], 1 + i % 2 == kind, "id %u, kind %u", obj[i], kind);
	}
	for (unsigned i = 0; i < M; i += 3)
		iwx_ids_del(&t, obj[i]);
	for (uint32_t kind = 1; kind <= 2; kind++) {
		walk(&t, kind);
		for (unsigned i = 0; i < M; i++)
			cr_assert_eq(met[i], i % 3 && 1 + i % 2 == kind, "id %u, kind %u", obj[i], kind);
	}
	for (unsigned i = 0; i < M; i++)
		iwx_ids_del(&t, obj[i]);
	for (uint32_t kind = 1; kind <= 2; kind++) {
		walk(&t, kind);
		for (unsigned i = 0; i < M; i++)
			cr_assert_eq(met[i], 0, "id %u after its deletion", obj[i]);
	}
	iwx_ids_fini(&t);
}
