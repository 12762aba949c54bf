/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_policy_test.c: `docket policy test SRC TESTS...`: run test files
 * (YAML or JSON: calls with the verdict expected, and optionally the
 * deciding rule, a reason, the engine's verdict) against a policy of any
 * format. Prints a diff per failing case (expected vs got) and exits 1 when
 * one fails; --junit FILE writes a JUnit report; --coverage lists the rules
 * no test matched (nor, when the ledger exists, decided a recorded call).
 */
#include "cmd_policy.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "docket/replay.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

typedef struct test_run {
	const docket_policy *p;
	docket_policy_result *res;
	unsigned char *hit;        /* per rule: 1 matched by a test, 2 decided a recorded call */
	size_t nrules;
	json_t *cases;             /* per case: {file, line, name, ok, expected, got | error} */
	size_t passed, failed;
	int verbose;
} test_run;

/* What a case is called: its name, its command, or its call as JSON. */
static json_t *case_name(const json_t *c)
{
	const char *s = json_string_value(json_object_get(c, "name"));
	const char *tool = json_string_value(json_object_get(c, "tool"));
	const char *arg = json_string_value(json_object_get(c, "path"));

	if (!s)
		s = json_string_value(json_object_get(c, "command"));
	if (s)
		return json_string(s);
	if (json_object_get(c, "call")) {
		char *d = json_dumps(json_object_get(c, "call"), JSON_COMPACT);
		json_t *n = d ? json_string(d) : NULL;

		free(d);
		return n;
	}
	if (!arg)
		arg = json_string_value(json_object_get(c, "url"));
	return json_sprintf("%s%s%s", tool ? tool : "", tool && arg ? " " : "", arg ? arg : "");
}

/* The case's call object, checked against the call schema. */
static int case_call(json_t **out, const json_t *c)
{
	int error;

	if (json_object_get(c, "call")) {
		*out = json_incref(json_object_get(c, "call"));
	} else if ((error = docket_policy_call_shorthand(out, json_string_value(json_object_get(c, "command")),
							  json_string_value(json_object_get(c, "tool")),
							  json_string_value(json_object_get(c, "path")),
							  json_string_value(json_object_get(c, "url")))) < 0) {
		return error;
	}
	if ((error = policy_call_check("call", *out)) < 0) {
		json_decref(*out);
		*out = NULL;
	}
	return error;
}

/* The deciding rule as "FILE:LINE: RULE" (as far as known), or "none". */
static json_t *deciding_rule(const docket_policy *p, const docket_policy_result *res)
{
	unsigned line = 0;
	const char *rule = docket_policy_result_deciding_rule(res, &line), *file = NULL;
	size_t k;

	if (!rule)
		return json_string("none");
	for (size_t i = 0; !file && (k = docket_policy_result_match_index(res, i)) != (size_t)-1; i++) {
		const char *f;
		unsigned l;

		if (docket_policy_rule(p, k, &f, &l, NULL) == rule && l == line)
			file = f;
	}
	if (file && line)
		return json_sprintf("%s:%u: %s", file, line, rule);
	return json_string(rule);
}

/* Mark every rule the result matched. */
static void mark_hits(test_run *r)
{
	size_t k;

	for (size_t i = 0; (k = docket_policy_result_match_index(r->res, i)) != (size_t)-1; i++)
		if (k < r->nrules)
			r->hit[k] |= 1;
}

/* What the evaluation got, as the case's keys. */
static json_t *got_of(const docket_policy *p, const docket_policy_result *res)
{
	json_t *reasons = json_array(), *got;

	for (size_t i = 0; reasons && i < docket_policy_result_reason_count(res); i++)
		json_array_append_new(reasons, json_pack("{s:s,s:s}", "code", docket_policy_result_reason_code(res, i),
							 "text", docket_policy_result_reason_text(res, i)));
	got = json_pack("{s:s,s:s,s:o,s:o}", "expect", docket_policy_verdict_name(docket_policy_result_verdict(res)),
			"engine", docket_policy_verdict_name(docket_policy_result_engine_verdict(res)), "rule",
			deciding_rule(p, res), "reasons", reasons ? reasons : json_array());
	return got;
}

static int reason_holds(const json_t *got, const char *want)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(got, "reasons"), i, e) {
		const char *code = json_string_value(json_object_get(e, "code"));
		const char *text = json_string_value(json_object_get(e, "text"));

		if ((code && strcmp(code, want) == 0) || (text && strstr(text, want)))
			return 1;
	}
	return 0;
}

/* 1 when everything the case expects holds. The rule is a substring of
 * "line N: RULE" ("none": no rule decided); the reason a code or part of a
 * reason's text. */
static int case_holds(const json_t *c, const json_t *got)
{
	const char *want, *rule = json_string_value(json_object_get(got, "rule"));

	if (strcmp(json_string_value(json_object_get(c, "expect")), json_string_value(json_object_get(got, "expect"))))
		return 0;
	if ((want = json_string_value(json_object_get(c, "engine"))) &&
	    strcmp(want, json_string_value(json_object_get(got, "engine"))) != 0)
		return 0;
	if ((want = json_string_value(json_object_get(c, "rule"))) &&
	    (strcmp(want, "none") == 0 ? strcmp(rule, "none") != 0 : !strstr(rule, want)))
		return 0;
	if ((want = json_string_value(json_object_get(c, "reason"))) && !reason_holds(got, want))
		return 0;
	return 1;
}

/* The context of a case: the file's, with the case's keys over it. */
static int case_context(docket_policy_context **out, const json_t *file_ctx, const json_t *c)
{
	json_t *merged = file_ctx ? json_deep_copy(file_ctx) : json_object();
	int error;

	if (!merged)
		return docket_error_set_oom();
	if (json_object_get(c, "context"))
		json_object_update(merged, json_object_get(c, "context"));
	error = docket_policy_context_from_json(out, merged);
	json_decref(merged);
	return error;
}

/* Run one case; its record goes to r->cases. Fails only with ENOMEM. */
static int run_case(test_run *r, const char *file, const json_t *file_ctx, const json_t *c)
{
	docket_policy_context *ctx = NULL;
	docket_policy_call *call = NULL;
	json_t *cj = NULL, *got = NULL, *rec = NULL, *expected;
	json_t *name = case_name(c);
	int error, ok = 0;

	if (!name)
		return docket_error_set_oom();
	expected = json_deep_copy(c);
	json_object_del(expected, "line");
	json_object_del(expected, "name");
	if ((error = case_call(&cj, c)) == 0 && (error = case_context(&ctx, file_ctx, c)) == 0 &&
	    (error = docket_policy_call_from_json(&call, cj)) == 0 &&
	    (error = docket_policy_eval_enforced(r->res, r->p, call, ctx)) == 0) {
		mark_hits(r);
		got = got_of(r->p, r->res);
		ok = got && case_holds(c, got);
	}
	rec = json_pack("{s:s,s:O,s:o,s:b,s:o}", "file", file, "line", json_object_get(c, "line"), "name", name,
			"ok", ok, "expected", expected);
	if (rec && got)
		json_object_set_new(rec, "got", got);
	else if (rec && error != DOCKET_ENOMEM)
		json_object_set_new(rec, "error", json_string(docket_error_last()->message));
	else
		json_decref(got);
	docket_policy_call_free(call);
	docket_policy_context_free(ctx);
	json_decref(cj);
	if (error == DOCKET_ENOMEM || !rec || json_array_append_new(r->cases, rec) < 0)
		return docket_error_set_oom();
	if (ok)
		r->passed++;
	else
		r->failed++;
	return 0;
}

static int run_file(test_run *r, const char *path)
{
	docket_buf text = DOCKET_BUF_INIT;
	json_t *t = NULL, *c;
	size_t i;
	int error;

	if ((error = docket_buf_read_path(&text, path)) < 0) {
		cli_error("%s: cannot read the test file", path);
		docket_buf_dispose(&text);
		return CLI_EXIT_USAGE;
	}
	if ((error = docket_policy_tests_parse(&t, path, text.ptr ? text.ptr : "", text.len)) < 0) {
		docket_buf_dispose(&text);
		return cli_fail(error, "bad test file");
	}
	json_array_foreach(json_object_get(t, "tests"), i, c)
		if ((error = run_case(r, path, json_object_get(t, "context"), c)) < 0)
			break;
	json_decref(t);
	docket_buf_dispose(&text);
	return error < 0 ? cli_fail(error, "cannot run the tests") : CLI_EXIT_OK;
}

/* A failing case as a diff: what it expects (the keys it names), what it got. */
static void print_case(const test_run *r, const json_t *rec)
{
	static const char *const keys[] = { "engine", "rule", "reason", NULL };
	const json_t *exp = json_object_get(rec, "expected"), *got = json_object_get(rec, "got");
	size_t i;
	json_t *e;

	if (json_is_true(json_object_get(rec, "ok"))) {
		if (r->verbose)
			printf("ok   %s:%lld  %s\n", json_string_value(json_object_get(rec, "file")),
			       (long long)json_integer_value(json_object_get(rec, "line")),
			       json_string_value(json_object_get(rec, "name")));
		return;
	}
	printf("FAIL %s:%lld  %s\n", json_string_value(json_object_get(rec, "file")),
	       (long long)json_integer_value(json_object_get(rec, "line")), json_string_value(json_object_get(rec, "name")));
	printf("  - expected: %s", json_string_value(json_object_get(exp, "expect")));
	for (size_t k = 0; keys[k]; k++)
		if (json_object_get(exp, keys[k]))
			printf("  %s: %s", keys[k], json_string_value(json_object_get(exp, keys[k])));
	putchar('\n');
	if (!got) {
		printf("  + error:    %s\n", json_string_value(json_object_get(rec, "error")));
		return;
	}
	printf("  + got:      %s", json_string_value(json_object_get(got, "expect")));
	if (json_object_get(exp, "engine") ||
	    strcmp(json_string_value(json_object_get(got, "engine")), json_string_value(json_object_get(got, "expect"))))
		printf("  engine: %s", json_string_value(json_object_get(got, "engine")));
	printf("  rule: %s  reason:", json_string_value(json_object_get(got, "rule")));
	json_array_foreach(json_object_get(got, "reasons"), i, e)
		printf("%s %s", i ? "," : "", json_string_value(json_object_get(e, "code")));
	putchar('\n');
}

/* ---- coverage ---- */

/* Rules from one place (a pattern's alternatives) count once: group[i] is
 * the first rule with i's file and line (i itself when the line is unknown). */
static int rule_groups(size_t **out, const docket_policy *p, size_t n)
{
	size_t *group = docket_calloc(n + 1, sizeof(*group));

	if (!group)
		return docket_error_set_oom();
	for (size_t i = 0; i < n; i++) {
		const char *fi, *fk;
		unsigned li, lk;

		group[i] = i;
		docket_policy_rule(p, i, &fi, &li, NULL);
		/* the alternatives of one rule are neighbours */
		if (li && i > 0) {
			docket_policy_rule(p, i - 1, &fk, &lk, NULL);
			if (lk == li && fk && fi && strcmp(fk, fi) == 0)
				group[i] = group[i - 1];
		}
	}
	*out = group;
	return 0;
}

typedef struct ledger_cov {
	test_run *r;
	size_t calls;
} ledger_cov;

static int ledger_cb(void *arg, const docket_replay_call *call)
{
	ledger_cov *lc = arg;

	lc->calls++;
	if (!call->rule)
		return 0;
	for (size_t i = 0; i < lc->r->nrules; i++) {
		unsigned line;
		const char *t = docket_policy_rule(lc->r->p, i, NULL, &line, NULL);

		if (strcmp(t, call->rule) == 0 && (call->rule_line == 0 || line == call->rule_line))
			lc->r->hit[i] |= 2;
	}
	return 0;
}

/* Replay the ledger's recorded calls (when it exists) to mark the rules that
 * decided one; *calls gets how many; an exit code. */
static int ledger_coverage(test_run *r, const cli_global *g, size_t *calls)
{
	docket_replay_options opts = DOCKET_REPLAY_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	ledger_cov lc = { r, 0 };
	struct stat st;
	int rc, error;

	*calls = 0;
	if (stat(g->ledger_path, &st) != 0)
		return CLI_EXIT_OK;
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	opts.threads = 1;
	if ((error = docket_replay_run(ledger, NULL, &r->p, 1, &opts, ledger_cb, &lc)) < 0)
		rc = cli_fail(error, "cannot replay the ledger");
	docket_ledger_free(ledger);
	*calls = lc.calls;
	return rc;
}

static json_t *coverage_json(const test_run *r, size_t calls, const char *ledger)
{
	json_t *never = json_array(), *o;
	size_t groups = 0, covered = 0, *group = NULL;

	if (!never || rule_groups(&group, r->p, r->nrules) < 0) {
		json_decref(never);
		return NULL;
	}
	for (size_t i = 0; i < r->nrules; i++) {
		const char *file;
		unsigned line;
		const char *text = docket_policy_rule(r->p, i, &file, &line, NULL);
		unsigned char hit = 0;

		if (group[i] != i)
			continue;
		for (size_t k = i; k < r->nrules && group[k] == i; k++)
			hit |= r->hit[k];
		groups++;
		if (hit) {
			covered++;
			continue;
		}
		json_array_append_new(never, json_pack("{s:s,s:s?,s:I}", "rule", text, "file", file, "line",
							(json_int_t)line));
	}
	docket_free(group);
	o = json_pack("{s:I,s:I,s:o}", "rules", (json_int_t)groups, "matched", (json_int_t)covered, "never_matched",
		      never);
	if (o && ledger)
		json_object_set_new(o, "recorded_calls", json_pack("{s:s,s:I}", "ledger", ledger, "calls", (json_int_t)calls));
	return o;
}

static void print_coverage(const json_t *cov, size_t ntests)
{
	const json_t *rec = json_object_get(cov, "recorded_calls");
	size_t i;
	json_t *e;

	printf("coverage: %lld of %lld rules matched by %zu test%s",
	       (long long)json_integer_value(json_object_get(cov, "matched")),
	       (long long)json_integer_value(json_object_get(cov, "rules")), ntests, ntests == 1 ? "" : "s");
	if (rec)
		printf(" or decided one of %lld recorded calls (%s)",
		       (long long)json_integer_value(json_object_get(rec, "calls")),
		       json_string_value(json_object_get(rec, "ledger")));
	putchar('\n');
	json_array_foreach(json_object_get(cov, "never_matched"), i, e) {
		if (i == 0)
			printf("never matched:\n");
		if (json_integer_value(json_object_get(e, "line")))
			printf("  %s:%lld  %s\n", json_string_value(json_object_get(e, "file")),
			       (long long)json_integer_value(json_object_get(e, "line")),
			       json_string_value(json_object_get(e, "rule")));
		else
			printf("  %s  %s\n", json_string_value(json_object_get(e, "file")) ?
			       json_string_value(json_object_get(e, "file")) : "", json_string_value(json_object_get(e, "rule")));
	}
}

/* ---- JUnit ---- */

static void xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

static int write_junit(const test_run *r, const char *path)
{
	FILE *f = fopen(path, "w");
	size_t i;
	json_t *rec;

	if (!f) {
		cli_error("--junit: cannot write %s", path);
		return CLI_EXIT_SYSTEM;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"docket policy test\" tests=\"%zu\" "
		"failures=\"%zu\">\n<testsuite name=\"policy\" tests=\"%zu\" failures=\"%zu\">\n", r->passed + r->failed,
		r->failed, r->passed + r->failed, r->failed);
	json_array_foreach(r->cases, i, rec) {
		const json_t *got = json_object_get(rec, "got");

		fputs("  <testcase classname=\"", f);
		xml_text(f, json_string_value(json_object_get(rec, "file")));
		fprintf(f, ":%lld\" name=\"", (long long)json_integer_value(json_object_get(rec, "line")));
		xml_text(f, json_string_value(json_object_get(rec, "name")));
		if (json_is_true(json_object_get(rec, "ok"))) {
			fputs("\"/>\n", f);
			continue;
		}
		fputs("\">\n    <failure message=\"expected ", f);
		xml_text(f, json_string_value(json_object_get(json_object_get(rec, "expected"), "expect")));
		fputs(", got ", f);
		xml_text(f, got ? json_string_value(json_object_get(got, "expect")) :
				  json_string_value(json_object_get(rec, "error")));
		fputs("\">", f);
		if (got) {
			docket_buf b = DOCKET_BUF_INIT;

			if (docket_json_dump(&b, got) == 0)
				xml_text(f, b.ptr);
			docket_buf_dispose(&b);
		}
		fputs("</failure>\n  </testcase>\n", f);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
	if (fclose(f) != 0) {
		cli_error("--junit: cannot write %s", path);
		return CLI_EXIT_SYSTEM;
	}
	return CLI_EXIT_OK;
}

int policy_sub_test(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	const char *src = NULL, *scope = NULL, *junit = NULL;
	int json = 0, coverage = 0, verbose = 0, rc, error;
	cli_args files = { NULL, 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "SRC", 0, &src, NULL, POLICY_SRC_HELP, CLI_OPT_REQUIRED },
		{ CLI_OPT_ARGS, "TESTS", 0, &files, NULL, "test files (YAML or JSON; docs/policy.md \"Testing a policy\")", CLI_OPT_REQUIRED },
		POLICY_SCOPE_OPT(&scope),
		{ CLI_OPT_STRING, "junit", 0, &junit, "FILE", "also write a JUnit report to FILE", 0 },
		{ CLI_OPT_SWITCH, "coverage", 0, &coverage, NULL, "list the rules no test matched (nor decided a call recorded in the ledger, when it exists)", 0 },
		{ CLI_OPT_SWITCH, "verbose", 'v', &verbose, NULL, "list passing cases too", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_policy *p = NULL;
	test_run r = { 0 };
	json_t *cov = NULL;
	size_t calls = 0, i;
	json_t *rec;

	if ((rc = cli_parse(cmd, opts,
			    "Runs test files against the policy: each case is a call with the verdict it must get.\n"
			    "Exit 0 all passed, 1 a case failed (a diff each), 2 bad policy or test file.\n",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = policy_load(&p, src, scope)) != CLI_EXIT_OK)
		return rc;
	r.p = p;
	r.verbose = verbose;
	r.nrules = docket_policy_rule_count(p);
	if (!(r.cases = json_array()) || !(r.hit = docket_calloc(r.nrules + 1, 1)) ||
	    (error = docket_policy_result_new(&r.res)) < 0) {
		rc = cli_fail_oom();
		goto cleanup;
	}
	for (int f = 0; f < files.n && rc == CLI_EXIT_OK; f++)
		rc = run_file(&r, files.v[f]);
	if (rc != CLI_EXIT_OK)
		goto cleanup;
	if (coverage) {
		int have = 0;
		struct stat st;

		have = stat(g->ledger_path, &st) == 0;
		if ((rc = ledger_coverage(&r, g, &calls)) != CLI_EXIT_OK)
			goto cleanup;
		if (!(cov = coverage_json(&r, calls, have ? g->ledger_path : NULL))) {
			rc = cli_fail_oom();
			goto cleanup;
		}
	}
	if (junit && (rc = write_junit(&r, junit)) != CLI_EXIT_OK)
		goto cleanup;
	if (json) {
		json_t *o = json_pack("{s:I,s:I,s:O}", "passed", (json_int_t)r.passed, "failed", (json_int_t)r.failed,
				      "cases", r.cases);

		if (o && cov)
			json_object_set(o, "coverage", cov);
		cli_json_pretty(stdout, o);
		json_decref(o);
	} else {
		json_array_foreach(r.cases, i, rec)
			print_case(&r, rec);
		printf("%zu test%s, %zu passed, %zu failed\n", r.passed + r.failed, r.passed + r.failed == 1 ? "" : "s",
		       r.passed, r.failed);
		if (cov)
			print_coverage(cov, r.passed + r.failed);
	}
	rc = r.failed ? CLI_EXIT_FOUND : CLI_EXIT_OK;
cleanup:
	json_decref(cov);
	json_decref(r.cases);
	docket_free(r.hit);
	docket_policy_result_free(r.res);
	docket_policy_free(p);
	return rc;
}
