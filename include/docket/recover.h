/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recover.h: the recovery engine (DESIGN §6).
 *
 * After a crash the operator applies the plan (docket recover --apply
 * [--runtime NAME]: it fences the lineages it settles), then the runtime
 * starts again (runtime.start); or the restarted runtime itself, as an
 * operator, calls runtime.start, then recover.plan and recover.apply on
 * its connection (its own lineage needs no second start). The plan: for every pending invocation, what is known, what docket
 * does about it (appending recovery.action events and, where docket can
 * settle it alone, the outcome) and what the runtime must do next:
 *
 *   state              action                         runtime next
 *   undecided          evaluate (authority mode)      per the new verdict
 *   needs_approval     (reprompt) / close             ask_approval / none
 *   awaiting_approval  reprompt / close               reprompt / none
 *   ready              dispatch (after revalidation)  dispatch
 *   refused            outcome denied/unsupported     none
 *   in_doubt:
 *     replay_safe      redispatch (attempt+1, new token)    redispatch
 *     idempotent       redispatch (same token)              redispatch
 *     reconcile        ask the executor about the token:
 *                      reconcile + its outcome, or park     none / wait
 *     never_auto_retry indeterminate + outcome indeterminate none
 */
#ifndef DOCKET_RECOVER_H
#define DOCKET_RECOVER_H

#include <jansson.h>

#include "docket/common.h"
#include "docket/ledger.h"

/*
 * The executor's answer for a dispatch token (reconcile mode): set *answer
 * to a tool.completed-shaped object ({"status":"ok","exit_code":0,...}, a
 * new reference) or leave it NULL when it cannot tell (the call is parked).
 */
typedef int (*docket_reconcile_cb)(void *ctx, const char *session, const char *invocation,
				   const char *token, json_t **answer);

typedef struct docket_recover_options {
	unsigned int version;
	int close_approvals;            /* 1: close open approvals instead of re-prompting */
	const json_t *reconcile;        /* object: token -> answer (or NULL) */
	docket_reconcile_cb reconcile_cb;
	void *reconcile_ctx;
	/* non-NULL: only the calls of sessions owned by runtimes of this name
	 * (the one that crashed; others' calls in flight are left alone) */
	const char *runtime;
} docket_recover_options;

#define DOCKET_RECOVER_OPTIONS_VERSION 1
#define DOCKET_RECOVER_OPTIONS_INIT { DOCKET_RECOVER_OPTIONS_VERSION, 0, NULL, NULL, NULL, NULL }

/*
 * 1 when `intent` (a tool.intent event as JSON) is a call a live hook let
 * through at PreToolUse (provenance "hook:CLIENT/PreToolUse", no decision
 * of docket's): the client runs such a call at once, so while it is still
 * undecided (no dispatch, no prompt, no outcome) it is in doubt, never a
 * question for approval (issue 27). `docket pending`, `show` and `recover`
 * all show it `in_doubt` through this one test.
 */
DOCKET_EXTERN int docket_recover_let_through(const json_t *intent);

/* The plan as JSON (see docs/protocol.md). Nothing is written. */
DOCKET_EXTERN int docket_recover_plan(docket_ledger *l, const docket_recover_options *opts, json_t **plan) DOCKET_MUST_USE;

/*
 * Compute the plan and apply it: every item's events are appended, each
 * item atomically, all in one durable commit. *report is the plan with
 * "applied" (and "error") per item.
 */
DOCKET_EXTERN int docket_recover_apply(docket_ledger *l, const docket_recover_options *opts, json_t **report) DOCKET_MUST_USE;

#endif
