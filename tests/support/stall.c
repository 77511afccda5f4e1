// SPDX-License-Identifier: MIT
#include "stall.h"
#include "util/clock.h"

void stall_start(struct stall *s, uint64_t now)
{
	s->seen = now;
	s->since = iwx_now_ms();
}

bool stall_stuck(struct stall *s, uint64_t now)
{
	if (now != s->seen) {
		stall_start(s, now);
		return false;
	}
	return iwx_now_ms() - s->since >= STALL_MS;
}
