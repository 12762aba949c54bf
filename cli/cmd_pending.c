/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_pending.c: `docket pending`: tool calls without an outcome. */
#include "cli.h"

#include "util/alloc.h"
#include "util/error.h"

static json_t *pending_json(const docket_pending_info *p)
{
	return json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
			 "session", p->session,
			 "invocation", p->invocation,
			 "tool", cli_json_nonempty(p->tool),
			 "state", p->state ? p->state : "",
			 "verdict", cli_json_nonempty(p->verdict),
			 "recovery", cli_json_nonempty(p->recovery),
			 "open_request", cli_json_nonempty(p->open_request),
			 "token", cli_json_nonempty(p->token),
			 "attempts", (json_int_t)p->attempts,
			 "intent_seq", (json_int_t)p->intent_seq,
			 "last_seq", (json_int_t)p->last_seq);
}

int cli_pending_row(cli_listing *l, const docket_pending_info *p, const cli_origin *origin)
{
	cli_table *t = l->table;
	json_t *row;
	int error;

	l->count++;
	if (l->json) {
		row = pending_json(p);
		if (row && origin && (json_object_set_new(row, "ledger", json_string(origin->ledger)) < 0 ||
				      json_object_set_new(row, "host", json_string(origin->host)) < 0)) {
			json_decref(row);
			row = NULL;
		}
		return cli_put_json_line(row);
	}
	if ((origin && (error = cli_table_cell(t, origin->host)) < 0) ||
	    (error = cli_table_cell(t, p->session)) < 0 ||
	    (error = cli_table_cell(t, p->invocation)) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(p->tool))) < 0 ||
	    (error = cli_table_cell_color(t, cli_status_color(p->state), cli_or_dash(p->state))) < 0 ||
	    (error = cli_table_cell_color(t, cli_status_color(p->verdict), cli_or_dash(p->verdict))) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(p->recovery))) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(p->open_request))) < 0 ||
	    (error = cli_table_cellf(t, "%u", (unsigned)p->attempts)) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)p->intent_seq)) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)p->last_seq)) < 0)
		return error;
	return 0;
}

int cli_pending_begin(cli_listing *l, int json, int fleet)
{
	static const char *const header[] = { "HOST", "SESSION", "INVOCATION", "TOOL", "STATE", "VERDICT",
					      "RECOVERY", "REQUEST", "ATTEMPTS", "INTENT", "LAST" };
	size_t skip = fleet ? 0 : 1, i;
	int rc;

	if ((rc = cli_listing_begin(l, json, header + skip, 11 - skip)) != CLI_EXIT_OK)
		return rc;
	for (i = 8; l->table && i < 11; i++)
		cli_table_align_right(l->table, i - skip);
	return CLI_EXIT_OK;
}

static int on_pending(void *vctx, const docket_pending_info *p)
{
	return cli_pending_row(vctx, p, NULL);
}

int cmd_pending(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Lists tool calls that have no outcome yet, with their state:\n"
		"  undecided          intent without a verdict yet\n"
		"  needs_approval     approval required, no request open\n"
		"  awaiting_approval  an approval request is open\n"
		"  ready              allowed or approved, not dispatched\n"
		"  refused            denied or unsupported, outcome not recorded yet\n"
		"  in_doubt           dispatched, no outcome (recovery decides)\n"
		"--json writes one object per line.\n";
	const char *session = NULL;
	int json = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "session", 's', &session, "S", "only calls of session S", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	cli_listing list = { 0, NULL, 0 };
	docket_ledger *ledger = NULL;
	char *owned = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_session_arg(ledger, &session, &owned)) != CLI_EXIT_OK)
		goto cleanup;
	if ((rc = cli_pending_begin(&list, json, 0)) != CLI_EXIT_OK)
		goto cleanup;
	docket_error_clear();
	if ((error = docket_ledger_pending(ledger, session, on_pending, &list)) < 0) {
		rc = cli_fail(error, "cannot read the pending calls");
		goto cleanup;
	}
	cli_listing_end(&list, g->color_out, "no pending calls\n");
	rc = CLI_EXIT_OK;

cleanup:
	docket_free(owned);
	cli_listing_dispose(&list);
	docket_ledger_free(ledger);
	return rc;
}
