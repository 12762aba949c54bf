/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yaml.c: docket's own policy language (docs/policy.md), read with libfyaml.
 * Every error names file:line:column and what was expected; unknown keys
 * are errors, so a typo cannot silently widen a policy.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/utf8.h"

/* The match / not_match examples of one command rule, checked once the
 * whole file is read (the rules it made are [first, first + n)). */
typedef struct yexamples {
	size_t first, n;
	struct fy_node *match, *not_match;
} yexamples;

typedef struct yctx {
	docket_policy *p;
	const char *name;
	yexamples *ex;
	size_t nex, capex;
} yctx;

static void node_pos(struct fy_node *n, int *line, int *col)
{
	struct fy_token *t = n ? fy_node_get_scalar_token(n) : NULL;
	const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;

	*line = m ? m->line + 1 : 0;
	*col = m ? m->column + 1 : 0;
}

static int yerr(yctx *y, struct fy_node *at, const char *fmt, ...) DOCKET_PRINTF(3, 4);

static int yerr(yctx *y, struct fy_node *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int line, col;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	node_pos(at, &line, &col);
	return docket_error_set(DOCKET_EINVALID, "%s:%d:%d: %s", y->name, line, col, msg);
}

/* The scalar of `n` (NUL-terminated, arena copy) or an error naming `what`. */
static int scalar(yctx *y, struct fy_node *n, struct fy_node *key, const char *what, const char **out)
{
	const char *s;
	size_t len;

	if (!n || !fy_node_is_scalar(n))
		return yerr(y, n && fy_node_is_scalar(n) ? n : key, "%s: expected a string", what);
	if (!(s = fy_node_get_scalar(n, &len)))
		return yerr(y, n, "%s: expected a string", what);
	if (memchr(s, '\0', len))
		return yerr(y, n, "%s: NUL byte in string", what);
	if (!(*out = pol_strndup(y->p, s, len)))
		return docket_error_set_oom();
	return 0;
}

static int boolean(yctx *y, struct fy_node *n, struct fy_node *key, const char *what, bool *out)
{
	const char *s;
	int error;

	if ((error = scalar(y, n, key, what, &s)) < 0)
		return error;
	if (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0)
		*out = true;
	else if (strcmp(s, "false") == 0 || strcmp(s, "no") == 0)
		*out = false;
	else
		return yerr(y, n, "%s: expected true or false", what);
	return 0;
}

static int enum_of(yctx *y, struct fy_node *n, struct fy_node *key, const char *what,
		   const char *const *names, const int *values, int *out)
{
	const char *s;
	int error;

	if ((error = scalar(y, n, key, what, &s)) < 0)
		return error;
	for (size_t i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0) {
			*out = values[i];
			return 0;
		}
	return yerr(y, n, "%s: unexpected value \"%s\"", what, s);
}

static int decision(yctx *y, struct fy_node *n, struct fy_node *key, int *out)
{
	static const char *const names[] = { "allow", "ask", "prompt", "deny", "forbidden", NULL };
	static const int values[] = { POL_ALLOW, POL_ASK, POL_ASK, POL_DENY, POL_DENY };

	return enum_of(y, n, key, "decision (allow, ask or deny)", names, values, out);
}

static int str_list(yctx *y, struct fy_node *n, struct fy_node *key, const char *what, pol_strv *v)
{
	void *it = NULL;
	struct fy_node *e;
	int error;

	if (!n || !fy_node_is_sequence(n))
		return yerr(y, key, "%s: expected a list of strings", what);
	while ((e = fy_node_sequence_iterate(n, &it))) {
		const char *s;

		if ((error = scalar(y, e, key, what, &s)) < 0 || (error = pol_strv_push(y->p, v, s)) < 0)
			return error;
	}
	return 0;
}

typedef int (*key_fn)(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg);

/* Iterate a mapping, rejecting keys not in `allowed`. */
static int mapping(yctx *y, struct fy_node *n, struct fy_node *at, const char *what,
		   const char *const *allowed, key_fn fn, void *arg)
{
	void *it = NULL;
	struct fy_node_pair *pair;
	int error;

	if (!n || !fy_node_is_mapping(n))
		return yerr(y, at, "%s: expected a mapping", what);
	while ((pair = fy_node_mapping_iterate(n, &it))) {
		struct fy_node *k = fy_node_pair_key(pair), *v = fy_node_pair_value(pair);
		const char *ks;
		size_t i;

		if ((error = scalar(y, k, k, "key", &ks)) < 0)
			return error;
		if (allowed) {
			for (i = 0; allowed[i]; i++)
				if (strcmp(allowed[i], ks) == 0)
					break;
			if (!allowed[i]) {
				char expect[320];
				size_t used = 0;

				expect[0] = '\0';
				for (i = 0; allowed[i] && used < sizeof(expect); i++)
					used += (size_t)snprintf(expect + used, sizeof(expect) - used, "%s%s",
								 i ? ", " : "", allowed[i]);
				return yerr(y, k, "unknown key \"%s\" in %s (expected %s)", ks, what, expect);
			}
		}
		if ((error = fn(y, ks, k, v, arg)) < 0)
			return error;
	}
	return 0;
}

/* ---- commands ---- */

struct cmd_state {
	struct fy_node *pattern, *decision, *justification, *match, *not_match;
};

static int cmd_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	struct cmd_state *st = arg;

	(void)y;
	(void)k;
	if (strcmp(key, "pattern") == 0)
		st->pattern = v;
	else if (strcmp(key, "decision") == 0)
		st->decision = v;
	else if (strcmp(key, "match") == 0)
		st->match = v;
	else if (strcmp(key, "not_match") == 0)
		st->not_match = v;
	else
		st->justification = v;
	return 0;
}

/* ---- match / not_match examples (checked as Codex checks its own) ---- */

/* The words of example `e`: a string split like a shell, or a list of strings. */
static int example_words(yctx *y, struct fy_node *e, shell_split *sp, const char **argv, size_t cap,
			 size_t *argc)
{
	void *it = NULL;
	struct fy_node *w;
	const char *s;
	int error;

	*argc = 0;
	if (e && fy_node_is_sequence(e)) {
		while ((w = fy_node_sequence_iterate(e, &it))) {
			if ((error = scalar(y, w, e, "example word", &s)) < 0)
				return error;
			if (*argc == cap)
				return yerr(y, e, "example: more than %zu words", cap);
			argv[(*argc)++] = s;
		}
	} else {
		if ((error = scalar(y, e, e, "example (a command line or a list of words)", &s)) < 0)
			return error;
		if ((error = shell_shlex_split(sp, s)) == DOCKET_ENOMEM)
			return error;
		if (error != 0)
			return yerr(y, e, "example \"%s\": bad shell quoting", s);
		if (sp->nwords > cap)
			return yerr(y, e, "example: more than %zu words", cap);
		for (size_t i = 0; i < sp->nwords; i++)
			argv[(*argc)++] = sp->text.ptr + sp->word_off[i];
	}
	if (*argc == 0)
		return yerr(y, e, "example: empty command");
	return 0;
}

/* The examples of a list node as text (lists joined like a shell), for convert. */
static int example_texts(yctx *y, struct fy_node *list, const char *what, const char ***out, size_t *n)
{
	shell_split sp;
	const char *argv[256];
	void *it = NULL;
	struct fy_node *e;
	size_t argc, count;
	int error = 0;

	*out = NULL;
	*n = 0;
	if (!list)
		return 0;
	if (!fy_node_is_sequence(list))
		return yerr(y, list, "%s: expected a list of examples (command lines or lists of words)", what);
	count = (size_t)fy_node_sequence_item_count(list);
	if (count && !(*out = pol_alloc(y->p, count * sizeof(char *))))
		return docket_error_set_oom();
	shell_split_init(&sp);
	while (error == 0 && (e = fy_node_sequence_iterate(list, &it))) {
		docket_buf b = DOCKET_BUF_INIT;

		const char *s = NULL;

		if ((error = example_words(y, e, &sp, argv, 256, &argc)) < 0)
			break;
		if (fy_node_is_sequence(e)) {
			if ((error = shell_join(&b, argv, argc)) == 0 && !(s = pol_strndup(y->p, b.ptr, b.len)))
				error = docket_error_set_oom();
		} else {
			error = scalar(y, e, e, "example", &s);
		}
		if (error == 0)
			(*out)[(*n)++] = s;
		docket_buf_dispose(&b);
	}
	shell_split_dispose(&sp);
	return error;
}

static int check_example_list(yctx *y, const yexamples *x, struct fy_node *list, bool want, shell_split *sp)
{
	const char *argv[256];
	void *it = NULL;
	struct fy_node *e;
	size_t argc;
	int error;

	while (list && (e = fy_node_sequence_iterate(list, &it))) {
		if ((error = example_words(y, e, sp, argv, 256, &argc)) < 0)
			return error;
		if (pol_prefix_rules_match(y->p, x->first, x->n, argv, argc) != want)
			return yerr(y, fy_node_is_sequence(e) ? fy_node_sequence_get_by_index(e, 0) : e, "invalid rule: %s example did not hold (%s %s)", want ? "match" : "not_match",
				    y->p->prefix[x->first].text, want ? "does not match it" : "matches it");
	}
	return 0;
}

/* After the whole file is read: every match example matches its rule, no
 * not_match example does (a failing example is a load error, as in Codex). */
static int check_examples(yctx *y)
{
	shell_split sp;
	int error = 0;

	if (y->nex == 0)
		return 0;
	if ((error = pol_finalize(y->p)) < 0)
		return error;
	shell_split_init(&sp);
	for (size_t i = 0; i < y->nex && error == 0; i++)
		if ((error = check_example_list(y, &y->ex[i], y->ex[i].match, true, &sp)) == 0)
			error = check_example_list(y, &y->ex[i], y->ex[i].not_match, false, &sp);
	shell_split_dispose(&sp);
	return error;
}

static int remember_examples(yctx *y, const struct cmd_state *st, size_t first, size_t n)
{
	yexamples *ex;

	if (!st->match && !st->not_match)
		return 0;
	if (y->nex == y->capex) {
		if (!(ex = docket_array_grow(y->ex, &y->capex, sizeof(*ex), 4)))
			return DOCKET_ENOMEM;
		y->ex = ex;
	}
	y->ex[y->nex++] = (yexamples){ first, n, st->match, st->not_match };
	return 0;
}

static int render_cmd(docket_policy *p, pol_prefix_rule *r)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error = docket_buf_printf(&b, "command [%s", r->program);

	for (size_t i = 0; i < r->nrest && error == 0; i++) {
		error = docket_buf_puts(&b, r->rest[i].n > 1 ? ", [" : ", ");
		for (size_t k = 0; k < r->rest[i].n && error == 0; k++)
			error = docket_buf_printf(&b, "%s%s", k ? "|" : "", r->rest[i].alts[k]);
		if (error == 0 && r->rest[i].n > 1)
			error = docket_buf_putc(&b, ']');
	}
	if (error == 0)
		error = docket_buf_printf(&b, "] -> %s", pol_decision_name(r->decision));
	if (error == 0 && !(r->text = pol_strndup(p, b.ptr, b.len)))
		error = docket_error_set_oom();
	docket_buf_dispose(&b);
	return error;
}

static int one_token(yctx *y, struct fy_node *n, struct fy_node *key, pol_pattok *t)
{
	int error;

	if (n && fy_node_is_sequence(n)) {
		pol_strv v = { NULL, 0 };

		if ((error = str_list(y, n, key, "pattern alternatives", &v)) < 0)
			return error;
		if (v.n == 0)
			return yerr(y, key, "pattern alternatives cannot be empty");
		t->alts = v.v;
		t->n = v.n;
		return 0;
	}
	if (!(t->alts = pol_alloc(y->p, sizeof(char *))))
		return docket_error_set_oom();
	t->n = 1;
	return scalar(y, n, key, "pattern element", &t->alts[0]);
}

/* The first scalar of a pattern (its first word, or that word's first
 * alternative): where messages and rule origins point. */
static struct fy_node *first_scalar(struct fy_node *n)
{
	while (n && fy_node_is_sequence(n))
		n = fy_node_sequence_get_by_index(n, 0);
	return n;
}

static int load_commands(yctx *y, struct fy_node *k, struct fy_node *v)
{
	static const char *const keys[] = { "pattern", "decision", "justification", "match", "not_match", NULL };
	void *it = NULL;
	struct fy_node *e;
	int error;

	if (!v || !fy_node_is_sequence(v))
		return yerr(y, k, "commands: expected a list of {pattern, decision}");
	while ((e = fy_node_sequence_iterate(v, &it))) {
		struct cmd_state st = { 0 };
		pol_pattok first;
		pol_pattok *rest = NULL;
		size_t n, i = 0;
		void *it2 = NULL;
		struct fy_node *t;
		int dec = POL_ALLOW;
		const char *just = NULL, **match = NULL, **not_match = NULL;
		size_t nmatch = 0, nnot = 0, first_rule = y->p->nprefix;
		int line, col;

		if ((error = mapping(y, e, k, "a command rule", keys, cmd_key, &st)) < 0)
			return error;
		if (!st.pattern || !fy_node_is_sequence(st.pattern) || fy_node_sequence_item_count(st.pattern) == 0)
			return yerr(y, st.pattern ? st.pattern : e, "a command rule needs a non-empty pattern list");
		/* no default: a rule without a decision would silently mean allow */
		if (!st.decision)
			return yerr(y, first_scalar(st.pattern), "a command rule needs a decision (allow, ask or deny)");
		if ((error = decision(y, st.decision, k, &dec)) < 0)
			return error;
		if ((error = example_texts(y, st.match, "match", &match, &nmatch)) < 0 ||
		    (error = example_texts(y, st.not_match, "not_match", &not_match, &nnot)) < 0)
			return error;
		if (st.justification && (error = scalar(y, st.justification, k, "justification", &just)) < 0)
			return error;
		n = (size_t)fy_node_sequence_item_count(st.pattern);
		if (n > 1 && !(rest = pol_alloc(y->p, (n - 1) * sizeof(*rest))))
			return docket_error_set_oom();
		while ((t = fy_node_sequence_iterate(st.pattern, &it2))) {
			if ((error = one_token(y, t, k, i == 0 ? &first : &rest[i - 1])) < 0)
				return error;
			i++;
		}
		t = fy_node_sequence_get_by_index(st.pattern, 0);
		node_pos(first_scalar(st.pattern), &line, &col);
		for (size_t a = 0; a < first.n; a++) {
			pol_prefix_rule *r;

			if ((error = pol_add_prefix(y->p, &r)) < 0)
				return error;
			r->program = first.alts[a];
			r->rest = rest;
			r->nrest = n - 1;
			r->decision = dec;
			r->justification = just;
			r->origin.file = y->name;
			r->origin.line = (unsigned)line;
			r->origin.col = (unsigned)col;
			r->match = match;
			r->nmatch = nmatch;
			r->not_match = not_match;
			r->nnot_match = nnot;
			if ((error = render_cmd(y->p, r)) < 0)
				return error;
		}
		if ((error = remember_examples(y, &st, first_rule, first.n)) < 0)
			return error;
	}
	return 0;
}

/* ---- tools ---- */

static int tools_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	int dec = strcmp(key, "allow") == 0 ? POL_ALLOW : strcmp(key, "ask") == 0 ? POL_ASK : POL_DENY;
	void *it = NULL;
	struct fy_node *e;
	int error;

	(void)arg;
	if (!v || !fy_node_is_sequence(v))
		return yerr(y, k, "tools.%s: expected a list of rules like \"Bash(npm run test:*)\"", key);
	while ((e = fy_node_sequence_iterate(v, &it))) {
		const char *s;
		int line, col;
		pol_origin o;

		if ((error = scalar(y, e, k, "tool rule", &s)) < 0)
			return error;
		node_pos(e, &line, &col);
		o.file = y->name;
		o.line = (unsigned)line;
		o.col = (unsigned)col;
		if ((error = pol_parse_tool_rule(y->p, s, dec, o)) < 0) {
			if (error == DOCKET_EINVALID)
				docket_error_prefix("%s:%d:%d: ", y->name, line, col);
			return error;
		}
	}
	return 0;
}

/* ---- network ---- */

struct net_state {
	struct fy_node *host, *protocol, *port, *decision, *justification;
};

static int net_rule_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	struct net_state *st = arg;

	(void)y;
	(void)k;
	if (strcmp(key, "host") == 0) st->host = v;
	else if (strcmp(key, "protocol") == 0) st->protocol = v;
	else if (strcmp(key, "port") == 0) st->port = v;
	else if (strcmp(key, "decision") == 0) st->decision = v;
	else st->justification = v;
	return 0;
}

static int network_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	static const char *const rkeys[] = { "host", "protocol", "port", "decision", "justification", NULL };
	static const char *const pnames[] = { "any", "http", "https", "socks5_tcp", "socks5_udp", NULL };
	static const int pvalues[] = { PROTO_ANY, PROTO_HTTP, PROTO_HTTPS, PROTO_SOCKS5_TCP, PROTO_SOCKS5_UDP };
	void *it = NULL;
	struct fy_node *e;
	int error;

	(void)arg;
	if (strcmp(key, "enabled") == 0) {
		y->p->network_set = true;
		return boolean(y, v, k, "network.enabled", &y->p->network_enabled);
	}
	if (!v || !fy_node_is_sequence(v))
		return yerr(y, k, "network.rules: expected a list of {host, decision}");
	while ((e = fy_node_sequence_iterate(v, &it))) {
		struct net_state st = { 0 };
		pol_net_rule *r;
		const char *host, *s;
		docket_buf b = DOCKET_BUF_INIT;
		int line, col;

		if ((error = mapping(y, e, k, "a network rule", rkeys, net_rule_key, &st)) < 0)
			return error;
		if (!st.host || !st.decision)
			return yerr(y, k, "a network rule needs host and decision");
		if ((error = scalar(y, st.host, k, "host", &host)) < 0 || (error = pol_add_net(y->p, &r)) < 0)
			return error;
		if ((error = pol_parse_network_host(y->p, r, host, true)) < 0) {
			y->p->nnet--;
			if (error == DOCKET_EINVALID) {
				node_pos(st.host, &line, &col);
				docket_error_prefix("%s:%d:%d: ", y->name, line, col);
			}
			return error;
		}
		if ((error = decision(y, st.decision, k, &r->decision)) < 0)
			return error;
		if (st.protocol && (error = enum_of(y, st.protocol, k, "protocol", pnames, pvalues, &r->protocol)) < 0)
			return error;
		if (st.port) {
			unsigned long port;
			char *end;

			if ((error = scalar(y, st.port, k, "port", &s)) < 0)
				return error;
			port = strtoul(s, &end, 10);
			if (!*s || *end || port == 0 || port > 65535)
				return yerr(y, st.port, "port: expected 1..65535");
			r->port = (unsigned)port;
		}
		if (st.justification && (error = scalar(y, st.justification, k, "justification", &r->justification)) < 0)
			return error;
		node_pos(st.host, &line, &col);
		r->origin.file = y->name;
		r->origin.line = (unsigned)line;
		r->origin.col = (unsigned)col;
		error = docket_buf_printf(&b, "network %s%s%s -> %s", r->host, r->protocol ? " " : "",
					  r->protocol ? pnames[r->protocol] : "", pol_decision_name(r->decision));
		if (error == 0 && r->port)
			error = docket_buf_printf(&b, " (port %u)", r->port);
		if (error == 0 && !(r->text = pol_strndup(y->p, b.ptr, b.len)))
			error = docket_error_set_oom();
		docket_buf_dispose(&b);
		if (error < 0)
			return error;
	}
	return 0;
}

/* ---- filesystem, host executables, run_code, packages, platforms ---- */

static int fs_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	(void)arg;
	if (strcmp(key, "readable") == 0)
		return str_list(y, v, k, "filesystem.readable", &y->p->readable);
	if (strcmp(key, "writable") == 0)
		return str_list(y, v, k, "filesystem.writable", &y->p->writable);
	if (strcmp(key, "additional_directories") == 0)
		return str_list(y, v, k, "filesystem.additional_directories", &y->p->additional_dirs);
	y->p->protected_set = true;
	return str_list(y, v, k, "filesystem.protected", &y->p->protected_paths);
}

static int hostexe_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	pol_host_exe *h;
	pol_strv paths = { NULL, 0 };
	int error;

	(void)arg;
	if (strchr(key, '/') || !*key)
		return yerr(y, k, "host_executables: \"%s\" must be a bare executable name", key);
	if ((error = str_list(y, v, k, "host_executables paths", &paths)) < 0)
		return error;
	for (size_t i = 0; i < paths.n; i++) {
		if (paths.v[i][0] != '/')
			return yerr(y, k, "host_executables: path %s must be absolute", paths.v[i]);
		if (strcmp(shell_basename(paths.v[i]), key) != 0)
			return yerr(y, k, "host_executables: path %s must have basename %s", paths.v[i], key);
	}
	if ((error = pol_add_hostexe(y->p, &h)) < 0)
		return error;
	if (!(h->name = pol_strdup(y->p, key)))
		return docket_error_set_oom();
	h->paths = paths.v;
	h->n = paths.n;
	return 0;
}

static int run_code_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	(void)arg;
	(void)key;
	y->p->languages_set = true;
	return str_list(y, v, k, "run_code.languages", &y->p->languages);
}

static int eco_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	pol_pkg_eco *eco = arg;

	if (strcmp(key, "allow") == 0) {
		pol_strv a = { NULL, 0 };
		int error = str_list(y, v, k, "packages allow", &a);

		eco->allow = a.v;
		eco->n = a.n;
		return error;
	}
	return decision(y, v, k, &eco->decision);
}

static int packages_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	static const char *const keys[] = { "allow", "otherwise", NULL };
	pol_pkg_eco *eco;
	int error;

	(void)arg;
	if ((error = pol_add_pkg(y->p, &eco)) < 0)
		return error;
	eco->decision = POL_ASK;
	if (!(eco->ecosystem = pol_strdup(y->p, key)))
		return docket_error_set_oom();
	return mapping(y, v, k, "a package ecosystem", keys, eco_key, eco);
}

static int platform_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	int plat = *(int *)arg;
	pol_strv caps = { NULL, 0 };
	int error;

	(void)key;
	if ((error = str_list(y, v, k, "platforms unsupported", &caps)) < 0)
		return error;
	for (size_t i = 0; i < caps.n; i++) {
		if (strcmp(caps.v[i], "sandbox") == 0)
			y->p->unsupported[plat] |= CAP_SANDBOX;
		else if (strcmp(caps.v[i], "network_filter") == 0)
			y->p->unsupported[plat] |= CAP_NETWORK_FILTER;
		else
			return yerr(y, k, "unknown capability \"%s\" (expected sandbox or network_filter)", caps.v[i]);
	}
	return 0;
}

static int platforms_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	static const char *const keys[] = { "unsupported", NULL };
	int plat;

	(void)arg;
	if (strcmp(key, "linux") == 0)
		plat = PLAT_LINUX;
	else if (strcmp(key, "macos") == 0)
		plat = PLAT_MACOS;
	else if (strcmp(key, "windows") == 0)
		plat = PLAT_WINDOWS;
	else
		return yerr(y, k, "unknown platform \"%s\" (expected linux, macos or windows)", key);
	return mapping(y, v, k, "a platform", keys, platform_key, &plat);
}

static int top_key(yctx *y, const char *key, struct fy_node *k, struct fy_node *v, void *arg)
{
	static const char *const sb_names[] = { "read_only", "workspace_write", "full_access", "external",
		"read-only", "workspace-write", "danger-full-access", "external-sandbox", "auto", NULL };
	static const int sb_values[] = { SB_READ_ONLY, SB_WORKSPACE_WRITE, SB_FULL_ACCESS, SB_EXTERNAL,
		SB_READ_ONLY, SB_WORKSPACE_WRITE, SB_FULL_ACCESS, SB_EXTERNAL, SB_WORKSPACE_WRITE };
	static const char *const ap_names[] = { "untrusted", "on_request", "never", "on-request", NULL };
	static const int ap_values[] = { AP_UNTRUSTED, AP_ON_REQUEST, AP_NEVER, AP_ON_REQUEST };
	static const char *const mode_names[] = { "default", "accept_edits", "plan", "bypass", "dont_ask", NULL };
	static const int mode_values[] = { MODE_DEFAULT, MODE_ACCEPT_EDITS, MODE_PLAN, MODE_BYPASS, MODE_DONT_ASK };
	static const char *const heur_names[] = { "codex", "claude", "ask", "allow", "deny", NULL };
	static const int heur_values[] = { HEUR_CODEX, HEUR_CLAUDE, HEUR_ASK, HEUR_ALLOW, HEUR_DENY };
	static const char *const fs_keys[] = { "readable", "writable", "protected", "additional_directories", NULL };
	static const char *const net_keys[] = { "enabled", "rules", NULL };
	static const char *const tool_keys[] = { "allow", "ask", "deny", NULL };
	static const char *const rc_keys[] = { "languages", NULL };
	docket_policy *p = y->p;

	(void)arg;
	if (strcmp(key, "version") == 0) {
		const char *s;
		int error = scalar(y, v, k, "version", &s);

		if (error == 0 && strcmp(s, "1") != 0)
			return yerr(y, v, "version: expected 1");
		return error;
	}
	if (strcmp(key, "sandbox") == 0)
		return enum_of(y, v, k, "sandbox (read_only, workspace_write, full_access, external)", sb_names, sb_values, &p->sandbox);
	if (strcmp(key, "approval") == 0)
		return enum_of(y, v, k, "approval (untrusted, on_request, never)", ap_names, ap_values, &p->approval);
	if (strcmp(key, "mode") == 0)
		return enum_of(y, v, k, "mode (default, accept_edits, plan, bypass, dont_ask)", mode_names, mode_values, &p->mode);
	if (strcmp(key, "heuristics") == 0)
		return enum_of(y, v, k, "heuristics (codex, claude, ask, allow, deny)", heur_names, heur_values, &p->heuristics);
	if (strcmp(key, "heredoc_prefix") == 0)
		return boolean(y, v, k, "heredoc_prefix", &p->heredoc_prefix);
	if (strcmp(key, "filesystem") == 0)
		return mapping(y, v, k, "filesystem", fs_keys, fs_key, NULL);
	if (strcmp(key, "network") == 0)
		return mapping(y, v, k, "network", net_keys, network_key, NULL);
	if (strcmp(key, "commands") == 0)
		return load_commands(y, k, v);
	if (strcmp(key, "tools") == 0)
		return mapping(y, v, k, "tools", tool_keys, tools_key, NULL);
	if (strcmp(key, "host_executables") == 0)
		return mapping(y, v, k, "host_executables", NULL, hostexe_key, NULL);
	if (strcmp(key, "run_code") == 0)
		return mapping(y, v, k, "run_code", rc_keys, run_code_key, NULL);
	if (strcmp(key, "packages") == 0)
		return mapping(y, v, k, "packages", NULL, packages_key, NULL);
	return mapping(y, v, k, "platforms", NULL, platforms_key, NULL);
}

/* Only blanks (text need not end in NUL). */
static bool all_blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", text[i]) || text[i] == '\0')
			return false;
	return true;
}

/*
 * YAML is Unicode text, and libfyaml 0.7 loops forever on a byte that is
 * not UTF-8 inside a directive ("%e\xe0e"): its directive scanner does
 * not advance over a character it cannot decode. So reject such input
 * first, naming the line and column (in bytes) of the first bad byte.
 */
static int check_utf8(const char *name, const char *text, size_t len)
{
	size_t bad = docket_utf8_check(text, len), line = 1, col = 1;

	if (bad == len)
		return 0;
	for (size_t i = 0; i < bad; i++, col++)
		if (text[i] == '\n') {
			line++;
			col = 0;
		}
	return docket_error_set(DOCKET_EINVALID, "%s:%zu:%zu: invalid YAML: not UTF-8 (byte 0x%02x)", name, line,
				col, (unsigned char)text[bad]);
}

static bool has_text(const char *text, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(text + i, needle, n) == 0)
			return true;
	return false;
}

/*
 * A file that failed as docket YAML but looks like another format (Codex
 * .rules calls, Claude Code settings keys): say which prefix loads it.
 */
static void format_hint(const char *name, const char *text, size_t len)
{
	static const char *const codex[] = { "prefix_rule(", "network_rule(", "host_executable(", NULL };
	static const char *const claude[] = { "\"permissions\"", "permissions:", "\"defaultMode\"", NULL };

	const char *hint = NULL;
	char msg[sizeof(docket_error_last()->message)];

	for (size_t i = 0; !hint && codex[i]; i++)
		if (has_text(text, len, codex[i]))
			hint = "codex";
	for (size_t i = 0; !hint && claude[i]; i++)
		if (has_text(text, len, claude[i]))
			hint = "claude";
	if (!hint)
		return;
	snprintf(msg, sizeof(msg), "%s", docket_error_last()->message);
	docket_error_set(DOCKET_EINVALID, "%s (this looks like %s: did you mean %s:%s?)", msg,
			 hint[1] == 'o' ? "Codex rules" : "Claude Code settings", hint, name);
}

int pol_yaml_parse(struct fy_document **out, const char *name, const char *text, size_t len, const char *empty)
{
	struct fy_diag_cfg dcfg;
	struct fy_diag *diag = NULL;
	struct fy_parse_cfg cfg;
	struct fy_document *doc = NULL;
	int error = 0;

	*out = NULL;
	if ((error = check_utf8(name, text, len)) < 0)
		return error;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.colorize = false;
	if (!(diag = fy_diag_create(&dcfg)))
		return docket_error_set_oom();
	fy_diag_set_collect_errors(diag, true);
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = FYPCF_QUIET | FYPCF_DISABLE_RECYCLING;
	cfg.diag = diag;
	doc = fy_document_build_from_string(&cfg, text, len);
	if (!doc) {
		void *it = NULL;
		struct fy_diag_error *de = fy_diag_errors_iterate(diag, &it);

		/* libfyaml's collected errors carry 1-based line and column */
		if (de)
			error = docket_error_set(DOCKET_EINVALID, "%s:%d:%d: invalid YAML: %s", name, de->line,
						 de->column, de->msg ? de->msg : "syntax error");
		else if (all_blank(text, len))
			error = docket_error_set(DOCKET_EINVALID, "%s:1:1: %s", name, empty);
		else
			error = docket_error_set(DOCKET_EINVALID, "%s: invalid YAML", name);
	} else if (!fy_document_root(doc)) {
		error = docket_error_set(DOCKET_EINVALID, "%s:1:1: %s", name, empty);
	}
	if (error < 0)
		fy_document_destroy(doc);
	else
		*out = doc;
	fy_diag_destroy(diag);
	return error;
}

int pol_load_yaml(docket_policy *p, const char *name, const char *text, size_t len)
{
	static const char *const keys[] = {
		"version", "sandbox", "approval", "mode", "heuristics", "heredoc_prefix", "filesystem",
		"network", "commands", "tools", "host_executables", "run_code", "packages", "platforms", NULL
	};
	struct fy_document *doc = NULL;
	struct fy_node *root;
	yctx y = { p, name, NULL, 0, 0 };
	int error = 0;

	if ((error = pol_yaml_parse(&doc, name, text, len, "empty policy (expected a mapping with version: 1)")) < 0)
		goto cleanup;
	root = fy_document_root(doc);
	if (!fy_node_is_mapping(root)) {
		error = yerr(&y, root, "expected a mapping at the top level");
		goto cleanup;
	}
	p->heuristics = HEUR_CODEX;
	p->heredoc_prefix = false;
	error = mapping(&y, root, root, "the policy", keys, top_key, NULL);
	if (error == 0)
		error = check_examples(&y);
cleanup:
	if (error == DOCKET_EINVALID)
		format_hint(name, text, len);
	docket_free(y.ex);
	fy_document_destroy(doc);
	return error;
}
