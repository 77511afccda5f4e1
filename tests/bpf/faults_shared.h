/* SPDX-License-Identifier: MIT */
/* What the fault injector (faults.bpf.c) and its loader (tests/support/faults.c) share. */
#ifndef IWX_TEST_FAULTS_SHARED_H
#define IWX_TEST_FAULTS_SHARED_H

/* skb->mark of a duplicate: the injector lets it pass when it comes round again */
#define FAULTS_CLONE_MARK	0x1f1f0001u
/* skb->priority of a segment to delay: htb class 1:20, the slow one (faults.c) */
#define FAULTS_SLOW_CLASS	0x10020u

/* What makes the receiver's TCP refuse a forged segment (faults.bpf.c, forge()) */
enum faults_forge {
	FAULTS_FORGE_NONE,
	FAULTS_FORGE_ACK,	/* an ACK of data never sent (RFC 5961 §5.2) */
	FAULTS_FORGE_IP_SUM,	/* a bad IPv4 header checksum */
	FAULTS_FORGE_MAC,	/* another host's MAC address */
	FAULTS_FORGE_PAWS,	/* an old timestamp (RFC 7323 §5) */
	FAULTS_FORGE_TOS,	/* FAULTS_FORGE_TOS_MARK, which the receiver's filter drops after
				   the fast path's program (drop_marked): nothing the program sees */
	FAULTS_FORGE_VLAN,	/* tagged for VLAN FAULTS_FORGE_VLAN_ID, which the receiver does not have */
	FAULTS_FORGE_LONGER,	/* with an ACK of data never sent, its first FPDU one with the second
				   (ULPDU_LENGTH over both), the CRC word at its end not the second's */
	FAULTS_FORGE_PAWS_RACE,	/* its own timestamp, sent behind a copy of the segment's bytes one
				   segment earlier (old data, a duplicate TCP drops) whose timestamp
				   is FAULTS_FORGE_NEWER ms newer: once TCP has taken that one, the
				   forged copy's timestamp is old (RFC 7323 §5), but not when a
				   program judged it before TCP took either */
};
#define FAULTS_FORGE_NEWER	2
#define FAULTS_FORGE_VLAN_ID	100
#define FAULTS_FORGE_TOS_MARK	0xb8	/* the IPv4 TOS the filter drops */

#endif /* IWX_TEST_FAULTS_SHARED_H */
