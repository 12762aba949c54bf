/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay_internal.h: what the replay module's files share.
 *
 * scan.c reads the ledger (frames, protobuf events, invocation records);
 * sessions.c keeps the per-session context and grants; memo.c caches
 * evaluations; replay.c drives one pass; source.c and git.c load policies;
 * report.c and format.c write reports.
 */
#ifndef DOCKET_REPLAY_INTERNAL_H
#define DOCKET_REPLAY_INTERNAL_H

#include <stdbool.h>

#include "docket/replay.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/jv.h"

/* ---- scan.c ---- */

/* Called per event of interest, inside the scan's read transaction; `cur`
 * is the scan's reader, holding the event's segment (for scan_event_at). */
typedef int (*scan_cb)(void *ctx, MDB_txn *txn, ledger_reader *cur, uint64_t seq, docket_event *ev);

/*
 * Every event of `session` (NULL: all) in seq order whose body is one of the
 * kinds replay needs (session opened/closed, policy revised, tool intent,
 * approval settled); the others are skipped by their segment's index. Read
 * transactions are reopened every SCAN_CHUNK events. Events are unpacked
 * through `alloc` and the callback owns them; with `alloc` NULL each is
 * unpacked in an arena the scan reuses for the next one (and the callback
 * must not keep it).
 */
int scan_events(docket_ledger *l, const char *session, ProtobufCAllocator *alloc, scan_cb cb, void *ctx);

/* A read transaction for scan_event_at and scan_invocation on a thread
 * other than the scan's (parallel.c); end accepts NULL. */
int scan_read_begin(MDB_txn **out, docket_ledger *l);
void scan_read_end(docket_ledger *l, MDB_txn *txn);

/* The event at `seq`, inside `txn`: from the scan's reader `cur` when its
 * segment holds it, else through `r` (it keeps the last segment decoded:
 * the intents approvals name are recent); free with docket_event_free. */
int scan_event_at(docket_event **out, ledger_reader *cur, ledger_reader *r, MDB_txn *txn, uint64_t seq);
/* The same unpacked through `alloc`. */
int scan_event_in(docket_event **out, ledger_reader *cur, ledger_reader *r, MDB_txn *txn, uint64_t seq,
		  ProtobufCAllocator *alloc);

/* The invocation record of (session, invocation), inside `txn`. */
int scan_invocation(inv_state *out, docket_ledger *l, MDB_txn *txn, const char *session,
		    const char *invocation, docket_buf *scratch);

/* ---- parallel.c ---- */

struct eval_out;

/* What the reader thread prepares for the evaluating one; NULL members
 * were not prepared (the evaluating thread does it itself, and so reports
 * the error a single-threaded run reports). */
typedef struct par_prep {
	docket_policy_call *call;     /* tool.intent: its call (taken by the callback) */
	const char *target;           /* ... and its target ("git status") */
	const docket_event *intent;   /* approval.settled approved for the session: its intent */
	const struct eval_out *outs;  /* tool.intent: its evaluations, evaluated ahead (replay.c) */
} par_prep;

/* Events for the evaluating thread, with what was prepared (NULL: nothing). */
typedef int (*par_cb)(void *ctx, MDB_txn *txn, uint64_t seq, const docket_event *ev, par_prep *pre);

/*
 * Called on the reader thread for every event, in seq order, after the
 * reader prepared it: `busy` says the evaluating thread has batches
 * waiting (work given to the reader then shortens the run), and `arena`
 * is the event's batch arena (what is allocated in it lives as long as the
 * event). It cannot fail: what it does not prepare, the evaluating thread does.
 */
typedef void (*par_ahead_cb)(void *ctx, const docket_event *ev, par_prep *pre, int busy, docket_arena *arena);

/*
 * scan_events on a reader thread (frames, decompression, unpacking, each
 * call built from its parsed args, the intent of each session approval,
 * then `ahead` when not NULL; with `all`, whether or not the evaluating
 * thread waits) while `cb` runs on this one, in seq order:
 * the same calls in the same order as scan_events, so the same output. At
 * most PAR_DEPTH batches of PAR_BATCH events are in flight. Errors: those
 * of scan_events and of `cb`, the earliest in seq order first; a positive
 * return of `cb` stops.
 */
int par_scan(docket_ledger *l, const char *session, par_cb cb, par_ahead_cb ahead, int all, void *ctx);

/* ---- replay.c, for parallel.c ---- */

/* A tool.intent's args, parsed with this thread's simdjson parser `tape`
 * (valid until its next parse) or, for the texts the tape view refuses,
 * with jansson in this thread's args arena when it has one (dispose them
 * on this thread before its next parse). */
int replay_args_parse(docket_jv_doc *out, docket_json_tape *tape, const docket_event *ev);

/* ---- sessions.c ---- */

typedef struct rsession {
	char *id;
	json_t *context;              /* platform, cwd, workspace_roots, env, grants */
	json_t *codex;                /* approval/sandbox settings of a recorded Codex policy */
	docket_policy_context *ctx[2];/* built lazily: [1] adds the Codex settings */
	uint32_t ctx_id;              /* changes whenever the context changes */
	const char *assume;           /* --assume-sandbox as the context says it, or NULL */
	int live_settings, imported;  /* a policy revision was recorded live; the session was imported */
	int claude_sandbox;           /* recorded Claude Code settings enable its sandbox */
	struct rsession *next;
} rsession;

typedef struct ctx_intern ctx_intern;

typedef struct rsessions {
	rsession **buckets;
	size_t nbuckets, n;
	uint32_t next_id;
	ctx_intern *intern;           /* context ids by content (sessions.c) */
	struct rev_cache *revs;       /* what policy texts say, by format and text (sessions.c) */
	size_t revs_parsed;           /* policy texts parsed (the others came from `revs`) */
	const char *assume;           /* --assume-sandbox for the sessions opened (context form) */
} rsessions;

void rsessions_dispose(rsessions *t);
rsession *rsessions_get(rsessions *t, const char *id);
/* Open (or reopen) a session with its recorded context. */
int rsessions_open(rsession **out, rsessions *t, const char *id, const docket_event *ev);
void rsessions_close(rsessions *t, const char *id);
/* A grant from an approved_for_session answer to `intent`. */
int rsession_grant(rsessions *t, rsession *s, const docket_event *intent);
/* The Codex settings of a recorded policy revision (NULL when not Codex). */
int rsession_policy(rsessions *t, rsession *s, const docket_event *ev);
/* The evaluation context for a policy of format `codex` (0/1). */
int rsession_context(const docket_policy_context **out, rsession *s, int codex);
/* The sandbox the session's runtime had: a Codex session's recorded mode
 * ("read_only", ...); for Claude Code "none", or "workspace_write" when its
 * recorded settings enable its sandbox; NULL when not known. */
const char *rsession_recorded_sandbox(const rsession *s);
/* The sandbox a policy of `format` with its own `sandbox` (enum pol_sandbox)
 * evaluates the session's calls under, and why (docket_replay_call). */
const char *rsession_assumed_sandbox(const rsession *s, int format, int sandbox, const char **from);
/* A sandbox mode's name: "read_only", "workspace_write", "full_access",
 * "external"; NULL for none. */
const char *replay_sandbox_name(int sandbox);

/* ---- intent_decode.c ---- */

/* A tool.intent's payload decoded without protobuf-c's unpack, through
 * `a`: 0 and *out, the message protobuf-c gives for these bytes; 1 when the
 * bytes are not the common case (unpack them with protobuf-c); <0 out of
 * memory. */
int intent_decode(docket_event **out, ProtobufCAllocator *a, const uint8_t *p, size_t len);

/* ---- memo.c ---- */

/* One evaluation, as replay needs it (a value: it holds no pointer into the call). */
typedef struct eval_out {
	docket_verdict verdict;
	const char *rule;    /* owned by the policy */
	unsigned rule_line;
	char reason[32];
	/* the enforced verdict (docs/policy.md "Two verdicts") */
	docket_verdict enforced;
	const char *deny_rule;  /* enforced denied: the deny rule that names the call (owned by the policy) */
	unsigned deny_line;
	char ewhy[160];         /* enforced != verdict: the enforcement's first reason */
} eval_out;

typedef struct memo memo;

/* A call as the memo keys it: its tool and stored args text, hashed once
 * per intent however many policies look it up. */
typedef struct memo_call {
	const char *tool, *args;
	size_t tl, al;
	uint64_t hash;
} memo_call;

int memo_new(memo **out);
void memo_free(memo *m);
void memo_call_init(memo_call *k, const char *tool, const char *args);
/* The 64-bit hash the memo uses, of any bytes. */
uint64_t memo_hash(const char *s, size_t n);
/* The cached result for (call, context, policy), or NULL. */
const eval_out *memo_get(memo *m, const memo_call *k, uint32_t ctx_id, uint32_t policy);
/* Remember `v` for the key (replacing whatever shared its slot). */
int memo_put(memo *m, const memo_call *k, uint32_t ctx_id, uint32_t policy, const eval_out *v);

/* ---- time ---- */

/* An RFC 3339 UTC time as stored ("...Z") to ms since the epoch; -1 if malformed. */
int replay_time_ms(const char *s, int64_t *out);

/* ---- git.c ---- */

/* The bytes of `path` at `rev` (a tree: its *.rules files in name order). */
int replay_git_read(docket_buf *out, const char *repo, const char *rev, const char *path);

/* ---- format.c: one changed call as the report keeps it ---- */

/* Strictness rank: allowed 0, approval_required 1, denied and unsupported 2. */
int replay_rank(docket_verdict v);
docket_replay_class replay_classify(docket_verdict was, docket_verdict now);

/* "git status", "src/a.c, src/b.c", "https://x" ...: what the call does. */
int replay_target(docket_buf *out, const char *args_json);
/* The same from the parsed args, through either JSON view. */
int replay_target_jv(docket_buf *out, const docket_jv_ops *o, docket_jv args);

#endif
