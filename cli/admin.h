/* SPDX-License-Identifier: MIT */
/* The iwx subcommands that inspect a running iwxd (root only). */
#ifndef IWX_CLI_ADMIN_H
#define IWX_CLI_ADMIN_H

/*
 * iwx status|conns|stags|counters [-s SOCKET] [-j]: argv[0] is the command's name.
 * Each returns the exit status (IWX_EXIT_* of decode.h).
 */
int cmd_status(int argc, char **argv);
int cmd_conns(int argc, char **argv);
int cmd_stags(int argc, char **argv);
int cmd_counters(int argc, char **argv);

#endif /* IWX_CLI_ADMIN_H */
