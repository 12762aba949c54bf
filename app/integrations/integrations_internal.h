/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrations_internal.h: what the integrations share.
 *
 *   hook.c      the hook-event mapping both clients share (Claude Code and
 *               Codex send the same shape): events -> ledger appends;
 *   claude.c    Claude Code: effective settings, settings.json integration;
 *   codex.c     Codex: config discovery, hooks.json and trust entries;
 *   mcp_proxy.c, codex_relay.c  stdio relays (stdio_relay.c) that record
 *               what passes: MCP tools/call, Codex app-server items.
 */
#ifndef DOCKET_INTEGRATIONS_INTERNAL_H
#define DOCKET_INTEGRATIONS_INTERNAL_H

#include "integrations/integrations.h"
#include "util/buf.h"

/* The hook events docket records, in the order integrate writes them. */
extern const char *const hook_claude_events[];
extern const char *const hook_codex_events[];

/* How a client's hook file is laid out. */
typedef struct hook_layout {
	docket_client client;
	const char *const *events;
	const char *matcher;      /* for tool events; NULL: none (matches every tool) */
	int tool_timeout, other_timeout;
} hook_layout;

/* Merge docket's hooks into (or out of) a Claude-style {"hooks":{EVENT:[groups]}} document. */
int hook_merge(json_t **out, json_t *settings, const docket_integrate_options *opts,
	       const hook_layout *layout) DOCKET_MUST_USE;
/* 1 when a hook handler is one docket wrote for `client`. */
int hook_is_ours(const json_t *handler, docket_client client);

/* docket's verdict on a call (enforce mode). */
typedef struct hook_verdict {
	docket_verdict verdict;
	char reason[512];   /* "docket policy: ... (rule ...)" */
	json_t *decision;   /* for the intent (denied or approval_required); NULL when allowed */
} hook_verdict;

/* The enforced verdict on `intent` (a tool.intent object) under `policy` in
 * `cwd`, for `client` ("claude", "codex", NULL: the MCP proxy, which does
 * not sandbox); HOME, user and platform are this process's. The decision
 * names `revision`, the session's revision that records `policy` (0: none). */
int hook_evaluate(const docket_policy *policy, uint32_t revision, const json_t *intent, const char *cwd,
		  const char *client, hook_verdict *vi) DOCKET_MUST_USE;

/* A new event of `type` in `session` with provenance {file: prov, line: 0}
 * and `invocation` unless NULL; NULL when out of memory. */
json_t *hook_event_new(const char *type, const char *session, const char *prov, const char *invocation);
/* Append the events (stolen; a NULL entry is out of memory) in one transaction. */
int hook_append(docket_ledger *ledger, json_t **evs, size_t n) DOCKET_MUST_USE;
/* `ev` (a policy.revised from hook_event_new, stolen) with revision
 * `revision` of `policy` (borrowed) in `format`, by `actor` for `reason`;
 * NULL when out of memory (or `ev` NULL). */
json_t *hook_revision_fill(json_t *ev, uint32_t revision, const char *format, const json_t *policy,
			   const char *actor, const char *reason);

/* session.opened for `id` (runtime, provenance file `prov`, cwd and parent
 * unless NULL, `labels` stolen) unless the ledger has that session. */
int hook_open_session(docket_ledger *ledger, const char *id, const char *runtime, const char *prov,
		      const char *cwd, const char *parent, json_t *labels) DOCKET_MUST_USE;
/* A JSON string of at most 64 KiB of `s`, cut at a character boundary. */
json_t *hook_bounded(const char *s, size_t len);
/* The text of an MCP CallToolResult's content (text items, newline-joined, bounded). */
int mcp_result_text(docket_buf *out, const json_t *result) DOCKET_MUST_USE;

/* Append `s` single-quoted for a POSIX shell. */
int hook_shell_quote(docket_buf *out, const char *s) DOCKET_MUST_USE;

#endif
