/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_sessions.c: `docket sessions`: one line per session.
 *
 * Besides the sessions projection, the local listing reads each session's
 * session.opened (cwd, whether it was imported) and policy.revised events
 * (the mode it ran in, flagged when risky: docket_audit_risky_mode), in one
 * pass over the ledger.
 */
#include "cli.h"

#include <string.h>

#include "docket/export.h"
#include "ledger/spool.h"
#include "util/error.h"

#define MODE_MAX 240

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

/* ---- the local listing: what the events add --------------------------- */

/* A spooled event refused when folded (ledger.incident, in no session):
 * counted for the session its entry names. */
static int count_incident(json_t *extras, const json_t *ev)
{
	json_t *entry = docket_spool_incident_entry(ev), *x;
	const char *session = docket_json_str(entry, "session");
	int error = 0;

	if (session && !(x = json_object_get(extras, session)) &&
	    (json_object_set_new(extras, session, x = json_object()) < 0 || !x))
		error = docket_error_set_oom();
	else if (session && json_object_set_new(x, "incidents", json_integer(json_integer_value(
					json_object_get(x, "incidents")) + 1)) < 0)
		error = docket_error_set_oom();
	json_decref(entry);
	return error;
}

/* session -> {"cwd", "imported", "mode", "risky", "incidents"} */
static int on_event(void *vctx, uint64_t seq, json_t *ev)
{
	json_t *extras = vctx, *x;
	const char *type = docket_json_str(ev, "type"), *session = docket_json_str(ev, "session");
	char mode[MODE_MAX];
	int risky;

	(void)seq;
	if (type && strcmp(type, "ledger.incident") == 0)
		return count_incident(extras, ev);
	if (!type || !session || (strcmp(type, "session.opened") != 0 && strcmp(type, "policy.revised") != 0))
		return 0;
	if (!(x = json_object_get(extras, session)) &&
	    (json_object_set_new(extras, session, x = json_object()) < 0 || !x))
		return docket_error_set_oom();
	if (strcmp(type, "session.opened") == 0)
		return json_object_set_new(x, "cwd", cli_json_nonempty(docket_json_str(ev, "cwd"))) < 0 ||
		       json_object_set_new(x, "imported", json_boolean(json_object_get(ev, "provenance") != NULL)) < 0
			       ? docket_error_set_oom() : 0;
	if ((risky = docket_audit_risky_mode(mode, sizeof(mode), ev)) < 0)
		return risky;
	return json_object_set_new(x, "mode", cli_json_nonempty(mode)) < 0 ||
	       json_object_set_new(x, "risky", json_boolean(risky > 0)) < 0
		       ? docket_error_set_oom() : 0;
}

typedef struct local_list {
	cli_listing list;
	json_t *extras;
} local_list;

/* "open", "closed", or for an imported transcript that recorded no end,
 * "no end recorded": it is not a session still running. */
static const char *state_of(const docket_session_info *s, const json_t *x)
{
	if (s->closed_seq)
		return "closed";
	return json_is_true(json_object_get(x, "imported")) ? "no end recorded" : "open";
}

static int local_row(void *vctx, const docket_session_info *s)
{
	local_list *ll = vctx;
	cli_table *t = ll->list.table;
	const json_t *x = json_object_get(ll->extras, s->session);
	const char *mode = docket_json_str(x, "mode");
	int risky = json_is_true(json_object_get(x, "risky")), error;
	json_int_t incidents = json_integer_value(json_object_get(x, "incidents"));

	ll->list.count++;
	if (ll->list.json) {
		json_t *row = session_json(s);

		if (row && (json_object_set_new(row, "imported", json_boolean(json_is_true(json_object_get(x, "imported")))) < 0 ||
			    json_object_set_new(row, "cwd", cli_json_nonempty(docket_json_str(x, "cwd"))) < 0 ||
			    json_object_set_new(row, "mode", cli_json_nonempty(mode)) < 0 ||
			    json_object_set_new(row, "risky_mode", json_boolean(risky)) < 0 ||
			    json_object_set_new(row, "incidents", json_integer(incidents)) < 0)) {
			json_decref(row);
			row = NULL;
		}
		return cli_put_json_line(row);
	}
	if ((error = cli_table_cell(t, s->session)) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(s->runtime))) < 0 ||
	    (incidents ? (error = cli_table_cellf(t, "%s, %lld incident%s", state_of(s, x), (long long)incidents,
						   incidents == 1 ? "" : "s")) < 0
		       : (error = cli_table_cell_color(t, s->closed_seq ? NULL : CLI_YELLOW, state_of(s, x))) < 0) ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)s->invocations)) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)s->pending)) < 0)
		return error;
	if (mode)
		error = cli_table_cellf(t, "%s%s", risky ? "RISKY " : "", mode);
	else
		error = cli_table_cell(t, "-");
	if (error < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(docket_json_str(x, "cwd")))) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(s->parent))) < 0 ||
	    (error = cli_table_cell(t, cli_or_dash(s->last_time))) < 0)
		return error;
	return 0;
}

static int local_begin(local_list *ll, int json)
{
	static const char *const header[] = { "SESSION", "CLIENT", "STATE", "CALLS", "PENDING", "MODE", "CWD",
					      "PARENT", "LAST" };
	int rc;

	if ((rc = cli_listing_begin(&ll->list, json, header, sizeof(header) / sizeof(header[0]))) != CLI_EXIT_OK)
		return rc;
	if (ll->list.table) {
		cli_table_align_right(ll->list.table, 3);
		cli_table_align_right(ll->list.table, 4);
	}
	return CLI_EXIT_OK;
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

int cmd_sessions(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Lists every session: its client (the runtime that recorded it), state\n"
		"(open, closed, or for an imported transcript that recorded no end, 'no end\n"
		"recorded'), tool calls, calls still pending, the mode of its last policy\n"
		"revision (RISKY when it never asks or runs without a sandbox, docs/audit.md),\n"
		"its working directory, its parent session (a subagent's) and the time of its\n"
		"last event. --json writes one object per line, with every count and time.\n";
	int json = 0;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	local_list ll = { { 0, NULL, 0 }, NULL };
	/* on_event reads sessions, policies and incidents: no outcome, no hash
	 * (a format-3 segment's outcomes stay compressed) */
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if (!(ll.extras = json_object())) {
		rc = cli_fail_oom();
		goto cleanup;
	}
	ro.flags = DOCKET_READ_NO_HASH | DOCKET_READ_NO_OUTCOMES;
	docket_error_clear();
	if ((error = docket_ledger_read_json(ledger, &ro, on_event, ll.extras)) < 0) {
		rc = cli_fail(error, "cannot read the ledger");
		goto cleanup;
	}
	if ((rc = local_begin(&ll, json)) != CLI_EXIT_OK)
		goto cleanup;
	if ((error = docket_ledger_sessions(ledger, local_row, &ll)) < 0) {
		rc = cli_fail(error, "cannot read the sessions");
		goto cleanup;
	}
	cli_listing_end(&ll.list, g->color_out, "no sessions\n");
	rc = CLI_EXIT_OK;

cleanup:
	cli_listing_dispose(&ll.list);
	json_decref(ll.extras);
	docket_ledger_free(ledger);
	return rc;
}
