/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claude.c: Claude Code settings.json permissions and its rule grammar.
 *
 *   Tool | Tool(specifier)
 *   Bash(exact command) | Bash(prefix:*) | Bash(glob with *)
 *   Read|Edit|Write|MultiEdit|NotebookEdit(path) with the anchors
 *        //abs  ~/home  /project-root  ./cwd (gitignore-style patterns)
 *   WebFetch(domain:host)   mcp__server  mcp__server__tool  mcp__*
 *
 * Deny wins over ask over allow: all three lists are compiled into tool
 * rules and the evaluator takes the strictest decision that matches.
 */
#include <string.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/tool.h"

static int tool_kind_of(const char *name, size_t n)
{
	static const struct { const char *name; int kind; } map[] = {
		{ DOCKET_TOOL_CLAUDE_BASH, TK_BASH }, { DOCKET_TOOL_CLAUDE_READ, TK_READ },
		{ DOCKET_TOOL_CLAUDE_EDIT, TK_EDIT }, { DOCKET_TOOL_CLAUDE_WRITE, TK_EDIT },
		{ DOCKET_TOOL_CLAUDE_MULTI_EDIT, TK_EDIT }, { DOCKET_TOOL_CLAUDE_NOTEBOOK_EDIT, TK_EDIT },
		{ DOCKET_TOOL_CLAUDE_WEB_FETCH, TK_WEBFETCH },
		{ "*", TK_ANY },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].name) == n && memcmp(map[i].name, name, n) == 0)
			return map[i].kind;
	if (n > DOCKET_TOOL_MCP_PREFIX_LEN && memcmp(name, DOCKET_TOOL_MCP_PREFIX, DOCKET_TOOL_MCP_PREFIX_LEN) == 0)
		return TK_MCP;
	return TK_NAME;
}

int pol_parse_tool_rule(docket_policy *p, const char *rule, int decision, pol_origin origin)
{
	const char *open = strchr(rule, '(');
	size_t nlen = open ? (size_t)(open - rule) : strlen(rule);
	pol_tool_rule *t;
	char *spec = NULL;
	size_t slen = 0;
	int error;

	if (nlen == 0)
		return docket_error_set(DOCKET_EINVALID, "rule \"%s\": missing tool name", rule);
	for (size_t i = 0; i < nlen; i++) {
		char c = rule[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '*' || c == '.'))
			return docket_error_set(DOCKET_EINVALID, "rule \"%s\": bad character in tool name", rule);
	}
	if (open) {
		size_t len = strlen(rule);
		const char *in = open + 1, *end = rule + len - 1;

		if (len < nlen + 2 || *end != ')')
			return docket_error_set(DOCKET_EINVALID, "rule \"%s\": expected ')' at the end", rule);
		if (!(spec = pol_alloc(p, (size_t)(end - in) + 1)))
			return docket_error_set_oom();
		for (; in < end; in++) {
			if (*in == '\\' && in + 1 < end && (in[1] == '(' || in[1] == ')' || in[1] == '\\'))
				in++;
			spec[slen++] = *in;
		}
		spec[slen] = '\0';
		if (slen == 0)
			return docket_error_set(DOCKET_EINVALID, "rule \"%s\": empty specifier", rule);
	}
	if ((error = pol_add_tool(p, &t)) < 0)
		return error;
	t->kind = tool_kind_of(rule, nlen);
	if (!(t->name = pol_strndup(p, rule, nlen)) || !(t->text = pol_strdup(p, rule)))
		return docket_error_set_oom();
	t->decision = decision;
	t->origin = origin;
	if (!spec) {
		t->spec_kind = SPEC_NONE;
		return 0;
	}
	t->spec = spec;
	t->spec_len = slen;
	switch (t->kind) {
	case TK_BASH:
		if (slen >= 2 && spec[slen - 2] == ':' && spec[slen - 1] == '*') {
			t->spec_kind = SPEC_PREFIX;
			t->spec_len = slen - 2;
			spec[t->spec_len] = '\0';
			if (strchr(spec, '*')) {
				/* "git push * main:*": a glob with an open end */
				spec[t->spec_len] = ' ';
				spec[t->spec_len + 1] = '*';
				t->spec_kind = SPEC_GLOB;
				t->spec_len += 2;
			}
		} else if (strchr(spec, '*')) {
			t->spec_kind = SPEC_GLOB;
		} else {
			t->spec_kind = SPEC_EXACT;
		}
		break;
	case TK_READ:
	case TK_EDIT:
		t->spec_kind = SPEC_PATH;
		if (strncmp(spec, "//", 2) == 0) {
			t->anchor = ANCHOR_ROOT;
			t->spec += 2;
		} else if (strncmp(spec, "~/", 2) == 0) {
			t->anchor = ANCHOR_HOME;
			t->spec += 2;
		} else if (strcmp(spec, "~") == 0) {
			t->anchor = ANCHOR_HOME;
			t->spec += 1;
		} else if (spec[0] == '/') {
			t->anchor = ANCHOR_PROJECT;
			t->spec += 1;
		} else if (strncmp(spec, "./", 2) == 0) {
			t->anchor = ANCHOR_CWD;
			t->spec += 2;
		} else if (strchr(spec, '/') && spec[strlen(spec) - 1] != '/') {
			t->anchor = ANCHOR_CWD;
		} else {
			t->anchor = ANCHOR_NONE;
		}
		t->spec_len = strlen(t->spec);
		if (t->spec_len == 0) {
			t->spec = "**";
			t->spec_len = 2;
		}
		break;
	case TK_WEBFETCH:
		if (strncmp(spec, "domain:", 7) == 0) {
			t->spec_kind = SPEC_DOMAIN;
			t->spec += 7;
			t->spec_len -= 7;
			if (t->spec_len == 0)
				return docket_error_set(DOCKET_EINVALID, "rule \"%s\": empty domain", rule);
		} else {
			t->spec_kind = SPEC_OTHER;
		}
		break;
	default:
		t->spec_kind = SPEC_OTHER;
		break;
	}
	if (t->spec_kind == SPEC_GLOB || t->spec_kind == SPEC_PATH) {
		t->lit_len = 0;
		while (t->lit_len < t->spec_len && t->spec[t->lit_len] != '*' && t->spec[t->lit_len] != '?')
			t->lit_len++;
	}
	return 0;
}

static int parse_mode(const char *s, int *out)
{
	if (strcmp(s, "default") == 0 || strcmp(s, "manual") == 0)
		*out = MODE_DEFAULT; /* Claude Code reads "manual" as "default" */
	else if (strcmp(s, "acceptEdits") == 0)
		*out = MODE_ACCEPT_EDITS;
	else if (strcmp(s, "plan") == 0)
		*out = MODE_PLAN;
	else if (strcmp(s, "bypassPermissions") == 0)
		*out = MODE_BYPASS;
	else if (strcmp(s, "dontAsk") == 0)
		*out = MODE_DONT_ASK;
	else if (strcmp(s, "auto") == 0)
		*out = MODE_DEFAULT; /* Claude Code's auto mode asks a classifier we
				      * cannot replay: decided as default (asks) */
	else
		return -1;
	return 0;
}

/* Where each string of permissions.allow/ask/deny starts in the text: jansson
 * keeps no positions, so the (already validated) JSON is scanned once for
 * them. A list whose key is written with escapes keeps line 0 (unknown). */
typedef struct rule_pos {
	const char *key;
	pol_origin *at;
	size_t n;
} rule_pos;

static bool raw_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

static void find_rule_positions(const char *t, size_t len, rule_pos *lists, size_t nlists)
{
	unsigned line = 1, col = 1;
	int depth = 0;
	bool in_perms = false, in_list = false;
	rule_pos *cur = NULL;
	size_t idx = 0;

	for (size_t i = 0; i < len; i++) {
		char c = t[i];

		if (c == '\n') {
			line++;
			col = 1;
			continue;
		}
		if (((unsigned char)c & 0xC0) != 0x80)
			col++;
		if (c == '{' || c == '[') {
			depth++;
			if (depth == 3) {
				in_list = c == '[';
				idx = 0;
			}
		} else if (c == '}' || c == ']') {
			depth--;
		} else if (c == '"') {
			unsigned sline = line, scol = col - 1;
			size_t s = i + 1, j;

			/* strings hold no raw newlines; count characters, not bytes */
			for (i = s; i < len && t[i] != '"'; i++) {
				if (t[i] == '\\' && i + 1 < len) {
					i++;
					col++;
				}
				if (((unsigned char)t[i] & 0xC0) != 0x80)
					col++;
			}
			col++;
			for (j = i + 1; j < len && (t[j] == ' ' || t[j] == '\t' || t[j] == '\r' || t[j] == '\n'); j++)
				;
			if (j < len && t[j] == ':') {
				if (depth == 1) {
					in_perms = raw_is(t + s, i - s, "permissions");
				} else if (depth == 2) {
					cur = NULL;
					for (size_t k = 0; in_perms && k < nlists; k++)
						if (raw_is(t + s, i - s, lists[k].key))
							cur = &lists[k];
				}
			} else if (depth == 3 && in_list && in_perms && cur) {
				if (idx < cur->n) {
					cur->at[idx].line = sline;
					cur->at[idx].col = scol;
				}
				idx++;
			}
		}
	}
}

/*
 * How Claude Code reads a rule it parsed (issue 33, measured with 2.1.328
 * and 2.1.332): `Tool(*)` is the bare `Tool`, `./NAME` with no other slash
 * matches NAME at every depth, and a wildcard in an MCP
 * rule's server name matches no server (`mcp__*` and `mcp__ser*` allow
 * nothing; `mcp__server` and `mcp__server__*` do). Such a rule becomes a
 * plain tool-name rule, which no MCP call meets.
 */
static void claude_rule_fixup(pol_tool_rule *t)
{
	if (t->spec_kind != SPEC_NONE && t->spec_len == 1 && t->spec[0] == '*' && t->kind != TK_WEBFETCH) {
		t->spec_kind = SPEC_NONE;
		t->spec = NULL;
		t->spec_len = t->lit_len = 0;
	}
	/* "./NAME.env": a pattern with no other slash matches at every depth below (as in .gitignore) */
	if (t->spec_kind == SPEC_PATH && t->anchor == ANCHOR_CWD && !memchr(t->spec, '/', t->spec_len))
		t->anchor = ANCHOR_NONE;
	if (t->kind == TK_MCP) {
		const char *server = t->name + 5, *end = strstr(server, "__");
		size_t n = end ? (size_t)(end - server) : strlen(server);

		if (memchr(server, '*', n))
			t->kind = TK_NAME;
	}
}

static int rule_list(docket_policy *p, const char *name, const json_t *perms, const char *key, int decision,
		     const pol_origin *at)
{
	const json_t *list = json_object_get(perms, key);
	int error;

	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return docket_error_set(DOCKET_EINVALID, "%s: permissions.%s must be an array of strings (got %s)",
					name, key, docket_json_type_name(list));
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *r = json_array_get(list, i);
		pol_origin o = { name, at ? at[i].line : 0, at ? at[i].col : 0 };

		if (!json_is_string(r))
			return docket_error_set(DOCKET_EINVALID, "%s: permissions.%s[%zu] must be a string (got %s)",
						name, key, i, docket_json_type_name(r));
		if (strlen(json_string_value(r)) != json_string_length(r))
			return docket_error_set(DOCKET_EINVALID, "%s: permissions.%s[%zu] contains a NUL byte",
						name, key, i);
		if ((error = pol_parse_tool_rule(p, json_string_value(r), decision, o)) < 0) {
			if (error == DOCKET_EINVALID)
				docket_error_prefix("%s: permissions.%s[%zu]: ", name, key, i);
			return error;
		}
		claude_rule_fixup(&p->tools[p->ntools - 1]);
	}
	return 0;
}

static const char *const perm_keys[] = {
	"allow", "ask", "deny", "defaultMode", "additionalDirectories",
	"disableBypassPermissionsMode", NULL
};

const char *pol_claude_rule_note(const docket_policy *p, const pol_tool_rule *t)
{
	if (p->heuristics != HEUR_CLAUDE || t->kind != TK_EDIT)
		return NULL;
	if (strcmp(t->name, DOCKET_TOOL_CLAUDE_WRITE) == 0 && t->spec_kind != SPEC_NONE)
		return "no effect in Claude Code: it ignores Write(path) rules; Edit(path) rules cover the Write tool";
	if (strcmp(t->name, DOCKET_TOOL_CLAUDE_EDIT) == 0 && t->spec_kind == SPEC_NONE)
		return "does not cover the Write tool in Claude Code (a bare Write rule does)";
	return NULL;
}

const char *pol_claude_mode_note(const docket_policy *p)
{
	if (p->scope_mode[SCOPE_PROJECT] == MODE_BYPASS || p->scope_mode[SCOPE_LOCAL] == MODE_BYPASS)
		return "defaultMode bypassPermissions in project or local settings has no effect in Claude Code after 2.1.197";
	return NULL;
}

int pol_claude_mode(const docket_policy *p, bool scoped_bypass)
{
	for (int s = SCOPE_COUNT - 1; s >= 0; s--) {
		int m = p->scope_mode[s];

		if (m == MODE_UNSET)
			continue;
		/* a repository cannot put its users in bypass mode */
		if (m == MODE_BYPASS && !scoped_bypass && (s == SCOPE_PROJECT || s == SCOPE_LOCAL))
			continue;
		if (m == MODE_BYPASS && p->bypass_disabled)
			return MODE_DEFAULT;
		return m;
	}
	return MODE_DEFAULT;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0 && (n == k || s[n - k - 1] == '/');
}

int pol_claude_scope_of(const char *path, const char *home)
{
	size_t hl = home ? strlen(home) : 0;

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (strcmp(path, POL_CLAUDE_MANAGED_PATH) == 0)
		return SCOPE_MANAGED;
	if (ends_with(path, ".claude/settings.local.json"))
		return SCOPE_LOCAL;
	if (ends_with(path, ".claude/settings.json")) {
		if (hl && strncmp(path, home, hl) == 0 && strcmp(path + hl, "/.claude/settings.json") == 0)
			return SCOPE_USER;
		return SCOPE_PROJECT;
	}
	return SCOPE_FLAG; /* a file given on its own, as `claude --settings FILE` */
}

int pol_load_claude_settings(docket_policy *p, const char *name, const char *text, size_t len)
{
	return pol_load_claude_scoped(p, name, text, len, SCOPE_FLAG);
}

int pol_load_claude_scoped(docket_policy *p, const char *name, const char *text, size_t len, int scope)
{
	json_t *root = NULL;
	json_error_t jerr;
	const json_t *perms, *v;
	const char *key;
	rule_pos pos[3] = { { "allow", NULL, 0 }, { "ask", NULL, 0 }, { "deny", NULL, 0 } };
	int error = 0;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return docket_error_set(DOCKET_EINVALID, "%s:%d:%d: invalid JSON: %s", name, jerr.line,
					jerr.column, jerr.text);
	if (!json_is_object(root)) {
		error = docket_error_set(DOCKET_EINVALID, "%s: settings must be a JSON object (got %s)", name,
					 docket_json_type_name(root));
		goto cleanup;
	}
	if (!p->mode)
		p->mode = MODE_DEFAULT;
	/* Claude Code's sandbox (sandbox.enabled): the last scope that says wins */
	if (json_is_boolean(json_object_get(json_object_get(root, "sandbox"), "enabled")))
		p->claude_sandbox = json_is_true(json_object_get(json_object_get(root, "sandbox"), "enabled"));
	perms = json_object_get(root, "permissions");
	if (!perms || json_is_null(perms))
		goto cleanup;
	if (!json_is_object(perms)) {
		error = docket_error_set(DOCKET_EINVALID, "%s: permissions must be an object (got %s)", name,
					 docket_json_type_name(perms));
		goto cleanup;
	}
	json_object_foreach((json_t *)perms, key, v) {
		size_t k;

		for (k = 0; perm_keys[k]; k++)
			if (strcmp(perm_keys[k], key) == 0)
				break;
		if (!perm_keys[k]) {
			error = docket_error_set(DOCKET_EINVALID,
				"%s: unknown key permissions.%s (expected allow, ask, deny, defaultMode, additionalDirectories)",
				name, key);
			goto cleanup;
		}
	}
	for (size_t k = 0; k < 3; k++) {
		const json_t *list = json_object_get(perms, pos[k].key);

		pos[k].n = json_is_array(list) ? json_array_size(list) : 0;
		if (pos[k].n && !(pos[k].at = docket_calloc(pos[k].n, sizeof(*pos[k].at)))) {
			error = docket_error_set_oom();
			goto cleanup;
		}
	}
	find_rule_positions(text, len, pos, 3);
	if ((error = rule_list(p, name, perms, "allow", POL_ALLOW, pos[0].at)) < 0 ||
	    (error = rule_list(p, name, perms, "ask", POL_ASK, pos[1].at)) < 0 ||
	    (error = rule_list(p, name, perms, "deny", POL_DENY, pos[2].at)) < 0)
		goto cleanup;
	if ((v = json_object_get(perms, "defaultMode")) && !json_is_null(v)) {
		if (!json_is_string(v) || parse_mode(json_string_value(v), &p->scope_mode[scope]) < 0) {
			error = docket_error_set(DOCKET_EINVALID,
				"%s: permissions.defaultMode must be default, manual, acceptEdits, plan, auto, bypassPermissions or dontAsk",
				name);
			goto cleanup;
		}
	}
	if ((v = json_object_get(perms, "additionalDirectories")) && !json_is_null(v)) {
		if (!json_is_array(v)) {
			error = docket_error_set(DOCKET_EINVALID, "%s: permissions.additionalDirectories must be an array of strings", name);
			goto cleanup;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			const json_t *d = json_array_get(v, i);

			if (!json_is_string(d)) {
				error = docket_error_set(DOCKET_EINVALID, "%s: permissions.additionalDirectories[%zu] must be a string", name, i);
				goto cleanup;
			}
			if ((error = pol_strv_push(p, &p->additional_dirs, json_string_value(d))) < 0)
				goto cleanup;
		}
	}
	if ((v = json_object_get(perms, "disableBypassPermissionsMode")) && !json_is_null(v)) {
		if (!json_is_string(v)) {
			error = docket_error_set(DOCKET_EINVALID, "%s: permissions.disableBypassPermissionsMode must be a string", name);
			goto cleanup;
		}
		if (strcmp(json_string_value(v), "disable") == 0)
			p->bypass_disabled = true;
	}
cleanup:
	if (error == 0)
		p->mode = pol_claude_mode(p, false);
	for (size_t k = 0; k < 3; k++)
		docket_free(pos[k].at);
	json_decref(root);
	return error;
}
