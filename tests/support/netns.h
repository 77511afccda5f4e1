/* SPDX-License-Identifier: MIT */
/*
 * Two network namespaces joined by a veth pair, for one test: "a" holds 192.0.2.1/24
 * and 2001:db8::1/64, "b" holds 192.0.2.2/24 and 2001:db8::2/64. A socket stays in the
 * namespace it was created in, so tests create sockets in a namespace from a short-lived
 * thread (netns_call) and drive them from the main thread.
 */
#ifndef IWX_NETNS_H
#define IWX_NETNS_H

#include <stdbool.h>

#define NETNS_A4	"192.0.2.1"
#define NETNS_B4	"192.0.2.2"
#define NETNS_A6	"2001:db8::1"
#define NETNS_B6	"2001:db8::2"

struct netns_pair {
	char	a[32], b[32];	/* iwxt-<pid>-a, iwxt-<pid>-b */
	char	dev[2][16];	/* the veth ends: iwx<pid>a in a, iwx<pid>b in b */
	bool	made[2];
};

/* Create both namespaces, the veth pair, addresses and links. 0 or -errno (needs root). */
int netns_pair_setup(struct netns_pair *p);

/* Remove both namespaces (and with them the veth pair); safe to call more than once. */
void netns_pair_teardown(struct netns_pair *p);

/* Run fn(arg) in a thread that joined namespace ns; returns fn's result or -errno. */
int netns_call(const char *ns, int (*fn)(void *arg), void *arg);

/*
 * Run a command (arg0 and what follows, NULL-terminated) in namespace ns with
 * `ip netns exec`, its output discarded: 0 when it exits 0, else -errno.
 */
int netns_exec(const char *ns, const char *arg0, ...) __attribute__((sentinel));

/* A socket(domain, type, 0) created in namespace ns: fd or -errno. */
int netns_socket(const char *ns, int domain, int type);

#endif /* IWX_NETNS_H */
