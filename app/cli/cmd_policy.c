/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_policy.c: `docket policy check|explain|convert|schema` and the
 * dispatch of `docket policy` (eval: cmd_policy_eval.c, test:
 * cmd_policy_test.c). SRC is PATH (docket YAML), codex:PATH (.rules file
 * or directory), claude:PATH (settings.json), or one of them at a git
 * revision (git:REV:PATH, read through libgit2).
 */
#include "cmd_policy.h"

#include <stdlib.h>
#include <string.h>

#include "docket/replay.h"
#include "runtime/call_schema.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

/* docs/call.schema.json, embedded at build time (app/cli/meson.build) */
extern const char *const docket_call_schema_json;

static const char summary[] = "check, evaluate, explain or convert a policy";

int policy_load(docket_policy **p, const char *src, const char *scope)
{
	/* the replay module's loader reads every source, git revisions included */
	int error = scope ? docket_policy_load_scoped(p, src, scope) : docket_replay_source_load(p, src, NULL);

	if (error < 0) {
		cli_error("%s", docket_error_last()->message[0] ? docket_error_last()->message : "cannot load policy");
		return error == DOCKET_EINVALID || error == DOCKET_ENOTFOUND || error == DOCKET_ERROR ?
			CLI_EXIT_USAGE : cli_exit_code(error);
	}
	return CLI_EXIT_OK;
}

int policy_json_arg(json_t **out, const char *what, const char *arg)
{
	json_error_t jerr;

	if (arg[0] == '@')
		*out = json_load_file(arg + 1, JSON_REJECT_DUPLICATES, &jerr);
	else
		*out = json_loads(arg, JSON_REJECT_DUPLICATES, &jerr);
	if (!*out) {
		cli_error("%s: invalid JSON at line %d column %d: %s%s", what, jerr.line, jerr.column, jerr.text,
			  arg[0] != '@' && arg[0] != '{' ? " (a command line is --command LINE)" : "");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int policy_call_check(const char *where, const json_t *call)
{
	const json_t *tool = json_object_get(call, "tool");

	if (!json_is_object(call))
		return docket_error_set(DOCKET_EINVALID, "%s: a call is a JSON object {\"tool\", \"args\"}", where);
	if (!json_is_string(tool))
		return docket_error_set(DOCKET_EINVALID, "%s: a call needs a string \"tool\"", where);
	return call_schema_check(where, json_string_value(tool), &docket_jv_jansson,
				 docket_jv_of_json(json_object_get(call, "args")));
}

int policy_verdict_exit(docket_verdict v)
{
	switch (v) {
	case DOCKET_VERDICT_ALLOWED: return POLICY_EXIT_ALLOWED;
	case DOCKET_VERDICT_APPROVAL_REQUIRED: return POLICY_EXIT_APPROVAL;
	case DOCKET_VERDICT_DENIED: return POLICY_EXIT_DENIED;
	case DOCKET_VERDICT_UNSUPPORTED: return POLICY_EXIT_UNSUPPORTED;
	}
	return POLICY_EXIT_UNSUPPORTED;
}

static void count_findings(const json_t *findings, size_t *errors, size_t *warnings)
{
	size_t i;
	json_t *f;

	*errors = *warnings = 0;
	json_array_foreach(findings, i, f) {
		if (strcmp(json_string_value(json_object_get(f, "severity")), "error") == 0)
			(*errors)++;
		else
			(*warnings)++;
	}
}

static void print_findings(const json_t *findings, int strict)
{
	size_t i;
	json_t *f;

	json_array_foreach(findings, i, f) {
		const char *file = json_string_value(json_object_get(f, "file"));
		long long line = (long long)json_integer_value(json_object_get(f, "line"));
		const char *sev = json_string_value(json_object_get(f, "severity"));

		if (file && line)
			printf("%s:%lld: ", file, line);
		else if (file)
			printf("%s: ", file);
		printf("%s: %s: %s\n", strict ? "error" : sev, json_string_value(json_object_get(f, "rule")),
		       json_string_value(json_object_get(f, "message")));
	}
}

static int sub_check(const cli_command *cmd, int argc, char **argv)
{
	const char *src = NULL, *scope = NULL;
	int json = 0, strict = 0, rc, error;
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "SRC", 0, &src, NULL, POLICY_SRC_HELP, CLI_OPT_REQUIRED },
		POLICY_SCOPE_OPT(&scope),
		{ CLI_OPT_SWITCH, "strict", 0, &strict, NULL, "warnings are errors (exit 1)", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_policy *p = NULL;
	json_t *findings = NULL;
	size_t errors, warnings, rules;
	const char *format;

	if ((rc = cli_parse(cmd, opts,
			    "Loads the policy (a load error: file:line:column, exit 2), then looks for mistakes:\n"
			    "errors (rules that can never match) and warnings (rules the engine does not apply to\n"
			    "other spellings of their command, allows of code docket cannot see into).\n"
			    "Exit 1 on an error, or on a warning with --strict.\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = policy_load(&p, src, scope)) != CLI_EXIT_OK)
		return rc;
	if ((error = docket_policy_lint(&findings, p)) < 0) {
		rc = cli_fail(error, "cannot check the policy");
		goto cleanup;
	}
	count_findings(findings, &errors, &warnings);
	rc = errors || (strict && warnings) ? CLI_EXIT_FOUND : CLI_EXIT_OK;
	rules = docket_policy_rule_count(p);
	format = docket_policy_format_str(docket_policy_get_format(p));
	if (json) {
		json_t *j = json_pack("{s:b,s:s,s:I,s:I,s:I,s:O}", "ok", rc == CLI_EXIT_OK, "format", format, "rules",
				      (json_int_t)rules, "errors", (json_int_t)errors, "warnings", (json_int_t)warnings,
				      "findings", findings);

		cli_json_pretty(stdout, j);
		json_decref(j);
	} else {
		printf("%s: %s policy, %zu rule%s", rc == CLI_EXIT_OK ? "ok" : "failed", format, rules,
		       rules == 1 ? "" : "s");
		if (errors || warnings)
			printf(" (%zu error%s, %zu warning%s)", errors, errors == 1 ? "" : "s", warnings,
			       warnings == 1 ? "" : "s");
		putchar('\n');
		print_findings(findings, strict);
	}
cleanup:
	json_decref(findings);
	docket_policy_free(p);
	return rc;
}

static int sub_explain(const cli_command *cmd, int argc, char **argv, int convert)
{
	const char *src = NULL, *to = NULL, *scope = NULL;
	int json = 0, rc, error;
	cli_opt opts[] = {
		{ CLI_OPT_ARG, "SRC", 0, &src, NULL, POLICY_SRC_HELP, CLI_OPT_REQUIRED },
		POLICY_SCOPE_OPT(&scope),
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_policy *p = NULL;

	if (convert)
		opts[2] = (cli_opt){ CLI_OPT_STRING, "to", 0, &to, "FORMAT", "the target format: docket (default) or codex", 0 };
	if ((rc = cli_parse(cmd, opts, convert ? "Writes the policy as docket YAML (or Codex .rules) that evaluates identically.\n" :
				     "Prints the normalised policy (docket YAML; JSON with --json), with a note for each\n"
				     "rule Claude Code does not apply as written.\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (convert && to && strcmp(to, "docket") != 0 && strcmp(to, "codex") != 0) {
		cli_error("policy convert: unknown target format '%s' (docket or codex)", to);
		return CLI_EXIT_USAGE;
	}
	if ((rc = policy_load(&p, src, scope)) != CLI_EXIT_OK)
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

		if ((error = to && strcmp(to, "codex") == 0 ? docket_policy_to_codex_rules(&y, p) :
							     docket_policy_to_yaml(&y, p)) < 0)
			rc = cli_fail(error, "cannot convert");
		else
			fputs(y, stdout);
		docket_free(y);
	}
	docket_policy_free(p);
	return rc;
}

static int sub_schema(const cli_command *cmd, int argc, char **argv)
{
	const cli_opt opts[] = { { CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 } };
	int rc;

	if ((rc = cli_parse(cmd, opts,
			    "Prints the JSON Schema of a call (tool and args) that `policy eval --call`, `policy test`\n"
			    "and serve's tool.intent check calls against: docs/call.schema.json.\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	fputs(docket_call_schema_json, stdout);
	return CLI_EXIT_OK;
}

int cmd_policy(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char usage[] =
		"usage: docket policy check SRC [--strict] [--json]\n"
		"       docket policy eval SRC (--call JSON | --command LINE | --tool NAME [--path P | --url U]\n"
		"                               | --calls FILE.jsonl) [--context JSON] [--exit-code] [--json]\n"
		"       docket policy test SRC TESTS... [--coverage] [--junit FILE] [--json]\n"
		"       docket policy schema\n"
		"       docket policy explain SRC [--json]\n"
		"       docket policy convert SRC [--to docket|codex]\n"
		"\n"
		"SRC is PATH (docket YAML), codex:PATH (a .rules file or a directory of them),\n"
		"any of these at a git revision (git:REV:PATH, codex:git:REV:PATH, ...),\n"
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
		sub.summary = "evaluate tool calls against a policy";
		return policy_sub_eval(&sub, g, argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "test") == 0) {
		sub.summary = "run test files of calls and expected verdicts against a policy";
		return policy_sub_test(&sub, g, argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "schema") == 0) {
		sub.summary = "print the JSON Schema of a call (docs/call.schema.json)";
		return sub_schema(&sub, argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "explain") == 0) {
		sub.summary = "print the normalised policy";
		return sub_explain(&sub, argc - 1, argv + 1, 0);
	}
	if (strcmp(argv[1], "convert") == 0) {
		sub.summary = "convert a policy to docket YAML or Codex .rules";
		return sub_explain(&sub, argc - 1, argv + 1, 1);
	}
	cli_error("unknown policy command '%s'", argv[1]);
	fputs(usage, stderr);
	return CLI_EXIT_USAGE;
}
