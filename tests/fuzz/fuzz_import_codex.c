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
 *      import returns 0 or DOCKET_ENOMEM and leaks nothing (ASan);
 *   5. format detection (docket_import_detect) answers a known format or
 *      DOCKET_ENOTFOUND, the same on every run;
 *   6. every line, read as a live hook's tool_response, gets an outcome from
 *      docket_import_codex_outcome: a known status, never a run denial.
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

static void check_detect(const uint8_t *data, size_t size)
{
	docket_import_format f1 = 0, f2 = 0;
	int a = docket_import_detect(&f1, (const char *)data, size);
	int b = docket_import_detect(&f2, (const char *)data, size);

	if (a != b || (a == 0 && (f1 != f2 || (f1 != DOCKET_IMPORT_CODEX && f1 != DOCKET_IMPORT_CLAUDE))) ||
	    (a != 0 && a != DOCKET_ENOTFOUND))
		abort();
}

/* Each line as a tool_response: JSON when it parses, else the text itself. */
static void check_outcomes(const uint8_t *data, size_t size)
{
	static const char *const statuses[] = { "ok", "error", "timeout", "denied", "cancelled", NULL };
	size_t pos = 0;

	while (pos < size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t n = nl ? (size_t)(nl - (data + pos)) : size - pos, i;
		json_error_t jerr;
		json_t *r = json_loadb((const char *)data + pos, n, JSON_DECODE_ANY, &jerr);
		docket_import_outcome o;

		if (!r)
			r = json_stringn((const char *)data + pos, n);  /* NULL when not UTF-8: no response */
		if (docket_import_codex_outcome(&o, r) != 0)
			abort();
		for (i = 0; statuses[i] && strcmp(statuses[i], o.status) != 0; i++)
			;
		if (!statuses[i] || (o.ran && strcmp(o.status, "denied") == 0))
			abort();
		json_decref(r);
		pos += n + 1;
	}
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
	check_detect(data, size);
	check_outcomes(data, size);
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
