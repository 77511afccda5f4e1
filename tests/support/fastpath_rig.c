// SPDX-License-Identifier: MIT
/* The fast path's programs driven alone (fastpath_rig.h). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/inet_csum.h"

#include "fastpath_rig.h"

/* ------------------------------------------------------------- the connection */

struct accepting {
	int	lfd, sfd;
};

static int accept_in_b(void *arg)
{
	struct accepting *a = arg;

	a->sfd = accept(a->lfd, NULL, NULL);
	return a->sfd < 0 ? -errno : 0;
}

struct sock_seq {
	struct fastpath_bpf	*skel;
	int			fd;
	uint32_t		rcv_nxt;
};

/* rcv_nxt of a socket (in the namespace of the call), by the program iwxd asks (nothing
 * was sent yet: its snd_nxt is the same). */
static int read_rcv_nxt(void *arg)
{
	struct sock_seq *ss = arg;
	struct bpf_link *l = bpf_program__attach_iter(ss->skel->progs.iwx_anchor, NULL);
	uint32_t seq[2];
	uint64_t cookie;
	socklen_t len = sizeof(cookie);
	int it, n;

	if (!l || getsockopt(ss->fd, SOL_SOCKET, SO_COOKIE, &cookie, &len)) {
		bpf_link__destroy(l);
		return -EIO;
	}
	ss->skel->bss->anchor_cookie = cookie;
	it = bpf_iter_create(bpf_link__fd(l));
	n = it < 0 ? -1 : read(it, seq, sizeof(seq));
	if (it >= 0)
		close(it);
	bpf_link__destroy(l);
	ss->rcv_nxt = seq[1];
	return n == sizeof(seq) && seq[0] == seq[1] ? 0 : -EIO;
}

/* b's address, port 0, in ss: its length */
static socklen_t b_addr(struct sockaddr_storage *ss, bool v6)
{
	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *s = (void *)ss;

		s->sin6_family = AF_INET6;
		inet_pton(AF_INET6, NETNS_B6, &s->sin6_addr);
		return sizeof(*s);
	}
	struct sockaddr_in *s = (void *)ss;

	s->sin_family = AF_INET;
	inet_pton(AF_INET, NETNS_B4, &s->sin_addr);
	return sizeof(*s);
}

/* The key as the peer's packets carry it: a's address and port to b's. */
static void key_of(struct fp_rig_conn *c, bool v6)
{
	struct sockaddr_storage cs, ss;
	socklen_t l = sizeof(cs);

	memset(&c->key, 0, sizeof(c->key));
	getsockname(c->cfd, (void *)&cs, &l);
	l = sizeof(ss);
	getsockname(c->sfd, (void *)&ss, &l);
	if (v6) {
		const struct sockaddr_in6 *a = (void *)&cs, *b = (void *)&ss;

		memcpy(c->key.saddr, &a->sin6_addr, 16);
		memcpy(c->key.daddr, &b->sin6_addr, 16);
		c->key.sport = a->sin6_port;
		c->key.dport = b->sin6_port;
		c->key.v6 = 1;
	} else {
		const struct sockaddr_in *a = (void *)&cs, *b = (void *)&ss;

		c->key.saddr[0] = a->sin_addr.s_addr;
		c->key.daddr[0] = b->sin_addr.s_addr;
		c->key.sport = a->sin_port;
		c->key.dport = b->sin_port;
	}
}

int fp_rig_connect(const struct netns_pair *ns, struct fastpath_bpf *skel, bool v6,
		   struct fp_rig_conn *c)
{
	struct sockaddr_storage ss;
	struct accepting acc;
	struct sock_seq here = { .skel = skel }, peer = { .skel = skel };
	int fam = v6 ? AF_INET6 : AF_INET, err;
	socklen_t len = b_addr(&ss, v6), l;

	memset(c, 0, sizeof(*c));
	c->lfd = netns_socket(ns->b, fam, SOCK_STREAM);
	c->cfd = netns_socket(ns->a, fam, SOCK_STREAM);
	c->sfd = -1;
	if (c->lfd < 0 || c->cfd < 0)
		return c->lfd < 0 ? c->lfd : c->cfd;
	if (bind(c->lfd, (void *)&ss, len) || listen(c->lfd, 1) ||
	    getsockname(c->lfd, (void *)&ss, &len) || connect(c->cfd, (void *)&ss, len))
		return -errno;
	acc.lfd = c->lfd;
	if ((err = netns_call(ns->b, accept_in_b, &acc)))
		return err;
	c->sfd = acc.sfd;
	key_of(c, v6);
	l = sizeof(c->cookie);
	if (getsockopt(c->sfd, SOL_SOCKET, SO_COOKIE, &c->cookie, &l))
		return -errno;
	here.fd = c->sfd;
	peer.fd = c->cfd;
	if ((err = netns_call(ns->b, read_rcv_nxt, &here)) ||
	    (err = netns_call(ns->a, read_rcv_nxt, &peer)))
		return err;
	c->rcv_nxt = here.rcv_nxt;
	c->ack = peer.rcv_nxt;
	l = sizeof(c->tsval);
	if (getsockopt(c->cfd, IPPROTO_TCP, TCP_TIMESTAMP, &c->tsval, &l))
		return -errno;
	return 0;
}

void fp_rig_close(struct fp_rig_conn *c)
{
	for (int *fd = (int[]){ c->lfd, c->cfd, c->sfd }, i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	c->lfd = c->cfd = c->sfd = -1;
}

/* ----------------------------------------------------------------- the maps */

int fp_rig_memory(struct fastpath_bpf *skel, uint32_t idx, uint32_t elems, uint8_t **mem)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_mem", 4, 4096, elems, &o), err;

	if (fd < 0)
		return fd;
	*mem = mmap(NULL, (size_t)elems * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mem == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.iwx_fp_mems), &idx, &fd, 0)) {
		err = -errno;
		munmap(*mem, (size_t)elems * 4096);
		goto fail;
	}
	return fd;
fail:
	*mem = NULL;
	close(fd);
	return err;
}

struct iwx_fp_slot *fp_rig_slots(struct fastpath_bpf *skel, size_t *len)
{
	void *s;

	*len = (size_t)bpf_map__value_size(skel->maps.iwx_fp_slots) *
	       bpf_map__max_entries(skel->maps.iwx_fp_slots);
	*len = (*len + 4095) & ~(size_t)4095;
	s = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(skel->maps.iwx_fp_slots), 0);
	return s == MAP_FAILED ? NULL : s;
}

/* ---------------------------------------------------------------- the frames */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

size_t fp_rig_frame(uint8_t *b, size_t cap, const struct iwx_fp_key *key,
		    const struct fp_rig_seg *s, const uint8_t *payload, size_t plen)
{
	const bool v6 = key->v6;
	const size_t iplen = v6 ? 40 : 20, tcplen = s->ts ? 32 : 20;
	uint8_t *p = b, *ip, *tcp;
	uint32_t sum;
	uint16_t c;

	if (14 + 4 + iplen + tcplen + plen > cap)
		return 0;
	memset(b, 0, 64);
	memcpy(p, s->dst_mac, 6);
	p += 12;	/* the source MAC address: zero */
	if (s->vlan) {
		memcpy(p, "\x81\x00\x00\x2a", 4);
		p += 4;
	}
	memcpy(p, v6 ? "\x86\xdd" : "\x08\x00", 2);
	ip = p + 2;
	tcp = ip + iplen;
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (tcplen + plen) >> 8;
		ip[5] = tcplen + plen;
		ip[6] = IPPROTO_TCP;
		ip[7] = 64;
		memcpy(ip + 8, key->saddr, 16);
		memcpy(ip + 24, key->daddr, 16);
		sum = iwx_csum_add(0, ip + 8, 32);
	} else {
		ip[0] = 0x45;
		ip[2] = (20 + tcplen + plen) >> 8;
		ip[3] = 20 + tcplen + plen;
		ip[8] = 64;
		ip[9] = IPPROTO_TCP;
		memcpy(ip + 12, &key->saddr[0], 4);
		memcpy(ip + 16, &key->daddr[0], 4);
		ip[10] = ip[11] = 0;
		c = iwx_csum_fold(iwx_csum_add(0, ip, 20));
		ip[10] = c >> 8;
		ip[11] = c;
		sum = iwx_csum_add(0, ip + 12, 8);
	}
	memset(tcp, 0, tcplen);
	memcpy(tcp, &key->sport, 2);
	memcpy(tcp + 2, &key->dport, 2);
	put32(tcp + 4, s->seq);
	put32(tcp + 8, s->ack);
	tcp[12] = (tcplen / 4) << 4;
	tcp[13] = s->flags;
	tcp[14] = 0xff;
	tcp[15] = 0xff;
	if (s->ts) {
		memcpy(tcp + 20, "\x01\x01\x08\x0a", 4);	/* NOP, NOP, timestamps (RFC 7323 §3) */
		put32(tcp + 24, s->tsval);
	}
	memcpy(tcp + tcplen, payload, plen);
	sum += IPPROTO_TCP + tcplen + plen;
	c = iwx_csum_fold(iwx_csum_add(sum, tcp, tcplen + plen));
	tcp[16] = c >> 8;
	tcp[17] = c;
	return (tcp - b) + tcplen + plen;
}

int fp_rig_run(struct bpf_program *prog, const uint8_t *frame, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = len);

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &run))
		return -1000;
	return (int)run.retval;
}
