// SPDX-License-Identifier: MIT
/*
 * Names of Terminate layers, error types and codes (RFC 5040 §4.8, RFC 5041 §7.2, RFC 5044 §8,
 * and the SCTP DDP adaptation's, docs/ddp-over-sctp.md).
 */
#include <stddef.h>

#include "proto/term.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const char *const *names, size_t n, unsigned int i)
{
	return i < n && names[i] ? names[i] : "unknown";
}

const char *iwx_term_layer_name(uint8_t layer)
{
	static const char *const names[] = { "RDMAP", "DDP", "LLP" };

	return lookup(names, ARRAY_SIZE(names), layer);
}

const char *iwx_term_etype_name(uint8_t layer, uint8_t etype)
{
	static const char *const rdmap[] = {
		"local catastrophic error", "remote protection error", "remote operation error",
	};
	static const char *const ddp[] = {
		"local catastrophic error", "tagged buffer error", "untagged buffer error",
		"reserved for the LLP",
	};
	static const char *const llp[] = {
		[IWX_MPA_ETYPE] = "MPA error",
		[IWX_SHIM_ETYPE] = "SCTP DDP adaptation error",
	};

	switch (layer) {
	case IWX_LAYER_RDMAP:
		return lookup(rdmap, ARRAY_SIZE(rdmap), etype);
	case IWX_LAYER_DDP:
		return lookup(ddp, ARRAY_SIZE(ddp), etype);
	case IWX_LAYER_LLP:
		return lookup(llp, ARRAY_SIZE(llp), etype);
	}
	return "unknown";
}

const char *iwx_term_ecode_name(uint8_t layer, uint8_t etype, uint8_t ecode)
{
	static const char *const rdmap[] = {
		[IWX_RDMAP_EC_INVALID_STAG] = "invalid STag",
		[IWX_RDMAP_EC_BASE_BOUNDS] = "base or bounds violation",
		[IWX_RDMAP_EC_ACCESS] = "access rights violation",
		[IWX_RDMAP_EC_STAG_NOT_ASSOC] = "STag not associated with RDMAP stream",
		[IWX_RDMAP_EC_TO_WRAP] = "TO wrap",
		[IWX_RDMAP_EC_VERSION] = "invalid RDMAP version",
		[IWX_RDMAP_EC_OPCODE] = "unexpected opcode",
		[IWX_RDMAP_EC_CATASTROPHIC_STREAM] = "catastrophic error, localized to RDMAP stream",
		[IWX_RDMAP_EC_CATASTROPHIC_GLOBAL] = "catastrophic error, global",
		[IWX_RDMAP_EC_CANNOT_INVALIDATE] = "STag cannot be invalidated",
	};
	static const char *const ddp_tagged[] = {
		[IWX_DDP_T_INVALID_STAG] = "invalid STag",
		[IWX_DDP_T_BASE_BOUNDS] = "base or bounds violation",
		[IWX_DDP_T_STAG_NOT_ASSOC] = "STag not associated with DDP stream",
		[IWX_DDP_T_TO_WRAP] = "TO wrap",
		[IWX_DDP_T_VERSION] = "invalid DDP version",
	};
	static const char *const ddp_untagged[] = {
		[IWX_DDP_U_INVALID_QN] = "invalid QN",
		[IWX_DDP_U_MSN_NO_BUF] = "invalid MSN, no buffer available",
		[IWX_DDP_U_MSN_RANGE] = "invalid MSN, MSN range not valid",
		[IWX_DDP_U_INVALID_MO] = "invalid MO",
		[IWX_DDP_U_TOO_LONG] = "DDP message too long for available buffer",
		[IWX_DDP_U_VERSION] = "invalid DDP version",
	};
	static const char *const mpa[] = {
		[IWX_MPA_EC_STREAM_LOST] = "TCP connection closed, terminated or lost",
		[IWX_MPA_EC_CRC] = "MPA CRC error",
		[IWX_MPA_EC_MARKER] = "MPA marker and ULPDU length mismatch",
		[IWX_MPA_EC_INVALID_RR] = "invalid MPA request or reply frame",
		[IWX_MPA_EC_LOCAL_CATASTROPHIC] = "local catastrophic error",
		[IWX_MPA_EC_INSUFFICIENT_IRD] = "insufficient IRD resources",
		[IWX_MPA_EC_NO_MATCHING_RTR] = "no matching RTR",
	};
	static const char *const shim[] = {
		[IWX_SHIM_EC_MODE] = "DDP mode not announced",
		[IWX_SHIM_EC_MALFORMED] = "malformed DDP header",
	};

	switch (layer) {
	case IWX_LAYER_RDMAP:
		if (etype == IWX_RDMAP_ETYPE_CATASTROPHIC)
			return "catastrophic";
		if (ecode == IWX_RDMAP_EC_UNSPECIFIED)
			return "unspecified error";
		return lookup(rdmap, ARRAY_SIZE(rdmap), ecode);
	case IWX_LAYER_DDP:
		if (etype == IWX_DDP_ETYPE_TAGGED)
			return lookup(ddp_tagged, ARRAY_SIZE(ddp_tagged), ecode);
		if (etype == IWX_DDP_ETYPE_UNTAGGED)
			return lookup(ddp_untagged, ARRAY_SIZE(ddp_untagged), ecode);
		return etype == IWX_DDP_ETYPE_CATASTROPHIC ? "catastrophic" : "unknown";
	case IWX_LAYER_LLP:
		if (etype == IWX_SHIM_ETYPE)
			return lookup(shim, ARRAY_SIZE(shim), ecode);
		return etype == IWX_MPA_ETYPE ? lookup(mpa, ARRAY_SIZE(mpa), ecode) : "unknown";
	}
	return "unknown";
}
