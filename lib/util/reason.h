// SPDX-License-Identifier: Apache-2.0
/*
 * util/reason.h: the one table of reason codes and their sentences.
 *
 * A decision's reasons are stable codes ("known_safe", "network_disabled",
 * ...; docs/protocol.md lists them); the evaluator (policy/) and the
 * recorded decision's rendering (ledger/decision.c) both take a code's
 * sentence from here.
 */
#ifndef DOCKET_UTIL_REASON_H
#define DOCKET_UTIL_REASON_H

#include <stddef.h>

/* The sentence of reason code `code`, or NULL when it is not a code. */
const char *docket_reason_sentence(const char *code);

/* The i-th code of the table (sorted by code), NULL past the end. */
const char *docket_reason_code_at(size_t i);

#endif
