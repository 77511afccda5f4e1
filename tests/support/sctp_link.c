// SPDX-License-Identifier: MIT
/* Two AF_CONN endpoints of one usrsctp stack joined in memory, for unit tests. */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sctp_link.h"
#include "util/clock.h"
#include "util/container_of.h"

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Inside usrsctp's output callback: queue only, never deliver (no re-entry). */
static int enqueue(struct sctp_link *link, enum sctp_link_dir dir, const void *pkt, size_t len)
{
	struct sctp_link_queue *q = &link->to[dir];
	struct sctp_link_pkt *p;

	if (!link->up) {
		link->dropped_down++;
		return 0;
	}
	q->sent++;
	if (link->tap)
		link->tap(link->tap_arg, dir, pkt, len);
	if (q->count == SCTP_LINK_QUEUE) {
		/* a full link loses the packet, as a network would: SCTP retransmits */
		q->dropped_full++;
		return 0;
	}
	p = &q->q[(q->head + q->count) % SCTP_LINK_QUEUE];
	p->data = malloc(len);
	if (!p->data) {
		q->dropped_full++;
		return 0;
	}
	memcpy(p->data, pkt, len);
	p->len = len;
	q->count++;
	return 0;
}

static int send_to_a(struct iwx_sctp_path *path, const void *pkt, size_t len)
{
	return enqueue(container_of(path, struct sctp_link, a),
		       SCTP_LINK_TO_A, pkt, len);
}

static int send_to_b(struct iwx_sctp_path *path, const void *pkt, size_t len)
{
	return enqueue(container_of(path, struct sctp_link, b),
		       SCTP_LINK_TO_B, pkt, len);
}

void sctp_link_init(struct sctp_link *link)
{
	memset(link, 0, sizeof(*link));
	link->a.send = send_to_a;
	link->b.send = send_to_b;
	link->up = true;
	iwx_sctp_path_add(&link->a, NULL);
	iwx_sctp_path_add(&link->b, NULL);
}

void sctp_link_set_filter(struct sctp_link *link, enum sctp_link_dir dir, sctp_link_filter_fn fn,
			  void *arg)
{
	link->to[dir].filter = fn;
	link->to[dir].filter_arg = arg;
}

void sctp_link_set_tap(struct sctp_link *link, sctp_link_tap_fn fn, void *arg)
{
	link->tap = fn;
	link->tap_arg = arg;
}

/* Packets to A arrive from b (A's name for its peer), packets to B from a. */
static struct iwx_sctp_path *from_path(struct sctp_link *link, enum sctp_link_dir dir)
{
	return dir == SCTP_LINK_TO_A ? &link->b : &link->a;
}

/* PASS delivers p (and frees it), DROP frees it, HOLD leaves it to the caller: returns the verdict. */
static enum sctp_link_verdict offer(struct sctp_link *link, enum sctp_link_dir dir,
				    struct sctp_link_pkt *p)
{
	struct sctp_link_queue *q = &link->to[dir];
	enum sctp_link_verdict v = SCTP_LINK_PASS;

	if (q->filter)
		v = q->filter(q->filter_arg, dir, p->data, p->len);
	if (v == SCTP_LINK_HOLD)
		return v;
	if (v == SCTP_LINK_PASS) {
		/* may queue new packets (answers) on either direction: they wait for the next pass */
		iwx_sctp_input(from_path(link, dir), p->data, p->len);
		q->delivered++;
	} else {
		q->dropped_filter++;
	}
	free(p->data);
	p->data = NULL;
	return v;
}

/* One pass over one direction: what was held, then what was queued before the pass. */
static bool pass(struct sctp_link *link, enum sctp_link_dir dir)
{
	struct sctp_link_queue *q = &link->to[dir];
	unsigned i, kept = 0, n = q->count;
	bool moved = false;

	for (i = 0; i < q->n_held; i++) {
		struct sctp_link_pkt p = q->held[i];

		if (offer(link, dir, &p) == SCTP_LINK_HOLD)
			q->held[kept++] = p;
		else
			moved = true;
	}
	q->n_held = kept;
	while (n--) {
		struct sctp_link_pkt p = q->q[q->head];

		q->head = (q->head + 1) % SCTP_LINK_QUEUE;
		q->count--;
		if (offer(link, dir, &p) != SCTP_LINK_HOLD) {
			moved = true;
		} else if (q->n_held < SCTP_LINK_QUEUE) {
			q->held[q->n_held++] = p;
		} else {
			free(p.data);
			q->dropped_full++;
			moved = true;
		}
	}
	return moved;
}

/* Deliver until nothing is queued (bounded: two endpoints could in theory ping-pong forever). */
static bool deliver(struct sctp_link *link)
{
	bool moved = false, more = true;

	for (int i = 0; more && i < 1000; i++) {
		more = pass(link, SCTP_LINK_TO_A);
		more |= pass(link, SCTP_LINK_TO_B);
		moved |= more;
		more = more && (link->to[0].count || link->to[1].count);
	}
	return moved;
}

bool sctp_link_pump(struct sctp_link *link, int max_ms)
{
	uint64_t end = iwx_now_ms() + (max_ms > 0 ? max_ms : 0);
	bool moved;

	for (;;) {
		moved = deliver(link);
		iwx_sctp_tick();
		/* the timers may have sent something (a retransmission, a delayed SACK) */
		moved |= deliver(link);
		if (moved || iwx_now_ms() >= end)
			return moved;
		sleep_ms(1);
	}
}

bool sctp_link_settle(struct sctp_link *link, int idle_ms, int max_ms)
{
	uint64_t now = iwx_now_ms(), end = now + max_ms, quiet_since = now;

	while (now < end) {
		if (sctp_link_pump(link, 1))
			quiet_since = iwx_now_ms();
		now = iwx_now_ms();
		if (now - quiet_since >= (uint64_t)idle_ms)
			return true;
	}
	return false;
}

unsigned sctp_link_pending(const struct sctp_link *link)
{
	return link->to[0].count + link->to[0].n_held + link->to[1].count + link->to[1].n_held;
}

static void free_queue(struct sctp_link_queue *q)
{
	while (q->count) {
		free(q->q[q->head].data);
		q->head = (q->head + 1) % SCTP_LINK_QUEUE;
		q->count--;
	}
	while (q->n_held)
		free(q->held[--q->n_held].data);
}

void sctp_link_destroy(struct sctp_link *link)
{
	if (!link->up)
		return;
	/* held packets would keep an association from ending */
	sctp_link_set_filter(link, SCTP_LINK_TO_A, NULL, NULL);
	sctp_link_set_filter(link, SCTP_LINK_TO_B, NULL, NULL);
	/* longer than usrsctp's delayed SACK (200 ms), which a SHUTDOWN may wait for */
	sctp_link_settle(link, 250, 3000);
	link->up = false;
	link->tap = NULL;
	iwx_sctp_path_del(&link->a);
	iwx_sctp_path_del(&link->b);
	free_queue(&link->to[0]);
	free_queue(&link->to[1]);
}

/* ---------------------------------------------------------------- reading packets */

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return ntohs(v);
}

int sctp_pkt_next_chunk(const uint8_t *pkt, size_t len, size_t *off, struct sctp_chunk *c)
{
	size_t at = *off < SCTP_COMMON_HDR_LEN ? SCTP_COMMON_HDR_LEN : *off;

	if (len < SCTP_COMMON_HDR_LEN)
		return -1;
	if (at >= len)
		return 0;
	if (len - at < 4)
		return -1;
	memset(c, 0, sizeof(*c));
	c->type = pkt[at];
	c->flags = pkt[at + 1];
	c->len = get16(pkt + at + 2);
	if (c->len < 4 || c->len > len - at)
		return -1;
	c->value = pkt + at + 4;
	if (c->type == SCTP_CHUNK_DATA) {
		if (c->len < SCTP_DATA_HDR_LEN)
			return -1;
		c->tsn = get32(pkt + at + 4);
		c->sid = get16(pkt + at + 8);
		c->ssn = get16(pkt + at + 10);
		c->ppid = get32(pkt + at + 12);
		c->user = pkt + at + SCTP_DATA_HDR_LEN;
		c->user_len = c->len - SCTP_DATA_HDR_LEN;
	}
	/* RFC 9260 §3.2: chunks are padded to 4 bytes; the last one's padding may be missing */
	at += (c->len + 3u) & ~3u;
	*off = at > len ? len : at;
	return 1;
}
