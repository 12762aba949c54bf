/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_authoring.c: the policy authors' toolkit (issue 30): what
 * `policy check` finds (lint.c, claude_tools.c), test files (policytest.c),
 * call shorthands, rules by index and the rules a result matched.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"
#include "policy/policy.h"
#include "util/alloc.h"
#include "util/error.h"

static docket_policy *load(docket_policy_format f, const char *text)
{
	docket_policy *p = NULL;

	if (docket_policy_load_buffer(&p, f, "t", text, strlen(text)) < 0)
		fail_msg("load failed: %s", docket_error_last()->message);
	return p;
}

/* The findings of a policy, as "severity code line" lines for comparison. */
static char *lint_summary(docket_policy_format f, const char *text)
{
	docket_policy *p = load(f, text);
	json_t *out = NULL, *e;
	static char buf[2048];
	size_t used = 0, i;

	assert_int_equal(docket_policy_lint(&out, p), 0);
	buf[0] = '\0';
	json_array_foreach(out, i, e)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s %s %lld|",
					 json_string_value(json_object_get(e, "severity")),
					 json_string_value(json_object_get(e, "code")),
					 (long long)json_integer_value(json_object_get(e, "line")));
	json_decref(out);
	docket_policy_free(p);
	return buf;
}

static const char *lint_message(docket_policy_format f, const char *text, size_t k)
{
	docket_policy *p = load(f, text);
	json_t *out = NULL;
	static char buf[1024];

	assert_int_equal(docket_policy_lint(&out, p), 0);
	snprintf(buf, sizeof(buf), "%s", json_string_value(json_object_get(json_array_get(out, k), "message")));
	json_decref(out);
	docket_policy_free(p);
	return buf;
}

/* misspelt tool names and specifiers: errors naming the nearest tool */
static void test_lint_tool_names(void **state)
{
	(void)state;
	assert_string_equal(lint_summary(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"Raed(./x)\"]}}"),
			    "error unknown_tool 1|");
	assert_non_null(strstr(lint_message(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"Raed(./x)\"]}}", 0),
			       "did you mean Read?"));
	assert_non_null(strstr(lint_message(DOCKET_POLICY_CLAUDE,
					    "{\"permissions\":{\"ask\":[\"bash(rm:*)\"]}}", 0), "did you mean Bash?"));
	assert_non_null(strstr(lint_message(DOCKET_POLICY_CLAUDE,
					    "{\"permissions\":{\"deny\":[\"WebFecth(domain:x.com)\"]}}", 0),
			       "did you mean WebFetch?"));
	/* far from every name: no suggestion, still an error */
	assert_non_null(strstr(lint_message(DOCKET_POLICY_CLAUDE,
					    "{\"permissions\":{\"deny\":[\"Frobnicate\"]}}", 0), "not a Claude Code tool"));
	assert_non_null(strstr(lint_message(DOCKET_POLICY_CLAUDE,
					    "{\"permissions\":{\"deny\":[\"WebFetch(https://a.b.com/x)\"]}}", 0),
			       "WebFetch(domain:a.b.com)"));
	/* the known names are clean, MCP tools and "*" too */
	assert_string_equal(lint_summary(DOCKET_POLICY_CLAUDE,
					 "{\"permissions\":{\"allow\":[\"Read(./x)\",\"Grep\",\"WebSearch\","
					 "\"mcp__github__list\",\"WebFetch(domain:x.com)\",\"Edit(src/**)\",\"Task\"]}}"),
			    "");
	/* a docket YAML tool rule may name docket's canonical tools, a Claude file may not */
	assert_string_equal(lint_summary(DOCKET_POLICY_DOCKET, "tools:\n  deny: [run_code]\n"), "");
	/* docket records other tool names as they are: far from every known
	 * name it is a warning in docket YAML, a typo of one is an error */
	assert_string_equal(lint_summary(DOCKET_POLICY_DOCKET, "tools:\n  deny: [deploy_prod]\n"),
			    "warning other_tool 2|");
	assert_string_equal(lint_summary(DOCKET_POLICY_DOCKET, "tools:\n  deny: [\"Raed(./x)\"]\n"),
			    "error unknown_tool 2|");
	assert_string_equal(lint_summary(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"deny\":[\"run_code\"]}}"),
			    "error unknown_tool 1|");
	assert_null(pol_tool_name_nearest("Zzzzzzzz", false));
	assert_string_equal(pol_tool_name_nearest("LS", false), "LS");
	assert_string_equal(pol_tool_name_nearest("reed_file", true), "read_file");
}

/* a deny rule Codex does not apply to `env curl` is a warning, and the
 * probe really evaluates: a policy that denies env itself has none */
static void test_lint_spellings(void **state)
{
	const char *m;

	(void)state;
	m = lint_message(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"curl\"], decision=\"forbidden\")\n", 0);
	assert_non_null(strstr(m, "Codex itself does not apply this deny rule to `env curl` (allowed)"));
	assert_non_null(strstr(m, "docket's enforced verdict (hooks, serve) does"));
	assert_string_equal(lint_summary(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [curl]\n    decision: deny\n"),
			    "warning engine_spelling 2|");
	/* an allow rule has nothing to dodge */
	assert_string_equal(lint_summary(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [ls]\n    decision: allow\n"),
			    "");
	/* under ask-everything heuristics nothing gets past the engine more loosely */
	assert_string_equal(lint_summary(DOCKET_POLICY_DOCKET,
					 "heuristics: deny\ncommands:\n  - pattern: [curl]\n    decision: deny\n"), "");
	/* Claude: a Bash deny rule is checked the same way */
	m = lint_message(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"deny\":[\"Bash(curl:*)\"]}}", 0);
	assert_non_null(strstr(m, "Claude Code itself does not apply this deny rule to `/usr/bin/curl`"));
}

/* allows of interpreters are warnings (issue 26) */
static void test_lint_code_allows(void **state)
{
	(void)state;
	assert_string_equal(lint_summary(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [python3]\n    decision: allow\n"),
			    "warning code_allow 2|");
	assert_string_equal(lint_summary(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"Bash(node:*)\"]}}"),
			    "warning code_allow 1|");
}

static json_t *tests_ok(const char *text)
{
	json_t *t = NULL;

	if (docket_policy_tests_parse(&t, "t.yaml", text, strlen(text)) < 0)
		fail_msg("parse failed: %s", docket_error_last()->message);
	return t;
}

static void tests_err(const char *text, const char *want)
{
	json_t *t = NULL;

	assert_int_equal(docket_policy_tests_parse(&t, "t.yaml", text, strlen(text)), DOCKET_EINVALID);
	assert_null(t);
	if (!strstr(docket_error_last()->message, want))
		fail_msg("message \"%s\" lacks \"%s\"", docket_error_last()->message, want);
}

static void test_tests_parse(void **state)
{
	json_t *t;

	(void)state;
	t = tests_ok("context: {cwd: /w, network_access: false, port: 8080}\ntests:\n"
		     "  - {command: ls, expect: allowed}\n  - call: {tool: x, args: {n: 1, b: true, s: \"1\"}}\n"
		     "    expect: denied\n");
	assert_int_equal(json_array_size(json_object_get(t, "tests")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(t, "tests"), 1), "line")), 4);
	assert_true(json_is_false(json_object_get(json_object_get(t, "context"), "network_access")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(t, "context"), "port")), 8080);
	/* quoted scalars stay strings */
	assert_true(json_is_string(json_object_get(json_object_get(json_object_get(
		json_array_get(json_object_get(t, "tests"), 1), "call"), "args"), "s")));
	json_decref(t);
	/* JSON is YAML: a bare list of cases */
	t = tests_ok("[{\"command\": \"ls\", \"expect\": \"allowed\"}]");
	assert_int_equal(json_array_size(json_object_get(t, "tests")), 1);
	json_decref(t);

	tests_err("", "t.yaml:1:1: no tests");
	tests_err("tests: 3\n", "tests: expected a list");
	tests_err("test: []\n", "t.yaml:1:1: unknown key at the top level");
	tests_err("tests:\n  - {command: ls}\n", "t.yaml:2:6: a test case needs expect");
	tests_err("tests:\n  - {command: ls, expect: allow}\n", "expect and engine are one of");
	tests_err("tests:\n  - {command: ls, expect: allowed, engine: ok}\n", "expect and engine are one of");
	tests_err("tests:\n  - {command: ls, call: {tool: x}, expect: allowed}\n", "exactly one of");
	tests_err("tests:\n  - {expect: allowed}\n", "exactly one of");
	tests_err("tests:\n  - {command: [ls], expect: allowed}\n", "command: expected a string");
	tests_err("tests:\n  - {call: ls, expect: allowed}\n", "call: expected a mapping");
	tests_err("tests:\n  - {command: ls, expect: allowed, colour: red}\n", "unknown key \"colour\" in a test case");
	tests_err("tests:\n  - {command: ls, expect: allowed, context: []}\n", "context: expected a mapping");
	tests_err("tests:\n  - {command: ls, expect: allowed, expect: denied}\n", "duplicate key");
	tests_err("tests:\n  - 3\n", "a test case must be a mapping");
	tests_err("tests: [\n", "invalid YAML");
	tests_err("tests:\n  - {command: \"a\\0b\", expect: allowed}\n", "NUL byte");
	tests_err("tests: [\xff]\n", "not UTF-8");
}

/* deep nesting is refused, not recursed into without bound */
static void test_tests_parse_deep(void **state)
{
	char text[600];
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(text, sizeof(text), "tests:\n  - {expect: allowed, call: ");
	for (int i = 0; i < 100; i++)
		text[n++] = '[';
	for (int i = 0; i < 100; i++)
		text[n++] = ']';
	text[n++] = '}';
	text[n++] = '\n';
	text[n] = '\0';
	tests_err(text, "t.yaml:2:");  /* libfyaml's own depth cap (64) or ours */
}

static void test_shorthand(void **state)
{
	json_t *c = NULL;
	char *s;

	(void)state;
	assert_int_equal(docket_policy_call_shorthand(&c, "rm -rf \"my dir\" 'a b'", NULL, NULL, NULL), 0);
	s = json_dumps(c, JSON_COMPACT);
	assert_string_equal(s, "{\"tool\":\"shell\",\"args\":{\"command\":[\"rm\",\"-rf\",\"my dir\",\"a b\"]}}");
	free(s);
	json_decref(c);
	assert_int_equal(docket_policy_call_shorthand(&c, NULL, NULL, "/x", NULL), 0);
	s = json_dumps(c, JSON_COMPACT);
	assert_string_equal(s, "{\"tool\":\"read_file\",\"args\":{\"path\":\"/x\"}}");
	free(s);
	json_decref(c);
	assert_int_equal(docket_policy_call_shorthand(&c, NULL, "WebFetch", NULL, "https://x"), 0);
	s = json_dumps(c, JSON_COMPACT);
	assert_string_equal(s, "{\"tool\":\"WebFetch\",\"args\":{\"url\":\"https://x\"}}");
	free(s);
	json_decref(c);
	/* a command is split, never expanded */
	assert_int_equal(docket_policy_call_shorthand(&c, "echo $HOME *", NULL, NULL, NULL), 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(c, "args"), "command"), 1)),
			    "$HOME");
	json_decref(c);
	assert_int_equal(docket_policy_call_shorthand(&c, "rm 'x", NULL, NULL, NULL), DOCKET_EINVALID);
	assert_int_equal(docket_policy_call_shorthand(&c, "   ", NULL, NULL, NULL), DOCKET_EINVALID);
	assert_int_equal(docket_policy_call_shorthand(&c, "ls", "shell", NULL, NULL), DOCKET_EINVALID);
	assert_int_equal(docket_policy_call_shorthand(&c, NULL, NULL, "/x", "https://x"), DOCKET_EINVALID);
	assert_int_equal(docket_policy_call_shorthand(&c, NULL, NULL, NULL, NULL), DOCKET_EINVALID);
	assert_null(c);
}

/* rules by index, and the index of each rule a result matched */
static void test_rules_and_matches(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_DOCKET,
				"commands:\n  - pattern: [git]\n    decision: allow\n"
				"tools:\n  deny: [\"Read(./.env)\"]\n"
				"network:\n  rules:\n    - {host: x.com, decision: deny}\n");
	docket_policy_result *res = NULL;
	docket_policy_call *call = NULL;
	json_t *cj = json_loads("{\"tool\":\"shell\",\"args\":{\"command\":[\"git\",\"log\"]}}", 0, NULL);
	const char *file;
	unsigned line;
	int d;

	(void)state;
	assert_int_equal(docket_policy_rule_count(p), 3);
	assert_non_null(strstr(docket_policy_rule(p, 0, &file, &line, &d), "git"));
	assert_string_equal(file, "t");
	assert_int_equal(line, 2);
	assert_int_equal(d, 0);
	assert_string_equal(docket_policy_rule(p, 1, NULL, &line, &d), "Read(./.env)");
	assert_int_equal(line, 5);
	assert_int_equal(d, 2);
	assert_non_null(strstr(docket_policy_rule(p, 2, NULL, NULL, NULL), "x.com"));
	assert_null(docket_policy_rule(p, 3, &file, &line, &d));
	assert_null(file);
	assert_int_equal(docket_policy_result_new(&res), 0);
	assert_int_equal(docket_policy_call_from_json(&call, cj), 0);
	assert_int_equal(docket_policy_eval_enforced(res, p, call, NULL), 0);
	assert_int_equal(docket_policy_result_match_index(res, 0), 0);
	assert_int_equal(docket_policy_result_match_index(res, 1), (size_t)-1);
	docket_policy_call_free(call);
	json_decref(cj);
	cj = json_loads("{\"tool\":\"network\",\"args\":{\"url\":\"https://x.com/\"}}", 0, NULL);
	assert_int_equal(docket_policy_call_from_json(&call, cj), 0);
	assert_int_equal(docket_policy_eval_enforced(res, p, call, NULL), 0);
	assert_int_equal(docket_policy_result_match_index(res, 0), 2);
	docket_policy_call_free(call);
	json_decref(cj);
	cj = json_loads("{\"tool\":\"read_file\",\"args\":{\"path\":\"/w/.env\"}}", 0, NULL);
	assert_int_equal(docket_policy_call_from_json(&call, cj), 0);
	{
		docket_policy_context *ctx = NULL;
		json_t *xj = json_loads("{\"cwd\":\"/w\",\"workspace_roots\":[\"/w\"]}", 0, NULL);

		assert_int_equal(docket_policy_context_from_json(&ctx, xj), 0);
		assert_int_equal(docket_policy_eval_enforced(res, p, call, ctx), 0);
		assert_int_equal(docket_policy_result_match_index(res, 0), 1);
		docket_policy_context_free(ctx);
		json_decref(xj);
	}
	docket_policy_call_free(call);
	json_decref(cj);
	docket_policy_result_free(res);
	docket_policy_free(p);
}

/* convert --to codex: a .rules file that loads as Codex rules and evaluates
 * the same; what .rules cannot say is refused, never dropped */
static void test_to_codex_rules(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_DOCKET,
				"commands:\n  - pattern: [[git, hg], [push, pull]]\n    decision: ask\n"
				"    justification: \"net \\\"io\\\"\"\n    match: [\"hg pull\"]\n    not_match: [[git, status]]\n"
				"  - pattern: [rm]\n    decision: deny\n"
				"host_executables:\n  git: [/usr/bin/git]\n"
				"network:\n  rules:\n    - {host: a.example, decision: deny}\n");
	docket_policy *q = NULL, *bad;
	char *r = NULL;

	(void)state;
	assert_int_equal(docket_policy_to_codex_rules(&r, p), 0);
	assert_non_null(strstr(r, "pattern = [[\"git\", \"hg\"], [\"push\", \"pull\"]],\n    decision = \"prompt\""));
	assert_non_null(strstr(r, "justification = \"net \\\"io\\\"\""));
	assert_non_null(strstr(r, "match = [\"hg pull\"]"));
	assert_non_null(strstr(r, "not_match = [\"git status\"]"));
	assert_non_null(strstr(r, "host_executable(name = \"git\", paths = [\"/usr/bin/git\"])"));
	assert_non_null(strstr(r, "protocol = \"socks5_udp\", decision = \"forbidden\""));
	q = load(DOCKET_POLICY_CODEX, r);
	/* 2 + 1 command rules, one network rule per protocol */
	assert_int_equal(docket_policy_rule_count(q), 3 + 4);
	docket_policy_free(q);
	docket_free(r);
	docket_policy_free(p);

	bad = load(DOCKET_POLICY_DOCKET, "tools:\n  deny: [\"Read(./x)\"]\n");
	assert_int_equal(docket_policy_to_codex_rules(&r, bad), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "Read(./x): a Codex .rules file cannot express it"));
	assert_null(r);
	docket_policy_free(bad);
	bad = load(DOCKET_POLICY_DOCKET, "network:\n  rules:\n    - {host: a.example, port: 8080, decision: deny}\n");
	assert_int_equal(docket_policy_to_codex_rules(&r, bad), DOCKET_EINVALID);
	assert_null(r);
	docket_policy_free(bad);
	bad = load(DOCKET_POLICY_DOCKET, "packages:\n  npm: {allow: [left-pad]}\n");
	assert_int_equal(docket_policy_to_codex_rules(&r, bad), DOCKET_EINVALID);
	docket_policy_free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lint_tool_names),
		cmocka_unit_test(test_lint_spellings),
		cmocka_unit_test(test_lint_code_allows),
		cmocka_unit_test(test_tests_parse),
		cmocka_unit_test(test_tests_parse_deep),
		cmocka_unit_test(test_shorthand),
		cmocka_unit_test(test_rules_and_matches),
		cmocka_unit_test(test_to_codex_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
