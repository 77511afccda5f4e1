/* SPDX-License-Identifier: MIT */
/*
 * The few kernel structures and kfuncs the fast path reads, declared by name and field
 * alone: libbpf relocates each access against the running kernel's BTF (CO-RE), so no
 * vmlinux.h is generated and the object does not depend on one kernel's layout.
 */
#ifndef IWX_BPF_KERNEL_H
#define IWX_BPF_KERNEL_H

#include <linux/bpf.h>
#include <linux/types.h>

#define __kernel_struct	__attribute__((preserve_access_index))

typedef struct { long long counter; } __kernel_struct atomic64_t;

struct sock_common {
	atomic64_t	skc_cookie;
} __kernel_struct;

struct sock {
	struct sock_common __sk_common;
} __kernel_struct;

struct inet_sock {
	struct sock	sk;
} __kernel_struct;

struct inet_connection_sock {
	struct inet_sock icsk_inet;
} __kernel_struct;

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	__u32	rcv_nxt;	/* what TCP expects next */
	__u32	copied_seq;	/* what the reader has read up to */
	__u32	rcv_wup;	/* rcv_nxt when the window was last announced */
	__u32	rcv_wnd;	/* ... and the window announced then */
} __kernel_struct;

struct sk_buff {
	__u8	ip_summed:2;
} __kernel_struct;

/* include/linux/skbuff.h */
#define CHECKSUM_NONE		0
#define CHECKSUM_UNNECESSARY	1
#define CHECKSUM_COMPLETE	2
#define CHECKSUM_PARTIAL	3

struct seq_file;

struct bpf_iter_meta {
	struct seq_file	*seq;
} __kernel_struct;

struct bpf_iter__tcp {
	struct bpf_iter_meta	*meta;
	struct sock_common	*sk_common;
} __kernel_struct;

extern void *bpf_cast_to_kern_ctx(void *ctx) __ksym;
extern int bpf_dynptr_from_skb(struct __sk_buff *skb, __u64 flags, struct bpf_dynptr *ptr) __ksym;
extern int bpf_dynptr_from_xdp(struct xdp_md *xdp, __u64 flags, struct bpf_dynptr *ptr) __ksym;

#endif /* IWX_BPF_KERNEL_H */
