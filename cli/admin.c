// SPDX-License-Identifier: MIT
/*
 * iwx status, conns, stags, counters: what a running iwxd holds. One request on its
 * control socket (IWX_IPC_STATUS, _LIST_CONNS, _LIST_STAGS: root only, no HELLO), the
 * reply's parts joined, then aligned columns or JSON. The exchange, its errors and the
 * options are also those of the fast path's commands (attach.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/ddp_check.h"
#include "proto/term.h"
#include "ipc/ipc.h"

#include "admin.h"
#include "exit.h"
#include "json.h"
#include "table.h"

#define REPLY_TIMEOUT_S	30	/* iwxd answers from its loop; an attach verifies programs, seconds on a busy machine */

/* ----------------------------------------------------------- formats */

static const char *state_name(uint32_t state)
{
	switch (state) {
	case IWX_SHQ_INIT:		return "init";
	case IWX_SHQ_CONNECTING:	return "connecting";
	case IWX_SHQ_RTS:		return "rts";
	case IWX_SHQ_ERROR:		return "error";
	default:			return "unknown";
	}
}

/*
 * The share of sent FPDUs that started a TCP packet, in tenths of a percent, rounded down
 * so that 100.0% means all of them; false when none was sent.
 */
static bool aligned_tenths(uint64_t aligned, uint64_t total, unsigned *tenths)
{
	if (!total)
		return false;
	*tenths = aligned >= total ? 1000 : (unsigned)((double)aligned * 1000 / (double)total);
	return true;
}

static void json_pct(struct json *j, const char *key, uint64_t aligned, uint64_t total)
{
	unsigned t;

	if (!aligned_tenths(aligned, total, &t)) {
		json_null(j, key);
		return;
	}
	char num[16];

	snprintf(num, sizeof(num), "%u.%u", t / 10, t % 10);
	json_number(j, key, num);
}

static const char *pct_str(char *buf, size_t cap, uint64_t aligned, uint64_t total)
{
	unsigned t;

	if (!aligned_tenths(aligned, total, &t))
		return "-";
	snprintf(buf, cap, "%u.%u%%", t / 10, t % 10);
	return buf;
}

const char *bytes_str(char *buf, size_t cap, uint64_t v)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double x = (double)v / 1024;
	unsigned u = 0;

	if (v < 1024) {
		snprintf(buf, cap, "%" PRIu64 " B", v);
		return buf;
	}
	while (x >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		x /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.1f %s", x, unit[u]);
	return buf;
}

/* The host part of an address and its port: 0, or -EAFNOSUPPORT (no address yet). */
static int addr_parts(const struct sockaddr_storage *ss, char *host, size_t cap, unsigned *port)
{
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET) {
		if (!inet_ntop(AF_INET, &s4->sin_addr, host, cap))
			return -errno;
		*port = ntohs(s4->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		size_t l;

		if (!inet_ntop(AF_INET6, &s6->sin6_addr, host, cap))
			return -errno;
		l = strlen(host);
		/* the index is the daemon's, maybe in another namespace: no name for it here */
		if (s6->sin6_scope_id)
			snprintf(host + l, cap - l, "%%%u", (unsigned)s6->sin6_scope_id);
		*port = ntohs(s6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

static const char *endpoint_str(char *buf, size_t cap, const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN + 16];
	unsigned port;

	if (addr_parts(ss, host, sizeof(host), &port))
		return "-";
	snprintf(buf, cap, ss->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
	return buf;
}

static void json_endpoint(struct json *j, const char *addr_key, const char *port_key,
			  const struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN + 16];
	unsigned port;

	if (addr_parts(ss, host, sizeof(host), &port)) {
		json_null(j, addr_key);
		json_null(j, port_key);
		return;
	}
	json_str(j, addr_key, host);
	json_u64(j, port_key, port);
}

static const struct {
	uint8_t		bit;
	const char	*name;
} access_rights[] = {
	{ IWX_ACCESS_LOCAL_WRITE, "lw" },
	{ IWX_ACCESS_REMOTE_WRITE, "rw" },
	{ IWX_ACCESS_REMOTE_READ, "rr" },
	{ IWX_ACCESS_REMOTE_ATOMIC, "ra" },
};

#define NRIGHTS	(sizeof(access_rights) / sizeof(access_rights[0]))

/* "lw rw rr ra", "--" in the place of a right not granted; bits we do not know in hex. */
static const char *access_str(char *buf, size_t cap, uint8_t access)
{
	uint8_t known = 0;
	size_t l = 0;

	for (size_t i = 0; i < NRIGHTS; i++) {
		l += snprintf(buf + l, cap - l, "%s%s", i ? " " : "",
			      access & access_rights[i].bit ? access_rights[i].name : "--");
		known |= access_rights[i].bit;
	}
	if (access & ~known)
		snprintf(buf + l, cap - l, " +0x%02x", access & ~known);
	return buf;
}

/* ------------------------------------------------------------ status */

/* The fields of struct iwx_ipc_status that only grow: `iwx counters`, in this order. */
#define COUNTER(f)	{ #f, offsetof(struct iwx_ipc_status, f) }
#define TRAFFIC(f)	{ #f, offsetof(struct iwx_ipc_status, traffic.f) }

static const struct {
	const char	*name;
	size_t		off;
} counters[] = {
	COUNTER(conns_established), COUNTER(conns_failed), COUNTER(conns_rejected),
	COUNTER(terms_sent), COUNTER(terms_received),
	TRAFFIC(tx_fpdus), TRAFFIC(rx_fpdus), TRAFFIC(tx_bytes), TRAFFIC(rx_bytes),
	TRAFFIC(tx_fpdus_aligned), TRAFFIC(placed_segments), TRAFFIC(fast_fpdus), TRAFFIC(fast_bytes),
	TRAFFIC(fast_discards), TRAFFIC(fast_refuted), TRAFFIC(fast_unchecked),
	TRAFFIC(fast_unrepaired),
	TRAFFIC(tx_zc_calls), TRAFFIC(tx_zc_copied),
	COUNTER(doorbells), COUNTER(wakeups), COUNTER(linger_full), COUNTER(bells_muted),
	COUNTER(spins_stopped), COUNTER(spins_shared), COUNTER(cq_futex_wakes),
};

#define NCOUNTERS	(sizeof(counters) / sizeof(counters[0]))

static uint64_t counter(const struct iwx_ipc_status *s, size_t i)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)s + counters[i].off, sizeof(v));
	return v;
}

static void json_counters(struct json *j, const struct iwx_ipc_status *s)
{
	for (size_t i = 0; i < NCOUNTERS; i++)
		json_u64(j, counters[i].name, counter(s, i));
}

static const char *uptime_str(char *buf, size_t cap, uint64_t ms)
{
	uint64_t s = ms / 1000;

	if (s >= 86400)
		snprintf(buf, cap, "%" PRIu64 "d %02u:%02u:%02u", s / 86400,
			 (unsigned)(s % 86400 / 3600), (unsigned)(s % 3600 / 60), (unsigned)(s % 60));
	else
		snprintf(buf, cap, "%u:%02u:%02u", (unsigned)(s / 3600), (unsigned)(s % 3600 / 60),
			 (unsigned)(s % 60));
	return buf;
}

#define LINE(label, fmt, ...)	printf("  %-22s" fmt "\n", label, __VA_ARGS__)

static void json_user(struct json *j, const struct iwx_ipc_user_info *u)
{
	json_open(j, '{', true);
	json_u64(j, "uid", u->uid);
	json_u64(j, "clients", u->clients);
	json_u64(j, "bytes", u->bytes);
	json_u64(j, "departed_bytes", u->departed_bytes);
	json_u64(j, "departed", u->departed);
	json_u64(j, "pds", u->pds);
	json_u64(j, "mrs", u->mrs);
	json_u64(j, "cqs", u->cqs);
	json_u64(j, "qps", u->qps);
	json_u64(j, "srqs", u->srqs);
	json_u64(j, "listeners", u->listeners);
	json_u64(j, "maps", u->maps);
	json_u64(j, "queued", u->queued);
	json_u64(j, "lingering", u->lingering);
	json_u64(j, "fp_conns", u->fp_conns);
	json_u64(j, "fp_mems", u->fp_mems);
	json_u64(j, "fp_stags", u->fp_stags);
	json_close(j, '}');
}

static void user_line(const struct iwx_ipc_user_info *u)
{
	char label[32], a[64], b[64];

	snprintf(label, sizeof(label), "uid %u", u->uid);
	LINE(label, "%u clients, %s (%s of it left held, in %u objects), %u PDs, %u MRs, "
	     "%u CQs, %u QPs, %u SRQs, %u listeners, %u mappings, %u unread, %u lingering; "
	     "fast path: %u connections, %u memories, %u STags",
	     u->clients, bytes_str(a, sizeof(a), u->bytes), bytes_str(b, sizeof(b), u->departed_bytes),
	     u->departed, u->pds, u->mrs, u->cqs, u->qps, u->srqs, u->listeners, u->maps, u->queued,
	     u->lingering, u->fp_conns, u->fp_mems, u->fp_stags);
}

static int by_uid(const void *x, const void *y)
{
	const struct iwx_ipc_user_info *a = x, *b = y;

	return (a->uid > b->uid) - (a->uid < b->uid);
}

/* What each user holds: a second request, after the status (LIST_USERS). */
static int fetch_users(const struct admin_opts *o, struct admin_reply *r, size_t *n)
{
	int err = admin_fetch(o->socket, IWX_IPC_LIST_USERS, NULL, 0,
			      sizeof(struct iwx_ipc_user_info), r);

	if (!err)
		err = r->status;
	*n = err ? 0 : r->len / sizeof(struct iwx_ipc_user_info);
	if (*n)
		qsort(r->buf, *n, sizeof(struct iwx_ipc_user_info), by_uid);
	return err;
}

/* The daemon itself: what runs, since when, and what it asks of peers. */
static void json_daemon(struct json *j, const struct iwx_ipc_status *s, const char *socket,
			const char *release)
{
	json_str(j, "socket", socket);
	json_str(j, "version", release);
	json_u64(j, "ipc_version", s->version);
	json_u64(j, "pid", s->pid);
	json_u64(j, "uptime_ms", s->uptime_ms);
	json_bool(j, "crc_default", s->crc_default);
	json_u64(j, "settle_ms", s->settle_ms);
}

static void json_resources(struct json *j, const struct iwx_ipc_status *s)
{
	json_u64(j, "clients", s->clients);
	json_u64(j, "pds", s->pds);
	json_u64(j, "mrs", s->mrs);
	json_u64(j, "cqs", s->cqs);
	json_u64(j, "qps", s->qps);
	json_u64(j, "srqs", s->srqs);
	json_u64(j, "listeners", s->listeners);
	json_u64(j, "conns_pending", s->conns_pending);
}

/* The limits, with what is held against the daemon-wide ones. */
static void json_limits(struct json *j, const struct iwx_ipc_status *s)
{
	json_u64(j, "connected", s->connected);
	json_u64(j, "max_clients", s->max_clients);
	json_u64(j, "arena_bytes", s->arena_bytes);
	json_u64(j, "arena_total", s->arena_total);
	json_u64(j, "arena_max", s->arena_max);
	json_u64(j, "max_pds", s->max_pds);
	json_u64(j, "max_mrs", s->max_mrs);
	json_u64(j, "max_cqs", s->max_cqs);
	json_u64(j, "max_qps", s->max_qps);
	json_u64(j, "max_srqs", s->max_srqs);
	json_u64(j, "max_listeners", s->max_listeners);
	json_u64(j, "max_requests", s->max_requests);
	json_u64(j, "max_queued", s->max_queued);
	json_u64(j, "maps", s->maps);
	json_u64(j, "maps_total", s->maps_total);
	json_u64(j, "max_maps", s->max_maps);
	json_u64(j, "users", s->users);
	json_u64(j, "max_clients_per_user", s->max_clients_per_user);
	json_u64(j, "memory_per_user", s->memory_per_user);
	json_u64(j, "user_share", s->user_share);
	json_u64(j, "users_guaranteed", s->users_guaranteed);
	json_u64(j, "departed_bytes", s->departed_bytes);
	json_u64(j, "lingering", s->lingering);
	json_u64(j, "linger_full", s->linger_full);
	json_u64(j, "max_lingering", s->max_lingering);
}

static void json_users(struct json *j, const struct iwx_ipc_user_info *users, size_t n)
{
	json_key(j, "per_user");
	json_open(j, '[', false);
	for (size_t i = 0; i < n; i++)
		json_user(j, &users[i]);
	json_close(j, ']');
}

static void json_fast_path(struct json *j, const struct iwx_ipc_status *s)
{
	json_key(j, "fast_path");
	json_open(j, '[', false);
	for (uint32_t i = 0; i < s->fp_n && i < 16; i++) {
		json_open(j, '{', true);
		json_str(j, "ifname", s->fp[i].ifname);
		json_str(j, "mode", s->fp[i].mode == IWX_FP_MODE_XDP ? "xdp" : "tc");
		json_u64(j, "sctp_xsks", s->fp[i].sctp_xsks);
		json_close(j, '}');
	}
	json_close(j, ']');
}

static void json_sctp(struct json *j, const struct iwx_ipc_status *s)
{
	json_key(j, "sctp");
	json_open(j, '{', false);
	json_u64(j, "bad_crc", s->sctp.bad_crc);
	json_u64(j, "placed_chunks", s->sctp.placed_chunks);
	json_u64(j, "placed_bytes", s->sctp.placed_bytes);
	json_u64(j, "xsk_rx", s->sctp.xsk_rx);
	json_u64(j, "xsk_tx", s->sctp.xsk_tx);
	json_u64(j, "xsk_dropped", s->sctp.xsk_dropped);
	json_u64(j, "udp_dropped", s->sctp.udp_dropped);
	json_u64(j, "no_path", s->sctp.no_path);
	json_u64(j, "paths", s->sctp.paths);
	json_close(j, '}');
}

/* `iwx status -j`: one object, the sections' keys in the order of the text. */
static void json_status(const struct iwx_ipc_status *s, const char *socket, const char *release,
			const struct iwx_ipc_user_info *users, size_t nusers)
{
	struct json j = { .f = stdout };

	json_open(&j, '{', false);
	json_daemon(&j, s, socket, release);
	json_resources(&j, s);
	json_limits(&j, s);
	json_users(&j, users, nusers);
	json_counters(&j, s);
	json_pct(&j, "aligned_pct", s->traffic.tx_fpdus_aligned, s->traffic.tx_fpdus);
	json_fast_path(&j, s);
	json_sctp(&j, s);
	json_close(&j, '}');
}

static void print_daemon(const struct iwx_ipc_status *s, const char *socket, const char *release)
{
	char a[64];

	printf("iwxd at %s\n", socket);
	LINE("version", "%s (IPC %u)", release, s->version);
	LINE("pid", "%u", s->pid);
	LINE("uptime", "%s", uptime_str(a, sizeof(a), s->uptime_ms));
	LINE("CRC by default", "%s", s->crc_default ? "on (asked of peers)" : "off");
	LINE("settle time", "%u ms", s->settle_ms);
}

static void print_resources(const struct iwx_ipc_status *s)
{
	puts("resources");
	LINE("clients (devices)", "%u", s->clients);
	LINE("protection domains", "%u", s->pds);
	LINE("memory regions", "%u", s->mrs);
	LINE("completion queues", "%u", s->cqs);
	LINE("queue pairs", "%u", s->qps);
	LINE("shared receive queues", "%u", s->srqs);
	LINE("listeners", "%u", s->listeners);
	LINE("pending set-ups", "%u", s->conns_pending);
}

static void print_limits(const struct iwx_ipc_status *s)
{
	char a[64], b[64];

	puts("limits (iwxd --help)");
	LINE("clients connected", "%u of %u (devices, and others such as this iwx)", s->connected,
	     s->max_clients);
	LINE("shared memory", "%s of %s", bytes_str(a, sizeof(a), s->arena_bytes),
	     bytes_str(b, sizeof(b), s->arena_total));
	LINE("  left held", "%s (let go of by iwxd, still mapped or open in a client)",
	     bytes_str(a, sizeof(a), s->departed_bytes));
	LINE("mappings", "%u of %u", s->maps, s->maps_total);
	LINE("per client: arena", "%s", bytes_str(a, sizeof(a), s->arena_max));
	LINE("  PDs, MRs", "%u, %u", s->max_pds, s->max_mrs);
	LINE("  CQs, QPs, SRQs", "%u, %u, %u", s->max_cqs, s->max_qps, s->max_srqs);
	LINE("  listeners", "%u", s->max_listeners);
	LINE("  unanswered requests", "%u", s->max_requests);
	LINE("  unread messages", "%u", s->max_queued);
	LINE("  mappings", "%u", s->max_maps);
	LINE("per user: clients", "%u", s->max_clients_per_user);
	LINE("  memory", "%s, and %u clients' worth of each limit per client",
	     bytes_str(a, sizeof(a), s->memory_per_user), s->user_share);
	LINE("  lingering sockets", "%u", s->max_lingering);
	LINE("  guaranteed", "%s and %u clients each, to %u users (--users), and 1/%u of the "
	     "fast path's tables", bytes_str(a, sizeof(a), s->arena_total / (2ull * s->users_guaranteed)),
	     (unsigned)(s->max_clients / (2ull * s->users_guaranteed)), s->users_guaranteed,
	     2 * s->users_guaranteed);
}

static void print_users(const struct iwx_ipc_user_info *users, size_t n)
{
	puts("users");
	if (!n)
		LINE("none", "%s", "");
	for (size_t i = 0; i < n; i++)
		user_line(&users[i]);
}

static void print_connections(const struct iwx_ipc_status *s)
{
	puts("connections");
	LINE("established", "%" PRIu64, s->conns_established);
	LINE("failed", "%" PRIu64, s->conns_failed);
	LINE("rejected", "%" PRIu64, s->conns_rejected);
	LINE("Terminates sent", "%" PRIu64, s->terms_sent);
	LINE("Terminates received", "%" PRIu64, s->terms_received);
	LINE("lingering sockets", "%u now; %" PRIu64 " closed at once, their user at the most",
	     s->lingering, s->linger_full);
}

static void print_traffic(const struct iwx_ipc_status *s)
{
	char a[64], b[64];

	puts("traffic");
	LINE("FPDUs sent", "%" PRIu64, s->traffic.tx_fpdus);
	LINE("FPDUs received", "%" PRIu64, s->traffic.rx_fpdus);
	LINE("bytes sent", "%" PRIu64 " (%s)", s->traffic.tx_bytes, bytes_str(a, sizeof(a), s->traffic.tx_bytes));
	LINE("bytes received", "%" PRIu64 " (%s)", s->traffic.rx_bytes, bytes_str(a, sizeof(a), s->traffic.rx_bytes));
	LINE("whole in a packet", "%s (%" PRIu64 " of %" PRIu64 " FPDUs)",
	     pct_str(b, sizeof(b), s->traffic.tx_fpdus_aligned, s->traffic.tx_fpdus), s->traffic.tx_fpdus_aligned,
	     s->traffic.tx_fpdus);
	LINE("placed segments", "%" PRIu64, s->traffic.placed_segments);
	/* TCP: by the fast path's BPF; SCTP: from the packet, before usrsctp (sctp_place.h) */
	LINE("placed on arrival", "%" PRIu64 " segments, %" PRIu64 " payload bytes (TCP: by BPF; "
	     "SCTP: from the packet)", s->traffic.fast_fpdus, s->traffic.fast_bytes);
	LINE("bytes discarded", "in %" PRIu64 " recv(MSG_TRUNC) calls", s->traffic.fast_discards);
	/* iwxd takes a placed FPDU only once TCP has accepted those very bytes (fastpath_maps.h) */
	LINE("placed, then read", "%" PRIu64 " FPDUs TCP accepted other bytes for, %" PRIu64
	     " it could not compare", s->traffic.fast_refuted, s->traffic.fast_unchecked);
	LINE("placed, not repaired", "%" PRIu64 " FPDUs whose placed bytes TCP's FPDU did not all "
	     "rewrite (each ended its stream with a Terminate)", s->traffic.fast_unrepaired);
	LINE("doorbells", "%" PRIu64, s->doorbells);
	LINE("wakeups", "%" PRIu64, s->wakeups);
	LINE("bells muted", "%" PRIu64 " times a client rang for nothing and was not looked at "
	     "for a while", s->bells_muted);
	LINE("spins stopped", "%" PRIu64 " times a yield found iwxd's CPU held by another task "
	     "and iwxd slept instead of spinning for a while", s->spins_stopped);
	LINE("spins not made", "%" PRIu64 " posts of a client on iwxd's own CPU, after which "
	     "neither spun", s->spins_shared);
	LINE("futex wake-ups", "%" PRIu64 " completions that woke a client asleep on its CQ",
	     s->cq_futex_wakes);
}

static void print_fast_path(const struct iwx_ipc_status *s)
{
	puts("fast path");
	if (!s->fp_n)
		LINE("attached", "%s", "no (iwx attach dev IFNAME)");
	for (uint32_t i = 0; i < s->fp_n && i < 16; i++)
		LINE("attached", "%.16s (%s; SCTP %s)", s->fp[i].ifname,
		     s->fp[i].mode == IWX_FP_MODE_XDP ? "xdp" : "tc",
		     s->fp[i].sctp_xsks ? "through AF_XDP" : "in the UDP socket");
}

static void print_sctp(const struct iwx_ipc_status *s)
{
	puts("DDP over SCTP");
	LINE("placed from packets", "%" PRIu64 " chunks, %" PRIu64 " payload bytes",
	     s->sctp.placed_chunks, s->sctp.placed_bytes);
	LINE("through AF_XDP", "%" PRIu64 " packets in, %" PRIu64 " out, %" PRIu64 " dropped",
	     s->sctp.xsk_rx, s->sctp.xsk_tx, s->sctp.xsk_dropped);
	LINE("bad CRC32c", "%" PRIu64 " packets", s->sctp.bad_crc);
	LINE("UDP dropped", "%" PRIu64 " datagrams", s->sctp.udp_dropped);
	LINE("peers", "%" PRIu64 " with a path; %" PRIu64 " packets to peers gone", s->sctp.paths,
	     s->sctp.no_path);
}

static int show_status(void *buf, size_t n, const struct admin_opts *o)
{
	const struct iwx_ipc_status *s = buf;
	const struct iwx_ipc_user_info *users;
	struct admin_reply ur = { 0 };
	char release[sizeof(s->release) + 1];
	size_t nusers;
	int err;

	(void)n;
	snprintf(release, sizeof(release), "%.*s", (int)sizeof(s->release), s->release);
	err = fetch_users(o, &ur, &nusers);
	if (err)
		goto out;
	users = (const struct iwx_ipc_user_info *)ur.buf;
	if (o->json) {
		json_status(s, o->socket, release, users, nusers);
		goto out;
	}
	print_daemon(s, o->socket, release);
	print_resources(s);
	print_limits(s);
	print_users(users, nusers);
	print_connections(s);
	print_traffic(s);
	print_fast_path(s);
	print_sctp(s);
out:
	free(ur.buf);
	return err;
}

static int show_counters(void *buf, size_t n, const struct admin_opts *o)
{
	static const struct column cols[] = { { "COUNTER", false }, { "VALUE", true } };
	const struct iwx_ipc_status *s = buf;
	struct table t;
	int err;

	(void)n;
	if (o->json) {
		struct json j = { .f = stdout };

		json_open(&j, '{', false);
		json_counters(&j, s);
		json_close(&j, '}');
		return 0;
	}
	err = table_init(&t, cols, 2, NCOUNTERS);
	if (err)
		return err;
	for (size_t i = 0; i < NCOUNTERS; i++) {
		cell(&t, i, 0, "%s", counters[i].name);
		cell(&t, i, 1, "%" PRIu64, counter(s, i));
	}
	table_print(&t, stdout);
	return 0;
}

/* ---------------------------------------------------------- listings */

static int by_qp(const void *x, const void *y)
{
	const struct iwx_ipc_conn_info *a = x, *b = y;

	return (a->qp > b->qp) - (a->qp < b->qp);
}

static int by_client_stag(const void *x, const void *y)
{
	const struct iwx_ipc_stag_info *a = x, *b = y;

	if (a->client != b->client)
		return (a->client > b->client) - (a->client < b->client);
	return (a->stag > b->stag) - (a->stag < b->stag);
}

static const char *markers_str(const struct iwx_ipc_conn_info *c)
{
	if (c->markers_rx && c->markers_tx)
		return "rx+tx";
	if (c->markers_rx)
		return "rx";
	return c->markers_tx ? "tx" : "off";
}

/* How a listing shows: sorted, then a JSON array (an object a line) or a table. */
struct listing {
	size_t			esize;
	int			(*cmp)(const void *x, const void *y);
	void			(*json)(struct json *j, const void *e);
	const struct column	*cols;
	unsigned		ncols;
	void			(*row)(struct table *t, size_t i, const void *e);
};

static int show_listing(void *buf, size_t n, const struct admin_opts *o, const struct listing *l)
{
	struct table t;
	int err;

	if (n)
		qsort(buf, n, l->esize, l->cmp);
	if (o->json) {
		struct json j = { .f = stdout };

		json_open(&j, '[', false);
		for (size_t i = 0; i < n; i++)
			l->json(&j, (const uint8_t *)buf + i * l->esize);
		json_close(&j, ']');
		return 0;
	}
	err = table_init(&t, l->cols, l->ncols, n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		l->row(&t, i, (const uint8_t *)buf + i * l->esize);
	table_print(&t, stdout);
	return 0;
}

/* What carries the connection: MPA over TCP, or SCTP in UDP (docs/ddp-over-sctp.md). */
static const char *llp_name(const struct iwx_ipc_conn_info *c)
{
	if (!c->mpa_rev)
		return "-";	/* not set up yet */
	if (c->transport != IWX_TRANSPORT_SCTP)
		return "tcp";
	return c->sctp_xdp ? "sctp/xdp" : "sctp/udp";
}

/* How the stream ended: -, closed, or which side sent a Terminate, and its cause. */
static const char *ended_str(char *s, size_t len, const struct iwx_ipc_conn_info *c)
{
	if (c->ended == IWX_CONN_END_NONE)
		return "-";
	if (c->ended == IWX_CONN_END_CLOSED)
		return "closed";
	snprintf(s, len, "Terminate %s: %s %s: %s", c->ended == IWX_CONN_END_TERM_SENT ? "sent" : "received",
		 iwx_term_layer_name(c->term_layer), iwx_term_etype_name(c->term_layer, c->term_etype),
		 iwx_term_ecode_name(c->term_layer, c->term_etype, c->term_ecode));
	return s;
}

static void json_conn(struct json *j, const void *e)
{
	const struct iwx_ipc_conn_info *c = e;

	bool agreed = c->mpa_rev != 0;	/* the MPA set-up is done: its results are known */

	json_open(j, '{', true);
	json_u64(j, "qp", c->qp);
	json_u64(j, "client", c->client);
	json_u64(j, "pd", c->pd);
	json_str(j, "state", state_name(c->state));
	json_str(j, "llp", llp_name(c));
	json_endpoint(j, "local_addr", "local_port", &c->local_addr);
	json_endpoint(j, "peer_addr", "peer_port", &c->peer_addr);
	if (agreed) {
		json_u64(j, "mpa_rev", c->mpa_rev);
		json_bool(j, "crc", c->crc);
		json_bool(j, "markers_rx", c->markers_rx);
		json_bool(j, "markers_tx", c->markers_tx);
		json_u64(j, "ird", c->ird);
		json_u64(j, "ord", c->ord);
		json_u64(j, "emss", c->emss);
		json_bool(j, "rfc7306", c->rfc7306);
	} else {
		static const char *const keys[] = { "mpa_rev", "crc", "markers_rx", "markers_tx",
						    "ird", "ord", "emss", "rfc7306" };

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			json_null(j, keys[i]);
	}
	json_u64(j, "tx_fpdus", c->traffic.tx_fpdus);
	json_u64(j, "tx_bytes", c->traffic.tx_bytes);
	json_u64(j, "rx_fpdus", c->traffic.rx_fpdus);
	json_u64(j, "rx_bytes", c->traffic.rx_bytes);
	json_u64(j, "tx_fpdus_aligned", c->traffic.tx_fpdus_aligned);
	json_pct(j, "aligned_pct", c->traffic.tx_fpdus_aligned, c->traffic.tx_fpdus);
	json_u64(j, "placed_segments", c->traffic.placed_segments);
	if (c->ended == IWX_CONN_END_NONE) {
		json_null(j, "ended");
	} else {
		char s[CELL];

		json_str(j, "ended", c->ended == IWX_CONN_END_CLOSED ? "closed" :
				     c->ended == IWX_CONN_END_TERM_SENT ? "terminate_sent" :
									 "terminate_received");
		if (c->ended != IWX_CONN_END_CLOSED)
			json_str(j, "cause", ended_str(s, sizeof(s), c));
	}
	json_close(j, '}');
}

static void conn_row(struct table *t, size_t i, const void *e)
{
	const struct iwx_ipc_conn_info *c = e;
	char s[CELL];

	cell(t, i, 0, "%u", c->qp);
	cell(t, i, 1, "%u", c->client);
	cell(t, i, 2, "%s", state_name(c->state));
	cell(t, i, 3, "%s", llp_name(c));
	cell(t, i, 4, "%s", endpoint_str(s, sizeof(s), &c->local_addr));
	cell(t, i, 5, "%s", endpoint_str(s, sizeof(s), &c->peer_addr));
	if (c->mpa_rev) {	/* what the set-up agreed, once it has */
		cell(t, i, 6, "%u", c->mpa_rev);
		cell(t, i, 7, "%s", c->crc ? "on" : "off");
		cell(t, i, 8, "%s", markers_str(c));
		cell(t, i, 9, "%u/%u", c->ird, c->ord);
		cell(t, i, 10, "%u", c->emss);
	} else {
		for (unsigned k = 6; k <= 10; k++)
			cell(t, i, k, "-");
	}
	cell(t, i, 11, "%" PRIu64, c->traffic.tx_fpdus);
	cell(t, i, 12, "%s", bytes_str(s, sizeof(s), c->traffic.tx_bytes));
	cell(t, i, 13, "%" PRIu64, c->traffic.rx_fpdus);
	cell(t, i, 14, "%s", bytes_str(s, sizeof(s), c->traffic.rx_bytes));
	cell(t, i, 15, "%s", pct_str(s, sizeof(s), c->traffic.tx_fpdus_aligned, c->traffic.tx_fpdus));
	cell(t, i, 16, "%s", ended_str(s, sizeof(s), c));
}

static int show_conns(void *buf, size_t n, const struct admin_opts *o)
{
	static const struct column cols[] = {
		{ "QP", true }, { "CLIENT", true }, { "STATE", false }, { "LLP", false }, { "LOCAL", false },
		{ "PEER", false }, { "MPA", true }, { "CRC", false }, { "MARKERS", false },
		{ "IRD/ORD", true }, { "EMSS", true }, { "TX FPDUS", true }, { "TX BYTES", true },
		{ "RX FPDUS", true }, { "RX BYTES", true }, { "ALIGNED", true }, { "ENDED", false },
	};
	static const struct listing l = {
		sizeof(struct iwx_ipc_conn_info), by_qp, json_conn, cols,
		sizeof(cols) / sizeof(cols[0]), conn_row,
	};

	return show_listing(buf, n, o, &l);
}

static void json_stag(struct json *j, const void *e)
{
	const struct iwx_ipc_stag_info *m = e;

	json_open(j, '{', true);
	json_hex(j, "stag", m->stag, 8);
	json_u64(j, "client", m->client);
	json_u64(j, "pd", m->pd);
	json_bool(j, "valid", m->valid);
	json_key(j, "access");
	json_open(j, '[', true);
	for (size_t i = 0; i < NRIGHTS; i++)
		if (m->access & access_rights[i].bit)
			json_elem_str(j, access_rights[i].name);
	json_close(j, ']');
	json_u64(j, "access_bits", m->access);
	json_bool(j, "in_arena", m->in_arena);
	json_hex(j, "base_to", m->base_to, 1);
	json_u64(j, "len", m->len);
	json_close(j, '}');
}

static void stag_row(struct table *t, size_t i, const void *e)
{
	const struct iwx_ipc_stag_info *m = e;
	char s[CELL];

	cell(t, i, 0, "0x%08x", m->stag);
	cell(t, i, 1, "%u", m->client);
	cell(t, i, 2, "%u", m->pd);
	cell(t, i, 3, "%s", m->valid ? "valid" : "invalid");
	cell(t, i, 4, "%s", access_str(s, sizeof(s), m->access));
	cell(t, i, 5, "%s", m->in_arena ? "arena" : "shared");
	cell(t, i, 6, "0x%" PRIx64, m->base_to);
	cell(t, i, 7, "%" PRIu64, m->len);
}

static int show_stags(void *buf, size_t n, const struct admin_opts *o)
{
	static const struct column cols[] = {
		{ "STAG", false }, { "CLIENT", true }, { "PD", true }, { "STATE", false },
		{ "ACCESS", false }, { "MEMORY", false }, { "BASE TO", false }, { "LENGTH", true },
	};
	static const struct listing l = {
		sizeof(struct iwx_ipc_stag_info), by_client_stag, json_stag, cols,
		sizeof(cols) / sizeof(cols[0]), stag_row,
	};

	return show_listing(buf, n, o, &l);
}

/* ---------------------------------------------------------- exchange */

int admin_fetch(const char *path, uint16_t op, const void *body, uint32_t len, size_t esize,
		struct admin_reply *r)
{
	struct iwx_ipc_hdr req = { .op = op, .seq = 1, .len = len }, h;
	int fd, n, err;

	r->status = 0;
	fd = iwx_ipc_connect(path, REPLY_TIMEOUT_S);
	if (fd < 0)
		return fd;
	err = iwx_ipc_send(fd, &req, body, NULL, 0);
	while (!err) {
		/* room for the largest part, received in place */
		if (r->cap - r->len < IWX_IPC_MAX) {
			size_t cap = r->cap ? 2 * r->cap : IWX_IPC_MAX;
			uint8_t *p = realloc(r->buf, cap);

			if (!p) {
				err = -ENOMEM;
				break;
			}
			r->buf = p;
			r->cap = cap;
		}
		n = iwx_ipc_recv(fd, &h, r->buf + r->len, r->cap - r->len, NULL, NULL);
		if (n < 0) {
			err = n;
			break;
		}
		if (h.op == IWX_IPC_EVENT)
			continue;	/* not for us: we made nothing that has events */
		if (h.op != op || h.seq != req.seq) {
			err = -EPROTO;
			break;
		}
		if (h.status) {
			/* iwxd's answer, not the exchange's failure */
			if (h.status < 0)
				r->status = h.status;
			else
				err = -EPROTO;
			break;
		}
		if (esize ? (size_t)n % esize : n != 0) {
			err = -EPROTO;
			break;
		}
		r->len += n;
		if (!(h.flags & IWX_IPC_F_MORE))
			break;
	}
	close(fd);
	return err;
}

void admin_report(const char *path, int err, const char *who)
{
	switch (err) {
	case -ENOENT:
	case -ECONNREFUSED:
	case -ENOTDIR:
		fprintf(stderr, "iwx: %s: no iwxd serves this socket (%s)\n"
			"iwx: is iwxd running? Start it as root: iwxd -s %s\n",
			path, strerror(-err), path);
		break;
	case -EACCES:
	case -EPERM:
		fprintf(stderr, "iwx: %s: permission denied: only %s\n", path, who);
		break;
	case -ENAMETOOLONG:
		fprintf(stderr, "iwx: %s: socket path too long (at most %zu bytes)\n", path,
			sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		break;
	case -EAGAIN:
		fprintf(stderr, "iwx: %s: iwxd did not answer within %d s\n", path, REPLY_TIMEOUT_S);
		break;
	case -ECONNRESET:
	case -EPIPE:
		fprintf(stderr, "iwx: %s: iwxd closed the connection without answering\n", path);
		break;
	case -EPROTO:
		fprintf(stderr, "iwx: %s: iwxd's reply is not one this iwx understands "
			"(a daemon of another version?)\n", path);
		break;
	default:
		fprintf(stderr, "iwx: %s: %s\n", path, strerror(-err));
	}
}

/* -------------------------------------------------------------- main */

static const struct admin_cmd status_cmd = {
	"status", IWX_IPC_STATUS, sizeof(struct iwx_ipc_status), false, "one JSON object",
	"Show iwxd's state: version, pid, uptime, CRC default and settle time; the clients\n"
	"and what they made (PDs, MRs, CQs, QPs, listeners, connections being set up);\n"
	"its limits (iwxd --help), with the clients connected and the bytes of memory shared\n"
	"with them (arenas, rings, registered memory) against theirs, of which those left\n"
	"held: let go of by iwxd, but still mapped or open in a client, and counted until\n"
	"the kernel has freed them; the limits per user, and what each user (uid) holds;\n"
	"connections established, failed and rejected; Terminates sent and received, and\n"
	"the sockets lingering until the peer has read ours; FPDUs each way and the stream bytes they took (MPA headers, markers and\n"
	"CRC included), and of the FPDUs sent the share that started a TCP packet, so that\n"
	"TCP cut a segment there (as far as the sender can tell: an upper bound; \"-\" when\n"
	"none was sent); segments placed straight into their target; FPDUs the fast path\n"
	"placed (BPF, see 'iwx stats') and the recv(MSG_TRUNC) calls that dropped their bytes\n"
	"from the sockets unread; doorbells and wakeups; and the interfaces the fast path is\n"
	"attached to, with its mode. The traffic counters include the queue pairs already\n"
	"destroyed.\n",
	"JSON keys: the fields of struct iwx_ipc_status (ipc/ipc.h), and socket, and\n"
	"per_user: an array of {uid, clients, bytes, departed_bytes, departed, pds, mrs,\n"
	"cqs, qps, srqs, listeners, maps, queued, lingering, fp_conns, fp_mems, fp_stags}\n"
	"(struct iwx_ipc_user_info), and\n"
	"aligned_pct (null when no FPDU was sent), fast_path: an array of {ifname, mode,\n"
	"sctp_xsks}, and sctp: {bad_crc, placed_chunks, placed_bytes, xsk_rx, xsk_tx,\n"
	"xsk_dropped, udp_dropped, no_path, paths}.\n",
	show_status,
};

static const struct admin_cmd counters_cmd = {
	"counters", IWX_IPC_STATUS, sizeof(struct iwx_ipc_status), false, "one JSON object",
	"Print iwxd's counters, the ones of 'iwx status' that only grow, for scripts: one\n"
	"COUNTER VALUE line each under a header, names as the JSON keys: conns_established,\n"
	"conns_failed, conns_rejected, terms_sent, terms_received, tx_fpdus, rx_fpdus,\n"
	"tx_bytes, rx_bytes, tx_fpdus_aligned, placed_segments, fast_fpdus, fast_bytes,\n"
	"fast_discards, fast_refuted, fast_unchecked, fast_unrepaired, tx_zc_calls,\n"
	"tx_zc_copied, doorbells, wakeups, linger_full, bells_muted, spins_stopped,\n"
	"spins_shared, cq_futex_wakes.\n",
	NULL,
	show_counters,
};

static const struct admin_cmd conns_cmd = {
	"conns", IWX_IPC_LIST_CONNS, sizeof(struct iwx_ipc_conn_info), true,
	"a JSON array, one object per queue pair",
	"List iwxd's queue pairs, one a line: number, client, STATE (init, connecting, rts,\n"
	"error), LOCAL and PEER address:port, then what the MPA set-up agreed: revision,\n"
	"CRC on or off, MARKERS in the stream received (rx) and sent (tx), IRD/ORD, EMSS;\n"
	"then FPDUs each way and the stream bytes they took (MPA headers, markers and CRC\n"
	"included), and ALIGNED, the share of sent FPDUs that started a TCP packet (an upper\n"
	"bound on segment starts; \"-\" when none was sent); last, how its stream ENDED:\n"
	"closed, or a Terminate sent or received and its cause (\"-\" while it runs; JSON:\n"
	"ended, closed, terminate_sent or terminate_received, and cause). \"-\" also stands\n"
	"for what a queue pair not yet connected does not have (null in JSON).\n",
	NULL,
	show_conns,
};

static const struct admin_cmd stags_cmd = {
	"stags", IWX_IPC_LIST_STAGS, sizeof(struct iwx_ipc_stag_info), true,
	"a JSON array, one object per STag",
	"List the memory regions registered with iwxd, one STag a line: the STag, client,\n"
	"protection domain, valid or invalid, ACCESS, MEMORY, the base tagged offset and\n"
	"the length in bytes.\n"
	"ACCESS has three places, \"--\" where a right is not granted: lw local write, rw\n"
	"remote write, rr remote read (local read is always granted). MEMORY is where the\n"
	"region's bytes are: \"arena\", the client's arena (memory iwxd created and maps,\n"
	"shared with the client), or \"shared\", memory outside the arena that the client\n"
	"shares with iwxd: when first registered, its pages were moved into memory iwxd\n"
	"created and mapped back in place, so that both see the same bytes. iwxd reaches\n"
	"no other memory of a client.\n",
	"In JSON, access is an array of the rights granted (e.g. [\"lw\", \"rw\"]), and\n"
	"in_arena is true for \"arena\" and false for \"shared\".\n",
	show_stags,
};

static void admin_usage(const struct admin_cmd *c, FILE *out)
{
	fprintf(out, "usage: iwx %s [-s SOCKET] [-j]\n%s\n", c->name, c->about);
	fprintf(out,
		"  -s, --socket SOCKET  iwxd's control socket (default: $IWX_SOCKET, else\n"
		"                       %s)\n"
		"  -j, --json           print %s\n"
		"  -h, --help           show this help\n\n", IWX_DEFAULT_SOCKET, c->json);
	if (c->more)
		fprintf(out, "%s\n", c->more);
	fputs("Only root and the user iwxd runs as may inspect it.\n"
	      "Exit status: 0 shown; 1 a failure: no iwxd at SOCKET, permission denied, no or a\n"
	      "bad reply; 2 a usage error.\n",
	      out);
}

/*
 * A short option by its letter (arg may hold more of them), a long one as written
 * (getopt sets optopt for a long option given an argument it takes none).
 */
void admin_bad_option(const char *cmd, const char *shorts, int opt, const char *arg)
{
	char name[64];

	if (!optopt || (!strncmp(arg, "--", 2) && strchr(shorts, optopt)))
		snprintf(name, sizeof(name), "%s", arg);
	else
		snprintf(name, sizeof(name), "-%c", optopt);
	if (opt == ':')
		fprintf(stderr, "iwx %s: option '%s' needs an argument\n", cmd, name);
	else
		fprintf(stderr, "iwx %s: unknown option '%s'\n", cmd, name);
	fprintf(stderr, "Try 'iwx %s --help'.\n", cmd);
}

int admin_run(const struct admin_cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct admin_opts o = { 0 };
	struct admin_reply r = { 0 };
	int opt, err;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":s:jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.socket = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			admin_usage(c, stdout);
			return IWX_EXIT_OK;
		case ':':
		default:
			admin_bad_option(c->name, "sjh", opt, argv[optind - 1]);
			return IWX_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "iwx %s: unexpected argument '%s'\nTry 'iwx %s --help'.\n",
			c->name, argv[optind], c->name);
		return IWX_EXIT_USAGE;
	}
	if (o.socket && !*o.socket) {
		fprintf(stderr, "iwx %s: empty socket path\nTry 'iwx %s --help'.\n", c->name, c->name);
		return IWX_EXIT_USAGE;
	}
	o.socket = iwx_ipc_socket_path(o.socket);
	err = admin_fetch(o.socket, c->op, NULL, 0, c->esize, &r);
	if (!err)
		err = r.status;
	/* STATUS is exactly one struct: anything else is another protocol */
	if (!err && !c->listing && r.len != c->esize)
		err = -EPROTO;
	if (err) {
		free(r.buf);
		admin_report(o.socket, err, "root and the user iwxd runs as may inspect it");
		return IWX_EXIT_FAIL;
	}
	err = c->show(r.buf, r.len / c->esize, &o);
	free(r.buf);
	if (err) {
		fflush(stdout);
		fprintf(stderr, "iwx %s: %s\n", c->name, strerror(-err));
		return IWX_EXIT_FAIL;
	}
	return admin_output_done(c->name);
}

int admin_output_done(const char *cmd)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "iwx %s: writing the output: %s\n", cmd, strerror(errno));
		return IWX_EXIT_FAIL;
	}
	return IWX_EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
	return admin_run(&status_cmd, argc, argv);
}

int cmd_conns(int argc, char **argv)
{
	return admin_run(&conns_cmd, argc, argv);
}

int cmd_stags(int argc, char **argv)
{
	return admin_run(&stags_cmd, argc, argv);
}

int cmd_counters(int argc, char **argv)
{
	return admin_run(&counters_cmd, argc, argv);
}
