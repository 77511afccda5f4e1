// SPDX-License-Identifier: MIT
/*
 * Dropping capabilities (privs.h), through libcap: it names them (the log says what iwxd
 * kept in the kernel's own words), and its cap_set_proc() speaks whichever version of
 * capset(2)'s header the kernel takes, which raw prctl/capset calls would do by hand.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/capability.h>

#include "log.h"
#include "privs.h"

/* What requests need (iwxd(8), dist/systemd/iwxd.service); effective: at any time. */
static const struct {
	cap_value_t	cap;
	bool		effective;
} kept[] = {
	{ CAP_BPF, true },		/* BPF maps of clients' memory; the fast path's programs */
	{ CAP_PERFMON, true },		/* ... its tracing programs (iter/tcp, tp_btf), and
					   iter/bpf_map (arenas_live.c: has the kernel freed a
					   client's memory?) */
	{ CAP_NET_ADMIN, true },	/* attaching at TC (tcx) and XDP (netlink): iwx attach, detach */
	{ CAP_NET_RAW, true },		/* AF_XDP sockets: iwx attach --sctp */
	{ CAP_IPC_LOCK, true },		/* their UMEM, and MSG_ZEROCOPY, beyond RLIMIT_MEMLOCK */
	/* only while libxdp works (privs_admin): BPF_PROG_GET_FD_BY_ID on the programs at an
	   interface's XDP hook, without which it cannot add ours; mounting bpffs for it */
	{ CAP_SYS_ADMIN, false },
	{ CAP_NET_BIND_SERVICE, true },	/* a root client's listener below ip_unprivileged_port_start */
};
#define NKEPT	(sizeof(kept) / sizeof(kept[0]))

static bool is_kept(cap_value_t c)
{
	for (size_t i = 0; i < NKEPT; i++)
		if (kept[i].cap == c)
			return true;
	return false;
}

static bool has(cap_t set, cap_value_t c, cap_flag_t flag)
{
	cap_flag_value_t v = CAP_CLEAR;

	return !cap_get_flag(set, c, flag, &v) && v == CAP_SET;
}

int privs_drop(void)
{
	cap_t now = cap_get_proc(), want = cap_init();
	char *text = NULL;
	int err = 0;

	if (!now || !want) {
		err = -errno;
		goto out;
	}
	for (size_t i = 0; i < NKEPT; i++)
		if (has(now, kept[i].cap, CAP_PERMITTED) &&
		    (cap_set_flag(want, CAP_PERMITTED, 1, &kept[i].cap, CAP_SET) ||
		     (kept[i].effective &&
		      cap_set_flag(want, CAP_EFFECTIVE, 1, &kept[i].cap, CAP_SET)))) {
			err = -errno;
			goto out;
		}
	/* the bounding set, while CAP_SETPCAP is still there (a unit bounds it itself) */
	if (has(now, CAP_SETPCAP, CAP_EFFECTIVE))
		for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++)
			if (!is_kept(c) && cap_get_bound(c) > 0 && cap_drop_bound(c)) {
				err = -errno;
				goto out;
			}
	if (cap_set_proc(want) || cap_reset_ambient()) {
		err = -errno;
		goto out;
	}
	text = cap_to_text(want, NULL);
	log_info("capabilities kept: %s", text && *text != '=' ? text : "none");
out:
	cap_free(text);
	cap_free(want);
	cap_free(now);
	return err;
}

int privs_admin(bool on)
{
	static const cap_value_t admin = CAP_SYS_ADMIN;
	cap_t now = cap_get_proc();
	int err = 0;

	if (!now)
		return -errno;
	if (has(now, admin, CAP_PERMITTED) &&
	    (cap_set_flag(now, CAP_EFFECTIVE, 1, &admin, on ? CAP_SET : CAP_CLEAR) ||
	     cap_set_proc(now)))
		err = -errno;
	cap_free(now);
	return err;
}
