// SPDX-License-Identifier: MIT
/*
 * What registering ordinary memory costs: iwx_reg_mr and iwx_dereg_mr of a malloc'd,
 * touched buffer of each size, through the iwxd at $IWX_SOCKET (or the default),
 * RUNS times each; the medians in microseconds, as a Markdown table. Only the public
 * API: the same source measures any version of libiwx (scripts/bench.sh runs it).
 *
 *   bench_reg [RUNS]        (default 21)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iwx/iwx.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	const size_t sizes[] = { 1u << 20, 64u << 20 };
	int runs = argc > 1 ? atoi(argv[1]) : 21;
	struct iwx_device *dev = iwx_open(NULL);
	struct iwx_pd *pd = dev ? iwx_alloc_pd(dev) : NULL;
	double *reg = calloc(runs > 0 ? runs : 1, sizeof(double));
	double *dereg = calloc(runs > 0 ? runs : 1, sizeof(double));

	if (runs < 1 || !pd || !reg || !dereg) {
		fprintf(stderr, "bench_reg: %s\n", runs < 1 ? "RUNS must be positive" :
			iwx_strerror(errno));
		return 1;
	}
	printf("| size | iwx_reg_mr | iwx_dereg_mr |\n| --- | --- | --- |\n");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint8_t *buf = malloc(sizes[s]);

		if (!buf)
			return 1;
		memset(buf, 0x5a, sizes[s]);	/* touched: real pages, as an application's */
		for (int i = 0; i < runs; i++) {
			double t0 = now_us(), t1, t2;
			struct iwx_mr *mr = iwx_reg_mr(pd, buf, sizes[s], IWX_ACCESS_LOCAL_WRITE |
						       IWX_ACCESS_REMOTE_WRITE |
						       IWX_ACCESS_REMOTE_READ);

			t1 = now_us();
			if (!mr || iwx_dereg_mr(mr)) {
				fprintf(stderr, "bench_reg: %s\n", iwx_strerror(errno));
				return 1;
			}
			t2 = now_us();
			reg[i] = t1 - t0;
			dereg[i] = t2 - t1;
		}
		printf("| %s | %.0f µs | %.0f µs |\n", s ? "64 MiB" : "1 MiB", median(reg, runs),
		       median(dereg, runs));
		free(buf);
	}
	iwx_close(dev);
	return 0;
}
