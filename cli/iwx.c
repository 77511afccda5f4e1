// SPDX-License-Identifier: MIT
/* iwx: the command-line tool. Dispatches to one subcommand per verb. */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "decode.h"
#include "exec.h"
#include "attach.h"
#include "iwx_config.h"	/* made by the Makefile */

struct command {
	const char	*name;
	int		(*run)(int argc, char **argv);
	const char	*summary;
};

static const struct command commands[] = {
	{ "decode", cmd_decode, "decode the iWARP (MPA, DDP, RDMAP) in a pcap or pcapng capture" },
	{ "status", cmd_status, "iwxd's state: resources, connection and traffic counters" },
	{ "conns", cmd_conns, "iwxd's queue pairs: state, addresses, MPA mode, traffic" },
	{ "stags", cmd_stags, "the memory regions registered with iwxd, by STag" },
	{ "counters", cmd_counters, "iwxd's counters only, for scripts" },
	{ "attach", cmd_attach, "attach iwxd's fast path (BPF placement) to an interface" },
	{ "detach", cmd_detach, "detach iwxd's fast path from an interface" },
	{ "stats", cmd_stats, "the fast path's counters: per interface and connection" },
	{ "exec", cmd_exec, "run a verbs program (rping, perftest) over iwx, unmodified" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fputs("usage: iwx COMMAND [options] [ARGS]\n"
	      "       iwx --help | --version\n"
	      "\n"
	      "Commands:\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'iwx COMMAND --help' for a command's options.\n", out);
}

int main(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : NULL;

	if (!verb) {
		fputs("iwx: no command given\n", stderr);
		usage(stderr);
		return IWX_EXIT_USAGE;
	}
	if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help")) {
		if (argc > 2 && strcmp(verb, "help") == 0) {
			for (size_t i = 0; i < NCOMMANDS; i++) {
				if (!strcmp(argv[2], commands[i].name)) {
					char help[] = "--help";
					char *args[] = { argv[2], help, NULL };

					return commands[i].run(2, args);
				}
			}
			fprintf(stderr, "iwx: unknown command '%s'\n", argv[2]);
			return IWX_EXIT_USAGE;
		}
		usage(stdout);
		return IWX_EXIT_OK;
	}
	if (!strcmp(verb, "-V") || !strcmp(verb, "--version")) {
		printf("iwx %s\n", IWX_VERSION);
		return IWX_EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(verb, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	if (verb[0] == '-')
		fprintf(stderr, "iwx: unknown option '%s'\n", verb);
	else
		fprintf(stderr, "iwx: unknown command '%s'\n", verb);
	fputs("Try 'iwx --help'.\n", stderr);
	return IWX_EXIT_USAGE;
}
