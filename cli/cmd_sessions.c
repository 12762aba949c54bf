/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_sessions.c: `docket sessions`: one line per session. */
#include "cli.h"

#include "util/error.h"

typedef struct sessions_ctx {
	int json;
	cli_table *table;
	size_t count;
} sessions_ctx;

static json_t *str_or_null(const char *s)
{
	return (s && *s) ? json_string(s) : json_null();
}

static json_t *session_json(const docket_session_info *s)
{
	return json_pack("{s:s, s:o, s:o, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o}",
			 "session", s->session,
			 "runtime", str_or_null(s->runtime),
			 "parent", str_or_null(s->parent),
			 "state", s->closed_seq ? "closed" : "open",
			 "opened_seq", (json_int_t)s->opened_seq,
			 "closed_seq", (json_int_t)s->closed_seq,
			 "events", (json_int_t)s->events,
			 "invocations", (json_int_t)s->invocations,
			 "pending", (json_int_t)s->pending,
			 "policy_revision", (json_int_t)s->policy_revision,
			 "policy_format", str_or_null(s->policy_format),
			 "first_time", str_or_null(s->first_time),
			 "last_time", str_or_null(s->last_time));
}

static int on_session(void *vctx, const docket_session_info *s)
{
	sessions_ctx *ctx = vctx;
	cli_table *t = ctx->table;
	char num[24];
	int error = 0;

	ctx->count++;
	if (ctx->json) {
		json_t *j = session_json(s);

		if (!j)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		error = cli_json_line(stdout, j);
		json_decref(j);
		return error < 0 ? docket_error_set(DOCKET_ESTORAGE, "cannot write output") : 0;
	}
	snprintf(num, sizeof(num), "%llu", (unsigned long long)s->pending);
	if ((error = cli_table_cell(t, s->session)) < 0 ||
	    (error = cli_table_cell(t, (s->runtime && *s->runtime) ? s->runtime : "-")) < 0 ||
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
	    (error = cli_table_cell(t, (s->first_time && *s->first_time) ? s->first_time : "-")) < 0 ||
	    (error = cli_table_cell(t, (s->last_time && *s->last_time) ? s->last_time : "-")) < 0)
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
	sessions_ctx ctx = { 0, NULL, 0 };
	docket_ledger *ledger = NULL;
	size_t i;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	ctx.json = json;
	if (!json) {
		if ((error = cli_table_new(&ctx.table, 9)) < 0) {
			rc = cli_fail(error, "out of memory");
			goto cleanup;
		}
		for (i = 3; i <= 5; i++)
			cli_table_align_right(ctx.table, i);
		for (i = 0; i < 9; i++)
			if ((error = cli_table_cell(ctx.table, header[i])) < 0) {
				rc = cli_fail(error, "out of memory");
				goto cleanup;
			}
	}
	docket_error_clear();
	if ((error = docket_ledger_sessions(ledger, on_session, &ctx)) < 0) {
		rc = cli_fail(error, "cannot read the sessions");
		goto cleanup;
	}
	if (!json) {
		if (ctx.count == 0)
			printf("no sessions\n");
		else
			cli_table_print(ctx.table, stdout, g->color_out, 1);
	}
	rc = CLI_EXIT_OK;

cleanup:
	cli_table_free(ctx.table);
	docket_ledger_free(ledger);
	return rc;
}
