/* SPDX-License-Identifier: MIT */
/*
 * iwxd's SCTP, for DDP over SCTP (docs/ddp-over-sctp.md): the usrsctp stack of the
 * engine (sctp.h), the UDP socket its packets travel in (sctp_udp.h, --sctp-port), its
 * clock, and its sockets' readiness. usrsctp's sockets have no descriptors: a socket's
 * watch runs (watch_ready) whenever usrsctp says something changed on it.
 */
#ifndef IWXD_SCTP_IO_H
#define IWXD_SCTP_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sctp.h"

struct iwxd;
struct iwx_ipc_status;
struct watch;
struct socket;

/* Open the UDP socket on --sctp-port (0: SCTP off) and start the stack. 0 or -errno. */
int sctp_io_start(struct iwxd *d);
void sctp_io_stop(struct iwxd *d);

/* Is SCTP on? Requests for it fail with -EPROTONOSUPPORT otherwise. */
bool sctp_io_on(const struct iwxd *d);

/* Run w whenever so changes (and once now); unwatch before so is closed or w goes. */
void sctp_io_watch(struct iwxd *d, struct socket *so, struct watch *w);
void sctp_io_unwatch(struct iwxd *d, struct socket *so, struct watch *w);

/*
 * The peer of so's association as an application names it: the IP address its UDP
 * datagrams come from, and its SCTP port. 0 or -errno.
 */
int sctp_io_peer(struct socket *so, struct sockaddr_storage *peer);

/*
 * The path to the iwxd at addr (its --sctp-port, taken to be ours), held by a connect's
 * set-up until sctp_io_path_put. NULL with errno (ENOSPC: every path taken).
 */
struct iwx_sctp_path *sctp_io_path(struct iwxd *d, const struct sockaddr_storage *addr);
/* The set-up that holds path ended: unanswered, it goes now (sctp_udp.h). */
void sctp_io_path_put(struct iwx_sctp_path *path);

/*
 * Something of iwxd's has an SCTP socket (a set-up, a listener, a queue pair), or no
 * longer: the stack's clock runs only while something does, and a while after (the
 * association's shutdown), so that a daemon without SCTP sockets sleeps as before.
 */
void sctp_io_hold(struct iwxd *d);
void sctp_io_release(struct iwxd *d);

/*
 * SCTP's datagrams on ifindex through AF_XDP sockets, one per receive queue, beside the
 * fast path there (iwx attach); where that cannot be, they stay in the UDP socket, as
 * logged. Paths move to an XSK as their peers' datagrams arrive on it (sctp_xsk.h).
 */
void sctp_io_xsk_attach(struct iwxd *d, int ifindex, const char *ifname);
void sctp_io_xsk_detach(struct iwxd *d, int ifindex);
/* Tell the kernel of the frames queued on the AF_XDP sockets: before the loop may sleep. */
void sctp_io_flush(struct iwxd *d);
/* The AF_XDP sockets on ifindex (0: none). */
uint32_t sctp_io_xsk_queues(const struct iwxd *d, int ifindex);
/* Do so's packets go through an AF_XDP socket now? */
bool sctp_io_via_xsk(struct socket *so);
/* The stack's counters, for `iwx status`. */
void sctp_io_status(const struct iwxd *d, struct iwx_ipc_status *st);

/* The stack's clock: a tick every IWX_SCTP_TICK_MS while it runs. */
void sctp_io_timers(struct iwxd *d, uint64_t now);

#endif /* IWXD_SCTP_IO_H */
