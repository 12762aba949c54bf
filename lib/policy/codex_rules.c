/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codex_rules.c: Codex execpolicy `.rules` files, the Starlark subset they
 * use in practice: top-level calls of prefix_rule, network_rule and
 * host_executable with string, list and None arguments, positional or by
 * keyword, and `#` comments. Anything else is an error with file:line:col.
 *
 * After a file is read, every `match` example must match one of the rules
 * its prefix_rule made and no `not_match` example may (as Codex checks).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"

#define MAX_DEPTH 8
#define MAX_ARGS 8

enum val_kind { V_NONE = 0, V_STR, V_LIST };

typedef struct val {
	int kind;
	const char *s;          /* V_STR, arena */
	struct val *items;      /* V_LIST, arena */
	size_t n;
	unsigned line, col;
} val;

typedef struct binding {
	const char *name;
	size_t n;
	struct val v;
} binding;

typedef struct lexer {
	docket_policy *p;
	const char *name;
	const char *t;
	size_t len, i;
	unsigned line, col;
	binding *vars;          /* top-level assignments, newest last */
	size_t nvars, capvars;
	bool in_call;           /* newlines are blanks inside an argument list */
} lexer;

typedef struct pending {
	size_t first_rule, nrules;
	val match, not_match;
	unsigned line, col;
} pending;

static int lex_error(const lexer *lx, unsigned line, unsigned col, const char *what)
{
	return docket_error_set(DOCKET_EINVALID, "%s:%u:%u: %s", lx->name, line, col, what);
}

static void adv(lexer *lx)
{
	if (lx->i < lx->len) {
		if (lx->t[lx->i] == '\n') {
			lx->line++;
			lx->col = 1;
		} else if (((unsigned char)lx->t[lx->i] & 0xC0) != 0x80) {
			lx->col++;
		}
		lx->i++;
	}
}

static void skip_ws(lexer *lx, bool newlines)
{
	while (lx->i < lx->len) {
		char c = lx->t[lx->i];

		if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
			adv(lx);
		} else if (c == '\\' && lx->i + 1 < lx->len && lx->t[lx->i + 1] == '\n') {
			adv(lx);
			adv(lx);
		} else if (c == '#') {
			while (lx->i < lx->len && lx->t[lx->i] != '\n')
				adv(lx);
		} else {
			break;
		}
	}
}

static bool peek(lexer *lx, char c)
{
	return lx->i < lx->len && lx->t[lx->i] == c;
}

static int put_utf8(docket_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return docket_buf_put(b, u, n);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* A Starlark string literal: '...', "...", triple-quoted, r-prefixed raw. */
static int lex_string(lexer *lx, val *out)
{
	docket_buf b = DOCKET_BUF_INIT;
	unsigned line = lx->line, col = lx->col;
	bool raw = false, triple = false;
	char q;
	int error = 0;

	if (peek(lx, 'r')) {
		raw = true;
		adv(lx);
	}
	q = lx->t[lx->i];
	adv(lx);
	if (lx->i + 1 < lx->len && lx->t[lx->i] == q && lx->t[lx->i + 1] == q) {
		triple = true;
		adv(lx);
		adv(lx);
	}
	for (;;) {
		char c;

		if (lx->i >= lx->len) {
			error = lex_error(lx, line, col, "unterminated string");
			goto cleanup;
		}
		c = lx->t[lx->i];
		if (c == q) {
			if (!triple) {
				adv(lx);
				break;
			}
			if (lx->i + 2 < lx->len && lx->t[lx->i + 1] == q && lx->t[lx->i + 2] == q) {
				adv(lx);
				adv(lx);
				adv(lx);
				break;
			}
		}
		if (c == '\n' && !triple) {
			error = lex_error(lx, line, col, "unterminated string (newline in string)");
			goto cleanup;
		}
		if (c == '\\' && lx->i + 1 < lx->len) {
			char e = lx->t[lx->i + 1];

			if (raw) {
				if (e == q || e == '\\') {
					if ((error = docket_buf_putc(&b, '\\')) < 0 ||
					    (error = docket_buf_putc(&b, e)) < 0)
						goto cleanup;
					adv(lx);
					adv(lx);
					continue;
				}
				if ((error = docket_buf_putc(&b, c)) < 0)
					goto cleanup;
				adv(lx);
				continue;
			}
			adv(lx);
			adv(lx);
			switch (e) {
			case 'n': error = docket_buf_putc(&b, '\n'); break;
			case 't': error = docket_buf_putc(&b, '\t'); break;
			case 'r': error = docket_buf_putc(&b, '\r'); break;
			case '0': error = docket_buf_putc(&b, '\0'); break;
			case '\\': case '\'': case '"': error = docket_buf_putc(&b, e); break;
			case '\n': break;
			case 'x': case 'u': case 'U': {
				int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
				unsigned long cp = 0;

				for (int k = 0; k < digits; k++) {
					int h = lx->i < lx->len ? hexval(lx->t[lx->i]) : -1;

					if (h < 0) {
						error = lex_error(lx, lx->line, lx->col, "bad escape in string");
						goto cleanup;
					}
					cp = cp * 16 + (unsigned long)h;
					adv(lx);
				}
				if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0) {
					error = lex_error(lx, lx->line, lx->col, "bad code point in string");
					goto cleanup;
				}
				error = put_utf8(&b, cp);
				break;
			}
			default:
				error = lex_error(lx, lx->line, lx->col, "invalid escape sequence in string");
				goto cleanup;
			}
			if (error < 0)
				goto cleanup;
			continue;
		}
		if ((error = docket_buf_putc(&b, c)) < 0)
			goto cleanup;
		adv(lx);
	}
	if (memchr(b.ptr ? b.ptr : "", '\0', b.len)) {
		error = lex_error(lx, line, col, "NUL character in string");
		goto cleanup;
	}
	out->kind = V_STR;
	out->line = line;
	out->col = col;
	if (!(out->s = pol_strndup(lx->p, b.ptr ? b.ptr : "", b.len)))
		error = docket_error_set_oom();
cleanup:
	docket_buf_dispose(&b);
	return error;
}

static int parse_value(lexer *lx, val *out, int depth);

static int parse_list(lexer *lx, val *out, int depth)
{
	val *items = NULL;
	size_t n = 0, cap = 0;
	int error = 0;

	out->kind = V_LIST;
	out->line = lx->line;
	out->col = lx->col;
	adv(lx); /* [ */
	for (;;) {
		skip_ws(lx, true);
		if (peek(lx, ']')) {
			adv(lx);
			break;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			val *ni = pol_alloc(lx->p, ncap * sizeof(*ni));

			if (!ni)
				return docket_error_set_oom();
			if (n)
				memcpy(ni, items, n * sizeof(*ni));
			items = ni;
			cap = ncap;
		}
		memset(&items[n], 0, sizeof(items[n]));
		if ((error = parse_value(lx, &items[n], depth + 1)) < 0)
			return error;
		n++;
		skip_ws(lx, true);
		if (peek(lx, ',')) {
			adv(lx);
			continue;
		}
		if (peek(lx, ']')) {
			adv(lx);
			break;
		}
		return lex_error(lx, lx->line, lx->col, "expected ',' or ']' in list");
	}
	out->items = items;
	out->n = n;
	return 0;
}

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static size_t lex_ident(lexer *lx, const char **start)
{
	size_t s = lx->i;

	*start = lx->t + s;
	while (lx->i < lx->len && ident_char(lx->t[lx->i]))
		adv(lx);
	return lx->i - s;
}

static const val *lookup(const lexer *lx, const char *id, size_t n)
{
	for (size_t i = lx->nvars; i > 0; i--)
		if (lx->vars[i - 1].n == n && memcmp(lx->vars[i - 1].name, id, n) == 0)
			return &lx->vars[i - 1].v;
	return NULL;
}

/* `a + b` of two strings or two lists, into out (arena). */
static int concat(lexer *lx, val *out, const val *b, unsigned line, unsigned col)
{
	if (out->kind == V_STR && b->kind == V_STR) {
		size_t la = strlen(out->s), lb = strlen(b->s);
		char *s = pol_alloc(lx->p, la + lb + 1);

		if (!s)
			return docket_error_set_oom();
		memcpy(s, out->s, la);
		memcpy(s + la, b->s, lb + 1);
		out->s = s;
		return 0;
	}
	if (out->kind == V_LIST && b->kind == V_LIST) {
		val *items = pol_alloc(lx->p, (out->n + b->n ? out->n + b->n : 1) * sizeof(*items));

		if (!items)
			return docket_error_set_oom();
		if (out->n)
			memcpy(items, out->items, out->n * sizeof(*items));
		if (b->n)
			memcpy(items + out->n, b->items, b->n * sizeof(*items));
		out->items = items;
		out->n += b->n;
		return 0;
	}
	return lex_error(lx, line, col, "operation `+` not supported for these types");
}

static int parse_primary(lexer *lx, val *out, int depth);

/* An expression: primary { '+' primary } (Starlark's concatenation). */
static int parse_value(lexer *lx, val *out, int depth)
{
	int error = parse_primary(lx, out, depth);

	for (;;) {
		size_t save_i = lx->i;
		unsigned save_line = lx->line, save_col = lx->col, line, col;
		val b = { 0 };

		if (error < 0)
			return error;
		skip_ws(lx, depth > 0 || lx->in_call);
		if (!peek(lx, '+') || (lx->i + 1 < lx->len && lx->t[lx->i + 1] == '=')) {
			lx->i = save_i;
			lx->line = save_line;
			lx->col = save_col;
			return 0;
		}
		line = lx->line;
		col = lx->col;
		adv(lx);
		if ((error = parse_primary(lx, &b, depth)) == 0)
			error = concat(lx, out, &b, line, col);
	}
}

static int parse_primary(lexer *lx, val *out, int depth)
{
	const char *id;
	size_t n;
	unsigned line = lx->line, col = lx->col;
	const val *bound;

	if (depth > MAX_DEPTH)
		return lex_error(lx, line, col, "values nested too deeply");
	skip_ws(lx, depth > 0 || lx->in_call);
	if (lx->i >= lx->len)
		return lex_error(lx, lx->line, lx->col, "expected a value, found end of file");
	if (peek(lx, '"') || peek(lx, '\'') ||
	    (peek(lx, 'r') && lx->i + 1 < lx->len && (lx->t[lx->i + 1] == '"' || lx->t[lx->i + 1] == '\'')))
		return lex_string(lx, out);
	if (peek(lx, '['))
		return parse_list(lx, out, depth);
	n = lex_ident(lx, &id);
	if (n == 4 && memcmp(id, "None", 4) == 0) {
		out->kind = V_NONE;
		out->line = line;
		out->col = col;
		return 0;
	}
	if (n > 0 && id[0] >= '0' && id[0] <= '9')
		return lex_error(lx, line, col, "expected a string, a list or None");
	if (n > 0 && (bound = lookup(lx, id, n))) {
		*out = *bound;
		return 0;
	}
	if (n > 0)
		return docket_error_set(DOCKET_EINVALID, "%s:%u:%u: variable `%.*s` not found", lx->name, line,
					col, (int)(n < 64 ? n : 64), id);
	return lex_error(lx, line, col, "expected a string, a list or None");
}

static const char *kind_name(const val *v)
{
	return v->kind == V_STR ? "string" : v->kind == V_LIST ? "list" : "NoneType";
}

/* ---- building rules ---- */

static int rule_error(const lexer *lx, const val *at, const char *fmt, ...) DOCKET_PRINTF(3, 4);

static int rule_error(const lexer *lx, const val *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return docket_error_set(DOCKET_EINVALID, "%s:%u:%u: invalid rule: %s", lx->name, at->line,
				at->col, msg);
}

static int parse_decision(const lexer *lx, const val *v, int *out, bool network)
{
	if (v->kind != V_STR)
		return rule_error(lx, v, "decision must be a string (got %s)", kind_name(v));
	if (strcmp(v->s, "allow") == 0)
		*out = POL_ALLOW;
	else if (strcmp(v->s, "prompt") == 0)
		*out = POL_ASK;
	else if (strcmp(v->s, "forbidden") == 0 || (network && strcmp(v->s, "deny") == 0))
		*out = POL_DENY;
	else
		return rule_error(lx, v, "decision must be allow, prompt or forbidden (got %s)", v->s);
	return 0;
}

static int parse_justification(const lexer *lx, const val *v, const char **out)
{
	const char *s;

	*out = NULL;
	if (!v || v->kind == V_NONE)
		return 0;
	if (v->kind != V_STR)
		return rule_error(lx, v, "justification must be a string (got %s)", kind_name(v));
	for (s = v->s; *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'; s++)
		;
	if (!*s)
		return rule_error(lx, v, "justification cannot be empty");
	*out = v->s;
	return 0;
}

static int render_str(docket_buf *b, const char *s)
{
	int error = docket_buf_putc(b, '"');

	for (; *s && error == 0; s++) {
		if (*s == '"' || *s == '\\')
			error = docket_buf_putc(b, '\\');
		if (error == 0) {
			if (*s == '\n')
				error = docket_buf_puts(b, "\\n");
			else
				error = docket_buf_putc(b, *s);
		}
	}
	return error ? error : docket_buf_putc(b, '"');
}

static int render_prefix(docket_policy *p, pol_prefix_rule *r)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	error = docket_buf_puts(&b, "prefix_rule(pattern=[");
	if (error == 0)
		error = render_str(&b, r->program);
	for (size_t i = 0; i < r->nrest && error == 0; i++) {
		error = docket_buf_puts(&b, ", ");
		if (error == 0 && r->rest[i].n > 1)
			error = docket_buf_putc(&b, '[');
		for (size_t k = 0; k < r->rest[i].n && error == 0; k++) {
			if (k)
				error = docket_buf_puts(&b, ", ");
			if (error == 0)
				error = render_str(&b, r->rest[i].alts[k]);
		}
		if (error == 0 && r->rest[i].n > 1)
			error = docket_buf_putc(&b, ']');
	}
	if (error == 0)
		error = docket_buf_printf(&b, "], decision=\"%s\"", pol_codex_decision_name(r->decision));
	if (error == 0 && r->justification) {
		error = docket_buf_puts(&b, ", justification=");
		if (error == 0)
			error = render_str(&b, r->justification);
	}
	if (error == 0)
		error = docket_buf_putc(&b, ')');
	if (error == 0 && !(r->text = pol_strndup(p, b.ptr, b.len)))
		error = docket_error_set_oom();
	docket_buf_dispose(&b);
	return error;
}

static int pattern_token(lexer *lx, const val *v, pol_pattok *out)
{
	if (v->kind == V_STR) {
		if (!(out->alts = pol_alloc(lx->p, sizeof(char *))))
			return docket_error_set_oom();
		out->alts[0] = v->s;
		out->n = 1;
		return 0;
	}
	if (v->kind != V_LIST)
		return rule_error(lx, v, "pattern element must be a string or list of strings (got %s)",
				  kind_name(v));
	if (v->n == 0)
		return rule_error(lx, v, "pattern alternatives cannot be empty");
	if (!(out->alts = pol_alloc(lx->p, v->n * sizeof(char *))))
		return docket_error_set_oom();
	for (size_t i = 0; i < v->n; i++) {
		if (v->items[i].kind != V_STR)
			return rule_error(lx, &v->items[i], "pattern alternative must be a string (got %s)",
					  kind_name(&v->items[i]));
		out->alts[i] = v->items[i].s;
	}
	out->n = v->n;
	return 0;
}

static int check_examples(const val *v, const char *what, const lexer *lx)
{
	if (!v || v->kind == V_NONE)
		return 0;
	if (v->kind != V_LIST)
		return rule_error(lx, v, "%s must be a list of examples", what);
	for (size_t i = 0; i < v->n; i++) {
		const val *e = &v->items[i];

		if (e->kind == V_STR) {
			if (!*e->s)
				return rule_error(lx, e, "example cannot be an empty string");
			continue;
		}
		if (e->kind != V_LIST)
			return rule_error(lx, e, "example must be a string or list of strings (got %s)",
					  kind_name(e));
		if (e->n == 0)
			return rule_error(lx, e, "example cannot be an empty list");
		for (size_t k = 0; k < e->n; k++)
			if (e->items[k].kind != V_STR)
				return rule_error(lx, &e->items[k], "example tokens must be strings (got %s)",
						  kind_name(&e->items[k]));
	}
	return 0;
}

static int build_prefix_rule(lexer *lx, val *args[], const val *call, pending *pend)
{
	const val *pat = args[0];
	pol_pattok first;
	pol_pattok *rest = NULL;
	const char *just = NULL;
	int decision = POL_ALLOW, error;

	if (!pat)
		return rule_error(lx, call, "prefix_rule needs a pattern");
	if (pat->kind != V_LIST)
		return rule_error(lx, pat, "pattern must be a list (got %s)", kind_name(pat));
	if (pat->n == 0)
		return rule_error(lx, pat, "pattern cannot be empty");
	if (args[1] && args[1]->kind != V_NONE && (error = parse_decision(lx, args[1], &decision, false)) < 0)
		return error;
	if ((error = parse_justification(lx, args[4], &just)) < 0)
		return error;
	if ((error = check_examples(args[2], "match", lx)) < 0 ||
	    (error = check_examples(args[3], "not_match", lx)) < 0)
		return error;
	if ((error = pattern_token(lx, &pat->items[0], &first)) < 0)
		return error;
	if (pat->n > 1) {
		if (!(rest = pol_alloc(lx->p, (pat->n - 1) * sizeof(*rest))))
			return docket_error_set_oom();
		for (size_t i = 1; i < pat->n; i++)
			if ((error = pattern_token(lx, &pat->items[i], &rest[i - 1])) < 0)
				return error;
	}
	pend->first_rule = lx->p->nprefix;
	pend->nrules = first.n;
	pend->line = call->line;
	pend->col = call->col;
	if (args[2])
		pend->match = *args[2];
	if (args[3])
		pend->not_match = *args[3];
	/* only the first token's alternatives expand into separate rules */
	for (size_t a = 0; a < first.n; a++) {
		pol_prefix_rule *r;

		if ((error = pol_add_prefix(lx->p, &r)) < 0)
			return error;
		r->program = first.alts[a];
		r->rest = rest;
		r->nrest = pat->n - 1;
		r->decision = decision;
		r->justification = just;
		r->origin.file = lx->name;
		r->origin.line = call->line;
		r->origin.col = call->col;
		if ((error = render_prefix(lx->p, r)) < 0)
			return error;
	}
	return 0;
}

int pol_parse_network_host(docket_policy *p, pol_net_rule *r, const char *raw, bool allow_wildcard)
{
	const char *h = raw, *end;
	char *norm;
	size_t n;

	while (*h == ' ' || *h == '\t')
		h++;
	end = h + strlen(h);
	while (end > h && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	n = (size_t)(end - h);
	if (n == 0)
		return docket_error_set(DOCKET_EINVALID, "network_rule host cannot be empty");
	for (size_t i = 0; i < n; i++)
		if (h[i] == '/' || h[i] == '?' || h[i] == '#')
			return docket_error_set(DOCKET_EINVALID,
				"network_rule host must be a hostname or IP literal (without scheme or path)");
	if (h[0] == '[') {
		const char *close = memchr(h, ']', n);

		if (!close)
			return docket_error_set(DOCKET_EINVALID, "network_rule host has an invalid bracketed IPv6 literal");
		if (close + 1 < end) {
			const char *q = close + 1;
			unsigned port = 0;

			if (*q != ':' || q + 1 >= end)
				return docket_error_set(DOCKET_EINVALID, "network_rule host contains an unsupported suffix: %s", raw);
			for (q++; q < end; q++) {
				if (*q < '0' || *q > '9' || (port = port * 10 + (unsigned)(*q - '0')) > 65535)
					return docket_error_set(DOCKET_EINVALID, "network_rule host contains an unsupported suffix: %s", raw);
			}
			r->port = port;
		}
		h++;
		n = (size_t)(close - h);
	} else {
		const char *colon = memchr(h, ':', n);

		if (colon && !memchr(colon + 1, ':', (size_t)(end - colon - 1)) && colon > h && colon + 1 < end) {
			unsigned port = 0;
			bool digits = true;

			for (const char *q = colon + 1; q < end; q++) {
				if (*q < '0' || *q > '9' || port > 65535)
					digits = false;
				else
					port = port * 10 + (unsigned)(*q - '0');
				if (port > 65535)
					digits = false;
			}
			if (digits) {
				r->port = port;
				n = (size_t)(colon - h);
			}
		}
	}
	while (n > 0 && h[n - 1] == '.')
		n--;
	if (n == 0)
		return docket_error_set(DOCKET_EINVALID, "network_rule host cannot be empty");
	if (!(norm = pol_strndup(p, h, n)))
		return docket_error_set_oom();
	for (size_t i = 0; i < n; i++) {
		if (norm[i] >= 'A' && norm[i] <= 'Z')
			norm[i] = (char)(norm[i] - 'A' + 'a');
		if (norm[i] == ' ' || norm[i] == '\t' || norm[i] == '\n')
			return docket_error_set(DOCKET_EINVALID, "network_rule host cannot contain whitespace");
		if (norm[i] == '*' && !(allow_wildcard && i == 0 && n > 2 && norm[1] == '.'))
			return docket_error_set(DOCKET_EINVALID,
				"network_rule host must be a specific host; wildcards are not allowed");
	}
	r->host = norm;
	return 0;
}

static int parse_protocol(const char *s, int *out)
{
	if (strcmp(s, "http") == 0)
		*out = PROTO_HTTP;
	else if (strcmp(s, "https") == 0 || strcmp(s, "https_connect") == 0 || strcmp(s, "http-connect") == 0)
		*out = PROTO_HTTPS;
	else if (strcmp(s, "socks5_tcp") == 0)
		*out = PROTO_SOCKS5_TCP;
	else if (strcmp(s, "socks5_udp") == 0)
		*out = PROTO_SOCKS5_UDP;
	else
		return -1;
	return 0;
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

static int build_network_rule(lexer *lx, val *args[], const val *call)
{
	pol_net_rule *r;
	docket_buf b = DOCKET_BUF_INIT;
	int error, proto, decision;
	const char *just;

	for (int i = 0; i < 3; i++)
		if (!args[i] || args[i]->kind != V_STR)
			return rule_error(lx, args[i] ? args[i] : call,
					  "network_rule needs string host, protocol and decision");
	if (parse_protocol(args[1]->s, &proto) < 0)
		return rule_error(lx, args[1],
			"network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got %s)",
			args[1]->s);
	if ((error = parse_decision(lx, args[2], &decision, true)) < 0)
		return error;
	if ((error = parse_justification(lx, args[3], &just)) < 0)
		return error;
	if ((error = pol_add_net(lx->p, &r)) < 0)
		return error;
	if ((error = pol_parse_network_host(lx->p, r, args[0]->s, false)) < 0) {
		lx->p->nnet--;
		if (error == DOCKET_EINVALID)
			docket_error_prefix("%s:%u:%u: invalid rule: ", lx->name, args[0]->line, args[0]->col);
		return error;
	}
	r->protocol = proto;
	r->decision = decision;
	r->justification = just;
	r->origin.file = lx->name;
	r->origin.line = call->line;
	r->origin.col = call->col;
	error = docket_buf_printf(&b, "network_rule(host=\"%s\", protocol=\"%s\", decision=\"%s\")",
				  r->host, proto_name(proto),
				  decision == POL_DENY ? "deny" : pol_codex_decision_name(decision));
	if (error == 0 && !(r->text = pol_strndup(lx->p, b.ptr, b.len)))
		error = docket_error_set_oom();
	docket_buf_dispose(&b);
	return error;
}

static int build_host_executable(lexer *lx, val *args[], const val *call)
{
	const val *name = args[0], *paths = args[1];
	pol_host_exe *h;
	const char **v;
	size_t n = 0;
	int error;

	if (!name || name->kind != V_STR)
		return rule_error(lx, name ? name : call, "host_executable needs a string name");
	if (!paths || paths->kind != V_LIST)
		return rule_error(lx, paths ? paths : call, "host_executable needs a list of paths");
	if (!*name->s)
		return rule_error(lx, name, "host_executable name cannot be empty");
	if (strchr(name->s, '/') || strcmp(name->s, ".") == 0 || strcmp(name->s, "..") == 0)
		return rule_error(lx, name, "host_executable name must be a bare executable name (got %s)",
				  name->s);
	if (!(v = pol_alloc(lx->p, (paths->n ? paths->n : 1) * sizeof(*v))))
		return docket_error_set_oom();
	for (size_t i = 0; i < paths->n; i++) {
		const val *pv = &paths->items[i];
		bool dup = false;

		if (pv->kind != V_STR)
			return rule_error(lx, pv, "host_executable paths must be strings (got %s)", kind_name(pv));
		if (pv->s[0] != '/' && strncmp(pv->s, "~/", 2) != 0)
			return rule_error(lx, pv,
				"host_executable paths must be absolute or use `~/...` home-relative syntax (got %s)",
				pv->s);
		if (strcmp(shell_basename(pv->s), name->s) != 0)
			return rule_error(lx, pv, "host_executable path `%s` must have basename `%s`",
					  pv->s, name->s);
		for (size_t k = 0; k < n; k++)
			if (strcmp(v[k], pv->s) == 0)
				dup = true;
		if (!dup)
			v[n++] = pv->s;
	}
	if ((error = pol_add_hostexe(lx->p, &h)) < 0)
		return error;
	h->name = name->s;
	h->paths = v;
	h->n = n;
	return 0;
}

static const char *const prefix_params[] = { "pattern", "decision", "match", "not_match", "justification", NULL };
static const char *const network_params[] = { "host", "protocol", "decision", "justification", NULL };
static const char *const hostexe_params[] = { "name", "paths", NULL };

/* ---- example validation (after the file, as Codex does) ---- */

static int example_argv(shell_split *sp, const val *e, const char **argv, size_t cap, size_t *argc)
{
	if (e->kind == V_STR) {
		if (shell_shlex_split(sp, e->s) != 0 || sp->nwords == 0)
			return -1;
		if (sp->nwords > cap)
			return -1;
		for (size_t i = 0; i < sp->nwords; i++)
			argv[i] = sp->text.ptr + sp->word_off[i];
		*argc = sp->nwords;
		return 0;
	}
	if (e->n > cap)
		return -1;
	for (size_t i = 0; i < e->n; i++)
		argv[i] = e->items[i].s;
	*argc = e->n;
	return 0;
}

/* The examples of one list as text (a list of words joined like a shell). */
static int example_texts(docket_policy *p, const val *list, const char ***out, size_t *n)
{
	const char *argv[256];

	*n = 0;
	if (list->kind != V_LIST || list->n == 0)
		return 0;
	if (!(*out = pol_alloc(p, list->n * sizeof(char *))))
		return docket_error_set_oom();
	for (size_t i = 0; i < list->n; i++) {
		const val *e = &list->items[i];
		docket_buf b = DOCKET_BUF_INIT;
		int error = 0;

		if (e->kind == V_STR) {
			(*out)[(*n)++] = e->s;
			continue;
		}
		for (size_t w = 0; w < e->n && w < 256; w++)
			argv[w] = e->items[w].s;
		if ((error = shell_join(&b, argv, e->n < 256 ? e->n : 256)) == 0 &&
		    !((*out)[(*n)++] = pol_strndup(p, b.ptr, b.len)))
			error = docket_error_set_oom();
		docket_buf_dispose(&b);
		if (error < 0)
			return error;
	}
	return 0;
}

/* Keep a rule's checked examples in the model (`policy convert` writes them). */
static int keep_examples(docket_policy *p, const pending *pd)
{
	const char **match = NULL, **not_match = NULL;
	size_t nmatch, nnot;
	int error;

	if ((error = example_texts(p, &pd->match, &match, &nmatch)) < 0 ||
	    (error = example_texts(p, &pd->not_match, &not_match, &nnot)) < 0)
		return error;
	for (size_t r = pd->first_rule; r < pd->first_rule + pd->nrules; r++) {
		p->prefix[r].match = match;
		p->prefix[r].nmatch = nmatch;
		p->prefix[r].not_match = not_match;
		p->prefix[r].nnot_match = nnot;
	}
	return 0;
}

static int validate_examples(lexer *lx, const pending *pend, size_t npend)
{
	shell_split sp;
	const char *argv[256];
	int error = 0;

	if ((error = pol_finalize(lx->p)) < 0)
		return error;
	shell_split_init(&sp);
	for (size_t k = 0; k < npend && error == 0; k++) {
		const pending *pd = &pend[k];

		for (size_t i = 0; pd->not_match.kind == V_LIST && i < pd->not_match.n && error == 0; i++) {
			size_t argc = 0;

			if (example_argv(&sp, &pd->not_match.items[i], argv, 256, &argc) < 0) {
				error = rule_error(lx, &pd->not_match.items[i], "example string has invalid shell syntax");
				break;
			}
			if (pol_prefix_rules_match(lx->p, pd->first_rule, pd->nrules, argv, argc))
				error = docket_error_set(DOCKET_EINVALID,
					"%s:%u:%u: invalid rule: not_match example %u matched the rule",
					lx->name, pd->not_match.items[i].line, pd->not_match.items[i].col,
					(unsigned)i + 1);
		}
		for (size_t i = 0; pd->match.kind == V_LIST && i < pd->match.n && error == 0; i++) {
			size_t argc = 0;

			if (example_argv(&sp, &pd->match.items[i], argv, 256, &argc) < 0) {
				error = rule_error(lx, &pd->match.items[i], "example string has invalid shell syntax");
				break;
			}
			if (!pol_prefix_rules_match(lx->p, pd->first_rule, pd->nrules, argv, argc))
				error = docket_error_set(DOCKET_EINVALID,
					"%s:%u:%u: invalid rule: match example %u did not match the rule",
					lx->name, pd->match.items[i].line, pd->match.items[i].col,
					(unsigned)i + 1);
		}
	}
	shell_split_dispose(&sp);
	for (size_t k = 0; k < npend && error == 0; k++)
		error = keep_examples(lx->p, &pend[k]);
	return error;
}

/* ---- the statement loop ---- */

/* Codex's builtins type their parameters (str, list): None is never
 * accepted for one, even for the optional ones. */
static int not_none(const lexer *lx, const val *v, const char *param)
{
	if (v->kind != V_NONE)
		return 0;
	return rule_error(lx, v, "type of parameter `%s` doesn't match (got NoneType)", param);
}

/*
 * `NAME = expr` or `NAME += expr` at the top level (the constants people
 * factor out of their rules). Returns 1 when the statement is not an
 * assignment, 0 when it was one, or an error.
 */
static int assignment(lexer *lx, const char *id, size_t n)
{
	bool append;
	val v = { 0 };
	const val *old;
	unsigned line, col;
	int error;

	skip_ws(lx, false);
	line = lx->line;
	col = lx->col;
	append = peek(lx, '+') && lx->i + 1 < lx->len && lx->t[lx->i + 1] == '=';
	if (!append && !(peek(lx, '=') && !(lx->i + 1 < lx->len && lx->t[lx->i + 1] == '=')))
		return 1;
	adv(lx);
	if (append)
		adv(lx);
	if ((error = parse_value(lx, &v, 0)) < 0)
		return error;
	if (append) {
		val cur;

		if (!(old = lookup(lx, id, n)))
			return docket_error_set(DOCKET_EINVALID, "%s:%u:%u: variable `%.*s` not found", lx->name,
						line, col, (int)(n < 64 ? n : 64), id);
		cur = *old;
		if ((error = concat(lx, &cur, &v, line, col)) < 0)
			return error;
		v = cur;
	}
	if (lx->nvars == lx->capvars) {
		size_t nc = lx->capvars ? lx->capvars * 2 : 8;
		binding *nb = docket_realloc(lx->vars, nc * sizeof(*nb));

		if (!nb)
			return docket_error_set_oom();
		lx->vars = nb;
		lx->capvars = nc;
	}
	lx->vars[lx->nvars].name = id;
	lx->vars[lx->nvars].n = n;
	lx->vars[lx->nvars++].v = v;
	return 0;
}

/* ---- the file: statements ---- */

enum rule_fn { FN_PREFIX = 0, FN_NETWORK, FN_HOSTEXE };

/* The pending examples of the prefix rules, checked once the file is read. */
typedef struct pending_list {
	pending *v;
	size_t n, cap;
} pending_list;

/* Blanks, comments and `;` between statements. */
static void skip_separators(lexer *lx)
{
	skip_ws(lx, true);
	while (peek(lx, ';')) {
		adv(lx);
		skip_ws(lx, true);
	}
}

/*
 * What the statement starting with identifier `id` is: one of the three
 * functions (1, *fn and *params set), an assignment already parsed (0), or
 * an error (an unknown function).
 */
static int statement_kind(lexer *lx, const char *id, size_t idlen, const val *call, int *fn,
			  const char *const **params)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	if (idlen == 11 && memcmp(id, "prefix_rule", 11) == 0) {
		*fn = FN_PREFIX;
		*params = prefix_params;
		return 1;
	}
	if (idlen == 12 && memcmp(id, "network_rule", 12) == 0) {
		*fn = FN_NETWORK;
		*params = network_params;
		return 1;
	}
	if (idlen == 15 && memcmp(id, "host_executable", 15) == 0) {
		*fn = FN_HOSTEXE;
		*params = hostexe_params;
		return 1;
	}
	if ((error = assignment(lx, id, idlen)) <= 0)
		return error;
	if (docket_buf_put(&b, id, idlen < 64 ? idlen : 64) < 0)
		error = docket_error_set_oom();
	else
		error = docket_error_set(DOCKET_EINVALID,
			"%s:%u:%u: unknown function `%s` (expected prefix_rule, network_rule or host_executable)",
			lx->name, call->line, call->col, b.ptr);
	docket_buf_dispose(&b);
	return error;
}

/* `NAME = value`: the value into args[] at NAME's parameter. */
static int keyword_argument(lexer *lx, const char *const *params, val **args, const char *nid, size_t nlen,
			    val *v, unsigned aline, unsigned acol)
{
	size_t k;
	int error;

	adv(lx);
	for (k = 0; params[k]; k++)
		if (strlen(params[k]) == nlen && memcmp(params[k], nid, nlen) == 0)
			break;
	if (!params[k])
		return docket_error_set(DOCKET_EINVALID, "%s:%u:%u: unexpected keyword argument `%.*s`", lx->name,
					aline, acol, (int)(nlen < 64 ? nlen : 64), nid);
	if (args[k])
		return docket_error_set(DOCKET_EINVALID, "%s:%u:%u: argument `%s` given twice", lx->name, aline, acol,
					params[k]);
	if ((error = parse_value(lx, v, 0)) < 0 || (error = not_none(lx, v, params[k])) < 0)
		return error;
	args[k] = v;
	return 0;
}

/* A positional value into args[*npos]. */
static int positional_argument(lexer *lx, const char *const *params, val **args, size_t *npos, val *v,
			       unsigned aline, unsigned acol)
{
	int error;

	if (*npos >= MAX_ARGS || !params[*npos])
		return lex_error(lx, aline, acol, "too many positional arguments");
	if (args[*npos])
		return lex_error(lx, aline, acol, "argument given twice");
	if ((error = parse_value(lx, v, 0)) < 0 || (error = not_none(lx, v, params[*npos])) < 0)
		return error;
	args[(*npos)++] = v;
	return 0;
}

/* One argument, keyword or positional. */
static int argument(lexer *lx, const char *const *params, val **args, size_t *npos)
{
	unsigned aline = lx->line, acol = lx->col, save_line, save_col;
	size_t nlen, save_i;
	const char *nid;
	val *v;

	if (!(v = pol_alloc(lx->p, sizeof(*v))))
		return docket_error_set_oom();
	memset(v, 0, sizeof(*v));
	save_i = lx->i;
	save_line = lx->line;
	save_col = lx->col;
	nlen = lex_ident(lx, &nid);
	skip_ws(lx, true);
	if (nlen > 0 && peek(lx, '=') && !(lx->i + 1 < lx->len && lx->t[lx->i + 1] == '='))
		return keyword_argument(lx, params, args, nid, nlen, v, aline, acol);
	lx->i = save_i;
	lx->line = save_line;
	lx->col = save_col;
	return positional_argument(lx, params, args, npos, v, aline, acol);
}

/* `( arg, ... )` after a function name: the values into args[] by parameter. */
static int argument_list(lexer *lx, const char *const *params, val **args)
{
	size_t npos = 0;
	int error;

	skip_ws(lx, false);
	if (!peek(lx, '('))
		return lex_error(lx, lx->line, lx->col, "expected '(' after the function name");
	adv(lx);
	lx->in_call = true;
	for (;;) {
		skip_ws(lx, true);
		if (peek(lx, ')'))
			break;
		if ((error = argument(lx, params, args, &npos)) < 0)
			return error;
		skip_ws(lx, true);
		if (peek(lx, ','))
			adv(lx);
		else if (!peek(lx, ')'))
			return lex_error(lx, lx->line, lx->col, "expected ',' or ')' in the argument list");
	}
	adv(lx);
	lx->in_call = false;
	return 0;
}

/* A new zeroed pending entry at the end of the list. */
static int pending_push(pending_list *l, pending **out)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 16;
		pending *np = docket_realloc(l->v, nc * sizeof(*np));

		if (!np)
			return docket_error_set_oom();
		l->v = np;
		l->cap = nc;
	}
	*out = &l->v[l->n];
	memset(*out, 0, sizeof(**out));
	return 0;
}

/* The rule (or host executable) a call of `fn` with `args` makes. */
static int build_statement(lexer *lx, int fn, val **args, const val *call, pending_list *pend)
{
	pending *pd = NULL;
	int error;

	if (fn == FN_NETWORK)
		return build_network_rule(lx, args, call);
	if (fn == FN_HOSTEXE)
		return build_host_executable(lx, args, call);
	if ((error = pending_push(pend, &pd)) < 0 || (error = build_prefix_rule(lx, args, call, pd)) < 0)
		return error;
	pend->n++;
	return 0;
}

/* A statement ends at a newline, ';' or the end of the file. */
static int statement_end(lexer *lx)
{
	skip_ws(lx, false);
	if (lx->i < lx->len && !peek(lx, '\n') && !peek(lx, ';'))
		return lex_error(lx, lx->line, lx->col, "expected a newline after the statement");
	return 0;
}

/* One statement: an assignment or a call of one of the three functions. */
static int statement(lexer *lx, pending_list *pend)
{
	const char *id;
	const char *const *params = NULL;
	val *args[MAX_ARGS] = { 0 };
	val call = { 0 };
	size_t idlen;
	int fn = FN_PREFIX, error;

	call.line = lx->line;
	call.col = lx->col;
	if ((idlen = lex_ident(lx, &id)) == 0)
		return lex_error(lx, lx->line, lx->col, "expected prefix_rule, network_rule or host_executable");
	if ((error = statement_kind(lx, id, idlen, &call, &fn, &params)) < 0)
		return error;
	if (error == 1 && ((error = argument_list(lx, params, args)) < 0 ||
			   (error = build_statement(lx, fn, args, &call, pend)) < 0))
		return error;
	return statement_end(lx);
}

int pol_load_codex_rules(docket_policy *p, const char *name, const char *text, size_t len)
{
	lexer lx = { p, name, text, len, 0, 1, 1, NULL, 0, 0, false };
	pending_list pend = { NULL, 0, 0 };
	int error = 0;

	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		lx.i = 3;
	for (;;) {
		skip_separators(&lx);
		if (lx.i >= lx.len)
			break;
		if ((error = statement(&lx, &pend)) < 0)
			break;
	}
	if (error == 0)
		error = validate_examples(&lx, pend.v, pend.n);
	docket_free(lx.vars);
	docket_free(pend.v);
	return error;
}

/* ---- amendments: the lines Codex appends for "always allow" answers ---- */

int pol_codex_amend_allow(docket_buf *file, const char *const *argv, size_t argc)
{
	docket_buf line = DOCKET_BUF_INIT;
	int error;

	if (argc == 0)
		return docket_error_set(DOCKET_EINVALID, "prefix cannot be empty");
	error = docket_buf_puts(&line, "prefix_rule(pattern=[");
	for (size_t i = 0; i < argc && error == 0; i++) {
		if (i)
			error = docket_buf_puts(&line, ", ");
		if (error == 0)
			error = render_str(&line, argv[i]);
	}
	if (error == 0)
		error = docket_buf_puts(&line, "], decision=\"allow\")\n");
	if (error == 0 && !(file->ptr && strstr(file->ptr, line.ptr))) {
		if (file->len && file->ptr[file->len - 1] != '\n')
			error = docket_buf_putc(file, '\n');
		if (error == 0)
			error = docket_buf_put(file, line.ptr, line.len);
	}
	docket_buf_dispose(&line);
	return error;
}

int pol_codex_amend_network(docket_buf *file, const char *host, int protocol, int decision,
			    const char *justification)
{
	int error = 0;

	if (file->len && file->ptr[file->len - 1] != '\n')
		error = docket_buf_putc(file, '\n');
	if (error == 0)
		error = docket_buf_puts(file, "network_rule(host=");
	if (error == 0)
		error = render_str(file, host);
	if (error == 0)
		error = docket_buf_printf(file, ", protocol=\"%s\", decision=\"%s\"", proto_name(protocol),
					  decision == POL_DENY ? "deny" : pol_codex_decision_name(decision));
	if (error == 0 && justification) {
		error = docket_buf_puts(file, ", justification=");
		if (error == 0)
			error = render_str(file, justification);
	}
	if (error == 0)
		error = docket_buf_puts(file, ")\n");
	return error;
}
