/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger.h: the durable, hash-chained event log.
 *
 * A ledger is an LMDB environment directory. Events are appended through one
 * path that validates them against the invocation state machine (DESIGN §3),
 * encodes, compresses, chains and writes them with every projection in one
 * durable write transaction. See docs/architecture.md and docs/file-format.md.
 */
#ifndef DOCKET_LEDGER_H
#define DOCKET_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/common.h"

typedef struct docket_ledger docket_ledger;

#define DOCKET_FORMAT_VERSION 3u

enum {
	DOCKET_OPEN_CREATE = 1u << 0,   /* create the ledger if it does not exist */
	DOCKET_OPEN_READONLY = 1u << 1  /* open for reading only */
};

typedef struct docket_open_options {
	unsigned int version;
	unsigned int flags;
	size_t map_size;       /* initial LMDB map size; 0: 64 MiB (or the file's size) */
	size_t map_size_max;   /* growth cap; 0: 1 TiB on 64-bit hosts */
} docket_open_options;

#define DOCKET_OPEN_OPTIONS_VERSION 1
#define DOCKET_OPEN_OPTIONS_INIT { DOCKET_OPEN_OPTIONS_VERSION, 0, 0, 0 }

/*
 * Open (or with DOCKET_OPEN_CREATE create) the ledger in directory `path`.
 * A new directory is created 0700 and its files 0600. Errors: DOCKET_ENOTFOUND
 * (no ledger there), DOCKET_EVERSION (format mismatch), DOCKET_ESTORAGE.
 */
DOCKET_EXTERN int docket_ledger_open(docket_ledger **out, const char *path,
				     const docket_open_options *opts) DOCKET_MUST_USE;
DOCKET_EXTERN void docket_ledger_free(docket_ledger *ledger);

/* What the ledger assigned to one appended event. */
typedef struct docket_append_result {
	uint64_t seq;        /* the event's seq (the existing one for a duplicate) */
	uint64_t epoch;      /* the epoch the event carries (the new one for runtime.started) */
	uint32_t attempt;    /* tool.dispatched: 1-based attempt */
	char token[48];      /* tool.dispatched: the dispatch token, NUL-terminated */
	int duplicate;       /* 1: identical to an existing event, nothing written */
} docket_append_result;

/*
 * Append `n` events given as JSON objects (DESIGN §4) in one durable write
 * transaction: all of them or none. `results` (may be NULL) receives one
 * entry per event. On an invariant violation the error is
 * DOCKET_ETRANSITION/ESTALE/ECONFLICT/ENOTFOUND and names the invariant, the
 * event's index, the session and the invocation; nothing is written.
 */
DOCKET_EXTERN int docket_ledger_append_json(docket_ledger *ledger, json_t *const *events, size_t n,
					    docket_append_result *results) DOCKET_MUST_USE;

/* Reading. The callback returns 0 to go on, >0 to stop early, <0 on error. */
typedef struct docket_read_options {
	unsigned int version;
	const char *session;  /* NULL: every session (and session-less events) */
	uint64_t since;       /* first seq to return (0 or 1: from the start) */
	uint64_t limit;       /* 0: no limit */
	unsigned int flags;   /* DOCKET_READ_* below (version 2) */
} docket_read_options;

/* The events without their "hash": the chain of a segment is not computed,
 * so a read of a format-3 segment's decision part leaves its outcomes
 * compressed (docs/file-format.md "Segments (format 3)"). */
#define DOCKET_READ_NO_HASH 0x1u
/* Pass over tool.completed events (they do not count toward `limit`). */
#define DOCKET_READ_NO_OUTCOMES 0x2u

#define DOCKET_READ_OPTIONS_VERSION 2
#define DOCKET_READ_OPTIONS_INIT { DOCKET_READ_OPTIONS_VERSION, NULL, 0, 0, 0 }

/* Each event as the JSON of DESIGN §4 plus "seq", "time", "epoch", "hash". */
typedef int (*docket_json_cb)(void *ctx, uint64_t seq, json_t *event);

DOCKET_EXTERN int docket_ledger_read_json(docket_ledger *ledger, const docket_read_options *opts,
					  docket_json_cb cb, void *ctx) DOCKET_MUST_USE;

/* Sessions, from the sessions projection, in session-id order. */
typedef struct docket_session_info {
	const char *session;
	const char *runtime;       /* "" if unknown */
	const char *parent;        /* parent session, "" if none */
	const char *first_time;    /* time of the first event */
	const char *last_time;     /* time of the last event */
	const char *policy_format; /* "" when no policy was set */
	uint64_t opened_seq;
	uint64_t closed_seq;       /* 0: still open */
	uint64_t events;
	uint64_t invocations;
	uint64_t pending;          /* invocations without an outcome */
	uint32_t policy_revision;  /* 0: none */
} docket_session_info;

typedef int (*docket_session_cb)(void *ctx, const docket_session_info *info);

DOCKET_EXTERN int docket_ledger_sessions(docket_ledger *ledger, docket_session_cb cb, void *ctx) DOCKET_MUST_USE;

/* One session's facts; DOCKET_ENOTFOUND if there is no such session. */
DOCKET_EXTERN int docket_ledger_session(docket_ledger *ledger, const char *session,
					docket_session_cb cb, void *ctx) DOCKET_MUST_USE;

/*
 * Pending invocations (no outcome yet), from the pending index: the cost is
 * O(pending), not O(log). `state` is one of
 *   "undecided"          intent without a verdict yet
 *   "needs_approval"     verdict approval_required, no request open
 *   "awaiting_approval"  an approval request is open
 *   "ready"              allowed or approved, not dispatched
 *   "refused"            denied/unsupported (or approval refused): owes its outcome
 *   "in_doubt"           dispatched, no outcome
 */
typedef struct docket_pending_info {
	const char *session;
	const char *invocation;
	const char *tool;
	const char *state;
	const char *verdict;       /* "" when undecided */
	const char *recovery;      /* recovery mode */
	const char *open_request;  /* "" when none */
	const char *token;         /* last dispatch token, "" when never dispatched */
	uint32_t attempts;
	uint64_t intent_seq;
	uint64_t last_seq;
} docket_pending_info;

typedef int (*docket_pending_cb)(void *ctx, const docket_pending_info *info);

/* `session` NULL: every session. */
DOCKET_EXTERN int docket_ledger_pending(docket_ledger *ledger, const char *session,
					docket_pending_cb cb, void *ctx) DOCKET_MUST_USE;

/* Ledger facts. */
typedef struct docket_ledger_info {
	uint64_t events;        /* number of events (= head seq) */
	uint64_t sessions;
	uint64_t pending;       /* invocations without an outcome */
	uint64_t epoch;
	uint8_t head[32];       /* chain head h[events] */
	char ledger_id[33];     /* 128-bit random id, hex */
	uint64_t payload_bytes; /* protobuf bytes before compression */
	uint64_t frame_bytes;   /* frame bytes as stored */
	uint64_t file_bytes;    /* data.mdb size on disk */
	uint64_t map_size;
	uint32_t dictionaries;  /* trained zstd dictionaries stored */
	uint32_t format;        /* the file format the ledger is in (DOCKET_FORMAT_VERSION: current) */
} docket_ledger_info;

DOCKET_EXTERN int docket_ledger_info_get(docket_ledger *ledger, docket_ledger_info *out) DOCKET_MUST_USE;

/* verify: recompute the chain, decode every frame, rebuild the projections
 * and compare them with the stored ones. */
typedef struct docket_verify_report {
	uint64_t events_checked;
	uint64_t first_bad_seq;   /* 0: none */
	int ok;                   /* 1: everything checked out */
	int old_indexes;          /* 1: the indexes were written by an older docket and
				     not compared (a write open or reindex rebuilds them) */
	char problem[1024];       /* what was wrong, if !ok */
} docket_verify_report;

/* Returns 0 when the check ran (see report->ok), <0 when it could not run. */
DOCKET_EXTERN int docket_ledger_verify(docket_ledger *ledger, docket_verify_report *report) DOCKET_MUST_USE;

/* Rebuild every projection from the events. */
DOCKET_EXTERN int docket_ledger_reindex(docket_ledger *ledger) DOCKET_MUST_USE;

/* What docket_ledger_migrate / docket_ledger_compact did. */
typedef struct docket_rewrite_report {
	unsigned from_format;     /* the format the ledger was in */
	unsigned to_format;       /* DOCKET_FORMAT_VERSION */
	int rewritten;            /* 0: nothing to do (migrate of a format-3 ledger) */
	uint64_t events;          /* events copied (every one, same seq, time and hash) */
	uint64_t segments;        /* segments written */
	uint64_t bytes_before;    /* data.mdb before */
	uint64_t bytes_after;     /* data.mdb after */
	uint8_t head[32];         /* the chain head, the same before and after */
	unsigned leftovers;       /* PATH.rewrite-* directories of interrupted rewrites, removed */
} docket_rewrite_report;

/*
 * Rewrite the ledger in directory `path` into a new copy (same parent
 * directory), checking every event on the way (chain, stored hashes, every
 * invariant), then swap the copy in atomically (renameat2 RENAME_EXCHANGE)
 * and remove the old files. Every seq, time, hash, checkpoint, import record,
 * dictionary and the ledger id are kept. Writers must be stopped first: one
 * of this docket that still has the old files open is refused its next
 * append ("open it again"). A crash leaves either the old ledger or the new
 * one at `path`, and at worst a PATH.rewrite-* directory, which the next
 * migrate or compact of `path` removes (a partial copy before the swap, the
 * old files after it).
 *
 * migrate: a format-1 or format-2 ledger to this format (a format-3 one:
 * nothing to do).
 * compact: a format-3 ledger into full segments, with no free pages.
 * `map_size_max`: the copy's growth cap (0: the default).
 */
DOCKET_EXTERN int docket_ledger_migrate(const char *path, size_t map_size_max,
					docket_rewrite_report *report) DOCKET_MUST_USE;
DOCKET_EXTERN int docket_ledger_compact(const char *path, size_t map_size_max,
					docket_rewrite_report *report) DOCKET_MUST_USE;

#endif
