/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event_text_diff.h: one line of `docket record` input both ways, compared:
 * simdjson (docket_event_from_text) against jansson (docket_json_parse,
 * then docket_event_from_json of an object: what record did before).
 * Shared by tests/unit/test_event_text.c and fuzz_event_text.c.
 */
#ifndef DOCKET_TESTS_EVENT_TEXT_DIFF_H
#define DOCKET_TESTS_EVENT_TEXT_DIFF_H

#include <stddef.h>

#include "ledger/event.h"

typedef enum event_text_result {
	TEXT_SAME_EVENT,  /* both built an event, the same bytes when packed */
	TEXT_SAME_ERROR,  /* both refused the object, same code, same message */
	TEXT_DECLINED,    /* simdjson left the line to jansson (record does the same) */
	TEXT_DIFFER,      /* anything else: a bug */
} event_text_result;

/* `why` (may be NULL) gets a description of a difference. */
event_text_result event_text_diff(docket_json_tape *tape, const char *text, size_t len, char *why, size_t why_size);

/* 1 when the two events pack to the same bytes. */
int event_text_same(const docket_event *a, const docket_event *b);

#endif
