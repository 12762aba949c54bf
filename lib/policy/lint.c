/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lint.c: what `docket policy check` finds in a policy that loads
 * (docs/policy.md, "Checking a policy"):
 *
 *   errors    a tool rule naming no tool Claude Code (or docket) has, with
 *             the nearest name ("Raed(./x)": did you mean Read?; in docket
 *             YAML a name near none is a warning: docket records other tool
 *             names as they are); a WebFetch
 *             specifier that is not domain:HOST (Claude Code never matches it)
 *   warnings  a deny or ask rule that the engine (Codex or Claude Code
 *             semantics) does not apply to another spelling of the same
 *             command (`env curl`, `/usr/bin/curl`, `sh -c 'curl ...'`):
 *             found by evaluating those spellings, engine against enforced
 *             verdict; an allow rule for a shell or interpreter (code docket
 *             cannot see into, issue 26)
 *
 * Every finding is {"severity","code","file","line","rule","message"}.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/tool.h"

static int add(json_t *out, const char *severity, const char *code, const pol_origin *o, const char *rule,
	       const char *fmt, ...) DOCKET_PRINTF(6, 7);

static int add(json_t *out, const char *severity, const char *code, const pol_origin *o, const char *rule,
	       const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	json_t *f;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f = json_pack("{s:s,s:s,s:s?,s:I,s:s,s:s}", "severity", severity, "code", code, "file", o ? o->file : NULL,
		      "line", (json_int_t)(o ? o->line : 0), "rule", rule, "message", msg);
	if (!f || json_array_append_new(out, f) < 0)
		return docket_error_set_oom();
	return 0;
}

/* ---- tool names and specifiers ---- */

static int lint_tool(json_t *out, const docket_policy *p, const pol_tool_rule *t)
{
	bool docket = p->format == DOCKET_POLICY_DOCKET;
	const char *near;

	if (t->kind == TK_NAME && !pol_tool_name_known(t->name, docket)) {
		near = pol_tool_name_nearest(t->name, docket);
		if (near)
			return add(out, "error", "unknown_tool", &t->origin, t->text,
				   "unknown tool \"%s\": did you mean %s? (the rule never matches as written)", t->name,
				   near);
		/* docket records other tool names as they are (DESIGN §4): a
		 * docket YAML rule may name one; Claude Code has no such tool */
		if (docket)
			return add(out, "warning", "other_tool", &t->origin, t->text,
				   "\"%s\" is neither a Claude Code nor a docket tool: the rule matches only calls "
				   "recorded under that name", t->name);
		return add(out, "error", "unknown_tool", &t->origin, t->text,
			   "unknown tool \"%s\" (not a Claude Code tool; the rule never matches)", t->name);
	}
	if (t->kind == TK_WEBFETCH && t->spec_kind == SPEC_OTHER) {
		/* a URL where a domain belongs: suggest its host */
		const char *host = t->spec, *end = t->spec + t->spec_len, *sep;

		for (sep = host; sep + 3 <= end && memcmp(sep, "://", 3) != 0; sep++)
			;
		if (sep + 3 <= end)
			host = sep + 3;
		for (sep = host; sep < end && *sep != '/' && *sep != ':'; sep++)
			;
		return add(out, "error", "bad_specifier", &t->origin, t->text,
			   "WebFetch takes domain:HOST (did you mean WebFetch(domain:%.*s)?)", (int)(sep - host), host);
	}
	return 0;
}

/* ---- spellings the engine does not look through ---- */

/* The ways to write argv that a policy author expects a rule to cover. */
enum { SP_ENV, SP_NOHUP, SP_TIMEOUT, SP_ABSPATH, SP_SH_C, SP_SCRIPT, SP_COUNT };

static json_t *words(const char *const *argv, size_t argc)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < argc; i++)
		if (json_array_append_new(a, json_string(argv[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Spelling `how` of argv as a shell call's command; NULL on failure. */
static json_t *spelling(int how, const char *const *argv, size_t argc, docket_buf *tmp)
{
	const char *pre[3] = { NULL, NULL, NULL };
	size_t npre = 0;
	json_t *a;

	docket_buf_clear(tmp);
	switch (how) {
	case SP_ENV: pre[npre++] = "env"; break;
	case SP_NOHUP: pre[npre++] = "nohup"; break;
	case SP_TIMEOUT: pre[npre++] = "timeout"; pre[npre++] = "60"; break;
	case SP_ABSPATH:
		if (argv[0][0] == '/' || docket_buf_printf(tmp, "/usr/bin/%s", argv[0]) < 0)
			return NULL;
		if (!(a = words(argv, argc)) || json_array_set_new(a, 0, json_string(tmp->ptr)) < 0) {
			json_decref(a);
			return NULL;
		}
		return a;
	case SP_SH_C:
	case SP_SCRIPT:
		if (shell_join(tmp, argv, argc) < 0 ||
		    (how == SP_SCRIPT && docket_buf_puts(tmp, " || true") < 0))
			return NULL;
		return json_pack("[s,s,s]", how == SP_SH_C ? "sh" : "bash", how == SP_SH_C ? "-c" : "-lc", tmp->ptr);
	}
	a = words(pre, npre);
	for (size_t i = 0; a && i < argc; i++)
		if (json_array_append_new(a, json_string(argv[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

typedef struct probe {
	docket_policy_result *res;
	docket_policy_context *ctx;
	docket_buf tmp, list;
} probe;

/* Evaluate one spelling: *engine and *enforced get the two verdicts. */
static int probe_one(probe *pr, const docket_policy *p, json_t *cmd, int *engine, int *enforced)
{
	docket_policy_call *call = NULL;
	json_t *args = json_pack("{s:o}", "command", cmd);
	int error;

	if (!args)
		return docket_error_set_oom();
	if ((error = docket_policy_call_from_args(&call, DOCKET_TOOL_SHELL, args)) == 0 &&
	    (error = docket_policy_eval_enforced(pr->res, p, call, pr->ctx)) == 0) {
		*engine = (int)docket_policy_result_engine_verdict(pr->res);
		*enforced = (int)docket_policy_result_verdict(pr->res);
	}
	docket_policy_call_free(call);
	json_decref(args);
	return error;
}

static const char *engine_name(const docket_policy *p)
{
	return p->format == DOCKET_POLICY_CLAUDE ? "Claude Code" : p->format == DOCKET_POLICY_CODEX ? "Codex" :
	       "the engine (Codex semantics)";
}

/* Try every spelling of argv, a command that a rule decides `decision`. */
static int lint_spellings(json_t *out, probe *pr, const docket_policy *p, const char *const *argv, size_t argc,
			  int decision, const char *rule, const pol_origin *o)
{
	size_t leaks = 0, holes = 0;
	int error = 0;

	docket_buf_clear(&pr->list);
	for (int how = 0; how < SP_COUNT && error == 0; how++) {
		json_t *cmd = spelling(how, argv, argc, &pr->tmp);
		docket_buf shown = DOCKET_BUF_INIT;
		int engine = 0, enforced = 0;

		if (!cmd)
			continue;
		if ((error = probe_one(pr, p, json_incref(cmd), &engine, &enforced)) < 0 || engine >= decision) {
			json_decref(cmd);
			continue;
		}
		leaks++;
		holes += enforced < decision;
		if (how == SP_SH_C || how == SP_SCRIPT)
			error = docket_buf_printf(&shown, "%s %s '%s'", json_string_value(json_array_get(cmd, 0)),
						  json_string_value(json_array_get(cmd, 1)),
						  json_string_value(json_array_get(cmd, 2)));
		else
			for (size_t i = 0; i < json_array_size(cmd) && error == 0 && i < argc + 2; i++)
				error = docket_buf_printf(&shown, "%s%s", i ? " " : "",
							  json_string_value(json_array_get(cmd, i)));
		if (error == 0)
			error = docket_buf_printf(&pr->list, "%s`%s` (%s)", pr->list.len ? ", " : "", shown.ptr,
						  docket_policy_verdict_name((docket_verdict)engine));
		docket_buf_dispose(&shown);
		json_decref(cmd);
	}
	if (error < 0 || leaks == 0)
		return error;
	if (holes)
		return add(out, "warning", "spelling_not_covered", o, rule,
			   "%s does not apply this %s rule to %s, and docket's enforced verdict does not either",
			   engine_name(p), pol_decision_name(decision), pr->list.ptr);
	return add(out, "warning", "engine_spelling", o, rule,
		   "%s itself does not apply this %s rule to %s; docket's enforced verdict (hooks, serve) does",
		   engine_name(p), pol_decision_name(decision), pr->list.ptr);
}

static int lint_prefix(json_t *out, probe *pr, const docket_policy *p, const pol_prefix_rule *r)
{
	const char *argv[64];
	size_t argc = 0;

	if (r->decision == POL_ALLOW || r->nrest + 1 > 64)
		return 0;
	argv[argc++] = r->program;
	for (size_t i = 0; i < r->nrest; i++)
		argv[argc++] = r->rest[i].alts[0];
	return lint_spellings(out, pr, p, argv, argc, r->decision, r->text, &r->origin);
}

static int lint_bash(json_t *out, probe *pr, const docket_policy *p, const pol_tool_rule *t)
{
	shell_split sp;
	const char *argv[64];
	char *spec;
	int error = 0;

	if (t->kind != TK_BASH || t->decision == POL_ALLOW ||
	    (t->spec_kind != SPEC_PREFIX && t->spec_kind != SPEC_EXACT))
		return 0;
	if (!(spec = docket_malloc(t->spec_len + 1)))
		return docket_error_set_oom();
	memcpy(spec, t->spec, t->spec_len);
	spec[t->spec_len] = '\0';
	shell_split_init(&sp);
	if ((error = shell_shlex_split(&sp, spec)) == 0 && sp.nwords > 0 && sp.nwords <= 64) {
		for (size_t i = 0; i < sp.nwords; i++)
			argv[i] = sp.text.ptr + sp.word_off[i];
		error = lint_spellings(out, pr, p, argv, sp.nwords, t->decision, t->text, &t->origin);
	} else if (error > 0) {
		error = 0;  /* not shell words: nothing to spell otherwise */
	}
	shell_split_dispose(&sp);
	docket_free(spec);
	return error < 0 && error != DOCKET_ENOMEM ? 0 : error;
}

/* ---- allows of code docket cannot see into ---- */

static const pol_origin *origin_of_text(const docket_policy *p, const char *text)
{
	for (size_t i = 0; i < p->nprefix; i++)
		if (p->prefix[i].text == text || strcmp(p->prefix[i].text, text) == 0)
			return &p->prefix[i].origin;
	for (size_t i = 0; i < p->ntools; i++)
		if (p->tools[i].text == text || strcmp(p->tools[i].text, text) == 0)
			return &p->tools[i].origin;
	return NULL;
}

static int lint_code_allows(json_t *out, const docket_policy *p)
{
	const char *t;
	int error = 0;

	for (size_t i = 0; error == 0 && (t = docket_policy_code_allow(p, i)); i++)
		error = add(out, "warning", "code_allow", origin_of_text(p, t), t,
			    "allows code docket cannot see into (one-liners, script files, piped input): "
			    "whatever it runs is allowed");
	return error;
}

/* In source order: a stable insertion sort by line (findings are few). */
static void sort_by_line(json_t *a)
{
	for (size_t i = 1; i < json_array_size(a); i++) {
		json_t *f = json_incref(json_array_get(a, i));
		json_int_t line = json_integer_value(json_object_get(f, "line"));
		size_t k = i;

		while (k > 0 && json_integer_value(json_object_get(json_array_get(a, k - 1), "line")) > line) {
			json_array_set(a, k, json_array_get(a, k - 1));
			k--;
		}
		json_array_set_new(a, k, f);
	}
}

int docket_policy_lint(json_t **out, const docket_policy *p)
{
	static const char ctx_json[] = "{\"platform\":\"linux\",\"cwd\":\"/work\",\"workspace_roots\":[\"/work\"]}";
	json_t *a = json_array(), *cj = json_loads(ctx_json, 0, NULL);
	probe pr = { NULL, NULL, DOCKET_BUF_INIT, DOCKET_BUF_INIT };
	int error = 0;

	*out = NULL;
	if (!a || !cj)
		error = docket_error_set_oom();
	if (error == 0 && (error = docket_policy_result_new(&pr.res)) == 0)
		error = docket_policy_context_from_json(&pr.ctx, cj);
	for (size_t i = 0; error == 0 && i < p->ntools; i++)
		error = lint_tool(a, p, &p->tools[i]);
	for (size_t i = 0; error == 0 && i < p->nprefix; i++)
		error = lint_prefix(a, &pr, p, &p->prefix[i]);
	for (size_t i = 0; error == 0 && i < p->ntools; i++)
		error = lint_bash(a, &pr, p, &p->tools[i]);
	if (error == 0)
		error = lint_code_allows(a, p);
	docket_buf_dispose(&pr.tmp);
	docket_buf_dispose(&pr.list);
	docket_policy_context_free(pr.ctx);
	docket_policy_result_free(pr.res);
	json_decref(cj);
	if (error < 0) {
		json_decref(a);
		return error;
	}
	sort_by_line(a);
	*out = a;
	return 0;
}
