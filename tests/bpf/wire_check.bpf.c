// SPDX-License-Identifier: MIT
/*
 * Build check: the wire formats and buffer checks compile for the BPF target with
 * the layouts user space sees, so the fast path and the daemon share one definition.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include <iwx/ddp_check.h>
#include <iwx/wire.h>

_Static_assert(sizeof(struct iwx_mpa_rr) == 20, "MPA request/reply header");
_Static_assert(sizeof(struct iwx_mpa_v2_ird_ord) == 4, "RFC 6581 IRD/ORD");
_Static_assert(sizeof(struct iwx_mpa_marker) == IWX_MPA_MARKER_LEN, "MPA marker");
_Static_assert(sizeof(struct iwx_ddp_tagged_hdr) == IWX_DDP_TAGGED_HDR_LEN, "DDP tagged");
_Static_assert(sizeof(struct iwx_ddp_untagged_hdr) == IWX_DDP_UNTAGGED_HDR_LEN, "DDP untagged");
_Static_assert(sizeof(struct iwx_rdmap_read_req) == IWX_RDMAP_READ_REQ_LEN, "Read Request");
_Static_assert(sizeof(struct iwx_rdmap_term_ctrl) == IWX_TERM_CTRL_LEN, "Terminate control");

SEC("tc")
int wire_check(struct __sk_buff *skb)
{
	struct iwx_stag_desc d = {
		.stag = 0x100, .pd = 1, .valid = 1, .access = IWX_ACCESS_REMOTE_WRITE,
		.base_to = 0, .len = 4096,
	};
	struct iwx_untagged_queue q = { .next_msn = 1, .posted = 1 };

	return iwx_check_tagged(&d, 0x100, 1, IWX_ACCESS_REMOTE_WRITE, skb->len, 64) |
	       iwx_check_untagged(&q, 1, 0, skb->len, 4096) | (int)iwx_mpa_pad_len(skb->len);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
