// SPDX-License-Identifier: MIT
/* Two network namespaces on a veth pair for a test, built with iproute2. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netns.h"

#define CMD_TIMEOUT_MS	10000
#define READY_TIMEOUT_MS 5000
#define MAX_ARGS	24

/* Run argv (NULL-terminated), its output discarded; 0 when it exits 0, else -errno. */
static int run(const char *const argv[])
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	posix_spawn_file_actions_t fa;
	int status, err, waited;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	err = -posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return err;
	/* bounded: poll for the exit, kill a hung command */
	for (waited = 0; waitpid(pid, &status, WNOHANG) == 0; waited += 10) {
		if (waited >= CMD_TIMEOUT_MS) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
		nanosleep(&tick, NULL);
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* argv[0..n) then the NULL-terminated list ap into argv; -E2BIG when it does not fit. */
static int collect(const char *argv[], int n, const char *arg0, va_list ap)
{
	argv[n++] = arg0;
	while (n <= MAX_ARGS && (argv[n] = va_arg(ap, const char *)))
		n++;
	return n > MAX_ARGS ? -E2BIG : 0;
}

/* Run ip with the given arguments (NULL-terminated); 0 when it exits 0, else -errno. */
static int ip(const char *arg0, ...)
{
	const char *argv[MAX_ARGS + 2] = { "ip" };
	va_list ap;
	int err;

	va_start(ap, arg0);
	err = collect(argv, 1, arg0, ap);
	va_end(ap);
	return err ? err : run(argv);
}

int netns_exec(const char *ns, const char *arg0, ...)
{
	const char *argv[MAX_ARGS + 2] = { "ip", "netns", "exec", ns };
	va_list ap;
	int err;

	va_start(ap, arg0);
	err = collect(argv, 4, arg0, ap);
	va_end(ap);
	return err ? err : run(argv);
}

/* Namespaces left by test processes that died before their teardown (killed on a time-out). */
static void remove_stale(void)
{
	struct dirent *e;
	DIR *d = opendir("/run/netns");
	int pid;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (sscanf(e->d_name, "iwxt-%d-", &pid) == 1 && pid > 0 &&
		    kill(pid, 0) < 0 && errno == ESRCH)
			ip("netns", "del", e->d_name, NULL);
	closedir(d);
}

static int setup_side(const char *ns, const char *dev, const char *a4, const char *a6)
{
	char addr4[64], addr6[64];
	int err;

	snprintf(addr4, sizeof(addr4), "%s/24", a4);
	snprintf(addr6, sizeof(addr6), "%s/64", a6);
	if ((err = ip("-n", ns, "link", "set", "lo", "up", NULL)) ||
	    (err = ip("-n", ns, "addr", "add", addr4, "dev", dev, NULL)) ||
	    (err = ip("-n", ns, "-6", "addr", "add", addr6, "dev", dev, "nodad", NULL)) ||
	    (err = ip("-n", ns, "link", "set", dev, "up", NULL)))
		return err;
	return 0;
}

/*
 * IPv6 configures a link (link-local address, the ff00::/8 route that neighbour
 * discovery needs) only once it is operationally up, as the kernel's link watcher says;
 * until then the peer's solicitations are dropped and a connect waits a SYN retransmission. 1 when this thread's namespace has the host route
 * of addr (hex, as in ipv6_route), its /64 and ff00::/8; 0 when not yet; -errno.
 */
static int v6_routes_ready(void *addr)
{
	char line[256], want[3][64];
	bool have[3] = { false };
	FILE *f = fopen("/proc/thread-self/net/ipv6_route", "re");
	int i;

	if (!f)
		return -errno;
	snprintf(want[0], sizeof(want[0]), "%s 80 ", (const char *)addr);
	snprintf(want[1], sizeof(want[1]), "%.16s0000000000000000 40 ", (const char *)addr);
	snprintf(want[2], sizeof(want[2]), "ff000000000000000000000000000000 08 ");
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < 3; i++)
			have[i] |= !strncmp(line, want[i], strlen(want[i]));
	fclose(f);
	return have[0] && have[1] && have[2];
}

static int wait_v6_ready(const char *ns, const char *addr)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	int waited, r;

	for (waited = 0; waited < READY_TIMEOUT_MS; waited += 5) {
		r = netns_call(ns, v6_routes_ready, (void *)addr);
		if (r)
			return r < 0 ? r : 0;
		nanosleep(&tick, NULL);
	}
	return -ETIMEDOUT;
}

int netns_pair_setup(struct netns_pair *p)
{
	char dev_a[16], dev_b[16];
	int pid = getpid(), err;

	memset(p, 0, sizeof(*p));
	remove_stale();
	snprintf(p->a, sizeof(p->a), "iwxt-%d-a", pid);
	snprintf(p->b, sizeof(p->b), "iwxt-%d-b", pid);
	snprintf(dev_a, sizeof(dev_a), "iwx%da", pid);
	snprintf(dev_b, sizeof(dev_b), "iwx%db", pid);
	snprintf(p->dev[0], sizeof(p->dev[0]), "%s", dev_a);
	snprintf(p->dev[1], sizeof(p->dev[1]), "%s", dev_b);

	if ((err = ip("netns", "add", p->a, NULL)))
		goto out;
	p->made[0] = true;
	if ((err = ip("netns", "add", p->b, NULL)))
		goto out;
	p->made[1] = true;
	/*
	 * Both ends are created straight in their namespaces (no name in ours), with ifindexes
	 * that differ: the link watcher handles at once the carrier of a device whose iflink
	 * (a veth's: its peer's ifindex) is not its own, and defers by up to a second one
	 * whose is, as both ends' 2 in fresh namespaces would be (linkwatch_urgent_event).
	 */
	if ((err = ip("link", "add", dev_a, "index", "10", "netns", p->a, "type", "veth",
		      "peer", "name", dev_b, "index", "11", "netns", p->b, NULL)) ||
	    (err = setup_side(p->a, dev_a, NETNS_A4, NETNS_A6)) ||
	    (err = setup_side(p->b, dev_b, NETNS_B4, NETNS_B6)) ||
	    (err = wait_v6_ready(p->a, "20010db8000000000000000000000001")) ||
	    (err = wait_v6_ready(p->b, "20010db8000000000000000000000002")))
		goto out;
	return 0;
out:
	netns_pair_teardown(p);
	return err;
}

void netns_pair_teardown(struct netns_pair *p)
{
	/* deleting a namespace destroys its veth end, and with it the pair */
	if (p->made[0])
		ip("netns", "del", p->a, NULL);
	if (p->made[1])
		ip("netns", "del", p->b, NULL);
	p->made[0] = p->made[1] = false;
}

struct call {
	const char	*ns;
	int		(*fn)(void *arg);
	void		*arg;
	int		ret;
};

static void *call_thread(void *v)
{
	struct call *c = v;
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", c->ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		c->ret = -errno;
		return NULL;
	}
	/* setns with CLONE_NEWNET moves this thread only */
	if (setns(fd, CLONE_NEWNET)) {
		c->ret = -errno;
		close(fd);
		return NULL;
	}
	close(fd);
	c->ret = c->fn(c->arg);
	return NULL;
}

int netns_call(const char *ns, int (*fn)(void *arg), void *arg)
{
	struct call c = { ns, fn, arg, 0 };
	pthread_t t;
	int err;

	err = pthread_create(&t, NULL, call_thread, &c);
	if (err)
		return -err;
	pthread_join(t, NULL);
	return c.ret;
}

struct sock_args {
	int domain, type;
};

static int make_socket(void *v)
{
	struct sock_args *a = v;
	int fd = socket(a->domain, a->type, 0);

	return fd < 0 ? -errno : fd;
}

int netns_socket(const char *ns, int domain, int type)
{
	struct sock_args a = { domain, type };

	return netns_call(ns, make_socket, &a);
}
