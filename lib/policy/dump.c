/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dump.c: the normalised policy as JSON (`explain`) and as docket YAML
 * (`convert`), and the canonical form of a shell command (grant keys).
 *
 * The YAML writer emits every setting the evaluator reads, so a converted
 * policy evaluates identically; strings are written as JSON string literals,
 * which are valid YAML double-quoted scalars.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"

static const char *sandbox_name(int s)
{
	switch (s) {
	case SB_READ_ONLY: return "read_only";
	case SB_WORKSPACE_WRITE: return "workspace_write";
	case SB_FULL_ACCESS: return "full_access";
	case SB_EXTERNAL: return "external";
	}
	return NULL;
}

static const char *approval_name(int a)
{
	switch (a) {
	case AP_UNTRUSTED: return "untrusted";
	case AP_ON_REQUEST: return "on_request";
	case AP_NEVER: return "never";
	}
	return NULL;
}

static const char *mode_name(int m)
{
	switch (m) {
	case MODE_DEFAULT: return "default";
	case MODE_ACCEPT_EDITS: return "accept_edits";
	case MODE_PLAN: return "plan";
	case MODE_BYPASS: return "bypass";
	case MODE_DONT_ASK: return "dont_ask";
	}
	return NULL;
}

static const char *heur_name(int h)
{
	switch (h) {
	case HEUR_CLAUDE: return "claude";
	case HEUR_ASK: return "ask";
	case HEUR_ALLOW: return "allow";
	case HEUR_DENY: return "deny";
	}
	return "codex";
}

static const char *proto_name(int p)
{
	switch (p) {
	case PROTO_HTTP: return "http";
	case PROTO_HTTPS: return "https";
	case PROTO_SOCKS5_TCP: return "socks5_tcp";
	case PROTO_SOCKS5_UDP: return "socks5_udp";
	}
	return "any";
}

static const char *plat_name(int p)
{
	switch (p) {
	case PLAT_LINUX: return "linux";
	case PLAT_MACOS: return "macos";
	case PLAT_WINDOWS: return "windows";
	}
	return NULL;
}

/* ---- YAML ---- */

static int q(docket_buf *b, const char *s)
{
	json_t *j = json_string(s);
	char *d;
	int error;

	if (!j)
		return docket_error_set(DOCKET_EINVALID, "string is not valid UTF-8: cannot write YAML");
	d = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	if (!d)
		return docket_error_set_oom();
	error = docket_buf_puts(b, d);
	free(d);
	return error;
}

static int strv_yaml(docket_buf *b, const char *indent, const char *key, const pol_strv *v)
{
	int error = docket_buf_printf(b, "%s%s: [", indent, key);

	for (size_t i = 0; i < v->n && error == 0; i++) {
		if (i)
			error = docket_buf_puts(b, ", ");
		if (error == 0)
			error = q(b, v->v[i]);
	}
	return error ? error : docket_buf_puts(b, "]\n");
}

static int tools_yaml(docket_buf *b, const docket_policy *p, int dec, const char *key)
{
	bool any = false;
	int error = 0;

	for (size_t i = 0; i < p->ntools && error == 0; i++) {
		if (p->tools[i].decision != dec)
			continue;
		if (!any)
			error = docket_buf_printf(b, "  %s:\n", key);
		any = true;
		if (error == 0)
			error = docket_buf_puts(b, "    - ");
		if (error == 0)
			error = q(b, p->tools[i].text);
		if (error == 0)
			error = docket_buf_putc(b, '\n');
	}
	return error;
}

/* How many rules from i on one source rule made (alternatives of the first
 * word: the same origin, pattern tail and decision). */
static size_t same_source_rules(const docket_policy *p, size_t i)
{
	const pol_prefix_rule *r = &p->prefix[i];
	size_t n = 1;

	while (i + n < p->nprefix && n < 64) {   /* command_yaml's bound */
		const pol_prefix_rule *o = &p->prefix[i + n];

		if (o->rest != r->rest || o->nrest != r->nrest || o->decision != r->decision ||
		    o->origin.line != r->origin.line || o->origin.col != r->origin.col || r->origin.line == 0 ||
		    o->match != r->match || o->not_match != r->not_match)
			break;
		n++;
	}
	return n;
}

static int token_yaml(docket_buf *b, const char *const *alts, size_t n)
{
	int error = n == 1 ? 0 : docket_buf_putc(b, '[');

	for (size_t a = 0; a < n && error == 0; a++) {
		if (a)
			error = docket_buf_puts(b, ", ");
		if (error == 0)
			error = q(b, alts[a]);
	}
	return error || n == 1 ? error : docket_buf_putc(b, ']');
}

static int examples_yaml(docket_buf *b, const char *key, const char *const *v, size_t n)
{
	pol_strv s = { (const char **)v, n };

	return n ? strv_yaml(b, "    ", key, &s) : 0;
}

/* The command rules [i, i + n) as one docket YAML command rule. */
static int command_yaml(docket_buf *b, const docket_policy *p, size_t i, size_t n)
{
	const pol_prefix_rule *r = &p->prefix[i];
	const char *first[64];
	int error;

	assert(n <= 64);
	for (size_t k = 0; k < n; k++)
		first[k] = p->prefix[i + k].program;
	if ((error = docket_buf_puts(b, "  - pattern: [")) < 0 || (error = token_yaml(b, first, n)) < 0)
		return error;
	for (size_t k = 0; k < r->nrest && error == 0; k++)
		if ((error = docket_buf_puts(b, ", ")) == 0)
			error = token_yaml(b, r->rest[k].alts, r->rest[k].n);
	if (error == 0)
		error = docket_buf_printf(b, "]\n    decision: %s\n", pol_decision_name(r->decision));
	if (error == 0 && r->justification && (error = docket_buf_puts(b, "    justification: ")) == 0 &&
	    (error = q(b, r->justification)) == 0)
		error = docket_buf_putc(b, '\n');
	if (error == 0)
		error = examples_yaml(b, "match", r->match, r->nmatch);
	return error ? error : examples_yaml(b, "not_match", r->not_match, r->nnot_match);
}

int docket_policy_to_yaml(char **out, const docket_policy *p)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error = 0;

	*out = NULL;
#define CK(x) do { if ((error = (x)) < 0) goto fail; } while (0)
	CK(docket_buf_printf(&b, "# converted by docket from %s (%s)\n", p->source,
			     docket_policy_format_str((docket_policy_format)p->format)));
	for (size_t i = 0; i < p->ntools; i++)
		if (pol_claude_rule_note(p, &p->tools[i]))
			CK(docket_buf_printf(&b, "# note: %s: %s\n", p->tools[i].text, pol_claude_rule_note(p, &p->tools[i])));
	if (p->format == DOCKET_POLICY_CLAUDE && pol_claude_mode_note(p))
		CK(docket_buf_printf(&b, "# note: %s\n", pol_claude_mode_note(p)));
	CK(docket_buf_puts(&b, "version: 1\n"));
	if (sandbox_name(p->sandbox))
		CK(docket_buf_printf(&b, "sandbox: %s\n", sandbox_name(p->sandbox)));
	if (approval_name(p->approval))
		CK(docket_buf_printf(&b, "approval: %s\n", approval_name(p->approval)));
	if (mode_name(p->mode))
		CK(docket_buf_printf(&b, "mode: %s\n", mode_name(p->mode)));
	CK(docket_buf_printf(&b, "heuristics: %s\nheredoc_prefix: %s\n", heur_name(p->heuristics),
			     p->heredoc_prefix ? "true" : "false"));
	if (p->readable.n || p->writable.n || p->protected_set || p->additional_dirs.n) {
		CK(docket_buf_puts(&b, "filesystem:\n"));
		if (p->readable.n)
			CK(strv_yaml(&b, "  ", "readable", &p->readable));
		if (p->writable.n)
			CK(strv_yaml(&b, "  ", "writable", &p->writable));
		if (p->protected_set)
			CK(strv_yaml(&b, "  ", "protected", &p->protected_paths));
		if (p->additional_dirs.n)
			CK(strv_yaml(&b, "  ", "additional_directories", &p->additional_dirs));
	}
	if (p->network_set || p->nnet) {
		CK(docket_buf_puts(&b, "network:\n"));
		if (p->network_set)
			CK(docket_buf_printf(&b, "  enabled: %s\n", p->network_enabled ? "true" : "false"));
		if (p->nnet)
			CK(docket_buf_puts(&b, "  rules:\n"));
		for (size_t i = 0; i < p->nnet; i++) {
			const pol_net_rule *r = &p->net[i];

			CK(docket_buf_puts(&b, "    - host: "));
			CK(q(&b, r->host));
			CK(docket_buf_printf(&b, "\n      protocol: %s\n      decision: %s\n",
					     proto_name(r->protocol), pol_decision_name(r->decision)));
			if (r->port)
				CK(docket_buf_printf(&b, "      port: %u\n", r->port));
			if (r->justification) {
				CK(docket_buf_puts(&b, "      justification: "));
				CK(q(&b, r->justification));
				CK(docket_buf_putc(&b, '\n'));
			}
		}
	}
	if (p->nhostexe) {
		CK(docket_buf_puts(&b, "host_executables:\n"));
		for (size_t i = 0; i < p->nhostexe; i++) {
			pol_strv v = { p->hostexe[i].paths, p->hostexe[i].n };
			docket_buf key = DOCKET_BUF_INIT;

			if ((error = q(&key, p->hostexe[i].name)) == 0)
				error = strv_yaml(&b, "  ", key.ptr, &v);
			docket_buf_dispose(&key);
			CK(error);
		}
	}
	if (p->nprefix) {
		CK(docket_buf_puts(&b, "commands:\n"));
		for (size_t i = 0, n; i < p->nprefix; i += n) {
			n = same_source_rules(p, i);
			CK(command_yaml(&b, p, i, n));
		}
	}
	if (p->ntools) {
		CK(docket_buf_puts(&b, "tools:\n"));
		CK(tools_yaml(&b, p, POL_ALLOW, "allow"));
		CK(tools_yaml(&b, p, POL_ASK, "ask"));
		CK(tools_yaml(&b, p, POL_DENY, "deny"));
	}
	if (p->languages_set)
		CK(strv_yaml(&b, "run_code:\n  ", "languages", &p->languages));
	if (p->npkgs) {
		CK(docket_buf_puts(&b, "packages:\n"));
		for (size_t i = 0; i < p->npkgs; i++) {
			pol_strv v = { p->pkgs[i].allow, p->pkgs[i].n };

			CK(docket_buf_puts(&b, "  "));
			CK(q(&b, p->pkgs[i].ecosystem));
			CK(docket_buf_puts(&b, ":\n"));
			CK(strv_yaml(&b, "    ", "allow", &v));
			CK(docket_buf_printf(&b, "    otherwise: %s\n", pol_decision_name(p->pkgs[i].decision)));
		}
	}
	{
		bool any = false;

		for (int pl = PLAT_LINUX; pl < PLAT_COUNT; pl++) {
			unsigned caps = p->unsupported[pl];

			if (!caps)
				continue;
			if (!any)
				CK(docket_buf_puts(&b, "platforms:\n"));
			any = true;
			CK(docket_buf_printf(&b, "  %s:\n    unsupported: [%s%s%s]\n", plat_name(pl),
					     caps & CAP_SANDBOX ? "sandbox" : "",
					     (caps & CAP_SANDBOX) && (caps & CAP_NETWORK_FILTER) ? ", " : "",
					     caps & CAP_NETWORK_FILTER ? "network_filter" : ""));
		}
	}
#undef CK
	if (!b.ptr && (error = docket_buf_reserve(&b, 1)) < 0)
		goto fail;
	*out = b.ptr;
	return 0;
fail:
	docket_buf_dispose(&b);
	return error;
}

/* ---- JSON ---- */

static json_t *strv_json(const char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

int docket_policy_to_json(json_t **out, const docket_policy *p)
{
	json_t *o = json_object(), *a;

	*out = NULL;
	if (!o)
		return docket_error_set_oom();
	json_object_set_new(o, "source", json_string(p->source));
	json_object_set_new(o, "format", json_string(docket_policy_format_str((docket_policy_format)p->format)));
	if (sandbox_name(p->sandbox))
		json_object_set_new(o, "sandbox", json_string(sandbox_name(p->sandbox)));
	if (approval_name(p->approval))
		json_object_set_new(o, "approval", json_string(approval_name(p->approval)));
	if (mode_name(p->mode))
		json_object_set_new(o, "mode", json_string(mode_name(p->mode)));
	json_object_set_new(o, "heuristics", json_string(heur_name(p->heuristics)));
	json_object_set_new(o, "heredoc_prefix", json_boolean(p->heredoc_prefix));
	a = json_array();
	for (size_t i = 0; a && i < p->nprefix; i++) {
		const pol_prefix_rule *r = &p->prefix[i];
		json_t *pat = json_array();

		json_array_append_new(pat, json_string(r->program));
		for (size_t k = 0; k < r->nrest; k++)
			json_array_append_new(pat, r->rest[k].n == 1 ? json_string(r->rest[k].alts[0]) :
						   strv_json(r->rest[k].alts, r->rest[k].n));
		json_array_append_new(a, json_pack("{s:o,s:s,s:s,s:s,s:i}", "pattern", pat, "decision",
						   pol_decision_name(r->decision), "rule", r->text,
						   "origin", r->origin.file ? r->origin.file : "",
						   "line", (int)r->origin.line));
		if (r->justification)
			json_object_set_new(json_array_get(a, json_array_size(a) - 1), "justification",
					    json_string(r->justification));
	}
	json_object_set_new(o, "commands", a);
	a = json_array();
	for (size_t i = 0; a && i < p->ntools; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:i}", "rule", p->tools[i].text, "decision",
						   pol_decision_name(p->tools[i].decision), "origin",
						   p->tools[i].origin.file ? p->tools[i].origin.file : "",
						   "line", (int)p->tools[i].origin.line));
	json_object_set_new(o, "tools", a);
	a = json_array();
	for (size_t i = 0; a && i < p->ntools; i++)
		if (pol_claude_rule_note(p, &p->tools[i]))
			json_array_append_new(a, json_pack("{s:s,s:s,s:i,s:s}", "rule", p->tools[i].text, "origin",
							   p->tools[i].origin.file ? p->tools[i].origin.file : "",
							   "line", (int)p->tools[i].origin.line, "note",
							   pol_claude_rule_note(p, &p->tools[i])));
	if (a && p->format == DOCKET_POLICY_CLAUDE && pol_claude_mode_note(p))
		json_array_append_new(a, json_pack("{s:s,s:s}", "rule", "defaultMode", "note", pol_claude_mode_note(p)));
	json_object_set_new(o, "findings", a);
	a = json_array();
	for (size_t i = 0; a && i < p->nnet; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:i}", "host", p->net[i].host, "protocol",
						   proto_name(p->net[i].protocol), "decision",
						   pol_decision_name(p->net[i].decision), "port", (int)p->net[i].port));
	for (size_t i = 0; a && i < p->nnet; i++)
		if (p->net[i].justification)
			json_object_set_new(json_array_get(a, i), "justification",
					    json_string(p->net[i].justification));
	json_object_set_new(o, "network_rules", a);
	if (p->network_set)
		json_object_set_new(o, "network_enabled", json_boolean(p->network_enabled));
	a = json_object();
	for (size_t i = 0; a && i < p->nhostexe; i++)
		json_object_set_new(a, p->hostexe[i].name, strv_json(p->hostexe[i].paths, p->hostexe[i].n));
	json_object_set_new(o, "host_executables", a);
	if (p->readable.n)
		json_object_set_new(o, "readable", strv_json(p->readable.v, p->readable.n));
	if (p->writable.n)
		json_object_set_new(o, "writable", strv_json(p->writable.v, p->writable.n));
	if (p->protected_set)
		json_object_set_new(o, "protected", strv_json(p->protected_paths.v, p->protected_paths.n));
	if (p->additional_dirs.n)
		json_object_set_new(o, "additional_directories", strv_json(p->additional_dirs.v, p->additional_dirs.n));
	if (p->languages_set)
		json_object_set_new(o, "run_code_languages", strv_json(p->languages.v, p->languages.n));
	if (p->npkgs) {
		a = json_object();
		for (size_t i = 0; a && i < p->npkgs; i++)
			json_object_set_new(a, p->pkgs[i].ecosystem,
					    json_pack("{s:o,s:s}", "allow", strv_json(p->pkgs[i].allow, p->pkgs[i].n),
						      "otherwise", pol_decision_name(p->pkgs[i].decision)));
		json_object_set_new(o, "packages", a);
	}
	a = NULL;
	for (int pl = PLAT_LINUX; pl < PLAT_COUNT; pl++) {
		unsigned caps = p->unsupported[pl];
		json_t *u;

		if (!caps)
			continue;
		if (!a)
			a = json_object();
		if ((u = json_array()) && (caps & CAP_SANDBOX))
			json_array_append_new(u, json_string("sandbox"));
		if (u && (caps & CAP_NETWORK_FILTER))
			json_array_append_new(u, json_string("network_filter"));
		json_object_set_new(a, plat_name(pl), json_pack("{s:o*}", "unsupported", u));
	}
	if (a)
		json_object_set_new(o, "platforms", a);
	*out = o;
	return 0;
}

/* ---- canonical command ---- */

int docket_policy_canonical_command(json_t **out, const json_t *argv)
{
	const char **v = NULL;
	size_t n = json_array_size(argv);
	shell_split sp;
	json_t *res = NULL;
	const char *script, *flag = NULL;
	int error = 0;

	*out = NULL;
	if (!json_is_array(argv))
		return docket_error_set(DOCKET_EINVALID, "a command must be an array of strings");
	if (!(v = docket_calloc(n ? n : 1, sizeof(*v))))
		return docket_error_set_oom();
	for (size_t i = 0; i < n; i++) {
		if (!json_is_string(json_array_get(argv, i))) {
			docket_free(v);
			return docket_error_set(DOCKET_EINVALID, "a command must be an array of strings");
		}
		v[i] = json_string_value(json_array_get(argv, i));
	}
	shell_split_init(&sp);
	script = shell_script_of(v, n, &flag);
	if (script) {
		if ((error = shell_split_script(&sp, script, strlen(script))) < 0)
			goto cleanup;
		if (sp.status == SHELL_PLAIN && sp.nsegs == 1) {
			res = json_array();
			for (size_t i = 0; res && i < sp.nwords; i++)
				json_array_append_new(res, json_string(sp.text.ptr + sp.word_off[i]));
		} else {
			res = json_pack("[s,s,s]", "__codex_shell_script__", flag, script);
		}
	} else if (n >= 3) {
		const char *b = shell_basename(v[0]);
		size_t i;

		if (strcmp(b, "pwsh") == 0 || strcmp(b, "powershell") == 0 || strcmp(b, "powershell.exe") == 0 ||
		    strcmp(b, "pwsh.exe") == 0) {
			for (i = 1; i + 1 < n; i++)
				if (strcmp(v[i], "-Command") == 0 || strcmp(v[i], "-c") == 0 || strcmp(v[i], "-command") == 0)
					break;
			if (i + 2 == n)
				res = json_pack("[s,s]", "__codex_powershell_script__", v[i + 1]);
		}
	}
	if (!res)
		res = json_deep_copy(argv);
	if (!res)
		error = docket_error_set_oom();
cleanup:
	shell_split_dispose(&sp);
	docket_free(v);
	*out = error ? NULL : res;
	if (error)
		json_decref(res);
	return error;
}

/* ---- Codex .rules (`policy convert --to codex`) ---- */

static int starlark_list(docket_buf *b, const char *const *v, size_t n)
{
	int error = docket_buf_putc(b, '[');

	for (size_t i = 0; i < n && error == 0; i++)
		if ((error = i ? docket_buf_puts(b, ", ") : 0) == 0)
			error = q(b, v[i]);
	return error ? error : docket_buf_putc(b, ']');
}

static int codex_prefix(docket_buf *b, const docket_policy *p, size_t i, size_t n)
{
	const pol_prefix_rule *r = &p->prefix[i];
	const char *first[64];
	int error;

	for (size_t k = 0; k < n; k++)
		first[k] = p->prefix[i + k].program;
	if ((error = docket_buf_puts(b, "prefix_rule(\n    pattern = [")) < 0)
		return error;
	if ((error = n == 1 ? q(b, first[0]) : starlark_list(b, first, n)) < 0)
		return error;
	for (size_t k = 0; k < r->nrest && error == 0; k++)
		if ((error = docket_buf_puts(b, ", ")) == 0)
			error = r->rest[k].n == 1 ? q(b, r->rest[k].alts[0]) : starlark_list(b, r->rest[k].alts, r->rest[k].n);
	if (error == 0)
		error = docket_buf_printf(b, "],\n    decision = \"%s\",\n", pol_codex_decision_name(r->decision));
	if (error == 0 && r->justification && (error = docket_buf_puts(b, "    justification = ")) == 0 &&
	    (error = q(b, r->justification)) == 0)
		error = docket_buf_puts(b, ",\n");
	if (error == 0 && r->nmatch && (error = docket_buf_puts(b, "    match = ")) == 0 &&
	    (error = starlark_list(b, r->match, r->nmatch)) == 0)
		error = docket_buf_puts(b, ",\n");
	if (error == 0 && r->nnot_match && (error = docket_buf_puts(b, "    not_match = ")) == 0 &&
	    (error = starlark_list(b, r->not_match, r->nnot_match)) == 0)
		error = docket_buf_puts(b, ",\n");
	return error ? error : docket_buf_puts(b, ")\n");
}

static int codex_network(docket_buf *b, const pol_net_rule *r)
{
	static const int any[] = { PROTO_HTTP, PROTO_HTTPS, PROTO_SOCKS5_TCP, PROTO_SOCKS5_UDP };
	int error = 0;

	if (r->port || strncmp(r->host, "*.", 2) == 0)
		return docket_error_set(DOCKET_EINVALID, "%s: Codex network rules have no port and no wildcard host",
					r->text);
	/* a rule for any protocol is one Codex rule per protocol */
	for (size_t k = 0; k < 4 && error == 0; k++) {
		if (r->protocol != PROTO_ANY && r->protocol != any[k])
			continue;
		if ((error = docket_buf_puts(b, "network_rule(host = ")) == 0 && (error = q(b, r->host)) == 0)
			error = docket_buf_printf(b, ", protocol = \"%s\", decision = \"%s\"", proto_name(any[k]),
						  pol_codex_decision_name(r->decision));
		if (error == 0 && r->justification && (error = docket_buf_puts(b, ", justification = ")) == 0)
			error = q(b, r->justification);
		if (error == 0)
			error = docket_buf_puts(b, ")\n");
	}
	return error;
}

/* What a Codex .rules file cannot say: a rule of it (refused), or NULL. */
static const char *codex_inexpressible(const docket_policy *p)
{
	if (p->ntools)
		return p->tools[0].text;
	if (p->npkgs)
		return "packages:";
	if (p->languages_set)
		return "run_code: languages";
	for (size_t i = 0; i < PLAT_COUNT; i++)
		if (p->unsupported[i])
			return "platforms: unsupported";
	if (p->heuristics != HEUR_CODEX)
		return "heuristics other than codex";
	return NULL;
}

int docket_policy_to_codex_rules(char **out, const docket_policy *p)
{
	docket_buf b = DOCKET_BUF_INIT;
	const char *no = codex_inexpressible(p);
	int error = 0;

#define CK(x) do { if ((error = (x)) < 0) goto fail; } while (0)
	*out = NULL;
	if (no)
		return docket_error_set(DOCKET_EINVALID, "%s: a Codex .rules file cannot express it (convert to docket YAML)",
					no);
	CK(docket_buf_printf(&b, "# converted by docket from %s (%s)\n", p->source,
			     docket_policy_format_str((docket_policy_format)p->format)));
	/* settings are Codex's config, not rules: say what the policy had */
	CK(docket_buf_printf(&b, "# Codex settings (config.toml), not rules: sandbox_mode %s, approval_policy %s, "
			     "network %s%s\n", sandbox_name(p->sandbox) ? sandbox_name(p->sandbox) : "unset",
			     approval_name(p->approval) ? approval_name(p->approval) : "unset",
			     !p->network_set ? "unset" : p->network_enabled ? "enabled" : "disabled",
			     p->heredoc_prefix ? "" : "; Codex reads a one-command heredoc script as that command"));
	for (size_t i = 0; i < p->nhostexe; i++) {
		pol_strv v = { p->hostexe[i].paths, p->hostexe[i].n };

		CK(docket_buf_puts(&b, "host_executable(name = "));
		CK(q(&b, p->hostexe[i].name));
		CK(docket_buf_puts(&b, ", paths = "));
		CK(starlark_list(&b, v.v, v.n));
		CK(docket_buf_puts(&b, ")\n"));
	}
	for (size_t i = 0, n; i < p->nprefix; i += n) {
		n = same_source_rules(p, i);
		CK(codex_prefix(&b, p, i, n));
	}
	for (size_t i = 0; i < p->nnet; i++)
		CK(codex_network(&b, &p->net[i]));
#undef CK
	*out = b.ptr;
	return 0;
fail:
	docket_buf_dispose(&b);
	return error;
}
