/* SPDX-License-Identifier: MIT */
/*
 * A queue pair's traffic counters: what the engine (control/engine/qp.h) counts and the
 * IPC (ipc/ipc.h) carries to `iwx conns` and `iwx status`: one struct, below both layers.
 */
#ifndef IWX_QP_STATS_H
#define IWX_QP_STATS_H

#include <stdint.h>

/*
 * A queue pair's traffic, as its engine counts it and iwxd reports it. Bytes are those
 * of the TCP stream: MPA framing, markers and CRC included.
 */
struct iwx_qp_stats {
	uint64_t	tx_fpdus, rx_fpdus, tx_bytes, rx_bytes;
	uint64_t	tx_fpdus_aligned;	/* handed to TCP whole in a record sent from its start:
					   an upper bound on FPDUs whole in one segment */
	uint64_t	placed_segments;	/* payload received straight into its target */
	uint64_t	fast_fpdus;		/* placed on arrival: TCP, by the fast path (taken from its
						   records); SCTP, from the packet (sctp_place.h) */
	uint64_t	fast_bytes;		/* ... their payload */
	uint64_t	fast_discards;		/* recv(MSG_TRUNC) calls that dropped their bytes */
	uint64_t	fast_refuted;		/* placed FPDUs TCP accepted other bytes for: read instead */
	uint64_t	fast_unchecked;		/* ... TCP's bytes could not be compared with: read instead */
	uint64_t	fast_unrepaired;	/* ... whose placed bytes TCP's FPDU there does not all
						   rewrite: the stream ended with a Terminate */
	uint64_t	tx_zc_calls;		/* sendmsg calls with MSG_ZEROCOPY (iwxd --zerocopy) */
	uint64_t	tx_zc_copied;		/* ... whose pages the kernel copied after all */
};

#endif /* IWX_QP_STATS_H */
