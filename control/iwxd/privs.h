/* SPDX-License-Identifier: MIT */
/*
 * Least privilege: once iwxd has bound its socket (which may need it to make the socket's
 * directory, and CAP_CHOWN to give the socket to --group's group), it keeps only the
 * capabilities that requests need, and drops every other one; CAP_SYS_ADMIN it keeps
 * permitted but not effective, raised only while libxdp attaches or detaches.
 */
#ifndef IWXD_PRIVS_H
#define IWXD_PRIVS_H

#include <stdbool.h>

/*
 * Keep in the permitted set only those of privs.c's list that are permitted now, and in
 * the effective set those of them needed at any time (all but CAP_SYS_ADMIN); drop the rest from the bounding set too where iwxd may (CAP_SETPCAP),
 * and empty the inheritable and ambient sets. Capabilities are a thread's: call it
 * before iwxd starts any. 0 or -errno.
 */
int privs_drop(void);

/*
 * CAP_SYS_ADMIN in this thread's effective set (on), or out of it, where it is permitted
 * (a no-op where not): only around libxdp's calls and mounting bpffs. 0 or -errno.
 */
int privs_admin(bool on);

#endif /* IWXD_PRIVS_H */
