/* SPDX-License-Identifier: MIT */
/*
 * Least privilege: once iwxd has bound its socket (which may need it to make the socket's
 * directory, and CAP_CHOWN to give the socket to --group's group), it keeps only the
 * capabilities that requests need at any time, and drops every other one.
 */
#ifndef IWXD_PRIVS_H
#define IWXD_PRIVS_H

/*
 * Keep in the effective and permitted sets only those of privs.c's list that are
 * permitted now; drop the rest from the bounding set too where iwxd may (CAP_SETPCAP),
 * and empty the inheritable and ambient sets. Capabilities are a thread's: call it
 * before iwxd starts any. 0 or -errno.
 */
int privs_drop(void);

#endif /* IWXD_PRIVS_H */
