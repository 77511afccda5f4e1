// SPDX-License-Identifier: MIT
/*
 * Shared receive queues through libiwx and two daemons: two queue pairs of daemon b on
 * one SRQ, each connected to its own queue pair on daemon a. Each Send takes the SRQ's
 * next receive, whichever queue pair it arrives on; the limit event fires once; a Send
 * that finds the SRQ empty terminates its own stream alone; misuse gets its errno, and a
 * client that writes its ring as it likes harms only itself.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "proto/term.h"

#include "client.h"	/* the SRQ's ring, to write it as a hostile client would */
#include "iwxd_pair.h"
#include "stall.h"
#include "testutil.h"

#define DAEMON_ARGS	"--settle-ms 0"
#define BUF_LEN		(64u << 10)
#define SLOT		64		/* bytes of each receive */
#define EVENT_MS	STALL_MS	/* a wait for what must come: bounded against a hang */
#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | \
			 IWX_ACCESS_REMOTE_READ)

static struct iwxd_pair pair;
static struct endpoint a1, a2;		/* on daemon a, each with its QP */
static struct endpoint b1, b2;		/* on daemon b: one device, both QPs on srq */
static struct iwx_srq *srq;
static struct buf abuf, a2buf, bbuf;

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, DAEMON_ARGS, &a1, &b1, 0), 0, "two daemons");
	cr_assert_eq(endpoint_open(&a2, &pair, 0, 0), 0);
	abuf = buf_new(&a1, NULL, BUF_LEN, ALL_ACCESS, false);
	a2buf = buf_new(&a2, NULL, BUF_LEN, ALL_ACCESS, false);
	bbuf = buf_new(&b1, NULL, BUF_LEN, ALL_ACCESS, false);
}

static void down(void)
{
	if (a2.dev)
		endpoint_close(&a2);
	memset(&b2, 0, sizeof(b2));	/* b1's device */
	srq = NULL;
	iwxd_pair_down(&pair, &a1, &b1);
}

TestSuite(daemon_srq, .init = up, .fini = down, .timeout = HANG_S);

/* b1 and b2: queue pairs on an SRQ of depth and limit, connected to a1 and a2. */
static void connect_on_srq(uint32_t depth, uint32_t limit)
{
	struct iwx_qp_init_attr qa = { .send_cq = b1.cq, .recv_cq = b1.cq };

	srq = iwx_create_srq(b1.pd, &(struct iwx_srq_init_attr){ .depth = depth, .limit = limit });
	cr_assert_not_null(srq, "an SRQ: %s", iwx_strerror(errno));
	qa.srq = srq;
	cr_assert_eq(iwx_destroy_qp(b1.qp), 0);
	b1.qp = iwx_create_qp(b1.pd, &qa);
	cr_assert_not_null(b1.qp, "a QP on the SRQ: %s", iwx_strerror(errno));
	b2 = b1;
	b2.qp = iwx_create_qp(b1.pd, &qa);
	cr_assert_not_null(b2.qp, "another: %s", iwx_strerror(errno));
	cr_assert_eq(endpoint_connect(&a1, &b1, false, NULL), 0, "a1 to b1");
	cr_assert_eq(endpoint_connect(&a2, &b2, false, NULL), 0, "a2 to b2");
}

static void post_srq(uint64_t wr_id, uint32_t slot)
{
	struct iwx_recv_wr wr = { .wr_id = wr_id, .num_sge = 1,
				  .sge = { sge_of(&bbuf, slot * SLOT, SLOT) } };
	int err = iwx_post_srq_recv(srq, &wr);

	cr_assert_eq(err, 0, "iwx_post_srq_recv of wr %lu: %s", wr_id, iwx_strerror(err));
}

/* From e (a1 or a2): a Send of text, from its own buffer. */
static void send_text(struct endpoint *e, uint64_t wr_id, const char *text)
{
	const struct buf *m = e == &a2 ? &a2buf : &abuf;
	struct iwx_send_wr wr = { .wr_id = wr_id, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				  .num_sge = 1 };
	struct iwx_wc wc;
	int err;

	memcpy(m->p, text, strlen(text));
	wr.sge[0] = sge_of(m, 0, (uint32_t)strlen(text));
	err = iwx_post_send(e->qp, &wr);
	cr_assert_eq(err, 0, "send %lu: %s", wr_id, iwx_strerror(err));
	cr_assert_eq(endpoint_wc(e, &wc), 0, "send %lu completes", wr_id);
	cr_assert_eq(wc.wr_id, wr_id);
}

/* b's next completion: a receive of text into slot, by the queue pair of e. */
static void expect_received(const struct endpoint *e, uint64_t wr_id, uint32_t slot,
			    const char *text)
{
	struct iwx_wc wc;
	int err = endpoint_wc(&b1, &wc);

	cr_assert_eq(err, 0, "receive %lu: %s", wr_id, iwx_strerror(err));
	cr_assert_eq(wc.opcode, IWX_WC_RECV);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS, "receive %lu: %s", wr_id,
		     iwx_wc_status_name(wc.status));
	cr_assert_eq(wc.wr_id, wr_id, "receive of wr %lu, want %lu", wc.wr_id, wr_id);
	cr_assert_eq(wc.qp_num, iwx_qp_num(e->qp), "on qp %u, want %u", wc.qp_num,
		     iwx_qp_num(e->qp));
	cr_assert_eq(wc.byte_len, strlen(text));
	cr_assert_eq(memcmp(bbuf.p + slot * SLOT, text, strlen(text)), 0, "the bytes of %s", text);
}

static struct iwx_async_event expect_async(enum iwx_async_type type)
{
	struct iwx_async_event ev;
	int err = iwx_get_async_event(b1.dev, &ev, EVENT_MS);

	cr_assert_eq(err, 0, "async event %d: %s", type, iwx_strerror(err));
	cr_assert_eq(ev.type, type, "async event %d, want %d", ev.type, type);
	return ev;
}

Test(daemon_srq, sends_on_two_queue_pairs_take_its_receives_in_turn)
{
	struct iwx_srq_attr attr;
	struct iwx_async_event ev;

	connect_on_srq(4, 2);
	for (uint32_t i = 0; i < 4; i++)
		post_srq(100 + i, i);
	send_text(&a1, 1, "one");
	expect_received(&b1, 100, 0, "one");
	send_text(&a2, 2, "two");
	expect_received(&b2, 101, 1, "two");
	cr_assert_eq(iwx_get_async_event(b1.dev, &ev, 0), -EAGAIN, "two left: not below 2");
	send_text(&a1, 3, "three");
	expect_received(&b1, 102, 2, "three");
	/* one left, below the limit of 2: the event, once, and the SRQ disarmed */
	ev = expect_async(IWX_ASYNC_SRQ_LIMIT);
	cr_assert_eq(ev.srq, srq);
	cr_assert_eq(iwx_query_srq(srq, &attr), 0);
	cr_assert(attr.depth == 4 && attr.limit == 0, "depth %u limit %u", attr.depth, attr.limit);
	/* three retired by their completions: room for three more, not four */
	for (uint32_t i = 0; i < 3; i++)
		post_srq(200 + i, 4 + i);
	cr_assert_eq(iwx_post_srq_recv(srq, &(struct iwx_recv_wr){ .wr_id = 9, .num_sge = 0 }),
		     -ENOBUFS);
	send_text(&a2, 4, "four");
	expect_received(&b2, 103, 3, "four");	/* the oldest posted first */
	send_text(&a2, 5, "five");
	expect_received(&b2, 200, 4, "five");
	cr_assert_eq(iwx_get_async_event(b1.dev, &ev, 0), -EAGAIN, "disarmed: no second event");
}

Test(daemon_srq, an_empty_srq_ends_only_the_stream_that_found_it_empty)
{
	struct iwx_async_event ev;
	struct iwx_event cev;

	connect_on_srq(8, 0);
	post_srq(100, 0);
	send_text(&a1, 1, "one");
	expect_received(&b1, 100, 0, "one");
	send_text(&a1, 2, "none left");	/* handed to TCP whole: it completes */
	ev = expect_async(IWX_ASYNC_QP_FATAL);
	cr_assert_eq(ev.qp, b1.qp);
	cr_assert(ev.term.terminated && ev.term.local, "b1 sent the Terminate");
	cr_assert(ev.term.layer == IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF).layer &&
		  ev.term.ecode == IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF).ecode, "%s", ev.term.reason);
	ev = expect_async(IWX_ASYNC_QP_LAST_WQE);
	cr_assert_eq(ev.qp, b1.qp, "b1 takes no more from the SRQ");
	cr_assert_eq(endpoint_event(&a1, &cev, EVENT_MS), 0);
	cr_assert(cev.type == IWX_EVENT_DISCONNECTED && cev.term.terminated && !cev.term.local,
		  "a1 received the Terminate");
	/* b2's stream goes on, on the same SRQ */
	post_srq(101, 1);
	send_text(&a2, 3, "two");
	expect_received(&b2, 101, 1, "two");
	cr_assert_eq(iwx_qp_state(b2.qp), IWX_QPS_RTS);
}

Test(daemon_srq, misuse_gets_its_errno)
{
	struct iwx_qp_init_attr qa = { .send_cq = b1.cq, .recv_cq = b1.cq };
	struct iwx_recv_wr wr = { .wr_id = 1, .num_sge = 1, .sge = { sge_of(&bbuf, 0, SLOT) } };
	struct iwx_pd *other = iwx_alloc_pd(b1.dev);

	connect_on_srq(2, 0);
	cr_assert_eq(iwx_post_recv(b1.qp, &wr), -EINVAL, "a QP on an SRQ has no receives of its own");
	cr_assert_eq(iwx_destroy_srq(srq), -EBUSY, "queue pairs are on it");
	cr_assert_eq(iwx_arm_srq(srq, 3), -EINVAL, "a limit above the depth");
	wr.num_sge = IWX_MAX_SGE + 1;
	cr_assert_eq(iwx_post_srq_recv(srq, &wr), -EINVAL, "too many sges");
	cr_assert_not_null(other);
	qa.srq = srq;
	cr_assert_null(iwx_create_qp(other, &qa), "an SRQ of another PD");
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(iwx_create_srq(b1.pd, &(struct iwx_srq_init_attr){ .depth = 1u << 20 }));
	cr_assert_eq(errno, EINVAL, "deeper than max_qp_depth");
	/* once its queue pairs are gone, it goes */
	cr_assert_eq(iwx_destroy_qp(b1.qp), 0);
	cr_assert_eq(iwx_destroy_qp(b2.qp), 0);
	b1.qp = b2.qp = NULL;
	cr_assert_eq(iwx_destroy_srq(srq), 0);
}

Test(daemon_srq, a_ring_written_wrong_harms_only_its_client)
{
	struct iwx_recv_wr *e;
	struct iwx_async_event ev;
	struct iwx_pd *pd;

	connect_on_srq(8, 0);
	/* malformed receives, as libiwx never posts them: dropped, said once, the next one serves */
	for (int i = 0; i < 2; i++) {
		e = iwx_ring_entry(&srq->ring, 0);
		*e = (struct iwx_recv_wr){ .wr_id = 7, .num_sge = IWX_MAX_SGE + 1 };
		iwx_ring_produce(&srq->ring, 1);
	}
	post_srq(100, 0);
	send_text(&a1, 1, "one");
	expect_received(&b1, 100, 0, "one");
	cr_assert_eq(iwxd_pair_log_count(&pair, 1, "malformed receive dropped"), 1);
	/* a producer index beyond the ring: nothing is taken from it, and iwxd says why */
	__atomic_store_n(&srq->sh->ring.prod, srq->ring.mine + (1u << 20), __ATOMIC_RELEASE);
	send_text(&a1, 2, "two");
	ev = expect_async(IWX_ASYNC_QP_FATAL);
	cr_assert(ev.qp == b1.qp && ev.term.ecode == IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF).ecode,
		  "%s", ev.term.reason);
	cr_assert(iwxd_pair_logged(&pair, 1, "ring indices out of range"));
	/* and iwxd serves on */
	pd = iwx_alloc_pd(b1.dev);
	cr_assert_not_null(pd, "%s", iwx_strerror(errno));
	cr_assert_eq(iwx_dealloc_pd(pd), 0);
}
