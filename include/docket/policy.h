/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.h: the policy engine (DESIGN §7).
 *
 * One model, three ways in: docket's own YAML, Codex `.rules` files (plus the
 * approval and sandbox settings a rollout's turn_context records), and Claude
 * Code settings.json permissions. A loaded policy is immutable and may be
 * shared between threads; evaluation is pure (no filesystem, no clock) and
 * allocates nothing once a result object has warmed up.
 *
 *   docket_policy *p = NULL;
 *   docket_policy_call *call = NULL;
 *   docket_policy_context *ctx = NULL;
 *   docket_policy_result *res = NULL;
 *
 *   if (docket_policy_load(&p, "codex:~/.codex/rules") < 0 || ...)
 *           ... docket_error_last()->message ...
 *   docket_policy_eval(res, p, call, ctx);
 *   docket_policy_result_verdict(res) == DOCKET_VERDICT_ALLOWED ...
 */
#ifndef DOCKET_POLICY_H
#define DOCKET_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "docket/common.h"

typedef struct docket_policy docket_policy;
typedef struct docket_policy_call docket_policy_call;
typedef struct docket_policy_context docket_policy_context;
typedef struct docket_policy_result docket_policy_result;

/* Ordered from least to most strict: the strictest decision wins. */
typedef enum docket_verdict {
	DOCKET_VERDICT_ALLOWED = 0,
	DOCKET_VERDICT_APPROVAL_REQUIRED = 1,
	DOCKET_VERDICT_DENIED = 2,
	DOCKET_VERDICT_UNSUPPORTED = 3   /* final: no approval makes it runnable */
} docket_verdict;

typedef enum docket_policy_format {
	DOCKET_POLICY_DOCKET = 0,
	DOCKET_POLICY_CODEX = 1,
	DOCKET_POLICY_CLAUDE = 2
} docket_policy_format;

/* "allowed", "approval_required", "denied", "unsupported". */
DOCKET_EXTERN const char *docket_policy_verdict_name(docket_verdict v);
/* "docket", "codex", "claude". */
DOCKET_EXTERN const char *docket_policy_format_str(docket_policy_format f);

/*
 * Load a policy from a source string: "PATH" (docket YAML), "codex:PATH" (a
 * .rules file or a directory of them, read in name order) or "claude:PATH" (a
 * settings.json). Errors: DOCKET_ENOTFOUND (no such file), DOCKET_EINVALID
 * (the message gives file:line:column and what was expected), DOCKET_ENOMEM.
 */
DOCKET_EXTERN int docket_policy_load(docket_policy **out, const char *source) DOCKET_MUST_USE;
/* As docket_policy_load; `scope` (user, project, local, managed, flag; NULL:
 * from the file's place) says which Claude Code settings scope a claude:FILE
 * is. `claude:DIR` (no scope) merges a project's settings as Claude Code does. */
DOCKET_EXTERN int docket_policy_load_scoped(docket_policy **out, const char *source, const char *scope) DOCKET_MUST_USE;

/* Load from memory; `name` is used in messages and rule origins. */
DOCKET_EXTERN int docket_policy_load_buffer(docket_policy **out, docket_policy_format format,
					    const char *name, const char *text, size_t len) DOCKET_MUST_USE;

DOCKET_EXTERN void docket_policy_free(docket_policy *policy);

DOCKET_EXTERN docket_policy_format docket_policy_get_format(const docket_policy *policy);
/* Number of compiled rules (command, tool and network rules). */
DOCKET_EXTERN size_t docket_policy_rule_count(const docket_policy *policy);

/*
 * A tool call: a DESIGN §4 `tool.intent` object (at least "tool" and "args"),
 * or just {"tool":..., "args":...}. The call copies what it needs.
 */
DOCKET_EXTERN int docket_policy_call_from_json(docket_policy_call **out, const json_t *intent) DOCKET_MUST_USE;
/*
 * The same call from its parts: the tool name and its parsed arguments (an
 * object, or NULL for none), as a decoded event holds them (replay), without
 * building the {"tool", "args"} object first. Equivalent to
 * docket_policy_call_from_json of {"tool": tool, "args": args}.
 */
DOCKET_EXTERN int docket_policy_call_from_args(docket_policy_call **out, const char *tool,
					       const json_t *args) DOCKET_MUST_USE;
DOCKET_EXTERN void docket_policy_call_free(docket_policy_call *call);

/*
 * The session context: {"platform", "cwd", "workspace_roots", "env",
 * "grants": [{"command":[argv]} | {"path":"/abs"}], "approval_policy",
 * "sandbox_policy"} where the last two use Codex's own JSON forms
 * ("on-request", {"granular":{...}}, {"type":"workspace-write",...}) or
 * docket's names ("on_request", "workspace_write"). NULL json: empty context.
 */
DOCKET_EXTERN int docket_policy_context_from_json(docket_policy_context **out, const json_t *ctx) DOCKET_MUST_USE;
DOCKET_EXTERN void docket_policy_context_free(docket_policy_context *ctx);

DOCKET_EXTERN int docket_policy_result_new(docket_policy_result **out) DOCKET_MUST_USE;
DOCKET_EXTERN void docket_policy_result_free(docket_policy_result *res);

/*
 * Evaluate `call` under `policy` and `ctx` (ctx may be NULL) into `res`,
 * overwriting what it held. Pure: the same inputs give the same result.
 * Fails only with DOCKET_ENOMEM while a fresh result grows its scratch space.
 */
DOCKET_EXTERN int docket_policy_eval(docket_policy_result *res, const docket_policy *policy,
				     const docket_policy_call *call, const docket_policy_context *ctx) DOCKET_MUST_USE;

DOCKET_EXTERN docket_verdict docket_policy_result_verdict(const docket_policy_result *res);

/*
 * The enforced verdict (docs/policy.md "Two verdicts"): the engine's verdict
 * (docket_policy_eval: what Codex or Claude Code would decide), made
 * stricter where the engine can be dodged: a deny or ask rule holds for
 * its command at any depth of a shell script (wrappers, `sh -c`, eval,
 * substitutions, pipes into a shell ...), unknown command names,
 * one-liners and scripts ask unless a rule names them, shell-spelled
 * installs meet `packages:`, paths meet Read/Edit rules with the call's own
 * cwd, and "runs in the sandbox" allows only where the client sandboxes
 * (context "client", "client_sandbox"). Never less strict than the engine.
 * Hooks, the MCP proxy and `serve --policy` use it. Errors: DOCKET_ENOMEM.
 */
DOCKET_EXTERN int docket_policy_eval_enforced(docket_policy_result *res, const docket_policy *policy,
					      const docket_policy_call *call,
					      const docket_policy_context *ctx) DOCKET_MUST_USE;
/*
 * The engine version docket decides a runtime's calls under: for
 * "claude-code/X.Y.Z" the modelled Claude Code version nearest to X.Y.Z
 * ("2.1.328"); *exact (may be NULL) says whether it is X.Y.Z itself. NULL
 * for a runtime whose versions docket does not model separately.
 */
DOCKET_EXTERN const char *docket_policy_engine_version(const char *runtime, bool *exact);
/* The engine's verdict of a result (the verdict itself unless it was enforced). */
DOCKET_EXTERN docket_verdict docket_policy_result_engine_verdict(const docket_policy_result *res);
/*
 * The i-th allow rule that names a shell, `eval` or an interpreter (bash,
 * python3, node ...): code docket cannot see into, which the enforced
 * verdict then trusts as the author's choice (`policy check` lists them);
 * NULL past the last. The text is owned by the policy.
 */
DOCKET_EXTERN const char *docket_policy_code_allow(const docket_policy *policy, size_t i);

/* Reasons: a stable code ("rule", "known_safe", "dangerous", ...) and a sentence. */
DOCKET_EXTERN size_t docket_policy_result_reason_count(const docket_policy_result *res);
DOCKET_EXTERN const char *docket_policy_result_reason_code(const docket_policy_result *res, size_t i);
DOCKET_EXTERN const char *docket_policy_result_reason_text(const docket_policy_result *res, size_t i);

/* Matched rules, as "origin: text" ("rules/git.rules:12: prefix_rule(...)"). */
DOCKET_EXTERN size_t docket_policy_result_match_count(const docket_policy_result *res);
DOCKET_EXTERN const char *docket_policy_result_match_rule(const docket_policy_result *res, size_t i);

/*
 * The rule that decided the verdict: the first matched rule whose own
 * decision is the verdict, as its text (owned by the policy), with *line
 * (may be NULL) its line in the source, 0 when unknown. NULL when no rule
 * decided (heuristics, a session grant, the approval mode, the platform):
 * the first reason's code then says what did.
 */
DOCKET_EXTERN const char *docket_policy_result_deciding_rule(const docket_policy_result *res, unsigned *line);

/* Shell calls: one entry per plain segment (one for an unsplit script). */
DOCKET_EXTERN size_t docket_policy_result_segment_count(const docket_policy_result *res);

/*
 * The whole result as JSON: {"verdict","reasons":[{code,text}],
 * "matched_rules":[...], "segments":[{"command":[...],"verdict",...}],
 * "sandbox":"bypass"|"sandboxed"|"none", "proposed_amendment":[...]}.
 */
DOCKET_EXTERN int docket_policy_result_to_json(json_t **out, const docket_policy_result *res) DOCKET_MUST_USE;

/* The normalised policy as JSON (what `docket policy explain` prints). */
DOCKET_EXTERN int docket_policy_to_json(json_t **out, const docket_policy *policy) DOCKET_MUST_USE;

/*
 * The policy as docket YAML that evaluates identically (`policy convert`).
 * Appends NUL-terminated text to *out (docket_free it).
 */
DOCKET_EXTERN int docket_policy_to_yaml(char **out, const docket_policy *policy) DOCKET_MUST_USE;

/*
 * The policy as a Codex .rules file (`policy convert --to codex`): command
 * rules (with their match/not_match examples), network rules (one per
 * protocol for a rule of any protocol) and host executables. What .rules
 * cannot say (tool rules, packages, run_code languages, platforms, other
 * heuristics, a port or a wildcard host) is DOCKET_EINVALID naming it;
 * settings (sandbox, approval, network) become a comment.
 */
DOCKET_EXTERN int docket_policy_to_codex_rules(char **out, const docket_policy *policy) DOCKET_MUST_USE;

/*
 * The canonical form of a shell command, the key of a session grant: a
 * `bash -lc` script of one plain command becomes that command's argv, any
 * other shell script ["__codex_shell_script__", flag, script], a PowerShell
 * -Command script ["__codex_powershell_script__", script]; anything else is
 * unchanged. Returns a JSON array of strings.
 */
DOCKET_EXTERN int docket_policy_canonical_command(json_t **out, const json_t *argv) DOCKET_MUST_USE;

/*
 * 1 when `policy` never asks for approval: approval mode `never`, or the
 * Claude Code permission modes bypassPermissions and dontAsk. `settings`
 * (NULL or Codex's {"approval_policy":...}) overrides the policy's approval
 * mode as it does in evaluation. Decided from the parsed model, for every
 * format (invariant 2 of the ledger).
 */
DOCKET_EXTERN int docket_policy_never_asks(const docket_policy *policy, const json_t *settings);

/*
 * Append to `grants` (a JSON array) what an `approved_for_session` answer to
 * `intent` (a DESIGN §4 tool.intent object) grants for the rest of the
 * session: {"command":[argv]} for a shell call, {"path":"..."} for a call on
 * a path, one {"path"} per change of an apply_patch; nothing for other calls.
 * This is the form the context's "grants" take. Errors: DOCKET_ENOMEM.
 */
DOCKET_EXTERN int docket_policy_grant_from_intent(json_t *grants, const json_t *intent) DOCKET_MUST_USE;

/* ---- authoring: tests, shorthands, coverage, checks (docs/policy.md) ---- */

/*
 * A policy test file (YAML or JSON: `docket policy test`) as JSON:
 * {"tests":[{case..., "line":N}], "context":{...}?}. A case has expect
 * (a verdict), one of call {tool,args} / command / tool+path / tool+url,
 * and optionally name, context, engine, rule, reason. Unknown keys and
 * bad values are DOCKET_EINVALID naming name:line:column.
 */
DOCKET_EXTERN int docket_policy_tests_parse(json_t **out, const char *name, const char *text,
					    size_t len) DOCKET_MUST_USE;
/* The words of a command line, split like a POSIX shell without expanding
 * anything (shlex), as a JSON array. DOCKET_EINVALID: bad quoting, empty. */
DOCKET_EXTERN int docket_policy_split_command(json_t **out, const char *line) DOCKET_MUST_USE;
/*
 * A call from a shorthand: `command` (a shell call of its words), or `tool`
 * with `path` ({"path"}; tool defaults to read_file) or `url` ({"url"};
 * tool defaults to network), or `tool` alone (no args). DOCKET_EINVALID
 * when they do not make one call.
 */
DOCKET_EXTERN int docket_policy_call_shorthand(json_t **out, const char *command, const char *tool,
					       const char *path, const char *url) DOCKET_MUST_USE;
/*
 * The i-th rule of a policy (command, tool and network rules, counted as
 * docket_policy_rule_count counts them): its text, and where it comes from
 * (*file, *line; 0 unknown) and its decision (0 allow, 1 ask, 2 deny) when
 * not NULL. NULL past the last.
 */
DOCKET_EXTERN const char *docket_policy_rule(const docket_policy *policy, size_t i, const char **file,
					     unsigned *line, int *decision);
/* The index (as docket_policy_rule counts) of the i-th matched rule of a
 * result (the order of docket_policy_result_match_rule); (size_t)-1 past the last. */
DOCKET_EXTERN size_t docket_policy_result_match_index(const docket_policy_result *res, size_t i);

/*
 * What `docket policy check` finds in a loaded policy, as a JSON array of
 * {"severity": "error"|"warning", "code", "file", "line", "rule", "message"}:
 * errors for tool rules that can never match (unknown tool names, with the
 * nearest known one; a WebFetch specifier that is not domain:HOST),
 * warnings for deny/ask rules the engine does not apply to other spellings
 * of their command (env, nohup, timeout, an absolute path, sh -c, a script)
 * and for allows of shells and interpreters. Errors: DOCKET_ENOMEM.
 */
DOCKET_EXTERN int docket_policy_lint(json_t **out, const docket_policy *policy) DOCKET_MUST_USE;

#endif
