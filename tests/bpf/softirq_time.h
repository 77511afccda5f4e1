/* SPDX-License-Identifier: MIT */
/* What the CPU meter keeps per CPU (softirq_time.bpf.c), in ns; its loader reads it. */
#ifndef SOFTIRQ_TIME_H
#define SOFTIRQ_TIME_H

#include <linux/types.h>

struct meter_cpu {
	__u64	softirq_begun;	/* when the softirq running began, 0: none */
	__u64	last_switch;	/* the last context switch, 0: none seen yet */
	__u64	softirq;	/* time in softirq */
	__u64	softirq_idle;	/* ... of it from the idle task */
	__u64	idle;		/* time the idle task was current, its softirq included */
};

#endif /* SOFTIRQ_TIME_H */
