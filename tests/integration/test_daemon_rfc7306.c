// SPDX-License-Identifier: MIT
/*
 * RFC 7306 through the daemons (docs/rfc7306.md): two clients' atomics on one word of a
 * third sum exactly, each seeing a value no other saw, while that third adds to the word
 * with atomics of its own; a Write with Immediate completes a
 * receive with its 4 bytes after its data landed; and a peer whose iwxd does not agree
 * to RFC 7306 leaves both sides on RFC 5040, its operations refused at once.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwxd_pair.h"
#include "stall.h"
#include "testutil.h"

#define ARGS		"--settle-ms 0 --arena-max 512M"
#define ATOMICS		240	/* each client's */
#define BATCH		16

static struct iwxd_pair pair;
static struct endpoint a, b, c;	/* a and c on daemon 0, b on daemon 1 */

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, ARGS, &a, &b, 0), 0);
	cr_assert_eq(endpoint_open(&c, &pair, 0, 0), 0);
}

static void down(void)
{
	endpoint_close(&c);
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_rfc7306, .init = up, .fini = down, .timeout = HANG_S);

static struct iwx_wc next_wc(struct endpoint *e)
{
	struct iwx_wc wc;

	cr_assert_eq(endpoint_wc(e, &wc), 0, "a completion");
	return wc;
}

/* A second queue pair of b's client, in b's PD, connected from e. */
static struct endpoint second_of_b(struct endpoint *e)
{
	struct endpoint d = b;
	struct iwx_qp_init_attr attr = { 0 };

	d.cq = iwx_create_cq(b.dev, 1024);
	cr_assert_not_null(d.cq);
	attr.send_cq = attr.recv_cq = d.cq;
	d.qp = iwx_create_qp(b.pd, &attr);
	cr_assert_not_null(d.qp);
	cr_assert_eq(endpoint_connect(e, &d, false, NULL), 0);
	return d;	/* freed with b's device */
}

static void post_fetch_add(struct endpoint *e, uint64_t id, const struct buf *res, const struct buf *word,
			   uint64_t add)
{
	struct iwx_send_wr wr = {
		.wr_id = id, .opcode = IWX_WR_FETCH_ADD, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.atomic = { .result = sge_of(res, id * 8, 8), .compare_add = add },
		.remote_addr = (uintptr_t)word->p, .rkey = word->mr->rkey,
	};

	cr_assert_eq(iwx_post_send(e->qp, &wr), 0, "post %lu", (unsigned long)id);
}

/*
 * The Responder's application adding to the word itself, until told to stop (bounded):
 * where iwxd's atomics were a plain read, add and write, those that ran beside these on
 * another CPU would lose some of them (with the soak's CPUs free, 65 k of 19.7 M were lost).
 */
struct local_adds {
	uint64_t	*word;
	bool		stop;
	uint64_t	done;
};

#define LOCAL_ADD	(1ull << 32)	/* the remote adds stay in the low half */

static void *add_locally(void *arg)
{
	struct local_adds *l = arg;

	while (!__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE) && l->done < 100000000) {
		__atomic_fetch_add(l->word, LOCAL_ADD, __ATOMIC_SEQ_CST);
		l->done++;
	}
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t u = *(const uint64_t *)x, v = *(const uint64_t *)y;

	return u < v ? -1 : u > v;
}

Test(daemon_rfc7306, two_clients_atomics_on_one_word_sum_exactly)
{
	struct buf word = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_ATOMIC, false);
	struct buf ra = buf_new(&a, NULL, 8 * ATOMICS, IWX_ACCESS_LOCAL_WRITE, false);
	struct buf rc = buf_new(&c, NULL, 8 * ATOMICS, IWX_ACCESS_LOCAL_WRITE, false);
	struct local_adds local = { .word = (uint64_t *)word.p };
	static uint64_t seen[2 * ATOMICS];
	uint64_t final;
	pthread_t t;

	cr_assert(iwx_device_rfc7306(a.dev) && iwx_device_rfc7306(b.dev));
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	second_of_b(&c);
	cr_assert_eq(pthread_create(&t, NULL, add_locally, &local), 0);
	for (int i = 0; i < ATOMICS; i += BATCH) {	/* both clients' batches in flight at once */
		for (int k = i; k < i + BATCH; k++) {
			post_fetch_add(&a, k, &ra, &word, 1);
			post_fetch_add(&c, k, &rc, &word, 1000);
		}
		for (int k = i; k < i + BATCH; k++) {
			struct iwx_wc wa = next_wc(&a), wc = next_wc(&c);

			cr_assert(wa.status == IWX_WC_SUCCESS && wc.status == IWX_WC_SUCCESS, "%s, %s",
				  iwx_wc_status_name(wa.status), iwx_wc_status_name(wc.status));
			cr_assert(wa.opcode == IWX_WC_FETCH_ADD && wa.wr_id == (uint64_t)k && wc.wr_id == (uint64_t)k);
		}
	}
	__atomic_store_n(&local.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	memcpy(&final, word.p, 8);
	cr_assert_eq(final, ATOMICS * 1001ull + local.done * LOCAL_ADD,
		     "every add counted once: %#lx, %lu local", (unsigned long)final,
		     (unsigned long)local.done);
	/* each remote add saw a value no other saw, each client's in increasing order */
	memcpy(seen, ra.p, 8 * ATOMICS);
	memcpy(seen + ATOMICS, rc.p, 8 * ATOMICS);
	for (int i = 0; i < 2 * ATOMICS; i++)
		seen[i] &= LOCAL_ADD - 1;
	for (int i = 1; i < ATOMICS; i++)
		cr_assert(seen[i] > seen[i - 1] && seen[ATOMICS + i] > seen[ATOMICS + i - 1]);
	qsort(seen, 2 * ATOMICS, sizeof(seen[0]), cmp_u64);
	for (int i = 1; i < 2 * ATOMICS; i++)
		cr_assert_neq(seen[i], seen[i - 1], "two atomics saw %lu", (unsigned long)seen[i]);
	cr_assert_eq(seen[0], 0);
}

Test(daemon_rfc7306, write_with_immediate_completes_a_receive_after_its_data)
{
	const size_t len = 256 << 10;
	struct buf src = buf_new(&a, NULL, len, 0, false);
	struct buf dst = buf_new(&b, NULL, len, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE, false);
	struct iwx_recv_wr r = { .wr_id = 5 };	/* no buffer: Immediate Data writes none */
	struct iwx_send_wr w = {
		.wr_id = 6, .opcode = IWX_WR_WRITE_IMM_SE, .flags = IWX_WR_SIGNALED, .num_sge = 1,
		.sge = { sge_of(&src, 0, len) }, .remote_addr = (uintptr_t)dst.p, .rkey = dst.mr->rkey,
		.imm_data = 0x12345678,
	};
	struct iwx_wc wc;

	fill_pattern(src.p, len, 4);
	cr_assert_eq(iwx_post_recv(b.qp, &r), 0);
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	wc = next_wc(&b);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "%s", iwx_wc_status_name(wc.status));
	cr_assert_eq(wc.opcode, IWX_WC_RECV_IMM);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_eq(wc.imm_data, 0x12345678);
	cr_assert(wc.solicited);
	cr_assert_eq(memcmp(dst.p, src.p, len), 0, "the Write landed before its completion");
	wc = next_wc(&a);
	cr_assert(wc.wr_id == 6 && wc.opcode == IWX_WC_RDMA_WRITE && wc.status == IWX_WC_SUCCESS);
}

/* b's iwxd does not agree: the connection is RFC 5040's, RFC 7306's requests fail at once. */
Test(daemon_rfc7306, a_peer_that_does_not_agree)
{
	struct buf word, tgt, res = buf_new(&a, NULL, 8, IWX_ACCESS_LOCAL_WRITE, false);
	struct iwx_send_wr w = { .wr_id = 1, .opcode = IWX_WR_FETCH_ADD, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .atomic = { .result = sge_of(&res, 0, 8), .compare_add = 1 } };
	struct iwx_wc wc;

	iwxd_pair_kill(&pair, 1);
	endpoint_close(&b);
	cr_assert_eq(iwxd_pair_respawn(&pair, 1, ARGS " --no-rfc7306"), 0);
	cr_assert_eq(endpoint_open(&b, &pair, 1, 0), 0);
	cr_assert(iwx_device_rfc7306(a.dev));
	cr_assert_not(iwx_device_rfc7306(b.dev));
	word = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_ATOMIC, false);
	tgt = buf_new(&b, NULL, 8, IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE, false);
	w.remote_addr = (uintptr_t)word.p;
	w.rkey = word.mr->rkey;
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
	cr_assert_eq(iwx_post_send(a.qp, &w), -EOPNOTSUPP);
	w = (struct iwx_send_wr){ .wr_id = 2, .opcode = IWX_WR_WRITE_IMM, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1, .sge = { sge_of(&res, 0, 8) },
				  .remote_addr = (uintptr_t)tgt.p, .rkey = tgt.mr->rkey };
	cr_assert_eq(iwx_post_send(a.qp, &w), -EOPNOTSUPP);
	w.opcode = IWX_WR_WRITE;	/* RFC 5040 goes on as ever */
	memcpy(res.p, "rfc 5040", 8);
	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	wc = next_wc(&a);
	cr_assert(wc.wr_id == 2 && wc.status == IWX_WC_SUCCESS, "%s", iwx_wc_status_name(wc.status));
	cr_assert_eq(memcmp(tgt.p, "rfc 5040", 8), 0);
	cr_assert_eq(memcmp(word.p, "\0\0\0\0\0\0\0\0", 8), 0, "no atomic reached it");
}
