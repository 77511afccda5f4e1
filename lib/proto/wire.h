/* SPDX-License-Identifier: MIT */
/*
 * iWARP wire formats: MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and RDMAP (RFC 5040,
 * with RFC 7306's atomics and immediate data), and the SCTP DDP adaptation that carries DDP over SCTP instead of MPA
 * (draft-otis-sctp-ddp-00, mapped as docs/ddp-over-sctp.md says).
 *
 * Shared by the BPF fast path and user space: no libc, only <linux/types.h>. Every
 * multi-byte integer is big-endian on the wire (__be*), except the MPA CRC, which is
 * sent least significant byte first (see IWX_MPA_CRC_LEN).
 */
#ifndef IWX_WIRE_H
#define IWX_WIRE_H

#include <linux/types.h>

/* ---------------------------------------------------------------- MPA set-up */

#define IWX_MPA_KEY_LEN		16
#define IWX_MPA_KEY_REQ		"MPA ID Req Frame"
#define IWX_MPA_KEY_REP		"MPA ID Rep Frame"

#define IWX_MPA_FLAG_MARKERS	0x80	/* sender wants markers in the FPDUs it receives */
#define IWX_MPA_FLAG_CRC	0x40	/* sender wants CRC32c (both directions if either asks) */
#define IWX_MPA_FLAG_REJECT	0x20	/* reply only: connection rejected */
#define IWX_MPA_FLAG_ENHANCED	0x10	/* RFC 6581 enhanced set-up, revision 2 only */
/*
 * iwx's own use of a reserved bit (RFC 5044 §7.1: ignored on receipt), as siw used 0x08
 * for its GSO: a Request offers RFC 7306, a Reply accepts it (docs/rfc7306.md).
 */
#define IWX_MPA_FLAG_RDMAP_EXT	0x01
#define IWX_MPA_FLAG_RESERVED	0x0e

#define IWX_MPA_REV1		1
#define IWX_MPA_REV2		2
#define IWX_MPA_MAX_PRIVDATA	512

/* MPA Request and Reply share one layout; private data follows. */
struct iwx_mpa_rr {
	__u8	key[IWX_MPA_KEY_LEN];
	__u8	flags;
	__u8	rev;
	__be16	pd_len;
} __attribute__((packed));

/* RFC 6581 §5: the first 4 bytes of revision-2 private data when H is set. */
struct iwx_mpa_v2_ird_ord {
	__be16	ird;
	__be16	ord;
} __attribute__((packed));

#define IWX_MPA_V2_IRD_P2P	0x8000	/* ird word: peer-to-peer mode */
#define IWX_MPA_V2_IRD_RTR_SEND	0x4000	/* ird word: zero-length Send as RTR */
#define IWX_MPA_V2_ORD_RTR_WRITE 0x8000	/* ord word: zero-length RDMA Write as RTR */
#define IWX_MPA_V2_ORD_RTR_READ	0x4000	/* ord word: zero-length RDMA Read as RTR */
#define IWX_MPA_V2_VALUE_MASK	0x3fff

/* ------------------------------------------------------------ MPA FPDU framing */

#define IWX_MPA_HDR_LEN		2	/* ULPDU_LENGTH */
#define IWX_MPA_CRC_LEN		4	/* CRC32c, least significant byte first (as iSCSI) */
#define IWX_MPA_TAIL_MAX	(3 + IWX_MPA_CRC_LEN)	/* an FPDU's pad and CRC, at most */
#define IWX_MPA_MARKER_LEN	4
#define IWX_MPA_MARKER_INTERVAL	512	/* a marker every 512 bytes of full-operation stream */
#define IWX_MPA_MAX_ULPDU	0xffff

/* A marker: FPDUPTR counts back from the marker to its FPDU's ULPDU_LENGTH field. */
struct iwx_mpa_marker {
	__be16	rsvd;
	__be16	fpduptr;
} __attribute__((packed));

/* Pad so that ULPDU_LENGTH + ULPDU + pad is a multiple of 4 (markers excluded). */
static inline __u32 iwx_mpa_pad_len(__u32 ulpdu_len)
{
	return (4 - ((IWX_MPA_HDR_LEN + ulpdu_len) & 3)) & 3;
}

/* An FPDU's length, ULPDU_LENGTH to CRC (markers excluded). */
static inline __u32 iwx_mpa_unmarked_len(__u32 ulpdu_len)
{
	return IWX_MPA_HDR_LEN + ulpdu_len + iwx_mpa_pad_len(ulpdu_len) + IWX_MPA_CRC_LEN;
}

/*
 * Markers in an FPDU that begins at stream position pos (RFC 5044 §4.3; positions count
 * from the first byte of full operation). A marker belongs to the FPDU when at least
 * one of its bytes follows it: one at pos itself leads the FPDU (FPDUPTR 0), one right
 * after its CRC leads the next. Between markers lie 508 bytes of the FPDU.
 */
#define IWX_MPA_MARKER_DATA	(IWX_MPA_MARKER_INTERVAL - IWX_MPA_MARKER_LEN)

/* Bytes of the FPDU before its first marker. */
static inline __u32 iwx_mpa_marker_first(__u32 pos)
{
	return (IWX_MPA_MARKER_INTERVAL - pos % IWX_MPA_MARKER_INTERVAL) % IWX_MPA_MARKER_INTERVAL;
}

/* Markers in the FPDU at pos that is len bytes long without them. */
static inline __u32 iwx_mpa_markers_in(__u32 pos, __u32 len)
{
	__u32 first = iwx_mpa_marker_first(pos);

	return len > first ? (len - first + IWX_MPA_MARKER_DATA - 1) / IWX_MPA_MARKER_DATA : 0;
}

/* Where the FPDU's byte i (counted without markers) stands in the stream, from pos. */
static inline __u32 iwx_mpa_marked_off(__u32 pos, __u32 i)
{
	__u32 first = iwx_mpa_marker_first(pos);

	return i < first ? i : i + IWX_MPA_MARKER_LEN * ((i - first) / IWX_MPA_MARKER_DATA + 1);
}

/* --------------------------------------------------------------------- DDP */

#define IWX_DDP_FLAG_TAGGED	0x80
#define IWX_DDP_FLAG_LAST	0x40
#define IWX_DDP_RSVD_MASK	0x3c
#define IWX_DDP_VERSION_MASK	0x03
#define IWX_DDP_VERSION		1

/* RFC 5041 §4.2: tagged buffer model, 14 bytes. */
struct iwx_ddp_tagged_hdr {
	__u8	ddp_ctrl;
	__u8	rdmap_ctrl;	/* the RsvdULP byte, RDMAP's control field */
	__be32	stag;
	__be64	to;
} __attribute__((packed));

/* RFC 5041 §4.3: untagged buffer model, 18 bytes. */
struct iwx_ddp_untagged_hdr {
	__u8	ddp_ctrl;
	__u8	rdmap_ctrl;
	__be32	inval_stag;	/* RsvdULP[8:39]: RDMAP's Invalidate STag, else zero */
	__be32	qn;
	__be32	msn;		/* starts at 1 on every queue, wraps to 0 */
	__be32	mo;
} __attribute__((packed));

#define IWX_DDP_TAGGED_HDR_LEN		14
#define IWX_DDP_UNTAGGED_HDR_LEN	18

/* RFC 5040 §5 and RFC 7306 §4.1: the untagged queues RDMAP uses. */
enum iwx_ddp_qn {
	IWX_QN_SEND		= 0,	/* Sends, Immediate Data */
	IWX_QN_READ_REQ		= 1,	/* Read Requests, Atomic Requests */
	IWX_QN_TERMINATE	= 2,
	IWX_QN_ATOMIC_RESP	= 3,	/* RFC 7306 */
	IWX_QN_COUNT		= 4,
};

#define IWX_QN_COUNT_RFC5040	3	/* the queues of a stream without RFC 7306 */

/* ------------------------------------------------------------------- RDMAP */

#define IWX_RDMAP_VERSION_MASK	0xc0
#define IWX_RDMAP_VERSION_SHIFT	6
#define IWX_RDMAP_VERSION	1
#define IWX_RDMAP_RSVD_MASK	0x30
#define IWX_RDMAP_OPCODE_MASK	0x0f

/* RFC 5040 §4.1, Figure 4. */
enum iwx_rdmap_opcode {
	IWX_OP_WRITE		= 0,
	IWX_OP_READ_REQ		= 1,
	IWX_OP_READ_RESP	= 2,
	IWX_OP_SEND		= 3,
	IWX_OP_SEND_INV		= 4,
	IWX_OP_SEND_SE		= 5,
	IWX_OP_SEND_SE_INV	= 6,
	IWX_OP_TERMINATE	= 7,
	/* RFC 7306 §4.1, only where both sides agreed to it */
	IWX_OP_IMM		= 8,	/* Immediate Data */
	IWX_OP_IMM_SE		= 9,	/* Immediate Data with Solicited Event */
	IWX_OP_ATOMIC_REQ	= 10,
	IWX_OP_ATOMIC_RESP	= 11,
	IWX_OP_COUNT		= 12,
};

#define IWX_OP_COUNT_RFC5040	8	/* the opcodes of a stream without RFC 7306 */

/* RFC 5040 §4.4: follows the untagged DDP header of a Read Request, 28 bytes. */
struct iwx_rdmap_read_req {
	__be32	sink_stag;
	__be64	sink_to;
	__be32	size;
	__be32	src_stag;
	__be64	src_to;
} __attribute__((packed));

#define IWX_RDMAP_READ_REQ_LEN	28

/* RFC 7306 §5.2.1, Figure 5: the Atomic Request's operation (AOpCode), its first word's low nibble. */
enum iwx_atomic_op {
	IWX_AOP_FETCH_ADD	= 0,
	IWX_AOP_CMP_SWAP	= 2,
};

#define IWX_ATOMIC_AOP_MASK	0x0000000f

/* RFC 7306 §5.2.1, Figure 4: follows the untagged DDP header of an Atomic Request, 52 bytes. */
struct iwx_rdmap_atomic_req {
	__be32	aop;		/* reserved bits, then AOpCode in the low nibble */
	__be32	req_id;
	__be32	stag;
	__be64	to;		/* 8-byte aligned (§8.2) */
	__be64	add_swap;
	__be64	add_swap_mask;
	__be64	compare;
	__be64	compare_mask;
} __attribute__((packed));

#define IWX_RDMAP_ATOMIC_REQ_LEN	52
#define IWX_RDMAP_ATOMIC_TARGET_LEN	8	/* the bytes an operation works on, aligned to 8 */

/* RFC 7306 §5.2.2, Figure 6 (the text's "32 bytes" notwithstanding): an Atomic Response, 12 bytes. */
struct iwx_rdmap_atomic_resp {
	__be32	req_id;		/* the Request Identifier it answers */
	__be64	orig;		/* the target's value before the operation */
} __attribute__((packed));

#define IWX_RDMAP_ATOMIC_RESP_LEN	12

/* RFC 7306 §6.2: an Immediate Data message carries 8 bytes and nothing else. */
#define IWX_RDMAP_IMM_LEN	8

/*
 * RFC 5040 §4.8: Terminate header. Byte 0 is Layer (high nibble) and EType (low
 * nibble), byte 1 the error code, byte 2 holds the M/D/R header-control bits.
 * Then, when D is set, the DDP segment length (16 bits) and the terminated DDP
 * header (14 or 18 bytes); when R is set, the terminated Read Request header.
 */
struct iwx_rdmap_term_ctrl {
	__u8	layer_etype;
	__u8	ecode;
	__u8	hdrct;
	__u8	rsvd;
} __attribute__((packed));

#define IWX_TERM_HDRCT_M	0x80	/* DDP segment length valid */
#define IWX_TERM_HDRCT_D	0x40	/* terminated DDP header included */
#define IWX_TERM_HDRCT_R	0x20	/* terminated RDMAP (Read Request) header included */
#define IWX_TERM_CTRL_LEN	4
#define IWX_TERM_SEGLEN_LEN	2
#define IWX_TERM_MAX_LEN	(IWX_TERM_CTRL_LEN + IWX_TERM_SEGLEN_LEN + \
				 IWX_DDP_UNTAGGED_HDR_LEN + IWX_RDMAP_READ_REQ_LEN)

enum iwx_term_layer {
	IWX_LAYER_RDMAP		= 0,
	IWX_LAYER_DDP		= 1,
	IWX_LAYER_LLP		= 2,
};

/* RDMAP layer error types and codes (RFC 5040 §4.8, Figure 9). */
enum iwx_rdmap_etype {
	IWX_RDMAP_ETYPE_CATASTROPHIC	= 0,
	IWX_RDMAP_ETYPE_REMOTE_PROT	= 1,
	IWX_RDMAP_ETYPE_REMOTE_OP	= 2,
};

enum iwx_rdmap_ecode {
	IWX_RDMAP_EC_INVALID_STAG	= 0x00,
	IWX_RDMAP_EC_BASE_BOUNDS	= 0x01,
	IWX_RDMAP_EC_ACCESS		= 0x02,
	IWX_RDMAP_EC_STAG_NOT_ASSOC	= 0x03,
	IWX_RDMAP_EC_TO_WRAP		= 0x04,
	IWX_RDMAP_EC_VERSION		= 0x05,
	IWX_RDMAP_EC_OPCODE		= 0x06,
	IWX_RDMAP_EC_CATASTROPHIC_STREAM = 0x07,
	IWX_RDMAP_EC_CATASTROPHIC_GLOBAL = 0x08,
	IWX_RDMAP_EC_CANNOT_INVALIDATE	= 0x09,
	IWX_RDMAP_EC_UNSPECIFIED	= 0xff,
};

/* DDP layer error types and codes (RFC 5041 §7.2, numbered as draft-06, siw and tshark do). */
enum iwx_ddp_etype {
	IWX_DDP_ETYPE_CATASTROPHIC	= 0,
	IWX_DDP_ETYPE_TAGGED		= 1,
	IWX_DDP_ETYPE_UNTAGGED		= 2,
	IWX_DDP_ETYPE_LLP		= 3,
};

enum iwx_ddp_tagged_ecode {
	IWX_DDP_T_INVALID_STAG		= 0x00,
	IWX_DDP_T_BASE_BOUNDS		= 0x01,
	IWX_DDP_T_STAG_NOT_ASSOC	= 0x02,
	IWX_DDP_T_TO_WRAP		= 0x03,
	IWX_DDP_T_VERSION		= 0x04,
};

enum iwx_ddp_untagged_ecode {
	IWX_DDP_U_INVALID_QN		= 0x01,
	IWX_DDP_U_MSN_NO_BUF		= 0x02,
	IWX_DDP_U_MSN_RANGE		= 0x03,
	IWX_DDP_U_INVALID_MO		= 0x04,
	IWX_DDP_U_TOO_LONG		= 0x05,
	IWX_DDP_U_VERSION		= 0x06,
};

/* LLP layer, MPA error type (RFC 5044 §8, RFC 6581 §9). */
#define IWX_MPA_ETYPE		0
enum iwx_mpa_ecode {
	IWX_MPA_EC_STREAM_LOST		= 0x01,
	IWX_MPA_EC_CRC			= 0x02,
	IWX_MPA_EC_MARKER		= 0x03,	/* marker and ULPDU_LENGTH disagree */
	IWX_MPA_EC_INVALID_RR		= 0x04,	/* invalid request or reply frame */
	IWX_MPA_EC_LOCAL_CATASTROPHIC	= 0x05,
	IWX_MPA_EC_INSUFFICIENT_IRD	= 0x06,
	IWX_MPA_EC_NO_MATCHING_RTR	= 0x07,
};

/* LLP layer, SCTP DDP adaptation error type: our definition (docs/ddp-over-sctp.md). */
#define IWX_SHIM_ETYPE		1
enum iwx_shim_ecode {
	IWX_SHIM_EC_MODE		= 0x01,	/* a mode the peer did not announce */
	IWX_SHIM_EC_MALFORMED		= 0x02,	/* malformed DDP header */
};

/* ------------------------------------------------------ SCTP DDP adaptation */

/* draft-otis-sctp-ddp §2.1: the Adaptation Layer Indication of INIT and INIT-ACK. */
#define IWX_SHIM_PARAM_ADAPTATION	0xc006
enum iwx_shim_indication {
	IWX_SHIM_IND_ANONYMOUS	= 1,	/* DDP_ANONYMOUS_PLACE */
	IWX_SHIM_IND_STREAM	= 2,	/* DDP_STREAM_PLACE */
	IWX_SHIM_IND_TAG	= 3,	/* DDP_TAG_PLACE: what iwx announces and requires */
};

/* draft-otis-sctp-ddp §2.2 DDP Mode */
enum iwx_shim_mode {
	IWX_SHIM_MODE_ANONYMOUS	= 1,	/* untagged messages and the set-up frame */
	IWX_SHIM_MODE_STREAM	= 2,	/* never sent, refused on receipt */
	IWX_SHIM_MODE_TAG	= 3,	/* tagged messages */
};

/* draft-otis-sctp-ddp §2.2 DDP Flags, bits numbered as in RFC 2960's figures: bit 0 the MSB. */
#define IWX_SHIM_FLAG_ACK_REQ	0x80	/* bit 0: never sent, ignored */
#define IWX_SHIM_FLAG_DISCLOSE	0x40	/* bit 1: a message's last chunk (RFC 5041's L) */
#define IWX_SHIM_FLAG_RELEASE	0x20	/* bit 2: never sent, ignored */
#define IWX_SHIM_FLAG_RSVD	0x1f

/* draft-otis-sctp-ddp §2.2: the fixed part of the DDP header leading every DATA chunk's data. */
struct iwx_shim_hdr {
	__u8	mode;
	__u8	flags;
	__be16	hdr_len;	/* with the DDP Context, without padding */
	__be32	tag;		/* TAG_MODE: Data Sink STag; else Invalidate STag or 0 */
	__be64	offset;		/* TAG_MODE: TO; ANONYMOUS_MODE: MO */
} __attribute__((packed));

/*
 * The DDP Context iwx defines for RDMAP: tagged chunks carry the first word (the
 * RFC 5040 §4.1 control byte, then zeros), untagged ones all three.
 */
struct iwx_shim_rdmap_ctx {
	__u8	rdmap_ctrl;
	__u8	rsvd[3];
	__be32	qn;
	__be32	msn;
} __attribute__((packed));

#define IWX_SHIM_SETUP_HDR_LEN		16	/* the set-up chunk: no Context */
#define IWX_SHIM_TAGGED_HDR_LEN		20
#define IWX_SHIM_UNTAGGED_HDR_LEN	28
#define IWX_SHIM_MAX_HDR_LEN		IWX_SHIM_UNTAGGED_HDR_LEN

/* RFC 2960 §3.3.1: a DATA chunk's 16-bit Length counts its own 16-byte header. */
#define IWX_SHIM_MAX_CHUNK	(0xffff - 16)

/* SCTP streams: set-up, then one per untagged queue (1 + QN), then tagged messages. */
#define IWX_SHIM_STREAM_SETUP		0
#define IWX_SHIM_STREAM_UNTAGGED	1
#define IWX_SHIM_STREAM_TAGGED		(IWX_SHIM_STREAM_UNTAGGED + IWX_QN_COUNT_RFC5040)
#define IWX_SHIM_STREAMS		(IWX_SHIM_STREAM_TAGGED + 1)

/* draft-otis-sctp-ddp §2.1 allows the null PPI; none is registered with IANA for this use. */
#define IWX_SHIM_PPI			0

/* ------------------------------------------------------------- SCTP packets */

/* RFC 4960 §3.1: the common header of every SCTP packet. */
struct iwx_sctp_common {
	__be16	sport, dport;
	__be32	vtag;		/* the receiver's Initiate Tag */
	__le32	crc32c;		/* RFC 4960 Appendix B: CRC32c, least significant byte first */
} __attribute__((packed));

/* RFC 4960 §3.3.1: a DATA chunk's header; Length counts it, not the padding to 4 bytes. */
#define IWX_SCTP_CHUNK_DATA	0
#define IWX_SCTP_DATA_U		0x04	/* unordered */
#define IWX_SCTP_DATA_B		0x02	/* a message's first fragment */
#define IWX_SCTP_DATA_E		0x01	/* ... and its last */
struct iwx_sctp_data {
	__u8	type, flags;
	__be16	len;
	__be32	tsn;
	__be16	sid, ssn;
	__be32	ppid;
} __attribute__((packed));

#endif /* IWX_WIRE_H */
