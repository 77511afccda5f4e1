/* SPDX-License-Identifier: MIT */
/*
 * Two hosts for integration tests: a namespace pair (netns.h) with an iwxd in each,
 * and helpers to open devices on them and connect queue pairs across. The test
 * process itself stays in its own namespace: the daemons' Unix sockets are files,
 * reachable from anywhere, and the TCP streams are the daemons'.
 */
#ifndef IWX_IWXD_PAIR_H
#define IWX_IWXD_PAIR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <iwx/iwx.h>

#include "netns.h"

struct endpoint;
struct iwx_fp_counters;
struct iwx_qp_stats;

struct iwxd_pair {
	struct netns_pair	ns;
	char			dir[64];	/* sockets, logs, captures: removed at the end */
	char			sock[2][96];	/* [0] in namespace a, [1] in b */
	pid_t			pid[2];
};

/*
 * Create the namespaces and start an iwxd in each with args (extra options, may be
 * NULL), waiting until both serve. 0 or -errno; everything made is undone on failure.
 */
int iwxd_pair_start(struct iwxd_pair *p, const char *args);

/*
 * Ask daemon i to attach the fast path (IWX_FP_MODE_*, with IWX_FP_ATTACH_* flags) to its
 * end of the veth pair (for XDP, with the other end's checksum offload turned off: veth
 * hands XDP checksums nobody computed). 0 or iwxd's -errno. iwxd_pair_start does so on
 * both, without flags, when IWX_TEST_FASTPATH is "tc" or "xdp", so that any suite runs
 * with the fast path.
 */
int iwxd_pair_attach(const struct iwxd_pair *p, int i, uint32_t mode, uint32_t flags);
/* Have the kernel compute the checksums of what namespace i sends on the veth. 0 or -EIO. */
int iwxd_pair_tx_offload_off(const struct iwxd_pair *p, int i);

/* ... on both daemons: 0 or the first -errno. */
int iwxd_pair_attach_both(const struct iwxd_pair *p, uint32_t mode);

/*
 * Daemon i's fast path counters (IWX_IPC_FP_STATS): those of its first interface (kind
 * IWX_FP_INFO_IFACE) or first connection followed (IWX_FP_INFO_CONN). 0, or -ENOENT
 * (*c zeroed) when there is none, or iwxd's -errno.
 */
int iwxd_pair_fp_counters(const struct iwxd_pair *p, int i, uint32_t kind, struct iwx_fp_counters *c);

/* Daemon i's traffic counters (IWX_IPC_STATUS): 0 or -errno. */
int iwxd_pair_traffic(const struct iwxd_pair *p, int i, struct iwx_qp_stats *t);

/* Stop both daemons (SIGTERM, then SIGKILL after 5 s) and remove the namespaces. */
void iwxd_pair_stop(struct iwxd_pair *p);

/*
 * A test's usual start: the pair with args, endpoint a on daemon 0 and b on daemon 1
 * (arenas of arena bytes; 0: the default). 0 or -errno.
 */
int iwxd_pair_up(struct iwxd_pair *p, const char *args, struct endpoint *a, struct endpoint *b,
		 size_t arena);

/* ... and its end: close a and b (those open), stop the pair. */
void iwxd_pair_down(struct iwxd_pair *p, struct endpoint *a, struct endpoint *b);

/* Kill daemon i (0 or 1) at once: the "daemon killed" case. */
void iwxd_pair_kill(struct iwxd_pair *p, int i);

/* The daemon to test: $IWX_IWXD (the ASan build in `make test-asan`), else build/iwxd. */
const char *iwxd_path(void);

/* Start daemon i again (after iwxd_pair_kill) with args, waiting until it serves. 0 or -errno. */
int iwxd_pair_respawn(struct iwxd_pair *p, int i, const char *args);

/* How many lines of daemon i's log (it runs with -v) hold what. */
int iwxd_pair_log_count(const struct iwxd_pair *p, int i, const char *what);

/* Does daemon i's log have a line with what in it? */
bool iwxd_pair_logged(const struct iwxd_pair *p, int i, const char *what);

/* Let other users reach the daemons' sockets (mkdtemp made their directory 0700). 0 or -errno. */
int iwxd_pair_reachable(const struct iwxd_pair *p);

/* One side of a connection: a device on a daemon, a PD, one CQ, one QP. */
struct endpoint {
	struct iwx_device	*dev;
	struct iwx_pd		*pd;
	struct iwx_cq		*cq;
	struct iwx_qp		*qp;
	const struct iwxd_pair	*pair;		/* whose daemons' traffic tells progress (endpoint_wc) */
};

/* Open a device on daemon i with an arena of arena bytes (0: default) and make a QP. */
int endpoint_open(struct endpoint *e, const struct iwxd_pair *p, int i, size_t arena);
void endpoint_close(struct endpoint *e);

/*
 * Connect a (the client, on daemon 0) to b (the server, on daemon 1) over IPv4 (or
 * IPv6 with v6), with the same param on both sides (NULL: defaults; its transport is
 * the listener's too). 0 with both QPs in RTS, or -errno.
 */
int endpoint_connect(struct endpoint *a, struct endpoint *b, bool v6,
		     const struct iwx_conn_param *param);

/* The next event of e, waiting up to timeout_ms; -EAGAIN if none came. */
int endpoint_event(struct endpoint *e, struct iwx_event *ev, int timeout_ms);

/*
 * Wait for one completion on e's CQ. The wait is for an event, not for a pace: it gives
 * up (-ETIMEDOUT) only once both daemons of e's pair have moved no byte for STALL_MS
 * (stall.h: a hang, whatever the machine's speed). 0 with *wc, -ETIMEDOUT or -errno.
 */
int endpoint_wc(struct endpoint *e, struct iwx_wc *wc);

/* A registered buffer. */
struct buf {
	uint8_t		*p;
	size_t		len;
	struct iwx_mr	*mr;
};

/*
 * len bytes, zeroed, registered in pd (NULL: e's) with access: from e's arena, or with
 * outside from the heap, in pages of their own (the test frees p). The test fails if
 * they cannot be had.
 */
struct buf buf_new(struct endpoint *e, struct iwx_pd *pd, size_t len, int access, bool outside);

/* len bytes of x from off, as a work request names them. */
struct iwx_sge sge_of(const struct buf *x, size_t off, uint32_t len);

#endif /* IWX_IWXD_PAIR_H */
