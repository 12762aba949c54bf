/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_audit.c: `docket audit`: the risk view in the terminal, the same lists
 * as the report's first screen (docket_audit_findings): sessions in risky
 * modes, escalations, allowed calls in risk classes, calls without an
 * outcome, denials, ledger incidents. Exit 1 (`--fail`) when anything needs attention.
 */
#include "cli.h"

#include <string.h>

#include "docket/export.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define AUDIT_TEXT_MAX 72

/* `s` on one line (control characters become spaces), cut to about
 * AUDIT_TEXT_MAX bytes on a UTF-8 boundary with "..." marking the cut. */
static int one_line(docket_buf *b, const char *s)
{
	size_t n = strlen(s), i;
	int error = 0;

	docket_buf_clear(b);
	if (n > AUDIT_TEXT_MAX) {
		n = AUDIT_TEXT_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (i = 0; i < n && error == 0; i++)
		error = docket_buf_putc(b, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i]);
	if (error == 0 && n < strlen(s))
		error = docket_buf_puts(b, "...");
	return error == 0 && !b->ptr ? docket_buf_puts(b, "") : error;
}

/* One list: a heading with its count, then one row per item, `cols` its members. */
static int print_list(FILE *out, int color, const json_t *f, const char *key, const char *title,
		      const char *const *cols)
{
	const json_t *list = json_object_get(f, key), *item;
	docket_buf text = DOCKET_BUF_INIT;
	cli_table *t = NULL;
	size_t i, k, ncols = 0;
	int error;

	while (cols[ncols])
		ncols++;
	fprintf(out, "\n");
	cli_put_color(out, color, CLI_BOLD, title);
	fprintf(out, ": %zu\n", json_array_size(list));
	if (json_array_size(list) == 0)
		return 0;
	if ((error = cli_table_new(&t, ncols)) < 0)
		return error;
	json_array_foreach(list, i, item) {
		for (k = 0; k < ncols && error == 0; k++) {
			if ((error = one_line(&text, cli_or_dash(docket_json_str(item, cols[k])))) == 0)
				error = cli_table_cellf(t, "%s%s", k == 0 ? "  " : "", text.ptr);
		}
		if (error < 0)
			break;
	}
	if (error == 0)
		cli_table_print(t, out, color, 0);
	docket_buf_dispose(&text);
	cli_table_free(t);
	return error;
}

static int print_findings(const json_t *f, int color)
{
	static const char *const modes[] = { "session", "settings", "runtime", "cwd", NULL };
	static const char *const esc[] = { "session", "invocation", "summary", "justification", "outcome", NULL };
	static const char *const risky[] = { "session", "invocation", "summary", "class_names", "host_list",
					     "outcome", NULL };
	static const char *const open[] = { "session", "invocation", "summary", "outcome", NULL };
	static const char *const deny[] = { "session", "invocation", "summary", "by", "reason", NULL };
	static const char *const incident[] = { "time", "kind", "file", "error", NULL };
	long long n = (long long)json_integer_value(json_object_get(f, "attention"));
	int error;

	cli_put_color(stdout, color, n ? CLI_RED : CLI_GREEN, "needs attention");
	printf(": %lld\n", n);
	if ((error = print_list(stdout, color, f, "risky_sessions", "sessions in risky modes", modes)) < 0 ||
	    (error = print_list(stdout, color, f, "escalations", "escalations", esc)) < 0 ||
	    (error = print_list(stdout, color, f, "risky_calls", "allowed calls in risk classes", risky)) < 0 ||
	    (error = print_list(stdout, color, f, "no_outcome", "calls without an outcome", open)) < 0 ||
	    (error = print_list(stdout, color, f, "denials", "denials", deny)) < 0 ||
	    (error = print_list(stdout, color, f, "incidents", "ledger incidents (spool entries the ledger refused)",
				incident)) < 0)
		return error;
	return 0;
}

int cmd_audit(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Prints what should worry an auditor, as the report's first screen does:\n"
		"sessions that ran in risky modes (and the settings that made them risky),\n"
		"escalations with their justification and outcome, allowed calls in risk\n"
		"classes, calls without an outcome, denials with their reasons, and ledger\n"
		"incidents (spool entries the ledger refused when it folded them).\n"
		"'needs attention' counts all of them. --fail exits 1 when it is not 0.\n";
	const char *session = NULL, *since = NULL;
	int json = 0, fail = 0;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&json),
		{ CLI_OPT_STRING, "session", 's', &session, "S", "only this session", 0 },
		{ CLI_OPT_STRING, "since", 0, &since, "WHEN",
		  "only calls from this time, date, 2h/7d ago, or #seq on", 0 },
		{ CLI_OPT_SWITCH, "fail", 0, &fail, NULL, "exit 1 when anything needs attention", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	json_t *f = NULL;
	char *owned = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (since && (rc = cli_since(since, &o)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_session_arg(ledger, &session, &owned)) != CLI_EXIT_OK)
		goto cleanup;
	o.session = session;
	docket_error_clear();
	if ((error = docket_audit_findings(&f, ledger, &o)) < 0) {
		rc = cli_fail(error, "cannot read the ledger");
		goto cleanup;
	}
	if (json) {
		rc = cli_print_json(json_incref(f));
	} else if ((error = print_findings(f, g->color_out)) < 0) {
		rc = cli_fail(error, "out of memory");
		goto cleanup;
	} else {
		rc = CLI_EXIT_OK;
	}
	if (rc == CLI_EXIT_OK && fail && json_integer_value(json_object_get(f, "attention")) > 0)
		rc = CLI_EXIT_FOUND;
cleanup:
	docket_free(owned);
	json_decref(f);
	docket_ledger_free(ledger);
	return rc;
}
