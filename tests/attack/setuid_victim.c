// SPDX-License-Identifier: MIT
/*
 * A setuid-root program holding a secret, for tests/test_daemon_shm.c: it reads the
 * file named by argv[1] (readable by root only) into memory, prints where, and waits
 * until its standard input closes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char secret[4096] __attribute__((aligned(4096)));
	int fd = argc == 2 ? open(argv[1], O_RDONLY) : -1;
	char c;

	if (fd < 0 || read(fd, secret, sizeof(secret) - 1) <= 0)
		return 1;
	close(fd);
	printf("%p\n", (void *)secret);
	fflush(stdout);
	return read(0, &c, 1) < 0;
}
