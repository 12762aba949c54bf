/* SPDX-License-Identifier: Apache-2.0 */
/* utf8.h: strict UTF-8 validation, once for every module. */
#ifndef DOCKET_UTIL_UTF8_H
#define DOCKET_UTIL_UTF8_H

#include <stddef.h>

/*
 * Offset of the first byte of s[0..len) that does not start a valid UTF-8
 * sequence (no overlongs, no surrogates, nothing above U+10FFFF; what
 * jansson and YAML accept), or len when all of it is valid.
 */
size_t docket_utf8_check(const char *s, size_t len);

/* Length (1..4) of the valid UTF-8 sequence at p, which has `avail` >= 1
 * bytes, or 0 when none starts there. */
size_t docket_utf8_seq(const unsigned char *p, size_t avail);

#endif
