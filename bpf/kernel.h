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
	unsigned char	skc_state;	/* TCP_ESTABLISHED, ... */
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

struct tcp_options_received {
	__u32	ts_recent;	/* the timestamp PAWS compares with (RFC 7323 §5) */
	__u16	tstamp_ok:1;	/* timestamps agreed at the handshake */
} __kernel_struct;

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	__u32	rcv_nxt;	/* what TCP expects next */
	__u32	copied_seq;	/* what the reader has read up to */
	__u32	rcv_wup;	/* rcv_nxt when the window was last announced */
	__u32	rcv_wnd;	/* ... and the window announced then */
	__u32	snd_una;	/* the oldest byte sent and not acknowledged */
	__u32	snd_nxt;	/* the next byte to send */
	__u32	max_window;	/* the largest window the peer announced */
	__u64	bytes_acked;
	struct tcp_options_received rx_opt;
	void	*md5sig_info;	/* TCP-MD5 keys (CONFIG_TCP_MD5SIG) */
	void	*ao_info;	/* TCP-AO keys (CONFIG_TCP_AO) */
} __kernel_struct;

struct sk_buff {
	struct sock	*sk;
	unsigned int	len;		/* of the data, from data on */
	char		cb[48];		/* TCP's: struct tcp_skb_cb, seq first */
	__u8		ip_summed:2;
} __kernel_struct;

struct net_device {
	const unsigned char *dev_addr;
} __kernel_struct;

struct xdp_rxq_info {
	struct net_device *dev;
} __kernel_struct;

struct xdp_buff {
	struct xdp_rxq_info *rxq;
} __kernel_struct;

/* include/net/tcp_states.h */
#define TCP_ESTABLISHED		1

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

/* include/linux/bpf.h */
struct bpf_map {
	__u32	id;
	char	name[16];	/* BPF_OBJ_NAME_LEN */
} __kernel_struct;

struct bpf_iter__bpf_map {
	struct bpf_iter_meta	*meta;
	struct bpf_map		*map;
} __kernel_struct;

extern void *bpf_cast_to_kern_ctx(void *ctx) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
/* also from a tracing program's sk_buff (read-only), where the kernel allows it */
extern int bpf_dynptr_from_skb(struct __sk_buff *skb, __u64 flags, struct bpf_dynptr *ptr) __ksym;
extern int bpf_dynptr_from_xdp(struct xdp_md *xdp, __u64 flags, struct bpf_dynptr *ptr) __ksym;
extern int bpf_dynptr_clone(const struct bpf_dynptr *ptr, struct bpf_dynptr *clone__uninit) __ksym;

#endif /* IWX_BPF_KERNEL_H */
