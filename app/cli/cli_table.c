/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli_table.c: colour, aligned tables and listings (a table, or JSON lines
 * with --json) for terminal output.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

/* ---- output ------------------------------------------------------------ */

int cli_want_color(FILE *f)
{
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");

	if (no_color && *no_color)
		return 0;
	if (term && strcmp(term, "dumb") == 0)
		return 0;
	return isatty(fileno(f));
}

void cli_put_color(FILE *f, int on, const char *color, const char *s)
{
	if (on && color)
		fprintf(f, "\033[%sm%s\033[0m", color, s);
	else
		fputs(s, f);
}

const char *cli_status_color(const char *word)
{
	static const char *const green[] = { "ok", "allowed", "approved", "approved_for_session",
					     "closed_ok", NULL };
	static const char *const red[] = { "error", "denied", "unsupported", "timeout",
					   "indeterminate", "aborted", "in_doubt", NULL };
	static const char *const yellow[] = { "approval_required", "cancelled", "expired",
					      "closed", "superseded", "awaiting_approval",
					      "needs_approval", "undecided", "pending", NULL };
	size_t i;

	if (!word)
		return NULL;
	for (i = 0; green[i]; i++)
		if (strcmp(word, green[i]) == 0)
			return CLI_GREEN;
	for (i = 0; red[i]; i++)
		if (strcmp(word, red[i]) == 0)
			return CLI_RED;
	for (i = 0; yellow[i]; i++)
		if (strcmp(word, yellow[i]) == 0)
			return CLI_YELLOW;
	return NULL;
}

struct cli_table {
	size_t columns;
	size_t ncells;
	size_t cap;
	char **text;
	const char **color;
	unsigned char *span;  /* per cell: 1 on the first cell of a spanning row */
	unsigned char *right;
};

int cli_table_new(cli_table **out, size_t columns)
{
	cli_table *t;

	*out = NULL;
	if (columns == 0)
		return docket_error_set(DOCKET_EINVALID, "a table needs columns");
	t = docket_calloc(1, sizeof(*t));
	if (!t)
		return docket_error_set_oom();
	t->right = docket_calloc(columns, 1);
	if (!t->right) {
		docket_free(t);
		return docket_error_set_oom();
	}
	t->columns = columns;
	*out = t;
	return 0;
}

void cli_table_align_right(cli_table *t, size_t col)
{
	if (col < t->columns)
		t->right[col] = 1;
}

int cli_table_cell_color(cli_table *t, const char *color, const char *text)
{
	char *copy;

	if (t->ncells == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		char **ntext;
		const char **ncolor;
		unsigned char *nspan;

		if (ncap < t->cap || ncap > SIZE_MAX / sizeof(char *))
			return docket_error_set(DOCKET_ENOMEM, "table too large");
		ntext = docket_realloc(t->text, ncap * sizeof(char *));
		if (!ntext)
			return docket_error_set_oom();
		t->text = ntext;
		ncolor = docket_realloc((void *)t->color, ncap * sizeof(char *));
		if (!ncolor)
			return docket_error_set_oom();
		t->color = ncolor;
		nspan = docket_realloc(t->span, ncap);
		if (!nspan)
			return docket_error_set_oom();
		t->span = nspan;
		t->cap = ncap;
	}
	copy = docket_strdup(text ? text : "");
	if (!copy)
		return docket_error_set_oom();
	t->text[t->ncells] = copy;
	t->color[t->ncells] = color;
	t->span[t->ncells] = 0;
	t->ncells++;
	return 0;
}

int cli_table_span(cli_table *t, const char *color, const char *text)
{
	size_t first = t->ncells, c;
	int error;

	if (first % t->columns != 0)
		return docket_error_set(DOCKET_EINVALID, "a spanning row inside a row");
	if ((error = cli_table_cell_color(t, color, text)) < 0)
		return error;
	for (c = 1; c < t->columns; c++)
		if ((error = cli_table_cell(t, "")) < 0)
			return error;
	t->span[first] = 1;
	return 0;
}

int cli_table_cell(cli_table *t, const char *text)
{
	return cli_table_cell_color(t, NULL, text);
}

int cli_table_cellf(cli_table *t, const char *fmt, ...)
{
	docket_buf b = DOCKET_BUF_INIT;
	va_list ap;
	int error;
	char tmp[512];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return docket_error_set(DOCKET_EINVALID, "bad format");
	if ((size_t)n < sizeof(tmp))
		return cli_table_cell(t, tmp);
	/* long cell: format again into a buffer of the right size */
	if ((error = docket_buf_reserve(&b, (size_t)n + 1)) < 0)
		return error;
	va_start(ap, fmt);
	vsnprintf(b.ptr, (size_t)n + 1, fmt, ap);
	va_end(ap);
	error = cli_table_cell(t, b.ptr);
	docket_buf_dispose(&b);
	return error;
}

/* Display width of UTF-8 text: code points, not bytes. */
size_t cli_text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

void cli_table_print(const cli_table *t, FILE *f, int color, int header)
{
	size_t *width;
	size_t i, c;

	width = docket_calloc(t->columns, sizeof(size_t));
	if (!width)
		return;
	for (i = 0; i < t->ncells; i++) {
		size_t w = cli_text_width(t->text[i]);

		if (t->span[i - i % t->columns])
			continue;
		if (w > width[i % t->columns])
			width[i % t->columns] = w;
	}
	for (i = 0; i < t->ncells; i += t->columns) {
		size_t last = t->columns;

		if (t->span[i]) {
			cli_put_color(f, color, t->color[i], t->text[i]);
			fputc('\n', f);
			continue;
		}

		/* trailing empty cells print nothing (no trailing blanks) */
		while (last > 0 && (i + last - 1 >= t->ncells || !t->text[i + last - 1][0]))
			last--;
		for (c = 0; c < last; c++) {
			const char *s = t->text[i + c];
			const char *col = (header && i == 0) ? CLI_BOLD : t->color[i + c];
			size_t pad = width[c] - cli_text_width(s);

			if (c > 0)
				fputs("  ", f);
			if (t->right[c])
				fprintf(f, "%*s", (int)pad, "");
			cli_put_color(f, color, col, s);
			if (!t->right[c] && c + 1 < last)
				fprintf(f, "%*s", (int)pad, "");
		}
		fputc('\n', f);
	}
	docket_free(width);
}

void cli_table_free(cli_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->ncells; i++)
		docket_free(t->text[i]);
	docket_free(t->text);
	docket_free((void *)t->color);
	docket_free(t->span);
	docket_free(t->right);
	docket_free(t);
}

/* ---- listings ------------------------------------------------------------ */

int cli_listing_begin(cli_listing *l, int json, const char *const *header, size_t columns)
{
	size_t i;
	int error;

	l->json = json;
	l->table = NULL;
	l->count = 0;
	if (json)
		return CLI_EXIT_OK;
	if ((error = cli_table_new(&l->table, columns)) < 0)
		return cli_fail(error, "out of memory");
	for (i = 0; i < columns; i++)
		if ((error = cli_table_cell(l->table, header[i])) < 0)
			return cli_fail(error, "out of memory");
	return CLI_EXIT_OK;
}

void cli_listing_end(const cli_listing *l, int color, const char *none)
{
	if (l->json)
		return;
	if (l->count == 0)
		fputs(none, stdout);
	else
		cli_table_print(l->table, stdout, color, 1);
}

void cli_listing_dispose(cli_listing *l)
{
	cli_table_free(l->table);
	l->table = NULL;
}
