/* SPDX-License-Identifier: MIT */
/*
 * A queue pair's lower layer on kernel TCP: DDP segments framed as MPA FPDUs
 * (RFC 5044 §4-§6) on one socket in full operation. FPDUs go out in batches that
 * start TCP segments where a receiver can place them on their own, their payload sent
 * from where it is (with MSG_ZEROCOPY, if asked, without a copy at all); payload comes
 * in straight from the socket into its target. With the fast path (llp_tcp_fast.h), what
 * BPF placed already is taken from its records and discarded from the socket unread.
 */
#ifndef IWX_LLP_TCP_H
#define IWX_LLP_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/mpa_setup.h"

#include "llp.h"

/*
 * The lower layer on fd, a connection in full operation with agreed (from conn.c),
 * emss its effective MSS. It takes fd: closed by its destroy, or at once when this
 * fails (NULL). zerocopy_min: batches of FPDUs with this many payload bytes from
 * registered memory or more go with MSG_ZEROCOPY (tcp_zc.h), their messages completing
 * once the kernel let go of their pages; 0, or a socket that refuses it: never.
 */
struct iwx_llp *iwx_llp_tcp_new(int fd, const struct iwx_mpa_agreed *agreed, uint32_t emss,
				uint32_t zerocopy_min);

/*
 * Take the records of what the fast path placed from slot (fastpath_maps.h), whose
 * programs follow this stream; copied_seq is the socket's read position now, a TCP
 * sequence number (nothing is read meanwhile). slot NULL: no fast path, once the
 * stream has ended (a record committed to would be lost). Returns whether the next
 * byte read starts an FPDU.
 */
struct iwx_fp_slot;
bool iwx_llp_tcp_fast(struct iwx_llp *llp, struct iwx_fp_slot *slot, uint32_t copied_seq);
/* While followed: the TCP sequence number of the next byte read. */
uint32_t iwx_llp_tcp_fast_seq(const struct iwx_llp *llp);
/* While followed: the TCP sequence number of full operation's first byte (markers count from it). */
uint32_t iwx_llp_tcp_fast_start(const struct iwx_llp *llp);

#endif /* IWX_LLP_TCP_H */
