// SPDX-License-Identifier: MIT
/* The buffer checks give the same answers in the kernel (BPF) as in user space. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/ddp_check.h"
#include "proto/wire.h"

#include "check_case.h"
#include "check_prog.skel.h"

/* Random inputs around the interesting edges: bounds, wrap, PD, key, MSN range. */
static void random_case(struct check_case *c)
{
	static const __u64 tos[] = { 0, 1, 0x1000, 0x1fff, 0x2000, ~0ull - 3, ~0ull, 1ull << 63 };
	static const __u32 lens[] = { 0, 1, 4, 0x1000, 0xffff, 0xffffffff };

	memset(c, 0, sizeof(*c));
	c->has_desc = rand() % 8 != 0;
	c->desc.stag = 0x4200 | (rand() % 2);
	c->desc.pd = rand() % 2;
	c->desc.valid = rand() % 6 != 0;
	c->desc.access = rand() % 8;
	c->desc.base_to = tos[rand() % 8];
	c->desc.len = lens[rand() % 6];
	c->stag = 0x4200 | (rand() % 2);
	c->pd = rand() % 2;
	c->need = rand() % 2 ? IWX_ACCESS_REMOTE_WRITE : IWX_ACCESS_LOCAL_WRITE;
	c->to = tos[rand() % 8] + rand() % 3;
	c->len = lens[rand() % 6];
	c->queue.next_msn = rand() % 2 ? 1 : 0xfffffffe;
	c->queue.posted = rand() % 4;
	c->msn = c->queue.next_msn + rand() % 6 - 1;
	c->mo = rand() % 3 ? 0 : lens[rand() % 6];
	c->buf_len = lens[rand() % 6];
}

Test(bpf_checks, kernel_and_user_space_agree)
{
	struct check_prog_bpf *skel;
	char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = pkt, .data_size_in = sizeof(pkt));

	if (geteuid() != 0)
		cr_skip_test("needs root to load BPF programs");
	skel = check_prog_bpf__open_and_load();
	cr_assert_not_null(skel, "load check_prog: the verifier must accept the shared checks");

	srand(42);
	for (int round = 0; round < 50; round++) {
		int prog = bpf_program__fd(skel->progs.run_checks);

		skel->bss->ncases = CHECK_CASES;
		for (int i = 0; i < CHECK_CASES; i++)
			random_case(&skel->bss->cases[i]);
		cr_assert_eq(bpf_prog_test_run_opts(prog, &run), 0);
		for (int i = 0; i < CHECK_CASES; i++) {
			struct check_case *c = &skel->bss->cases[i];
			const struct iwx_stag_desc *d = c->has_desc ? &c->desc : NULL;

			cr_assert_eq(c->r_tagged, iwx_check_tagged(d, c->stag, c->pd, c->need, c->to, c->len),
				     "round %d case %d", round, i);
			cr_assert_eq(c->r_read, iwx_check_read_source(d, c->stag, c->pd, c->to, c->len));
			cr_assert_eq(c->r_untagged, iwx_check_untagged(c->has_desc ? &c->queue : NULL,
								       c->msn, c->mo, c->len, c->buf_len));
			cr_assert_eq(c->r_pad, iwx_mpa_pad_len(c->len));
		}
	}
	check_prog_bpf__destroy(skel);
}
