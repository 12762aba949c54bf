/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy_rules.c: load arbitrary bytes as a Codex .rules file; when it loads,
 * evaluate a few calls and convert it to docket YAML and back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docket/policy.h"
#include "fuzz_policy_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_policy *p = NULL;

	if (docket_policy_load_buffer(&p, DOCKET_POLICY_CODEX, "fuzz", (const char *)data, size) < 0)
		return 0;
	fuzz_policy_exercise(p);
	docket_policy_free(p);
	return 0;
}
