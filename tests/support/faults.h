/* SPDX-License-Identifier: MIT */
/*
 * Network faults for integration tests, without netem: the injector of
 * tests/bpf/faults.bpf.c at TC egress of a veth end, which drops, duplicates, reorders
 * or corrupts TCP segments with payload at given rates (or drops and duplicates UDP
 * datagrams to a port), and the htb qdisc its reordering needs.
 */
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
};

#define FAULTS_AT(n)	((n) + 1)

/* What the injector did. */
struct faults_counts {
	uint64_t	seen, dropped, duplicated, reordered, corrupted;
	uint64_t	corrupt_seq;	/* TCP sequence number of the last byte corrupted */
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

/* Detach and free; NULL is fine. */
void faults_detach(struct faults *f);

/*
 * The root qdisc that makes reordering: htb with a fast default class and a slow one
 * that the injector sends delayed segments to. 0 or -errno; faults_htb_del removes it
 * (and is safe to call when there is none).
 */
int faults_htb_add(const char *ns, const char *dev);
void faults_htb_del(const char *ns, const char *dev);

/* A TcpExt counter of namespace ns, as nstat names it less "TcpExt" ("TCPOFOQueue"); -errno. */
int64_t faults_tcp_stat(const char *ns, const char *name);

#endif /* IWX_FAULTS_H */
