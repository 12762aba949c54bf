/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jv.c: the two views of jv.h: jansson trees and simdjson tapes.
 */
#include "jv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "json.h"
#include "json_write.h"

const char *docket_jv_type_name(docket_jv_type t)
{
	switch (t) {
	case DOCKET_JV_OBJECT: return "object";
	case DOCKET_JV_ARRAY: return "array";
	case DOCKET_JV_STRING: return "string";
	case DOCKET_JV_INTEGER: return "integer";
	case DOCKET_JV_REAL: return "number";
	case DOCKET_JV_TRUE:
	case DOCKET_JV_FALSE: return "boolean";
	case DOCKET_JV_NULL: return "null";
	case DOCKET_JV_ABSENT: break;
	}
	return "unknown";
}

/* ---- jansson ---- */

static docket_jv_type j_type(docket_jv v)
{
	if (!v.p)
		return DOCKET_JV_ABSENT;
	switch (json_typeof((const json_t *)v.p)) {
	case JSON_OBJECT: return DOCKET_JV_OBJECT;
	case JSON_ARRAY: return DOCKET_JV_ARRAY;
	case JSON_STRING: return DOCKET_JV_STRING;
	case JSON_INTEGER: return DOCKET_JV_INTEGER;
	case JSON_REAL: return DOCKET_JV_REAL;
	case JSON_TRUE: return DOCKET_JV_TRUE;
	case JSON_FALSE: return DOCKET_JV_FALSE;
	case JSON_NULL: return DOCKET_JV_NULL;
	}
	return DOCKET_JV_ABSENT;
}

static docket_jv j_get(docket_jv obj, const char *key)
{
	return docket_jv_of_json(json_object_get(obj.p, key));
}

static const char *j_string(docket_jv v, size_t *len)
{
	*len = json_string_length(v.p);
	return json_string_value(v.p);
}

static json_int_t j_integer(docket_jv v)
{
	return json_integer_value(v.p);
}

static size_t j_size(docket_jv v)
{
	return json_is_object((const json_t *)v.p) ? json_object_size(v.p) : json_array_size(v.p);
}

static void j_iter(docket_jv v, docket_jv_iter *it)
{
	it->in = v;
	it->at = 0;
	it->it = json_is_object((const json_t *)v.p) ? json_object_iter((json_t *)v.p) : NULL;
}

static int j_next(docket_jv_iter *it, const char **key, docket_jv *val)
{
	if (json_is_array((const json_t *)it->in.p)) {
		if (it->at >= json_array_size(it->in.p))
			return 0;
		*key = NULL;
		*val = docket_jv_of_json(json_array_get(it->in.p, it->at++));
		return 1;
	}
	if (!it->it)
		return 0;
	*key = json_object_iter_key(it->it);
	*val = docket_jv_of_json(json_object_iter_value(it->it));
	it->it = json_object_iter_next((json_t *)it->in.p, it->it);
	return 1;
}

static int j_dump(docket_buf *out, docket_jv v)
{
	return docket_json_dump(out, v.p);
}

const docket_jv_ops docket_jv_jansson = {
	j_type, j_get, j_string, j_integer, j_size, j_iter, j_next, j_dump,
};

/* ---- simdjson tape (json_tape.h has the format) ---- */

#define TAPE_VALUE(w) ((w) & 0x00ffffffffffffffULL)
#define SCOPE_SATURATED 0xffffffu

static const docket_tape_doc *doc_of(docket_jv v)
{
	return v.p;
}

static char word_type(const docket_tape_doc *d, size_t i)
{
	return (char)(d->tape[i] >> 56);
}

/* The index after the value at i. */
static size_t after(const docket_tape_doc *d, size_t i)
{
	switch (word_type(d, i)) {
	case '{':
	case '[': return (uint32_t)d->tape[i];
	case 'l':
	case 'u':
	case 'd': return i + 2;
	default: return i + 1;
	}
}

static const char *tape_str(const docket_tape_doc *d, size_t i, size_t *len)
{
	const uint8_t *s = d->strings + TAPE_VALUE(d->tape[i]);
	uint32_t n;

	memcpy(&n, s, sizeof(n));
	*len = n;
	return (const char *)s + sizeof(n);
}

static docket_jv at(docket_jv v, size_t i)
{
	docket_jv r = { v.p, i };

	return r;
}

static docket_jv_type t_type(docket_jv v)
{
	if (!v.p)
		return DOCKET_JV_ABSENT;
	switch (word_type(doc_of(v), v.i)) {
	case '{': return DOCKET_JV_OBJECT;
	case '[': return DOCKET_JV_ARRAY;
	case '"': return DOCKET_JV_STRING;
	case 'l': return DOCKET_JV_INTEGER;
	case 'd': return DOCKET_JV_REAL;
	case 't': return DOCKET_JV_TRUE;
	case 'f': return DOCKET_JV_FALSE;
	case 'n': return DOCKET_JV_NULL;
	default: return DOCKET_JV_ABSENT; /* 'u' never reaches here: docket_jv_tape_root */
	}
}

static void t_iter(docket_jv v, docket_jv_iter *it)
{
	it->in = v;
	it->at = v.i + 1;
	it->it = NULL;
}

static int t_next(docket_jv_iter *it, const char **key, docket_jv *val)
{
	const docket_tape_doc *d = doc_of(it->in);
	size_t end = after(d, it->in.i) - 1, len;

	if (it->at >= end)
		return 0;
	if (word_type(d, it->in.i) == '{') {
		*key = tape_str(d, it->at, &len);
		it->at++;
	} else {
		*key = NULL;
	}
	*val = at(it->in, it->at);
	it->at = after(d, it->at);
	return 1;
}

static docket_jv t_get(docket_jv obj, const char *key)
{
	const docket_tape_doc *d = doc_of(obj);
	size_t klen = strlen(key), end = after(d, obj.i) - 1;
	docket_jv none = { NULL, 0 };

	for (size_t i = obj.i + 1; i < end; i = after(d, i + 1)) {
		size_t len;
		const char *s = tape_str(d, i, &len);

		if (len == klen && memcmp(s, key, len) == 0)
			return at(obj, i + 1);
	}
	return none;
}

static const char *t_string(docket_jv v, size_t *len)
{
	return tape_str(doc_of(v), v.i, len);
}

static json_int_t t_integer(docket_jv v)
{
	int64_t n;

	memcpy(&n, &doc_of(v)->tape[v.i + 1], sizeof(n));
	return (json_int_t)n;
}

static size_t t_size(docket_jv v)
{
	uint32_t n = (uint32_t)(doc_of(v)->tape[v.i] >> 32) & SCOPE_SATURATED;
	docket_jv_iter it;
	const char *key;
	docket_jv item;

	if (n < SCOPE_SATURATED)
		return n;
	n = 0;
	for (t_iter(v, &it); t_next(&it, &key, &item);)
		n++;
	return n;
}

/* A real as jansson writes it (its own formatting: "%.17g", ".0" added). */
static int dump_real(docket_buf *out, const docket_tape_doc *d, size_t i)
{
	double x;
	json_t *r;
	int error;

	memcpy(&x, &d->tape[i + 1], sizeof(x));
	if (!(r = json_real(x)))
		return docket_error_set_oom();
	error = docket_json_dump(out, r);
	json_decref(r);
	return error;
}

static int dump_at(docket_buf *out, docket_jv v)
{
	const docket_tape_doc *d = doc_of(v);
	char c = word_type(d, v.i);
	docket_jv_iter it;
	const char *key;
	docket_jv item;
	size_t len;
	int error = 0, n;

	switch (c) {
	case '{':
	case '[':
		if ((error = docket_buf_put(out, c == '{' ? "{" : "[", 1)) < 0)
			return error;
		for (t_iter(v, &it), n = 0; error == 0 && t_next(&it, &key, &item); n++) {
			if (n > 0 && (error = docket_buf_put(out, ",", 1)) < 0)
				break;
			if (key) {
				key = tape_str(d, item.i - 1, &len);
				if ((error = docket_json_write_string(out, key, len)) < 0 ||
				    (error = docket_buf_put(out, ":", 1)) < 0)
					break;
			}
			error = dump_at(out, item);
		}
		return error < 0 ? error : docket_buf_put(out, c == '{' ? "}" : "]", 1);
	case '"':
		key = tape_str(d, v.i, &len);
		return docket_json_write_string(out, key, len);
	case 'l':
		return docket_json_write_int(out, t_integer(v));
	case 'd': return dump_real(out, d, v.i);
	case 't': return docket_buf_put(out, "true", 4);
	case 'f': return docket_buf_put(out, "false", 5);
	case 'n': return docket_buf_put(out, "null", 4);
	default: return docket_error_set(DOCKET_ERROR, "unexpected tape word '%c'", c);
	}
}

static int t_dump(docket_buf *out, docket_jv v)
{
	return dump_at(out, v);
}

const docket_jv_ops docket_jv_tape = {
	t_type, t_get, t_string, t_integer, t_size, t_iter, t_next, t_dump,
};

/* ---- what jansson would refuse or build differently ---- */

typedef struct key_ref {
	const char *s;
	size_t len;
} key_ref;

static int key_cmp(const void *a, const void *b)
{
	const key_ref *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

#define FEW_KEYS 16
#define PAIRWISE_KEYS 12

/* 0 when the object at i has no key twice and no NUL in a key (jansson,
 * JSON_REJECT_DUPLICATES, refuses both); -1 otherwise. */
static int keys_ok(const docket_tape_doc *d, size_t i)
{
	key_ref few[FEW_KEYS], *k = few;
	size_t n = 0, cap = FEW_KEYS, end = after(d, i) - 1;
	int rc = 0;

	for (size_t j = i + 1; j < end && rc == 0; j = after(d, j + 1)) {
		key_ref r;

		r.s = tape_str(d, j, &r.len);
		if (memchr(r.s, '\0', r.len))
			rc = -1;
		if (n == cap) {
			key_ref *nk = docket_malloc(2 * cap * sizeof(*nk));

			if (!nk) {
				rc = -1;
				break;
			}
			memcpy(nk, k, n * sizeof(*k));
			if (k != few)
				docket_free(k);
			k = nk;
			cap *= 2;
		}
		k[n++] = r;
	}
	if (rc == 0 && n > 1 && n <= PAIRWISE_KEYS) {
		/* a request's or an event's few keys: comparing pairs beats sorting */
		for (size_t a = 0; a < n && rc == 0; a++)
			for (size_t b = a + 1; b < n && rc == 0; b++)
				if (k[a].len == k[b].len && memcmp(k[a].s, k[b].s, k[a].len) == 0)
					rc = -1;
	} else if (rc == 0 && n > 1) {
		qsort(k, n, sizeof(*k), key_cmp);
		for (size_t j = 1; j < n && rc == 0; j++)
			if (key_cmp(&k[j - 1], &k[j]) == 0)
				rc = -1;
	}
	if (k != few)
		docket_free(k);
	return rc;
}

int docket_jv_tape_root(const docket_tape_doc *doc, docket_jv *root)
{
	size_t end = (size_t)TAPE_VALUE(doc->tape[0]);

	for (size_t i = 1; i < end;) {
		char c = word_type(doc, i);

		if (c == 'u' || (c == '{' && keys_ok(doc, i) < 0))
			return -1;
		i += c == 'l' || c == 'u' || c == 'd' ? 2 : 1;
	}
	root->p = doc;
	root->i = 1;
	return 0;
}

int docket_jv_tape_has_nul(const docket_tape_doc *doc)
{
	size_t end = (size_t)TAPE_VALUE(doc->tape[0]);

	for (size_t i = 1; i < end;) {
		char c = word_type(doc, i);
		size_t len;
		const char *s;

		if (c == '"' && (s = tape_str(doc, i, &len)) && memchr(s, '\0', len))
			return 1;
		i += c == 'l' || c == 'u' || c == 'd' ? 2 : 1;
	}
	return 0;
}

int docket_jv_parse(docket_jv_doc *d, docket_json_tape *p, const char *text, size_t len)
{
	int error;

	memset(d, 0, sizeof(*d));
	if (p && docket_json_tape_parse(p, text, len, &d->tape) == 0 && docket_jv_tape_root(&d->tape, &d->root) == 0) {
		d->ops = &docket_jv_tape;
		return 0;
	}
	if ((error = docket_json_parse(&d->json, text, len)) < 0)
		return error;
	d->ops = &docket_jv_jansson;
	d->root = docket_jv_of_json(d->json);
	return 0;
}

void docket_jv_doc_dispose(docket_jv_doc *d)
{
	json_decref(d->json);
	memset(d, 0, sizeof(*d));
}
