/* SPDX-License-Identifier: MIT */
/* Aligned columns under a header line, for the human output of the iwx commands. */
#ifndef IWX_CLI_TABLE_H
#define IWX_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CELL	80	/* "[" IPv6 "%" scope "]:" port fits */
#define MAXCOLS	20

struct column {
	const char	*name;
	bool		right;		/* numbers: right-aligned */
};

struct table {
	const struct column	*cols;
	unsigned		ncols;
	size_t			nrows;
	char			(*cells)[CELL];
};

/* A table of nrows rows of the given columns: 0, -EINVAL (too many columns) or -ENOMEM. */
int table_init(struct table *t, const struct column *cols, unsigned ncols, size_t nrows);

/* Format the cell at row, col (cut at CELL - 1 bytes). */
void cell(struct table *t, size_t row, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Print the header and the rows, and free the table. */
void table_print(struct table *t, FILE *f);

#endif /* IWX_CLI_TABLE_H */
