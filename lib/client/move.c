// SPDX-License-Identifier: MIT
/*
 * Registrations outside the arena: their pages move, in place, into memory iwxd
 * created and both map (iwxd never reaches into our address space). Moving copies a
 * run of whole pages into a new shared memory and maps that over the same addresses,
 * so pointers and contents stay as they were; the pages neighbouring a region's bytes
 * move with them. Pages already moved for another registration are shared, not moved
 * again. When the last registration using a shared memory goes, its pages move back
 * into ordinary private memory (if they are still mapped where we put them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "client.h"

/* One run of pages we moved: [start, start + len) is shared memory shm of iwxd. */
struct moved {
	uintptr_t	start;
	size_t		len;
	uint32_t	shm;
	uint32_t	users;		/* registrations holding it */
	struct moved	*next;		/* sorted by start */
};

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

#ifdef __SANITIZE_ADDRESS__
/* Whole pages hold other objects' bytes too, redzones that ASan would report as read. */
__attribute__((no_sanitize_address)) static void copy_pages(void *dst, const void *src, size_t len)
{
	volatile uint64_t *d = dst;	/* volatile: not turned back into an intercepted memcpy */
	const volatile uint64_t *s = src;

	for (size_t i = 0; i < len / sizeof(*d); i++)
		d[i] = s[i];
}
#else
static void copy_pages(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}
#endif

/* One mapping of /proc/self/smaps, as far as moving is concerned. */
struct vma {
	uintptr_t	start, end;
	int		prot;
	bool		shared;
	char		path[64];
};

static bool vma_header(const char *line, struct vma *v)
{
	char perms[5];
	int n = 0;

	memset(v, 0, sizeof(*v));
	if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &v->start, &v->end, perms, &n) < 3 || !n)
		return false;
	v->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	v->shared = perms[3] == 's';
	snprintf(v->path, sizeof(v->path), "%.*s", (int)strcspn(line + n, "\n"), line + n);
	return true;
}

/*
 * Visit the mappings overlapping [start, end) in order with fn(v, vmflags, ctx), the
 * VmFlags line of smaps (NULL from maps). 0, -EFAULT where a page is not mapped, or
 * fn's error.
 */
static int for_each_vma(uintptr_t start, uintptr_t end, bool smaps,
			int (*fn)(const struct vma *v, const char *vmflags, void *ctx), void *ctx)
{
	FILE *f = fopen(smaps ? "/proc/self/smaps" : "/proc/self/maps", "re");
	char line[512];
	struct vma v, cur = { 0 };
	bool in = false;
	uintptr_t covered = start;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && covered < end && fgets(line, sizeof(line), f)) {
		if (vma_header(line, &v)) {
			if (in && !smaps)
				err = fn(&cur, NULL, ctx);
			in = v.end > covered && v.start < end;
			if (in && v.start > covered)
				err = -EFAULT;	/* a hole */
			if (in)
				cur = v;
			if (in && !smaps && !err)
				covered = v.end;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			err = fn(&cur, line + 8, ctx);
			covered = cur.end;
			in = false;
		}
	}
	if (!err && in && !smaps) {
		err = fn(&cur, NULL, ctx);
		covered = cur.end;
	}
	fclose(f);
	return err ? err : covered < end ? -EFAULT : 0;
}

/* smaps VmFlags (man 5 proc): shared, hugetlb, I/O or PFN mappings cannot move. */
static bool vmflag(const char *flags, const char *f)
{
	for (const char *p = flags; (p = strstr(p, f)); p += 2)
		if (p[-1] == ' ' && (p[2] == ' ' || p[2] == '\n'))
			return true;
	return false;
}

/* A shared memory of iwxd's, as libiwx maps it (arena.c names the memfd kind). */
static bool is_iwx_shm(const struct vma *v)
{
	return v->shared && (strncmp(v->path, "anon_inode:bpf-map", 18) == 0 ||
			     strncmp(v->path, "/memfd:iwx-arena", 16) == 0);
}

static int check_movable(const struct vma *v, const char *vmflags, void *ctx)
{
	(void)ctx;
	if (!(v->prot & PROT_READ))
		return -EFAULT;
	if (is_iwx_shm(v))
		return -EBUSY;	/* another device's registration (or arena) has these pages */
	if (v->shared || vmflag(vmflags, "sh") || vmflag(vmflags, "ht") || vmflag(vmflags, "io") ||
	    vmflag(vmflags, "pf"))
		return -EINVAL;
	return 0;
}

/* The protections of [start, end) as they are now, to restore after a move. */
struct prot_run {
	uintptr_t	start, end;
	int		prot;
};

struct prot_list {
	struct prot_run	*run;
	size_t		n, cap;
	uintptr_t	start, end;
};

static int note_prot(const struct vma *v, const char *vmflags, void *ctx)
{
	struct prot_list *l = ctx;
	struct prot_run *r;

	(void)vmflags;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		struct prot_run *p = realloc(l->run, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->run = p;
		l->cap = cap;
	}
	r = &l->run[l->n++];
	r->start = v->start > l->start ? v->start : l->start;
	r->end = v->end < l->end ? v->end : l->end;
	r->prot = v->prot;
	return 0;
}

static void restore_prot(const struct prot_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->run[i].prot != (PROT_READ | PROT_WRITE))
			mprotect((void *)l->run[i].start, l->run[i].end - l->run[i].start,
				 l->run[i].prot);
}

/*
 * The copy and the mapping over it run on a stack of their own: the pages may hold
 * this thread's stack (a buffer in a caller's frame), and whatever the move wrote
 * there between the copy and the mapping (a return address) would be lost. The job,
 * both contexts and the stack are in a mapping of their own, which never moves.
 */
#define JOB_STACK	(64 << 10)

struct move_job {
	ucontext_t	back, run;
	uintptr_t	start;
	size_t		len;
	void		*tmp;
	int		fd;	/* in: the shared memory; out (-1): tmp is private, moved over */
	int		err;
};

/* makecontext passes ints: the job's address in two halves (no TLS: libiwx needs only libc) */
static void move_job_run(unsigned int lo, unsigned int hi)
{
	struct move_job *j = (struct move_job *)(((uintptr_t)hi << 32) | lo);

	copy_pages(j->tmp, (void *)j->start, j->len);
	if (j->fd >= 0 ? mmap((void *)j->start, j->len, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_FIXED, j->fd, 0) == MAP_FAILED :
			 /* one step, so that no moment finds the pages missing */
			 mremap(j->tmp, j->len, j->len, MREMAP_MAYMOVE | MREMAP_FIXED,
				(void *)j->start) == MAP_FAILED)
		j->err = -errno;
}	/* back to j->back, through uc_link */

/* Copy [start, start + len) into tmp, then put fd's pages (fd < 0: tmp itself) there. */
static int copy_and_map(uintptr_t start, size_t len, void *tmp, int fd)
{
	size_t size = sizeof(struct move_job) + JOB_STACK;
	struct move_job *j = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
	int err;

	if (j == MAP_FAILED)
		return -errno;
	*j = (struct move_job){ .start = start, .len = len, .tmp = tmp, .fd = fd };
	err = getcontext(&j->run) ? -errno : 0;
	if (!err) {
		j->run.uc_stack.ss_sp = j + 1;
		j->run.uc_stack.ss_size = JOB_STACK;
		j->run.uc_link = &j->back;
		makecontext(&j->run, (void (*)(void))move_job_run, 2, (unsigned int)(uintptr_t)j,
			    (unsigned int)((uintptr_t)j >> 32));
		err = swapcontext(&j->back, &j->run) ? -errno : j->err;
	}
	munmap(j, size);
	return err;
}

/* Copy [start, start + len) into the shared memory fd and map it there instead. */
static int move_in(uintptr_t start, size_t len, int fd)
{
	struct prot_list prots = { .start = start, .end = start + len };
	void *tmp;
	int err = for_each_vma(start, start + len, false, note_prot, &prots);

	if (err)
		goto out;
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	err = copy_and_map(start, len, tmp, fd);
	if (!err)
		restore_prot(&prots);
	munmap(tmp, len);
out:
	free(prots.run);
	return err;
}

/* Is this mapping still a shared memory of iwxd's, as we mapped it? */
static int check_ours(const struct vma *v, const char *vmflags, void *ctx)
{
	(void)vmflags;
	(void)ctx;
	return is_iwx_shm(v) && (v->prot & PROT_READ) ? 0 : -ESTALE;
}

/* Back into private memory, with the same bytes and protections, if still ours. */
static void move_out(const struct moved *m)
{
	struct prot_list prots = { .start = m->start, .end = m->start + m->len };
	void *tmp;

	/* unmapped or replaced since: nothing of ours is left there */
	if (for_each_vma(prots.start, prots.end, false, check_ours, NULL) ||
	    for_each_vma(prots.start, prots.end, false, note_prot, &prots))
		goto out;
	tmp = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		goto out;	/* it stays shared: correct, if not private */
	if (copy_and_map(m->start, m->len, tmp, -1))
		munmap(tmp, m->len);
	else
		restore_prot(&prots);
out:
	free(prots.run);
}

/* A new run of moved pages [start, start + len), in the list at *pos. */
static struct moved *move_new(struct iwx_device *dev, struct moved **pos, uintptr_t start,
			      size_t len, int *err)
{
	struct iwx_ipc_shm req = { .size = len };
	struct iwx_ipc_id id;
	struct moved *m = calloc(1, sizeof(*m));
	unsigned nfds = 1;
	int fd = -1;

	*err = m ? for_each_vma(start, start + len, true, check_movable, NULL) : -ENOMEM;
	if (!*err)
		*err = client_call(dev, IWX_IPC_SHM_CREATE, &req, sizeof(req), &req, sizeof(req),
				   &fd, &nfds);
	if (!*err && (nfds != 1 || req.size != len))
		*err = -EPROTO;
	if (!*err)
		*err = move_in(start, len, fd);
	if (fd >= 0)
		close(fd);
	if (*err) {
		if (nfds == 1 && fd >= 0) {
			id.id = req.shm;
			client_call(dev, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL, NULL);
		}
		free(m);
		return NULL;
	}
	*m = (struct moved){ .start = start, .len = len, .shm = req.shm, .next = *pos };
	*pos = m;
	return m;
}

static void put(struct iwx_device *dev, struct moved *m, bool tell)
{
	struct iwx_ipc_id id = { m->shm };

	if (--m->users)
		return;
	move_out(m);
	if (tell)
		client_call(dev, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL, NULL);
	IWX_LIST_UNLINK(&dev->moved, m);
	free(m);
}

int move_acquire(struct iwx_device *dev, uintptr_t addr, size_t len, struct iwx_ipc_mr_reg *req,
		 struct moved **held)
{
	size_t page = page_size();
	uintptr_t pos = addr & ~(page - 1), end;
	struct moved **link = &dev->moved;
	uint32_t n = 0;
	int err = 0;

	if (len > UINTPTR_MAX - addr - page)
		return -EINVAL;
	end = (addr + len + page - 1) & ~(page - 1);
	while (pos < end && !err) {
		struct moved *m;

		while (*link && (*link)->start + (*link)->len <= pos)
			link = &(*link)->next;
		if (n == IWX_IPC_MR_PIECES) {
			err = -EINVAL;	/* spans too many earlier registrations' pages */
			break;
		}
		m = *link;
		if (!m || m->start > pos) {
			/* not moved yet: up to the next run we moved, or the end */
			size_t gap = (m && m->start < end ? m->start : end) - pos;

			m = move_new(dev, link, pos, gap, &err);
			if (!m)
				break;
		}
		req->piece[n] = (struct iwx_ipc_mr_piece){
			.shm = m->shm, .off = pos - m->start,
			.len = (m->start + m->len < end ? m->start + m->len : end) - pos,
		};
		pos += req->piece[n].len;
		m->users++;
		held[n++] = m;
	}
	req->npieces = n;
	if (err)
		move_release(dev, held, n, true);
	return err;
}

void move_release(struct iwx_device *dev, struct moved **held, uint32_t n, bool tell)
{
	for (uint32_t i = 0; i < n; i++)
		put(dev, held[i], tell);
}
