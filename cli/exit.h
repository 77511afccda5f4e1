/* SPDX-License-Identifier: MIT */
/* Exit statuses of every iwx command. */
#ifndef IWX_CLI_EXIT_H
#define IWX_CLI_EXIT_H

#define IWX_EXIT_OK	0
#define IWX_EXIT_FAIL	1	/* it could not do what was asked: bad input, no daemon, no right */
#define IWX_EXIT_USAGE	2	/* the command line itself is wrong */

#endif /* IWX_CLI_EXIT_H */
