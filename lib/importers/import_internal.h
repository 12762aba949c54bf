/* SPDX-License-Identifier: Apache-2.0 */
/*
 * import_internal.h: what the importers share.
 *
 *   import.c  the driver: reads a file, splits lines, parses each with
 *             jansson, hands it to a format, batches the events, remembers
 *             progress in the ledger (resume, idempotence), strict mode;
 *   emit.c    the common emitter: sessions, calls and the events of DESIGN §4
 *             they turn into. Both formats say only *what happened*
 *             ("call X ended: user denied"); emit.c decides the event sequence,
 *             so the two importers cannot disagree about the state machine;
 *   tools.c   canonical tools and args (shell argv, apply_patch paths, mcp
 *             names) and the small text parsers for outputs (exit codes, times);
 *   codex.c   Codex rollout lines;
 *   claude.c  Claude Code transcript lines;
 *   map.c     a string -> index hash map.
 *
 * The mapping is a pure function of the file's lines in order: importing a
 * prefix and then the rest gives the same events as importing the whole
 * file at once. Every event is attributed to the line that causes it
 * (provenance.line); a resumed import replays the already-imported lines
 * "muted" (state only, no events) and emits from the first new line on.
 */
#ifndef DOCKET_IMPORT_INTERNAL_H
#define DOCKET_IMPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/common.h"
#include "docket/import.h"
#include "util/htab.h"

#define IMP_ID_MAX 256             /* ids of the ledger: 1..256 bytes */
#define IMP_OUTPUT_MAX (1u << 20)  /* tool output kept per call, bytes */
#define IMP_TIME_MAX 40

/* ---- map.c ---- */

/* String keys (copied), size_t values; all zero is an empty map. */
typedef struct imp_map {
	docket_htab t;
} imp_map;

/* 1 and *out when found, 0 when not. */
int imp_map_get(const imp_map *m, const char *key, size_t *out);
/* Insert a new key (the caller checked it is absent). */
int imp_map_put(imp_map *m, const char *key, size_t val) DOCKET_MUST_USE;
void imp_map_dispose(imp_map *m);

/* ---- emit.c ---- */

typedef struct imp_session {
	char *id;
	char *policy;       /* compact JSON of the current policy ("" none) */
	uint32_t revision;  /* last policy revision */
	int never_asks;     /* the current policy never asks for approval */
} imp_session;

enum imp_call_state { IMP_CALL_OPEN = 1, IMP_CALL_DONE = 2 };

typedef struct imp_call {
	char *id;
	char *prompt;       /* what an approval prompt would show (justification), or NULL */
	size_t session;
	int state;
	int asked;          /* an approval request is open (or was answered) */
	char time[IMP_TIME_MAX];  /* time of the intent ("" unknown) */
	size_t line;        /* line of the intent */
} imp_call;

/* How a call ended, as the transcript says it. */
typedef enum imp_outcome_kind {
	IMP_OK,             /* ran, succeeded */
	IMP_ERROR,          /* ran, failed */
	IMP_TIMEOUT,        /* ran, timed out */
	IMP_USER_DENIED,    /* the user refused it at the approval prompt */
	IMP_POLICY_DENIED,  /* a rule or mode refused it without asking */
	IMP_CANCELLED       /* interrupted (ran when .ran is set) */
} imp_outcome_kind;

typedef struct imp_outcome {
	imp_outcome_kind kind;
	int ran;                 /* IMP_CANCELLED: the call had been dispatched */
	int has_exit;
	json_int_t exit_code;
	int64_t duration_ms;     /* <0: unknown */
	const char *output;      /* may be NULL */
	size_t output_len;
	const char *error;       /* short reason, may be NULL */
} imp_outcome;

#define IMP_OUTCOME_INIT(k) { (k), 0, 0, 0, -1, NULL, 0, NULL }

/* A result that came before its call (Claude Code may write them out of order). */
typedef struct imp_early {
	imp_outcome o;           /* output and error point into the two strings below */
	char *output;
	char *error;
	int muted;               /* seen on an already imported line */
	int used;
	char time[IMP_TIME_MAX];
} imp_early;

typedef struct imp_ctx {
	const char *file;        /* provenance.file */
	size_t line;             /* the line being mapped, 1-based */
	char time[IMP_TIME_MAX]; /* its time ("" when it has none or it is not RFC 3339) */
	int muted;               /* already imported: keep state, emit nothing, count nothing */

	imp_session *sessions;
	size_t nsessions, capsessions;
	imp_map session_ix;
	imp_call *calls;
	size_t ncalls, capcalls;
	imp_map call_ix;
	imp_early *early;
	size_t nearly, capearly;
	imp_map early_ix;

	docket_import_event_cb sink;
	void *sink_ctx;
	docket_import_stats *stats;
	void *fmt;               /* the format's own state */
} imp_ctx;

void imp_ctx_init(imp_ctx *c, const char *file, docket_import_stats *stats,
		  docket_import_event_cb sink, void *sink_ctx);
void imp_ctx_dispose(imp_ctx *c);

/* Set the current line's time from a transcript timestamp (ignored unless RFC 3339 UTC). */
void imp_set_time(imp_ctx *c, const char *ts);

/*
 * A malformed line (`unknown` 0) or an unknown type or version (`unknown` 1):
 * counted, and the first one remembered as "file:line: why".
 */
void imp_problem(imp_ctx *c, int unknown, const char *fmt, ...) DOCKET_PRINTF(3, 4);

/* 1 if `s` is a valid ledger id (1..256 bytes, no control characters). */
int imp_id_ok(const char *s);

/* The index of session `id`, if it was opened. */
int imp_session_find(imp_ctx *c, const char *id, size_t *out);

/*
 * Open session `id` (once: later calls just find it). `fields` (stolen, may
 * be NULL) holds the optional session.opened fields: runtime, platform, cwd,
 * parent, labels. Returns 0 and *out, 1 when `id` is not a valid id (a
 * problem was counted), <0 on error.
 */
int imp_session_open(imp_ctx *c, const char *id, json_t *fields, size_t *out) DOCKET_MUST_USE;

/* A policy in effect from now on (stolen); a policy.revised when it differs. */
int imp_policy(imp_ctx *c, size_t session, const char *format, json_t *policy,
	       int never_asks) DOCKET_MUST_USE;

/*
 * tool.intent for call `id`. `args` is stolen. `turn` and `prompt` may be
 * NULL. A bad or repeated id is counted as a problem, not an error.
 */
int imp_intent(imp_ctx *c, size_t session, const char *id, const char *tool, json_t *args,
	       const char *turn, const char *prompt) DOCKET_MUST_USE;

/* approval.requested for call `id`: the transcript shows an approval prompt. */
int imp_approval_asked(imp_ctx *c, const char *id, const char *prompt) DOCKET_MUST_USE;

/* The end of call `id`. An unknown or finished call counts as an orphan. */
int imp_outcome_of(imp_ctx *c, const char *id, const imp_outcome *o) DOCKET_MUST_USE;

/* At the end of the input: results that never met their call are orphans. */
void imp_finish(imp_ctx *c);

/* Every open call of `session` ends cancelled (an interrupted turn). */
int imp_cancel_open(imp_ctx *c, size_t session, const char *why) DOCKET_MUST_USE;

/* ---- tools.c ---- */

/* JSON accessors that tolerate anything: NULL when absent or of another type. */
const char *imp_str(const json_t *obj, const char *key);
const json_t *imp_obj(const json_t *obj, const char *key);

/* "linux", "macos", "windows" guessed from a working directory, or NULL. */
const char *imp_platform_of(const char *cwd);

/* Set obj[key] = string s when s is a non-empty string; 0 or DOCKET_ENOMEM. */
int imp_set_str(json_t *obj, const char *key, const char *s) DOCKET_MUST_USE;
/* Set obj[key] = v (stolen; NULL is DOCKET_ENOMEM). */
int imp_set(json_t *obj, const char *key, json_t *v) DOCKET_MUST_USE;

/* {"command":[argv...]} with the script wrapped as [shell, flag, script]. */
json_t *imp_shell_script(const char *shell, const char *flag, const char *script);

/* apply_patch {"changes":[{path, op, to?}]} from a patch body. */
json_t *imp_patch_args(const char *patch);

/* mcp {"server","tool","arguments"} from "mcp__server__tool"; NULL if not one. */
json_t *imp_mcp_args(const char *name, const json_t *arguments);

/* "Exit code: N", "Exit code N", "Process exited with code N", "exit code: N". */
int imp_exit_code(const char *text, size_t len, json_int_t *out);
/* "Wall time: 1.5 seconds" -> 1500. -1 if absent. */
int64_t imp_wall_ms(const char *text, size_t len);
/* 1 if text starts with prefix. */
int imp_starts(const char *text, size_t len, const char *prefix);
/* 1 if `needle` occurs in the first `len` bytes of `text`. */
int imp_contains(const char *text, size_t len, const char *needle);

/* The major version of "X.Y.Z" (-1 if it does not start with a number). */
long imp_major_version(const char *v);

/* ---- merge.c ---- */

/* The filter for an import into sessions the ledger already holds (see merge.c). */
typedef struct imp_merge imp_merge;
/* Where a kept event goes (stolen): the batch. */
typedef int (*imp_merge_push)(void *ctx, json_t *event);

int imp_merge_new(imp_merge **out, docket_ledger *ledger, const char *file) DOCKET_MUST_USE;
void imp_merge_free(imp_merge *m);
/* Keep `event` (stolen) through `push`, with what must precede it, or drop it. */
int imp_merge_event(imp_merge *m, json_t *event, imp_merge_push push, void *ctx) DOCKET_MUST_USE;

/* ---- formats ---- */

typedef struct imp_format_ops {
	const char *name;
	int (*init)(void **out);
	void (*free)(void *state);
	/* Map one parsed line. <0 only for system errors; problems are counted. */
	int (*line)(imp_ctx *c, json_t *obj);
	/* 1 when `obj` is a line only this format writes (format detection). */
	int (*sniff)(const json_t *obj);
} imp_format_ops;

extern const imp_format_ops imp_codex_ops;

/* The canonical tool and args of one client tool call (docket_import_map_tool). */
int imp_claude_tool(const char **tool, json_t **args, const char *name, const json_t *input,
		    const char *cwd) DOCKET_MUST_USE;
int imp_codex_hook_tool(const char **tool, json_t **args, const char *name, const json_t *input,
			const char *cwd) DOCKET_MUST_USE;
extern const imp_format_ops imp_claude_ops;

/* ---- walk.c ---- */

typedef struct imp_walk imp_walk;

struct imp_walk {
	imp_ctx ctx;
	const imp_format_ops *ops;
	const char *data;
	size_t len;
	size_t resume_line;      /* lines 1..resume_line are mapped muted */
	size_t batch_bytes;      /* flush after this much input */
	/* Called after each batch of input and once at the end (final 1). */
	int (*flush)(imp_walk *w, int final);
	void *owner;             /* the caller's own state */
	size_t done;             /* bytes of whole lines consumed */
	size_t lines;            /* lines consumed */
	int incomplete;          /* stopped before an unterminated line that does not parse */
};

/* Walk every line of w->data (w->ctx initialised, w->ctx.fmt set). */
int imp_walk_run(imp_walk *w) DOCKET_MUST_USE;

#endif
