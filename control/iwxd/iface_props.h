/* SPDX-License-Identifier: MIT */
/*
 * What the kernel says of an interface the fast path attaches to that changes what it can
 * do there: its driver, and on which CPU its receive runs.
 */
#ifndef IWXD_IFACE_PROPS_H
#define IWXD_IFACE_PROPS_H

#include <stdbool.h>
#include <sys/socket.h>

/*
 * Is ifindex a veth? Its peer hands it TCP segments with their checksums unfinished
 * (CHECKSUM_PARTIAL) unless told otherwise, and XDP, told nothing of that, cannot
 * verify them: the fast path places nothing from such packets there.
 */
bool iface_is_veth(int ifindex);

/*
 * Does the veth ifindex (named name) receive on the CPU of whoever sent to it, with more
 * than one CPU online? A veth has no interrupt: its peer's transmit runs its receive, at
 * TC ingress unless RPS steers it (a queue's rps_cpus), at XDP unless its NAPI is
 * threaded. The fast path's copy then runs on the sender's time, where iwxd without it
 * would have copied on its own CPU. False when unknown (no /sys of this namespace).
 */
bool iface_receives_on_sender(int ifindex, const char *name, bool xdp);

/* The index of the interface holding the local address addr (a connection's), 0 if none. */
int iface_of_addr(const struct sockaddr_storage *addr);

#endif /* IWXD_IFACE_PROPS_H */
