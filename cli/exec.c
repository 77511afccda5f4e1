// SPDX-License-Identifier: MIT
/*
 * iwx exec: run a program built against rdma-core (rping, qperf, perftest, one's own)
 * with iwx's drop-in libibverbs and librdmacm in front of the system's, served by the
 * iwxd at SOCKET. The drop-ins are found in $IWX_DROPIN_DIR when it is set, else beside
 * this iwx (the build tree's dropin/), else where `make install` put them (LIBDIR/iwx).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/ipc.h"

#include "exec.h"
#include "exit.h"
#include "iwx_config.h"	/* made by the Makefile: IWX_DROPIN_DIR, where make install puts them */

static void usage(FILE *out)
{
	fputs("usage: iwx exec [-s SOCKET] [--] PROGRAM [ARGS...]\n"
	      "Run PROGRAM, unmodified, with iwx's libibverbs and librdmacm in front of the\n"
	      "system's (LD_LIBRARY_PATH): its verbs and rdma_cm calls go to iwxd, which\n"
	      "shows one device, iwx0, an iWARP RNIC.\n"
	      "\n"
	      "  -s, --socket PATH   the iwxd to use (default $IWX_SOCKET, else "
	      "/run/iwx/iwxd.sock)\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "The drop-in libraries are looked for in $IWX_DROPIN_DIR, beside this iwx\n"
	      "(dropin/, in the build tree), then in " IWX_DROPIN_DIR ".\n", out);
}

static bool has_dropin(const char *dir)
{
	char p[PATH_MAX];

	return snprintf(p, sizeof(p), "%s/libibverbs.so.1", dir) < (int)sizeof(p) &&
	       access(p, R_OK) == 0;
}

/* The directory of the drop-ins into dir, or -ENOENT. */
static int find_dropin(char *dir, size_t len)
{
	const char *env = getenv("IWX_DROPIN_DIR");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(dir, len, "%s", env);
		return has_dropin(dir) ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(dir, len, "%.*s/dropin", PATH_MAX - 16, self) < (int)len &&
			    has_dropin(dir))
				return 0;
		}
	}
	snprintf(dir, len, "%s", IWX_DROPIN_DIR);
	return has_dropin(dir) ? 0 : -ENOENT;
}

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL, *old;
	char dir[PATH_MAX], abs[PATH_MAX], *path;
	struct stat st;
	int c;

	/* '+': options end at the program, whose own options are its business */
	while ((c = getopt_long(argc, argv, "+s:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case 'h':
			usage(stdout);
			return IWX_EXIT_OK;
		default:
			fputs("Try 'iwx exec --help'.\n", stderr);
			return IWX_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fputs("iwx exec: no program given\nTry 'iwx exec --help'.\n", stderr);
		return IWX_EXIT_USAGE;
	}
	if (find_dropin(dir, sizeof(dir))) {
		fprintf(stderr, "iwx exec: no drop-in libibverbs.so.1 in %s: 'make install' (or the "
			"iwx-dropin package) puts them there, a build tree's beside its iwx (make); "
			"or set IWX_DROPIN_DIR\n", dir);
		return IWX_EXIT_FAIL;
	}
	if (!sock)
		sock = getenv("IWX_SOCKET") && *getenv("IWX_SOCKET") ? getenv("IWX_SOCKET") :
								     IWX_DEFAULT_SOCKET;
	if (stat(sock, &st) || !S_ISSOCK(st.st_mode)) {
		/* the program would only find no device: say why here */
		fprintf(stderr, "iwx exec: no iwxd at %s (start iwxd, or give its socket: -s)\n",
			sock);
		return IWX_EXIT_FAIL;
	}
	/* the program may change directory: give it the socket's full path */
	if (!realpath(sock, abs)) {
		fprintf(stderr, "iwx exec: socket %s: %s\n", sock, strerror(errno));
		return IWX_EXIT_FAIL;
	}
	setenv("IWX_SOCKET", abs, 1);
	old = getenv("LD_LIBRARY_PATH");
	if (asprintf(&path, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "") < 0) {
		fputs("iwx exec: out of memory\n", stderr);
		return IWX_EXIT_FAIL;
	}
	setenv("LD_LIBRARY_PATH", path, 1);
	free(path);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "iwx exec: %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
