// SPDX-License-Identifier: MIT
/*
 * riomap, riounmap, riowrite: regions of memory a peer writes with RDMA Writes at
 * offsets of the mapper's choosing. A map (or an unmap: length 0) is announced in an
 * RS_OP_IOMAP message; the peer keeps up to RS_MAX_IOMAP of them and writes only inside
 * one. A Write is a plain RDMA Write, no message (as rdma-core's): the mapper may never
 * read the stream while it waits on its memory (riostream spins on a byte), and what it
 * does read after the Write was sent finds the Write placed (RFC 5040 §5.5: a Send
 * completes after the Writes before it are placed).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "cm.h"
#include "rsocket.h"

off_t riomap(int fd, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct rs *rs = rs_get_locked(fd);
	struct rs_iomap *m = NULL;
	off_t ret = -1;

	if (!rs)
		return -1;
	/* only writable maps are shared; flags have no meaning for rsockets (rdma-core) */
	(void)flags;
	if (prot != PROT_WRITE || !len || !rs->pd) {
		errno = EINVAL;
		goto out;
	}
	for (int i = 0; i < rs->iomap_size && !m; i++)
		if (!rs->local[i].mr)
			m = &rs->local[i];
	if (!m) {
		errno = ENOMEM;	/* RDMA_IOMAPSIZE of them already */
		goto out;
	}
	m->mr = ibv_reg_mr(rs->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!m->mr)
		goto out;
	m->offset = offset == -1 ? (uint64_t)(uintptr_t)buf : (uint64_t)offset;
	m->addr = (uintptr_t)buf;
	m->len = len;
	m->rkey = m->mr->rkey;
	m->announce = true;
	rs_progress(rs);
	ret = m->offset;
out:
	rs_unlock(rs);
	return ret;
}

int riounmap(int fd, void *buf, size_t len)
{
	struct rs *rs = rs_get_locked(fd);
	int ret = -1;

	if (!rs)
		return -1;
	errno = EINVAL;
	for (int i = 0; i < RS_MAX_IOMAP; i++) {
		struct rs_iomap *m = &rs->local[i];

		if (!m->mr || m->addr != (uintptr_t)buf || m->len != len)
			continue;
		ibv_dereg_mr(m->mr);
		*m = (struct rs_iomap){ .announce = true };	/* the peer forgets it */
		rs_progress(rs);
		ret = 0;
		break;
	}
	rs_unlock(rs);
	return ret;
}

void rs_iomap_announce(struct rs *rs)
{
	for (uint32_t i = 0; i < RS_MAX_IOMAP; i++) {
		struct rs_iomap *m = &rs->local[i];
		struct rs_iomap_msg msg = {
			.index = htonl(i), .rkey = htonl(m->rkey), .offset = htobe64(m->offset),
			.addr = htobe64(m->addr), .len = htobe64(m->len),
		};

		if (!m->announce)
			continue;
		if (rs_post_ctrl(rs, RS_OP_IOMAP, &msg, sizeof(msg)))
			return;
		m->announce = false;
	}
}

int rs_iomap_taken(struct rs *rs, const void *payload, uint32_t len)
{
	struct rs_iomap_msg msg;
	uint64_t off, addr, n;
	uint32_t i;

	if (len != sizeof(msg))
		return -1;
	memcpy(&msg, payload, sizeof(msg));
	i = ntohl(msg.index);
	off = be64toh(msg.offset);
	addr = be64toh(msg.addr);
	n = be64toh(msg.len);
	/* a region that wraps could make riowrite aim below its start */
	if (i >= RS_MAX_IOMAP || off + n < off || addr + n < addr)
		return -1;
	rs->target[i] = (struct rs_iomap){ .offset = off, .addr = addr, .len = n,
					   .rkey = ntohl(msg.rkey) };
	return 0;
}

void rs_iomap_free(struct rs *rs)
{
	for (int i = 0; i < RS_MAX_IOMAP; i++)
		if (rs->local[i].mr)
			ibv_dereg_mr(rs->local[i].mr);
}

static const struct rs_iomap *rs_target(const struct rs *rs, uint64_t off)
{
	for (int i = 0; i < RS_MAX_IOMAP; i++) {
		const struct rs_iomap *t = &rs->target[i];

		if (t->len && off >= t->offset && off - t->offset < t->len)
			return t;
	}
	return NULL;
}

size_t riowrite(int fd, const void *buf, size_t count, off_t offset, int flags)
{
	struct rs *rs = rs_get_locked(fd);
	const uint8_t *src = buf;
	size_t done = 0;

	if (!rs)
		return -1;
	while (done < count) {
		const struct rs_iomap *t = rs_target(rs, (uint64_t)offset + done);
		uint64_t off = (uint64_t)offset + done;
		uint32_t slot;
		size_t k;

		if (!t) {
			errno = EINVAL;	/* outside what the peer mapped */
			break;
		}
		/* a Write takes no credit: only a slot and room in the send queue */
		if (rs->state != RS_OPEN || !rs->nfree || rs->inflight >= RS_SQ_DEPTH) {
			if (rs->state != RS_OPEN && rs->state != RS_CONNECTING) {
				rs_usable(rs);
				break;
			}
			if (rs->nonblock || (flags & MSG_DONTWAIT)) {
				errno = EAGAIN;
				break;
			}
			if (rs_wait(rs, -1))
				break;
			continue;
		}
		k = count - done;
		if (k > RS_SLOT)
			k = RS_SLOT;
		if (k > t->offset + t->len - off)
			k = t->offset + t->len - off;
		memcpy(rs_slot(rs, &slot), src + done, k);
		if (rs_post_slot(rs, slot, k, t->addr + (off - t->offset), t->rkey))
			break;
		done += k;
	}
	rs_unlock(rs);
	return done ? done : (size_t)-1;
}
