// SPDX-License-Identifier: MIT
/* The shared memory arena (control/engine/arena.c): a mmapable BPF array, or a sealed memfd. */
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "ipc/fdpass.h"
#include "testutil.h"

#define MIB	(1024 * 1024)

static void need_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to create BPF maps");
}

/* The client's view: the arena's fd passed over a Unix socket, then mapped. */
static void map_as_client(const struct iwx_arena *a, struct iwx_arena *client)
{
	int sv[2], fd;
	unsigned n = 1;
	char msg[8];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	cr_assert_eq(iwx_fd_send(sv[0], &a->fd, 1, &IOV("arena", 5), 1), 5);
	cr_assert_eq(iwx_fd_recv(sv[1], &fd, &n, &IOV(msg, sizeof(msg)), 1), 5);
	cr_assert_eq(n, 1);
	cr_assert_geq(fd, 0);
	cr_assert_neq(fd, a->fd);
	close(sv[0]);
	close(sv[1]);
	cr_assert_eq(iwx_arena_map(client, fd, a->size, a->bpf), 0);
	cr_assert_eq(client->fd, fd);
	cr_assert_eq(client->bpf, a->bpf);
	cr_assert_neq(client->base, a->base);
}

/* Bytes written through either mapping are seen through the other. */
static void check_shared(struct iwx_arena *a, struct iwx_arena *b)
{
	uint8_t *p = a->base, *q = b->base;

	fill_pattern(p, a->size, 1);
	cr_assert_eq(memcmp(p, q, a->size), 0, "written by the daemon, read by the client");
	fill_pattern(q + 4096, 8192, 2);
	cr_assert_eq(memcmp(p + 4096, q + 4096, 8192), 0, "written by the client, read by the daemon");
}

Test(arena, bpf_map_shared_with_client)
{
	struct iwx_arena a, c, dup_map;
	struct bpf_map_info info = { 0 };
	__u32 info_len = sizeof(info);
	uint8_t val[IWX_ARENA_ELEM];

	need_root();
	cr_assert_eq(iwx_arena_create(&a, MIB, false), 0);
	cr_assert(a.bpf, "as root the arena is a BPF map");
	cr_assert_eq(a.size, MIB);
	cr_assert_neq(a.map_id, 0);
	cr_assert(fcntl(a.fd, F_GETFD) & FD_CLOEXEC);
	for (size_t i = 0; i < a.size; i++)
		cr_assert_eq(((uint8_t *)a.base)[i], 0, "zero-filled");

	cr_assert_eq(bpf_obj_get_info_by_fd(a.fd, &info, &info_len), 0);
	cr_assert_eq(info.type, BPF_MAP_TYPE_ARRAY);
	cr_assert_eq(info.value_size, IWX_ARENA_ELEM);
	cr_assert_eq(info.max_entries, MIB / IWX_ARENA_ELEM);
	cr_assert(info.map_flags & BPF_F_MMAPABLE);
	cr_assert_eq(info.id, a.map_id);

	map_as_client(&a, &c);
	check_shared(&a, &c);

	/* A second mapping of the same fd, as the daemon might make. */
	cr_assert_eq(iwx_arena_map(&dup_map, dup(a.fd), a.size, true), 0);
	cr_assert_eq(memcmp(dup_map.base, a.base, a.size), 0);
	iwx_arena_destroy(&dup_map);

	/* What the fast path sees: element i is page i of the mapping, both ways. */
	for (__u32 key = 0; key < MIB / IWX_ARENA_ELEM; key += 37) {
		cr_assert_eq(bpf_map_lookup_elem(a.fd, &key, val), 0);
		cr_assert_eq(memcmp(val, (uint8_t *)c.base + (size_t)key * IWX_ARENA_ELEM, sizeof(val)), 0,
			     "element %u", key);
	}
	__u32 key = 5;

	fill_pattern(val, sizeof(val), 99);
	cr_assert_eq(bpf_map_update_elem(a.fd, &key, val, BPF_ANY), 0);
	cr_assert_eq(memcmp(val, (uint8_t *)c.base + 5 * IWX_ARENA_ELEM, sizeof(val)), 0,
		     "placed by BPF, read by the client");

	iwx_arena_destroy(&c);
	cr_assert_null(c.base);
	cr_assert_eq(c.fd, -1);
	iwx_arena_destroy(&c);	/* twice: a no-op */
	cr_assert_eq(memcmp(val, (uint8_t *)a.base + 5 * IWX_ARENA_ELEM, sizeof(val)), 0,
		     "the daemon's mapping outlives the client's");
	iwx_arena_destroy(&a);
}

/* The daemon runs as root, its clients need not: mapping a received map takes no privilege. */
Test(arena, unprivileged_client_maps_bpf_arena)
{
	struct iwx_arena a;
	int sv[2], status;
	uint8_t val[IWX_ARENA_ELEM], want[IWX_ARENA_ELEM];
	pid_t pid;

	need_root();
	cr_assert_eq(iwx_arena_create(&a, 64 * 4096, false), 0);
	cr_assert(a.bpf);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct iwx_arena c;
		char msg[8];
		unsigned n = 1;
		int fd;

		close(sv[0]);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534) ||
		    iwx_fd_recv(sv[1], &fd, &n, &IOV(msg, sizeof(msg)), 1) != 5 || n != 1 ||
		    iwx_arena_map(&c, fd, 64 * 4096, true) || !c.bpf)
			_exit(1);
		fill_pattern((uint8_t *)c.base + 7 * IWX_ARENA_ELEM, IWX_ARENA_ELEM, 1234);
		iwx_arena_destroy(&c);
		_exit(0);
	}
	close(sv[1]);
	cr_assert_eq(iwx_fd_send(sv[0], &a.fd, 1, &IOV("arena", 5), 1), 5);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client as nobody mapped the arena");
	close(sv[0]);

	__u32 key = 7;

	fill_pattern(want, sizeof(want), 1234);
	cr_assert_eq(bpf_map_lookup_elem(a.fd, &key, val), 0);
	cr_assert_eq(memcmp(val, want, sizeof(val)), 0, "the map holds what the client wrote");
	iwx_arena_destroy(&a);
}

Test(arena, rounded_up_to_pages)
{
	static const size_t sizes[][2] = { { 1, 4096 }, { 4095, 4096 }, { 4096, 4096 },
					   { 4097, 8192 }, { 3 * MIB + 1, 3 * MIB + 4096 } };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct iwx_arena a;

		cr_assert_eq(iwx_arena_create(&a, sizes[i][0], true), 0);
		cr_assert_eq(a.size, sizes[i][1], "size %zu", sizes[i][0]);
		memset(a.base, 0xa5, a.size);	/* all of it is there */
		if (a.bpf) {
			struct bpf_map_info info = { 0 };
			__u32 len = sizeof(info);

			cr_assert_eq(bpf_obj_get_info_by_fd(a.fd, &info, &len), 0);
			cr_assert_eq((size_t)info.max_entries * IWX_ARENA_ELEM, a.size);
		}
		iwx_arena_destroy(&a);
	}
}

Test(arena, memfd_fallback)
{
	struct iwx_arena a, c;

	cr_assert_eq(setenv("IWX_ARENA_NO_BPF", "1", 1), 0);	/* each test runs in its own process */
	cr_assert_eq(iwx_arena_create(&a, MIB, false), -EPERM, "BPF refused, no fallback allowed");
	cr_assert_eq(a.fd, -1);
	cr_assert_null(a.base);
	iwx_arena_destroy(&a);

	cr_assert_eq(iwx_arena_create(&a, MIB - 100, true), 0);
	cr_assert(!a.bpf);
	cr_assert_eq(a.map_id, 0);
	cr_assert_eq(a.size, MIB);
	cr_assert(fcntl(a.fd, F_GETFD) & FD_CLOEXEC);
	map_as_client(&a, &c);
	cr_assert(!c.bpf);
	check_shared(&a, &c);

	/* Sealed: the client cannot shrink the arena under the daemon (nor grow it). */
	cr_assert_eq(ftruncate(c.fd, 0), -1);
	cr_assert_eq(errno, EPERM);
	cr_assert_eq(ftruncate(c.fd, 2 * MIB), -1);
	cr_assert_eq(fcntl(c.fd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
		     F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	iwx_arena_destroy(&c);
	iwx_arena_destroy(&a);

	cr_assert_eq(setenv("IWX_ARENA_NO_BPF", "0", 1), 0);
	cr_assert_eq(iwx_arena_create(&a, MIB, true), 0);
	cr_assert_eq(a.bpf, geteuid() == 0, "only \"1\" turns BPF off");
	iwx_arena_destroy(&a);
}

Test(arena, bad_sizes)
{
	struct iwx_arena a;
	size_t pages_over = ((size_t)UINT32_MAX + 1) * IWX_ARENA_ELEM;

	for (int fallback = 0; fallback < 2; fallback++) {
		cr_assert_eq(iwx_arena_create(&a, 0, fallback), -EINVAL);
		cr_assert_eq(iwx_arena_create(&a, SIZE_MAX, fallback), -EINVAL, "rounding overflows");
		cr_assert_eq(iwx_arena_create(&a, SIZE_MAX - 4095, fallback), -EINVAL);
		cr_assert_eq(iwx_arena_create(&a, pages_over, fallback), -EINVAL, "2^32 elements");
		cr_assert_eq(iwx_arena_create(&a, pages_over - 4095, fallback), -EINVAL);
		cr_assert_eq(a.fd, -1);
		cr_assert_null(a.base);
	}
}

Test(arena, more_than_the_kernel_holds)
{
	struct iwx_arena a;
	size_t huge = (size_t)UINT32_MAX * IWX_ARENA_ELEM;	/* 16 TiB: the largest accepted */

	need_root();
	cr_assert_eq(iwx_arena_create(&a, huge, true), -ENOMEM, "no fallback for lack of memory");
	cr_assert_eq(a.fd, -1);
	cr_assert_null(a.base);
}

Test(arena, client_map_checks)
{
	struct iwx_arena a, c;
	int fd;

	cr_assert_eq(setenv("IWX_ARENA_NO_BPF", "1", 1), 0);
	cr_assert_eq(iwx_arena_create(&a, 2 * 4096, true), 0);
	fd = dup(a.fd);
	cr_assert_eq(iwx_arena_map(&c, fd, 3 * 4096, false), -EINVAL, "longer than the memfd");
	cr_assert_eq(iwx_arena_map(&c, fd, 0, false), -EINVAL);
	cr_assert_eq(iwx_arena_map(&c, fd, 100, false), -EINVAL, "not whole pages");
	cr_assert_eq(iwx_arena_map(&c, -1, 4096, false), -EINVAL);
	cr_assert_eq(c.fd, -1);
	cr_assert_null(c.base);
	cr_assert_eq(iwx_arena_map(&c, fd, 4096, false), 0, "a prefix is fine");
	iwx_arena_destroy(&c);
	cr_assert_eq(fcntl(fd, F_GETFD), -1, "destroy closed the fd it owned");
	iwx_arena_destroy(&a);
}

Test(arena, client_map_checks_bpf)
{
	struct iwx_arena a, c;
	int fd;

	need_root();
	cr_assert_eq(iwx_arena_create(&a, 2 * 4096, false), 0);
	cr_assert(a.bpf);
	fd = dup(a.fd);
	cr_assert_eq(iwx_arena_map(&c, fd, 3 * 4096, true), -EINVAL, "the kernel refuses a longer map");
	cr_assert_eq(iwx_arena_map(&c, fd, 2 * 4096, true), 0);
	iwx_arena_destroy(&c);
	iwx_arena_destroy(&a);
}

/* Pages of this process's that back [p, p + len): mincore, page by page. */
static size_t resident_pages(void *p, size_t len)
{
	unsigned char vec[64];
	size_t n = 0;

	cr_assert_leq(len / 4096, sizeof(vec));
	cr_assert_eq(mincore(p, len, vec), 0, "%m");
	for (size_t i = 0; i < len / 4096; i++)
		n += vec[i] & 1;
	return n;
}

/*
 * A ring's memory (iwx_arena_create_memfd, even where BPF is): pages made only as they are
 * touched, and freed at once by the daemon in the client's mapping too; the client that
 * kept its mapping reads zeros there, and the memfd keeps its size (no SIGBUS).
 */
Test(arena, a_memfd_arena_makes_pages_as_touched_and_frees_them_everywhere)
{
	struct iwx_arena a, c;
	uint8_t *q;

	cr_assert_eq(iwx_arena_create_memfd(&a, 16 * 4096), 0);
	cr_assert_not(a.bpf);
	cr_assert_eq(a.size, 16 * 4096);
	map_as_client(&a, &c);
	q = c.base;
	cr_assert_eq(resident_pages(a.base, a.size), 0, "no page before it is touched");
	((uint8_t *)a.base)[0] = 1;
	q[5 * 4096] = 2;
	cr_assert_eq(q[0], 1);
	cr_assert_eq(((uint8_t *)a.base)[5 * 4096], 2);
	cr_assert_eq(resident_pages(c.base, c.size), 2, "the two touched, no more");

	cr_assert_eq(iwx_arena_free_pages(&a), 0);
	cr_assert_eq(resident_pages(c.base, c.size), 0, "freed in the client's mapping too");
	cr_assert_eq(q[0] | q[5 * 4096], 0, "the client reads zeros");
	iwx_arena_destroy(&a);
	q[7 * 4096] = 3;	/* the client's own now: no SIGBUS */
	cr_assert_eq(q[7 * 4096], 3);
	iwx_arena_destroy(&c);
}

Test(arena, a_bpf_arenas_pages_are_freed_with_the_map_only)
{
	struct iwx_arena a;

	need_root();
	cr_assert_eq(iwx_arena_create(&a, 2 * 4096, false), 0);
	cr_assert(a.bpf);
	cr_assert_eq(iwx_arena_free_pages(&a), -EINVAL);
	iwx_arena_destroy(&a);
	cr_assert_eq(iwx_arena_free_pages(&a), -EINVAL, "nothing set up");
}
