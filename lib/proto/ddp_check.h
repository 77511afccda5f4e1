/* SPDX-License-Identifier: MIT */
/*
 * The buffer checks of RFC 5041 §7.1 and RFC 5040 §7.2, as pure functions over
 * plain descriptors. No libc: the BPF fast path and the daemon run the same code.
 */
#ifndef IWX_DDP_CHECK_H
#define IWX_DDP_CHECK_H

#include <linux/types.h>

#include <iwx/access.h>
#include "proto/wire.h"

/* What the checks need to know of one STag. */
struct iwx_stag_desc {
	__u32	stag;		/* index << 8 | key */
	__u32	pd;		/* protection domain */
	__u8	valid;		/* registered and not invalidated */
	__u8	access;		/* IWX_ACCESS_* */
	__u64	base_to;	/* tagged offset of the first byte */
	__u64	len;
};

/* Result of a check: 0, or the Terminate's layer/etype/code packed as l<<16|e<<8|c. */
#define IWX_CHECK_OK		0u
#define IWX_CHECK(l, e, c)	(((__u32)(l) << 16) | ((__u32)(e) << 8) | (__u32)(c) | 0x80000000u)
#define IWX_CHECK_LAYER(r)	(((r) >> 16) & 0xff)
#define IWX_CHECK_ETYPE(r)	(((r) >> 8) & 0xff)
#define IWX_CHECK_ECODE(r)	((r) & 0xff)

/*
 * A tagged segment of len bytes at to, placed through d (NULL: no such STag) on a
 * stream of protection domain pd; need is IWX_ACCESS_REMOTE_WRITE for an RDMA
 * Write, IWX_ACCESS_LOCAL_WRITE for a Read Response.
 * RFC 5041 §7.1's checks: STag valid, STag of this stream, buffer allows placement,
 * TO within range, TO+len within range, no 64-bit wrap; the wrap is checked before the
 * bounds, as a wrapping segment is outside every region too and TO_WRAP says why. Access
 * is RDMAP's check (RFC 5040 §7.2: remote protection error), DDP has no code for it.
 * RFC 5041 §5.2: a zero-length tagged segment is not checked at all.
 */
static inline __u32 iwx_check_tagged(const struct iwx_stag_desc *d, __u32 stag, __u32 pd,
				     __u8 need, __u64 to, __u32 len)
{
	if (len == 0)
		return IWX_CHECK_OK;
	if (!d || !d->valid || d->stag != stag)
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_INVALID_STAG);
	if (d->pd != pd)
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_STAG_NOT_ASSOC);
	if (!(d->access & need))
		return IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_ACCESS);
	if (to + len < to)
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_TO_WRAP);
	if (to < d->base_to || to - d->base_to > d->len || len > d->len - (to - d->base_to))
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_BASE_BOUNDS);
	return IWX_CHECK_OK;
}

/*
 * Memory a peer's request reaches through an STag of ours, to read or to work on
 * (RFC 5040 §7.2): nothing for zero bytes; otherwise STag valid, of this stream, with
 * the right need, in bounds, no wrap. Errors are RDMAP remote protection errors.
 */
static inline __u32 iwx_check_remote(const struct iwx_stag_desc *d, __u32 stag, __u32 pd,
				     __u8 need, __u64 to, __u32 len)
{
	if (len == 0)
		return IWX_CHECK_OK;
	if (!d || !d->valid || d->stag != stag)
		return IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_INVALID_STAG);
	if (d->pd != pd)
		return IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_STAG_NOT_ASSOC);
	if (!(d->access & need))
		return IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_ACCESS);
	if (to + len < to)
		return IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_TO_WRAP);
	if (to < d->base_to || to - d->base_to > d->len || len > d->len - (to - d->base_to))
		return IWX_CHECK(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, IWX_RDMAP_EC_BASE_BOUNDS);
	return IWX_CHECK_OK;
}

/* The Data Source side of a Read Request (RFC 5040 §5.2.1). */
static inline __u32 iwx_check_read_source(const struct iwx_stag_desc *d, __u32 stag, __u32 pd,
					  __u64 to, __u32 len)
{
	return iwx_check_remote(d, stag, pd, IWX_ACCESS_REMOTE_READ, to, len);
}

/* The target of an Atomic Request (RFC 7306 §5.2.1, §9); its alignment is the decoder's. */
static inline __u32 iwx_check_atomic_target(const struct iwx_stag_desc *d, __u32 stag, __u32 pd,
					    __u64 to)
{
	return iwx_check_remote(d, stag, pd, IWX_ACCESS_REMOTE_ATOMIC, to, IWX_RDMAP_ATOMIC_TARGET_LEN);
}

/* One untagged queue at the Data Sink: the buffers posted on it, in MSN order. */
struct iwx_untagged_queue {
	__u32	next_msn;	/* MSN of the oldest message not yet complete (starts at 1) */
	__u32	posted;		/* buffers available from next_msn on */
};

/*
 * An untagged segment (RFC 5041 §7.1): QN valid, MSN within the posted range and
 * with a buffer, MO and MO+len within the buffer of buf_len bytes.
 */
static inline __u32 iwx_check_untagged(const struct iwx_untagged_queue *q, __u32 msn, __u32 mo,
				       __u32 len, __u32 buf_len)
{
	if (!q)
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_QN);
	__u32 ahead = msn - q->next_msn;	/* modulo 2^32, as MSNs wrap */

	if (ahead == q->posted)	/* the message right after the last posted buffer */
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_MSN_NO_BUF);
	if (ahead > q->posted)
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_MSN_RANGE);
	if (mo > buf_len)
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_INVALID_MO);
	if (len > buf_len - mo)
		return IWX_CHECK(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, IWX_DDP_U_TOO_LONG);
	return IWX_CHECK_OK;
}

#endif /* IWX_DDP_CHECK_H */
