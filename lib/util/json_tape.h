/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_tape.h: simdjson's DOM parser behind a C interface. json_tape.cpp is
 * docket's one C++ translation unit; everything that reads the result is C
 * (util/jv.c).
 *
 * The result is simdjson's tape, its documented format (doc/tape.md of
 * simdjson 3): one 64-bit word per value, the type character in the top
 * byte, the payload in the low 56 bits:
 *   'r'  root, at index 0 (and last); the value is at index 1
 *   '{' '['  low 32 bits: the index after the matching '}' / ']'
 *   '"'  offset into the string buffer, which holds a 32-bit little-endian
 *        length, the unescaped bytes (valid UTF-8, may contain NUL), a NUL
 *   'l' 'u' 'd'  int64 / uint64 / double: the value is the next word
 *   't' 'f' 'n'  true, false, null
 * An object's members are its key (a '"' word) followed by its value.
 */
#ifndef DOCKET_UTIL_JSON_TAPE_H
#define DOCKET_UTIL_JSON_TAPE_H

#include <stddef.h>
#include <stdint.h>

#include "docket/common.h"

typedef struct docket_json_tape docket_json_tape;

typedef struct docket_tape_doc {
	const uint64_t *tape;
	const uint8_t *strings;
} docket_tape_doc;

/* A parser, reused for every text (one per thread). NULL when out of memory. */
DOCKET_LINKAGE_ docket_json_tape *docket_json_tape_new(void);
DOCKET_LINKAGE_ void docket_json_tape_free(docket_json_tape *p);

/*
 * Parse `len` bytes (copied into the parser's padded buffer). 0 and *doc,
 * valid until the next parse with `p` or its free; -1 when simdjson does not
 * take the text, whatever the reason (not JSON, nesting deeper than 1,024,
 * out of memory): the caller then asks jansson, which says why.
 */
DOCKET_LINKAGE_ int docket_json_tape_parse(docket_json_tape *p, const char *text, size_t len,
					   docket_tape_doc *doc) DOCKET_MUST_USE;

#endif
