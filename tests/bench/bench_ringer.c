// SPDX-License-Identifier: MIT
/*
 * A client that rings every doorbell it has without end (tests/support/ringer.h), for
 * scripts/bench-bell.sh: a newline on stdout once it rings, then it rings until killed.
 *
 *   bench_ringer -D SOCKET [-q QUEUE_PAIRS]    (default 1024, iwxd's --max-qps)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringer.h"

int main(int argc, char **argv)
{
	const char *socket = NULL;
	long nqps = 1024;
	int c, err;

	while ((c = getopt(argc, argv, "D:q:h")) != -1) {
		switch (c) {
		case 'D': socket = optarg; break;
		case 'q': nqps = atol(optarg); break;
		default:
			fprintf(stderr, "usage: bench_ringer -D SOCKET [-q QUEUE_PAIRS]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!socket || nqps < 1 || nqps > 65536) {
		fprintf(stderr, "bench_ringer: -D SOCKET, and 1 to 65536 queue pairs\n");
		return 2;
	}
	err = ringer_run(socket, (uint32_t)nqps, STDOUT_FILENO);
	fprintf(stderr, "bench_ringer: %s\n", strerror(-err));
	return 1;
}
