// SPDX-License-Identifier: MIT
/*
 * A client that rings every doorbell without end (issue 27) does not starve another on
 * the same iwxd: the other's small operations keep completing, one after another, while
 * the ringer rings, and the ringer is muted for ringing for nothing, the other never.
 * What it costs in time is scripts/bench-bell.sh's to measure. And the spins and sleeps
 * around a client's doorbells and waits.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iwx/iwx.h>

#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "ringer.h"
#include "stall.h"

#define DAEMON_ARGS	"--settle-ms 0"
#define ARENA		(4u << 20)
#define ROUNDS		200
#define RINGER_QPS	1024	/* iwxd's --max-qps: every bell a client may have */
#define BUSY_ROUNDS	2000	/* at most: until iwxd has said it stopped spinning */
#define LOOK_EVERY	50	/* rounds between looks at its counter */
#define ASLEEP_TRIES	5	/* a_sleeping_wait_is_woken_by_futex's, at most */
#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)

static struct iwxd_pair pair;
static struct endpoint a, b;
static pid_t ringer = -1;
static pid_t busy = -1;

static void up(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, DAEMON_ARGS, &a, &b, ARENA), 0);
	cr_assert_eq(endpoint_connect(&a, &b, false, NULL), 0);
}

static void down(void)
{
	if (ringer > 0)
		ringer_stop(ringer);
	ringer = -1;
	if (busy > 0) {
		kill(busy, SIGKILL);
		waitpid(busy, NULL, 0);
	}
	busy = -1;
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_bells, .init = up, .fini = down, .timeout = HANG_S);

/* One signaled RDMA Write of 64 bytes from a into b, and a Read of them back. */
static void write_and_read(const struct buf *src, const struct buf *dst, const struct buf *back,
			   uint64_t round)
{
	struct iwx_send_wr w = { .wr_id = 2 * round, .opcode = IWX_WR_WRITE,
				 .flags = IWX_WR_SIGNALED, .num_sge = 1,
				 .sge = { sge_of(src, 0, 64) },
				 .remote_addr = (uintptr_t)dst->p, .rkey = dst->mr->rkey };
	struct iwx_send_wr r = { .wr_id = 2 * round + 1, .opcode = IWX_WR_READ,
				 .flags = IWX_WR_SIGNALED, .num_sge = 1,
				 .sge = { sge_of(back, 0, 64) },
				 .remote_addr = (uintptr_t)dst->p, .rkey = dst->mr->rkey };
	struct iwx_wc wc;

	memset(src->p, (int)(round & 0xff), 64);
	cr_assert_eq(iwx_post_send(a.qp, &w), 0);
	cr_assert_eq(endpoint_wc(&a, &wc), 0, "round %lu: the Write completes", round);
	cr_assert_eq(wc.wr_id, w.wr_id);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	cr_assert_eq(iwx_post_send(a.qp, &r), 0);
	cr_assert_eq(endpoint_wc(&a, &wc), 0, "round %lu: the Read completes", round);
	cr_assert_eq(wc.wr_id, r.wr_id);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	cr_assert_eq(memcmp(back->p, src->p, 64), 0, "round %lu: the bytes read back", round);
}

/* write_and_read's buffers: a's source and read-back, b's destination. */
struct bufs {
	struct buf	src, back, dst;
};

static struct bufs bufs_new(void)
{
	return (struct bufs){ .src = buf_new(&a, NULL, 4096, ALL_ACCESS, false),
			      .back = buf_new(&a, NULL, 4096, ALL_ACCESS, false),
			      .dst = buf_new(&b, NULL, 4096, ALL_ACCESS, false) };
}

static void rounds_complete(void)
{
	struct bufs x = bufs_new();

	for (uint64_t i = 0; i < ROUNDS; i++)
		write_and_read(&x.src, &x.dst, &x.back, i);
}

Test(daemon_bells, a_ringer_on_the_writers_daemon_does_not_starve_it)
{
	rounds_complete();
	cr_assert_eq(status_num(pair.sock[0], "bells_muted"), 0, "a client that posts as it rings is never muted");
	ringer = ringer_start(pair.sock[0], RINGER_QPS);
	cr_assert_gt(ringer, 0, "the ringer rings: %s", strerror(-ringer));
	rounds_complete();
	cr_assert_eq(kill(ringer, 0), 0, "the ringer rang throughout");
	for (int t = 0; t < STALL_MS / 50 && status_num(pair.sock[0], "bells_muted") <= 0; t++)
		usleep(50000);
	cr_assert_gt(status_num(pair.sock[0], "bells_muted"), 0, "the ringer, ringing for nothing, was muted");
}

Test(daemon_bells, a_ringer_on_the_responders_daemon_does_not_starve_it)
{
	ringer = ringer_start(pair.sock[1], RINGER_QPS);
	cr_assert_gt(ringer, 0, "the ringer rings: %s", strerror(-ringer));
	rounds_complete();
	cr_assert_eq(kill(ringer, 0), 0, "the ringer rang throughout");
}

/* A child that never yields, on cpu alone: killed by down(). */
static pid_t busy_on(int cpu)
{
	cpu_set_t one;
	pid_t pid;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pid = fork();
	if (pid == 0) {
		if (sched_setaffinity(0, sizeof(one), &one))
			_exit(1);
		for (volatile unsigned long n = 0;; n++)
			;
	}
	return pid;
}

/* Daemon a (and this client too, if client) on the CPU this runs on: which. */
static int daemon_a_here(bool client)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	cr_assert_geq(cpu, 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	cr_assert(!client || sched_setaffinity(0, sizeof(one), &one) == 0, "this client on CPU %d", cpu);
	cr_assert_eq(sched_setaffinity(pair.pid[0], sizeof(one), &one), 0, "daemon a on CPU %d", cpu);
	return cpu;
}

Test(daemon_bells, beside_a_task_that_holds_its_cpu_iwxd_sleeps_rather_than_spin)
{
	struct bufs x = bufs_new();
	uint64_t i;

	write_and_read(&x.src, &x.dst, &x.back, 0);
	busy = busy_on(daemon_a_here(false));
	cr_assert_gt(busy, 0);
	for (i = 1; i <= BUSY_ROUNDS; i++) {
		write_and_read(&x.src, &x.dst, &x.back, i);
		if (i % LOOK_EVERY == 0 && status_num(pair.sock[0], "spins_stopped") > 0)
			break;
	}
	cr_assert_eq(kill(busy, 0), 0, "the busy loop ran throughout");
	cr_assert_gt(status_num(pair.sock[0], "spins_stopped"), 0,
		     "after %lu rounds beside a task that holds its CPU, iwxd stopped spinning", i - 1);
}

/*
 * A client on iwxd's own CPU: after its posts iwxd does not spin, as the client does not
 * while it waits (a spin of either would take the CPU the other needs), and says so.
 */
Test(daemon_bells, a_client_on_iwxds_cpu_and_iwxd_do_not_spin_for_each_other)
{
	struct bufs x = bufs_new();
	uint64_t before;

	daemon_a_here(true);
	write_and_read(&x.src, &x.dst, &x.back, 0);	/* iwxd a has taken a post on this CPU */
	before = status_num(pair.sock[0], "spins_shared");
	for (uint64_t i = 1; i <= ROUNDS / 10; i++)
		write_and_read(&x.src, &x.dst, &x.back, i);
	cr_assert_gt(status_num(pair.sock[0], "spins_shared"), before,
		     "a's posts came from iwxd a's CPU: no spin for them");
}

/* What send_when_asleep needs: the thread that waits, and b's Send. */
struct sleeper {
	pid_t		tid;
	struct buf	*msg;
};

/* Whether thread tid is blocked in futex(2) (/proc's syscall file: the call's number first). */
static bool in_futex(pid_t tid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (f && fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	if (f)
		fclose(f);
	return nr == SYS_futex;
}

/* Once the waiting thread sleeps in futex(2) (or 5 s have gone), b sends a a message. */
static void *send_when_asleep(void *arg)
{
	struct sleeper *z = arg;
	struct iwx_send_wr w = { .wr_id = 9, .opcode = IWX_WR_SEND, .flags = IWX_WR_SIGNALED,
				 .num_sge = 1, .sge = { sge_of(z->msg, 0, 64) } };

	for (int ms = 0; ms < 5000 && !in_futex(z->tid); ms++)
		usleep(1000);
	return (void *)(intptr_t)iwx_post_send(b.qp, &w);
}

/*
 * A client's iwx_wait_cq that sleeps sleeps on its CQ's word, and iwxd wakes it there
 * (IWX_IPC_F_CQ_FUTEX), not through the eventfd. b sends only once this thread sleeps in
 * futex(2); should that have been another futex of the thread's (the C library's), again.
 */
Test(daemon_bells, a_sleeping_wait_is_woken_by_futex)
{
	struct bufs x = bufs_new();
	int64_t before = status_num(pair.sock[0], "cq_futex_wakes");
	struct sleeper z = { .tid = gettid(), .msg = &x.dst };
	int tries = 0;

	do {
		struct iwx_recv_wr r = { .wr_id = 8, .num_sge = 1, .sge = { sge_of(&x.back, 0, 64) } };
		struct iwx_wc wc;
		pthread_t t;
		void *posted;

		cr_assert_eq(iwx_post_recv(a.qp, &r), 0);
		cr_assert_eq(pthread_create(&t, NULL, send_when_asleep, &z), 0);
		cr_assert_eq(endpoint_wc(&a, &wc), 0, "a's receive completes");
		cr_assert_eq(pthread_join(t, &posted), 0);
		cr_assert_eq((intptr_t)posted, 0, "b posted its Send");
		cr_assert(wc.wr_id == 8 && wc.status == IWX_WC_SUCCESS && wc.byte_len == 64);
		cr_assert_eq(endpoint_wc(&b, &wc), 0, "b's Send completes");
		cr_assert_eq(wc.wr_id, 9);
	} while (++tries < ASLEEP_TRIES && status_num(pair.sock[0], "cq_futex_wakes") == before);
	cr_assert_gt(status_num(pair.sock[0], "cq_futex_wakes"), before,
		     "a's wait slept on its CQ, and iwxd a woke it there (%d tries)", tries);
}
