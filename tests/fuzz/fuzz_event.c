/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_event.c: the event codec (ledger/event.c) on arbitrary bytes.
 *
 * Properties checked for every input that parses as JSON and is accepted by
 * docket_event_from_json (X):
 *   1. to_json succeeds (Y) and Y equals X up to the documented omissions of
 *      explicitly empty optional values ("", [], {}, policy_revision 0);
 *   2. from_json(Y) succeeds and to_json of it is json_equal to Y (fixpoint);
 *   3. with the Nth allocation failing (N taken from the input), from_json
 *      and to_json report DOCKET_ENOMEM and nothing else (ASan finds leaks);
 *   4. the direct writer (docket_event_write_json) gives the bytes of
 *      docket_json_dump(to_json), with and without the reader's frame.
 * Any violation aborts, which libFuzzer and the regression driver report.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/event.h"
#include "util/alloc.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A value to_json may leave out because from_json treats it as "not given". */
static bool droppable(const char *key, const json_t *v)
{
	if (json_is_string(v))
		return json_string_length(v) == 0;
	if (json_is_array(v))
		return json_array_size(v) == 0;
	if (json_is_object(v))
		return json_object_size(v) == 0;
	if (json_is_integer(v))
		return strcmp(key, "policy_revision") == 0 && json_integer_value(v) == 0;
	return false;
}

/* y is x with some droppable members removed; decision/risk compared the same way. */
static bool equivalent(const json_t *x, const json_t *y, int depth)
{
	const char *key;
	json_t *v;

	if (!json_is_object(x) || !json_is_object(y))
		return false;
	json_object_foreach((json_t *)y, key, v) {
		const json_t *xv = json_object_get(x, key);

		if (!xv)
			return false;
		if (depth == 0 && (strcmp(key, "decision") == 0 || strcmp(key, "risk") == 0)) {
			if (!equivalent(xv, v, depth + 1))
				return false;
		} else if (!json_equal((json_t *)xv, v)) {
			return false;
		}
	}
	json_object_foreach((json_t *)x, key, v) {
		if (!json_object_get(y, key) && !droppable(key, v))
			return false;
	}
	return true;
}

/* Property 4: the text backend writes what jansson dumps of the tree. */
static void check_writer(const docket_event *ev, const docket_event_frame *f)
{
	docket_buf a = DOCKET_BUF_INIT, b = DOCKET_BUF_INIT;
	json_t *tree = NULL;

	if (docket_event_to_json_framed(&tree, ev, f) != 0 || docket_json_dump(&a, tree) != 0 ||
	    docket_event_write_json(&b, ev, f) != 0 || a.len != b.len || memcmp(a.ptr, b.ptr, a.len) != 0)
		abort();
	json_decref(tree);
	docket_buf_dispose(&a);
	docket_buf_dispose(&b);
}

/* `in` was accepted: under allocation failure only ENOMEM may come back. */
static void check_alloc_failure(const json_t *in, long n)
{
	docket_event *ev = NULL;
	json_t *out = NULL;
	int rc;

	docket_alloc_fail_after(n);
	rc = docket_event_from_json(&ev, in);
	if (rc == 0)
		rc = docket_event_to_json(&out, ev);
	docket_alloc_fail_reset();
	if (rc != 0 && rc != DOCKET_ENOMEM)
		abort();
	if (rc != 0 && out)
		abort();
	json_decref(out);
	docket_event_free(ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int installed;
	json_t *in = NULL, *out1 = NULL, *out2 = NULL;
	docket_event *ev1 = NULL, *ev2 = NULL;

	if (!installed) {
		docket_alloc_install_json(); /* jansson's allocations fail too */
		installed = 1;
	}
	if (docket_json_parse(&in, (const char *)data, size) < 0)
		return 0;
	if (docket_event_from_json(&ev1, in) == 0) {
		if (docket_event_to_json(&out1, ev1) != 0)
			abort();
		if (!equivalent(in, out1, 0))
			abort();
		if (docket_event_from_json(&ev2, out1) != 0)
			abort();
		if (docket_event_to_json(&out2, ev2) != 0)
			abort();
		if (!json_equal(out1, out2))
			abort();
		check_writer(ev1, NULL);
		check_writer(ev1, &(docket_event_frame){ size, "0123456789abcdef" });
		check_alloc_failure(in, (long)(size % 61));
	} else if (ev1) {
		abort(); /* a failed parse must leave *out NULL */
	}
	json_decref(out2);
	json_decref(out1);
	docket_event_free(ev2);
	docket_event_free(ev1);
	json_decref(in);
	return 0;
}
