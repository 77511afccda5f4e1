/* SPDX-License-Identifier: MIT */
/*
 * What the benchmark programs share besides the RDMA side (bench.h): messages, clocks,
 * buffers, sizes, and the lines they print (bench_util.c); and the SCTP carrier, usrsctp
 * in UDP datagrams driven by one loop (bench_carrier.c: bench_engine --llp sctp and
 * bench_usrsctp).
 */
#ifndef IWX_BENCH_UTIL_H
#define IWX_BENCH_UTIL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "PROGRAM: " fmt..., then ": strerror(err)" when err; returns a negative errno (-EIO for 0). */
int errf(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t now_ns(void);
/* This process's user and system time so far. */
uint64_t cpu_ns(void);
/* The bytes the benchmarks write and check. */
uint8_t pattern(uint64_t i);
/* n bytes, page-aligned and zeroed (faulted in); exits on failure. */
void *xalloc(uint64_t n);
/*
 * The options every benchmark program takes: -s (server: *role 1), -c (client: 0), -a ADDR,
 * -p PORT into addr. 1: c was one of them, 0: it was not, -1: a bad ADDR.
 */
int common_opt(int c, const char *arg, int *role, struct sockaddr_in *addr);
/* A size with an optional K, M or G suffix; -1 if it is not one. */
long long parse_size(const char *s);

/* A client's result: "mode=... size=... depth=... seconds=... msgs=... bytes=... gbps=..."
 * (depth 0: "na"), the rest of the line the caller's. */
void print_goodput(const char *mode, uint32_t size, uint32_t depth, double secs, uint64_t msgs,
		   uint64_t bytes);
/* A server's line: what it received, and its CPU in percent of one over ms and in ms. */
void print_server(const char *mode, uint32_t size, uint32_t depth, uint64_t rx_msgs,
		  uint64_t rx_bytes, uint64_t cpu_ns, uint64_t ms);
/* The end of a client's line: " client_cpu_pct=... client_cpu_ms=...", its CPU over secs. */
void print_client_cpu(uint64_t cpu_ns, double secs);

/* Room for one round trip every microsecond of ms (exits on failure); its size in *cap. */
uint64_t *rtt_array(uint32_t ms, size_t *cap);
/* "mode=... size=... seconds=... n=... rtt_us_median=... rtt_us_p99=... rtt_us_min=...
 * rtt_us_max=..." of n round-trip times in ns (sorted in place), the rest of the line the
 * caller's. */
void print_rtts(const char *mode, uint32_t size, uint64_t *rtt, size_t n, double secs);

/* ---------------------------------------------------------------- the SCTP carrier */

/*
 * One usrsctp stack in this process, its packets in UDP datagrams (RFC 6951) on one
 * socket bound to addr. 0 or -errno (said on stderr).
 */
int carrier_open(const struct sockaddr_in *addr);
/* The path to a peer's UDP socket (the initiator's). NULL on error (said). */
struct iwx_sctp_path *carrier_path(const struct sockaddr_in *peer);
/*
 * One turn: wait up to ms for a datagram (never past the next timer tick, and not at all
 * while datagrams are left from the last turn), feed what came to the stack, and run its
 * timers when due (IWX_SCTP_TICK_MS). 0 or -errno.
 */
int carrier_pump(int ms);
/*
 * Let the stack finish what is closing (SCTP's SHUTDOWN) for a while, stop it, and say on
 * stderr what it sent since carrier_open: "PROGRAM: usrsctp: data_chunks=N
 * retrans_chunks=N udp_drops=N" (the namespace's UDP receive buffer overflows).
 */
void carrier_close(void);

#endif /* IWX_BENCH_UTIL_H */
