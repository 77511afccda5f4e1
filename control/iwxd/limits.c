// SPDX-License-Identifier: MIT
/*
 * What one client, one user's clients together, and all of them together may hold: the
 * limits (daemon.h), their options and defaults, the users that hold, and the refusal a
 * request beyond a limit gets. The modules that make a client's objects ask here before
 * they do.
 *
 * A user is a uid, as the kernel's RDMA stack counts pinned memory against the user's
 * RLIMIT_MEMLOCK: a client is one process's device, and a user may open many. So what a
 * client may hold is also held to a total per user (USER_SHARE clients' worth, its own
 * clients and memory limits), and no user can take what the limits leave for all. Root's
 * clients are counted, but not held to the limits per user.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon.h"

const struct limit_info limits[LIMIT_N] = {
	[LIMIT_CLIENTS]		= { "max-clients", "clients connected at once", 1024 },
	[LIMIT_CLIENTS_USER]	= { "max-clients-per-user", "clients one user (uid) has connected at once", 0, false,
				    "a quarter of --max-clients" },
	[LIMIT_ARENA_TOTAL]	= { "arena-total", "bytes all clients share with iwxd (arenas, rings, registered memory)", 4ull << 30, true },
	[LIMIT_MEMORY_USER]	= { "memory-per-user", "bytes one user's clients share with iwxd, and those it keeps after they go", 0, true,
				    "half of --arena-total" },
	[LIMIT_LINGER_USER]	= { "max-lingering", "sockets of one user's connections kept open after a Terminate, until the peer has read it", 256 },
	[LIMIT_SCTP_USER]	= { "sctp-connects-per-user", "SCTP connects of one user in progress (each holds one of iwxd's 1024 paths to peers)", 256 },
	[LIMIT_ARENA]		= { "arena-max", "bytes one client shares with iwxd (its arena, registered memory)", 1ull << 30, true },
	[LIMIT_PDS]		= { "max-pds", "protection domains per client", 256 },
	[LIMIT_MRS]		= { "max-mrs", "memory regions per client", 65536 },
	[LIMIT_CQS]		= { "max-cqs", "completion queues per client", 1024 },
	[LIMIT_QPS]		= { "max-qps", "queue pairs per client", 1024 },
	[LIMIT_SRQS]		= { "max-srqs", "shared receive queues per client", 256 },
	[LIMIT_LISTENERS]	= { "max-listeners", "listeners per client", 64 },
	[LIMIT_REQUESTS]	= { "max-requests", "connection requests a client has not answered", 256 },
	[LIMIT_QUEUED]		= { "max-queued", "replies and events a client has not read", 8192 },
	/* a client's arena, its rings and registered memory are mapped here, one by one */
	[LIMIT_MAPS]		= { "max-maps", "mappings of one client's memory in iwxd", 4096 },
	[LIMIT_MAPS_TOTAL]	= { "maps-total", "mappings of all clients' memory (below vm.max_map_count)", 49152 },
	[LIMIT_USERS]		= { "users", "users each guaranteed 1/(2 x N) of --arena-total, --max-clients and the fast path's tables, whenever they come", 32 },
};

void limits_derive(uint64_t max[LIMIT_N])
{
	if (!max[LIMIT_CLIENTS_USER])
		max[LIMIT_CLIENTS_USER] = max[LIMIT_CLIENTS] / 4 ? max[LIMIT_CLIENTS] / 4 : 1;
	if (!max[LIMIT_MEMORY_USER])
		max[LIMIT_MEMORY_USER] = max[LIMIT_ARENA_TOTAL] / 2;
}

uint64_t limit_of_user(const struct iwxd *d, enum iwxd_limit lim)
{
	if (lim >= LIMIT_CLIENTS_USER && lim <= LIMIT_SCTP_USER)
		return d->o.max[lim];
	return USER_SHARE * d->o.max[lim];
}

struct user *user_get(struct iwxd *d, uid_t uid)
{
	struct user *u;

	for (u = d->users; u; u = u->next)
		if (u->uid == uid)
			return u;
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->uid = uid;
	u->next = d->users;
	d->users = u;
	return u;
}

void user_forget(struct iwxd *d, struct user *u)
{
	if (u->clients || u->bytes || u->lingering)
		return;
	for (int s = 0; s < SHARE_N - SHARE_FP_FIRST; s++)
		if (u->fp[s])
			return;
	IWX_LIST_UNLINK(&d->users, u);
	free(u);
}

/* Why c is refused at lim, its own limit: into c->why, for its reply and the log. */
static const char *why_client(const struct iwxd *d, struct client *c, enum iwxd_limit lim)
{
	snprintf(c->why, sizeof(c->why), "client %u (pid %d, uid %u): at the limit of %s (--%s %"
		 PRIu64 ")", c->id, (int)c->pid, (unsigned)c->uid, limits[lim].what,
		 limits[lim].flag, d->o.max[lim]);
	return c->why;
}

/* ... its user's. */
static const char *why_user(const struct iwxd *d, struct client *c, enum iwxd_limit lim)
{
	if (lim >= LIMIT_CLIENTS_USER && lim <= LIMIT_SCTP_USER)
		snprintf(c->why, sizeof(c->why), "user %u (client %u, pid %d): at the limit of %s "
			 "(--%s %" PRIu64 ")", (unsigned)c->uid, c->id, (int)c->pid, limits[lim].what,
			 limits[lim].flag, d->o.max[lim]);
	else
		snprintf(c->why, sizeof(c->why), "user %u (client %u, pid %d): its clients hold %d "
			 "clients' worth of %s (%d x --%s %" PRIu64 ")", (unsigned)c->uid, c->id,
			 (int)c->pid, USER_SHARE, limits[lim].what, USER_SHARE, limits[lim].flag,
			 d->o.max[lim]);
	return c->why;
}

const char *limit_why(const struct iwxd *d, struct client *c, enum iwxd_limit lim, bool user)
{
	return user ? why_user(d, c, lim) : why_client(d, c, lim);
}

void limit_warn(const struct iwxd *d, struct client *c, enum iwxd_limit lim, const char *action)
{
	log_warn("%s: %s", why_client(d, c, lim), action);
}

void limit_warn_user(const struct iwxd *d, struct client *c, enum iwxd_limit lim,
		     const char *action)
{
	log_warn("%s: %s", why_user(d, c, lim), action);
}

/* Said once per client, not at every retry; its reply says why each time. */
int client_refuse(const struct iwxd *d, struct client *c, enum iwxd_limit lim, int err)
{
	why_client(d, c, lim);
	if (!(c->warned & 1u << lim))
		log_warn("%s: refused", c->why);
	c->warned |= 1u << lim;
	return err;
}

int user_refuse(const struct iwxd *d, struct client *c, enum iwxd_limit lim, int err)
{
	why_user(d, c, lim);
	if (!(c->warned_user & 1u << lim))
		log_warn("%s: refused", c->why);
	c->warned_user |= 1u << lim;
	return err;
}

bool user_exempt(const struct client *c)
{
	return c->uid == 0;
}

/*
 * As ib_umem counts pinned pages against the process's RLIMIT_MEMLOCK (-ENOMEM beyond):
 * the soft limit of the client's process when it connected, by its pid (SO_PEERCRED),
 * from /proc/PID/limits, which needs no CAP_SYS_RESOURCE as prlimit(2) would.
 */
int client_memlock_read(const struct iwxd *d, struct client *c)
{
	static const char key[] = "Max locked memory";
	char path[64], line[256], soft[32] = "";
	FILE *f;

	c->memlock = RLIM_INFINITY;
	if (!d->o.memlock || user_exempt(c))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)c->pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, sizeof(key) - 1) &&
		    sscanf(line + sizeof(key) - 1, "%31s", soft) != 1)
			soft[0] = 0;
	if (f)
		fclose(f);
	if (!strcmp(soft, "unlimited"))
		return 0;
	if (!isdigit((unsigned char)soft[0])) {
		log_warn("client pid %d uid %u: its RLIMIT_MEMLOCK unreadable (%s)", (int)c->pid,
			 (unsigned)c->uid, path);
		return -ESRCH;
	}
	c->memlock = strtoull(soft, NULL, 10);
	return 0;
}

int client_memlock_room(const struct iwxd *d, struct client *c, uint64_t bytes)
{
	uint64_t held = c->arena.size + c->shm_bytes;

	(void)d;
	if (c->memlock == RLIM_INFINITY || (held <= c->memlock && bytes <= c->memlock - held))
		return 0;
	snprintf(c->why, sizeof(c->why), "client %u (pid %d, uid %u): %" PRIu64 " bytes more would "
		 "pass its RLIMIT_MEMLOCK (%" PRIu64 ", --memlock)", c->id, (int)c->pid,
		 (unsigned)c->uid, bytes, c->memlock);
	if (!c->warned_memlock)
		log_warn("%s: refused", c->why);
	c->warned_memlock = true;
	return -ENOMEM;
}

int client_room(const struct iwxd *d, struct client *c, enum iwxd_limit lim)
{
	if (c->used[lim] >= d->o.max[lim])
		return client_refuse(d, c, lim, -ENOSPC);
	if (!user_exempt(c) && c->user->used[lim] >= limit_of_user(d, lim))
		return user_refuse(d, c, lim, -ENOSPC);
	return 0;
}

void client_take(struct client *c, enum iwxd_limit lim)
{
	c->used[lim]++;
	c->user->used[lim]++;
}

void client_give(struct client *c, enum iwxd_limit lim)
{
	c->used[lim]--;
	c->user->used[lim]--;
}

int maps_take(struct iwxd *d, struct client *c, uint32_t n)
{
	if (n > d->o.max[LIMIT_MAPS] - c->used[LIMIT_MAPS])
		return client_refuse(d, c, LIMIT_MAPS, -ENOSPC);
	if (!user_exempt(c) && n > limit_of_user(d, LIMIT_MAPS) - c->user->used[LIMIT_MAPS])
		return user_refuse(d, c, LIMIT_MAPS, -ENOSPC);
	if (n > d->o.max[LIMIT_MAPS_TOTAL] - d->maps)
		return client_refuse(d, c, LIMIT_MAPS_TOTAL, -ENOSPC);
	c->used[LIMIT_MAPS] += n;
	c->user->used[LIMIT_MAPS] += n;
	d->maps += n;
	return 0;
}

void maps_give(struct iwxd *d, struct client *c, uint32_t n)
{
	c->used[LIMIT_MAPS] -= n;
	c->user->used[LIMIT_MAPS] -= n;
	d->maps -= n;
}
