// SPDX-License-Identifier: MIT
/*
 * The benchmark's CPU meter: attaches tests/bpf/softirq_time.bpf.c, says "ready", and
 * on SIGINT or SIGTERM, or after SECONDS, prints what it measured since, in ns, then
 * exits:
 *
 *   wall NS                       how long it measured
 *   cpu N SOFTIRQ SOFTIRQ_IDLE IDLE   each CPU's softirq, the part of it run from the
 *                                 idle task, and the idle task's time (that included)
 *   tgid PID NS                   softirq while each process was current
 *
 * So a CPU was busy for wall - IDLE + SOFTIRQ_IDLE (interrupts outside softirq not
 * counted), and a process ran for itself for its run time less its tgid's NS.
 * scripts/bench.sh runs it around each measurement (root: it loads BPF).
 *
 *   softirq_time SECONDS
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "softirq_time.h"
#include "softirq_time.skel.h"

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static int print_cpus(const struct softirq_time_bpf *skel)
{
	int n = libbpf_num_possible_cpus();
	struct meter_cpu *v;
	__u32 zero = 0;

	if (n <= 0)
		return -1;
	v = calloc(n, sizeof(*v));
	if (!v || bpf_map_lookup_elem(bpf_map__fd(skel->maps.per_cpu), &zero, v)) {
		free(v);
		return -1;
	}
	for (int c = 0; c < n; c++)
		printf("cpu %d %llu %llu %llu\n", c, (unsigned long long)v[c].softirq,
		       (unsigned long long)v[c].softirq_idle, (unsigned long long)v[c].idle);
	free(v);
	return 0;
}

static void print_tgids(const struct softirq_time_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.per_tgid);
	__u32 key, next, *prev = NULL;
	__u64 ns;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &ns))
			printf("tgid %u %llu\n", key, (unsigned long long)ns);
	}
}

int main(int argc, char **argv)
{
	struct softirq_time_bpf *skel;
	unsigned long long t0;
	sigset_t stop;
	int sig, st, secs = argc == 2 ? atoi(argv[1]) : 0;

	if (secs <= 0) {
		fprintf(stderr, "usage: %s SECONDS (prints CPU and softirq time at SIGINT, or then)\n",
			argv[0]);
		return 2;
	}
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGALRM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	skel = softirq_time_bpf__open_and_load();
	if (!skel || softirq_time_bpf__attach(skel)) {
		fprintf(stderr, "softirq_time: cannot load or attach the meter (root?)\n");
		softirq_time_bpf__destroy(skel);
		return 1;
	}
	t0 = now_ns();
	alarm(secs);
	printf("ready\n");
	fflush(stdout);
	sigwait(&stop, &sig);
	printf("wall %llu\n", now_ns() - t0);
	st = print_cpus(skel);
	print_tgids(skel);
	softirq_time_bpf__destroy(skel);
	if (st)
		fprintf(stderr, "softirq_time: cannot read the per-CPU figures\n");
	return st ? 1 : 0;
}
