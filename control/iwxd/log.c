// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

int iwx_log_level = IWX_LOG_WARN;

void iwx_log(int level, const char *fmt, ...)
{
	static const char *const tag[] = { "error", "warning", "info", "debug" };
	struct timespec ts;
	va_list ap;

	if (level > iwx_log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "iwxd[%ld.%03ld] %s: ", (long)ts.tv_sec, ts.tv_nsec / 1000000, tag[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
