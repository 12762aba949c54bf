/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_hook.c: hook events are outside input (whatever Claude Code or Codex
 * writes on the hook's stdin). Each input is one event, handled against a
 * scratch ledger, alternately as Claude Code and as Codex and with and
 * without an enforced policy. Nothing may crash or leak; a refusal is an
 * error code, and the ledger must stay valid.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrations/integrations.h"
#include "docket/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static docket_ledger *ledger;
static docket_policy *policy;
static char dir[256];
static unsigned round_no;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	docket_policy_free(policy);
	docket_ledger_free(ledger);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void seed(void)
{
	static const char yaml[] = "version: 1\ncommands:\n  - pattern: [rm]\n    decision: deny\n"
				   "  - pattern: [git, push]\n    decision: ask\n";
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/docket-fuzz-hook-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	/* no settings file of this machine may leak into the inputs' meaning */
	setenv("HOME", dir, 1);
	setenv("DOCKET_CLAUDE_MANAGED_SETTINGS", "/nonexistent", 1);
	opts.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&ledger, dir, &opts) != 0 ||
	    docket_policy_load_buffer(&policy, DOCKET_POLICY_DOCKET, "fuzz", yaml, sizeof(yaml) - 1) != 0)
		abort();
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_hook_options ho = DOCKET_HOOK_OPTIONS_INIT;
	docket_hook_answer answer;
	int rc;

	if (!ledger)
		seed();
	round_no++;
	ho.client = (round_no & 1) ? DOCKET_CLIENT_CLAUDE : DOCKET_CLIENT_CODEX;
	ho.policy = (round_no & 2) ? policy : NULL;
	rc = docket_hook_handle(ledger, &ho, (const char *)data, size, &answer);
	if (rc > 0 || (rc == 0 && answer.exit_code != 0 && answer.exit_code != 2))
		abort();
	(void)docket_hook_blocks((const char *)data, size);
	docket_hook_answer_dispose(&answer);
	return 0;
}
