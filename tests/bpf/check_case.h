/* SPDX-License-Identifier: MIT */
/* One set of inputs to the shared checks, and their results, as BPF and the test share them. */
#ifndef IWX_CHECK_CASE_H
#define IWX_CHECK_CASE_H

#include "proto/ddp_check.h"

#define CHECK_CASES 64

struct check_case {
	/* inputs */
	struct iwx_stag_desc	desc;
	struct iwx_untagged_queue queue;
	__u8			has_desc;	/* else the STag/queue is unknown (NULL) */
	__u8			need;
	__u32			stag, pd;
	__u64			to;
	__u32			len;
	__u32			msn, mo, buf_len;
	/* results */
	__u32			r_tagged, r_read, r_untagged, r_pad;
};

#endif /* IWX_CHECK_CASE_H */
