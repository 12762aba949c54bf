/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jv.h: one read-only view of a parsed JSON value over two parsers, so the
 * code that turns JSON into docket's structures (ledger/event.c) is written
 * once:
 *   - jansson trees (docket_jv_jansson): what `serve`, the importers and the
 *     C API hand over;
 *   - simdjson tapes (docket_jv_tape, util/json_tape.h): `docket record`'s
 *     bulk path, which never builds a tree.
 * A docket_jv is a handle: a json_t (p, i unused) or a docket_tape_doc and
 * a word index. p == NULL is "absent" (a missing member).
 *
 * The tape view gives exactly what jansson would have built from the same
 * text (docket_jv_tape_root refuses the texts where they differ), and its
 * dump writes the bytes of jansson's compact dump (docket_json_dump).
 */
#ifndef DOCKET_UTIL_JV_H
#define DOCKET_UTIL_JV_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"
#include "json_tape.h"

typedef enum docket_jv_type {
	DOCKET_JV_ABSENT = 0,
	DOCKET_JV_OBJECT,
	DOCKET_JV_ARRAY,
	DOCKET_JV_STRING,
	DOCKET_JV_INTEGER,
	DOCKET_JV_REAL,
	DOCKET_JV_TRUE,
	DOCKET_JV_FALSE,
	DOCKET_JV_NULL,
} docket_jv_type;

typedef struct docket_jv {
	const void *p;
	size_t i;
} docket_jv;

/* Where an iteration over an array or object is. */
typedef struct docket_jv_iter {
	docket_jv in;
	size_t at;
	void *it;
} docket_jv_iter;

typedef struct docket_jv_ops {
	docket_jv_type (*type)(docket_jv v);
	docket_jv (*get)(docket_jv obj, const char *key);     /* absent when not there */
	const char *(*string)(docket_jv v, size_t *len);      /* NUL-terminated; may hold NUL */
	json_int_t (*integer)(docket_jv v);
	size_t (*size)(docket_jv v);                          /* items or members */
	void (*iter)(docket_jv v, docket_jv_iter *it);
	/* 1 and the next item (key: the member's name, NULL in an array), 0 at the end */
	int (*next)(docket_jv_iter *it, const char **key, docket_jv *val);
	int (*dump)(docket_buf *out, docket_jv v) DOCKET_MUST_USE; /* jansson's compact dump */
} docket_jv_ops;

extern const docket_jv_ops docket_jv_jansson;
extern const docket_jv_ops docket_jv_tape;

static inline docket_jv docket_jv_of_json(const json_t *v)
{
	docket_jv r = { v, 0 };

	return r;
}

/*
 * The root of a parsed tape as a docket_jv (doc must outlive it): 0, or -1
 * when jansson would not have built the same tree from that text (duplicate
 * keys, a NUL in a key, an integer above INT64_MAX): parse it with jansson.
 */
int docket_jv_tape_root(const docket_tape_doc *doc, docket_jv *root) DOCKET_MUST_USE;

/* 1 when a string of the tape (a key or a value) holds a NUL byte: what
 * jansson refuses to parse without JSON_ALLOW_NUL (`serve`'s requests). */
int docket_jv_tape_has_nul(const docket_tape_doc *doc);

/*
 * One JSON text parsed for a view: the tape when `p` is given, it parses
 * and docket_jv_tape_root takes it; jansson (docket_json_parse) otherwise,
 * which then says why a text does not parse. d->root points into d: parse
 * into its final place and do not copy it. Valid until the next parse with
 * `p` and docket_jv_doc_dispose.
 */
typedef struct docket_jv_doc {
	const docket_jv_ops *ops;
	docket_jv root;
	docket_tape_doc tape;
	json_t *json;                   /* jansson's tree, or NULL */
} docket_jv_doc;

int docket_jv_parse(docket_jv_doc *d, docket_json_tape *p, const char *text, size_t len) DOCKET_MUST_USE;
/* Accepts a doc never parsed (all zero) and disposes twice. */
void docket_jv_doc_dispose(docket_jv_doc *d);

/* "object", "string", "number", ... for messages (docket_json_type_name too). */
const char *docket_jv_type_name(docket_jv_type t);

#endif
