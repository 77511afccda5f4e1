// SPDX-License-Identifier: MIT
/* SCTP in UDP through an AF_XDP socket (sctp_xsk.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_xdp.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <xdp/xsk.h>

#include "sctp_xsk.h"
#include "util/inet_csum.h"

#define FRAME_SIZE	2048		/* one Ethernet frame of up to 1514 bytes */
#define RX_FRAMES	1024		/* owned by the kernel's fill ring or our RX ring */
#define TX_FRAMES	1024		/* free, or in the TX or completion ring */
#define RING		1024		/* every ring's size: each holds all of its frames */
#define IP_DF		0x4000		/* RFC 791's flags and fragment offset */
#define IP_MF_OFFSET	0x3fff
#define TX_BATCH	64		/* frames queued before the kernel is told, at most */

struct iwx_sctp_xsk {
	struct iwx_sctp_udp	*udp;
	uint16_t		port;		/* u's, network order */
	int			family;		/* u's: AF_INET6 names IPv6 peers too */
	uint8_t			*area;		/* the UMEM: RX frames, then TX frames */
	struct xsk_umem		*umem;
	struct xsk_socket	*xsk;
	struct xsk_ring_prod	fill, tx;
	struct xsk_ring_cons	comp, rx;
	uint64_t		free[TX_FRAMES];	/* TX frames not in a ring */
	uint32_t		n_free;
	uint16_t		ip_id;
	uint32_t		unsent;		/* frames in the TX ring since the last wake-up */
	struct iwx_sctp_xsk_stats stats;
};

/* The UDP checksum (RFC 768; RFC 8200 §8.1) over the pseudo-header's sum, the header, data. */
static uint16_t udp_sum(uint32_t pseudo, const struct udphdr *udp, const void *data, size_t len)
{
	return iwx_csum_fold(iwx_csum_add(iwx_csum_add(pseudo, udp, sizeof(*udp)), data, len));
}

/* The pseudo-header's sum: both addresses (4 or 16 bytes each), UDP, the UDP length. */
static uint32_t pseudo_sum(const void *addrs, size_t addrs_len, size_t udp_len)
{
	return iwx_csum_add(0, addrs, addrs_len) + IPPROTO_UDP + (uint32_t)udp_len;
}

static void give_rx(struct iwx_sctp_xsk *x, uint64_t addr)
{
	uint32_t idx;

	/* the ring holds every RX frame: there is always room for one back */
	if (xsk_ring_prod__reserve(&x->fill, 1, &idx) == 1) {
		*xsk_ring_prod__fill_addr(&x->fill, idx) = addr;
		xsk_ring_prod__submit(&x->fill, 1);
	}
}

struct iwx_sctp_xsk *iwx_sctp_xsk_open(struct iwx_sctp_udp *u, const char *ifname, uint32_t queue,
				       int xskmap_fd)
{
	const struct xsk_umem_config uc = { .fill_size = RING, .comp_size = RING,
					    .frame_size = FRAME_SIZE };
	/* our own XDP program redirects to the socket (xskmap_fd), not libxdp's */
	const struct xsk_socket_config sc = { .rx_size = RING, .tx_size = RING,
					      .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
					      .bind_flags = XDP_USE_NEED_WAKEUP };
	size_t size = (size_t)(RX_FRAMES + TX_FRAMES) * FRAME_SIZE;
	struct iwx_sctp_xsk *x = calloc(1, sizeof(*x));
	int err;

	if (!x)
		return NULL;
	x->udp = u;
	x->port = iwx_sctp_udp_port(u);
	x->family = iwx_sctp_udp_family(u);
	x->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		err = -errno;
		free(x);
		errno = -err;
		return NULL;
	}
	err = xsk_umem__create(&x->umem, x->area, size, &x->fill, &x->comp, &uc);
	if (!err)
		err = xsk_socket__create(&x->xsk, ifname, queue, x->umem, &x->rx, &x->tx, &sc);
	if (!err)
		err = xsk_socket__update_xskmap(x->xsk, xskmap_fd);
	if (err) {
		iwx_sctp_xsk_close(x);
		errno = -err;
		return NULL;
	}
	for (uint32_t i = 0; i < RX_FRAMES; i++)
		give_rx(x, (uint64_t)i * FRAME_SIZE);
	for (uint32_t i = 0; i < TX_FRAMES; i++)
		x->free[x->n_free++] = (uint64_t)(RX_FRAMES + i) * FRAME_SIZE;
	return x;
}

static void forget(struct iwx_sctp_xsk_route *r, void *arg)
{
	if (r->xsk == arg)
		r->xsk = NULL;
}

void iwx_sctp_xsk_close(struct iwx_sctp_xsk *x)
{
	if (!x)
		return;
	iwx_sctp_udp_each_route(x->udp, forget, x);
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	munmap(x->area, (size_t)(RX_FRAMES + TX_FRAMES) * FRAME_SIZE);
	free(x);
}

int iwx_sctp_xsk_fd(const struct iwx_sctp_xsk *x)
{
	return xsk_socket__fd(x->xsk);
}

/*
 * The IP header of a frame of SCTP in UDP to our port: where its UDP header starts, the
 * UDP length (*ulen_out), the peer as the UDP socket would name it, and the way back; 0
 * when the frame is not one, or is one of IPv6's that an IPv4 socket cannot name.
 */
static size_t ip_in(const struct iwx_sctp_xsk *x, const uint8_t *f, uint32_t len, uint16_t proto,
		    struct iwx_sctp_xsk_route *back, struct sockaddr_storage *from,
		    socklen_t *from_len, size_t *ulen_out)
{
	struct udphdr udp;
	size_t l4, ulen;

	if (proto == htons(ETH_P_IP)) {
		struct iphdr ip;

		l4 = ETH_HLEN + sizeof(ip);
		if (len < l4 + sizeof(udp))
			return 0;
		memcpy(&ip, f + ETH_HLEN, sizeof(ip));
		memcpy(&udp, f + l4, sizeof(udp));
		ulen = ntohs(udp.len);
		if (ip.version != 4 || ip.ihl != 5 || ip.protocol != IPPROTO_UDP ||
		    (ip.frag_off & htons(IP_MF_OFFSET)) || ntohs(ip.tot_len) != ulen + sizeof(ip))
			return 0;
		memcpy(back->ip[0], &ip.daddr, 4);
		memcpy(back->ip[1], &ip.saddr, 4);
		*from_len = iwx_sctp_udp_v4(x->udp, ip.saddr, udp.source, from);
	} else if (proto == htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)from;

		l4 = ETH_HLEN + sizeof(ip6);
		if (len < l4 + sizeof(udp) || x->family != AF_INET6)
			return 0;
		memcpy(&ip6, f + ETH_HLEN, sizeof(ip6));
		memcpy(&udp, f + l4, sizeof(udp));
		ulen = ntohs(udp.len);
		/* no extension headers: those, fragments among them, the kernel's UDP takes */
		if (ip6.version != 6 || ip6.nexthdr != IPPROTO_UDP || ntohs(ip6.payload_len) != ulen)
			return 0;
		memcpy(back->ip[0], &ip6.daddr, 16);
		memcpy(back->ip[1], &ip6.saddr, 16);
		back->v6 = true;
		memset(from, 0, sizeof(*from));
		s6->sin6_family = AF_INET6;
		s6->sin6_port = udp.source;
		memcpy(&s6->sin6_addr, &ip6.saddr, 16);
		*from_len = sizeof(*s6);
	} else {
		return 0;
	}
	if (udp.dest != x->port || ulen < sizeof(udp) || l4 + ulen > len)
		return 0;
	back->port[0] = udp.dest;
	back->port[1] = udp.source;
	*ulen_out = ulen;
	return l4;
}

/*
 * One frame: SCTP in UDP to our port (what the XDP program lets through) goes in. The
 * UDP checksum is not checked: a sender with checksum offload (veth, the kernel's UDP)
 * hands XDP a partial one; SCTP's CRC32c covers the packet (iwx_sctp_input) and its
 * Verification Tag, not the addresses, picks the association. Headers are copied out:
 * behind 14 bytes of Ethernet, IP's are not 4-byte aligned.
 */
static void frame_in(struct iwx_sctp_xsk *x, uint8_t *f, uint32_t len)
{
	struct iwx_sctp_xsk_route back = { .xsk = x };
	struct sockaddr_storage from;
	struct ethhdr eth;
	socklen_t from_len;
	size_t l4, ulen;

	if (len < ETH_HLEN)
		goto drop;
	memcpy(&eth, f, sizeof(eth));
	l4 = ip_in(x, f, len, eth.h_proto, &back, &from, &from_len, &ulen);
	if (!l4)
		goto drop;
	/* the way back: as this frame came, reversed */
	memcpy(back.mac[0], eth.h_dest, ETH_ALEN);
	memcpy(back.mac[1], eth.h_source, ETH_ALEN);
	x->stats.rx++;
	iwx_sctp_udp_arrived(x->udp, (struct sockaddr *)&from, from_len, f + l4 + sizeof(struct udphdr),
			     ulen - sizeof(struct udphdr), &back);
	return;
drop:
	x->stats.rx_dropped++;
}

int iwx_sctp_xsk_input(struct iwx_sctp_xsk *x, int budget)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->rx, budget, &idx);

	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);
		uint64_t addr = xsk_umem__extract_addr(d->addr);

		frame_in(x, xsk_umem__get_data(x->area, xsk_umem__add_offset_to_addr(d->addr)), d->len);
		give_rx(x, addr - addr % FRAME_SIZE);
	}
	xsk_ring_cons__release(&x->rx, n);
	return (int)n;
}

/* TX frames the kernel has sent: free again. */
static void reclaim(struct iwx_sctp_xsk *x)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->comp, RING, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->free[x->n_free++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	xsk_ring_cons__release(&x->comp, n);
}

/* The Ethernet and IP headers of a frame along r carrying udp_len bytes of UDP: their length. */
static size_t ip_out(struct iwx_sctp_xsk *x, const struct iwx_sctp_xsk_route *r, size_t udp_len,
		     uint8_t *hdrs, uint32_t *pseudo)
{
	struct ethhdr eth = { .h_proto = htons(r->v6 ? ETH_P_IPV6 : ETH_P_IP) };

	memcpy(eth.h_dest, r->mac[1], ETH_ALEN);
	memcpy(eth.h_source, r->mac[0], ETH_ALEN);
	memcpy(hdrs, &eth, sizeof(eth));
	if (r->v6) {
		struct ipv6hdr ip6 = { .version = 6, .payload_len = htons(udp_len),
				       .nexthdr = IPPROTO_UDP, .hop_limit = 64 };

		memcpy(&ip6.saddr, r->ip[0], 16);
		memcpy(&ip6.daddr, r->ip[1], 16);
		*pseudo = pseudo_sum(&ip6.saddr, 32, udp_len);
		memcpy(hdrs + ETH_HLEN, &ip6, sizeof(ip6));
		return ETH_HLEN + sizeof(ip6);
	}
	struct iphdr ip = { .version = 4, .ihl = 5, .tot_len = htons(sizeof(ip) + udp_len),
			    .id = htons(x->ip_id++), .frag_off = htons(IP_DF), .ttl = 64,
			    .protocol = IPPROTO_UDP };

	memcpy(&ip.saddr, r->ip[0], 4);
	memcpy(&ip.daddr, r->ip[1], 4);
	ip.check = htons(iwx_csum_fold(iwx_csum_add(0, &ip, sizeof(ip))));
	*pseudo = pseudo_sum(&ip.saddr, 8, udp_len);
	memcpy(hdrs + ETH_HLEN, &ip, sizeof(ip));
	return ETH_HLEN + sizeof(ip);
}

int iwx_sctp_xsk_send(const struct iwx_sctp_xsk_route *r, const void *pkt, size_t len)
{
	struct iwx_sctp_xsk *x = r->xsk;
	struct udphdr udp = { .source = r->port[0], .dest = r->port[1],
			      .len = htons(sizeof(udp) + len) };
	uint8_t hdrs[ETH_HLEN + sizeof(struct ipv6hdr)];
	uint32_t idx, pseudo;
	uint64_t addr;
	size_t l4;
	uint8_t *f;

	/* what Ethernet's 1500 bytes cannot take goes through the socket, IP fragmenting it */
	if ((r->v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) + sizeof(udp) + len > ETH_DATA_LEN)
		return -EMSGSIZE;
	reclaim(x);
	if (!x->n_free || xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1) {
		x->stats.tx_dropped++;
		return -ENOBUFS;
	}
	l4 = ip_out(x, r, sizeof(udp) + len, hdrs, &pseudo);
	/* RFC 768: a sum of 0 goes as all ones; over IPv6 a zero checksum is not allowed */
	udp.check = htons(udp_sum(pseudo, &udp, pkt, len) ?: 0xffff);
	/* built aside and copied in: in the frame, IP's header is not 4-byte aligned */
	addr = x->free[--x->n_free];
	f = xsk_umem__get_data(x->area, addr);
	memcpy(f, hdrs, l4);
	memcpy(f + l4, &udp, sizeof(udp));
	memcpy(f + l4 + sizeof(udp), pkt, len);
	xsk_ring_prod__tx_desc(&x->tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(&x->tx, idx)->len = l4 + sizeof(udp) + len;
	xsk_ring_prod__submit(&x->tx, 1);
	x->stats.tx++;
	if (++x->unsent == TX_BATCH)
		iwx_sctp_xsk_flush(x);
	return 0;
}

void iwx_sctp_xsk_flush(struct iwx_sctp_xsk *x)
{
	/* copy mode sends only when told: one system call for the batch */
	if (x->unsent && xsk_ring_prod__needs_wakeup(&x->tx))
		sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
	x->unsent = 0;
}

const struct iwx_sctp_xsk_stats *iwx_sctp_xsk_stats(const struct iwx_sctp_xsk *x)
{
	return &x->stats;
}
