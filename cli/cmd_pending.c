/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_pending.c: `docket pending`: tool calls without an outcome. */
#include "cli.h"

#include "util/error.h"

typedef struct pending_ctx {
	int json;
	cli_table *table;
	size_t count;
} pending_ctx;

static json_t *str_or_null(const char *s)
{
	return (s && *s) ? json_string(s) : json_null();
}

static const char *or_dash(const char *s)
{
	return (s && *s) ? s : "-";
}

static int on_pending(void *vctx, const docket_pending_info *p)
{
	pending_ctx *ctx = vctx;
	cli_table *t = ctx->table;
	int error;

	ctx->count++;
	if (ctx->json) {
		json_t *j = json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:I, s:I, s:I}",
				      "session", p->session,
				      "invocation", p->invocation,
				      "tool", str_or_null(p->tool),
				      "state", p->state ? p->state : "",
				      "verdict", str_or_null(p->verdict),
				      "recovery", str_or_null(p->recovery),
				      "open_request", str_or_null(p->open_request),
				      "token", str_or_null(p->token),
				      "attempts", (json_int_t)p->attempts,
				      "intent_seq", (json_int_t)p->intent_seq,
				      "last_seq", (json_int_t)p->last_seq);

		if (!j)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		error = cli_json_line(stdout, j);
		json_decref(j);
		return error < 0 ? docket_error_set(DOCKET_ESTORAGE, "cannot write output") : 0;
	}
	if ((error = cli_table_cell(t, p->session)) < 0 ||
	    (error = cli_table_cell(t, p->invocation)) < 0 ||
	    (error = cli_table_cell(t, or_dash(p->tool))) < 0 ||
	    (error = cli_table_cell_color(t, cli_status_color(p->state), or_dash(p->state))) < 0 ||
	    (error = cli_table_cell_color(t, cli_status_color(p->verdict), or_dash(p->verdict))) < 0 ||
	    (error = cli_table_cell(t, or_dash(p->recovery))) < 0 ||
	    (error = cli_table_cell(t, or_dash(p->open_request))) < 0 ||
	    (error = cli_table_cellf(t, "%u", (unsigned)p->attempts)) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)p->intent_seq)) < 0 ||
	    (error = cli_table_cellf(t, "%llu", (unsigned long long)p->last_seq)) < 0)
		return error;
	return 0;
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
	static const char *const header[] = { "SESSION", "INVOCATION", "TOOL", "STATE", "VERDICT",
					      "RECOVERY", "REQUEST", "ATTEMPTS", "INTENT", "LAST" };
	pending_ctx ctx = { 0, NULL, 0 };
	docket_ledger *ledger = NULL;
	size_t i;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	if (session && (rc = cli_check_session(ledger, session)) != CLI_EXIT_OK)
		goto cleanup;
	ctx.json = json;
	if (!json) {
		if ((error = cli_table_new(&ctx.table, 10)) < 0) {
			rc = cli_fail(error, "out of memory");
			goto cleanup;
		}
		for (i = 7; i < 10; i++)
			cli_table_align_right(ctx.table, i);
		for (i = 0; i < 10; i++)
			if ((error = cli_table_cell(ctx.table, header[i])) < 0) {
				rc = cli_fail(error, "out of memory");
				goto cleanup;
			}
	}
	docket_error_clear();
	if ((error = docket_ledger_pending(ledger, session, on_pending, &ctx)) < 0) {
		rc = cli_fail(error, "cannot read the pending calls");
		goto cleanup;
	}
	if (!json) {
		if (ctx.count == 0)
			printf("no pending calls\n");
		else
			cli_table_print(ctx.table, stdout, g->color_out, 1);
	}
	rc = CLI_EXIT_OK;

cleanup:
	cli_table_free(ctx.table);
	docket_ledger_free(ledger);
	return rc;
}
