/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_policy.c: `docket policy check|eval|explain|convert SRC ...`.
 * SRC is PATH (docket YAML), codex:PATH (.rules file or directory) or
 * claude:PATH (settings.json). Nothing here touches the ledger.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

static const char summary[] = "check, evaluate, explain or convert a policy";

/* claude:FILE's settings scope; claude:DIR merges a project's scopes */
#define SCOPE_OPT(var) { CLI_OPT_STRING, "scope", 0, (var), "SCOPE", \
	"settings scope of a claude:FILE: user, project, local, managed or flag (default: from its place)", 0 }

static int load(docket_policy **p, const char *src, const char *scope)
{
	int error = docket_policy_load_scoped(p, src, scope);

	if (error < 0) {
		cli_error("%s", docket_error_last()->message[0] ? docket_error_last()->message : "cannot load policy");
		return error == DOCKET_EINVALID || error == DOCKET_ENOTFOUND ? CLI_EXIT_USAGE : cli_exit_code(error);
	}
	return CLI_EXIT_OK;
}

/* JSON from text, or from a file with "@PATH". */
static int json_arg(json_t **out, const char *what, const char *arg)
{
	json_error_t jerr;

	if (arg[0] == '@')
		*out = json_load_file(arg + 1, JSON_REJECT_DUPLICATES, &jerr);
	else
		*out = json_loads(arg, JSON_REJECT_DUPLICATES, &jerr);
	if (!*out) {
		cli_error("%s: invalid JSON at line %d column %d: %s", what, jerr.line, jerr.column, jerr.text);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

static int sub_check(const cli_command *cmd, int argc, char **argv)
{
	const char *src = NULL, *scope = NULL;
	int json = 0, rc;
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "SRC", 0, &src, NULL, "PATH, codex:PATH or claude:PATH", CLI_OPT_REQUIRED },
		SCOPE_OPT(&scope),
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_policy *p = NULL;

	if ((rc = cli_parse(cmd, opts, "Loads the policy and reports the first error with file:line:column (exit 2).\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = load(&p, src, scope)) != CLI_EXIT_OK)
		return rc;
	if (json) {
		json_t *j = json_pack("{s:b,s:s,s:I}", "ok", 1, "format",
				      docket_policy_format_str(docket_policy_get_format(p)), "rules",
				      (json_int_t)docket_policy_rule_count(p));
		json_t *code = docket_policy_code_allow(p, 0) ? json_array() : NULL;

		for (size_t i = 0; code && docket_policy_code_allow(p, i); i++)
			json_array_append_new(code, json_string(docket_policy_code_allow(p, i)));
		if (j && code)
			json_object_set_new(j, "code_allows", code);
		else
			json_decref(code);
		cli_json_pretty(stdout, j);
		json_decref(j);
	} else {
		printf("ok: %s policy, %zu rule%s\n", docket_policy_format_str(docket_policy_get_format(p)),
		       docket_policy_rule_count(p), docket_policy_rule_count(p) == 1 ? "" : "s");
		/* an allow of a shell or interpreter lets through code docket cannot see (issue 26) */
		for (size_t i = 0; docket_policy_code_allow(p, i); i++)
			printf("note: %s allows code docket cannot see into (one-liners, script files, piped "
			       "input): the author's choice\n", docket_policy_code_allow(p, i));
	}
	docket_policy_free(p);
	return CLI_EXIT_OK;
}

static int sub_eval(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	const char *src = NULL, *call_arg = NULL, *ctx_arg = NULL, *scope = NULL;
	int json = 0, rc;
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "SRC", 0, &src, NULL, "PATH, codex:PATH or claude:PATH", CLI_OPT_REQUIRED },
		SCOPE_OPT(&scope),
		{ CLI_OPT_STRING, "call", 0, &call_arg, "JSON", "the call (required): a tool.intent {\"tool\",\"args\"}; @FILE reads a file", 0 },
		{ CLI_OPT_STRING, "context", 0, &ctx_arg, "JSON", "platform, cwd, workspace_roots, env, grants, approval_policy, sandbox_policy, client, client_sandbox", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_policy *p = NULL;
	docket_policy_call *call = NULL;
	docket_policy_context *ctx = NULL;
	docket_policy_result *res = NULL;
	json_t *cj = NULL, *xj = NULL, *out = NULL;
	int error;

	if ((rc = cli_parse(cmd, opts, "Evaluates one call and prints the enforced verdict (and the engine's, when they differ), reasons and matched rules.\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!call_arg) {
		cli_error("policy eval needs --call JSON");
		return CLI_EXIT_USAGE;
	}
	if ((rc = json_arg(&cj, "--call", call_arg)) != CLI_EXIT_OK)
		goto cleanup;
	if (ctx_arg && (rc = json_arg(&xj, "--context", ctx_arg)) != CLI_EXIT_OK)
		goto cleanup;
	if ((rc = load(&p, src, scope)) != CLI_EXIT_OK)
		goto cleanup;
	if ((error = docket_policy_call_from_json(&call, cj)) < 0 ||
	    (error = docket_policy_context_from_json(&ctx, xj)) < 0) {
		rc = cli_fail(error, "bad call or context");
		goto cleanup;
	}
	if ((error = docket_policy_result_new(&res)) < 0 || (error = docket_policy_eval_enforced(res, p, call, ctx)) < 0 ||
	    (error = docket_policy_result_to_json(&out, res)) < 0) {
		rc = cli_fail(error, "cannot evaluate");
		goto cleanup;
	}
	if (json) {
		cli_json_pretty(stdout, out);
	} else {
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
				printf("segment: %-18s %s (%s)\n", json_string_value(json_object_get(e, "verdict")),
				       b.ptr, json_string_value(json_object_get(e, "why")));
			docket_buf_dispose(&b);
		}
		if (json_object_get(out, "not_split"))
			printf("note:    script not split (%s)\n", json_string_value(json_object_get(out, "not_split")));
		printf("sandbox: %s\n", json_string_value(json_object_get(out, "sandbox")));
	}
	rc = CLI_EXIT_OK;
cleanup:
	json_decref(out);
	json_decref(cj);
	json_decref(xj);
	docket_policy_result_free(res);
	docket_policy_context_free(ctx);
	docket_policy_call_free(call);
	docket_policy_free(p);
	return rc;
}

static int sub_explain(const cli_command *cmd, int argc, char **argv, int convert)
{
	const char *src = NULL, *to = NULL, *scope = NULL;
	int json = 0, rc, error;
	cli_opt opts[] = {
		{ CLI_OPT_ARG, "SRC", 0, &src, NULL, "PATH, codex:PATH or claude:PATH", CLI_OPT_REQUIRED },
		SCOPE_OPT(&scope),
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_policy *p = NULL;

	if (convert)
		opts[2] = (cli_opt){ CLI_OPT_STRING, "to", 0, &to, "FORMAT", "the target format (docket)", 0 };
	if ((rc = cli_parse(cmd, opts, convert ? "Writes the policy as docket YAML that evaluates identically.\n" :
				     "Prints the normalised policy (docket YAML; JSON with --json), with a note for each\n"
				     "rule Claude Code does not apply as written.\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (convert && to && strcmp(to, "docket") != 0) {
		cli_error("policy convert: unknown target format '%s' (only docket)", to);
		return CLI_EXIT_USAGE;
	}
	if ((rc = load(&p, src, scope)) != CLI_EXIT_OK)
		return rc;
	if (json) {
		json_t *j = NULL;

		if ((error = docket_policy_to_json(&j, p)) < 0)
			rc = cli_fail(error, "cannot explain");
		else
			cli_json_pretty(stdout, j);
		json_decref(j);
	} else {
		char *y = NULL;

		if ((error = docket_policy_to_yaml(&y, p)) < 0)
			rc = cli_fail(error, "cannot convert");
		else
			fputs(y, stdout);
		docket_free(y);
	}
	docket_policy_free(p);
	return rc;
}

int cmd_policy(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char usage[] =
		"usage: docket policy check SRC [--json]\n"
		"       docket policy eval SRC --call CALL_JSON [--context CONTEXT_JSON] [--json]\n"
		"       docket policy explain SRC [--json]\n"
		"       docket policy convert SRC --to docket\n"
		"\n"
		"SRC is PATH (docket YAML), codex:PATH (a .rules file or a directory of them)\n"
		"or claude:PATH (a Claude Code settings.json, or a project directory whose\n"
		"user, project, local and managed settings are merged as Claude Code does;\n"
		"--scope SCOPE names a settings file's scope). See docs/policy.md.\n";
	cli_command sub = *cmd;
	char name[64];

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	snprintf(name, sizeof(name), "policy %s", argv[1]);
	sub.name = name;
	sub.summary = summary;
	if (strcmp(argv[1], "check") == 0) {
		sub.summary = "validate a policy";
		return sub_check(&sub, argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "eval") == 0) {
		sub.summary = "evaluate one tool call against a policy";
		return sub_eval(&sub, g, argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "explain") == 0) {
		sub.summary = "print the normalised policy";
		return sub_explain(&sub, argc - 1, argv + 1, 0);
	}
	if (strcmp(argv[1], "convert") == 0) {
		sub.summary = "convert a Codex or Claude Code policy to docket YAML";
		return sub_explain(&sub, argc - 1, argv + 1, 1);
	}
	cli_error("unknown policy command '%s'", argv[1]);
	fputs(usage, stderr);
	return CLI_EXIT_USAGE;
}
