/* SPDX-License-Identifier: Apache-2.0 */
/* authority.h: docket deciding under a session's policy (authority mode). */
#ifndef DOCKET_RUNTIME_AUTHORITY_H
#define DOCKET_RUNTIME_AUTHORITY_H

#include <jansson.h>

#include "docket/ledger.h"
#include "docket/policy.h"

#include "policy/policy_doc.h"

#define AUTHORITY_MAX_LAYERS POLICY_DOC_MAX_LAYERS

/* A policy document as evaluable layers (one, or an all_of composition). */
typedef policy_layer authority_layer;
typedef policy_layers authority_layers;

int authority_load_layers(authority_layers *out, const char *format, const char *policy_json);
void authority_layers_dispose(authority_layers *ls);

typedef struct authority authority;

int authority_new(authority **out, docket_ledger *l);
void authority_free(authority *a);

/*
 * The decision docket gives `intent` (a tool.intent object: tool, args)
 * under the session's current policy, as a decision object
 * (ledger/decision.h: verdict, source "docket", reason codes, rules with the
 * deciding one first, policy_revision); *decision = NULL when
 * the session has no evaluable policy (record mode).
 */
int authority_decide(authority *a, const char *session, const json_t *intent, json_t **decision);

/* The same under a policy that is not (yet) the session's: `ls`, revision
 * `revision` (re-evaluating open approvals when a policy is revised). */
int authority_decide_under(authority *a, const char *session, const authority_layers *ls,
			   uint32_t revision, const json_t *intent, json_t **decision);

/* 1 when the session is under authority, 0 in record mode, <0 on error. */
int authority_is_active(authority *a, const char *session);

/* The stricter of two verdict names (allowed < approval_required < denied < unsupported). */
const char *authority_stricter(const char *a, const char *b);

#endif
