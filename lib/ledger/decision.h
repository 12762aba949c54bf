// SPDX-License-Identifier: Apache-2.0
/*
 * decision.h: the recorded decision (DESIGN §4), built once and rendered
 * for display (decision.c).
 *
 * A decision docket makes is stored as {verdict, source "docket", reasons,
 * rules, policy_revision}: each reason a stable *code* ("rule",
 * "known_safe", "approval_mode", ...), the rule that decided first in
 * `rules`, and the policy revision it was made under. Serve's authority,
 * the hooks and the MCP proxy all build it here, so the same policy and
 * call give the same stored decision whoever decided. Text is made only
 * when a person reads it (show, the report, audit, the exports' reason
 * columns), from the code, the rule and the revision; a reason that is not
 * a known code (ledgers written before codes, a runtime's own words) is
 * shown as it is.
 */
#ifndef DOCKET_LEDGER_DECISION_H
#define DOCKET_LEDGER_DECISION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/common.h"
#include "docket/policy.h"
#include "util/buf.h"

/*
 * The decision docket records for `res`: its verdict, source "docket", the
 * reason codes in the evaluator's order, the rules it matched with the
 * deciding rule first, and `revision` (0: the policy is not one of the
 * session's recorded revisions, and the key is left out, as the event
 * model drops a zero revision). Errors: DOCKET_ENOMEM.
 */
int decision_build(json_t **out, const docket_policy_result *res, uint32_t revision) DOCKET_MUST_USE;

/*
 * Append to `out` the text a person reads for reason `reason` of a
 * decision with `verdict` (a verdict name, may be NULL), deciding rule
 * `rule` (may be NULL) and policy revision `revision` (0: none). A known
 * code renders as its sentence; anything else is appended as it is.
 */
int decision_reason_text(docket_buf *out, const char *reason, const char *verdict, const char *rule,
			 uint32_t revision) DOCKET_MUST_USE;

/* 1 when `reason` is a reason code decision_reason_text has a sentence for. */
int decision_reason_is_code(const char *reason);
/* The i-th of those codes, NULL past the last (docs/protocol.md lists them). */
const char *decision_reason_code(size_t i);

/*
 * Append the text of reason `i` of `decision` (a decision object, or a call
 * record with the same keys: verdict, reasons, rules, policy_revision);
 * nothing when it has no such reason or it is not a string.
 */
int decision_reason_at(docket_buf *out, const json_t *decision, size_t i) DOCKET_MUST_USE;

/*
 * Append the texts of every reason of `decision` (a decision object, or a
 * call record with the same keys: verdict, reasons, rules,
 * policy_revision), each after `sep` but the first.
 */
int decision_reasons_text(docket_buf *out, const json_t *decision, const char *sep) DOCKET_MUST_USE;

#endif
