// SPDX-License-Identifier: MIT
/*
 * The SCTP carrier of bench_engine --llp sctp and bench_usrsctp (bench_util.h): this
 * process's usrsctp stack (sctp.h), its packets in UDP datagrams (sctp_udp.h), driven by
 * one single-threaded loop as iwxd drives it (sctp_io.c): poll() on the UDP socket up to
 * the next timer tick, the datagrams that came fed to the stack, its timers when due.
 * With IWX_BENCH_XSK=IFNAME, the datagrams also go through an AF_XDP socket on queue 0
 * of IFNAME (sctp_xsk.h), as iwxd's after iwx attach: bpf/sctp_xsk.bpf.c at native XDP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <usrsctp.h>

#include "bench_util.h"
#include "sctp.h"
#include "sctp_udp.h"
#include "sctp_xsk.h"
#include "sctp_xsk.skel.h"
#include "util/clock.h"

#define INPUT_BUDGET	256	/* datagrams fed to the stack per turn, as iwxd (sctp_io.c) */
#define CLOSE_MS	200	/* what is closing, SCTP's SHUTDOWN exchange */

static struct iwx_sctp_udp *udp;
static struct sctp_xsk_bpf *skel;	/* IWX_BENCH_XSK: the XDP program, attached to ifindex */
static int ifindex;
static struct iwx_sctp_xsk *xsk;
static uint64_t tick_due;
static bool more;		/* datagrams left after the last turn's budget */
static struct sctpstat st0;
static uint64_t drops0;

/* The namespace's UDP receive buffer overflows so far (/proc/self/net/snmp: this netns). */
static uint64_t udp_drops(void)
{
	char head[512], vals[512];
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/net/snmp", "r");

	if (!f)
		return 0;
	while (fgets(head, sizeof(head), f)) {
		char *hs, *vs, *h, *x;

		if (strncmp(head, "Udp:", 4) || !fgets(vals, sizeof(vals), f))
			continue;
		h = strtok_r(head, " \n", &hs);
		x = strtok_r(vals, " \n", &vs);
		while (h && x) {
			if (!strcmp(h, "RcvbufErrors"))
				v = strtoull(x, NULL, 10);
			h = strtok_r(NULL, " \n", &hs);
			x = strtok_r(NULL, " \n", &vs);
		}
		break;
	}
	fclose(f);
	return v;
}

/* IWX_BENCH_XSK: the XDP program at native XDP on ifname, an AF_XDP socket on queue 0. */
static int xsk_open(const char *ifname)
{
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex)
		return errf(-ENODEV, "IWX_BENCH_XSK=%s", ifname);
	skel = sctp_xsk_bpf__open();
	if (!skel)
		return errf(-errno, "opening the XDP program");
	skel->rodata->sctp_port = iwx_sctp_udp_port(udp);
	if (sctp_xsk_bpf__load(skel) ||
	    bpf_xdp_attach(ifindex, bpf_program__fd(skel->progs.iwx_sctp_xsk), XDP_FLAGS_DRV_MODE,
			   NULL))
		return errf(-errno, "the XDP program on %s", ifname);
	xsk = iwx_sctp_xsk_open(udp, ifname, 0, bpf_map__fd(skel->maps.iwx_xsks));
	return xsk ? 0 : errf(-errno, "an AF_XDP socket on %s", ifname);
}

static void xsk_close(void)
{
	const struct iwx_sctp_xsk_stats *x;

	if (xsk) {
		x = iwx_sctp_xsk_stats(xsk);
		fprintf(stderr, "%s: xsk: rx=%lu tx=%lu dropped=%lu placed_bytes=%lu\n",
			program_invocation_short_name, (unsigned long)x->rx, (unsigned long)x->tx,
			(unsigned long)(x->rx_dropped + x->tx_dropped),
			(unsigned long)iwx_sctp_stats()->placed_bytes);
		iwx_sctp_xsk_close(xsk);
		xsk = NULL;
	}
	if (skel) {
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
		sctp_xsk_bpf__destroy(skel);
		skel = NULL;
	}
}

int carrier_open(const struct sockaddr_in *addr)
{
	const char *xsk_if = getenv("IWX_BENCH_XSK");
	int err;

	udp = iwx_sctp_udp_open((const struct sockaddr *)addr, sizeof(*addr), 4);
	if (!udp)
		return errf(-errno, "UDP socket on %s:%u", inet_ntoa(addr->sin_addr),
			    ntohs(addr->sin_port));
	err = xsk_if && *xsk_if ? xsk_open(xsk_if) : 0;	/* which said why */
	if (!err && iwx_sctp_init())
		err = errf(-EIO, "starting usrsctp");
	if (err) {
		xsk_close();
		iwx_sctp_udp_close(udp);
		udp = NULL;
		return err;
	}
	usrsctp_get_stat(&st0);
	drops0 = udp_drops();
	tick_due = iwx_now_ms() + IWX_SCTP_TICK_MS;
	return 0;
}

struct iwx_sctp_path *carrier_path(const struct sockaddr_in *peer)
{
	struct iwx_sctp_path *p = iwx_sctp_udp_path(udp, (const struct sockaddr *)peer,
						    sizeof(*peer));

	if (!p)
		errf(-errno, "a path to %s", inet_ntoa(peer->sin_addr));
	return p;
}

int carrier_pump(int ms)
{
	uint64_t now = iwx_now_ms();
	int n;

	if (xsk)
		iwx_sctp_xsk_flush(xsk);	/* what the work since the last turn queued */
	if (ms > 0 && !more) {
		struct pollfd p[2] = { { .fd = iwx_sctp_udp_fd(udp), .events = POLLIN },
				       { .fd = xsk ? iwx_sctp_xsk_fd(xsk) : -1, .events = POLLIN } };
		int to_tick = tick_due > now ? (int)(tick_due - now) : 0;

		if (poll(p, 2, ms < to_tick ? ms : to_tick) < 0 && errno != EINTR)
			return errf(-errno, "poll");
	}
	n = iwx_sctp_udp_input(udp, INPUT_BUDGET);
	if (n < 0)
		return errf(n, "reading the UDP socket");
	more = n == INPUT_BUDGET;
	if (xsk)
		more |= iwx_sctp_xsk_input(xsk, INPUT_BUDGET) == INPUT_BUDGET;
	now = iwx_now_ms();
	if (now >= tick_due) {
		iwx_sctp_tick();
		tick_due = now + IWX_SCTP_TICK_MS;
	}
	return 0;
}

void carrier_close(void)
{
	struct sctpstat st;

	if (!udp)
		return;
	for (uint64_t end = iwx_now_ms() + CLOSE_MS; iwx_now_ms() < end;)
		if (carrier_pump(10) < 0)
			break;
	memset(&st, 0, sizeof(st));
	usrsctp_get_stat(&st);
	fprintf(stderr, "%s: usrsctp: data_chunks=%u retrans_chunks=%u udp_drops=%lu\n",
		program_invocation_short_name, st.sctps_senddata - st0.sctps_senddata,
		st.sctps_sendretransdata - st0.sctps_sendretransdata,
		(unsigned long)(udp_drops() - drops0));
	xsk_close();
	iwx_sctp_udp_close(udp);
	udp = NULL;
	iwx_sctp_finish();
}
