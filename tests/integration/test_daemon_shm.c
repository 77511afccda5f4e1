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

#include "ipc/ipc.h"

#include "child.h"
#include "iwxd_pair.h"
#include "raw_ipc.h"
#include "stall.h"

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

TestSuite(daemon_shm, .init = up, .fini = down, .timeout = HANG_S);

/* A raw client: connected, HELLO done, one PD (its id in *pd). The socket, or -errno. */
static int raw_client(uint32_t *pd)
{
	struct iwx_ipc_hello hello = { .version = IWX_IPC_VERSION, .arena_size = 1 << 20 };
	struct iwx_ipc_id id;
	int fd = iwx_ipc_connect(pair.sock[0], 5), err;

	if (fd < 0)
		return fd;
	err = raw_call(fd, IWX_IPC_HELLO, &hello, sizeof(hello), &hello, sizeof(hello), NULL, NULL);
	if (!err)
		err = raw_call(fd, IWX_IPC_PD_ALLOC, NULL, 0, &id, sizeof(id), NULL, NULL);
	if (err) {
		close(fd);
		return err;
	}
	*pd = id.id;
	return fd;
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

struct attack {
	const char	*bin, *secret;
	int		victim_in, *victim_out, report;
};

/*
 * As a group member: connect and say hello, fork, and become the setuid-root victim;
 * the child keeps the socket and asks for the victim's memory, then reports iwxd's
 * answers (three statuses) on report.
 */
static int attacker(void *arg)
{
	const struct attack *at = arg;
	uint32_t pd;
	int sock = raw_client(&pd);

	if (sock < 0)
		return 1;
	if (fork() == 0) {
		struct iwx_ipc_mr_reg r = { .pd = pd, .access = IWX_ACCESS_REMOTE_READ,
					    .len = 4096, .arena_off = IWX_IPC_NOT_ARENA };
		FILE *in = fdopen(at->victim_out[0], "r");
		int32_t got[3];
		char line[64] = "";

		if (!in || !fgets(line, sizeof(line), in) || sscanf(line, "%" SCNx64, &r.addr) != 1)
			_exit(2);
		got[0] = raw_call(sock, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL);
		r.npieces = 1;	/* ... or pretend shared memory is there */
		r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = 1, .len = 4096 };
		got[1] = raw_call(sock, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL);
		r.arena_off = 0;	/* ... or that it is the arena */
		r.len = 1 << 21;
		got[2] = raw_call(sock, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL);
		_exit(write(at->report, got, sizeof(got)) == sizeof(got) ? 0 : 3);
	}
	/* the parent becomes the setuid-root victim */
	dup2(at->victim_in, 0);
	dup2(at->victim_out[1], 1);
	execl(at->bin, at->bin, at->secret, (char *)NULL);
	return 4;
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
	char bin[128], secret[128], path[64], line[256];
	int to_victim[2], from_victim[2], report[2];
	unsigned ruid = 1, euid = 1;
	int32_t got[3] = { 1, 1, 1 };
	FILE *f;
	pid_t p;

	make_victim(bin, secret, sizeof(bin));
	cr_assert_eq(pipe2(to_victim, O_CLOEXEC) | pipe2(from_victim, O_CLOEXEC) |
		     pipe2(report, O_CLOEXEC), 0);	/* the victim keeps none */
	p = child_as(NOBODY, NOBODY, attacker, &(struct attack){ bin, secret, to_victim[0],
			from_victim, report[1] });
	cr_assert_geq(p, 0);
	close(to_victim[0]);
	close(from_victim[1]);
	close(report[1]);
	cr_assert_eq(read(report[0], got, sizeof(got)), (ssize_t)sizeof(got),
		     "the attacker reported (the victim printed its address)");
	/* the victim really ran as root, holding the secret */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)p);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2)
			break;
	fclose(f);
	cr_assert(ruid == NOBODY && euid == 0, "a setuid-root victim (uid %u, euid %u)", ruid, euid);
	cr_assert_eq(got[0], -EINVAL, "an address alone names no memory: %d", got[0]);
	cr_assert_eq(got[1], -ENOENT, "shared memory that is not the client's: %d", got[1]);
	cr_assert_eq(got[2], -EFAULT, "beyond the arena: %d", got[2]);
	close(to_victim[1]);
	close(from_victim[0]);
	close(report[0]);
	cr_assert(WIFEXITED(child_wait(p, CHILD_MS)), "the victim ended");
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
	unsigned one = 1;
	int a = raw_client(&pd), b = raw_client(&other_pd), fd = -1;

	cr_assert(a >= 0 && b >= 0);
	cr_assert_eq(raw_call(a, IWX_IPC_SHM_CREATE, &s, sizeof(s), &s, sizeof(s), &fd, &one), 0);
	cr_assert_geq(fd, 0, "the shared memory comes with its descriptor");
	close(fd);
	cr_assert_eq(s.size, 2 * page);
	r.pd = pd;
	r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = s.shm, .off = 2 * page, .len = page };
	cr_assert_eq(raw_call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL), -EINVAL,
		     "a piece beyond the shared memory");
	r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = s.shm, .off = 100, .len = page };
	cr_assert_eq(raw_call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL), -EINVAL,
		     "a piece not on a page boundary");
	r.piece[0] = (struct iwx_ipc_mr_piece){ .shm = s.shm, .off = page, .len = page };
	r.len = page;
	cr_assert_eq(raw_call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL), -EINVAL,
		     "pieces shorter than the region");
	r.len = 200;
	r.pd = other_pd;
	cr_assert_eq(raw_call(b, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL), -ENOENT,
		     "another client's shared memory");
	r.pd = pd;
	cr_assert_eq(raw_call(a, IWX_IPC_MR_REG, &r, sizeof(r), &r, sizeof(r), NULL, NULL), 0);
	id.id = s.shm;
	cr_assert_eq(raw_call(a, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL, NULL), -EBUSY,
		     "a region uses it");
	cr_assert_eq(raw_call(b, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL, NULL), -ENOENT,
		     "not b's to free");
	id.id = r.stag;
	cr_assert_eq(raw_call(a, IWX_IPC_MR_DEREG, &id, sizeof(id), NULL, 0, NULL, NULL), 0);
	id.id = s.shm;
	cr_assert_eq(raw_call(a, IWX_IPC_SHM_FREE, &id, sizeof(id), NULL, 0, NULL, NULL), 0);
	s.size = page + 1;
	cr_assert_eq(raw_call(a, IWX_IPC_SHM_CREATE, &s, sizeof(s), &s, sizeof(s), NULL, NULL),
		     -EINVAL, "not whole pages");
	close(a);
	close(b);
}
