/* SPDX-License-Identifier: Apache-2.0 */
/* rfc3339.h: RFC 3339 timestamps, parsed once for every module. */
#ifndef DOCKET_UTIL_RFC3339_H
#define DOCKET_UTIL_RFC3339_H

#include <stdint.h>

enum {
	DOCKET_TIME_UTC_ONLY = 1u << 0  /* only "...T...Z" (what the ledger stores) */
};

/*
 * Milliseconds since the epoch of an RFC 3339 time: "YYYY-MM-DDTHH:MM:SS",
 * an optional fraction (1-9 digits, kept to the millisecond), then "Z" or,
 * without DOCKET_TIME_UTC_ONLY, "z", "+HH:MM" or "-HH:MM" (and ' ' or 't' as
 * the separator). Every field is range-checked, days against the month.
 * Returns 0, or -1 for anything else.
 */
int docket_time_parse_ms(const char *s, unsigned int flags, int64_t *out_ms);

#endif
