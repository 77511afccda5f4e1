// SPDX-License-Identifier: MIT
/*
 * iwxd's SCTP paths, one pool for the daemon (sctp_io.c): a client that connects over
 * SCTP again and again to addresses that never answer (198.18.0.0/15, routed from
 * namespace a to b, which does not forward them) must not use them up, since each
 * path goes with its failed set-up (sctp_udp.h); another client's SCTP connect to a real
 * peer then still works. And a user's connects in progress, each holding a path, are held
 * to --sctp-connects-per-user, so that no one user holds them all at once.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iwx/iwx.h>

#include "child.h"
#include "iwx_cli.h"
#include "iwxd_pair.h"
#include "stall.h"

#define DAEMON_ARGS	"--settle-ms 0 --timeout-ms 200"
#define SILENT		1100	/* connects to silent addresses, more than the daemon's paths */
#define WAVE		100	/* ... of them at once */

static struct iwxd_pair pair;
static struct endpoint a, b, c;	/* c: the client that connects to silent addresses */

#define USER_CONNECTS	8	/* daemon_sctp_user's --sctp-connects-per-user */

static void start(const char *args, uid_t uid)
{
	if (geteuid() != 0)
		cr_skip_test("needs root for namespaces");
	cr_assert_eq(iwxd_pair_up(&pair, args, &a, &b, 0), 0);
	cr_assert_eq(netns_exec(pair.ns.a, "ip", "route", "add", "198.18.0.0/15", "via", NETNS_B4,
				NULL), 0);
	cr_assert_eq(chmod(pair.dir, 0711), 0, "others reach the sockets (0660, nogroup)");
	cr_assert(!setegid(uid ? NOBODY : 0) && !seteuid(uid), "%m");
	cr_assert_eq(endpoint_open(&c, &pair, 0, 0), 0, "c as uid %u", (unsigned)uid);
	cr_assert(!seteuid(0) && !setegid(0), "%m");
}

static void up(void)
{
	start(DAEMON_ARGS, 0);
}

static void up_user(void)
{
	start(DAEMON_ARGS " -g nogroup --sctp-connects-per-user 8", NOBODY);
}

static void down(void)
{
	if (c.dev)
		endpoint_close(&c);
	iwxd_pair_down(&pair, &a, &b);
}

TestSuite(daemon_sctp_paths, .init = up, .fini = down, .timeout = HANG_S);
TestSuite(daemon_sctp_user, .init = up_user, .fini = down, .timeout = HANG_S);

/* 198.18.x.y, a new silent address for every n. */
static struct sockaddr_in silent(uint32_t n)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(7000) };

	to.sin_addr.s_addr = htonl(0xc6120000 | (n / 250 + 1) << 8 | (n % 250 + 1));
	return to;
}

/* The paths a's iwxd has (`iwx status -j`, its "sctp" object). */
static int64_t paths_of_a(void)
{
	static char out[16384];
	const char *sctp;

	cr_assert_eq(run_iwx(out, sizeof(out), "status -j -s %s", pair.sock[0]), 0, "%s", out);
	sctp = strstr(out, "\"sctp\": {");
	cr_assert_not_null(sctp, "%s", out);
	return json_num(sctp, "paths");
}

Test(daemon_sctp_paths, silent_addresses_leave_no_paths_behind)
{
	struct iwx_conn_param sctp = { .transport = IWX_TRANSPORT_SCTP };
	struct iwx_qp *qp[WAVE];
	int64_t paths = paths_of_a(), left;
	int refused = 0;

	for (int i = 0; i < WAVE; i++) {
		qp[i] = iwx_create_qp(c.pd, &(struct iwx_qp_init_attr){ .send_cq = c.cq,
									  .recv_cq = c.cq });
		cr_assert_not_null(qp[i], "qp %d: %s", i, iwx_strerror(errno));
	}
	for (int done = 0; done < SILENT; done += WAVE) {
		int waiting = 0;

		for (int i = 0; i < WAVE; i++) {
			struct sockaddr_in to = silent(done + i);

			if (iwx_connect(qp[i], (struct sockaddr *)&to, sizeof(to), &sctp))
				refused++;
			else
				waiting++;
		}
		while (waiting) {
			struct iwx_event ev;

			cr_assert_eq(iwx_get_event(c.dev, &ev, 5000), 0, "%d set-ups never ended", waiting);
			cr_assert_eq(ev.type, IWX_EVENT_UNREACHABLE, "event %d", ev.type);
			waiting--;
		}
	}
	left = paths_of_a() - paths;
	for (int i = 0; i < WAVE; i++)
		iwx_destroy_qp(qp[i]);
	cr_assert_eq(endpoint_connect(&a, &b, false, &sctp), 0, "another client's SCTP connect");
	cr_assert_eq(refused, 0, "connects refused: %d of %d", refused, SILENT);
	cr_assert_eq(left, 0, "paths left by failed set-ups: %ld", (long)left);
}

Test(daemon_sctp_user, a_users_connects_in_progress_are_held)
{
	struct iwx_conn_param sctp = { .transport = IWX_TRANSPORT_SCTP };
	struct iwx_qp *qp[USER_CONNECTS + 1];
	int err = 0;

	for (int i = 0; i <= USER_CONNECTS; i++) {
		struct sockaddr_in to = silent(i);

		qp[i] = iwx_create_qp(c.pd, &(struct iwx_qp_init_attr){ .send_cq = c.cq,
									  .recv_cq = c.cq });
		cr_assert_not_null(qp[i], "qp %d: %s", i, iwx_strerror(errno));
		err = iwx_connect(qp[i], (struct sockaddr *)&to, sizeof(to), &sctp);
		if (i < USER_CONNECTS)
			cr_assert_eq(err, 0, "connect %d: %s", i, iwx_strerror(err));
	}
	cr_assert_eq(err, -ENOSPC, "one connect beyond the user's: %s", iwx_strerror(err));
	cr_assert(iwxd_pair_logged(&pair, 0, "user 65534 (client"));
	cr_assert(iwxd_pair_logged(&pair, 0, "(--sctp-connects-per-user 8): refused"));
	cr_assert_eq(endpoint_connect(&a, &b, false, &sctp), 0, "root's SCTP connect meanwhile");
	for (int i = 0; i <= USER_CONNECTS; i++)
		iwx_destroy_qp(qp[i]);
}
