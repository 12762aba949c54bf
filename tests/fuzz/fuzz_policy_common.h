/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_policy_common.h: what every policy fuzz target does with a policy that loaded. */
#ifndef DOCKET_FUZZ_POLICY_COMMON_H
#define DOCKET_FUZZ_POLICY_COMMON_H

#include <stdlib.h>

#include "docket/policy.h"
#include "util/alloc.h"

static inline void fuzz_policy_exercise(const docket_policy *p)
{
	static const char *const calls[] = {
		"{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"git status && rm -rf /tmp/x | cat\"]}}",
		"{\"tool\":\"shell\",\"args\":{\"command\":[\"/usr/bin/git\",\"push\",\"origin\"]}}",
		"{\"tool\":\"write_file\",\"args\":{\"path\":\"src/../.git/config\"}}",
		"{\"tool\":\"read_file\",\"args\":{\"path\":\"~/.ssh/id_rsa\"}}",
		"{\"tool\":\"network\",\"args\":{\"url\":\"https://API.example.com:8443/x\"}}",
		"{\"tool\":\"install_packages\",\"args\":{\"ecosystem\":\"npm\",\"packages\":[\"left-pad@1\"]}}",
		"{\"tool\":\"mcp\",\"args\":{\"server\":\"gh\",\"tool\":\"x\"}}",
	};
	json_t *cj = json_loads("{\"platform\":\"windows\",\"cwd\":\"/w\",\"workspace_roots\":[\"/w\"],"
				"\"env\":{\"HOME\":\"/h\"},\"grants\":[{\"command\":[\"git\",\"push\"]}]}", 0, NULL);
	docket_policy_context *ctx = NULL;
	docket_policy_result *res = NULL;
	char *yaml = NULL;

	if (!cj || docket_policy_context_from_json(&ctx, cj) < 0 || docket_policy_result_new(&res) < 0)
		goto done;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		json_t *j = json_loads(calls[i], 0, NULL), *out = NULL;
		docket_policy_call *call = NULL;

		if (j && docket_policy_call_from_json(&call, j) == 0 &&
		    docket_policy_eval(res, p, call, ctx) == 0 &&
		    docket_policy_result_to_json(&out, res) == 0)
			json_decref(out);
		docket_policy_call_free(call);
		json_decref(j);
	}
	if (docket_policy_to_yaml(&yaml, p) == 0) {
		docket_policy *q = NULL;

		/* a converted policy must load again */
		if (docket_policy_load_buffer(&q, DOCKET_POLICY_DOCKET, "converted", yaml, strlen(yaml)) < 0)
			abort();
		docket_policy_free(q);
		docket_free(yaml);
	}
	{
		json_t *x = NULL;

		if (docket_policy_to_json(&x, p) == 0)
			json_decref(x);
		/* what `policy check` finds (issue 30) */
		if (docket_policy_lint(&x, p) == 0)
			json_decref(x);
	}
done:
	docket_policy_result_free(res);
	docket_policy_context_free(ctx);
	json_decref(cj);
}

#endif
