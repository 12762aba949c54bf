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

/* "ledger" and "host" on a fleet row (`row` owned; NULL when it could not be built). */
static json_t *with_origin(json_t *row, const cli_origin *o)
{
	if (row && o && (json_object_set_new(row, "ledger", json_string(o->ledger)) < 0 ||
			 json_object_set_new(row, "host", json_string(o->host)) < 0)) {
		json_decref(row);
		return NULL;
	}
	return row;
}

int cli_sessions_row(cli_listing *l, const docket_session_info *s, const cli_origin *origin)
{
	cli_table *t = l->table;
	char num[24];
	int error = 0;

	l->count++;
	if (l->json)
		return cli_put_json_line(with_origin(session_json(s), origin));
	snprintf(num, sizeof(num), "%llu", (unsigned long long)s->pending);
	if ((origin && (error = cli_table_cell(t, origin->host)) < 0) ||
	    (error = cli_table_cell(t, s->session)) < 0 ||
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

int cli_sessions_begin(cli_listing *l, int json, int fleet)
{
	static const char *const header[] = { "HOST", "SESSION", "RUNTIME", "STATE", "EVENTS", "CALLS",
					      "PENDING", "POLICY", "FIRST", "LAST" };
	size_t skip = fleet ? 0 : 1, i;
	int rc;

	if ((rc = cli_listing_begin(l, json, header + skip, 10 - skip)) != CLI_EXIT_OK)
		return rc;
	for (i = 4; l->table && i <= 6; i++)
		cli_table_align_right(l->table, i - skip);
	return CLI_EXIT_OK;
}

static int on_session(void *vctx, const docket_session_info *s)
{
	return cli_sessions_row(vctx, s, NULL);
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
	cli_listing list = { 0, NULL, 0 };
	docket_ledger *ledger = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_sessions_begin(&list, json, 0)) != CLI_EXIT_OK)
		goto cleanup;
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
