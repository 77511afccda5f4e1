// SPDX-License-Identifier: MIT
/*
 * Protocol-core benchmark: CRC32c, and the MPA receive parser over a stream of RDMA
 * Write FPDUs (CRC on), driven by feed and by pull-with-placement, next to a plain
 * memcpy of the same stream. Each figure is the median of RUNS timed runs, with
 * the slowest and fastest run.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/crc32c.h"
#include "proto/ddp.h"
#include "proto/mpa.h"
#include "proto/mpa_rx.h"

#define RUNS		7
#define RUN_SECONDS	0.07		/* RUNS of these: about 0.5 s a measurement */
#define MSG_LEN		(8u << 20)	/* one RDMA Write message, segmented */
#define CHUNK		(64u << 10)	/* bytes handed over per feed, or per "recv" */
#define SINK_STAG	0x1234
#define SINK_TO		0x100000000ull

static volatile uint64_t sink;	/* keeps results alive */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "bench_proto: out of memory\n");
		exit(1);
	}
	return p;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = seed >> 16;
	}
}

/* ------------------------------------------------------------ measurement */

typedef void (*bench_fn)(void *arg, uint64_t iters);

struct result {
	double	med, min, max;	/* GB/s */
};

static double timed(bench_fn fn, void *arg, uint64_t iters)
{
	double t0 = now();

	fn(arg, iters);
	return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct result measure(bench_fn fn, void *arg, double bytes_per_iter)
{
	double gbps[RUNS], t;
	uint64_t iters = 1;
	struct result r;

	/* calibrate (and warm caches): double until a run takes 10 ms */
	while ((t = timed(fn, arg, iters)) < 0.01)
		iters *= 2;
	iters = iters * RUN_SECONDS / t + 1;
	for (int i = 0; i < RUNS; i++)
		gbps[i] = bytes_per_iter * iters / timed(fn, arg, iters) / 1e9;
	qsort(gbps, RUNS, sizeof(gbps[0]), cmp_double);
	r.min = gbps[0];
	r.med = gbps[RUNS / 2];
	r.max = gbps[RUNS - 1];
	return r;
}

static void row(const char *what, struct result r, double fpdus_per_byte)
{
	printf("%-44s %8.2f %8.2f %8.2f", what, r.med, r.min, r.max);
	if (fpdus_per_byte > 0)
		printf(" %10.2f", r.med * 1e3 * fpdus_per_byte);
	printf("\n");
}

/* ------------------------------------------------------------------ CRC32c */

struct crc_arg {
	const uint8_t	*buf;
	size_t		len;
};

static void bench_crc(void *arg, uint64_t iters)
{
	struct crc_arg *a = arg;
	uint32_t acc = 0;

	for (uint64_t i = 0; i < iters; i++)
		acc += iwx_crc32c(a->buf, a->len);
	sink += acc;
}

/* ----------------------------------------------------------- FPDU streams */

struct stream {
	uint8_t		*p;
	size_t		len;
	uint64_t	fpdus;
	bool		markers;
};

/* One MSG_LEN RDMA Write, cut so that each FPDU fits in emss bytes. */
static void build_stream(struct stream *s, const uint8_t *msg, uint32_t emss, bool markers)
{
	struct iwx_mpa_mode mode = { .rev = IWX_MPA_REV1, .crc = true, .markers_tx = markers };
	struct iwx_ddp_msg m = { .opcode = IWX_OP_WRITE, .stag = SINK_STAG, .to = SINK_TO,
				 .len = MSG_LEN };
	struct iwx_ddp_segmenter seg;
	struct iwx_mpa_tx tx;
	size_t cap = MSG_LEN + MSG_LEN / 16 + 65536;
	uint8_t hdr[IWX_DDP_UNTAGGED_HDR_LEN];
	uint32_t off, len;
	size_t hl;

	if (iwx_ddp_segmenter_init(&seg, &m, iwx_mpa_mulpdu(emss, markers))) {
		fprintf(stderr, "bench_proto: segmenter init failed\n");
		exit(1);
	}
	iwx_mpa_tx_init(&tx, &mode);
	s->p = xmalloc(cap);
	s->len = 0;
	s->fpdus = 0;
	s->markers = markers;
	while ((hl = iwx_ddp_segmenter_next(&seg, hdr, &off, &len)) > 0) {
		ssize_t n = iwx_mpa_fpdu_build(&tx, s->p + s->len, cap - s->len, hdr, hl,
					       msg + off, len);

		if (n < 0 || (size_t)n > emss) {
			fprintf(stderr, "bench_proto: fpdu build: %zd\n", n);
			exit(1);
		}
		s->len += n;
		s->fpdus++;
	}
}

struct rx_arg {
	const struct stream	*s;
	struct iwx_mpa_rx	*rx;
	uint8_t			*target;	/* the Write's sink buffer, MSG_LEN bytes */
	uint64_t		segs, bytes;
	uint8_t			x;
};

static int on_segment(void *ctx, const struct iwx_ddp_seg *seg)
{
	struct rx_arg *a = ctx;

	a->segs++;
	a->bytes += seg->len;
	if (seg->len)
		a->x ^= seg->payload[seg->len - 1];
	return 0;
}

static int on_place(void *ctx, const struct iwx_ddp_seg *seg, uint8_t **dst,
		    struct iwx_term_cause *cause)
{
	struct rx_arg *a = ctx;

	if (seg->stag != SINK_STAG || seg->to < SINK_TO || seg->to - SINK_TO > MSG_LEN ||
	    seg->len > MSG_LEN - (seg->to - SINK_TO)) {
		*cause = IWX_CAUSE_DDP_T(IWX_DDP_T_BASE_BOUNDS);
		return -EPROTO;
	}
	*dst = a->target + (seg->to - SINK_TO);
	return 0;
}

static const struct iwx_mpa_rx_ops feed_ops = { .segment = on_segment };
static const struct iwx_mpa_rx_ops pull_ops = { .place = on_place, .segment = on_segment };

static void rx_start(struct rx_arg *a, const struct iwx_mpa_rx_ops *ops)
{
	struct iwx_mpa_mode mode = { .rev = IWX_MPA_REV1, .crc = true,
				     .markers_rx = a->s->markers };

	iwx_mpa_rx_init(a->rx, &mode, ops, a);
}

static void rx_check(struct rx_arg *a, int err, uint64_t iters)
{
	if (err || a->segs != a->s->fpdus * iters || a->bytes != (uint64_t)MSG_LEN * iters) {
		fprintf(stderr, "bench_proto: parser error %d, %llu segments of %llu\n", err,
			(unsigned long long)a->segs, (unsigned long long)(a->s->fpdus * iters));
		exit(1);
	}
	sink += a->x;
}

static void bench_feed(void *arg, uint64_t iters)
{
	struct rx_arg *a = arg;
	int err = 0;

	a->segs = a->bytes = 0;
	for (uint64_t i = 0; i < iters && !err; i++) {
		rx_start(a, &feed_ops);
		for (size_t at = 0; at < a->s->len && !err; at += CHUNK) {
			size_t n = a->s->len - at < CHUNK ? a->s->len - at : CHUNK;

			err = iwx_mpa_rx_feed(a->rx, a->s->p + at, n, NULL);
		}
	}
	rx_check(a, err, iters);
}

/* As a socket reader would: recv() (here memcpy) at most CHUNK bytes where want says. */
static void bench_pull(void *arg, uint64_t iters)
{
	struct rx_arg *a = arg;
	int err = 0;

	a->segs = a->bytes = 0;
	for (uint64_t i = 0; i < iters && !err; i++) {
		size_t at = 0, avail = 0;

		rx_start(a, &pull_ops);
		while (at < a->s->len && !err) {
			uint8_t *dst;
			size_t n = iwx_mpa_rx_want(a->rx, &dst);

			if (avail == 0)
				avail = a->s->len - at < CHUNK ? a->s->len - at : CHUNK;
			if (n > avail)
				n = avail;
			memcpy(dst, a->s->p + at, n);
			at += n;
			avail -= n;
			err = iwx_mpa_rx_advance(a->rx, n);
		}
	}
	rx_check(a, err, iters);
}

static void bench_memcpy(void *arg, uint64_t iters)
{
	struct rx_arg *a = arg;

	for (uint64_t i = 0; i < iters; i++) {
		for (size_t at = 0; at < a->s->len; at += CHUNK) {
			size_t n = a->s->len - at < CHUNK ? a->s->len - at : CHUNK;

			memcpy(a->target + at, a->s->p + at, n);
		}
		__asm__ volatile("" : : "r"(a->target) : "memory");
	}
	sink += a->target[a->s->len - 1];
}

int main(void)
{
	static const struct {
		uint32_t	emss;
		bool		markers;
	} streams[] = { { 1448, false }, { 8960, false }, { 1448, true } };
	uint8_t *msg = xmalloc(MSG_LEN), *big = xmalloc(1 << 20);
	struct rx_arg a = { .rx = xmalloc(sizeof(*a.rx)),
			    .target = xmalloc(MSG_LEN + MSG_LEN / 16 + 65536) };
	struct crc_arg c;
	char what[64];

	fill(msg, MSG_LEN, 1);
	fill(big, 1 << 20, 2);
	memset(a.target, 0, MSG_LEN + MSG_LEN / 16 + 65536);

	printf("%-44s %8s %8s %8s %10s\n", "GB/s (median of 7, min, max)", "median", "min",
	       "max", "M FPDU/s");
	c = (struct crc_arg){ big, 1448 };
	row("crc32c, 1448 B buffer", measure(bench_crc, &c, c.len), 0);
	c = (struct crc_arg){ big, 1 << 20 };
	row("crc32c, 1 MiB buffer", measure(bench_crc, &c, c.len), 0);

	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		struct stream s;
		double per_byte;
		const char *m = streams[i].markers ? ", markers" : "";

		build_stream(&s, msg, streams[i].emss, streams[i].markers);
		a.s = &s;
		per_byte = (double)s.fpdus / s.len;
		snprintf(what, sizeof(what), "memcpy, %u B FPDU stream%s", streams[i].emss, m);
		row(what, measure(bench_memcpy, &a, s.len), per_byte);
		snprintf(what, sizeof(what), "rx feed, %u B FPDUs, CRC%s", streams[i].emss, m);
		row(what, measure(bench_feed, &a, s.len), per_byte);
		snprintf(what, sizeof(what), "rx pull+place, %u B FPDUs, CRC%s", streams[i].emss, m);
		row(what, measure(bench_pull, &a, s.len), per_byte);
		if (memcmp(a.target, msg, MSG_LEN)) {
			fprintf(stderr, "bench_proto: placed data differs from the message\n");
			return 1;
		}
		free(s.p);
	}
	printf("(%u MiB RDMA Write message per stream, handed over in %u KiB pieces)\n",
	       MSG_LEN >> 20, CHUNK >> 10);
	free(msg);
	free(big);
	free(a.rx);
	free(a.target);
	return 0;
}
