/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_write.h: JSON text written straight into a buffer, byte for byte what
 * jansson's dump with JSON_COMPACT | JSON_ENCODE_ANY (docket_json_dump)
 * writes for the same value, for the writers that skip the json_t tree (the
 * JSONL export, the replay report). The one owner of jansson's escaping.
 */
#ifndef DOCKET_UTIL_JSON_WRITE_H
#define DOCKET_UTIL_JSON_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "docket/common.h"

/*
 * Append s[0..len) as a quoted JSON string escaped as jansson escapes it:
 * '"', '\\' and every byte below 0x20 (\b \f \n \r \t, else \u00XX with
 * upper-case hex); everything else, DEL and U+2028 included, as it is.
 * A string that is not valid UTF-8 (jansson's check: no overlongs, no
 * surrogates, nothing above U+10FFFF) is DOCKET_EINVALID, as json_stringn()
 * refuses it, and `out` is left as it was; DOCKET_ENOMEM.
 */
int docket_json_write_string(docket_buf *out, const char *s, size_t len) DOCKET_MUST_USE;

/* Append a JSON integer as jansson writes a json_int_t (decimal, '-'). */
int docket_json_write_int(docket_buf *out, int64_t n) DOCKET_MUST_USE;

/*
 * 1 when `text` is exactly what docket_json_dump writes for the value that
 * jansson parses from it (json_loadb with JSON_DECODE_ANY | JSON_ALLOW_NUL),
 * so a writer can copy it instead of parsing and dumping it again; 0 when it
 * is not, or not provably: a caller then parses it with jansson, which also
 * gives the error for text that is not JSON. It accepts no whitespace,
 * escapes only where jansson writes them, integers of at most 18 digits, no
 * reals (jansson's %.17g is left to jansson), objects of at most 32 keys
 * without duplicates, no NUL in keys, at most 32 levels of nesting.
 * A recognizer, not a parser: it builds nothing, recurses at most 32 deep,
 * and reads each byte once (plus the key comparison within an object).
 */
int docket_json_is_dump(const char *text, size_t len);

#endif
