/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timespec.h: the one syntax of every --since and --until (log, export,
 * report, audit, replay):
 *   2026-04-01T09:30:00Z   RFC 3339 (an offset such as +02:00 is allowed)
 *   2026-04-01             a date: its midnight, UTC
 *   90s 45m 2h 7d 2w       that long before `now`
 *   #123                   the event with seq 123 (a position, not a time)
 */
#ifndef DOCKET_UTIL_TIMESPEC_H
#define DOCKET_UTIL_TIMESPEC_H

#include <stdint.h>

typedef enum docket_timespec_kind {
	DOCKET_TIMESPEC_TIME = 1,  /* ms: milliseconds since the epoch */
	DOCKET_TIMESPEC_SEQ = 2    /* seq: an event's seq (>= 1) */
} docket_timespec_kind;

typedef struct docket_timespec {
	docket_timespec_kind kind;
	int64_t ms;
	uint64_t seq;
} docket_timespec;

/*
 * Parse `s` (one of the forms above) with `now_ms` the present for the
 * relative forms. Returns 0, or -1 with *out untouched when `s` is none of
 * them (a zero or overflowing amount, seq 0, trailing bytes, an impossible
 * date).
 */
int docket_timespec_parse(docket_timespec *out, const char *s, int64_t now_ms);

/* The forms, for messages: "an RFC 3339 time, a date (2026-04-01), a
 * relative time (2h, 7d) or a seq (#123)". */
extern const char docket_timespec_forms[];

#endif
