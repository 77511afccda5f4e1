/* SPDX-License-Identifier: MIT */
/* A fuzz target's assertion: report where and abort, so libFuzzer saves the input. */
#ifndef IWX_FUZZ_CHECK_H
#define IWX_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                              \
			abort();                                                     \
		}                                                                    \
	} while (0)

#endif /* IWX_FUZZ_CHECK_H */
