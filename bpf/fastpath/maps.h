/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The fast path's maps: those iwxd fills and reads (the layouts of their values in
 * fastpath_maps.h), and the per-CPU state the programs keep off their 512-byte stack.
 * Like every header of bpf/fastpath/, included once, into fastpath.bpf.c: one object.
 */
#ifndef IWX_BPF_FP_MAPS_H
#define IWX_BPF_FP_MAPS_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#include "fastpath_maps.h"
#include "proto/wire.h"

#define TAGGED_HDR	(IWX_MPA_HDR_LEN + IWX_DDP_TAGGED_HDR_LEN)

/* 4-tuple -> connection; iwxd fills it when a connection enters full operation. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct iwx_fp_key);
	__type(value, struct iwx_fp_conn);
} iwx_fp_conns SEC(".maps");

/*
 * The connection again, kept with its socket: what iwx_accepted asks of every segment the
 * host's TCP takes, answered at once for a socket iwxd does not follow (no lookup).
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct iwx_fp_conn);
} iwx_fp_socks SEC(".maps");

/* A connection's stream state, records and counters: memory iwxd maps too. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 64);	/* connections followed at once: 129 KiB each */
	__type(key, __u32);
	__type(value, struct iwx_fp_slot);
} iwx_fp_slots SEC(".maps");

/* STag -> the region and where its bytes are. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct iwx_fp_stag);
} iwx_fp_stags SEC(".maps");

/* The memories regions lie in: clients' arenas and shared memory, 4 KiB elements each. */
struct iwx_fp_mem {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__uint(key_size, 4);	/* sizes, no BTF types: libbpf 1.1 cannot size one for an inner map */
	__uint(value_size, 4096);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__array(values, struct iwx_fp_mem);
} iwx_fp_mems SEC(".maps");

/* ifindex -> counters of the interface. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct iwx_fp_counters);
} iwx_fp_ifaces SEC(".maps");

/* Per CPU: odd while a program runs there (iwxd waits for even after a change). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);	/* iwxd sets the number of possible CPUs */
	__type(key, __u32);
	__type(value, struct iwx_fp_cpu);
} iwx_fp_cpus SEC(".maps");

/* Per CPU: what the program sums when it checks a checksum. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, 4);
	__uint(value_size, 4096);
} iwx_fp_scratch SEC(".maps");

/*
 * Per CPU: where the copy in progress is (copy_chunk). In a map, not on the stack: the
 * verifier then sees one state for every piece, not one for each size a read takes.
 */
struct iwx_fp_copying {
	__u64	to;		/* the memory's byte the next piece goes to */
	__u32	from, left;	/* the packet's byte it comes from; the bytes still to copy */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iwx_fp_copying);
} iwx_fp_copying SEC(".maps");

/*
 * Per CPU: the FPDU the walk is at, as iwx_place_fpdu takes it (where it is, what it is,
 * no pointers: a global function's memory holds none). In a map, not on the stack: the
 * stack of the calls to the copy's reads stays under 512 bytes.
 */
struct fpdu {
	/* MPA, DDP and RDMAP headers, markers left out; aligned, so that STag and TO are
	   whole words (the tagged header's packed fields read byte by byte) */
	__u8	hdr[TAGGED_HDR] __attribute__((aligned(8)));
	__u32	ulen;			/* its ULPDU_LENGTH */
	__u32	off;			/* where it starts in the packet */
	__u32	seq;			/* the TCP sequence number of that start */
	__u32	pos;			/* the stream position of that start (markers) */
	__u32	pd;			/* the connection's protection domain */
	bool	markers;		/* the stream has MPA markers */
	bool	ahead;			/* the packet came before bytes in front of it */
	bool	ends;			/* out: a message's last segment came (its end is iwxd's) */
	__u32	end;			/* the end of the packet's payload */
	/* out, without markers: its trailer and the next FPDU's header, read as one */
	__u32	next_off;		/* where that header is in the packet (0: not read; a
					   walk starts without, and offsets only grow in one) */
	__u32	next_at;		/* ... and in tail */
	__u8	tail[IWX_MPA_TAIL_MAX + TAGGED_HDR];
	/* the STag the walk placed through last, as it was then (iwx_place_fpdu) */
	struct iwx_fp_stag st;
	bool	st_held;		/* st holds one (a walk starts without) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fpdu);
} iwx_fp_fpdu SEC(".maps");

/* Slots whose iwxd is to wake up (fastpath_maps.h: Wake-ups): at most one record each
 * while lazy, so a page holds them all. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} iwx_fp_bells SEC(".maps");

/* iwx_anchor: the socket whose read position iwxd asks for. */
__u64 anchor_cookie;

/* The key of the per-CPU maps' one element: in .rodata, not on the stack of the calls that
   copy, whose frames together stay under the 512 bytes the verifier allows. */
static const __u32 zero_key = 0;

#endif /* IWX_BPF_FP_MAPS_H */
