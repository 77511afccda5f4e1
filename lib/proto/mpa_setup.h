/* SPDX-License-Identifier: MIT */
/*
 * MPA connection set-up decisions (RFC 5044 §7.1, RFC 6581 §5-§8): what to ask for,
 * how a Responder answers a Request, how an Initiator takes the Reply. Pure logic:
 * the connection manager sends and receives the frames.
 */
#ifndef IWX_MPA_SETUP_H
#define IWX_MPA_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/mpa.h"
#include "proto/term.h"

/* RTR message types (RFC 6581 §6), as a bit set. */
#define IWX_RTR_SEND	0x1	/* zero-length Send */
#define IWX_RTR_WRITE	0x2	/* zero-length RDMA Write */
#define IWX_RTR_READ	0x4	/* zero-length RDMA Read */

/* What one side wants and can do. */
struct iwx_mpa_local {
	uint8_t		rev;		/* highest revision spoken: 1 or 2 */
	bool		crc;		/* ask for CRC */
	bool		markers;	/* ask for markers in what this side receives */
	uint16_t	ird, ord;	/* inbound and outbound RDMA Read limits */
	bool		p2p;		/* Initiator: ask for peer-to-peer mode */
	uint8_t		rtr;		/* RTR types this side can send (Initiator) or take (Responder) */
	bool		rdmap_ext;	/* offer (Initiator) or accept (Responder) RFC 7306 */
};

/* What both sides agreed, seen from this side. */
struct iwx_mpa_agreed {
	struct iwx_mpa_mode mode;
	bool		initiator;	/* this side sent the Request */
	bool		enhanced;	/* RFC 6581 IRD/ORD were exchanged */
	uint16_t	ird, ord;	/* this side's, after negotiation */
	uint8_t		rtr;		/* the one RTR type in use (peer-to-peer), or 0 */
	bool		rdmap_ext;	/* RFC 7306's atomics and immediate data: both sides agreed */
};

/* The Request an Initiator sends; pd (the application's private data) is referenced. */
void iwx_mpa_setup_request(const struct iwx_mpa_local *l, const uint8_t *pd, uint16_t pd_len,
			   struct iwx_mpa_rr_params *req);

/*
 * The Responder's answer to req. With reject, a Reply with R set carrying pd.
 * Otherwise revision, CRC, IRD/ORD (lowered to what both can do) and the RTR type
 * are settled and written to *out. Returns 0, or -EPROTO with *cause when no RTR
 * type both sides support exists (the Reply is then a reject: send it, then close).
 */
int iwx_mpa_setup_reply(const struct iwx_mpa_local *l, const struct iwx_mpa_rr_params *req,
			const uint8_t *pd, uint16_t pd_len, bool reject,
			struct iwx_mpa_rr_params *rep, struct iwx_mpa_agreed *out,
			struct iwx_term_cause *cause);

/*
 * The Initiator takes the Reply to its Request. Returns 0 with *out, -ECONNREFUSED
 * when the Responder rejected (its private data is in rep), or -EPROTO with *cause
 * for a Reply that does not answer the Request.
 */
int iwx_mpa_setup_accept(const struct iwx_mpa_local *l, const struct iwx_mpa_rr_params *req,
			 const struct iwx_mpa_rr_params *rep, struct iwx_mpa_agreed *out,
			 struct iwx_term_cause *cause);

#endif /* IWX_MPA_SETUP_H */
