// SPDX-License-Identifier: MIT
/*
 * Runs the shared buffer checks (proto/ddp_check.h) inside the kernel, so a test can
 * prove that the verifier accepts them and that they answer as in user space.
 * Also pins the wire layouts as the BPF target sees them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "proto/ddp_check.h"
#include "proto/wire.h"

#include "check_case.h"

_Static_assert(sizeof(struct iwx_mpa_rr) == 20, "MPA request/reply header");
_Static_assert(sizeof(struct iwx_mpa_v2_ird_ord) == 4, "RFC 6581 IRD/ORD");
_Static_assert(sizeof(struct iwx_mpa_marker) == IWX_MPA_MARKER_LEN, "MPA marker");
_Static_assert(sizeof(struct iwx_ddp_tagged_hdr) == IWX_DDP_TAGGED_HDR_LEN, "DDP tagged");
_Static_assert(sizeof(struct iwx_ddp_untagged_hdr) == IWX_DDP_UNTAGGED_HDR_LEN, "DDP untagged");
_Static_assert(sizeof(struct iwx_rdmap_read_req) == IWX_RDMAP_READ_REQ_LEN, "Read Request");
_Static_assert(sizeof(struct iwx_rdmap_term_ctrl) == IWX_TERM_CTRL_LEN, "Terminate control");

struct check_case cases[CHECK_CASES];
__u32 ncases;

SEC("tc")
int run_checks(struct __sk_buff *skb __attribute__((unused)))
{
	for (__u32 i = 0; i < CHECK_CASES && i < ncases; i++) {
		struct check_case *c = &cases[i];
		const struct iwx_stag_desc *d = c->has_desc ? &c->desc : 0;

		c->r_tagged = iwx_check_tagged(d, c->stag, c->pd, c->need, c->to, c->len);
		c->r_read = iwx_check_read_source(d, c->stag, c->pd, c->to, c->len);
		c->r_untagged = iwx_check_untagged(c->has_desc ? &c->queue : 0, c->msn, c->mo,
						   c->len, c->buf_len);
		c->r_pad = iwx_mpa_pad_len(c->len);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
