// SPDX-License-Identifier: MIT
/* MPA set-up negotiation (RFC 6581): answers as siw gives them, and both sides agree. */
#include <criterion/criterion.h>
#include <errno.h>

#include "proto/mpa_setup.h"

#include "testutil.h"

static const struct iwx_mpa_local iwx_default = {
	.rev = 2, .crc = true, .ird = 16, .ord = 16, .rtr = IWX_RTR_SEND | IWX_RTR_WRITE | IWX_RTR_READ,
};

static size_t encode(const struct iwx_mpa_rr_params *p, uint8_t *f)
{
	ssize_t n = iwx_mpa_rr_encode(f, 1024, p);

	cr_assert_gt(n, 0);
	return n;
}

static void decode(const uint8_t *f, size_t n, bool reply, struct iwx_mpa_rr_params *p)
{
	cr_assert_eq(iwx_mpa_rr_decode(f, n, reply, p), (ssize_t)n);
}

/* siw's rping request (C, H, IRD 1, ORD 1) gets what siw itself answers. */
Test(mpa_setup, reply_to_siw_request_matches_siw_reply)
{
	uint8_t f[64], want[64], got[64];
	size_t n = hex_decode("4d504120494420526571204672616d65 50 02 0004 0001 0001", f, sizeof(f));
	struct iwx_mpa_local l = iwx_default;
	struct iwx_mpa_rr_params req, rep;
	struct iwx_mpa_agreed a;
	struct iwx_term_cause c;

	l.crc = false;	/* siw asked for CRC: it is on all the same */
	decode(f, n, false, &req);
	cr_assert_eq(iwx_mpa_setup_reply(&l, &req, NULL, 0, false, &rep, &a, &c), 0);
	n = hex_decode("4d504120494420526570204672616d65 50 02 0004 0001 0001", want, sizeof(want));
	cr_assert_eq(encode(&rep, got), n);
	cr_assert_arr_eq(got, want, n);
	cr_assert(a.mode.crc && !a.mode.markers_rx && !a.mode.markers_tx);
	cr_assert_eq(a.mode.rev, 2);
	cr_assert(a.enhanced);
	cr_assert_eq(a.ird, 1);
	cr_assert_eq(a.ord, 1);
	cr_assert_eq(a.rtr, 0);
}

/* Interop README: a request with P and write-RTR gets IRD/ORD words 8001 8001 from siw. */
Test(mpa_setup, peer_to_peer_picks_one_offered_rtr)
{
	struct iwx_mpa_local init = iwx_default, resp = iwx_default;
	struct iwx_mpa_rr_params req, rep;
	struct iwx_mpa_agreed a, b;
	struct iwx_term_cause c;
	uint8_t f[64];

	init.ird = init.ord = 1;
	init.p2p = true;
	init.rtr = IWX_RTR_WRITE;
	iwx_mpa_setup_request(&init, NULL, 0, &req);
	cr_assert_eq(iwx_mpa_setup_reply(&resp, &req, NULL, 0, false, &rep, &a, &c), 0);
	cr_assert_eq(a.rtr, IWX_RTR_WRITE);
	size_t n = encode(&rep, f);

	cr_assert_eq(n, 24);
	cr_assert_eq(f[20] << 8 | f[21], 0x8001);
	cr_assert_eq(f[22] << 8 | f[23], 0x8001);
	cr_assert_eq(iwx_mpa_setup_accept(&init, &req, &rep, &b, &c), 0);
	cr_assert_eq(b.rtr, IWX_RTR_WRITE);

	/* offered several: the Responder prefers a zero-length Write, then Read, then Send */
	init.rtr = IWX_RTR_SEND | IWX_RTR_READ;
	iwx_mpa_setup_request(&init, NULL, 0, &req);
	cr_assert_eq(iwx_mpa_setup_reply(&resp, &req, NULL, 0, false, &rep, &a, &c), 0);
	cr_assert_eq(a.rtr, IWX_RTR_READ);
}

Test(mpa_setup, no_common_rtr_is_rejected_with_its_cause)
{
	struct iwx_mpa_local init = iwx_default, resp = iwx_default;
	struct iwx_mpa_rr_params req, rep;
	struct iwx_mpa_agreed a;
	struct iwx_term_cause c;

	init.p2p = true;
	init.rtr = IWX_RTR_SEND;
	resp.rtr = IWX_RTR_WRITE;
	iwx_mpa_setup_request(&init, NULL, 0, &req);
	cr_assert_eq(iwx_mpa_setup_reply(&resp, &req, NULL, 0, false, &rep, &a, &c), -EPROTO);
	cr_assert(rep.reject);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR)));
}

Test(mpa_setup, revision_1_request_gets_revision_1_reply)
{
	struct iwx_mpa_local old = { .rev = 1, .markers = true, .ird = 4, .ord = 4 };
	struct iwx_mpa_rr_params req, rep;
	struct iwx_mpa_agreed a, b;
	struct iwx_term_cause c;

	iwx_mpa_setup_request(&old, NULL, 0, &req);
	cr_assert(!req.enhanced);
	cr_assert_eq(iwx_mpa_setup_reply(&iwx_default, &req, NULL, 0, false, &rep, &a, &c), 0);
	cr_assert_eq(rep.rev, 1);
	cr_assert(!rep.enhanced && rep.crc);
	cr_assert(a.mode.markers_tx && !a.mode.markers_rx, "the Initiator asked for markers");
	cr_assert_eq(a.ird, 16, "no negotiation in revision 1: local limits stand");
	cr_assert_eq(iwx_mpa_setup_accept(&old, &req, &rep, &b, &c), 0);
	cr_assert(b.mode.crc && b.mode.markers_rx && !b.mode.markers_tx);
	cr_assert_eq(b.mode.rev, 1);
}

Test(mpa_setup, both_sides_agree_through_the_wire)
{
	const char hello[] = "hello", welcome[] = "welcome";
	struct iwx_mpa_local init = iwx_default, resp = iwx_default;
	struct iwx_mpa_rr_params req, req_rx, rep, rep_rx;
	struct iwx_mpa_agreed ai, ar;
	struct iwx_term_cause c;
	uint8_t f[1024];

	init.ord = 64;
	init.ird = 2;
	init.markers = true;
	resp.ird = 8;
	resp.crc = false;
	iwx_mpa_setup_request(&init, (const uint8_t *)hello, sizeof(hello), &req);
	decode(f, encode(&req, f), false, &req_rx);
	cr_assert_str_eq((const char *)req_rx.pd, hello);
	cr_assert_eq(iwx_mpa_setup_reply(&resp, &req_rx, (const uint8_t *)welcome,
					 sizeof(welcome), false, &rep, &ar, &c), 0);
	decode(f, encode(&rep, f), true, &rep_rx);
	cr_assert_str_eq((const char *)rep_rx.pd, welcome);
	cr_assert_eq(iwx_mpa_setup_accept(&init, &req, &rep_rx, &ai, &c), 0);

	cr_assert(ai.mode.crc && ar.mode.crc, "CRC if either asks");
	cr_assert(ai.mode.markers_rx && ar.mode.markers_tx);
	cr_assert(!ai.mode.markers_tx && !ar.mode.markers_rx);
	cr_assert_eq(ai.ord, 8, "Initiator ORD lowered to the Responder's IRD");
	cr_assert_leq(ar.ord, ai.ird, "Responder ORD within the Initiator's IRD");
	cr_assert_eq(ar.ird, 8);
}

Test(mpa_setup, initiator_refuses_replies_that_do_not_answer)
{
	struct iwx_mpa_local init = iwx_default;
	struct iwx_mpa_rr_params req, rep;
	struct iwx_mpa_agreed a;
	struct iwx_term_cause c;

	init.rev = 1;
	iwx_mpa_setup_request(&init, NULL, 0, &req);
	rep = (struct iwx_mpa_rr_params){ .reply = true, .rev = 2 };
	cr_assert_eq(iwx_mpa_setup_accept(&init, &req, &rep, &a, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR)));
	rep.rev = 1;
	rep.reject = true;
	cr_assert_eq(iwx_mpa_setup_accept(&init, &req, &rep, &a, &c), -ECONNREFUSED);

	/* peer-to-peer: the Reply must name exactly one offered RTR type */
	init = iwx_default;
	init.p2p = true;
	init.rtr = IWX_RTR_WRITE;
	iwx_mpa_setup_request(&init, NULL, 0, &req);
	rep = (struct iwx_mpa_rr_params){ .reply = true, .rev = 2, .enhanced = true, .p2p = true,
					  .rtr_write = true, .rtr_read = true };
	cr_assert_eq(iwx_mpa_setup_accept(&init, &req, &rep, &a, &c), -EPROTO);
	cr_assert(iwx_cause_eq(c, IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR)));
	rep.rtr_write = false;
	cr_assert_eq(iwx_mpa_setup_accept(&init, &req, &rep, &a, &c), -EPROTO, "not offered");
}

Test(mpa_setup, reject_carries_private_data)
{
	const char why[] = "go away";
	struct iwx_mpa_rr_params req, rep;
	struct iwx_mpa_agreed a;
	struct iwx_term_cause c;

	iwx_mpa_setup_request(&iwx_default, NULL, 0, &req);
	cr_assert_eq(iwx_mpa_setup_reply(&iwx_default, &req, (const uint8_t *)why, sizeof(why),
					 true, &rep, &a, &c), 0);
	cr_assert(rep.reject);
	cr_assert_eq(rep.pd_len, sizeof(why));
}
