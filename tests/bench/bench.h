/* SPDX-License-Identifier: MIT */
/*
 * The RDMA side of the benchmark (bench.c) behind a few calls, which each backend
 * implements and which one program links exactly one of:
 *
 *   bench_verbs.c   libiwx, served by iwxd: the product path (build/bench/bench_verbs)
 *   bench_engine.c  the engine of control/engine/ in this process, no daemon: what the daemon
 *                   costs is the difference (build/bench/bench_engine)
 *
 * Work requests and completions are those of iwx/verbs.h for both. Every function that
 * fails says why on stderr.
 */
#ifndef IWX_BENCH_H
#define IWX_BENCH_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <iwx/access.h>
#include <iwx/verbs.h>

/* The backend's name, "verbs" or "engine": messages say bench_<name>. */
extern const char *const rdma_backend;

struct rdma_opts {
	const char	*daemon;	/* verbs: iwxd's socket (NULL: $IWX_SOCKET, or the default) */
	size_t		arena;		/* verbs: bytes of arena to ask iwxd for */
	uint32_t	sq_depth, rq_depth;
	uint8_t		ird, ord;	/* RDMA Reads in flight, inbound and outbound */
	bool		no_crc;		/* ask for no MPA CRC (both sides must, or it is used) */
	bool		markers;	/* ask for markers in what this side receives */
	int		timeout_ms;	/* each step of the connection set-up */
	const char	*llp;		/* engine: "sctp" for the DDP adaptation over usrsctp in
					 * UDP (bench_carrier.c), else (NULL, "tcp") MPA over TCP */
	uint32_t	zerocopy_min;	/* engine, TCP: MSG_ZEROCOPY from this many bytes (0: never) */
};

/* This side's counters since it started; the benchmark takes differences. */
struct rdma_counters {
	bool		valid;		/* false: unknown (iwxd answers STATUS to root only) */
	uint64_t	tx_fpdus, tx_fpdus_aligned;	/* handed to TCP, whole in one send() */
	uint64_t	doorbells, wakeups;		/* iwxd's: 0 without a daemon */
};

struct rdma;

/*
 * Server: ready for one client on addr. Receives may be posted, and memory allocated
 * and registered, before rdma_accept; nothing may be sent. NULL on error.
 */
struct rdma *rdma_listen(const struct sockaddr_in *addr, const struct rdma_opts *o);
/* Server: wait up to ms for the client and complete the connection. 0 or -errno. */
int rdma_accept(struct rdma *r, int ms);
/* Client: connect to addr, retrying a refused connection for retry_ms. NULL on error. */
struct rdma *rdma_connect(const struct sockaddr_in *addr, const struct rdma_opts *o, int retry_ms);
/* RDMA Reads this side may have in flight, as agreed with the peer. */
uint32_t rdma_ord(const struct rdma *r);
/* Close (graceful: an orderly end of the stream, waited for a while) and free. */
void rdma_close(struct rdma *r, bool graceful);

/* len bytes of memory work requests may use (the arena, for verbs), zeroed. NULL on error. */
void *rdma_alloc(struct rdma *r, size_t len);
/* Register [p, p + len) with access (IWX_ACCESS_*): its STag in *stag. 0 or -errno. */
int rdma_reg(struct rdma *r, void *p, size_t len, int access, uint32_t *stag);
int rdma_post_send(struct rdma *r, const struct iwx_send_wr *wr);
int rdma_post_recv(struct rdma *r, const struct iwx_recv_wr *wr);
/*
 * Up to n completions; when none is there, wait up to wait_ms for some (and move data,
 * for the engine). Returns how many (0: none yet), -ENOTCONN when the stream is gone
 * (unreported: the caller knows whether it expected that), or another -errno.
 */
int rdma_poll(struct rdma *r, struct iwx_wc *wc, int n, int wait_ms);
/* Say on stderr why the stream ended. */
void rdma_report_failure(struct rdma *r);
void rdma_counters(struct rdma *r, struct rdma_counters *c);

#endif /* IWX_BENCH_H */
