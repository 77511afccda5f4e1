// SPDX-License-Identifier: MIT
/*
 * iwxd reaches only memory a client shared with it. Attacks by a group member (uid
 * and gid 65534, iwxd started with -g nogroup) speaking the IPC directly: a region
 * named by an address (as iwxd once took it, reading it with process_vm_readv as root),
 * at a setuid-root program's secret; shared memory that is not the client's; pieces
 * beyond the shared memory; freeing shared memory a region still uses.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iwx/fdpass.h>
#include <iwx/ipc.h>

#include "iwxd_pair.h"

#define NOBODY		65534		/* uid nobody, gid nogroup */
#define VICTIM_BIN	"build/tests/setuid_victim"
#define SECRET		"root-only secret 7f3a9c"

static struct iwxd_pair pair;

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces and a setuid program");
	cr_assert_eq(iwxd_pair_start(&pair, "--settle-ms 0 -g nogroup"), 0);
	cr_assert_eq(chmod(pair.dir, 0711), 0, "others reach the socket and the victim");
}

static void down(void)
{
	iwxd_pair_stop(&pair);
}

TestSuite(daemon_shm, .init = up, .fini = down, .timeout = 60);

/* One request on a raw IPC socket and its reply: the status, the body in rep. */
static int call(int fd, uint16_t op, void *body, uint32_t len, void *rep, size_t cap, int *rfd)
{
	static uint32_t seq;
	struct iwx_ipc_hdr h = { .op = op, .seq = ++seq, .len = len };
	int fds[IWX_FDPASS_MAX];
	unsigned nfds = IWX_FDPASS_MAX;
	int err = iwx_ipc_send(fd, &h, body, NULL, 0);

	if (err)
		return err;
	do {
		nfds = IWX_FDPASS_MAX;
		err = iwx_ipc_recv(fd, &h, rep, cap, fds, &nfds);
	} while (err >= 0 && h.op == IWX_IPC_EVENT);
	for (unsigned i = 0; i < nfds; i++) {
		if (rfd && i == 0)
			*rfd = fds[0];
		else
			close(fds[i]);
	}
	return err < 0 ? err : h.status;
}

/* A raw client: connected, HELLO done, one PD (its id in *pd). The socket, or -errno. */
static int raw_client(uint32_t *pd)
{
	struct iwx_ipc_hello hello = { .version = IWX_IPC_VERSION, .arena_size = 1 << 20 };
	struct iwx_ipc_id id;
	int fd = iwx_ipc_connect(pair.sock[0], 5), err;

	if (fd < 0)
		return fd;
	err = call(fd, IWX_IPC_HELLO, &hello, sizeof(hello), &hello, sizeof(hello), NULL);
	if (!err)
		err = call(fd, IWX_IPC_PD_ALLOC, NULL, 0, &id, sizeof(id), NULL);
	if (err) {
		close(fd);
		return err;
	}
	*pd = id.id;
	return fd;
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		_exit(200);
}

/* Wait up to 10 s for pid: its wait status (it is killed after that). */
static int reap(pid_t pid)
{
	int status;

	for (int t = 0; t < 1000; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		poll(NULL, 0, 10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

/* The victim: a root-only secret, and a setuid-root copy of VICTIM_BIN that loads it. */
static void make_victim(char *bin, char *secret, size_t cap)
{
	int in = open(VICTIM_BIN, O_RDONLY), out, fd;
	char buf[65536];
	ssize_t n;

	cr_assert_geq(in, 0, VICTIM_BIN " is missing: build it first (make)");
	snprintf(bin, cap, "%s/victim", pair.dir);
	snprintf(secret, cap, "%s/secret", pair.dir);
	out = open(bin, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	cr_assert_geq(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, n), n);
	close(in);
	close(out);
	cr_assert_eq(chown(bin, 0, 0), 0);
	cr_assert_eq(chmod(bin, 04755), 0, "setuid root");
	fd = open(secret, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, SECRET, strlen(SECRET)), (ssize_t)strlen(SECRET));
	close(fd);
}

/*
 * The attack that once read a setuid-root program's memory: a group member connects
 * and says hello, forks, and execs the setuid program; the child keeps the socket and
 * registers memory "outside the arena" at the victim's address. iwxd used to take the
 * address and reach it as root in the process that had connected; now a region
 * outside the arena can only name memory the client shared, and this one is refused.
 */
Test(daemon_shm, setuid_victim_memory_is_out_of_reach)
{
	char bin[128], secret[128], addr_txt[64] = "";
	int to_victim[2], from_victim[2], report[2];
	int32_t got[3] = { 1, 1, 1 };
	FILE *f;
	pid_t p;

	make_victim(bin, secret, sizeof(bin));
	cr_assert_eq(pipe2(to_victim, O_CLOEXEC) | pipe2(from_victim, O_CLOEXEC) |
		     pipe2(report, O_CLOEXEC), 0);	/* the victim keeps none */
	p = fork();
	cr_assert_geq(p, 0);
	if (p == 0) {
		uint32_t pd;
		int sock;

		drop_to_nobody();
		sock = raw_client(&pd);
		if (sock < 0)
			_exit(201);
		if (fork() == 0) {
			/* the child: keeps the socket, and asks for the victim's memory */
			struct iwx_ipc_mr_reg r = { .pd = pd, .access = IWX_ACCESS_REMOTE_READ,
						    .len = 4096, .arena_off = IWX_IPC_NOT_ARENA };
			char line[64] = "";
			FILE *in = fdopen(from_victim[0], "r");

			if (!in || !fgets(line, sizeof(line), in) ||
			    sscanf(line, "%" SCNx64, &r.addr) != 1)
				_exit(202);
			got[0] = call(sock, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL);
			r.npieces = 1;	/* ... or pretend shared memory is there */
			r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = 1, .len = 4096 };
			got[1] = call(sock, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL);
			r.arena_off = 0;	/* ... or that it is the arena */
			r.len = 1 << 21;
			got[2] = call(sock, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL);
			_exit(write(report[1], got, sizeof(got)) == sizeof(got) ? 0 : 203);
		}
		/* the parent becomes the setuid-root victim */
		dup2(to_victim[0], 0);
		dup2(from_victim[1], 1);
		execl(bin, bin, secret, (char *)NULL);
		_exit(204);
	}
	close(to_victim[0]);
	close(from_victim[1]);
	close(report[1]);
	cr_assert_eq(read(report[0], got, sizeof(got)), (ssize_t)sizeof(got),
		     "the attacker reported (the victim printed its address)");
	/* the victim really ran as root, holding the secret */
	snprintf(addr_txt, sizeof(addr_txt), "/proc/%d/status", (int)p);
	f = fopen(addr_txt, "r");
	cr_assert_not_null(f);
	{
		char line[256];
		unsigned ruid = 1, euid = 1;

		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2)
				break;
		fclose(f);
		cr_assert(ruid == NOBODY && euid == 0, "a setuid-root victim (uid %u, euid %u)", ruid,
			  euid);
	}
	cr_assert_eq(got[0], -EINVAL, "an address alone names no memory: %d", got[0]);
	cr_assert_eq(got[1], -ENOENT, "shared memory that is not the client's: %d", got[1]);
	cr_assert_eq(got[2], -EFAULT, "beyond the arena: %d", got[2]);
	close(to_victim[1]);
	close(from_victim[0]);
	close(report[0]);
	cr_assert(WIFEXITED(reap(p)), "the victim ended");
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Shared memory as a client gets it, and what it may and may not do with it. */
Test(daemon_shm, pieces_are_checked)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct iwx_ipc_shm s = { .size = 2 * page };
	struct iwx_ipc_mr_reg r = { .access = IWX_ACCESS_LOCAL_WRITE, .addr = 0x10000 + 100,
				    .len = 200, .arena_off = IWX_IPC_NOT_ARENA, .npieces = 1 };
	struct iwx_ipc_id id;
	uint32_t pd, other_pd;
	int a = raw_client(&pd), b = raw_client(&other_pd), fd = -1;

	cr_assert(a >= 0 && b >= 0);
	cr_assert_eq(call(a, IWX_IPC_SHM_CREATE, &s, sizeof(s), &s, sizeof(s), &fd), 0);
	cr_assert_geq(fd, 0, "the shared memory comes with its descriptor");
	close(fd);
	cr_assert_eq(s.size, 2 * page);
	r.pd = pd;
	r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = s.shm, .off = 2 * page, .len = page };
	cr_assert_eq(call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL), -EINVAL,
		     "a piece beyond the shared memory");
	r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = s.shm, .off = 100, .len = page };
	cr_assert_eq(call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL), -EINVAL,
		     "a piece not on a page boundary");
	r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = s.shm, .off = page, .len = page };
	r.len = page;
	cr_assert_eq(call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL), -EINVAL,
		     "pieces shorter than the region");
	r.len = 200;
	r.pd = other_pd;
	cr_assert_eq(call(b, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL), -ENOENT,
		     "another client's shared memory");
	r.pd = pd;
	cr_assert_eq(call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL), 0);
	id.id = s.shm;
	cr_assert_eq(call(a, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL), -EBUSY,
		     "a region uses it");
	cr_assert_eq(call(b, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL), -ENOENT,
		     "not b's to free");
	id.id = r.stag;
	cr_assert_eq(call(a, IWX_IPC_MR_DEREG, &id, sizeof(id), NULL, 0, NULL), 0);
	id.id = s.shm;
	cr_assert_eq(call(a, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL), 0);
	s.size = page + 1;
	cr_assert_eq(call(a, IWX_IPC_SHM_CREATE, &s, sizeof(s), &s, sizeof(s), NULL), -EINVAL,
		     "not whole pages");
	close(a);
	close(b);
}
