/* SPDX-License-Identifier: MIT */
/*
 * The iwx subcommands that inspect a running iwxd (root only), and the exchange they
 * share with those that change it (attach.h): one request on iwxd's control socket,
 * the reply's parts joined.
 */
#ifndef IWX_CLI_ADMIN_H
#define IWX_CLI_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * iwx status|conns|stags|counters [-s SOCKET] [-j]: argv[0] is the command's name.
 * Each returns the exit status (IWX_EXIT_* of exit.h).
 */
int cmd_status(int argc, char **argv);
int cmd_conns(int argc, char **argv);
int cmd_stags(int argc, char **argv);
int cmd_counters(int argc, char **argv);

/* ---------------------------------------------- for the other admin commands */

/* A reply, its parts joined; status is iwxd's answer (0 or -errno) once one came. */
struct admin_reply {
	uint8_t		*buf;
	size_t		len, cap;
	int		status;
};

/*
 * Send op with len bytes of body to the daemon at path and take its reply into r (the
 * caller frees r->buf): every part, each a whole number of esize entries (esize 0: the
 * reply has no body). 0 once iwxd answered, whatever it answered (r->status), or the
 * -errno of the exchange itself (no daemon, no answer, a reply not ours: -EPROTO).
 */
int admin_fetch(const char *path, uint16_t op, const void *body, uint32_t len, size_t esize,
		struct admin_reply *r);

/*
 * What failed in reaching iwxd at path, on stderr. who says who may ("inspect iwxd") in
 * the message for -EPERM and -EACCES.
 */
void admin_report(const char *path, int err, const char *who);

/* What a command printed reached stdout: IWX_EXIT_OK, or a message and IWX_EXIT_FAIL. */
int admin_output_done(const char *cmd);

/*
 * What getopt_long refused (opt '?' or ':', arg the word it stopped at), and how to get
 * help, on stderr. shorts: the letters of the options that have a long name too.
 */
void admin_bad_option(const char *cmd, const char *shorts, int opt, const char *arg);

/* What the output of a command that inspects iwxd asked for. */
struct admin_opts {
	const char	*socket;
	bool		json;
};

/* A command that inspects iwxd: [-s SOCKET] [-j], one request without a body. */
struct admin_cmd {
	const char	*name;
	uint16_t	op;
	size_t		esize;		/* a listing's entry; STATUS: its one struct */
	bool		listing;
	const char	*json;		/* what -j prints */
	const char	*about;		/* --help, after the usage line */
	const char	*more;		/* --help, after the options */
	int		(*show)(void *buf, size_t n, const struct admin_opts *o);
};

/* Parse argv, ask, show: the exit status. */
int admin_run(const struct admin_cmd *c, int argc, char **argv);

/* v bytes as "512 B", "1.5 KiB"... into buf. */
const char *bytes_str(char *buf, size_t cap, uint64_t v);

#endif /* IWX_CLI_ADMIN_H */
