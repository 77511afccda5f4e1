// SPDX-License-Identifier: MIT
/*
 * Protection domains and memory regions. Both live in id tables (util/ids.h) keyed by a
 * non-zero 32-bit id: the PD number, or the STag's 24-bit index. Entries are allocated one
 * by one so that the pointers iwx_mem_lookup hands out stay put while the tables grow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/ids.h"

#include "mem.h"

#define STAG_INDEX_BITS	24
#define STAG_INDEX_MAX	((1u << STAG_INDEX_BITS) - 1)	/* index 0 is never used */
#define STAG_INDEX(s)	((s) >> 8)
#define STAG_KEY(s)	((s) & 0xffu)
#define ACCESS_ALL	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ | \
			 IWX_ACCESS_REMOTE_ATOMIC)
#define RANDOM_TRIES	64
#define KIND		0	/* each table holds one kind of thing */

struct pd {
	uint32_t	id;
	uint64_t	owner;
	uint32_t	nmr;	/* regions in it, valid or not */
};

struct mr {
	struct iwx_region	mr;	/* first: lookup hands out &mr */
	struct pd	*pd;
};

struct iwx_mem {
	struct iwx_ids	pds, mrs;
	iwx_mem_watch_fn watch;
	void		*watch_ctx;
	uint32_t	next_pd;
	uint32_t	rnd[64];	/* getrandom() in batches */
	unsigned int	rnd_left;
};

static void tell(const struct iwx_mem *m, uint32_t gone, const struct iwx_region *now)
{
	if (m->watch)
		m->watch(m->watch_ctx, gone, now);
}

void iwx_mem_watch(struct iwx_mem *m, iwx_mem_watch_fn fn, void *ctx)
{
	m->watch = fn;
	m->watch_ctx = ctx;
}

static int random_u32(struct iwx_mem *m, uint32_t *out)
{
	if (!m->rnd_left) {
		ssize_t r;

		do
			r = getrandom(m->rnd, sizeof(m->rnd), 0);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return -errno;
		if ((size_t)r != sizeof(m->rnd))
			return -EAGAIN;
		m->rnd_left = sizeof(m->rnd) / sizeof(m->rnd[0]);
	}
	*out = m->rnd[--m->rnd_left];
	return 0;
}

/*
 * A free STag index, at random. Past RANDOM_TRIES collisions (a nearly full table)
 * take the next free index after the last random one, so that this always ends.
 */
static int64_t new_index(struct iwx_mem *m)
{
	uint32_t idx = 0;
	int err;

	if (m->mrs.n >= STAG_INDEX_MAX)
		return -ENOSPC;
	for (int i = 0; i < RANDOM_TRIES; i++) {
		err = random_u32(m, &idx);
		if (err)
			return err;
		idx &= STAG_INDEX_MAX;
		if (idx && !iwx_ids_held(&m->mrs, idx))
			return idx;
	}
	do
		idx = (idx + 1) & STAG_INDEX_MAX;
	while (!idx || iwx_ids_held(&m->mrs, idx));
	return idx;
}

static struct mr *mr_of(const struct iwx_mem *m, uint32_t stag)
{
	struct mr *e = iwx_ids_find(&m->mrs, STAG_INDEX(stag), KIND);

	return e && e->mr.desc.stag == stag ? e : NULL;
}

struct iwx_mem *iwx_mem_new(void)
{
	struct iwx_mem *m = calloc(1, sizeof(*m));

	if (m)
		m->next_pd = 1;
	return m;
}

void iwx_mem_free(struct iwx_mem *m)
{
	uint32_t pos;
	void *e;

	if (!m)
		return;
	for (pos = 0; (e = iwx_ids_next(&m->mrs, &pos, KIND));)
		free(e);
	for (pos = 0; (e = iwx_ids_next(&m->pds, &pos, KIND));)
		free(e);
	iwx_ids_fini(&m->mrs);
	iwx_ids_fini(&m->pds);
	explicit_bzero(m->rnd, sizeof(m->rnd));
	free(m);
}

int64_t iwx_mem_pd_alloc(struct iwx_mem *m, uint64_t owner)
{
	struct pd *pd = iwx_ids_room(&m->pds) ? NULL : calloc(1, sizeof(*pd));

	if (!pd)
		return -ENOMEM;
	/* Numbers are not reused until the counter wraps: a stale number names nothing. */
	while (!m->next_pd || iwx_ids_held(&m->pds, m->next_pd))
		m->next_pd++;
	pd->id = m->next_pd++;
	pd->owner = owner;
	iwx_ids_add(&m->pds, pd->id, KIND, pd);
	return pd->id;
}

static struct pd *pd_of(const struct iwx_mem *m, uint64_t owner, uint32_t id)
{
	struct pd *pd = iwx_ids_find(&m->pds, id, KIND);

	return pd && pd->owner == owner ? pd : NULL;
}

int iwx_mem_pd_free(struct iwx_mem *m, uint64_t owner, uint32_t id)
{
	struct pd *pd = pd_of(m, owner, id);

	if (!pd)
		return -ENOENT;
	if (pd->nmr)
		return -EBUSY;
	iwx_ids_del(&m->pds, id);
	free(pd);
	return 0;
}

int64_t iwx_mem_reg(struct iwx_mem *m, uint64_t owner, uint32_t pd_id, void *addr, uint64_t len,
		    uint64_t base_to, uint8_t access)
{
	uintptr_t start = (uintptr_t)addr;
	struct pd *pd = pd_of(m, owner, pd_id);
	struct mr *e;
	int64_t idx;
	uint32_t key;
	int err;

	if (!pd)
		return -ENOENT;
	if ((access & ~ACCESS_ALL) || len > UINT64_MAX - base_to ||
	    (len && (!start || len - 1 > UINTPTR_MAX - start)))
		return -EINVAL;
	idx = new_index(m);
	if (idx < 0)
		return idx;
	err = random_u32(m, &key);
	if (err)
		return err;
	e = iwx_ids_room(&m->mrs) ? NULL : calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->mr.addr = addr;
	e->mr.desc.stag = (uint32_t)idx << 8 | (key & 0xff);
	e->mr.desc.pd = pd->id;
	e->mr.desc.valid = 1;
	e->mr.desc.access = access;
	e->mr.desc.base_to = base_to;
	e->mr.desc.len = len;
	e->mr.owner = owner;
	e->pd = pd;
	iwx_ids_add(&m->mrs, (uint32_t)idx, KIND, e);
	pd->nmr++;
	tell(m, 0, &e->mr);
	return e->mr.desc.stag;
}

int iwx_mem_dereg(struct iwx_mem *m, uint64_t owner, uint32_t stag)
{
	struct mr *e = mr_of(m, stag);

	if (!e || e->mr.owner != owner)
		return -ENOENT;
	tell(m, e->mr.desc.stag, NULL);
	iwx_ids_del(&m->mrs, STAG_INDEX(stag));
	e->pd->nmr--;
	free(e);
	return 0;
}

const struct iwx_region *iwx_mem_lookup(const struct iwx_mem *m, uint32_t stag)
{
	struct mr *e = mr_of(m, stag);

	return e ? &e->mr : NULL;
}

int iwx_mem_invalidate(struct iwx_mem *m, uint32_t stag, uint32_t pd)
{
	struct mr *e = mr_of(m, stag);

	if (!e)
		return -EINVAL;
	if (e->mr.desc.pd != pd)
		return -EACCES;
	if (e->mr.desc.valid) {
		e->mr.desc.valid = 0;
		tell(m, e->mr.desc.stag, &e->mr);
	}	/* already invalid: still 0, as siw does */
	return 0;
}

int64_t iwx_mem_revalidate(struct iwx_mem *m, uint64_t owner, uint32_t stag)
{
	struct mr *e = mr_of(m, stag);
	uint32_t r;
	int err;

	if (!e || e->mr.owner != owner)
		return -ENOENT;
	if (e->mr.desc.valid)
		return -EBUSY;
	err = random_u32(m, &r);
	if (err)
		return err;
	/* Any key but the old one, so that the old STag names nothing. */
	e->mr.desc.stag = (stag & ~0xffu) | ((STAG_KEY(stag) + 1 + r % 255) & 0xff);
	e->mr.desc.valid = 1;
	tell(m, 0, &e->mr);
	return e->mr.desc.stag;
}

int iwx_mem_for_each(const struct iwx_mem *m, int (*fn)(const struct iwx_region *mr, void *ctx),
		     void *ctx)
{
	uint32_t pos = 0;
	const struct mr *e;
	int r;

	while ((e = iwx_ids_next(&m->mrs, &pos, KIND)))
		if ((r = fn(&e->mr, ctx)))
			return r;
	return 0;
}

bool iwx_mem_pd_owned(const struct iwx_mem *m, uint64_t owner, uint32_t pd)
{
	return pd_of(m, owner, pd) != NULL;
}

uint32_t iwx_mem_pd_count(const struct iwx_mem *m)
{
	return m->pds.n;
}

/* The keys of owner's entries in t (deleting while walking would move entries under us). */
static uint32_t *owned_keys(const struct iwx_ids *t, uint64_t owner, bool mrs, uint32_t *n)
{
	uint32_t pos = 0, *keys = malloc(sizeof(*keys) * (t->n ? t->n : 1));
	const void *v;

	*n = 0;
	while (keys && (v = iwx_ids_next(t, &pos, KIND))) {
		const struct mr *e = v;
		const struct pd *pd = v;

		if (mrs && e->mr.owner == owner)
			keys[(*n)++] = e->mr.desc.stag;
		else if (!mrs && pd->owner == owner)
			keys[(*n)++] = pd->id;
	}
	return keys;
}

void iwx_mem_release_owner(struct iwx_mem *m, uint64_t owner)
{
	uint32_t n, *keys = owned_keys(&m->mrs, owner, true, &n);

	for (uint32_t i = 0; keys && i < n; i++)
		iwx_mem_dereg(m, owner, keys[i]);
	free(keys);
	keys = owned_keys(&m->pds, owner, false, &n);
	for (uint32_t i = 0; keys && i < n; i++)
		iwx_mem_pd_free(m, owner, keys[i]);
	free(keys);
}
