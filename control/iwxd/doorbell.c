// SPDX-License-Identifier: MIT
/*
 * A client's doorbells (ipc/ipc.h): which of its queue pairs it posted to, and which of
 * its completion queues it made room in. iwxd takes them every turn and services only
 * what rang, so that a turn costs what is active, not what is held.
 *
 * Only active clients are looked at: one whose bells stayed quiet for IDLE_MS is asked to
 * write its eventfd when it rings (need_wakeup), as all are while iwxd sleeps, and is
 * looked at again once it has. A turn costs the clients that ring, not all that are
 * connected; a client that wakes from quiet pays one write.
 *
 * The page is the client's to write: a bit tells iwxd only where to look, and a bit of no
 * object, or of an object since gone, costs one look. A client whose queue pairs a turn
 * could not all service (vqp.c gives each its share) is not looked at until they have
 * been: however often it rings, a turn costs it its share. A client whose bells named no
 * new work (nothing posted, no room asked of the CQ it rang) EMPTY_TURNS turns
 * in a row is not looked at for a while (MUTE_MS, doubled while it goes on, up to
 * IDLE_MS): a client that rings for nothing cannot keep iwxd from sleeping, and one that
 * posts as it rings is never muted.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon.h"
#include "shared.h"
#include "util/clock.h"

#define IDLE_MS		100	/* a client whose bells were quiet this long must write to wake us */
#define EMPTY_TURNS	64	/* turns of bells that named no new work before a client is muted */
#define MUTE_MS		1	/* ... for this long at first */

struct bell {
	struct vqp	*qp;		/* what the bit stands for: a queue pair, */
	struct vcq	*cq;		/* ... or a completion queue, or neither (free) */
	uint32_t	next_free;	/* free: the next free bit + 1; 0 ends the list */
};

int doorbell_open(struct iwxd *d, struct client *c, int *memfd)
{
	int err = shared_create_given(d, c, &c->bells_mem, IWX_IPC_BELLS_SIZE, memfd);

	if (err)
		return err;
	c->bells = c->bells_mem.base;
	doorbell_wake(d, c);
	return 0;
}

static bool muted(const struct client *c, uint64_t now)
{
	return now < c->bell_muted_ms;
}

void doorbell_wake(struct iwxd *d, struct client *c)
{
	uint64_t now = iwx_now_ms();

	c->bell_quiet_ms = now + IDLE_MS;
	if (iwx_linked(&c->bell_link) || !c->bells)
		return;
	iwx_link_add_tail(&d->bell_active, &c->bell_link);
	/* muted: looked at when that ends, and no write of its wakes us meanwhile */
	__atomic_store_n(&c->bells->need_wakeup, d->asleep && !muted(c, now), __ATOMIC_SEQ_CST);
}

void doorbell_close(struct iwxd *d, struct client *c)
{
	iwx_link_del(&c->bell_link);
	shared_destroy(d, c->user, &c->bells_mem);
	c->bells = NULL;
	free(c->bell);
	c->bell = NULL;
}

int64_t doorbell_bind(struct client *c, struct vqp *q, struct vcq *cq)
{
	struct bell *b;
	uint32_t i;

	if (c->bell_free) {
		i = c->bell_free - 1;
	} else {
		if (c->bell_n == IWX_IPC_BELLS)
			return -ENOSPC;
		if (c->bell_n == c->bell_cap) {
			uint32_t cap = c->bell_cap ? 2 * c->bell_cap : 64;
			struct bell *more = reallocarray(c->bell, cap, sizeof(*more));

			if (!more)
				return -ENOMEM;
			c->bell = more;
			c->bell_cap = cap;
		}
		i = c->bell_n++;
		c->bell[i].next_free = 0;
	}
	b = &c->bell[i];
	c->bell_free = b->next_free;
	*b = (struct bell){ .qp = q, .cq = cq };
	return i;
}

void doorbell_unbind(struct client *c, uint32_t bell)
{
	c->bell[bell] = (struct bell){ .next_free = c->bell_free };
	c->bell_free = bell + 1;
}

/*
 * One word of c's bits, taken: ready what they name. A client rings a queue pair only
 * after it posted, and a CQ only once iwxd asked it for room: were any such?
 */
static bool take_word(struct iwxd *d, struct client *c, uint32_t w)
{
	uint64_t bits = __atomic_exchange_n(&c->bells->bits[w], 0, __ATOMIC_SEQ_CST);
	bool work = false;

	while (bits) {
		uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);

		bits &= bits - 1;
		if (i >= c->bell_n)
			break;	/* the client's own noise: nothing of its is there */
		if (c->bell[i].qp && vqp_posted_since(c->bell[i].qp)) {
			work = true;
			c->bell[i].qp->posted = true;
			vqp_ready(d, c->bell[i].qp);
		} else if (c->bell[i].cq) {
			/* asked: the work may be done already (vqp_service saw the room), not the bell's fault */
			work |= c->bell[i].cq->room_asked;
			c->bell[i].cq->room_asked = false;
			vqp_room(d, c);
		}
	}
	return work;
}

/* The summary words c's bells reach: those beyond name no bell of it, and are not looked at. */
static uint32_t sum_words(const struct client *c)
{
	return (c->bell_n + 4095) / 4096;
}

/* Did c ring since the last look? */
static bool rang(const struct client *c)
{
	for (uint32_t s = 0; s < sum_words(c); s++)
		if (__atomic_load_n(&c->bells->sum[s], __ATOMIC_SEQ_CST))
			return true;
	return false;
}

/*
 * What c rang since the last look, taken; the words are looked at only where the summary
 * says. Bells of no new work EMPTY_TURNS times in a row mute it (now: the turn's time).
 */
static bool take(struct iwxd *d, struct client *c, uint64_t now)
{
	bool work = false;

	for (uint32_t s = 0; s < sum_words(c); s++) {
		uint64_t sum;

		if (!__atomic_load_n(&c->bells->sum[s], __ATOMIC_RELAXED))
			continue;
		sum = __atomic_exchange_n(&c->bells->sum[s], 0, __ATOMIC_SEQ_CST);
		while (sum) {
			work |= take_word(d, c, s * 64 + (uint32_t)__builtin_ctzll(sum));
			sum &= sum - 1;
		}
	}
	if (work) {
		c->bell_empty = 0;
		c->bell_mute_ms = 0;
		/* a spin of either would take the CPU the other needs (serve.c: spin) */
		if (d->cpu && __atomic_load_n(&c->bells->client_cpu, __ATOMIC_RELAXED) == d->cpu)
			d->posted_here = true;
		if (__atomic_load_n(&c->bells->daemon_cpu, __ATOMIC_RELAXED) != d->cpu)
			__atomic_store_n(&c->bells->daemon_cpu, d->cpu, __ATOMIC_RELAXED);
		return true;
	}
	if (++c->bell_empty < EMPTY_TURNS)
		return false;
	c->bell_empty = 0;
	c->bell_mute_ms = c->bell_mute_ms ? c->bell_mute_ms * 2 : MUTE_MS;
	if (c->bell_mute_ms > IDLE_MS)
		c->bell_mute_ms = IDLE_MS;
	c->bell_muted_ms = now + c->bell_mute_ms;
	d->st.bells_muted++;
	__atomic_store_n(&c->bells->need_wakeup, 0, __ATOMIC_SEQ_CST);
	return false;
}

bool doorbell_take(struct iwxd *d)
{
	uint64_t now = iwx_now_ms();
	int cpu = sched_getcpu();
	bool work = false;

	d->cpu = cpu < 0 ? 0 : (uint32_t)cpu + 1;
	d->posted_here = false;

	IWX_LINK_EACH(struct client, c, &d->bell_active, bell_link) {
		if (muted(c, now))
			continue;
		if (!iwx_link_empty(&c->ready)) {
			/*
			 * what its last turns left comes first: what it rang meanwhile stays in
			 * its page, taken once that is done, so that a client that rings without
			 * end costs a turn its share and not every bell's look as well
			 */
			c->bell_quiet_ms = now + IDLE_MS;
			continue;
		}
		if (rang(c)) {
			c->bell_quiet_ms = now + IDLE_MS;
			work |= take(d, c, now);
			continue;
		}
		if (now < c->bell_quiet_ms)
			continue;
		/* quiet: from now on it writes its eventfd to ring; a bell before that is seen */
		__atomic_store_n(&c->bells->need_wakeup, 1, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (rang(c)) {
			__atomic_store_n(&c->bells->need_wakeup, d->asleep, __ATOMIC_SEQ_CST);
			c->bell_quiet_ms = now + IDLE_MS;
			work |= take(d, c, now);
		} else {
			iwx_link_del(&c->bell_link);
		}
	}
	/* pairs with client_ring's: the rings are read after the bits are taken */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return work;
}

bool doorbell_sleep(struct iwxd *d, bool on)
{
	uint64_t now = iwx_now_ms();
	bool any = false;

	d->asleep = on;
	IWX_LINK_EACH(struct client, c, &d->bell_active, bell_link) {
		if (!muted(c, now))
			__atomic_store_n(&c->bells->need_wakeup, on, __ATOMIC_SEQ_CST);
		else if (on)	/* looked at when that ends: no write of its wakes us before */
			loop_due(&d->loop, c->bell_muted_ms);
	}
	if (!on)
		return false;
	/* pairs with client_ring: a bell rung before need_wakeup was seen is seen here */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	IWX_LINK_EACH(struct client, c, &d->bell_active, bell_link)
		if (!muted(c, now) && (any = rang(c)))
			break;
	return !any;
}
