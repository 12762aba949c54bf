/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_internal.h: what the state machine (state.c, the transitions and
 * their invariants) shares with its storage (the projection files state.c
 * lists: records, recent list, pending index, caches, transaction,
 * lineages), and what those files share with each other.
 */
#ifndef DOCKET_LEDGER_STATE_INTERNAL_H
#define DOCKET_LEDGER_STATE_INTERNAL_H

#include "ledger_internal.h"
#include "util/htab.h"

/* overlay.c: changed projection records, written back sorted at finish. */
typedef struct overlay_entry overlay_entry;
typedef struct overlay_op overlay_op;
typedef struct overlay_undo overlay_undo;
typedef struct overlay {
	docket_htab t;           /* slots: overlay_entry, by (table, key) */
	/* writes to the tables nothing reads back inside the transaction (the
	 * pending index, the per-session event index, policy documents), in
	 * arrival order; their keys and values in `arena` */
	overlay_op *ops;
	size_t nops, ops_cap;
	docket_buf arena;
	/* the checkpoint (overlay_mark): each record's value before its first
	 * change since, in `old`; ops and arena cut back to their marks */
	int marked;
	uint32_t gen;
	overlay_undo *undo;
	size_t nundo, undo_cap, ops_mark, arena_mark;
	docket_buf old;
	uint64_t ops_epoch;      /* bumped whenever the log is cut (overlay_cancel) */
} overlay;

void overlay_init(overlay *o);
int overlay_put(overlay *o, MDB_dbi dbi, const void *k, size_t klen, const void *v, size_t vlen);
/* 1 and the record's value (valid until the next put) when it is there. */
int overlay_get(const overlay *o, MDB_dbi dbi, const void *k, size_t klen, MDB_val *v);

/* A deferred write (overlay_defer): put, put unless the key exists, delete
 * (absent is fine), add a duplicate (MDB_DUPSORT tables). */
typedef enum overlay_op_kind { OV_PUT, OV_PUT_NEW, OV_DEL, OV_ADD_DUP, OV_NONE } overlay_op_kind;
int overlay_defer(overlay *o, MDB_dbi dbi, overlay_op_kind kind, const void *k, size_t klen,
		  const void *v, size_t vlen);
/* Where a deferred write is in the log, for overlay_cancel. */
typedef struct overlay_ref {
	uint64_t epoch;
	size_t index;
} overlay_ref;
/* The last deferred write (after overlay_defer returned 0). */
overlay_ref overlay_last(const overlay *o);
/* Take back the OV_PUT at `ref` when it is still in the log, not applied
 * and (under a checkpoint) made since it: 1 taken back, 0 not. A key put
 * and deleted in one log need not reach LMDB when it was absent before. */
int overlay_cancel(overlay *o, overlay_ref ref);
/* Time to write the records back early (bounded memory); never while a
 * checkpoint is set. */
int overlay_full(const overlay *o);
/* Write back what is due for bounded memory: everything when the records
 * are full, else the deferred writes alone when they are (a record is then
 * still written once); nothing while a checkpoint is set. */
int overlay_write_due(overlay *o, MDB_txn *txn);
/* Every record into `txn`, in key order (MDB_APPEND past each table's last
 * key), then every deferred write in key order, then empty. */
int overlay_write(overlay *o, MDB_txn *txn);
void overlay_dispose(overlay *o);

/* sess_cache.c: the decoded session records of the transaction; past
 * SESS_CACHE_MAX sessions (~10 KiB each) it is flushed and emptied. */
#define SESS_CACHE_MAX 1024u
typedef struct sess_slot sess_slot;
typedef struct sess_cache {
	docket_htab t;            /* slots: sess_slot pointers, by session id */
} sess_cache;

/* state_checkpoint()'s copy of the state transaction (overlay.c). */
typedef struct state_mark state_mark;
void state_mark_free(state_mark *m);

struct state_txn {
	docket_ledger *l;
	MDB_txn *txn;
	uint64_t head_seq;
	uint8_t head_hash[LEDGER_HASH_LEN];
	uint64_t epoch;
	uint64_t start_seq;
	uint64_t start_epoch;
	uint64_t clock_us, start_clock_us; /* the last time docket stamped (meta "clock_us") */
	uint64_t payload_bytes;   /* added by this transaction */
	uint64_t frame_bytes;

	/* one-entry caches, written back on switch and at finish */
	char sess_id[STATE_ID_MAX + 1];
	int sess_loaded, sess_dirty;
	sess_state sess;
	docket_buf inv_key;
	int inv_loaded, inv_dirty;
	int inv_in_table;         /* its record is in `invocations`, not the session's recent list */
	inv_state inv;
	sess_cache cache;         /* session records parked by a switch (decoded) */
	overlay ov;               /* records the caches wrote back, not yet put */
	/* the pending-index put of the cached invocation's intent, while it may
	 * still be taken back by its outcome (state_pending_set) */
	overlay_ref pending_put;
	int pending_put_ok;
	uint64_t sentinel_epoch;  /* the log (ops_epoch) the pending sentinel is in */
	int sentinel_ok;
	state_mark *mark;         /* state_checkpoint() */
	/* state_epoch_lineage's last answer: the events of one runtime ask for
	 * the same epoch over and over (invariant 7). Dropped when a runtime
	 * starts (its records change) and by a rollback. */
	uint64_t lin_epoch;       /* 0: nothing kept */
	int lin_error;            /* 0, or DOCKET_ENOTFOUND */
	state_lineage lin;

	/* the events of this commit not yet written as segments (append.c) */
	const seg_writer *writer;
	/* where the stored events are read back (state_set_source): NULL this
	 * ledger; no_source: nowhere (a rebuild from a format-1 log) */
	docket_ledger *src;
	MDB_txn *src_txn;
	int no_source;

	docket_buf scratch;
	/* The event of the current state_apply() packed as it will be stored,
	 * when event_digest() needed it (valid while payload_ok). */
	docket_buf payload;
	int payload_ok;
};

void state_str_copy(char *out, size_t cap, const char *in);
int state_sha256(uint8_t out[LEDGER_HASH_LEN], const void *data, size_t len);
/* Digest of an event as the sender gave it: time and epoch excluded. */
int state_event_digest(uint8_t out[LEDGER_HASH_LEN], state_txn *st, docket_event *ev);
/* 1 when the stored event `seq` has re-send digest `digest`, 0 when not. */
int state_stored_matches(state_txn *st, uint64_t seq, const uint8_t digest[LEDGER_HASH_LEN]);
/* Load a record into the one-entry cache: 0 found, DOCKET_ENOTFOUND not. */
int state_sess_load(state_txn *st, const char *session);
int state_inv_load(state_txn *st, const char *session, const char *invocation);
/* The session record of the transaction as protobuf (state_record.c). */
int sess_state_encode(docket_buf *out, const sess_state *s);

/*
 * sess_cache.c. get: 1 and `session`'s parked record copied into st->sess,
 * 0 when it has none. park: keep st->sess (and whether it changed) in its
 * slot before another session is loaded. flush: put every changed parked
 * record into the overlay. drop: forget every slot (state_rollback).
 */
int sess_cache_get(state_txn *st, const char *session, size_t len);
int sess_cache_park(state_txn *st);
int sess_cache_flush(state_txn *st);
void sess_cache_init(sess_cache *c);
void sess_cache_drop(sess_cache *c);
void sess_cache_dispose(sess_cache *c);

/* Add (present) or remove the cached invocation from the pending index. */
int state_pending_set(state_txn *st, int present);

/*
 * Lineages (invariant 7, docs/write-path.md §2): a runtime's identity is
 * its peer uid and its name. The ledger keeps, in `meta` (projections,
 * rebuilt by reindex): per lineage its current epoch and the seq and time
 * of the runtime.started that raised it; per epoch the lineage it was
 * issued to; per session opened under an epoch, that epoch (its owner).
 */
/* Record that the runtime.started `ev` (epoch assigned) at `seq` raised its lineage's epoch. */
int state_lineage_start(state_txn *st, const docket_event *ev, uint64_t seq);
/* The lineage epoch `epoch` was issued to, with that lineage's current
 * epoch: 0, or DOCKET_ENOTFOUND (an epoch issued before lineages were kept). */
int state_epoch_lineage(state_txn *st, uint64_t epoch, state_lineage *out);
/* `session` was opened under `epoch` (nonzero): its lineage owns it. */
int state_session_owner_set(state_txn *st, const char *session, uint64_t epoch);
/* Index the ledger.incident `ev` at `seq` under the session its spool
 * entry names (meta "incidents:<session>", a projection). */
int state_incident_index(state_txn *st, const docket_event *ev, uint64_t seq);

/*
 * What the projection files share with each other (state_record.c,
 * state_recent.c, state_pending.c, state_cache.c, state_txn.c,
 * state_lineage.c: the split of issue 32).
 */
typedef struct rec_writer {
	uint8_t *p;
} rec_writer;

/* A reader of a stored record: every read is bounds-checked; `bad` sticks. */
typedef struct rec_reader {
	const uint8_t *p, *end;
	int bad;
} rec_reader;

typedef struct recent_entry {
	const uint8_t *id, *rec;
	size_t ilen, rlen;
	size_t off, end;        /* the entry's bytes in the list */
} recent_entry;


/* state_record.c: the compact records' LEB128 varints, and the invocation
 * record decoded without its derived token. */
void state_rec_varint(rec_writer *w, uint64_t v);
uint64_t state_rec_get(rec_reader *r);
int inv_record_decode(inv_state *out, const void *data, size_t len);
/* state_recent.c: take a stored list into `out` (checked); the entry of
 * `id` (1 found, 0 not, <0 damaged); put the cached invocation's record
 * (encoded in st->scratch) into its session's list. */
int state_recent_adopt(sess_state *out, const uint8_t *list, size_t len);
int state_recent_find(const sess_state *s, const char *id, size_t ilen, recent_entry *e);
int state_recent_put(state_txn *st);
/* state_pending.c: index an unfinished invocation moved to the table. */
int state_pending_evicted(state_txn *st, const recent_entry *e);
/* state_cache.c: a session's ordinal (the invocation keys' prefix), the
 * cached invocation's id, and writing its record back. */
size_t state_ordinal_put(uint8_t out[9], uint64_t v);
const char *state_inv_key_id(const state_txn *st, size_t *len);
int state_inv_flush(state_txn *st);
/* state_lineage.c: drop every lineage record (state_clear_projections);
 * read a meta record through the transaction's overlay (0,
 * DOCKET_ENOTFOUND); drop every meta record under a prefix. */
int state_lineage_clear(docket_ledger *l, MDB_txn *txn);
int state_meta_get(state_txn *st, docket_ledger *l, MDB_txn *txn, const void *k, size_t klen, MDB_val *v);
int state_meta_drop_prefix(docket_ledger *l, MDB_txn *txn, const char *prefix);
/* state_incident.c: drop the incident index (state_clear_projections). */
int state_incident_clear(docket_ledger *l, MDB_txn *txn);

#endif
