// SPDX-License-Identifier: MIT
/*
 * A fault injector for tests, at TC egress (tcx) of a veth end: netem is not built
 * here. It drops, duplicates, reorders or corrupts IPv4 TCP segments that carry
 * payload, at rates per million segments (as TCP hands them to the device: with TSO, a
 * segment of up to 64 KiB); or, with udp_port, drops and duplicates IPv4 UDP datagrams
 * to that port (SCTP in UDP), at the same rates. The loader sets the rates and the seed
 * (tests/support/faults.c) and reads the counters.
 *
 * Each segment draws one number, a hash of (seed, its index among the segments seen):
 * the n-th segment meets the same fault in every run, whichever CPU sends it.
 *
 * Or it forges (forge_at): an attacker on the wire racing the sender. Of the n-th new
 * segment whose first wire segment is one FPDU of forge_len bytes (with TSO, a segment of
 * up to 64 KiB cut at gso_size: iwx starts an FPDU at each), it first sends a copy whose
 * first FPDU carries other payload, with an MPA CRC that holds over it, and that the
 * receiver's TCP refuses (forge_how), then the segment itself. drop_marked, at TC ingress
 * of the receiver after the fast path's program, drops the copies marked for it.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <stdbool.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "faults_shared.h"

/* set by the loader */
__u64 seed;
__u32 drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
__u32 corrupt_at;	/* 0: a random byte of FPDU payload; n: byte n - 1 of a wire segment */
__u8 corrupt_xor;	/* the bits flipped (0: all) */
__be16 udp_port;	/* 0: TCP segments; else UDP datagrams to this port, network order */
__u32 drop_at;		/* 0: none; n: the (n - 1)-th segment or datagram seen is dropped */
__u32 forge_at;		/* 0: none; n: from the (n - 1)-th new segment of forge_len bytes on,
			   one is forged */
__u32 forge_len;
__u32 forge_flip;	/* the even offset in its payload of the 2 bytes flipped (0x5a5a) */
__u32 forge_crc;	/* XORed into its last 4 bytes, so that the forged FPDU's CRC holds */
__u32 forge_how;	/* enum faults_forge */

/* read by the loader */
__u64 seen, dropped, duplicated, reordered, corrupted;
__u64 corrupt_seq;	/* the sequence number of the last byte corrupted, for messages */
__u64 forge_seen, forged, marked_dropped;

/* where the data sent so far ends (one connection at a time), once sent_valid */
__u32 sent_end, sent_valid;
/* a corruption drawn for a resend waits for the next new data */
__u32 corrupt_due;

/* splitmix64's finalizer (xorshifts and multiplies): a well-mixed word from any input */
static __always_inline __u64 mix(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Does [seq, end) start with data not sent before? Only new data is corrupted: a
 * retransmission (a tail loss probe, say) may carry bytes the receiver has already,
 * which it would drop unseen, and the test would wait for a Terminate in vain.
 */
static __always_inline bool fresh(__u32 seq, __u32 end)
{
	bool r = !sent_valid || (__s32)(seq - sent_end) >= 0;

	if (r || (__s32)(end - sent_end) > 0) {
		sent_end = end;
		sent_valid = 1;
	}
	return r;
}

/*
 * Flip the bits xor of the payload byte at off, keeping the segment TCP-valid: the
 * checksum is fixed for the 16-bit word the byte is in (RFC 1624). On a CHECKSUM_PARTIAL
 * segment (veth offloads it) the helper leaves the field alone, as it must: the sum
 * over the payload is computed later, over the changed byte.
 */
static __always_inline int corrupt(struct __sk_buff *skb, __u32 l4, __u32 off, __u8 xor)
{
	__u32 word = l4 + ((off - l4) & ~1u);
	__u16 old, new;

	if (bpf_skb_load_bytes(skb, word, &old, sizeof(old)))
		return -1;
	new = old ^ (off == word ? bpf_htons(xor << 8) : bpf_htons(xor));
	if (bpf_skb_store_bytes(skb, word, &new, sizeof(new), 0) ||
	    bpf_l4_csum_replace(skb, l4 + __builtin_offsetof(struct tcphdr, check), old, new, sizeof(new)))
		return -1;
	return 0;
}

/*
 * Which byte of the payload [0, len) to corrupt, or len for none. TSO cuts the segment
 * into wire segments of gso_size bytes, and iwx starts an FPDU at each (RFC 5044 §5):
 * one of them at random, and in it a byte past the FPDU's 16 header bytes and before its
 * CRC; or, with corrupt_at, that byte of the wire segment.
 */
static __always_inline __u32 corrupt_pos(__u32 gso_size, __u32 len, __u64 r)
{
	__u32 wire = gso_size && gso_size < len ? gso_size : len;
	__u32 start = (__u32)(r % ((len + wire - 1) / wire)) * wire;
	__u32 n = len - start < wire ? len - start : wire;

	if (corrupt_at)
		return corrupt_at - 1 < n ? start + corrupt_at - 1 : len;
	r >>= 32;
	return n > 20 ? start + 16 + (__u32)(r % (n - 20)) : start + (__u32)(r % n);
}

/*
 * Replace size (2 or 4) bytes at off, from with to, keeping the TCP checksum at csum
 * (0: none to keep) right, as corrupt() does.
 */
static __always_inline int swap(struct __sk_buff *skb, __u32 off, __u32 from, __u32 to, __u32 size,
				__u32 csum)
{
	size = size == 2 ? 2 : 4;	/* a constant for the verifier either way */
	if (bpf_skb_store_bytes(skb, off, &to, size, 0))
		return -1;
	return csum ? bpf_l4_csum_replace(skb, csum, from, to, size) : 0;
}

/* The fields forge() changes, in its copy, by index: what to put back. */
#define FORGED_FIELDS	3
struct forged {
	__u32	off[FORGED_FIELDS], real[FORGED_FIELDS], fake[FORGED_FIELDS], size[FORGED_FIELDS];
	__u32	csum[FORGED_FIELDS];
	__u32	n;
};

static __always_inline int change(struct __sk_buff *skb, struct forged *f, __u32 off, __u32 size,
				  __u32 csum, __u32 fake_xor, __s32 fake_add)
{
	__u32 real = 0, fake, i = f->n;

	if (i >= FORGED_FIELDS || bpf_skb_load_bytes(skb, off, &real, size))
		return -1;
	if (size == 4)
		fake = bpf_htonl(bpf_ntohl(real) + fake_add) ^ fake_xor;
	else
		fake = bpf_htons(bpf_ntohs((__u16)real) + fake_add) ^ fake_xor;
	f->off[i] = off;
	f->real[i] = real;
	f->fake[i] = fake;
	f->size[i] = size;
	f->csum[i] = csum;
	f->n++;
	return swap(skb, off, real, fake, size, csum);
}

/* Send a copy of the segment ahead of it, marked so that it passes this program again. */
static __always_inline bool send_copy(struct __sk_buff *skb)
{
	bool sent;

	skb->mark = FAULTS_CLONE_MARK;
	sent = !bpf_clone_redirect(skb, skb->ifindex, 0);
	skb->mark = 0;
	return sent;
}

/* FAULTS_FORGE_PAWS_RACE's first copy: the segment's len bytes one segment earlier, newer. */
static __always_inline bool newer_ahead(struct __sk_buff *skb, __u32 l4, __u32 csum, __u32 len)
{
	struct forged f = {};
	bool sent;

	sent = !change(skb, &f, l4 + 4, 4, csum, 0, -(__s32)len) &&
	       !change(skb, &f, l4 + 24, 4, csum, 0, FAULTS_FORGE_NEWER) && send_copy(skb);
	for (int i = FORGED_FIELDS - 1; i >= 0; i--)
		if (i < (int)f.n)
			swap(skb, f.off[i], f.fake[i], f.real[i], f.size[i], f.csum[i]);
	return sent;
}

/* Send a forged copy of the segment ahead of it (see above); the segment goes on as it was. */
static __always_inline void forge(struct __sk_buff *skb, __u32 l3, __u32 l4, __u32 payload,
				  __u32 len, const struct tcphdr *tcp)
{
	__u32 csum = l4 + __builtin_offsetof(struct tcphdr, check), ts = 0;
	__u8 mac[ETH_ALEN], other[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x99 };
	struct forged f = {};
	int err;

	/* Linux puts NOP, NOP, timestamps first */
	if ((forge_how == FAULTS_FORGE_PAWS || forge_how == FAULTS_FORGE_PAWS_RACE) &&
	    (tcp->doff < 8 || bpf_skb_load_bytes(skb, l4 + 20, &ts, 4) || ts != bpf_htonl(0x0101080a)))
		return;
	if (forge_how == FAULTS_FORGE_PAWS_RACE && !newer_ahead(skb, l4, csum, len))
		return;
	if (forge_how == FAULTS_FORGE_LONGER)	/* the segment holds two FPDUs (inject) */
		err = change(skb, &f, payload, 2, csum, 0, forge_len) ||
		      change(skb, &f, payload + 2 * forge_len - 4, 4, csum, 0x5a5a5a5a, 0) ||
		      change(skb, &f, l4 + 8, 4, csum, 0, 1 << 30);
	else	/* other payload, and the CRC that holds over it */
		err = change(skb, &f, payload + (forge_flip & ~1u), 2, csum, bpf_htons(0x5a5a), 0) ||
		      change(skb, &f, payload + forge_len - 4, 4, csum, forge_crc, 0);
	switch (forge_how) {
	case FAULTS_FORGE_ACK:
		err = err || change(skb, &f, l4 + 8, 4, csum, 0, 1 << 30);
		break;
	case FAULTS_FORGE_IP_SUM:
		err = err || change(skb, &f, l3 + 10, 2, 0, bpf_htons(0x0101), 0);
		break;
	case FAULTS_FORGE_PAWS:
		err = err || change(skb, &f, l4 + 24, 4, csum, 0, -100000);
		break;
	case FAULTS_FORGE_TOS:	/* the first IPv4 word: version, IHL, TOS; its header sum kept */
		if (!err && change(skb, &f, l3, 2, 0, bpf_htons(FAULTS_FORGE_TOS_MARK), 0))
			err = 1;
		if (!err && bpf_l3_csum_replace(skb, l3 + 10, f.real[2], f.fake[2], 2))
			err = 1;
		break;
	}
	if (forge_how == FAULTS_FORGE_MAC && !err &&
	    (bpf_skb_load_bytes(skb, 0, mac, ETH_ALEN) || bpf_skb_store_bytes(skb, 0, other, ETH_ALEN, 0)))
		err = 1;
	if (forge_how == FAULTS_FORGE_VLAN && !err &&
	    bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), FAULTS_FORGE_VLAN_ID))
		err = 1;
	if (!err && send_copy(skb))	/* it passes this program again (egress of the same device) */
		__sync_fetch_and_add(&forged, 1);
	/* the segment itself, as it was */
	if (forge_how == FAULTS_FORGE_VLAN && !err)
		bpf_skb_vlan_pop(skb);
	if (forge_how == FAULTS_FORGE_MAC)
		bpf_skb_store_bytes(skb, 0, mac, ETH_ALEN, 0);
	if (forge_how == FAULTS_FORGE_TOS && f.n == 3)
		bpf_l3_csum_replace(skb, l3 + 10, f.fake[2], f.real[2], 2);
	for (int i = FORGED_FIELDS - 1; i >= 0; i--)
		if (i < (int)f.n)
			swap(skb, f.off[i], f.fake[i], f.real[i], f.size[i], f.csum[i]);
}

SEC("tc")
int inject(struct __sk_buff *skb)
{
	struct ethhdr eth;
	struct iphdr ip;
	struct tcphdr tcp;
	__u32 l4, payload, end, u;
	bool new_data;
	__u64 r, idx;

	if (skb->mark == FAULTS_CLONE_MARK)
		return TC_ACT_OK;	/* our own duplicate, on its way out */
	if (bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) || eth.h_proto != bpf_htons(ETH_P_IP) ||
	    bpf_skb_load_bytes(skb, sizeof(eth), &ip, sizeof(ip)) ||
	    ip.protocol != (udp_port ? IPPROTO_UDP : IPPROTO_TCP))
		return TC_ACT_OK;
	l4 = sizeof(eth) + ip.ihl * 4;
	end = sizeof(eth) + bpf_ntohs(ip.tot_len);
	if (bpf_skb_load_bytes(skb, l4, &tcp, sizeof(tcp)))
		return TC_ACT_OK;
	/* a UDP header is TCP's first 8 bytes: the ports where they are, then length, checksum */
	if (udp_port && tcp.dest != udp_port)
		return TC_ACT_OK;
	payload = l4 + (udp_port ? 8 : tcp.doff * 4);
	if (payload >= end || end > skb->len)
		return TC_ACT_OK;	/* a bare ACK: left alone */

	new_data = udp_port ? false : fresh(bpf_ntohl(tcp.seq), bpf_ntohl(tcp.seq) + (end - payload));
	if (forge_at && new_data && (skb->gso_size ? skb->gso_size : end - payload) == forge_len &&
	    end - payload >= (forge_how == FAULTS_FORGE_LONGER ? 2 : 1) * forge_len) {
		/* from the n-th on, until one copy went out (a full queue may drop one) */
		if (__sync_fetch_and_add(&forge_seen, 1) + 1 >= forge_at && !forged)
			forge(skb, sizeof(eth), l4, payload, end - payload, &tcp);
		return TC_ACT_OK;
	}
	idx = __sync_fetch_and_add(&seen, 1);
	if (drop_at && idx + 1 == drop_at) {
		__sync_fetch_and_add(&dropped, 1);
		return TC_ACT_SHOT;
	}
	r = mix(seed + idx * 0x9e3779b97f4a7c15ull);
	/* one draw picks at most one fault: [0, drop) drops, then duplicates, ... */
	u = (__u32)(r % 1000000);
	if (u < drop_ppm) {
		__sync_fetch_and_add(&dropped, 1);
		return TC_ACT_SHOT;
	}
	u -= drop_ppm;
	if (u < dup_ppm) {
		if (send_copy(skb))
			__sync_fetch_and_add(&duplicated, 1);
		return TC_ACT_OK;
	}
	u -= dup_ppm;
	if (udp_port)
		return TC_ACT_OK;	/* datagrams are dropped or duplicated only */
	if (u < reorder_ppm) {
		/* htb (faults.c) sends class 1:20 slowly: later segments overtake this one */
		skb->priority = FAULTS_SLOW_CLASS;
		__sync_fetch_and_add(&reordered, 1);
		return TC_ACT_OK;
	}
	u -= reorder_ppm;
	if (u < corrupt_ppm)
		corrupt_due = 1;
	if (corrupt_due && new_data) {
		__u32 pos = corrupt_pos(skb->gso_size, end - payload, mix(r));

		if (pos < end - payload &&
		    !corrupt(skb, l4, payload + pos, corrupt_xor ? corrupt_xor : 0xff)) {
			corrupt_seq = bpf_ntohl(tcp.seq) + pos;
			corrupt_due = 0;
			__sync_fetch_and_add(&corrupted, 1);
		}
	}
	return TC_ACT_OK;
}

/* At TC ingress of the receiver, after the fast path's program: drop the marked copies. */
SEC("tc")
int drop_marked(struct __sk_buff *skb)
{
	struct ethhdr eth;
	struct iphdr ip;

	if (!bpf_skb_load_bytes(skb, 0, &eth, sizeof(eth)) && eth.h_proto == bpf_htons(ETH_P_IP) &&
	    !bpf_skb_load_bytes(skb, sizeof(eth), &ip, sizeof(ip)) && ip.tos == FAULTS_FORGE_TOS_MARK) {
		__sync_fetch_and_add(&marked_dropped, 1);
		return TC_ACT_SHOT;
	}
	return TC_ACT_UNSPEC;	/* on to the stack */
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
