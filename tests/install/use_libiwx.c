// SPDX-License-Identifier: MIT
/* Built against an installed libiwx through pkg-config: iwx.h alone is all an application needs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <iwx/iwx.h>

int main(void)
{
	/* a Terminate's cause as a DISCONNECTED event carries it: DDP (1), tagged (1), invalid STag (0) */
	struct iwx_term_info t = { .terminated = true, .layer = 1, .etype = 1, .ecode = 0 };
	char why[IWX_TERM_STR_LEN];
	IWX_OPTS(iwx_open_opts, o, .socket = "/nonexistent/iwxd.sock");
	struct iwx_device *dev = iwx_open(&o);	/* the verbs API links; no daemon there */
	int err = errno, access = IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE |
				  IWX_ACCESS_REMOTE_READ;

	iwx_term_str(&t, why, sizeof(why));
	printf("libiwx: Terminate cause \"%s\", a \"%s\" completion, iwx_open of %s: %s\n", why,
	       iwx_wc_opcode_name(IWX_WC_RDMA_WRITE), iwx_socket_path(&o),
	       dev ? "opened?" : iwx_strerror(err));
	return !strcmp(why, "DDP tagged buffer error: invalid STag") && access == 7 && !dev &&
	       err == ENOENT ? 0 : 1;
}
