/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_redact_event.c: the events redaction walks are outside input (what a
 * runtime, a hook or a transcript sends), and so are the JSON documents in
 * their strings (a tool's output) that redaction parses and walks (issue 28).
 * Redact arbitrary bytes, read as an event object, with the built-in rules
 * and secret key names, twice: the second pass must change nothing
 * (idempotence: re-sent events must still be recognised), and no value
 * under a key named "password" may survive at the top of args. Must never
 * crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "docket/audit.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static docket_redactor *redactor(void)
{
	static docket_redactor *r;

	if (!r && docket_redactor_new(&r, NULL, 0) != 0)
		abort();
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *ev, *hits, *pw;
	int changed = 0;

	docket_alloc_install_json();
	if (!(ev = json_loadb((const char *)data, size, 0, NULL)))
		return 0;
	hits = json_array();
	if (json_is_object(ev) && hits && docket_redact_event(redactor(), ev, hits, &changed) == 0) {
		if (docket_redact_event(redactor(), ev, NULL, &changed) == 0 && changed)
			abort();  /* a second pass found more: not idempotent */
		pw = json_object_get(json_object_get(ev, "args"), "password");
		if (json_is_string(pw) && json_string_length(pw) > 0 &&
		    strncmp(json_string_value(pw), "[REDACTED:", 10) != 0)
			abort();  /* a secret under its own name survived */
		if (json_is_integer(pw) || json_is_real(pw) || json_is_object(pw) || json_is_array(pw))
			abort();
	}
	json_decref(hits);
	json_decref(ev);
	return 0;
}
