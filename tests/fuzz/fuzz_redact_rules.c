/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_redact_rules.c: a redaction rules document is outside input (`docket
 * redact --set-rules FILE`, `docket export --redact-rules FILE`, and the copy
 * in a ledger's meta table). Load arbitrary bytes as one; when they load,
 * redact a fixed event with them twice: the second pass must change nothing
 * (idempotence). Must never crash or leak.
 */
#include <stdlib.h>
#include <string.h>

#include "docket/audit.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char sample[] =
	"{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"c\",\"status\":\"ok\","
	"\"output\":\"https://u:pw@h/ AKIAIOSFODNN7EXAMPLE Bearer abcdefghijkl \\u00e9t\\u00e9 password=x1y2\","
	"\"args\":{\"command\":[\"a\",\"b c\"],\"n\":1,\"deep\":[{\"x\":\"sk-abcdefghijklmnopqrstuvwxyz\"}]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_redactor *r = NULL;
	json_t *ev, *hits;
	int changed = 0;

	docket_alloc_install_json();
	if (docket_redactor_new(&r, (const char *)data, size) != 0)
		return 0;
	ev = json_loads(sample, 0, NULL);
	hits = json_array();
	if (ev && hits && docket_redact_event(r, ev, hits, &changed) == 0 &&
	    docket_redact_event(r, ev, NULL, &changed) == 0 && changed)
		abort();  /* a second pass found more: not idempotent */
	json_decref(hits);
	json_decref(ev);
	docket_redactor_free(r);
	return 0;
}
