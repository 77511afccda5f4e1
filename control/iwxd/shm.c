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
 * client refers to it (shm_reclaim), or when the client goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon.h"
#include "shm.h"

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

/* Unmap addr now if nothing refers to it, else later. */
static void retire(struct iwxd *d, struct client *c, void *addr, size_t len)
{
	struct retired *r = malloc(sizeof(*r));

	if (!r) {
		/* cannot wait: leave it mapped rather than risk a queue pair's pointer */
		log_warn("client %u: %zu bytes of shared memory left mapped", c->id, len);
		return;
	}
	*r = (struct retired){ .addr = addr, .len = len, .next = c->retired };
	c->retired = r;
	shm_reclaim(d, c);
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
	if (req->size > d->o.max[LIMIT_ARENA_TOTAL] - d->arena_bytes)
		return client_refuse(d, c, LIMIT_ARENA_TOTAL, -ENOSPC);
	if (c->nshms >= IWXD_MAX_SHMS) {
		log_warn("client %u: %u shared memories already: refused", c->id, c->nshms);
		return -ENOSPC;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = iwx_arena_create(&s->mem, req->size, true);
	if (err) {
		free(s);
		return err;
	}
	do	/* the client's own names: unique among its shared memories */
		s->id = ++c->shm_ids;
	while (!s->id || shm_find(c, s->id));
	s->next = c->shms;
	c->shms = s;
	c->nshms++;
	c->shm_bytes += s->mem.size;
	d->arena_bytes += s->mem.size;
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
	c->nshms--;
	c->shm_bytes -= s->mem.size;
	d->arena_bytes -= s->mem.size;
	close(s->mem.fd);	/* the mapping keeps the memory */
	retire(d, c, s->mem.base, s->mem.size);
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
		base = m->view = map_view(m->shm, r->piece, m->n, total);
		m->view_len = total;
		if (!base) {
			free(m);
			return -errno;
		}
	}
	stag = iwx_mem_reg(d->mem, c->ident, r->pd, base + in_page, r->len, r->addr, r->access);
	if (stag < 0) {
		if (m->view)
			munmap(m->view, m->view_len);
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
			retire(d, c, m->view, m->view_len);
		IWX_LIST_UNLINK(&c->shm_mrs, m);
		free(m);
		break;
	}
	return 0;
}

static bool in_use(const struct iwxd *d, const struct client *c, const struct retired *r)
{
	for (const struct vqp *q = d->qps; q; q = q->next)
		if (q->owner == c && q->eng && iwx_qp_refers_to(q->eng, r->addr, r->len))
			return true;
	return false;
}

void shm_reclaim(struct iwxd *d, struct client *c)
{
	for (struct retired *r = c->retired, *n; r; r = n) {
		n = r->next;
		if (in_use(d, c, r))
			continue;
		munmap(r->addr, r->len);
		IWX_LIST_UNLINK(&c->retired, r);
		free(r);
	}
}

void shm_client_gone(struct iwxd *d, struct client *c)
{
	while (c->shm_mrs) {
		struct shm_mr *m = c->shm_mrs;

		c->shm_mrs = m->next;
		if (m->view)
			munmap(m->view, m->view_len);
		free(m);
	}
	while (c->shms) {
		c->shms->users = 0;
		shm_release(d, c, c->shms);
	}
	shm_reclaim(d, c);	/* its queue pairs are gone: nothing refers to anything */
}
