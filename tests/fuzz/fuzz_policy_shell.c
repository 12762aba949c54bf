/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy_shell.c: split arbitrary bytes as a `bash -lc` script, check
 * the split's invariants, run Codex's danger check over its literal commands
 * (safety.c), and evaluate the script as a shell call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static docket_policy *p;
	shell_split sp;
	char *script;
	json_t *call = NULL;
	docket_policy_call *c = NULL;
	docket_policy_result *r = NULL;

	if (!p) {
		const char *rules = "prefix_rule(pattern=[\"git\", [\"status\", \"log\"]])\n"
				    "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\")\n";

		if (docket_policy_load_buffer(&p, DOCKET_POLICY_CODEX, "fuzz", rules, strlen(rules)) < 0)
			abort();
	}
	shell_split_init(&sp);
	if (shell_split_script(&sp, (const char *)data, size) == 0) {
		if (sp.status == SHELL_PLAIN) {
			/* every segment has words; word offsets stay inside the text */
			for (size_t g = 0; g < sp.nsegs; g++)
				if (sp.seg_start[g] >= sp.seg_start[g + 1])
					abort();
			for (size_t w = 0; w < sp.nwords; w++)
				if (sp.word_off[w] >= sp.text.len)
					abort();
		}
		if (sp.status == SHELL_COMPLEX && !sp.reason)
			abort();
	}
	shell_split_dispose(&sp);
	if (!(script = malloc(size + 1)))
		return 0;
	memcpy(script, data, size);
	script[size] = '\0';
	{
		const char *argv[3] = { "bash", "-lc", script };
		shell_split scratch;

		shell_split_init(&scratch);
		(void)safety_is_dangerous(argv, 3, &scratch);
		shell_split_dispose(&scratch);
	}
	call = json_pack("{s:s,s:{s:[s,s,s]}}", "tool", "shell", "args", "command", "bash", "-lc", script);
	free(script);
	if (call && docket_policy_call_from_json(&c, call) == 0 && docket_policy_result_new(&r) == 0) {
		json_t *out = NULL;

		if (docket_policy_eval(r, p, c, NULL) == 0 && docket_policy_result_to_json(&out, r) == 0) {
			/* a script that does not split is never allowed by a prefix rule alone */
			if (json_object_get(out, "not_split") &&
			    strcmp(json_string_value(json_object_get(out, "sandbox")), "bypass") == 0)
				abort();
			json_decref(out);
		}
	}
	docket_policy_result_free(r);
	docket_policy_call_free(c);
	json_decref(call);
	return 0;
}
