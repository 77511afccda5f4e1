// SPDX-License-Identifier: MIT
/*
 * The fault injector of tests/bpf/faults.bpf.c on packets built here (BPF_PROG_TEST_RUN):
 * a corrupted segment stays TCP-valid, the one changed byte is FPDU payload, and the
 * other faults give their verdicts. On a veth, TCP's segments are CHECKSUM_PARTIAL and
 * the checksum fix-up does nothing; a test run's packet is not, so it is checked here.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <linux/pkt_cls.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "faults.skel.h"
#include "testutil.h"

#define PLEN		1448	/* one FPDU of an MSS */
#define L4		34	/* Ethernet, IPv4 */

static uint8_t pkt[L4 + 20 + PLEN], out[sizeof(pkt) + 64];

/* An IPv4 TCP segment of PLEN bytes of payload, its checksums right. */
static void build(void)
{
	uint8_t *ip = pkt + 14, *tcp = pkt + L4;
	uint16_t c;

	memset(pkt, 0, sizeof(pkt));
	pkt[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (20 + 20 + PLEN) >> 8;
	ip[3] = (uint8_t)(20 + 20 + PLEN);
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12, "\xc0\x00\x02\x01\xc0\x00\x02\x02", 8);
	c = iwx_csum_fold(iwx_csum_add(0, ip, 20));
	ip[10] = c >> 8;
	ip[11] = (uint8_t)c;
	tcp[1] = 1;
	tcp[3] = 2;
	tcp[7] = 100;	/* seq */
	tcp[12] = 5 << 4;
	tcp[13] = 0x18;	/* PSH, ACK */
	fill_pattern(tcp + 20, PLEN, 3);
	c = iwx_csum_fold(iwx_csum_add(iwx_csum_add(IPPROTO_TCP + 20 + PLEN, ip + 12, 8), tcp, 20 + PLEN));
	tcp[16] = c >> 8;
	tcp[17] = (uint8_t)c;
}

static struct faults_bpf *load(void)
{
	struct faults_bpf *skel;

	if (geteuid() != 0)
		cr_skip_test("needs root to load BPF programs");
	skel = faults_bpf__open_and_load();
	cr_assert_not_null(skel, "load faults.bpf.o");
	build();
	return skel;
}

/* Run the injector on pkt: its verdict; the packet it leaves in out. */
static int run(struct faults_bpf *skel)
{
	LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .data_out = out, .data_size_out = sizeof(out));

	cr_assert_eq(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.inject), &r), 0);
	cr_assert_eq(r.data_size_out, sizeof(pkt));
	return (int)r.retval;
}

Test(faults_bpf, corruption_changes_one_payload_byte_and_keeps_tcp_valid)
{
	struct faults_bpf *skel = load();

	skel->bss->corrupt_ppm = 1000000;
	for (uint64_t seed = 1; seed <= 64; seed++) {
		size_t diff = 0, at = 0;

		skel->bss->seed = seed;
		skel->bss->sent_valid = 0;	/* new data each time: a resend is not corrupted */
		cr_assert_eq(run(skel), TC_ACT_OK);
		for (size_t i = 0; i < sizeof(pkt); i++)
			if (out[i] != pkt[i] && i != L4 + 16 && i != L4 + 17 && !diff++)
				at = i;
		cr_assert_eq(diff, 1, "seed %lu: %zu bytes changed", (unsigned long)seed, diff);
		cr_assert_eq(out[at] ^ pkt[at], 0xff);
		/* past the FPDU's header (ULPDU_LENGTH, DDP and RDMAP), before its CRC */
		cr_assert(at >= L4 + 20 + 16 && at < L4 + 20 + PLEN - 4, "byte %zu", at - L4 - 20);
		cr_assert_eq(iwx_csum_fold(iwx_csum_add(iwx_csum_add(IPPROTO_TCP + 20 + PLEN, out + 26, 8), out + L4,
						20 + PLEN)), 0, "seed %lu: the TCP checksum is wrong",
			     (unsigned long)seed);
	}
	cr_assert_eq(skel->bss->corrupted, 64);
	cr_assert_eq(skel->bss->seen, 64);
	faults_bpf__destroy(skel);
}

Test(faults_bpf, a_resend_is_not_corrupted)
{
	struct faults_bpf *skel = load();

	skel->bss->corrupt_ppm = 1000000;
	cr_assert_eq(run(skel), TC_ACT_OK);
	cr_assert_eq(run(skel), TC_ACT_OK);
	cr_assert_eq(memcmp(out, pkt, sizeof(pkt)), 0, "the same segment again went out changed");
	cr_assert_eq(skel->bss->corrupted, 1);
	faults_bpf__destroy(skel);
}

Test(faults_bpf, drops_and_delays_by_rate)
{
	struct faults_bpf *skel = load();

	skel->bss->drop_ppm = 1000000;
	cr_assert_eq(run(skel), TC_ACT_SHOT);
	skel->bss->drop_ppm = 0;
	skel->bss->reorder_ppm = 1000000;
	cr_assert_eq(run(skel), TC_ACT_OK);
	skel->bss->reorder_ppm = 0;
	cr_assert_eq(run(skel), TC_ACT_OK);
	cr_assert_eq(memcmp(out, pkt, sizeof(pkt)), 0, "no fault: the segment unchanged");
	cr_assert_eq(skel->bss->dropped, 1);
	cr_assert_eq(skel->bss->reordered, 1);
	cr_assert_eq(skel->bss->seen, 3);
	faults_bpf__destroy(skel);
}

/* The same seed makes the same choices: a failing run can be run again. */
Test(faults_bpf, the_seed_decides)
{
	struct faults_bpf *skel = load();
	int verdicts[2][200];

	skel->bss->drop_ppm = 300000;
	for (int k = 0; k < 2; k++) {
		skel->bss->seen = 0;
		skel->bss->seed = 42;
		for (int i = 0; i < 200; i++)
			verdicts[k][i] = run(skel);
	}
	cr_assert_eq(memcmp(verdicts[0], verdicts[1], sizeof(verdicts[0])), 0);
	cr_assert(skel->bss->dropped > 80 && skel->bss->dropped < 160, "%llu of 400 dropped",
		  (unsigned long long)skel->bss->dropped);
	faults_bpf__destroy(skel);
}
