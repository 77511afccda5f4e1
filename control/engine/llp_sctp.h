/* SPDX-License-Identifier: MIT */
/*
 * A queue pair's lower layer on SCTP (usrsctp, sctp.h): every DDP segment one
 * unordered DATA chunk led by the adaptation shim's header (draft-otis-sctp-ddp-00,
 * as docs/ddp-over-sctp.md maps RDMAP onto it), on an association whose set-up is
 * done (conn_sctp.h). Chunks are placed as they arrive, in any order; a message's
 * last chunk acts only once the cumulative TSN covers it (§3.2.1 R5), which gives
 * RDMAP's ordering back.
 */
#ifndef IWX_LLP_SCTP_H
#define IWX_LLP_SCTP_H

#include <stdint.h>

#include "llp.h"

struct socket;

/*
 * The lower layer on so, an association in full operation whose chunks carry at most
 * maxseg bytes (SCTP_MAXSEG), the peer's first chunk (its set-up message) having had
 * TSN peer_tsn. It takes so: closed by its destroy, or at once when this fails (NULL).
 */
struct iwx_llp *iwx_llp_sctp_new(struct socket *so, uint32_t maxseg, uint32_t peer_tsn);

#endif /* IWX_LLP_SCTP_H */
