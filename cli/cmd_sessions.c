/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_sessions.c: `docket sessions`: one line per session. */
#include "cli.h"

#include "util/error.h"

static json_t *session_json(const docket_session_info *s)
{
	return json_pack("{s:s, s:o, s:o, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
			 "session", s->session,
			 "runtime", cli_json_nonempty(s->runtime),
			 "parent", cli_json_nonempty(s->parent),
			 "state", s->closed_seq ? "closed" : "open",
			 "opened_seq", (json_int_t)s->opened_seq,
			 "closed_seq", (json_int_t)s->closed_seq,
			 "events", (json_int_t)s->events,
			 "invocations", (json_int_t)s->invocations,
			 "pending", (json_int_t)s->pending,
			 "policy_revision", (json_int_t)s->policy_revision,
			 "policy_format", cli_json_nonempty(s->policy_format),
			 "first_time", cli_json_nonempty(s->first_time),
			 "last_time", cli_json_nonempty(s->last_time));
}

static int on_session(void *vctx, const docket_session_info *s)
{
	cli_listing *l = vctx;
	cli_table *t = l->table;
	char num[24];
	int error = 0;

	l->count++;
	if (l->json)
		return cli_put_json_line(session_json(s));
	snprintf(num, sizeof(num), "%llu", (unsigned long long)s->pending);
	if ((error = cli_table_cell(t, s->session)) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(s->runtime))) < 0 ||
	    (error = cli_table_cell_color(t, s->closed_seq ? NULL : CLI_YELLOW,
					  s->closed_seq ? "closed" : "open")) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)s->events)) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)s->invocations)) < 0 ||
	    (error = cli_table_cell_color(t, s->pending ? CLI_YELLOW : NULL, num)) < 0)
		return error;
	if (s->policy_revision)
		error = cli_table_cellf(t, "r%u %s", (unsigned)s->policy_revision,
					(s->policy_format && *s->policy_format) ? s->policy_format : "");
	else
		error = cli_table_cell(t, "-");
	if (error < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(s->first_time))) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(s->last_time))) < 0)
		return error;
	return 0;
}

int cmd_sessions(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Lists every session: runtime, open or closed, events, tool calls\n"
		"(invocations), calls still pending, the current policy revision and the\n"
		"times of its first and last events. --json writes one object per line.\n";
	int json = 0;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	static const char *const header[] = { "SESSION", "RUNTIME", "STATE", "EVENTS", "CALLS",
					      "PENDING", "POLICY", "FIRST", "LAST" };
	cli_listing list = { 0, NULL, 0 };
	docket_ledger *ledger = NULL;
	size_t i;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_listing_begin(&list, json, header, 9)) != CLI_EXIT_OK)
		goto cleanup;
	for (i = 3; list.table && i <= 5; i++)
		cli_table_align_right(list.table, i);
	docket_error_clear();
	if ((error = docket_ledger_sessions(ledger, on_session, &list)) < 0) {
		rc = cli_fail(error, "cannot read the sessions");
		goto cleanup;
	}
	cli_listing_end(&list, g->color_out, "no sessions\n");
	rc = CLI_EXIT_OK;

cleanup:
	cli_listing_dispose(&list);
	docket_ledger_free(ledger);
	return rc;
}
