// SPDX-License-Identifier: MIT
/*
 * iwxd's spin after a post (--spin-us) yields its CPU between turns. Beside a task that
 * holds that CPU and does not yield it back (a program polling memory, as ib_write_lat
 * does, pinned where iwxd runs), each yield would cost a message that task's time slice:
 * iwxd must notice and sleep instead, to be woken by the doorbell (issue 43, item 3).
 * The test pins daemon a and a busy loop to one CPU and checks that the operations
 * complete, exact, and that iwxd stopped spinning; what it saves in time is
 * scripts/bench-perftest.sh --latency-only's to measure.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iwx/iwx.h>

#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "stall.h"

#define DAEMON_ARGS	"--settle-ms 0"
#define ARENA		(4u << 20)
#define ROUNDS		2000	/* at most: until iwxd has said it stopped spinning */
#define LOOK_EVERY	50	/* rounds between looks at its counter */
#define ALL_ACCESS	(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ)

static struct iwxd_pair pair;
static struct endpoint a, b;
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
	if (busy > 0) {
		kill(busy, SIGKILL);
		waitpid(busy, NULL, 0);
	}
	busy = -1;
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_spin, .init = up, .fini = down, .timeout = HANG_S);

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

/* One signaled 64-byte Write from a into b, and a Read of it back: both exact. */
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
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	cr_assert_eq(iwx_post_send(a.qp, &r), 0);
	cr_assert_eq(endpoint_wc(&a, &wc), 0, "round %lu: the Read completes", round);
	cr_assert_eq(wc.status, IWX_WC_SUCCESS);
	cr_assert_eq(memcmp(back->p, src->p, 64), 0, "round %lu: the bytes read back", round);
}

Test(daemon_spin, beside_a_task_that_holds_its_cpu_iwxd_sleeps_rather_than_spin)
{
	struct buf src = buf_new(&a, NULL, 4096, ALL_ACCESS, false);
	struct buf back = buf_new(&a, NULL, 4096, ALL_ACCESS, false);
	struct buf dst = buf_new(&b, NULL, 4096, ALL_ACCESS, false);
	int cpu = sched_getcpu();
	cpu_set_t one;
	uint64_t i;

	cr_assert_geq(cpu, 0);
	write_and_read(&src, &dst, &back, 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	cr_assert_eq(sched_setaffinity(pair.pid[0], sizeof(one), &one), 0, "daemon a on CPU %d", cpu);
	busy = busy_on(cpu);
	cr_assert_gt(busy, 0);
	for (i = 1; i <= ROUNDS; i++) {
		write_and_read(&src, &dst, &back, i);
		if (i % LOOK_EVERY == 0 && status_num(pair.sock[0], "spins_stopped") > 0)
			break;
	}
	cr_assert_eq(kill(busy, 0), 0, "the busy loop ran throughout");
	cr_assert_gt(status_num(pair.sock[0], "spins_stopped"), 0,
		     "after %lu rounds beside a task that holds its CPU, iwxd stopped spinning", i - 1);
}
