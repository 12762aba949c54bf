/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_json_dump.c: util/json_write.c against jansson on arbitrary bytes.
 *
 * Properties, for every input X:
 *   1. docket_json_is_dump(X) == 1 implies that jansson parses X (the flags
 *      the event codec uses for stored JSON) and dumps it back to exactly X:
 *      what the JSONL writer copies is what the tree path would have written;
 *   2. docket_json_write_string(X) fails exactly when json_stringn(X)
 *      refuses X (invalid UTF-8), leaving the buffer as it was, and otherwise
 *      writes what jansson's dump of that string writes.
 * Any violation aborts, which libFuzzer and the regression driver report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/json_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_dump(const char *text, size_t size)
{
	json_error_t jerr;
	docket_buf d = DOCKET_BUF_INIT;
	json_t *v;

	if (!docket_json_is_dump(text, size))
		return;
	v = json_loadb(text, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!v || docket_json_dump(&d, v) < 0 || d.len != size || memcmp(d.ptr, text, size) != 0)
		abort();
	json_decref(v);
	docket_buf_dispose(&d);
}

static void check_string(const char *text, size_t size)
{
	docket_buf mine = DOCKET_BUF_INIT, theirs = DOCKET_BUF_INIT;
	json_t *s = json_stringn(text, size);
	int error;

	if (docket_buf_put(&mine, "x", 1) < 0)
		abort();
	error = docket_json_write_string(&mine, text, size);
	if (!s) {
		if (error != DOCKET_EINVALID || mine.len != 1 || mine.ptr[1] != '\0')
			abort();
	} else if (error != 0 || docket_json_dump(&theirs, s) < 0 || mine.len != theirs.len + 1 ||
		   memcmp(mine.ptr + 1, theirs.ptr, theirs.len) != 0) {
		abort();
	}
	json_decref(s);
	docket_buf_dispose(&mine);
	docket_buf_dispose(&theirs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_dump((const char *)data, size);
	check_string((const char *)data, size);
	return 0;
}
