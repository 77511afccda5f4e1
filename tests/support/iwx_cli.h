/* SPDX-License-Identifier: MIT */
/* Running the iwx CLI (build/iwx) from a test, and reading its JSON. */
#ifndef IWX_TEST_IWX_CLI_H
#define IWX_TEST_IWX_CLI_H

#include <stddef.h>
#include <stdint.h>

#define IWX_BIN		"build/iwx"

/* Run `build/iwx ARGS` (stderr with stdout) into out; its exit status, or -1. */
__attribute__((format(printf, 3, 4)))
int run_iwx(char *out, size_t cap, const char *fmt, ...);

/* ... any command line, through sh. */
int run_cmd(char *out, size_t cap, const char *command);

/* A command line a program refuses, and what its error says. */
struct bad_usage {
	const char	*args;
	const char	*says;
};

/* out, all a program printed, is one line ending in says, then try_line: no help. */
void assert_usage_error(const char *out, const char *says, const char *try_line);

/* The number after "key": in s (the first one), or -1. */
int64_t json_num(const char *s, const char *key);

/* key's number in `iwx status -j` of the iwxd at sock (which must answer), or -1. */
int64_t status_num(const char *sock, const char *key);

#endif /* IWX_TEST_IWX_CLI_H */
