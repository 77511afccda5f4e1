// SPDX-License-Identifier: MIT
/*
 * The CLI: TCP reassembly from pcap files written here with libpcap (retransmissions,
 * reordering, gaps, truncated frames, every link type), then `build/iwx decode` run on
 * those files and on the siw captures, when present. Run from the repository root.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/mpa.h"
#include "proto/rdmap.h"

/* The reassembler is the CLI's own; the test binary links cli/tcp_streams.c. */
#include "tcp_streams.h"

#define IWX_BIN		"build/iwx"
#define CAPTURES	"../shared/interop/captures/"

/* ------------------------------------------------------ capture writer */

struct cap {
	pcap_t		*pd;
	pcap_dumper_t	*d;
	int		dlt;
	bool		vlan;		/* Ethernet with an 802.1Q tag */
	unsigned int	frames;
	char		path[64];
};

/* One TCP connection being written: endpoint 0 is the active side. */
struct flow {
	int		family;
	uint8_t		addr[2][16];
	uint16_t	port[2];
	uint32_t	isn[2];
	uint32_t	off[2];		/* next stream offset to send */
};

#define F_FIN	0x01
#define F_SYN	0x02
#define F_RST	0x04
#define F_PSH	0x08
#define F_ACK	0x10

static void cap_open(struct cap *c, int dlt, bool vlan)
{
	int fd;

	memset(c, 0, sizeof(*c));
	snprintf(c->path, sizeof(c->path), "/tmp/iwx-cli-test-XXXXXX");
	fd = mkstemp(c->path);
	cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
	close(fd);
	c->dlt = dlt;
	c->vlan = vlan;
	c->pd = pcap_open_dead(dlt, 65535);
	cr_assert_not_null(c->pd);
	c->d = pcap_dump_open(c->pd, c->path);
	cr_assert_not_null(c->d, "%s", pcap_geterr(c->pd));
}

static void cap_close(struct cap *c)
{
	pcap_dump_close(c->d);
	pcap_close(c->pd);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* One frame: link header, IP, TCP and len bytes of which only keep are captured. */
static void cap_tcp(struct cap *c, const struct flow *f, int d, uint8_t flags, uint32_t seq,
		    const void *data, size_t len, size_t keep)
{
	static uint8_t frame[70000];
	size_t at = 0, ip_len = (f->family == AF_INET ? 20 : 40) + 20 + len;
	uint16_t ethertype = f->family == AF_INET ? 0x0800 : 0x86dd;
	struct pcap_pkthdr h;

	memset(frame, 0, 128);
	switch (c->dlt) {
	case DLT_EN10MB:
		memcpy(frame, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
		at = 12;
		if (c->vlan) {
			put16(frame + at, 0x8100);
			put16(frame + at + 2, 42);
			at += 4;
		}
		put16(frame + at, ethertype);
		at += 2;
		break;
	case DLT_LINUX_SLL:
		put16(frame + 2, 1);
		put16(frame + 4, 6);
		put16(frame + 14, ethertype);
		at = 16;
		break;
	case DLT_LINUX_SLL2:
		put16(frame, ethertype);
		put32(frame + 4, 2);
		put16(frame + 8, 1);
		frame[11] = 6;
		at = 20;
		break;
	case DLT_RAW:
		break;
	default:
		cr_assert_fail("link type %d", c->dlt);
	}
	if (f->family == AF_INET) {
		frame[at] = 0x45;
		put16(frame + at + 2, ip_len);
		put16(frame + at + 6, 0x4000);
		frame[at + 8] = 64;
		frame[at + 9] = IPPROTO_TCP;
		memcpy(frame + at + 12, f->addr[d], 4);
		memcpy(frame + at + 16, f->addr[!d], 4);
		at += 20;
	} else {
		frame[at] = 0x60;
		put16(frame + at + 4, 20 + len);
		frame[at + 6] = IPPROTO_TCP;
		frame[at + 7] = 64;
		memcpy(frame + at + 8, f->addr[d], 16);
		memcpy(frame + at + 24, f->addr[!d], 16);
		at += 40;
	}
	memset(frame + at, 0, 20);
	put16(frame + at, f->port[d]);
	put16(frame + at + 2, f->port[!d]);
	put32(frame + at + 4, seq);
	frame[at + 12] = 5 << 4;
	frame[at + 13] = flags;
	put16(frame + at + 14, 65535);
	at += 20;
	if (len)
		memcpy(frame + at, data, len);
	c->frames++;
	h.ts.tv_sec = 1700000000 + c->frames / 1000;
	h.ts.tv_usec = c->frames % 1000 * 1000;
	h.len = at + len;
	h.caplen = at + (keep < len ? keep : len);
	pcap_dump((u_char *)c->d, &h, frame);
}

static void flow_init(struct flow *f, int family, const char *a, uint16_t pa, const char *b,
		      uint16_t pb)
{
	memset(f, 0, sizeof(*f));
	f->family = family;
	cr_assert_eq(inet_pton(family, a, f->addr[0]), 1);
	cr_assert_eq(inet_pton(family, b, f->addr[1]), 1);
	f->port[0] = pa;
	f->port[1] = pb;
	f->isn[0] = 0xfffffe00u;	/* the sequence space wraps within the first stream */
	f->isn[1] = 0x12345678u;
}

static void flow_open(struct cap *c, struct flow *f)
{
	cap_tcp(c, f, 0, F_SYN, f->isn[0], NULL, 0, 0);
	cap_tcp(c, f, 1, F_SYN | F_ACK, f->isn[1], NULL, 0, 0);
	cap_tcp(c, f, 0, F_ACK, f->isn[0] + 1, NULL, 0, 0);
}

/* Segment at stream offset off of direction d (retransmissions and reordering at will). */
static void flow_at(struct cap *c, struct flow *f, int d, uint32_t off, const void *p, size_t len)
{
	cap_tcp(c, f, d, F_ACK | F_PSH, f->isn[d] + 1 + off, p, len, len);
	if (off + len > f->off[d])
		f->off[d] = off + len;
}

static void flow_send(struct cap *c, struct flow *f, int d, const void *p, size_t len)
{
	flow_at(c, f, d, f->off[d], p, len);
}

static void flow_fin(struct cap *c, struct flow *f)
{
	cap_tcp(c, f, 0, F_FIN | F_ACK, f->isn[0] + 1 + f->off[0], NULL, 0, 0);
	cap_tcp(c, f, 1, F_FIN | F_ACK, f->isn[1] + 1 + f->off[1], NULL, 0, 0);
	cap_tcp(c, f, 0, F_ACK, f->isn[0] + 2 + f->off[0], NULL, 0, 0);
}

static void pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 8));
}

/* ------------------------------------------------- reassembly, in place */

#define MAX_CONNS 4

struct collected {
	int		n;
	struct {
		struct tcp_endpoint ep[2];
		uint8_t		data[2][16384];
		size_t		len[2];
		int		gaps[2];
		uint64_t	gap_off[2], gap_lost[2];
		int		closes;
		struct tcp_dir_info dir[2];
		uint64_t	starts[2][16];	/* offsets of chunks that begin a segment */
		int		nstarts[2];
	} c[MAX_CONNS];
};

static int col_open(void *ctx, struct tcp_conn *tc, uint64_t frame)
{
	struct collected *col = ctx;

	(void)frame;
	cr_assert_lt(col->n, MAX_CONNS);
	tc->user = &col->c[col->n];
	col->c[col->n].ep[0] = tc->ep[0];
	col->c[col->n].ep[1] = tc->ep[1];
	col->n++;
	return 0;
}

static int col_data(void *ctx, struct tcp_conn *tc, int dir, const uint8_t *p, size_t len,
		    bool seg_start, uint64_t frame)
{
	typeof(&((struct collected *)0)->c[0]) x = tc->user;

	(void)ctx;
	(void)frame;
	cr_assert_eq(x->gaps[dir], 0, "data after a gap");
	cr_assert_leq(x->len[dir] + len, sizeof(x->data[dir]));
	if (seg_start) {
		cr_assert_lt(x->nstarts[dir], 16);
		x->starts[dir][x->nstarts[dir]++] = x->len[dir];
	}
	memcpy(x->data[dir] + x->len[dir], p, len);
	x->len[dir] += len;
	return 0;
}

static int col_gap(void *ctx, struct tcp_conn *tc, int dir, uint64_t off, uint64_t lost,
		   uint64_t frame)
{
	typeof(&((struct collected *)0)->c[0]) x = tc->user;

	(void)ctx;
	(void)frame;
	x->gaps[dir]++;
	x->gap_off[dir] = off;
	x->gap_lost[dir] = lost;
	return 0;
}

static int col_close(void *ctx, struct tcp_conn *tc, uint64_t frame)
{
	typeof(&((struct collected *)0)->c[0]) x = tc->user;

	(void)ctx;
	(void)frame;
	x->closes++;
	x->dir[0] = tc->dir[0];
	x->dir[1] = tc->dir[1];
	return 0;
}

static const struct tcp_streams_ops col_ops = {
	.open = col_open, .data = col_data, .gap = col_gap, .close = col_close,
};

static struct collected *collect(struct cap *c, struct tcp_streams_stats *st)
{
	struct collected *col = calloc(1, sizeof(*col));
	char err[256];
	int ret;

	cr_assert_not_null(col);
	ret = tcp_streams_read(c->path, &col_ops, col, st, err, sizeof(err));
	unlink(c->path);
	cr_assert_eq(ret, 0, "tcp_streams_read: %d %s", ret, err);
	return col;
}

Test(tcp_streams, in_order_both_directions_every_link_type)
{
	static const struct { int dlt; bool vlan; int family; } kinds[] = {
		{ DLT_EN10MB, false, AF_INET }, { DLT_EN10MB, true, AF_INET6 },
		{ DLT_LINUX_SLL, false, AF_INET }, { DLT_LINUX_SLL2, false, AF_INET6 },
		{ DLT_RAW, false, AF_INET }, { DLT_RAW, false, AF_INET6 },
	};
	uint8_t a[3000], b[1000];

	pattern(a, sizeof(a), 1);
	pattern(b, sizeof(b), 2);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct tcp_streams_stats st;
		struct collected *col;
		struct cap c;
		struct flow f;

		cap_open(&c, kinds[k].dlt, kinds[k].vlan);
		if (kinds[k].family == AF_INET)
			flow_init(&f, AF_INET, "192.0.2.1", 40000, "192.0.2.2", 7174);
		else
			flow_init(&f, AF_INET6, "2001:db8::1", 40000, "2001:db8::2", 7174);
		flow_open(&c, &f);
		flow_send(&c, &f, 0, a, 1000);
		flow_send(&c, &f, 1, b, 1000);
		flow_send(&c, &f, 0, a + 1000, 1000);
		flow_send(&c, &f, 0, a + 2000, 1000);
		flow_fin(&c, &f);
		cap_close(&c);

		col = collect(&c, &st);
		cr_assert_eq(col->n, 1, "kind %zu", k);
		cr_assert_eq(st.frames, 10);
		cr_assert_eq(col->c[0].ep[0].port, 40000, "the SYN's sender is endpoint 0");
		cr_assert_eq(col->c[0].ep[0].family, kinds[k].family);
		cr_assert_eq(col->c[0].len[0], sizeof(a), "kind %zu", k);
		cr_assert_arr_eq(col->c[0].data[0], a, sizeof(a));
		cr_assert_eq(col->c[0].len[1], sizeof(b));
		cr_assert_arr_eq(col->c[0].data[1], b, sizeof(b));
		cr_assert_eq(col->c[0].gaps[0] + col->c[0].gaps[1], 0);
		cr_assert_eq(col->c[0].closes, 1);
		cr_assert(col->c[0].dir[0].fin && col->c[0].dir[1].fin);
		free(col);
	}
}

/* Each byte comes from the first copy captured: so do the segment starts. */
Test(tcp_streams, retransmitted_and_reordered_segments_delivered_once)
{
	static const uint64_t starts[] = { 0, 100, 300, 450, 600 };
	struct tcp_streams_stats st;
	struct collected *col;
	uint8_t a[1200];
	struct cap c;
	struct flow f;

	pattern(a, sizeof(a), 3);
	cap_open(&c, DLT_EN10MB, false);
	flow_init(&f, AF_INET, "192.0.2.1", 40001, "192.0.2.2", 7174);
	flow_open(&c, &f);
	flow_at(&c, &f, 0, 0, a, 100);
	flow_at(&c, &f, 0, 600, a + 600, 300);	/* ahead of a hole */
	flow_at(&c, &f, 0, 0, a, 100);		/* plain retransmission */
	flow_at(&c, &f, 0, 450, a + 450, 300);	/* held before it; 600..749 came first above */
	flow_at(&c, &f, 0, 850, a + 850, 150);	/* 900..999 first here, in mid-segment... */
	flow_at(&c, &f, 0, 300, a + 300, 200);	/* 450..499 held already */
	flow_at(&c, &f, 0, 100, a + 100, 300);	/* fills the hole; 300..399 held already */
	flow_at(&c, &f, 0, 900, a + 900, 100);	/* ...so this retransmission starts nothing */
	flow_at(&c, &f, 0, 950, a + 950, 250);	/* new from 1000, in mid-segment */
	flow_at(&c, &f, 0, 1000, a + 1000, 100);	/* all duplicate */
	flow_fin(&c, &f);
	cap_close(&c);

	col = collect(&c, &st);
	cr_assert_eq(col->n, 1);
	cr_assert_eq(col->c[0].len[0], sizeof(a));
	cr_assert_arr_eq(col->c[0].data[0], a, sizeof(a));
	cr_assert_eq(col->c[0].gaps[0], 0);
	cr_assert_eq(col->c[0].dir[0].retrans, 100 + 150 + 50 + 50 + 100 + 100 + 50 + 100);
	cr_assert_eq(col->c[0].dir[0].delivered, sizeof(a));
	cr_assert_eq(col->c[0].nstarts[0], 5);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(col->c[0].starts[0][i], starts[i], "start %d: %lu, want %lu", i,
			     (unsigned long)col->c[0].starts[0][i], (unsigned long)starts[i]);
	free(col);
}

Test(tcp_streams, missing_bytes_are_a_gap_not_a_guess)
{
	struct tcp_streams_stats st;
	struct collected *col;
	uint8_t a[900], b[100];
	struct cap c;
	struct flow f;

	pattern(a, sizeof(a), 4);
	pattern(b, sizeof(b), 5);
	cap_open(&c, DLT_EN10MB, false);
	flow_init(&f, AF_INET, "192.0.2.1", 40002, "192.0.2.2", 7174);
	flow_open(&c, &f);
	flow_at(&c, &f, 0, 0, a, 300);
	/* bytes 300..599 never reach the capture */
	flow_at(&c, &f, 0, 600, a + 600, 300);
	flow_send(&c, &f, 1, b, sizeof(b));
	cap_close(&c);

	col = collect(&c, &st);
	cr_assert_eq(col->n, 1);
	cr_assert_eq(col->c[0].len[0], 300, "nothing past the hole");
	cr_assert_arr_eq(col->c[0].data[0], a, 300);
	cr_assert_eq(col->c[0].gaps[0], 1);
	cr_assert_eq(col->c[0].gap_off[0], 300);
	cr_assert_eq(col->c[0].gap_lost[0], 300);
	cr_assert(col->c[0].dir[0].gap);
	cr_assert_eq(col->c[0].gaps[1], 0, "the other direction is whole");
	cr_assert_eq(col->c[0].len[1], sizeof(b));
	cr_assert_eq(col->c[0].closes, 1, "closed at the end of the file");
	free(col);
}

Test(tcp_streams, frame_cut_by_snaplen_is_a_gap)
{
	struct tcp_streams_stats st;
	struct collected *col;
	uint8_t a[600];
	struct cap c;
	struct flow f;

	pattern(a, sizeof(a), 6);
	cap_open(&c, DLT_LINUX_SLL, false);
	flow_init(&f, AF_INET, "192.0.2.1", 40003, "192.0.2.2", 7174);
	flow_open(&c, &f);
	flow_send(&c, &f, 0, a, 200);
	cap_tcp(&c, &f, 0, F_ACK, f.isn[0] + 1 + 200, a + 200, 400, 150);
	cap_close(&c);

	col = collect(&c, &st);
	cr_assert_eq(st.truncated, 1);
	cr_assert_eq(col->c[0].len[0], 350, "the captured part is good");
	cr_assert_arr_eq(col->c[0].data[0], a, 350);
	cr_assert_eq(col->c[0].gaps[0], 1);
	cr_assert_eq(col->c[0].gap_off[0], 350);
	cr_assert_eq(col->c[0].gap_lost[0], 250);
	free(col);
}

Test(tcp_streams, new_syn_on_same_ports_is_a_new_connection)
{
	struct tcp_streams_stats st;
	struct collected *col;
	struct cap c;
	struct flow f;

	cap_open(&c, DLT_EN10MB, false);
	flow_init(&f, AF_INET, "192.0.2.1", 40004, "192.0.2.2", 7174);
	flow_open(&c, &f);
	flow_send(&c, &f, 0, "first", 5);
	cap_tcp(&c, &f, 1, F_RST | F_ACK, f.isn[1] + 1, NULL, 0, 0);
	f.isn[0] += 100000;
	f.isn[1] += 100000;
	f.off[0] = f.off[1] = 0;
	flow_open(&c, &f);
	cap_tcp(&c, &f, 0, F_SYN, f.isn[0], NULL, 0, 0);	/* retransmitted SYN: same connection */
	flow_send(&c, &f, 0, "second", 6);
	cap_close(&c);

	col = collect(&c, &st);
	cr_assert_eq(col->n, 2);
	cr_assert_eq(col->c[0].len[0], 5);
	cr_assert(col->c[0].dir[1].rst);
	cr_assert_eq(col->c[1].len[0], 6);
	cr_assert_arr_eq(col->c[1].data[0], "second", 6);
	cr_assert_eq(col->c[0].closes + col->c[1].closes, 2);
	free(col);
}

Test(tcp_streams, capture_without_handshake_starts_at_first_byte)
{
	struct tcp_streams_stats st;
	struct collected *col;
	struct cap c;
	struct flow f;

	cap_open(&c, DLT_RAW, false);
	flow_init(&f, AF_INET, "192.0.2.1", 40005, "192.0.2.2", 7174);
	f.off[1] = 5000;
	flow_send(&c, &f, 1, "from the server", 15);	/* the server's packet comes first */
	flow_send(&c, &f, 0, "hello", 5);
	cap_close(&c);

	col = collect(&c, &st);
	cr_assert_eq(col->n, 1);
	cr_assert_eq(col->c[0].ep[0].port, 7174, "no SYN: the first sender is endpoint 0");
	cr_assert_eq(col->c[0].len[0], 15);
	cr_assert_eq(col->c[0].len[1], 5);
	free(col);
}

Test(tcp_streams, errors_name_the_reason)
{
	char err[256] = "";
	char path[] = "/tmp/iwx-cli-test-XXXXXX";
	int fd;

	cr_assert_eq(tcp_streams_read("/nonexistent/x.pcap", NULL, NULL, NULL, err, sizeof(err)),
		     -ENOENT);
	cr_assert_str_eq(err, strerror(ENOENT));
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "not a capture at all", 20), 20);
	close(fd);
	cr_assert_lt(tcp_streams_read(path, NULL, NULL, NULL, err, sizeof(err)), 0);
	cr_assert_neq(err[0], '\0');
	unlink(path);
}

/* ------------------------------------------------------ the iwx binary */

/* Run cmd; its output (stdout, and stderr when the command says 2>&1) and exit status. */
static char *run(const char *cmd, int *status)
{
	size_t len = 0, cap = 65536;
	char *out = malloc(cap);
	FILE *p;
	size_t n;
	int st;

	cr_assert_not_null(out);
	cr_assert_eq(access(IWX_BIN, X_OK), 0, IWX_BIN " is missing: build it first (make)");
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			out = realloc(out, cap);
			cr_assert_not_null(out);
		}
	}
	out[len] = '\0';
	st = pclose(p);
	cr_assert(WIFEXITED(st), "%s did not exit", cmd);
	*status = WEXITSTATUS(st);
	return out;
}

static char *decode(const char *opts, const char *path, int *status)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), IWX_BIN " decode %s '%s' 2>&1", opts, path);
	return run(cmd, status);
}

static int count_lines(const char *out, const char *needle)
{
	int n = 0;

	for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);

		if (memmem(l, len, needle, strlen(needle)))
			n++;
	}
	return n;
}

static void need_capture(const char *path)
{
	if (access(path, R_OK))
		cr_skip_test("%s not present", path);
}

static void assert_has(const char *out, const char *s)
{
	cr_assert_not_null(strstr(out, s), "missing \"%s\" in:\n%s", s, out);
}

Test(cli_decode, siw_rping_with_crc)
{
	const char *path = CAPTURES "siw-rping-siw-crc.pcapng";
	int st;
	char *out;

	need_capture(path);
	out = decode("", path, &st);
	cr_assert_eq(st, 0, "%s", out);
	assert_has(out, "connection 1: 192.0.2.3:42832 > 192.0.2.2:7174");
	assert_has(out, "13  192.0.2.3:42832 > 192.0.2.2:7174  MPA Request        rev 2 M 0 C 1 R 0 H 1 "
		   "IRD 1 ORD 1 P2P 0 RTR none, private data 0 bytes");
	assert_has(out, "15  192.0.2.2:7174 > 192.0.2.3:42832  MPA Reply          rev 2 M 0 C 1 R 0 H 1 "
		   "IRD 1 ORD 1");
	assert_has(out, "mode: rev 2, CRC on, markers off");
	assert_has(out, "17  192.0.2.3:42832 > 192.0.2.2:7174  Send               QN 0 MSN 1 MO 0 len 16 L");
	assert_has(out, "19  192.0.2.2:7174 > 192.0.2.3:42832  RDMA Read Request  "
		   "sink 0x7c108b00@0x55bf4ce09130 src 0x3ef3d100@0x564701ab8450 size 64 MSN 1");
	assert_has(out, "20  192.0.2.3:42832 > 192.0.2.2:7174  RDMA Read Response "
		   "STag 0x7c108b00 TO 0x55bf4ce09130 len 64 L");
	assert_has(out, "23  192.0.2.2:7174 > 192.0.2.3:42832  RDMA Write         "
		   "STag 0x447a7c00 TO 0x564701ab5130 len 64 L");
	cr_assert_eq(count_lines(out, "  Send  "), 8);
	cr_assert_eq(count_lines(out, "RDMA Read Request  sink"), 2);
	cr_assert_eq(count_lines(out, "RDMA Read Response STag"), 2);
	cr_assert_eq(count_lines(out, "RDMA Write         STag"), 2);
	/* siw sends each FPDU in a segment of its own */
	assert_has(out, "summary 1: 192.0.2.3:42832 > 192.0.2.2:7174 iWARP rev 2, CRC on, markers off; "
		   "initiator 6 FPDUs, 328 bytes (RDMA Read Response 2, Send 4), "
		   "6 of 6 FPDUs at a segment start (100.0%); "
		   "responder 8 FPDUs, 432 bytes (RDMA Write 2, RDMA Read Request 2, Send 4), "
		   "8 of 8 FPDUs at a segment start (100.0%); no errors");
	assert_has(out, "total: 37 frames, 1 TCP connection (1 iWARP, 0 not iWARP), 0 with errors");
	cr_assert_null(strstr(out, "  error: "));
	free(out);
}

Test(cli_decode, siw_rping_without_crc_quiet_and_json)
{
	const char *path = CAPTURES "siw-rping-siw.pcapng";
	int st, n = 0;
	char *out, *l;

	need_capture(path);
	out = decode("-q", path, &st);
	cr_assert_eq(st, 0, "%s", out);
	cr_assert_str_eq(out, "summary 1: 192.0.2.3:33787 > 192.0.2.2:7174 iWARP rev 2, CRC off, markers off; "
			 "initiator 9 FPDUs, 492 bytes (RDMA Read Response 3, Send 6), "
			 "9 of 9 FPDUs at a segment start (100.0%); "
			 "responder 12 FPDUs, 648 bytes (RDMA Write 3, RDMA Read Request 3, Send 6), "
			 "12 of 12 FPDUs at a segment start (100.0%); no errors\n"
			 "total: 44 frames, 1 TCP connection (1 iWARP, 0 not iWARP), 0 with errors\n");
	free(out);

	out = decode("--json --hex", path, &st);
	cr_assert_eq(st, 0, "%s", out);
	for (l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		cr_assert_eq(l[0], '{', "%s", l);
		cr_assert_eq(l[strlen(l) - 1], '}', "%s", l);
		n += !!strstr(l, "\"type\":\"segment\"");
	}
	cr_assert_eq(n, 21);
	free(out);
	out = decode("--json -x", path, &st);
	assert_has(out, "{\"type\":\"segment\",\"conn\":1,\"frame\":19,\"src\":\"192.0.2.3:33787\","
		   "\"dst\":\"192.0.2.2:7174\",\"opcode\":\"RDMA Read Response\",\"op\":2,\"tagged\":true,"
		   "\"last\":true,\"stag\":\"0x838c6d00\",\"to\":\"0x5627ad51c130\",\"len\":64,"
		   "\"payload\":\"72646d612d70696e672d303a20414243");
	free(out);
}

Test(cli_decode, siw_host_probe_setups)
{
	const char *path = CAPTURES "host-probe-siw-responder.pcapng";
	int st;
	char *out;

	need_capture(path);
	out = decode("", path, &st);
	cr_assert_eq(st, 0, "%s", out);
	assert_has(out, "summary 1: 192.0.2.1:42880 > 192.0.2.2:7174 not iWARP");
	assert_has(out, "MPA Request        rev 1 M 0 C 1 R 0 H 0, private data 0 bytes");
	assert_has(out, "MPA Reply          rev 2 M 0 C 0 R 1 H 1 IRD 0 ORD 0");
	assert_has(out, "rejected by the responder");
	assert_has(out, "IRD 1 ORD 1 P2P 1 RTR write");
	assert_has(out, "private data 4 bytes 41424344");
	assert_has(out, "total: 73 frames, 7 TCP connections (6 iWARP, 1 not iWARP), 0 with errors");
	free(out);
}

/* Both byte streams of an iWARP connection, built with the library. */
struct exchange {
	uint8_t		s[2][16384];
	size_t		len[2];
	size_t		setup[2];	/* length of the MPA frame at the front */
	size_t		fpdu_at[2][16];	/* where each FPDU starts */
	int		nfpdu[2];
};

static void add_fpdu(struct exchange *x, int d, struct iwx_mpa_tx *tx, const uint8_t *hdr,
		     size_t hlen, const void *p, size_t len)
{
	ssize_t n;

	x->fpdu_at[d][x->nfpdu[d]++] = x->len[d];
	n = iwx_mpa_fpdu_build(tx, x->s[d] + x->len[d], sizeof(x->s[d]) - x->len[d], hdr, hlen, p, len);
	cr_assert_gt(n, 0);
	x->len[d] += n;
}

/* An untagged message of direction d in one segment. */
static void add_untagged(struct exchange *x, int d, struct iwx_mpa_tx *tx, uint8_t opcode,
			 uint32_t msn, const void *body, uint32_t len)
{
	struct iwx_ddp_msg msg = { .opcode = opcode, .msn = msn, .len = len };
	uint8_t hdr[IWX_DDP_UNTAGGED_HDR_LEN];

	add_fpdu(x, d, tx, hdr, iwx_ddp_hdr_encode(hdr, &msg, 0, true), body, len);
}

/* x holding the MPA Request and Reply; tx: the framing each side then sends with. */
static void start_exchange(struct exchange *x, const struct iwx_mpa_rr_params *req,
			   const struct iwx_mpa_rr_params *rep, struct iwx_mpa_tx tx[2])
{
	struct iwx_mpa_mode mi = iwx_mpa_mode_of(req, rep), mr = iwx_mpa_mode_of(rep, req);

	memset(x, 0, sizeof(*x));
	for (int d = 0; d < 2; d++) {
		ssize_t n = iwx_mpa_rr_encode(x->s[d], sizeof(x->s[d]), d ? rep : req);

		cr_assert_gt(n, 0);
		x->len[d] = x->setup[d] = n;
	}
	iwx_mpa_tx_init(&tx[0], &mi);
	iwx_mpa_tx_init(&tx[1], &mr);
}

/*
 * Initiator: Send "hello", a 2000-byte RDMA Write in 4 segments, a Read Request.
 * Responder: the Read Response, a Send, a Terminate about the initiator's Send.
 */
static void build_exchange(struct exchange *x, uint8_t rev, bool crc, bool m_init, bool m_resp)
{
	static const uint8_t pd[] = "private";
	struct iwx_mpa_rr_params req = { .rev = rev, .crc = crc, .markers = m_init,
					  .enhanced = rev == 2, .ird = 4, .ord = 4,
					  .pd = pd, .pd_len = 7 };
	struct iwx_mpa_rr_params rep = req;
	struct iwx_mpa_tx tx[2];
	struct iwx_read_req rr = { .sink_stag = 0xabc00, .sink_to = 0x7000, .size = 100,
				   .src_stag = 0xdef00, .src_to = 0x9000 };
	uint8_t hdr[IWX_DDP_UNTAGGED_HDR_LEN], body[IWX_TERM_MAX_LEN], data[2000];
	struct iwx_ddp_msg msg;
	struct iwx_ddp_segmenter sg;
	struct iwx_ddp_seg about;
	struct iwx_term_cause cause;
	struct iwx_term t;
	uint32_t off, len;
	size_t hl;

	pattern(data, sizeof(data), 7);
	rep.reply = true;
	rep.markers = m_resp;
	rep.crc = false;	/* CRC is on if either side asks */
	start_exchange(x, &req, &rep, tx);

	msg = (struct iwx_ddp_msg){ .opcode = IWX_OP_SEND, .msn = 1, .len = 5 };
	hl = iwx_ddp_hdr_encode(hdr, &msg, 0, true);
	add_fpdu(x, 0, &tx[0], hdr, hl, "hello", 5);
	/* keep the Send's header for the Terminate below */
	cr_assert_eq(iwx_ddp_decode(hdr, hl + 5, &about, &cause), 0);

	msg = (struct iwx_ddp_msg){ .opcode = IWX_OP_WRITE, .stag = 0x1234, .to = 0x1000,
				    .len = sizeof(data) };
	cr_assert_eq(iwx_ddp_segmenter_init(&sg, &msg, 600), 0);
	while ((hl = iwx_ddp_segmenter_next(&sg, hdr, &off, &len)))
		add_fpdu(x, 0, &tx[0], hdr, hl, data + off, len);

	iwx_read_req_encode(body, &rr);
	add_untagged(x, 0, &tx[0], IWX_OP_READ_REQ, 1, body, IWX_RDMAP_READ_REQ_LEN);

	msg = (struct iwx_ddp_msg){ .opcode = IWX_OP_READ_RESP, .stag = rr.sink_stag,
				    .to = rr.sink_to, .len = 100 };
	hl = iwx_ddp_hdr_encode(hdr, &msg, 0, true);
	add_fpdu(x, 1, &tx[1], hdr, hl, data, 100);

	add_untagged(x, 1, &tx[1], IWX_OP_SEND_SE, 1, "hello again", 11);

	iwx_term_init(&t, IWX_CAUSE_DDP_U(IWX_DDP_U_MSN_NO_BUF), &about, NULL);
	add_untagged(x, 1, &tx[1], IWX_OP_TERMINATE, 1, body, iwx_term_encode(body, &t));
}

/*
 * RFC 7306's messages, iwx's MPA bit in both frames when ext. Initiator: a Fetch-Add
 * and a Compare-and-Swap, a Write with Immediate Data, Immediate Data with SE, then
 * two malformed: an Atomic Request of AOpCode 1 (reserved), Immediate Data of 4
 * bytes. Responder: the two Atomic Responses.
 */
static void build_rfc7306(struct exchange *x, bool ext)
{
	static const uint8_t imm[2][IWX_RDMAP_IMM_LEN] = {
		{ 1, 2, 3, 4, 5, 6, 7, 8 }, { 0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87 },
	};
	struct iwx_mpa_rr_params req = { .rev = IWX_MPA_REV2, .crc = true, .enhanced = true,
					  .ird = 4, .ord = 4, .rdmap_ext = ext };
	struct iwx_mpa_rr_params rep = req;
	struct iwx_atomic_req fa = { .aop = IWX_AOP_FETCH_ADD, .req_id = 7, .stag = 0x5500,
				     .to = 0x8000, .add_swap = 5, .compare_mask = ~0ull };
	struct iwx_atomic_req cs = { .aop = IWX_AOP_CMP_SWAP, .req_id = 8, .stag = 0x5500,
				     .to = 0x8008, .add_swap = 0x2a, .add_swap_mask = ~0ull,
				     .compare = 0xc0ffee, .compare_mask = 0xffffff };
	struct iwx_atomic_req bad = { .aop = 1, .req_id = 9, .stag = 0x5500, .to = 0x8010 };
	struct iwx_atomic_resp r7 = { .req_id = 7, .orig = 0x10 };
	struct iwx_atomic_resp r8 = { .req_id = 8, .orig = 0x1234567890abcdefull };
	uint8_t body[IWX_RDMAP_ATOMIC_REQ_LEN], hdr[IWX_DDP_TAGGED_HDR_LEN];
	struct iwx_ddp_msg write = { .opcode = IWX_OP_WRITE, .stag = 0x6600, .to = 0x2000,
				     .len = 16 };
	struct iwx_mpa_tx tx[2];

	rep.reply = true;
	start_exchange(x, &req, &rep, tx);
	iwx_atomic_req_encode(body, &fa);
	add_untagged(x, 0, &tx[0], IWX_OP_ATOMIC_REQ, 1, body, IWX_RDMAP_ATOMIC_REQ_LEN);
	iwx_atomic_req_encode(body, &cs);
	add_untagged(x, 0, &tx[0], IWX_OP_ATOMIC_REQ, 2, body, IWX_RDMAP_ATOMIC_REQ_LEN);
	add_fpdu(x, 0, &tx[0], hdr, iwx_ddp_hdr_encode(hdr, &write, 0, true), "sixteen bytes!!!",
		 write.len);
	add_untagged(x, 0, &tx[0], IWX_OP_IMM, 1, imm[0], IWX_RDMAP_IMM_LEN);
	add_untagged(x, 0, &tx[0], IWX_OP_IMM_SE, 2, imm[1], IWX_RDMAP_IMM_LEN);
	iwx_atomic_req_encode(body, &bad);
	add_untagged(x, 0, &tx[0], IWX_OP_ATOMIC_REQ, 3, body, IWX_RDMAP_ATOMIC_REQ_LEN);
	add_untagged(x, 0, &tx[0], IWX_OP_IMM, 3, imm[0], 4);

	iwx_atomic_resp_encode(body, &r7);
	add_untagged(x, 1, &tx[1], IWX_OP_ATOMIC_RESP, 1, body, IWX_RDMAP_ATOMIC_RESP_LEN);
	iwx_atomic_resp_encode(body, &r8);
	add_untagged(x, 1, &tx[1], IWX_OP_ATOMIC_RESP, 2, body, IWX_RDMAP_ATOMIC_RESP_LEN);
}

enum damage { NONE, REORDER, GAP };

/*
 * Write x as one connection: the two frames, then each stream in TCP segments of
 * seg_len bytes (not aligned to FPDUs), alternating directions. REORDER sends the
 * initiator's second segment after its third and repeats its first; GAP drops the
 * initiator's third segment.
 */
static void write_exchange(struct cap *c, struct flow *f, const struct exchange *x, size_t seg_len,
			   enum damage dmg)
{
	size_t at[2] = { 0, 0 };

	flow_open(c, f);
	flow_send(c, f, 0, x->s[0], x->setup[0]);
	flow_send(c, f, 1, x->s[1], x->setup[1]);
	at[0] = x->setup[0];
	at[1] = x->setup[1];
	for (int k = 0; at[0] < x->len[0] || at[1] < x->len[1]; k++) {
		for (int d = 0; d < 2; d++) {
			size_t n = x->len[d] - at[d] < seg_len ? x->len[d] - at[d] : seg_len;

			if (!n)
				continue;
			if (d == 0 && dmg == REORDER && k == 1) {
				/* held back: sent after the next one */
			} else if (d == 0 && dmg == GAP && k == 2) {
				/* lost before the capture point */
			} else {
				flow_at(c, f, d, at[d], x->s[d] + at[d], n);
			}
			if (d == 0 && dmg == REORDER && k == 2) {
				flow_at(c, f, d, at[d] - seg_len, x->s[d] + at[d] - seg_len, seg_len);
				flow_at(c, f, d, x->setup[0], x->s[d] + x->setup[0], seg_len);
			}
			at[d] += n;
		}
	}
	flow_fin(c, f);
}

/* x as one IPv4 connection 192.0.2.1:port > 192.0.2.2:7174 in a new capture of link type dlt. */
static void capture_v4(struct cap *c, int dlt, uint16_t port, const struct exchange *x,
		       size_t seg_len, enum damage dmg)
{
	struct flow f;

	cap_open(c, dlt, false);
	flow_init(&f, AF_INET, "192.0.2.1", port, "192.0.2.2", 7174);
	write_exchange(c, &f, x, seg_len, dmg);
	cap_close(c);
}

static void assert_exchange_decoded(const char *out, const char *i2r, const char *r2i)
{
	char line[256];

	snprintf(line, sizeof(line), "%s  MPA Request        ", i2r);
	assert_has(out, line);
	assert_has(out, "private data 7 bytes 70726976617465");
	snprintf(line, sizeof(line), "%s  Send               QN 0 MSN 1 MO 0 len 5 L", i2r);
	assert_has(out, line);
	snprintf(line, sizeof(line), "%s  RDMA Write         STag 0x00001234 TO 0x1000 len 586\n", i2r);
	assert_has(out, line);
	assert_has(out, "RDMA Write         STag 0x00001234 TO 0x124a len 586\n");
	assert_has(out, "RDMA Write         STag 0x00001234 TO 0x1494 len 586\n");
	assert_has(out, "RDMA Write         STag 0x00001234 TO 0x16de len 242 L\n");
	snprintf(line, sizeof(line), "%s  RDMA Read Request  sink 0x000abc00@0x7000 "
		 "src 0x000def00@0x9000 size 100 MSN 1", i2r);
	assert_has(out, line);
	snprintf(line, sizeof(line), "%s  RDMA Read Response STag 0x000abc00 TO 0x7000 len 100 L", r2i);
	assert_has(out, line);
	assert_has(out, "Send with SE       QN 0 MSN 1 MO 0 len 11 L");
	snprintf(line, sizeof(line), "%s  Terminate          DDP untagged buffer error: invalid MSN, "
		 "no buffer available (M D), about Send QN 0 MSN 1 MO 0 len 5 L", r2i);
	assert_has(out, line);
}

/* Direction d of x: its MPA frame, then its FPDUs in segments that begin at the n offsets of cut. */
static void send_cut(struct cap *c, struct flow *f, const struct exchange *x, int d,
		     const size_t *cut, int n)
{
	flow_at(c, f, d, 0, x->s[d], x->setup[d]);
	for (int k = 0; k < n; k++) {
		size_t end = k + 1 < n ? cut[k + 1] : x->len[d];

		flow_at(c, f, d, cut[k], x->s[d] + cut[k], end - cut[k]);
	}
}

/*
 * x as one IPv4 connection 192.0.2.1:port > 192.0.2.2:7174 in a new capture, its
 * streams cut as send_cut does: the initiator's first, so that the decoder holds
 * its FPDUs until the Reply is in.
 */
static void capture_cut(struct cap *c, uint16_t port, const struct exchange *x, const size_t *cut0,
			int n0, const size_t *cut1, int n1)
{
	struct flow f;

	cap_open(c, DLT_EN10MB, false);
	flow_init(&f, AF_INET, "192.0.2.1", port, "192.0.2.2", 7174);
	flow_open(c, &f);
	send_cut(c, &f, x, 0, cut0, n0);
	send_cut(c, &f, x, 1, cut1, n1);
	flow_fin(c, &f);
	cap_close(c);
}

/*
 * Decoding path, the initiator's FPDUs of x began a segment n0 times, the
 * responder's n1 times: so say the summary (pct0, pct1) and the JSON, which also says
 * how many lay whole within one segment (w0, w1). Removes path.
 */
static void assert_at_segment_start(const char *path, int n0, const char *pct0, int n1,
				    const char *pct1, int w0, int w1)
{
	char want[256];
	char *out;
	int st;

	out = decode("-q", path, &st);
	cr_assert_eq(st, 0, "%s", out);
	snprintf(want, sizeof(want), "(RDMA Write 4, RDMA Read Request 1, Send 1), %d of 6 FPDUs at a "
		 "segment start (%s); responder 3 FPDUs, ", n0, pct0);
	assert_has(out, want);
	snprintf(want, sizeof(want), "(RDMA Read Response 1, Send with SE 1, Terminate 1), %d of 3 "
		 "FPDUs at a segment start (%s); no errors\n", n1, pct1);
	assert_has(out, want);
	free(out);

	out = decode("--json", path, &st);
	cr_assert_eq(st, 0, "%s", out);
	snprintf(want, sizeof(want), "\"initiator\":{\"fpdus\":6,\"fpdus_at_segment_start\":%d,"
		 "\"bytes\":", n0);
	assert_has(out, want);
	snprintf(want, sizeof(want), "\"responder\":{\"fpdus\":3,\"fpdus_at_segment_start\":%d,"
		 "\"bytes\":", n1);
	assert_has(out, want);
	for (int d = 0; d < 2; d++) {
		snprintf(want, sizeof(want), "\"%s\":{\"fpdus\":%d,", d ? "responder" : "initiator",
			 d ? 3 : 6);
		char *side = strstr(out, want), *whole = side ? strstr(side, "\"fpdus_whole\":") : NULL;

		cr_assert_not_null(whole, "%s", out);
		cr_assert_eq(atoi(whole + strlen("\"fpdus_whole\":")), d ? w1 : w0, "%s", out);
	}
	free(out);
	unlink(path);
}

Test(cli_decode, markers_crc_reordering_and_a_plain_tcp_flow)
{
	struct exchange *x = malloc(sizeof(*x));
	struct cap c;
	struct flow f, g;
	int st;
	char *out;

	cr_assert_not_null(x);
	build_exchange(x, IWX_MPA_REV1, true, true, true);
	cap_open(&c, DLT_EN10MB, true);
	flow_init(&g, AF_INET, "198.51.100.1", 50000, "198.51.100.2", 80);
	flow_open(&c, &g);
	flow_send(&c, &g, 0, "GET / HTTP/1.0\r\n\r\n", 18);
	flow_init(&f, AF_INET6, "2001:db8::1", 40010, "2001:db8::2", 7174);
	write_exchange(&c, &f, x, 700, REORDER);
	flow_fin(&c, &g);
	cap_close(&c);

	out = decode("", c.path, &st);
	cr_assert_eq(st, 0, "%s", out);
	assert_has(out, "connection 2: [2001:db8::1]:40010 > [2001:db8::2]:7174");
	assert_has(out, "MPA Request        rev 1 M 1 C 1 R 0 H 0, private data 7 bytes");
	assert_has(out, "MPA Reply          rev 1 M 1 C 0 R 0 H 0, private data 7 bytes");
	assert_has(out, "mode: rev 1, CRC on, markers on");
	assert_exchange_decoded(out, "[2001:db8::1]:40010 > [2001:db8::2]:7174",
				"[2001:db8::2]:7174 > [2001:db8::1]:40010");
	assert_has(out, "summary 1: 198.51.100.1:50000 > 198.51.100.2:80 not iWARP");
	/* 2122 bytes of initiator stream: markers at 0, 512, ... 2048 */
	assert_has(out, "summary 2: [2001:db8::1]:40010 > [2001:db8::2]:7174 iWARP rev 1, CRC on, markers on; "
		   "initiator 6 FPDUs, ");
	/* 700-byte segments: only the first FPDU of each side starts one */
	assert_has(out, " markers (RDMA Write 4, RDMA Read Request 1, Send 1), "
		   "1 of 6 FPDUs at a segment start (16.6%); responder 3 FPDUs, ");
	assert_has(out, "(RDMA Read Response 1, Send with SE 1, Terminate 1), "
		   "1 of 3 FPDUs at a segment start (33.3%); no errors");
	assert_has(out, "2 TCP connections (1 iWARP, 1 not iWARP), 0 with errors");
	cr_assert_null(strstr(out, "  error: "), "%s", out);
	free(out);
	unlink(c.path);
	free(x);
}

Test(cli_decode, markers_one_way_rev2)
{
	struct exchange *x = malloc(sizeof(*x));
	struct cap c;
	int st;
	char *out;

	cr_assert_not_null(x);
	build_exchange(x, IWX_MPA_REV2, false, false, true);
	capture_v4(&c, DLT_LINUX_SLL2, 40011, x, 333, NONE);

	out = decode("", c.path, &st);
	cr_assert_eq(st, 0, "%s", out);
	assert_has(out, "IRD 4 ORD 4 P2P 0 RTR none, private data 7 bytes 70726976617465");
	assert_has(out, "mode: rev 2, CRC off, markers initiator>responder on, responder>initiator off");
	assert_exchange_decoded(out, "192.0.2.1:40011 > 192.0.2.2:7174", "192.0.2.2:7174 > 192.0.2.1:40011");
	free(out);
	unlink(c.path);
	free(x);
}

Test(cli_decode, gap_in_a_stream_is_an_error)
{
	struct exchange *x = malloc(sizeof(*x));
	struct cap c;
	int st, n;
	char *out;

	cr_assert_not_null(x);
	build_exchange(x, IWX_MPA_REV2, true, false, false);
	capture_v4(&c, DLT_EN10MB, 40012, x, 500, GAP);

	out = decode("", c.path, &st);
	cr_assert_eq(st, 1, "%s", out);
	/* segment 2 (stream bytes 1000..1499 after the Request) never reached the capture */
	{
		char want[160];

		snprintf(want, sizeof(want), "192.0.2.1:40012 > 192.0.2.2:7174  error: 500 bytes missing "
			 "from the capture at TCP stream offset %zu; not decoded past them",
			 x->setup[0] + 1000);
		assert_has(out, want);
	}
	assert_has(out, "Send               QN 0 MSN 1 MO 0 len 5 L");
	assert_has(out, "STag 0x00001234 TO 0x1000 len 586\n");
	cr_assert_null(strstr(out, "RDMA Read Request  sink"), "nothing decoded past the gap");
	assert_has(out, "Terminate          DDP untagged buffer error");
	assert_has(out, "; error: 500 bytes missing from the capture");
	assert_has(out, "1 with errors");
	free(out);

	out = decode("--json", c.path, &st);
	cr_assert_eq(st, 1);
	{
		char want[160];

		snprintf(want, sizeof(want), "\"what\":\"bytes missing from the capture\","
			 "\"offset\":%zu,\"lost\":500}", x->setup[0] + 1000);
		assert_has(out, want);
	}
	free(out);

	out = decode("-q", c.path, &st);
	cr_assert_eq(st, 1);
	n = 0;
	for (const char *q = out; *q; q++)
		n += *q == '\n';
	cr_assert_eq(n, 2, "summary and total only:\n%s", out);
	free(out);
	unlink(c.path);
	free(x);
}

Test(cli_decode, bad_crc_names_the_terminate_cause)
{
	struct exchange *x = malloc(sizeof(*x));
	struct cap c;
	int st;
	char *out;

	cr_assert_not_null(x);
	build_exchange(x, IWX_MPA_REV2, true, false, false);
	x->s[1][x->fpdu_at[1][1] + 25] ^= 0x01;	/* inside the Send's payload */
	capture_v4(&c, DLT_RAW, 40013, x, 1400, NONE);

	out = decode("", c.path, &st);
	cr_assert_eq(st, 1, "%s", out);
	assert_has(out, "192.0.2.2:7174 > 192.0.2.1:40013  error: stream failed: LLP MPA error: "
		   "MPA CRC error (layer 2, type 0, code 0x02)");
	assert_has(out, "RDMA Read Response STag 0x000abc00");
	cr_assert_null(strstr(out, "Send with SE"), "the damaged segment is not shown");
	cr_assert_null(strstr(out, "Terminate  "), "nothing after it either");
	/* the parser counts the damaged FPDU too; only the good one is a segment */
	assert_has(out, "responder 2 FPDUs, ");
	assert_has(out, "(RDMA Read Response 1), 1 of 2 FPDUs at a segment start (50.0%); "
		   "error: stream failed");
	free(out);

	out = decode("--json", c.path, &st);
	cr_assert_eq(st, 1);
	assert_has(out, "{\"type\":\"error\",\"conn\":1,");
	assert_has(out, "\"what\":\"stream failed\",\"layer\":2,\"etype\":0,\"ecode\":2,"
		   "\"layer_name\":\"LLP\",\"etype_name\":\"MPA error\",\"ecode_name\":\"MPA CRC error\"}");
	assert_has(out, "\"error\":true,\"first_error\":\"stream failed: LLP MPA error: MPA CRC error");
	free(out);
	unlink(c.path);

	/* each FPDU in a segment of its own: the damaged one is whole, so it counts */
	capture_cut(&c, 40018, x, x->fpdu_at[0], x->nfpdu[0], x->fpdu_at[1], x->nfpdu[1]);
	out = decode("-q", c.path, &st);
	cr_assert_eq(st, 1, "%s", out);
	assert_has(out, "(RDMA Read Response 1), 2 of 2 FPDUs at a segment start (100.0%); error: ");
	free(out);
	out = decode("--json", c.path, &st);
	assert_has(out, "\"responder\":{\"fpdus\":2,\"fpdus_at_segment_start\":2,\"bytes\":");
	free(out);
	unlink(c.path);
	free(x);
}

Test(cli_decode, every_fpdu_in_a_segment_of_its_own)
{
	struct exchange *x = malloc(sizeof(*x));
	struct cap c;

	cr_assert_not_null(x);
	/* with markers, the one in front of the first FPDU's header is part of that FPDU */
	for (int markers = 0; markers < 2; markers++) {
		build_exchange(x, markers ? IWX_MPA_REV1 : IWX_MPA_REV2, markers, markers, markers);
		capture_cut(&c, 40015, x, x->fpdu_at[0], x->nfpdu[0], x->fpdu_at[1], x->nfpdu[1]);
		assert_at_segment_start(c.path, 6, "100.0%", 3, "100.0%", 6, 3);
	}
	free(x);
}

Test(cli_decode, two_fpdus_in_a_segment)
{
	struct exchange *x = malloc(sizeof(*x));
	size_t cut0[3], cut1[2];
	struct cap c;

	cr_assert_not_null(x);
	build_exchange(x, IWX_MPA_REV2, false, false, false);
	for (int k = 0; k < 3; k++)
		cut0[k] = x->fpdu_at[0][2 * k];
	for (int k = 0; k < 2; k++)
		cut1[k] = x->fpdu_at[1][2 * k];	/* two, then the third alone */
	capture_cut(&c, 40016, x, cut0, 3, cut1, 2);
	free(x);
	/* packed, two to a segment: each whole in one */
	assert_at_segment_start(c.path, 3, "50.0%", 2, "66.6%", 6, 3);
}

Test(cli_decode, fpdu_split_across_segments_moves_the_next_ones)
{
	struct exchange *x = malloc(sizeof(*x));
	size_t cut0[3], cut1[2];
	struct cap c;
	struct flow f;

	cr_assert_not_null(x);
	build_exchange(x, IWX_MPA_REV2, false, false, false);
	/* Send | Write 1 split: its rest, Writes 2 to 4 mid-segment | the Read Request */
	cut0[0] = x->fpdu_at[0][0];
	cut0[1] = x->fpdu_at[0][1] + 10;
	cut0[2] = x->fpdu_at[0][5];
	/* Read Response | the Send split: its rest, the Terminate mid-segment */
	cut1[0] = x->fpdu_at[1][0];
	cut1[1] = x->fpdu_at[1][1] + 7;
	cap_open(&c, DLT_EN10MB, false);
	flow_init(&f, AF_INET, "192.0.2.1", 40017, "192.0.2.2", 7174);
	flow_open(&c, &f);
	flow_send(&c, &f, 0, x->s[0], x->setup[0]);
	flow_at(&c, &f, 0, cut0[0], x->s[0] + cut0[0], cut0[1] - cut0[0]);
	/* the Read Request's segment overtakes the one before it, and comes again */
	flow_at(&c, &f, 0, cut0[2], x->s[0] + cut0[2], x->len[0] - cut0[2]);
	/* the middle one in two copies: up to Write 3, then from Write 2 (new from Write 3 on) */
	flow_at(&c, &f, 0, cut0[1], x->s[0] + cut0[1], x->fpdu_at[0][3] - cut0[1]);
	flow_at(&c, &f, 0, x->fpdu_at[0][2], x->s[0] + x->fpdu_at[0][2],
		cut0[2] - x->fpdu_at[0][2]);
	flow_at(&c, &f, 0, cut0[2], x->s[0] + cut0[2], x->len[0] - cut0[2]);
	send_cut(&c, &f, x, 1, cut1, 2);
	flow_fin(&c, &f);
	cap_close(&c);
	free(x);
	/* whole in one segment: all but the split Write 1, and the split Send */
	assert_at_segment_start(c.path, 2, "33.3%", 1, "33.3%", 5, 2);
}

Test(cli_decode, invalid_reply_is_an_mpa_error)
{
	struct exchange *x = malloc(sizeof(*x));
	struct cap c;
	int st;
	char *out;

	cr_assert_not_null(x);
	build_exchange(x, IWX_MPA_REV2, false, false, false);
	x->s[1][17] = 3;	/* revision 3 */
	capture_v4(&c, DLT_EN10MB, 40014, x, 1400, NONE);

	out = decode("", c.path, &st);
	cr_assert_eq(st, 1, "%s", out);
	assert_has(out, "MPA Request        rev 2");
	assert_has(out, "error: MPA Reply of unknown revision 3: LLP MPA error: invalid MPA request or "
		   "reply frame (layer 2, type 0, code 0x04)");
	free(out);
	unlink(c.path);
	free(x);
}

/* RFC 7306 decoded from the wire, whether or not the MPA frames agreed to it. */
Test(cli_decode, rfc7306_atomics_and_immediate_data)
{
	static const char *const lines[] = {
		"192.0.2.1:40019 > 192.0.2.2:7174  Atomic Request     FetchAdd id 7 remote "
		"0x00005500@0x8000 add 0x5 mask 0x0, compare 0x0 mask 0xffffffffffffffff MSN 1\n",
		"192.0.2.1:40019 > 192.0.2.2:7174  Atomic Request     CmpSwap id 8 remote "
		"0x00005500@0x8008 swap 0x2a mask 0xffffffffffffffff, compare 0xc0ffee mask 0xffffff "
		"MSN 2\n",
		"RDMA Write         STag 0x00006600 TO 0x2000 len 16 L\n",
		"Immediate Data     data 0x0102030405060708 MSN 1\n",
		"Immediate Data with SE data 0xf0e1d2c3b4a59687 MSN 2\n",
		"Atomic Request     QN 1 MSN 3 MO 0 len 52 L\n",
		"192.0.2.1:40019 > 192.0.2.2:7174  error: malformed Atomic Request: RDMAP remote "
		"operation error: unexpected opcode (layer 0, type 2, code 0x06), "
		"in Atomic Request QN 1 MSN 3 MO 0 len 52 L\n",
		"error: malformed Immediate Data: RDMAP remote operation error: unspecified error "
		"(layer 0, type 2, code 0xff), in Immediate Data QN 0 MSN 3 MO 0 len 4 L\n",
		"192.0.2.2:7174 > 192.0.2.1:40019  Atomic Response    id 7 original 0x10 MSN 1\n",
		"Atomic Response    id 8 original 0x1234567890abcdef MSN 2\n",
		"initiator 7 FPDUs, 356 bytes (RDMA Write 1, Immediate Data 2, Immediate Data with SE 1, "
		"Atomic Request 3), ",
		"responder 2 FPDUs, 72 bytes (Atomic Response 2), ",
		"; error: malformed Atomic Request: ",
	};
	static const char *const json[] = {
		"\"opcode\":\"Atomic Request\",\"op\":10,\"tagged\":false,\"last\":true,\"qn\":1,"
		"\"msn\":1,\"mo\":0,\"len\":52,\"atomic_op\":\"FetchAdd\",\"req_id\":7,"
		"\"remote_stag\":\"0x00005500\",\"remote_to\":\"0x8000\",\"add_data\":\"0x5\","
		"\"add_mask\":\"0x0\",\"compare_data\":\"0x0\",\"compare_mask\":\"0xffffffffffffffff\"}\n",
		"\"msn\":2,\"mo\":0,\"len\":52,\"atomic_op\":\"CmpSwap\",\"req_id\":8,"
		"\"remote_stag\":\"0x00005500\",\"remote_to\":\"0x8008\",\"swap_data\":\"0x2a\","
		"\"swap_mask\":\"0xffffffffffffffff\",\"compare_data\":\"0xc0ffee\","
		"\"compare_mask\":\"0xffffff\"}\n",
		"\"opcode\":\"Immediate Data\",\"op\":8,\"tagged\":false,\"last\":true,\"qn\":0,"
		"\"msn\":1,\"mo\":0,\"len\":8,\"imm_data\":\"0x0102030405060708\"}\n",
		"\"op\":9,\"tagged\":false,\"last\":true,\"qn\":0,\"msn\":2,\"mo\":0,\"len\":8,"
		"\"imm_data\":\"0xf0e1d2c3b4a59687\"}\n",
		"\"msn\":3,\"mo\":0,\"len\":52}\n",
		"\"what\":\"malformed Atomic Request\",\"layer\":0,\"etype\":2,\"ecode\":6,",
		"\"what\":\"malformed Immediate Data\",\"layer\":0,\"etype\":2,\"ecode\":255,",
		"\"opcode\":\"Atomic Response\",\"op\":11,\"tagged\":false,\"last\":true,\"qn\":3,"
		"\"msn\":1,\"mo\":0,\"len\":12,\"orig_req_id\":7,\"orig_value\":\"0x10\"}\n",
		"\"orig_req_id\":8,\"orig_value\":\"0x1234567890abcdef\"}\n",
		"\"segments\":{\"RDMA Write\":1,\"Immediate Data\":2,\"Immediate Data with SE\":1,"
		"\"Atomic Request\":3}}",
		"\"segments\":{\"Atomic Response\":2}}",
	};
	struct exchange *x = malloc(sizeof(*x));
	char want[160];
	struct cap c;
	int st;
	char *out;

	cr_assert_not_null(x);
	for (int ext = 0; ext < 2; ext++) {
		build_rfc7306(x, ext);
		capture_cut(&c, 40019, x, x->fpdu_at[0], x->nfpdu[0], x->fpdu_at[1], x->nfpdu[1]);

		out = decode("", c.path, &st);
		cr_assert_eq(st, 1, "the malformed ones are errors:\n%s", out);
		snprintf(want, sizeof(want), "MPA Request        rev 2 M 0 C 1 R 0 H 1%s IRD 4 ORD 4",
			 ext ? " RFC7306" : "");
		assert_has(out, want);
		snprintf(want, sizeof(want), "MPA Reply          rev 2 M 0 C 1 R 0 H 1%s IRD 4 ORD 4",
			 ext ? " RFC7306" : "");
		assert_has(out, want);
		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
			assert_has(out, lines[i]);
		free(out);

		out = decode("--json", c.path, &st);
		cr_assert_eq(st, 1, "%s", out);
		for (int reply = 0; reply < 2; reply++) {
			char *frame, *bit;

			snprintf(want, sizeof(want), "{\"type\":\"mpa_%s\",", reply ? "reply" : "request");
			frame = strstr(out, want);
			bit = frame ? strstr(frame, "\"h\":true,") : NULL;
			cr_assert_not_null(bit, "%s", out);
			snprintf(want, sizeof(want), "\"h\":true,\"rfc7306\":%s,", ext ? "true" : "false");
			cr_assert_eq(strncmp(bit, want, strlen(want)), 0, "%s", out);
		}
		for (size_t i = 0; i < sizeof(json) / sizeof(json[0]); i++)
			assert_has(out, json[i]);
		free(out);
		unlink(c.path);
	}
	free(x);
}

Test(cli_decode, usage_and_exit_statuses)
{
	static const struct {
		const char *args;
		int status;
		const char *says;	/* a substring of the output, or NULL */
	} cases[] = {
		{ " --version", 0, "iwx " },
		{ " --help", 0, "decode" },
		{ " decode -h", 0, "-j, --json" },
		{ " decode -j /nonexistent/x.pcap 2>&1", 1, "iwx decode: /nonexistent/x.pcap: " },
		{ " 2>&1", 2, NULL },
		{ " frobnicate 2>&1", 2, "unknown command 'frobnicate'" },
		{ " decode 2>&1", 2, NULL },
		{ " decode --frob x.pcap 2>&1", 2, NULL },
		{ " decode /nonexistent/x.pcap 2>&1", 1,
		  "iwx decode: /nonexistent/x.pcap: No such file or directory\n" },
		{ " decode Makefile 2>&1", 1, "iwx decode: Makefile: " },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cmd[256];
		char *out;
		int st;

		snprintf(cmd, sizeof(cmd), "%s%s", IWX_BIN, cases[i].args);
		out = run(cmd, &st);
		cr_assert_eq(st, cases[i].status, "%s: exit %d, want %d", cmd, st, cases[i].status);
		if (cases[i].says)
			assert_has(out, cases[i].says);
		free(out);
	}
}
