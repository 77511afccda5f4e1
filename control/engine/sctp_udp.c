// SPDX-License-Identifier: MIT
/* SCTP over UDP (RFC 6951): sctp.h's paths on one kernel UDP socket. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sctp_udp.h"
#include "sctp_xsk.h"

#define DGRAM_MAX	(IWX_SCTP_PATH_MTU + 64)	/* an SCTP packet, and room to see a bigger one */

struct iwx_sctp_udp {
	int			fd;
	int			family;		/* its address's: AF_INET6 sees IPv4 peers mapped */
	struct iwx_sctp_udp_path *paths;	/* few: a list */
	unsigned		n_paths, max_paths;
	unsigned long		dropped;
	uint8_t			buf[DGRAM_MAX];
};

static int udp_send(struct iwx_sctp_path *path, const void *pkt, size_t len)
{
	struct iwx_sctp_udp_path *p = (struct iwx_sctp_udp_path *)path;

	if (p->route.xsk && !iwx_sctp_xsk_send(&p->route, pkt, len))
		return 0;
	if (sendto(p->udp->fd, pkt, len, MSG_DONTWAIT, (struct sockaddr *)&p->peer, p->peer_len) < 0) {
		p->udp->dropped++;	/* SCTP sends it again */
		return -errno;
	}
	return 0;
}

struct iwx_sctp_udp *iwx_sctp_udp_open(const struct sockaddr *addr, socklen_t len,
				       unsigned max_paths)
{
	struct iwx_sctp_udp *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return NULL;
	u->max_paths = max_paths;
	u->family = addr->sa_family;
	u->fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0 || bind(u->fd, addr, len)) {
		err = errno;
		iwx_sctp_udp_close(u);
		errno = err;
		return NULL;
	}
	return u;
}

void iwx_sctp_udp_close(struct iwx_sctp_udp *u)
{
	if (!u)
		return;
	while (u->paths) {
		struct iwx_sctp_udp_path *p = u->paths;

		u->paths = p->next;
		iwx_sctp_path_del(&p->path);
		free(p);
	}
	if (u->fd >= 0)
		close(u->fd);
	free(u);
}

int iwx_sctp_udp_fd(const struct iwx_sctp_udp *u)
{
	return u->fd;
}

int iwx_sctp_udp_local(const struct iwx_sctp_udp *u, struct sockaddr_storage *addr)
{
	socklen_t len = sizeof(*addr);

	return getsockname(u->fd, (struct sockaddr *)addr, &len) ? -errno : 0;
}

static struct iwx_sctp_udp_path *find(struct iwx_sctp_udp *u, const struct sockaddr *peer,
				      socklen_t len)
{
	for (struct iwx_sctp_udp_path *p = u->paths; p; p = p->next)
		if (p->peer_len == len && !memcmp(&p->peer, peer, len))
			return p;
	return NULL;
}

struct iwx_sctp_path *iwx_sctp_udp_path(struct iwx_sctp_udp *u, const struct sockaddr *peer,
					socklen_t len)
{
	struct iwx_sctp_udp_path *p = find(u, peer, len);

	if (p)
		return &p->path;
	if (u->n_paths == u->max_paths || len > sizeof(p->peer)) {
		errno = ENOSPC;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->path.send = udp_send;
	p->path.place = true;
	p->udp = u;
	memcpy(&p->peer, peer, len);
	p->peer_len = len;
	p->next = u->paths;
	u->paths = p;
	u->n_paths++;
	iwx_sctp_path_add(&p->path);
	return &p->path;
}

void iwx_sctp_udp_each_route(struct iwx_sctp_udp *u, void (*fn)(struct iwx_sctp_xsk_route *r,
								  void *arg), void *arg)
{
	for (struct iwx_sctp_udp_path *p = u->paths; p; p = p->next)
		fn(&p->route, arg);
}

uint16_t iwx_sctp_udp_port(const struct iwx_sctp_udp *u)
{
	struct sockaddr_storage a;

	if (iwx_sctp_udp_local(u, &a))
		return 0;
	return a.ss_family == AF_INET ? ((struct sockaddr_in *)&a)->sin_port :
					((struct sockaddr_in6 *)&a)->sin6_port;
}

struct iwx_sctp_udp_path *iwx_sctp_udp_path_v4(struct iwx_sctp_udp *u, uint32_t ip, uint16_t port)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = port };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = port, .sin_addr.s_addr = ip };

	if (u->family == AF_INET)
		return (struct iwx_sctp_udp_path *)iwx_sctp_udp_path(u, (struct sockaddr *)&s4,
								    sizeof(s4));
	/* as the dual-stack socket sees an IPv4 peer: ::ffff:a.b.c.d (ipv6(7)) */
	s6.sin6_addr.s6_addr[10] = s6.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&s6.sin6_addr.s6_addr[12], &ip, 4);
	return (struct iwx_sctp_udp_path *)iwx_sctp_udp_path(u, (struct sockaddr *)&s6, sizeof(s6));
}

int iwx_sctp_udp_input(struct iwx_sctp_udp *u, int budget)
{
	int done;

	for (done = 0; done < budget; done++) {
		struct sockaddr_storage from;
		socklen_t len = sizeof(from);
		struct iwx_sctp_path *path;
		ssize_t n = recvfrom(u->fd, u->buf, sizeof(u->buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &len);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? done : -errno;
		path = iwx_sctp_udp_path(u, (struct sockaddr *)&from, len);
		if (!path) {
			u->dropped++;
			continue;
		}
		iwx_sctp_input(path, u->buf, n);
	}
	return done;
}

unsigned long iwx_sctp_udp_dropped(const struct iwx_sctp_udp *u)
{
	return u->dropped;
}
