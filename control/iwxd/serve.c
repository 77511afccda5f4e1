// SPDX-License-Identifier: MIT
/*
 * iwxd serving (serve.h): its socket, signals and threads set up and torn down, and the
 * turns of its one loop. The loop services the queue pairs whose doorbells rang
 * (doorbell.c) or whose streams moved, and sleeps only after telling the clients so
 * (need_wakeup in each client's doorbells): while it is busy, posting costs a client
 * no system call. After a client posted it stays awake --spin-us (spin()).
 */
#include <errno.h>
#include <libgen.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "fastpath.h"
#include "privs.h"
#include "sctp_io.h"
#include "serve.h"
#include "shared.h"
#include "shm.h"
#include "util/clock.h"
#include "util/container_of.h"

#define IDLE_MS		60000	/* the longest sleep: nothing is due sooner */
#define SPIN_OFF_MIN_MS	16	/* no spinning this long after a yield found the CPU held, */
#define SPIN_OFF_MAX_MS	1024	/* ... doubled while it goes on, up to this */

static void on_signal(struct iwxd *d, struct watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	(void)events;
	if (read(w->fd, &si, sizeof(si)) == sizeof(si))
		log_notice("signal %u: stopping", si.ssi_signo);
	d->stop = true;
}

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS	83	/* Linux 6.16; Debian 12's headers predate it */
#endif

/*
 * No request carries a descriptor: have the kernel refuse a client's (its sendmsg fails
 * with EPERM), so that iwxd never holds one, whose close could hang. Sockets accepted
 * from the listener inherit it. Older kernels, or IWX_PASSRIGHTS=1 (to test that path),
 * leave it to session.c: a client that sends one is dropped, closer.c closes it.
 */
static void refuse_rights(int fd)
{
	const char *keep = getenv("IWX_PASSRIGHTS");
	int off = 0;

	if (keep && strcmp(keep, "1") == 0)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off)))
		log_info("this kernel passes clients' descriptors (SO_PASSRIGHTS: %m): "
			 "a client that sends one is dropped");
}

/*
 * The Unix socket, listening: refuse to take over one a live daemon answers on. Listening
 * as soon as it is bound, so that a client that finds the file is never refused: what
 * connects before iwxd serves waits in the backlog.
 */
static int open_socket(struct iwxd *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	int fd;

	if (strlen(d->o.socket) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "iwxd: socket path too long: %s\n", d->o.socket);
		return -1;
	}
	strcpy(sa.sun_path, d->o.socket);
	strcpy(dir, d->o.socket);
	mkdir(dirname(dir), 0755);
	fd = iwx_ipc_connect(d->o.socket, 1);
	if (fd >= 0) {
		fprintf(stderr, "iwxd: another iwxd is serving %s\n", d->o.socket);
		close(fd);
		return -1;
	}
	unlink(d->o.socket);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "iwxd: %s: %s%s\n", d->o.socket, strerror(errno),
			(errno == EACCES || errno == ENOENT) && d->o.owner ?
			" (not root: serve a socket of your own, -s)" : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* the file is iwxd's user's; the group's, when given (an ordinary user: one of hers) */
	if (chmod(d->o.socket, d->o.gid == (gid_t)-1 ? 0600 : 0660) ||
	    (d->o.gid != (gid_t)-1 && chown(d->o.socket, (uid_t)-1, d->o.gid))) {
		fprintf(stderr, "iwxd: %s: %s%s\n", d->o.socket, strerror(errno),
			errno == EPERM ? ": cannot give it to --group's group (not root: only to a "
					 "group of your own)" : "");
		close(fd);
		unlink(d->o.socket);
		return -1;
	}
	if (listen(fd, 64)) {
		fprintf(stderr, "iwxd: %s: listen: %s\n", d->o.socket, strerror(errno));
		close(fd);
		unlink(d->o.socket);
		return -1;
	}
	refuse_rights(fd);
	return fd;
}

/* Is id a queue's, a listener's or a connection request's (which requests name by it)? */
static bool id_in_use(const struct loop *l, uint32_t id)
{
	const struct iwxd *d = container_of(l, struct iwxd, loop);

	return iwx_ids_held(&d->ids, id);
}

/*
 * Every connection holds a descriptor (and its set-up, and a lingering close), so iwxd
 * raises its limit to what the system allows one process (fs.nr_open) where it may, and
 * else to its hard limit; what it got is logged.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	unsigned long most = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%lu", &most) != 1)
			most = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (most > rl.rlim_max && !setrlimit(RLIMIT_NOFILE, &(struct rlimit){ most, most }))
		rl.rlim_cur = rl.rlim_max = most;
	else if (rl.rlim_cur < rl.rlim_max && !setrlimit(RLIMIT_NOFILE, &(struct rlimit){ rl.rlim_max, rl.rlim_max }))
		rl.rlim_cur = rl.rlim_max;
	log_info("open files: up to %llu", (unsigned long long)rl.rlim_cur);
}

void serve_init(struct iwxd *d)
{
	*d = (struct iwxd){
		.o = { .socket = iwx_ipc_socket_path(NULL),
		       .gid = (gid_t)-1, .crc = true, .rfc7306 = true, .settle_ms = 200,
		       .timeout_ms = 10000, .close_ms = 10000,
		       .sctp_port = IWX_SCTP_PORT, .spin_us = IWXD_SPIN_US, .fp_rcvbuf = FP_RCVBUF,
		       .owner = geteuid() },
		.loop.epfd = -1, .loop.first_epfd = -1, .listen_w.fd = -1,
	};
	for (int i = 0; i < LIMIT_N; i++)
		d->o.max[i] = limits[i].dflt;
}

int serve_setup(struct iwxd *d)
{
	sigset_t mask;
	int err;

	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d->signal_w.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->signal_w.fn = on_signal;
	d->mem = iwx_mem_new();
	iwx_link_init(&d->ready);
	iwx_link_init(&d->qps);
	iwx_link_init(&d->bell_active);
	if (loop_init(&d->loop, id_in_use) || d->signal_w.fd < 0 || !d->mem) {
		fprintf(stderr, "iwxd: %s\n", strerror(errno));
		goto fail;
	}
	regions_watch(d);
	fastpath_start();	/* before serving: what it finds a dead iwxd left is gone by then */
	/* the socket's directory, and --group's chown, may need what iwxd drops next */
	d->listen_w.fd = open_socket(d);
	if (d->listen_w.fd < 0)
		goto fail;
	/* before any thread (the closer's, usrsctp's): capabilities are each thread's own */
	err = privs_drop();
	if (err) {
		fprintf(stderr, "iwxd: dropping capabilities: %s\n", strerror(-err));
		goto fail_socket;
	}
	shared_start(d);	/* with what iwxd kept: that is what it has from here */
	err = closer_start(&d->closer);	/* after the mask: the signals are the loop's */
	if (err) {
		fprintf(stderr, "iwxd: closer thread: %s\n", strerror(-err));
		goto fail_socket;
	}
	err = sctp_io_start(d);
	if (err) {
		fprintf(stderr, "iwxd: DDP over SCTP: UDP port %u: %s%s (--sctp-port PORT: another; "
			"0: without SCTP)\n", d->o.sctp_port, strerror(-err), err == -EADDRINUSE ?
			": another iwxd in this network namespace?" : "");
		goto fail_closer;
	}
	/* serving from here: clients that connected meanwhile are accepted now */
	d->listen_w.fn = session_accept;
	if (watch_add_first(&d->loop, &d->listen_w, EPOLLIN) ||
	    watch_add_first(&d->loop, &d->signal_w, EPOLLIN))
		goto fail_sctp;
	d->start_ms = iwx_now_ms();
	return 0;
	/* what it made undone, so that a daemon that could not start leaves nothing behind */
fail_sctp:
	sctp_io_stop(d);
fail_closer:
	closer_stop(&d->closer);
fail_socket:
	close(d->listen_w.fd);
	unlink(d->o.socket);
	d->listen_w.fd = -1;
fail:
	iwx_mem_free(d->mem);
	d->mem = NULL;
	loop_fini(&d->loop);
	if (d->signal_w.fd >= 0)
		close(d->signal_w.fd);
	return -1;
}

/* Close clients that are done; unmap memory their queue pairs have let go of. */
static void reap(struct iwxd *d)
{
	for (struct client *c = d->clients, *n; c; c = n) {
		n = c->next;
		if (c->dead)
			session_close(d, c);
		else if (c->retired)
			shm_reclaim(d, c);
	}
}

/*
 * Whether an idle turn is followed by another without sleeping: for --spin-us after a
 * client last posted (posted: its bells named new work this turn). Meanwhile the reply to
 * what it posted is taken without a wake-up, and its next request needs no doorbell
 * write, as a client answers a completion within microseconds. Each such turn yields
 * the CPU first: the client may be waiting for it on this CPU. Only posting counts, not
 * the streams: a receiver of bulk data keeps sleeping between its packets.
 *
 * A yield that comes back later than the whole spin says another task held this CPU and
 * does not give it back (a program that polls memory, as ib_write_lat does): each yield
 * to it costs a message that task's time slice, milliseconds, where iwxd asleep is woken
 * by the client's doorbell and preempts it at once. So after such a yield iwxd does not
 * spin for SPIN_OFF_MIN_MS, doubled each time a try soon after finds the same, up to
 * SPIN_OFF_MAX_MS.
 *
 * Nor after a post of a client on iwxd's own CPU (doorbell.c: posted_here): a spin would
 * take the CPU that client needs to take its completion and post again, and the client
 * for its part does not spin while iwxd is on its CPU (libiwx: daemon_here). Measured
 * pinned, a round trip with either spinning there took twice as long as with neither.
 */
static bool spin(struct iwxd *d, bool posted, bool idle)
{
	uint64_t now, back;

	if (!d->o.spin_us)
		return false;
	now = iwx_now_us();
	if (posted && d->posted_here) {
		d->spin_end_us = 0;
		d->st.spins_shared++;
	} else if (posted) {
		d->spin_end_us = now + (uint64_t)d->o.spin_us;
	}
	if (!idle || now >= d->spin_end_us || now < d->spin_off_us)
		return false;
	sched_yield();
	back = iwx_now_us();
	if (back - now <= (uint64_t)d->o.spin_us)
		return true;
	/* doubled if the CPU was held again within as long after the last pause, else anew */
	if (d->spin_backoff_us && back < d->spin_off_us + d->spin_backoff_us)
		d->spin_backoff_us *= 2;
	else
		d->spin_backoff_us = SPIN_OFF_MIN_MS * 1000;
	if (d->spin_backoff_us > SPIN_OFF_MAX_MS * 1000)
		d->spin_backoff_us = SPIN_OFF_MAX_MS * 1000;
	d->spin_off_us = back + d->spin_backoff_us;
	d->st.spins_stopped++;
	return false;
}

void serve_turn(struct iwxd *d, bool may_sleep)
{
	bool posted, work, idle, sleepy;
	uint64_t now;
	int n;

	posted = doorbell_take(d);
	work = vqp_service_ready(d);
	now = iwx_now_ms();
	loop_timers_begin(&d->loop, now, IDLE_MS);
	session_timers(d, now);
	shared_timers(d, now);
	loop_timers_run(&d->loop, d, now);
	sctp_io_timers(d, now);
	reap(d);
	/* publish "asleep", then look once more: a bell that raced with it is seen */
	idle = !work && iwx_link_empty(&d->ready);
	sleepy = may_sleep && !spin(d, posted, idle) && idle;
	if (sleepy && !doorbell_sleep(d, true)) {
		doorbell_sleep(d, false);
		sleepy = false;
	}
	sctp_io_flush(d);	/* SCTP's frames of this turn go out before any sleep */
	n = loop_dispatch(&d->loop, d, sleepy);
	if (sleepy) {
		doorbell_sleep(d, false);
		d->st.wakeups += n > 0;
	}
	reap(d);
}

void serve_run(struct iwxd *d)
{
	while (!d->stop)
		serve_turn(d, true);
}

void serve_teardown(struct iwxd *d)
{
	while (d->clients)
		session_close(d, d->clients);
	fastpath_stop(d);
	linger_stop(d);
	shared_stop(d);
	sctp_io_stop(d);
	if (d->listen_w.fd >= 0) {
		/* connections it never accepted may hold descriptors */
		closer_close(&d->closer, d->listen_w.fd);
		unlink(d->o.socket);
	}
	closer_stop(&d->closer);
	iwx_mem_free(d->mem);
	loop_fini(&d->loop);
	iwx_ids_fini(&d->ids);
}
