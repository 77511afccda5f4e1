/* SPDX-License-Identifier: MIT */
/* What the fault injector (faults.bpf.c) and its loader (tests/support/faults.c) share. */
#ifndef IWX_TEST_FAULTS_H
#define IWX_TEST_FAULTS_H

/* skb->mark of a duplicate: the injector lets it pass when it comes round again */
#define FAULTS_CLONE_MARK	0x1f1f0001u
/* skb->priority of a segment to delay: htb class 1:20, the slow one (faults.c) */
#define FAULTS_SLOW_CLASS	0x10020u

#endif /* IWX_TEST_FAULTS_H */
