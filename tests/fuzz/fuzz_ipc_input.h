/* SPDX-License-Identifier: MIT */
/* What fuzz_ipc's inputs mean beyond iwxd's own requests; make_seeds writes them too. */
#ifndef IWX_FUZZ_IPC_INPUT_H
#define IWX_FUZZ_IPC_INPUT_H

/* A record of this op is written into shared memory, not sent (fuzz_ipc.c) */
#define FUZZ_IPC_OP_SHARED	0xffff

/*
 * HELLO's version in an input counts from this one, the IPC's when the corpus was
 * written: sent as version + (IWX_IPC_VERSION - FUZZ_IPC_CORPUS_VERSION), so the
 * corpus kept in the tree still gets past HELLO after the IPC's version moves on.
 */
#define FUZZ_IPC_CORPUS_VERSION	16

#endif /* IWX_FUZZ_IPC_INPUT_H */
