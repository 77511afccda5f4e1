/* SPDX-License-Identifier: MIT */
/*
 * Queue pair tests written once for every transport (qp_pair.h): RDMAP's operations
 * move the same bytes, and the same errors end the stream with the same Terminate
 * (RFC 5040 §7, RFC 5041 §7; over SCTP the shim keeps DDP's checks and causes,
 * draft-otis-sctp-ddp §3.2.1 R3). Each transport's suite registers them on its fixture
 * with QP_TESTS(suite, pair): Test(suite, name) running qp_test_name(pair).
 */
#ifndef IWX_QP_TESTS_H
#define IWX_QP_TESTS_H

#include <stdint.h>

#include "qp_pair.h"

/* s: the suite, p: its pair */
#define QP_TEST_LIST(X, s, p) \
	/* data, every byte checked */ \
	X(s, p, write_read_and_send_megabytes) X(s, p, many_outstanding_writes_and_sends) \
	X(s, p, every_operation_at_every_size) X(s, p, write_source_reused_once_completed) \
	/* a bad RDMA Write: B terminates */ \
	X(s, p, write_to_unknown_stag) X(s, p, write_with_wrong_key) X(s, p, write_out_of_bounds) \
	X(s, p, write_without_remote_write_access) X(s, p, write_to_stag_of_another_pd) \
	X(s, p, write_whose_tagged_offset_wraps) \
	/* a bad Send */ \
	X(s, p, send_with_no_posted_receive) X(s, p, send_longer_than_the_receive_buffer) \
	X(s, p, send_with_invalidate_of_another_pds_stag) \
	/* a bad Read Request: B terminates, A's Read completes in error */ \
	X(s, p, read_with_bad_source_completes_in_error) X(s, p, read_of_unreadable_region)

#define QP_TEST_DECLARE(suite, pair, name)	void qp_test_##name(struct qp_pair *p);
QP_TEST_LIST(QP_TEST_DECLARE, , )

#define QP_TEST_REGISTER(suite, pair, name)	Test(suite, name) { qp_test_##name(pair); }
#define QP_TESTS(suite, pair)			QP_TEST_LIST(QP_TEST_REGISTER, suite, pair)

/* For a transport's own tests, and its own checks after a body above: */

/* The bytes every_operation_at_every_size writes (and reads back) in all. */
uint64_t qp_every_size_bytes(void);

/* On a connected pair: a Write, a Send behind it and a Read of len bytes each, every byte checked. */
void qp_write_send_read(struct qp_pair *p, uint32_t len);

#endif /* IWX_QP_TESTS_H */
