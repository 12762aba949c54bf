/* SPDX-License-Identifier: Apache-2.0 */
/*
 * redact.c: redaction of secrets, at export time and at write time.
 *
 * A redactor is a list of rules, each a POSIX extended regular expression
 * (regcomp/regexec: nothing here matches text by hand) with a name and the
 * capture group to replace (0: the whole match). The built-in rules cover
 * the common secrets; a rules document adds more (docket/audit.h). Every
 * match is replaced by "[REDACTED:<rule>]", so what was removed, and by which
 * rule, stays visible where it was (as OPA's decision logs list masked
 * fields). Redaction is idempotent: a span that already is a marker is left
 * alone, so replaying a batch (map growth) or re-sending an event (idempotent
 * appends) gives the same bytes.
 *
 * Besides the patterns, a redactor holds secret key names (password, token,
 * api_key, authorization, cookie, ...; configurable): the value under an
 * object key with such a name is replaced whole, whatever its type, by
 * "[REDACTED:secret-field]". Names match case-insensitively, across
 * spellings and as a suffix (api_key, api-key, apiKey, APIKEY, X-Api-Key,
 * GITHUB_TOKEN, DBPASSWORD: the key reduced to its lower-case letters and
 * digits ends with the name so reduced). Object
 * keys are redacted by the patterns too (a secret used as a key), and a
 * string that is a whole JSON object or array (a tool's JSON output) is
 * walked the same way and, when something in it was redacted, written back
 * compact.
 *
 * Write time: when the ledger's meta table holds rules under
 * REDACT_META_KEY, ledger_redact_event() rewrites each event at the start of
 * the append path, inside the write transaction and before validation, so a
 * secret never reaches a frame, an index or the disk. The compiled rules are
 * cached per rules text.
 */
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "docket/audit.h"
#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define REDACT_META_KEY "redaction_rules"
#define RULE_NAME_MAX 48
#define RULES_MAX 256
#define MARKER_PREFIX "[REDACTED:"
#define PATTERN_MAX 512
#define REPEAT_BUDGET 4096
#define KEYS_MAX 128
#define KEY_NAME_MAX 64
#define KEY_TAIL 128             /* a longer key is judged by its last bytes */
#define SECRET_FIELD_RULE "secret-field"
#define JSON_TEXT_DEPTH 2        /* JSON inside a string inside JSON inside a string */
#define JSON_TEXT_MAX ((size_t)1 << 20)
#define KEY_RENAME_MAX 1000

typedef struct redact_rule {
	char name[RULE_NAME_MAX + 1];
	regex_t re;
	size_t group;
} redact_rule;

/* A secret key name, as words joined by '_' ("api_key") and squashed ("apikey"). */
typedef struct secret_key {
	char words[2 * KEY_NAME_MAX + 1];
	char squashed[KEY_NAME_MAX + 1];
} secret_key;

struct docket_redactor {
	redact_rule *rules;
	size_t n;
	secret_key *keys;
	size_t nkeys;
};

typedef struct builtin_rule {
	const char *name;
	const char *pattern;
	int icase;
	size_t group;
} builtin_rule;

/* Most specific first: a private key block before the tokens inside it. */
static const builtin_rule builtins[] = {
	{ "private-key", "-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[^-]*"
			 "(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----)?", 0, 0 },
	{ "aws-access-key", "(^|[^A-Za-z0-9])((AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})([^A-Za-z0-9]|$)", 0, 2 },
	{ "aws-secret-key", "(aws_secret_access_key|aws_secret_key|secret_access_key)[\"']?[[:space:]]*"
			    "[:=][[:space:]]*[\"']?([A-Za-z0-9/+=]{40})", 1, 2 },
	{ "github-token", "(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}", 0, 0 },
	{ "gitlab-token", "glpat-[A-Za-z0-9_-]{20,}", 0, 0 },
	{ "slack-token", "xox[abposr]-[A-Za-z0-9-]{10,}", 0, 0 },
	{ "google-api-key", "AIza[0-9A-Za-z_-]{35}", 0, 0 },
	{ "stripe-key", "(sk|rk)_(live|test)_[A-Za-z0-9]{16,}", 0, 0 },
	{ "api-key", "(^|[^A-Za-z0-9_-])(sk-[A-Za-z0-9_-]{20,})", 0, 2 },
	{ "jwt", "eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}", 0, 0 },
	{ "url-password", "[A-Za-z][A-Za-z0-9+.-]*://[^/:@[:space:]]+:([^/@[:space:]]+)@", 0, 1 },
	{ "bearer-token", "bearer[[:space:]]+([A-Za-z0-9._~+/-]{8,}=*)", 1, 1 },
	{ "basic-auth", "authorization:[[:space:]]*basic[[:space:]]+([A-Za-z0-9+/]{8,}=*)", 1, 1 },
	{ "password-assignment", "(^|[^A-Za-z0-9])(password|passwd|pwd|secret|api[_-]?key|"
				 "access[_-]?token|auth[_-]?token)[\"']?[[:space:]]*[:=][[:space:]]*"
				 "[\"']?([^[:space:]\"'&,;]{4,})", 1, 3 },
};

/* The default secret key names (docs/audit.md "Redaction"). */
static const char *const builtin_keys[] = {
	"password", "passwd", "passphrase", "api_key", "token", "access_token", "refresh_token",
	"id_token", "auth_token", "secret", "client_secret", "secret_key", "secret_access_key",
	"private_key", "authorization", "cookie", "credential", "credentials",
};

/* ---- secret key names -------------------------------------------------- */

static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_lower_or_digit(int c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static int is_word_char(int c) { return is_upper(c) || is_lower_or_digit(c) || c >= 0x80; }

/*
 * The words of `key` in lower case joined by '_': separators are the
 * characters other than ASCII letters and digits, and camelCase humps
 * ("apiKey", "APIKey" -> "api_key"). Only the last KEY_TAIL bytes of a longer
 * key count (the names match at the end). `out` holds 2 * KEY_TAIL + 1.
 */
static size_t key_words(char *out, const char *key, size_t len)
{
	const unsigned char *s = (const unsigned char *)key;
	size_t n = 0;
	int sep = 0;

	if (len > KEY_TAIL) {
		s += len - KEY_TAIL;
		len = KEY_TAIL;
	}
	for (size_t i = 0; i < len; i++) {
		int c = s[i];

		if (!is_word_char(c)) {
			sep = n > 0;
			continue;
		}
		if (is_upper(c) && i > 0 &&
		    (is_lower_or_digit(s[i - 1]) || (is_upper(s[i - 1]) && i + 1 < len && s[i + 1] >= 'a' && s[i + 1] <= 'z')))
			sep = n > 0;
		if (sep)
			out[n++] = '_';
		sep = 0;
		out[n++] = (char)(is_upper(c) ? c - 'A' + 'a' : c);
	}
	out[n] = '\0';
	return n;
}

static size_t squash(char *out, const char *words)
{
	size_t n = 0;

	for (; *words; words++)
		if (*words != '_')
			out[n++] = *words;
	out[n] = '\0';
	return n;
}

static int add_key(docket_redactor *r, const char *name)
{
	char words[2 * KEY_TAIL + 1];
	size_t len = strlen(name);
	secret_key *k = &r->keys[r->nkeys];

	if (r->nkeys >= KEYS_MAX)
		return docket_error_set(DOCKET_EINVALID, "redaction rules: more than %d secret keys", KEYS_MAX);
	if (len == 0 || len > KEY_NAME_MAX || key_words(words, name, len) == 0)
		return docket_error_set(DOCKET_EINVALID,
			"redaction rules: secret key '%s': 1-%d characters, at least one letter or digit",
			name, KEY_NAME_MAX);
	memcpy(k->words, words, strlen(words) + 1);
	squash(k->squashed, words);
	r->nkeys++;
	return 0;
}

/* 1 when `key` names a secret: squashed (lower-case letters and digits
 * only), it ends with a name squashed ("DB_PASSWORD", "proxyPassword",
 * "PROXYPASSWORD" all end with "password"). Over-matching ("notoken") only
 * hides a value; under-matching would store a secret. */
static int key_is_secret(const docket_redactor *r, const char *key, size_t len)
{
	char words[2 * KEY_TAIL + 1], squashed[2 * KEY_TAIL + 1];
	size_t n;

	key_words(words, key, len);
	n = squash(squashed, words);
	for (size_t i = 0; i < r->nkeys; i++) {
		size_t kn = strlen(r->keys[i].squashed);

		if (n >= kn && memcmp(squashed + n - kn, r->keys[i].squashed, kn) == 0)
			return 1;
	}
	return 0;
}

static int add_builtin_keys(docket_redactor *r)
{
	int error = 0;

	for (size_t i = 0; i < sizeof(builtin_keys) / sizeof(builtin_keys[0]) && error == 0; i++)
		error = add_key(r, builtin_keys[i]);
	return error;
}

/* ---- rules ------------------------------------------------------------- */

static int rule_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= RULE_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_") == n;
}

/* Skip a bracket expression starting at p ('['); returns the char after it. */
static const char *skip_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (*p == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
			char kind = p[1];

			for (p += 2; *p && !(*p == kind && p[1] == ']'); p++)
				;
			p += *p ? 2 : 0;
			continue;
		}
		p++;
	}
	return *p ? p + 1 : p;
}

/* Parse "{m}", "{m,}", "{m,n}" at p; the largest count it allows (m when
 * open-ended); *end after the '}'. 0 when it is not a bound. */
static unsigned long bound_of(const char *p, const char **end)
{
	unsigned long lo = 0, hi = 0;
	char *e;

	lo = strtoul(p + 1, &e, 10);
	if (e == p + 1)
		return 0;
	hi = lo;
	if (*e == ',' && e[1] != '}')
		hi = strtoul(e + 1, &e, 10);
	else if (*e == ',')
		e++;
	if (*e != '}')
		return 0;
	*end = e + 1;
	return hi > lo ? hi : lo;
}

/*
 * glibc compiles repetition by unrolling it, so nested or stacked
 * repetitions ("a++++", "((a{99}){99}){99}") grow the automaton without
 * bound; POSIX leaves stacked duplication undefined anyway. Refuse them:
 * patterns are at most PATTERN_MAX bytes, no quantifier follows another,
 * and the product of the repetition bounds stays within REPEAT_BUDGET.
 */
static int pattern_ok(const char *name, const char *p)
{
	unsigned long budget = 1;
	int prev_quant = 0;

	if (strlen(p) > PATTERN_MAX)
		return docket_error_set(DOCKET_EINVALID, "redaction rule '%s': pattern longer than %d bytes",
					name, PATTERN_MAX);
	while (*p) {
		const char *next = p + 1;
		unsigned long n = 0;
		int quant = 0;

		if (*p == '\\' && p[1] >= '1' && p[1] <= '9')
			return docket_error_set(DOCKET_EINVALID,
				"redaction rule '%s': back-references are not supported", name);
		if (*p == '\\' && p[1])
			next = p + 2;
		else if (*p == '[')
			next = skip_bracket(p);
		else if (*p == '{' && (n = bound_of(p, &next)) > 0)
			quant = 1;
		else
			quant = *p == '*' || *p == '+' || *p == '?';
		if (quant && prev_quant)
			return docket_error_set(DOCKET_EINVALID,
				"redaction rule '%s': a repetition may not follow another", name);
		if (n > 1 && (budget *= n) > REPEAT_BUDGET)
			return docket_error_set(DOCKET_EINVALID,
				"redaction rule '%s': repetition counts too large", name);
		prev_quant = quant;
		p = next;
	}
	return 0;
}

static int add_rule(docket_redactor *r, const char *name, const char *pattern, int icase,
		    size_t group)
{
	redact_rule *rule = &r->rules[r->n];
	char msg[128];
	int rc;

	int error;

	if (!rule_name_ok(name))
		return docket_error_set(DOCKET_EINVALID,
			"redaction rule name '%s': 1-%d characters of a-z 0-9 - _", name, RULE_NAME_MAX);
	if ((error = pattern_ok(name, pattern)) < 0)
		return error;
	if ((rc = regcomp(&rule->re, pattern, REG_EXTENDED | (icase ? REG_ICASE : 0))) != 0) {
		regerror(rc, &rule->re, msg, sizeof(msg));
		return docket_error_set(rc == REG_ESPACE ? DOCKET_ENOMEM : DOCKET_EINVALID,
					"redaction rule '%s': %s", name, msg);
	}
	if (group > rule->re.re_nsub) {
		regfree(&rule->re);
		return docket_error_set(DOCKET_EINVALID, "redaction rule '%s': no capture group %zu",
					name, group);
	}
	memcpy(rule->name, name, strlen(name) + 1);
	rule->group = group;
	r->n++;
	return 0;
}

static int add_builtins(docket_redactor *r)
{
	int error = 0;

	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]) && error == 0; i++)
		error = add_rule(r, builtins[i].name, builtins[i].pattern, builtins[i].icase,
				 builtins[i].group);
	return error;
}

static int check_keys(const json_t *obj, const char *where, const char *const *keys)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return docket_error_set(DOCKET_EINVALID, "redaction rules: %s must be an object", where);
	json_object_foreach((json_t *)obj, key, v) {
		size_t i = 0;

		while (keys[i] && strcmp(keys[i], key) != 0)
			i++;
		if (!keys[i])
			return docket_error_set(DOCKET_EINVALID, "redaction rules: unknown field '%s' in %s",
						key, where);
	}
	return 0;
}

static int add_user_rule(docket_redactor *r, const json_t *rule, size_t index)
{
	static const char *const keys[] = { "name", "pattern", "group", "icase", NULL };
	const json_t *name = json_object_get(rule, "name"), *pattern = json_object_get(rule, "pattern");
	const json_t *group = json_object_get(rule, "group"), *icase = json_object_get(rule, "icase");
	char where[32];
	int error;

	snprintf(where, sizeof(where), "rules[%zu]", index);
	if ((error = check_keys(rule, where, keys)) < 0)
		return error;
	if (!json_is_string(name) || !json_is_string(pattern) || !*json_string_value(pattern))
		return docket_error_set(DOCKET_EINVALID,
			"redaction rules: %s needs a string 'name' and a non-empty 'pattern'", where);
	if ((group && (!json_is_integer(group) || json_integer_value(group) < 0 ||
		       json_integer_value(group) > 9)) ||
	    (icase && !json_is_boolean(icase)))
		return docket_error_set(DOCKET_EINVALID,
			"redaction rules: %s: 'group' is 0-9, 'icase' a boolean", where);
	return add_rule(r, json_string_value(name), json_string_value(pattern),
			icase && json_is_true(icase), group ? (size_t)json_integer_value(group) : 0);
}

static int load_document(docket_redactor *r, const char *text, size_t len)
{
	static const char *const keys[] = { "builtin", "rules", "keys", NULL };
	json_t *doc = NULL, *rules, *builtin, *rule, *names;
	size_t i;
	int error;

	if ((error = docket_json_parse(&doc, text, len)) < 0) {
		docket_error_prefix("redaction rules: ");
		return error;
	}
	if ((error = check_keys(doc, "the document", keys)) < 0)
		goto cleanup;
	builtin = json_object_get(doc, "builtin");
	rules = json_object_get(doc, "rules");
	names = json_object_get(doc, "keys");
	if ((builtin && !json_is_boolean(builtin)) || (rules && !json_is_array(rules)) ||
	    (names && !json_is_array(names))) {
		error = docket_error_set(DOCKET_EINVALID,
			"redaction rules: 'builtin' is a boolean, 'rules' and 'keys' arrays");
		goto cleanup;
	}
	if (json_array_size(rules) > RULES_MAX - sizeof(builtins) / sizeof(builtins[0])) {
		error = docket_error_set(DOCKET_EINVALID, "redaction rules: too many rules");
		goto cleanup;
	}
	if ((!builtin || json_is_true(builtin)) && ((error = add_builtins(r)) < 0 || (error = add_builtin_keys(r)) < 0))
		goto cleanup;
	json_array_foreach(rules, i, rule)
		if ((error = add_user_rule(r, rule, i)) < 0)
			goto cleanup;
	json_array_foreach(names, i, rule) {
		if (!json_is_string(rule)) {
			error = docket_error_set(DOCKET_EINVALID, "redaction rules: keys[%zu] is not a string", i);
			goto cleanup;
		}
		if ((error = add_key(r, json_string_value(rule))) < 0)
			goto cleanup;
	}
cleanup:
	json_decref(doc);
	return error;
}

int docket_redactor_new(docket_redactor **out, const char *rules_json, size_t len)
{
	docket_redactor *r;
	int error;

	*out = NULL;
	if (!(r = docket_calloc(1, sizeof(*r))) ||
	    !(r->rules = docket_calloc(RULES_MAX, sizeof(*r->rules))) ||
	    !(r->keys = docket_calloc(KEYS_MAX, sizeof(*r->keys)))) {
		docket_redactor_free(r);
		return docket_error_set_oom();
	}
	if (rules_json)
		error = load_document(r, rules_json, len);
	else if ((error = add_builtins(r)) == 0)
		error = add_builtin_keys(r);
	if (error < 0) {
		docket_redactor_free(r);
		return error;
	}
	*out = r;
	return 0;
}

void docket_redactor_free(docket_redactor *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		regfree(&r->rules[i].re);
	docket_free(r->rules);
	docket_free(r->keys);
	docket_free(r);
}

size_t docket_redactor_rules(const docket_redactor *r, const char **names, size_t max)
{
	for (size_t i = 0; i < r->n && i < max; i++)
		names[i] = r->rules[i].name;
	return r->n;
}

size_t docket_redactor_keys(const docket_redactor *r, const char **names, size_t max)
{
	for (size_t i = 0; i < r->nkeys && i < max; i++)
		names[i] = r->keys[i].words;
	return r->nkeys;
}

/* ---- strings ----------------------------------------------------------- */

static int is_marker(const char *s, size_t len)
{
	size_t plen = sizeof(MARKER_PREFIX) - 1;

	return len > plen && memcmp(s, MARKER_PREFIX, plen) == 0 && s[len - 1] == ']' &&
	       memchr(s + plen, ']', len - plen - 1) == NULL;
}

/* The end of a marker in `in` that overlaps [so, eo), or 0 when none does:
 * text inside markers is never matched again (idempotence). */
static size_t overlapping_marker(const char *in, size_t len, size_t so, size_t eo)
{
	size_t plen = sizeof(MARKER_PREFIX) - 1, at = 0;
	const char *p;

	while ((p = memmem(in + at, len - at, MARKER_PREFIX, plen))) {
		size_t ms = (size_t)(p - in);
		const char *close = memchr(p + plen, ']', len - ms - plen);
		size_t me;

		if (!close || ms >= eo)
			break;
		me = (size_t)(close - in) + 1;
		if (me > so && is_marker(p, me - ms))
			return me;
		at = ms + 1;
	}
	return 0;
}

/* Widen [*so, *eo) to whole UTF-8 characters. */
static void utf8_widen(const char *s, size_t len, size_t *so, size_t *eo)
{
	while (*so > 0 && ((unsigned char)s[*so] & 0xC0) == 0x80)
		(*so)--;
	while (*eo < len && ((unsigned char)s[*eo] & 0xC0) == 0x80)
		(*eo)++;
}

/*
 * Apply one rule to `in`, writing the result to `out` (cleared first).
 * *hits counts the replacements.
 */
static int apply_rule(const redact_rule *rule, const char *in, size_t len, docket_buf *out,
		      size_t *hits)
{
	regmatch_t m[10];
	size_t pos = 0, copied = 0, skip;
	int error;

	docket_buf_clear(out);
	*hits = 0;
	while (pos <= len) {
		size_t so, eo;

		m[0].rm_so = (regoff_t)pos;
		m[0].rm_eo = (regoff_t)len;
		if (regexec(&rule->re, in, rule->group + 1, m, REG_STARTEND | (pos ? REG_NOTBOL : 0)) != 0)
			break;
		if ((skip = overlapping_marker(in, len, (size_t)m[0].rm_so, (size_t)m[0].rm_eo)) > 0) {
			pos = skip > pos ? skip : pos + 1;
			continue;
		}
		if (m[rule->group].rm_so < 0 || m[rule->group].rm_eo <= m[rule->group].rm_so) {
			pos = (size_t)m[0].rm_eo > pos ? (size_t)m[0].rm_eo : pos + 1;
			continue;
		}
		so = (size_t)m[rule->group].rm_so;
		eo = (size_t)m[rule->group].rm_eo;
		utf8_widen(in, len, &so, &eo);
		pos = eo > pos ? eo : pos + 1;
		if (so < copied)
			continue;
		if ((error = docket_buf_put(out, in + copied, so - copied)) < 0 ||
		    (error = docket_buf_printf(out, MARKER_PREFIX "%s]", rule->name)) < 0)
			return error;
		copied = eo;
		(*hits)++;
	}
	return docket_buf_put(out, in + copied, len - copied);
}

/* ---- events (JSON) ----------------------------------------------------- */

/* Top-level members that are ids, enums, numbers or hashes: never redacted. */
static const char *const structural_keys[] = {
	"type", "time", "epoch", "seq", "hash", "session", "invocation", "turn", "request",
	"token", "attempt", "status", "result", "recovery", "format", "platform", "runtime",
	"parent", "reviewer", "revision", "exit_code", "duration_ms", "redacted", NULL
};

typedef struct walk {
	const docket_redactor *r;
	json_t *hits;
	docket_buf path;
	docket_buf a, b;
	int changed;
	int depth;              /* JSON texts entered */
} walk;

static int add_hit(walk *w, const char *rule, const char *stage)
{
	json_t *hit;

	if (!w->hits)
		return 0;
	hit = stage ? json_pack("{s:s, s:s, s:s}", "field", w->path.ptr, "rule", rule, "stage", stage)
		    : json_pack("{s:s, s:s}", "field", w->path.ptr, "rule", rule);
	if (!hit || json_array_append_new(w->hits, hit) < 0)
		return docket_error_set_oom();
	return 0;
}

/* List the markers already in `s` (write-time redactions). */
static int list_markers(walk *w, const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	int error;

	if (!w->hits)
		return 0;
	while ((p = memmem(p, (size_t)(end - p), MARKER_PREFIX, sizeof(MARKER_PREFIX) - 1))) {
		const char *name = p + sizeof(MARKER_PREFIX) - 1;
		const char *close = memchr(name, ']', (size_t)(end - name));
		char rule[RULE_NAME_MAX + 1];

		if (!close)
			break;
		if (close > name && (size_t)(close - name) <= RULE_NAME_MAX) {
			memcpy(rule, name, (size_t)(close - name));
			rule[close - name] = '\0';
			if (rule_name_ok(rule) && (error = add_hit(w, rule, "ledger")) < 0)
				return error;
		}
		p = close + 1;
	}
	return 0;
}

/* Apply every rule to `s`; *out is the result (w->a or w->b), or NULL when
 * no rule matched. Each rule that matched is a hit at the current path. */
static int redact_text(walk *w, const char *s, size_t len, const docket_buf **out)
{
	docket_buf *cur = NULL;
	int error;

	*out = NULL;
	for (size_t i = 0; i < w->r->n; i++) {
		docket_buf *next = cur == &w->a ? &w->b : &w->a;
		size_t hits = 0;

		if ((error = apply_rule(&w->r->rules[i], cur ? cur->ptr : s, cur ? cur->len : len,
					next, &hits)) < 0)
			return error;
		if (hits == 0)
			continue;
		cur = next;
		if ((error = add_hit(w, w->r->rules[i].name, NULL)) < 0)
			return error;
	}
	*out = cur;
	return 0;
}

static int walk_value(walk *w, json_t *v);

/*
 * A string that is a whole JSON object or array (a tool's JSON output) is
 * walked like the event: secret keys, secret patterns, secrets as keys.
 * When something in it was redacted it is written back compact; otherwise
 * it is left byte for byte. Text that is not JSON is left to the patterns.
 */
static int redact_json_text(walk *w, json_t *str)
{
	const char *s = json_string_value(str);
	size_t len = json_string_length(str), i = 0;
	docket_buf text = DOCKET_BUF_INIT;
	json_t *inner;
	int outer_changed = w->changed, error = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	if (w->depth >= JSON_TEXT_DEPTH || len > JSON_TEXT_MAX || i == len || (s[i] != '{' && s[i] != '['))
		return 0;
	if (!(inner = json_loadb(s, len, 0, NULL)))
		return 0;
	w->changed = 0;
	w->depth++;
	error = walk_value(w, inner);
	w->depth--;
	if (error == 0 && w->changed && (error = docket_json_dump(&text, inner)) == 0 &&
	    json_string_setn_nocheck(str, text.ptr, text.len) < 0)
		error = docket_error_set_oom();
	w->changed |= outer_changed;
	json_decref(inner);
	docket_buf_dispose(&text);
	return error;
}

static int redact_leaf(walk *w, json_t *str)
{
	const docket_buf *cur = NULL;
	int error;

	if ((error = list_markers(w, json_string_value(str), json_string_length(str))) < 0 ||
	    (error = redact_json_text(w, str)) < 0 ||
	    (error = redact_text(w, json_string_value(str), json_string_length(str), &cur)) < 0)
		return error;
	if (!cur)
		return 0;
	w->changed = 1;
	if (json_string_setn_nocheck(str, cur->ptr, cur->len) < 0)
		return docket_error_set_oom();
	return 0;
}

/* Append `key` (or [index]) to the path. */
static int path_push(walk *w, const char *key, size_t index)
{
	if (key)
		return docket_buf_printf(&w->path, "%s%s", w->path.len ? "." : "", key);
	return docket_buf_printf(&w->path, "[%zu]", index);
}

static void path_pop(walk *w, size_t mark)
{
	w->path.len = mark;
	if (w->path.ptr)
		w->path.ptr[mark] = '\0';
}

static int walk_child(walk *w, json_t *child, const char *key, size_t index)
{
	size_t mark = w->path.len;
	int error;

	if ((error = path_push(w, key, index)) == 0)
		error = walk_value(w, child);
	path_pop(w, mark);
	return error;
}

/* A value with nothing to hide: null, a boolean, "" or a marker. */
static int nothing_to_hide(const json_t *v)
{
	return json_is_null(v) || json_is_boolean(v) ||
	       (json_is_string(v) && (json_string_length(v) == 0 ||
				       is_marker(json_string_value(v), json_string_length(v))));
}

static int has_marker_prefix(const char *s)
{
	return strncmp(s, MARKER_PREFIX, sizeof(MARKER_PREFIX) - 1) == 0;
}

/* The value of a member whose key names a secret: replaced whole. */
static int redact_secret_value(walk *w, json_t *obj, void *iter, const char *key)
{
	size_t mark = w->path.len;
	int error;

	if (nothing_to_hide(json_object_iter_value(iter)))
		return 0;
	if (json_object_iter_set_new(obj, iter, json_string(MARKER_PREFIX SECRET_FIELD_RULE "]")) < 0)
		return docket_error_set_oom();
	w->changed = 1;
	if ((error = path_push(w, key, 0)) == 0)
		error = add_hit(w, SECRET_FIELD_RULE, NULL);
	path_pop(w, mark);
	return error;
}

/* `key` as the patterns leave it (*out NULL: unchanged), in a new string. */
static int redact_key(walk *w, const char *key, char **out)
{
	const docket_buf *cur = NULL;
	size_t mark = w->path.len;
	int error;

	*out = NULL;
	if (has_marker_prefix(key))
		return 0;
	/* a hit on a key is reported at its object: the key itself is the secret */
	if ((error = path_push(w, "{key}", 0)) == 0)
		error = redact_text(w, key, strlen(key), &cur);
	path_pop(w, mark);
	if (error == 0 && cur && !(*out = docket_strndup(cur->ptr, cur->len)))
		error = docket_error_set_oom();
	return error;
}

/* Move the member `old` of `obj` to `key`, made unique with "#N". */
static int rename_member(json_t *obj, const char *old, const char *key)
{
	docket_buf name = DOCKET_BUF_INIT;
	json_t *v = json_incref(json_object_get(obj, old));
	int error = docket_buf_puts(&name, key);

	for (unsigned n = 2; error == 0 && json_object_get(obj, name.ptr); n++) {
		docket_buf_clear(&name);
		error = n > KEY_RENAME_MAX ? docket_error_set(DOCKET_EINVALID, "too many secrets used as keys in one object")
					   : docket_buf_printf(&name, "%s#%u", key, n);
	}
	if (error == 0 && (json_object_del(obj, old) < 0 || json_object_set(obj, name.ptr, v) < 0))
		error = docket_error_set_oom();
	json_decref(v);
	docket_buf_dispose(&name);
	return error;
}

/*
 * An object: each key is redacted by the patterns (a secret used as a key;
 * the path then shows the redacted key), a member whose key names a secret
 * has its value replaced, every other value is walked. Renames happen after
 * the walk (an object may not change keys while it is iterated).
 */
static int walk_object(walk *w, json_t *obj)
{
	char **renamed = NULL;
	size_t n = json_object_size(obj), i = 0;
	int error = 0;

	if (n && !(renamed = docket_calloc(n, sizeof(*renamed))))
		return docket_error_set_oom();
	for (void *it = json_object_iter(obj); it && error == 0; it = json_object_iter_next(obj, it), i++) {
		const char *key = json_object_iter_key(it);

		if ((error = redact_key(w, key, &renamed[i])) < 0)
			break;
		if (!has_marker_prefix(key) && key_is_secret(w->r, key, strlen(key)))
			error = redact_secret_value(w, obj, it, renamed[i] ? renamed[i] : key);
		else
			error = walk_child(w, json_object_iter_value(it), renamed[i] ? renamed[i] : key, 0);
	}
	if (error == 0) {
		/* keys first, as the loop saw them: renaming moves members to the end */
		const char **old = n ? docket_calloc(n, sizeof(*old)) : NULL;
		size_t k = 0;

		if (n && !old)
			error = docket_error_set_oom();
		for (void *it = json_object_iter(obj); error == 0 && it && k < n; it = json_object_iter_next(obj, it))
			old[k++] = json_object_iter_key(it);
		for (size_t j = 0; error == 0 && j < k; j++)
			if (renamed[j]) {
				w->changed = 1;
				error = rename_member(obj, old[j], renamed[j]);
			}
		docket_free((void *)old);
	}
	for (size_t j = 0; j < n; j++)
		docket_free(renamed[j]);
	docket_free(renamed);
	return error;
}

static int walk_value(walk *w, json_t *v)
{
	json_t *child;
	size_t i;
	int error = 0;

	if (json_is_string(v))
		return redact_leaf(w, v);
	if (json_is_object(v))
		return walk_object(w, v);
	if (json_is_array(v))
		json_array_foreach(v, i, child)
			if ((error = walk_child(w, child, NULL, i)) < 0)
				return error;
	return error;
}

static int structural(const char *key)
{
	for (size_t i = 0; structural_keys[i]; i++)
		if (strcmp(structural_keys[i], key) == 0)
			return 1;
	return 0;
}

int docket_redact_event(const docket_redactor *r, json_t *event, json_t *hits, int *changed)
{
	walk w = { r, hits, DOCKET_BUF_INIT, DOCKET_BUF_INIT, DOCKET_BUF_INIT, 0, 0 };
	const char *key;
	json_t *child;
	int error = 0;

	if (changed)
		*changed = 0;
	if (!json_is_object(event))
		return docket_error_set(DOCKET_EINVALID, "an event must be a JSON object");
	json_object_foreach(event, key, child) {
		if (structural(key))
			continue;
		if ((error = walk_child(&w, child, key, 0)) < 0)
			break;
	}
	if (changed)
		*changed = w.changed;
	docket_buf_dispose(&w.path);
	docket_buf_dispose(&w.a);
	docket_buf_dispose(&w.b);
	return error;
}

/* ---- write time -------------------------------------------------------- */

/* The compiled rules of the last rules text seen (appends are serialised by
 * LMDB's writer lock; the mutex covers several ledgers in one process). */
static struct {
	pthread_mutex_t lock;
	char *text;
	size_t len;
	docket_redactor *r;
} cache = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, NULL };

static int cached_redactor(const docket_redactor **out, const MDB_val *rules)
{
	docket_redactor *r = NULL;
	char *text;
	int error;

	if (cache.r && cache.len == rules->mv_size && memcmp(cache.text, rules->mv_data, cache.len) == 0) {
		*out = cache.r;
		return 0;
	}
	if ((error = docket_redactor_new(&r, rules->mv_data, rules->mv_size)) < 0) {
		docket_error_prefix("the ledger's redaction rules: ");
		return error;
	}
	if (!(text = docket_malloc(rules->mv_size ? rules->mv_size : 1))) {
		docket_redactor_free(r);
		return docket_error_set_oom();
	}
	memcpy(text, rules->mv_data, rules->mv_size);
	docket_redactor_free(cache.r);
	docket_free(cache.text);
	cache.r = r;
	cache.text = text;
	cache.len = rules->mv_size;
	*out = r;
	return 0;
}

/* Replace the contents of `ev` by those of `fresh` (which is then freed). */
static void event_swap_free(docket_event *ev, docket_event *fresh)
{
	docket_event tmp = *ev;

	*ev = *fresh;
	*fresh = tmp;
	docket_event_free(fresh);
}

static int redact_with(const docket_redactor *r, docket_event *ev)
{
	docket_event *fresh = NULL;
	json_t *obj = NULL;
	int changed = 0, error;

	if ((error = docket_event_to_json(&obj, ev)) < 0 ||
	    (error = docket_redact_event(r, obj, NULL, &changed)) < 0 || !changed)
		goto cleanup;
	if ((error = docket_event_from_json(&fresh, obj)) < 0)
		goto cleanup;
	event_swap_free(ev, fresh);
cleanup:
	json_decref(obj);
	return error;
}

int ledger_redact_configured(docket_ledger *l, MDB_txn *txn)
{
	MDB_val rules;
	int error = store_meta_get(txn, l, REDACT_META_KEY, &rules);

	return error == 0 ? 1 : error == DOCKET_ENOTFOUND ? 0 : error;
}

int ledger_redact_event(docket_ledger *l, MDB_txn *txn, docket_event *ev)
{
	const docket_redactor *r = NULL;
	MDB_val rules;
	int error;

	if ((error = store_meta_get(txn, l, REDACT_META_KEY, &rules)) < 0)
		return error == DOCKET_ENOTFOUND ? 0 : error;
	pthread_mutex_lock(&cache.lock);
	if ((error = cached_redactor(&r, &rules)) == 0)
		error = redact_with(r, ev);
	pthread_mutex_unlock(&cache.lock);
	return error;
}

static int set_rules_txn(docket_ledger *l, const docket_buf *text)
{
	MDB_txn *txn = NULL;
	int error;

	if ((error = store_txn_begin(&txn, l, 0)) < 0)
		return error;
	if (text) {
		error = store_meta_put(txn, l, REDACT_META_KEY, text->ptr, text->len);
	} else {
		MDB_val k = { sizeof(REDACT_META_KEY) - 1, (void *)REDACT_META_KEY };
		int rc = mdb_del(txn, l->dbi.meta, &k, NULL);

		error = rc == 0 || rc == MDB_NOTFOUND ? 0 : store_error(rc, "clear redaction rules");
	}
	if (error < 0) {
		store_txn_abort(l, txn);
		return error;
	}
	return store_txn_commit(l, txn);
}

int docket_ledger_set_redaction(docket_ledger *l, const char *rules_json, size_t len)
{
	docket_redactor *check = NULL;
	docket_buf text = DOCKET_BUF_INIT;
	json_t *doc = NULL;
	int error;

	if (l->flags & DOCKET_OPEN_READONLY)
		return docket_error_set(DOCKET_EINVALID, "ledger %s is open read-only", l->path);
	if (rules_json) {
		if ((error = docket_redactor_new(&check, rules_json, len)) < 0)
			return error;
		docket_redactor_free(check);
		if ((error = docket_json_parse(&doc, rules_json, len)) < 0 ||
		    (error = docket_json_dump(&text, doc)) < 0)
			goto cleanup;
	}
	for (;;) {
		error = set_rules_txn(l, rules_json ? &text : NULL);
		if (error != DOCKET_EMAPFULL || (error = store_grow(l)) < 0)
			break;
	}
cleanup:
	json_decref(doc);
	docket_buf_dispose(&text);
	return error;
}

int docket_ledger_get_redaction(docket_ledger *l, char **out)
{
	MDB_txn *txn = NULL;
	MDB_val v;
	int error;

	*out = NULL;
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	error = store_meta_get(txn, l, REDACT_META_KEY, &v);
	if (error == 0 && !(*out = docket_strndup(v.mv_data, v.mv_size)))
		error = docket_error_set_oom();
	store_txn_abort(l, txn);
	return error == DOCKET_ENOTFOUND ? 0 : error;
}
