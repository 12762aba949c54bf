/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime.h: the C API for agent runtimes (the same protocol `docket serve`
 * speaks, in process). Every call returns only after its events are
 * durably committed. Errors: DOCKET_ETRANSITION (invalid_transition),
 * DOCKET_ESTALE (stale_epoch: a newer runtime took over), DOCKET_ECONFLICT,
 * DOCKET_ENOTFOUND, DOCKET_EINVALID; the message is in docket_error_last().
 *
 * A complete example is in docs/protocol.md.
 */
#ifndef DOCKET_RUNTIME_H
#define DOCKET_RUNTIME_H

#include <stdint.h>

#include <jansson.h>

#include "docket/common.h"
#include "docket/ledger.h"
#include "docket/recover.h"

typedef struct docket_runtime docket_runtime;

/* Start a runtime: appends runtime.started with this process's uid, which
 * fences the earlier instances of its lineage (this uid, this name) only. */
DOCKET_EXTERN int docket_runtime_start(docket_runtime **out, docket_ledger *ledger, const char *name) DOCKET_MUST_USE;
DOCKET_EXTERN uint64_t docket_runtime_epoch(const docket_runtime *rt);
DOCKET_EXTERN void docket_runtime_free(docket_runtime *rt);

/*
 * An operator's handle that starts no runtime (no epoch of its own): for
 * recover.plan and recover.apply, which write under the epochs of the
 * lineages they settle (docs/write-path.md §2). Mutating methods that need
 * an epoch are refused (stale_epoch) on it.
 */
DOCKET_EXTERN int docket_runtime_operator(docket_runtime **out, docket_ledger *ledger) DOCKET_MUST_USE;

/*
 * Any protocol method (docs/protocol.md) with its params object; *result
 * (may be NULL) receives the result object, a new reference.
 */
DOCKET_EXTERN int docket_runtime_call(docket_runtime *rt, const char *method, const json_t *params,
				      json_t **result) DOCKET_MUST_USE;

DOCKET_EXTERN int docket_session_open(docket_runtime *rt, const char *session, const char *cwd) DOCKET_MUST_USE;

/* Set the session's policy (format "docket", "codex", "claude"); the next revision. */
DOCKET_EXTERN int docket_policy_set(docket_runtime *rt, const char *session, const char *format,
				    const json_t *policy, uint32_t *revision) DOCKET_MUST_USE;

typedef struct docket_intent_result {
	uint64_t seq;
	char verdict[24];      /* "allowed", ..., or "undecided" */
	int dispatched;        /* 1: T0 and T1 were committed together */
	uint32_t attempt;
	char token[48];        /* the dispatch token when dispatched */
} docket_intent_result;

/*
 * Record an intent (T0). With no `verdict` and a session policy, docket
 * decides; `verdict` non-NULL records the runtime's decision (record mode).
 * `dispatch_if_allowed` commits T1 too when the verdict is allowed.
 */
DOCKET_EXTERN int docket_tool_intent(docket_runtime *rt, const char *session, const char *invocation,
				     const char *tool, const json_t *args, const char *recovery,
				     const char *verdict, int dispatch_if_allowed,
				     docket_intent_result *out) DOCKET_MUST_USE;

DOCKET_EXTERN int docket_approval_request(docket_runtime *rt, const char *session, const char *invocation,
					  const char *request) DOCKET_MUST_USE;
DOCKET_EXTERN int docket_approval_settle(docket_runtime *rt, const char *session, const char *invocation,
					 const char *request, const char *result, const char *actor) DOCKET_MUST_USE;

/* T1: the dispatch token is the executor's idempotency key. */
DOCKET_EXTERN int docket_tool_dispatch(docket_runtime *rt, const char *session, const char *invocation,
				       uint32_t *attempt, char token[48]) DOCKET_MUST_USE;

/* T2; `exit_code` < 0 means none. */
DOCKET_EXTERN int docket_tool_complete(docket_runtime *rt, const char *session, const char *invocation,
				       const char *status, int exit_code, const char *output) DOCKET_MUST_USE;

DOCKET_EXTERN int docket_session_close(docket_runtime *rt, const char *session) DOCKET_MUST_USE;

/* The recovery plan (apply = 0) or its application (apply = 1). */
DOCKET_EXTERN int docket_runtime_recover(docket_runtime *rt, const docket_recover_options *opts, int apply,
					 json_t **plan) DOCKET_MUST_USE;

#endif
