/* SPDX-License-Identifier: MIT */
/* Subcommands of the iwx CLI. */
#ifndef IWX_CLI_DECODE_H
#define IWX_CLI_DECODE_H

#include <stdio.h>

/* Exit statuses of every subcommand. */
#define IWX_EXIT_OK	0
#define IWX_EXIT_FAIL	1	/* the input was read but is in error, or could not be read */
#define IWX_EXIT_USAGE	2

/* iwx decode [options] FILE: argv[0] is "decode". Returns the exit status. */
int cmd_decode(int argc, char **argv);
void cmd_decode_usage(FILE *out);

#endif /* IWX_CLI_DECODE_H */
