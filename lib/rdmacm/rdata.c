// SPDX-License-Identifier: MIT
/*
 * rsockets' stream: messages posted and taken (the wire in rsocket.h), credits, and the
 * calls that send and receive. A message that breaks the wire fails the socket with
 * EPROTO before any of it is used.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "cm.h"
#include "rsocket.h"

enum rs_wr { RS_WR_RECV = 1, RS_WR_SLOT, RS_WR_CTRL };

#define WR_ID(kind, n)	((uint64_t)(kind) << 32 | (n))

static int rs_post_recv(struct rs *rs, uint32_t i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(rs->mem + (size_t)i * RS_SLOT),
		.length = RS_SLOT,
		.lkey = rs->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_ID(RS_WR_RECV, i), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int err = ibv_post_recv(rs->id->qp, &wr, &bad);

	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int rs_post_recvs(struct rs *rs)
{
	for (uint32_t i = 0; i < RS_RQ; i++)
		if (rs_post_recv(rs, i))
			return -1;
	return 0;
}

/* An emptied receive goes back, and its credit to the peer with our next message. */
static void rs_repost(struct rs *rs, uint32_t i)
{
	if (rs_post_recv(rs, i))
		rs_fail(rs, errno);
	else
		rs->to_return++;
}

bool rs_can_post(const struct rs *rs, uint32_t n)
{
	return rs->inflight + n <= RS_SQ_DEPTH &&
	       (rs->credits >= 2 || (rs->credits == 1 && rs->to_return));
}

static void rs_hdr(struct rs *rs, struct rs_hdr *h, enum rs_op op, uint32_t len)
{
	uint32_t give = rs->to_return;

	*h = (struct rs_hdr){ .op = op, .credits = htons(give), .len = htonl(len) };
	rs->to_return -= give;
	rs->credits--;
}

static int rs_post(struct rs *rs, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int err = ibv_post_send(rs->id->qp, wr, &bad);

	if (err) {
		rs_fail(rs, err);
		errno = err;
		return -1;
	}
	rs->inflight++;
	return 0;
}

int rs_post_ctrl(struct rs *rs, enum rs_op op, const void *payload, uint32_t len)
{
	uint8_t msg[RS_INLINE];
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = sizeof(struct rs_hdr) + len };
	struct ibv_send_wr wr = {
		.wr_id = WR_ID(RS_WR_CTRL, 0), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE,
	};

	if (!rs_can_post(rs, 1) || sge.length > sizeof(msg)) {
		errno = EAGAIN;
		return -1;
	}
	rs_hdr(rs, (struct rs_hdr *)msg, op, len);
	memcpy(msg + sizeof(struct rs_hdr), payload, len);
	return rs_post(rs, &wr);
}

uint8_t *rs_slot(struct rs *rs, uint32_t *slot)
{
	*slot = rs->free_slot[--rs->nfree];
	return rs->mem + (size_t)(RS_RQ + *slot) * RS_SLOT;
}

int rs_post_slot(struct rs *rs, uint32_t slot, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	uint8_t *p = rs->mem + (size_t)(RS_RQ + slot) * RS_SLOT;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = len, .lkey = rs->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = WR_ID(RS_WR_SLOT, slot), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
	};

	if (rkey) {
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	} else {
		rs_hdr(rs, (struct rs_hdr *)p, RS_OP_DATA, len);
		sge.length += sizeof(struct rs_hdr);
	}
	if (rs_post(rs, &wr)) {
		rs->free_slot[rs->nfree++] = slot;
		return -1;
	}
	return 0;
}

/* A message the peer sent into receive i: 0, or -1 when it broke the wire. */
static int rs_take_msg(struct rs *rs, uint32_t i, uint32_t byte_len)
{
	const struct rs_hdr *h = (const void *)(rs->mem + (size_t)i * RS_SLOT);
	uint32_t len, credits;

	if (byte_len < sizeof(*h))
		return -1;
	len = ntohl(h->len);
	credits = ntohs(h->credits);
	/* credits beyond the receives we have: the peer counts what we never gave */
	if (len != byte_len - sizeof(*h) || h->zero || rs->credits + credits > RS_RQ)
		return -1;
	rs->credits += credits;
	switch (h->op) {
	case RS_OP_DATA:
		if (!len || rs->fin_rcvd)
			return -1;
		rs->ready[(rs->ready_head + rs->nready++) % RS_RQ] = i;
		rs->rx_len[i] = len;
		return 0;
	case RS_OP_FIN:
		rs->fin_rcvd = true;
		/* fall through */
	case RS_OP_CREDIT:
		if (len)
			return -1;
		break;
	case RS_OP_IOMAP:
		if (rs_iomap_taken(rs, h + 1, len))
			return -1;
		break;
	default:
		return -1;
	}
	rs_repost(rs, i);
	return 0;
}

static void rs_take_wc(struct rs *rs, const struct ibv_wc *wc)
{
	uint32_t n = (uint32_t)wc->wr_id;

	switch (wc->wr_id >> 32) {
	case RS_WR_SLOT:
		rs->free_slot[rs->nfree++] = n;
		/* fall through */
	case RS_WR_CTRL:
		rs->inflight--;
		break;
	case RS_WR_RECV:
		if (wc->status != IBV_WC_SUCCESS || rs->state == RS_ERROR)
			break;
		if (rs_take_msg(rs, n, wc->byte_len))
			rs_fail(rs, EPROTO);
		return;
	}
	/* a flush is the connection going, which its DISCONNECTED says; anything else fails */
	if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR)
		rs_fail(rs, ECONNRESET);
}

void rs_take_completions(struct rs *rs)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	void *ctx;
	int n;

	while (ibv_get_cq_event(rs->cc, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	/* armed before the last poll, so a completion after it wakes the socket's fd */
	for (bool armed = false;;) {
		while ((n = ibv_poll_cq(rs->cq, 16, wc)) > 0)
			for (int i = 0; i < n; i++)
				rs_take_wc(rs, &wc[i]);
		if (armed || n < 0)
			break;
		ibv_req_notify_cq(rs->cq, 0);
		armed = true;
	}
}

void rs_send_pending(struct rs *rs)
{
	rs_iomap_announce(rs);
	if (rs->fin_want && !rs->fin_sent && rs_post_ctrl(rs, RS_OP_FIN, NULL, 0) == 0)
		rs->fin_sent = true;
	if (rs->to_return >= RS_RQ / 2)
		rs_post_ctrl(rs, RS_OP_CREDIT, NULL, 0);
}

bool rs_readable(const struct rs *rs)
{
	return rs->nready || rs->fin_rcvd || rs->shut_rd || rs->state == RS_CLOSED ||
	       rs->state == RS_ERROR;
}

bool rs_writable(const struct rs *rs)
{
	return rs->state == RS_OPEN && !rs->fin_sent && !rs->fin_want && rs->nfree &&
	       rs_can_post(rs, 1);
}

/* A cursor over an iovec. */
struct rs_iov {
	const struct iovec	*iov;
	int			n;
	size_t			off;	/* into iov[0] */
};

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

/* Copy up to len bytes between p and the cursor (to it if in): the bytes copied. */
static size_t iov_copy(struct rs_iov *c, uint8_t *p, size_t len, bool in)
{
	size_t done = 0;

	while (done < len && c->n) {
		size_t k = c->iov->iov_len - c->off;

		if (k > len - done)
			k = len - done;
		if (in)
			memcpy((uint8_t *)c->iov->iov_base + c->off, p + done, k);
		else
			memcpy(p + done, (uint8_t *)c->iov->iov_base + c->off, k);
		done += k;
		c->off += k;
		if (c->off == c->iov->iov_len) {
			c->iov++;
			c->n--;
			c->off = 0;
		}
	}
	return done;
}

static bool rs_nonblocking(const struct rs *rs, int flags)
{
	return rs->nonblock || (flags & MSG_DONTWAIT);
}

/* Take what has arrived into the cursor: the bytes taken. */
static size_t rs_take_stream(struct rs *rs, struct rs_iov *c, size_t want)
{
	size_t got = 0;

	while (got < want && rs->nready) {
		uint32_t i = rs->ready[rs->ready_head];
		uint8_t *p = rs->mem + (size_t)i * RS_SLOT + sizeof(struct rs_hdr);
		size_t k = iov_copy(c, p + rs->ready_off, rs->rx_len[i] - rs->ready_off, true);

		got += k;
		rs->ready_off += k;
		if (rs->ready_off < rs->rx_len[i])
			break;
		rs->ready_off = 0;
		rs->ready_head = (rs->ready_head + 1) % RS_RQ;
		rs->nready--;
		rs_repost(rs, i);
	}
	return got;
}

static ssize_t rs_recv_iov(int fd, const struct iovec *iov, int n, int flags)
{
	struct rs *rs = rs_get_locked(fd);
	struct rs_iov c = { .iov = iov, .n = n };
	size_t want = iov_total(iov, n), got = 0;
	ssize_t ret;

	if (!rs)
		return -1;
	if (flags & (MSG_PEEK | MSG_OOB)) {
		errno = EOPNOTSUPP;	/* no rsocket has them */
		ret = -1;
		goto out;
	}
	while (!rs->shut_rd && got < want) {
		got += rs_take_stream(rs, &c, want - got);
		if (rs->state == RS_OPEN)
			rs_send_pending(rs);
		if (got == want || (got && !(flags & MSG_WAITALL)))
			break;
		if (rs->fin_rcvd || rs->state == RS_CLOSED)
			break;
		if (rs->state == RS_ERROR || rs->state == RS_IDLE || rs->state == RS_LISTEN) {
			if (got)
				break;
			errno = rs->state == RS_ERROR ? rs->err : ENOTCONN;
			ret = -1;
			goto out;
		}
		if (rs_nonblocking(rs, flags) || rs_wait(rs, -1)) {
			if (got)
				break;
			if (rs_nonblocking(rs, flags))
				errno = EAGAIN;
			ret = -1;
			goto out;
		}
	}
	ret = got;
out:
	rs_unlock(rs);
	return ret;
}

static ssize_t rs_send_iov(int fd, const struct iovec *iov, int n, int flags)
{
	struct rs *rs = rs_get_locked(fd);
	struct rs_iov c = { .iov = iov, .n = n };
	size_t want = iov_total(iov, n), sent = 0;
	ssize_t ret = -1;

	if (!rs)
		return -1;
	if (flags & MSG_OOB) {
		errno = EOPNOTSUPP;	/* other flags mean nothing here (rstream's MSG_WAITALL) */
		goto out;
	}
	while (sent < want) {
		if (rs_writable(rs)) {
			uint32_t slot;
			uint8_t *p = rs_slot(rs, &slot) + sizeof(struct rs_hdr);
			size_t k = iov_copy(&c, p, want - sent < RS_MSG_MAX ? want - sent :
										RS_MSG_MAX, false);

			if (rs_post_slot(rs, slot, k, 0, 0))
				break;
			sent += k;
			continue;
		}
		if (rs->state != RS_OPEN && rs->state != RS_CONNECTING &&
		    rs->state != RS_RESOLVING) {
			if (!sent)
				rs_usable(rs);
			break;
		}
		if (rs->fin_want || rs->fin_sent) {
			errno = EPIPE;
			break;
		}
		if (rs_nonblocking(rs, flags)) {
			errno = EAGAIN;
			break;
		}
		if (rs_wait(rs, -1))
			break;
	}
	if (sent)
		ret = sent;
out:
	rs_unlock(rs);
	return ret;
}

ssize_t rrecv(int fd, void *buf, size_t len, int flags)
{
	struct iovec v = { .iov_base = buf, .iov_len = len };

	return rs_recv_iov(fd, &v, 1, flags);
}

ssize_t rrecvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *src,
		  socklen_t *addrlen)
{
	ssize_t ret = rrecv(fd, buf, len, flags);

	/* a stream's sender is its peer (rdma-core answers so too) */
	if (ret > 0 && src && addrlen && rgetpeername(fd, src, addrlen))
		return -1;
	return ret;
}

ssize_t rrecvmsg(int fd, struct msghdr *msg, int flags)
{
	if (msg->msg_control && msg->msg_controllen) {
		errno = EOPNOTSUPP;
		return -1;
	}
	msg->msg_flags = 0;
	return rs_recv_iov(fd, msg->msg_iov, msg->msg_iovlen, flags);
}

ssize_t rread(int fd, void *buf, size_t count)
{
	return rrecv(fd, buf, count, 0);
}

ssize_t rreadv(int fd, const struct iovec *iov, int iovcnt)
{
	return rs_recv_iov(fd, iov, iovcnt, 0);
}

ssize_t rsend(int fd, const void *buf, size_t len, int flags)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };

	return rs_send_iov(fd, &v, 1, flags);
}

ssize_t rsendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *dest,
		socklen_t addrlen)
{
	if (dest || addrlen) {
		errno = EISCONN;	/* a stream goes to its peer only */
		return -1;
	}
	return rsend(fd, buf, len, flags);
}

ssize_t rsendmsg(int fd, const struct msghdr *msg, int flags)
{
	if ((msg->msg_control && msg->msg_controllen) || msg->msg_name) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return rs_send_iov(fd, msg->msg_iov, msg->msg_iovlen, flags);
}

ssize_t rwrite(int fd, const void *buf, size_t count)
{
	return rsend(fd, buf, count, 0);
}

ssize_t rwritev(int fd, const struct iovec *iov, int iovcnt)
{
	return rs_send_iov(fd, iov, iovcnt, 0);
}
