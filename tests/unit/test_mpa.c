// SPDX-License-Identifier: MIT
/* MPA set-up frames, negotiation, MULPDU and FPDU framing (RFC 5044, RFC 6581). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "proto/crc32c.h"
#include "proto/ddp.h"
#include "proto/mpa.h"
#include "proto/rdmap.h"

#include "testutil.h"

/* rping's request as siw sends it: rev 2, C and H, IRD 1 ORD 1 (interop README). */
static const char *siw_request = "4d504120494420526571204672616d65 50 02 0004 0001 0001";

Test(mpa_rr, encode_matches_siw_request)
{
	struct iwx_mpa_rr_params p = {
		.crc = true, .rev = 2, .enhanced = true, .ird = 1, .ord = 1,
	};
	uint8_t want[64], got[64];
	size_t n = hex_decode(siw_request, want, sizeof(want));

	cr_assert_eq(iwx_mpa_rr_len(&p), n);
	cr_assert_eq(iwx_mpa_rr_encode(got, sizeof(got), &p), (ssize_t)n);
	cr_assert_arr_eq(got, want, n);
}

Test(mpa_rr, decode_siw_request)
{
	uint8_t f[64];
	size_t n = hex_decode(siw_request, f, sizeof(f));
	struct iwx_mpa_rr_params p;

	cr_assert_eq(iwx_mpa_rr_decode(f, n, false, &p), (ssize_t)n);
	cr_assert(p.crc && !p.markers && !p.reject && !p.reply);
	cr_assert_eq(p.rev, 2);
	cr_assert(p.enhanced);
	cr_assert_eq(p.ird, 1);
	cr_assert_eq(p.ord, 1);
	cr_assert(!p.p2p && !p.rtr_send && !p.rtr_write && !p.rtr_read);
	cr_assert_eq(p.pd_len, 0);
}

Test(mpa_rr, reject_reply_with_private_data_round_trip)
{
	const char pd[] = "no thanks";
	struct iwx_mpa_rr_params p = {
		.reply = true, .reject = true, .markers = true, .rev = 1,
		.pd = (const uint8_t *)pd, .pd_len = sizeof(pd),
	};
	struct iwx_mpa_rr_params q;
	uint8_t f[128];
	ssize_t n = iwx_mpa_rr_encode(f, sizeof(f), &p);

	cr_assert_eq(n, 20 + (ssize_t)sizeof(pd));
	cr_assert_arr_eq(f, IWX_MPA_KEY_REP, 16);
	cr_assert_eq(f[16], IWX_MPA_FLAG_MARKERS | IWX_MPA_FLAG_REJECT);
	cr_assert_eq(f[17], 1);
	cr_assert_eq(f[18] << 8 | f[19], sizeof(pd));
	cr_assert_eq(iwx_mpa_rr_decode(f, n, true, &q), n);
	cr_assert(q.reply && q.reject && q.markers && !q.crc && !q.enhanced);
	cr_assert_eq(q.pd_len, sizeof(pd));
	cr_assert_str_eq((const char *)q.pd, pd);
}

Test(mpa_rr, enhanced_flags_and_private_data_after_ird_ord)
{
	uint8_t app[500];
	struct iwx_mpa_rr_params p = {
		.rev = 2, .enhanced = true, .ird = 0x3fff, .ord = 128, .p2p = true,
		.rtr_write = true, .pd = app, .pd_len = 508,
	};
	struct iwx_mpa_rr_params q;
	uint8_t f[600];

	fill_pattern(app, sizeof(app), 1);
	p.pd_len = sizeof(app);
	ssize_t n = iwx_mpa_rr_encode(f, sizeof(f), &p);

	cr_assert_eq(n, 20 + 4 + 500);
	cr_assert_eq(f[16], IWX_MPA_FLAG_ENHANCED);
	cr_assert_eq(f[18] << 8 | f[19], 504);
	cr_assert_eq(f[20] << 8 | f[21], 0x8000 | 0x3fff);
	cr_assert_eq(f[22] << 8 | f[23], 0x8000 | 128);
	cr_assert_eq(iwx_mpa_rr_decode(f, n, false, &q), n);
	cr_assert(q.p2p && q.rtr_write && !q.rtr_send && !q.rtr_read);
	cr_assert_eq(q.ird, 0x3fff);
	cr_assert_eq(q.ord, 128);
	cr_assert_eq(q.pd_len, 500);
	cr_assert_arr_eq(q.pd, app, 500);
}

Test(mpa_rr, encode_refuses_what_mpa_cannot_carry)
{
	uint8_t big[600] = { 0 }, f[700];
	struct iwx_mpa_rr_params p = { .rev = 1, .pd = big, .pd_len = 513 };

	cr_assert_eq(iwx_mpa_rr_encode(f, sizeof(f), &p), -EINVAL);
	p.rev = 2;
	p.enhanced = true;
	p.pd_len = 509;		/* 4 bytes of IRD/ORD make it 513 */
	cr_assert_eq(iwx_mpa_rr_encode(f, sizeof(f), &p), -EINVAL);
	p.pd_len = 0;
	p.ird = 0x4000;
	cr_assert_eq(iwx_mpa_rr_encode(f, sizeof(f), &p), -EINVAL);
	p.ird = 0;
	p.rev = 1;
	cr_assert_eq(iwx_mpa_rr_encode(f, sizeof(f), &p), -EINVAL);
	p.rev = 3;
	p.enhanced = false;
	cr_assert_eq(iwx_mpa_rr_encode(f, sizeof(f), &p), -EINVAL);
	p.rev = 1;
	cr_assert_eq(iwx_mpa_rr_encode(f, 19, &p), -ENOSPC);
}

Test(mpa_rr, decode_errors)
{
	uint8_t f[600];
	struct iwx_mpa_rr_params p;
	size_t n = hex_decode(siw_request, f, sizeof(f));

	/* incomplete: 0, at every length short of the frame */
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(iwx_mpa_rr_decode(f, i, false, &p), 0, "prefix %zu", i);
	/* a request where a reply is expected, and a wrong key seen early */
	cr_assert_eq(iwx_mpa_rr_decode(f, n, true, &p), -EPROTO);
	cr_assert_eq(iwx_mpa_rr_decode((const uint8_t *)"GET / HTTP/1.1", 14, false, &p), -EPROTO);
	f[17] = 3;
	cr_assert_eq(iwx_mpa_rr_decode(f, n, false, &p), -EPROTONOSUPPORT);
	f[17] = 2;
	f[18] = 0x02;
	f[19] = 0x01;	/* 513 */
	cr_assert_eq(iwx_mpa_rr_decode(f, n, false, &p), -EMSGSIZE);
	f[18] = 0;
	f[19] = 2;	/* enhanced, but no room for IRD and ORD */
	cr_assert_eq(iwx_mpa_rr_decode(f, 22, false, &p), -EBADMSG);
	f[16] = 0;	/* without H the same two bytes are plain private data */
	cr_assert_eq(iwx_mpa_rr_decode(f, 22, false, &p), 22);
	cr_assert_eq(p.pd_len, 2);
}

Test(mpa_rr, revision_1_ignores_h)
{
	uint8_t f[64];
	struct iwx_mpa_rr_params p;
	size_t n = hex_decode("4d504120494420526570204672616d65 50 01 0004 0001 0001", f, sizeof(f));

	cr_assert_eq(iwx_mpa_rr_decode(f, n, true, &p), (ssize_t)n);
	cr_assert(!p.enhanced);
	cr_assert_eq(p.pd_len, 4);
}

Test(mpa_mode, crc_either_side_markers_per_direction)
{
	struct iwx_mpa_rr_params a = { .rev = 2, .crc = false, .markers = true };
	struct iwx_mpa_rr_params b = { .rev = 1, .crc = true, .markers = false };
	struct iwx_mpa_mode m = iwx_mpa_mode_of(&a, &b);

	cr_assert(m.crc && m.markers_rx && !m.markers_tx);
	cr_assert_eq(m.rev, 1);
	m = iwx_mpa_mode_of(&b, &a);
	cr_assert(m.crc && !m.markers_rx && m.markers_tx);
}

Test(mpa_mulpdu, from_emss)
{
	cr_assert_eq(iwx_mpa_mulpdu(1448, false), 1442);	/* siw with timestamps */
	cr_assert_eq(iwx_mpa_mulpdu(1460, false), 1454);
	cr_assert_eq(iwx_mpa_mulpdu(1450, false), 1442);	/* EMSS mod 4 */
	cr_assert_eq(iwx_mpa_mulpdu(1448, true), 1448 - 6 - 4 * 3);
	cr_assert_eq(iwx_mpa_mulpdu(8960, true), 8960 - 6 - 4 * 18);
	cr_assert_eq(iwx_mpa_mulpdu(4, false), 0);
}

Test(mpa_fpdu, pad_lengths)
{
	cr_assert_eq(iwx_mpa_pad_len(14), 0);
	cr_assert_eq(iwx_mpa_pad_len(18), 0);
	cr_assert_eq(iwx_mpa_pad_len(15), 3);
	cr_assert_eq(iwx_mpa_pad_len(16), 2);
	cr_assert_eq(iwx_mpa_pad_len(17), 1);
	cr_assert_eq(iwx_mpa_pad_len(0), 2);
}

/* Our Send and Read Request must be byte for byte what siw put on the wire. */
Test(mpa_fpdu, reproduces_siw_send_and_read_request)
{
	struct iwx_mpa_mode mode = { .rev = 2, .crc = true };
	struct iwx_mpa_tx tx;
	uint8_t want[128], got[128], hdr[18], pay[16], rr_pay[IWX_RDMAP_READ_REQ_LEN];
	size_t n = hex_decode(siw_client_fpdus[0], want, sizeof(want));
	struct iwx_ddp_msg send = { .opcode = IWX_OP_SEND, .msn = 1, .len = 16 };
	struct iwx_read_req rr = {
		.sink_stag = 0x7c108b00, .sink_to = 0x000055bf4ce09130, .size = 64,
		.src_stag = 0x3ef3d100, .src_to = 0x0000564701ab8450,
	};
	struct iwx_ddp_msg rreq = { .opcode = IWX_OP_READ_REQ, .msn = 1, .len = sizeof(rr_pay) };

	iwx_mpa_tx_init(&tx, &mode);
	hex_decode("0000564701ab8450 3ef3d100 00000040", pay, sizeof(pay));
	size_t hl = iwx_ddp_hdr_encode(hdr, &send, 0, true);

	cr_assert_eq(iwx_mpa_fpdu_len(&tx, hl + 16), n);
	cr_assert_eq(iwx_mpa_fpdu_build(&tx, got, sizeof(got), hdr, hl, pay, 16), (ssize_t)n);
	cr_assert_arr_eq(got, want, n);

	n = hex_decode(siw_server_fpdus[0], want, sizeof(want));
	iwx_read_req_encode(rr_pay, &rr);
	hl = iwx_ddp_hdr_encode(hdr, &rreq, 0, true);
	cr_assert_eq(iwx_mpa_fpdu_build(&tx, got, sizeof(got), hdr, hl, rr_pay, sizeof(rr_pay)),
		     (ssize_t)n);
	cr_assert_arr_eq(got, want, n);
}

Test(mpa_fpdu, crc_off_sends_zero_crc)
{
	struct iwx_mpa_mode mode = { .rev = 2, .crc = false };
	struct iwx_mpa_tx tx;
	uint8_t f[64], hdr[18];
	struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = 1, .len = 1 };
	size_t hl = iwx_ddp_hdr_encode(hdr, &m, 0, true);

	iwx_mpa_tx_init(&tx, &mode);
	ssize_t n = iwx_mpa_fpdu_build(&tx, f, sizeof(f), hdr, hl, "x", 1);

	cr_assert_eq(n, 2 + 19 + 3 + 4);
	cr_assert_eq(f[0] << 8 | f[1], 19);
	cr_assert_eq(f[21] | f[22] | f[23], 0, "pad is zero");
	cr_assert_eq(iwx_crc32c_get(f + n - 4), 0);
}

Test(mpa_fpdu, limits)
{
	static uint8_t big[70000], out[70100];
	struct iwx_mpa_mode mode = { .rev = 1 };
	struct iwx_mpa_tx tx;

	iwx_mpa_tx_init(&tx, &mode);
	cr_assert_eq(iwx_mpa_fpdu_build(&tx, out, sizeof(out), big, 14, big, 65522), -EMSGSIZE);
	cr_assert_eq(iwx_mpa_fpdu_build(&tx, out, 20, big, 14, big, 10), -ENOSPC);
	cr_assert_eq(tx.pos, 0, "a refused FPDU does not move the stream");
}

/* Walk an FPDU stream and check every marker sits at a 512 mark and points right. */
static void check_markers(const uint8_t *s, size_t len, size_t *fpdus)
{
	size_t pos = 0;

	*fpdus = 0;
	while (pos < len) {
		size_t start = pos, len_pos, total;
		uint16_t ulpdu;

		if (pos % 512 == 0) {
			cr_assert_eq(s[pos] | s[pos + 1] | s[pos + 2] | s[pos + 3], 0,
				     "leading marker at %zu has FPDUPTR 0", pos);
			pos += 4;
		}
		len_pos = pos;
		ulpdu = s[pos] << 8 | s[pos + 1];
		total = 2 + ulpdu + iwx_mpa_pad_len(ulpdu) + 4;
		/* count markers inside: every 512 mark after the start */
		for (size_t m = (start / 512 + 1) * 512; m < len_pos + total; m += 512) {
			cr_assert_eq(s[m] << 24 | s[m + 1] << 16, 0, "reserved half of marker at %zu", m);
			cr_assert_eq((size_t)(s[m + 2] << 8 | s[m + 3]), m - len_pos,
				     "marker at %zu points back to %zu", m, len_pos);
			total += 4;
		}
		pos = len_pos + total;
		(*fpdus)++;
	}
	cr_assert_eq(pos, len);
}

Test(mpa_fpdu, markers_every_512_bytes_of_the_stream)
{
	struct iwx_mpa_mode mode = { .rev = 1, .crc = true, .markers_tx = true };
	struct iwx_mpa_tx tx;
	static uint8_t stream[200000], pay[3000];
	size_t at = 0, fpdus;
	uint8_t hdr[18];

	iwx_mpa_tx_init(&tx, &mode);
	fill_pattern(pay, sizeof(pay), 3);
	/* lengths chosen so FPDUs start at every 4-byte phase of the marker interval */
	for (uint32_t i = 0; i < 200; i++) {
		struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = i + 1, .len = (i * 37) % 1500 };
		size_t hl = iwx_ddp_hdr_encode(hdr, &m, 0, true);
		size_t expect = iwx_mpa_fpdu_len(&tx, hl + m.len);
		ssize_t n = iwx_mpa_fpdu_build(&tx, stream + at, sizeof(stream) - at, hdr, hl,
					       pay, m.len);

		cr_assert_eq(n, (ssize_t)expect);
		cr_assert_eq(n % 4, 0);
		at += n;
		cr_assert_eq(tx.pos, at);
	}
	check_markers(stream, at, &fpdus);
	cr_assert_eq(fpdus, 200);
}

Test(mpa_fpdu, markers_cap_the_fpdu_at_64k)
{
	static uint8_t pay[65535], out[70000];
	struct iwx_mpa_mode mode = { .rev = 1, .markers_tx = true };
	struct iwx_mpa_tx tx;
	uint8_t hdr[14] = { 0xc1, 0x40 };

	iwx_mpa_tx_init(&tx, &mode);
	/* 65535-byte ULPDU: 128 markers make it longer than a marker can point across */
	cr_assert_eq(iwx_mpa_fpdu_build(&tx, out, sizeof(out), hdr, 14, pay, 65521), -EMSGSIZE);
	cr_assert_gt(iwx_mpa_fpdu_build(&tx, out, sizeof(out), hdr, 14, pay, 65000), 0);
}

/*
 * Framed around a payload left where it is (its pieces sent as they are), an FPDU is
 * the FPDU built in one buffer, byte for byte and CRC, at every pad length, CRC on and off.
 */
Test(mpa_fpdu, framed_in_place_equals_built)
{
	static uint8_t pay[1500];
	uint8_t hdr[18], built[1600], framed[1600], head[IWX_MPA_HEAD_MAX], tail[IWX_MPA_TAIL_MAX];

	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = i * 7 + 3;
	for (int crc = 0; crc < 2; crc++) {
		struct iwx_mpa_mode mode = { .rev = 1, .crc = crc };
		struct iwx_mpa_tx tb, tf;

		iwx_mpa_tx_init(&tb, &mode);
		iwx_mpa_tx_init(&tf, &mode);
		for (uint32_t len = 1000; len < 1004; len++) {
			struct iwx_ddp_msg m = { .opcode = IWX_OP_SEND, .msn = 1, .len = len };
			size_t hl = iwx_ddp_hdr_encode(hdr, &m, 0, true), tail_len;
			/* three pieces, the first one byte */
			struct iovec piece[3] = { { pay, 1 }, { pay + 1, 600 }, { pay + 601, len - 601 } };
			ssize_t nb = iwx_mpa_fpdu_buildv(&tb, built, sizeof(built), hdr, hl, piece, 3, len);
			ssize_t nh = iwx_mpa_fpdu_frame(&tf, head, hdr, hl, piece, 3, len, tail, &tail_len);

			cr_assert_eq(nh, (ssize_t)(2 + hl));
			cr_assert_eq(nb, (ssize_t)(nh + len + tail_len), "%u bytes", len);
			memcpy(framed, head, nh);
			memcpy(framed + nh, pay, len);
			memcpy(framed + nh + len, tail, tail_len);
			cr_assert_arr_eq(framed, built, nb, "%u bytes, crc %d", len, crc);
			cr_assert_eq(tf.pos, tb.pos);
		}
	}
}

Test(mpa_fpdu, framing_in_place_refuses_markers)
{
	struct iwx_mpa_mode mode = { .rev = 1, .crc = true, .markers_tx = true };
	struct iwx_mpa_tx tx;
	uint8_t hdr[18] = { 0 }, head[IWX_MPA_HEAD_MAX], tail[IWX_MPA_TAIL_MAX];
	struct iovec piece = { hdr, 8 };
	size_t tail_len;

	iwx_mpa_tx_init(&tx, &mode);
	cr_assert_eq(iwx_mpa_fpdu_frame(&tx, head, hdr, 14, &piece, 1, 8, tail, &tail_len), -EINVAL);
}
