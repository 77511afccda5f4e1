// SPDX-License-Identifier: MIT
/*
 * iwx attach, detach, stats: iwxd's fast path, the BPF programs that place tagged
 * payload at an interface's ingress. Each is one request on iwxd's control socket
 * (IWX_IPC_FP_ATTACH, _DETACH, _STATS: root only), through admin.h's exchange.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "proto/fastpath_stats.h"

#include "admin.h"
#include "exit.h"
#include "attach.h"
#include "json.h"
#include "table.h"

#define MAX_IFACES	16	/* iwxd's (control/iwxd/fastpath.c): for the -ENOSPC message */
#define IFNAME_MAX	(sizeof(((struct iwx_ipc_fp_attach *)0)->ifname) - 1)

/* Why an FPDU was not placed: the reasons of proto/fastpath_stats.h, by their index. */
#define SKIP_TEXT(n, name, why)	{ name, why },
static const struct {
	const char	*name;
	const char	*why;
} skips[IWX_FP_SKIP_N] = { IWX_FP_SKIPS(SKIP_TEXT) };
#undef SKIP_TEXT

/* ... and all of them in one string, for --help */
#define SKIP_HELP(n, name, why)	"  " name ": " why "\n"

static const char *mode_name(uint32_t mode)
{
	switch (mode) {
	case IWX_FP_MODE_TC:	return "tc";
	case IWX_FP_MODE_XDP:	return "xdp";
	default:		return "unknown";
	}
}

static const char *fp_state_name(uint32_t state)
{
	switch (state) {
	case IWX_FP_UNSYNC:	return "unsync";
	case IWX_FP_PROPOSED:	return "proposed";
	case IWX_FP_SYNC:	return "sync";
	case IWX_FP_STOPPED:	return "stopped";
	default:		return "unknown";
	}
}

/* ----------------------------------------------------------- attach, detach */

struct fp_cmd {
	const char	*name;
	uint16_t	op;
	bool		mode;		/* takes --mode */
	const char	*usage;		/* --help: the line after "usage: " */
	const char	*about;		/* --help, after the usage line */
	const char	*options;	/* --help: the options of this command alone */
	const char	*exits;		/* --help: the exit statuses */
};

static const struct fp_cmd attach_cmd = {
	"attach", IWX_IPC_FP_ATTACH, true,
	"iwx attach dev IFNAME [-m tc|xdp] [--sctp] [-s SOCKET]",
	"Attach iwxd's fast path to the interface IFNAME of iwxd's network namespace (the\n"
	"first attach loads its BPF programs). At the interface's ingress they place the\n"
	"payload of tagged FPDUs (RDMA Write, Read Response) of iwxd's connections in full\n"
	"operation straight into the target memory, when that is certain to be right; iwxd\n"
	"receives everything else as before ('iwx stats' counts what was placed and why\n"
	"the rest was not). The programs stay attached until 'iwx detach' or until iwxd\n"
	"exits; should iwxd be killed, a TC attachment ends with it, an XDP one stays\n"
	"(placing nothing: its sockets are gone) until iwxd runs there again.\n"
	"Kernel TCP stays in charge: nothing is placed from a segment it would refuse, and\n"
	"iwxd takes a placed FPDU only once TCP has accepted the very FPDU, by its MPA CRC\n"
	"(else it reads TCP's bytes over the placed ones). So connections without the MPA\n"
	"CRC are not followed: nothing would tell their placed payload from TCP's.\n"
	"VLANs: TCP takes a VLAN's frames from that VLAN's device, so attach there (tc);\n"
	"tagged frames on IFNAME itself are not placed. XDP cannot see a tag the NIC (or a\n"
	"veth) carries beside the frame: such frames are placed, then checked against\n"
	"TCP's bytes as above.\n"
	"DDP over SCTP, with --sctp only: iwxd also takes the SCTP datagrams for its\n"
	"--sctp-port on IFNAME through AF_XDP sockets (an XDP program of its own, one\n"
	"socket per receive queue), answering each peer through them once its datagrams\n"
	"arrive there, and placing tagged payload straight from their frames. Where that\n"
	"cannot be (XDP held by another program, such as the fast path in xdp mode without\n"
	"libxdp's dispatcher), SCTP stays in iwxd's UDP socket, as its log says; 'iwx\n"
	"status' and 'iwx conns' show which carries what. An XDP program has a cost for\n"
	"all the interface's TCP: on a veth every packet then arrives on its own, as the\n"
	"wire would carry it (no GRO, no GSO super-packets), which halves the TC fast\n"
	"path's goodput there (BENCHMARKS.md). A veth has no interrupt: the peer's transmit\n"
	"runs its receive, on the sender's CPU unless RPS (tc) or threaded NAPI (xdp) moves\n"
	"it, and the programs' copy with it, on the sender's time; without the fast path\n"
	"iwxd copies on its own CPU. On success one line: attached to IFNAME (MODE), with\n"
	"', SCTP through AF_XDP' after MODE when --sctp was given; a warning on standard\n"
	"error too at XDP on a veth (below), and on a veth not steered so.\n",
	"  -m, --mode MODE      where to attach: tc, TC ingress (the default); or xdp,\n"
	"                       native XDP through libxdp, for NICs that run it natively\n"
	"                       (XDP is told nothing of checksums: the programs sum each\n"
	"                       TCP segment they place from; on veth, whose peer leaves\n"
	"                       them to offload unless told otherwise, they place nothing\n"
	"                       from such packets, and XDP turns GRO off)\n"
	"      --sctp           SCTP's datagrams through AF_XDP sockets too (see above)\n",
	"Exit status: 0 attached; 1 a failure: no iwxd at SOCKET, permission denied, no or\n"
	"a bad reply, or iwxd refused: no interface IFNAME where it runs, already attached\n"
	"there, an interface that cannot run XDP natively, attached to as many interfaces\n"
	"as it can (16), or it could not load or attach the programs (its log says why);\n"
	"2 a usage error.\n",
};

static const struct fp_cmd detach_cmd = {
	"detach", IWX_IPC_FP_DETACH, false,
	"iwx detach dev IFNAME [-s SOCKET]",
	"Detach iwxd's fast path from the interface IFNAME (see 'iwx attach'): iwxd\n"
	"receives all of its connections' traffic there itself again (SCTP in its UDP\n"
	"socket). The programs stay loaded, for the next attach, until iwxd exits. On\n"
	"success one line: detached from IFNAME.\n",
	"",
	"Exit status: 0 detached; 1 a failure: no iwxd at SOCKET, permission denied, no or\n"
	"a bad reply, or iwxd refused: no interface IFNAME where it runs, or the fast path\n"
	"not attached to it; 2 a usage error.\n",
};

static void fp_usage(const struct fp_cmd *c, FILE *out)
{
	fprintf(out, "usage: %s\n%s\n", c->usage, c->about);
	fprintf(out, "%s"
		"  -s, --socket SOCKET  iwxd's control socket (default: $IWX_SOCKET, else\n"
		"                       %s)\n"
		"  -h, --help           show this help\n\n", c->options, IWX_DEFAULT_SOCKET);
	fprintf(out, "IFNAME is at most %zu bytes, as the kernel's names are. Only root may change\n"
		"iwxd's fast path.\n%s", IFNAME_MAX, c->exits);
}

__attribute__((format(printf, 2, 3)))
static int fp_usage_error(const struct fp_cmd *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iwx %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'iwx %s --help'.\n", c->name);
	return IWX_EXIT_USAGE;
}

/* iwxd's refusal of what c asked for IFNAME, on stderr. */
static void fp_refused(const struct fp_cmd *c, const struct iwx_ipc_fp_attach *req, int err)
{
	const char *n = req->ifname;

	fprintf(stderr, "iwx %s: ", c->name);
	switch (err) {
	case -ENODEV:
		fprintf(stderr, "no interface %s in iwxd's network namespace\n", n);
		break;
	case -EEXIST:
		fprintf(stderr, "already attached to %s\n", n);
		break;
	case -ENOENT:
		fprintf(stderr, "not attached to %s\n", n);
		break;
	case -EOPNOTSUPP:
		fprintf(stderr, "%s cannot run XDP natively (try --mode tc; iwxd's log says more)\n",
			n);
		break;
	case -ENOSPC:
		fprintf(stderr, "iwxd is attached to as many interfaces as it can (%d)\n", MAX_IFACES);
		break;
	case -EPERM:
	case -EACCES:
		/* iwxd answers so whoever is not root; as root, it is iwxd that lacks a right */
		if (geteuid() != 0)
			fprintf(stderr, "permission denied: only root may %s iwxd's fast path\n",
				c->name);
		else if (req->mode == IWX_FP_MODE_XDP)
			fprintf(stderr, "%s: iwxd could not attach at XDP (%s): libxdp needs "
				"CAP_SYS_ADMIN for a moment and bpffs at /sys/fs/bpf; iwxd's log "
				"says more\n", n, strerror(-err));
		else
			fprintf(stderr, "%s: iwxd could not load or attach the BPF programs (%s; "
				"see iwxd's log)\n", n, strerror(-err));
		break;
	default:
		fprintf(stderr, "%s: %s\n", n, strerror(-err));
	}
}

static int fp_run(const struct fp_cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },	/* first two: detach starts after */
		{ "sctp", no_argument, NULL, 'S' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iwx_ipc_fp_attach req = { .mode = IWX_FP_MODE_TC };
	struct admin_reply r = { 0 };
	struct iwx_ipc_fp_attached attached = { 0 };
	const char *socket = NULL, *ifname;
	int opt, err;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, c->mode ? ":s:m:h" : ":s:h",
				  c->mode ? longopts : longopts + 2, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket = optarg;
			break;
		case 'm':
			if (!strcmp(optarg, "tc"))
				req.mode = IWX_FP_MODE_TC;
			else if (!strcmp(optarg, "xdp"))
				req.mode = IWX_FP_MODE_XDP;
			else
				return fp_usage_error(c, "unknown mode '%s' (tc or xdp)", optarg);
			break;
		case 'S':
			req.flags |= IWX_FP_ATTACH_SCTP;
			break;
		case 'h':
			fp_usage(c, stdout);
			return IWX_EXIT_OK;
		case ':':
		default:
			admin_bad_option(c->name, c->mode ? "smh" : "sh", opt, argv[optind - 1]);
			return IWX_EXIT_USAGE;
		}
	}
	/* dev IFNAME, as ip(8) names a device */
	if (optind == argc)
		return fp_usage_error(c, "missing 'dev IFNAME'");
	if (strcmp(argv[optind], "dev"))
		return fp_usage_error(c, "unexpected argument '%s' (expected 'dev IFNAME')",
				      argv[optind]);
	if (optind + 1 == argc)
		return fp_usage_error(c, "'dev' needs an interface name");
	ifname = argv[optind + 1];
	if (!*ifname)
		return fp_usage_error(c, "empty interface name");
	if (strlen(ifname) > IFNAME_MAX)
		return fp_usage_error(c, "interface name '%s' is longer than %zu bytes", ifname,
				      IFNAME_MAX);
	if (optind + 2 < argc)
		return fp_usage_error(c, "unexpected argument '%s'", argv[optind + 2]);
	if (socket && !*socket)
		return fp_usage_error(c, "empty socket path");
	memcpy(req.ifname, ifname, strlen(ifname));

	socket = iwx_ipc_socket_path(socket);
	err = admin_fetch(socket, c->op, &req, sizeof(req), c->mode ? sizeof(attached) : 0, &r);
	if (!err && !r.status && r.len >= sizeof(attached))
		memcpy(&attached, r.buf, sizeof(attached));
	free(r.buf);
	if (err) {
		admin_report(socket, err, "root may change iwxd's fast path");
		return IWX_EXIT_FAIL;
	}
	if (r.status) {
		fp_refused(c, &req, r.status);
		return IWX_EXIT_FAIL;
	}
	if (!c->mode) {
		printf("detached from %s\n", req.ifname);
		return admin_output_done(c->name);
	}
	printf("attached to %s (%s%s)\n", req.ifname, mode_name(req.mode),
	       req.flags & IWX_FP_ATTACH_SCTP ? ", SCTP through AF_XDP" : "");
	if (attached.notes & IWX_FP_NOTE_XDP_VETH)
		fprintf(stderr, "iwx attach: warning: %s is a veth: its peer leaves TCP checksums "
			"to offload unless told\n  otherwise, and XDP, told nothing of them, places "
			"nothing from such packets ('iwx stats':\n  csum). Turn the peer's offload off "
			"('ethtool -K PEER tx off' where it is) or attach at tc.\n", req.ifname);
	if (attached.notes & IWX_FP_NOTE_ON_SENDER)
		fprintf(stderr, "iwx attach: warning: %s is a veth whose receive runs on the CPU of "
			"whoever sent to it\n  (%s), and the fast path's copy with it: on the sender's "
			"time, where iwxd would\n  have copied on its own CPU. Steer it: %s.\n",
			req.ifname, req.mode == IWX_FP_MODE_XDP ? "its NAPI is not threaded" : "no RPS",
			req.mode == IWX_FP_MODE_XDP ? "'echo 1 > /sys/class/net/IFNAME/threaded'" :
			"RPS or RFS (/sys/class/net/IFNAME/queues/rx-*/rps_cpus)");
	return admin_output_done(c->name);
}

int cmd_attach(int argc, char **argv)
{
	return fp_run(&attach_cmd, argc, argv);
}

int cmd_detach(int argc, char **argv)
{
	return fp_run(&detach_cmd, argc, argv);
}

/* -------------------------------------------------------------------- stats */

/* Interfaces first, by name; then connections, by queue pair. */
static int by_kind_name_qp(const void *x, const void *y)
{
	const struct iwx_ipc_fp_info *a = x, *b = y;

	if (a->kind != b->kind)
		return (a->kind > b->kind) - (a->kind < b->kind);
	if (a->kind == IWX_FP_INFO_IFACE)
		return strncmp(a->ifname, b->ifname, sizeof(a->ifname));
	return (a->id > b->id) - (a->id < b->id);
}

static uint64_t skipped_total(const struct iwx_fp_counters *c)
{
	uint64_t n = 0;

	for (size_t k = 0; k < IWX_FP_SKIP_N; k++)
		n += c->skipped[k];
	return n;
}

/* The name iwxd sent, NUL-terminated whatever it sent. */
static const char *ifname_of(const struct iwx_ipc_fp_info *e, char *buf)
{
	memcpy(buf, e->ifname, sizeof(e->ifname));
	buf[sizeof(e->ifname)] = 0;
	return buf;
}

static void json_fp_counters(struct json *j, const struct iwx_fp_counters *c)
{
	json_u64(j, "packets", c->packets);
	json_u64(j, "placed_fpdus", c->placed_fpdus);
	json_u64(j, "placed_bytes", c->placed_bytes);
	json_u64(j, "ahead", c->ahead);
	json_u64(j, "proposals", c->proposals);
	json_u64(j, "confirmed", c->confirmed);
	json_u64(j, "behind", c->behind);
	json_u64(j, "stopped", c->stopped);
	json_u64(j, "bells", c->bells);
	json_key(j, "skipped");
	json_open(j, '{', true);
	for (size_t k = 0; k < IWX_FP_SKIP_N; k++)
		json_u64(j, skips[k].name, c->skipped[k]);
	json_close(j, '}');
}

static void json_fp(const struct iwx_ipc_fp_info *e, size_t n)
{
	static const uint32_t kinds[] = { IWX_FP_INFO_IFACE, IWX_FP_INFO_CONN };
	static const char *const keys[] = { "interfaces", "connections" };
	struct json j = { .f = stdout };
	char name[sizeof(e->ifname) + 1];

	json_open(&j, '{', false);
	for (size_t k = 0; k < 2; k++) {
		json_key(&j, keys[k]);
		json_open(&j, '[', false);
		for (size_t i = 0; i < n; i++) {
			if (e[i].kind != kinds[k])
				continue;
			json_open(&j, '{', true);
			if (e[i].kind == IWX_FP_INFO_IFACE) {
				json_str(&j, "name", ifname_of(&e[i], name));
				json_u64(&j, "ifindex", e[i].id);
				json_str(&j, "mode", mode_name(e[i].mode));
			} else {
				json_u64(&j, "qp", e[i].id);
				json_str(&j, "state", fp_state_name(e[i].state));
			}
			json_fp_counters(&j, &e[i].c);
			json_close(&j, '}');
		}
		json_close(&j, ']');
	}
	json_close(&j, '}');
}

/* the counters are the BPF side's __u64: cast for PRIu64 */
#define LINE(label, fmt, ...)	printf("  %-22s" fmt "\n", label, __VA_ARGS__)

static void show_iface(const struct iwx_ipc_fp_info *e)
{
	const struct iwx_fp_counters *c = &e->c;
	char name[sizeof(e->ifname) + 1], b[64];

	printf("interface %s (ifindex %u, %s)\n", ifname_of(e, name), e->id, mode_name(e->mode));
	LINE("packets", "%" PRIu64, (uint64_t)c->packets);
	LINE("FPDUs placed", "%" PRIu64, (uint64_t)c->placed_fpdus);
	LINE("bytes placed", "%" PRIu64 " (%s)", (uint64_t)c->placed_bytes,
	     bytes_str(b, sizeof(b), c->placed_bytes));
	LINE("  out of order", "%" PRIu64, (uint64_t)c->ahead);
	LINE("boundaries proposed", "%" PRIu64, (uint64_t)c->proposals);
	LINE("  confirmed", "%" PRIu64, (uint64_t)c->confirmed);
	LINE("packets behind", "%" PRIu64, (uint64_t)c->behind);
	LINE("packets stopped", "%" PRIu64, (uint64_t)c->stopped);
	LINE("iwxd woken", "%" PRIu64, (uint64_t)c->bells);
	LINE("not placed", "%" PRIu64, skipped_total(c));
	for (size_t k = 0; k < IWX_FP_SKIP_N; k++)
		if (c->skipped[k])
			printf("    %-12s %8" PRIu64 "  %s\n", skips[k].name,
			       (uint64_t)c->skipped[k], skips[k].why);
}

static int show_conns_table(const struct iwx_ipc_fp_info *e, size_t n)
{
	static const struct column cols[] = {
		{ "QP", true }, { "STATE", false }, { "PACKETS", true }, { "FPDUS", true },
		{ "BYTES", true }, { "SKIPPED", true },
	};
	struct table t;
	char s[CELL];
	int err;

	err = table_init(&t, cols, sizeof(cols) / sizeof(cols[0]), n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		cell(&t, i, 0, "%u", e[i].id);
		cell(&t, i, 1, "%s", fp_state_name(e[i].state));
		cell(&t, i, 2, "%" PRIu64, (uint64_t)e[i].c.packets);
		cell(&t, i, 3, "%" PRIu64, (uint64_t)e[i].c.placed_fpdus);
		cell(&t, i, 4, "%s", bytes_str(s, sizeof(s), e[i].c.placed_bytes));
		cell(&t, i, 5, "%" PRIu64, skipped_total(&e[i].c));
	}
	table_print(&t, stdout);
	return 0;
}

static int show_stats(void *buf, size_t n, const struct admin_opts *o)
{
	struct iwx_ipc_fp_info *e = buf;
	size_t ifaces = 0, conns = 0;

	if (n)
		qsort(e, n, sizeof(*e), by_kind_name_qp);
	if (o->json) {
		json_fp(e, n);
		return 0;
	}
	/* sorted: the interfaces, the connections, then kinds of a newer iwxd (not shown) */
	while (ifaces < n && e[ifaces].kind == IWX_FP_INFO_IFACE)
		ifaces++;
	while (ifaces + conns < n && e[ifaces + conns].kind == IWX_FP_INFO_CONN)
		conns++;
	if (!ifaces)
		puts("the fast path is not attached (iwx attach dev IFNAME)");
	for (size_t i = 0; i < ifaces; i++) {
		if (i)
			putchar('\n');
		show_iface(&e[i]);
	}
	if (!conns) {
		if (ifaces)
			puts("\nno connection followed: the fast path follows those in full operation");
		return 0;
	}
	putchar('\n');
	return show_conns_table(e + ifaces, conns);
}

static const struct admin_cmd stats_cmd = {
	"stats", IWX_IPC_FP_STATS, sizeof(struct iwx_ipc_fp_info), true,
	"one JSON object (below)",
	"Show the counters of iwxd's fast path (see 'iwx attach'). For each interface it is\n"
	"attached to, by name: its index and mode, then, over the packets of iwxd's\n"
	"connections that came in there: packets with payload looked at, FPDUs placed\n"
	"and the payload bytes they carried, FPDUs placed out of order (with markers, from\n"
	"packets that came before the bytes in front of them), FPDU boundaries proposed\n"
	"after a gap and those iwxd confirmed,\n"
	"packets not walked because they lay all before the next FPDU (resent, or inside a\n"
	"long FPDU) or came after the stream stopped, the times the programs woke iwxd\n"
	"(while FPDUs it need not read stream in, iwxd sleeps until much has come or a\n"
	"program wakes it for one it must read), the FPDUs not placed, and, for each\n"
	"reason that counted any, how many with what the reason means.\n"
	"Then the connections the fast path follows (those in full operation), by queue\n"
	"pair: QP, STATE (unsync: no FPDU boundary known; proposed: one proposed, waiting\n"
	"for iwxd; sync: placing; stopped: the stream broke or ended, nothing more is\n"
	"placed), PACKETS looked at, FPDUS placed, BYTES of payload placed, SKIPPED: FPDUs\n"
	"not placed, all reasons together (iwxd reads those from the socket itself).\n"
	"A packet is what the hook sees: after GRO (at TC) one packet may hold up to 64 KiB\n"
	"of a stream, so FPDUs placed are often many times the packets.\n"
	"When the fast path is attached to no interface, a line says so.\n",
	"In JSON: {\"interfaces\": [...], \"connections\": [...]}, an object a line in each.\n"
	"Keys of both interfaces (name, ifindex, mode) and connections (qp, state):\n"
	"packets, placed_fpdus, placed_bytes, ahead, proposals, confirmed, behind, stopped,\n"
	"bells, and skipped, an object with the count of every reason, zero or not, keyed by its\n"
	"name. The reasons:\n"
	IWX_FP_SKIPS(SKIP_HELP),
	show_stats,
};

int cmd_stats(int argc, char **argv)
{
	return admin_run(&stats_cmd, argc, argv);
}
