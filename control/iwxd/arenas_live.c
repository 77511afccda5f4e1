// SPDX-License-Identifier: MIT
/* Which client memories the kernel still has (arenas_live.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "arenas_live.h"
#include "arenas_live.skel.h"

struct arenas_live {
	struct arenas_live_bpf	*skel;
	struct bpf_link		*link;
	uint32_t		*ids;	/* ascending: the iterator walks the kernel's ids in order */
	size_t			n, cap;
};

struct arenas_live *arenas_live_open(void)
{
	struct arenas_live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->skel = arenas_live_bpf__open_and_load();
	if (l->skel)
		l->link = bpf_program__attach_iter(l->skel->progs.iwx_arenas_live, NULL);
	if (!l->link) {
		arenas_live_close(l);
		return NULL;
	}
	return l;
}

void arenas_live_close(struct arenas_live *l)
{
	if (!l)
		return;
	bpf_link__destroy(l->link);
	arenas_live_bpf__destroy(l->skel);
	free(l->ids);
	free(l);
}

int arenas_live_read(struct arenas_live *l)
{
	int it = bpf_iter_create(bpf_link__fd(l->link));
	size_t n = 0;
	ssize_t got;

	if (it < 0)
		return -errno;
	for (;;) {
		if (n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 256;
			uint32_t *ids = realloc(l->ids, cap * sizeof(*ids));

			if (!ids) {
				close(it);
				return -ENOMEM;
			}
			l->ids = ids;
			l->cap = cap;
		}
		got = read(it, l->ids + n, (l->cap - n) * sizeof(*l->ids));
		if (got <= 0)
			break;
		n += (size_t)got / sizeof(*l->ids);
	}
	close(it);
	if (got < 0)
		return -errno;
	l->n = n;
	return 0;
}

bool arenas_live_has(const struct arenas_live *l, uint32_t id)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->ids[mid] == id)
			return true;
		if (l->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}
