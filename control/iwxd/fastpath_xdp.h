/* SPDX-License-Identifier: MIT */
/*
 * The fast path at XDP, through libxdp: its dispatcher lets other XDP programs run on the
 * same interface. Unlike a tcx link, what libxdp attaches stays after the process: an
 * iwxd that dies leaves its program (which then places nothing: its sockets are gone),
 * and the next iwxd removes it.
 */
#ifndef IWXD_FASTPATH_XDP_H
#define IWXD_FASTPATH_XDP_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct xdp_program;

/*
 * Attach the XDP program prog_name of the object skel_obj was opened from (its ELF,
 * elf/len), using skel_obj's maps, in native mode to ifindex. 0 with *out, or -errno.
 * The fast path's (iwx_xdp) and SCTP's (iwx_sctp_xsk, sctp_io.c) go through here.
 */
int fastpath_xdp_attach(const struct bpf_object *skel_obj, const void *elf, size_t len,
			const char *prog_name, int ifindex, struct xdp_program **out);
void fastpath_xdp_detach(struct xdp_program *p, int ifindex);

/* Remove the XDP programs a dead iwxd left on any interface here. */
void fastpath_xdp_remove_stale(void);

#endif /* IWXD_FASTPATH_XDP_H */
