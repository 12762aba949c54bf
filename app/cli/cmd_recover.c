/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_recover.c: `docket recover`: the recovery plan, and its application. */
#include "cli.h"

#include <string.h>

#include "docket/recover.h"
#include "util/error.h"

/* The lineages apply fenced: a runtime.started each (docs/protocol.md, "Recovery"). */
static void print_fenced(const json_t *fenced)
{
	const json_t *f;
	size_t i;

	json_array_foreach(fenced, i, f) {
		const json_t *uid = json_object_get(f, "uid");
		const char *err = json_string_value(json_object_get(f, "error"));

		if (!json_is_true(json_object_get(f, "owner"))) {
			printf("sessions no runtime owns: settled under a new epoch %lld%s%s\n",
			       (long long)json_integer_value(json_object_get(f, "epoch")), err ? ": " : "", err ? err : "");
			continue;
		}
		printf("fenced runtime \"%s\" (%s%lld)", json_string_value(json_object_get(f, "runtime")),
		       uid ? "uid " : "no uid", uid ? (long long)json_integer_value(uid) : 0LL);
		if (err)
			printf(": not started: %s\n", err);
		else
			printf(": its epoch is now %lld; restart it with runtime.start\n",
			       (long long)json_integer_value(json_object_get(f, "epoch")));
	}
}

static void print_plan(const json_t *plan, int applied)
{
	const json_t *items = json_object_get(plan, "items"), *item;
	cli_table *t = NULL;
	size_t i;

	printf("%llu pending invocation%s at epoch %lld%s\n",
	       (unsigned long long)json_array_size(items), json_array_size(items) == 1 ? "" : "s",
	       (long long)json_integer_value(json_object_get(plan, "epoch")),
	       applied ? "; plan applied" : "; plan only (use --apply to record it)");
	print_fenced(json_object_get(plan, "fenced"));
	if (json_array_size(items) == 0 || cli_table_new(&t, applied ? 9 : 8) < 0)
		return;
	cli_table_cell(t, "SESSION");
	cli_table_cell(t, "INVOCATION");
	cli_table_cell(t, "TOOL");
	cli_table_cell(t, "STATE");
	cli_table_cell(t, "RECOVERY");
	cli_table_cell(t, "ACTION");
	cli_table_cell(t, "RUNTIME NEXT");
	cli_table_cell(t, "TOKEN");
	if (applied)
		cli_table_cell(t, "APPLIED");
	json_array_foreach(items, i, item) {
		const json_t *ok = json_object_get(item, "applied");

		cli_table_cell(t, json_string_value(json_object_get(item, "session")));
		cli_table_cell(t, json_string_value(json_object_get(item, "invocation")));
		cli_table_cell(t, json_string_value(json_object_get(item, "tool")));
		cli_table_cell(t, json_string_value(json_object_get(item, "state")));
		cli_table_cell(t, json_string_value(json_object_get(item, "recovery")));
		cli_table_cell(t, json_string_value(json_object_get(item, "action")));
		cli_table_cell(t, json_string_value(json_object_get(item, "runtime")));
		cli_table_cell(t, json_object_get(item, "token") ? json_string_value(json_object_get(item, "token")) : "-");
		if (applied)
			cli_table_cell(t, json_array_size(json_object_get(item, "events")) == 0 ? "-"
					  : json_is_true(ok) ? "yes"
					  : json_string_value(json_object_get(item, "error")));
	}
	cli_table_print(t, stdout, 0, 1);
	cli_table_free(t);
}

/* The first token whose outcome is not an object, or NULL. */
static const char *first_non_object(const json_t *answers)
{
	const char *token;
	const json_t *v;

	json_object_foreach((json_t *)answers, token, v) {
		if (!json_is_object(v))
			return token;
	}
	return NULL;
}

int cmd_recover(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Shows, for every pending tool call, what docket does after a crash and what\n"
		"the runtime must do next (dispatch, redispatch, reprompt, ask_approval,\n"
		"decide, wait, none), with its dispatch token. With --apply the plan's events\n"
		"are recorded (each call atomically, all in one commit): re-dispatches only\n"
		"for replay_safe and idempotent calls, outcome indeterminate for\n"
		"never_auto_retry, reconcile calls settled from --reconcile FILE or parked.\n"
		"\n"
		"Order: after runtime NAME crashed, run recover --apply --runtime NAME, then\n"
		"start NAME again (runtime.start). --apply fences only the runtimes whose\n"
		"calls it settles (a runtime.started for each: runtime name and uid); without\n"
		"--runtime that is every runtime with a call pending, healthy ones included.\n"
		"An instance started before the apply is fenced too and must call\n"
		"runtime.start again. With nothing to settle it writes nothing.\n"
		"\n"
		"The --reconcile FILE is one JSON object: dispatch token (the TOKEN column)\n"
		"-> the executor's outcome of that call, an object with status (ok, error,\n"
		"timeout, cancelled, indeterminate; default ok), exit_code, output,\n"
		"duration_ms, error (the fields of tool.completed), e.g.\n"
		"  {\"dt-0123...\": {\"status\": \"ok\", \"exit_code\": 0, \"output\": \"deployed\"}}\n"
		"A call whose token the file does not name is parked.\n";
	int apply = 0, json = 0;
	const char *approvals = NULL, *reconcile = NULL, *runtime = NULL;
	const cli_opt opts[] = {
		{ CLI_OPT_SWITCH, "apply", 0, &apply, NULL, "record the plan", 0 },
		{ CLI_OPT_STRING, "approvals", 0, &approvals, "reprompt|close", "open approvals: ask again (default) or close", 0 },
		{ CLI_OPT_STRING, "reconcile", 0, &reconcile, "FILE", "the executor's answers, token -> outcome", 0 },
		{ CLI_OPT_STRING, "runtime", 0, &runtime, "NAME", "only the calls of this runtime's sessions (the one that crashed)", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_recover_options ro = DOCKET_RECOVER_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	json_t *answers = NULL, *plan = NULL;
	json_error_t jerr;
	const char *bad = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (approvals && strcmp(approvals, "reprompt") != 0 && strcmp(approvals, "close") != 0) {
		cli_error("recover: --approvals must be reprompt or close");
		return CLI_EXIT_USAGE;
	}
	ro.close_approvals = approvals && strcmp(approvals, "close") == 0;
	ro.runtime = runtime;
	if (reconcile) {
		if (!(answers = json_load_file(reconcile, JSON_REJECT_DUPLICATES, &jerr))) {
			if (jerr.line > 0)
				cli_error("%s:%d: %s", reconcile, jerr.line, jerr.text);
			else
				cli_error("%s", jerr.text);
			return CLI_EXIT_USAGE;
		}
		if (!json_is_object(answers) || (bad = first_non_object(answers))) {
			if (bad)
				cli_error("%s: the outcome of %s must be an object like {\"status\":\"ok\",\"exit_code\":0}",
					  reconcile, bad);
			else
				cli_error("%s: expected a JSON object: dispatch token -> outcome", reconcile);
			json_decref(answers);
			return CLI_EXIT_USAGE;
		}
		ro.reconcile = answers;
	}
	if ((rc = cli_open_ledger(&ledger, g, apply ? 0 : CLI_OPEN_READ)) != CLI_EXIT_OK)
		goto cleanup;
	docket_error_clear();
	error = apply ? docket_recover_apply(ledger, &ro, &plan) : docket_recover_plan(ledger, &ro, &plan);
	if (error < 0) {
		rc = cli_fail(error, "recovery failed");
		goto cleanup;
	}
	if (json)
		rc = cli_json_pretty(stdout, plan) < 0 ? CLI_EXIT_SYSTEM : CLI_EXIT_OK;
	else {
		print_plan(plan, apply);
		rc = CLI_EXIT_OK;
	}
cleanup:
	json_decref(plan);
	json_decref(answers);
	docket_ledger_free(ledger);
	return rc;
}
