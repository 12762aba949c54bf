/* SPDX-License-Identifier: Apache-2.0 */
/*
 * csv.c: one row per invocation (RFC 4180: CRLF line ends, fields with a
 * comma, quote or line break quoted, quotes doubled). Text that a
 * spreadsheet would read as a formula (starting with = + - @, tab or CR) is
 * prefixed with a single quote, so a recorded command cannot run in the
 * auditor's spreadsheet.
 */
#include <string.h>

#include "export_internal.h"
#include "util/alloc.h"
#include "util/error.h"

typedef collector_sink csv_sink;

typedef enum { COL_TEXT, COL_NUMBER, COL_ATTEMPTS, COL_REASON, COL_RULE, COL_ARG, COL_WAIT_KNOWN } col_kind;

static const struct {
	const char *title;
	const char *member;
	col_kind kind;
} columns[] = {
	{ "session", "session", COL_TEXT },
	{ "invocation", "invocation", COL_TEXT },
	{ "turn", "turn", COL_TEXT },
	{ "tool", "tool", COL_TEXT },
	{ "summary", "summary", COL_TEXT },
	{ "intent_seq", "intent_seq", COL_NUMBER },
	{ "intent_time", "intent_time", COL_TEXT },
	{ "verdict", "verdict", COL_TEXT },
	{ "decision_source", "decision_source", COL_TEXT },
	{ "approval_requested", "requested_time", COL_TEXT },
	{ "reviewer", "reviewer", COL_TEXT },
	{ "approval_result", "result", COL_TEXT },
	{ "approver", "actor", COL_TEXT },
	{ "approval_settled", "settled_time", COL_TEXT },
	{ "wait_ms", "wait_ms", COL_NUMBER },
	{ "wait_known", "", COL_WAIT_KNOWN },
	{ "attempts", "dispatches", COL_ATTEMPTS },
	{ "completed_time", "completed_time", COL_TEXT },
	{ "status", "status", COL_TEXT },
	{ "exit_code", "exit_code", COL_NUMBER },
	{ "duration_ms", "duration_ms", COL_NUMBER },
	{ "error", "error", COL_TEXT },
	{ "reason", "", COL_REASON },
	{ "rule", "", COL_RULE },
	{ "sandbox_permissions", "sandbox_permissions", COL_ARG },
	{ "justification", "justification", COL_ARG },
};

#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

static int put_field(docket_buf *row, const char *s, int text)
{
	int formula = text && s[0] && strchr("=+-@\t\r", s[0]);
	int quote = strpbrk(s, ",\"\r\n") != NULL || formula;
	int error = 0;

	if (quote && (error = docket_buf_putc(row, '"')) < 0)
		return error;
	if (formula && (error = docket_buf_putc(row, '\'')) < 0)
		return error;
	for (; *s && error == 0; s++)
		error = *s == '"' ? docket_buf_puts(row, "\"\"") : docket_buf_putc(row, *s);
	if (error == 0 && quote)
		error = docket_buf_putc(row, '"');
	return error;
}

/* The computed text columns: the reason (audit_denial_reason, else the
 * settle reason), the first rule the decision names, an argument, whether
 * the approval wait is known ("yes", "no", "" without an approval). */
static int put_computed(docket_buf *row, const json_t *inv, size_t col)
{
	docket_buf text = DOCKET_BUF_INIT;
	const char *v = "";
	int error = 0;

	switch (columns[col].kind) {
	case COL_REASON:
		if ((error = audit_denial_reason(&text, inv)) == 0)
			v = text.ptr;
		break;
	case COL_RULE:
		v = json_string_value(json_array_get(json_object_get(inv, "rules"), 0));
		break;
	case COL_ARG:
		v = jstr(json_object_get(inv, "args"), columns[col].member);
		break;
	default:
		v = jhas(inv, "wait_ms") ? "yes" : jhas(inv, "wait_unknown") ? "no" : "";
		break;
	}
	if (error == 0)
		error = put_field(row, v ? v : "", 1);
	docket_buf_dispose(&text);
	return error;
}

static int put_cell(docket_buf *row, const json_t *inv, size_t col)
{
	const json_t *v = json_object_get(inv, columns[col].member);
	char num[32] = "";

	if (columns[col].kind >= COL_REASON)
		return put_computed(row, inv, col);
	if (columns[col].kind == COL_ATTEMPTS)
		snprintf(num, sizeof(num), "%zu", json_array_size(v));
	else if (columns[col].kind == COL_NUMBER && json_is_integer(v))
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
	if (columns[col].kind != COL_TEXT)
		return put_field(row, num, 0);
	return put_field(row, json_string_value(v) ? json_string_value(v) : "", 1);
}

static int write_row(csv_sink *o, docket_buf *row, const json_t *inv)
{
	int error = 0;

	docket_buf_clear(row);
	for (size_t col = 0; col < NCOLUMNS && error == 0; col++) {
		if (col && (error = docket_buf_putc(row, ',')) < 0)
			break;
		error = inv ? put_cell(row, inv, col) : put_field(row, columns[col].title, 0);
	}
	if (error == 0)
		error = docket_buf_puts(row, "\r\n");
	if (error == 0 && fwrite(row->ptr, 1, row->len, o->base.out) != row->len)
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write the export");
	return error;
}

static int csv_finish(export_sink *s)
{
	csv_sink *o = (csv_sink *)s;
	docket_buf row = DOCKET_BUF_INIT;
	const json_t *inv;
	size_t i;
	int error = write_row(o, &row, NULL);

	json_array_foreach(o->c.invocations, i, inv) {
		if (error < 0)
			break;
		if (!json_is_true(json_object_get(inv, "since")))
			continue;
		error = write_row(o, &row, inv);
		o->base.stats->records++;
	}
	docket_buf_dispose(&row);
	return error;
}

int sink_csv_new(export_sink **out, int64_t since_ms)
{
	return collector_sink_new(out, since_ms, collector_sink_collect, csv_finish);
}
