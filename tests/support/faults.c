// SPDX-License-Identifier: MIT
/* The fault injector's loader, and the qdisc its reordering needs (faults.h). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faults.h"
#include "faults.skel.h"
#include "netns.h"

#define TCX_INGRESS	46	/* enum bpf_attach_type's BPF_TCX_INGRESS (Linux 6.6), newer than our headers */
#define TCX_EGRESS	47	/* ... and BPF_TCX_EGRESS */
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

struct faults {
	struct faults_bpf	*skel;
	int			link;
};

struct attach_args {
	const char	*dev;
	int		prog;
	int		type;	/* TCX_INGRESS, TCX_EGRESS */
};

/* in the namespace: the link holds the program on the device until closed */
static int attach_in_ns(void *arg)
{
	struct attach_args *a = arg;
	int ifindex = if_nametoindex(a->dev), fd;

	if (!ifindex)
		return -errno;
	fd = bpf_link_create(a->prog, ifindex, a->type, NULL);	/* after those there */
	return fd < 0 ? -errno : fd;
}

/* Load the programs with c, attach one at TC ingress or egress of dev in namespace ns. */
static int load_attach(struct faults **out, const char *ns, const char *dev, const struct faults_conf *c,
		       bool ingress)
{
	struct faults *f = calloc(1, sizeof(*f));
	struct attach_args a = { .dev = dev, .type = ingress ? TCX_INGRESS : TCX_EGRESS };

	if (!f)
		return -ENOMEM;
	f->link = -1;
	f->skel = faults_bpf__open_and_load();
	if (!f->skel) {
		int err = -errno;

		free(f);
		return err;
	}
	faults_set(f, c);
	a.prog = bpf_program__fd(ingress ? f->skel->progs.drop_marked : f->skel->progs.inject);
	f->link = netns_call(ns, attach_in_ns, &a);
	if (f->link < 0) {
		int err = f->link;

		faults_detach(f);
		return err;
	}
	*out = f;
	return 0;
}

int faults_attach(struct faults **out, const char *ns, const char *dev, const struct faults_conf *c)
{
	return load_attach(out, ns, dev, c, false);
}

int faults_attach_filter(struct faults **out, const char *ns, const char *dev)
{
	return load_attach(out, ns, dev, &(struct faults_conf){ 0 }, true);
}

void faults_set(struct faults *f, const struct faults_conf *c)
{
	struct faults_bpf__bss *b = f->skel->bss;

	b->seed = c->seed;
	b->drop_ppm = c->drop_ppm;
	b->dup_ppm = c->dup_ppm;
	b->reorder_ppm = c->reorder_ppm;
	b->corrupt_ppm = c->corrupt_ppm;
	b->corrupt_at = c->corrupt_at;
	b->corrupt_xor = c->corrupt_xor;
	b->udp_port = htons(c->udp_port);
	b->drop_at = c->drop_at;
	b->forge_at = c->forge_at;
	b->forge_len = c->forge_len;
	b->forge_flip = c->forge_flip;
	memcpy(&b->forge_crc, c->forge_crc, sizeof(b->forge_crc));
	b->forge_how = c->forge_how;
	b->corrupt_due = 0;
}

struct faults_counts faults_counts(const struct faults *f)
{
	const struct faults_bpf__bss *b = f->skel->bss;

	return (struct faults_counts){
		.seen = LOAD(b->seen), .dropped = LOAD(b->dropped), .duplicated = LOAD(b->duplicated),
		.reordered = LOAD(b->reordered), .corrupted = LOAD(b->corrupted),
		.corrupt_seq = LOAD(b->corrupt_seq), .forge_seen = LOAD(b->forge_seen),
		.forged = LOAD(b->forged),
		.marked_dropped = LOAD(b->marked_dropped),
	};
}

void faults_detach(struct faults *f)
{
	if (!f)
		return;
	if (f->link >= 0)
		close(f->link);	/* the last reference to the link: the kernel detaches it */
	faults_bpf__destroy(f->skel);
	free(f);
}

/*
 * htb classifies a packet by skb->priority when that names one of its classes, before any
 * filter: the injector sets 1:20 on the segments it delays. The fast class takes what
 * the veth can carry; the slow one sends a 64 KiB segment in half a millisecond, time
 * for a dozen later ones to overtake it without holding it so long that TCP gives it up
 * for lost every time. The largest quantum spares the kernel's "quantum is big" warning.
 * Checked by the receiver's TcpExt TCPOFOQueue (nstat's TcpExtTCPOFOQueue): it grows by
 * dozens over 128 MiB with this qdisc and the injector, and stays at 0 without the
 * qdisc; test_fastpath_faults.c asserts that it grows.
 */
int faults_htb_add(const char *ns, const char *dev)
{
	int err;

	err = netns_exec(ns, "tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb",
			 "default", "10", NULL);
	if (!err)
		err = netns_exec(ns, "tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:10",
				 "htb", "rate", "20gbit", "quantum", "200000", NULL);
	if (!err)
		err = netns_exec(ns, "tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:20",
				 "htb", "rate", "1gbit", "quantum", "200000", NULL);
	if (err)
		faults_qdisc_del(ns, dev);
	return err;
}

/*
 * tbf at rate: a burst of 64 KiB (a TSO segment whole: tbf would cut a larger one), and
 * what waits longer than 100 ms dropped, as a slow link's queue would.
 */
int faults_rate_add(const char *ns, const char *dev, const char *rate)
{
	return netns_exec(ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate, "burst",
			  "64kb", "latency", "100ms", NULL);
}

void faults_qdisc_del(const char *ns, const char *dev)
{
	netns_exec(ns, "tc", "qdisc", "del", "dev", dev, "root", NULL);	/* fails when none: fine */
}

struct stat_args {
	const char	*name;
	int64_t		value;
};

/* /proc/net/netstat: a line of TcpExt names, then a line of their values */
static int read_stat(void *arg)
{
	struct stat_args *s = arg;
	char names[8192], values[8192], *n, *v, *sn, *sv;
	FILE *f = fopen("/proc/thread-self/net/netstat", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
		if (strncmp(names, "TcpExt:", 7))
			continue;
		n = strtok_r(names + 7, " \n", &sn);
		v = strtok_r(values + 7, " \n", &sv);
		for (; n && v; n = strtok_r(NULL, " \n", &sn), v = strtok_r(NULL, " \n", &sv))
			if (!strcmp(n, s->name)) {
				s->value = strtoll(v, NULL, 10);
				err = 0;
				break;
			}
		break;
	}
	fclose(f);
	return err;
}

int64_t faults_tcp_stat(const char *ns, const char *name)
{
	struct stat_args s = { .name = name };
	int err = netns_call(ns, read_stat, &s);

	return err ? err : s.value;
}
