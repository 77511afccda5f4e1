// SPDX-License-Identifier: MIT
/*
 * What the benchmark programs share (bench_util.h): messages, clocks, buffers, and the
 * lines they print (goodput, round trips).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"

int errf(int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	return err ? (err < 0 ? err : -err) : -EIO;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

uint8_t pattern(uint64_t i)
{
	return (uint8_t)(i * 131 + (i >> 11) * 7 + 1);
}

void *xalloc(uint64_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) & ~4095ull);

	if (!p) {
		errf(-ENOMEM, "allocating %lu bytes", (unsigned long)n);
		exit(1);
	}
	memset(p, 0, n);	/* fault the pages in before anything is timed */
	return p;
}

int common_opt(int c, const char *arg, int *role, struct sockaddr_in *addr)
{
	switch (c) {
	case 's': *role = 1; return 1;
	case 'c': *role = 0; return 1;
	case 'a': return inet_pton(AF_INET, arg, &addr->sin_addr) == 1 ? 1 : -1;
	case 'p': addr->sin_port = htons(atoi(arg)); return 1;
	}
	return 0;
}

long long parse_size(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	else if (*end == 'g' || *end == 'G')
		v <<= 30;
	else if (*end)
		v = -1;
	return v;
}

void print_goodput(const char *mode, uint32_t size, uint32_t depth, double secs, uint64_t msgs,
		   uint64_t bytes)
{
	char d[16] = "na";

	if (depth)
		snprintf(d, sizeof(d), "%u", depth);
	printf("mode=%s size=%u depth=%s seconds=%.2f msgs=%lu bytes=%lu gbps=%.3f", mode, size, d,
	       secs, (unsigned long)msgs, (unsigned long)bytes, bytes * 8 / secs / 1e9);
}

void print_server(const char *mode, uint32_t size, uint32_t depth, uint64_t rx_msgs,
		  uint64_t rx_bytes, uint64_t cpu, uint64_t ms)
{
	char d[16] = "na";

	if (depth)
		snprintf(d, sizeof(d), "%u", depth);
	printf("role=server mode=%s size=%u depth=%s rx_msgs=%lu rx_bytes=%lu server_cpu_pct=%.0f "
	       "server_cpu_ms=%.1f\n", mode, size, d, (unsigned long)rx_msgs, (unsigned long)rx_bytes,
	       ms ? 100.0 * cpu / 1e6 / ms : 0.0, cpu / 1e6);
}

void print_client_cpu(uint64_t cpu, double secs)
{
	printf(" client_cpu_pct=%.0f client_cpu_ms=%.1f\n", 100.0 * cpu / 1e9 / secs, cpu / 1e6);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void print_rtts(const char *mode, uint32_t size, uint64_t *rtt, size_t n, double secs)
{
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	double med = n % 2 ? rtt[n / 2] : (rtt[n / 2 - 1] + rtt[n / 2]) / 2.0;
	size_t k99 = (n * 99 + 99) / 100;	/* ceil(0.99 n) */

	printf("mode=%s size=%u seconds=%.2f n=%zu rtt_us_median=%.2f rtt_us_p99=%.2f "
	       "rtt_us_min=%.2f rtt_us_max=%.2f", mode, size, secs, n, med / 1e3,
	       rtt[k99 - 1] / 1e3, rtt[0] / 1e3, rtt[n - 1] / 1e3);
}

uint64_t *rtt_array(uint32_t ms, size_t *cap)
{
	*cap = (size_t)ms * 1000 + 16;
	uint64_t *v = malloc(*cap * sizeof(*v));

	if (!v) {
		errf(-ENOMEM, "allocating the round-trip times");
		exit(1);
	}
	return v;
}
