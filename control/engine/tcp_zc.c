// SPDX-License-Identifier: MIT
/* MSG_ZEROCOPY's notices, and the messages that wait for them (tcp_zc.h). */
#include <errno.h>
#include <time.h>		/* before linux/errqueue.h, which uses struct timespec */
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp_zc.h"

#define REAP_MAX	64	/* notices read per call */

int iwx_tcp_zc_init(struct iwx_tcp_zc *z, int fd, uint32_t min, struct iwx_bufpool *pool)
{
	int one = 1;

	memset(z, 0, sizeof(*z));
	if (min && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
		return -errno;
	z->min = min;
	z->pool = pool;
	return 0;
}

void iwx_tcp_zc_fini(struct iwx_tcp_zc *z)
{
	for (; z->hold_n; z->hold_n--, z->hold_head = (z->hold_head + 1) % IWX_TCP_ZC_HOLDS)
		iwx_bufpool_put(z->pool, z->hold[z->hold_head].buf);
}

void iwx_tcp_zc_batch(struct iwx_tcp_zc *z)
{
	z->batch = 0;
}

void iwx_tcp_zc_payload(struct iwx_tcp_zc *z, const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p;

	z->batch += len;
	if (z->lo == z->hi) {
		z->lo = lo;
		z->hi = lo + len;
	} else {
		z->lo = lo < z->lo ? lo : z->lo;
		z->hi = lo + len > z->hi ? lo + len : z->hi;
	}
}

bool iwx_tcp_zc_use(const struct iwx_tcp_zc *z)
{
	return z->batch >= z->min && z->next - z->done < IWX_TCP_ZC_CALLS;
}

void iwx_tcp_zc_called(struct iwx_tcp_zc *z)
{
	z->next++;
}

bool iwx_tcp_zc_room(const struct iwx_tcp_zc *z)
{
	return z->n < IWX_TCP_ZC_MSGS && z->hold_n < IWX_TCP_ZC_HOLDS;
}

void iwx_tcp_zc_hold(struct iwx_tcp_zc *z, void *buf)
{
	z->hold[(z->hold_head + z->hold_n++) % IWX_TCP_ZC_HOLDS] =
		(struct iwx_tcp_zc_hold){ .buf = buf, .end = z->next };
}

/* Pop the messages and buffers every call of which was let go of: how many messages. */
static uint32_t pop(struct iwx_tcp_zc *z)
{
	uint32_t k = 0;

	while (z->hold_n && (int32_t)(z->hold[z->hold_head].end - z->done) <= 0) {
		iwx_bufpool_put(z->pool, z->hold[z->hold_head].buf);
		z->hold_head = (z->hold_head + 1) % IWX_TCP_ZC_HOLDS;
		z->hold_n--;
	}
	while (z->n && (int32_t)(z->msg[z->head].end - z->done) <= 0) {
		z->head = (z->head + 1) % IWX_TCP_ZC_MSGS;
		z->n--;
		k++;
	}
	return k;
}

uint32_t iwx_tcp_zc_taken(struct iwx_tcp_zc *z)
{
	z->msg[(z->head + z->n++) % IWX_TCP_ZC_MSGS] =
		(struct iwx_tcp_zc_msg){ .end = z->next, .lo = z->lo, .hi = z->hi };
	z->lo = z->hi = 0;
	return pop(z);
}

static bool seen(const struct iwx_tcp_zc *z, uint32_t id)
{
	uint32_t i = id % IWX_TCP_ZC_CALLS;

	return z->seen[i / 64] >> (i % 64) & 1;
}

static void mark(struct iwx_tcp_zc *z, uint32_t id, bool on)
{
	uint32_t i = id % IWX_TCP_ZC_CALLS;

	if (on)
		z->seen[i / 64] |= 1ull << (i % 64);
	else
		z->seen[i / 64] &= ~(1ull << (i % 64));
}

/* The kernel let go of calls lo to hi (inclusive): those not yet let go of, and sent. */
static void let_go(struct iwx_tcp_zc *z, uint32_t lo, uint32_t hi)
{
	if ((int32_t)(lo - z->done) < 0)
		lo = z->done;
	if ((int32_t)(hi - z->next) >= 0)
		hi = z->next - 1;
	for (uint32_t id = lo; (int32_t)(hi - id) >= 0; id++)
		mark(z, id, true);
	while (z->done != z->next && seen(z, z->done))
		mark(z, z->done++, false);
}

int iwx_tcp_zc_reap(struct iwx_tcp_zc *z, int fd)
{
	for (int i = 0; i < REAP_MAX && z->done != z->next; i++) {
		char control[CMSG_SPACE(sizeof(struct sock_extended_err)) + 64];
		struct msghdr mh = { .msg_control = control, .msg_controllen = sizeof(control) };
		struct cmsghdr *cm;

		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return -errno;
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			struct sock_extended_err e;

			if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)))
				continue;
			memcpy(&e, CMSG_DATA(cm), sizeof(e));
			if (e.ee_origin != SO_EE_ORIGIN_ZEROCOPY || e.ee_errno)
				return e.ee_errno ? -(int)e.ee_errno : -EPROTO;
			if (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				z->copied += e.ee_data - e.ee_info + 1;
			let_go(z, e.ee_info, e.ee_data);
		}
	}
	return pop(z);
}

bool iwx_tcp_zc_idle(const struct iwx_tcp_zc *z)
{
	return !z->n && !z->hold_n && z->done == z->next;
}

bool iwx_tcp_zc_refers_to(const struct iwx_tcp_zc *z, uintptr_t base, size_t len)
{
	for (uint32_t i = 0; i < z->n; i++) {
		const struct iwx_tcp_zc_msg *m = &z->msg[(z->head + i) % IWX_TCP_ZC_MSGS];

		if (m->lo < m->hi && m->lo < base + len && m->hi > base)
			return true;
	}
	return false;
}
