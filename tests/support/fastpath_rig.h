/* SPDX-License-Identifier: MIT */
/*
 * The fast path's programs (bpf/fastpath.bpf.c) driven alone, through BPF_PROG_TEST_RUN:
 * a real TCP connection from namespace a (the peer) to b (this side, whose programs
 * run), BPF memories and the slots map as iwxd makes them, and frames from the peer
 * built as TCP on b takes them. Shared by the programs' tests
 * (tests/integration/test_fastpath_bpf.c) and their fuzzer (tests/fuzz/fuzz_fastpath.c).
 */
#ifndef IWX_FASTPATH_RIG_H
#define IWX_FASTPATH_RIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fastpath_maps.h"

#include "fastpath.skel.h"
#include "netns.h"

#define FP_RIG_FRAME_MAX	4096	/* BPF_PROG_TEST_RUN takes up to a page at TC */
/* ... and at XDP (xdp.frags) puts what passes a page into fragments, as a NIC's do */
#define FP_RIG_XDP_FRAME_MAX	16384

/* The connection, as the peer's segments name it and as TCP on b stands. */
struct fp_rig_conn {
	int			lfd, cfd, sfd;	/* b's listener, a's socket, b's socket */
	struct iwx_fp_key	key;		/* as the peer's packets carry it */
	uint64_t		cookie;		/* SO_COOKIE of b's socket */
	uint32_t		rcv_nxt;	/* b's: where the peer's next byte goes */
	uint32_t		ack;		/* what b sent: the peer's rcv_nxt */
	uint32_t		tsval;		/* the peer's timestamp clock now */
};

/*
 * Connect a to b over IPv4 or IPv6 (nothing sent yet) and read both sides' sequence
 * numbers through skel's iwx_anchor. 0 or -errno; fp_rig_close undoes it either way.
 */
int fp_rig_connect(const struct netns_pair *ns, struct fastpath_bpf *skel, bool v6,
		   struct fp_rig_conn *c);
void fp_rig_close(struct fp_rig_conn *c);

/*
 * A memory of elems 4 KiB elements, as iwxd registers one, at index idx of iwx_fp_mems,
 * mapped at *mem: its fd or -errno.
 */
int fp_rig_memory(struct fastpath_bpf *skel, uint32_t idx, uint32_t elems, uint8_t **mem);

/* The slots map, mapped (its length at *len): NULL on failure. */
struct iwx_fp_slot *fp_rig_slots(struct fastpath_bpf *skel, size_t *len);

/* One segment from the peer: TCP's header fields the tests and the fuzzer choose. */
struct fp_rig_seg {
	uint32_t	seq, ack;
	uint8_t		flags;		/* byte 13 of the TCP header */
	bool		ts;		/* a timestamp option, TSval tsval */
	uint32_t	tsval;
	bool		vlan;		/* a VLAN tag (id 42) after the MAC addresses */
	uint8_t		dst_mac[6];	/* zero: BPF_PROG_TEST_RUN's device, lo */
};

/*
 * Ethernet, IP and TCP (checksums right) from the peer to b, then plen bytes of payload,
 * into b (cap bytes): the frame's length, 0 when it does not fit.
 */
size_t fp_rig_frame(uint8_t *b, size_t cap, const struct iwx_fp_key *key,
		    const struct fp_rig_seg *s, const uint8_t *payload, size_t plen);

/*
 * Run prog (iwx_tc or iwx_xdp) on the frame, in the calling thread's namespace (b's):
 * the program's return value, or -1000 when the run itself failed.
 */
int fp_rig_run(struct bpf_program *prog, const uint8_t *frame, size_t len);

#endif /* IWX_FASTPATH_RIG_H */
