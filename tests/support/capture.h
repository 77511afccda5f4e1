/* SPDX-License-Identifier: MIT */
/* A packet capture in a test's namespace, and tshark's verdict on it. */
#ifndef IWX_CAPTURE_H
#define IWX_CAPTURE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * dumpcap on interface dev of namespace ns, writing path, with a capture filter;
 * returns once it captures: its pid, or -errno.
 */
pid_t capture_start(const char *ns, const char *dev, const char *path, const char *filter);

/* Stop it (after a pause for the last frames) and wait for it. */
void capture_stop(pid_t pid);

/*
 * What tshark's iwarp_mpa and iwarp_ddp_rdmap dissectors say of a capture: CRC
 * verdicts, and expert warnings other than the two tshark 4.0 raises on every
 * revision-2 MPA Request (it predates RFC 6581). 0, or -errno if tshark did not run.
 */
struct tshark_verdict {
	unsigned	good_crcs, bad_crcs, warnings;
};
int tshark_check(const char *path, struct tshark_verdict *v);

/*
 * The fields (tshark's -e options, e.g. "-e sctp.chunk_type") of the packets of a
 * capture that match a display filter, one line per packet, into out (cap bytes, cut
 * there); SCTP checksums are checked as CRC32c. The number of lines, or -errno.
 */
int tshark_fields(const char *path, const char *filter, const char *fields, char *out, size_t cap);

#endif /* IWX_CAPTURE_H */
