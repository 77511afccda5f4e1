// SPDX-License-Identifier: MIT
/* Protection domains, memory regions and STags (control/engine/mem.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/ddp_check.h"

#include "mem.h"

#define RW	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)

static struct iwx_mem *m;
static uint8_t buf[4096];

static void setup(void)
{
	m = iwx_mem_new();
	cr_assert_not_null(m);
}

static void teardown(void)
{
	iwx_mem_free(m);
}

TestSuite(mem, .init = setup, .fini = teardown);

static uint32_t pd_new(uint64_t owner)
{
	int64_t pd = iwx_mem_pd_alloc(m, owner);

	cr_assert_gt(pd, 0);
	cr_assert_leq(pd, UINT32_MAX);
	return pd;
}

static uint32_t reg(uint64_t owner, uint32_t pd, uint64_t len, uint64_t base_to, uint8_t access)
{
	int64_t stag = iwx_mem_reg(m, owner, pd, buf, len, base_to, access);

	cr_assert_gt(stag, 0, "reg: %lld", (long long)stag);
	cr_assert_leq(stag, UINT32_MAX);
	return stag;
}

Test(mem, pd_alloc_free)
{
	uint32_t a = pd_new(1), b = pd_new(1), c = pd_new(2);

	cr_assert(a != b && a != c && b != c);
	cr_assert_eq(iwx_mem_pd_free(m, 2, a), -ENOENT, "another owner's PD");
	cr_assert_eq(iwx_mem_pd_free(m, 1, 0), -ENOENT);
	cr_assert_eq(iwx_mem_pd_free(m, 1, 0xdeadbeef), -ENOENT);

	uint32_t stag = reg(1, a, 64, 0, RW);

	cr_assert_eq(iwx_mem_pd_free(m, 1, a), -EBUSY);
	cr_assert_eq(iwx_mem_invalidate(m, stag, a), 0);
	cr_assert_eq(iwx_mem_pd_free(m, 1, a), -EBUSY, "an invalidated region still uses its PD");
	cr_assert_eq(iwx_mem_dereg(m, 1, stag), 0);
	cr_assert_eq(iwx_mem_pd_free(m, 1, a), 0);
	cr_assert_eq(iwx_mem_pd_free(m, 1, a), -ENOENT, "freed twice");
	cr_assert_eq(iwx_mem_reg(m, 1, a, buf, 64, 0, RW), -ENOENT, "register in a freed PD");
	cr_assert_eq(iwx_mem_pd_free(m, 1, b), 0);
	cr_assert_eq(iwx_mem_pd_free(m, 2, c), 0);

	uint32_t d = pd_new(1);

	cr_assert(d != a && d != b && d != c, "PD numbers are not reused at once");
}

Test(mem, reg_lookup_dereg)
{
	uint32_t pd = pd_new(7);
	uint32_t stag = reg(7, pd, 100, 0x1000, IWX_ACCESS_REMOTE_WRITE);
	const struct iwx_region *mr = iwx_mem_lookup(m, stag);

	cr_assert_not_null(mr);
	cr_assert_eq(mr->desc.stag, stag);
	cr_assert_eq(mr->desc.pd, pd);
	cr_assert_eq(mr->desc.valid, 1);
	cr_assert_eq(mr->desc.access, IWX_ACCESS_REMOTE_WRITE);
	cr_assert_eq(mr->desc.base_to, 0x1000);
	cr_assert_eq(mr->desc.len, 100);
	cr_assert_eq(mr->addr, buf);
	cr_assert_eq(mr->owner, 7);
	cr_assert_null(iwx_mem_lookup(m, 0));

	cr_assert_eq(iwx_mem_dereg(m, 8, stag), -ENOENT, "another owner's STag");
	cr_assert_not_null(iwx_mem_lookup(m, stag));
	cr_assert_eq(iwx_mem_dereg(m, 7, stag), 0);
	cr_assert_null(iwx_mem_lookup(m, stag));
	cr_assert_eq(iwx_mem_dereg(m, 7, stag), -ENOENT);
}

Test(mem, wrong_key_is_invalid)
{
	uint32_t pd = pd_new(1);
	uint32_t stag = reg(1, pd, 10, 0, RW);

	for (uint32_t k = 0; k < 256; k++) {
		uint32_t s = (stag & ~0xffu) | k;

		if (s == stag)
			cr_assert_not_null(iwx_mem_lookup(m, s));
		else
			cr_assert_null(iwx_mem_lookup(m, s), "key %#x", k);
	}
	cr_assert_null(iwx_mem_lookup(m, stag ^ 0x100), "neighbouring index");
	cr_assert_eq(iwx_mem_dereg(m, 1, stag ^ 1), -ENOENT, "dereg with the wrong key");
	cr_assert_eq(iwx_mem_invalidate(m, stag ^ 1, pd), -EINVAL, "invalidate with the wrong key");
	cr_assert_eq(iwx_mem_lookup(m, stag)->desc.valid, 1);
}

Test(mem, other_owner)
{
	uint32_t pd1 = pd_new(1);
	uint32_t stag = reg(1, pd1, 10, 0, RW);

	pd_new(2);
	cr_assert_eq(iwx_mem_reg(m, 2, pd1, buf, 10, 0, RW), -ENOENT);
	cr_assert_eq(iwx_mem_dereg(m, 2, stag), -ENOENT);
	cr_assert_eq(iwx_mem_invalidate(m, stag, pd1), 0);
	cr_assert_eq(iwx_mem_revalidate(m, 2, stag), -ENOENT);
	cr_assert_eq(iwx_mem_lookup(m, stag)->desc.valid, 0);
}

/*
 * An owner is a client's identity, which never repeats: two that are equal in their low
 * 32 bits (a client's id in logs and listings) are still two, and neither sees the other's.
 */
Test(mem, owners_equal_modulo_2_32_are_two)
{
	uint64_t a = 5, b = a + (1ull << 32);
	uint32_t pd = pd_new(a);
	uint32_t stag = reg(a, pd, 10, 0, RW);

	cr_assert_not(iwx_mem_pd_owned(m, b, pd), "a's PD is not b's");
	cr_assert_eq(iwx_mem_reg(m, b, pd, buf, 10, 0, RW), -ENOENT, "register in a's PD");
	cr_assert_eq(iwx_mem_pd_free(m, b, pd), -ENOENT, "free a's PD");
	cr_assert_eq(iwx_mem_dereg(m, b, stag), -ENOENT, "deregister a's region");
	cr_assert_eq(iwx_mem_invalidate(m, stag, pd), 0);
	cr_assert_eq(iwx_mem_revalidate(m, b, stag), -ENOENT, "revalidate a's region");
	iwx_mem_release_owner(m, b);
	cr_assert_not_null(iwx_mem_lookup(m, stag), "b leaving takes nothing of a's");
	cr_assert_eq(iwx_mem_lookup(m, stag)->owner, a);
	cr_assert(iwx_mem_pd_owned(m, a, pd));
	cr_assert_eq(iwx_mem_revalidate(m, a, stag) > 0, 1, "a's own");
	iwx_mem_release_owner(m, a);
	cr_assert_null(iwx_mem_lookup(m, stag));
	cr_assert_not(iwx_mem_pd_owned(m, a, pd));
}

Test(mem, argument_checks)
{
	uint32_t pd = pd_new(1);

	cr_assert_eq(iwx_mem_reg(m, 1, pd, buf, 10, 0, 0x10), -EINVAL, "unknown access bit");
	cr_assert_eq(iwx_mem_reg(m, 1, pd, buf, 10, 0, 0xff), -EINVAL);
	cr_assert_eq(iwx_mem_reg(m, 1, pd, buf, 10, UINT64_MAX - 9, RW), -EINVAL, "base_to + len wraps");
	cr_assert_eq(iwx_mem_reg(m, 1, pd, buf, UINT64_MAX, 1, RW), -EINVAL);
	cr_assert_eq(iwx_mem_reg(m, 1, pd, NULL, 1, 0, RW), -EINVAL, "no memory");
	cr_assert_eq(iwx_mem_reg(m, 1, pd, (void *)(UINTPTR_MAX - 7), 9, 0, RW), -EINVAL,
		     "address range wraps");
	reg(1, pd, 9, UINT64_MAX - 9, RW);	/* base_to + len == UINT64_MAX */
	reg(1, pd, 0, UINT64_MAX, RW);		/* zero-length: legal, useless */
	reg(1, pd, 0, 0, 0);
	cr_assert_gt(iwx_mem_reg(m, 1, pd, NULL, 0, 0, RW), 0);
	cr_assert_gt(iwx_mem_reg(m, 1, pd, (void *)(UINTPTR_MAX - 7), 8, 0, RW), 0);
}

Test(mem, invalidate_revalidate)
{
	uint32_t pd = pd_new(1), other = pd_new(1);
	uint32_t stag = reg(1, pd, 64, 0, RW);
	const struct iwx_region *mr = iwx_mem_lookup(m, stag);

	cr_assert_eq(iwx_mem_invalidate(m, stag, other), -EACCES, "another PD");
	cr_assert_eq(iwx_mem_invalidate(m, stag ^ 0x100, pd), -EINVAL, "no such STag");
	cr_assert_eq(iwx_mem_revalidate(m, 1, stag), -EBUSY, "still valid");
	cr_assert_eq(iwx_mem_invalidate(m, stag, pd), 0);
	cr_assert_eq(iwx_mem_lookup(m, stag), mr, "an invalidated STag stays until deregistered");
	cr_assert_eq(mr->desc.valid, 0);
	cr_assert_eq(iwx_mem_invalidate(m, stag, pd), 0, "invalidating twice");

	int64_t ns = iwx_mem_revalidate(m, 1, stag);

	cr_assert_gt(ns, 0);
	cr_assert_eq(ns >> 8, stag >> 8, "same index");
	cr_assert_neq(ns & 0xff, stag & 0xff, "new key");
	cr_assert_null(iwx_mem_lookup(m, stag), "the old STag names nothing");
	cr_assert_eq(iwx_mem_lookup(m, ns), mr);
	cr_assert_eq(mr->desc.valid, 1);
	cr_assert_eq(mr->desc.stag, ns);
	cr_assert_eq(iwx_mem_revalidate(m, 1, stag), -ENOENT);
	cr_assert_eq(iwx_mem_invalidate(m, stag, pd), -EINVAL);
	cr_assert_eq(iwx_mem_dereg(m, 1, stag), -ENOENT);
	cr_assert_eq(iwx_mem_dereg(m, 1, ns), 0);

	/* The key keeps changing: 300 rounds never give the previous key back. */
	stag = reg(1, pd, 64, 0, RW);
	for (int i = 0; i < 300; i++) {
		cr_assert_eq(iwx_mem_invalidate(m, stag, pd), 0);
		ns = iwx_mem_revalidate(m, 1, stag);
		cr_assert_gt(ns, 0);
		cr_assert_neq(ns, stag);
		cr_assert_null(iwx_mem_lookup(m, stag));
		stag = ns;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int count_mr(const struct iwx_region *mr, void *ctx)
{
	(void)mr;
	++*(size_t *)ctx;
	return 0;
}

Test(mem, many_registrations_spread)
{
	enum { N = 100000, BUCKETS = 16 };
	uint32_t *stags = calloc(N, sizeof(*stags)), *idx = calloc(N, sizeof(*idx));
	uint32_t pd = pd_new(3);
	size_t buckets[BUCKETS] = { 0 }, n = 0;
	int run = 1, longest = 1;

	cr_assert(stags && idx);
	for (int i = 0; i < N; i++) {
		stags[i] = reg(3, pd, 1 + i % 4096, i, RW);
		idx[i] = stags[i] >> 8;
		cr_assert_neq(idx[i], 0);
	}
	for (int i = 0; i < N; i++) {
		const struct iwx_region *mr = iwx_mem_lookup(m, stags[i]);

		cr_assert_not_null(mr, "registration %d", i);
		cr_assert_eq(mr->desc.base_to, (uint64_t)i);
	}
	qsort(idx, N, sizeof(*idx), cmp_u32);
	for (int i = 1; i < N; i++) {
		cr_assert_neq(idx[i], idx[i - 1], "indices are distinct");
		run = idx[i] == idx[i - 1] + 1 ? run + 1 : 1;
		if (run > longest)
			longest = run;
	}
	/* 100000 random indices of 2^24 make runs of 3 rare and of 5 practically impossible. */
	cr_assert_leq(longest, 4, "a run of %d consecutive indices", longest);
	for (int i = 0; i < N; i++)
		buckets[idx[i] / ((1u << 24) / BUCKETS)]++;
	for (int b = 0; b < BUCKETS; b++)
		cr_assert(buckets[b] > N / BUCKETS * 9 / 10 && buckets[b] < N / BUCKETS * 11 / 10,
			  "bucket %d holds %zu", b, buckets[b]);

	cr_assert_eq(iwx_mem_for_each(m, count_mr, &n), 0);
	cr_assert_eq(n, N);
	for (int i = 0; i < N; i += 2)
		cr_assert_eq(iwx_mem_dereg(m, 3, stags[i]), 0);
	for (int i = 0; i < N; i++)
		cr_assert_eq(iwx_mem_lookup(m, stags[i]) != NULL, i % 2 == 1, "after dereg, %d", i);
	for (int i = 1; i < N; i += 2)
		cr_assert_eq(iwx_mem_dereg(m, 3, stags[i]), 0);
	cr_assert_eq(iwx_mem_pd_free(m, 3, pd), 0);
	free(stags);
	free(idx);
}

/* Registrations and deregistrations interleaved at random, against a plain list. */
Test(mem, churn_against_reference)
{
	enum { CAP = 4000 };
	static uint32_t live[CAP];
	uint32_t pd = pd_new(1), gone[64] = { 0 };
	size_t n = 0;

	srand(7);
	for (int op = 0; op < 200000; op++) {
		if (n < CAP && (n == 0 || rand() % 100 < 52)) {
			live[n++] = reg(1, pd, 8, 0, RW);
		} else {
			size_t i = rand() % n;

			cr_assert_eq(iwx_mem_dereg(m, 1, live[i]), 0);
			gone[op % 64] = live[i];
			live[i] = live[--n];
		}
		if (op % 997 == 0) {
			size_t count = 0;

			for (size_t i = 0; i < n; i++)
				cr_assert_eq(iwx_mem_lookup(m, live[i])->desc.stag, live[i]);
			for (int i = 0; i < 64; i++) {
				const struct iwx_region *mr = gone[i] ? iwx_mem_lookup(m, gone[i]) : NULL;

				/* a gone STag's index may be live again, but not under the same STag
				 * unless by chance the same key was drawn: then it is in live[] */
				if (mr) {
					bool found = false;

					for (size_t j = 0; j < n && !found; j++)
						found = live[j] == gone[i];
					cr_assert(found);
				}
			}
			iwx_mem_for_each(m, count_mr, &count);
			cr_assert_eq(count, n);
		}
	}
}

static int stop_at_third(const struct iwx_region *mr, void *ctx)
{
	(void)mr;
	return ++*(int *)ctx == 3 ? 42 : 0;
}

Test(mem, for_each_stops)
{
	uint32_t pd = pd_new(1);
	int seen = 0;

	cr_assert_eq(iwx_mem_for_each(m, stop_at_third, &seen), 0, "empty table");
	for (int i = 0; i < 10; i++)
		reg(1, pd, 8, 0, RW);
	cr_assert_eq(iwx_mem_for_each(m, stop_at_third, &seen), 42);
	cr_assert_eq(seen, 3);
}

/* The desc of an incoming STag, or NULL: what the checks take. */
static const struct iwx_stag_desc *desc_of(uint32_t stag)
{
	const struct iwx_region *mr = iwx_mem_lookup(m, stag);

	return mr ? &mr->desc : NULL;
}

/* What the fast path and the daemon will do with a looked-up STag. */
Test(mem, checks_on_looked_up_desc)
{
	uint32_t pd = pd_new(1), other = pd_new(1);
	uint32_t w = reg(1, pd, 0x1000, 0x10000, IWX_ACCESS_REMOTE_WRITE);
	uint32_t r = reg(1, pd, 0x1000, 0, IWX_ACCESS_LOCAL_WRITE);
	const struct iwx_stag_desc *d = desc_of(w);
	const __u32 ok = IWX_CHECK_OK;
	const __u32 inval = IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_INVALID_STAG);
	const __u32 assoc = IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_STAG_NOT_ASSOC);
	const __u32 bounds = IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_BASE_BOUNDS);
	const __u32 access = IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_ACCESS);

	cr_assert_eq(iwx_check_tagged(d, w, pd, IWX_ACCESS_REMOTE_WRITE, 0x10000, 0x1000), ok);
	cr_assert_eq(iwx_check_tagged(d, w, pd, IWX_ACCESS_REMOTE_WRITE, 0x10800, 0x800), ok);
	cr_assert_eq(iwx_check_tagged(d, w, pd, IWX_ACCESS_REMOTE_WRITE, 0x10800, 0x801), bounds);
	cr_assert_eq(iwx_check_tagged(d, w, pd, IWX_ACCESS_REMOTE_WRITE, 0xffff, 1), bounds);
	cr_assert_eq(iwx_check_tagged(d, w, other, IWX_ACCESS_REMOTE_WRITE, 0x10000, 1), assoc);
	cr_assert_eq(iwx_check_tagged(d, w, pd, IWX_ACCESS_LOCAL_WRITE, 0x10000, 1), access);
	cr_assert_eq(iwx_check_read_source(d, w, pd, 0x10000, 1),
		     IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_ACCESS));
	cr_assert_eq(iwx_check_tagged(desc_of(w ^ 0x5a), w ^ 0x5a, pd,
				      IWX_ACCESS_REMOTE_WRITE, 0x10000, 1), inval, "wrong key");

	d = desc_of(r);
	cr_assert_eq(iwx_check_tagged(d, r, pd, IWX_ACCESS_LOCAL_WRITE, 0, 0x1000), ok);
	cr_assert_eq(iwx_check_tagged(d, r, pd, IWX_ACCESS_REMOTE_WRITE, 0, 1), access);
	cr_assert_eq(iwx_mem_invalidate(m, r, pd), 0);
	cr_assert_eq(iwx_check_tagged(desc_of(r), r, pd, IWX_ACCESS_LOCAL_WRITE, 0, 1), inval,
		     "invalidated");
	cr_assert_eq(iwx_check_tagged(desc_of(r), r, pd, IWX_ACCESS_LOCAL_WRITE, 0, 0), ok,
		     "zero length checks nothing");
}
