// SPDX-License-Identifier: MIT
/* iwxd's SCTP: the stack, its UDP socket, its clock, its sockets' readiness (sctp_io.h). */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <usrsctp.h>

#include "daemon.h"
#include "fastpath_xdp.h"
#include "log.h"
#include "sctp_io.h"
#include "sctp_udp.h"
#include "sctp_xsk.h"
#include "sctp_xsk.skel.h"
#include "util/clock.h"

/*
 * Peers with a path at once: each costs a little, kept. One pool for the daemon: a path
 * to a silent address goes with its failed set-up, and a user's set-ups in progress hold
 * --sctp-connects-per-user at most (cm.c).
 */
#define MAX_PATHS	1024
#define INPUT_BUDGET	256	/* datagrams per turn */
#define LINGER_MS	30000	/* ticks after the last socket: its association may still end */
/*
 * A path nothing went through for this long goes: a live association sends a HEARTBEAT
 * every 30 s on an idle path (RFC 4960 §8.3), and one whose peer is silent gives up
 * within 5 minutes (Association.Max.Retrans 10 at RTO.Max 60 s, at most 10 minutes).
 */
#define PATH_IDLE_MS	(11 * 60 * 1000)
#define EXPIRE_EVERY_MS	10000
#define XSK_IFACES	16	/* as many as the fast path attaches to */
#define XSK_QUEUES	8	/* AF_XDP sockets per interface, one per receive queue */

/* One AF_XDP socket and its watch. */
struct xsk_queue {
	struct watch		w;
	struct iwx_sctp_xsk	*xsk;
};

/* An interface whose SCTP datagrams go through AF_XDP sockets, its program, its xskmap. */
struct xsk_iface {
	int			ifindex;
	char			name[IF_NAMESIZE];
	struct sctp_xsk_bpf	*skel;
	struct xdp_program	*xdp;
	uint32_t		n;
	struct xsk_queue	q[XSK_QUEUES];
};

struct sctp_io {
	struct watch		udp_w;
	struct iwx_sctp_udp	*udp;
	struct xsk_iface	ifs[XSK_IFACES];
	uint32_t		n_ifs;
	uint16_t		port;
	uint32_t		users;		/* sctp_io_hold's */
	uint64_t		tick_ms;
	uint64_t		quiet_ms;	/* the last went then; its association may still be ending */
	uint64_t		expire_ms;	/* idle paths are looked for then */
};

static struct loop *upcall_loop;	/* usrsctp's upcalls queue watches on it */

static void upcall(struct socket *so, void *arg, int flags)
{
	(void)so;
	(void)flags;
	watch_ready(upcall_loop, arg);	/* inside a usrsctp call: only note it */
}

static void on_udp(struct iwxd *d, struct watch *w, uint32_t events)
{
	(void)w;
	(void)events;
	if (iwx_sctp_udp_input(d->sctp->udp, INPUT_BUDGET) == INPUT_BUDGET)
		watch_ready(&d->loop, &d->sctp->udp_w);	/* more, after the others' turn */
}

int sctp_io_start(struct iwxd *d)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6, .sin6_port = htons(d->o.sctp_port) };
	struct sctp_io *s;
	int err;

	if (!d->o.sctp_port)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* [::] takes IPv4 too, as mapped addresses (ipv6(7), bindv6only 0) */
	s->udp = iwx_sctp_udp_open((struct sockaddr *)&any, sizeof(any), MAX_PATHS);
	if (!s->udp) {
		err = -errno;
		free(s);
		return err;
	}
	s->port = d->o.sctp_port;
	s->udp_w.fd = iwx_sctp_udp_fd(s->udp);
	s->udp_w.fn = on_udp;
	err = iwx_sctp_init();
	if (!err)
		err = watch_add(&d->loop, &s->udp_w, EPOLLIN);
	if (err) {
		iwx_sctp_udp_close(s->udp);
		free(s);
		return err;
	}
	upcall_loop = &d->loop;
	d->sctp = s;
	return 0;
}

void sctp_io_stop(struct iwxd *d)
{
	if (!d->sctp)
		return;
	while (d->sctp->n_ifs)
		sctp_io_xsk_detach(d, d->sctp->ifs[0].ifindex);
	watch_del(&d->loop, &d->sctp->udp_w);
	iwx_sctp_finish();
	iwx_sctp_udp_close(d->sctp->udp);
	free(d->sctp);
	d->sctp = NULL;
}

bool sctp_io_on(const struct iwxd *d)
{
	return d->sctp;
}

void sctp_io_watch(struct iwxd *d, struct socket *so, struct watch *w)
{
	w->fd = -1;
	usrsctp_set_upcall(so, upcall, w);
	watch_ready(&d->loop, w);
	loop_due(&d->loop, iwx_now_ms());
}

void sctp_io_unwatch(struct iwxd *d, struct socket *so, struct watch *w)
{
	if (so)
		usrsctp_set_upcall(so, NULL, NULL);
	watch_del(&d->loop, w);
}

void sctp_io_hold(struct iwxd *d)
{
	d->sctp->users++;
}

void sctp_io_release(struct iwxd *d)
{
	if (!--d->sctp->users)
		d->sctp->quiet_ms = iwx_now_ms() + LINGER_MS;
}

/* The path usrsctp knows so's peer by: ours (sctp_io_path, or a datagram's sender). */
static const struct iwx_sctp_udp_path *path_of(struct socket *so, uint16_t *port)
{
	struct sockaddr *addrs = NULL;
	const struct sockaddr_conn *sc;
	const struct iwx_sctp_udp_path *p;

	if (usrsctp_getpaddrs(so, 0, &addrs) < 1)
		return NULL;
	sc = (const struct sockaddr_conn *)addrs;
	/* the token usrsctp knows the peer by: its path, if it still has one (all are UDP's) */
	p = (const struct iwx_sctp_udp_path *)iwx_sctp_path_of(sc->sconn_addr);
	if (port)
		*port = sc->sconn_port;
	usrsctp_freepaddrs(addrs);
	return p;
}

int sctp_io_peer(struct socket *so, struct sockaddr_storage *peer)
{
	const struct sockaddr_in6 *from;
	uint16_t port;
	const struct iwx_sctp_udp_path *p = path_of(so, &port);

	if (!p)
		return -ENOTCONN;
	from = (const struct sockaddr_in6 *)&p->peer;
	memset(peer, 0, sizeof(*peer));
	if (IN6_IS_ADDR_V4MAPPED(&from->sin6_addr)) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)peer;

		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, &from->sin6_addr.s6_addr[12], 4);
		s4->sin_port = port;
	} else {
		*(struct sockaddr_in6 *)peer = *from;
		((struct sockaddr_in6 *)peer)->sin6_port = port;
	}
	return 0;
}

struct iwx_sctp_path *sctp_io_path(struct iwxd *d, const struct sockaddr_storage *addr)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_port = htons(d->sctp->port) };

	if (addr->ss_family == AF_INET) {
		/* as the dual-stack socket sees an IPv4 peer: ::ffff:a.b.c.d */
		to.sin6_addr.s6_addr[10] = to.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&to.sin6_addr.s6_addr[12], &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else {
		to.sin6_addr = ((const struct sockaddr_in6 *)addr)->sin6_addr;
		to.sin6_scope_id = ((const struct sockaddr_in6 *)addr)->sin6_scope_id;
	}
	return iwx_sctp_udp_path(d->sctp->udp, (struct sockaddr *)&to, sizeof(to));
}

void sctp_io_path_put(struct iwx_sctp_path *path)
{
	iwx_sctp_udp_put(path);
}

void sctp_io_timers(struct iwxd *d, uint64_t now)
{
	struct sctp_io *s = d->sctp;

	if (s && now >= s->expire_ms) {
		iwx_sctp_udp_expire(s->udp, now, PATH_IDLE_MS);
		s->expire_ms = now + EXPIRE_EVERY_MS;
	}
	/* usrsctp has no next deadline to ask: a fixed tick, only while it may matter */
	if (!s || (!s->users && now >= s->quiet_ms))
		return;
	if (now >= s->tick_ms) {
		iwx_sctp_tick();
		s->tick_ms = now + IWX_SCTP_TICK_MS;
	}
	loop_due(&d->loop, s->tick_ms);
}

/* ------------------------------------------------------------------ AF_XDP */

static void on_xsk(struct iwxd *d, struct watch *w, uint32_t events)
{
	struct xsk_queue *q = (struct xsk_queue *)w;	/* w first */

	(void)events;
	if (iwx_sctp_xsk_input(q->xsk, INPUT_BUDGET) == INPUT_BUDGET)
		watch_ready(&d->loop, w);
}

/* The interface's receive queues, as sysfs lists them (in iwxd's network namespace). */
static uint32_t rx_queues(const char *ifname)
{
	char path[64];
	uint32_t n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (!dir)
		return 1;
	for (struct dirent *e; (e = readdir(dir));)
		n += !strncmp(e->d_name, "rx-", 3);
	closedir(dir);
	return n ? n : 1;
}

static void xsk_iface_close(struct iwxd *d, struct xsk_iface *f)
{
	for (uint32_t i = 0; i < f->n; i++) {
		watch_del(&d->loop, &f->q[i].w);
		iwx_sctp_xsk_close(f->q[i].xsk);
	}
	f->n = 0;
	if (f->xdp)
		fastpath_xdp_detach(f->xdp, f->ifindex);
	sctp_xsk_bpf__destroy(f->skel);
}

static int xsk_iface_open(struct iwxd *d, struct xsk_iface *f)
{
	uint32_t queues = rx_queues(f->name);
	const void *elf;
	size_t len;
	int err;

	if (queues > XSK_QUEUES)
		return -E2BIG;
	/* an object per interface: its own xskmap, indexed by queue */
	f->skel = sctp_xsk_bpf__open();
	if (!f->skel)
		return -errno;
	f->skel->rodata->sctp_port = htons(d->sctp->port);
	err = sctp_xsk_bpf__load(f->skel);
	if (!err) {
		elf = sctp_xsk_bpf__elf_bytes(&len);
		err = fastpath_xdp_attach(f->skel->obj, elf, len, "iwx_sctp_xsk", f->ifindex, &f->xdp);
	}
	for (uint32_t i = 0; !err && i < queues; i++) {
		struct xsk_queue *q = &f->q[i];

		q->xsk = iwx_sctp_xsk_open(d->sctp->udp, f->name, i,
					   bpf_map__fd(f->skel->maps.iwx_xsks));
		if (!q->xsk) {
			err = -errno;
			break;
		}
		f->n++;
		q->w.fd = iwx_sctp_xsk_fd(q->xsk);
		q->w.fn = on_xsk;
		err = watch_add(&d->loop, &q->w, EPOLLIN);
		if (err) {
			iwx_sctp_xsk_close(q->xsk);
			f->n--;
		}
	}
	return err;
}

void sctp_io_xsk_attach(struct iwxd *d, int ifindex, const char *ifname)
{
	struct sctp_io *s = d->sctp;
	struct xsk_iface *f;
	int err;

	if (!s || s->n_ifs == XSK_IFACES)
		return;
	f = &s->ifs[s->n_ifs];
	memset(f, 0, sizeof(*f));
	f->ifindex = ifindex;
	snprintf(f->name, sizeof(f->name), "%s", ifname);
	err = xsk_iface_open(d, f);
	if (err) {
		xsk_iface_close(d, f);
		if (err == -E2BIG)
			log_warn("sctp: no AF_XDP on %s (more than %d receive queues), its SCTP stays "
				 "in the UDP socket", f->name, XSK_QUEUES);
		else
			log_warn("sctp: no AF_XDP on %s, its SCTP stays in the UDP socket: %s",
				 f->name, strerror(-err));
		return;
	}
	s->n_ifs++;
	log_info("sctp: SCTP in UDP port %u on %s through AF_XDP (%u queue%s)", s->port, f->name,
		 f->n, f->n == 1 ? "" : "s");
}

void sctp_io_xsk_detach(struct iwxd *d, int ifindex)
{
	struct sctp_io *s = d->sctp;

	for (uint32_t i = 0; s && i < s->n_ifs; i++)
		if (s->ifs[i].ifindex == ifindex) {
			xsk_iface_close(d, &s->ifs[i]);
			s->ifs[i] = s->ifs[--s->n_ifs];
			return;
		}
}

void sctp_io_flush(struct iwxd *d)
{
	for (uint32_t i = 0; d->sctp && i < d->sctp->n_ifs; i++)
		for (uint32_t k = 0; k < d->sctp->ifs[i].n; k++)
			iwx_sctp_xsk_flush(d->sctp->ifs[i].q[k].xsk);
}

uint32_t sctp_io_xsk_queues(const struct iwxd *d, int ifindex)
{
	for (uint32_t i = 0; d->sctp && i < d->sctp->n_ifs; i++)
		if (d->sctp->ifs[i].ifindex == ifindex)
			return d->sctp->ifs[i].n;
	return 0;
}

bool sctp_io_via_xsk(struct socket *so)
{
	const struct iwx_sctp_udp_path *p = path_of(so, NULL);

	return p && p->route.xsk;
}

void sctp_io_status(const struct iwxd *d, struct iwx_ipc_status *st)
{
	const struct iwx_sctp_stats *g = iwx_sctp_stats();

	if (!d->sctp)
		return;
	st->sctp.bad_crc = g->bad_crc;
	st->sctp.placed_chunks = g->placed_chunks;
	st->sctp.placed_bytes = g->placed_bytes;
	st->sctp.udp_dropped = iwx_sctp_udp_dropped(d->sctp->udp);
	st->sctp.no_path = g->no_path;
	st->sctp.paths = iwx_sctp_udp_paths(d->sctp->udp);
	for (uint32_t i = 0; i < d->sctp->n_ifs; i++)
		for (uint32_t k = 0; k < d->sctp->ifs[i].n; k++) {
			const struct iwx_sctp_xsk_stats *x = iwx_sctp_xsk_stats(d->sctp->ifs[i].q[k].xsk);

			st->sctp.xsk_rx += x->rx;
			st->sctp.xsk_tx += x->tx;
			st->sctp.xsk_dropped += x->rx_dropped + x->tx_dropped;
		}
}
