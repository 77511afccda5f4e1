// SPDX-License-Identifier: MIT
/* SCTP over UDP (RFC 6951): sctp.h's paths on one kernel UDP socket. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conn.h"
#include "sctp_udp.h"
#include "sctp_xsk.h"
#include "util/clock.h"

#define DGRAM_MAX	(IWX_SCTP_PATH_MTU + 64)	/* an SCTP packet, and room to see a bigger one */

struct iwx_sctp_udp {
	int			fd;
	int			family;		/* its address's: AF_INET6 sees IPv4 peers mapped */
	struct iwx_sctp_udp_path *paths;	/* all, to walk; found by token (sctp.c) */
	unsigned		n_paths, max_paths;
	unsigned long		dropped;
	uint64_t		key[2];		/* tokens: a keyed hash of the peer's address */
	uint8_t			buf[DGRAM_MAX];
};

/* A peer answered before it has a path: the address its datagram came from. */
struct unknown_peer {
	struct iwx_sctp_udp	*udp;
	const struct sockaddr	*addr;
	socklen_t		len;
};

/*
 * usrsctp's name for peer: a hash of its address keyed with the socket's random key (a
 * multiply-xorshift per byte, splitmix64's finalizer), the same for every datagram of the
 * peer, never 0, and never on the wire (usrsctp zeroes AF_CONN addresses in its cookies),
 * so that no one can pick addresses whose tokens collide.
 */
static void *token_of(const struct iwx_sctp_udp *u, const struct sockaddr *peer, socklen_t len)
{
	const uint8_t *b = (const uint8_t *)peer;
	uint64_t h = u->key[0];

	for (socklen_t i = 0; i < len; i++) {
		h = (h ^ b[i] ^ u->key[1]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	return (void *)(uintptr_t)(h | 1);
}

static int udp_sendto(struct iwx_sctp_udp *u, const struct sockaddr *to, socklen_t len,
		      const void *pkt, size_t n)
{
	if (sendto(u->fd, pkt, n, MSG_DONTWAIT, to, len) < 0) {
		u->dropped++;	/* SCTP sends it again */
		return -errno;
	}
	return 0;
}

static int udp_send(struct iwx_sctp_path *path, const void *pkt, size_t len)
{
	struct iwx_sctp_udp_path *p = (struct iwx_sctp_udp_path *)path;

	p->used_ms = iwx_now_ms();
	if (p->route.xsk && !iwx_sctp_xsk_send(&p->route, pkt, len))
		return 0;
	return udp_sendto(p->udp, (struct sockaddr *)&p->peer, p->peer_len, pkt, len);
}

static int unknown_reply(void *arg, const void *pkt, size_t len)
{
	const struct unknown_peer *k = arg;

	return udp_sendto(k->udp, k->addr, k->len, pkt, len);
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
	if (getrandom(u->key, sizeof(u->key), 0) != sizeof(u->key)) {
		free(u);
		return NULL;
	}
	u->fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0 || bind(u->fd, addr, len)) {
		err = errno;
		iwx_sctp_udp_close(u);
		errno = err;
		return NULL;
	}
	return u;
}

static void path_free(struct iwx_sctp_udp *u, struct iwx_sctp_udp_path **pp)
{
	struct iwx_sctp_udp_path *p = *pp;

	*pp = p->next;
	u->n_paths--;
	iwx_sctp_path_del(&p->path);	/* usrsctp's packets to its token: dropped */
	free(p);
}

void iwx_sctp_udp_close(struct iwx_sctp_udp *u)
{
	if (!u)
		return;
	while (u->paths)
		path_free(u, &u->paths);
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

/* u's path to peer, whose token is token: through sctp.c's table of tokens, not a walk. */
static struct iwx_sctp_udp_path *find(struct iwx_sctp_udp *u, const void *token,
				      const struct sockaddr *peer, socklen_t len)
{
	struct iwx_sctp_path *path = iwx_sctp_path_of(token);
	struct iwx_sctp_udp_path *p = (struct iwx_sctp_udp_path *)path;

	if (!path || path->send != udp_send || p->udp != u || p->peer_len != len ||
	    memcmp(&p->peer, peer, len))
		return NULL;	/* none, or another's by a 2^-63 chance */
	return p;
}

/* The path to peer, made if new. NULL with errno. */
static struct iwx_sctp_udp_path *path_get(struct iwx_sctp_udp *u, const struct sockaddr *peer,
					  socklen_t len)
{
	void *token = token_of(u, peer, len);
	struct iwx_sctp_udp_path *p = find(u, token, peer, len);

	if (p)
		return p;
	if (u->n_paths == u->max_paths || len > sizeof(p->peer)) {
		errno = ENOSPC;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->path.send = udp_send;
	p->path.place = true;
	/* SCTP in UDP over IPv6 (not IPv4-mapped): 20 bytes more of IP header in 1500 */
	if (peer->sa_family == AF_INET6 &&
	    !IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)peer)->sin6_addr))
		p->path.mtu = IWX_SCTP_PATH_MTU - 20;
	p->udp = u;
	memcpy(&p->peer, peer, len);
	p->peer_len = len;
	p->used_ms = iwx_now_ms();
	p->next = u->paths;
	u->paths = p;
	u->n_paths++;
	iwx_sctp_path_add(&p->path, token);
	return p;
}

struct iwx_sctp_path *iwx_sctp_udp_path(struct iwx_sctp_udp *u, const struct sockaddr *peer,
					socklen_t len)
{
	struct iwx_sctp_udp_path *p = path_get(u, peer, len);

	if (!p)
		return NULL;
	p->setups++;
	return &p->path;
}

void iwx_sctp_udp_put(struct iwx_sctp_path *path)
{
	struct iwx_sctp_udp_path *p = (struct iwx_sctp_udp_path *)path;
	struct iwx_sctp_udp_path **pp = &p->udp->paths;

	/* unanswered, its association is gone with its set-up: nothing would ever use it */
	if (--p->setups || p->heard)
		return;
	while (*pp != p)
		pp = &(*pp)->next;
	path_free(p->udp, pp);
}

void iwx_sctp_udp_arrived(struct iwx_sctp_udp *u, const struct sockaddr *peer, socklen_t len,
			  void *pkt, size_t n, const struct iwx_sctp_xsk_route *via)
{
	void *token = token_of(u, peer, len);
	struct iwx_sctp_udp_path *p = find(u, token, peer, len);
	struct unknown_peer k = { u, peer, len };

	if (p) {
		p->used_ms = iwx_now_ms();
		p->heard = true;
		if (via)
			p->route = *via;
		iwx_sctp_input(&p->path, pkt, n);
		return;
	}
	if (!iwx_sctp_input_unknown(token, pkt, n, unknown_reply, &k))
		return;
	/* a valid State Cookie came back: the peer is where it says */
	p = path_get(u, peer, len);
	if (!p) {
		u->dropped++;	/* no room: its association gets no packets and ends */
		return;
	}
	p->heard = true;
	if (via)
		p->route = *via;
}

socklen_t iwx_sctp_udp_v4(const struct iwx_sctp_udp *u, uint32_t ip, uint16_t port,
			  struct sockaddr_storage *peer)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)peer;
	struct sockaddr_in *s4 = (struct sockaddr_in *)peer;

	memset(peer, 0, sizeof(*peer));
	if (u->family == AF_INET) {
		s4->sin_family = AF_INET;
		s4->sin_port = port;
		s4->sin_addr.s_addr = ip;
		return sizeof(*s4);
	}
	/* as the dual-stack socket sees an IPv4 peer: ::ffff:a.b.c.d (ipv6(7)) */
	s6->sin6_family = AF_INET6;
	s6->sin6_port = port;
	s6->sin6_addr.s6_addr[10] = s6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&s6->sin6_addr.s6_addr[12], &ip, 4);
	return sizeof(*s6);
}

void iwx_sctp_udp_expire(struct iwx_sctp_udp *u, uint64_t now, uint64_t idle_ms)
{
	for (struct iwx_sctp_udp_path **pp = &u->paths; *pp;) {
		struct iwx_sctp_udp_path *p = *pp;

		if (p->setups || now - p->used_ms < idle_ms)
			pp = &p->next;
		else
			path_free(u, pp);
	}
}

int iwx_sctp_udp_family(const struct iwx_sctp_udp *u)
{
	return u->family;
}

unsigned iwx_sctp_udp_paths(const struct iwx_sctp_udp *u)
{
	return u->n_paths;
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

int iwx_sctp_udp_input(struct iwx_sctp_udp *u, int budget)
{
	int done;

	for (done = 0; done < budget; done++) {
		struct sockaddr_storage from;
		socklen_t len = sizeof(from);
		ssize_t n = recvfrom(u->fd, u->buf, sizeof(u->buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &len);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? done : -errno;
		iwx_sctp_udp_arrived(u, (struct sockaddr *)&from, len, u->buf, n, NULL);
	}
	return done;
}

unsigned long iwx_sctp_udp_dropped(const struct iwx_sctp_udp *u)
{
	return u->dropped;
}
