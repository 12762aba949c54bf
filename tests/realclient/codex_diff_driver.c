/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codex_diff_driver.c: docket's side of the differential test against
 * `codex execpolicy check` (tests/realclient/codex_diff.py).
 *
 *   codex_diff_driver < CASES.jsonl      one result line per case line
 *   codex_diff_driver --check FIXTURE    compare with the real engine's
 *                                        recorded outcomes; exit 1 on any
 *                                        difference
 *
 * A case is {"files": [TEXT, ...], "argv": [...], "resolve": BOOL}; the
 * files are loaded in order as `--rules` files are. The result is what
 * `codex execpolicy check` prints ({"matchedRules": [...], "decision": D},
 * "decision" absent when nothing matched), or {"error": true} when the
 * files do not load (the real engine exits non-zero). An argv case may name
 * the "cwd" relative program paths resolve against (`./make`).
 *
 *   codex_diff_driver --shell < CASES.jsonl
 *
 * A shell case is {"script": S, "rules": TEXT, "sandbox": MODE[, "cli": V]}:
 * the call `bash -lc S` under approval `never` and that sandbox mode, as
 * codex_diff_shell.py runs it through the real runtime. The answer is
 * {"outcome": O}, O one of allowed, forbidden (a forbidden rule), dangerous
 * (the forced-rm check), prompt (a prompt rule `never` cannot show). A
 * fixture case holding both "script" and "codex" is checked that way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "docket/policy.h"
#include "policy/policy.h"
#include "util/error.h"

#define MAX_ARGV 256
#define MAX_MATCHES 256

static json_t *prefix_match_json(const docket_policy *p, const pol_match *m, const char *const *argv,
				 const char *cwd)
{
	char abs[4096];

	const pol_prefix_rule *r = &p->prefix[m->rule];
	json_t *pfx = json_array(), *o;

	json_array_append_new(pfx, json_string(r->program));
	for (size_t k = 1; k < m->prefix_len; k++)
		json_array_append_new(pfx, json_string(argv[k]));
	o = json_pack("{s:o,s:s}", "matchedPrefix", pfx, "decision", pol_codex_decision_name(r->decision));
	if (m->resolved)
		json_object_set_new(o, "resolvedProgram",
				    json_string(pol_codex_resolve(abs, sizeof(abs), argv[0], cwd) ? abs : argv[0]));
	if (r->justification)
		json_object_set_new(o, "justification", json_string(r->justification));
	return json_pack("{s:o}", "prefixRuleMatch", o);
}

/* Load the case's files into one policy: 0, or -1 when they do not load. */
static int load_files(docket_policy **out, const json_t *files)
{
	docket_policy *p = NULL;
	size_t i;
	const json_t *f;

	if (pol_new(&p, DOCKET_POLICY_CODEX, "diff") < 0)
		return -1;
	json_array_foreach(files, i, f) {
		char name[32];

		snprintf(name, sizeof(name), "f%zu.rules", i);
		if (!json_is_string(f) ||
		    pol_load_codex_rules(p, name, json_string_value(f), json_string_length(f)) < 0)
			goto fail;
	}
	if (pol_finalize(p) < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	docket_error_clear();
	docket_policy_free(p);
	return -1;
}

/* docket's answer for one case, in the real engine's JSON shape. */
static json_t *run_case(const json_t *c)
{
	const json_t *argvj = json_object_get(c, "argv");
	const char *argv[MAX_ARGV];
	pol_match m[MAX_MATCHES];
	docket_policy *p = NULL;
	size_t argc = json_array_size(argvj), n;
	json_t *out, *rules;
	int dec = -1;

	if (argc == 0 || argc > MAX_ARGV || load_files(&p, json_object_get(c, "files")) < 0)
		return json_pack("{s:b}", "error", 1);
	for (size_t i = 0; i < argc; i++)
		argv[i] = json_string_value(json_array_get(argvj, i));
	n = pol_codex_matches_at(p, argv, argc, json_is_true(json_object_get(c, "resolve")),
				 json_string_value(json_object_get(c, "cwd")), m, MAX_MATCHES, 0);
	rules = json_array();
	for (size_t i = 0; i < n; i++) {
		json_array_append_new(rules, prefix_match_json(p, &m[i], argv,
							       json_string_value(json_object_get(c, "cwd"))));
		dec = m[i].decision > dec ? m[i].decision : dec;
	}
	out = json_pack("{s:o}", "matchedRules", rules);
	if (dec >= 0)
		json_object_set_new(out, "decision", json_string(pol_codex_decision_name(dec)));
	docket_policy_free(p);
	return out;
}

static bool has_reason(const docket_policy_result *r, const char *code)
{
	for (size_t i = 0; i < docket_policy_result_reason_count(r); i++)
		if (strcmp(docket_policy_result_reason_code(r, i), code) == 0)
			return true;
	return false;
}

/*
 * The runtime's four outcomes from docket's engine result, as Codex derives
 * its message: the strictest decision wins; a forbidden one names a rule
 * when a forbidden rule matched, else the danger check; a prompt one is
 * refused under `never`.
 */
static const char *classify(const docket_policy_result *r)
{
	if (docket_policy_result_engine_verdict(r) == DOCKET_VERDICT_ALLOWED)
		return "allowed";
	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule >= 0 && r->matches[i].decision == POL_DENY)
			return "forbidden";
	for (size_t g = 0; g < r->nsegs; g++)
		if (r->segs[g].decision == POL_DENY && r->segs[g].why && strcmp(r->segs[g].why, "dangerous") == 0)
			return "dangerous";
	return has_reason(r, "approval_mode") ? "prompt" : "denied";
}

/* docket's engine verdict for a shell case, in the runtime's four outcomes. */
static const char *shell_outcome(const json_t *c)
{
	const char *rules = json_string_value(json_object_get(c, "rules"));
	const char *cli = json_string_value(json_object_get(c, "cli"));
	docket_policy *p = NULL;
	docket_policy_call *call = NULL;
	docket_policy_context *ctx = NULL;
	docket_policy_result *r = NULL;
	json_t *cj, *xj;
	const char *out = "error";

	cj = json_pack("{s:s,s:{s:[s,s,s]}}", "tool", "shell", "args", "command", "bash", "-lc",
		       json_string_value(json_object_get(c, "script")));
	xj = json_pack("{s:s,s:{s:s},s:s}", "approval_policy", "never", "sandbox_policy", "type",
		       json_string_value(json_object_get(c, "sandbox")), "cwd", "/w/proj");
	if (cli)
		json_object_set_new(xj, "runtime", json_sprintf("codex/%s", cli));
	if (!rules || !cj || !xj ||
	    docket_policy_load_buffer(&p, DOCKET_POLICY_CODEX, "default.rules", rules, strlen(rules)) < 0 ||
	    docket_policy_call_from_json(&call, cj) < 0 || docket_policy_context_from_json(&ctx, xj) < 0 ||
	    docket_policy_result_new(&r) < 0 || docket_policy_eval(r, p, call, ctx) < 0)
		goto done;
	out = classify(r);
done:
	docket_error_clear();
	docket_policy_result_free(r);
	docket_policy_context_free(ctx);
	docket_policy_call_free(call);
	docket_policy_free(p);
	json_decref(cj);
	json_decref(xj);
	return out;
}

static json_t *run_any(const json_t *c)
{
	if (json_object_get(c, "script"))
		return json_pack("{s:s}", "outcome", shell_outcome(c));
	return run_case(c);
}

static int stream(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	int error = 0;

	while ((got = getline(&line, &cap, stdin)) > 0) {
		json_error_t jerr;
		json_t *c = json_loadb(line, (size_t)got, 0, &jerr), *r;

		if (!c) {
			fprintf(stderr, "bad case line: %s\n", jerr.text);
			error = 2;
			break;
		}
		r = run_any(c);
		json_dumpf(r, stdout, JSON_COMPACT | JSON_SORT_KEYS);
		fputc('\n', stdout);
		json_decref(r);
		json_decref(c);
	}
	free(line);
	return error;
}

/* per-family counts: fam[name] = [agree, total] */
static void tally(json_t *fam, const char *name, bool ok)
{
	json_t *t = json_object_get(fam, name);

	if (!t) {
		t = json_pack("[i,i]", 0, 0);
		json_object_set_new(fam, name, t);
	}
	json_array_set_new(t, 0, json_integer(json_integer_value(json_array_get(t, 0)) + ok));
	json_array_set_new(t, 1, json_integer(json_integer_value(json_array_get(t, 1)) + 1));
}

static int check(const char *path)
{
	json_error_t jerr;
	json_t *fx = json_load_file(path, 0, &jerr), *c, *fam, *t;
	const char *key;
	size_t i, bad = 0, n;

	if (!fx) {
		fprintf(stderr, "%s: %s\n", path, jerr.text);
		return 2;
	}
	n = json_array_size(json_object_get(fx, "cases"));
	fam = json_object();
	json_array_foreach(json_object_get(fx, "cases"), i, c) {
		json_t *got, *want = json_object_get(c, "codex");

		/* a shell fixture names its rules file and client version once */
		if (json_object_get(c, "script") && !json_object_get(c, "rules"))
			json_object_set(c, "rules", json_object_get(fx, "rules"));
		if (json_object_get(c, "script") && !json_object_get(c, "cli") && json_object_get(fx, "cli"))
			json_object_set(c, "cli", json_object_get(fx, "cli"));
		got = run_any(c);

		if (json_is_string(want))
			want = json_pack("{s:O}", "outcome", want);
		else
			json_incref(want);
		if (!json_equal(got, want)) {
			char *a = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
			char *b = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);

			fprintf(stderr, "case %zu differs:\n  docket %s\n  codex  %s\n", i, a, b);
			free(a);
			free(b);
			bad++;
		}
		if (json_is_string(json_object_get(c, "family")))
			tally(fam, json_string_value(json_object_get(c, "family")), json_equal(got, want));
		json_decref(want);
		json_decref(got);
	}
	json_object_foreach(fam, key, t)
		printf("  %s: %lld/%lld agree\n", key, json_integer_value(json_array_get(t, 0)),
		       json_integer_value(json_array_get(t, 1)));
	json_decref(fam);
	printf("%s: %zu cases, %zu differ from the real engine (%s)\n", path, n, bad,
	       json_string_value(json_object_get(fx, "engine")));
	json_decref(fx);
	return n == 0 || bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--check") == 0)
		return check(argv[2]);
	if (argc == 1 || (argc == 2 && strcmp(argv[1], "--shell") == 0))
		return stream();
	fprintf(stderr, "usage: codex_diff_driver [--check FIXTURE] < CASES.jsonl\n");
	return 2;
}
