/* SPDX-License-Identifier: Apache-2.0 */
/* call_args_diff.c: see call_args_diff.h. */
#include "call_args_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "replay/replay_internal.h"
#include "util/error.h"
#include "util/json.h"
#include "util/jv.h"

/* The evaluation of `c` as compact JSON (NULL when it fails; caller frees). */
static char *eval_text(const docket_policy *p, const docket_policy_context *ctx, const docket_policy_call *c)
{
	docket_policy_result *r = NULL;
	json_t *out = NULL;
	char *s = NULL;

	if (docket_policy_result_new(&r) == 0 && docket_policy_eval(r, p, c, ctx) == 0 &&
	    docket_policy_result_to_json(&out, r) == 0)
		s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	docket_policy_result_free(r);
	return s;
}

static int differ(char *why, size_t why_size, const char *what, const char *a, const char *b)
{
	if (why)
		snprintf(why, why_size, "%s: jansson %.400s, jv %.400s", what, a ? a : "(none)", b ? b : "(none)");
	return 1;
}

/* Both calls' evaluations, and (a text without NUL) both targets. */
static int compare_built(const docket_policy *p, const docket_policy_context *ctx, const docket_policy_call *a,
			 const docket_policy_call *b, const char *text, size_t len, const docket_jv_doc *d,
			 char *why, size_t why_size)
{
	docket_buf ta = DOCKET_BUF_INIT, tb = DOCKET_BUF_INIT;
	char *ea = eval_text(p, ctx, a), *eb = eval_text(p, ctx, b);
	int rc = 0;

	if ((ea == NULL) != (eb == NULL) || (ea && strcmp(ea, eb) != 0))
		rc = differ(why, why_size, "evaluation", ea, eb);
	/* replay_target reads a NUL-terminated text */
	else if (strlen(text) == len && replay_target(&ta, text) == 0 &&
		 replay_target_jv(&tb, d->ops, d->root) == 0 &&
		 (ta.len != tb.len || memcmp(ta.ptr, tb.ptr, ta.len) != 0))
		rc = differ(why, why_size, "target", ta.ptr, tb.ptr);
	free(ea);
	free(eb);
	docket_buf_dispose(&ta);
	docket_buf_dispose(&tb);
	return rc;
}

int call_args_diff(const docket_policy *p, const docket_policy_context *ctx, docket_json_tape *tape,
		   const char *tool, const char *text, size_t len, int *took, char *why, size_t why_size)
{
	char ma[1100] = "", mb[1100] = "";
	json_t *j = NULL;
	docket_jv_doc d;
	docket_policy_call *a = NULL, *b = NULL;
	int ra, rb, rc;

	if ((ra = docket_json_parse(&j, text, len)) == 0)
		ra = docket_policy_call_from_args(&a, tool, j);
	if (ra < 0)
		snprintf(ma, sizeof(ma), "%s", docket_error_last()->message);
	if ((rb = docket_jv_parse(&d, tape, text, len)) == 0)
		rb = docket_policy_call_from_jv(&b, tool, d.ops, d.root);
	if (rb < 0)
		snprintf(mb, sizeof(mb), "%s", docket_error_last()->message);
	if (took)
		*took = d.ops == &docket_jv_tape;
	if (ra != rb || strcmp(ma, mb) != 0) {
		if (why)
			snprintf(why, why_size, "return: jansson %d (%s), jv %d (%s)", ra, ma, rb, mb);
		rc = 1;
	} else {
		rc = ra == 0 ? compare_built(p, ctx, a, b, text, len, &d, why, why_size) : 0;
	}
	docket_policy_call_free(a);
	docket_policy_call_free(b);
	docket_jv_doc_dispose(&d);
	json_decref(j);
	return rc;
}
