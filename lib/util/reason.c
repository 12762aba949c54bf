// SPDX-License-Identifier: Apache-2.0
/*
 * util/reason.c: the one table of reason codes and their sentences
 * (reason.h).
 */
#include "reason.h"

#include <stdlib.h>
#include <string.h>

typedef struct reason_sentence {
	const char *code;
	const char *text;
} reason_sentence;

/* Every reason code the evaluator and its enforcement record, sorted by
 * code (bsearch; test_decision finds every code through it). */
static const reason_sentence sentences[] = {
	{ "accept_edits", "permission mode acceptEdits allows edits in the project" },
	{ "bad_call", "the call is malformed" },
	{ "bad_path", "a path docket cannot resolve" },
	{ "bypass_permissions", "permission mode bypassPermissions" },
	{ "cd_climbs", "a path through a directory and '..'" },
	{ "cd_git", "cd before a git command" },
	{ "cd_outside", "cd to a directory outside the working directories" },
	{ "cd_write", "cd before a command that changes files" },
	{ "code", "runs code docket cannot see into" },
	{ "cwd_unknown", "searches a directory docket cannot know" },
	{ "dangerous", "dangerous command" },
	{ "denied_path", "names a path a rule covers" },
	{ "dont_ask", "permission mode dontAsk denies what is not allowed" },
	{ "engine_version", "decided as the nearest version of the client docket models" },
	{ "escalation_requested", "asks to run outside the sandbox" },
	{ "heuristics", "blocked by the policy's heuristics" },
	{ "host", "a host docket cannot compare with the policy's rules" },
	{ "install", "installs packages the policy does not allow" },
	{ "invalid_package_spec", "package spec rejected" },
	{ "known_safe", "known safe (read-only) command" },
	{ "language_not_allowed", "language not allowed" },
	{ "network_disabled", "network access is disabled" },
	{ "no_sandbox", "the engine would run this in a sandbox; this client does not sandbox it" },
	{ "not_analysed", "docket cannot analyse this script" },
	{ "not_in_allowlist", "not in the allowlist" },
	{ "not_known_safe", "not known to be safe and the approval mode is untrusted" },
	{ "not_split", "script not split into segments" },
	{ "outside_workspace", "outside the workspace" },
	{ "outside_writable_roots", "writes outside the writable roots" },
	{ "plan_mode", "plan mode: only read-only actions run without asking" },
	{ "preapproved_host", "a documentation host Claude Code's WebFetch reads without a rule" },
	{ "protected_path", "writes a protected path" },
	{ "read_only", "read-only action" },
	{ "redirection", "a redirection docket cannot resolve" },
	{ "sandboxed", "runs inside the sandbox" },
	{ "search", "searches a tree that holds files a rule denies" },
	{ "sensitive_path", "writes under .git/ or .claude/ always ask" },
	{ "session_grant", "approved for this session" },
	{ "unknown_command", "a command name docket cannot know" },
	{ "unrestricted", "no rule matched and the sandbox is unrestricted" },
	{ "unsupported", "the platform cannot enforce what this call relies on" },
};

static int sentence_cmp(const void *key, const void *entry)
{
	return strcmp(key, ((const reason_sentence *)entry)->code);
}

const char *docket_reason_sentence(const char *code)
{
	const reason_sentence *s = code ? bsearch(code, sentences, sizeof(sentences) / sizeof(sentences[0]),
						   sizeof(sentences[0]), sentence_cmp) : NULL;

	return s ? s->text : NULL;
}

const char *docket_reason_code_at(size_t i)
{
	return i < sizeof(sentences) / sizeof(sentences[0]) ? sentences[i].code : NULL;
}
