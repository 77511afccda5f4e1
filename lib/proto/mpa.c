// SPDX-License-Identifier: MIT
/* MPA Request/Reply frames (RFC 5044 §7.1, RFC 6581 §5) and the mode they agree on. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "proto/mpa.h"

#define V2_LEN sizeof(struct iwx_mpa_v2_ird_ord)

size_t iwx_mpa_rr_len(const struct iwx_mpa_rr_params *p)
{
	return sizeof(struct iwx_mpa_rr) + (p->enhanced ? V2_LEN : 0) + p->pd_len;
}

ssize_t iwx_mpa_rr_encode(uint8_t *out, size_t cap, const struct iwx_mpa_rr_params *p)
{
	struct iwx_mpa_rr hdr;
	size_t len = iwx_mpa_rr_len(p);
	size_t pd_total = len - sizeof(hdr);
	uint8_t *q = out + sizeof(hdr);

	if (p->rev != IWX_MPA_REV1 && p->rev != IWX_MPA_REV2)
		return -EINVAL;
	if (p->enhanced && p->rev != IWX_MPA_REV2)
		return -EINVAL;
	if (pd_total > IWX_MPA_MAX_PRIVDATA || (p->pd_len && !p->pd))
		return -EINVAL;
	if (p->enhanced && (p->ird > IWX_MPA_V2_VALUE_MASK || p->ord > IWX_MPA_V2_VALUE_MASK))
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;

	memcpy(hdr.key, p->reply ? IWX_MPA_KEY_REP : IWX_MPA_KEY_REQ, IWX_MPA_KEY_LEN);
	hdr.flags = (p->markers ? IWX_MPA_FLAG_MARKERS : 0) | (p->crc ? IWX_MPA_FLAG_CRC : 0) |
		    (p->reply && p->reject ? IWX_MPA_FLAG_REJECT : 0) |
		    (p->enhanced ? IWX_MPA_FLAG_ENHANCED : 0) |
		    (p->rdmap_ext ? IWX_MPA_FLAG_RDMAP_EXT : 0);
	hdr.rev = p->rev;
	hdr.pd_len = htons(pd_total);
	memcpy(out, &hdr, sizeof(hdr));

	if (p->enhanced) {
		struct iwx_mpa_v2_ird_ord v2 = {
			.ird = htons(p->ird | (p->p2p ? IWX_MPA_V2_IRD_P2P : 0) |
				     (p->rtr_send ? IWX_MPA_V2_IRD_RTR_SEND : 0)),
			.ord = htons(p->ord | (p->rtr_write ? IWX_MPA_V2_ORD_RTR_WRITE : 0) |
				     (p->rtr_read ? IWX_MPA_V2_ORD_RTR_READ : 0)),
		};

		memcpy(q, &v2, V2_LEN);
		q += V2_LEN;
	}
	if (p->pd_len)
		memcpy(q, p->pd, p->pd_len);
	return len;
}

ssize_t iwx_mpa_rr_decode(const uint8_t *buf, size_t len, bool want_reply,
			  struct iwx_mpa_rr_params *p)
{
	struct iwx_mpa_rr hdr;
	size_t pd_total;

	memset(p, 0, sizeof(*p));
	/* Check the key as soon as its bytes arrive: a peer speaking something else fails fast. */
	if (len && memcmp(buf, want_reply ? IWX_MPA_KEY_REP : IWX_MPA_KEY_REQ,
			  len < IWX_MPA_KEY_LEN ? len : IWX_MPA_KEY_LEN))
		return -EPROTO;
	if (len < sizeof(hdr))
		return 0;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.rev != IWX_MPA_REV1 && hdr.rev != IWX_MPA_REV2)
		return -EPROTONOSUPPORT;
	pd_total = ntohs(hdr.pd_len);
	if (pd_total > IWX_MPA_MAX_PRIVDATA)
		return -EMSGSIZE;
	if (len < sizeof(hdr) + pd_total)
		return 0;

	p->reply = want_reply;
	p->markers = hdr.flags & IWX_MPA_FLAG_MARKERS;
	p->crc = hdr.flags & IWX_MPA_FLAG_CRC;
	p->reject = want_reply && (hdr.flags & IWX_MPA_FLAG_REJECT);
	p->rdmap_ext = hdr.flags & IWX_MPA_FLAG_RDMAP_EXT;
	p->rev = hdr.rev;
	/* RFC 6581 §5: H means nothing in revision 1. */
	p->enhanced = hdr.rev == IWX_MPA_REV2 && (hdr.flags & IWX_MPA_FLAG_ENHANCED);
	p->pd = buf + sizeof(hdr);
	p->pd_len = pd_total;

	if (p->enhanced) {
		struct iwx_mpa_v2_ird_ord v2;
		uint16_t ird, ord;

		if (pd_total < V2_LEN)
			return -EBADMSG;
		memcpy(&v2, p->pd, V2_LEN);
		ird = ntohs(v2.ird);
		ord = ntohs(v2.ord);
		p->ird = ird & IWX_MPA_V2_VALUE_MASK;
		p->ord = ord & IWX_MPA_V2_VALUE_MASK;
		p->p2p = ird & IWX_MPA_V2_IRD_P2P;
		p->rtr_send = ird & IWX_MPA_V2_IRD_RTR_SEND;
		p->rtr_write = ord & IWX_MPA_V2_ORD_RTR_WRITE;
		p->rtr_read = ord & IWX_MPA_V2_ORD_RTR_READ;
		p->pd += V2_LEN;
		p->pd_len -= V2_LEN;
	}
	return sizeof(hdr) + pd_total;
}

struct iwx_mpa_mode iwx_mpa_mode_of(const struct iwx_mpa_rr_params *local,
				    const struct iwx_mpa_rr_params *peer)
{
	struct iwx_mpa_mode m = {
		.rev = local->rev < peer->rev ? local->rev : peer->rev,
		.crc = local->crc || peer->crc,
		.markers_rx = local->markers,
		.markers_tx = peer->markers,
	};

	return m;
}

uint32_t iwx_mpa_mulpdu(uint32_t emss, bool markers)
{
	/* RFC 5044 §6.1: MULPDU = EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4), markers on. */
	uint32_t overhead = IWX_MPA_HDR_LEN + IWX_MPA_CRC_LEN + emss % 4;

	if (markers)
		overhead += IWX_MPA_MARKER_LEN * ((emss + IWX_MPA_MARKER_INTERVAL - 1) /
						  IWX_MPA_MARKER_INTERVAL);
	return emss > overhead ? emss - overhead : 0;
}
