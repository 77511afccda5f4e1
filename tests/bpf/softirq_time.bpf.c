// SPDX-License-Identifier: MIT
/*
 * The benchmark's CPU meter (tests/bench/softirq_time.c): time in softirq, per CPU and
 * per process it interrupted, and each CPU's idle time. This kernel has no IRQ time
 * accounting: softirq that runs while a daemon is current (on return from an interrupt,
 * or when its own system call enables bottom halves) is charged to that daemon, and
 * softirq that runs from the idle loop while the tick is stopped is counted as idle in
 * /proc/stat. The bench subtracts the one and adds the other.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "softirq_time.h"

/* per CPU: where its softirq and its idle task stand, and its totals */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct meter_cpu);
} per_cpu SEC(".maps");

/* ns in softirq while each process (tgid) was current */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} per_tgid SEC(".maps");

static struct meter_cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&per_cpu, &zero);
}

SEC("raw_tp/softirq_entry")
int softirq_entry(void *ctx __attribute__((unused)))
{
	struct meter_cpu *c = this_cpu();

	if (c)
		c->softirq_begun = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/softirq_exit")
int softirq_exit(void *ctx __attribute__((unused)))
{
	__u64 id = bpf_get_current_pid_tgid(), *sum, ns;
	struct meter_cpu *c = this_cpu();
	__u32 tgid = id >> 32;

	if (!c || !c->softirq_begun)
		return 0;	/* began before the meter did */
	ns = bpf_ktime_get_ns() - c->softirq_begun;
	c->softirq_begun = 0;
	c->softirq += ns;
	if ((__u32)id == 0)
		c->softirq_idle += ns;	/* the idle task's: pid 0 */
	sum = bpf_map_lookup_elem(&per_tgid, &tgid);
	if (!sum) {
		__u64 none = 0;

		bpf_map_update_elem(&per_tgid, &tgid, &none, BPF_NOEXIST);
		sum = bpf_map_lookup_elem(&per_tgid, &tgid);
	}
	if (sum)
		__sync_fetch_and_add(sum, ns);
	return 0;
}

/* current is the task switched away from: time since the last switch was its */
SEC("raw_tp/sched_switch")
int sched_switch(void *ctx __attribute__((unused)))
{
	struct meter_cpu *c = this_cpu();
	__u64 now = bpf_ktime_get_ns();

	if (!c)
		return 0;
	if (c->last_switch && (__u32)bpf_get_current_pid_tgid() == 0)
		c->idle += now - c->last_switch;
	c->last_switch = now;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
