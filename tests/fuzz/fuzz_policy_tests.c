/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy_tests.c: read arbitrary bytes as a `docket policy test` file;
 * when it parses, turn each case into its call (shorthands included) and
 * evaluate it, as the command does, against a small fixed policy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_text[] =
	"version: 1\ncommands:\n  - pattern: [git, [status, push]]\n    decision: ask\n    match: [\"git push\"]\n"
	"tools:\n  deny: [\"Read(./.env)\"]\n";

static void run_case(const docket_policy *p, docket_policy_result *res, const json_t *c, const json_t *file_ctx)
{
	json_t *cj = NULL, *merged = file_ctx ? json_deep_copy(file_ctx) : json_object();
	docket_policy_call *call = NULL;
	docket_policy_context *ctx = NULL;

	if (merged && json_object_get(c, "context"))
		json_object_update(merged, json_object_get(c, "context"));
	if (json_object_get(c, "call"))
		cj = json_incref(json_object_get(c, "call"));
	else if (docket_policy_call_shorthand(&cj, json_string_value(json_object_get(c, "command")),
					      json_string_value(json_object_get(c, "tool")),
					      json_string_value(json_object_get(c, "path")),
					      json_string_value(json_object_get(c, "url"))) < 0)
		cj = NULL;
	if (cj && docket_policy_call_from_json(&call, cj) == 0 && docket_policy_context_from_json(&ctx, merged) == 0 &&
	    docket_policy_eval_enforced(res, p, call, ctx) == 0) {
		for (size_t i = 0; docket_policy_result_match_index(res, i) != (size_t)-1; i++)
			if (!docket_policy_rule(p, docket_policy_result_match_index(res, i), NULL, NULL, NULL))
				abort();  /* every matched rule has an index */
	}
	docket_policy_context_free(ctx);
	docket_policy_call_free(call);
	json_decref(cj);
	json_decref(merged);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static docket_policy *p;
	docket_policy_result *res = NULL;
	json_t *t = NULL, *c;
	size_t i;

	if (!p && docket_policy_load_buffer(&p, DOCKET_POLICY_DOCKET, "p.yaml", policy_text, strlen(policy_text)) < 0)
		abort();
	if (docket_policy_tests_parse(&t, "fuzz", (const char *)data, size) < 0)
		return 0;
	if (!json_is_array(json_object_get(t, "tests")))
		abort();  /* a parsed file always has its list of cases */
	if (docket_policy_result_new(&res) == 0)
		json_array_foreach(json_object_get(t, "tests"), i, c)
			run_case(p, res, c, json_object_get(t, "context"));
	docket_policy_result_free(res);
	json_decref(t);
	return 0;
}
