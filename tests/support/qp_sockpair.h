/* SPDX-License-Identifier: MIT */
/*
 * Two engine queue pairs, A (the Initiator's side of the tests) and B, joined by a stream
 * socket pair and driven from the test's thread: each with its memory, a PD and one
 * registered buffer. For the tests of the queue pair itself (test_qp*.c).
 */
#ifndef IWX_QP_SOCKPAIR_H
#define IWX_QP_SOCKPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/rdmap.h"

#include "mem.h"
#include "qp.h"

#define OWNER	1
#define BUF_LEN	(4u << 20)

struct side {
	struct iwx_mem		*mem;
	uint32_t		pd;
	struct engine_qp	*qp;
	uint8_t			*buf;	/* registered: local write, remote read and write */
	uint32_t		stag;
	int			fd;
};

extern struct side A, B;

/* RFC 6581 set-up with CRC, IRD and ORD as given. */
struct iwx_mpa_agreed agreed(uint16_t ird, uint16_t ord);

/* Register [addr, addr + len) in s's PD; its STag. */
uint32_t reg(struct side *s, void *addr, uint64_t len, uint8_t access);

/* A and B on a new socket pair, each as agreed; attr for both (NULL: defaults). */
void pair_with(struct iwx_mpa_agreed a, struct iwx_mpa_agreed b, const struct engine_qp_attr *attr);
void pair(struct iwx_mpa_agreed a, struct iwx_mpa_agreed b);

/* The suites' init (agreed(4, 4) each) and fini. */
void qp_sockpair_setup(void);
void qp_sockpair_teardown(void);

/* Run both queue pairs until neither has anything left to do (bounded). */
void pump(void);

/* Exactly one completion waits at s (returned), or none. */
struct iwx_wc one_wc(struct side *s);
void no_wc(struct side *s);

/* len bytes at off in s's buffer, as a gather or scatter element. */
struct iwx_sge sge(struct side *s, uint64_t off, uint32_t len);

void post_recv(struct side *s, uint64_t wr_id, uint64_t off, uint32_t len);

/* A signaled request of one sge at off in s's buffer. */
void post(struct side *s, uint64_t wr_id, uint8_t op, uint64_t off, uint32_t len, uint32_t rkey,
	  uint64_t raddr);

void assert_wc(struct iwx_wc wc, uint64_t wr_id, uint8_t op, uint8_t status);

/* s's queue pair left RTS with cause want, which it sent (local) or the peer did. */
void assert_error(struct side *s, struct iwx_term_cause want, bool local);

/* Send a ULPDU (framed here) from A's socket to B, run B, decode B's Terminate into t. */
void raw_exchange(const uint8_t *ulpdu, size_t len, struct iwx_term *t);

#endif /* IWX_QP_SOCKPAIR_H */
