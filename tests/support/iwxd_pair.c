// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ipc.h"

#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "stall.h"
#include "util/clock.h"

/* a daemon serving, an expected event: waits for an event, bounded only against a hang */
#define START_MS	STALL_MS
#define EVENT_MS	STALL_MS
/* a daemon stopping: it closes what it holds (thousands of connections, under ASan, take
   more than 5 s); killed, it would skip its sanitizers' checks at exit */
#define STOP_MS		STALL_MS
#define WC_POLL_MS	500	/* endpoint_wc: how often it looks at the daemons' traffic */

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

const char *iwxd_path(void)
{
	const char *p = getenv("IWX_IWXD");

	return p ? p : "build/iwxd";
}

static pid_t spawn(const char *ns, const char *sock, const char *log, const char *args)
{
	const char *argv[64];
	char copy[512];
	int n = 0;
	pid_t pid;

	snprintf(copy, sizeof(copy), "%s", args ? args : "");
	argv[n++] = "ip";
	argv[n++] = "netns";
	argv[n++] = "exec";
	argv[n++] = ns;
	argv[n++] = iwxd_path();
	argv[n++] = "-s";
	argv[n++] = sock;
	argv[n++] = "-v";
	for (char *tok = strtok(copy, " "); tok && n < 62; tok = strtok(NULL, " "))
		argv[n++] = tok;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		/* a test killed (time-out, crash) takes its daemons along: .fini never runs then */
		prctl(PR_SET_PDEATHSIG, SIGTERM);

		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		execvp("ip", (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/*
 * The daemon at path answers a request: its loop runs. A connect alone succeeds once the
 * socket listens, which is before iwxd has set up the rest (its threads, usrsctp: a
 * second and more under ASan) and takes anyone in.
 */
static bool serving(const char *path)
{
	struct iwx_ipc_status st;
	int fd = iwx_ipc_connect(path, 1);
	bool up;

	if (fd < 0)
		return false;
	up = !raw_call(fd, IWX_IPC_STATUS, NULL, 0, &st, sizeof(st), NULL, NULL);
	close(fd);
	return up;
}

/* Wait up to START_MS for daemon i, or both (i < 0), to serve. */
static bool wait_serving(const struct iwxd_pair *p, int i)
{
	uint64_t end = iwx_now_ms() + START_MS;

	do {
		if ((i == 1 || serving(p->sock[0])) && (i == 0 || serving(p->sock[1])))
			return true;
		sleep_ms(10);
	} while (iwx_now_ms() < end);
	return false;
}

static void log_path(const struct iwxd_pair *p, int i, char *out, size_t cap)
{
	snprintf(out, cap, "%s/iwxd-%c.log", p->dir, 'a' + i);
}

static void remove_dir(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;

	/* sockets, logs, and whatever a test left there (captures) */
	while (dir && (e = readdir(dir))) {
		char file[384];

		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if (e->d_name[0] != '.')
			unlink(file);
	}
	if (dir)
		closedir(dir);
	rmdir(path);
}

/* Directories of test processes gone without cleaning up (killed): their pid is dead. */
static void remove_stale_dirs(void)
{
	DIR *dir = opendir("/tmp");
	struct dirent *e;
	int pid;

	while (dir && (e = readdir(dir))) {
		char path[300];

		if (sscanf(e->d_name, "iwxt-%d-", &pid) == 1 && pid > 0 && kill(pid, 0) < 0 &&
		    errno == ESRCH) {
			snprintf(path, sizeof(path), "/tmp/%s", e->d_name);
			remove_dir(path);
		}
	}
	if (dir)
		closedir(dir);
}

/* IWX_TEST_FASTPATH=tc|xdp: the fast path on both daemons, for whatever suite runs. */
static int attach_asked(struct iwxd_pair *p)
{
	const char *mode = getenv("IWX_TEST_FASTPATH");
	bool xdp = mode && !strcmp(mode, "xdp");
	int err;

	if (!mode || !*mode)
		return 0;
	err = iwxd_pair_attach_both(p, xdp ? IWX_FP_MODE_XDP : IWX_FP_MODE_TC);
	if (err) {
		fprintf(stderr, "IWX_TEST_FASTPATH=%s: cannot attach: %s\n", mode, strerror(-err));
		iwxd_pair_stop(p);
	}
	return err;
}

int iwxd_pair_start(struct iwxd_pair *p, const char *args)
{
	int err;

	if (p->dir[0])
		return -EBUSY;	/* started already: starting again would lose track of it */
	memset(p, 0, sizeof(*p));
	p->pid[0] = p->pid[1] = -1;
	remove_stale_dirs();
	snprintf(p->dir, sizeof(p->dir), "/tmp/iwxt-%d-XXXXXX", getpid());
	if (!mkdtemp(p->dir))
		return -errno;
	err = netns_pair_setup(&p->ns);
	if (err) {
		rmdir(p->dir);
		p->dir[0] = 0;
		return err;
	}
	for (int i = 0; i < 2; i++) {
		char log[128];

		snprintf(p->sock[i], sizeof(p->sock[i]), "%s/iwxd-%c.sock", p->dir, 'a' + i);
		log_path(p, i, log, sizeof(log));
		p->pid[i] = spawn(i ? p->ns.b : p->ns.a, p->sock[i], log, args);
		if (p->pid[i] < 0) {
			iwxd_pair_stop(p);
			return -EAGAIN;
		}
	}
	if (wait_serving(p, -1))
		return attach_asked(p);
	iwxd_pair_stop(p);
	return -ETIMEDOUT;
}

/*
 * Native XDP on a veth sees what the peer sent as it was built: with the peer's checksum
 * offload on, a TCP checksum nobody computed (CHECKSUM_PARTIAL), which the program rightly
 * refuses. Real NICs verify checksums; on veth, turn the sender's offload off.
 */
int iwxd_pair_tx_offload_off(const struct iwxd_pair *p, int i)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ip netns exec %s ethtool -K %s tx off >/dev/null 2>&1",
		 i ? p->ns.b : p->ns.a, p->ns.dev[i]);
	return system(cmd) ? -EIO : 0;
}

int iwxd_pair_attach(const struct iwxd_pair *p, int i, uint32_t mode, uint32_t flags)
{
	struct iwx_ipc_fp_attach req = { .mode = mode, .flags = flags };
	struct iwx_ipc_fp_attached notes;
	int sock, err;

	if (mode == IWX_FP_MODE_XDP && (err = iwxd_pair_tx_offload_off(p, !i)))
		return err;
	sock = iwx_ipc_connect(p->sock[i], 0);
	if (sock < 0)
		return sock;
	snprintf(req.ifname, sizeof(req.ifname), "%s", p->ns.dev[i]);
	err = raw_call(sock, IWX_IPC_FP_ATTACH, &req, sizeof(req), &notes, sizeof(notes), NULL, NULL);
	close(sock);
	return err;
}

int iwxd_pair_fp_counters(const struct iwxd_pair *p, int i, uint32_t kind, struct iwx_fp_counters *c)
{
	struct iwx_ipc_fp_info e[8];
	int sock = iwx_ipc_connect(p->sock[i], 0), err;

	memset(c, 0, sizeof(*c));
	if (sock < 0)
		return sock;
	memset(e, 0, sizeof(e));
	err = raw_call(sock, IWX_IPC_FP_STATS, NULL, 0, e, sizeof(e), NULL, NULL);
	close(sock);
	if (err)
		return err;
	for (size_t k = 0; k < sizeof(e) / sizeof(e[0]); k++)
		if (e[k].kind == kind && e[k].id) {
			*c = e[k].c;
			return 0;
		}
	return -ENOENT;
}

int iwxd_pair_traffic(const struct iwxd_pair *p, int i, struct iwx_qp_stats *t)
{
	struct iwx_ipc_status st;
	int sock = iwx_ipc_connect(p->sock[i], 0), err;

	if (sock < 0)
		return sock;
	memset(&st, 0, sizeof(st));
	err = raw_call(sock, IWX_IPC_STATUS, NULL, 0, &st, sizeof(st), NULL, NULL);
	close(sock);
	*t = st.traffic;
	return err;
}

int iwxd_pair_attach_both(const struct iwxd_pair *p, uint32_t mode)
{
	int err = 0;

	for (int i = 0; i < 2 && !err; i++)
		err = iwxd_pair_attach(p, i, mode, 0);
	return err;
}

/* Wait for pid up to ms; its wait status, or -1 if it did not end. */
static int reap(pid_t pid, int ms)
{
	int status;

	for (int t = 0; t < ms / 10; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		sleep_ms(10);
	}
	return -1;
}

static void dump_log(const struct iwxd_pair *p, int i)
{
	char log[128], line[512];
	FILE *f;

	log_path(p, i, log, sizeof(log));
	f = fopen(log, "r");
	fprintf(stderr, "---- %s\n", log);
	while (f && fgets(line, sizeof(line), f))
		fputs(line, stderr);
	if (f)
		fclose(f);
}

/*
 * With IWX_TEST_KEEP_LOGS naming a directory (make test-asan, test-fastpath), daemon i's
 * log is kept there as SUITE::TEST.iwxd-a.log: what the daemons said of a test that failed
 * in CI, where nobody can run it again.
 */
static void keep_log(const struct iwxd_pair *p, int i)
{
	const char *dir = getenv("IWX_TEST_KEEP_LOGS");
	char log[128], kept[512], line[512];
	FILE *in, *out;

	if (!dir || !*dir || !criterion_current_test)
		return;
	log_path(p, i, log, sizeof(log));
	snprintf(kept, sizeof(kept), "%s/%s::%s.iwxd-%c.log", dir, criterion_current_test->category,
		 criterion_current_test->name, 'a' + i);
	in = fopen(log, "r");
	out = in ? fopen(kept, "w") : NULL;
	while (out && fgets(line, sizeof(line), in))
		fputs(line, out);
	if (out)
		fclose(out);
	if (in)
		fclose(in);
}

int iwxd_pair_log_count(const struct iwxd_pair *p, int i, const char *what)
{
	char log[128], line[512];
	FILE *f;
	int n = 0;

	log_path(p, i, log, sizeof(log));
	f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return n;
}

void iwxd_pair_kill(struct iwxd_pair *p, int i)
{
	if (p->pid[i] > 0) {
		kill(p->pid[i], SIGKILL);
		waitpid(p->pid[i], NULL, 0);
		p->pid[i] = -1;
	}
}

int iwxd_pair_respawn(struct iwxd_pair *p, int i, const char *args)
{
	char log[128];

	if (p->pid[i] > 0)
		return -EBUSY;
	log_path(p, i, log, sizeof(log));
	p->pid[i] = spawn(i ? p->ns.b : p->ns.a, p->sock[i], log, args);
	if (p->pid[i] < 0)
		return -EAGAIN;
	return wait_serving(p, i) ? 0 : -ETIMEDOUT;
}

int iwxd_pair_reachable(const struct iwxd_pair *p)
{
	return chmod(p->dir, 0711) ? -errno : 0;
}

bool iwxd_pair_logged(const struct iwxd_pair *p, int i, const char *what)
{
	return iwxd_pair_log_count(p, i, what) > 0;
}

void iwxd_pair_stop(struct iwxd_pair *p)
{
	for (int i = 0; i < 2; i++) {
		int status;

		if (p->pid[i] <= 0)
			continue;
		if (getenv("IWX_TEST_LOGS"))	/* debugging a test: show what the daemons said */
			dump_log(p, i);
		kill(p->pid[i], SIGTERM);
		status = reap(p->pid[i], STOP_MS);
		if (status == -1) {
			fprintf(stderr, "iwxd %c did not stop on SIGTERM: killed\n", 'a' + i);
			iwxd_pair_kill(p, i);
			dump_log(p, i);
		} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			/* a sanitizer report, or a crash: the test that stops it must fail */
			dump_log(p, i);
			fprintf(stderr, "iwxd %c ended badly (wait status 0x%x)\n", 'a' + i, status);
			abort();
		}
		p->pid[i] = -1;
		keep_log(p, i);
	}
	netns_pair_teardown(&p->ns);
	if (p->dir[0]) {
		remove_dir(p->dir);
		p->dir[0] = 0;
	}
}

int endpoint_open(struct endpoint *e, const struct iwxd_pair *p, int i, size_t arena)
{
	IWX_OPTS(iwx_open_opts, o, .socket = p->sock[i], .arena_size = arena);
	struct iwx_qp_init_attr attr = { 0 };

	memset(e, 0, sizeof(*e));
	e->pair = p;
	e->dev = iwx_open(&o);
	if (!e->dev)
		return -errno;
	e->pd = iwx_alloc_pd(e->dev);
	e->cq = e->pd ? iwx_create_cq(e->dev, 1024) : NULL;
	attr.send_cq = attr.recv_cq = e->cq;
	e->qp = e->cq ? iwx_create_qp(e->pd, &attr) : NULL;
	if (!e->qp) {
		int err = -errno;

		endpoint_close(e);
		return err;
	}
	return 0;
}

void endpoint_close(struct endpoint *e)
{
	iwx_close(e->dev);	/* the daemon frees what the device made */
	memset(e, 0, sizeof(*e));
}

int endpoint_event(struct endpoint *e, struct iwx_event *ev, int timeout_ms)
{
	return iwx_get_event(e->dev, ev, timeout_ms);
}

static int expect(struct endpoint *e, enum iwx_event_type type, struct iwx_event *ev)
{
	int err = endpoint_event(e, ev, EVENT_MS);

	if (err)
		return err;
	if (ev->type != type) {
		fprintf(stderr, "expected event '%s', got '%s' (status %d)\n", iwx_event_name(type),
			iwx_event_name(ev->type), ev->status);
		return -EPROTO;
	}
	return 0;
}

int endpoint_connect(struct endpoint *a, struct endpoint *b, bool v6,
		     const struct iwx_conn_param *param)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = v6 ? sizeof(*s6) : sizeof(*s4);
	IWX_OPTS(iwx_listen_opts, lo, .backlog = 8, .transport = param ? param->transport : 0);
	struct iwx_listener *l;
	struct iwx_event ev;
	int err;

	ss.ss_family = v6 ? AF_INET6 : AF_INET;
	if (v6)
		inet_pton(AF_INET6, NETNS_B6, &s6->sin6_addr);
	else
		inet_pton(AF_INET, NETNS_B4, &s4->sin_addr);
	l = iwx_listen_with(b->dev, (struct sockaddr *)&ss, len, &lo);
	if (!l)
		return -errno;
	iwx_listener_addr(l, &ss);
	err = iwx_connect(a->qp, (struct sockaddr *)&ss, len, param);
	if (!err)
		err = expect(b, IWX_EVENT_CONNECT_REQUEST, &ev);
	if (!err && ev.info.transport != lo.transport)
		err = -EPROTOTYPE;	/* the request says what carries it */
	if (!err)
		err = iwx_accept(b->qp, ev.conn_id, param);
	if (!err)
		err = expect(b, IWX_EVENT_ESTABLISHED, &ev);
	if (!err)
		err = expect(a, IWX_EVENT_ESTABLISHED, &ev);
	iwx_listener_destroy(l);
	return err;
}

/* What both daemons of p have moved so far: bytes and FPDUs each way, and those placed on arrival. */
static uint64_t pair_progress(const struct iwxd_pair *p)
{
	uint64_t sum = 0;

	for (int i = 0; p && i < 2; i++) {
		struct iwx_qp_stats t;

		if (!iwxd_pair_traffic(p, i, &t))
			sum += t.tx_bytes + t.rx_bytes + t.tx_fpdus + t.rx_fpdus + t.fast_bytes;
	}
	return sum;
}

int endpoint_wc(struct endpoint *e, struct iwx_wc *wc)
{
	struct stall st;

	stall_start(&st, pair_progress(e->pair));
	for (;;) {
		int n = iwx_wait_cq(e->cq, 1, wc, WC_POLL_MS);

		if (n)
			return n == 1 ? 0 : n;
		if (stall_stuck(&st, pair_progress(e->pair)))
			return -ETIMEDOUT;
	}
}

int iwxd_pair_up(struct iwxd_pair *p, const char *args, struct endpoint *a, struct endpoint *b,
		 size_t arena)
{
	int err = iwxd_pair_start(p, args);

	if (!err)
		err = endpoint_open(a, p, 0, arena);
	if (!err)
		err = endpoint_open(b, p, 1, arena);
	return err;
}

void iwxd_pair_down(struct iwxd_pair *p, struct endpoint *a, struct endpoint *b)
{
	if (a->dev)
		endpoint_close(a);
	if (b->dev)
		endpoint_close(b);
	iwxd_pair_stop(p);
}

struct buf buf_new(struct endpoint *e, struct iwx_pd *pd, size_t len, int access, bool outside)
{
	struct buf x = { .len = len };
	size_t n = len ? len : 1, page = (size_t)sysconf(_SC_PAGESIZE);

	/* whole pages: the two endpoints' devices cannot share one (iwx_reg_mr, EBUSY) */
	x.p = outside ? aligned_alloc(page, (n + page - 1) & ~(page - 1)) : iwx_alloc(e->dev, n);
	cr_assert_not_null(x.p, "%zu bytes", n);
	memset(x.p, 0, n);
	x.mr = iwx_reg_mr(pd ? pd : e->pd, x.p, n, access);
	cr_assert_not_null(x.mr, "register %zu bytes: %s", n, iwx_strerror(errno));
	return x;
}

struct iwx_sge sge_of(const struct buf *x, size_t off, uint32_t len)
{
	return (struct iwx_sge){ (uintptr_t)x->p + off, len, x->mr->lkey };
}
