/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_policy_eval.c: `docket policy eval SRC CALL`: one call (--call JSON,
 * --command LINE, --tool/--path/--url) or a batch (--calls FILE.jsonl: one
 * verdict line per input line, a bad line an error line, the policy loaded
 * once). --exit-code maps the verdict to an exit code (cmd_policy.h).
 */
#include "cmd_policy.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

typedef struct eval_args {
	const char *src, *call, *ctx, *scope, *command, *tool, *path, *url, *calls;
	int json, exit_code;
} eval_args;

/* The call the options name, checked against the call schema; an exit code. */
static int call_of(json_t **out, const eval_args *a)
{
	int error;

	*out = NULL;
	if (a->call && (a->command || a->tool || a->path || a->url)) {
		cli_error("--call gives the whole call: no --command, --tool, --path or --url with it");
		return CLI_EXIT_USAGE;
	}
	if (a->call) {
		int rc = policy_json_arg(out, "--call", a->call);

		if (rc != CLI_EXIT_OK)
			return rc;
	} else if ((error = docket_policy_call_shorthand(out, a->command, a->tool, a->path, a->url)) < 0) {
		return cli_fail(error, "bad call");
	}
	if (policy_call_check("--call", *out) < 0) {
		cli_fail(DOCKET_EINVALID, "bad call");
		json_decref(*out);
		*out = NULL;
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/*
 * Evaluate one call object into res (enforced verdict); a DOCKET_E* code.
 * The result borrows the call's words: *call lives until the result is
 * read (the caller frees it).
 */
static int eval_call(docket_policy_result *res, docket_policy_call **call, const docket_policy *p, const json_t *cj,
		     const docket_policy_context *ctx)
{
	int error;

	*call = NULL;
	if ((error = docket_policy_call_from_json(call, cj)) == 0)
		error = docket_policy_eval_enforced(res, p, *call, ctx);
	return error;
}

static void print_text(const cli_global *g, const docket_policy *p, const docket_policy_result *res,
		       const json_t *out)
{
	const char *v = docket_policy_verdict_name(docket_policy_result_verdict(res));
	size_t i;
	json_t *e;

	printf("verdict: ");
	cli_put_color(stdout, g->color_out, cli_status_color(v), v);
	putchar('\n');
	if (docket_policy_result_engine_verdict(res) != docket_policy_result_verdict(res))
		printf("engine:  %s (what %s would decide; docket enforces the verdict above)\n",
		       docket_policy_verdict_name(docket_policy_result_engine_verdict(res)),
		       docket_policy_get_format(p) == DOCKET_POLICY_CLAUDE ? "Claude Code" : "Codex");
	for (i = 0; i < docket_policy_result_reason_count(res); i++)
		printf("reason:  %s (%s)\n", docket_policy_result_reason_text(res, i),
		       docket_policy_result_reason_code(res, i));
	json_array_foreach(json_object_get(out, "matched_rules"), i, e) {
		long long line = (long long)json_integer_value(json_object_get(e, "line"));

		printf("rule:    %s  [%s", json_string_value(json_object_get(e, "rule")),
		       json_string_value(json_object_get(e, "origin")));
		if (line > 0)
			printf(":%lld", line);
		printf("] %s\n", json_string_value(json_object_get(e, "decision")));
	}
	json_array_foreach(json_object_get(out, "segments"), i, e) {
		docket_buf b = DOCKET_BUF_INIT;

		if (docket_json_dump(&b, json_object_get(e, "command")) == 0)
			printf("segment: %-18s %s (%s)\n", json_string_value(json_object_get(e, "verdict")), b.ptr,
			       json_string_value(json_object_get(e, "why")));
		docket_buf_dispose(&b);
	}
	if (json_object_get(out, "not_split"))
		printf("note:    script not split (%s)\n", json_string_value(json_object_get(out, "not_split")));
	printf("sandbox: %s\n", json_string_value(json_object_get(out, "sandbox")));
}

static int eval_one(const cli_global *g, const eval_args *a, const docket_policy *p,
		    const docket_policy_context *ctx)
{
	json_t *cj = NULL, *out = NULL;
	docket_policy_result *res = NULL;
	docket_policy_call *call = NULL;
	int rc, error;

	if ((rc = call_of(&cj, a)) != CLI_EXIT_OK)
		return rc;
	if ((error = docket_policy_result_new(&res)) < 0 || (error = eval_call(res, &call, p, cj, ctx)) < 0 ||
	    (error = docket_policy_result_to_json(&out, res)) < 0) {
		rc = cli_fail(error, "cannot evaluate");
		goto cleanup;
	}
	if (a->json)
		cli_json_pretty(stdout, out);
	else
		print_text(g, p, res, out);
	rc = a->exit_code ? policy_verdict_exit(docket_policy_result_verdict(res)) : CLI_EXIT_OK;
cleanup:
	json_decref(out);
	json_decref(cj);
	docket_policy_result_free(res);
	docket_policy_call_free(call);
	return rc;
}

/* One line of a batch: its verdict object, or {"line","error"}. */
static json_t *batch_line(docket_policy_result *res, const docket_policy *p, const docket_policy_context *ctx,
			  const char *text, size_t len, size_t lineno, int *verdict)
{
	json_t *cj = NULL, *out = NULL;
	docket_policy_call *call = NULL;
	int error;

	*verdict = -1;
	if ((error = docket_json_parse(&cj, text, len)) == 0 && (error = policy_call_check("call", cj)) == 0 &&
	    (error = eval_call(res, &call, p, cj, ctx)) == 0 && (error = docket_policy_result_to_json(&out, res)) == 0)
		*verdict = (int)docket_policy_result_verdict(res);
	if (error < 0) {
		const char *msg = docket_error_last()->message;

		out = json_pack("{s:s}", "error", msg[0] ? msg : "bad call");
	}
	if (out) {
		json_t *id = json_is_object(cj) ? json_object_get(cj, "invocation") : NULL;

		json_object_set_new(out, "line", json_integer((json_int_t)lineno));
		if (json_is_string(id))
			json_object_set(out, "invocation", id);
	}
	docket_policy_call_free(call);
	json_decref(cj);
	return out;
}

/*
 * --calls FILE.jsonl ("-": stdin): one JSON call per line, one compact
 * result per line in the same order. A bad line is an error line and the
 * batch goes on; the exit code is 2 when any line was bad, else (with
 * --exit-code) the strictest verdict's.
 */
static int eval_batch(const eval_args *a, const docket_policy *p, const docket_policy_context *ctx)
{
	FILE *in = strcmp(a->calls, "-") == 0 ? stdin : fopen(a->calls, "r");
	docket_policy_result *res = NULL;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t n;
	int strictest = -1, bad = 0, rc = CLI_EXIT_OK, error;

	if (!in) {
		cli_error("--calls: cannot open %s", a->calls);
		return CLI_EXIT_USAGE;
	}
	if ((error = docket_policy_result_new(&res)) < 0) {
		rc = cli_fail(error, "cannot evaluate");
		goto cleanup;
	}
	while ((n = getline(&line, &cap, in)) >= 0) {
		json_t *out;
		int v;

		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		if (!(out = batch_line(res, p, ctx, line, (size_t)n, lineno, &v))) {
			rc = cli_fail_oom();
			goto cleanup;
		}
		bad |= v < 0;
		strictest = v > strictest ? v : strictest;
		json_dumpf(out, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
		putchar('\n');
		json_decref(out);
	}
	if (ferror(in)) {
		cli_error("--calls: cannot read %s", a->calls);
		rc = CLI_EXIT_SYSTEM;
	} else if (bad) {
		rc = CLI_EXIT_USAGE;
	} else if (a->exit_code && strictest >= 0) {
		rc = policy_verdict_exit((docket_verdict)strictest);
	}
cleanup:
	free(line);
	docket_policy_result_free(res);
	if (in != stdin)
		fclose(in);
	return rc;
}

int policy_sub_eval(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	eval_args a = { 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "SRC", 0, &a.src, NULL, POLICY_SRC_HELP, CLI_OPT_REQUIRED },
		POLICY_SCOPE_OPT(&a.scope),
		{ CLI_OPT_STRING, "call", 0, &a.call, "JSON", "the call: {\"tool\",\"args\"} as `docket policy schema` describes; @FILE reads a file", 0 },
		{ CLI_OPT_STRING, "command", 'c', &a.command, "LINE", "a shell call of LINE's words, split like a shell (nothing expanded)", 0 },
		{ CLI_OPT_STRING, "tool", 0, &a.tool, "NAME", "a call of tool NAME (with --path or --url: its args)", 0 },
		{ CLI_OPT_STRING, "path", 0, &a.path, "PATH", "a call on PATH (tool read_file unless --tool)", 0 },
		{ CLI_OPT_STRING, "url", 0, &a.url, "URL", "a call of URL (tool network unless --tool)", 0 },
		{ CLI_OPT_STRING, "calls", 0, &a.calls, "FILE", "a batch: one call JSON per line (- for stdin), one result line each", 0 },
		{ CLI_OPT_STRING, "context", 0, &a.ctx, "JSON", "platform, cwd, workspace_roots, env, grants, approval_policy, sandbox_policy, client, client_sandbox", 0 },
		{ CLI_OPT_SWITCH, "exit-code", 0, &a.exit_code, NULL, "exit 0 allowed, 10 approval_required, 11 denied, 12 unsupported", 0 },
		CLI_OPT_JSON(&a.json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_policy *p = NULL;
	docket_policy_context *ctx = NULL;
	json_t *xj = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts,
			    "Evaluates a call and prints the enforced verdict (and the engine's, when they differ),\n"
			    "reasons and matched rules. With --calls, evaluates a batch under one load of the policy.\n"
			    "Exit 0, or with --exit-code the verdict's code; 2 bad input (a bad line of a batch\n"
			    "is an error line, and the batch goes on).\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!a.call && !a.command && !a.tool && !a.path && !a.url && !a.calls) {
		cli_error("policy eval needs a call: --call JSON, --command LINE, --tool/--path/--url, or --calls FILE");
		return CLI_EXIT_USAGE;
	}
	if (a.calls && (a.call || a.command || a.tool || a.path || a.url || a.json)) {
		cli_error("--calls reads every call from its file (JSON lines out): no other call option or --json");
		return CLI_EXIT_USAGE;
	}
	if (a.ctx && (rc = policy_json_arg(&xj, "--context", a.ctx)) != CLI_EXIT_OK)
		goto cleanup;
	if ((error = docket_policy_context_from_json(&ctx, xj)) < 0) {
		rc = cli_fail(error, "bad context");
		goto cleanup;
	}
	if ((rc = policy_load(&p, a.src, a.scope)) != CLI_EXIT_OK)
		goto cleanup;
	rc = a.calls ? eval_batch(&a, p, ctx) : eval_one(g, &a, p, ctx);
cleanup:
	json_decref(xj);
	docket_policy_context_free(ctx);
	docket_policy_free(p);
	return rc;
}
