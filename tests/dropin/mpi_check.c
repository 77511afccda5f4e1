// SPDX-License-Identifier: MIT
/*
 * Open MPI as users run it over iwx (tests/dropin/run.sh): two ranks, each on its own host
 * (namespace) and its own iwxd, through `iwx exec` and libfabric's verbs provider.
 *   - a ping-pong of 8-byte messages, each answer checked;
 *   - a 64 MiB MPI_Sendrecv each way at once (the rendezvous path: RDMA Reads), every
 *     byte checked against the sender's pattern;
 *   - an MPI_Allreduce of 1 Mi integers, every sum checked.
 * Prints "ok ..." per check from rank 0 and exits 0 when every one held on both ranks.
 *
 *   mpirun -np 2 ... mpi_check
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define PINGS		1000
#define BIG		(64u << 20)
#define NSUM		(1u << 20)

/* The byte at i of the message rank r sends: differs per rank and per position. */
static uint8_t pattern(int r, size_t i)
{
	return (uint8_t)(i * 131u + (i >> 12) + 17u * (unsigned)r + 1u);
}

static int ping_pong(int me)
{
	uint64_t v = 0;
	int bad = 0;

	for (uint64_t i = 0; i < PINGS; i++) {
		if (me == 0) {
			v = i * 3 + 1;
			MPI_Send(&v, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&v, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += v != i * 3 + 2;
		} else {
			MPI_Recv(&v, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += v != i * 3 + 1;
			v = i * 3 + 2;
			MPI_Send(&v, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
		}
	}
	return bad;
}

static int sendrecv_big(int me)
{
	uint8_t *out = malloc(BIG), *in = malloc(BIG);
	int peer = 1 - me, bad = 0;

	if (!out || !in) {
		free(out);
		free(in);
		return 1;
	}
	for (size_t i = 0; i < BIG; i++) {
		out[i] = pattern(me, i);
		in[i] = 0;
	}
	MPI_Sendrecv(out, (int)BIG, MPI_BYTE, peer, 1, in, (int)BIG, MPI_BYTE, peer, 1,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (size_t i = 0; i < BIG; i++)
		bad += in[i] != pattern(peer, i);
	free(out);
	free(in);
	return bad;
}

static int allreduce(int me, int n)
{
	int *v = malloc(NSUM * sizeof(*v)), *sum = malloc(NSUM * sizeof(*sum));
	int bad = 0;

	if (!v || !sum) {
		free(v);
		free(sum);
		return 1;
	}
	for (unsigned i = 0; i < NSUM; i++)
		v[i] = (int)(i % 1000) * (me + 1);
	MPI_Allreduce(v, sum, (int)NSUM, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (unsigned i = 0; i < NSUM; i++)	/* sum over ranks r of (i % 1000)(r + 1) */
		bad += sum[i] != (int)(i % 1000) * n * (n + 1) / 2;
	free(v);
	free(sum);
	return bad;
}

/* Every rank's count of wrong values, summed: 0 when the check held on all. */
static int report(int me, int bad, const char *what)
{
	int all = 0;

	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (me == 0) {
		printf("%s %s", all ? "FAIL" : "ok", what);
		if (all)
			printf(": %d wrong", all);
		printf("\n");
		fflush(stdout);
	}
	return all != 0;
}

int main(int argc, char **argv)
{
	int me, n, failed = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (n != 2) {
		if (me == 0)
			fprintf(stderr, "mpi_check: run it as 2 ranks (mpirun -np 2)\n");
		MPI_Finalize();
		return 2;
	}
	failed += report(me, ping_pong(me), "ping-pong: 1000 round trips of 8 bytes");
	failed += report(me, sendrecv_big(me), "MPI_Sendrecv: 64 MiB each way, every byte");
	failed += report(me, allreduce(me, n), "MPI_Allreduce: 1 Mi integers summed");
	MPI_Finalize();
	return failed ? 1 : 0;
}
