// SPDX-License-Identifier: MIT
/* iwxd's SCTP: the stack, its UDP socket, its clock, its sockets' readiness (sctp_io.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "daemon.h"
#include "sctp_io.h"
#include "sctp_udp.h"

#define MAX_PATHS	1024	/* peers with a path at once: each costs a little, kept */
#define INPUT_BUDGET	256	/* datagrams per turn */
#define LINGER_MS	30000	/* ticks after the last socket: its association may still end */

struct sctp_io {
	struct watch		udp_w;
	struct iwx_sctp_udp	*udp;
	uint16_t		port;
	uint32_t		users;		/* sctp_io_hold's */
	uint64_t		tick_ms;
	uint64_t		quiet_ms;	/* the last went then; its association may still be ending */
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
	loop_due(&d->loop, iwx_conn_now_ms());
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
		d->sctp->quiet_ms = iwx_conn_now_ms() + LINGER_MS;
}

int sctp_io_peer(struct socket *so, struct sockaddr_storage *peer)
{
	struct sockaddr *addrs = NULL;
	const struct sockaddr_conn *sc;
	const struct iwx_sctp_udp_path *p;
	const struct sockaddr_in6 *from;
	uint16_t port;

	if (usrsctp_getpaddrs(so, 0, &addrs) < 1)
		return -ENOTCONN;
	sc = (const struct sockaddr_conn *)addrs;
	p = sc->sconn_addr;	/* our path: its first member is what usrsctp knows */
	port = sc->sconn_port;
	usrsctp_freepaddrs(addrs);
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

void sctp_io_timers(struct iwxd *d, uint64_t now)
{
	struct sctp_io *s = d->sctp;

	/* usrsctp has no next deadline to ask: a fixed tick, only while it may matter */
	if (!s || (!s->users && now >= s->quiet_ms))
		return;
	if (now >= s->tick_ms) {
		iwx_sctp_tick();
		s->tick_ms = now + IWX_SCTP_TICK_MS;
	}
	loop_due(&d->loop, s->tick_ms);
}
