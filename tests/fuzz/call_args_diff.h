/* SPDX-License-Identifier: Apache-2.0 */
/*
 * call_args_diff.h: a tool call's args text as replay reads it, through both
 * JSON views, compared: jansson (docket_json_parse, then
 * docket_policy_call_from_args, replay_target) against docket_jv_parse (the
 * simdjson tape where it takes the text, jansson's fallback where it does
 * not), then docket_policy_call_from_jv, replay_target_jv. Shared by
 * tests/unit/test_policy.c and fuzz_call_args.c.
 */
#ifndef DOCKET_TESTS_CALL_ARGS_DIFF_H
#define DOCKET_TESTS_CALL_ARGS_DIFF_H

#include <stddef.h>

#include "docket/policy.h"
#include "util/json_tape.h"

/*
 * 0 when both views give the same return, the same message, the same
 * evaluation by `p` under `ctx` (NULL: none) and, for a text without NUL
 * bytes, the same target; 1 otherwise, with `why` (may be NULL) saying what
 * differed. *took (may be NULL): 1 when the tape took the text.
 */
int call_args_diff(const docket_policy *p, const docket_policy_context *ctx, docket_json_tape *tape,
		   const char *tool, const char *text, size_t len, int *took, char *why, size_t why_size);

#endif
