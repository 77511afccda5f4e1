/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the unit tests. */
#ifndef IWX_TESTUTIL_H
#define IWX_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/inet_csum.h"	/* iwx_csum_add, iwx_csum_fold: the tests build packets */

/* One piece of a message for iwx_fd_send/recv: &IOV(buf, len), 1. */
#define IOV(b, n)	((struct iovec){ (void *)(b), (n) })

/* Decode a hex string (spaces allowed) into out; returns the byte count. Aborts on bad input. */
size_t hex_decode(const char *hex, uint8_t *out, size_t cap);

/* Fill buf with a repeatable pattern that depends on seed. */
void fill_pattern(uint8_t *buf, size_t len, uint32_t seed);

/* RFC 5040 captures from Linux's siw (rping, CRC on), one FPDU per line, per direction. */
extern const char *const siw_client_fpdus[];	/* initiator -> responder, from the first FPDU */
extern const char *const siw_server_fpdus[];	/* responder -> initiator */

#endif /* IWX_TESTUTIL_H */
