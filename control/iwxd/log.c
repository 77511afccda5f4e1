// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

int iwx_log_level = IWX_LOG_NOTICE;

void iwx_log(int level, const char *fmt, ...)
{
	static const char *const tag[] = { "error", "warning", "notice", "info", "debug" };
	char when[32] = "";
	struct timespec ts;
	struct tm tm;
	va_list ap;

	if (level > iwx_log_level)
		return;
	/* local time, to the millisecond: what a reader compares with her clock and other logs */
	clock_gettime(CLOCK_REALTIME, &ts);
	if (localtime_r(&ts.tv_sec, &tm))
		strftime(when, sizeof(when), "%F %T", &tm);
	fprintf(stderr, "iwxd %s.%03ld %s: ", when, ts.tv_nsec / 1000000, tag[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
