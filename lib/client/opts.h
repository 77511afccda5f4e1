/* SPDX-License-Identifier: MIT */
/* The options structs that grow (iwx.h, IWX_OPTS): are they valid, and each field by the caller's size. */
#ifndef IWX_CLIENT_OPTS_H
#define IWX_CLIENT_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#define OPTS_SZ_MAX	4096	/* a larger sz is no struct of any iwx.h: refused, not read */

#define offsetofend(type, field)	(offsetof(type, field) + sizeof(((type *)0)->field))

/*
 * opts (NULL: the defaults) as IWX_OPTS makes them: sz covers sz itself, and every byte
 * of the caller's struct beyond known (sizeof the struct as this libiwx has it: its tail
 * padding is not looked at, so a later field goes past it) is 0.
 */
static inline bool opts_valid(const void *opts, size_t known)
{
	const unsigned char *b = opts;
	size_t sz;

	if (!opts)
		return true;
	sz = *(const size_t *)opts;
	if (sz < sizeof(size_t) || sz > OPTS_SZ_MAX)
		return false;
	for (size_t i = known; i < sz; i++)
		if (b[i])
			return false;
	return true;
}

/* opts->field where the caller's struct has it, else dflt (opts NULL too) */
#define OPT(opts, field, dflt)							\
	((opts) && offsetofend(__typeof__(*(opts)), field) <= (opts)->sz ?	\
	 (opts)->field : (dflt))

#endif /* IWX_CLIENT_OPTS_H */
