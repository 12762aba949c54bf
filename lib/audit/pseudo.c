/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pseudo.c: keyed pseudonyms for exports (HMAC-SHA-256, OpenSSL).
 *
 * A pseudonym is kind "-" and the first 16 hex digits of
 * HMAC-SHA-256(key, kind ":" value): stable for one key, so exports made
 * with the same key can still be joined, and useless without the key. Kinds:
 * "session" (session and parent ids), "actor" (who approved or revised a
 * policy), "user" (the account name in home paths and USER/LOGNAME).
 */
#include <regex.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "docket/audit.h"
#include "checkpoint.h"
#include "util/alloc.h"
#include "util/error.h"

#define KEY_MIN 16
#define KEY_MAX 4096
/* The account name after /home/, /Users/ or C:\Users\ (bracket expressions
 * take backslashes literally). */
#define HOME_PATTERN "(/home/|/Users/|[A-Za-z]:[\\\\/]Users[\\\\/])([^]/\\\\[:space:]\"':[]+)"
#define SESSION_ID_MIN 6
#define USER_NAME_MAX 255

struct docket_pseudonymizer {
	uint8_t *key;
	size_t len;
	regex_t home;
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
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	}
	memcpy(p->key, key, len);
	p->len = len;
	if (regcomp(&p->home, HOME_PATTERN, REG_EXTENDED) != 0) {
		docket_free(p->key);
		docket_free(p);
		return docket_error_set(DOCKET_ERROR, "cannot compile the home path pattern");
	}
	*out = p;
	return 0;
}

void docket_pseudonymizer_free(docket_pseudonymizer *p)
{
	if (!p)
		return;
	regfree(&p->home);
	if (p->key)
		OPENSSL_cleanse(p->key, p->len);
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
		: docket_error_set(DOCKET_ENOMEM, "out of memory");
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

/* Rewrite home paths in `in` into `out`; 1 when something changed. */
static int rewrite_homes(const docket_pseudonymizer *p, const char *in, size_t len, docket_buf *out)
{
	regmatch_t m[3];
	size_t pos = 0, copied = 0;
	int changed = 0;

	docket_buf_clear(out);
	while (pos < len) {
		char user[USER_NAME_MAX + 1], name[64];
		size_t so, eo;

		m[0].rm_so = (regoff_t)pos;
		m[0].rm_eo = (regoff_t)len;
		if (regexec(&p->home, in, 3, m, REG_STARTEND | (pos ? REG_NOTBOL : 0)) != 0)
			break;
		so = (size_t)m[2].rm_so;
		eo = (size_t)m[2].rm_eo;
		pos = eo;
		if (already_pseudonym(in + so, eo - so) || eo - so > USER_NAME_MAX)
			continue;
		memcpy(user, in + so, eo - so);
		user[eo - so] = '\0';
		docket_pseudonym(p, "user", user, name);
		if (docket_buf_put(out, in + copied, so - copied) < 0 || docket_buf_puts(out, name) < 0)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		copied = eo;
		changed = 1;
	}
	if (docket_buf_put(out, in + copied, len - copied) < 0)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
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
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		copied = (size_t)(hit - in) + rlen;
		changed = 1;
	}
	if (docket_buf_put(out, in + copied, len - copied) < 0)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	return changed;
}

typedef struct pwalk {
	const docket_pseudonymizer *p;
	const char *raw_session;   /* NULL when too short to replace safely */
	char alias[64];
	docket_buf a, b;
} pwalk;

static int pseudo_leaf(pwalk *w, json_t *str)
{
	const char *s = json_string_value(str);
	size_t len = json_string_length(str);
	docket_buf *cur = NULL;
	int rc;

	if ((rc = rewrite_homes(w->p, s, len, &w->a)) < 0)
		return rc;
	if (rc)
		cur = &w->a;
	if (w->raw_session) {
		if ((rc = rewrite_id(cur ? cur->ptr : s, cur ? cur->len : len, w->raw_session, w->alias,
				     &w->b)) < 0)
			return rc;
		if (rc)
			cur = &w->b;
	}
	if (cur && json_string_setn_nocheck(str, cur->ptr, cur->len) < 0)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	return 0;
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

static int pseudonymize_env(const docket_pseudonymizer *p, json_t *env)
{
	static const char *const user_vars[] = { "USER", "LOGNAME", "USERNAME" };
	int error = 0;

	for (size_t i = 0; i < sizeof(user_vars) / sizeof(user_vars[0]) && error == 0; i++)
		error = pseudonymize_member(p, env, user_vars[i], "user");
	return error;
}

int docket_pseudonymize_event(const docket_pseudonymizer *p, json_t *event)
{
	pwalk w = { p, NULL, "", DOCKET_BUF_INIT, DOCKET_BUF_INIT };
	char *raw = NULL;
	const char *session = json_string_value(json_object_get(event, "session"));
	json_t *env = json_object_get(event, "env");
	int error;

	if (session && strlen(session) >= SESSION_ID_MIN) {
		if (!(raw = docket_strdup(session)))
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		docket_pseudonym(p, "session", raw, w.alias);
		w.raw_session = raw;
	}
	if ((error = pseudonymize_member(p, event, "session", "session")) < 0 ||
	    (error = pseudonymize_member(p, event, "parent", "session")) < 0 ||
	    (error = pseudonymize_member(p, event, "actor", "actor")) < 0 ||
	    (json_is_object(env) && (error = pseudonymize_env(p, env)) < 0))
		goto cleanup;
	error = pseudo_walk(&w, event);
cleanup:
	docket_free(raw);
	docket_buf_dispose(&w.a);
	docket_buf_dispose(&w.b);
	return error;
}
