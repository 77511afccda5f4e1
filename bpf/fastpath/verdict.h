/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What the programs decide of an FPDU, or of a whole packet: a skip reason
 * (proto/fastpath_stats.h), or one of the two verdicts here.
 */
#ifndef IWX_BPF_FP_VERDICT_H
#define IWX_BPF_FP_VERDICT_H

#include "proto/fastpath_stats.h"

/*
 * Besides the skip reasons (enum iwx_fp_skip, each a counter's index): the verdict on an
 * FPDU that is placed, and on a packet that nothing refuses whole. No reasons, so past
 * them all; under 128, so that x86 compares them in a one-byte immediate.
 */
#define IWX_FP_PLACED		64u
#define IWX_FP_NO_REFUSAL	65u
_Static_assert(IWX_FP_SKIP_N < IWX_FP_PLACED, "a skip reason would read as placed");

#endif /* IWX_BPF_FP_VERDICT_H */
