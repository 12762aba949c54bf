/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_doc.h: a recorded policy document (the JSON of a policy.revised) as
 * the policy model sees it: one evaluable layer, or an all_of composition.
 * The state machine uses it to decide "never asks" (invariant 2) from the
 * parsed model; the authority (runtime/authority.c) evaluates the layers.
 */
#ifndef DOCKET_LEDGER_POLICY_DOC_H
#define DOCKET_LEDGER_POLICY_DOC_H

#include <jansson.h>

#include "docket/policy.h"

#define POLICY_DOC_MAX_LAYERS 8

typedef struct policy_layer {
	docket_policy *policy;    /* NULL: not evaluable (Codex settings without rules) */
	json_t *codex_settings;   /* approval_policy / sandbox_policy (Codex only) */
} policy_layer;

typedef struct policy_layers {
	size_t n;                 /* 0: nothing evaluable (opaque, Codex without rules) */
	policy_layer layers[POLICY_DOC_MAX_LAYERS];
	int never_asks;           /* some layer never asks for approval */
} policy_layers;

/*
 * The document a loaded policy is recorded as in a policy.revised (format
 * "docket"): its docket YAML (docket_policy_to_yaml) as a JSON string. The
 * converted form evaluates identically and is self-contained (a Codex rules
 * directory or a Claude settings project becomes one document), so `serve
 * --policy` and the hooks' `--enforce --policy` record the same document
 * for the same policy. Errors: DOCKET_ENOMEM.
 */
int policy_doc_of(json_t **out, const docket_policy *policy) DOCKET_MUST_USE;

/*
 * The layers of a revision that records docket's enforced policy over a
 * client's settings: {"all_of":[{"format":"docket","policy":docket},
 * {"format":format,"policy":client}]} (the strictest verdict wins). A new
 * reference; NULL when out of memory.
 */
json_t *policy_doc_compose(const json_t *docket, const char *format, const json_t *client);

/*
 * docket's layer of a recorded document: the document itself when it is a
 * docket policy, the first layer of an all_of when that layer is docket's;
 * NULL when there is none (borrowed from `doc`).
 */
const json_t *policy_doc_docket_layer(const char *format, const json_t *doc);

/* Load `policy_json` recorded with `format` ("docket", "codex", "claude", "opaque"). */
int policy_doc_load(policy_layers *out, const char *format, const char *policy_json);
void policy_doc_dispose(policy_layers *ls);

/*
 * 1 when the document never asks for approval (for every format and every
 * layer: docket `approval: never`, Claude Code bypassPermissions/dontAsk,
 * Codex approval_policy never), 0 when it may ask or does not parse,
 * DOCKET_ENOMEM when it could not be read for want of memory. `digest` is
 * the SHA-256 of policy_json: the answer is remembered per thread in a
 * small table keyed by (format, digest), so a rebuild (verify, reindex) of
 * a ledger whose sessions record the same document parses it once.
 */
int policy_doc_never_asks(const char *format, const char *policy_json, const uint8_t digest[32]);

#endif
