// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the requests iwxd, as root, takes from any local client: iwxd's
 * own set-up, loop and request dispatch run in this process (serve.h), in a network
 * namespace of its own (only lo: a CONNECT or LISTEN reaches nothing else), and each
 * input is one client on iwxd's socket: an ordinary user's (nobody, let in by iwxd's
 * --group, nogroup), as an attacker would be. A helper process of that user connects
 * and hands this one the socket (SO_PEERCRED names whoever connected); root's own
 * requests (status, attach) are not an attacker's.
 *
 * Input: requests, each a record
 *   op (2 bytes, little-endian), len (2 bytes, at most MAX_BODY), n (1 byte: the low 2
 *   bits, how many pairs follow), n pairs (where: a byte, x 4 the body's offset; which:
 *   a byte), then len bytes of body
 * sent as one message each (header: op, seq counting from 1, len), the body's word at
 * each where replaced by the which-th (modulo) identifier iwxd has handed this client
 * so far (a PD, CQ, QP, SRQ, listener, shared memory, STag, connection request: iwxd's
 * identifiers count on across inputs, so a request cannot name one but this way). The
 * replies, events and their descriptors are read and closed after each. Comparisons the
 * instrumented iwxd makes (the body's length for its op, HELLO's version) guide
 * libFuzzer to requests it takes; the seeds (make_seeds) are a client's usual ones.
 * HELLO's version counts from the corpus's (fuzz_ipc_input.h), so that the corpus
 * outlives a change of the IPC's version. A record of op FUZZ_IPC_OP_SHARED is not
 * sent: its body (which: a byte, offset: 4 bytes, then bytes) is written into the
 * which-th (modulo) memory iwxd shared with the client (the doorbells HELLO hands it, a
 * CQ's, QP's or SRQ's rings), at offset (modulo its size), and that memory's doorbell
 * rung (its bit, the eventfd if iwxd sleeps): what a client posts, or a hostile one
 * scribbles.
 *
 * What must hold once the client has closed its socket, besides ASan's and UBSan's
 * silence: iwxd closes it (no client left) within a bound of turns, and its users hold
 * nothing (clients, counted objects, queued messages, lingering sockets, SCTP set-ups,
 * the fast path's entries). Every CHECK_EVERY inputs (FUZZ_IPC_CHECK_EVERY=N: every N;
 * FUZZ_IPC_LOG=1: iwxd's log, debug level, on stderr), after a bounded wait for the
 * kernel to free what was shared (shared.c): no memory charged to any user, this
 * process holds no more descriptors than after the first input, and LeakSanitizer finds
 * no leak.
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <sanitizer/lsan_interface.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon.h"
#include "fuzz_ipc_input.h"
#include "ipc/fdpass.h"
#include "ipc/ipc.h"
#include "log.h"
#include "serve.h"
#include "util/clock.h"

#include "fuzz_check.h"

#define MAX_REQ		32	/* requests of one input */
#define MAX_BODY	1024
#define GONE_TURNS	2000	/* turns for iwxd to close a client that hung up */
#define CHECK_EVERY	256
#define SETTLE_MS	5000	/* the kernel's time to free shared memory (RCU) */

/* Memory a client may share with iwxd, and all clients: iwxd's defaults (1 GiB, 4 GiB)
   would have the kernel zero that much for an input that asks (the arena a BPF array),
   the fuzzer's time gone there; smaller, each refusal is reached more often. */
#define ARENA_MAX	(4u << 20)
#define ARENA_TOTAL	(16u << 20)

#define NOBODY		65534	/* the client's uid and gid (nogroup, iwxd's --group) */

static struct iwxd d;
static char sock_path[64];
static int helper = -1;		/* the socket to the process that connects as nobody */
static int fds_base = -1;	/* descriptors after the first input */
static unsigned long inputs, check_every = CHECK_EVERY;	/* FUZZ_IPC_CHECK_EVERY=N */

static void bring_up_lo(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	CHECK(s >= 0 && !ioctl(s, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	CHECK(!ioctl(s, SIOCSIFFLAGS, &ifr));
	close(s);
}

/* The helper: for each byte it reads, a socket connected to iwxd as nobody, sent back,
   then a byte once its own copy is closed. */
static void helper_main(int sock)
{
	char b;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || setgroups(0, NULL) || setgid(NOBODY) ||
	    setuid(NOBODY))
		_exit(1);
	while (read(sock, &b, 1) == 1) {
		int fd = iwx_ipc_connect(sock_path, 0);

		if (fd < 0 || iwx_fd_send(sock, &fd, 1, &(struct iovec){ &b, 1 }, 1) != 1)
			_exit(1);
		close(fd);	/* then said: the client's close is then the socket's last */
		if (write(sock, &b, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

static void start_helper(void)
{
	int sv[2];
	pid_t pid;

	CHECK(!socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		helper_main(sv[1]);
	}
	close(sv[1]);
	helper = sv[0];
}

/* A client socket of nobody's, connected to iwxd. */
static int client_socket(void)
{
	int fd = -1;
	unsigned n = 1;
	char b = 0;
	ssize_t r;

	/* libFuzzer's SIGALRM (its -timeout) interrupts what blocks, and is not restarted */
	while ((r = write(helper, &b, 1)) < 0 && errno == EINTR)
		;
	CHECK(r == 1);
	while ((r = iwx_fd_recv(helper, &fd, &n, &(struct iovec){ &b, 1 }, 1)) == -EINTR)
		n = 1;
	CHECK(r == 1 && n == 1);
	while ((r = read(helper, &b, 1)) < 0 && errno == EINTR)	/* the helper's copy closed */
		;
	CHECK(r == 1);
	return fd;
}

static void remove_socket(void)
{
	unlink(sock_path);
}

/*
 * iwxd up, on the first input: not in LLVMFuzzerInitialize, which a merge's outer process
 * runs too, whose children would then inherit the capabilities iwxd dropped.
 */
static void up(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "fuzz_ipc: needs root (iwxd as it runs, a network namespace)\n");
		exit(1);
	}
	CHECK(!unshare(CLONE_NEWNET));
	bring_up_lo();
	snprintf(sock_path, sizeof(sock_path), "/tmp/iwx-fuzz-ipc-%d.sock", (int)getpid());
	start_helper();	/* before iwxd's threads and descriptors */
	serve_init(&d);
	d.o.socket = sock_path;
	d.o.gid = NOBODY;
	d.o.timeout_ms = 1000;	/* set-ups and closes that wait for nobody end sooner */
	d.o.close_ms = 1000;
	d.o.settle_ms = 0;	/* no held FPDU (a timer): nothing here is siw */
	d.o.spin_us = 0;	/* serve_turn never sleeps here */
	d.o.sctp_port = 0;
	d.o.max[LIMIT_ARENA] = ARENA_MAX;
	d.o.max[LIMIT_ARENA_TOTAL] = ARENA_TOTAL;
	limits_derive(d.o.max);
	iwx_log_level = getenv("FUZZ_IPC_LOG") ? IWX_LOG_DEBUG : -1;
	if (getenv("FUZZ_IPC_CHECK_EVERY"))
		check_every = strtoul(getenv("FUZZ_IPC_CHECK_EVERY"), NULL, 10) ?: 1;
	CHECK(!serve_setup(&d));
	atexit(remove_socket);	/* iwxd is never torn down: the process ends with it */
}

#define MAX_IDS		64
#define MAX_MAPS	16

static uint32_t ids[MAX_IDS];	/* what iwxd handed this input's client, in order */
static unsigned nids;

/* The memory iwxd shared with this input's client, mapped: rings and the doorbells. */
static struct shared {
	uint8_t		*p;
	size_t		len;
	uint32_t	bell;		/* its doorbell bit; UINT32_MAX: none (the doorbells) */
} maps[MAX_MAPS];
static unsigned nmaps;
static struct iwx_ipc_bells *bells;
static int bell_fd = -1;

static void map_shared(int fd, size_t len, uint32_t bell)
{
	void *p;

	if (nmaps == MAX_MAPS || !len || len > (64u << 20))
		return;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	maps[nmaps++] = (struct shared){ p, len, bell };
	if (bell == UINT32_MAX && len >= sizeof(*bells) && !bells)
		bells = p;
}

/* What a reply's descriptors are: the doorbells of HELLO (its 4th, the eventfd its 2nd),
   and the rings of a CQ, QP or SRQ (their one). Kept mapped; every descriptor closed. */
static void take_fds(const struct iwx_ipc_hdr *h, const uint8_t *body, int n, int *fds,
		     unsigned nfds)
{
	const struct iwx_ipc_cq_create *cq = (const void *)body;
	const struct iwx_ipc_qp_create *qp = (const void *)body;
	const struct iwx_ipc_srq_create *srq = (const void *)body;

	if (h->op == IWX_IPC_HELLO && nfds == 4) {
		map_shared(fds[3], IWX_IPC_BELLS_SIZE, UINT32_MAX);
		bell_fd = dup(fds[1]);
	} else if (h->op == IWX_IPC_CQ_CREATE && nfds == 1 && n >= (int)sizeof(*cq)) {
		map_shared(fds[0], cq->map_size, cq->bell);
	} else if (h->op == IWX_IPC_QP_CREATE && nfds == 1 && n >= (int)sizeof(*qp)) {
		map_shared(fds[0], qp->map_size, qp->bell);
	} else if (h->op == IWX_IPC_SRQ_CREATE && nfds == 1 && n >= (int)sizeof(*srq)) {
		map_shared(fds[0], srq->map_size, UINT32_MAX);
	}
	for (unsigned k = 0; k < nfds; k++)
		close(fds[k]);
}

/* FUZZ_IPC_OP_SHARED: bytes written into a shared memory, its doorbell rung. */
static void scribble(const uint8_t *body, size_t len)
{
	struct shared *m;
	uint32_t off;

	if (!nmaps || len < 5)
		return;
	m = &maps[body[0] % nmaps];
	memcpy(&off, body + 1, 4);
	off %= m->len;
	len -= 5;
	memcpy(m->p + off, body + 5, len < m->len - off ? len : m->len - off);
	if (!bells || m->bell == UINT32_MAX)
		return;
	iwx_ipc_bell_ring(bells, m->bell);
	if (__atomic_load_n(&bells->need_wakeup, __ATOMIC_ACQUIRE) && bell_fd >= 0 &&
	    write(bell_fd, &(uint64_t){ 1 }, 8) < 0)
		return;
}

/* This input's client gone: its mappings and descriptors too. */
static void unmap_shared(void)
{
	for (unsigned i = 0; i < nmaps; i++)
		munmap(maps[i].p, maps[i].len);
	nmaps = 0;
	bells = NULL;
	if (bell_fd >= 0)
		close(bell_fd);
	bell_fd = -1;
}

/* Where the identifier a successful reply (or event) of op hands the client is. */
static int id_at(uint16_t op, uint32_t len)
{
	static const struct { uint16_t op; uint16_t at; } where[] = {
		{ IWX_IPC_PD_ALLOC, offsetof(struct iwx_ipc_id, id) },
		{ IWX_IPC_CQ_CREATE, offsetof(struct iwx_ipc_cq_create, cq) },
		{ IWX_IPC_QP_CREATE, offsetof(struct iwx_ipc_qp_create, qp) },
		{ IWX_IPC_SRQ_CREATE, offsetof(struct iwx_ipc_srq_create, srq) },
		{ IWX_IPC_LISTEN, offsetof(struct iwx_ipc_listen, listener) },
		{ IWX_IPC_SHM_CREATE, offsetof(struct iwx_ipc_shm, shm) },
		{ IWX_IPC_MR_REG, offsetof(struct iwx_ipc_mr_reg, stag) },
		{ IWX_IPC_EVENT, offsetof(struct iwx_ipc_event, conn_id) },
	};

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (where[i].op == op && where[i].at + 4 <= len)
			return where[i].at;
	return -1;
}

/* Replies and events waiting on the client's socket, read (the identifiers they hand
   kept); their descriptors closed. */
static void drain(int fd)
{
	static uint8_t body[65536];
	struct iwx_ipc_hdr h;
	int fds[IWX_FDPASS_ANY];
	unsigned nfds;

	for (int i = 0; i < 64; i++) {
		int n = iwx_ipc_recv_all(fd, &h, body, sizeof(body), fds, &nfds), at;

		take_fds(&h, body, n, fds, nfds);
		if (n < 0 && n != -EPROTO)
			return;	/* -EAGAIN: nothing more now; or the end */
		if (n > 0 && !h.status && (at = id_at(h.op, (uint32_t)n)) >= 0 &&
		    nids < MAX_IDS)
			memcpy(&ids[nids++], body + at, sizeof(ids[0]));
	}
}

static void turns(int n)
{
	for (int i = 0; i < n; i++)
		serve_turn(&d, false);
}

/* Descriptors this process holds but pipes: LeakSanitizer's checks between inputs leave
   some of theirs, and iwxd makes its own (the closer's) at set-up. */
static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	char path[300], to[16];
	struct dirent *e;
	int n = 0;

	CHECK(dir);
	while ((e = readdir(dir))) {
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		k = readlink(path, to, sizeof(to));
		n += k > 0 && !(k >= 5 && !memcmp(to, "pipe:", 5));
	}
	closedir(dir);
	return n;
}

/* What this process holds, on stderr: which descriptor iwxd left. */
static void list_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	char path[300], to[256];
	struct dirent *e;

	while (dir && (e = readdir(dir))) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, to, sizeof(to) - 1);
		if (n > 0)
			fprintf(stderr, "fd %s -> %.*s\n", e->d_name, (int)n, to);
	}
	if (dir)
		closedir(dir);
}

/* Nothing any user holds but memory the kernel may not have freed yet. */
static bool users_hold_nothing(bool memory_too)
{
	for (const struct user *u = d.users; u; u = u->next) {
		if (u->clients || u->queued || u->lingering || u->sctp_setups)
			return false;
		for (int i = 0; i < LIMIT_COUNTED; i++)
			if (u->used[i])
				return false;
		for (int i = 0; i < SHARE_N - SHARE_FP_FIRST; i++)
			if (u->fp[i])
				return false;
		if (memory_too && u->bytes)
			return false;
	}
	return true;
}

/*
 * The inputs since the last settled(), kept: a leak its check finds is one of theirs. Each
 * input that leaks is also libFuzzer's to find at once (-detect_leaks=1, its default), but
 * that check runs LeakSanitizer after every input that allocates more than it frees, which
 * here is any that leaves memory for iwxd to uncharge later (shared.c): half the time of a
 * soak, which can run with -detect_leaks=0 and this check alone.
 */
#define WINDOW_BYTES	(8u << 20)	/* its inputs, one after the other */

static struct { size_t at, size; } window[CHECK_EVERY];
static unsigned nwindow;
static uint8_t *window_bytes;	/* mapped, not malloc'd: libFuzzer counts each malloc of an
				   input, and LeakSanitizer scans no mapping */
static size_t window_used;

static void window_add(const uint8_t *data, size_t size)
{
	if (!window_bytes) {
		window_bytes = mmap(NULL, WINDOW_BYTES, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		CHECK(window_bytes != MAP_FAILED);
	}
	if (nwindow == CHECK_EVERY || size > WINDOW_BYTES - window_used)
		return;	/* past CHECK_EVERY (FUZZ_IPC_CHECK_EVERY): the first ones kept */
	memcpy(window_bytes + window_used, data, size);
	window[nwindow].at = window_used;
	window[nwindow++].size = size;
	window_used += size;
}

static void window_clear(void)
{
	nwindow = 0;
	window_used = 0;
}

/* The window as files PID-N in FUZZ_IPC_WINDOW (a directory, made; fuzz_ipc-window
   unless said): each run alone with -detect_leaks=1 names the one that leaks. */
static void keep_window(void)
{
	const char *dir = getenv("FUZZ_IPC_WINDOW") ?: "fuzz_ipc-window";

	if (mkdir(dir, 0755) && errno != EEXIST)
		fprintf(stderr, "fuzz_ipc: %s: %s\n", dir, strerror(errno));
	for (unsigned i = 0; i < nwindow; i++) {
		char name[PATH_MAX];
		FILE *f;

		snprintf(name, sizeof(name), "%s/%d-%03u", dir, (int)getpid(), i);
		f = fopen(name, "wb");
		if (!f || fwrite(window_bytes + window[i].at, 1, window[i].size, f) != window[i].size)
			fprintf(stderr, "fuzz_ipc: %s not written whole\n", name);
		if (f)
			fclose(f);
	}
	fprintf(stderr, "fuzz_ipc: the %u inputs since the last check are %s/%d-*\n", nwindow,
		dir, (int)getpid());
}

static void settled(void)
{
	int fds = -1;

	for (int ms = 0; ms < SETTLE_MS; ms++) {
		if (d.departed_ms)	/* look now, not at iwxd's next second (shared.c) */
			d.departed_ms = iwx_now_ms();
		turns(1);
		fds = count_fds();
		if (users_hold_nothing(true) && (fds_base < 0 || fds <= fds_base))
			break;
		usleep(1000);
	}
	CHECK(users_hold_nothing(true));
	if (__lsan_do_recoverable_leak_check()) {
		keep_window();
		CHECK(!"memory leaked (LeakSanitizer's report above)");
	}
	if (fds_base < 0)
		fds_base = fds;
	if (fds > fds_base)
		list_fds();
	CHECK(fds <= fds_base);
}

static uint16_t get16(const uint8_t **p, const uint8_t *end)
{
	uint16_t v = 0;

	for (int i = 0; i < 2 && *p < end; i++)
		v |= (uint16_t)(*(*p)++) << (8 * i);
	return v;
}

/* HELLO's version word, as the input counts it, to the IPC's (fuzz_ipc_input.h) */
static void hello_version(uint8_t *body)
{
	uint32_t v;

	memcpy(&v, body, sizeof(v));
	v += IWX_IPC_VERSION - FUZZ_IPC_CORPUS_VERSION;
	memcpy(body, &v, sizeof(v));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t body[MAX_BODY];
	const uint8_t *p = data, *end = data + size;
	uint32_t seq = 1;
	int fd;

	if (helper < 0)
		up();
	fd = client_socket();
	CHECK(fd >= 0);
	CHECK(!fcntl(fd, F_SETFL, O_NONBLOCK));
	turns(2);	/* accepted */
	nids = 0;
	for (int r = 0; r < MAX_REQ && p < end; r++) {
		struct iwx_ipc_hdr h = { .op = get16(&p, end), .seq = seq++ };
		size_t len = get16(&p, end) % (MAX_BODY + 1), have;
		uint8_t npatch = p < end ? *p++ & 3 : 0, patch[3][2] = { { 0 } };

		for (unsigned i = 0; i < npatch; i++)
			for (unsigned k = 0; k < 2; k++)
				patch[i][k] = p < end ? *p++ : 0;
		have = (size_t)(end - p);
		memset(body, 0, len);
		memcpy(body, p, have < len ? have : len);
		p += have < len ? have : len;
		for (unsigned i = 0; i < npatch && nids; i++)
			if (patch[i][0] * 4u + 4 <= len)
				memcpy(body + patch[i][0] * 4u, &ids[patch[i][1] % nids], 4);
		h.len = (uint32_t)len;
		if (h.op == IWX_IPC_HELLO && len >= sizeof(uint32_t))
			hello_version(body);
		if (h.op == FUZZ_IPC_OP_SHARED)
			scribble(body, len);
		else if (iwx_ipc_send(fd, &h, body, NULL, 0))
			break;	/* iwxd hung up on it, or its socket is full */
		turns(3);
		drain(fd);
	}
	close(fd);
	unmap_shared();
	for (int t = 0; t < GONE_TURNS && d.clients; t++)
		turns(1);
	CHECK(!d.clients);
	CHECK(users_hold_nothing(false));
	window_add(data, size);
	if (inputs++ % check_every == 0) {
		settled();
		window_clear();
	}
	return 0;
}
