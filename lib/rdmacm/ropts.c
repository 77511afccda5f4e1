// SPDX-License-Identifier: MIT
/*
 * rsockets' options, rfcntl and names. The buffers are the wire's (rsocket.h), so the
 * sizes a program sets (SO_RCVBUF, RDMA_SQSIZE, ...) are taken and the fixed ones read
 * back; what neither rdma-core nor we have fails ENOTSUP, as rdma-core's.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <string.h>

#include "cm.h"
#include "rsocket.h"

/* An option kept as an int to set and read back; NULL for the others. */
static int *rs_opt_int(struct rs *rs, int level, int name)
{
	if (level == SOL_SOCKET && name == SO_REUSEADDR)
		return &rs->reuseaddr;
	if (level == SOL_SOCKET && name == SO_KEEPALIVE)
		return &rs->keepalive;
	if (level == IPPROTO_TCP && name == TCP_NODELAY)
		return &rs->nodelay;
	if (level == SOL_RDMA && name == RDMA_IOMAPSIZE)
		return &rs->iomap_size;
	return NULL;
}

/* An option whose value is the wire's, whatever was set: its value, or -1. */
static int rs_opt_fixed(const struct rs *rs, int level, int name)
{
	if (level == SOL_SOCKET && name == SO_RCVBUF)
		return RS_RQ * RS_SLOT;
	if (level == SOL_SOCKET && name == SO_SNDBUF)
		return RS_SQ * RS_SLOT;
	if (level == SOL_SOCKET && name == SO_TYPE)
		return SOCK_STREAM;
	if (level == SOL_SOCKET && name == SO_ERROR)
		return rs->state == RS_ERROR ? rs->err : 0;
	if (level == IPPROTO_TCP && name == TCP_MAXSEG)
		return RS_MSG_MAX;
	if (level == SOL_RDMA && name == RDMA_SQSIZE)
		return RS_SQ;
	if (level == SOL_RDMA && name == RDMA_RQSIZE)
		return RS_RQ;
	if (level == SOL_RDMA && name == RDMA_INLINE)
		return RS_INLINE - sizeof(struct rs_hdr);
	return -1;
}

int rsetsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct rs *rs = rs_get_locked(fd);
	int *opt, ret = 0;

	if (!rs)
		return -1;
	opt = rs_opt_int(rs, level, name);
	if (level == SOL_SOCKET && name == SO_LINGER) {
		if (!val || len < sizeof(rs->linger))
			goto inval;
		memcpy(&rs->linger, val, sizeof(rs->linger));
	} else if (opt || (rs_opt_fixed(rs, level, name) >= 0 && name != SO_ERROR &&
			   name != SO_TYPE)) {
		int v;

		if (!val || len < sizeof(int))
			goto inval;
		memcpy(&v, val, sizeof(v));
		if (opt == &rs->iomap_size && (v < 0 || v > RS_MAX_IOMAP))
			v = v < 0 ? 0 : RS_MAX_IOMAP;
		if (opt)
			*opt = v;
	} else {
		errno = ENOTSUP;
		ret = -1;
	}
	rs_unlock(rs);
	return ret;
inval:
	rs_unlock(rs);
	errno = EINVAL;
	return -1;
}

int rgetsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct rs *rs = rs_get_locked(fd);
	int *opt, v, ret = 0;

	if (!rs)
		return -1;
	opt = rs_opt_int(rs, level, name);
	v = opt ? *opt : rs_opt_fixed(rs, level, name);
	if (!val || !len) {
		errno = EINVAL;
		ret = -1;
	} else if (level == SOL_SOCKET && name == SO_LINGER) {
		*len = *len < sizeof(rs->linger) ? *len : sizeof(rs->linger);
		memcpy(val, &rs->linger, *len);
	} else if (opt || v >= 0) {
		*len = *len < sizeof(v) ? *len : sizeof(v);
		memcpy(val, &v, *len);
	} else {
		errno = ENOTSUP;
		ret = -1;
	}
	rs_unlock(rs);
	return ret;
}

int rfcntl(int fd, int cmd, ...)
{
	struct rs *rs = rs_get_locked(fd);
	va_list ap;
	int ret = 0;

	if (!rs)
		return -1;
	va_start(ap, cmd);
	switch (cmd) {
	case F_GETFL:
		ret = O_RDWR | (rs->nonblock ? O_NONBLOCK : 0);
		break;
	case F_SETFL:
		rs->nonblock = va_arg(ap, int) & O_NONBLOCK;
		break;
	default:
		errno = ENOTSUP;
		ret = -1;
	}
	va_end(ap);
	rs_unlock(rs);
	return ret;
}

static int rs_name(int fd, struct sockaddr *addr, socklen_t *len, bool peer)
{
	struct rs *rs = rs_get_locked(fd);
	struct sockaddr *a;
	int domain;

	if (!rs)
		return -1;
	a = peer ? rdma_get_peer_addr(rs->id) : rdma_get_local_addr(rs->id);
	domain = rs->domain;
	rs_unlock(rs);
	if (!addr || !len) {
		errno = EINVAL;
		return -1;
	}
	if (!cm_addr_len(a)) {
		struct sockaddr_storage any = { .ss_family = domain };

		if (peer) {
			errno = ENOTCONN;
			return -1;
		}
		rs_copy_addr(addr, len, (struct sockaddr *)&any);	/* unbound: the family's any address */
		return 0;
	}
	rs_copy_addr(addr, len, a);
	return 0;
}

int rgetpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	return rs_name(fd, addr, len, true);
}

int rgetsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	return rs_name(fd, addr, len, false);
}
