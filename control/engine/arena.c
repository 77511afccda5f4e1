// SPDX-License-Identifier: MIT
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* the kernel's internal "not supported", seen by user space */
#endif

size_t iwx_arena_size(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (page < IWX_ARENA_ELEM)
		page = IWX_ARENA_ELEM;
	if (!size || size > SIZE_MAX - (page - 1))
		return 0;
	size = (size + page - 1) & ~(page - 1);
	if ((uint64_t)size / IWX_ARENA_ELEM > UINT32_MAX)
		return 0;
	return size;
}

/* Errors that mean "no BPF here", as opposed to "not that much memory". */
static bool bpf_unavailable(int err)
{
	return err == -EPERM || err == -EACCES || err == -ENOSYS || err == -EINVAL ||
	       err == -EOPNOTSUPP || err == -ENOTSUPP;
}

static int map_fd(struct iwx_arena *a, int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	a->fd = fd;
	a->base = p;
	a->size = size;
	return 0;
}

static int create_bpf(struct iwx_arena *a, size_t size)
{
	/* BPF_F_INNER_MAP: the fast path reaches it through a map of maps, whatever its size */
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	struct bpf_map_info info;
	__u32 info_len = sizeof(info);
	const char *no_bpf = getenv("IWX_ARENA_NO_BPF");
	int fd, err;

	if (no_bpf && strcmp(no_bpf, "1") == 0)
		return -EPERM;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "iwx_arena", sizeof(__u32), IWX_ARENA_ELEM,
			    size / IWX_ARENA_ELEM, &opts);
	if (fd < 0)
		return fd;	/* libbpf 1.x: -errno */
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	if (!err)
		err = map_fd(a, fd, size);
	if (err) {
		close(fd);
		return err;
	}
	a->bpf = true;
	a->map_id = info.id;
	return 0;
}

static int create_memfd(struct iwx_arena *a, size_t size)
{
	int fd = memfd_create("iwx-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		err = errno == EFBIG ? -ENOMEM : -errno;
	if (!err)
		err = map_fd(a, fd, size);
	if (err)
		close(fd);
	return err;
}

/* a not set up (fd -1, base NULL); size rounded up to whole pages (iwx_arena_size). */
static size_t unset(struct iwx_arena *a, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	return iwx_arena_size(size);
}

int iwx_arena_create(struct iwx_arena *a, size_t size, bool allow_fallback)
{
	int err;

	size = unset(a, size);
	if (!size)
		return -EINVAL;
	err = create_bpf(a, size);
	if (err && allow_fallback && bpf_unavailable(err))
		err = create_memfd(a, size);
	return err;
}

int iwx_arena_create_memfd(struct iwx_arena *a, size_t size)
{
	size = unset(a, size);
	return size ? create_memfd(a, size) : -EINVAL;
}

int iwx_arena_free_pages(struct iwx_arena *a)
{
	if (a->bpf || !a->base)
		return -EINVAL;
	/* through the mapping: the descriptor may be the client's alone by now */
	return madvise(a->base, a->size, MADV_REMOVE) ? -errno : 0;
}

int iwx_arena_map(struct iwx_arena *a, int fd, size_t size, bool bpf)
{
	struct stat st;
	int err;

	if (unset(a, size) != size || fd < 0 || !size)
		return -EINVAL;
	/* A memfd shorter than the mapping would SIGBUS; the kernel checks a map's size itself. */
	if (!bpf && fstat(fd, &st))
		return -errno;
	if (!bpf && (st.st_size < 0 || (uint64_t)st.st_size < size))
		return -EINVAL;
	err = map_fd(a, fd, size);
	a->bpf = bpf && !err;
	return err;
}

void iwx_arena_destroy(struct iwx_arena *a)
{
	if (!a->base)
		return;
	munmap(a->base, a->size);
	if (a->fd >= 0)	/* the mapping may outlive its descriptor (iwxd's rings) */
		close(a->fd);
	unset(a, 0);
}
