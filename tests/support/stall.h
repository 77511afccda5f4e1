/* SPDX-License-Identifier: MIT */
/*
 * Waits that end on a hang, not on a pace. A test waits for an event; while it waits it
 * watches a number that grows as the work goes on (bytes moved, connections up), and
 * gives up only once that number has stood still for STALL_MS. A slow or busy machine
 * makes the wait longer, never the verdict different; the Criterion suite's timeout is
 * the last resort for a wait that watches nothing.
 */
#ifndef IWX_STALL_H
#define IWX_STALL_H

#include <stdbool.h>
#include <stdint.h>

#define STALL_MS	20000	/* this long with nothing moving is a hang */
/*
 * Every suite's Criterion timeout: the last resort against a hang where no wait watches
 * (a blocking call), never a bound on how long a test may take on a slow machine.
 */
#define HANG_S		600

struct stall {
	uint64_t	seen;		/* the progress last seen */
	uint64_t	since;		/* when it last moved (iwx_now_ms) */
};

/* Start watching progress, which stands at now. */
void stall_start(struct stall *s, uint64_t now);

/* Has progress, which stands at now, not moved for STALL_MS? */
bool stall_stuck(struct stall *s, uint64_t now);

#endif /* IWX_STALL_H */
