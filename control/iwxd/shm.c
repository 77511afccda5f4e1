// SPDX-License-Identifier: MIT
/*
 * Registrations outside the arena (shm.h). Each shared memory is the same kind of
 * object as the arena (control/engine/arena.c), so that the fast path can place into
 * it too. A registration names the shared memories its pages lie in, in address order;
 * when they are several, iwxd maps those pieces back to back (a view), so that the
 * engine sees one run of bytes as it does for the arena.
 *
 * Nothing is unmapped while a queue pair may still use it: a message being sent, a
 * Read being answered or a segment being received holds a pointer past the region's
 * deregistration. Such memory is retired, and unmapped once no queue pair of its
 * client refers to it (shm_reclaim), or when the client goes. Until then it counts
 * against the client's limits, mappings and bytes, as it did while registered; and its
 * bytes against the user's until the kernel has freed it (shared.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon.h"
#include "shared.h"
#include "shm.h"
#include "util/clock.h"

#define RECLAIM_MS	100	/* retired memory is looked at again this often: each look
				   walks the queue pairs, and the client's peer sets the pace */

/* One shared memory: the client maps it over its own pages, iwxd here. */
struct shm {
	uint32_t	id;
	struct iwx_arena mem;
	uint32_t	users;		/* pieces of registrations in it */
	struct shm	*next;
};

/* Mapped memory no longer registered, waiting for the queue pairs to let go of it. */
struct retired {
	void		*addr;
	size_t		len;
	uint32_t	maps;		/* mappings it is (a view: one per piece) */
	size_t		bytes;		/* of shared memory it holds (a view: none of its own) */
	uint32_t	map_id;		/* ... its BPF map (0: a memfd, or a view) */
	struct retired	*next;
};

/* A registration's pieces, for its deregistration. */
struct shm_mr {
	uint32_t	stag_index;	/* the STag without its key: revalidation changes the key */
	struct shm	*shm[IWX_IPC_MR_PIECES];
	uint32_t	n;
	void		*view;		/* several pieces mapped back to back; NULL for one */
	size_t		view_len;
	struct shm_mr	*next;
};

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static struct shm *shm_find(struct client *c, uint32_t id)
{
	for (struct shm *s = c->shms; s; s = s->next)
		if (s->id == id)
			return s;
	return NULL;
}

static bool in_use(const struct iwxd *d, const struct client *c, const void *addr, size_t len)
{
	(void)d;
	IWX_LINK_EACH(const struct vqp, q, &c->qps, client_link)
		if (q->eng && engine_qp_refers_to(q->eng, addr, len))
			return true;
	return false;
}

/* Unmap what r describes, and give back what it counted against c's limits. */
static void unmap(struct iwxd *d, struct client *c, const struct retired *r)
{
	munmap(r->addr, r->len);
	maps_give(d, c, r->maps);
	c->shm_bytes -= r->bytes;
	if (r->bytes)
		shared_depart(d, c->user, r->map_id, r->bytes);
}

/* Unmap it now if nothing refers to it, else once nothing does (shm_reclaim). */
static void retire(struct iwxd *d, struct client *c, const struct retired *what)
{
	struct retired *r;

	if (!in_use(d, c, what->addr, what->len)) {
		unmap(d, c, what);
		return;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		/* cannot wait: leave it mapped, and counted, rather than risk a queue pair's pointer */
		log_warn("client %u: %zu bytes of shared memory left mapped", c->id, what->len);
		return;
	}
	*r = *what;
	r->next = c->retired;
	c->retired = r;
}

int shm_create(struct iwxd *d, struct client *c, struct iwx_ipc_shm *req, int *fd)
{
	size_t page = page_size();
	struct shm *s;
	int err;

	if (!req->size || req->size % page)
		return -EINVAL;
	/* the arena's limits hold for all the memory a client shares, and all clients' */
	if (req->size > d->o.max[LIMIT_ARENA] - c->arena.size - c->shm_bytes)
		return client_refuse(d, c, LIMIT_ARENA, -ENOSPC);
	err = client_memlock_room(d, c, req->size);
	if (err)
		return err;
	err = maps_take(d, c, 1);
	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	err = s ? shared_create(d, c, &s->mem, req->size) : -ENOMEM;
	if (err) {
		maps_give(d, c, 1);
		free(s);
		return err;
	}
	do	/* the client's own names: unique among its shared memories */
		s->id = ++c->shm_ids;
	while (!s->id || shm_find(c, s->id));
	s->next = c->shms;
	c->shms = s;
	c->shm_bytes += s->mem.size;
	req->size = s->mem.size;
	req->shm = s->id;
	req->bpf = s->mem.bpf;
	req->map_id = s->mem.map_id;
	*fd = s->mem.fd;
	return 0;
}

static void shm_release(struct iwxd *d, struct client *c, struct shm *s)
{
	IWX_LIST_UNLINK(&c->shms, s);
	close(s->mem.fd);	/* the mapping keeps the memory */
	retire(d, c, &(struct retired){ .addr = s->mem.base, .len = s->mem.size, .maps = 1,
					.bytes = s->mem.size, .map_id = s->mem.map_id });
	free(s);
}

int shm_free(struct iwxd *d, struct client *c, uint32_t id)
{
	struct shm *s = shm_find(c, id);

	if (!s)
		return -ENOENT;
	if (s->users)
		return -EBUSY;
	shm_release(d, c, s);
	return 0;
}

/* Map the pieces back to back; the view, or NULL with errno. */
static void *map_view(struct shm *const *shm, const struct iwx_ipc_mr_piece *piece, uint32_t n,
		      size_t total)
{
	uint8_t *view = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			     -1, 0);
	size_t at = 0;

	if (view == MAP_FAILED)
		return NULL;
	for (uint32_t i = 0; i < n; at += piece[i].len, i++) {
		if (mmap(view + at, piece[i].len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 shm[i]->mem.fd, (off_t)piece[i].off) == MAP_FAILED) {
			int err = errno;

			munmap(view, total);
			errno = err;
			return NULL;
		}
	}
	return view;
}

const struct iwx_arena *shm_backing(const struct client *c, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;

	for (const struct shm *s = c->shms; s; s = s->next) {
		uintptr_t base = (uintptr_t)s->mem.base;

		if (a >= base && a - base <= s->mem.size && len <= s->mem.size - (a - base))
			return &s->mem;
	}
	return NULL;
}

int64_t shm_mr_reg(struct iwxd *d, struct client *c, const struct iwx_ipc_mr_reg *r)
{
	size_t page = page_size(), in_page = r->addr & (page - 1), total = 0, need;
	struct shm_mr *m;
	uint8_t *base;
	int64_t stag;

	if (!r->npieces || r->npieces > IWX_IPC_MR_PIECES || r->len > SIZE_MAX - page - in_page)
		return -EINVAL;
	need = (in_page + r->len + page - 1) & ~(page - 1);
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->npieces; i++) {
		const struct iwx_ipc_mr_piece *p = &r->piece[i];
		struct shm *s = shm_find(c, p->shm);

		if (!s || !p->len || p->off % page || p->len % page || p->off > s->mem.size ||
		    p->len > s->mem.size - p->off || p->len > need - total) {
			free(m);
			return s ? -EINVAL : -ENOENT;
		}
		m->shm[i] = s;
		total += p->len;
	}
	if (total != need) {
		free(m);
		return -EINVAL;
	}
	m->n = r->npieces;
	if (m->n == 1) {
		base = (uint8_t *)m->shm[0]->mem.base + r->piece[0].off;
	} else {
		stag = maps_take(d, c, m->n);
		base = m->view = stag ? NULL : map_view(m->shm, r->piece, m->n, total);
		m->view_len = total;
		if (!base) {
			if (!stag) {
				stag = -errno;
				maps_give(d, c, m->n);
			}
			free(m);
			return stag;
		}
	}
	stag = iwx_mem_reg(d->mem, c->ident, r->pd, base + in_page, r->len, r->addr, r->access);
	if (stag < 0) {
		if (m->view) {
			munmap(m->view, m->view_len);
			maps_give(d, c, m->n);
		}
		free(m);
		return stag;
	}
	m->stag_index = (uint32_t)stag >> 8;
	for (uint32_t i = 0; i < m->n; i++)
		m->shm[i]->users++;
	m->next = c->shm_mrs;
	c->shm_mrs = m;
	return stag;
}

int shm_mr_dereg(struct iwxd *d, struct client *c, uint32_t stag)
{
	int err = iwx_mem_dereg(d->mem, c->ident, stag);

	if (err)
		return err;
	for (struct shm_mr *m = c->shm_mrs; m; m = m->next) {
		if (m->stag_index != stag >> 8)
			continue;
		for (uint32_t i = 0; i < m->n; i++)
			m->shm[i]->users--;
		if (m->view)
			retire(d, c, &(struct retired){ .addr = m->view, .len = m->view_len,
							.maps = m->n });
		IWX_LIST_UNLINK(&c->shm_mrs, m);
		free(m);
		break;
	}
	return 0;
}

void shm_reclaim(struct iwxd *d, struct client *c)
{
	uint64_t now = iwx_now_ms();

	if (now < c->reclaim_ms) {
		loop_due(&d->loop, c->reclaim_ms);
		return;
	}
	for (struct retired *r = c->retired, *n; r; r = n) {
		n = r->next;
		if (in_use(d, c, r->addr, r->len))
			continue;
		unmap(d, c, r);
		IWX_LIST_UNLINK(&c->retired, r);
		free(r);
	}
	c->reclaim_ms = c->retired ? now + RECLAIM_MS : 0;
	if (c->retired)
		loop_due(&d->loop, c->reclaim_ms);
}

void shm_client_gone(struct iwxd *d, struct client *c)
{
	/* its queue pairs are gone: nothing refers to anything, all is unmapped now */
	while (c->shm_mrs) {
		struct shm_mr *m = c->shm_mrs;

		c->shm_mrs = m->next;
		if (m->view)
			retire(d, c, &(struct retired){ .addr = m->view, .len = m->view_len,
							.maps = m->n });
		free(m);
	}
	while (c->shms)
		shm_release(d, c, c->shms);
	c->reclaim_ms = 0;
	shm_reclaim(d, c);
}
