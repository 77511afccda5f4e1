// SPDX-License-Identifier: MIT
/*
 * rdma_getaddrinfo: getaddrinfo's answer as rdma_cm's, for RC over TCP: a passive
 * lookup names the source (to bind and listen), an active one the destination; with
 * neither node nor service, the addresses of the hints (rdma-core 44's addrinfo.c).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"
#include "util/say_once.h"

static struct sockaddr *copy_addr(const struct sockaddr *a, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c)
		memcpy(c, a, len);
	return c;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res);
		res = next;
	}
}

/* getaddrinfo's error as errno (rdma_getaddrinfo returns -1 and sets it). */
static int errno_of(int gai)
{
	switch (gai) {
	case EAI_NONAME:
	case EAI_NODATA:	return ENOENT;
	case EAI_FAMILY:	return EAFNOSUPPORT;
	case EAI_MEMORY:	return ENOMEM;
	case EAI_SYSTEM:	return errno;
	default:		return EINVAL;
	}
}

/* One answer of getaddrinfo's per entry: a passive lookup's is the source. NULL: no memory. */
static struct rdma_addrinfo *looked_up(const struct addrinfo *ai, bool passive, int flags)
{
	struct rdma_addrinfo *head = NULL, **tail = &head;

	for (const struct addrinfo *i = ai; i; i = i->ai_next) {
		struct rdma_addrinfo *r = calloc(1, sizeof(*r));
		struct sockaddr *a = r ? copy_addr(i->ai_addr, i->ai_addrlen) : NULL;

		if (!a) {
			free(r);
			rdma_freeaddrinfo(head);
			return NULL;
		}
		r->ai_flags = flags;
		r->ai_family = i->ai_family;
		if (passive) {
			r->ai_src_addr = a;
			r->ai_src_len = i->ai_addrlen;
		} else {
			r->ai_dst_addr = a;
			r->ai_dst_len = i->ai_addrlen;
		}
		*tail = r;
		tail = &r->ai_next;
	}
	return head;
}

/*
 * Neither node nor service: rdma-core answers with the hints themselves, their
 * destination and source copied (libfabric's verbs provider asks so with the
 * address it binds). NULL: no memory.
 */
static struct rdma_addrinfo *from_hints(const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->ai_flags = hints->ai_flags;
	r->ai_family = hints->ai_family;
	if (hints->ai_dst_addr && hints->ai_dst_len) {
		r->ai_dst_addr = copy_addr(hints->ai_dst_addr, hints->ai_dst_len);
		if (!r->ai_dst_addr) {
			free(r);
			return NULL;
		}
		r->ai_dst_len = hints->ai_dst_len;
	}
	return r;
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai;
	struct rdma_addrinfo *head;
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int gai;

	if (!res || (!node && !service && !hints)) {
		errno = EINVAL;	/* nothing to look up */
		return -1;
	}
	if (hints) {
		h.ai_family = hints->ai_family;
		h.ai_flags = (passive ? AI_PASSIVE : 0) |
			     (hints->ai_flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0);
		if ((hints->ai_port_space && hints->ai_port_space != RDMA_PS_TCP) ||
		    (hints->ai_qp_type && hints->ai_qp_type != IBV_QPT_RC)) {
			/* rdma_xserver -c x says only "Bad value for ai_flags" of it */
			static bool said;

			iwx_say_once(&said, "librdmacm (iwx): rdma_getaddrinfo: port space %#x, "
				     "queue pair type %d: iWARP has reliable connections (RDMA_PS_TCP, "
				     "IBV_QPT_RC) only, no XRC, UD or multicast\n",
				     hints->ai_port_space, hints->ai_qp_type);
			errno = EOPNOTSUPP;
			return -1;
		}
	}
	if (!node && !service) {
		head = from_hints(hints);
	} else {
		gai = getaddrinfo(node, service, &h, &ai);
		if (gai) {
			errno = errno_of(gai);
			return -1;
		}
		head = looked_up(ai, passive, hints ? hints->ai_flags : 0);
		freeaddrinfo(ai);
	}
	/* rdma-core: the hints' source where the answer has none */
	for (struct rdma_addrinfo *r = head; r; r = r->ai_next) {
		r->ai_qp_type = IBV_QPT_RC;
		r->ai_port_space = RDMA_PS_TCP;
		if (!r->ai_src_addr && hints && hints->ai_src_addr && hints->ai_src_len) {
			r->ai_src_addr = copy_addr(hints->ai_src_addr, hints->ai_src_len);
			if (!r->ai_src_addr) {
				rdma_freeaddrinfo(head);
				head = NULL;
				break;
			}
			r->ai_src_len = hints->ai_src_len;
		}
	}
	if (!head) {
		errno = ENOMEM;
		return -1;
	}
	*res = head;
	return 0;
}
