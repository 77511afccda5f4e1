/* SPDX-License-Identifier: MIT */
/*
 * One line to stderr the first time a drop-in refuses something of a kind: what iWARP
 * cannot do (UD, XRC, a QP readied without rdma_cm), which programs report as a bare
 * failure, or not at all. said: the kind's flag.
 */
#ifndef IWX_UTIL_SAY_ONCE_H
#define IWX_UTIL_SAY_ONCE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

__attribute__((format(printf, 2, 3)))
static inline void iwx_say_once(bool *said, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(said, true, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

#endif /* IWX_UTIL_SAY_ONCE_H */
