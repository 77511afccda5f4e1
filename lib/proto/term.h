/* SPDX-License-Identifier: MIT */
/* Why a stream is terminated: the (layer, error type, error code) of RFC 5040 §4.8. */
#ifndef IWX_TERM_H
#define IWX_TERM_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/wire.h"

struct iwx_term_cause {
	uint8_t layer;	/* enum iwx_term_layer */
	uint8_t etype;
	uint8_t ecode;
};

static inline struct iwx_term_cause iwx_cause(uint8_t layer, uint8_t etype, uint8_t ecode)
{
	struct iwx_term_cause c = { layer, etype, ecode };
	return c;
}

#define IWX_CAUSE_MPA(code)	  iwx_cause(IWX_LAYER_LLP, IWX_MPA_ETYPE, (code))
#define IWX_CAUSE_SHIM(code)	  iwx_cause(IWX_LAYER_LLP, IWX_SHIM_ETYPE, (code))
#define IWX_CAUSE_DDP_T(code)	  iwx_cause(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, (code))
#define IWX_CAUSE_DDP_U(code)	  iwx_cause(IWX_LAYER_DDP, IWX_DDP_ETYPE_UNTAGGED, (code))
#define IWX_CAUSE_RDMAP_PROT(code) iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_PROT, (code))
#define IWX_CAUSE_RDMAP_OP(code)  iwx_cause(IWX_LAYER_RDMAP, IWX_RDMAP_ETYPE_REMOTE_OP, (code))

static inline bool iwx_cause_eq(struct iwx_term_cause a, struct iwx_term_cause b)
{
	return a.layer == b.layer && a.etype == b.etype && a.ecode == b.ecode;
}

/* "DDP tagged buffer error: invalid STag" and the like, for logs and CLIs. */
const char *iwx_term_layer_name(uint8_t layer);
const char *iwx_term_etype_name(uint8_t layer, uint8_t etype);
const char *iwx_term_ecode_name(uint8_t layer, uint8_t etype, uint8_t ecode);

#endif /* IWX_TERM_H */
