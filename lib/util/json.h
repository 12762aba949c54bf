/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.h: small helpers over jansson shared by every module that reads or
 * writes JSON. jansson does the parsing; these add docket's error reporting.
 */
#ifndef DOCKET_UTIL_JSON_H
#define DOCKET_UTIL_JSON_H

#include <jansson.h>

#include "buf.h"
#include "docket/common.h"

/* Parse one JSON value (any type: callers check it) from `len` bytes;
 * DOCKET_EINVALID with line:column on error. */
int docket_json_parse(json_t **out, const char *text, size_t len) DOCKET_MUST_USE;

/*
 * json_loadb with `flags`, safe under allocation failure (see alloc.h):
 * 0; DOCKET_EINVALID with the position in *jerr; or DOCKET_ENOMEM.
 */
int docket_json_load(json_t **out, const char *text, size_t len, size_t flags, json_error_t *jerr) DOCKET_MUST_USE;

/* Append the compact serialisation of `value` (keys in insertion order). */
int docket_json_dump(docket_buf *out, const json_t *value) DOCKET_MUST_USE;

/* The string member `key` of `obj`; NULL when `obj` is NULL or not an
 * object, or the member is absent or not a string. */
const char *docket_json_str(const json_t *obj, const char *key);

/* Same, NULL for an empty string too (hook inputs, where "" means unset). */
const char *docket_json_str_nonempty(const json_t *obj, const char *key);

/* Same as docket_json_str, `fallback` instead of NULL. */
const char *docket_json_str_or(const json_t *obj, const char *key, const char *fallback);

/* jansson type name for messages ("string", "object", ...). */
const char *docket_json_type_name(const json_t *value);

#endif
