// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

int table_init(struct table *t, const struct column *cols, unsigned ncols, size_t nrows)
{
	if (ncols > MAXCOLS)
		return -EINVAL;
	t->cols = cols;
	t->ncols = ncols;
	t->nrows = nrows;
	t->cells = calloc(nrows ? nrows * ncols : 1, CELL);
	return t->cells ? 0 : -ENOMEM;
}

void cell(struct table *t, size_t row, unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->cells[row * t->ncols + col], CELL, fmt, ap);
	va_end(ap);
}

void table_print(struct table *t, FILE *f)
{
	size_t w[MAXCOLS] = { 0 };

	for (unsigned c = 0; c < t->ncols; c++) {
		w[c] = strlen(t->cols[c].name);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t l = strlen(t->cells[r * t->ncols + c]);

			if (l > w[c])
				w[c] = l;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {	/* row 0: the header */
		for (unsigned c = 0; c < t->ncols; c++) {
			const char *s = r ? t->cells[(r - 1) * t->ncols + c] : t->cols[c].name;
			bool last = c + 1 == t->ncols;

			if (t->cols[c].right)
				fprintf(f, "%*s", (int)w[c], s);
			else if (last)
				fputs(s, f);	/* no trailing blanks */
			else
				fprintf(f, "%-*s", (int)w[c], s);
			fputs(last ? "\n" : "  ", f);
		}
	}
	free(t->cells);
	t->cells = NULL;
}

