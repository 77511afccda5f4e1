// SPDX-License-Identifier: MIT
/*
 * Memory iwxd shares with a client (shared.h): its arena, doorbells and rings, and the
 * memory it registers outside the arena (shm.c), and what it costs until the kernel has
 * freed it.
 *
 * A client holds a descriptor of each, and maps it: iwxd letting go frees nothing while
 * the client keeps either, and a client that keeps them all could take memory without
 * end. So each is charged to its user from creation until the kernel has freed it. Each
 * is a BPF array map (control/engine/arena.c), which the kernel keeps, under its id,
 * while anything (a descriptor, a mapping, the fast path) holds it: memory iwxd let go of
 * (departed) is looked for again every LOOK_MS, and at a refusal, among the maps the
 * kernel has (arenas_live.h), until it is gone. Ids are not reused before 2^31 maps were
 * made after it; a reused one keeps the charge longer, never shorter.
 *
 * Where BPF is unavailable memory is a memfd, which nothing can follow into another
 * process: it is uncharged when iwxd lets go (iwxd says so when it first makes one), as
 * is a map when iwxd cannot list maps (no BTF, or no CAP_PERFMON: said at start).
 *
 * Rings are another matter: no BPF program reaches them, and a BPF array map makes all its
 * pages at once, where a ring at rest touches one. So each is a sealed memfd, its pages
 * made as they are touched, and freed when the ring goes (MADV_REMOVE punches the memfd):
 * in the client's mappings too, so nothing iwxd made is left to charge; what a client
 * writes there afterwards is memory of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arenas_live.h"
#include "daemon.h"
#include "shared.h"
#include "util/clock.h"

#define LOOK_MS		1000	/* departed memory is looked at this often */
#define REFUSAL_MS	100	/* ... and at a refusal, at most this often per user */
#define DEPARTED_MAX	1024	/* departed objects a user may leave held: each is one look */

/* Memory iwxd let go of that something else may still hold. */
struct departed {
	uint32_t	map_id;
	uint64_t	bytes;
	struct departed	*next;
};

/* Read which memories the kernel still has: false where it cannot tell (all are held). */
static bool read_live(struct iwxd *d)
{
	int err;

	if (!d->live)
		return false;
	err = arenas_live_read(d->live);
	if (err)
		log_warn("departed memory not looked at: %s", strerror(-err));
	return !err;
}

static void uncharge(struct iwxd *d, struct user *u, uint64_t bytes)
{
	u->bytes -= bytes;
	d->arena_bytes -= bytes;
}

/* Uncharge what of u's departed memory the kernel had freed at the last read_live. */
static void look(struct iwxd *d, struct user *u)
{
	for (struct departed *x = u->departed, *n; x; x = n) {
		n = x->next;
		if (arenas_live_has(d->live, x->map_id))
			continue;
		IWX_LIST_UNLINK(&u->departed, x);
		u->ndeparted--;
		u->departed_bytes -= x->bytes;
		d->departed_bytes -= x->bytes;
		uncharge(d, u, x->bytes);
		free(x);
	}
	u->looked_ms = iwx_now_ms();
}

/* Is u to be looked at before it is refused? Some of what it left may be freed meanwhile. */
static bool due(const struct user *u)
{
	return u->departed && iwx_now_ms() - u->looked_ms >= REFUSAL_MS;
}

static void look_again(struct iwxd *d, struct user *u)
{
	if (due(u) && read_live(d))
		look(d, u);
}

/* ... every user, with one reading. */
static void look_again_all(struct iwxd *d)
{
	struct user *x;

	for (x = d->users; x && !due(x); x = x->next)
		;
	if (!x || !read_live(d))
		return;
	for (x = d->users; x; x = x->next)
		if (due(x))
			look(d, x);
}

int shared_charge(struct iwxd *d, struct client *c, uint64_t bytes)
{
	struct user *u = c->user;
	uint64_t total = d->o.max[LIMIT_ARENA_TOTAL];

	if (!user_exempt(c) && u->ndeparted >= DEPARTED_MAX)
		look_again(d, u);
	if (!user_exempt(c) && u->ndeparted >= DEPARTED_MAX)
		return user_refuse(d, c, LIMIT_MEMORY_USER, -ENOSPC);
	if (!user_exempt(c) && bytes > d->o.max[LIMIT_MEMORY_USER] - u->bytes)
		look_again(d, u);
	if (!user_exempt(c) && bytes > d->o.max[LIMIT_MEMORY_USER] - u->bytes)
		return user_refuse(d, c, LIMIT_MEMORY_USER, -ENOSPC);
	/* what other users leave may be freed meanwhile, as what they are guaranteed may be used */
	if (!share_room(d, u, SHARE_MEMORY, bytes, d->arena_bytes, total)) {
		look_again_all(d);
		if (bytes > total - d->arena_bytes)
			return client_refuse(d, c, LIMIT_ARENA_TOTAL, -ENOSPC);
		if (!share_room(d, u, SHARE_MEMORY, bytes, d->arena_bytes, total)) {
			share_refuse(d, c, SHARE_MEMORY, total, "refused");
			return -ENOSPC;
		}
	}
	u->bytes += bytes;
	d->arena_bytes += bytes;
	return 0;
}

void shared_depart(struct iwxd *d, struct user *u, uint32_t map_id, uint64_t bytes)
{
	struct departed *x;

	/* without a reader nothing says when the kernel frees it: as a memfd */
	if (!map_id || !d->live || (read_live(d) && !arenas_live_has(d->live, map_id))) {
		uncharge(d, u, bytes);
		return;
	}
	x = malloc(sizeof(*x));
	if (!x)
		return;	/* charged for good: never less than is held */
	*x = (struct departed){ .map_id = map_id, .bytes = bytes, .next = u->departed };
	u->departed = x;
	u->ndeparted++;
	u->departed_bytes += bytes;
	d->departed_bytes += bytes;
	if (!d->departed_ms)
		d->departed_ms = iwx_now_ms() + LOOK_MS;
}

/* Memory of size bytes for c, charged first: a ring's in a memfd, else BPF's where it can. */
static int create_charged(struct iwxd *d, struct client *c, struct iwx_arena *a, size_t size,
			  bool ring)
{
	size_t bytes = iwx_arena_size(size);
	int err;

	if (!bytes)
		return -EINVAL;
	err = shared_charge(d, c, bytes);
	if (err)
		return err;
	err = ring ? iwx_arena_create_memfd(a, bytes) : iwx_arena_create(a, bytes, true);
	if (err)
		uncharge(d, c->user, bytes);
	return err;
}

int shared_create(struct iwxd *d, struct client *c, struct iwx_arena *a, size_t size)
{
	static bool said;
	int err = create_charged(d, c, a, size, false);

	if (err)
		return err;
	if (!a->bpf && !said)
		log_warn("no BPF: memory shared with clients is in memfds, which iwxd cannot follow: "
			 "what a client keeps after it is freed no longer counts against its user "
			 "(said once)");
	said |= !a->bpf;
	return 0;
}

/* The descriptor of a, the client's alone once sent: the mapping is all iwxd keeps. */
static int give(struct iwx_arena *a, int err, int *fd)
{
	if (err)
		return err;
	*fd = a->fd;
	a->fd = -1;
	return 0;
}

int shared_create_given(struct iwxd *d, struct client *c, struct iwx_arena *a, size_t size, int *fd)
{
	return give(a, shared_create(d, c, a, size), fd);
}

int shared_ring_create(struct iwxd *d, struct client *c, struct iwx_arena *a, size_t size,
		       int *fd)
{
	return give(a, create_charged(d, c, a, size, true), fd);
}

void shared_ring_destroy(struct iwxd *d, struct user *u, struct iwx_arena *a)
{
	uint64_t bytes = a->size;
	bool freed;

	if (!a->base)
		return;
	freed = !iwx_arena_free_pages(a);	/* in the client's mappings too */
	iwx_arena_destroy(a);
	if (freed)
		uncharge(d, u, bytes);
	else	/* never less than is held: charged for good */
		log_warn("a ring's %llu bytes could not be freed: they stay charged to uid %u",
			 (unsigned long long)bytes, (unsigned)u->uid);
}

void shared_destroy(struct iwxd *d, struct user *u, struct iwx_arena *a)
{
	uint32_t id = a->map_id;
	uint64_t bytes = a->size;

	if (!a->base)
		return;
	iwx_arena_destroy(a);
	shared_depart(d, u, id, bytes);
}

void shared_start(struct iwxd *d)
{
	d->live = arenas_live_open();
	if (!d->live)
		log_info("BPF maps cannot be listed here (no BTF, CAP_BPF or CAP_PERFMON): memory a "
			 "client keeps after iwxd lets go no longer counts against its user");
}

void shared_stop(struct iwxd *d)
{
	for (struct user *u = d->users, *n; u; u = n) {
		n = u->next;
		while (u->departed) {
			struct departed *x = u->departed;

			u->departed = x->next;
			free(x);
		}
		u->bytes = u->departed_bytes = u->ndeparted = 0;
		user_forget(d, u);
	}
	d->arena_bytes = d->departed_bytes = d->departed_ms = 0;
	arenas_live_close(d->live);
	d->live = NULL;
}

void shared_timers(struct iwxd *d, uint64_t now)
{
	if (!d->departed_ms)
		return;
	if (now < d->departed_ms) {
		loop_due(&d->loop, d->departed_ms);
		return;
	}
	bool read = read_live(d);

	for (struct user *u = d->users, *n; u; u = n) {
		n = u->next;
		if (u->departed && read)
			look(d, u);
		user_forget(d, u);
	}
	d->departed_ms = d->departed_bytes ? now + LOOK_MS : 0;
	if (d->departed_ms)
		loop_due(&d->loop, d->departed_ms);
}
