/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_call_args.c: a tool call's args text as replay reads it, through
 * both JSON views: jansson (docket_json_parse + docket_policy_call_from_args,
 * replay_target) and docket_jv_parse (the simdjson tape where it takes the
 * text) + docket_policy_call_from_jv, replay_target_jv. The input is the
 * tool name, a newline, the args text. The two must give the same return,
 * the same message, the same evaluation and the same target; abort() if not.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "call_args_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static docket_policy *p;
	static docket_json_tape *tape;
	const uint8_t *nl = memchr(data, '\n', size);
	size_t tl = nl ? (size_t)(nl - data) : 0, len = nl ? size - tl - 1 : size;
	char *tool, *text;

	if (!p) {
		const char *settings = "{\"permissions\":{\"allow\":[\"Bash(git status)\",\"Read\"],"
				       "\"ask\":[\"Bash(git push:*)\"],\"deny\":[\"Bash(rm -rf:*)\",\"Read(./.env)\","
				       "\"WebFetch(domain:pastebin.com)\"]}}";

		if (docket_policy_load_buffer(&p, DOCKET_POLICY_CLAUDE, "fuzz", settings, strlen(settings)) < 0 ||
		    !(tape = docket_json_tape_new()))
			abort();
	}
	if (!(tool = malloc(tl + 1)) || !(text = malloc(len + 1))) {
		free(tool);
		return 0;
	}
	memcpy(tool, data, tl);
	tool[tl] = '\0';
	memcpy(text, nl ? nl + 1 : data, len);
	text[len] = '\0';
	if (call_args_diff(p, NULL, tape, tool, text, len, NULL, NULL, 0) != 0)
		abort();
	free(tool);
	free(text);
	return 0;
}
