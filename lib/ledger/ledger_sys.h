/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_sys.h: the ledger's friend API, for the other modules of lib/ and
 * the programs of app/ (libgit2's include/git2/sys/ is the model).
 *
 * include/docket/ledger.h is what any program may use; this header is the
 * next ring in: what docket's own modules need of the ledger beyond it, and
 * nothing more. Transactions, the segment reader, the stored payloads, the
 * chain and the Merkle tree, the projection records, group commit and the
 * importers' progress records. Everything else of the ledger (frames,
 * segments' writer, the state machine's transaction, redaction, verify's
 * internals) is in ledger_internal.h, which only lib/ledger/ and white-box
 * tests include (tests/layering checks it).
 *
 * Rules for users: a transaction begun here is ended here (commit or abort,
 * never leaked across calls); what a reader returns is borrowed until it
 * moves to another segment; the records (inv_state, sess_state) are copies.
 * None of this is exported from libdocket.so (docs/api.md): programs outside
 * the tree see only include/docket/.
 */
#ifndef DOCKET_LEDGER_SYS_H
#define DOCKET_LEDGER_SYS_H

#include <lmdb.h>
#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/ledger.h"
#include "ledger/event.h"
#include "util/buf.h"

#define LEDGER_HASH_LEN 32

/* ---- store.c: transactions (a write transaction is the ledger's writer lock) ---- */

/* Begin a transaction; maps LMDB errors, adopts a map grown by another process. */
int store_txn_begin(MDB_txn **out, docket_ledger *l, unsigned int flags);
/* Commit (write) or abort; releases the resize lock. */
int store_txn_commit(docket_ledger *l, MDB_txn *txn);
void store_txn_abort(docket_ledger *l, MDB_txn *txn);
/* Map an LMDB return code to a docket error with `what` as context. */
int store_error(int rc, const char *what);
/* After MDB_MAP_FULL: grow the map (doubling, up to the cap). */
int store_grow(docket_ledger *l);
int store_meta_get_u64(MDB_txn *txn, docket_ledger *l, const char *name, uint64_t *out);
int store_meta_get(MDB_txn *txn, docket_ledger *l, const char *name, MDB_val *out);

/*
 * Deferred meta sync (serve's writer thread; docs/write-path.md §4). With
 * it on, a commit of this handle syncs its data pages (fdatasync) but
 * writes its meta page without syncing it (LMDB's MDB_NOMETASYNC): the
 * commit is durable only after the next sync, which is the next commit's
 * fdatasync (it runs before that commit's own meta page is written) or
 * store_sync(). store_commits_written() counts this handle's commits that
 * wrote a meta page; store_commits_durable() how many of them a completed
 * sync covers. Nothing may be acknowledged as written before
 * store_commits_durable() reaches the count its commit had. Turning it off
 * syncs first. A failed sync is final for the handle: every later
 * store_sync() fails and no commit counts as durable again (after a failed
 * fsync the kernel may have dropped the pages and report the next sync as
 * clean); so is a commit that fails with EIO. store_sync() may run on
 * another thread while this handle's writer commits (serve's syncer): a
 * sync covers the commits counted before it started, and a commit's count
 * waits for a sync in progress. Without it on, every commit is durable when
 * it returns and both counters stay 0.
 */
int store_defer_meta_sync(docket_ledger *l, int on) DOCKET_MUST_USE;
int store_sync(docket_ledger *l) DOCKET_MUST_USE;
uint64_t store_commits_written(const docket_ledger *l);
uint64_t store_commits_durable(const docket_ledger *l);

/* ---- frame.c: the chain ---- */

/* SHA-256 of `data`: the ledger's one SHA-256 (libcrypto's SHA256_*, no
 * EVP fetch: frame.c says why), for every digest a hook makes too. */
int ledger_sha256(uint8_t out[LEDGER_HASH_LEN], const void *data, size_t len);

/* h[n] = SHA-256(h[n-1] || be64(seq) || payload) */
int chain_next(uint8_t out[LEDGER_HASH_LEN], const uint8_t prev[LEDGER_HASH_LEN],
	       uint64_t seq, const uint8_t *payload, size_t len);

/* ---- segment.c: the reader every read path goes through ---- */

/*
 * A reader of stored events: it keeps one segment decoded, so reading seqs
 * in order costs one LMDB lookup and one decompression per segment. What it
 * returns stays valid until it moves to another segment; it survives a
 * change of transaction (segments never change once committed).
 */
typedef struct ledger_reader {
	docket_ledger *l;
	MDB_txn *txn;
	uint64_t first;             /* first seq of the loaded segment; 0: none */
	uint32_t count;
	size_t stored;              /* its size as stored */
	uint8_t version;            /* segment version: 2 (one part) or 3 (two) */
	uint8_t codec[2], dict_id;  /* each part's codec (format 2: part 0 only) */
	uint8_t last[LEDGER_HASH_LEN]; /* its stored chain hash (of its last event) */
	uint8_t prev[LEDGER_HASH_LEN]; /* chain hash before its first event */
	int prev_ok, hashed;
	unsigned decoded;           /* bit p: part p is decompressed */
	int scan;                   /* a long scan: drop the mapped pages behind it */
	/* a session read (ledger_session_next) passes over the kinds this
	 * refuses without reading their payloads (NULL: reads every kind) */
	int (*want)(unsigned kind);
	uint32_t since_release;     /* segments loaded since the last ledger_map_release */
	uint32_t cap;
	uint8_t *kinds;             /* per event: its body field number */
	uint8_t *parts;             /* per event: the part holding its payload (0 or 1) */
	uint32_t *lens;
	size_t *offs;               /* per event: offset of its payload in its part */
	uint8_t (*hashes)[LEDGER_HASH_LEN];
	docket_buf seg;             /* the stored segment, copied */
	size_t part_off[2], part_len[2]; /* each part in `seg`, as stored */
	size_t raw[2];              /* each part's payload bytes */
	docket_buf body[2];         /* each part's payloads, decompressed */
} ledger_reader;

/* Parts decompressed (or copied, raw) by every reader of this process, by
 * part (format 2: all in [0]): what a command read, for the tests. */
extern atomic_ulong reader_part_decodes[2];

void reader_init(ledger_reader *r, docket_ledger *l, MDB_txn *txn);
void reader_set_txn(ledger_reader *r, MDB_txn *txn);
void reader_dispose(ledger_reader *r);
/* Load the segment holding `seq`: 0; DOCKET_ENOTFOUND past the end of the
 * log; DOCKET_ECORRUPT when seq is missing or its segment is damaged. */
int reader_seek(ledger_reader *r, uint64_t seq);
/* The body case of `seq` without decompressing anything. */
int reader_kind(ledger_reader *r, uint64_t seq, unsigned *kind);
/* The payload of `seq` (borrowed): decompresses only the part of its
 * segment that holds it (format 3). Errors as reader_seek. */
int reader_payload(ledger_reader *r, uint64_t seq, const uint8_t **p, size_t *len);
/* The chain hash h[seq], computed over its segment from the one before and
 * checked against the segment's stored hash. */
int reader_hash(ledger_reader *r, uint64_t seq, uint8_t out[LEDGER_HASH_LEN]);
/* reader_hash's two ends, for a caller that hashes the segment holding
 * `seq` elsewhere (read.c, on seg_hash's worker): both parts decompressed
 * and h[first - 1] in *prev (the stored hash of the segment before); and
 * the check of the computed h[last] against the segment's stored hash. */
int reader_chain_prev(ledger_reader *r, uint64_t seq, const uint8_t **prev);
int reader_chain_joint(const ledger_reader *r, const uint8_t end[LEDGER_HASH_LEN]);
/* Decompress both parts of the loaded segment (each once); errors as
 * reader_payload's for an event of the part that fails. */
int reader_decode_parts(ledger_reader *r);
/* Event i (0 .. count - 1) of the loaded segment: its payload, in a part
 * already decompressed (borrowed until the next segment is loaded). */
const uint8_t *reader_payload_at(const ledger_reader *r, uint32_t i);
/* Whether the loaded segment's index entry of `seq` names what its payload
 * decodes to: its body case and (format 3) the part the rule puts it in.
 * The index is outside the chain, and readers skip events by it, so verify
 * compares every entry: DOCKET_ECORRUPT when they differ. */
int reader_check_kind(const ledger_reader *r, uint64_t seq, unsigned body_case);

/* ---- state.c, state_record.c: the projection records ---- */

#define STATE_ID_MAX 256
#define STATE_TIME_MAX 64
/* The projection records, as plain structs (encoded as docket.v1 messages). */
typedef struct inv_state {
	uint64_t intent_seq, last_seq, dispatch_seq, outcome_seq, request_seq, settle_seq;
	uint64_t dispatch_epoch;  /* epoch of the last dispatch (a redispatch needs a newer one) */
	uint32_t request_revision; /* policy revision when the last request was made */
	int refused;          /* settled denied/aborted/expired/closed */
	int verdict;          /* Docket__V1__Verdict */
	int phase;            /* Docket__V1__Phase */
	int recovery;         /* Docket__V1__RecoveryMode */
	int last_result;      /* Docket__V1__ApprovalResult */
	int status;           /* Docket__V1__OutcomeStatus */
	uint32_t attempts, requests;
	int redispatch_granted;
	char open_request[STATE_ID_MAX + 1];
	char last_request[STATE_ID_MAX + 1];
	char tool[STATE_ID_MAX + 1];
	char token[48];
} inv_state;

/*
 * The session record holds the records of its SESS_RECENT latest
 * invocations (state_recent.c); an entry is at most
 * SESS_RECENT_ENTRY bytes (its id and its compact record with their
 * lengths), so the list always fits `recent`.
 */
#define SESS_RECENT 8
#define SESS_RECENT_ENTRY (2 + STATE_ID_MAX + 2 + 10 * 16 + 3 * (2 + STATE_ID_MAX))
#define SESS_RECENT_BYTES (SESS_RECENT * SESS_RECENT_ENTRY)

typedef struct sess_state {
	uint64_t opened_seq, closed_seq, events, invocations, pending;
	uint64_t grants;      /* approved_for_session settlements */
	uint64_t policy_seq;  /* seq of the current policy revision */
	uint64_t last_seq;    /* seq of its last event */
	uint32_t policy_revision;
	int policy_format;    /* Docket__V1__PolicyFormat */
	int never_asks;
	uint8_t policy_hash[LEDGER_HASH_LEN];
	char first_time[STATE_TIME_MAX];
	char last_time[STATE_TIME_MAX];
	char runtime[STATE_ID_MAX + 1];
	char parent[STATE_ID_MAX + 1];
	/* last, so that copies stop at recent_len (sess_state_copy) */
	uint32_t recent_n;    /* entries in `recent` */
	size_t recent_len;
	uint8_t recent[SESS_RECENT_BYTES]; /* per entry: id length, id, record length, record (LEB128 lengths) */
} sess_state;

/* 0, or DOCKET_EVERSION naming `docket reindex` when the projections are older. */
int ledger_projections_current(const docket_ledger *l);
/* The record of (session, invocation) as `txn` holds it: in its session's
 * record (recent invocations), else in `invocations`. DOCKET_ENOTFOUND
 * when the session or the invocation has none. */
int state_inv_get(inv_state *out, docket_ledger *l, MDB_txn *txn, const char *session, const char *invocation);
/* The pending-state name of an unfinished invocation (ledger.h). */
const char *inv_pending_state(const inv_state *inv);

/* ---- read.c: the outcomes a read without them passed over ---- */

/*
 * A read with DOCKET_READ_NO_OUTCOMES leaves a format-3 segment's part B
 * compressed; a reader that still needs what an outcome decided takes it
 * from the invocation records (the status and the seq of the one outcome
 * each call has, invariant 5), and reads only the outcome events whose text
 * it shows. One read transaction from begin to end; needs current
 * projections (DOCKET_EVERSION otherwise: read the outcomes instead).
 */
typedef struct ledger_outcomes ledger_outcomes;
int ledger_outcomes_begin(ledger_outcomes **out, docket_ledger *l);
void ledger_outcomes_end(ledger_outcomes *o);
/* The call's outcome status (Docket__V1__OutcomeStatus) and seq (0, 0: no
 * outcome); DOCKET_ENOTFOUND: no such call. */
int ledger_outcome_of(ledger_outcomes *o, const char *session, const char *invocation, int *status,
		      uint64_t *outcome_seq);
/* The stored outcome at `seq`, decoded (borrowed until the next call). */
int ledger_outcome_event(ledger_outcomes *o, uint64_t seq, const docket_event **out);

/* ---- state.c, state_lineage.c: runtime lineages (invariant 7) ---- */

/* A runtime's identity: the peer uid and the runtime name of its
 * runtime.started (docs/write-path.md §2), with its current epoch and the
 * seq and time of the start that raised it. */
#define LINEAGE_UID_NONE UINT32_MAX   /* an older runtime.started, or no uid */
typedef struct state_lineage {
	uint32_t uid;
	char name[STATE_ID_MAX + 1];
	uint64_t epoch;                 /* the lineage's current epoch */
	uint64_t seq;                   /* ... raised by the runtime.started at this seq */
	char time[STATE_TIME_MAX];      /* ... at this time */
} state_lineage;

/* Outside a write transaction (serve's checks): the lineage of `epoch`, and
 * the lineage owning `session` (DOCKET_ENOTFOUND: none, e.g. `record`). */
int ledger_epoch_lineage(docket_ledger *l, uint64_t epoch, state_lineage *out);
int ledger_session_owner(docket_ledger *l, const char *session, state_lineage *out);
/* Do two lineages name the same runtime identity? */
int state_lineage_same(const state_lineage *a, const state_lineage *b);

/* ---- event.c: stored payloads ---- */

/* Unpack; *out freed with docket_event_free. */
int event_unpack(docket_event **out, const uint8_t *data, size_t len);
/* The same through `alloc` (free with docket__v1__event__free_unpacked and it). */
int event_unpack_in(docket_event **out, ProtobufCAllocator *alloc, const uint8_t *data, size_t len);

/* ---- merkle.c: the tree ---- */

/* Where a tree's leaves come from: `leaf` hashes leaf `index`; `node` (may
 * be NULL) gives a stored complete subtree (level, index k: leaves
 * [k << level, (k + 1) << level)) or DOCKET_ENOTFOUND to compute it. */
typedef struct merkle_src {
	int (*leaf)(void *ctx, uint64_t index, uint8_t out[LEDGER_HASH_LEN]);
	int (*node)(void *ctx, unsigned level, uint64_t k, uint8_t out[LEDGER_HASH_LEN]);
	void *ctx;
} merkle_src;

/* RFC 9162 MTH(D[start:end]), PATH (index < size) and PROOF (0 < old <= new). */
int merkle_mth(const merkle_src *s, uint64_t start, uint64_t end, uint8_t out[LEDGER_HASH_LEN]);
/* The stored node of `level` (>= 8) over leaves [k << level, (k + 1) << level),
 * complete in the tree: DOCKET_ECORRUPT when it is missing (tlog-tiles export). */
int merkle_node_get(docket_ledger *l, MDB_txn *txn, unsigned level, uint64_t k, uint8_t out[LEDGER_HASH_LEN]);

/* ---- read.c: events, sessions and invocations ---- */

/* An event as `docket log --json` shows it: seq first, the event, epoch after
 * time, hash last (the fleet stores and prints the same object). */
int ledger_event_to_json(json_t **out, uint64_t seq, const docket_event *ev,
			 const uint8_t hash[LEDGER_HASH_LEN]);
/* Each stored event decoded, as docket_ledger_read_json reads them (which
 * is this plus ledger_event_to_json): `ev` and `hash` are borrowed for the
 * call; `hash` is NULL under DOCKET_READ_NO_HASH. The callback returns 0 to go on, >0 to stop, <0 on error. */
typedef int (*ledger_event_cb)(void *ctx, uint64_t seq, const docket_event *ev,
			       const uint8_t hash[LEDGER_HASH_LEN]);
int ledger_read_events(docket_ledger *l, const docket_read_options *opts, ledger_event_cb cb, void *ctx);
/*
 * ledger_read_events of every session (opts->session NULL) for a reader
 * that can take the hashes late (export): the chain of each segment of at
 * least ledger_verify_parallel_min events is computed on a worker thread
 * (seg_hash.c) while its events are decoded and handed to `cb`, with
 * `hash` == ledger_hash_pending. Once the segment's last event is handed
 * (or the scan stops inside it) its chain is checked at the joint as
 * reader_hash checks it, and its hashes go to `hashes` (h[0] is seq
 * `first`'s), before any event of the next segment; a chain that does not
 * check fails the read with reader_hash's error, ahead of any error of
 * that segment's events. Shorter segments (and all when no thread starts)
 * are hashed on the calling thread and `cb` gets the hash.
 */
typedef int (*ledger_hashes_cb)(void *ctx, uint64_t first, uint64_t last, const uint8_t (*h)[LEDGER_HASH_LEN]);
extern const uint8_t ledger_hash_pending[LEDGER_HASH_LEN];
int ledger_read_events_hashed(docket_ledger *l, const docket_read_options *opts, ledger_event_cb cb,
			      ledger_hashes_cb hashes, void *ctx);
/* One stored event as JSON (seq, hash included). */
int ledger_event_json(docket_ledger *l, uint64_t seq, json_t **out);
/* With `cur` on `session_events`: the first seq of `session` at or after
 * `from` (0: none), found by reading the events (r) of the blocks the index
 * names for it; events of a kind r->want refuses are passed over unread. */
int ledger_session_next(MDB_cursor *cur, ledger_reader *r, const char *session, uint64_t from, uint64_t *seq);
/* The record of one invocation; DOCKET_ENOTFOUND if there is none. */
int ledger_invocation_get(docket_ledger *l, const char *session, const char *invocation, inv_state *out);
/* The record of one session and, if `policy_json` is given, its current
 * policy document (docket_malloc'd; NULL when it has none). */
int ledger_session_get(docket_ledger *l, const char *session, sess_state *out, char **policy_json);

/* ---- append.c: group commit (serve) ---- */

/* A group of events that must be appended together (one request). */
typedef struct ledger_group {
	docket_event **events;
	size_t n;
	docket_append_result *results;  /* n entries */
	int error;                      /* out: 0, or why this group was refused */
	docket_error err;               /* out: the message of that error */
} ledger_group;

/*
 * Group commit: every group is atomic and isolated (a nested transaction),
 * all of them share one durable commit. A refused group does not affect the
 * others. Returns <0 only when the whole transaction failed (storage, cap);
 * then every group carries that error.
 */
int ledger_append_groups(docket_ledger *l, ledger_group *groups, size_t ngroups);

/* ---- import_state.c: importer progress ---- */

/*
 * Importer progress per source file in the `imports` table (primary data;
 * keys and values are the importer's own format). get: DOCKET_ENOTFOUND when
 * there is no record; the value is copied into `out`. put: one durable write.
 */
int ledger_import_state_get(docket_ledger *l, const void *key, size_t klen, docket_buf *out);
int ledger_import_state_put(docket_ledger *l, const void *key, size_t klen, const void *value,
			    size_t len);
/* ---- record.c: `docket record`'s bulk append ---- */

#define LEDGER_RECORD_REPORTED 10

/* One input: its display name ("<stdin>", a path) and its whole text. */
typedef struct ledger_record_input {
	const char *name;
	const char *text;
	size_t len;
} ledger_record_input;

/* A line named file:line (`file` borrowed from the inputs; NULL when the
 * ledger's refusal names no line) and what is wrong with it. */
typedef struct ledger_record_problem {
	const char *file;
	size_t line;          /* 1-based */
	char message[1024];
} ledger_record_problem;

typedef struct ledger_record_report {
	size_t lines;                 /* non-blank lines read */
	size_t added, duplicates;     /* appended; already recorded (identical re-sends) */
	uint64_t first, last;         /* seqs of the added events */
	size_t bad;                   /* lines that are no JSON object, all counted */
	size_t nreported;             /* the first LEDGER_RECORD_REPORTED of them */
	ledger_record_problem reported[LEDGER_RECORD_REPORTED];
	int refused;                  /* no bad line, but `refusal` names the first object
				       * that is no event, or the event the ledger refused */
	ledger_record_problem refusal;
} ledger_record_report;

/* Called with the number of lines before the append of a large input (>=
 * 100,000 lines) and with 0 once it is done. */
typedef void (*ledger_record_progress)(void *ctx, size_t lines);

/* The caller's check of each parsed event before it is appended (`docket
 * record` checks canonical tools' args against the call schema, as serve
 * does: lib/runtime/call_schema.c). Called on the parse threads, so it must
 * be thread-safe; <0 refuses the line with docket_error_last()'s message. */
typedef int (*ledger_record_check)(const docket_event *ev);

/*
 * Every non-blank line of the `n` inputs, in order, as events appended in one
 * transaction: all or nothing. The lines are parsed on two threads while
 * this thread appends. 0: appended (`added`, `duplicates`, `first`..`last`).
 * Refused, nothing written: DOCKET_EINVALID with `bad` > 0 (lines that are no
 * JSON object), else the code of the first object that is no event or of the
 * ledger's refusal (an invariant, a stale epoch ...) with `refused` set.
 * Another error <0 (out of memory, storage): `bad` and `refused` are 0.
 * `check` (NULL: none) may refuse events as an object that is no event.
 */
int ledger_record(docket_ledger *l, const ledger_record_input *in, size_t n, ledger_record_check check,
		  ledger_record_report *rep, ledger_record_progress progress, void *ctx);

/* ---- store.c: what other modules may know of a ledger ---- */

/* The tables other modules read or write directly. */
typedef enum ledger_table {
	LEDGER_TABLE_SESSION_EVENTS,   /* session -> blocks of its events (read) */
	LEDGER_TABLE_CHECKPOINTS       /* signed checkpoints (the audit module's) */
} ledger_table;

MDB_dbi ledger_table_dbi(const docket_ledger *l, ledger_table t);
/* The ledger's id (32 hex digits), its directory, and whether it was
 * opened read-only. */
const char *ledger_id(const docket_ledger *l);
const char *ledger_path(const docket_ledger *l);
int ledger_readonly(const docket_ledger *l);
/* mdb_reader_check: clear the reader slots of dead processes; *dead their
 * number, with those the timed check of any transaction cleared since the
 * last call (so a caller that logs them misses none). */
int ledger_reader_check(docket_ledger *l, int *dead);

#endif
