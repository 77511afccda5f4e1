/* SPDX-License-Identifier: MIT */
/* iwx exec: run an unmodified verbs program over iwx (the drop-in libibverbs and librdmacm). */
#ifndef IWX_CLI_EXEC_H
#define IWX_CLI_EXEC_H

/* iwx exec [-s SOCKET] -- PROGRAM ARGS...: argv[0] is "exec". Returns only on failure. */
int cmd_exec(int argc, char **argv);

#endif /* IWX_CLI_EXEC_H */
