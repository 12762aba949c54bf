/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pseudo.c: keyed pseudonyms for exports (HMAC-SHA-256, OpenSSL).
 *
 * A pseudonym is kind "-" and the first 16 hex digits of
 * HMAC-SHA-256(key, kind ":" value): stable for one key, so exports made
 * with the same key can still be joined, and useless without the key. Kinds:
 * "session" (session and parent ids), "actor" (who approved or revised a
 * policy), "user" (the account name in home paths and USER/LOGNAME).
 *
 * User names are found, per event, in home paths (/home/NAME, /Users/NAME,
 * C:\Users\NAME where NAME may hold spaces), in USER, LOGNAME, USERNAME and
 * HOME; every occurrence of a name found is then replaced wherever it is in
 * the event: in paths, in Claude Code's encoded project folders
 * (-Users-NAME-code-x, where every character but a letter or digit became
 * '-') and in plain text (bounded by non-word characters). An encoded folder
 * whose name was not found elsewhere in the event has its first segment
 * after -home- or -Users- replaced (docs/audit.md says what that misses).
 */
#include <pthread.h>
#include <regex.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "docket/audit.h"
#include "checkpoint.h"
#include "pseudo.h"
#include "util/alloc.h"
#include "util/error.h"

#define KEY_MIN 16
#define KEY_MAX 4096
/* The account name after /home/, /Users/ or C:\Users\ (bracket expressions
 * take backslashes literally). */
/* Every pattern starts where a path starts (not inside one: ".../x/home/y"
 * names no user) and puts the name in group NAME_GROUP. */
#define PATH_START "(^|[^A-Za-z0-9_./\\\\-])"
#define NAME_GROUP 3
#define HOME_PATTERN PATH_START "(/home/|/Users/)([^]/\\\\[:space:]\"':[]+)"
/* Windows: the name may hold spaces ("C:\Users\TRE CRYPTO\..."); any number
 * of separators (JSON-escaped backslashes). */
#define WIN_HOME_PATTERN PATH_START "([A-Za-z]:[\\\\/]+Users[\\\\/]+)([^]/\\\\\"':[\n\r\t]+)"
/* Claude Code's encoded project folders: the first segment of the name. */
#define ENCODED_PATTERN "(^|[^A-Za-z0-9_])(-home-|-Users-)([A-Za-z0-9_]+)"
#define NAMES_MAX 16      /* names one event may teach */
#define KNOWN_MAX 1024    /* names one pseudonymizer remembers */
#define NAME_MIN 2
#define SESSION_ID_MIN 6
#define USER_NAME_MAX 255

struct docket_pseudonymizer {
	uint8_t *key;
	size_t len;
	regex_t home, win_home, encoded;
	int compiled;   /* how many of the three are compiled */
	/* The user names seen so far (an export learns them from the sessions'
	 * cwd, HOME and USER as it goes, so that a later `ls -l` output naming
	 * the owner is rewritten too): a cache behind a lock, which is why a
	 * const pseudonymizer may still learn. */
	pthread_mutex_t lock;
	char **known;
	size_t nknown, capknown;
};

int docket_pseudonymizer_new(docket_pseudonymizer **out, const uint8_t *key, size_t len)
{
	docket_pseudonymizer *p;

	*out = NULL;
	if (len < KEY_MIN || len > KEY_MAX)
		return docket_error_set(DOCKET_EINVALID, "a pseudonymisation key has %d to %d bytes",
					KEY_MIN, KEY_MAX);
	if (!(p = docket_calloc(1, sizeof(*p))) || !(p->key = docket_malloc(len))) {
		docket_free(p);
		return docket_error_set_oom();
	}
	memcpy(p->key, key, len);
	p->len = len;
	pthread_mutex_init(&p->lock, NULL);
	if (regcomp(&p->home, HOME_PATTERN, REG_EXTENDED) != 0 || (p->compiled = 1,
	    regcomp(&p->win_home, WIN_HOME_PATTERN, REG_EXTENDED)) != 0 || (p->compiled = 2,
	    regcomp(&p->encoded, ENCODED_PATTERN, REG_EXTENDED)) != 0) {
		docket_pseudonymizer_free(p);
		return docket_error_set(DOCKET_ERROR, "cannot compile the home path patterns");
	}
	p->compiled = 3;
	*out = p;
	return 0;
}

void docket_pseudonymizer_free(docket_pseudonymizer *p)
{
	if (!p)
		return;
	if (p->compiled > 0)
		regfree(&p->home);
	if (p->compiled > 1)
		regfree(&p->win_home);
	if (p->compiled > 2)
		regfree(&p->encoded);
	if (p->key)
		OPENSSL_cleanse(p->key, p->len);
	for (size_t i = 0; i < p->nknown; i++)
		docket_free(p->known[i]);
	docket_free(p->known);
	pthread_mutex_destroy(&p->lock);
	docket_free(p->key);
	docket_free(p);
}

/* 64 hex digits (and white space around them) -> 32 bytes; else raw bytes. */
int docket_pseudonymizer_load(docket_pseudonymizer **out, const char *path)
{
	docket_buf text = DOCKET_BUF_INIT;
	uint8_t key[32];
	size_t start = 0, end;
	int error;

	*out = NULL;
	if ((error = audit_read_file(&text, path, KEY_MAX)) < 0)
		return error;
	end = text.len;
	while (start < end && strchr(" \t\r\n", text.ptr[start]))
		start++;
	while (end > start && strchr(" \t\r\n", text.ptr[end - 1]))
		end--;
	if (end - start == 64) {
		char hex[65];

		memcpy(hex, text.ptr + start, 64);
		hex[64] = '\0';
		if (docket_unhex(key, sizeof(key), hex) == 0) {
			error = docket_pseudonymizer_new(out, key, sizeof(key));
			OPENSSL_cleanse(key, sizeof(key));
			goto cleanup;
		}
	}
	error = docket_pseudonymizer_new(out, (const uint8_t *)text.ptr, text.len);
	if (error == DOCKET_EINVALID)
		docket_error_prefix("%s: ", path);
cleanup:
	if (text.ptr)
		OPENSSL_cleanse(text.ptr, text.cap);
	docket_buf_dispose(&text);
	return error;
}

void docket_pseudonym(const docket_pseudonymizer *p, const char *kind, const char *value,
		      char out[64])
{
	uint8_t mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	docket_buf msg = DOCKET_BUF_INIT;

	if (docket_buf_printf(&msg, "%s:%s", kind, value) < 0 ||
	    !HMAC(EVP_sha256(), p->key, (int)p->len, (const uint8_t *)msg.ptr, msg.len, mac, &mac_len)) {
		/* out of memory: a constant never leaks the value */
		snprintf(out, 64, "%s-unavailable", kind);
		docket_buf_dispose(&msg);
		return;
	}
	docket_hex(hex, mac, mac_len);
	snprintf(out, 64, "%s-%.16s", kind, hex);
	docket_buf_dispose(&msg);
}

/* Replace the string member `key` of `obj` by its pseudonym. */
static int pseudonymize_member(const docket_pseudonymizer *p, json_t *obj, const char *key,
			       const char *kind)
{
	const char *v = json_string_value(json_object_get(obj, key));
	char name[64];

	if (!v || !*v)
		return 0;
	docket_pseudonym(p, kind, v, name);
	return json_object_set_new(obj, key, json_string(name)) == 0 ? 0
		: docket_error_set_oom();
}

/* `s` (not NUL-terminated) is "user-" and 16 lower-case hex digits. */
static int already_pseudonym(const char *s, size_t len)
{
	if (len != 5 + 16 || memcmp(s, "user-", 5) != 0)
		return 0;
	for (size_t i = 5; i < len; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return 1;
}

/* Rewrite the names (group 2) that `re` finds in `in` into `out`; 1 when
 * something changed. */
static int rewrite_matches(const docket_pseudonymizer *p, const regex_t *re, const char *in, size_t len,
			   docket_buf *out)
{
	regmatch_t m[NAME_GROUP + 1];
	size_t pos = 0, copied = 0;
	int changed = 0;

	docket_buf_clear(out);
	while (pos < len) {
		char user[USER_NAME_MAX + 1], name[64];
		size_t so, eo;

		m[0].rm_so = (regoff_t)pos;
		m[0].rm_eo = (regoff_t)len;
		if (regexec(re, in, NAME_GROUP + 1, m, REG_STARTEND | (pos ? REG_NOTBOL : 0)) != 0)
			break;
		so = (size_t)m[NAME_GROUP].rm_so;
		eo = (size_t)m[NAME_GROUP].rm_eo;
		pos = eo;
		if (already_pseudonym(in + so, eo - so) || eo - so > USER_NAME_MAX)
			continue;
		memcpy(user, in + so, eo - so);
		user[eo - so] = '\0';
		docket_pseudonym(p, "user", user, name);
		if (docket_buf_put(out, in + copied, so - copied) < 0 || docket_buf_puts(out, name) < 0)
			return docket_error_set_oom();
		copied = eo;
		changed = 1;
	}
	if (docket_buf_put(out, in + copied, len - copied) < 0)
		return docket_error_set_oom();
	return changed;
}

/* Replace every occurrence of `raw` in `in` by `alias`; 1 when changed. */
static int rewrite_id(const char *in, size_t len, const char *raw, const char *alias, docket_buf *out)
{
	size_t rlen = strlen(raw), copied = 0;
	const char *hit;
	int changed = 0;

	docket_buf_clear(out);
	while ((hit = memmem(in + copied, len - copied, raw, rlen))) {
		if (docket_buf_put(out, in + copied, (size_t)(hit - in) - copied) < 0 ||
		    docket_buf_puts(out, alias) < 0)
			return docket_error_set_oom();
		copied = (size_t)(hit - in) + rlen;
		changed = 1;
	}
	if (docket_buf_put(out, in + copied, len - copied) < 0)
		return docket_error_set_oom();
	return changed;
}

typedef struct pwalk {
	const docket_pseudonymizer *p;
	const char *raw_session;   /* NULL when too short to replace safely */
	char alias[64];
	char **names;              /* user names: the event's, then every one known */
	size_t nnames;
	int learning;              /* 1: the first walk, which only finds names */
	docket_buf a, b;
} pwalk;

static int learn(pwalk *w, const char *name, size_t len)
{
	size_t i;

	if (len < NAME_MIN || len > USER_NAME_MAX || already_pseudonym(name, len) || w->nnames == NAMES_MAX)
		return 0;
	for (i = 0; i < w->nnames; i++)
		if (strlen(w->names[i]) == len && memcmp(w->names[i], name, len) == 0)
			return 0;
	if (!w->names && !(w->names = docket_calloc(NAMES_MAX, sizeof(*w->names))))
		return docket_error_set_oom();
	if (!(w->names[w->nnames] = docket_malloc(len + 1)))
		return docket_error_set_oom();
	memcpy(w->names[w->nnames], name, len);
	w->names[w->nnames++][len] = '\0';
	return 0;
}

/* The names `re` finds (group 2) in `s`. */
static int learn_matches(pwalk *w, const regex_t *re, const char *s, size_t len)
{
	regmatch_t m[NAME_GROUP + 1];
	size_t pos = 0;
	int error = 0;

	while (pos < len && error == 0) {
		m[0].rm_so = (regoff_t)pos;
		m[0].rm_eo = (regoff_t)len;
		if (regexec(re, s, NAME_GROUP + 1, m, REG_STARTEND | (pos ? REG_NOTBOL : 0)) != 0)
			break;
		error = learn(w, s + m[NAME_GROUP].rm_so, (size_t)(m[NAME_GROUP].rm_eo - m[NAME_GROUP].rm_so));
		pos = (size_t)m[NAME_GROUP].rm_eo;
	}
	return error;
}

static int is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       (unsigned char)c >= 0x80;
}

/* Replace the occurrences of `name` in `in` that stand alone (no word
 * character on either side) by its pseudonym; 1 when changed. */
static int rewrite_word(const docket_pseudonymizer *p, const char *in, size_t len, const char *name,
			const char *alias, docket_buf *out)
{
	size_t nlen = strlen(name), copied = 0, from = 0;
	const char *hit;
	int changed = 0;

	docket_buf_clear(out);
	while (from < len && (hit = memmem(in + from, len - from, name, nlen))) {
		size_t at = (size_t)(hit - in);

		from = at + 1;
		if ((at > 0 && is_word(in[at - 1]) && is_word(name[0])) ||
		    (at + nlen < len && is_word(in[at + nlen]) && is_word(name[nlen - 1])))
			continue;
		if (docket_buf_put(out, in + copied, at - copied) < 0 || docket_buf_puts(out, alias) < 0)
			return docket_error_set_oom();
		copied = from = at + nlen;
		changed = 1;
	}
	(void)p;
	if (docket_buf_put(out, in + copied, len - copied) < 0)
		return docket_error_set_oom();
	return changed;
}

/* One rewriting step: `step` turns *cur (or the original) into `next`. */
typedef struct leaf {
	const char *s;
	size_t len;
	docket_buf *cur;      /* NULL: the original string is current */
} leaf;

static int leaf_apply(leaf *l, int rc, docket_buf *next)
{
	if (rc < 0)
		return rc;
	if (rc) {
		l->cur = next;
		l->s = next->ptr;
		l->len = next->len;
	}
	return 0;
}

/* The buffer that is not current. */
static docket_buf *leaf_spare(pwalk *w, const leaf *l)
{
	return l->cur == &w->a ? &w->b : &w->a;
}

/* Account names that name no one ("/home/user", "/root"): replaced in
 * paths, but not as words in text, where they are ordinary words. */
static int generic_name(const char *name)
{
	static const char *const generic[] = { "user", "USER", "users", "root", "admin", "runner", "ubuntu",
					       "ec2-user", "vagrant", "node", "app", "Shared", "Public", "Default",
					       "home", "Users", "projects", "code", "dev", "src", "work", "workspace",
					       "test", "tmp", "data", "Documents", "Desktop", "Downloads", "github",
					       NULL };

	for (size_t i = 0; generic[i]; i++)
		if (strcmp(generic[i], name) == 0)
			return 1;
	return 0;
}

/* Claude Code's encoding of a path: every byte but a letter or digit is '-'. */
static void encode_name(char *out, const char *name)
{
	for (; *name; name++)
		*out++ = is_word(*name) && *name != '_' ? *name : '-';
	*out = '\0';
}

static int pseudo_leaf(pwalk *w, json_t *str)
{
	leaf l = { json_string_value(str), json_string_length(str), NULL };
	char encoded[USER_NAME_MAX + 1], alias[64];
	docket_buf *next;
	size_t i;
	int error = 0;

	if (w->learning) {
		if ((error = learn_matches(w, &w->p->home, l.s, l.len)) < 0)
			return error;
		return learn_matches(w, &w->p->win_home, l.s, l.len);
	}
	for (i = 0; i < w->nnames && error == 0; i++) {
		docket_pseudonym(w->p, "user", w->names[i], alias);
		next = leaf_spare(w, &l);
		if (!generic_name(w->names[i]))
			error = leaf_apply(&l, rewrite_word(w->p, l.s, l.len, w->names[i], alias, next), next);
		encode_name(encoded, w->names[i]);
		if (error == 0 && strcmp(encoded, w->names[i]) != 0) {
			next = leaf_spare(w, &l);
			error = leaf_apply(&l, rewrite_word(w->p, l.s, l.len, encoded, alias, next), next);
		}
	}
	if (error == 0) {
		next = leaf_spare(w, &l);
		error = leaf_apply(&l, rewrite_matches(w->p, &w->p->home, l.s, l.len, next), next);
	}
	if (error == 0) {
		next = leaf_spare(w, &l);
		error = leaf_apply(&l, rewrite_matches(w->p, &w->p->win_home, l.s, l.len, next), next);
	}
	if (error == 0) {
		next = leaf_spare(w, &l);
		error = leaf_apply(&l, rewrite_matches(w->p, &w->p->encoded, l.s, l.len, next), next);
	}
	if (error == 0 && w->raw_session) {
		next = leaf_spare(w, &l);
		error = leaf_apply(&l, rewrite_id(l.s, l.len, w->raw_session, w->alias, next), next);
	}
	if (error == 0 && l.cur && json_string_setn_nocheck(str, l.s, l.len) < 0)
		error = docket_error_set_oom();
	return error;
}

static int pseudo_walk(pwalk *w, json_t *v)
{
	const char *key;
	json_t *child;
	size_t i;
	int error = 0;

	if (json_is_string(v))
		return pseudo_leaf(w, v);
	if (json_is_array(v)) {
		json_array_foreach(v, i, child)
			if ((error = pseudo_walk(w, child)) < 0)
				return error;
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, child)
			if ((error = pseudo_walk(w, child)) < 0)
				return error;
	}
	return 0;
}

/* The user names of USER, LOGNAME, USERNAME and HOME, learned, then the
 * first three replaced by their pseudonyms (HOME by the walk). */
static int learn_env(pwalk *w, const json_t *env)
{
	static const char *const user_vars[] = { "USER", "LOGNAME", "USERNAME" };
	const char *home = json_string_value(json_object_get(env, "HOME"));
	int error = 0;

	for (size_t i = 0; i < sizeof(user_vars) / sizeof(user_vars[0]) && error == 0; i++) {
		const char *v = json_string_value(json_object_get(env, user_vars[i]));

		if (v)
			error = learn(w, v, strlen(v));
	}
	if (error == 0 && home && (error = learn_matches(w, &w->p->home, home, strlen(home))) == 0)
		error = learn_matches(w, &w->p->win_home, home, strlen(home));
	return error;
}

static int pseudonymize_env(const docket_pseudonymizer *p, json_t *env)
{
	static const char *const user_vars[] = { "USER", "LOGNAME", "USERNAME" };
	int error = 0;

	for (size_t i = 0; i < sizeof(user_vars) / sizeof(user_vars[0]) && error == 0; i++)
		error = pseudonymize_member(p, env, user_vars[i], "user");
	return error;
}

/*
 * Add the event's names to what `cp` remembers, then make w->names every
 * name known (longest first, so "jean-luc" goes before "jean").
 */
static int by_length(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);

	return (la < lb) - (la > lb);
}

static int remember_names(const docket_pseudonymizer *cp, pwalk *w)
{
	docket_pseudonymizer *p = (docket_pseudonymizer *)cp;  /* the cache only */
	char **all = NULL;
	size_t i, k, n, copied = 0;
	int error = 0;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < w->nnames && error == 0; i++) {
		for (k = 0; k < p->nknown && strcmp(p->known[k], w->names[i]) != 0; k++)
			;
		if (k < p->nknown || p->nknown == KNOWN_MAX)
			continue;
		if (p->nknown == p->capknown) {
			void *grown = docket_array_grow(p->known, &p->capknown, sizeof(*p->known), 16);

			if (!grown) {
				error = DOCKET_ENOMEM;
				break;
			}
			p->known = grown;
		}
		if (!(p->known[p->nknown] = docket_strdup(w->names[i])))
			error = docket_error_set_oom();
		else
			p->nknown++;
	}
	if (error == 0 && p->nknown && !(all = docket_calloc(p->nknown, sizeof(*all))))
		error = docket_error_set_oom();
	for (; error == 0 && all && copied < p->nknown; copied++)
		if (!(all[copied] = docket_strdup(p->known[copied])))
			error = docket_error_set_oom();
	n = copied;
	pthread_mutex_unlock(&p->lock);
	for (k = 0; k < w->nnames; k++)
		docket_free(w->names[k]);
	docket_free(w->names);
	/* all[0..n) are copies (on failure, the ones made so far) */
	w->names = all;
	w->nnames = all ? n : 0;
	if (error == 0 && n > 1)
		qsort(all, n, sizeof(*all), by_length);
	return error;
}

static void pwalk_dispose(pwalk *w)
{
	for (size_t i = 0; i < w->nnames; i++)
		docket_free(w->names[i]);
	docket_free(w->names);
	docket_buf_dispose(&w->a);
	docket_buf_dispose(&w->b);
}

/* The names of one event (its strings and environment) into w->names. */
static int learn_event(pwalk *w, json_t *event)
{
	json_t *env = json_object_get(event, "env");
	int error;

	w->learning = 1;
	if ((error = pseudo_walk(w, event)) == 0 && json_is_object(env))
		error = learn_env(w, env);
	w->learning = 0;
	return error;
}

int pseudo_learn(const docket_pseudonymizer *p, json_t *event)
{
	pwalk w;
	int error;

	memset(&w, 0, sizeof(w));
	w.p = p;
	if ((error = learn_event(&w, event)) == 0)
		error = remember_names(p, &w);
	pwalk_dispose(&w);
	return error;
}

int docket_pseudonymize_event(const docket_pseudonymizer *p, json_t *event)
{
	pwalk w;
	char *raw = NULL;
	const char *session = json_string_value(json_object_get(event, "session"));
	json_t *env = json_object_get(event, "env");
	int error;

	memset(&w, 0, sizeof(w));
	w.p = p;
	if (session && strlen(session) >= SESSION_ID_MIN) {
		if (!(raw = docket_strdup(session)))
			return docket_error_set_oom();
		docket_pseudonym(p, "session", raw, w.alias);
		w.raw_session = raw;
	}
	/* first the names, from every string and the environment */
	if ((error = learn_event(&w, event)) < 0 || (error = remember_names(p, &w)) < 0)
		goto cleanup;
	if ((error = pseudonymize_member(p, event, "session", "session")) < 0 ||
	    (error = pseudonymize_member(p, event, "parent", "session")) < 0 ||
	    (error = pseudonymize_member(p, event, "actor", "actor")) < 0 ||
	    (json_is_object(env) && (error = pseudonymize_env(p, env)) < 0))
		goto cleanup;
	error = pseudo_walk(&w, event);
cleanup:
	pwalk_dispose(&w);
	docket_free(raw);
	return error;
}
