// SPDX-License-Identifier: MIT
/*
 * rdma_getaddrinfo: getaddrinfo's answer as rdma_cm's, for RC over TCP: a passive
 * lookup names the source (to bind and listen), an active one the destination.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

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

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai, *i;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);
	int gai;

	if (hints) {
		h.ai_family = hints->ai_family;
		h.ai_flags = (passive ? AI_PASSIVE : 0) |
			     (hints->ai_flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0);
		if (hints->ai_port_space && hints->ai_port_space != RDMA_PS_TCP) {
			errno = EOPNOTSUPP;
			return -1;
		}
	}
	gai = getaddrinfo(node, service, &h, &ai);
	if (gai) {
		errno = errno_of(gai);
		return -1;
	}
	for (i = ai; i; i = i->ai_next) {
		struct rdma_addrinfo *r = calloc(1, sizeof(*r));
		struct sockaddr *a = r ? copy_addr(i->ai_addr, i->ai_addrlen) : NULL;

		if (!a) {
			free(r);
			rdma_freeaddrinfo(head);
			freeaddrinfo(ai);
			errno = ENOMEM;
			return -1;
		}
		r->ai_flags = hints ? hints->ai_flags : 0;
		r->ai_family = i->ai_family;
		r->ai_qp_type = IBV_QPT_RC;
		r->ai_port_space = RDMA_PS_TCP;
		if (passive) {
			r->ai_src_addr = a;
			r->ai_src_len = i->ai_addrlen;
		} else {
			r->ai_dst_addr = a;
			r->ai_dst_len = i->ai_addrlen;
			if (hints && hints->ai_src_addr && hints->ai_src_len) {
				r->ai_src_addr = copy_addr(hints->ai_src_addr, hints->ai_src_len);
				r->ai_src_len = r->ai_src_addr ? hints->ai_src_len : 0;
			}
		}
		*tail = r;
		tail = &r->ai_next;
	}
	freeaddrinfo(ai);
	*res = head;
	return 0;
}
