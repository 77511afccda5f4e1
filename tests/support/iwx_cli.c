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
	size_t n = 0;
	va_list ap;
	FILE *p;
	int st;

	cr_assert_eq(access(IWX_BIN, X_OK), 0, IWX_BIN " is missing: build it first (make)");
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), IWX_BIN " %s 2>&1", args);
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
