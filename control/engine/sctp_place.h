/* SPDX-License-Identifier: MIT */
/*
 * Tagged payload placed from the packet that carries it, before usrsctp sees the packet
 * (the "placement from the UMEM"): for each DATA chunk of a known association
 * that its placer takes, the payload goes straight into registered memory and the chunk
 * reaches usrsctp shrunk to its DDP header, so that SCTP still acknowledges its TSN and
 * the lower layer still acts on it, knowing from its placer that the bytes are in place.
 * A chunk no placer takes goes to usrsctp whole: the lower layer then places it itself.
 */
#ifndef IWX_SCTP_PLACE_H
#define IWX_SCTP_PLACE_H

#include <stddef.h>
#include <stdint.h>

#include "sctp.h"

/* One association whose chunks may be placed from the packet: an SCTP lower layer's. */
struct iwx_sctp_placer {
	const void	*token;			/* its packets arrive on the path of this token */
	uint16_t	lport, pport;		/* its SCTP ports, in network order */
	uint32_t	vtag;			/* its packets' Verification Tag, in network order */
	/*
	 * Every DATA chunk of its packets, before usrsctp sees it, so that it knows each TSN
	 * usrsctp may hold. One with U, B and E set, and padded: its user data data[0, len),
	 * to place the payload and return its length, which the chunk's tail then loses, or
	 * 0 to leave it whole. Any other: data NULL, len 0, and it returns 0.
	 */
	size_t		(*place)(struct iwx_sctp_placer *pl, uint32_t tsn, uint16_t sid,
				 const uint8_t *data, size_t len);
	struct iwx_sctp_placer *next;
};

/* Known from now on, or no longer (before it is freed). Placers are the process's. */
void iwx_sctp_placer_add(struct iwx_sctp_placer *pl);
void iwx_sctp_placer_del(struct iwx_sctp_placer *pl);

/*
 * An SCTP packet that arrived on path, its checksum verified: let its association's placer
 * place what it takes, shrinking those chunks. Returns the packet's new length; counts
 * into st.
 */
size_t iwx_sctp_place(const struct iwx_sctp_path *path, uint8_t *pkt, size_t len,
		      struct iwx_sctp_stats *st);

#endif /* IWX_SCTP_PLACE_H */
