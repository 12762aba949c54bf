/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eval.h: what the evaluator's files share (private to policy/): one
 * evaluation's state, the result builders and the common end of every
 * tool evaluator. eval.c has the entry, the common end, paths, network and
 * the other tools; eval_shell.c the shell family (prefix rules, Bash rules,
 * heuristics, Codex amendments and reasons); claude_eval.c Claude Code's own
 * tables.
 */
#ifndef DOCKET_POLICY_EVAL_H
#define DOCKET_POLICY_EVAL_H

#include "policy.h"

typedef struct ev {
	docket_policy_result *res;
	const docket_policy *p;
	const docket_policy_call *call;
	const docket_policy_context *ctx;
	int approval;
	bool gsandbox, grules;
	int sandbox, fs_kind, mode, platform;
	const char *cwd, *home;
	bool used_complex;
	bool unsplit;
	bool network_on;
	uint32_t claude_version;  /* 0: unknown, the current rules */
	uint32_t codex_version;   /* 0: unknown, the newest measured engine */
	bool legacy;              /* Claude Code <= POL_CLAUDE_LEGACY_MAX */
} ev;

static inline int ev_max(int a, int b)
{
	return a > b ? a : b;
}

/* ---- result building (eval.c) ---- */
int ev_grow(void **v, size_t *cap, size_t need, size_t elem);
int ev_push_words(docket_policy_result *r, const char *const *w, size_t n, size_t *off);
int ev_add_segment(docket_policy_result *r, const char *const *w, size_t n);
void ev_add_match(docket_policy_result *r, int rule, int decision, size_t seg, size_t plen, bool resolved);
int ev_add_reason(docket_policy_result *r, const char *code, const char *fmt, ...) DOCKET_PRINTF(3, 4);
/* ev_add_reason(r, why, "%s", ev_why_text(why)), without formatting. */
int ev_add_why(docket_policy_result *r, const char *why) DOCKET_MUST_USE;

/* ---- rules, modes and the common end (eval.c) ---- */
bool ev_tool_kind_applies(const pol_tool_rule *t, int kind, const char *name);
int ev_mode_default(ev *e, bool read_only, const char **why);
bool ev_any_policy_match(const docket_policy_result *r, int decision);
int ev_tool_rule_reason(ev *e, int decision);
const char *ev_why_text(const char *why);
int ev_approval_gate(ev *e, int *dec);
int ev_conclude(ev *e, int dec, const char *why);
int ev_unsupported_gate(ev *e, int *dec, bool escalated);
int ev_ask_or_deny(const ev *e);
/* Why a call no rule decided is allowed because of where it runs: "sandboxed"
 * under a sandbox that confines it (read-only, workspace-write, or one the
 * operator declares external), "unrestricted" under full access, where no
 * sandbox exists for the enforced verdict to require of the client. */
const char *ev_allowed_why(const ev *e);

/* ---- paths (eval.c) ---- */
const char *ev_project_root(const ev *e);
bool ev_path_rule_matches(ev *e, const pol_tool_rule *t, const char *path);
/* The absolute glob of a path rule (its anchor joined) into b; false: no base (or no memory). */
bool ev_path_rule_glob(ev *e, const pol_tool_rule *t, docket_buf *b);
bool ev_in_workspace(const ev *e, const char *path);

/* ---- the shell family (eval_shell.c) ---- */
int ev_eval_shell(ev *e);
/* Bash tool rules on one command's text (every rule; a piece-matching
 * allow counts): the strictest decision, -1 if none matched. */
int ev_bash_rules(ev *e, const char *text, size_t len, bool *allow_rule);
/* Is exactly this argv granted for the session? */
bool ev_command_granted(const ev *e, const char *const *argv, size_t argc);

/* ---- Claude Code's reading of a Bash command (claude_bash.c) ---- */
/* The length of a NAME=VALUE word Claude Code looks through (safe name, plain value), else 0. */
size_t claude_safe_assignment(const char *s);
/* The script with the redirections and environment prefixes Claude Code drops, dropped. */
int claude_bash_normalize(docket_buf *out, const char *script);
/* A command Claude Code runs with no rule (read-only). */
bool claude_read_only(const char *const *argv, size_t argc);
/* A path with a directory segment followed by `..` (Claude Code asks for it). */
bool claude_path_climbs(const char *p);
/* POL_ASK (and *why) for a `cd` Claude Code asks for in the evaluated segments; -1: none. */
int claude_cd_check(ev *e, const char **why);

/* ---- the evaluator's setup (eval.c): e from policy, call and context ---- */
void ev_setup(ev *e, docket_policy_result *res, const docket_policy *p, const docket_policy_call *call,
	      const docket_policy_context *ctx);

#endif
