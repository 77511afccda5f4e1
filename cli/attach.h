/* SPDX-License-Identifier: MIT */
/* The iwx subcommands of iwxd's fast path (root only). */
#ifndef IWX_CLI_ATTACH_H
#define IWX_CLI_ATTACH_H

/*
 * iwx attach dev IFNAME [-m tc|xdp] [-s SOCKET], iwx detach dev IFNAME [-s SOCKET],
 * iwx stats [-s SOCKET] [-j]: argv[0] is the command's name. Each returns the exit
 * status (IWX_EXIT_* of exit.h).
 */
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_stats(int argc, char **argv);

#endif /* IWX_CLI_ATTACH_H */
