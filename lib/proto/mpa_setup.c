// SPDX-License-Identifier: MIT
/*
 * MPA set-up negotiation: revision, CRC, markers, IRD/ORD and RTR (RFC 5044 §7.1, RFC 6581),
 * and iwx's offer of RFC 7306 (wire.h, IWX_MPA_FLAG_RDMAP_EXT).
 */
#include <errno.h>
#include <string.h>
#include <sys/param.h>	/* MIN */

#include "proto/mpa_setup.h"

static uint8_t rtr_bits(const struct iwx_mpa_rr_params *p)
{
	return (p->rtr_send ? IWX_RTR_SEND : 0) | (p->rtr_write ? IWX_RTR_WRITE : 0) |
	       (p->rtr_read ? IWX_RTR_READ : 0);
}

static void set_rtr_bits(struct iwx_mpa_rr_params *p, uint8_t rtr)
{
	p->rtr_send = rtr & IWX_RTR_SEND;
	p->rtr_write = rtr & IWX_RTR_WRITE;
	p->rtr_read = rtr & IWX_RTR_READ;
}

void iwx_mpa_setup_request(const struct iwx_mpa_local *l, const uint8_t *pd, uint16_t pd_len,
			   struct iwx_mpa_rr_params *req)
{
	memset(req, 0, sizeof(*req));
	req->rev = l->rev;
	req->crc = l->crc;
	req->markers = l->markers;
	req->enhanced = l->rev >= IWX_MPA_REV2;
	req->ird = l->ird;
	req->ord = l->ord;
	req->p2p = req->enhanced && l->p2p;
	if (req->p2p)
		set_rtr_bits(req, l->rtr);
	req->rdmap_ext = l->rdmap_ext;
	req->pd = pd;
	req->pd_len = pd_len;
}

int iwx_mpa_setup_reply(const struct iwx_mpa_local *l, const struct iwx_mpa_rr_params *req,
			const uint8_t *pd, uint16_t pd_len, bool reject,
			struct iwx_mpa_rr_params *rep, struct iwx_mpa_agreed *out,
			struct iwx_term_cause *cause)
{
	uint8_t common;
	int err = 0;

	memset(rep, 0, sizeof(*rep));
	memset(out, 0, sizeof(*out));
	rep->reply = true;
	/* RFC 6581 §5: answer in the revision asked for, if this side speaks it */
	rep->rev = MIN(req->rev, l->rev);
	rep->crc = l->crc || req->crc;
	rep->markers = l->markers;
	rep->enhanced = rep->rev >= IWX_MPA_REV2 && req->enhanced;
	rep->pd = pd;
	rep->pd_len = pd_len;

	if (rep->enhanced) {
		/* no more reads in flight than the other side will issue or take */
		rep->ird = MIN(l->ird, req->ord);
		rep->ord = MIN(l->ord, req->ird);
		if (req->p2p) {
			/* RFC 6581 §6: pick one RTR type the Initiator offered */
			common = rtr_bits(req) & l->rtr;
			rep->p2p = true;
			out->rtr = common & IWX_RTR_WRITE ? IWX_RTR_WRITE :
				   common & IWX_RTR_READ ? IWX_RTR_READ :
				   common & IWX_RTR_SEND ? IWX_RTR_SEND : 0;
			set_rtr_bits(rep, out->rtr);
			if (!out->rtr) {
				*cause = IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR);
				reject = true;
				err = -EPROTO;
			}
		}
	}
	rep->reject = reject;
	rep->rdmap_ext = !reject && l->rdmap_ext && req->rdmap_ext;
	out->rdmap_ext = rep->rdmap_ext;
	out->mode = iwx_mpa_mode_of(rep, req);
	out->enhanced = rep->enhanced;
	out->ird = rep->enhanced ? rep->ird : l->ird;
	out->ord = rep->enhanced ? rep->ord : l->ord;
	return err;
}

int iwx_mpa_setup_accept(const struct iwx_mpa_local *l, const struct iwx_mpa_rr_params *req,
			 const struct iwx_mpa_rr_params *rep, struct iwx_mpa_agreed *out,
			 struct iwx_term_cause *cause)
{
	uint8_t rtr = rtr_bits(rep);

	memset(out, 0, sizeof(*out));
	if (rep->reject)
		return -ECONNREFUSED;
	/* a Reply may lower the revision, never raise it */
	if (rep->rev > req->rev || (rep->enhanced && !req->enhanced)) {
		*cause = IWX_CAUSE_MPA(IWX_MPA_EC_INVALID_RR);
		return -EPROTO;
	}
	out->mode = iwx_mpa_mode_of(req, rep);
	out->initiator = true;
	out->enhanced = rep->enhanced;
	out->ird = l->ird;
	out->ord = rep->enhanced ? MIN(l->ord, rep->ird) : l->ord;
	/* a Reply's bit answers only an offer; a peer that sets it unasked keeps RFC 5040 */
	out->rdmap_ext = req->rdmap_ext && rep->rdmap_ext;
	if (rep->enhanced && req->p2p && rep->p2p) {
		/* exactly one of the offered RTR types */
		if (!rtr || (rtr & (rtr - 1)) || (rtr & ~rtr_bits(req))) {
			*cause = IWX_CAUSE_MPA(IWX_MPA_EC_NO_MATCHING_RTR);
			return -EPROTO;
		}
		out->rtr = rtr;
	}
	return 0;
}
