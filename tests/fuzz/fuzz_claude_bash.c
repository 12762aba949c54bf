/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_claude_bash.c: arbitrary bytes as a Claude Code Bash command.
 * claude_bash_normalize (the redirections and environment prefixes Claude
 * Code drops) never grows the script and always ends it with a NUL; the
 * command then goes through the Claude engine and the enforced verdict,
 * which may never be more permissive than the engine's (enforce.c,
 * invariant 1).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"
#include "policy/eval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static docket_policy *p;
	docket_buf out = DOCKET_BUF_INIT;
	char *script;
	json_t *call = NULL;
	docket_policy_call *c = NULL;
	docket_policy_result *r = NULL;

	if (!p) {
		const char *settings = "{\"permissions\":{\"allow\":[\"Bash(npm run lint:*)\",\"Bash(git status)\","
				       "\"Bash(printf:*)\"],\"deny\":[\"Bash(rm:*)\",\"Edit(./src/**)\"],"
				       "\"defaultMode\":\"acceptEdits\",\"additionalDirectories\":[\"../extra\",\"~/x\"]}}";

		if (docket_policy_load_buffer(&p, DOCKET_POLICY_CLAUDE, "fuzz", settings, strlen(settings)) < 0)
			abort();
	}
	if (!(script = malloc(size + 1)))
		return 0;
	memcpy(script, data, size);
	script[size] = '\0';
	if (claude_bash_normalize(&out, script) == 0) {
		if (out.len > strlen(script) || !out.ptr || out.ptr[out.len] != '\0')
			abort();
	}
	docket_buf_dispose(&out);
	call = json_pack("{s:s,s:{s:s}}", "tool", "Bash", "args", "command", script);
	free(script);
	if (call && docket_policy_call_from_json(&c, call) == 0 && docket_policy_result_new(&r) == 0) {
		json_t *ctx = json_pack("{s:s,s:s,s:[s],s:{s:s}}", "platform", "linux", "cwd", "/w/p",
					"workspace_roots", "/w/p", "env", "HOME", "/w/h");
		docket_policy_context *x = NULL;

		if (ctx && docket_policy_context_from_json(&x, ctx) == 0 &&
		    docket_policy_eval_enforced(r, p, c, x) == 0 &&
		    docket_policy_result_verdict(r) < docket_policy_result_engine_verdict(r))
			abort();
		docket_policy_context_free(x);
		json_decref(ctx);
	}
	docket_policy_result_free(r);
	docket_policy_call_free(c);
	json_decref(call);
	return 0;
}
