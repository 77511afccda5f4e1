/* SPDX-License-Identifier: MIT */
/*
 * A hostile client for tests and benchmarks (issue 27): it makes queue pairs and
 * completion queues on an iwxd through libiwx, posts nothing, and sets every bit of its
 * doorbell page that reaches them, over and over, without end; when iwxd says it sleeps,
 * it writes the doorbell eventfd as well. Each bell costs iwxd a look for nothing.
 */
#ifndef IWX_RINGER_H
#define IWX_RINGER_H

#include <stdint.h>
#include <sys/types.h>

/*
 * In this process: open a device on the iwxd at socket, make nqps queue pairs, each on a
 * CQ of its own, write a newline to ready_fd (-1: none) once it rings, and ring until
 * killed. Returns only on failure: -errno.
 */
int ringer_run(const char *socket, uint32_t nqps, int ready_fd);

/*
 * ringer_run in a child that dies with its parent: its pid once it rings, or -errno (the
 * child is gone then). ringer_stop kills it and waits for it.
 */
pid_t ringer_start(const char *socket, uint32_t nqps);
void ringer_stop(pid_t pid);

#endif /* IWX_RINGER_H */
