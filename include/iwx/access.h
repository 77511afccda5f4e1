/* SPDX-License-Identifier: MIT */
/*
 * Access rights of a registration: what an application asks for (iwx/iwx.h) and what
 * the buffer checks of iwxd and the BPF fast path test (proto/ddp_check.h). One
 * definition for both; no includes, so that it builds for the BPF target too.
 */
#ifndef IWX_ACCESS_H
#define IWX_ACCESS_H

#define IWX_ACCESS_LOCAL_WRITE	0x1
#define IWX_ACCESS_REMOTE_WRITE	0x2
#define IWX_ACCESS_REMOTE_READ	0x4
#define IWX_ACCESS_REMOTE_ATOMIC 0x8	/* the target of a peer's atomic operation (RFC 7306) */

/* Known rights, and remote write or atomic only with local write (as ibverbs requires too). */
static inline int iwx_access_valid(unsigned int a)
{
	return !(a & ~(IWX_ACCESS_LOCAL_WRITE | IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_READ |
		       IWX_ACCESS_REMOTE_ATOMIC)) &&
	       (!(a & (IWX_ACCESS_REMOTE_WRITE | IWX_ACCESS_REMOTE_ATOMIC)) ||
		(a & IWX_ACCESS_LOCAL_WRITE));
}

#endif /* IWX_ACCESS_H */
