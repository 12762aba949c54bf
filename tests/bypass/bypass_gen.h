/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bypass_gen.h: a seeded, grammar-based generator of shell scripts that run
 * a denied program (curl or rm) behind every construct of issue 26:
 * assignments, wrappers, `sh -c`, eval, pipes and heredocs into a shell,
 * substitutions, subshells and groups, control flow, background jobs,
 * comments, redirections, quoted and escaped names, program paths, and
 * programs that run it through their options, config or environment
 * (git -c core.pager, GIT_PAGER, sed e, awk system, tar, rsync -e, ssh ...).
 *
 * The property it serves: such a script's enforced verdict is never
 * `allowed` under a policy that denies curl and rm (bypass_policies()).
 * Choices come from a PRNG (bypass_gen_seed) or from bytes (a fuzzer's
 * input: bypass_gen_bytes), so the fuzz target and the suites share the
 * grammar.
 */
#ifndef DOCKET_TESTS_BYPASS_GEN_H
#define DOCKET_TESTS_BYPASS_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct bypass_gen {
	uint64_t state;
	const uint8_t *bytes;     /* choices from bytes when non-NULL */
	size_t nbytes, pos;
	unsigned constructs;      /* bit per construct used (bypass_construct_name) */
} bypass_gen;

void bypass_gen_seed(bypass_gen *g, uint64_t seed);
void bypass_gen_bytes(bypass_gen *g, const uint8_t *data, size_t len);
/* One script into out (cleared first). Errors: DOCKET_ENOMEM. */
int bypass_script(bypass_gen *g, docket_buf *out);

/* Constructs, for coverage counts. */
enum { BYPASS_NCONSTRUCTS = 25 };
const char *bypass_construct_name(unsigned i);

/* The deny policy in the three formats: docket YAML, Codex .rules, Claude settings. */
typedef struct bypass_policy {
	const char *format;       /* "docket", "codex", "claude" */
	const char *file_name;    /* deny.yaml, deny.rules, settings.json */
	const char *text;
} bypass_policy;
const bypass_policy *bypass_policies(size_t *n);

#endif
