/* SPDX-License-Identifier: MIT */
/* The struct of type whose member ptr points to (rdma-core's verbs.h defines the same). */
#ifndef IWX_UTIL_CONTAINER_OF_H
#define IWX_UTIL_CONTAINER_OF_H

#include <stddef.h>

#ifndef container_of
#define container_of(ptr, type, member)	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#endif /* IWX_UTIL_CONTAINER_OF_H */
