/* SPDX-License-Identifier: MIT */
/*
 * Network faults for integration tests, without netem: the injector of
 * tests/bpf/faults.bpf.c at TC egress of a veth end, which drops, duplicates, reorders
 * or corrupts TCP segments with payload at given rates (or drops and duplicates UDP
 * datagrams to a port), or races one segment with a forged copy; the htb qdisc its
 * reordering needs, and a slow link's tbf; and the filter that drops the forged copies
 * marked for it.
 */
#include "faults_shared.h"
#ifndef IWX_FAULTS_H
#define IWX_FAULTS_H

#include <stdint.h>

/*
 * Rates per million segments with payload (as TCP hands them to the device); seed. A
 * corruption flips a byte of FPDU payload at random, past the 16 header bytes of the
 * FPDU a wire segment starts with and before its CRC; with corrupt_at, the bits of
 * corrupt_xor of that byte of a wire segment instead (FAULTS_AT(n), n from 0).
 */
struct faults_conf {
	uint64_t	seed;
	uint32_t	drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
	uint32_t	corrupt_at;
	uint8_t		corrupt_xor;
	uint16_t	udp_port;	/* nonzero: UDP datagrams to this port instead, dropped or
					   duplicated at drop_ppm, dup_ppm (SCTP in UDP) */
	uint32_t	drop_at;	/* FAULTS_AT(n): the n-th segment or datagram seen dropped */
	/*
	 * FAULTS_AT(n): the n-th new segment whose first wire segment is one FPDU of
	 * forge_len bytes (or the first after it that the device takes a copy of, should its
	 * queue be full) is preceded by a forged copy that the receiver's TCP refuses
	 * (forge_how, enum faults_forge): in its first FPDU, the 2 bytes at the even
	 * forge_flip flipped (0x5a5a), forge_crc XORed into its last 4, so that its MPA CRC
	 * holds over the forged payload.
	 */
	uint32_t	forge_at, forge_len, forge_flip;
	uint8_t		forge_crc[4];
	uint32_t	forge_how;
};

#define FAULTS_AT(n)	((n) + 1)

/* What the injector did. */
struct faults_counts {
	uint64_t	seen, dropped, duplicated, reordered, corrupted;
	uint64_t	corrupt_seq;	/* TCP sequence number of the last byte corrupted */
	uint64_t	forge_seen;	/* segments that could have been forged */
	uint64_t	forged;		/* forged copies sent */
	uint64_t	marked_dropped;	/* the filter: marked copies dropped */
};

struct faults;

/*
 * Load the injector with c and attach it at TC egress of dev in namespace ns: 0 with
 * *out, or -errno. For reordering, add the htb qdisc first (faults_htb_add).
 */
int faults_attach(struct faults **out, const char *ns, const char *dev, const struct faults_conf *c);

/* New rates and seed, from the next segment on (the count of segments goes on). */
void faults_set(struct faults *f, const struct faults_conf *c);

struct faults_counts faults_counts(const struct faults *f);

/*
 * The filter, at TC ingress of dev in namespace ns after the programs attached there
 * already (the fast path's): it drops the copies forged with FAULTS_FORGE_TOS, as a
 * firewall the fast path cannot see would. 0 with *out (faults_detach frees it), or -errno.
 */
int faults_attach_filter(struct faults **out, const char *ns, const char *dev);

/* Detach and free; NULL is fine. */
void faults_detach(struct faults *f);

/*
 * The root qdisc that makes reordering: htb with a fast default class and a slow one
 * that the injector sends delayed segments to. 0 or -errno; faults_qdisc_del removes it
 * (and is safe to call when there is none).
 */
int faults_htb_add(const char *ns, const char *dev);

/* The root qdisc of a slow link: rate as tc says it ("100mbit"). 0 or -errno. */
int faults_rate_add(const char *ns, const char *dev, const char *rate);

/* Remove dev's root qdisc, whichever of the two. */
void faults_qdisc_del(const char *ns, const char *dev);

/* A TcpExt counter of namespace ns, as nstat names it less "TcpExt" ("TCPOFOQueue"); -errno. */
int64_t faults_tcp_stat(const char *ns, const char *name);

#endif /* IWX_FAULTS_H */
