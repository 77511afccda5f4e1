// SPDX-License-Identifier: MIT
/*
 * Sockets that sent a Terminate, kept open a while after their queue pair let go (daemon.h).
 *
 * RFC 5040 §5.4 makes the Terminate the last message on the stream, and the peer learns
 * why its stream ended only by reading it. A TCP socket closed with data unread sends a
 * reset, not a FIN (tcp(7)), and the peer is usually still sending (the rest of a large
 * Write): the reset can overtake its reading and destroy the Terminate with the stream.
 * So our half is shut once the Terminate is out (the engine), and what the peer still
 * sends is read and dropped here until its FIN, or for LINGER_MS at most; only then is
 * the socket closed. Each is counted to the user whose connection it was, and a user has
 * --max-lingering at most (each is a descriptor, and peers set the pace): one user's
 * Terminates cannot cost another's its lingering.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "util/clock.h"
#include "util/container_of.h"

#define LINGER_MS	2000	/* the longest a peer gets to see our Terminate and close */
#define READ_BUDGET	64	/* reads per wake-up, so that one peer cannot hold the loop */

struct lingering {
	struct watch		w;
	struct timer		timer;		/* LINGER_MS after it began: closed then */
	struct user		*user;
	struct lingering	*next;
};

static void linger_end(struct iwxd *d, struct lingering *l)
{
	watch_del(&d->loop, &l->w);
	timer_fini(&d->loop, &l->timer);
	close(l->w.fd);
	IWX_LIST_UNLINK(&d->lingering, l);
	d->nlingering--;
	l->user->lingering--;
	l->user->linger_warned = false;
	user_forget(d, l->user);
	free(l);
}

static void on_time_up(struct iwxd *d, struct timer *t, uint64_t now)
{
	(void)now;
	linger_end(d, container_of(t, struct lingering, timer));
}

static void on_readable(struct iwxd *d, struct watch *w, uint32_t events)
{
	static char sink[65536];	/* what the peer sent after our Terminate: dropped */
	struct lingering *l = (struct lingering *)w;

	(void)events;
	for (int i = 0; i < READ_BUDGET; i++) {
		ssize_t n = recv(w->fd, sink, sizeof(sink), MSG_DONTWAIT);

		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		linger_end(d, l);	/* the peer's FIN (or reset): nothing left to reset */
		return;
	}
}

void linger_start(struct iwxd *d, struct user *u, int fd)
{
	struct lingering *l;

	if (u->lingering >= d->o.max[LIMIT_LINGER_USER]) {
		if (!u->linger_warned)
			log_warn("user %u: at the limit of %s (--%s %" PRIu64 "): closing at once",
				 (unsigned)u->uid, limits[LIMIT_LINGER_USER].what,
				 limits[LIMIT_LINGER_USER].flag, d->o.max[LIMIT_LINGER_USER]);
		u->linger_warned = true;
		d->st.linger_full++;
		return;	/* the close may reset: no worse than without lingering */
	}
	l = calloc(1, sizeof(*l));
	if (!l || timer_init(&d->loop, &l->timer, on_time_up)) {
		free(l);
		return;
	}
	l->w.fn = on_readable;
	if ((l->w.fd = dup(fd)) < 0 || watch_add(&d->loop, &l->w, EPOLLIN)) {
		if (l->w.fd >= 0)
			close(l->w.fd);
		timer_fini(&d->loop, &l->timer);
		free(l);
		return;
	}
	timer_set(&d->loop, &l->timer, iwx_now_ms() + LINGER_MS);
	l->user = u;
	u->lingering++;
	l->next = d->lingering;
	d->lingering = l;
	d->nlingering++;
}

void linger_stop(struct iwxd *d)
{
	while (d->lingering)
		linger_end(d, d->lingering);
}
