/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policytest.c: what `docket policy test` and `policy eval` need from the
 * policy engine (docs/policy.md, "Testing a policy"): test files read into
 * JSON (YAML or JSON, each case with its line), calls from their shorthands
 * (a command line split like a shell, a tool with a path or a URL), and the
 * rules of a policy by index with the rules a result matched (coverage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/tool.h"

/* Nesting deeper than this is refused (a test file is never this deep). */
#define TESTS_MAX_DEPTH 64

/* The line and column of a node: its own token, or its first key or item. */
static void pos_of(struct fy_node *n, int *line, int *col)
{
	const struct fy_mark *m = NULL;
	void *it = NULL;

	for (int depth = 0; n && depth < TESTS_MAX_DEPTH; depth++) {
		struct fy_token *t = fy_node_get_scalar_token(n);

		if (t) {
			m = fy_token_start_mark(t);
			break;
		}
		it = NULL;
		if (fy_node_is_mapping(n)) {
			struct fy_node_pair *pair = fy_node_mapping_iterate(n, &it);

			n = pair ? fy_node_pair_key(pair) : NULL;
		} else {
			n = fy_node_is_sequence(n) ? fy_node_sequence_iterate(n, &it) : NULL;
		}
	}
	*line = m ? m->line + 1 : 0;
	*col = m ? m->column + 1 : 0;
}

typedef struct tctx {
	const char *name;
} tctx;

static int terr(const tctx *t, struct fy_node *at, const char *what)
{
	int line, col;

	pos_of(at, &line, &col);
	return docket_error_set(DOCKET_EINVALID, "%s:%d:%d: %s", t->name, line, col, what);
}

/* A plain scalar that reads as JSON (true, false, null, an integer) is that. */
static json_t *plain_scalar(const char *s, size_t len)
{
	char buf[32];
	char *end;
	long long v;

	if (len == 4 && memcmp(s, "true", 4) == 0)
		return json_true();
	if (len == 5 && memcmp(s, "false", 5) == 0)
		return json_false();
	if ((len == 4 && memcmp(s, "null", 4) == 0) || (len == 1 && s[0] == '~'))
		return json_null();
	if (len > 0 && len < sizeof(buf) && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		v = strtoll(buf, &end, 10);
		if (*end == '\0')
			return json_integer(v);
	}
	return json_stringn(s, len);
}

static int to_json(const tctx *t, struct fy_node *n, json_t **out, int depth);

static int mapping_to_json(const tctx *t, struct fy_node *n, json_t *o, int depth)
{
	void *it = NULL;
	struct fy_node_pair *pair;
	int error;

	while ((pair = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *k = fy_node_pair_key(pair);
		const char *ks;
		size_t klen;
		char key[256];
		json_t *v = NULL;

		if (!k || !fy_node_is_scalar(k) || !(ks = fy_node_get_scalar(k, &klen)) || klen >= sizeof(key) ||
		    memchr(ks, '\0', klen))
			return terr(t, k ? k : n, "expected a short string key");
		memcpy(key, ks, klen);
		key[klen] = '\0';
		if (json_object_get(o, key))
			return terr(t, k, "duplicate key");
		if ((error = to_json(t, fy_node_pair_value(pair), &v, depth + 1)) < 0)
			return error;
		if (json_object_set_new(o, key, v) < 0)
			return docket_error_set(DOCKET_EINVALID, "%s: key is not UTF-8", t->name);
	}
	return 0;
}

/* A YAML node as JSON (strings stay strings unless plain and JSON-like). */
static int to_json(const tctx *t, struct fy_node *n, json_t **out, int depth)
{
	int error = 0;

	*out = NULL;
	if (depth > TESTS_MAX_DEPTH)
		return terr(t, n, "nested too deeply");
	if (!n) {
		*out = json_null();
	} else if (fy_node_is_scalar(n)) {
		size_t len;
		const char *s = fy_node_get_scalar(n, &len);

		if (!s)
			return terr(t, n, "bad scalar");
		if (memchr(s, '\0', len))
			return terr(t, n, "NUL byte in string");
		*out = fy_node_get_style(n) == FYNS_PLAIN ? plain_scalar(s, len) : json_stringn(s, len);
	} else if (fy_node_is_sequence(n)) {
		void *it = NULL;
		struct fy_node *e;

		*out = json_array();
		while (*out && error == 0 && (e = fy_node_sequence_iterate(n, &it))) {
			json_t *v = NULL;

			if ((error = to_json(t, e, &v, depth + 1)) == 0 && json_array_append_new(*out, v) < 0)
				error = docket_error_set_oom();
		}
	} else if (fy_node_is_mapping(n)) {
		*out = json_object();
		if (*out)
			error = mapping_to_json(t, n, *out, depth);
	} else {
		return terr(t, n, "unsupported YAML node (alias?)");
	}
	if (error == 0 && !*out)
		error = docket_error_set_oom();
	if (error < 0) {
		json_decref(*out);
		*out = NULL;
	}
	return error;
}

static const char *const case_keys[] = { "name", "call", "command", "tool", "path", "url", "context",
					 "expect", "engine", "rule", "reason", NULL };

static bool is_verdict(const json_t *v)
{
	static const char *const names[] = { "allowed", "approval_required", "denied", "unsupported", NULL };

	for (size_t i = 0; json_is_string(v) && names[i]; i++)
		if (strcmp(json_string_value(v), names[i]) == 0)
			return true;
	return false;
}

/* One case: known keys, an expect verdict, exactly one way to give the call. */
static int check_case(const tctx *t, struct fy_node *n, json_t *c)
{
	const char *key;
	json_t *v;
	int ways;
	char msg[320];

	if (!json_is_object(c))
		return terr(t, n, "a test case must be a mapping (name, command or call, expect, ...)");
	json_object_foreach(c, key, v) {
		size_t i;

		for (i = 0; case_keys[i] && strcmp(case_keys[i], key) != 0; i++)
			;
		if (!case_keys[i]) {
			snprintf(msg, sizeof(msg), "unknown key \"%s\" in a test case (expected name, command, call, tool, "
				 "path, url, context, expect, engine, rule, reason)", key);
			return terr(t, n, msg);
		}
		if (strcmp(key, "call") != 0 && strcmp(key, "context") != 0 && !json_is_string(v)) {
			snprintf(msg, sizeof(msg), "%s: expected a string", key);
			return terr(t, n, msg);
		}
	}
	if (!json_object_get(c, "expect"))
		return terr(t, n, "a test case needs expect (allowed, approval_required, denied or unsupported)");
	if (!is_verdict(json_object_get(c, "expect")) ||
	    (json_object_get(c, "engine") && !is_verdict(json_object_get(c, "engine"))))
		return terr(t, n, "expect and engine are one of allowed, approval_required, denied, unsupported");
	ways = !!json_object_get(c, "call") + !!json_object_get(c, "command") +
	       !!(json_object_get(c, "tool") || json_object_get(c, "path") || json_object_get(c, "url"));
	if (ways != 1)
		return terr(t, n, "a test case needs exactly one of call, command, or tool/path/url");
	if (json_object_get(c, "call") && !json_is_object(json_object_get(c, "call")))
		return terr(t, n, "call: expected a mapping {tool, args}");
	if (json_object_get(c, "context") && !json_is_object(json_object_get(c, "context")))
		return terr(t, n, "context: expected a mapping");
	return 0;
}

static int tests_of(const tctx *t, struct fy_node *list, json_t *cases)
{
	void *it = NULL;
	struct fy_node *e;
	int error;

	if (!fy_node_is_sequence(list))
		return terr(t, list, "tests: expected a list of test cases");
	while ((e = fy_node_sequence_iterate(list, &it))) {
		json_t *c = NULL;
		int line, col;

		if ((error = to_json(t, e, &c, 1)) < 0)
			return error;
		if ((error = check_case(t, e, c)) < 0) {
			json_decref(c);
			return error;
		}
		pos_of(e, &line, &col);
		if (json_object_set_new(c, "line", json_integer(line)) < 0 || json_array_append_new(cases, c) < 0)
			return docket_error_set_oom();
	}
	return 0;
}

int docket_policy_tests_parse(json_t **out, const char *name, const char *text, size_t len)
{
	struct fy_document *doc = NULL;
	struct fy_node *root, *list = NULL;
	json_t *o = NULL, *cases = NULL, *ctx = NULL;
	tctx t = { name };
	int error;

	*out = NULL;
	if ((error = pol_yaml_parse(&doc, name, text, len, "no tests (expected tests: [...])")) < 0)
		return error;
	root = fy_document_root(doc);
	if (fy_node_is_sequence(root)) {
		list = root;
	} else if (fy_node_is_mapping(root)) {
		void *it = NULL;
		struct fy_node_pair *pair;

		while ((pair = fy_node_mapping_iterate(root, &it))) {
			struct fy_node *k = fy_node_pair_key(pair);
			const char *ks = k && fy_node_is_scalar(k) ? fy_node_get_scalar0(k) : NULL;

			if (ks && strcmp(ks, "tests") == 0) {
				list = fy_node_pair_value(pair);
			} else if (ks && strcmp(ks, "context") == 0) {
				if ((error = to_json(&t, fy_node_pair_value(pair), &ctx, 1)) < 0)
					goto cleanup;
				if (!json_is_object(ctx)) {
					error = terr(&t, k, "context: expected a mapping");
					goto cleanup;
				}
			} else {
				error = terr(&t, k, "unknown key at the top level of a test file (expected tests, context)");
				goto cleanup;
			}
		}
	}
	if (!list) {
		error = terr(&t, root, "expected tests: [...] (or a list of test cases)");
		goto cleanup;
	}
	if (!(cases = json_array()) || !(o = json_object())) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = tests_of(&t, list, cases)) < 0)
		goto cleanup;
	if (json_object_set(o, "tests", cases) < 0 || (ctx && json_object_set(o, "context", ctx) < 0)) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	*out = o;
	o = NULL;
cleanup:
	json_decref(o);
	json_decref(cases);
	json_decref(ctx);
	fy_document_destroy(doc);
	return error;
}

int docket_policy_split_command(json_t **out, const char *line)
{
	shell_split sp;
	json_t *a = NULL;
	int error;

	*out = NULL;
	shell_split_init(&sp);
	if ((error = shell_shlex_split(&sp, line)) == DOCKET_ENOMEM)
		goto cleanup;
	if (error != 0) {
		error = docket_error_set(DOCKET_EINVALID, "cannot split \"%s\" like a shell (unbalanced quotes?)", line);
		goto cleanup;
	}
	if (sp.nwords == 0) {
		error = docket_error_set(DOCKET_EINVALID, "empty command");
		goto cleanup;
	}
	if (!(a = json_array())) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	for (size_t i = 0; i < sp.nwords; i++)
		if (json_array_append_new(a, json_string(sp.text.ptr + sp.word_off[i])) < 0) {
			error = docket_error_set(DOCKET_EINVALID, "a word of \"%s\" is not UTF-8", line);
			goto cleanup;
		}
	*out = a;
	a = NULL;
cleanup:
	json_decref(a);
	shell_split_dispose(&sp);
	return error;
}

int docket_policy_call_shorthand(json_t **out, const char *command, const char *tool, const char *path,
				 const char *url)
{
	json_t *args = NULL, *argv = NULL;
	int error;

	*out = NULL;
	if (command && (tool || path || url))
		return docket_error_set(DOCKET_EINVALID, "a command is a shell call: no tool, path or url with it");
	if (path && url)
		return docket_error_set(DOCKET_EINVALID, "a call has a path or a url, not both");
	if (command) {
		if ((error = docket_policy_split_command(&argv, command)) < 0)
			return error;
		args = json_pack("{s:o}", "command", argv);
		tool = DOCKET_TOOL_SHELL;
	} else if (path || url) {
		args = json_pack("{s:s}", path ? "path" : "url", path ? path : url);
		if (!tool)
			tool = path ? DOCKET_TOOL_READ_FILE : DOCKET_TOOL_NETWORK;
	} else if (tool) {
		args = json_object();
	} else {
		return docket_error_set(DOCKET_EINVALID, "no call: give a command, or a tool with a path or a url");
	}
	if (!args || !(*out = json_pack("{s:s,s:o}", "tool", tool, "args", args)))
		return docket_error_set(DOCKET_EINVALID, "the call is not UTF-8 text");
	return 0;
}

bool pol_prefix_rules_match(const docket_policy *p, size_t first, size_t n, const char *const *argv, size_t argc)
{
	pol_match m[64];
	size_t got = pol_codex_matches(p, argv, argc, true, m, 64, 0);

	for (size_t i = 0; i < got; i++)
		if (m[i].rule >= 0 && (size_t)m[i].rule >= first && (size_t)m[i].rule < first + n)
			return true;
	return false;
}

const char *docket_policy_rule(const docket_policy *p, size_t i, const char **file, unsigned *line, int *decision)
{
	const char *text = NULL;
	const pol_origin *o = NULL;
	int d = 0;

	if (i < p->nprefix) {
		text = p->prefix[i].text, o = &p->prefix[i].origin, d = p->prefix[i].decision;
	} else if ((i -= p->nprefix) < p->ntools) {
		text = p->tools[i].text, o = &p->tools[i].origin, d = p->tools[i].decision;
	} else if ((i -= p->ntools) < p->nnet) {
		text = p->net[i].text, o = &p->net[i].origin, d = p->net[i].decision;
	}
	if (file)
		*file = o ? o->file : NULL;
	if (line)
		*line = o ? o->line : 0;
	if (decision)
		*decision = d;
	return text;
}

size_t docket_policy_result_match_index(const docket_policy_result *r, size_t i)
{
	const docket_policy *p = r->policy;

	for (size_t k = 0; p && k < r->nmatches; k++) {
		int rule = r->matches[k].rule;

		if (rule == -1 || i-- != 0)
			continue;
		if (rule >= 0)
			return (size_t)rule;
		if (rule <= -100000)
			return p->nprefix + p->ntools + (size_t)(-100000 - rule);
		return p->nprefix + (size_t)(-2 - rule);
	}
	return (size_t)-1;
}
