/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_codex.c: conformance with the decision tables transcribed from
 * Codex's own tests (../shared/corpus/codex-execpolicy-cases.json). Every
 * case of every section runs; the test skips when the corpus is absent.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"
#include "policy/policy.h"
#include "util/error.h"

static json_t *corpus;
static int failures;
static int checks;

#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

static int setup(void **state)
{
	char *path = test_shared_path("codex-execpolicy-cases.json");
	json_error_t err;

	(void)state;
	if (!path)
		return 0;
	corpus = json_load_file(path, 0, &err);
	free(path);
	return corpus ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(corpus);
	fprintf(stderr, "codex conformance: %d checks, %d failures\n", checks, failures);
	return 0;
}

static json_t *section(const char *name)
{
	if (!corpus)
		return NULL;
	return json_object_get(corpus, name);
}

#define NEED(sec, name) \
	json_t *sec = section(name); \
	if (!corpus) { skip(); return; } \
	assert_non_null(sec)

/* Build a policy from the corpus' "rules" notation. */
static int build_policy(docket_policy **out, const json_t *rules)
{
	docket_policy *p = NULL;
	const char *text = json_is_string(rules) ? json_string_value(rules) : "";
	char buf[4096];
	int error;

	if ((error = pol_new(&p, DOCKET_POLICY_CODEX, "test")) < 0)
		return error;
	if (strcmp(text, "<empty policy>") == 0) {
		text = "";
	} else if (strncmp(text, "<Policy::empty(); add_prefix_rule(", 34) == 0 ||
		   strncmp(text, "<add_prefix_rule(", 17) == 0) {
		/* <...add_prefix_rule(["ls","-l"], Prompt)> */
		const char *lb = strchr(text, '['), *rb = strrchr(text, ']');
		const char *dec = strstr(rb, "Prompt") ? "prompt" : strstr(rb, "Forbidden") ? "forbidden" : "allow";

		snprintf(buf, sizeof(buf), "prefix_rule(pattern=%.*s], decision=\"%s\")", (int)(rb - lb), lb, dec);
		text = buf;
	}
	/* "first.rules: ...\nsecond.rules: ..." are separate files */
	if (strstr(text, ".rules: ")) {
		const char *line = text;

		while (*line) {
			const char *nl = strchr(line, '\n'), *colon = strstr(line, ".rules: ");
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			char name[64];

			snprintf(name, sizeof(name), "%.*s.rules", (int)(colon - line), line);
			colon += 8;
			if ((error = pol_load_codex_rules(p, pol_strdup(p, name), colon, len - (size_t)(colon - line))) < 0)
				goto fail;
			line += len + (nl ? 1 : 0);
		}
	} else if ((error = pol_load_codex_rules(p, "test.rules", text, strlen(text))) < 0) {
		goto fail;
	}
	if ((error = pol_finalize(p)) < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	docket_policy_free(p);
	*out = NULL;
	return error;
}

static size_t argv_of(const json_t *arr, const char **argv, size_t cap)
{
	size_t n = json_array_size(arr);

	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++)
		argv[i] = json_string_value(json_array_get(arr, i));
	return n;
}

static int decision_of(const char *s)
{
	if (strcmp(s, "allow") == 0) return POL_ALLOW;
	if (strcmp(s, "prompt") == 0) return POL_ASK;
	return POL_DENY;
}

/* Render matches like Codex's RuleMatch JSON for comparison. */
static json_t *matches_json(const docket_policy *p, const pol_match *m, size_t n,
			    const char *const *argv, size_t argc, int fallback)
{
	json_t *a = json_array();

	if (n == 0) {
		json_t *cmd = json_array();

		for (size_t i = 0; i < argc; i++)
			json_array_append_new(cmd, json_string(argv[i]));
		json_array_append_new(a, json_pack("{s:{s:o,s:s}}", "heuristicsRuleMatch", "command", cmd,
						   "decision", pol_codex_decision_name(fallback)));
		return a;
	}
	for (size_t i = 0; i < n; i++) {
		const pol_prefix_rule *r = &p->prefix[m[i].rule];
		json_t *pfx = json_array(), *o;

		json_array_append_new(pfx, json_string(r->program));
		for (size_t k = 1; k < m[i].prefix_len; k++)
			json_array_append_new(pfx, json_string(argv[k]));
		o = json_pack("{s:o,s:s}", "matchedPrefix", pfx, "decision", pol_codex_decision_name(r->decision));
		if (r->justification)
			json_object_set_new(o, "justification", json_string(r->justification));
		if (m[i].resolved)
			json_object_set_new(o, "resolvedProgram", json_string(argv[0]));
		json_array_append_new(a, json_pack("{s:o}", "prefixRuleMatch", o));
	}
	return a;
}

static int check_one(const docket_policy *p, const json_t *argvj, bool resolve, int fallback,
		     json_t *all, int *decision)
{
	const char *argv[64];
	size_t argc = argv_of(argvj, argv, 64);
	pol_match m[64];
	size_t n = pol_codex_matches(p, argv, argc, resolve, m, 64, 0);
	json_t *js = matches_json(p, m, n, argv, argc, fallback);

	for (size_t i = 0; i < n; i++)
		*decision = m[i].decision > *decision ? m[i].decision : *decision;
	if (n == 0)
		*decision = fallback > *decision ? fallback : *decision;
	json_array_extend(all, js);
	json_decref(js);
	return 0;
}

/* Issue 33: what codex-cli 0.169.0 and 0.171.0 do (tests/realclient/codex_diff*.py), as
 * properties that do not need the shared corpus. */
static size_t rel_matches(const docket_policy *p, const char *prog, const char *cwd)
{
	const char *argv[2] = { prog, "clean" };
	pol_match m[8];

	return pol_codex_matches_at(p, argv, 2, true, cwd, m, 8, 0);
}

static void test_relative_programs(void **state)
{
	const char *rules = "prefix_rule(pattern=[\"make\", \"clean\"], decision=\"forbidden\")\n";
	const char *hosted = "host_executable(name=\"make\", paths=[\"/usr/bin/make\", \"/w/bin/make\"])\n";
	docket_policy *p = NULL, *h = NULL;
	char both[512];

	(void)state;
	snprintf(both, sizeof(both), "%s%s", rules, hosted);
	assert_int_equal(docket_policy_load_buffer(&p, DOCKET_POLICY_CODEX, "r", rules, strlen(rules)), 0);
	assert_int_equal(docket_policy_load_buffer(&h, DOCKET_POLICY_CODEX, "h", both, strlen(both)), 0);
	/* every spelling of a path matches rules for its last component */
	assert_int_equal(rel_matches(p, "./make", "/w"), 1);
	assert_int_equal(rel_matches(p, "bin/make", "/w"), 1);
	assert_int_equal(rel_matches(p, "../make", NULL), 1);
	assert_int_equal(rel_matches(p, "make/", "/w"), 1);
	assert_int_equal(rel_matches(p, "/opt/make", "/w"), 1);
	/* no program name: nothing matches */
	assert_int_equal(rel_matches(p, ".", "/w"), 0);
	assert_int_equal(rel_matches(p, "make/..", "/w"), 0);
	assert_int_equal(rel_matches(p, "/", "/w"), 0);
	assert_int_equal(rel_matches(p, "xmake", "/w"), 0);
	/* a host_executable list holds the resolved absolute path, or nothing matches */
	assert_int_equal(rel_matches(h, "bin/make", "/w"), 1);
	assert_int_equal(rel_matches(h, "./bin/../bin/make", "/w"), 1);
	assert_int_equal(rel_matches(h, "./make", "/usr/bin"), 1);
	assert_int_equal(rel_matches(h, "./make", "/w"), 0);
	assert_int_equal(rel_matches(h, "bin/make", NULL), 0);   /* no cwd: never listed */
	assert_int_equal(rel_matches(h, "/usr/local/bin/make", "/w"), 0);
	docket_policy_free(p);
	docket_policy_free(h);
}

static void test_resolve_lexical(void **state)
{
	char out[32];

	(void)state;
	assert_true(pol_codex_resolve(out, sizeof(out), "../make", "/tmp/probe"));
	assert_string_equal(out, "/tmp/make");
	assert_true(pol_codex_resolve(out, sizeof(out), "./a//b/./../make", "/w"));
	assert_string_equal(out, "/w/a/make");
	assert_true(pol_codex_resolve(out, sizeof(out), "../../../make", "/w"));
	assert_string_equal(out, "/make");
	assert_true(pol_codex_resolve(out, sizeof(out), "/usr/bin/../bin/make", NULL));
	assert_string_equal(out, "/usr/bin/make");
	assert_false(pol_codex_resolve(out, sizeof(out), "make", NULL));
	/* too long for the buffer: refused, never truncated */
	assert_false(pol_codex_resolve(out, sizeof(out), "a-rather-long-directory/and-a-program", "/w"));
}

static bool dangerous_script(const char *script)
{
	const char *argv[3] = { "bash", "-lc", script };
	shell_split sp;
	bool d;

	shell_split_init(&sp);
	d = safety_is_dangerous(argv, 3, &sp);
	shell_split_dispose(&sp);
	return d;
}

static void test_forced_rm_spellings(void **state)
{
	static const char *const yes[] = {
		"rm -r -f x", "rm -fr x", "rm --force x", "rm x -f", "rm -vf x", "/bin/rm -rf x",
		"./rm -rf x", "\"rm\" -rf x", "rm '-f' x", "sudo /bin/rm -rf x", "env A=1 rm -rf x",
		"env -i rm -rf x", "sudo env rm -rf x", "FOO=1 rm -rf x", "(rm -rf x)", "echo $(rm -rf x)",
		"echo \"$(rm -rf x)\"", "echo `rm -f x`", "if true; then rm -f x; fi", "rm -rf x > /dev/null 2>&1",
		"for t in a b; do rm -r -f \"$t\"; done", "case a in a) rm -f x;; esac", "{ rm -rf x; }",
		"printf x | rm -rf x", "rm -rf x &", "! rm -rf x", "rm -rf x # c", "x=$(rm -rf x)",
		"rm -rf x <<'EOF'\nbody\nEOF", "rm -rf $X", "rm -rf", "rm -f x &\nls", "rm -f x & ls &", NULL
	};
	static const char *const no[] = {
		"rm -r x", "rm -- -f", "rm -F x", "rm --forc x", "rm - x", "r\\m -rf x", "sudo -n rm -rf x",
		"command rm -rf x", "nice rm -rf x", "time rm -rf x", "exec rm -rf x", "echo 'rm -rf x'",
		"cmd=rm; $cmd -rf x", "$(echo rm) -rf x", "if then rm -rf x", "rmdir -f x", "xrm -f x",
		"cat <<'EOF'\nrm -rf x\nEOF", "echo \"rm -rf x\"", "(rm -rf x", "x=$((rm -rf x))",
		"! { rm -rf x; }", "env rm -vf x & &", "rm -f x | | cat", NULL
	};

	char longrm[8192];
	size_t n = 0;

	(void)state;
	/* a command longer than the scanner keeps: a forced rm still counts (fails closed) */
	n += (size_t)snprintf(longrm, sizeof(longrm), "echo $(rm");
	for (int k = 0; k < 600 && n + 16 < sizeof(longrm); k++)
		n += (size_t)snprintf(longrm + n, sizeof(longrm) - n, " file%d", k);
	snprintf(longrm + n, sizeof(longrm) - n, " -f)");
	assert_true(dangerous_script(longrm));
	for (size_t i = 0; yes[i]; i++)
		if (!dangerous_script(yes[i]))
			fail_msg("not dangerous: %s", yes[i]);
	for (size_t i = 0; no[i]; i++)
		if (dangerous_script(no[i]))
			fail_msg("dangerous: %s", no[i]);
}

static void test_codex_version_reason(void **state)
{
	const char *rules = "prefix_rule(pattern=[\"make\"], decision=\"prompt\")\n";
	static const struct { const char *runtime, *want; } cases[] = {
		{ "codex/0.120.0", "decided as Codex 0.169.0" },
		{ "codex/0.170.9", "decided as Codex 0.171.0" },
		{ "codex/0.170.0", "decided as Codex 0.169.0" },
		{ "codex/1.2.3", "decided as Codex 0.171.0" },
		{ "codex/0.169.0", NULL },
		{ "codex/0.171.0", NULL },
		{ "claude-code/2.1.328", NULL },
		{ "codex", NULL },
	};
	docket_policy *p = NULL;
	docket_policy_call *c = NULL;
	json_t *cj = json_pack("{s:s,s:{s:[s,s,s]}}", "tool", "shell", "args", "command", "bash", "-lc", "ls");

	(void)state;
	assert_int_equal(docket_policy_load_buffer(&p, DOCKET_POLICY_CODEX, "r", rules, strlen(rules)), 0);
	assert_int_equal(docket_policy_call_from_json(&c, cj), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *xj = json_pack("{s:s}", "runtime", cases[i].runtime);
		docket_policy_context *ctx = NULL;
		docket_policy_result *r = NULL;
		const char *found = NULL;

		assert_int_equal(docket_policy_context_from_json(&ctx, xj), 0);
		assert_int_equal(docket_policy_result_new(&r), 0);
		assert_int_equal(docket_policy_eval(r, p, c, ctx), 0);
		for (size_t k = 0; k < docket_policy_result_reason_count(r); k++)
			if (strcmp(docket_policy_result_reason_code(r, k), "engine_version") == 0)
				found = docket_policy_result_reason_text(r, k);
		if (cases[i].want) {
			assert_non_null(found);
			assert_non_null(strstr(found, cases[i].want));
		} else {
			assert_null(found);
		}
		docket_policy_result_free(r);
		docket_policy_context_free(ctx);
		json_decref(xj);
	}
	docket_policy_call_free(c);
	docket_policy_free(p);
	json_decref(cj);
}

static void test_crate_check(void **state)
{
	NEED(sec, "A_execpolicy_crate_check");
	size_t i;
	json_t *c;

	(void)state;
	json_array_foreach(sec, i, c) {
		docket_policy *p = NULL;
		const char *name = json_string_value(json_object_get(c, "test"));
		bool resolve = json_is_true(json_object_get(json_object_get(c, "match_options"), "resolve_host_executables"));
		int fallback = decision_of(json_string_value(json_object_get(c, "heuristics_fallback")));
		int dec = -1;
		json_t *got = json_array();

		if (build_policy(&p, json_object_get(c, "rules")) < 0) {
			CHECK(0, "%s: load failed: %s", name, docket_error_last()->message);
			json_decref(got);
			continue;
		}
		check_one(p, json_object_get(c, "argv"), resolve, fallback, got, &dec);
		CHECK(dec == decision_of(json_string_value(json_object_get(c, "expected_decision"))),
		      "%s: decision %s", name, pol_codex_decision_name(dec));
		CHECK(json_equal(got, json_object_get(c, "expected_matched_rules")), "%s: matched rules %s", name,
		      json_dumps(got, JSON_COMPACT));
		json_decref(got);
		docket_policy_free(p);
	}
	assert_int_equal(failures, 0);
}

static void test_check_multiple(void **state)
{
	NEED(c, "A_check_multiple");
	docket_policy *p = NULL;
	json_t *got = json_array(), *cmd;
	int dec = -1;
	size_t i;

	(void)state;
	assert_int_equal(build_policy(&p, json_object_get(c, "rules")), 0);
	json_array_foreach(json_object_get(c, "check_multiple"), i, cmd)
		check_one(p, cmd, false, decision_of(json_string_value(json_object_get(c, "heuristics_fallback"))), got, &dec);
	assert_int_equal(dec, decision_of(json_string_value(json_object_get(c, "expected_decision"))));
	assert_true(json_equal(got, json_object_get(c, "expected_matched_rules")));
	json_decref(got);
	docket_policy_free(p);
}

static void test_parse_errors(void **state)
{
	NEED(sec, "A_parse_errors");
	size_t i;
	json_t *c;

	(void)state;
	json_array_foreach(sec, i, c) {
		docket_policy *p = NULL;
		const char *name = json_string_value(json_object_get(c, "test"));
		const char *want = json_string_value(json_object_get(c, "expected_error_contains"));
		int error = build_policy(&p, json_object_get(c, "rules"));

		if (!want)
			want = "cannot be empty"; /* InvalidPattern("prefix cannot be empty") */
		CHECK(error == DOCKET_EINVALID, "%s: expected a load error", name);
		CHECK(error == 0 || strstr(docket_error_last()->message, want), "%s: message \"%s\" lacks \"%s\"",
		      name, docket_error_last()->message, want);
		docket_policy_free(p);
	}
	assert_int_equal(failures, 0);
}

static void test_network_rules(void **state)
{
	NEED(c, "A_network_rules");
	docket_policy *p = NULL;
	json_t *allowed = json_array(), *denied = json_array();

	(void)state;
	assert_int_equal(build_policy(&p, json_object_get(c, "rules")), 0);
	for (size_t i = 0; i < p->nnet; i++) {
		if (p->net[i].decision == POL_ALLOW)
			json_array_append_new(allowed, json_string(p->net[i].host));
		else if (p->net[i].decision == POL_DENY)
			json_array_append_new(denied, json_string(p->net[i].host));
	}
	assert_true(json_equal(allowed, json_object_get(c, "expected_allowed_domains")));
	assert_true(json_equal(denied, json_object_get(c, "expected_denied_domains")));
	json_decref(allowed);
	json_decref(denied);
	docket_policy_free(p);
}

static void test_amend(void **state)
{
	NEED(sec, "A_amend");
	size_t i;
	json_t *c;

	(void)state;
	json_array_foreach(sec, i, c) {
		const char *name = json_string_value(json_object_get(c, "test"));
		const json_t *twice = json_object_get(c, "append_twice"), *once = json_object_get(c, "append");
		docket_buf file = DOCKET_BUF_INIT;
		const char *argv[16];
		size_t argc;

		if (json_object_get(c, "expected_line")) {
			/* amend appends_network_rule */
			assert_int_equal(pol_codex_amend_network(&file, "api.github.com", PROTO_HTTPS, POL_ALLOW,
								 "Allow https_connect access to api.github.com"), 0);
			CHECK(strncmp(file.ptr, json_string_value(json_object_get(c, "expected_line")),
				      strlen(json_string_value(json_object_get(c, "expected_line")))) == 0,
			      "%s: got %s", name, file.ptr);
			docket_buf_dispose(&file);
			continue;
		}
		argc = argv_of(twice ? twice : once, argv, 16);
		assert_int_equal(pol_codex_amend_allow(&file, argv, argc), 0);
		if (twice)
			assert_int_equal(pol_codex_amend_allow(&file, argv, argc), 0);
		CHECK(strcmp(file.ptr, json_string_value(json_object_get(c, "expected_file"))) == 0,
		      "%s: file %s", name, file.ptr);
		if (json_object_get(c, "then_check")) {
			docket_policy *p = NULL;
			json_t *rules = json_string(file.ptr), *got = json_array();
			int dec = -1;

			assert_int_equal(build_policy(&p, rules), 0);
			check_one(p, json_object_get(c, "then_check"), true, POL_ASK, got, &dec);
			CHECK(dec == decision_of(json_string_value(json_object_get(c, "then_decision"))),
			      "%s: then_decision", name);
			json_decref(rules);
			json_decref(got);
			docket_policy_free(p);
		}
		docket_buf_dispose(&file);
	}
	assert_int_equal(failures, 0);
}

/* ---- B: core exec approval requirement, through the public evaluator ---- */

static json_t *eval_case(const json_t *c, json_t **amend, const char **sandbox)
{
	docket_policy *p = NULL;
	docket_policy_call *call = NULL;
	docket_policy_context *ctx = NULL;
	docket_policy_result *res = NULL;
	json_t *intent, *cj, *out = NULL;

	assert_int_equal(build_policy(&p, json_object_get(c, "rules")), 0);
	intent = json_pack("{s:s,s:{s:O,s:O}}", "tool", "shell", "args", "command", json_object_get(c, "command"),
			   "sandbox_permissions", json_object_get(c, "sandbox_permissions"));
	if (json_object_get(c, "requested_prefix_rule"))
		json_object_set(json_object_get(intent, "args"), "prefix_rule", json_object_get(c, "requested_prefix_rule"));
	cj = json_pack("{s:s,s:O,s:O,s:O}", "platform", "linux", "approval_policy", json_object_get(c, "approval_policy"),
		       "sandbox_policy", json_object_get(c, "sandbox_policy"), "file_system_sandbox",
		       json_object_get(c, "file_system_policy"));
	assert_int_equal(docket_policy_call_from_json(&call, intent), 0);
	if (docket_policy_context_from_json(&ctx, cj) < 0)
		fail_msg("context: %s", docket_error_last()->message);
	assert_int_equal(docket_policy_result_new(&res), 0);
	assert_int_equal(docket_policy_eval(res, p, call, ctx), 0);
	assert_int_equal(docket_policy_result_to_json(&out, res), 0);
	*amend = json_incref(json_object_get(out, "proposed_amendment"));
	*sandbox = json_string_value(json_object_get(out, "sandbox"));
	json_decref(intent);
	json_decref(cj);
	docket_policy_result_free(res);
	docket_policy_context_free(ctx);
	docket_policy_call_free(call);
	docket_policy_free(p);
	return out;
}

static bool has_reason(const json_t *out, const char *text)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(out, "reasons"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "text")), text) == 0)
			return true;
	return false;
}

static bool has_rule_reason(const json_t *out)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(out, "reasons"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "code")), "rule") == 0)
			return true;
	return false;
}

static void test_exec_approval(void **state)
{
	NEED(sec, "B_core_exec_approval_requirement");
	size_t i;
	json_t *c;

	(void)state;
	json_array_foreach(sec, i, c) {
		const char *name = json_string_value(json_object_get(c, "test"));
		const json_t *exp = json_object_get(c, "expected");
		json_t *amend = NULL, *out;
		const char *sandbox = NULL, *verdict;
		const json_t *body, *ea;
		char *dump;

		/*
		 * Codex's source tests reduce a one-command heredoc script to its
		 * command; the released engines docket models (codex-cli 0.169.0
		 * and 0.171.0, measured through the real runtime by
		 * tests/realclient/codex_diff_shell.py) do not, and docket follows
		 * the releases (fixtures/policy/codex-shell-*.json hold the proof).
		 */
		if (strstr(name, "heredoc")) {
			printf("skipped %s: the released engines do not reduce heredocs (docs/policy.md)\n", name);
			continue;
		}
		out = eval_case(c, &amend, &sandbox);
		verdict = json_string_value(json_object_get(out, "verdict"));
		dump = json_dumps(out, JSON_COMPACT);
		if (json_is_string(exp)) {
			CHECK(strcmp(verdict, "approval_required") == 0, "%s[%zu]: %s", name, i, dump);
		} else if ((body = json_object_get(exp, "Forbidden"))) {
			CHECK(strcmp(verdict, "denied") == 0, "%s[%zu]: want denied: %s", name, i, dump);
			CHECK(has_reason(out, json_string_value(json_object_get(body, "reason"))),
			      "%s[%zu]: want reason %s: %s", name, i, json_string_value(json_object_get(body, "reason")), dump);
		} else if ((body = json_object_get(exp, "NeedsApproval"))) {
			const json_t *reason = json_object_get(body, "reason");

			CHECK(strcmp(verdict, "approval_required") == 0, "%s[%zu]: want approval_required: %s", name, i, dump);
			if (json_is_string(reason))
				CHECK(has_reason(out, json_string_value(reason)), "%s[%zu]: reason: %s", name, i, dump);
			else
				CHECK(!has_rule_reason(out), "%s[%zu]: no rule reason expected: %s", name, i, dump);
			ea = json_object_get(body, "proposed_execpolicy_amendment");
			CHECK(json_is_null(ea) ? amend == NULL : json_equal(amend, ea), "%s[%zu]: amendment: %s", name, i, dump);
		} else if ((body = json_object_get(exp, "Skip"))) {
			CHECK(strcmp(verdict, "allowed") == 0, "%s[%zu]: want allowed: %s", name, i, dump);
			CHECK((strcmp(sandbox, "bypass") == 0) == json_is_true(json_object_get(body, "bypass_sandbox")),
			      "%s[%zu]: bypass_sandbox: %s", name, i, dump);
			ea = json_object_get(body, "proposed_execpolicy_amendment");
			CHECK(json_is_null(ea) ? amend == NULL : json_equal(amend, ea), "%s[%zu]: amendment: %s", name, i, dump);
		} else {
			CHECK(0, "%s: unknown expectation", name);
		}
		free(dump);
		json_decref(amend);
		json_decref(out);
	}
	assert_int_equal(failures, 0);
}

static void test_unmatched(void **state)
{
	NEED(sec, "B_render_decision_for_unmatched_command");
	size_t i;
	json_t *c;

	(void)state;
	json_array_foreach(sec, i, c) {
		json_t *amend = NULL, *out;
		const char *sandbox;
		const char *want = json_string_value(json_object_get(c, "expected"));
		const char *verdict;

		out = eval_case(c, &amend, &sandbox);
		verdict = json_string_value(json_object_get(out, "verdict"));
		CHECK(strcmp(verdict, strcmp(want, "prompt") == 0 ? "approval_required" :
					  strcmp(want, "allow") == 0 ? "allowed" : "denied") == 0,
		      "%s: %s", json_string_value(json_object_get(c, "test")), verdict);
		json_decref(amend);
		json_decref(out);
	}
	assert_int_equal(failures, 0);
}

static void test_banned_prefixes(void **state)
{
	NEED(c, "B_banned_prefix_suggestions");
	size_t i;
	json_t *v;
	const char *argv[16];

	(void)state;
	json_array_foreach(json_object_get(c, "none_for"), i, v)
		CHECK(safety_prefix_suggestion_banned(argv, argv_of(v, argv, 16)), "none_for[%zu]", i);
	json_array_foreach(json_object_get(c, "some_for"), i, v)
		CHECK(!safety_prefix_suggestion_banned(argv, argv_of(v, argv, 16)), "some_for[%zu]", i);
	if (json_is_true(json_object_get(c, "none_when_any_policy_rule_matched"))) {
		json_t *cs = json_pack("{s:s,s:[s,s,s],s:s,s:{s:s},s:s,s:s,s:[s,s]}",
				       "rules", "prefix_rule(pattern=[\"cargo\"], decision=\"prompt\")",
				       "command", "cargo", "install", "x", "approval_policy", "untrusted",
				       "sandbox_policy", "type", "read-only", "file_system_policy", "restricted",
				       "sandbox_permissions", "use_default", "requested_prefix_rule", "cargo", "install");
		json_t *amend = NULL, *out;
		const char *sandbox;

		out = eval_case(cs, &amend, &sandbox);
		CHECK(amend == NULL, "no amendment when a policy rule matched");
		json_decref(amend);
		json_decref(out);
		json_decref(cs);
	}
	assert_int_equal(failures, 0);
}

static void test_known_safe(void **state)
{
	NEED(c, "C_is_known_safe_command");
	shell_split sp;
	size_t i;
	json_t *v;
	const char *argv[64];

	(void)state;
	shell_split_init(&sp);
	json_array_foreach(json_object_get(c, "true"), i, v)
		CHECK(safety_is_known_safe(argv, argv_of(v, argv, 64), PLAT_LINUX, &sp), "true[%zu] %s", i,
		      json_dumps(v, JSON_COMPACT));
	json_array_foreach(json_object_get(c, "true_linux_only"), i, v) {
		size_t n = argv_of(v, argv, 64);

		CHECK(safety_is_known_safe(argv, n, PLAT_LINUX, &sp), "true_linux_only[%zu]", i);
		CHECK(!safety_is_known_safe(argv, n, PLAT_MACOS, &sp), "true_linux_only[%zu] on macos", i);
	}
	json_array_foreach(json_object_get(c, "false"), i, v)
		CHECK(!safety_is_known_safe(argv, argv_of(v, argv, 64), PLAT_LINUX, &sp), "false[%zu] %s", i,
		      json_dumps(v, JSON_COMPACT));
	shell_split_dispose(&sp);
	assert_int_equal(failures, 0);
}

static json_t *split_json(const shell_split *sp)
{
	json_t *a = json_array();

	for (size_t g = 0; g < sp->nsegs; g++) {
		json_t *seg = json_array();

		for (size_t k = sp->seg_start[g]; k < sp->seg_start[g + 1]; k++)
			json_array_append_new(seg, json_string(sp->text.ptr + sp->word_off[k]));
		json_array_append_new(a, seg);
	}
	return a;
}

static void test_parse_shell_lc(void **state)
{
	NEED(c, "D_parse_shell_lc");
	shell_split sp;
	const char *script;
	json_t *v, *h;
	size_t i;

	(void)state;
	shell_split_init(&sp);
	json_object_foreach(json_object_get(c, "ok"), script, v) {
		json_t *got;

		assert_int_equal(shell_split_script(&sp, script, strlen(script)), 0);
		got = split_json(&sp);
		CHECK(sp.status == SHELL_PLAIN && json_equal(got, v), "ok %s", script);
		json_decref(got);
	}
	json_array_foreach(json_object_get(c, "none"), i, v) {
		script = json_string_value(v);
		assert_int_equal(shell_split_script(&sp, script, strlen(script)), 0);
		CHECK(sp.status != SHELL_PLAIN, "none %s", script);
	}
	h = json_object_get(c, "heredoc_single_command_prefix");
	json_array_foreach(json_object_get(h, "ok"), i, v) {
		json_t *got, *want = json_pack("[O]", json_object_get(v, "expected"));

		script = json_string_value(json_array_get(json_object_get(v, "argv"), 2));
		assert_int_equal(shell_split_script(&sp, script, strlen(script)), 0);
		got = split_json(&sp);
		CHECK(sp.status == SHELL_HEREDOC && json_equal(got, want), "heredoc ok %s", script);
		json_decref(got);
		json_decref(want);
	}
	json_array_foreach(json_object_get(h, "none"), i, v) {
		script = json_string_value(json_array_get(v, 2));
		assert_int_equal(shell_split_script(&sp, script, strlen(script)), 0);
		CHECK(sp.status != SHELL_HEREDOC, "heredoc none %s", script);
	}
	shell_split_dispose(&sp);
	assert_int_equal(failures, 0);
}

static void test_dangerous(void **state)
{
	NEED(c, "E_dangerous");
	shell_split sp;
	size_t i;
	json_t *v;
	const char *argv[16];

	(void)state;
	shell_split_init(&sp);
	json_array_foreach(json_object_get(c, "command_might_be_dangerous_true"), i, v)
		CHECK(safety_is_dangerous(argv, argv_of(v, argv, 16), &sp), "dangerous[%zu]", i);
	shell_split_dispose(&sp);
	assert_int_equal(failures, 0);
}

static void test_canonical(void **state)
{
	NEED(c, "F_approval_cache_canonicalization");
	const char *key;
	json_t *want;
	shell_split sp;

	(void)state;
	shell_split_init(&sp);
	json_object_foreach(c, key, want) {
		json_t *argv = json_array(), *got = NULL;
		size_t klen = strlen(key);

		if (klen > 8 && strcmp(key + klen - 8, " heredoc") == 0) {
			/* "/bin/zsh -lc heredoc": the script is the expected third element */
			assert_int_equal(shell_shlex_split(&sp, key), 0);
			json_array_append_new(argv, json_string(sp.text.ptr + sp.word_off[0]));
			json_array_append_new(argv, json_string(sp.text.ptr + sp.word_off[1]));
			json_array_append(argv, json_array_get(want, 2));
		} else {
			assert_int_equal(shell_shlex_split(&sp, key), 0);
			for (size_t k = 0; k < sp.nwords; k++)
				json_array_append_new(argv, json_string(sp.text.ptr + sp.word_off[k]));
		}
		assert_int_equal(docket_policy_canonical_command(&got, argv), 0);
		CHECK(json_equal(got, want), "canonical %s: %s", key, json_dumps(got, JSON_COMPACT));
		json_decref(got);
		json_decref(argv);
	}
	shell_split_dispose(&sp);
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative_programs),
		cmocka_unit_test(test_resolve_lexical),
		cmocka_unit_test(test_forced_rm_spellings),
		cmocka_unit_test(test_codex_version_reason),
		cmocka_unit_test(test_crate_check),
		cmocka_unit_test(test_check_multiple),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_network_rules),
		cmocka_unit_test(test_amend),
		cmocka_unit_test(test_exec_approval),
		cmocka_unit_test(test_unmatched),
		cmocka_unit_test(test_banned_prefixes),
		cmocka_unit_test(test_known_safe),
		cmocka_unit_test(test_parse_shell_lc),
		cmocka_unit_test(test_dangerous),
		cmocka_unit_test(test_canonical),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
