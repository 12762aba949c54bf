/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event_text_diff.c: simdjson against jansson on one line (event_text_diff.h).
 */
#include "event_text_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/json.h"

int event_text_same(const docket_event *a, const docket_event *b)
{
	size_t na = docket__v1__event__get_packed_size(a), nb = docket__v1__event__get_packed_size(b);
	uint8_t *pa = malloc(na + 1), *pb = malloc(nb + 1);
	int same = pa && pb && na == nb;

	if (same) {
		docket__v1__event__pack(a, pa);
		docket__v1__event__pack(b, pb);
		same = memcmp(pa, pb, na) == 0;
	}
	free(pa);
	free(pb);
	return same;
}

event_text_result event_text_diff(docket_json_tape *tape, const char *text, size_t len, char *why, size_t why_size)
{
	docket_event *simd = NULL, *jans = NULL;
	char simd_msg[sizeof(docket_error_last()->message)] = "", scratch[1];
	event_text_result r = TEXT_DIFFER;
	json_t *obj = NULL;
	int s, j = 1;

	if (!why || why_size == 0) {
		why = scratch;
		why_size = sizeof(scratch);
	}
	why[0] = '\0';
	docket_error_clear();
	s = docket_event_from_text(&simd, tape, text, len);
	if (s < 0)
		memcpy(simd_msg, docket_error_last()->message, sizeof(simd_msg));
	if (s == 1 && simd) {
		snprintf(why, why_size, "declined but left an event");
		goto done;
	}
	if (s == 1) {
		r = TEXT_DECLINED;
		goto done;
	}
	docket_error_clear();
	if (docket_json_parse(&obj, text, len) == 0 && json_is_object(obj))
		j = docket_event_from_json(&jans, obj);
	if (s == 0 && j == 0 && event_text_same(simd, jans))
		r = TEXT_SAME_EVENT;
	else if (s < 0 && j == s && strcmp(simd_msg, docket_error_last()->message) == 0)
		r = TEXT_SAME_ERROR;
	else
		snprintf(why, why_size, "simdjson %d (%s), jansson %d (%s)", s, simd_msg, j,
			 j < 0 ? docket_error_last()->message : j == 0 ? "an event" : "not an object or not JSON");
done:
	json_decref(obj);
	docket_event_free(simd);
	docket_event_free(jans);
	return r;
}
