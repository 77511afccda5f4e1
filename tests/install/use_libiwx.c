// SPDX-License-Identifier: MIT
/* Built against an installed libiwx through pkg-config: the headers and library are usable. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <iwx/iwx.h>
#include <iwx/term.h>

int main(void)
{
	/* the names of a Terminate's cause, as a DISCONNECTED event carries it */
	const char *why = iwx_term_ecode_name(IWX_LAYER_DDP, IWX_DDP_ETYPE_TAGGED, IWX_DDP_T_INVALID_STAG);
	struct iwx_open_opts o = { .socket = "/nonexistent/iwxd.sock" };
	struct iwx_device *dev = iwx_open(&o);	/* the verbs API links; no daemon there */
	int err = errno;

	printf("libiwx: Terminate cause \"%s\", iwx_open without a daemon: %s\n", why,
	       dev ? "opened?" : iwx_strerror(err));
	return strstr(why, "STag") && !dev && err == ENOENT ? 0 : 1;
}
