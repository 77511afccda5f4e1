/* SPDX-License-Identifier: MIT */
/* iwx decode: the iWARP in a capture, through our own parser. */
#ifndef IWX_CLI_DECODE_H
#define IWX_CLI_DECODE_H

#include <stdio.h>

#include "exit.h"

/* iwx decode [options] FILE: argv[0] is "decode". Returns the exit status. */
int cmd_decode(int argc, char **argv);
void cmd_decode_usage(FILE *out);

#endif /* IWX_CLI_DECODE_H */
