// SPDX-License-Identifier: MIT
/*
 * What one client may take of iwxd, and all of them together (iwxd --help, "Limits"):
 * each limit holds, answers its error and is logged once, and what is freed may be
 * taken again; a client that does not read is dropped; running out of descriptors does
 * not make iwxd spin; HELLO is taken once; what one user's clients hold together, memory
 * they keep after freeing it included, leaves another user its share. The clients that
 * push against the limits are uid and gid nobody, members of iwxd's group (-g nogroup)
 * but not root (another user: uid OTHER, gid nogroup): the test takes those credentials
 * while it connects, which is when iwxd reads them.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc.h"

#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "stall.h"

#define ARGS		"--settle-ms 0 -g nogroup "
#define NOBODY		65534		/* uid nobody, gid nogroup */
#define OTHER		65533		/* another user, of group nogroup */
#define MIB		(1u << 20)
#define EVENT_MS	STALL_MS	/* a wait for what must come: bounded against a hang */
#define QUIET_MS	300		/* nothing more arrives in this long */
#define RETRY_MS	STALL_MS	/* for iwxd to see a client go: bounded against a hang */
#define MAX_DEVS	16
#define MAX_FDS		256

static struct iwxd_pair pair;
static struct endpoint ea, eb, ec;
static struct iwx_device *devs[MAX_DEVS];	/* closed at the end */
static int fds[MAX_FDS], nfds;			/* raw connections, closed at the end */

static void need_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and to act as nobody");
}

static void down(void)
{
	/* an assertion may have failed while the test was nobody */
	if (seteuid(0) || setegid(0))
		fprintf(stderr, "cannot be root again: %m\n");
	while (nfds)
		close(fds[--nfds]);
	for (int i = 0; i < MAX_DEVS; i++) {
		iwx_close(devs[i]);
		devs[i] = NULL;
	}
	if (ec.dev)
		endpoint_close(&ec);
	iwxd_pair_down(&pair, &ea, &eb);
}

TestSuite(daemon_limits, .init = need_root, .fini = down, .timeout = HANG_S);

static void start(const char *args)
{
	cr_assert_eq(iwxd_pair_start(&pair, args), 0, "two daemons with %s", args);
	/* mkdtemp made their directory 0700: let nobody reach the sockets (0660, nogroup) */
	cr_assert_eq(chmod(pair.dir, 0711), 0);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Take uid's credentials (group nogroup), or root's again (uid 0). */
static void be(uid_t uid)
{
	if (uid)
		cr_assert(!setegid(NOBODY) && !seteuid(uid), "become uid %u: %m", (unsigned)uid);
	else
		cr_assert(!seteuid(0) && !setegid(0), "become root again: %m");
}

/* A device on daemon i, opened as uid: NULL and errno on failure. */
static struct iwx_device *open_as(uid_t uid, int i, size_t arena)
{
	IWX_OPTS(iwx_open_opts, o, .socket = pair.sock[i], .arena_size = arena);
	struct iwx_device *dev;
	int err;

	be(uid);
	dev = iwx_open(&o);
	err = errno;
	be(0);
	errno = err;
	return dev;
}

static struct iwx_device *open_nobody(int i, size_t arena)
{
	return open_as(NOBODY, i, arena);
}

/* ... kept in devs[] so that it is closed at the end; slot k. */
static struct iwx_device *dev_nobody(int k, int i, size_t arena)
{
	devs[k] = open_nobody(i, arena);
	cr_assert_not_null(devs[k], "device %d as nobody: %s", k, strerror(errno));
	return devs[k];
}

/* The next device as nobody, retried while iwxd has not yet seen a client go. */
static struct iwx_device *open_nobody_retry(int i, size_t arena)
{
	struct iwx_device *dev = NULL;

	for (int t = 0; t < RETRY_MS / 20 && !dev; t++) {
		dev = open_nobody(i, arena);
		if (!dev)
			sleep_ms(20);
	}
	return dev;
}

/* An endpoint (device, PD, CQ, QP) on daemon i, as nobody. */
static void endpoint_nobody(struct endpoint *e, int i)
{
	struct iwx_qp_init_attr attr = { 0 };

	e->dev = open_nobody(i, MIB);
	cr_assert_not_null(e->dev, "%s", strerror(errno));
	e->pd = iwx_alloc_pd(e->dev);
	e->cq = iwx_create_cq(e->dev, 64);
	cr_assert(e->pd && e->cq);
	attr.send_cq = attr.recv_cq = e->cq;
	e->qp = iwx_create_qp(e->pd, &attr);
	cr_assert_not_null(e->qp);
}

/* A raw connection to daemon i's socket as uid (timeout_s for each call). */
static int raw_as(uid_t uid, int i, int timeout_s)
{
	int fd;

	cr_assert_lt(nfds, MAX_FDS);
	be(uid);
	fd = iwx_ipc_connect(pair.sock[i], timeout_s);
	be(0);
	if (fd >= 0)
		fds[nfds++] = fd;
	return fd;
}

static int raw_nobody(int i, int timeout_s)
{
	return raw_as(NOBODY, i, timeout_s);
}

static int hello(int fd, uint64_t arena, unsigned *got_fds)
{
	struct iwx_ipc_hello h = { .version = IWX_IPC_VERSION, .arena_size = arena };

	return raw_call(fd, IWX_IPC_HELLO, &h, sizeof(h), &h, sizeof(h), NULL, got_fds);
}

/* Lines of daemon i's log that hold what, waiting up to ms for at least one. */
static int logged(int i, const char *what, int ms)
{
	int n = iwxd_pair_log_count(&pair, i, what);

	for (int t = 0; t < ms / 20 && !n; t++) {
		sleep_ms(20);
		n = iwxd_pair_log_count(&pair, i, what);
	}
	return n;
}

/* The warning a limit gives: it names the client (uid nobody) and the limit. */
#define LIMIT_LOG(what, flag)	"uid 65534): at the limit of " what " (--" flag ")"

/* ------------------------------------------------------------ per client */

Test(daemon_limits, protection_domains)
{
	struct iwx_device *dev, *other;
	struct iwx_pd *pd[2];

	start(ARGS "--max-pds 2");
	dev = dev_nobody(0, 0, MIB);
	pd[0] = iwx_alloc_pd(dev);
	pd[1] = iwx_alloc_pd(dev);
	cr_assert(pd[0] && pd[1], "two PDs: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		cr_assert_null(iwx_alloc_pd(dev), "a third PD");
		cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	}
	cr_assert_eq(iwx_dealloc_pd(pd[1]), 0);
	cr_assert_not_null(iwx_alloc_pd(dev), "one freed, the next: %s", strerror(errno));
	cr_assert_eq(logged(0, LIMIT_LOG("protection domains per client", "max-pds 2") ": refused",
			    0), 1, "one warning for two refusals, naming client and limit");
	/* per client: another one has its own */
	other = dev_nobody(1, 0, MIB);
	cr_assert(iwx_alloc_pd(other) && iwx_alloc_pd(other), "%s", strerror(errno));
}

Test(daemon_limits, memory_regions)
{
	struct iwx_device *dev;
	struct iwx_mr *mr[3];
	struct iwx_pd *pd;
	uint8_t *buf;

	start(ARGS "--max-mrs 3");
	dev = dev_nobody(0, 0, MIB);
	pd = iwx_alloc_pd(dev);
	buf = iwx_alloc(dev, 4096);
	cr_assert(pd && buf);
	for (int i = 0; i < 3; i++)
		cr_assert_not_null(mr[i] = iwx_reg_mr(pd, buf, 64 + i, IWX_ACCESS_LOCAL_WRITE));
	cr_assert_null(iwx_reg_mr(pd, buf, 64, IWX_ACCESS_LOCAL_WRITE), "a fourth MR");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(iwx_dereg_mr(mr[0]), 0);
	cr_assert_not_null(iwx_reg_mr(pd, buf, 64, IWX_ACCESS_LOCAL_WRITE), "%s", strerror(errno));
	cr_assert_eq(logged(0, LIMIT_LOG("memory regions per client", "max-mrs 3"), 0), 1);
}

Test(daemon_limits, completion_queues)
{
	struct iwx_device *dev;
	struct iwx_cq *cq[2];

	start(ARGS "--max-cqs 2");
	dev = dev_nobody(0, 0, MIB);
	cq[0] = iwx_create_cq(dev, 16);
	cq[1] = iwx_create_cq(dev, 16);
	cr_assert(cq[0] && cq[1], "%s", strerror(errno));
	cr_assert_null(iwx_create_cq(dev, 16), "a third CQ");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(iwx_destroy_cq(cq[1]), 0);
	cr_assert_not_null(iwx_create_cq(dev, 16), "%s", strerror(errno));
	cr_assert_eq(logged(0, LIMIT_LOG("completion queues per client", "max-cqs 2"), 0), 1);
}

/*
 * Every mapping of a client's memory in iwxd counts, per client and all together (the
 * kernel allows a process vm.max_map_count): its arena, its rings, the memory its
 * registrations outside the arena moved into. A deregistration gives its mapping back.
 */
Test(daemon_limits, mappings)
{
	static uint8_t outside[2 * 4096] __attribute__((aligned(4096)));
	struct iwx_device *dev, *other;
	struct iwx_mr *mr;
	struct iwx_pd *pd;
	struct iwx_cq *cq;

	start(ARGS "--max-maps 4 --maps-total 7");
	dev = dev_nobody(0, 0, MIB);			/* 1, 2: the arena, the doorbells */
	pd = iwx_alloc_pd(dev);
	cq = iwx_create_cq(dev, 16);			/* 3 */
	mr = iwx_reg_mr(pd, outside, 100, 0);		/* 4: the page moved */
	cr_assert(pd && cq && mr, "%s", strerror(errno));
	cr_assert_null(iwx_create_cq(dev, 16), "a fifth mapping");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_null(iwx_reg_mr(pd, outside + 4096, 100, 0), "... of moved memory too");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(logged(0, LIMIT_LOG("mappings of one client's memory in iwxd", "max-maps 4"), 0),
		     1);
	other = dev_nobody(1, 0, MIB);			/* 5 and 6 of all */
	cr_assert_not_null(iwx_create_cq(other, 16), "%s", strerror(errno));	/* 7 */
	cr_assert_null(iwx_create_cq(other, 16), "an eighth of all");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(iwx_dereg_mr(mr), 0);
	cr_assert_not_null(iwx_create_cq(dev, 16), "the moved page's mapping is free: %s",
			   strerror(errno));
}

Test(daemon_limits, queue_pairs)
{
	struct iwx_qp_init_attr attr = { 0 };
	struct iwx_device *dev;
	struct iwx_qp *qp[2];
	struct iwx_pd *pd;

	start(ARGS "--max-qps 2");
	dev = dev_nobody(0, 0, MIB);
	pd = iwx_alloc_pd(dev);
	attr.send_cq = attr.recv_cq = iwx_create_cq(dev, 64);
	cr_assert(pd && attr.send_cq);
	qp[0] = iwx_create_qp(pd, &attr);
	qp[1] = iwx_create_qp(pd, &attr);
	cr_assert(qp[0] && qp[1], "%s", strerror(errno));
	cr_assert_null(iwx_create_qp(pd, &attr), "a third QP");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(iwx_destroy_qp(qp[0]), 0);
	cr_assert_not_null(iwx_create_qp(pd, &attr), "%s", strerror(errno));
	cr_assert_eq(logged(0, LIMIT_LOG("queue pairs per client", "max-qps 2"), 0), 1);
}

Test(daemon_limits, shared_receive_queues)
{
	struct iwx_device *dev;
	struct iwx_srq *srq[2];
	struct iwx_pd *pd;

	start(ARGS "--max-srqs 2");
	dev = dev_nobody(0, 0, MIB);
	pd = iwx_alloc_pd(dev);
	cr_assert_not_null(pd);
	srq[0] = iwx_create_srq(pd, NULL);
	srq[1] = iwx_create_srq(pd, NULL);
	cr_assert(srq[0] && srq[1], "%s", strerror(errno));
	cr_assert_null(iwx_create_srq(pd, NULL), "a third SRQ");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(iwx_destroy_srq(srq[0]), 0);
	cr_assert_not_null(iwx_create_srq(pd, NULL), "%s", strerror(errno));
	cr_assert_eq(logged(0, LIMIT_LOG("shared receive queues per client", "max-srqs 2"), 0), 1);
}

static struct sockaddr_in addr4(const char *host)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	inet_pton(AF_INET, host, &a.sin_addr);
	return a;
}

Test(daemon_limits, listeners)
{
	struct sockaddr_in a = addr4(NETNS_A4);
	struct iwx_device *dev;
	struct iwx_listener *l;

	start(ARGS "--max-listeners 1");
	dev = dev_nobody(0, 0, MIB);
	l = iwx_listen(dev, (struct sockaddr *)&a, sizeof(a), 8);
	cr_assert_not_null(l, "%s", strerror(errno));
	cr_assert_null(iwx_listen(dev, (struct sockaddr *)&a, sizeof(a), 8), "a second listener");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(iwx_listener_destroy(l), 0);
	cr_assert_not_null(iwx_listen(dev, (struct sockaddr *)&a, sizeof(a), 8), "%s",
			   strerror(errno));
	cr_assert_eq(logged(0, LIMIT_LOG("listeners per client", "max-listeners 1"), 0), 1);
}

static void expect_event(struct endpoint *e, enum iwx_event_type type, int ms,
			 struct iwx_event *ev)
{
	int err = endpoint_event(e, ev, ms);

	cr_assert_eq(err, 0, "event '%s' within %d ms: %s", iwx_event_name(type), ms,
		     strerror(-err));
	cr_assert_eq(ev->type, type, "event '%s', not '%s'", iwx_event_name(type),
		     iwx_event_name(ev->type));
}

/*
 * Connection requests a client has not answered: beyond the limit the peer is rejected
 * on the wire at once, not announced (an unanswered one would be after 5 s, half of the
 * default --timeout-ms).
 */
Test(daemon_limits, unanswered_connection_requests)
{
	struct sockaddr_in b4 = addr4(NETNS_B4);
	struct sockaddr_storage ss;
	struct iwx_listener *l;
	struct iwx_event ev;
	uint32_t first;

	start(ARGS "--max-requests 1");
	endpoint_nobody(&eb, 1);
	cr_assert_eq(endpoint_open(&ea, &pair, 0, MIB), 0);
	cr_assert_eq(endpoint_open(&ec, &pair, 0, MIB), 0);
	l = iwx_listen(eb.dev, (struct sockaddr *)&b4, sizeof(b4), 8);
	cr_assert_not_null(l);
	cr_assert_eq(iwx_listener_addr(l, &ss), 0);

	cr_assert_eq(iwx_connect(ea.qp, (struct sockaddr *)&ss, sizeof(b4), NULL), 0);
	expect_event(&eb, IWX_EVENT_CONNECT_REQUEST, EVENT_MS, &ev);
	first = ev.conn_id;
	cr_assert_eq(iwx_connect(ec.qp, (struct sockaddr *)&ss, sizeof(b4), NULL), 0);
	expect_event(&ec, IWX_EVENT_REJECTED, 2000, &ev);
	cr_assert_eq(endpoint_event(&eb, &ev, QUIET_MS), -EAGAIN, "the second was not announced");
	cr_assert_eq(logged(1, LIMIT_LOG("connection requests a client has not answered",
					 "max-requests 1") ": refused", 0), 1);

	/* the first answered, the next is announced */
	cr_assert_eq(iwx_accept(eb.qp, first, NULL), 0);
	expect_event(&eb, IWX_EVENT_ESTABLISHED, EVENT_MS, &ev);
	expect_event(&ea, IWX_EVENT_ESTABLISHED, EVENT_MS, &ev);
	cr_assert_eq(iwx_connect(ec.qp, (struct sockaddr *)&ss, sizeof(b4), NULL), 0);
	expect_event(&eb, IWX_EVENT_CONNECT_REQUEST, EVENT_MS, &ev);
	cr_assert_eq(iwx_reject(eb.dev, ev.conn_id, NULL, 0), 0);
	expect_event(&ec, IWX_EVENT_REJECTED, EVENT_MS, &ev);
}

/* A client that asks and never reads what it is told is dropped, and iwxd carries on. */
Test(daemon_limits, client_that_does_not_read)
{
	struct iwx_ipc_hdr h = { .op = IWX_IPC_PD_ALLOC };
	int fd, sent = 0, got = 0, n;
	uint8_t body[IWX_IPC_MAX];

	start(ARGS "--max-queued 64");
	fd = raw_nobody(0, 5);
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	/* fewer than the 8192 iwxd used to queue; it answers each with ENOTCONN (no HELLO) */
	for (; sent < 5000; sent++) {
		h.seq = sent + 1;
		if (iwx_ipc_send(fd, &h, NULL, NULL, 0))
			break;	/* iwxd hung up */
	}
	cr_assert_eq(logged(0, LIMIT_LOG("replies and events a client has not read",
					 "max-queued 64") ": closing it", EVENT_MS), 1);
	while ((n = iwx_ipc_recv(fd, &h, body, sizeof(body), NULL, NULL)) >= 0)
		got++;
	cr_assert_eq(n, -ECONNRESET, "the end of the stream, not %s", strerror(-n));
	cr_assert_lt(got, sent, "%d of %d requests answered before iwxd hung up", got, sent);

	cr_assert_not_null(iwx_alloc_pd(dev_nobody(0, 0, MIB)), "iwxd serves others");
}

/* ------------------------------------------------------------ in total */

Test(daemon_limits, arena_bytes_of_all_clients)
{
	struct iwx_device *second;

	static uint8_t outside[MIB] __attribute__((aligned(65536)));
	struct iwx_pd *pd;

	/* more for one user than for all, and no share kept for others: the total is tested here */
	start(ARGS "--arena-total 3M --arena-max 2M --memory-per-user 8M --users 1");
	pd = iwx_alloc_pd(dev_nobody(0, 0, 2 * MIB));
	cr_assert_not_null(pd);
	cr_assert_null(iwx_reg_mr(pd, outside, 65536, 0), "registered memory counts too");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_null(open_nobody(0, 2 * MIB), "2 MiB more than 3 MiB allow");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_null(open_nobody(0, 3 * MIB), "more than --arena-max");
	cr_assert_eq(errno, EFBIG, "%s", strerror(errno));
	cr_assert_geq(logged(0, LIMIT_LOG("bytes all clients share with iwxd (arenas, rings, registered memory)",
					  "arena-total 3145728"), 0), 1);

	iwx_close(devs[0]);
	devs[0] = NULL;
	second = devs[1] = open_nobody_retry(0, 2 * MIB);
	cr_assert_not_null(second, "the first gone, its bytes are free: %s", strerror(errno));
	cr_assert_not_null(iwx_alloc_pd(second));
}

Test(daemon_limits, clients_connected)
{
	static char out[16384];

	start(ARGS "--max-clients 3 --max-clients-per-user 3");
	for (int i = 0; i < 3; i++)
		dev_nobody(i, 0, MIB);
	for (int i = 0; i < 2; i++) {
		cr_assert_null(open_nobody(0, MIB), "a fourth client");
		cr_assert_eq(errno, EMFILE, "%s", strerror(errno));
	}
	cr_assert_eq(logged(0, LIMIT_LOG("clients connected at once", "max-clients 3") ": turned away",
			    0), 1, "said once while the places are taken");

	/* those in are served, and root gets in to look */
	cr_assert_not_null(iwx_alloc_pd(devs[0]), "%s", strerror(errno));
	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", pair.sock[0]), 0, "%s", out);
	cr_assert_eq(json_num(out, "connected"), 4, "three and iwx itself: %s", out);
	cr_assert_eq(json_num(out, "max_clients"), 3, "%s", out);

	iwx_close(devs[2]);
	devs[2] = open_nobody_retry(0, MIB);
	cr_assert_not_null(devs[2], "one gone, the next gets in: %s", strerror(errno));
}

/* Connections that hung up before iwxd took them take no place (a probe, a client that died). */
Test(daemon_limits, clients_gone_before_accept_take_no_place)
{
	int live, err;

	start(ARGS "--max-clients 1");
	/* iwxd stopped: the three wait in its backlog with the fourth, all taken in one turn */
	cr_assert_eq(kill(pair.pid[0], SIGSTOP), 0, "%m");
	for (int i = 0; i < 3; i++) {
		int fd = raw_nobody(0, 5);

		cr_assert_geq(fd, 0, "%s", strerror(-fd));
		close(fds[--nfds]);
	}
	live = raw_nobody(0, 5);
	cr_assert_geq(live, 0, "%s", strerror(-live));
	cr_assert_eq(kill(pair.pid[0], SIGCONT), 0, "%m");
	err = hello(live, MIB, NULL);
	cr_assert_eq(err, 0, "the one place is the live client's: %s (%s)", strerror(-err), raw_why());
}

/* utime + stime of process pid, in seconds. */
static double cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %m", path);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')');	/* the name may hold spaces */
	cr_assert(p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			      &st) == 2, "%s", buf);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* How many descriptors process pid has open. */
static unsigned open_fds(pid_t pid)
{
	char path[64];
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	cr_assert_not_null(d, "%s: %m", path);
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;	/* . and .. */
}

/* Out of descriptors, iwxd waits for them rather than spinning on its socket. */
Test(daemon_limits, out_of_descriptors_on_accept)
{
	struct rlimit few;
	pid_t pid;
	char comm[32] = "";
	double used;
	FILE *f;
	int fd;

	start(ARGS);
	pid = pair.pid[0];
	snprintf(comm, sizeof(comm), "/proc/%d/comm", (int)pid);
	f = fopen(comm, "r");
	cr_assert(f && fgets(comm, sizeof(comm), f), "pid %d", (int)pid);
	fclose(f);
	cr_assert_str_eq(comm, "iwxd\n", "ip netns exec became iwxd");
	/* room for a few clients beyond what it holds (the fast path's maps and programs too) */
	few.rlim_cur = few.rlim_max = open_fds(pid) + 20;
	cr_assert_eq(prlimit(pid, RLIMIT_NOFILE, &few, NULL), 0, "%m");

	/* connect until the daemon's backlog is full too */
	while ((fd = raw_nobody(0, 1)) >= 0)
		cr_assert_lt(nfds, MAX_FDS, "iwxd kept accepting with %lu descriptors",
			     (unsigned long)few.rlim_cur);
	cr_assert_eq(logged(0, "not accepting clients for now: Too many open files", 0), 1);

	used = cpu_s(pid);
	sleep_ms(2000);
	used = cpu_s(pid) - used;
	cr_assert_lt(used, 0.5, "iwxd used %.2f s of CPU in 2 s while out of descriptors", used);

	while (nfds)
		close(fds[--nfds]);
	for (int t = 0; t < RETRY_MS / 50 && endpoint_open(&ea, &pair, 0, MIB); t++)
		sleep_ms(50);
	cr_assert_not_null(ea.qp, "a new client once the descriptors are back");
}

/* ------------------------------------------------------------ HELLO */

Test(daemon_limits, hello_only_once)
{
	unsigned got;
	int fd;

	start(ARGS "--arena-max 2M");
	fd = raw_nobody(0, 5);
	cr_assert_geq(fd, 0);
	cr_assert_eq(hello(fd, MIB, &got), 0);
	cr_assert_eq(got, 4, "arena, doorbell eventfd, notify eventfd and doorbells");
	cr_assert_eq(hello(fd, MIB, &got), -EALREADY);
	cr_assert_eq(got, 0);

	/* a failed HELLO counts as the one */
	fd = raw_nobody(0, 5);
	cr_assert_geq(fd, 0);
	cr_assert_eq(hello(fd, 4 * MIB, NULL), -EFBIG, "more than --arena-max");
	cr_assert_eq(hello(fd, MIB, &got), -EALREADY);
	cr_assert_eq(got, 0);
	cr_assert_eq(raw_call(fd, IWX_IPC_PD_ALLOC, NULL, 0, NULL, 0, NULL, NULL), -ENOTCONN);
}

/* ------------------------------------------------------------ iwx status */

/* ------------------------------------------------------------ per user */

/* Key of daemon 0's `iwx status -j` reaches want within RETRY_MS. */
static bool status_reaches(const char *key, int64_t want)
{
	int64_t v = -1;

	for (int t = 0; t < RETRY_MS / 50 && v != want; t++) {
		if (t)
			sleep_ms(50);
		v = status_num(pair.sock[0], key);
	}
	return v == want;
}

/* SHM_CREATE of size bytes on sock: 0 and its descriptor in *fd and id in *id, or -errno. */
static int shm_create(int sock, uint64_t size, int *fd, uint32_t *id)
{
	struct iwx_ipc_shm req = { .size = size };
	unsigned one = 1;
	int err = raw_call(sock, IWX_IPC_SHM_CREATE, &req, sizeof(req), &req, sizeof(req), fd, &one);

	if (!err)
		cr_assert_eq(one, 1, "SHM_CREATE gives its descriptor");
	*id = req.shm;
	return err;
}

Test(daemon_limits, memory_kept_after_free_counts)
{
	struct iwx_ipc_hello h = { .version = IWX_IPC_VERSION, .arena_size = MIB };
	struct { uint8_t *p; int fd; } kept[24];
	unsigned got = 4;
	int hfds[4], sock, n, err = 0, fd;
	uint8_t *arena;
	uint32_t id;

	start(ARGS "--memory-per-user 16M --arena-max 16M");
	sock = raw_nobody(0, 5);
	cr_assert_geq(sock, 0);
	cr_assert_eq(raw_call(sock, IWX_IPC_HELLO, &h, sizeof(h), &h, sizeof(h), hfds, &got), 0);
	cr_assert_eq(got, 4);
	arena = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, hfds[0], 0);
	cr_assert(arena != MAP_FAILED, "%m");
	for (int k = 0; k < 4; k++)
		close(hfds[k]);	/* the arena stays mapped */

	/* memory made, written and freed, its descriptor and mapping kept: still counted */
	for (n = 0; n < 24; n++) {
		struct iwx_ipc_id free_req;

		err = shm_create(sock, MIB, &kept[n].fd, &id);
		if (err)
			break;
		kept[n].p = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, kept[n].fd, 0);
		cr_assert(kept[n].p != MAP_FAILED, "%m");
		memset(kept[n].p, 0xa5, MIB);
		free_req.id = id;
		cr_assert_eq(raw_call(sock, IWX_IPC_SHM_FREE, &free_req, sizeof(free_req), NULL, 0,
				      NULL, NULL), 0);
	}
	cr_assert_eq(err, -ENOSPC, "after %d MiB freed and kept: %s", n, strerror(-err));
	cr_assert_eq(n, 14, "16 MiB for the user: its arena, its doorbells' page and 14 MiB");
	cr_assert(strstr(raw_why(), "(--memory-per-user 16777216)"), "the reply says why: %s",
		  raw_why());
	cr_assert_geq(logged(0, "user 65534 (client", 0), 1, "the refusal names the user");
	cr_assert_geq(logged(0, "at the limit of bytes one user's clients share with iwxd, and "
			     "those it keeps after they go (--memory-per-user 16777216): refused", 0), 1);
	cr_assert(status_reaches("departed_bytes", 14 * MIB), "iwx status shows what it kept");

	/* it lets go: free again once iwxd looks (every second) */
	for (int k = 0; k < n; k++) {
		munmap(kept[k].p, MIB);
		close(kept[k].fd);
	}
	for (int t = 0; t < RETRY_MS / 50; t++) {
		err = shm_create(sock, MIB, &fd, &id);
		if (err != -ENOSPC)
			break;
		sleep_ms(50);
	}
	cr_assert_eq(err, 0, "what it let go of counts no more: %s", strerror(-err));
	close(fd);

	/* the client goes with its arena still mapped: counted until that goes too */
	cr_assert_eq(fds[nfds - 1], sock);
	close(fds[--nfds]);
	cr_assert(status_reaches("departed_bytes", MIB), "the arena a departed client maps");
	cr_assert(status_reaches("arena_bytes", MIB));
	munmap(arena, MIB);
	cr_assert(status_reaches("arena_bytes", 0), "nothing left held");
	cr_assert(status_reaches("departed_bytes", 0));
	cr_assert(status_reaches("users", 1), "no user but root, who asks");
}

Test(daemon_limits, one_user_leaves_others_their_share)
{
	static uint8_t outside[2 * MIB] __attribute__((aligned(65536)));
	struct iwx_pd *pd;
	int a;

	/* per user: a quarter of the clients (3), half of the bytes (4 MiB); the ceilings alone,
	   nothing kept for users yet to come (twenty_users_each_get_their_guaranteed_share) */
	start(ARGS "--max-clients 12 --arena-total 8M --users 1");
	for (a = 0; a < 12; a++) {
		devs[a] = open_nobody(0, MIB);
		if (!devs[a])
			break;
	}
	cr_assert_eq(a, 3, "nobody takes as many clients as it may: %d", a);
	cr_assert_eq(errno, EMFILE, "%s", strerror(errno));
	cr_assert(strstr(iwx_strerror(errno), "iwxd: user 65534 (client "),
		  "the client's error names the user: %s", iwx_strerror(errno));
	cr_assert(strstr(iwx_strerror(errno), "(--max-clients-per-user 3)"), "and the limit");
	cr_assert_eq(logged(0, "user 65534 (client", 0), 1);
	cr_assert_eq(logged(0, "at the limit of clients one user (uid) has connected at once "
			    "(--max-clients-per-user 3): turned away", 0), 1);
	pd = iwx_alloc_pd(devs[0]);
	cr_assert_not_null(pd);
	cr_assert_null(iwx_reg_mr(pd, outside, 2 * MIB, IWX_ACCESS_LOCAL_WRITE),
		       "more memory than the user has left");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert(strstr(iwx_strerror(errno), "(--memory-per-user 4194304)"), "%s",
		  iwx_strerror(errno));
	cr_assert_geq(logged(0, "(--memory-per-user 4194304): refused", 0), 1);

	/* another user has its own clients and memory */
	for (int b = 0; b < 3; b++) {
		devs[3 + b] = open_as(OTHER, 0, MIB);
		cr_assert_not_null(devs[3 + b], "the other user's client %d: %s", b, strerror(errno));
	}
	pd = iwx_alloc_pd(devs[3]);
	cr_assert_not_null(pd);
	cr_assert_not_null(iwx_reg_mr(pd, outside, MIB / 2, IWX_ACCESS_LOCAL_WRITE), "%s",
			   strerror(errno));
}

/* What `iwx status` says user uid holds of key ("bytes", "clients"); -1 if it names no such user. */
static int64_t user_holds(uid_t uid, const char *key)
{
	static char out[1 << 16];
	char at[32];
	const char *p;

	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", pair.sock[0]), 0, "%s", out);
	snprintf(at, sizeof(at), "\"uid\": %u,", (unsigned)uid);
	p = strstr(out, at);
	return p ? json_num(p, key) : -1;
}

/*
 * Twenty users come one after the other, each taking all it can of the clients and then
 * of the memory: each still gets what --users (32) guarantees it, 1/64 of each total, and
 * a user who comes last as well; the first, alone, could borrow up to its ceiling.
 */
Test(daemon_limits, twenty_users_each_get_their_guaranteed_share)
{
	enum { USERS = 20, FIRST_UID = 60000, CHUNK = 256 << 10, TRIES = 160 };
	const int64_t clients_each = 64 / 64, bytes_each = 64 * MIB / 64;
	int socks[USERS + 1] = { 0 }, n, err = 0, fd;
	uint32_t id;

	start(ARGS "--max-clients 64 --arena-total 64M");
	for (int u = 0; u <= USERS; u++) {
		uid_t uid = FIRST_UID + (uid_t)u;

		for (n = 0; n < TRIES; n++) {
			int sock = raw_as(uid, 0, 5);

			cr_assert_geq(sock, 0, "%s", strerror(-sock));
			err = hello(sock, 64 << 10, NULL);
			if (err)
				break;
			if (!n)
				socks[u] = sock;
		}
		cr_assert_eq(err, -EMFILE, "user %u: turned away in the end: %s", (unsigned)uid,
			     strerror(-err));
		if (!u)
			cr_assert_eq(n, 16, "alone, the first borrows up to its ceiling (a quarter)");
		cr_assert_geq(n, clients_each, "user %u: %d clients, guaranteed %" PRId64,
			      (unsigned)uid, n, clients_each);
		for (n = 0; n < TRIES; n++) {
			err = shm_create(socks[u], CHUNK, &fd, &id);
			if (err)
				break;
			close(fd);	/* it stays held, by the client, until it frees it */
		}
		cr_assert_eq(err, -ENOSPC, "user %u: refused in the end: %s", (unsigned)uid,
			     strerror(-err));
		cr_assert(strstr(raw_why(), u ? "guaranteed" : "(--memory-per-user 33554432)"),
			  "user %u: %s", (unsigned)uid, raw_why());
		cr_assert_gt(user_holds(uid, "bytes"), bytes_each - CHUNK, "user %u: %" PRId64
			     " bytes, guaranteed %" PRId64, (unsigned)uid, user_holds(uid, "bytes"),
			     bytes_each);
	}
	/* the fifth user took its guaranteed client, and more is kept for others: it is told so */
	cr_assert_null(open_as(FIRST_UID + 4, 0, 64 << 10));
	cr_assert_eq(errno, EMFILE, "%s", strerror(errno));
	cr_assert(strstr(iwx_strerror(errno), "iwxd: user 60004 (client "), "%s", iwx_strerror(errno));
	cr_assert(strstr(iwx_strerror(errno), "each of --users 32 is guaranteed"), "%s",
		  iwx_strerror(errno));
	cr_assert_geq(logged(0, "each of --users 32 is guaranteed: what is free is kept for other "
			     "users: turned away", 0), 1);
	cr_assert_geq(logged(0, "each of --users 32 is guaranteed: what is free is kept for other "
			     "users: refused", 0), 1);
}

Test(daemon_limits, counts_of_one_user)
{
	struct iwx_device *dev;
	struct iwx_pd *pd;

	start(ARGS "--max-pds 2 --max-clients-per-user 8");
	for (int i = 0; i < 4; i++) {
		dev = dev_nobody(i, 0, MIB);
		cr_assert(iwx_alloc_pd(dev) && iwx_alloc_pd(dev), "%s", strerror(errno));
	}
	dev = dev_nobody(4, 0, MIB);
	cr_assert_null(iwx_alloc_pd(dev), "a fifth client's PD: four clients' worth are taken");
	cr_assert_eq(errno, ENOSPC, "%s", strerror(errno));
	cr_assert_eq(logged(0, "its clients hold 4 clients' worth of protection domains per "
			    "client (4 x --max-pds 2): refused", 0), 1);
	devs[5] = open_as(OTHER, 0, MIB);
	cr_assert_not_null(devs[5]);
	cr_assert(iwx_alloc_pd(devs[5]) && iwx_alloc_pd(devs[5]), "another user's: %s",
		  strerror(errno));
	iwx_close(devs[0]);
	devs[0] = NULL;
	pd = NULL;
	for (int t = 0; t < RETRY_MS / 20 && !pd; t++) {
		pd = iwx_alloc_pd(dev);
		if (!pd)
			sleep_ms(20);
	}
	cr_assert_not_null(pd, "one client gone, its PDs are its user's again: %s", strerror(errno));
}

Test(daemon_limits, memlock_of_the_client)
{
	static uint8_t outside[2 * MIB] __attribute__((aligned(65536)));
	struct rlimit was, rl = { 4 * MIB, RLIM_INFINITY };
	struct iwx_device *dev;
	struct iwx_pd *pd;

	start(ARGS "--memlock");
	cr_assert_eq(getrlimit(RLIMIT_MEMLOCK, &was), 0);
	rl.rlim_max = was.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0, "ulimit -l 4096: %m");
	dev = open_nobody(0, 8 * MIB);
	cr_assert_null(dev, "an arena beyond its RLIMIT_MEMLOCK");
	cr_assert_eq(errno, ENOMEM, "as the kernel's RDMA stack: %s", strerror(errno));
	dev = dev_nobody(0, 0, 3 * MIB);
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &was), 0, "read at connect: raising it now changes nothing");
	pd = iwx_alloc_pd(dev);
	cr_assert_not_null(pd);
	cr_assert_null(iwx_reg_mr(pd, outside, 2 * MIB, IWX_ACCESS_LOCAL_WRITE), "3 + 2 MiB > 4");
	cr_assert_eq(errno, ENOMEM, "%s", strerror(errno));
	cr_assert_not_null(iwx_reg_mr(pd, outside, MIB, IWX_ACCESS_LOCAL_WRITE), "%s",
			   strerror(errno));
	cr_assert_eq(logged(0, "would pass its RLIMIT_MEMLOCK (4194304, --memlock): refused", 0), 2,
		     "once for each client");
}

Test(daemon_limits, status_shows_limits_and_use)
{
	static char out[16384];
	static const struct {
		const char	*key;
		int64_t		value;
	} want[] = {
		{ "connected", 2 }, { "max_clients", 7 }, { "clients", 1 },
		/* the arena and the doorbells' page-rounded memory: all a client shares at first */
		{ "arena_bytes", 4 * MIB + ((IWX_IPC_BELLS_SIZE + 4095) & ~4095) },
		{ "arena_total", 64 * MIB }, { "arena_max", 8 * MIB },
		{ "max_pds", 5 }, { "max_mrs", 6 }, { "max_cqs", 9 }, { "max_qps", 10 },
		{ "max_listeners", 11 }, { "max_requests", 12 }, { "max_queued", 13 },
		{ "maps", 2 }, { "maps_total", 15 }, { "max_maps", 14 }, { "max_srqs", 16 },
	};

	start(ARGS "--max-clients 7 --arena-total 64M --arena-max 8M --max-pds 5 --max-mrs 6 "
	      "--max-cqs 9 --max-qps 10 --max-listeners 11 --max-requests 12 --max-queued 13 "
	      "--max-maps 14 --maps-total 15 --max-srqs 16");
	dev_nobody(0, 0, 4 * MIB);
	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", pair.sock[0]), 0, "%s", out);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert_eq(json_num(out, want[i].key), want[i].value, "%s: %s", want[i].key, out);

	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s", pair.sock[0]), 0, "%s", out);
	cr_assert(strstr(out, "clients connected     2 of 7"), "%s", out);
	cr_assert(strstr(out, "shared memory         4.0 MiB of 64.0 MiB"), "%s", out);
	cr_assert(strstr(out, "CQs, QPs, SRQs      9, 10, 16"), "%s", out);
}

/* ------------------------------------------------------------ options */

/* Run iwxd with args (it must not start serving); its exit status, its output in out. */
static int run_iwxd(char *out, size_t cap, const char *args)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s -s /nonexistent/iwxd.sock %s", iwxd_path(), args);
	return run_cmd(out, cap, cmd);
}

Test(daemon_limits_usage, options)
{
	static const char *const flags[] = {
		"--max-clients N", "--arena-total BYTES", "--arena-max BYTES", "--max-pds N",
		"--max-mrs N", "--max-cqs N", "--max-qps N", "--max-listeners N", "--max-requests N",
		"--max-queued N", "--max-srqs N",
	};
	static const char *const bad[] = {
		"--max-cqs 0", "--max-qps -1", "--max-pds 4294967296", "--max-mrs 12x",
		"--arena-total 0", "--arena-total 3X", "--arena-max ' 1M'",
	};
	static char out[8192];

	cr_assert_eq(run_iwxd(out, sizeof(out), "--help"), 0, "%s", out);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		cr_assert(strstr(out, flags[i]), "%s in:\n%s", flags[i], out);
	cr_assert(strstr(out, "(default 4G)") && strstr(out, "(default 1024)"), "%s", out);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char opt[32];

		cr_assert_eq(run_iwxd(out, sizeof(out), bad[i]), 2, "%s: %s", bad[i], out);
		snprintf(opt, sizeof(opt), "%.*s takes", (int)strcspn(bad[i], " "), bad[i]);
		cr_assert(strstr(out, opt), "%s: %s", bad[i], out);
	}
}

/* A command line iwxd does not take: what was wrong, then where to look; never the help. */
Test(daemon_limits_usage, bad_usage_is_one_line_and_a_pointer)
{
	static const struct bad_usage bad[] = {
		{ "--foo", "unrecognized option '--foo'" },
		{ "-Z", "invalid option -- 'Z'" },
		{ "--socket", "option '--socket' requires an argument" },
		{ "extra", "iwxd: unexpected argument extra" },
	};
	static char out[8192];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(run_iwxd(out, sizeof(out), bad[i].args), 2, "%s: %s", bad[i].args, out);
		assert_usage_error(out, bad[i].says, "Try 'iwxd --help' for more information.");
	}
}
