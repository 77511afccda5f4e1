// SPDX-License-Identifier: MIT
/* TCP flow reassembly from a capture file (RFC 9293 sequence space), through libpcap. */
#include <arpa/inet.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp_streams.h"

#define NBUCKETS	4096
#define HOLD_MAX	(64u << 20)	/* out-of-order bytes held per direction before giving up */

#define TH_FIN		0x01
#define TH_SYN		0x02
#define TH_RST		0x04
#define TH_ACK		0x10

/* Out-of-order data, waiting for the bytes in front of it. */
struct held {
	struct held	*next;
	uint32_t	seq;
	uint32_t	len;
	bool		start;		/* data[0] is the first payload byte of its segment */
	uint8_t		data[];
};

/* One direction's place in the sequence space. */
struct half {
	bool		started;	/* next is known */
	uint32_t	isn;
	uint32_t	next;		/* next byte to deliver */
	uint32_t	end;		/* past the highest byte any segment announced */
	bool		fin_known;
	uint32_t	fin_seq;
	bool		broken;		/* a gap was reported: deliver nothing more */
	struct held	*held;		/* sorted by seq, never overlapping */
	size_t		held_bytes;
};

struct conn {
	struct tcp_conn	pub;
	struct half	h[2];
	bool		closed;
	struct conn	*hash_next;
	struct conn	*next;		/* in order of creation */
};

struct reader {
	const struct tcp_streams_ops *ops;
	void		*ctx;
	struct tcp_streams_stats *st;
	struct conn	*bucket[NBUCKETS];
	struct conn	*first, *last;
	uint64_t	frame;
	int		err;		/* first callback error or -ENOMEM */
};

/* A TCP segment as found in a frame. */
struct pkt {
	struct tcp_endpoint src, dst;
	uint32_t	seq;
	uint8_t		flags;
	const uint8_t	*data;
	size_t		len;		/* payload bytes captured */
	size_t		declared;	/* payload bytes the IP header announces */
};

static bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

const char *tcp_endpoint_str(const struct tcp_endpoint *ep, char buf[TCP_ENDPOINT_STRLEN])
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(ep->family, ep->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, TCP_ENDPOINT_STRLEN, ep->family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 a, ep->port);
	return buf;
}

/* ------------------------------------------------------------- callbacks */

static void set_err(struct reader *r, int err)
{
	if (err < 0 && !r->err)
		r->err = err;
}

static void deliver(struct reader *r, struct conn *c, int d, const uint8_t *p, size_t len,
		    bool start)
{
	c->h[d].next += len;
	c->pub.dir[d].delivered += len;
	if (r->ops->data && !r->err)
		set_err(r, r->ops->data(r->ctx, &c->pub, d, p, len, start, r->frame));
}

static void free_held(struct half *h)
{
	while (h->held) {
		struct held *x = h->held;

		h->held = x->next;
		free(x);
	}
	h->held_bytes = 0;
}

static void declare_gap(struct reader *r, struct conn *c, int d)
{
	struct half *h = &c->h[d];
	uint32_t upto = h->held ? h->held->seq : h->end;

	if (h->broken)
		return;
	h->broken = true;
	c->pub.dir[d].gap = true;
	free_held(h);
	if (r->ops->gap && !r->err)
		set_err(r, r->ops->gap(r->ctx, &c->pub, d, c->pub.dir[d].delivered,
				       upto - h->next, r->frame));
}

/* No more packets for c: whatever was announced and never arrived is a gap. */
static void finish(struct reader *r, struct conn *c)
{
	if (c->closed)
		return;
	for (int d = 0; d < 2; d++) {
		struct half *h = &c->h[d];

		if (h->started && !h->broken && (h->held || seq_before(h->next, h->end)))
			declare_gap(r, c, d);
		free_held(h);
	}
	c->closed = true;
	if (r->ops->close && !r->err)
		set_err(r, r->ops->close(r->ctx, &c->pub, r->frame));
}

/* ------------------------------------------------------- sequence space */

/* Deliver the held segments that the stream has now reached. */
static void drain(struct reader *r, struct conn *c, int d)
{
	struct half *h = &c->h[d];

	while (h->held && !seq_before(h->next, h->held->seq) && !h->broken) {
		struct held *x = h->held;
		uint32_t dup = h->next - x->seq;

		h->held = x->next;
		h->held_bytes -= x->len;
		if (dup >= x->len) {
			c->pub.dir[d].retrans += x->len;
		} else {
			c->pub.dir[d].retrans += dup;
			deliver(r, c, d, x->data + dup, x->len - dup, x->start && !dup);
		}
		free(x);
	}
}

/* Keep len bytes at seq in front of *at till the stream reaches them; where the next piece goes. */
static struct held **hold(struct reader *r, struct conn *c, int d, struct held **at, uint32_t seq,
			  const uint8_t *p, size_t len, bool start)
{
	struct half *h = &c->h[d];
	struct held *x = malloc(sizeof(*x) + len);

	if (!x) {
		set_err(r, -ENOMEM);
		return at;
	}
	x->seq = seq;
	x->len = len;
	x->start = start;
	memcpy(x->data, p, len);
	x->next = *at;
	*at = x;
	h->held_bytes += len;
	if (h->held_bytes > HOLD_MAX)
		declare_gap(r, c, d);
	return &x->next;
}

/*
 * Deliver or hold the bytes of a segment that no segment captured before carried.
 * The first copy of each byte is the one kept, delivered or held (later copies
 * count as retransmitted), so that held pieces never overlap and a piece starts a
 * segment only if the first copy of its first byte did.
 */
static void take(struct reader *r, struct conn *c, int d, uint32_t seq, const uint8_t *p,
		 size_t len)
{
	struct half *h = &c->h[d];
	struct held **at = &h->held;	/* the first held piece not wholly before seq */
	bool start = true;

	while (len && !h->broken && !r->err) {
		size_t n = len, dup = 0;

		if (seq_before(seq, h->next)) {
			dup = h->next - seq;
		} else {
			while (*at && !seq_before(seq, (*at)->seq + (*at)->len))
				at = &(*at)->next;
			if (*at && !seq_before(seq, (*at)->seq))
				dup = (*at)->seq + (*at)->len - seq;
			else if (*at && (*at)->seq - seq < len)
				n = (*at)->seq - seq;
		}
		if (dup) {
			n = dup < len ? dup : len;
			c->pub.dir[d].retrans += n;
		} else if (seq == h->next) {
			deliver(r, c, d, p, n, start);
		} else {
			at = hold(r, c, d, at, seq, p, n, start);
		}
		seq += n;
		p += n;
		len -= n;
		start = false;
	}
	drain(r, c, d);
}

static bool half_done(const struct half *h)
{
	return h->fin_known && h->next == h->fin_seq;
}

static void segment(struct reader *r, struct conn *c, int d, const struct pkt *p)
{
	struct half *h = &c->h[d];
	struct tcp_dir_info *in = &c->pub.dir[d];
	uint32_t seq = p->seq;

	if (p->flags & TH_RST) {
		in->rst = true;
		finish(r, c);
		return;
	}
	if (p->flags & TH_SYN) {
		if (!in->syn) {
			in->syn = true;
			h->isn = seq;
			h->started = true;
			h->next = h->end = seq + 1;
		}
		seq++;	/* the SYN takes one sequence number before any data */
	}
	if (!h->started) {
		/* no SYN captured: the stream starts at the first byte seen */
		if (!p->declared && !(p->flags & TH_FIN))
			return;
		h->started = true;
		h->next = h->end = seq;
	}
	if (seq_before(h->end, seq + p->declared))
		h->end = seq + p->declared;
	if ((p->flags & TH_FIN) && !h->fin_known) {
		h->fin_known = true;
		h->fin_seq = seq + p->declared;
		in->fin = true;
	}
	if (p->len && !h->broken)
		take(r, c, d, seq, p->data, p->len);
	if (half_done(&c->h[0]) && half_done(&c->h[1]))
		finish(r, c);
}

/* ---------------------------------------------------------- connections */

static bool ep_eq(const struct tcp_endpoint *a, const struct tcp_endpoint *b)
{
	return a->family == b->family && a->port == b->port &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

static uint32_t ep_hash(const struct tcp_endpoint *ep)
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < 16; i++)
		h = (h ^ ep->addr[i]) * 16777619u;
	return (h ^ ep->port) * 16777619u;
}

/* Either direction hashes alike. */
static uint32_t bucket_of(const struct pkt *p)
{
	return (ep_hash(&p->src) ^ ep_hash(&p->dst)) % NBUCKETS;
}

/* The newest connection on these two endpoints; *dir is the packet's direction in it. */
static struct conn *lookup(struct reader *r, const struct pkt *p, int *dir)
{
	for (struct conn *c = r->bucket[bucket_of(p)]; c; c = c->hash_next) {
		if (ep_eq(&c->pub.ep[0], &p->src) && ep_eq(&c->pub.ep[1], &p->dst)) {
			*dir = 0;
			return c;
		}
		if (ep_eq(&c->pub.ep[1], &p->src) && ep_eq(&c->pub.ep[0], &p->dst)) {
			*dir = 1;
			return c;
		}
	}
	return NULL;
}

static struct conn *new_conn(struct reader *r, const struct pkt *p, bool from_passive)
{
	struct conn *c = calloc(1, sizeof(*c));
	uint32_t b = bucket_of(p);

	if (!c) {
		set_err(r, -ENOMEM);
		return NULL;
	}
	c->pub.id = ++r->st->conns;
	c->pub.ep[0] = from_passive ? p->dst : p->src;
	c->pub.ep[1] = from_passive ? p->src : p->dst;
	c->pub.first_frame = r->frame;
	c->hash_next = r->bucket[b];
	r->bucket[b] = c;
	if (r->last)
		r->last->next = c;
	else
		r->first = c;
	r->last = c;
	if (r->ops->open)
		set_err(r, r->ops->open(r->ctx, &c->pub, r->frame));
	return c;
}

static void on_tcp(struct reader *r, const struct pkt *p)
{
	int d = 0;
	struct conn *c = lookup(r, p, &d);
	bool syn_only = (p->flags & (TH_SYN | TH_ACK)) == TH_SYN;

	/* a new SYN on the same ports, not a retransmitted one, starts a new connection */
	if (c && syn_only && (c->closed || !c->pub.dir[d].syn || c->h[d].isn != p->seq)) {
		finish(r, c);
		c = NULL;
	}
	if (!c) {
		c = new_conn(r, p, (p->flags & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK));
		if (!c)
			return;
		lookup(r, p, &d);
	}
	if (!c->closed)
		segment(r, c, d, p);
}

/* ------------------------------------------------------------- decoding */

static void parse_tcp(struct reader *r, struct pkt *p, const uint8_t *t, size_t caplen,
		      size_t len, bool cut)
{
	size_t doff;

	if (caplen < 20) {
		r->st->truncated++;
		return;
	}
	doff = (size_t)(t[12] >> 4) * 4;
	if (doff < 20 || doff > len || doff > caplen) {
		if (doff > caplen && doff <= len)
			r->st->truncated++;
		else
			r->st->other++;
		return;
	}
	r->st->tcp++;
	p->src.port = be16(t);
	p->dst.port = be16(t + 2);
	p->seq = be32(t + 4);
	p->flags = t[13];
	p->data = t + doff;
	p->declared = len - doff;
	p->len = caplen - doff < p->declared ? caplen - doff : p->declared;
	if (cut)
		r->st->truncated++;
	on_tcp(r, p);
}

static void parse_ipv4(struct reader *r, const uint8_t *ip, size_t caplen)
{
	struct pkt p = { .src.family = AF_INET, .dst.family = AF_INET };
	size_t ihl, tot;

	if (caplen < 20 || ip[0] >> 4 != 4) {
		r->st->other++;
		return;
	}
	ihl = (size_t)(ip[0] & 0xf) * 4;
	tot = be16(ip + 2);
	if (ihl < 20 || tot < ihl || caplen < ihl) {
		r->st->other++;
		return;
	}
	if (ip[9] != IPPROTO_TCP) {
		r->st->other++;
		return;
	}
	if (be16(ip + 6) & 0x3fff) {	/* MF or a fragment offset */
		r->st->fragments++;
		return;
	}
	memcpy(p.src.addr, ip + 12, 4);
	memcpy(p.dst.addr, ip + 16, 4);
	/* Ethernet pads short frames: trust the IP length, not the capture length */
	parse_tcp(r, &p, ip + ihl, (caplen < tot ? caplen : tot) - ihl, tot - ihl, caplen < tot);
}

static void parse_ipv6(struct reader *r, const uint8_t *ip, size_t caplen)
{
	struct pkt p = { .src.family = AF_INET6, .dst.family = AF_INET6 };
	size_t off = 40, end;
	uint8_t next;

	if (caplen < 40 || ip[0] >> 4 != 6 || be16(ip + 4) == 0) {	/* 0: jumbogram */
		r->st->other++;
		return;
	}
	end = 40 + (size_t)be16(ip + 4);
	next = ip[6];
	for (;;) {
		size_t hlen;

		if (next == IPPROTO_TCP)
			break;
		if (next == IPPROTO_FRAGMENT) {
			r->st->fragments++;
			return;
		}
		if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING && next != IPPROTO_DSTOPTS &&
		    next != IPPROTO_AH) {
			r->st->other++;
			return;
		}
		if (off + 2 > caplen || off + 2 > end) {
			r->st->truncated++;
			return;
		}
		hlen = next == IPPROTO_AH ? ((size_t)ip[off + 1] + 2) * 4 : ((size_t)ip[off + 1] + 1) * 8;
		next = ip[off];
		off += hlen;
	}
	if (off > end || off > caplen) {
		r->st->other++;
		return;
	}
	memcpy(p.src.addr, ip + 8, 16);
	memcpy(p.dst.addr, ip + 24, 16);
	parse_tcp(r, &p, ip + off, (caplen < end ? caplen : end) - off, end - off, caplen < end);
}

static void parse_ip(struct reader *r, const uint8_t *ip, size_t caplen)
{
	if (caplen >= 1 && ip[0] >> 4 == 4)
		parse_ipv4(r, ip, caplen);
	else if (caplen >= 1 && ip[0] >> 4 == 6)
		parse_ipv6(r, ip, caplen);
	else
		r->st->other++;
}

static void parse_ethertype(struct reader *r, uint16_t type, const uint8_t *p, size_t caplen)
{
	/* 802.1Q, 802.1ad and the old QinQ type: skip the tags */
	while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) && caplen >= 4) {
		type = be16(p + 2);
		p += 4;
		caplen -= 4;
	}
	if (type == 0x0800 || type == 0x86dd)
		parse_ip(r, p, caplen);
	else
		r->st->other++;
}

/* BSD loopback: the address family in the capturing host's byte order. */
static void parse_null(struct reader *r, const uint8_t *p, size_t caplen)
{
	uint32_t af, sw;

	if (caplen < 4) {
		r->st->other++;
		return;
	}
	memcpy(&af, p, 4);
	sw = __builtin_bswap32(af);
	if (af == 2 || sw == 2 || af == 10 || sw == 10 || af == 24 || sw == 24 ||
	    af == 28 || sw == 28 || af == 30 || sw == 30)
		parse_ip(r, p + 4, caplen - 4);
	else
		r->st->other++;
}

static bool link_supported(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
		return true;
	}
	return false;
}

static void parse_frame(struct reader *r, int dlt, const uint8_t *p, size_t caplen)
{
	switch (dlt) {
	case DLT_EN10MB:
		if (caplen < 14)
			break;
		parse_ethertype(r, be16(p + 12), p + 14, caplen - 14);
		return;
	case DLT_LINUX_SLL:
		if (caplen < 16)
			break;
		parse_ethertype(r, be16(p + 14), p + 16, caplen - 16);
		return;
	case DLT_LINUX_SLL2:
		if (caplen < 20)
			break;
		parse_ethertype(r, be16(p), p + 20, caplen - 20);
		return;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		parse_ip(r, p, caplen);
		return;
	case DLT_NULL:
	case DLT_LOOP:
		parse_null(r, p, caplen);
		return;
	}
	r->st->other++;
}

static void free_all(struct reader *r)
{
	while (r->first) {
		struct conn *c = r->first;

		r->first = c->next;
		free_held(&c->h[0]);
		free_held(&c->h[1]);
		free(c);
	}
}

int tcp_streams_read(const char *path, const struct tcp_streams_ops *ops, void *ctx,
		     struct tcp_streams_stats *stats, char *err, size_t err_len)
{
	static const struct tcp_streams_ops none;
	struct tcp_streams_stats local;
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct reader *r;
	struct pcap_pkthdr *hdr;
	const u_char *data;
	FILE *f;
	pcap_t *pc;
	int dlt, ret = 0, rc;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		ret = -errno;
		snprintf(err, err_len, "%s", strerror(-ret));
		return ret;
	}
	pc = pcap_fopen_offline(f, ebuf);	/* owns f from here, on success only */
	if (!pc) {
		if (f != stdin)
			fclose(f);
		snprintf(err, err_len, "%s", ebuf);
		return -EINVAL;
	}
	dlt = pcap_datalink(pc);
	if (!link_supported(dlt)) {
		const char *name = pcap_datalink_val_to_name(dlt);

		snprintf(err, err_len, "unsupported link type %s (%d)", name ? name : "?", dlt);
		pcap_close(pc);
		return -EPROTONOSUPPORT;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		pcap_close(pc);
		snprintf(err, err_len, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	r->ops = ops ? ops : &none;
	r->ctx = ctx;
	r->st = stats;

	while (!r->err && (rc = pcap_next_ex(pc, &hdr, &data)) != PCAP_ERROR_BREAK) {
		if (rc == PCAP_ERROR) {
			snprintf(err, err_len, "%s", pcap_geterr(pc));
			ret = -EIO;
			break;
		}
		if (rc != 1)
			continue;
		r->frame = ++stats->frames;
		parse_frame(r, dlt, data, hdr->caplen);
	}
	for (struct conn *c = r->first; c; c = c->next)
		finish(r, c);
	if (r->err && !ret) {
		ret = r->err;
		snprintf(err, err_len, "%s", strerror(-ret));
	}
	free_all(r);
	free(r);
	pcap_close(pc);
	return ret;
}
