/* SPDX-License-Identifier: MIT */
/*
 * Set-up tests written once for every transport (conn_pair.h): the MPA exchange of
 * RFC 5044 §7.1 with RFC 6581 is conn.c's one machine, so the same Requests meet the same
 * answers, rejects, time-outs and MPA errors over TCP and SCTP. Each transport's suite
 * registers the tests below with CONN_TESTS(suite, pair): Test(suite, name) running
 * conn_test_name(pair). Here rather than in tests/integration: the SCTP suite is in
 * `make check`, which links tests/support but not tests/integration.
 */
#ifndef IWX_CONN_TESTS_H
#define IWX_CONN_TESTS_H

#include "conn_pair.h"

/* s: the suite, p: its pair */
#define CONN_TEST_LIST(X, s, p) \
	X(s, p, silent_initiator_times_out) X(s, p, nobody_listens) \
	X(s, p, garbage_request_rejected)

#define CONN_TEST_DECLARE(suite, pair, name)	void conn_test_##name(struct conn_pair *p);
CONN_TEST_LIST(CONN_TEST_DECLARE, , )

#define CONN_TEST_REGISTER(suite, pair, name)	Test(suite, name) { conn_test_##name(pair); }
#define CONN_TESTS(suite, pair)			CONN_TEST_LIST(CONN_TEST_REGISTER, suite, pair)

/*
 * Bodies a transport's suite registers itself, to check after them what is its own (the
 * mode agreed, the wire); each leaves its ends open for that, the suite's fini closes them.
 */

/*
 * Private data both ways, the largest one way, and IRD/ORD lowered as RFC 6581 has it;
 * revision 2 agreed; a's set-up reads exactly the Reply, leaving what b sent behind it.
 */
void conn_test_established_private_data_both_ways(struct conn_pair *p);

/* b rejects with private data: a is refused and gets it. */
void conn_test_reject_with_private_data(struct conn_pair *p);

/* b takes the connection and never answers: a gives up on time. */
void conn_test_silent_responder_times_out(struct conn_pair *p);

/*
 * RFC 6581 §6: a Request offering Read and Send as RTR to a b that takes a Write only:
 * the answer is a reject, -EPROTO with "no matching RTR", whatever b's application wanted.
 */
void conn_test_request_without_write_rtr(struct conn_pair *p);

#endif /* IWX_CONN_TESTS_H */
