/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_event_text.c: `docket record`'s line parser on arbitrary bytes:
 * simdjson (docket_event_from_text) against jansson (docket_json_parse +
 * docket_event_from_json). Properties, for every input:
 *   1. the two give the same event (packed bytes) or the same error (code
 *      and message), unless simdjson leaves the line to jansson (declined),
 *      which is what `docket record` then asks;
 *   2. a declined line leaves no event;
 *   3. with the Nth allocation failing (N from the input), the simdjson
 *      path gives what it gives without the failure, or DOCKET_ENOMEM, or
 *      declines (its duplicate-key check could not allocate), and leaks
 *      nothing (ASan).
 * Any violation aborts.
 */
#include <stdint.h>
#include <stdlib.h>

#include "event_text_diff.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static docket_json_tape *tape;
	docket_event *ev = NULL;
	int rc, unfailed;

	if (!tape) {
		docket_alloc_install_json();
		if (!(tape = docket_json_tape_new()))
			abort();
	}
	if (event_text_diff(tape, (const char *)data, size, NULL, 0) == TEXT_DIFFER)
		abort();
	unfailed = docket_event_from_text(&ev, tape, (const char *)data, size);
	docket_event_free(ev);
	ev = NULL;
	docket_alloc_fail_after((long)(size % 53));
	rc = docket_event_from_text(&ev, tape, (const char *)data, size);
	docket_alloc_fail_reset();
	if ((rc != 0 && ev) || (rc != unfailed && rc != DOCKET_ENOMEM && rc != 1))
		abort();
	docket_event_free(ev);
	return 0;
}
