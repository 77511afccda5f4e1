// SPDX-License-Identifier: MIT
/*
 * The SCTP carrier of bench_engine --llp sctp and bench_usrsctp (bench_util.h): this
 * process's usrsctp stack (sctp.h), its packets in UDP datagrams (sctp_udp.h), driven by
 * one single-threaded loop as iwxd drives it (sctp_io.c): poll() on the UDP socket up to
 * the next timer tick, the datagrams that came fed to the stack, its timers when due.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <usrsctp.h>

#include "bench_util.h"
#include "sctp.h"
#include "sctp_udp.h"

#define INPUT_BUDGET	256	/* datagrams fed to the stack per turn, as iwxd (sctp_io.c) */
#define CLOSE_MS	200	/* what is closing, SCTP's SHUTDOWN exchange */

static struct iwx_sctp_udp *udp;
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

int carrier_open(const struct sockaddr_in *addr)
{
	udp = iwx_sctp_udp_open((const struct sockaddr *)addr, sizeof(*addr), 4);
	if (!udp)
		return errf(-errno, "UDP socket on %s:%u", inet_ntoa(addr->sin_addr),
			    ntohs(addr->sin_port));
	if (iwx_sctp_init()) {
		iwx_sctp_udp_close(udp);
		udp = NULL;
		return errf(-EIO, "starting usrsctp");
	}
	usrsctp_get_stat(&st0);
	drops0 = udp_drops();
	tick_due = now_ms() + IWX_SCTP_TICK_MS;
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
	uint64_t now = now_ms();
	int n;

	if (ms > 0 && !more) {
		struct pollfd p = { .fd = iwx_sctp_udp_fd(udp), .events = POLLIN };
		int to_tick = tick_due > now ? (int)(tick_due - now) : 0;

		if (poll(&p, 1, ms < to_tick ? ms : to_tick) < 0 && errno != EINTR)
			return errf(-errno, "poll");
	}
	n = iwx_sctp_udp_input(udp, INPUT_BUDGET);
	if (n < 0)
		return errf(n, "reading the UDP socket");
	more = n == INPUT_BUDGET;
	now = now_ms();
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
	for (uint64_t end = now_ms() + CLOSE_MS; now_ms() < end;)
		if (carrier_pump(10) < 0)
			break;
	memset(&st, 0, sizeof(st));
	usrsctp_get_stat(&st);
	fprintf(stderr, "%s: usrsctp: data_chunks=%u retrans_chunks=%u udp_drops=%lu\n",
		program_invocation_short_name, st.sctps_senddata - st0.sctps_senddata,
		st.sctps_sendretransdata - st0.sctps_sendretransdata,
		(unsigned long)(udp_drops() - drops0));
	iwx_sctp_udp_close(udp);
	udp = NULL;
	iwx_sctp_finish();
}
