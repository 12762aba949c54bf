/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_pending.c: `docket pending`: tool calls without an outcome. */
#include "cli.h"

#include <string.h>

#include "docket/recover.h"
#include "util/alloc.h"
#include "util/error.h"

/* A pending call as JSON, local or fleet-wide: a call in doubt says what
 * to check (a hook's let-through call: local_row says more). */
static json_t *pending_json(const docket_pending_info *p)
{
	json_t *row = json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
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

	if (row && p->state && strcmp(p->state, "in_doubt") == 0 &&
	    json_object_set_new(row, "check", json_string(CLI_IN_DOUBT_CHECK)) < 0) {
		json_decref(row);
		return NULL;
	}
	return row;
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

#define COMMAND_MAX 60

/* ---- the local listing: the call itself, and its decision as it stands -- */

typedef struct local_list {
	cli_listing list;
	docket_ledger *ledger;
	size_t let_through;   /* calls shown in_doubt because a hook let them through */
} local_list;

static int keep_intent(void *vctx, uint64_t seq, json_t *ev)
{
	(void)seq;
	*(json_t **)vctx = json_incref(ev);
	return 1;
}

/* The call of a pending invocation, from its intent (`*out` to docket_free);
 * *let_through: a live hook let it through and nothing came since. */
static int call_of(char **out, int *let_through, docket_ledger *ledger, const docket_pending_info *p)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	json_t *intent = NULL;
	int error;

	ro.since = p->intent_seq;
	ro.limit = 1;
	ro.flags = DOCKET_READ_NO_HASH;   /* the intent alone: its segment's outcomes stay compressed */
	if ((error = docket_ledger_read_json(ledger, &ro, keep_intent, &intent)) < 0)
		return error;
	error = cli_call_summary(out, docket_json_str(intent, "tool"), json_object_get(intent, "args"), COMMAND_MAX);
	*let_through = p->state && strcmp(p->state, "undecided") == 0 && docket_recover_let_through(intent);
	json_decref(intent);
	return error;
}

/* The decision as it stands: an approval_required call that was dispatched
 * was approved. */
static const char *decision_of(const docket_pending_info *p)
{
	if (p->attempts > 0 && p->verdict && strcmp(p->verdict, "approval_required") == 0)
		return "approved";
	return p->verdict && *p->verdict ? p->verdict : "undecided";
}

static int local_row(void *vctx, const docket_pending_info *p)
{
	local_list *ll = vctx;
	cli_table *t = ll->list.table;
	docket_pending_info shown = *p;
	const char *check;
	char *command = NULL;
	int error, let_through = 0;

	ll->list.count++;
	if ((error = call_of(&command, &let_through, ll->ledger, p)) < 0)
		return error;
	shown.state = let_through ? "in_doubt" : p->state;
	check = let_through ? CLI_LET_THROUGH_CHECK : NULL;
	ll->let_through += let_through;
	if (ll->list.json) {
		json_t *row = pending_json(&shown);

		if (row && (json_object_set_new(row, "call", json_string(command)) < 0 ||
			    json_object_set_new(row, "decision", json_string(decision_of(p))) < 0 ||
			    (check && json_object_set_new(row, "check", json_string(check)) < 0))) {
			json_decref(row);
			row = NULL;
		}
		docket_free(command);
		return cli_put_json_line(row);
	}
	if ((error = cli_table_cell(t, p->session)) < 0 ||
	    (error = cli_table_cell(t, p->invocation)) < 0 ||
	    (error = cli_table_cellf(t, "%s%s%s", cli_or_dash(p->tool), *command ? ": " : "", command)) < 0 ||
	    (error = cli_table_cell_color(t, cli_status_color(shown.state), cli_or_dash(shown.state))) < 0 ||
	    (error = cli_table_cell_color(t, cli_status_color(decision_of(p)), decision_of(p))) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(p->recovery))) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(p->open_request))) < 0 ||
	    (error = cli_table_cellf(t, "%u", (unsigned)p->attempts)) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)p->intent_seq)) < 0) {
		docket_free(command);
		return error;
	}
	docket_free(command);
	return error;
}

static int local_begin(local_list *ll, int json)
{
	static const char *const header[] = { "SESSION", "INVOCATION", "CALL", "STATE", "DECISION", "RECOVERY",
					      "REQUEST", "ATTEMPTS", "INTENT" };
	int rc;

	if ((rc = cli_listing_begin(&ll->list, json, header, sizeof(header) / sizeof(header[0]))) != CLI_EXIT_OK)
		return rc;
	if (ll->list.table) {
		cli_table_align_right(ll->list.table, 7);
		cli_table_align_right(ll->list.table, 8);
	}
	return CLI_EXIT_OK;
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
		"  in_doubt           dispatched, no outcome (recovery decides); also a call a\n"
		"                     live hook let through whose outcome never came (--json:\n"
		"                     \"check\" says what to check about a call in doubt)\n"
		"CALL is the command, path or URL; DECISION the decision as it stands (a call\n"
		"that needed approval and was dispatched shows 'approved'). --json writes one\n"
		"object per line, with \"call\" and \"decision\".\n";
	const char *session = NULL;
	int json = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "session", 's', &session, "S", "only calls of session S", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	local_list ll = { { 0, NULL, 0 }, NULL, 0 };
	docket_ledger *ledger = NULL;
	char *owned = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if ((rc = cli_session_arg(ledger, &session, &owned)) != CLI_EXIT_OK)
		goto cleanup;
	if ((rc = local_begin(&ll, json)) != CLI_EXIT_OK)
		goto cleanup;
	ll.ledger = ledger;
	docket_error_clear();
	if ((error = docket_ledger_pending(ledger, session, local_row, &ll)) < 0) {
		rc = cli_fail(error, "cannot read the pending calls");
		goto cleanup;
	}
	cli_listing_end(&ll.list, g->color_out, "no pending calls\n");
	if (!json && ll.let_through)
		printf("in_doubt without a dispatch: %s\n", CLI_LET_THROUGH_CHECK);
	rc = CLI_EXIT_OK;

cleanup:
	docket_free(owned);
	cli_listing_dispose(&ll.list);
	docket_ledger_free(ledger);
	return rc;
}
