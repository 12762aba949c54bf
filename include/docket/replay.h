/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.h: re-evaluate recorded tool calls against new policies (DESIGN §8).
 *
 * Replay walks a ledger once, in seq order, and evaluates every recorded
 * `tool.intent` under one or more policies with its session's recorded
 * context (platform, cwd, workspace roots, env) and, unless told otherwise,
 * the session grants recorded before that call. Each call is compared with a
 * baseline (the recorded verdict, the verdict inferred from the history, or
 * another policy) and classified. Memory is bounded by the number of open
 * sessions, not by the number of events; see docs/replay.md.
 *
 *   docket_policy *p = NULL;
 *   docket_replay_report *r = NULL;
 *   docket_replay_report_info info = DOCKET_REPLAY_REPORT_INFO_INIT;
 *
 *   docket_replay_source_load(&p, "git:main:policy.yaml", NULL);
 *   docket_replay_report_new(&r, &info);
 *   docket_replay_run(ledger, NULL, &p, 1, NULL, docket_replay_report_add, r);
 *   docket_replay_report_finish(r, stdout);
 */
#ifndef DOCKET_REPLAY_H
#define DOCKET_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "docket/common.h"
#include "docket/ledger.h"
#include "docket/policy.h"

/* The version of the JSON report (`"schema": "docket.replay/v1"`). */
#define DOCKET_REPLAY_SCHEMA_VERSION 1

/*
 * Classes. Strictness is allowed < approval_required < denied = unsupported:
 * denied and unsupported both refuse the call outright (no approval can make
 * it run), so a change between the two is `unchanged` (the transition is
 * still counted as such).
 */
typedef enum docket_replay_class {
	DOCKET_REPLAY_UNCHANGED = 0,
	DOCKET_REPLAY_TIGHTENED = 1,
	DOCKET_REPLAY_LOOSENED = 2,
	DOCKET_REPLAY_UNDECIDED = 3   /* no baseline: nothing recorded or implied yet */
} docket_replay_class;

/* Bits for --fail-on. */
enum {
	DOCKET_REPLAY_FAIL_LOOSENED = 1u << 0,
	DOCKET_REPLAY_FAIL_TIGHTENED = 1u << 1,
	DOCKET_REPLAY_FAIL_CHANGED = DOCKET_REPLAY_FAIL_LOOSENED | DOCKET_REPLAY_FAIL_TIGHTENED
};

/* Where the baseline verdict came from. */
typedef enum docket_replay_baseline {
	DOCKET_REPLAY_BASE_NONE = 0,      /* undecided */
	DOCKET_REPLAY_BASE_RECORDED = 1,  /* the intent's own decision */
	DOCKET_REPLAY_BASE_INFERRED = 2,  /* from the history (DESIGN §3) */
	DOCKET_REPLAY_BASE_POLICY = 3     /* evaluated under the baseline policy */
} docket_replay_baseline;

/* "unchanged", "tightened", "loosened", "undecided". */
DOCKET_EXTERN const char *docket_replay_class_name(docket_replay_class c);
/* "none", "recorded", "inferred", "policy". */
DOCKET_EXTERN const char *docket_replay_baseline_name(docket_replay_baseline b);

/* ---- policy sources ---- */

/*
 * Load a policy from a source: "PATH", "codex:PATH", "claude:PATH"
 * (docket_policy_load) or one of these at a git revision: "git:REV:PATH",
 * "codex:git:REV:PATH", "claude:git:REV:PATH", read through libgit2 from the
 * repository `repo` (NULL: the one around the working directory; bare
 * repositories work; nothing is checked out). A Codex PATH may name a tree:
 * its *.rules files are read in name order. Errors: DOCKET_EINVALID (malformed
 * policy; the message names the revision), DOCKET_ENOTFOUND (no such file,
 * revision or repository), DOCKET_ENOMEM; DOCKET_ERROR when docket was built
 * without libgit2.
 */
DOCKET_EXTERN int docket_replay_source_load(docket_policy **out, const char *source, const char *repo) DOCKET_MUST_USE;

/* 1 when docket was built with libgit2. */
DOCKET_EXTERN int docket_replay_has_git(void);

/* A policy file's history over a range of commits. */
typedef struct docket_replay_history docket_replay_history;

/*
 * `path` is "PATH", "codex:PATH" or "claude:PATH" inside the repository;
 * `range` is "A..B". Loads the policy at A (the baseline; absent at A: the
 * recorded verdicts are) and at every commit reachable from B and not from A
 * whose first-parent diff changed PATH, oldest first. A commit where the policy
 * is malformed or missing is DOCKET_EINVALID naming it.
 */
DOCKET_EXTERN int docket_replay_history_load(docket_replay_history **out, const char *repo, const char *path,
					     const char *range) DOCKET_MUST_USE;
DOCKET_EXTERN void docket_replay_history_free(docket_replay_history *h);

/* The policy at A, or NULL when PATH does not exist there. */
DOCKET_EXTERN const docket_policy *docket_replay_history_base(const docket_replay_history *h);
DOCKET_EXTERN size_t docket_replay_history_count(const docket_replay_history *h);
/* The i-th changing commit (0: oldest): its policy, full id and summary line. */
DOCKET_EXTERN const docket_policy *docket_replay_history_policy(const docket_replay_history *h, size_t i);
DOCKET_EXTERN const char *docket_replay_history_commit(const docket_replay_history *h, size_t i);
DOCKET_EXTERN const char *docket_replay_history_summary(const docket_replay_history *h, size_t i);
/* The policies of every changing commit, oldest first (for docket_replay_run). */
DOCKET_EXTERN const docket_policy *const *docket_replay_history_policies(const docket_replay_history *h);

/* ---- running ---- */

enum {
	DOCKET_REPLAY_APPROVALS_RECORDED = 0,  /* grants recorded before each call apply */
	DOCKET_REPLAY_APPROVALS_NONE = 1       /* ignore session grants */
};

typedef struct docket_replay_options {
	unsigned int version;
	const char *session;   /* NULL: every session */
	int has_since;         /* only intents at or after since_ms */
	int64_t since_ms;      /* milliseconds since the Unix epoch */
	int has_until;         /* only intents before until_ms */
	int64_t until_ms;
	int approvals;         /* DOCKET_REPLAY_APPROVALS_* */
	/* version 2: threads for a ledger replay: 0 chooses (two for a large
	 * ledger when a second core is free: two cores or more and a load
	 * average that leaves one idle), 1 one, 2 or more two (a reader and an
	 * evaluator). The output is the same whatever the count. */
	int threads;
	/* version 3: replay as if every session's runtime had had this sandbox
	 * ("read_only", "workspace_write", "full_access", "none"; see
	 * docket_replay_sandbox_valid), whatever the policy or the session
	 * says; NULL: each policy's own, or a Codex policy the session's
	 * recorded one */
	const char *assume_sandbox;
} docket_replay_options;

#define DOCKET_REPLAY_OPTIONS_VERSION 3
#define DOCKET_REPLAY_OPTIONS_INIT { DOCKET_REPLAY_OPTIONS_VERSION, NULL, 0, 0, 0, 0, 0, 0, NULL }

/* 1 when `mode` is a sandbox --assume-sandbox takes. */
DOCKET_EXTERN int docket_replay_sandbox_valid(const char *mode);

/* One replayed call. Pointers are valid only during the callback. */
typedef struct docket_replay_call {
	uint64_t seq;               /* the intent's seq */
	const char *session;
	const char *invocation;
	const char *time;           /* the intent's time */
	const char *tool;
	const char *args_json;      /* the intent's args, compact JSON */
	docket_replay_baseline baseline;
	docket_verdict was;         /* meaningless when baseline is NONE */
	docket_verdict now;         /* under the last policy */
	docket_replay_class cls;
	int human_denied;           /* an approval request of this call was denied or aborted */
	const char *rule;           /* the rule that decided `now`, NULL: no rule */
	unsigned rule_line;         /* its line in the policy source, 0 unknown */
	const char *reason;         /* code of the first reason ("heuristics", "session_grant", ...) */
	size_t changed_at;          /* history: index of the first policy whose verdict differs
				       from the baseline; SIZE_MAX when none or no history */
	const char *ledger;         /* a fleet replay: the call's ledger id; NULL for a local ledger */
	const char *host;           /* a fleet replay: the host that shipped it; NULL for a local ledger */
	const char *target;         /* what the call does ("git status"), or NULL: the report
				       derives it from args_json */
	/* the session's assumptions (docs/replay.md, "Assumptions") */
	const char *runtime;        /* the session's recorded runtime ("codex/0.60.1"), or NULL */
	const char *sandbox_recorded; /* the sandbox the runtime had: "none" (Claude Code), a
					 Codex session's recorded mode, NULL: not known */
	const char *sandbox_assumed;  /* the one the last policy was evaluated under */
	const char *sandbox_from;     /* why: "assumed" (--assume-sandbox), "recorded" (a Codex
					 policy takes the session's), "policy" (the policy's own),
					 "default" (a Codex policy and no recorded sandbox) */
	int live_settings;          /* the session recorded its runtime's effective settings
				       (a policy revision, as `integrate` captures them) */
	int imported;               /* the session was imported from a transcript */
	/* the enforced verdict under the last policy (docs/policy.md "Two
	 * verdicts": what docket's hooks would decide; `now` is the engine's) */
	docket_verdict enforced;
	const char *enforced_why;   /* enforced != now: why enforcement is stricter; else NULL */
	const char *deny_rule;      /* enforced denied by a rule: that deny rule; else NULL */
	unsigned deny_line;         /* its line in the policy source, 0 unknown */
	int ran;                    /* deny_rule set: 1 the call ran (was dispatched), 0 it did
				       not, -1 not known (a fleet replay) */
} docket_replay_call;

typedef int (*docket_replay_cb)(void *ctx, const docket_replay_call *call);

/*
 * 1 when the call ran (was dispatched) although a deny rule of the replayed
 * policy names it under docket's enforcement (whatever the engine says):
 * `docket replay --ran-despite-deny`. A fleet replay cannot tell that a call
 * ran (ran == -1): never 1 there.
 */
DOCKET_EXTERN int docket_replay_ran_despite_deny(const docket_replay_call *call);
/* Such a call as a JSON object (docs/replay.md): seq, session, invocation,
 * time, tool, target, engine, enforced, rule, rule_line, reason. */
DOCKET_EXTERN int docket_replay_finding_json(json_t **out, const docket_replay_call *call) DOCKET_MUST_USE;

/*
 * Replay every selected intent of `ledger`, in seq order, under `policies`
 * (n >= 1; the last one gives `now`; with n > 1 `changed_at` names the first
 * that departs from the baseline). `base` NULL: the baseline is the recorded
 * (or inferred) verdict; else it is `base`'s verdict. `cb` is called once per
 * intent; a non-zero return stops the replay (negative: the error returned).
 * Errors: DOCKET_ENOTFOUND (no such session), DOCKET_ESTORAGE,
 * DOCKET_ECORRUPT, DOCKET_ENOMEM.
 */
DOCKET_EXTERN int docket_replay_run(docket_ledger *ledger, const docket_policy *base,
				    const docket_policy *const *policies, size_t n,
				    const docket_replay_options *opts, docket_replay_cb cb, void *ctx) DOCKET_MUST_USE;

/*
 * Replay from another store (the fleet database): the caller hands the
 * events one at a time, in seq order, with what the whole history of each
 * event's call says (what a local ledger keeps in its invocation records).
 * Only session.opened/closed, policy.revised, tool.intent and
 * approval.settled matter; others may be given and are skipped.
 */
typedef struct docket_replay_input {
	uint64_t seq;
	const uint8_t *payload;      /* the stored docket.v1.Event (what the chain hashes) */
	size_t len;
	/* tool.intent and approval.settled: the history of the call */
	uint32_t requests;           /* approval requests made */
	const char *implied;         /* the verdict the history implies ("allowed", ...), NULL: none */
	const char *last_result;     /* the settlement after the last request ("denied", ...), NULL: none */
	/* approval.settled: the call's tool.intent */
	const uint8_t *intent;
	size_t intent_len;
} docket_replay_input;

/* Fill *in with the next event: 0, 1 when there is none left, <0 on error.
 * The pointers must stay valid until the next call. */
typedef int (*docket_replay_next)(void *ctx, docket_replay_input *in);

/* docket_replay_run over the events `next` gives (opts->session is ignored:
 * the source selects). Same callbacks, same classification. */
DOCKET_EXTERN int docket_replay_run_input(docket_replay_next next, void *next_ctx, const docket_policy *base,
			    const docket_policy *const *policies, size_t n,
			    const docket_replay_options *opts, docket_replay_cb cb, void *ctx) DOCKET_MUST_USE;

/* ---- reports ---- */

typedef enum docket_replay_format {
	DOCKET_REPLAY_TABLE = 0,
	DOCKET_REPLAY_JSON = 1,
	DOCKET_REPLAY_JUNIT = 2,
	DOCKET_REPLAY_MARKDOWN = 3
} docket_replay_format;

/* What the report says about the run (all strings are copied). */
typedef struct docket_replay_report_info {
	unsigned int version;
	docket_replay_format format;
	const char *policy;        /* the source replayed against ("git:HEAD:policy.yaml") */
	const char *baseline;      /* NULL: recorded verdicts; else the baseline source */
	const char *approvals;     /* "recorded" or "none" */
	const char *session;       /* filters, NULL when not set (as given) */
	const char *since;
	const char *until;
	unsigned fail_on;          /* DOCKET_REPLAY_FAIL_* bits: junit failures */
	int color;                 /* table: SGR colours */
	const docket_replay_history *history;  /* names commits; may be NULL */
	unsigned width;            /* table: columns of the terminal to fit (long
				      cells end in "…"); 0: no limit */
} docket_replay_report_info;

#define DOCKET_REPLAY_REPORT_INFO_VERSION 1
#define DOCKET_REPLAY_REPORT_INFO_INIT \
	{ DOCKET_REPLAY_REPORT_INFO_VERSION, DOCKET_REPLAY_TABLE, NULL, NULL, "recorded", NULL, NULL, NULL, 0, 0, NULL, 0 }

/*
 * A report: counts every call it is given and keeps the changed and
 * undecided ones in a temporary file (memory does not grow with them), then
 * writes everything in the chosen format. The output depends only on the
 * calls given and `info`: the same input gives byte-identical output.
 */
typedef struct docket_replay_report docket_replay_report;

DOCKET_EXTERN int docket_replay_report_new(docket_replay_report **out, const docket_replay_report_info *info) DOCKET_MUST_USE;
/* A docket_replay_cb: `ctx` is the report. */
DOCKET_EXTERN int docket_replay_report_add(void *ctx, const docket_replay_call *call) DOCKET_MUST_USE;
DOCKET_EXTERN int docket_replay_report_finish(docket_replay_report *r, FILE *out) DOCKET_MUST_USE;
/* Number of calls of a class seen so far; loosened calls a human had denied. */
DOCKET_EXTERN uint64_t docket_replay_report_count(const docket_replay_report *r, docket_replay_class c);
DOCKET_EXTERN uint64_t docket_replay_report_human_denied(const docket_replay_report *r);
/* 1 when a call of a class in `fail_on` was seen. */
DOCKET_EXTERN int docket_replay_report_failed(const docket_replay_report *r, unsigned fail_on);
DOCKET_EXTERN void docket_replay_report_free(docket_replay_report *r);

#endif
