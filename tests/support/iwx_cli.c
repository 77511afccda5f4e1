// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iwx_cli.h"

int run_iwx(char *out, size_t cap, const char *fmt, ...)
{
	char args[512], cmd[640];
	va_list ap;

	cr_assert_eq(access(IWX_BIN, X_OK), 0, IWX_BIN " is missing: build it first (make)");
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), IWX_BIN " %s", args);
	return run_cmd(out, cap, cmd);
}

int run_cmd(char *out, size_t cap, const char *command)
{
	char cmd[1024];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s 2>&1", command);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	while (n + 1 < cap && !feof(p)) {
		size_t got = fread(out + n, 1, cap - 1 - n, p);

		if (!got)
			break;
		n += got;
	}
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void assert_usage_error(const char *out, const char *says, const char *try_line)
{
	char want[512];
	size_t n = strlen(out), w;

	w = (size_t)snprintf(want, sizeof(want), "%s\n%s\n", says, try_line);
	cr_assert(n >= w && !strcmp(out + n - w, want), "want the last two lines '%s', got:\n%s",
		  want, out);
	cr_assert_leq(n, w + 32, "two lines (a program's name first), no help: %s", out);
}

int64_t status_num(const char *sock, const char *key)
{
	static char out[65536];

	cr_assert_eq(run_iwx(out, sizeof(out), "status -s %s -j", sock), 0, "%s", out);
	return json_num(out, key);
}

int64_t json_num(const char *s, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(s, k);
	if (!p || p[strlen(k)] < '0' || p[strlen(k)] > '9')
		return -1;
	return strtoll(p + strlen(k), NULL, 10);
}
