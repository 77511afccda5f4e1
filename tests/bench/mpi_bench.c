// SPDX-License-Identifier: MIT
/*
 * Two MPI ranks, as users' programs move data (scripts/bench-perftest.sh --mpi-only): the
 * half round trip of a 1-byte ping-pong (median of 10000), and the rate of MPI_Sendrecv of
 * 64 MiB each way at once and of 1 MiB each way at once (bytes one way over the time, the
 * median of ROUNDS). Rank 0 prints one line of key=value; nothing is checked here
 * (tests/dropin/mpi_check.c checks the data).
 *
 *   mpirun -np 2 ... mpi_bench [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define PINGS	10000
#define BIG	(64u << 20)
#define MID	(1u << 20)

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Half of each round trip of a 1-byte message, in µs: the median. */
static double half_rtt_us(int me, double *t)
{
	char b = 0;

	for (int i = 0; i < PINGS; i++) {
		double t0 = MPI_Wtime();

		if (me == 0) {
			MPI_Send(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
		}
		t[i] = (MPI_Wtime() - t0) * 1e6 / 2;
	}
	return median(t, PINGS);
}

/* MB/s one way of MPI_Sendrecv of len bytes each way, the median of rounds (each of reps). */
static double sendrecv_mbs(int me, char *out, char *in, unsigned len, int reps, int rounds,
			   double *t)
{
	for (int r = 0; r < rounds; r++) {
		double t0;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < reps; i++)
			MPI_Sendrecv(out, (int)len, MPI_BYTE, 1 - me, 1, in, (int)len, MPI_BYTE, 1 - me,
				     1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		t[r] = (double)len * reps / (MPI_Wtime() - t0) / 1e6;
	}
	return median(t, rounds);
}

int main(int argc, char **argv)
{
	int me, n, rounds = argc > 1 ? atoi(argv[1]) : 5;
	double *t = malloc(PINGS * sizeof(*t)), lat, big, mid;
	char *out = malloc(BIG), *in = malloc(BIG);

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (n != 2 || rounds < 1 || rounds > PINGS || !t || !out || !in) {
		if (me == 0)
			fprintf(stderr, "mpi_bench: 2 ranks (mpirun -np 2), ROUNDS 1 to %d\n", PINGS);
		MPI_Finalize();
		return 2;
	}
	memset(out, me + 1, BIG);
	memset(in, 0, BIG);
	sendrecv_mbs(me, out, in, MID, 8, 1, t);	/* connections and registrations made */
	lat = half_rtt_us(me, t);
	big = sendrecv_mbs(me, out, in, BIG, 1, rounds, t);
	mid = sendrecv_mbs(me, out, in, MID, 64, rounds, t);
	if (me == 0)
		printf("half_rtt_us=%.2f sendrecv_64m_mbs=%.0f sendrecv_1m_mbs=%.0f\n", lat, big, mid);
	MPI_Finalize();
	free(t);
	free(out);
	free(in);
	return 0;
}
