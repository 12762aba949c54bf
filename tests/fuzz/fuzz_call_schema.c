/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_call_schema.c: a tool call's args as serve's tool.intent checks
 * them against the call schema (runtime/call_schema.c), through both JSON
 * views: jansson's tree (the tree path) and docket_jv_parse (the simdjson
 * tape, serve's text path, where it takes the text). The input is the
 * tool name, a newline, the args text. Both views must give the same
 * answer and the same message; abort() if not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/call_schema.h"
#include "util/error.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static docket_json_tape *tape;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t tl = nl ? (size_t)(nl - data) : 0, len = nl ? size - tl - 1 : size;
	char *tool = NULL, *text = NULL, msg[sizeof(docket_error_last()->message)];
	json_t *tree = NULL;
	docket_jv_doc d;
	int ra, rb;

	if (!tape && !(tape = docket_json_tape_new()))
		abort();
	if (!(tool = malloc(tl + 1)) || !(text = malloc(len + 1)))
		goto done;
	memcpy(tool, data, tl);
	tool[tl] = '\0';
	memcpy(text, nl ? nl + 1 : data, len);
	text[len] = '\0';
	if (docket_json_parse(&tree, text, len) < 0)
		goto done;
	ra = call_schema_check("tool.intent", tool, &docket_jv_jansson, docket_jv_of_json(tree));
	memcpy(msg, docket_error_last()->message, sizeof(msg));
	memset(&d, 0, sizeof(d));
	if (docket_jv_parse(&d, tape, text, len) == 0) {
		rb = call_schema_check("tool.intent", tool, d.ops, d.root);
		if (ra != rb || (ra < 0 && strcmp(msg, docket_error_last()->message) != 0))
			abort();
	}
	docket_jv_doc_dispose(&d);
done:
	json_decref(tree);
	free(tool);
	free(text);
	return 0;
}
