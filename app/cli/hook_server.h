/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_server.h: what `docket hook` needs for one event, shared by
 * cmd_hook.c (an event on stdin) and hook_server.c (the events
 * docket-hook-fast hands to the lingering folder of an earlier hook).
 */
#ifndef DOCKET_CLI_HOOK_SERVER_H
#define DOCKET_CLI_HOOK_SERVER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "docket/ledger.h"
#include "integrations/integrations.h"
#include "ledger/spool.h"
#include "docket/policy.h"

/* The hook's arguments: what every event it records is answered with. */
typedef struct hook_setup {
	docket_client client;
	int enforce;
	const char *source;       /* --policy, with --enforce */
	uint64_t budget_ms;
	const char *ledger_path;
} hook_setup;

/* The policy of --enforce (*out NULL without it): 0, or an error. */
int hook_policy_load(const hook_setup *s, docket_policy **out) DOCKET_MUST_USE;

/*
 * One event (`len` bytes) recorded with `ledger` and answered in *answer,
 * an error included (the exit code and text cmd_hook.c gives the client).
 * A record that cannot take the writer lock by `deadline_ms`
 * (docket_spool_now_ms) goes to the spool; `blocks` as
 * docket_hook_options.blocks (may be NULL).
 */
void hook_event(const hook_setup *s, docket_ledger *ledger, const docket_policy *policy, const char *in,
		size_t len, uint64_t deadline_ms, volatile sig_atomic_t *blocks, docket_hook_answer *answer);

/*
 * The hook server for the folder this hook is about to fork
 * (docket_spool_fold_detached): it answers docket-hook-fast's requests of
 * the same context as this process (the ledger path, the arguments from
 * "hook" on, `argv` of `argc`, the working directory and the environment:
 * hook_fast.c). NULL when there can be none (the socket's name would be too
 * long, out of memory). Called once per process.
 */
const docket_spool_server *hook_server_prepare(const hook_setup *s, int argc, char **argv);

#endif
