// SPDX-License-Identifier: MIT
/*
 * The fast path, iwxd's side (fastpath.h). At TC ingress the program is attached as a
 * tcx link, which lives as long as iwxd holds it: when iwxd exits or is killed, the
 * kernel detaches it. At XDP, libxdp's attachment outlives iwxd (fastpath_xdp.c). A
 * connection's entry also names its socket's cookie, so that a program left anywhere
 * places nothing for a socket iwxd no longer has.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "daemon.h"
#include "fastpath.h"
#include "fastpath.skel.h"
#include "fastpath_maps.h"
#include "fastpath_xdp.h"
#include "iface_props.h"
#include "sctp_io.h"
#include "shm.h"
#include "util/clock.h"

#define MAX_IFACES	16
#define TCX_INGRESS	46	/* enum bpf_attach_type's BPF_TCX_INGRESS (Linux 6.6), newer than our headers */
#define QUIESCE_SPINS	1000000	/* sched_yield()s, seconds: programs run for microseconds */
/* Wake-ups (fastpath_maps.h): iwxd sleeps on a followed socket's low-water mark once a turn
 * finds this many records new, with the mark at a quarter of the receive buffer, at most
 * LOWAT_MAX, and following the buffer as TCP grows it (each tick); a lazy connection
 * whose engine read nothing for a tick is read at once. */
#define LAZY_RECORDS	32
#define LOWAT_MIN	(64 << 10)
#define LOWAT_MAX	(2048 << 10)
#define LAZY_TICK_MS	5

struct iface {
	int		ifindex;
	char		name[IF_NAMESIZE];
	uint32_t	mode;
	uint32_t	flags;		/* IWX_FP_ATTACH_* */
	int		link;		/* TC: the tcx link */
	struct xdp_program *xdp;	/* XDP: the program libxdp attached */
};

/* A memory programs reach (an arena, a shared memory): its place in iwx_fp_mems. */
struct mem_ref {
	uint32_t	map_id;		/* 0: free */
	uint32_t	regions;	/* published regions in it */
	bool		reaping;	/* being removed on the reaper's thread */
	struct user	*user;		/* its owner's, while regions (shares.h) */
};

/* A connection the programs follow: iwxd's side of its slot (its queue pair points here). */
struct fp_follow {
	struct vqp	*q;		/* NULL: the slot is free */
	struct user	*user;		/* q's owner's (shares.h) */
	uint32_t	slot;
	bool		lazy;		/* iwxd sleeps on the socket's low-water mark */
	bool		rung_stay;	/* ... lazy, rung for a message's end only */
	uint32_t	head;		/* the slot's records written, at the last turn */
	uint32_t	seen;		/* lazy: the engine's read position at the last tick */
	uint64_t	tick_ms;	/* lazy: when it is looked at again */
	int		mark;		/* lazy: its SO_RCVLOWAT */
};

struct fastpath {
	struct fastpath_bpf	*skel;
	struct bpf_link		*anchor;	/* iter/tcp: a socket's read position */
	struct bpf_link		*accepted;	/* tp_btf: what TCP accepted, as iwxd reads it */
	struct ring_buffer	*bells;		/* slots whose iwxd the programs wake */
	struct watch		bells_w;
	struct iwx_fp_slot	*slots;
	size_t			slots_len;
	struct fp_follow	*follows;	/* by slot */
	uint32_t		nslots;
	uint32_t		nfollowed;	/* ... of them taken */
	struct iwx_fp_cpu	*cpus;
	size_t			cpus_len;
	uint32_t		ncpus;
	struct mem_ref		*mems;
	uint32_t		nmems;
	uint32_t		nstags;		/* STags published, of nstags_max */
	uint32_t		nstags_max;
	int			reap_pipe[2];	/* memories' indices to remove: loop -> reaper */
	pthread_t		reaper;
	struct iface		ifaces[MAX_IFACES];
	uint32_t		nifaces;
	/* said once until it passes: a client may register or connect in a loop */
	bool			regions_warned;	/* a region left to iwxd */
	bool			conns_warned;	/* a connection not followed: no slot */
};

/* Log a shortage once until it passes (*said, cleared by the caller when it does). */
#define warn_once(said, ...)		\
	do {				\
		if (!*(said))		\
			log_warn(__VA_ARGS__);	\
		*(said) = true;		\
	} while (0)

/* ------------------------------------------------------------- quiescence */

/* Every program that started before now has finished (fastpath.h: exact ends). */
static void quiesce(struct fastpath *fp)
{
	for (uint32_t i = 0; i < fp->ncpus; i++) {
		uint32_t s = __atomic_load_n(&fp->cpus[i].seq, __ATOMIC_SEQ_CST);

		/* a program runs with bottom halves off, for microseconds: a bound for the odd case */
		for (uint32_t n = 0; (s & 1) && __atomic_load_n(&fp->cpus[i].seq, __ATOMIC_ACQUIRE) == s;
		     n++) {
			if (n == QUIESCE_SPINS) {
				log_err("fast path: CPU %u stays in a program: going on without it", i);
				break;
			}
			sched_yield();
		}
	}
}

/* ----------------------------------------------------------------- memories */

static void *reap(void *arg)
{
	struct fastpath *fp = arg;
	uint32_t i;

	/* deleting from a map of maps waits for an RCU grace period (milliseconds): not on the loop */
	while (read(fp->reap_pipe[0], &i, sizeof(i)) == sizeof(i)) {
		bpf_map_delete_elem(bpf_map__fd(fp->skel->maps.iwx_fp_mems), &i);
		__atomic_store_n(&fp->mems[i].map_id, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&fp->mems[i].reaping, false, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The index of memory a, of client c, in iwx_fp_mems, put there if it is not and c's
 * user has room (shares.h); -1 when it cannot be.
 */
static int64_t mem_get(struct iwxd *d, struct client *c, const struct iwx_arena *a)
{
	struct fastpath *fp = d->fp;
	int64_t free_at = -1;
	uint32_t used = 0;

	if (!a->bpf || !a->map_id)
		return -1;
	for (uint32_t i = 0; i < fp->nmems; i++) {
		if (__atomic_load_n(&fp->mems[i].reaping, __ATOMIC_ACQUIRE)) {
			used++;
			continue;
		}
		if (fp->mems[i].map_id == a->map_id) {
			if (!fp->mems[i].regions) {	/* left there when the reaper was not told */
				fp->mems[i].user = c->user;
				c->user->fp[SHARE_FP_MEMS - SHARE_FP_FIRST]++;
			}
			return i;
		}
		if (!fp->mems[i].map_id && free_at < 0)
			free_at = i;
		used += fp->mems[i].map_id != 0;
	}
	if (free_at < 0) {
		warn_once(&fp->regions_warned, "fast path: %u memories reached already: regions are "
			  "left to iwxd (said once)", fp->nmems);
		return -1;
	}
	if (!share_room(d, c->user, SHARE_FP_MEMS, 1, used, fp->nmems)) {
		share_refuse(d, c, SHARE_FP_MEMS, fp->nmems, "its regions there are left to iwxd");
		return -1;
	}
	if (bpf_map_update_elem(bpf_map__fd(fp->skel->maps.iwx_fp_mems), &(uint32_t){ free_at },
				&a->fd, BPF_ANY)) {
		warn_once(&fp->regions_warned, "fast path: memory of map %u not reachable: %m (said "
			  "once)", a->map_id);
		return -1;
	}
	fp->mems[free_at] = (struct mem_ref){ .map_id = a->map_id, .user = c->user };
	c->user->fp[SHARE_FP_MEMS - SHARE_FP_FIRST]++;
	return free_at;
}

static void mem_put(struct fastpath *fp, uint32_t i)
{
	if (--fp->mems[i].regions)
		return;
	fp->mems[i].user->fp[SHARE_FP_MEMS - SHARE_FP_FIRST]--;
	fp->mems[i].reaping = true;
	if (write(fp->reap_pipe[1], &i, sizeof(i)) != sizeof(i)) {
		log_warn("fast path: memory %u stays reachable (no region in it): %m", i);
		fp->mems[i].reaping = false;
	}
}

/* ------------------------------------------------------------------- regions */

/* The memory mr lies in, as iwxd maps it: its client's (*owner) arena, or a shared memory. */
static const struct iwx_arena *backing(struct iwxd *d, const struct iwx_region *mr,
				       struct client **owner)
{
	for (struct client *c = d->clients; c; c = c->next) {
		uintptr_t a = (uintptr_t)mr->addr, base = (uintptr_t)c->arena.base;

		if (c->ident != mr->owner)
			continue;
		*owner = c;
		if (c->arena.base && a >= base && a - base <= c->arena.size &&
		    mr->desc.len <= c->arena.size - (a - base))
			return &c->arena;
		return shm_backing(c, mr->addr, mr->desc.len);
	}
	return NULL;
}

static void unpublish(struct fastpath *fp, uint32_t stag)
{
	struct iwx_fp_stag st;
	int fd = bpf_map__fd(fp->skel->maps.iwx_fp_stags);

	if (bpf_map_lookup_elem(fd, &stag, &st))
		return;
	bpf_map_delete_elem(fd, &stag);
	quiesce(fp);	/* no program places through it any more */
	fp->nstags--;
	fp->mems[st.mem].user->fp[SHARE_FP_STAGS - SHARE_FP_FIRST]--;
	mem_put(fp, st.mem);
}

static void publish(struct iwxd *d, const struct iwx_region *mr)
{
	struct fastpath *fp = d->fp;
	const struct iwx_arena *a;
	struct iwx_fp_stag st = { .desc = mr->desc };
	struct client *c = NULL;
	int64_t i;

	if (!mr->desc.valid || !mr->desc.len || !(a = backing(d, mr, &c)))
		return;	/* iwxd places it */
	if (!share_room(d, c->user, SHARE_FP_STAGS, 1, fp->nstags, fp->nstags_max)) {
		share_refuse(d, c, SHARE_FP_STAGS, fp->nstags_max, "left to iwxd");
		return;
	}
	i = mem_get(d, c, a);
	if (i < 0)
		return;
	st.mem = i;
	st.off = mr->addr - (uint8_t *)a->base;
	if (bpf_map_update_elem(bpf_map__fd(fp->skel->maps.iwx_fp_stags), &st.desc.stag, &st, BPF_ANY)) {
		warn_once(&fp->regions_warned, "fast path: STag %#x not published: %m (said once)",
			  st.desc.stag);
		if (!fp->mems[i].regions) {
			fp->mems[i].regions = 1;
			mem_put(fp, i);
		}
		return;
	}
	fp->mems[i].regions++;
	fp->nstags++;
	c->user->fp[SHARE_FP_STAGS - SHARE_FP_FIRST]++;
	fp->regions_warned = false;
}

/* The programs see a region as iwxd does, once the change is made. */
void fastpath_region_changed(struct iwxd *d, uint32_t gone, const struct iwx_region *now)
{
	if (gone)
		unpublish(d->fp, gone);
	if (now)
		publish(d, now);
}

static int publish_each(const struct iwx_region *mr, void *ctx)
{
	publish(ctx, mr);
	return 0;
}

/* ------------------------------------------------------------------ wake-ups */

static void lowat(struct vqp *q, int bytes)
{
	/* TCP looks at its queue again: what waits there wakes the loop (level-triggered) */
	setsockopt(q->sock.w.fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes));
}

/* q wakes for every byte again. */
static void lazy_end(struct fastpath *fp, struct vqp *q)
{
	if (!q->fp->lazy)
		return;
	__atomic_store_n(&fp->slots[q->fp->slot].lazy, 0, __ATOMIC_SEQ_CST);
	q->fp->lazy = false;
	q->fp->rung_stay = false;
	lowat(q, 1);
}

/*
 * q sleeps on its mark again, unless a packet it must read came since it last read (lazy,
 * then wake_seq; the programs store wake_seq, then exchange lazy: one sees the other).
 */
static bool lazy_arm(struct fastpath *fp, struct vqp *q)
{
	struct iwx_fp_slot *s = &fp->slots[q->fp->slot];

	__atomic_store_n(&s->lazy, 1, __ATOMIC_SEQ_CST);
	if ((int32_t)(iwx_llp_tcp_fast_seq(q->llp) - __atomic_load_n(&s->wake_seq, __ATOMIC_SEQ_CST)) < 0) {
		__atomic_store_n(&s->lazy, 0, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

/*
 * The programs rang for a slot: its queue pair reads what TCP has and will have; or, for a
 * packet that rang for a message's end only, takes what there is and sleeps on (bells_ready).
 */
static int bell(void *ctx, void *data, size_t size)
{
	struct fastpath *fp = ctx;
	uint32_t bell, slot;
	struct vqp *q;

	if (size < sizeof(bell))
		return 0;
	memcpy(&bell, data, sizeof(bell));
	slot = bell & ~IWX_FP_BELL_STAY;
	if (slot >= fp->nslots || !(q = fp->follows[slot].q))
		return 0;
	if ((bell & IWX_FP_BELL_STAY) && q->fp->lazy)
		q->fp->rung_stay = true;
	else
		lazy_end(fp, q);
	return 0;
}

static void bells_ready(struct iwxd *d, struct watch *w, uint32_t events)
{
	struct fastpath *fp = d->fp;

	(void)w;
	(void)events;
	ring_buffer__consume(fp->bells);
	for (uint32_t slot = 0; slot < fp->nslots; slot++) {
		struct vqp *q = fp->follows[slot].q;

		if (!q || !q->fp->rung_stay)
			continue;
		q->fp->rung_stay = false;
		vqp_service(d, q);	/* TCP has the packet: the programs ring before it */
		if (fp->follows[slot].q == q && q->fp->lazy && q->eng && !lazy_arm(fp, q))
			lazy_end(fp, q);
	}
}

/* The low-water mark for q's socket: a quarter of its receive buffer, at most LOWAT_MAX. */
static int lazy_mark(const struct vqp *q)
{
	int rcvbuf = 0;
	socklen_t len = sizeof(rcvbuf);

	if (getsockopt(q->sock.w.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len))
		return 0;
	return rcvbuf / 4 < LOWAT_MAX ? rcvbuf / 4 : LOWAT_MAX;
}

void fastpath_conn_turned(struct iwxd *d, struct vqp *q)
{
	struct fastpath *fp = d->fp;
	struct iwx_fp_slot *s;
	uint32_t head, took;
	int mark;

	if (!fp || !q->fp || q->fp->lazy || !q->eng)
		return;
	s = &fp->slots[q->fp->slot];
	head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	took = head - q->fp->head;
	q->fp->head = head;
	/* a stream of placed FPDUs, no gap: else packets ring, and every wake-up costs two */
	if (took < LAZY_RECORDS || __atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != IWX_FP_SYNC)
		return;
	mark = lazy_mark(q);
	if (mark < LOWAT_MIN)
		return;
	if (!lazy_arm(fp, q))
		return;	/* a packet iwxd must read is on its way (or queued): not now */
	lowat(q, mark);
	q->fp->mark = mark;
	q->fp->lazy = true;
	q->fp->seen = iwx_llp_tcp_fast_seq(q->llp);
	q->fp->tick_ms = iwx_now_ms() + LAZY_TICK_MS;
}

/*
 * What no program rang for: packets that came in through an interface without the fast
 * path, or that a program could not look at (another CPU had the slot). A lazy connection
 * whose engine read nothing for a tick reads what there is.
 */
void fastpath_conn_timers(struct iwxd *d, struct vqp *q, uint64_t now)
{
	uint32_t seq;
	int mark;

	if (!q->fp || !q->fp->lazy || !q->eng)
		return;
	if (now < q->fp->tick_ms)
		return;	/* q's timer runs then (fastpath_conn_due) */
	seq = iwx_llp_tcp_fast_seq(q->llp);
	if (seq == q->fp->seen) {
		lazy_end(d->fp, q);
		return;
	}
	q->fp->seen = seq;
	/* TCP grows the buffer as the stream speeds up: a mark set early would stay small */
	mark = lazy_mark(q);
	if (mark > q->fp->mark) {
		lowat(q, mark);
		q->fp->mark = mark;
	}
	q->fp->tick_ms = now + LAZY_TICK_MS;
}

uint64_t fastpath_conn_due(const struct vqp *q)
{
	return q->fp && q->fp->lazy ? q->fp->tick_ms : 0;
}

/* --------------------------------------------------------------- connections */

/*
 * A socket's read position (seq[0]: the TCP sequence number of the next byte recv()
 * returns) and TCP's (seq[1]: rcv_nxt), read together.
 */
static int read_position(struct fastpath *fp, int fd, uint32_t seq[2])
{
	uint64_t cookie;
	socklen_t len = sizeof(cookie);
	int it, n;

	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len))
		return -errno;
	fp->skel->bss->anchor_cookie = cookie;
	it = bpf_iter_create(bpf_link__fd(fp->anchor));
	if (it < 0)
		return -errno;
	n = read(it, seq, 2 * sizeof(*seq));
	close(it);
	return n == 2 * sizeof(*seq) ? 0 : -ENOENT;
}

static void key_of(const struct sockaddr_storage *peer, const struct sockaddr_storage *local,
		   struct iwx_fp_key *k)
{
	memset(k, 0, sizeof(*k));
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *p = (const void *)peer, *l = (const void *)local;

		k->saddr[0] = p->sin_addr.s_addr;
		k->daddr[0] = l->sin_addr.s_addr;
		k->sport = p->sin_port;
		k->dport = l->sin_port;
	} else {
		const struct sockaddr_in6 *p = (const void *)peer, *l = (const void *)local;

		memcpy(k->saddr, &p->sin6_addr, 16);
		memcpy(k->daddr, &l->sin6_addr, 16);
		k->sport = p->sin6_port;
		k->dport = l->sin6_port;
		k->v6 = 1;
	}
}

/*
 * Does q's connection receive into --fastpath-rcvbuf's fixed buffer? Not where its
 * interface is attached at XDP: a veth's XDP hands TCP each 1448-byte segment in a buffer
 * of a page, so that 4 MiB held 1.56 MB unread where at TC, as GRO made them, it held 4.08
 * MB (2026-11-30); TCP's window, fixed with the buffer, promised more than that, and TCP
 * dropped segments inside it (RcvQDrop) and stalled in retransmission timeouts.
 */
static bool fixed_rcvbuf(const struct fastpath *fp, const struct vqp *q)
{
	int ifindex = iface_of_addr(&q->est.local_addr);

	for (uint32_t i = 0; i < fp->nifaces; i++)
		if (fp->ifaces[i].ifindex == ifindex)
			return fp->ifaces[i].mode != IWX_FP_MODE_XDP;
	return true;
}

static void conn_add(struct iwxd *d, struct vqp *q)
{
	struct fastpath *fp = d->fp;
	struct iwx_fp_conn conn = { .pd = q->pd };
	struct iwx_fp_key key;
	socklen_t len = sizeof(conn.cookie);
	uint32_t seq[2], slot;
	int err;

	if (q->fp)
		return;	/* followed already */
	/* TCP's acceptance of a placed FPDU is judged by its CRC (fastpath_maps.h): without
	   one, nothing would tell the placed payload from TCP's */
	if (!q->agreed.mode.crc) {
		log_info("qp %u: not followed by the fast path: no MPA CRC", q->num);
		return;
	}
	for (slot = 0; slot < fp->nslots && fp->follows[slot].q; slot++)
		;
	if (slot == fp->nslots) {
		warn_once(&fp->conns_warned, "qp %u: the fast path follows %u connections already: "
			  "not this one, nor others until one ends", q->num, fp->nslots);
		return;
	}
	if (!share_room(d, q->owner->user, SHARE_FP_CONNS, 1, fp->nfollowed, fp->nslots)) {
		share_refuse(d, q->owner, SHARE_FP_CONNS, fp->nslots, "left to iwxd");
		return;
	}
	conn.slot = slot;
	key_of(&q->est.peer_addr, &q->est.local_addr, &key);
	err = getsockopt(q->sock.w.fd, SOL_SOCKET, SO_COOKIE, &conn.cookie, &len) ? -errno :
	      read_position(fp, q->sock.w.fd, seq);
	if (!err) {
		struct iwx_fp_slot *s = &fp->slots[slot];

		memset(s, 0, sizeof(*s));
		/*
		 * Where the engine reads next is an FPDU's start, and nothing has come since:
		 * the programs are in step from the first packet. Else they find the stream.
		 * With markers, every packet tells them where its FPDUs are.
		 */
		if ((iwx_llp_tcp_fast(q->llp, s, seq[0]) && seq[0] == seq[1]) || q->agreed.mode.markers_rx) {
			s->state = IWX_FP_SYNC;
			s->next_seq = seq[0];
		}
		conn.markers = q->agreed.mode.markers_rx;
		conn.mark_base = iwx_llp_tcp_fast_start(q->llp);
		s->wake_seq = seq[0];
		err = bpf_map_update_elem(bpf_map__fd(fp->skel->maps.iwx_fp_socks), &q->sock.w.fd,
					  &conn, BPF_ANY) ? -errno : 0;
		if (!err && bpf_map_update_elem(bpf_map__fd(fp->skel->maps.iwx_fp_conns), &key, &conn,
						BPF_NOEXIST)) {
			err = -errno;
			bpf_map_delete_elem(bpf_map__fd(fp->skel->maps.iwx_fp_socks), &q->sock.w.fd);
		}
	}
	if (err) {
		iwx_llp_tcp_fast(q->llp, NULL, 0);
		log_warn("qp %u: not followed by the fast path: %s", q->num, strerror(-err));
		return;
	}
	fp->conns_warned = false;
	/* SO_RCVBUFFORCE: beyond net.core.rmem_max, with CAP_NET_ADMIN (the fast path's) */
	if (d->o.fp_rcvbuf && fixed_rcvbuf(fp, q) &&
	    setsockopt(q->sock.w.fd, SOL_SOCKET, SO_RCVBUFFORCE, &d->o.fp_rcvbuf,
		       sizeof(d->o.fp_rcvbuf)))
		log_warn("qp %u: its receive buffer left to TCP, not --fastpath-rcvbuf's %u bytes: %s",
			 q->num, d->o.fp_rcvbuf, strerror(errno));
	fp->follows[slot] = (struct fp_follow){ .q = q, .slot = slot, .user = q->owner->user };
	q->fp = &fp->follows[slot];
	fp->nfollowed++;
	q->fp->user->fp[SHARE_FP_CONNS - SHARE_FP_FIRST]++;
}

void fastpath_conn_start(struct iwxd *d, struct vqp *q)
{
	if (d->fp && d->fp->nifaces && q->eng && q->sock.t->fast_path)
		conn_add(d, q);
}

void fastpath_conn_end(struct iwxd *d, struct vqp *q)
{
	struct fastpath *fp = d->fp;
	struct iwx_fp_key key;

	if (!fp || !q->fp)
		return;
	lazy_end(fp, q);
	key_of(&q->est.peer_addr, &q->est.local_addr, &key);
	bpf_map_delete_elem(bpf_map__fd(fp->skel->maps.iwx_fp_conns), &key);
	bpf_map_delete_elem(bpf_map__fd(fp->skel->maps.iwx_fp_socks), &q->sock.w.fd);
	quiesce(fp);	/* no program writes its slot or places for it any more */
	if (q->eng)
		iwx_llp_tcp_fast(q->llp, NULL, 0);
	fp->nfollowed--;
	q->fp->user->fp[SHARE_FP_CONNS - SHARE_FP_FIRST]--;
	q->fp->q = NULL;
	q->fp = NULL;
}

/* ------------------------------------------------------------- the programs */

static void *map_shared(struct bpf_map *m, size_t *len)
{
	void *p;

	*len = (size_t)bpf_map__value_size(m) * bpf_map__max_entries(m);
	*len = (*len + 4095) & ~(size_t)4095;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	return p == MAP_FAILED ? NULL : p;
}

static void unload(struct fastpath *fp)
{
	if (fp->reap_pipe[1] >= 0) {
		close(fp->reap_pipe[1]);
		pthread_join(fp->reaper, NULL);
		close(fp->reap_pipe[0]);
	}
	if (fp->slots)
		munmap(fp->slots, fp->slots_len);
	if (fp->cpus)
		munmap(fp->cpus, fp->cpus_len);
	ring_buffer__free(fp->bells);
	bpf_link__destroy(fp->accepted);
	bpf_link__destroy(fp->anchor);
	fastpath_bpf__destroy(fp->skel);
	free(fp->follows);
	free(fp->mems);
	free(fp);
}

static int load(struct iwxd *d)
{
	struct fastpath *fp = calloc(1, sizeof(*fp));
	int ncpus = libbpf_num_possible_cpus(), err;

	if (!fp)
		return -ENOMEM;
	fp->reap_pipe[0] = fp->reap_pipe[1] = -1;
	fp->skel = fastpath_bpf__open();
	if (!fp->skel || ncpus <= 0) {
		err = fp->skel ? ncpus : -errno;
		goto fail;
	}
	fp->ncpus = ncpus;
	bpf_map__set_max_entries(fp->skel->maps.iwx_fp_cpus, ncpus);
	err = fastpath_bpf__load(fp->skel);
	if (err)
		goto fail;
	fp->nslots = bpf_map__max_entries(fp->skel->maps.iwx_fp_slots);
	fp->nmems = bpf_map__max_entries(fp->skel->maps.iwx_fp_mems);
	fp->nstags_max = bpf_map__max_entries(fp->skel->maps.iwx_fp_stags);
	fp->follows = calloc(fp->nslots, sizeof(*fp->follows));
	fp->mems = calloc(fp->nmems, sizeof(*fp->mems));
	fp->slots = map_shared(fp->skel->maps.iwx_fp_slots, &fp->slots_len);
	fp->cpus = map_shared(fp->skel->maps.iwx_fp_cpus, &fp->cpus_len);
	fp->anchor = bpf_program__attach_iter(fp->skel->progs.iwx_anchor, NULL);
	fp->accepted = bpf_program__attach(fp->skel->progs.iwx_accepted);
	fp->bells = ring_buffer__new(bpf_map__fd(fp->skel->maps.iwx_fp_bells), bell, fp, NULL);
	if (!fp->follows || !fp->mems || !fp->slots || !fp->cpus || !fp->anchor || !fp->accepted ||
	    !fp->bells) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	fp->bells_w = (struct watch){ .fd = ring_buffer__epoll_fd(fp->bells), .fn = bells_ready };
	err = watch_add(&d->loop, &fp->bells_w, EPOLLIN);
	if (err)
		goto fail;
	if (pipe2(fp->reap_pipe, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&fp->reaper, NULL, reap, fp);
	if (err) {
		close(fp->reap_pipe[0]);
		close(fp->reap_pipe[1]);
		fp->reap_pipe[1] = -1;
		watch_del(&d->loop, &fp->bells_w);
		goto fail;
	}
	d->fp = fp;	/* regions.c tells it of every change from now on */
	iwx_mem_for_each(d->mem, publish_each, d);
	return 0;
fail:
	log_err("fast path: cannot load the programs: %s", strerror(-err));
	unload(fp);
	return err;
}

/* ---------------------------------------------------------------- interfaces */

static struct iface *iface_find(struct fastpath *fp, int ifindex)
{
	for (uint32_t i = 0; fp && i < fp->nifaces; i++)
		if (fp->ifaces[i].ifindex == ifindex)
			return &fp->ifaces[i];
	return NULL;
}

static int ifindex_of(const char *name)
{
	char n[IF_NAMESIZE];
	unsigned int i;

	if (!memchr(name, 0, IF_NAMESIZE))
		return -EINVAL;
	memcpy(n, name, IF_NAMESIZE);
	i = if_nametoindex(n);
	return i ? (int)i : -ENODEV;
}

/* Attach the program of f's mode to its interface: f's link or xdp. 0 or -errno. */
static int iface_attach(struct fastpath *fp, struct iface *f)
{
	const void *elf;
	size_t len;

	if (f->mode == IWX_FP_MODE_XDP) {
		elf = fastpath_bpf__elf_bytes(&len);
		return fastpath_xdp_attach(fp->skel->obj, elf, len, "iwx_xdp", f->ifindex, &f->xdp);
	}
	f->link = bpf_link_create(bpf_program__fd(fp->skel->progs.iwx_tc), f->ifindex, TCX_INGRESS,
				  NULL);
	return f->link < 0 ? -errno : 0;
}

int fastpath_attach(struct iwxd *d, const struct iwx_ipc_fp_attach *req,
		    struct iwx_ipc_fp_attached *out)
{
	struct iface f = { .mode = req->mode, .flags = req->flags, .link = -1 };
	int err;
	size_t sz;
	void *counters;

	f.ifindex = ifindex_of(req->ifname);
	if (f.ifindex < 0)
		return f.ifindex;
	if ((req->mode != IWX_FP_MODE_TC && req->mode != IWX_FP_MODE_XDP) ||
	    (req->flags & ~IWX_FP_ATTACH_FLAGS))
		return -EINVAL;
	if (iface_find(d->fp, f.ifindex))
		return -EEXIST;
	if (!d->fp && (err = load(d)))
		return err;
	if (d->fp->nifaces == MAX_IFACES)
		return -ENOSPC;
	/* per-CPU counters: one zeroed value for each possible CPU */
	sz = sizeof(struct iwx_fp_counters) * d->fp->ncpus;
	counters = calloc(1, sz);
	if (!counters)
		return -ENOMEM;
	err = bpf_map_update_elem(bpf_map__fd(d->fp->skel->maps.iwx_fp_ifaces), &f.ifindex, counters,
				  BPF_ANY) ? -errno : 0;
	free(counters);
	if (!err)
		err = iface_attach(d->fp, &f);
	if (err) {
		bpf_map_delete_elem(bpf_map__fd(d->fp->skel->maps.iwx_fp_ifaces), &f.ifindex);
		log_warn("fast path: cannot attach to %.16s (%s): %s%s", req->ifname,
			 req->mode == IWX_FP_MODE_XDP ? "XDP" : "TC ingress", strerror(-err),
			 req->mode == IWX_FP_MODE_XDP && (err == -EPERM || err == -EACCES) ?
			 " (libxdp needs CAP_SYS_ADMIN for a moment, which iwxd keeps permitted "
			 "unless its unit's CapabilityBoundingSet leaves it out, and bpffs at "
			 "/sys/fs/bpf, which iwxd mounts where it may)" : "");
		return err;
	}
	memcpy(f.name, req->ifname, IF_NAMESIZE);
	d->fp->ifaces[d->fp->nifaces++] = f;
	log_info("fast path: attached to %s (%s)", f.name,
		 f.mode == IWX_FP_MODE_XDP ? "XDP" : "TC ingress");
	if (f.mode == IWX_FP_MODE_XDP && iface_is_veth(f.ifindex)) {
		out->notes |= IWX_FP_NOTE_XDP_VETH;
		log_warn("fast path: %s is a veth: at XDP nothing is placed from packets whose TCP "
			 "checksum the peer left to offload (tc places them)", f.name);
	}
	if (iface_receives_on_sender(f.ifindex, f.name, f.mode == IWX_FP_MODE_XDP)) {
		out->notes |= IWX_FP_NOTE_ON_SENDER;
		log_warn("fast path: %s is a veth whose receive runs on the sender's CPU (%s): so "
			 "does the programs' copy", f.name,
			 f.mode == IWX_FP_MODE_XDP ? "NAPI not threaded" : "no RPS");
	}
	IWX_LINK_EACH(struct vqp, q, &d->qps, link)
		fastpath_conn_start(d, q);
	/* only when asked: an XDP program costs TCP on the interface (on veth, no GRO) */
	if (req->flags & IWX_FP_ATTACH_SCTP)
		sctp_io_xsk_attach(d, f.ifindex, f.name);
	return 0;
}

static void iface_remove(struct fastpath *fp, struct iface *f)
{
	if (f->xdp)
		fastpath_xdp_detach(f->xdp, f->ifindex);
	else
		close(f->link);	/* the link ends: the kernel detaches the program */
	bpf_map_delete_elem(bpf_map__fd(fp->skel->maps.iwx_fp_ifaces), &f->ifindex);
	log_info("fast path: detached from %s", f->name);
	*f = fp->ifaces[--fp->nifaces];
}

int fastpath_detach(struct iwxd *d, const struct iwx_ipc_fp_attach *req)
{
	int ifindex = ifindex_of(req->ifname);
	struct iface *f;

	if (ifindex < 0)
		return ifindex;
	f = iface_find(d->fp, ifindex);
	if (!f)
		return -ENOENT;
	sctp_io_xsk_detach(d, ifindex);
	iface_remove(d->fp, f);
	/* rung by none but the programs still attached */
	IWX_LINK_EACH(struct vqp, q, &d->qps, link)
		if (q->fp)
			lazy_end(d->fp, q);
	return 0;
}

/* ----------------------------------------------------------------- counters */

void fastpath_status(const struct iwxd *d, struct iwx_ipc_status *s)
{
	for (uint32_t i = 0; d->fp && i < d->fp->nifaces && i < sizeof(s->fp) / sizeof(s->fp[0]); i++) {
		memcpy(s->fp[i].ifname, d->fp->ifaces[i].name, sizeof(s->fp[i].ifname));
		s->fp[i].mode = d->fp->ifaces[i].mode;
		s->fp[i].sctp_xsks = sctp_io_xsk_queues(d, d->fp->ifaces[i].ifindex);
		s->fp_n = i + 1;
	}
}

int fastpath_list(struct iwxd *d, int (*add)(void *ctx, const struct iwx_ipc_fp_info *e), void *ctx)
{
	struct fastpath *fp = d->fp;
	struct iwx_fp_counters *percpu;
	int err = 0;

	if (!fp)
		return 0;
	percpu = calloc(fp->ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	for (uint32_t i = 0; i < fp->nifaces && !err; i++) {
		struct iwx_ipc_fp_info e = { .kind = IWX_FP_INFO_IFACE, .id = fp->ifaces[i].ifindex,
					     .mode = fp->ifaces[i].mode };

		memcpy(e.ifname, fp->ifaces[i].name, sizeof(e.ifname));
		if (!bpf_map_lookup_elem(bpf_map__fd(fp->skel->maps.iwx_fp_ifaces), &e.id, percpu)) {
			for (uint32_t c = 0; c < fp->ncpus; c++) {
				const uint64_t *from = (const uint64_t *)&percpu[c];
				uint64_t *to = (uint64_t *)&e.c;

				for (size_t k = 0; k < sizeof(e.c) / sizeof(uint64_t); k++)
					to[k] += from[k];
			}
		}
		err = add(ctx, &e);
	}
	free(percpu);
	IWX_LINK_EACH(struct vqp, q, &d->qps, link) {
		if (err)
			break;
		struct iwx_ipc_fp_info e = { .kind = IWX_FP_INFO_CONN, .id = q->num };
		const struct iwx_fp_slot *s;

		if (!q->fp)
			continue;
		s = &fp->slots[q->fp->slot];
		e.state = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
		memcpy(&e.c, &s->c, sizeof(e.c));
		err = add(ctx, &e);
	}
	return err;
}

void fastpath_start(void)
{
	fastpath_xdp_remove_stale();
}

void fastpath_stop(struct iwxd *d)
{
	if (!d->fp)
		return;
	while (d->fp->nifaces)
		iface_remove(d->fp, &d->fp->ifaces[0]);
	watch_del(&d->loop, &d->fp->bells_w);
	IWX_LINK_EACH(struct vqp, q, &d->qps, link)
		q->fp = NULL;	/* its state goes with the rest */
	unload(d->fp);
	d->fp = NULL;
}
