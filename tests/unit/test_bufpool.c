// SPDX-License-Identifier: MIT
/* The pools queue pairs borrow their busy-time buffers from: reuse, and a bounded stock. */
#include <criterion/criterion.h>
#include <string.h>

#include "bufpool.h"

#define LEN	100000

Test(bufpool, lends_whole_buffers_and_reuses_what_is_given_back)
{
	struct iwx_bufpool pool = IWX_BUFPOOL_INIT(LEN);
	uint8_t *a = iwx_bufpool_get(&pool), *b = iwx_bufpool_get(&pool);

	cr_assert(a && b && a != b);
	memset(a, 1, LEN);
	memset(b, 2, LEN);
	cr_assert_eq(iwx_bufpool_lent(), 2);
	iwx_bufpool_put(&pool, a);
	iwx_bufpool_put(&pool, NULL);
	cr_assert_eq(iwx_bufpool_lent(), 1);
	cr_assert_eq(iwx_bufpool_get(&pool), a, "the buffer given back is lent again");
	cr_assert_eq(b[LEN - 1], 2, "another's buffer untouched");
	iwx_bufpool_put(&pool, a);
	iwx_bufpool_put(&pool, b);
	cr_assert_eq(iwx_bufpool_lent(), 0);
	cr_assert_eq(pool.nfree, 2);
}

Test(bufpool, keeps_no_more_than_its_stock)
{
	enum { N = IWX_BUFPOOL_KEEP + 3 };
	struct iwx_bufpool pool = IWX_BUFPOOL_INIT(LEN);
	void *buf[N];

	for (int i = 0; i < N; i++)
		cr_assert_not_null(buf[i] = iwx_bufpool_get(&pool));
	for (int i = 0; i < N; i++)
		iwx_bufpool_put(&pool, buf[i]);
	cr_assert_eq(iwx_bufpool_lent(), 0);
	cr_assert_eq(pool.nfree, IWX_BUFPOOL_KEEP, "the rest went back to the system");
	/* the stock is lent before anything new is mapped: the last kept comes first */
	cr_assert_eq(iwx_bufpool_get(&pool), buf[IWX_BUFPOOL_KEEP - 1]);
	iwx_bufpool_put(&pool, buf[IWX_BUFPOOL_KEEP - 1]);
}
