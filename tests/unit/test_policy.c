/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy.c: the policy engine in our own words: shell splitting,
 * paths, the three loaders (with their negative twins), Claude Code
 * semantics, the docket model, grants, unsupported, convert round trips and
 * allocation failure.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "docket/policy.h"
#include "policy/policy.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/jv.h"
#include "../fuzz/call_args_diff.h"

static docket_policy *load(docket_policy_format f, const char *text)
{
	docket_policy *p = NULL;

	if (docket_policy_load_buffer(&p, f, "t", text, strlen(text)) < 0)
		fail_msg("load failed: %s", docket_error_last()->message);
	return p;
}

static int load_err(docket_policy_format f, const char *text, const char *want)
{
	docket_policy *p = NULL;
	int error = docket_policy_load_buffer(&p, f, "t", text, strlen(text));

	if (error == 0) {
		docket_policy_free(p);
		fail_msg("expected an error loading: %s", text);
	}
	if (want && !strstr(docket_error_last()->message, want))
		fail_msg("message \"%s\" lacks \"%s\"", docket_error_last()->message, want);
	return error;
}

/* Evaluate and return the verdict name; *out (optional) gets the result JSON. */
static const char *verdict(const docket_policy *p, const char *call, const char *ctx, json_t **out)
{
	static char name[32];
	json_t *cj = test_json(call), *xj = ctx ? test_json(ctx) : NULL, *rj = NULL;
	docket_policy_call *c = NULL;
	docket_policy_context *x = NULL;
	docket_policy_result *r = NULL;

	if (docket_policy_call_from_json(&c, cj) < 0)
		fail_msg("call: %s", docket_error_last()->message);
	if (docket_policy_context_from_json(&x, xj) < 0)
		fail_msg("context: %s", docket_error_last()->message);
	assert_int_equal(docket_policy_result_new(&r), 0);
	assert_int_equal(docket_policy_eval(r, p, c, x), 0);
	snprintf(name, sizeof(name), "%s", docket_policy_verdict_name(docket_policy_result_verdict(r)));
	assert_int_equal(docket_policy_result_to_json(&rj, r), 0);
	if (getenv("POLICY_TEST_VERBOSE")) {
		char *d = json_dumps(rj, JSON_COMPACT);

		fprintf(stderr, "%s -> %s\n", call, d);
		free(d);
	}
	if (out)
		*out = rj;
	else
		json_decref(rj);
	docket_policy_result_free(r);
	docket_policy_context_free(x);
	docket_policy_call_free(c);
	json_decref(cj);
	json_decref(xj);
	return name;
}

#define SH(script) "{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"" script "\"]}}"
#define CTX "{\"platform\":\"linux\",\"cwd\":\"/home/u/app\",\"workspace_roots\":[\"/home/u/app\"],\"env\":{\"HOME\":\"/home/u\"}}"

/* ---- shell splitter ---- */

static void split_words(const char *script, int status, const char *expect)
{
	shell_split sp;
	docket_buf b = DOCKET_BUF_INIT;

	shell_split_init(&sp);
	assert_int_equal(shell_split_script(&sp, script, strlen(script)), 0);
	if (sp.status != status)
		fail_msg("%s: status %d, want %d (%s)", script, sp.status, status, sp.reason ? sp.reason : "");
	if (expect) {
		for (size_t g = 0; g < sp.nsegs; g++) {
			if (g)
				assert_int_equal(docket_buf_puts(&b, " | "), 0);
			for (size_t k = sp.seg_start[g]; k < sp.seg_start[g + 1]; k++)
				assert_int_equal(docket_buf_printf(&b, "%s<%s>", k > sp.seg_start[g] ? " " : "",
								   sp.text.ptr + sp.word_off[k]), 0);
		}
		assert_string_equal(b.ptr ? b.ptr : "", expect);
	}
	docket_buf_dispose(&b);
	shell_split_dispose(&sp);
}

static void test_split_plain(void **state)
{
	(void)state;
	split_words("git status && npm test", SHELL_PLAIN, "<git> <status> | <npm> <test>");
	split_words("a;b||c|d\ne", SHELL_PLAIN, "<a> | <b> | <c> | <d> | <e>");
	split_words("echo 'a b' \"c\\\"d\" e\\ f", SHELL_PLAIN, "<echo> <a b> <c\"d> <e f>");
	split_words("ls;", SHELL_PLAIN, "<ls>");
	split_words("ls &&\n  pwd", SHELL_PLAIN, "<ls> | <pwd>");
	split_words("find . -exec rm {} ;", SHELL_PLAIN, "<find> <.> <-exec> <rm> <{}>"); /* a bare ';' ends it */
	split_words("", SHELL_EMPTY, "");
	split_words(" \n\t ", SHELL_EMPTY, "");
	split_words("VAR=1", SHELL_COMPLEX, NULL);
	split_words("ls x=1", SHELL_PLAIN, "<ls> <x=1>");
	split_words("'if' x", SHELL_PLAIN, "<if> <x>");
}

static void test_split_complex(void **state)
{
	static const char *const complex[] = {
		"echo $HOME", "echo ${X}", "echo $(id)", "echo `id`", "ls > f", "ls 2>&1", "cat < f",
		"(ls)", "{ ls; }", "ls &", "ls |& cat", "ls *.c", "ls ?", "ls [ab]", "cd ~", "ls # c",
		"if true; then ls; fi", "for x in a; do ls; done", "! ls", "echo 'unterminated",
		"echo \"x", "ls &&", "&& ls", "ls ;; ls", "ls | | wc", "echo \"$x\"", "x\\", "ls &> f",
		"echo {a,b}", "cat <<< hi",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(complex) / sizeof(complex[0]); i++)
		split_words(complex[i], SHELL_COMPLEX, NULL);
	split_words("python3 <<'EOF'\nprint(1)\nEOF\n", SHELL_HEREDOC, "<python3>");
	split_words("cat <<EOF\n$HOME\nEOF", SHELL_COMPLEX, NULL);   /* unquoted body expands */
	split_words("cat <<-'E'\n\tx\n\tE", SHELL_HEREDOC, "<cat>");
	split_words("cat <<'E'\nx\n", SHELL_COMPLEX, NULL);          /* no terminator */
	split_words("ls && cat <<'E'\nx\nE", SHELL_COMPLEX, NULL);
}

static void test_shlex_join(void **state)
{
	const char *argv[] = { "bash", "-lc", "rm -rf /x", "it's", "" };
	docket_buf b = DOCKET_BUF_INIT;

	(void)state;
	assert_int_equal(shell_join(&b, argv, 5), 0);
	assert_string_equal(b.ptr, "bash -lc 'rm -rf /x' 'it'\"'\"'s' ''");
	docket_buf_dispose(&b);
}

/* ---- paths ---- */

static void norm(const char *in, const char *cwd, const char *want)
{
	docket_buf b = DOCKET_BUF_INIT;

	assert_int_equal(path_normalize(&b, in, cwd, "/home/u"), 0);
	assert_string_equal(b.ptr, want);
	docket_buf_dispose(&b);
}

static void test_paths(void **state)
{
	docket_buf b = DOCKET_BUF_INIT;

	(void)state;
	norm("/a/b/../c", NULL, "/a/c");
	norm("//a///b/", NULL, "/a/b");
	norm("x/./y/..", "/w", "/w/x");
	norm("../../../..", "/w/v", "/");
	norm("~", NULL, "/home/u");
	norm("~/.ssh/id_rsa", NULL, "/home/u/.ssh/id_rsa");
	norm("/", NULL, "/");
	assert_int_equal(path_normalize(&b, "rel", NULL, NULL), DOCKET_EINVALID);
	assert_int_equal(path_normalize(&b, "~/x", "/w", NULL), DOCKET_EINVALID);
	assert_int_equal(path_normalize(&b, "", "/w", NULL), DOCKET_EINVALID);
	docket_buf_dispose(&b);
	assert_true(path_is_under("/a/b", "/a"));
	assert_false(path_is_under("/ab", "/a"));
	assert_true(path_is_under("/x", "/"));
	assert_true(path_glob_match("/w/secrets/**", 13, "/w/secrets/a/b"));
	assert_true(path_glob_match("/w/secrets", 10, "/w/secrets/a/b"));
	assert_false(path_glob_match("/w/*.env", 8, "/w/a/b.env"));
	assert_true(path_glob_match("/w/**/*.env", 11, "/w/a/b.env"));
	assert_true(path_glob_match("/w/**/*.env", 11, "/w/b.env"));
}

/* ---- Codex .rules negatives ---- */

static void test_rules_negative(void **state)
{
	char *big;

	(void)state;
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"]", "expected");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=\"a\")", "pattern must be a list");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"], decision=\"maybe\")", "decision");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"], colour=\"red\")", "unexpected keyword");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"], pattern=[\"b\"])", "twice");
	load_err(DOCKET_POLICY_CODEX, "rm_rule(pattern=[\"a\"])", "unknown function");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[[]])", "cannot be empty");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[1])", "expected a string");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"]) x", "newline");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"git\"], match=[\"ls\"])", "did not match");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"git\"], not_match=[[\"git\",\"x\"]])", "matched");
	load_err(DOCKET_POLICY_CODEX, "network_rule(host=\"a.com/x\", protocol=\"https\", decision=\"allow\")", "without scheme");
	load_err(DOCKET_POLICY_CODEX, "network_rule(host=\"a.com\", protocol=\"ftp\", decision=\"allow\")", "protocol");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\\q\"])", "escape");
	/* Codex types its parameters: None is refused even where optional */
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"], decision=None)", "NoneType");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"], justification=None)", "NoneType");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[\"a\"], match=None)", "NoneType");
	load_err(DOCKET_POLICY_CODEX, "prefix_rule([\"a\"], None)", "NoneType");
	/* variables: unknown names, `+` of mixed types, `+=` of an unbound name */
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[GIT])", "variable `GIT` not found");
	load_err(DOCKET_POLICY_CODEX, "X = [\"a\"] + \"b\"", "`+` not supported");
	load_err(DOCKET_POLICY_CODEX, "X += [\"a\"]", "variable `X` not found");
	load_err(DOCKET_POLICY_CODEX, "X = \n[\"a\"]", "expected a string");
	load_err(DOCKET_POLICY_CODEX, "for p in [\"a\"]:\n    prefix_rule(pattern=[p])", "unknown function `for`");
	/* 2:3 position */
	load_err(DOCKET_POLICY_CODEX, "\n  bogus()", "t:2:3:");
	/* deeply nested lists */
	load_err(DOCKET_POLICY_CODEX, "prefix_rule(pattern=[[[[[[[[[[[[\"a\"]]]]]]]]]]]])", "nested");
	/* huge: many rules load fine, a huge string too */
	big = malloc(1 << 20);
	assert_non_null(big);
	memset(big, 'a', (1 << 20) - 1);
	memcpy(big, "prefix_rule(pattern=[\"", 22);
	big[(1 << 20) - 1] = '\0';
	load_err(DOCKET_POLICY_CODEX, big, "unterminated");
	free(big);
}

static void test_rules_semantics(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CODEX,
		"# comment\n"
		"prefix_rule(pattern=[\"git\", [\"push\", \"pull\"]], decision=\"prompt\", justification=\"net\")\n"
		"prefix_rule(['rm'], 'forbidden')\n"
		"prefix_rule(pattern=[\"cat\"])\n");
	json_t *out = NULL;

	(void)state;
	assert_int_equal(docket_policy_rule_count(p), 3);
	assert_string_equal(verdict(p, SH("git push origin"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("cat a && rm -rf b"), CTX, &out), "denied");
	assert_int_equal(json_array_size(json_object_get(out, "segments")), 2);
	json_decref(out);
	/* the strictest decision over every segment */
	assert_string_equal(verdict(p, SH("cat a | git pull"), CTX, NULL), "approval_required");
	/* complex scripts are never allowed by a rule matching a piece */
	assert_string_equal(verdict(p, SH("cat $(rm -rf /)"), "{\"approval_policy\":\"untrusted\"}", &out),
			    "approval_required");
	assert_string_equal(json_string_value(json_object_get(out, "not_split")), "substitution");
	json_decref(out);
	docket_policy_free(p);
}

/* top-level constants, `+` and `+=`, as Starlark evaluates them */
static void test_rules_variables(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CODEX,
		"GIT = \"git\"\n"
		"REMOTE = [GIT] + [[\"push\", \"fetch\"]]\n"
		"prefix_rule(pattern=REMOTE, decision=\"prompt\", match=[GIT + \" push\"])\n"
		"RM = [\"rm\"]; RM += [\"-rf\"]\n"
		"prefix_rule(pattern=RM +\n  [\"/\"], decision=\"forbidden\")\n"
		"GIT = \"cat\"\n"
		"prefix_rule(pattern=[GIT])\n");

	(void)state;
	assert_int_equal(docket_policy_rule_count(p), 3);
	assert_string_equal(verdict(p, SH("git fetch origin"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("git status"), CTX, NULL), "allowed");   /* unmatched, sandboxed */
	assert_string_equal(verdict(p, SH("rm -rf /"), CTX, NULL), "denied");
	assert_string_not_equal(verdict(p, SH("rm -rf /tmp"), CTX, NULL), "denied");   /* the third token differs */
	/* the last binding of GIT wins for the rule after it */
	assert_string_equal(verdict(p, SH("cat x"), "{\"approval_policy\":\"untrusted\"}", NULL), "allowed");
	docket_policy_free(p);
}

/* ---- Claude Code ---- */

static const char *claude_settings =
	"{\"permissions\":{"
	"\"allow\":[\"Bash(npm run test:*)\",\"Bash(git status)\",\"Bash(ls *)\",\"Read\",\"Edit(./src/**)\","
	"\"WebFetch(domain:docs.example.com)\",\"mcp__github\",\"Bash(git push:*)\"],"
	"\"ask\":[\"Bash(git push --force:*)\",\"Read(~/.ssh/**)\"],"
	"\"deny\":[\"Bash(rm -rf:*)\",\"Read(./secrets/**)\",\"Edit(//etc/**)\",\"Read(.env)\",\"mcp__github__delete_repo\",\"Bash(curl * | bash)\"],"
	"\"defaultMode\":\"default\",\"additionalDirectories\":[\"/data\"]},"
	"\"hooks\":{},\"env\":{}}";

static void test_claude_bash(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE, claude_settings);

	(void)state;
	assert_string_equal(verdict(p, SH("npm run test"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, SH("npm run test -- --watch"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, SH("npm run testx"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("git status"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, SH("git stash"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("ls -la"), CTX, NULL), "allowed");
	/* operator awareness: every segment must be allowed */
	assert_string_equal(verdict(p, SH("npm run test && make deploy"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("npm run test; rm -rf /"), CTX, NULL), "denied");
	assert_string_equal(verdict(p, SH("npm run test $(make deploy)"), CTX, NULL), "approval_required");
	/* deny before ask before allow */
	assert_string_equal(verdict(p, SH("git push --force origin"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("git push origin"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, SH("rm -rf build"), CTX, NULL), "denied");
	assert_string_equal(verdict(p, SH("curl -s x | bash"), CTX, NULL), "denied");
	/* unmatched read-only commands are allowed, others ask */
	assert_string_equal(verdict(p, SH("cat README"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, SH("make"), CTX, NULL), "approval_required");
	/* Claude's own Bash tool shape */
	assert_string_equal(verdict(p, "{\"tool\":\"Bash\",\"args\":{\"command\":\"npm run test\"}}", CTX, NULL), "allowed");
	docket_policy_free(p);
}

static void test_claude_paths(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE, claude_settings);

#define RD(path) "{\"tool\":\"read_file\",\"args\":{\"path\":\"" path "\"}}"
#define WR(path) "{\"tool\":\"write_file\",\"args\":{\"path\":\"" path "\"}}"
	(void)state;
	assert_string_equal(verdict(p, RD("src/a.c"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, RD("secrets/k"), CTX, NULL), "denied");
	assert_string_equal(verdict(p, RD("src/../secrets/./k"), CTX, NULL), "denied");   /* normalised */
	assert_string_equal(verdict(p, RD("/home/u/app//secrets/k"), CTX, NULL), "denied");
	assert_string_equal(verdict(p, RD("~/.ssh/id_rsa"), CTX, NULL), "approval_required"); /* ~/ anchor */
	assert_string_equal(verdict(p, RD(".env"), CTX, NULL), "denied");
	assert_string_equal(verdict(p, RD("sub/dir/.env"), CTX, NULL), "denied");            /* any depth */
	assert_string_equal(verdict(p, WR("src/x.c"), CTX, NULL), "allowed");                /* ./ anchor */
	assert_string_equal(verdict(p, WR("/etc/passwd"), CTX, NULL), "denied");             /* // anchor */
	assert_string_equal(verdict(p, WR("docs/x.md"), CTX, NULL), "approval_required");
	docket_policy_free(p);
	/* "/" is relative to the project root (the first workspace root) */
	p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"deny\":[\"Edit(/build/**)\"],\"defaultMode\":\"acceptEdits\"}}");
	assert_string_equal(verdict(p, WR("build/out"), CTX, NULL), "denied");
	assert_string_equal(verdict(p, WR("/build/out"), CTX, NULL), "approval_required");  /* outside the workspace */
	assert_string_equal(verdict(p, WR("src/out"), CTX, NULL), "allowed");              /* acceptEdits */
	docket_policy_free(p);
}

static bool has_reason_code(const json_t *out, const char *code)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(out, "reasons"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "code")), code) == 0)
			return true;
	return false;
}

static void test_claude_tools(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE, claude_settings);
	json_t *out = NULL;

	(void)state;
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"url\":\"https://DOCS.example.com/x\"}}", CTX, NULL), "allowed");
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"url\":\"https://evil.com/x\"}}", CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, "{\"tool\":\"mcp\",\"args\":{\"server\":\"github\",\"tool\":\"list\",\"arguments\":{}}}", CTX, NULL), "allowed");
	assert_string_equal(verdict(p, "{\"tool\":\"mcp\",\"args\":{\"server\":\"github\",\"tool\":\"delete_repo\"}}", CTX, NULL), "denied");
	assert_string_equal(verdict(p, "{\"tool\":\"mcp__other__x\",\"args\":{}}", CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, "{\"tool\":\"Glob\",\"args\":{}}", CTX, NULL), "allowed");
	docket_policy_free(p);
	/* a wildcard server name matches no server in Claude Code (issue 33: 2.1.328, 2.1.332): dontAsk denies */
	p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"mcp__*\",\"mcp__s__*\"],\"defaultMode\":\"dontAsk\"}}");
	assert_string_equal(verdict(p, "{\"tool\":\"mcp__x__y\",\"args\":{}}", CTX, NULL), "denied");
	assert_string_equal(verdict(p, "{\"tool\":\"mcp__s__y\",\"args\":{}}", CTX, NULL), "allowed");
	assert_string_equal(verdict(p, SH("make"), CTX, NULL), "denied");
	docket_policy_free(p);
	p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"deny\":[\"Bash(sudo:*)\"],\"defaultMode\":\"bypassPermissions\"}}");
	assert_string_equal(verdict(p, SH("make"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, SH("sudo make"), CTX, NULL), "denied");
	docket_policy_free(p);
	p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"defaultMode\":\"plan\"}}");
	assert_string_equal(verdict(p, SH("ls"), CTX, NULL), "allowed");
	/* plan mode asks, with its reason; it does not refuse */
	assert_string_equal(verdict(p, WR("a"), CTX, &out), "approval_required");
	assert_true(has_reason_code(out, "plan_mode"));
	json_decref(out);
	assert_string_equal(verdict(p, SH("make"), CTX, NULL), "approval_required");
	docket_policy_free(p);
}

static void test_claude_negative(void **state)
{
	(void)state;
	load_err(DOCKET_POLICY_CLAUDE, "{", "invalid JSON");
	load_err(DOCKET_POLICY_CLAUDE, "[]", "must be a JSON object");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":[]}", "must be an object");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"alow\":[]}}", "unknown key permissions.alow");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":\"Bash\"}}", "must be an array");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[1]}}", "must be a string");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"Bash(ls\"]}}", "expected ')'");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"Bash()\"]}}", "empty specifier");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"(x)\"]}}", "missing tool name");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"defaultMode\":\"yolo\"}}", "defaultMode");
	load_err(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"WebFetch(domain:)\"]}}", "empty domain");
	load_err(DOCKET_POLICY_CLAUDE, "{\"a\":1,\"a\":2}", "invalid JSON");
}

/* matched Claude rules name their line in settings.json, not their index */
static void test_claude_origins(void **state)
{
	docket_policy *p;
	json_t *rj = NULL, *m;

	(void)state;
	p = load(DOCKET_POLICY_CLAUDE, "{\n  \"env\": {\"allow\": [\"x\"]},\n  \"permissions\": {\n"
				       "    \"allow\": [\"Bash(ls:*)\",\n      \"Read\"],\n"
				       "    \"deny\": [\"Read(./.env)\"]\n  }\n}\n");
	assert_string_equal(verdict(p, "{\"tool\":\"Read\",\"args\":{\"file_path\":\"/home/u/app/.env\"}}", CTX, &rj),
			    "denied");
	m = json_object_get(rj, "matched_rules");
	assert_int_equal(json_array_size(m), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 0), "line")), 5);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 1), "line")), 6);
	/* the reason names the deny rule, not "blocked by policy" */
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(rj, "reasons"), 0), "text")),
			    "denied by rule Read(./.env)");
	json_decref(rj);
	assert_string_equal(verdict(p, SH("ls && rm -rf /"), CTX, &rj), "approval_required");
	json_decref(rj);
	docket_policy_free(p);
}

static void test_claude_corpus(void **state)
{
	static const char *const files[] = {
		"claude-settings/bfay1-dotfiles.settings.json",
		"claude-settings/camillepolice-devcontainer-template.settings.local.json",
		"claude-settings/catwhisperingninja-pai-v2.3.settings.json",
		"claude-settings/xu-wentao-dotfile.settings.local.json",
		"claude-settings/zatoichi-claude-zibe.settings.json",
	};
	char src[4200];

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *path = test_shared_path(files[i]);
		docket_policy *p = NULL;

		if (!path) {
			skip();
			return;
		}
		snprintf(src, sizeof(src), "claude:%s", path);
		if (docket_policy_load(&p, src) < 0)
			fail_msg("%s: %s", files[i], docket_error_last()->message);
		if (i == 0) {
			assert_string_equal(verdict(p, SH("git status -s"), CTX, NULL), "allowed");
			assert_string_equal(verdict(p, SH("git push --force origin"), CTX, NULL), "denied");
			assert_string_equal(verdict(p, SH("curl https://x"), CTX, NULL), "denied");
			assert_string_equal(verdict(p, RD(".env"), CTX, NULL), "denied");
		} else if (i == 1) {
			/* the exact heredoc commit command saved by "don't ask again" */
			assert_string_equal(verdict(p, SH("sudo apt install jq"), CTX, NULL), "allowed");
		} else if (i == 4) {
			assert_string_equal(verdict(p, SH("npm run build"), CTX, NULL), "allowed");
			assert_string_equal(verdict(p, SH("sudo ls"), CTX, NULL), "denied");
			assert_string_equal(verdict(p, SH("git push origin main"), CTX, NULL), "denied");
			assert_string_equal(verdict(p, WR("src/a.ts"), CTX, NULL), "allowed");
		}
		docket_policy_free(p);
		free(path);
	}
}

/* ---- docket YAML ---- */

static const char *yaml_policy =
	"version: 1\n"
	"sandbox: workspace_write\n"
	"approval: on_request\n"
	"commands:\n"
	"  - pattern: [git, [push, fetch]]\n"
	"    decision: ask\n"
	"    justification: touches the network\n"
	"  - pattern: [rm]\n"
	"    decision: deny\n"
	"  - pattern: [npm, test]\n"
	"    decision: allow\n"
	"tools:\n"
	"  deny: [\"Read(./secrets/**)\"]\n"
	"network:\n"
	"  enabled: false\n"
	"  rules:\n"
	"    - {host: \"*.github.com\", protocol: https, decision: allow}\n"
	"    - {host: evil.com, decision: deny}\n"
	"run_code:\n"
	"  languages: [python]\n"
	"packages:\n"
	"  npm: {allow: [left-pad, \"@types/node\"], otherwise: ask}\n"
	"platforms:\n"
	"  windows: {unsupported: [sandbox, network_filter]}\n";

static void test_yaml_model(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_DOCKET, yaml_policy);
	json_t *out = NULL;

	(void)state;
	assert_string_equal(verdict(p, SH("git push"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("npm test && rm -rf x"), CTX, NULL), "denied");
	assert_string_equal(verdict(p, SH("npm test"), CTX, &out), "allowed");
	assert_string_equal(json_string_value(json_object_get(out, "sandbox")), "bypass");
	json_decref(out);
	assert_string_equal(verdict(p, SH("make"), CTX, &out), "allowed");
	assert_string_equal(json_string_value(json_object_get(out, "sandbox")), "sandboxed");
	json_decref(out);
	/* writes: workspace yes, protected subpaths and outside ask */
	assert_string_equal(verdict(p, WR("src/a.c"), CTX, NULL), "allowed");
	assert_string_equal(verdict(p, WR(".git/config"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, WR("/etc/x"), CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, "{\"tool\":\"apply_patch\",\"args\":{\"changes\":[{\"path\":\"a\",\"op\":\"move\",\"to\":\"/etc/b\"}]}}", CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, RD("secrets/k"), CTX, NULL), "denied");
	/* network: case-insensitive hosts, protocol, wildcard */
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"url\":\"https://API.GitHub.com:443/x\"}}", CTX, NULL), "allowed");
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"url\":\"http://api.github.com/x\"}}", CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"host\":\"evil.com\",\"port\":22}}", CTX, NULL), "denied");
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"url\":\"https://a.org\"}}", CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"url\":\"https://a.org\"}}",
				    "{\"approval_policy\":\"never\"}", NULL), "denied");
	/* run_code and packages */
	assert_string_equal(verdict(p, "{\"tool\":\"run_code\",\"args\":{\"language\":\"python\"}}", CTX, NULL), "allowed");
	assert_string_equal(verdict(p, "{\"tool\":\"run_code\",\"args\":{\"language\":\"ruby\"}}", CTX, NULL), "approval_required");
	assert_string_equal(verdict(p, "{\"tool\":\"install_packages\",\"args\":{\"ecosystem\":\"npm\",\"packages\":[\"left-pad@1.3.0\",\"@types/node\"]}}", CTX, NULL), "allowed");
	assert_string_equal(verdict(p, "{\"tool\":\"install_packages\",\"args\":{\"ecosystem\":\"npm\",\"packages\":[\"lodash\"]}}", CTX, NULL), "approval_required");
	{
		static const char *const bad[] = {
			"--registry=x", "https://x/y.tgz", "git+ssh://h/r", "../local", "/abs", "a;rm", "x y",
			"github:a/b", "file:../x", "$(id)", "a/b",
		};
		char call[256];

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			json_t *s = json_string(bad[i]);
			char *q = json_dumps(s, JSON_ENCODE_ANY);

			snprintf(call, sizeof(call), "{\"tool\":\"install_packages\",\"args\":{\"ecosystem\":\"npm\",\"packages\":[%s]}}", q);
			assert_string_equal(verdict(p, call, CTX, NULL), "denied");
			free(q);
			json_decref(s);
		}
	}
	/* unsupported: a sandbox windows cannot enforce; never approvable */
	{
		json_t *rj = NULL;

		assert_string_equal(verdict(p, SH("make"), "{\"platform\":\"windows\",\"cwd\":\"/w\"}", &rj),
				    "unsupported");
		/* nothing to approve, so no rule is proposed */
		assert_null(json_object_get(rj, "proposed_amendment"));
		json_decref(rj);
	}
	assert_string_equal(verdict(p, SH("npm test"), "{\"platform\":\"windows\",\"cwd\":\"/w\"}", NULL), "allowed");
	assert_string_equal(verdict(p, SH("rm x"), "{\"platform\":\"windows\",\"cwd\":\"/w\"}", NULL), "denied");
	assert_string_equal(verdict(p, "{\"tool\":\"network\",\"args\":{\"url\":\"https://api.github.com\"}}",
				    "{\"platform\":\"windows\"}", NULL), "unsupported");
	docket_policy_free(p);
}

static void test_grants(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_DOCKET, yaml_policy);
	const char *ctx = "{\"cwd\":\"/w\",\"grants\":[{\"command\":[\"git\",\"push\"]},{\"command\":[\"rm\",\"x\"]},{\"path\":\"/etc\"}]}";

	(void)state;
	assert_string_equal(verdict(p, SH("git push"), ctx, NULL), "allowed");
	assert_string_equal(verdict(p, SH("git push && git fetch"), ctx, NULL), "approval_required");
	assert_string_equal(verdict(p, SH("rm x"), ctx, NULL), "denied");              /* never over a deny */
	/* a path grant covers exactly that path (issue 26), not what lies under it */
	assert_string_equal(verdict(p, WR("/etc"), ctx, NULL), "allowed");
	assert_string_equal(verdict(p, WR("/etc/hosts"), ctx, NULL), "approval_required");
	assert_string_equal(verdict(p, WR("/etc/../var/x"), ctx, NULL), "approval_required");
	/* an empty grant grants nothing (it used to cover every absolute path) */
	assert_string_equal(verdict(p, WR("/etc/hosts"), "{\"cwd\":\"/w\",\"grants\":[{\"path\":\"\"}]}", NULL),
			    "approval_required");
	assert_string_equal(verdict(p, SH("git push"), "{\"cwd\":\"/w\",\"grants\":[{\"command\":[]}]}", NULL),
			    "approval_required");
	docket_policy_free(p);
}

static void test_yaml_negative(void **state)
{
	(void)state;
	load_err(DOCKET_POLICY_DOCKET, "", "empty policy");
	load_err(DOCKET_POLICY_DOCKET, "- a\n- b\n", "expected a mapping");
	load_err(DOCKET_POLICY_DOCKET, "version: 1\nsandboxx: read_only\n", "t:2:1: unknown key \"sandboxx\"");
	load_err(DOCKET_POLICY_DOCKET, "version: 2\n", "version: expected 1");
	load_err(DOCKET_POLICY_DOCKET, "sandbox: open\n", "t:1:10: sandbox");
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: []\n", "non-empty pattern");
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [a]\n    decision: maybe\n", "t:3:15: decision");
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [a]\n    colour: red\n", "unknown key \"colour\"");
	load_err(DOCKET_POLICY_DOCKET, "commands: {a: b}\n", "expected a list");
	load_err(DOCKET_POLICY_DOCKET, "tools:\n  allow: [\"Bash(ls\"]\n", "t:2:12:");
	load_err(DOCKET_POLICY_DOCKET, "network:\n  rules:\n    - {host: \"a/b\", decision: allow}\n", "without scheme");
	load_err(DOCKET_POLICY_DOCKET, "network:\n  enabled: maybe\n", "true or false");
	load_err(DOCKET_POLICY_DOCKET, "a: [b\n", "invalid YAML");
	/* libfyaml's positions are already 1-based */
	load_err(DOCKET_POLICY_DOCKET, "version: 1\na: b: c\n", "t:2:5: invalid YAML");
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [a]\n    colour: red\n",
		 "(expected pattern, decision, justification, match, not_match)");
	load_err(DOCKET_POLICY_DOCKET, "platforms:\n  beos: {unsupported: [sandbox]}\n", "unknown platform");
	load_err(DOCKET_POLICY_DOCKET, "host_executables:\n  git: [/usr/bin/rg]\n", "basename");
}

/* issue 30: mistakes a policy author makes fail at load, with where and why */
static void test_yaml_author_mistakes(void **state)
{
	(void)state;
	/* a command rule without a decision meant allow; now it is an error at its pattern */
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [rm, -rf]\n", "t:2:15: a command rule needs a decision");
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [[rm, rmdir]]\n", "t:2:16: a command rule needs a decision");
	/* examples are checked against their own rule, as Codex checks its own */
	load_err(DOCKET_POLICY_DOCKET,
		 "commands:\n  - pattern: [git, status]\n    decision: allow\n    match: [\"git push\"]\n",
		 "t:4:14: invalid rule: match example did not hold");
	load_err(DOCKET_POLICY_DOCKET,
		 "commands:\n  - pattern: [git]\n    decision: allow\n    not_match: [[git, push]]\n",
		 "invalid rule: not_match example did not hold");
	load_err(DOCKET_POLICY_DOCKET,
		 "commands:\n  - pattern: [git]\n    decision: allow\n    match: [\"git 'push\"]\n", "bad shell quoting");
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [git]\n    decision: allow\n    match: \"git\"\n",
		 "match: expected a list of examples");
	load_err(DOCKET_POLICY_DOCKET, "commands:\n  - pattern: [git]\n    decision: allow\n    match: [\"\"]\n",
		 "empty command");
	/* an example matching another rule of the file does not count */
	load_err(DOCKET_POLICY_DOCKET,
		 "commands:\n  - pattern: [ls]\n    decision: allow\n  - pattern: [git]\n    decision: allow\n"
		 "    match: [ls]\n", "match example did not hold");
	/* the wrong loader: say which prefix reads the file */
	load_err(DOCKET_POLICY_DOCKET, "{\"permissions\": {\"allow\": [\"Bash(ls)\"]}}",
		 "did you mean claude:t?");
	load_err(DOCKET_POLICY_DOCKET, "prefix_rule(pattern = [\"ls\"], decision = \"allow\")\n",
		 "did you mean codex:t?");
	/* ... and no hint for a plain docket YAML mistake */
	load_err(DOCKET_POLICY_DOCKET, "version: 1\nsandboxx: read_only\n", NULL);
	assert_null(strstr(docket_error_last()->message, "did you mean"));
}

/* examples survive convert both ways and hold in the converted policy */
static void test_examples_convert(void **state)
{
	static const char rules[] =
		"prefix_rule(pattern = [[\"git\", \"hg\"], \"status\"], decision = \"allow\",\n"
		"    match = [\"git status\", [\"hg\", \"status\", \"-s\"]], not_match = [\"git push\"])\n";
	docket_policy *p = load(DOCKET_POLICY_CODEX, rules), *q;
	char *y = NULL;

	(void)state;
	assert_int_equal(docket_policy_to_yaml(&y, p), 0);
	assert_non_null(strstr(y, "pattern: [[\"git\", \"hg\"], \"status\"]\n"));
	assert_non_null(strstr(y, "match: [\"git status\", \"hg status -s\"]\n"));
	assert_non_null(strstr(y, "not_match: [\"git push\"]\n"));
	q = load(DOCKET_POLICY_DOCKET, y);
	assert_int_equal(docket_policy_rule_count(q), 2);
	docket_policy_free(q);
	docket_free(y);
	docket_policy_free(p);
}

/* convert: a policy and its docket YAML evaluate identically */
static void same(const docket_policy *a, const docket_policy *b, const char *call, const char *ctx)
{
	char va[32];

	snprintf(va, sizeof(va), "%s", verdict(a, call, ctx, NULL));
	if (strcmp(va, verdict(b, call, ctx, NULL)) != 0)
		fail_msg("convert changed %s: %s -> %s", call, va, verdict(b, call, ctx, NULL));
}

static void round_trip(docket_policy_format f, const char *text)
{
	static const char *const calls[] = {
		SH("git push"), SH("npm run test && ls"), SH("rm -rf x"), SH("make"), SH("cat $(id)"),
		SH("git status"), RD("secrets/k"), RD("~/.ssh/id"), WR("src/a"), WR(".git/x"),
		"{\"tool\":\"network\",\"args\":{\"url\":\"https://docs.example.com\"}}",
		"{\"tool\":\"mcp__github__x\",\"args\":{}}", SH("python3 <<'E'\\nx\\nE"),
	};
	static const char *const ctxs[] = {
		CTX, "{\"cwd\":\"/w\",\"approval_policy\":\"untrusted\",\"sandbox_policy\":{\"type\":\"read-only\"}}",
		"{\"cwd\":\"/w\",\"approval_policy\":\"never\",\"sandbox_policy\":\"danger-full-access\"}",
	};
	docket_policy *p = load(f, text), *q = NULL;
	char *yaml = NULL;

	assert_int_equal(docket_policy_to_yaml(&yaml, p), 0);
	if (docket_policy_load_buffer(&q, DOCKET_POLICY_DOCKET, "converted", yaml, strlen(yaml)) < 0)
		fail_msg("converted policy does not load: %s\n%s", docket_error_last()->message, yaml);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		for (size_t k = 0; k < sizeof(ctxs) / sizeof(ctxs[0]); k++)
			same(p, q, calls[i], ctxs[k]);
	docket_free(yaml);
	docket_policy_free(q);
	docket_policy_free(p);
}

static void test_convert(void **state)
{
	(void)state;
	round_trip(DOCKET_POLICY_CLAUDE, claude_settings);
	round_trip(DOCKET_POLICY_CODEX,
		   "prefix_rule(pattern=[\"git\", [\"push\", \"status\"]], decision=\"prompt\", justification=\"j\")\n"
		   "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\")\n"
		   "prefix_rule(pattern=[\"python3\"])\n"
		   "network_rule(host=\"docs.example.com\", protocol=\"https\", decision=\"allow\")\n"
		   "host_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n");
	round_trip(DOCKET_POLICY_DOCKET, yaml_policy);
}

static void test_calls_negative(void **state)
{
	static const char *const bad[] = {
		"[]", "{}", "{\"tool\":1}", "{\"tool\":\"shell\",\"args\":[]}",
		"{\"tool\":\"shell\",\"args\":{\"command\":[1]}}", "{\"tool\":\"shell\",\"args\":{}}",
		"{\"tool\":\"read_file\",\"args\":{}}", "{\"tool\":\"network\",\"args\":{\"url\":\"nohost\"}}",
		"{\"tool\":\"network\",\"args\":{\"url\":\"https://h:99999\"}}",
		"{\"tool\":\"install_packages\",\"args\":{\"ecosystem\":\"npm\",\"packages\":\"x\"}}",
		"{\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"],\"sandbox_permissions\":\"root\"}}",
	};
	static const char *const badctx[] = {
		"[]", "{\"platform\":\"beos\"}", "{\"approval_policy\":\"sometimes\"}",
		"{\"sandbox_policy\":{\"type\":\"open\"}}", "{\"grants\":[1]}", "{\"cwdd\":\"/\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = test_json(bad[i]);
		docket_policy_call *c = NULL;

		assert_int_equal(docket_policy_call_from_json(&c, j), DOCKET_EINVALID);
		assert_null(c);
		json_decref(j);
	}
	for (size_t i = 0; i < sizeof(badctx) / sizeof(badctx[0]); i++) {
		json_t *j = test_json(badctx[i]);
		docket_policy_context *c = NULL;

		assert_int_equal(docket_policy_context_from_json(&c, j), DOCKET_EINVALID);
		json_decref(j);
	}
}

/* The result of evaluating call `c` as compact JSON (caller frees). */
static char *eval_dump(const docket_policy *p, const docket_policy_call *c, const char *ctx)
{
	json_t *xj = test_json(ctx), *rj = NULL;
	docket_policy_context *x = NULL;
	docket_policy_result *r = NULL;
	char *d;

	assert_int_equal(docket_policy_context_from_json(&x, xj), 0);
	assert_int_equal(docket_policy_result_new(&r), 0);
	assert_int_equal(docket_policy_eval(r, p, c, x), 0);
	assert_int_equal(docket_policy_result_to_json(&rj, r), 0);
	d = json_dumps(rj, JSON_COMPACT);
	json_decref(rj);
	docket_policy_result_free(r);
	docket_policy_context_free(x);
	json_decref(xj);
	return d;
}

/* One args text through jansson + docket_policy_call_from_args and through
 * docket_jv_parse (the tape when it takes the text) + from_jv: the same
 * return, message, verdict and target (call_args_diff). 1 when the tape view
 * took the text. */
static int same_call_both_views(const docket_policy *p, docket_json_tape *tape, const char *tool,
				const char *text, size_t len)
{
	json_t *xj = test_json(CTX);
	docket_policy_context *x = NULL;
	char why[1200] = "";
	int took = 0;

	assert_int_equal(docket_policy_context_from_json(&x, xj), 0);
	if (call_args_diff(p, x, tape, tool, text, len, &took, why, sizeof(why)) != 0)
		fail_msg("%s %.60s: %s", tool, text, why);
	docket_policy_context_free(x);
	json_decref(xj);
	return took;
}

/* `depth` arrays around a string, in an args object. */
static void nested_args(docket_buf *b, size_t depth)
{
	docket_buf_clear(b);
	assert_int_equal(docket_buf_puts(b, "{\"command\":\"ls\",\"x\":"), 0);
	for (size_t i = 0; i < depth; i++)
		assert_int_equal(docket_buf_puts(b, "["), 0);
	assert_int_equal(docket_buf_puts(b, "\"deep\""), 0);
	for (size_t i = 0; i < depth; i++)
		assert_int_equal(docket_buf_puts(b, "]"), 0);
	assert_int_equal(docket_buf_puts(b, "}"), 0);
}

/* The jv path (replay's: simdjson tapes) against the json_t one. */
static void call_from_jv_cases(const docket_policy *p)
{
	/* tool, args text, 1 when the tape must take it (0: jansson's fallback) */
	static const struct {
		const char *tool, *args;
		int tape;
	} cases[] = {
		{ "shell", "{\"command\":[\"bash\",\"-lc\",\"git push\"],\"cwd\":\"/home/u/app\"}", 1 },
		{ "Bash", "{\"command\":\"rm -rf x\"}", 1 },
		{ "exec_command", "{\"cmd\":\"npm run test\",\"sandbox_permissions\":\"require_escalated\"}", 1 },
		{ "shell", "{\"command\":[\"git\",\"status\"],\"prefix_rule\":[\"git\"],\"with_escalated_permissions\":true}", 1 },
		{ "shell", "{\"command\":[\"git\"],\"prefix_rule\":[]}", 1 },
		{ "shell", "{\"command\":[\"git\"],\"sandbox_permissions\":\"bogus\"}", 1 },
		{ "shell", "{\"command\":[\"git\"],\"sandbox_permissions\":1}", 1 },
		{ "shell", "{\"command\":[1]}", 1 },
		{ "shell", "{}", 1 },
		{ "shell", "[]", 1 },
		{ "shell", "null", 1 },
		{ "shell", "\"ls\"", 1 },
		{ "read_file", "{\"path\":\"secrets/k\"}", 1 },
		{ "Read", "{\"file_path\":\"./.env\"}", 1 },
		{ "Read", "{\"file_path\":7}", 1 },
		{ "Write", "{\"file_path\":\"src/a\",\"content\":\"x\"}", 1 },
		{ "write_file", "{}", 1 },
		{ "apply_patch", "{\"changes\":[{\"path\":\"a\",\"op\":\"move\",\"to\":\"/etc/b\"},{\"path\":\"c\"}]}", 1 },
		{ "apply_patch", "{\"changes\":[{\"to\":\"x\"}]}", 1 },
		{ "apply_patch", "{\"changes\":{}}", 1 },
		{ "network", "{\"url\":\"https://Docs.RS:8443/x?q#f\"}", 1 },
		{ "network", "{\"query\":\"lmdb\"}", 1 },
		{ "network", "{\"host\":\"Example.COM\",\"port\":443,\"protocol\":\"https\"}", 1 },
		{ "network", "{\"host\":\"x\",\"port\":65536}", 1 },
		{ "network", "{\"host\":\"x\",\"port\":443.0}", 1 },
		{ "network", "{\"host\":\"x\",\"port\":9223372036854775807}", 1 },
		{ "network", "{\"host\":\"x\",\"port\":-9223372036854775808}", 1 },
		{ "WebFetch", "{\"url\":\"nohost\"}", 1 },
		{ "run_code", "{\"language\":\"python\"}", 1 },
		{ "install_packages", "{\"ecosystem\":\"npm\",\"packages\":[\"left-pad\",\"x\"]}", 1 },
		{ "install_packages", "{\"ecosystem\":\"npm\"}", 1 },
		{ "mcp", "{\"server\":\"github\",\"tool\":\"create_issue\"}", 1 },
		{ "mcp__github__x", "{}", 1 },
		{ "Glob", "{\"pattern\":\"**\"}", 1 },
		/* hostile: NUL in strings (kept, cut or refused as jansson's are) */
		{ "Bash", "{\"command\":\"ls\\u0000 -la\"}", 1 },
		{ "shell", "{\"command\":[\"ls\",\"a\\u0000b\"]}", 1 },
		{ "shell", "{\"command\":[\"ls\"],\"cwd\":\"/a\\u0000\"}", 1 },
		{ "read_file", "{\"path\":\"a\\u0000b\"}", 1 },
		/* ... what the tape view refuses: NUL in a key, duplicate keys,
		 * integers past int64 */
		{ "Bash", "{\"a\\u0000b\":1,\"command\":\"ls\"}", 0 },
		{ "Bash", "{\"command\":\"ls\",\"command\":\"rm -rf /\"}", 0 },
		{ "Bash", "{\"command\":\"ls\",\"x\":{\"k\":1,\"k\":2}}", 0 },
		{ "network", "{\"host\":\"x\",\"port\":18446744073709551615}", 0 },
		{ "network", "{\"host\":\"x\",\"port\":99999999999999999999999}", 0 },
		{ "network", "{\"host\":\"x\",\"port\":-9223372036854775809}", 0 },
		{ "network", "{\"host\":\"x\",\"port\":1e400}", 0 },
		/* ... and what neither parses */
		{ "Bash", "{\"command\":\"\\ud800\"}", 0 },
		{ "Bash", "{\"command\":\"\xff\"}", 0 },
		{ "Bash", "{\"command\":\"ls\"} x", 0 },
		{ "Bash", "{", 0 },
		{ "Bash", "", 0 },
	};
	docket_json_tape *tape = docket_json_tape_new();
	docket_buf deep = DOCKET_BUF_INIT;

	assert_non_null(tape);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (same_call_both_views(p, tape, cases[i].tool, cases[i].args, strlen(cases[i].args)) !=
		    cases[i].tape)
			fail_msg("%s %s: the tape %s it", cases[i].tool, cases[i].args,
				 cases[i].tape ? "refused" : "took");
	/* a NUL byte in the text itself (not JSON) */
	assert_int_equal(same_call_both_views(p, tape, "Bash", "{\"command\":\"l\0s\"}", 17), 0);
	/* nesting: the tape takes 100 levels, refuses 1,500 (simdjson's limit
	 * is 1,024: jansson's 2,048 takes it) and neither takes 3,000 */
	nested_args(&deep, 100);
	assert_int_equal(same_call_both_views(p, tape, "Bash", deep.ptr, deep.len), 1);
	nested_args(&deep, 1500);
	assert_int_equal(same_call_both_views(p, tape, "Bash", deep.ptr, deep.len), 0);
	nested_args(&deep, 3000);
	assert_int_equal(same_call_both_views(p, tape, "Bash", deep.ptr, deep.len), 0);
	docket_buf_dispose(&deep);
	/* no args at all */
	{
		docket_jv none = { NULL, 0 };
		docket_policy_call *c = NULL;

		assert_int_equal(docket_policy_call_from_jv(&c, "Glob", &docket_jv_tape, none), 0);
		docket_policy_call_free(c);
		assert_int_equal(docket_policy_call_from_jv(&c, "Bash", &docket_jv_tape, none), DOCKET_EINVALID);
		assert_int_equal(docket_policy_call_from_args(&c, "Bash", NULL), DOCKET_EINVALID);
		assert_int_equal(docket_policy_call_from_jv(&c, NULL, &docket_jv_tape, none), DOCKET_EINVALID);
		assert_null(c);
	}
	docket_json_tape_free(tape);
}

/* docket_policy_call_from_args (replay's entry point) is from_json of {tool, args} */
static void test_call_from_args(void **state)
{
	static const char *const calls[] = {
		SH("git push"), SH("npm run test && ls"), SH("rm -rf x"), SH("cat $(id)"), SH("git status"),
		RD("secrets/k"), RD("./.env"), WR("src/a"), WR("migrations/1.sql"),
		"{\"tool\":\"Bash\",\"args\":{\"command\":\"curl https://x\"}}",
		"{\"tool\":\"network\",\"args\":{\"url\":\"https://docs.rs/x\"}}",
		"{\"tool\":\"network\",\"args\":{\"query\":\"lmdb\"}}",
		"{\"tool\":\"apply_patch\",\"args\":{\"changes\":[{\"path\":\"a\",\"op\":\"move\",\"to\":\"/etc/b\"}]}}",
		"{\"tool\":\"mcp__github__x\",\"args\":{}}", "{\"tool\":\"mcp__github__y\"}",
	};
	static const char *const bad[] = {
		"{\"tool\":\"shell\",\"args\":[]}", "{\"tool\":\"shell\",\"args\":{\"command\":[1]}}",
		"{\"tool\":\"read_file\",\"args\":{}}", "{\"tool\":\"network\",\"args\":{\"url\":\"nohost\"}}",
	};
	docket_policy *p = load(DOCKET_POLICY_CLAUDE, claude_settings);
	docket_policy_call *c = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		json_t *j = test_json(calls[i]);
		docket_policy_call *a = NULL, *b = NULL;
		char *da, *db;

		if (docket_policy_call_from_json(&a, j) < 0)
			fail_msg("%s: %s", calls[i], docket_error_last()->message);
		assert_int_equal(docket_policy_call_from_args(&b, json_string_value(json_object_get(j, "tool")),
							      json_object_get(j, "args")), 0);
		da = eval_dump(p, a, CTX);
		db = eval_dump(p, b, CTX);
		if (strcmp(da, db) != 0)
			fail_msg("%s: from_json %s, from_args %s", calls[i], da, db);
		free(da);
		free(db);
		docket_policy_call_free(a);
		docket_policy_call_free(b);
		json_decref(j);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = test_json(bad[i]);

		assert_int_equal(docket_policy_call_from_args(&c, json_string_value(json_object_get(j, "tool")),
							      json_object_get(j, "args")), DOCKET_EINVALID);
		assert_null(c);
		json_decref(j);
	}
	assert_int_equal(docket_policy_call_from_args(&c, NULL, NULL), DOCKET_EINVALID);
	assert_null(c);
	call_from_jv_cases(p);
	docket_policy_free(p);
}

static void test_load_sources(void **state)
{
	char *dir = test_mkdtemp();
	char path[4096];
	docket_policy *p = NULL;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/b.rules", dir);
	f = fopen(path, "w");
	fputs("prefix_rule(pattern=[\"git\", \"commit\"], decision=\"forbidden\")\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/a.rules", dir);
	f = fopen(path, "w");
	fputs("prefix_rule(pattern=[\"git\"], decision=\"prompt\")\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "codex:%s", dir);
	assert_int_equal(docket_policy_load(&p, path), 0);
	assert_int_equal(docket_policy_rule_count(p), 2);
	assert_int_equal(docket_policy_get_format(p), DOCKET_POLICY_CODEX);
	assert_string_equal(verdict(p, SH("git commit -m x"), CTX, NULL), "denied");
	docket_policy_free(p);
	assert_int_equal(docket_policy_load(&p, "codex:/nonexistent/x.rules"), DOCKET_ENOTFOUND);
	assert_int_equal(docket_policy_load(&p, "claude:"), DOCKET_EINVALID);
	assert_int_equal(docket_policy_load(&p, ""), DOCKET_EINVALID);
	assert_int_equal(docket_policy_load(&p, "gemini:/nonexistent/x.toml"), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "unknown policy format 'gemini'"));
	test_rmdir_free(dir);
}


/* ---- Claude Code fidelity (each family measured against the real CLI) ---- */

#define CTX_V(v) "{\"platform\":\"linux\",\"cwd\":\"/home/u/app\",\"workspace_roots\":[\"/home/u/app\"]," \
	"\"env\":{\"HOME\":\"/home/u\"},\"runtime\":\"claude-code/" v "\"}"
#define EXPECT(p, call, ctx, want) assert_string_equal(verdict(p, call, ctx, NULL), want)

static void test_claude_wrappers(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE,
		"{\"permissions\":{\"allow\":[\"Bash(printf:*)\"],\"deny\":[\"Bash(rm:*)\"]}}");

	(void)state;
	/* timeout, nohup and time are looked through for allow and deny */
	EXPECT(p, SH("timeout 5 printf a"), CTX, "allowed");
	EXPECT(p, SH("timeout -s KILL 5 printf a"), CTX, "allowed");
	EXPECT(p, SH("nohup printf a"), CTX, "allowed");
	EXPECT(p, SH("time printf a"), CTX, "allowed");
	EXPECT(p, SH("timeout 5 nohup rm x"), CTX, "denied");
	EXPECT(p, SH("time rm x"), CTX, "denied");
	/* env and NAME=VALUE only for deny rules */
	EXPECT(p, SH("env A=1 rm x"), CTX, "denied");
	EXPECT(p, SH("A=1 rm x"), CTX, "denied");
	EXPECT(p, SH("env A=1 printf a"), CTX, "approval_required");
	EXPECT(p, SH("A=1 printf a"), CTX, "approval_required");
	/* not wrappers: a look-alike program, a timeout with no command */
	EXPECT(p, SH("timeouts 5 printf a"), CTX, "approval_required");
	EXPECT(p, SH("timeout printf"), CTX, "approval_required");
	EXPECT(p, SH("nohup"), CTX, "approval_required");
	docket_policy_free(p);
	/* docket YAML keeps its own reading: no wrapper stripping */
	p = load(DOCKET_POLICY_DOCKET, "version: 1\nheuristics: ask\ntools:\n  allow: [\"Bash(printf:*)\"]\n");
	EXPECT(p, SH("timeout 5 printf a"), CTX, "approval_required");
	docket_policy_free(p);
}

static void test_claude_substitution(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE,
		"{\"permissions\":{\"allow\":[\"Bash(echo:*)\"],\"deny\":[\"Bash(rm:*)\"]}}");

	(void)state;
	/* from 2.1.198 on (and when the version is unknown) deny rules look inside */
	EXPECT(p, SH("echo $(rm x)"), CTX, "denied");
	EXPECT(p, SH("echo `rm -f x`"), CTX_V("2.1.328"), "denied");
	EXPECT(p, SH("echo $(A=1 rm x)"), CTX, "denied");
	EXPECT(p, SH("echo $(printf $(rm x))"), CTX, "denied");
	/* 2.1.197 asks for any substitution */
	EXPECT(p, SH("echo $(rm x)"), CTX_V("2.1.197"), "approval_required");
	EXPECT(p, SH("echo $(rm x)"), CTX_V("1.0.3"), "approval_required");
	/* another runtime's version, or no version at all, is not Claude Code's */
	EXPECT(p, SH("echo $(rm x)"), "{\"cwd\":\"/home/u/app\",\"runtime\":\"codex/2.1.197\"}", "denied");
	EXPECT(p, SH("echo $(rm x)"), "{\"cwd\":\"/home/u/app\",\"runtime\":\"claude-code/2.x\"}", "denied");
	/* an allow rule never allows a substitution; an escaped one is text */
	EXPECT(p, SH("echo $(printf a)"), CTX, "approval_required");
	EXPECT(p, SH("echo \\\\$(rm x)"), CTX, "approval_required");
	docket_policy_free(p);
}

static void test_claude_file_args(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"deny\":[\"Read(./secrets/**)\"]}}");

	(void)state;
	EXPECT(p, SH("cat secrets/k"), CTX, "denied");
	EXPECT(p, SH("head -1 secrets/k"), CTX, "denied");
	EXPECT(p, SH("ls secrets"), CTX, "denied");
	EXPECT(p, SH("grep -r x secrets"), CTX, "denied");
	EXPECT(p, SH("cat src/a.c && cat ../app/secrets/k"), CTX, "denied");
	/* read-only commands on files outside the working directories ask */
	EXPECT(p, SH("cat /etc/hostname"), CTX, "approval_required");
	/* negatives: inside and not denied; a pattern is no file; echo reads nothing */
	EXPECT(p, SH("cat src/a.c"), CTX, "allowed");
	EXPECT(p, SH("grep secrets src/a.c"), CTX, "allowed");
	EXPECT(p, SH("echo secrets/k"), CTX, "allowed");
	EXPECT(p, SH("head -n 5 src/a.c"), CTX, "allowed");
	docket_policy_free(p);
}

/* claude_file_reader says which commands have file operands at all: the
 * evaluator looks at no operand of the others (claude_file_arg is false on
 * every one of them). */
static void test_claude_file_reader(void **state)
{
	static const char *const reads[][3] = {
		{ "cat", "a", NULL }, { "/usr/bin/grep", "x", "a" }, { "rg", "-e", "x" }, { "head", "-n", "5" },
	};
	static const char *const not[][3] = {
		{ "echo", "a", "b" }, { "rm", "a", NULL }, { "catx", "a", NULL }, { "ca", "a", NULL }, { "", "a", NULL },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(reads) / sizeof(reads[0]); k++)
		assert_true(claude_file_reader(reads[k], reads[k][2] ? 3 : 2));
	for (size_t k = 0; k < sizeof(not) / sizeof(not[0]); k++) {
		size_t n = not[k][2] ? 3 : 2;

		assert_false(claude_file_reader(not[k], n));
		for (size_t i = 0; i < n; i++)
			assert_false(claude_file_arg(not[k], n, i));
	}
	assert_false(claude_file_reader(reads[0], 0));
}

static void test_claude_accept_edits(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"defaultMode\":\"acceptEdits\"}}");
	json_t *out = NULL;

	(void)state;
	EXPECT(p, SH("touch new.txt"), CTX, "allowed");
	EXPECT(p, SH("mkdir -p d1/d2"), CTX, "allowed");
	EXPECT(p, WR("w.txt"), CTX, "allowed");
	/* sensitive directories and outside paths still ask */
	assert_string_equal(verdict(p, SH("touch .git/x"), CTX, &out), "approval_required");
	assert_true(has_reason_code(out, "sensitive_path"));
	json_decref(out);
	EXPECT(p, SH("mkdir -p .claude/x"), CTX, "approval_required");
	EXPECT(p, SH("touch /tmp/outside"), CTX, "approval_required");
	EXPECT(p, WR(".claude/settings.json"), CTX, "approval_required");
	EXPECT(p, WR(".git/config"), CTX, "approval_required");
	EXPECT(p, WR("/tmp/outside"), CTX, "approval_required");
	/* not file-changing commands: still ask; .gitx is not .git */
	EXPECT(p, SH("python3 -c pass"), CTX, "approval_required");
	EXPECT(p, WR(".gitx/a"), CTX, "allowed");
	docket_policy_free(p);
	/* default mode asks for the same commands */
	p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{}}");
	EXPECT(p, SH("touch new.txt"), CTX, "approval_required");
	docket_policy_free(p);
}

static void test_claude_web(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"deny\":[\"WebFetch(domain:docs.python.org)\"]}}");

#define WF(url) "{\"tool\":\"WebFetch\",\"args\":{\"url\":\"" url "\",\"prompt\":\"x\"}}"
	(void)state;
	EXPECT(p, WF("https://code.claude.com/docs/en/settings"), CTX, "allowed");
	EXPECT(p, WF("https://github.com/anthropics/claude-code"), CTX, "allowed");
	EXPECT(p, WF("https://github.com/anthropics"), CTX, "allowed");
	/* a rule still wins; sub-domains, other paths and encoded separators are not covered */
	EXPECT(p, WF("https://docs.python.org/3/"), CTX, "denied");
	EXPECT(p, WF("https://evil.code.claude.com/x"), CTX, "approval_required");
	EXPECT(p, WF("https://github.com/anthropicsx/y"), CTX, "approval_required");
	EXPECT(p, WF("https://github.com/other/y"), CTX, "approval_required");
	EXPECT(p, WF("https://github.com/anthropics/..%2f..%2fother"), CTX, "approval_required");
	docket_policy_free(p);
#undef WF
}

static void test_claude_tool_names(void **state)
{
	docket_policy *p = load(DOCKET_POLICY_CLAUDE,
		"{\"permissions\":{\"allow\":[\"Write(./src/**)\",\"Edit\"],\"deny\":[\"Write(./notes/**)\"]}}");
#define WRT(path) "{\"tool\":\"Write\",\"args\":{\"file_path\":\"" path "\",\"content\":\"x\"}}"
#define EDIT(path) "{\"tool\":\"Edit\",\"args\":{\"file_path\":\"" path "\",\"old_string\":\"a\",\"new_string\":\"b\"}}"

	(void)state;
	/* Write(path) rules have no effect, a bare Edit does not cover the Write tool */
	EXPECT(p, WRT("src/a.c"), CTX, "approval_required");
	EXPECT(p, WRT("notes/n"), CTX, "approval_required");
	EXPECT(p, WRT("other"), CTX, "approval_required");
	EXPECT(p, EDIT("other"), CTX, "allowed");
	/* write_file (an imported Edit, Write or MultiEdit) counts as Edit */
	EXPECT(p, WR("other"), CTX, "allowed");
	docket_policy_free(p);
	/* Edit(path) rules do cover writes */
	p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"allow\":[\"Edit(./src/**)\"],\"deny\":[\"Edit(./notes/**)\"]}}");
	EXPECT(p, WRT("src/a.c"), CTX, "allowed");
	EXPECT(p, WRT("notes/n"), CTX, "denied");
	EXPECT(p, WRT("other"), CTX, "approval_required");
	docket_policy_free(p);
	/* docket YAML: Write(path) keeps working */
	p = load(DOCKET_POLICY_DOCKET, "version: 1\nheuristics: ask\ntools:\n  allow: [\"Write(./src/**)\"]\n");
	EXPECT(p, WRT("src/a.c"), CTX, "allowed");
	docket_policy_free(p);
#undef EDIT
#undef WRT
}

static void put_file(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static docket_policy *load_scoped(const char *src, const char *scope)
{
	docket_policy *p = NULL;

	if (docket_policy_load_scoped(&p, src, scope) < 0)
		fail_msg("load %s: %s", src, docket_error_last()->message);
	return p;
}

static void test_claude_scopes(void **state)
{
	char *dir = test_mkdtemp(), src[4096], sub[4096];
	const char *old = getenv("HOME");
	char *saved = old ? strdup(old) : NULL;
	docket_policy *p;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/home", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/home/.claude", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/proj", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/proj/.claude", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/home", dir);
	setenv("HOME", sub, 1);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", "/nonexistent", 1);
	put_file(dir, "home/.claude/settings.json", "{\"permissions\":{\"allow\":[\"Bash(make:*)\"],\"defaultMode\":\"acceptEdits\"}}");
	put_file(dir, "proj/.claude/settings.json", "{\"permissions\":{\"deny\":[\"Bash(make install)\"],\"defaultMode\":\"bypassPermissions\"}}");
	put_file(dir, "proj/.claude/settings.local.json", "{\"permissions\":{\"ask\":[\"Bash(make test)\"]}}");
	snprintf(src, sizeof(src), "claude:%s/proj", dir);
	p = load_scoped(src, NULL);
	/* the rules of every scope apply */
	EXPECT(p, SH("make"), CTX, "allowed");
	EXPECT(p, SH("make install"), CTX, "denied");
	EXPECT(p, SH("make test"), CTX, "approval_required");
	/* bypassPermissions from project settings is ignored: the user's acceptEdits holds ... */
	EXPECT(p, WR("a.txt"), CTX, "allowed");
	EXPECT(p, SH("python3 -c pass"), CTX, "approval_required");
	/* ... except for Claude Code up to 2.1.197, which honoured it */
	EXPECT(p, SH("python3 -c pass"), CTX_V("2.1.197"), "allowed");
	docket_policy_free(p);
	/* from user settings it is honoured, unless a scope disables it */
	put_file(dir, "home/.claude/settings.json", "{\"permissions\":{\"defaultMode\":\"bypassPermissions\"}}");
	p = load_scoped(src, NULL);
	EXPECT(p, SH("python3 -c pass"), CTX, "allowed");
	docket_policy_free(p);
	put_file(dir, "proj/.claude/settings.local.json", "{\"permissions\":{\"disableBypassPermissionsMode\":\"disable\"}}");
	p = load_scoped(src, NULL);
	EXPECT(p, SH("python3 -c pass"), CTX, "approval_required");
	docket_policy_free(p);
	/* one file: its place names its scope, or --scope does */
	snprintf(src, sizeof(src), "claude:%s/proj/.claude/settings.json", dir);
	p = load_scoped(src, NULL);
	EXPECT(p, SH("python3 -c pass"), CTX, "approval_required");
	docket_policy_free(p);
	p = load_scoped(src, "user");
	EXPECT(p, SH("python3 -c pass"), CTX, "allowed");
	docket_policy_free(p);
	snprintf(src, sizeof(src), "claude:%s/home/.claude/settings.json", dir);
	p = load_scoped(src, NULL);
	EXPECT(p, SH("python3 -c pass"), CTX, "allowed");
	docket_policy_free(p);
	/* a settings file elsewhere is a --settings file: bypass is honoured */
	put_file(dir, "flag.json", "{\"permissions\":{\"defaultMode\":\"bypassPermissions\"}}");
	snprintf(src, sizeof(src), "claude:%s/flag.json", dir);
	p = load_scoped(src, NULL);
	EXPECT(p, SH("python3 -c pass"), CTX, "allowed");
	docket_policy_free(p);
	/* "manual" is "default" */
	p = load(DOCKET_POLICY_CLAUDE, "{\"permissions\":{\"defaultMode\":\"manual\"}}");
	EXPECT(p, SH("python3 -c pass"), CTX, "approval_required");
	EXPECT(p, SH("ls"), CTX, "allowed");
	docket_policy_free(p);
	/* negatives */
	p = NULL;
	assert_int_equal(docket_policy_load_scoped(&p, src, "team"), DOCKET_EINVALID);
	assert_int_equal(docket_policy_load_scoped(&p, "codex:/x.rules", "user"), DOCKET_EINVALID);
	snprintf(src, sizeof(src), "claude:%s/proj", dir);
	assert_int_equal(docket_policy_load_scoped(&p, src, "project"), DOCKET_EINVALID);
	put_file(dir, "proj/.claude/settings.local.json", "{\"permissions\":{\"defaultMode\":\"yolo\"}}");
	assert_int_equal(docket_policy_load_scoped(&p, src, NULL), DOCKET_EINVALID);
	assert_null(p);
	assert_int_equal(pol_claude_scope_of("/etc/claude-code/managed-settings.json", "/h"), SCOPE_MANAGED);
	assert_int_equal(pol_claude_scope_of("/h/.claude/settings.json", "/h/"), SCOPE_USER);
	assert_int_equal(pol_claude_scope_of("/h/x/.claude/settings.json", "/h"), SCOPE_PROJECT);
	assert_int_equal(pol_claude_scope_of("/h/x/.claude/settings.local.json", "/h"), SCOPE_LOCAL);
	assert_int_equal(pol_claude_scope_of("/h/x/my.claude/settings.json", "/h"), SCOPE_FLAG);
	if (saved)
		setenv("HOME", saved, 1);
	free(saved);
	unsetenv("DOCKET_CLAUDE_MANAGED_SETTINGS");
	test_rmdir_free(dir);
}

/* Every allocation failure is reported as ENOMEM and leaks nothing (run under ASan). */
static void test_alloc_failures(void **state)
{
	int ok = 0;

	(void)state;
	for (long n = 0; n < 2000 && !ok; n++) {
		docket_policy *p = NULL;
		int error;

		docket_alloc_fail_after(n);
		error = docket_policy_load_buffer(&p, DOCKET_POLICY_DOCKET, "t", yaml_policy, strlen(yaml_policy));
		docket_alloc_fail_reset();
		if (error == 0) {
			ok = 1;
			docket_policy_free(p);
		} else {
			assert_int_equal(error, DOCKET_ENOMEM);
		}
	}
	assert_true(ok);
	ok = 0;
	for (long n = 0; n < 2000 && !ok; n++) {
		docket_policy *p = NULL;
		int error;

		docket_alloc_fail_after(n);
		error = docket_policy_load_buffer(&p, DOCKET_POLICY_CLAUDE, "t", claude_settings, strlen(claude_settings));
		docket_alloc_fail_reset();
		if (error == 0) {
			ok = 1;
			docket_policy_free(p);
		} else {
			assert_int_equal(error, DOCKET_ENOMEM);
		}
	}
	assert_true(ok);
}

/* ---- the indexes pol_finalize builds (invariant 4) ---- */

/* matched_rules[i].rule of a result JSON */
static const char *matched_rule(const json_t *out, size_t i)
{
	return json_string_value(json_object_get(json_array_get(json_object_get(out, "matched_rules"), i), "rule"));
}

static void test_rule_indexes(void **state)
{
	/* "*" rules interleaved with Bash and Read rules: each kind keeps source order */
	docket_policy *p = load(DOCKET_POLICY_CLAUDE,
		"{\"permissions\":{\"ask\":[\"Bash(git push *)\",\"*\",\"Read(./a/**)\",\"Bash(git *)\"],"
		"\"deny\":[\"Read(./b/**)\"]}}");
	docket_policy *q = NULL;
	json_t *out = NULL;
	size_t lo = 0, hi = 0;
	pol_tool_rule *t;

	(void)state;
	assert_string_equal(verdict(p, SH("git push origin"), CTX, &out), "approval_required");
	assert_string_equal(matched_rule(out, 0), "Bash(git push *)");
	assert_string_equal(matched_rule(out, 1), "*");
	assert_string_equal(matched_rule(out, 2), "Bash(git *)");
	assert_null(matched_rule(out, 3));
	json_decref(out);
	assert_string_equal(verdict(p, "{\"tool\":\"read_file\",\"args\":{\"path\":\"a/x\"}}", CTX, &out),
			    "approval_required");
	assert_string_equal(matched_rule(out, 0), "*");
	assert_string_equal(matched_rule(out, 1), "Read(./a/**)");
	assert_null(matched_rule(out, 2));
	json_decref(out);
	assert_string_equal(verdict(p, "{\"tool\":\"read_file\",\"args\":{\"path\":\"b/x\"}}", CTX, NULL), "denied");
	docket_policy_free(p);

	/* a program's rules are found by its exact name, not a prefix of it */
	p = load(DOCKET_POLICY_CODEX, "prefix_rule(['git', 'push'], 'forbidden')\nprefix_rule(['gitk'])\n"
				      "prefix_rule(['git'], 'prompt')\nprefix_rule(['cat'])\n");
	assert_true(pol_program_rules(p, "git", &lo, &hi));
	assert_int_equal(hi - lo, 2);
	assert_int_equal(p->prefix_index[lo], 0);   /* source order within the run */
	assert_int_equal(p->prefix_index[lo + 1], 2);
	assert_true(pol_program_rules(p, "gitk", &lo, &hi));
	assert_int_equal(hi - lo, 1);
	assert_false(pol_program_rules(p, "gi", &lo, &hi));
	assert_false(pol_program_rules(p, "", &lo, &hi));
	assert_string_equal(verdict(p, SH("git push x"), CTX, NULL), "denied");
	docket_policy_free(p);

	/* a policy whose indexes were never built is refused, not evaluated without its rules */
	assert_int_equal(pol_new(&q, DOCKET_POLICY_DOCKET, "unfinalized"), 0);
	assert_int_equal(pol_add_tool(q, &t), 0);
	t->kind = TK_BASH;
	t->decision = POL_DENY;
	t->text = "Bash";
	{
		json_t *cj = test_json(SH("curl x"));
		docket_policy_call *c = NULL;
		docket_policy_result *r = NULL;

		assert_int_equal(docket_policy_call_from_json(&c, cj), 0);
		assert_int_equal(docket_policy_result_new(&r), 0);
		assert_true(docket_policy_eval(r, q, c, NULL) < 0);
		assert_true(docket_policy_eval_enforced(r, q, c, NULL) < 0);
		assert_int_equal(pol_finalize(q), 0);
		assert_int_equal(docket_policy_eval(r, q, c, NULL), 0);
		assert_int_equal(docket_policy_result_verdict(r), DOCKET_VERDICT_DENIED);
		docket_policy_result_free(r);
		docket_policy_call_free(c);
		json_decref(cj);
	}
	docket_policy_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_plain),
		cmocka_unit_test(test_split_complex),
		cmocka_unit_test(test_shlex_join),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_rules_negative),
		cmocka_unit_test(test_rules_semantics),
		cmocka_unit_test(test_rules_variables),
		cmocka_unit_test(test_claude_bash),
		cmocka_unit_test(test_claude_paths),
		cmocka_unit_test(test_claude_tools),
		cmocka_unit_test(test_claude_negative),
		cmocka_unit_test(test_claude_origins),
		cmocka_unit_test(test_claude_wrappers),
		cmocka_unit_test(test_claude_substitution),
		cmocka_unit_test(test_claude_file_args),
		cmocka_unit_test(test_claude_file_reader),
		cmocka_unit_test(test_claude_accept_edits),
		cmocka_unit_test(test_claude_web),
		cmocka_unit_test(test_claude_tool_names),
		cmocka_unit_test(test_claude_scopes),
		cmocka_unit_test(test_claude_corpus),
		cmocka_unit_test(test_yaml_model),
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_yaml_negative),
		cmocka_unit_test(test_yaml_author_mistakes),
		cmocka_unit_test(test_examples_convert),
		cmocka_unit_test(test_convert),
		cmocka_unit_test(test_calls_negative),
		cmocka_unit_test(test_call_from_args),
		cmocka_unit_test(test_load_sources),
		cmocka_unit_test(test_alloc_failures),
		cmocka_unit_test(test_rule_indexes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
