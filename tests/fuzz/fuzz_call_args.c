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

#include "docket/policy.h"
#include "policy/policy.h"
#include "replay/replay_internal.h"
#include "util/error.h"
#include "util/json.h"
#include "util/jv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The evaluation of `c` as compact JSON (NULL when it fails). */
static char *eval_text(const docket_policy *p, const docket_policy_call *c)
{
	docket_policy_result *r = NULL;
	json_t *out = NULL;
	char *s = NULL;

	if (docket_policy_result_new(&r) == 0 && docket_policy_eval(r, p, c, NULL) == 0 &&
	    docket_policy_result_to_json(&out, r) == 0)
		s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	docket_policy_result_free(r);
	return s;
}

static void same_or_abort(const char *a, const char *b)
{
	if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
		abort();
}

/* Both calls' evaluations, and both targets. */
static void compare_built(const docket_policy *p, const docket_policy_call *a, const docket_policy_call *b,
			  const char *text, const docket_jv_doc *d)
{
	docket_buf ta = DOCKET_BUF_INIT, tb = DOCKET_BUF_INIT;
	char *ea = eval_text(p, a), *eb = eval_text(p, b);

	same_or_abort(ea, eb);
	free(ea);
	free(eb);
	if (replay_target(&ta, text) == 0 && replay_target_jv(&tb, d->ops, d->root) == 0 &&
	    (ta.len != tb.len || memcmp(ta.ptr, tb.ptr, ta.len) != 0))
		abort();
	docket_buf_dispose(&ta);
	docket_buf_dispose(&tb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static docket_policy *p;
	static docket_json_tape *tape;
	const uint8_t *nl = memchr(data, '\n', size);
	char *tool, *text, ma[1100] = "", mb[1100] = "";
	json_t *j = NULL;
	docket_jv_doc d;
	docket_policy_call *a = NULL, *b = NULL;
	size_t tl = nl ? (size_t)(nl - data) : 0, len = nl ? size - tl - 1 : size;
	int ra, rb;

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
	if ((ra = docket_json_parse(&j, text, len)) == 0)
		ra = docket_policy_call_from_args(&a, tool, j);
	if (ra < 0)
		snprintf(ma, sizeof(ma), "%s", docket_error_last()->message);
	if ((rb = docket_jv_parse(&d, tape, text, len)) == 0)
		rb = docket_policy_call_from_jv(&b, tool, d.ops, d.root);
	if (rb < 0)
		snprintf(mb, sizeof(mb), "%s", docket_error_last()->message);
	if (ra != rb || strcmp(ma, mb) != 0)
		abort();
	/* replay_target reads a NUL-terminated text: only when it has no NUL */
	if (ra == 0 && strlen(text) == len)
		compare_built(p, a, b, text, &d);
	docket_policy_call_free(a);
	docket_policy_call_free(b);
	docket_jv_doc_dispose(&d);
	json_decref(j);
	free(tool);
	free(text);
	return 0;
}
