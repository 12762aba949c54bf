/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_import_codex.c: the Codex importer on arbitrary bytes (and, compiled
 * with FUZZ_IMPORT_FORMAT set, the Claude Code importer: fuzz_import_claude.c).
 *
 * Properties checked for every input:
 *   1. the import returns 0 (bad lines are counted, never fatal);
 *   2. every event it emits is accepted by the ledger's strict codec
 *      (docket_event_from_json), so no transcript can make the importer hand
 *      the ledger something malformed;
 *   3. mapping is deterministic: a second run emits the same events;
 *   4. with an allocation failing (the Nth, N taken from the input) the
 *      import returns 0 or DOCKET_ENOMEM and leaks nothing (ASan).
 * Any violation aborts, which libFuzzer and the regression driver report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docket/import.h"
#include "ledger/event.h"
#include "util/alloc.h"

#ifndef FUZZ_IMPORT_FORMAT
#define FUZZ_IMPORT_FORMAT DOCKET_IMPORT_CODEX
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_event(void *ctx, json_t *ev)
{
	docket_event *parsed = NULL;

	if (docket_event_from_json(&parsed, ev) != 0 && docket_error_last()->code != DOCKET_ENOMEM)
		abort();
	docket_event_free(parsed);
	if (ctx && json_array_append_new(ctx, ev) == 0)
		return 0;
	if (ctx)
		return DOCKET_ENOMEM;
	json_decref(ev);
	return 0;
}

static json_t *run(const uint8_t *data, size_t size)
{
	docket_import_stats s;
	json_t *events = json_array();

	memset(&s, 0, sizeof(s));
	if (!events || docket_import_buffer(FUZZ_IMPORT_FORMAT, "fuzz.jsonl", (const char *)data, size,
					    NULL, check_event, events, &s) != 0)
		abort();
	if (s.events != json_array_size(events))
		abort();
	return events;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int installed;
	docket_import_stats s;
	json_t *a, *b;
	int rc;

	if (!installed) {
		docket_alloc_install_json();
		installed = 1;
	}
	a = run(data, size);
	b = run(data, size);
	if (!json_equal(a, b))
		abort();
	json_decref(a);
	json_decref(b);
	memset(&s, 0, sizeof(s));
	docket_alloc_fail_after(size ? (long)(data[size / 2] * 3) : 0);
	rc = docket_import_buffer(FUZZ_IMPORT_FORMAT, "fuzz.jsonl", (const char *)data, size, NULL,
				  check_event, NULL, &s);
	docket_alloc_fail_reset();
	if (rc != 0 && rc != DOCKET_ENOMEM)
		abort();
	return 0;
}
