// SPDX-License-Identifier: MIT
/*
 * iwxd: the iWARP daemon of one host (or network namespace). Owns the TCP streams,
 * the MPA set-up, memory registration and the software queue pairs; applications
 * reach it through libiwx on a Unix socket. One thread, one epoll loop (serve.c);
 * here its options and main().
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "iwx_config.h"	/* made by the Makefile */
#include "serve.h"

#define OPT_LIMIT	256	/* getopt's value of the option of limit i: OPT_LIMIT + i */
#define TRY_HELP	"Try 'iwxd --help' for more information.\n"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iwxd [OPTIONS]\n"
		"The iWARP daemon: serves libiwx applications of this host (network namespace).\n"
		"\n"
		"  -s, --socket PATH     Unix socket to serve (default $IWX_SOCKET, else %s)\n"
		"  -g, --group NAME      members of group NAME may use iwx (default: root and\n"
		"                        iwxd's own user only)\n"
		"      --no-crc          do not ask peers for the MPA CRC (applications may still)\n"
		"      --no-rfc7306      neither offer nor accept RFC 7306 (atomics, immediate\n"
		"                        data), which iwx agrees with iwx peers only, by a reserved\n"
		"                        MPA flag bit (0x01) that other peers ignore\n"
		"      --settle-ms MS    as connection initiator, hold what goes out for MS ms after\n"
		"                        set-up, for peers like Linux's siw that miss an early FPDU,\n"
		"                        unless the peer speaks first (default 200; an application\n"
		"                        may choose per connection: iwx_conn_param.settle_ms)\n"
		"      --timeout-ms MS   give up a connection set-up after MS ms (default 10000):\n"
		"                        the TCP connect, each MPA frame; a request the\n"
		"                        application has not answered in MS/2 ms is rejected\n"
		"      --close-ms MS     abort a graceful close (iwx_disconnect) that the peer has\n"
		"                        not answered with its own in MS ms (default 10000)\n"
		"      --sctp-port PORT  UDP port of DDP over SCTP (SCTP in UDP, RFC 6951), on every\n"
		"                        address, and where peers' iwxd are reached (default 9899;\n"
		"                        0: no SCTP, and IWX_TRANSPORT_SCTP fails EPROTONOSUPPORT);\n"
		"                        through AF_XDP on interfaces 'iwx attach' names\n"
		"      --spin-us US      after a client posted, keep serving US microseconds\n"
		"                        without sleeping, yielding the CPU between turns: the\n"
		"                        reply and its next request need no wake-up (default %d;\n"
		"                        0: sleep once idle). Not while another task holds the\n"
		"                        CPU when iwxd yields: iwxd then sleeps for a while\n"
		"      --zerocopy BYTES  send payload from registered memory with MSG_ZEROCOPY, in\n"
		"                        calls carrying BYTES (K, M) or more of it: a Send, Write\n"
		"                        or Read Response completes once the kernel let go of its\n"
		"                        pages (default: off, copied once; on a veth it measured\n"
		"                        4x slower: see BENCHMARKS.md); TCP only, not with markers\n"
		"      --fastpath-rcvbuf BYTES\n"
		"                        a connection the fast path follows receives into a\n"
		"                        buffer of BYTES (K, M; the kernel doubles it), not one\n"
		"                        TCP grows: what TCP may hold unread then stays within\n"
		"                        what the programs can place ahead of iwxd (4096 FPDUs),\n"
		"                        and they keep placing while iwxd is slow; it stays so\n"
		"                        after a detach (default 2M; 0: the buffer TCP grows, for\n"
		"                        a path whose rate times round trip exceeds 2 MiB). Not\n"
		"                        where the connection's interface is attached at XDP,\n"
		"                        where TCP's buffer holds a page per segment\n"
		"      --memlock         hold each client (root's aside) also to its process's\n"
		"                        RLIMIT_MEMLOCK (ulimit -l) when it connected, as the\n"
		"                        kernel's RDMA stack holds registered memory: its arena\n"
		"                        and registered memory beyond it fail with ENOMEM\n"
		"  -v, --verbose         log connections and clients; twice: every failed request\n"
		"                        (without: warnings, and a line at start and at the end)\n"
		"  -h, --help            this text\n"
		"  -V, --version         iwxd's version\n"
		"\n"
		"Limits: a request beyond one fails with ENOSPC (an arena larger than --arena-max\n"
		"with EFBIG) and is logged; a client beyond --max-clients or --max-clients-per-user\n"
		"is answered EMFILE (root is let in regardless), one beyond --max-queued is\n"
		"dropped, and a connection request beyond --max-requests is rejected. Sizes take\n"
		"K, M or G. The clients of one user (uid) together hold at most %d clients' worth\n"
		"of each limit per client, and --memory-per-user bytes: memory counts from its\n"
		"creation until the kernel has freed it, so what a client keeps mapped (or a\n"
		"descriptor of) after freeing it, or after it is gone, still counts. Root's\n"
		"clients are not held to the limits per user.\n"
		"Fair shares: each of up to --users users may count on 1/(2 x N) of --arena-total,\n"
		"of --max-clients and of the fast path's tables (followed connections, memories,\n"
		"STags), whenever it comes: what a user takes beyond that comes only out of what\n"
		"is not kept for the others (those present, and those yet to come). Beyond it,\n"
		"memory and clients are refused (ENOSPC, EMFILE), and the fast path leaves its\n"
		"connections and regions to iwxd; it is logged, naming the user and --users.\n"
		"Each connection holds a descriptor: iwxd raises its limit of open files\n"
		"(RLIMIT_NOFILE) to the system's most for a process (fs.nr_open) where it may,\n"
		"else to its hard limit. Out of them, what needs one fails with EMFILE, and\n"
		"accepting clients pauses until one is free.\n"
		"As an ordinary user, iwxd serves that user's programs (and root's), with no fast\n"
		"path ('iwx attach' needs root) and its memory in memfds rather than BPF maps;\n"
		"--group takes only a group of hers, and the default socket's directory needs\n"
		"root: serve one of hers (-s, and IWX_SOCKET for the programs).\n",
		IWX_DEFAULT_SOCKET, IWXD_SPIN_US, USER_SHARE);
	for (int i = 0; i < LIMIT_N; i++) {
		char flag[32], dflt[48];

		snprintf(flag, sizeof(flag), "%s %s", limits[i].flag, limits[i].bytes ? "BYTES" : "N");
		if (limits[i].derived)
			snprintf(dflt, sizeof(dflt), "%s", limits[i].derived);
		else if (limits[i].bytes)
			snprintf(dflt, sizeof(dflt), "%" PRIu64 "G", limits[i].dflt >> 30);
		else
			snprintf(dflt, sizeof(dflt), "%" PRIu64, limits[i].dflt);
		fprintf(f, "  --%-24s  %s (default %s)\n", flag, limits[i].what, dflt);
	}
	fprintf(f, "\n"
		"It runs in the foreground and logs to stderr; SIGINT or SIGTERM stop it, closing\n"
		"every connection.\n");
}

/* --name's decimal value from min to max into *out; else a message and -1. */
static int int_option(const char *name, const char *arg, long min, long max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || !*arg || v < min || v > max) {
		fprintf(stderr, "iwxd: --%s takes %ld to %ld, not %s\n", name, min, max, arg);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* A size (K, M or G after it) or a count (none) from 1 up to max; -1 for anything else. */
static int parse_limit(const char *s, bool size, uint64_t max, uint64_t *out)
{
	unsigned shift = 0;
	char *end;
	uint64_t v;

	if (!isdigit((unsigned char)*s))
		return -1;	/* strtoull would take a sign, or spaces */
	errno = 0;
	v = strtoull(s, &end, size ? 0 : 10);	/* sizes as ever (0x...), counts in decimal */
	if (errno)
		return -1;
	if (size && *end) {
		const char *units = "KMG", *u = strchr(units, *end);

		if (!u)
			return -1;
		shift = 10 * (unsigned)(u - units + 1);
		end++;
	}
	if (*end || !v || v > max >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option fixed[] = {
		{ "socket", required_argument, NULL, 's' }, { "group", required_argument, NULL, 'g' },
		{ "no-crc", no_argument, NULL, 'n' }, { "settle-ms", required_argument, NULL, 'w' },
		{ "no-rfc7306", no_argument, NULL, 'x' },
		{ "timeout-ms", required_argument, NULL, 't' }, { "verbose", no_argument, NULL, 'v' },
		{ "close-ms", required_argument, NULL, 'c' },
		{ "sctp-port", required_argument, NULL, 'u' },
		{ "memlock", no_argument, NULL, 'l' },
		{ "spin-us", required_argument, NULL, 'y' },
		{ "zerocopy", required_argument, NULL, 'z' },
		{ "fastpath-rcvbuf", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
	};
	struct option longopts[sizeof(fixed) / sizeof(fixed[0]) + LIMIT_N + 1] = { 0 };
	struct iwxd d;
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	struct group *g;
	int port, c;

	serve_init(&d);
	memcpy(longopts, fixed, sizeof(fixed));
	for (int i = 0; i < LIMIT_N; i++)
		longopts[nfixed + i] = (struct option){ limits[i].flag, required_argument, NULL,
							OPT_LIMIT + i };
	while ((c = getopt_long(argc, argv, "s:g:vhV", longopts, NULL)) != -1) {
		if (c >= OPT_LIMIT && c < OPT_LIMIT + LIMIT_N) {
			const struct limit_info *l = &limits[c - OPT_LIMIT];

			/* counts are kept in 32 bits */
			if (parse_limit(optarg, l->bytes, l->bytes ? SIZE_MAX : UINT32_MAX,
					&d.o.max[c - OPT_LIMIT])) {
				fprintf(stderr, "iwxd: --%s takes %s, not %s\n", l->flag,
					l->bytes ? "a size (e.g. 256M)" : "a number from 1 to 4294967295",
					optarg);
				return 2;
			}
			continue;
		}
		switch (c) {
		case 's':
			d.o.socket = optarg;
			break;
		case 'g':
			g = getgrnam(optarg);
			if (!g) {
				fprintf(stderr, "iwxd: no group named %s\n", optarg);
				return 2;
			}
			d.o.gid = g->gr_gid;
			break;
		case 'n':
			d.o.crc = false;
			break;
		case 'x':
			d.o.rfc7306 = false;
			break;
		case 'l':
			d.o.memlock = true;
			break;
		case 'w':
			if (int_option("settle-ms", optarg, 0, 10000, &d.o.settle_ms))
				return 2;
			break;
		case 't':
			if (int_option("timeout-ms", optarg, 1, 600000, &d.o.timeout_ms))
				return 2;
			break;
		case 'c':
			if (int_option("close-ms", optarg, 1, 600000, &d.o.close_ms))
				return 2;
			break;
		case 'z': {
			uint64_t v;

			if (parse_limit(optarg, true, UINT32_MAX, &v)) {
				fprintf(stderr, "iwxd: --zerocopy takes 1 to 4294967295 bytes, not %s\n", optarg);
				return 2;
			}
			d.o.zerocopy_min = v;
			break;
		}
		case 'r': {
			uint64_t v = 0;

			if (strcmp(optarg, "0") && parse_limit(optarg, true, 1u << 30, &v)) {
				fprintf(stderr, "iwxd: --fastpath-rcvbuf takes 0 to 1G bytes, not %s\n", optarg);
				return 2;
			}
			d.o.fp_rcvbuf = v;
			break;
		}
		case 'y':
			if (int_option("spin-us", optarg, 0, 1000000, &d.o.spin_us))
				return 2;
			break;
		case 'u':
			if (int_option("sctp-port", optarg, 0, 65535, &port))
				return 2;
			d.o.sctp_port = port;
			break;
		case 'v':
			iwx_log_level++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("iwxd %s\n", IWX_VERSION);
			return 0;
		default:	/* getopt said which option */
			fputs(TRY_HELP, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "iwxd: unexpected argument %s\n" TRY_HELP, argv[optind]);
		return 2;
	}
	limits_derive(d.o.max);
	if (serve_setup(&d))
		return 1;
	log_notice("version %s, serving %s (CRC %s by default, settle %d ms)", IWX_VERSION, d.o.socket,
		 d.o.crc ? "asked" : "not asked", d.o.settle_ms);
	if (d.o.owner)
		log_info("not root (uid %u): serving uid %u's programs%s; no fast path, memory in memfds",
			 (unsigned)d.o.owner, (unsigned)d.o.owner,
			 d.o.gid != (gid_t)-1 ? " and --group's" : "");
	serve_run(&d);
	serve_teardown(&d);
	return 0;
}
