/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_internal.h: what the ledger's own files share. Private to
 * lib/ledger/ (and white-box tests): every other module uses the friend
 * header ledger_sys.h, which this one includes (tests/layering checks it).
 *
 * store.c owns the LMDB environment (open, DBIs, map growth, transactions);
 * segment.c owns the segments of formats 2 and 3 (writer and reader) and `docket compact`
 * / `docket migrate` (rewrite.c);
 * frame.c owns compression, dictionaries, the hash chain and format 1's
 * frames (read only: `docket migrate` reads them);
 * state.c owns the invocation state machine; the projections it keeps, and
 * which state_*.c file keeps each, are listed there (the one list);
 * event_pack.c owns an event's stored bytes (packing, unpacking);
 * append.c, read.c and verify.c are the three ways in and out.
 */
#ifndef DOCKET_LEDGER_INTERNAL_H
#define DOCKET_LEDGER_INTERNAL_H

#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <zstd.h>

#include "docket/ledger.h"
#include "event.h"
#include "ledger_sys.h"
#include "util/buf.h"


/* Named databases. `events` and `dicts` are primary data; the rest are
 * projections that reindex rebuilds from `events`. */
typedef struct ledger_dbis {
	MDB_dbi events;          /* be64 first seq -> segment (formats 2 and 3) */
	MDB_dbi dicts;           /* be32 id -> zstd dictionary */
	MDB_dbi meta;            /* name -> value (the records every append rewrites: in `main`) */
	MDB_dbi main;            /* LMDB's unnamed table: the tables' roots, and the hot meta records */
	MDB_dbi sessions;        /* session -> SessionState */
	MDB_dbi session_events;  /* session -> be32 block (seq >> SESSION_BLOCK_SHIFT; DUPSORT|DUPFIXED) */
	MDB_dbi invocations;     /* session ordinal, invocation -> record (state_record.c) */
	MDB_dbi pending;         /* session \0 invocation -> "" (only unfinished) */
	MDB_dbi policies;        /* SHA-256(policy JSON) -> policy JSON */
	MDB_dbi checkpoints;     /* primary: signed checkpoints (audit/checkpoint.c) */
	MDB_dbi imports;         /* primary: importer progress per source file */
	MDB_dbi tree;            /* Merkle tree nodes of level >= 8 (merkle.c) */
} ledger_dbis;

/* A compression context and what it is configured for (frame parameters
 * set once, then kept by ZSTD_compress2 across frames): mode 0 not
 * configured, a compression level (plain zstd), or -1 with the dictionary
 * `cdict`. Reset before that CDict is freed. The ledger's codec owns one;
 * each worker of a segment stage (seg_stage.c) its own. */
typedef struct codec_cctx {
	ZSTD_CCtx *cctx;
	int mode;
	const ZSTD_CDict *cdict;
} codec_cctx;

/* Frame codec state: compression contexts and the dictionary cache. */
typedef struct ledger_codec {
	codec_cctx cc;
	ZSTD_DCtx *dctx;
	uint32_t cdict_id;       /* id of `cdict`, 0 if none */
	uint32_t oneshots;       /* small parts compressed without a CDict (frame.c) */
	ZSTD_CDict *cdict;
	uint32_t ddict_count;
	uint32_t ddict_ids[8];
	ZSTD_DDict *ddicts[8];
	pthread_mutex_t lock;
} ledger_codec;

/*
 * The layout of the projection records (InvocationState, SessionState …).
 * It rises when a projection gains a field the transitions rely on, so a
 * ledger whose projections were written by an older docket has them rebuilt
 * (reindex) before anything is appended: version 2 added the authority
 * fields of issue 10 (refused, settle_seq, request_revision, dispatch_epoch,
 * policy_seq); version 3 (format 2) dropped the four re-send digests of
 * InvocationState (re-sends are checked against the stored events);
 * version 4 (issue 12) stores the invocation record in a compact layout of
 * its own (state_record.c) under a (session ordinal, invocation) key, and
 * `session_events` names the blocks of SESSION_BLOCK seqs holding a
 * session's events instead of every seq; version 5 (issue 13) added the
 * Merkle tree (merkle.c: DBI `tree`, meta "merkle"); version 6 (issue 12)
 * keeps a session's SESS_RECENT latest invocation records inside its
 * session record (SessionState.recent), moving them to `invocations` eight
 * at a time, and drops the session record's opened_digest (a re-sent
 * session.opened is checked against the stored event) and the invocation
 * record's tool (read from the intent event); version 7 (issue 12, fifth
 * pass) names in `pending` only the unfinished invocations whose records
 * moved to `invocations` (those still in a recent list are listed from
 * their records) and counts them all in meta "pending_count".
 */
#define DOCKET_PROJECTION_VERSION 7u

#define LEDGER_MAP_RANGES 4

struct docket_ledger {
	MDB_env *env;
	ledger_dbis dbi;
	char *path;
	unsigned int flags;
	size_t map_size;
	size_t map_size_max;
	int nolock;              /* opened MDB_NOLOCK: read-only, no writer can exist */
	/* mdb_reader_check at most every reader_check_ms (store.c) */
	uint64_t reader_check_ms;
	uint64_t reader_checked_ms;
	/* slots the timed check cleared, not yet reported by
	 * ledger_reader_check (serve logs them) */
	int readers_cleared;
	char ledger_id[33];
	/* meta.format_version as opened: DOCKET_FORMAT_VERSION, or 1 when
	 * opened by rewrite.c to migrate it (ledger_open_legacy) */
	unsigned format;
	int legacy_ok;           /* set before open: accept format 1 (rewrite.c reads it) */
	int ready;               /* opened: write transactions check meta "moved" */
	/* meta.projection_version as opened (absent: 1); below
	 * DOCKET_PROJECTION_VERSION a writable open rebuilds the projections */
	unsigned projection_version;
	/* Held shared by every transaction, exclusive to resize the map
	 * (mdb_env_set_mapsize needs no live transaction in this process). */
	pthread_rwlock_t resize_lock;
	/* docket's writer lock (store.c, ledger_writer_busy): PATH/writer.lock,
	 * opened at the first write transaction (-1: not yet or not possible),
	 * flocked while `wtxn` (this handle's write transaction) is open */
	_Atomic int wlock_fd;
	MDB_txn *_Atomic wtxn;
	ledger_codec codec;
	int has_tree;            /* the `tree` DBI exists (absent: an older ledger opened read-only) */
	int merkle_off;          /* benchmarks only: do not maintain the tree */
	/* ledger_map_release: the read-only mappings of the data file, read from
	 * /proc/self/maps while the map had size map_ranges_size (0: not read).
	 * Every remap changes map_size (it only grows), so they stay valid
	 * while it is unchanged. */
	size_t map_ranges_size;
	size_t map_nranges;
	uintptr_t map_ranges[LEDGER_MAP_RANGES][2];
	/* Deferred meta sync (store_defer_meta_sync, serve's writer): commits
	 * of this handle that wrote a meta page, and how many of them a
	 * completed sync covers; sync_failed makes every later sync fail.
	 * sync_lock orders a sync against a commit's count (serve syncs on a
	 * thread of its own while its writer commits); the counters are read
	 * without it. */
	int defer_meta;
	int sync_failed;
	pthread_mutex_t sync_lock;
	_Atomic uint64_t commits_written;
	_Atomic uint64_t commits_durable;
};

/* ---- store.c ---- */

/* Check the structure of a data file LMDB would trust (meta pages, file
 * size, roots) before mapping it: DOCKET_ECORRUPT "the data file is
 * corrupt: ...", DOCKET_ENOTFOUND when there is no such file. */
int store_check_file(const char *datafile);
/* Refuse (DOCKET_ESTORAGE, saying why) a ledger directory `path` that
 * someone other than `uid` or root could change or replace: a symbolic link
 * or parent directory they own, group- or world-writable directory or
 * files, files they own (`writable` opens). DOCKET_ENOTFOUND: no such path. */
int store_check_trust(const char *path, uid_t uid, int writable);
/* docket's writer lock file in a ledger directory (store.c) */
#define LEDGER_WRITER_LOCK "writer.lock"
/* 1 while a docket write transaction is open on the ledger at `path`
 * (its writer lock, PATH/writer.lock, is held), else 0; it never waits.
 * Advisory: a writer that does not take it (another program holding
 * LMDB's lock) is not seen. */
int ledger_writer_busy(const char *path);
/* rm -rf `dir` (scratch and replaced ledgers), best effort. */
void store_remove_tree(const char *dir);
/* Before a batch: grow the map (doubling, up to the cap) until `bytes`
 * more than the file uses fit. */
int store_reserve(docket_ledger *l, size_t bytes);

/* A ledger of segments: format 2 (written on in format-2 segments, read
 * by every command; `docket migrate` makes it format 3) or 3. Format 1 is
 * read by `docket migrate` only. */
static inline int ledger_segmented(const docket_ledger *l)
{
	return l->format >= 2;
}

/* docket_ledger_open; `legacy_ok` also accepts a format-1 ledger (l->format
 * says which it is; only rewrite.c reads format 1). */
int ledger_open_ex(docket_ledger **out, const char *path, const docket_open_options *opts, int legacy_ok);

int store_meta_put_u64(MDB_txn *txn, docket_ledger *l, const char *name, uint64_t v);
int store_meta_put(MDB_txn *txn, docket_ledger *l, const char *name, const void *v, size_t len);
/* Remove a meta record (absent: 0). */
int store_meta_del(MDB_txn *txn, docket_ledger *l, const char *name);

/* ---- frame.c ---- */

#define FRAME_VERSION 1

enum frame_codec {
	FRAME_RAW = 0,
	FRAME_ZSTD = 1,
	FRAME_ZSTD_DICT = 2
};

typedef struct frame_header {
	uint8_t version;
	uint8_t codec;
	uint32_t dict_id;
	uint32_t raw_len;
	size_t header_len;
	uint8_t hash[LEDGER_HASH_LEN];
} frame_header;

int codec_init(ledger_codec *c);
void codec_dispose(ledger_codec *c);
/* Drop cached dictionaries (after an aborted transaction that trained one). */
void codec_forget(ledger_codec *c);

/* SHA-256 of `n` pieces one after the other (no allocation: the chain, the
 * Merkle tree and the state's digests); ledger_sha256 is in ledger_sys.h. */
int ledger_sha256_v(uint8_t out[LEDGER_HASH_LEN], const docket_slice *v, size_t n);


/*
 * zstd `src` into `dst` (capacity `cap`): with the dictionary active in
 * `txn` when `use_dict` and there is one (*dict_id its id, else 0), else
 * plain at `level`. Returns the compressed size, or 0 when it does not
 * shrink (store raw); <0 on error.
 */
int codec_compress(docket_ledger *l, MDB_txn *txn, uint8_t *dst, size_t cap, const uint8_t *src,
		   size_t len, int use_dict, int level, uint32_t *dict_id);
/* The dictionary codec_compress would use in `txn` (NULL and 0: none);
 * it stays valid until codec_forget(). */
int codec_active_dict(docket_ledger *l, MDB_txn *txn, const ZSTD_CDict **cdict, uint32_t *dict_id);
/* codec_compress's work in a context of the caller's own (a worker's): with
 * `cdict` when not NULL, else at `level`; 0 when it does not shrink. */
int codec_compress_cc(codec_cctx *cc, uint8_t *dst, size_t cap, const uint8_t *src, size_t len,
		      const ZSTD_CDict *cdict, int level);
void codec_cctx_dispose(codec_cctx *cc);
/* Decompress exactly `raw_len` bytes (dictionary `dict_id`, 0: none). */
int codec_decompress(docket_ledger *l, MDB_txn *txn, uint32_t dict_id, uint8_t *dst, size_t raw_len,
		     const uint8_t *src, size_t len);

/* Parse a frame header, bounds-checked. */
int frame_header_parse(frame_header *out, const uint8_t *frame, size_t len);

/* Decode a frame to its payload (into `out`, replacing its contents). */
int frame_decode(docket_buf *out, frame_header *hdr, docket_ledger *l, MDB_txn *txn,
		 const uint8_t *frame, size_t len);

/* Train a dictionary from recent payloads when it pays; called by append
 * (the events up to `events` must be in `txn`'s segments). */
int frame_maybe_train(docket_ledger *l, MDB_txn *txn, uint64_t events);

/* ---- segment.c ---- */

#define SEG_VERSION 3               /* what a writer of a format-3 ledger writes */
#define SEG_VERSION_2 2             /* ... of a format-2 ledger (read by every reader) */
#define SEG_PART_B 0x80             /* format 3: index kind bit, the payload is in part B */
#define SEG_TARGET_EVENTS 1024     /* a writer closes a segment at this many events */
#define SEG_REWRITE_EVENTS 4096    /* ... `docket compact` and `migrate` at this many */
#define SEG_REWRITE_LEVEL 9        /* ... compressed at this zstd level */
#define SEG_TARGET_BYTES (1u << 20) /* ... or at this many payload bytes */
#define SEG_MAX_EVENTS 65535u      /* what a reader accepts */
#define SEG_FLAG_MERKLE 0x01       /* reserved: a 32-byte tree root follows the chain hash */

/* The events of one segment as buffered: what a flush hashes into the
 * Merkle tree and encodes. Each payload is copied once, into the part its
 * index entry names (format 2: every payload in part 0). */
typedef struct seg_batch {
	uint64_t first;             /* seq of the first buffered event; 0: none */
	uint32_t count;
	uint8_t last[LEDGER_HASH_LEN]; /* chain hash of the last buffered event */
	docket_buf index;           /* per event: kind (1 byte, SEG_PART_B in format 3), length (LEB128) */
	docket_buf part[2];         /* each part's payloads, concatenated in seq order */
} seg_batch;

/* Each payload of `b` in seq order through `fn` (stops at its first error). */
int seg_batch_each(const seg_batch *b, int (*fn)(void *ctx, const uint8_t *p, size_t len), void *ctx);
void seg_batch_dispose(seg_batch *b);

/*
 * A segment's leaves folded on their own, on any thread (merkle.c): the
 * complete aligned subtrees its range [start, end) of leaves splits into,
 * left to right, and the stored nodes (level >= 8) inside them. The append
 * thread then only joins those few subtrees to the tree (merkle_piece_add).
 */
#define MERKLE_PIECE_BLOCKS 128     /* at most 2 x 64 subtrees in any range */
typedef struct merkle_frontier {
	uint64_t size;
	uint8_t h[64][LEDGER_HASH_LEN]; /* h[level] valid where bit `level` of size is set */
} merkle_frontier;
typedef struct merkle_block {
	unsigned level;
	size_t nodes_end;           /* its stored nodes end here in `nodes` */
	uint8_t hash[LEDGER_HASH_LEN];
} merkle_block;
typedef struct merkle_piece {
	uint64_t start, pos, end;   /* leaves before it, folded so far, after it */
	unsigned level;             /* of the subtree being folded */
	merkle_frontier local;      /* its fold so far */
	uint32_t nblocks;
	merkle_block blocks[MERKLE_PIECE_BLOCKS];
	docket_buf nodes;           /* per stored node: key (be64 end, level) and hash */
} merkle_piece;
void merkle_piece_begin(merkle_piece *p, uint64_t start, uint64_t n);
int merkle_piece_leaf(merkle_piece *p, const uint8_t *payload, size_t len);
/* Join a whole piece to the stored tree of `txn` (its frontier must end at
 * p->start): the append thread's share. */
int merkle_piece_add(docket_ledger *l, MDB_txn *txn, const merkle_piece *p);
void merkle_piece_dispose(merkle_piece *p);

typedef struct seg_stage seg_stage;

/*
 * The events of one commit, buffered until they are written as segments
 * (one LMDB value each, keyed by its first seq, MDB_APPEND). A parallel
 * writer closes each full segment on a worker (seg_stage.c: Merkle leaves
 * and compression) and writes it in seq order as its worker finishes.
 */
typedef struct seg_writer {
	docket_ledger *l;
	seg_batch b;                /* the segment being filled */
	docket_buf out;             /* the encoded segment */
	docket_buf zpart;           /* format 3: part A compressed */
	uint64_t stored;            /* bytes of the segments written (meta frame_bytes) */
	uint32_t target;            /* events per segment (0: SEG_TARGET_EVENTS) */
	int level;                  /* zstd level of a bulk segment (0: level 1) */
	uint8_t version;            /* segment version written: the ledger's format (2 or 3) */
	int parallel;               /* seg_close hands full segments to workers */
	seg_stage *stage;           /* the workers and segments in flight; NULL until needed */
} seg_writer;

/* Where a writer stood, to drop what a refused group added (seg_rollback). */
typedef struct seg_mark {
	uint64_t first;
	uint32_t count;
	size_t index_len, part_len[2];
	uint8_t last[LEDGER_HASH_LEN];
} seg_mark;

void seg_writer_init(seg_writer *w, docket_ledger *l);
void seg_writer_dispose(seg_writer *w);
/* Buffer event `seq` (one past the previous; `kind` its body case, which
 * also chooses its part in a format-3 segment: seg_kind_part). */
int seg_add(seg_writer *w, uint64_t seq, unsigned kind, const uint8_t *payload, size_t len,
	    const uint8_t hash[LEDGER_HASH_LEN]);
int seg_full(const seg_writer *w);
/* The part a format-3 writer puts an event of body case `kind` in: 1 (B,
 * the bulk part) for an outcome, 0 (A, the decision part) for the rest. */
unsigned seg_kind_part(unsigned kind);
/* The payload of event `seq` while it is buffered or in flight (not yet
 * written): 0, or DOCKET_ENOTFOUND. */
int seg_writer_payload(const seg_writer *w, uint64_t seq, const uint8_t **p, size_t *len);
/* ... of `seq` in one batch. */
int seg_batch_payload(const seg_batch *b, uint64_t seq, const uint8_t **p, size_t *len);
void seg_mark_get(const seg_writer *w, seg_mark *m);
void seg_rollback(seg_writer *w, const seg_mark *m);
/* Write the segments in flight, then the buffered events as one segment,
 * into `txn` (none: nothing); adds their size to meta frame_bytes. */
int seg_flush(seg_writer *w, MDB_txn *txn);
/* Close the buffered segment: a parallel writer hands it to a worker (and
 * writes those its workers finished, in order), another flushes it. */
int seg_close(seg_writer *w, MDB_txn *txn);
/* Encode batch `b` as a segment of `version` into `out` (`zpart`: scratch).
 * Parts are compressed in the caller's context `cc` with `cdict` (a
 * worker), or with the ledger's codec and dictionary in `txn` (cc NULL). */
typedef struct seg_coder {
	docket_ledger *l;
	MDB_txn *txn;
	codec_cctx *cc;
	const ZSTD_CDict *cdict;
	uint32_t dict_id;
	int level;                  /* of a bulk part (0: level 1) */
	uint8_t version;
} seg_coder;
int seg_encode(const seg_coder *c, const seg_batch *b, docket_buf *out, docket_buf *zpart);
/* Put an encoded segment (first seq `first`) and count its bytes. */
int seg_put(seg_writer *w, MDB_txn *txn, uint64_t first, const docket_buf *out);
/* Whether a batch has a part small enough for the ledger's dictionary. */
int seg_batch_wants_dict(const seg_batch *b);

/* ---- seg_stage.c: the workers of a parallel writer ---- */

/* Hand the writer's buffered segment to a worker (starting them on first
 * use; none could start: flushed inline), then write what is done. */
int seg_stage_submit(seg_writer *w, MDB_txn *txn);
/* Write every segment in flight, in order, waiting for their workers. */
int seg_stage_drain(seg_writer *w, MDB_txn *txn);
/* The payload of `seq` in a segment in flight: 0, or DOCKET_ENOTFOUND. */
int seg_stage_payload(const seg_stage *s, uint64_t seq, const uint8_t **p, size_t *len);
/* Stop the workers and free everything (segments in flight are dropped). */
void seg_stage_free(seg_stage *s);
/* Tests: the worker that takes the stage's Nth segment fails it (0: none). */
extern uint64_t seg_stage_fail_at;


/* For a reader going through the log in seq order from the start (verify,
 * reindex, compact): the payload of `seq`, checked against the chain that
 * ends in `head` (advanced to h[seq]), the stored hash of its segment at
 * the segment's last event (reader_seek refuses segments that overlap, and
 * a gap is a missing seq). DOCKET_ECORRUPT names what does not check out. */
int reader_check(ledger_reader *r, uint64_t seq, uint8_t head[LEDGER_HASH_LEN], const uint8_t **p, size_t *len);
/* The seq of the last stored event (0: none). */
int reader_last_seq(ledger_reader *r, uint64_t *out);
/*
 * Hand back the resident pages of the ledger's whole map (a read-only shared
 * file mapping: they are read again from the page cache when touched, and
 * pointers into the map stay valid). A long scan does this every
 * READER_RELEASE_SEGMENTS segments, so the B-tree pages its lookups touch
 * (invocation records, the scratch ledger of verify) do not add up to the
 * file's size in its RSS.
 */
#define READER_RELEASE_SEGMENTS 16
void ledger_map_release(docket_ledger *l);
/* Parse a stored segment's header into `r` (r->first stays 0). */
int seg_parse(ledger_reader *r, const uint8_t *seg, size_t len);
/* Load a stored segment (copied) whose first seq is `first` into `r`:
 * reader_seek's second half; the fuzz target (tests/fuzz/fuzz_segment.c). */
int reader_adopt(ledger_reader *r, uint64_t first, const void *seg, size_t len);
/* Tests: drop every event after `keep` (a truncated copy). */
int seg_truncate(docket_ledger *l, MDB_txn *txn, uint64_t keep);

/* ---- state.c ---- */





/* Copy a session record (only the used part of its recent list). */
void sess_state_copy(sess_state *dst, const sess_state *src);

/* The session index names, per session, the blocks of 1 << SESSION_BLOCK_SHIFT
 * seqs that hold its events (a reader filters the events of a block). */
#define SESSION_BLOCK_SHIFT 12

/* The compact invocation record of `s` into `out` (state_record.c). */
int inv_state_encode(docket_buf *out, const inv_state *s);
/* An invocation record (its key: session, invocation), with the token of
 * its last dispatch derived (state_dispatch_token). */
int inv_state_decode(inv_state *out, const char *session, const char *invocation, const void *data, size_t len);
/* The dispatch token of attempt `attempt`: "dt-" and 32 hex digits of
 * SHA-256(session NUL invocation NUL be64(intent_seq) be32(attempt)). */
int state_dispatch_token(char out[48], const char *session, const char *invocation, uint64_t intent_seq,
			 uint32_t attempt);
int sess_state_decode(sess_state *out, const void *data, size_t len);
/* fn(ctx, id, length) for each invocation of the recent list of `s` that
 * has no outcome (the pending index does not name them); stops at a
 * non-zero return of fn and returns it. */
int state_recent_unfinished(const sess_state *s, int (*fn)(void *ctx, const char *id, size_t ilen), void *ctx);

typedef enum state_mode {
	STATE_APPEND,   /* validate, assign ledger fields, write projections */
	STATE_REBUILD   /* the event is already in the log: check and project */
} state_mode;

/* Per-transaction working state (caches, head of the chain). */
typedef struct state_txn state_txn;

int state_txn_begin(state_txn **out, docket_ledger *l, MDB_txn *txn);
/* The writer holding this commit's events not yet written (re-send checks
 * read them there); NULL when every event is in the segments (rebuild). */
void state_set_writer(state_txn *st, const seg_writer *w);
/* Read the stored events back from `l` in `txn` (verify rebuilds another
 * ledger's log); NULL: they cannot be read back (a format-1 source). */
void state_set_source(state_txn *st, docket_ledger *l, MDB_txn *txn);
/* Flush caches and meta (head, epoch). */
int state_txn_finish(state_txn *st);
/*
 * A checkpoint inside the transaction: state_rollback() takes back every
 * change state_apply() made since (head, epoch, clock, caches, overlay
 * records and deferred writes) without an LMDB nested transaction. While a
 * checkpoint is set nothing is written to LMDB early, so the rollback is
 * complete; setting one may first write back what earlier checkpoints kept.
 */
int state_checkpoint(state_txn *st);
void state_rollback(state_txn *st);
void state_txn_free(state_txn *st);

/*
 * Check `ev` against every invariant and apply it: in STATE_APPEND mode fill
 * the fields the ledger assigns (time, epoch, attempt, token) and set
 * *duplicate when it is an identical re-send (nothing to write). On success
 * the event's seq is *seq_out (the existing one for a duplicate).
 */
int state_apply(state_txn *st, docket_event *ev, state_mode mode, uint64_t seq,
		uint64_t *seq_out, int *duplicate, docket_append_result *res);

/* After state_apply() in STATE_APPEND mode: the event packed as it is to be
 * stored (event_pack), if state_apply needed to pack it (NULL otherwise).
 * Valid until the next state_apply() or state_txn_free(). */
const docket_buf *state_payload(const state_txn *st);
uint64_t state_head_seq(const state_txn *st);
const uint8_t *state_head_hash(const state_txn *st);
void state_set_head(state_txn *st, uint64_t seq, const uint8_t hash[LEDGER_HASH_LEN]);
/* Account an event's payload and frame sizes (stats). */
void state_count_bytes(state_txn *st, size_t payload, size_t frame);

/* Whether a key of the pending index is its sentinel (not an invocation). */
int state_pending_is_sentinel(const void *key, size_t len);
/* How many invocations the pending index holds (its sentinel not counted). */
int state_pending_count(docket_ledger *l, MDB_txn *txn, uint64_t *out);

/* Drop every projection (reindex, verify). */
int state_clear_projections(docket_ledger *l, MDB_txn *txn);
/* Append to `out` the seqs (be64 each, oldest first) of the ledger.incident
 * events whose spool entry names `session` ("": those naming none). */
int ledger_incidents_get(docket_ledger *l, MDB_txn *txn, const char *session, docket_buf *out);

/* ---- event_pack.c ---- */

/* Packed protobuf of an event into `out`. */
int event_pack(docket_buf *out, const docket_event *ev);
/* Append to `out` the packing of `ev` with time and epoch cleared (they are
 * restored): what the event's payload is past those two fields, which only
 * the append assigns. Made where the event is parsed, off the append. */
int event_pack_rest(docket_buf *out, docket_event *ev);
/* The packing of `ev` (event_pack) from `rest`, its event_pack_rest() made
 * before its time and epoch were assigned (nothing else may have changed). */
int event_pack_onto(docket_buf *out, const docket_event *ev, const uint8_t *rest, size_t len);
/* Length of the packing of `ev`'s time and epoch at the start of its packed
 * bytes `p`, or (size_t)-1 when they are not packed canonically. */
size_t event_time_epoch_prefix(const docket_event *ev, const uint8_t *p, size_t len);
/* The error of a failed protobuf-c unpack of `what` (it returns NULL for bad
 * bytes and for a failed allocation alike). */
int ledger_unpack_error(const char *what);

/* ---- verify.c ---- */

/* A stored event (payload `p` of seq `seq`) through the state machine in
 * rebuild mode: decoded, checked, projected; a repeat is corruption. *kind
 * (if given): its body case. */
int state_apply_stored(state_txn *st, uint64_t seq, const uint8_t *p, size_t len, unsigned *kind);

/* Events verify rebuilds per scratch transaction (default 16384; tests
 * make it small to cross chunk boundaries). */
extern uint64_t ledger_verify_chunk;
/* Runs of at least this many events of one segment are hashed on a worker
 * thread beside the rebuild, and segments of at least as many beside an
 * export (seg_hash.c; default 64; 0: never, all on the caller; tests set 1
 * and 0 to compare the two). */
extern uint32_t ledger_verify_parallel_min;
/* The first map size of verify's scratch ledger (it grows from there);
 * tests set it small to exercise growth on small ledgers. */
extern size_t ledger_verify_scratch_map;
/* Its growth cap; 0: the default cap of docket_ledger_open. */
extern size_t ledger_verify_scratch_max;

/* ---- merkle.c: the tree (include/docket/tlog.h) ---- */


struct docket_tlog_proof;
int merkle_inclusion(struct docket_tlog_proof *out, const merkle_src *s, uint64_t index, uint64_t size);
int merkle_consistency(struct docket_tlog_proof *out, const merkle_src *s, uint64_t old_size, uint64_t new_size);

/* Open (create: or create) the `tree` DBI at ledger open (store.c). */
int merkle_open(docket_ledger *l, MDB_txn *txn, int create);
/* Add a segment's events to the tree, before it is written (seg_flush). */
int merkle_extend(seg_writer *w, MDB_txn *txn);
/* Drop the tree (a truncated test copy: reindex rebuilds it). */
int merkle_drop(docket_ledger *l, MDB_txn *txn);
/* Rebuild the tree from the events (reindex). */
int merkle_rebuild(docket_ledger *l, MDB_txn *txn);
/*
 * verify's check of the stored tree, fed the events as its rebuild reads
 * them (one pass): merkle_check_txn() names the read transaction of each
 * chunk (before any leaf), merkle_check_leaf() takes the events in seq
 * order from 1, merkle_check_mark()/_rollback() undo a chunk that is
 * redone, merkle_check_finish() compares the rest (nodes past the end, the
 * frontier): 0 when the tree matches, 1 and rep->problem when not.
 */
typedef struct merkle_check merkle_check;
int merkle_check_new(merkle_check **out, docket_ledger *l);
void merkle_check_free(merkle_check *mc);
void merkle_check_txn(merkle_check *mc, MDB_txn *txn);
int merkle_check_leaf(merkle_check *mc, const uint8_t *p, size_t len);
/* merkle_check_leaf of a leaf hashed already (verify's hashing worker). */
int merkle_check_leaf_hash(merkle_check *mc, const uint8_t leaf[LEDGER_HASH_LEN]);
void merkle_check_mark(merkle_check *mc);
void merkle_check_rollback(merkle_check *mc);
int merkle_check_finish(merkle_check *mc, MDB_txn *txn, docket_verify_report *rep);

/* ---- seg_hash.c: a run's hashes on a worker thread ---- */

/* The chain hashes (and Merkle leaves) of a run of the loaded segment's
 * events, computed on one worker thread while the caller rebuilds them. */
typedef struct seg_hash seg_hash;
/* Tests: the jobs handed to a worker so far. */
extern atomic_ulong seg_hash_jobs;
int seg_hash_new(seg_hash **out);
void seg_hash_free(seg_hash *h);
/* Hash events [from, to] of `r`'s loaded segment (both parts decompressed)
 * from h[from - 1] = `head`, and their leaves when `leaves`. DOCKET_ENOTFOUND:
 * no thread could be started (hash them on the caller). */
int seg_hash_start(seg_hash *h, const ledger_reader *r, uint64_t from, uint64_t to,
		   const uint8_t head[LEDGER_HASH_LEN], int leaves);
/* Wait for the run: h[from..to] and the leaves, borrowed until the next start. */
int seg_hash_wait(seg_hash *h, const uint8_t (**hashes)[LEDGER_HASH_LEN],
		  const uint8_t (**leaf)[LEDGER_HASH_LEN]);

/* ---- read.c: single records ---- */

/* The stored frame of `seq` (borrowed from `txn`); DOCKET_ECORRUPT if absent. */
int ledger_frame_get(MDB_txn *txn, docket_ledger *l, uint64_t seq, MDB_val *out);
/* Whether the packed docket.v1.Event `p` names session `session` (its
 * field 3, read without unpacking the event): 1 yes, 0 no, DOCKET_ECORRUPT
 * when it is not protobuf. */
int ledger_payload_session_is(const uint8_t *p, size_t len, const char *session, size_t slen);

/* ---- redact.c ---- */

/*
 * Redact secrets in an event before it is validated, encoded and written
 * (write-time redaction, configured per ledger). 0 when nothing to do.
 */
int ledger_redact_event(docket_ledger *l, MDB_txn *txn, docket_event *ev);
/* 1 when `txn` holds redaction rules (ledger_redact_event may change an
 * event), 0 when not. */
int ledger_redact_configured(docket_ledger *l, MDB_txn *txn);

/* ---- append.c ---- */

/* All `n` events in one durable transaction, or none (first error wins). */
int ledger_append(docket_ledger *l, docket_event **events, size_t n,
		  docket_append_result *results);
/* Whether an append closes its full segments on worker threads
 * (seg_stage.c; default 1): tests write the same events both ways. */
extern int ledger_seg_parallel;

/*
 * ledger_append of events that are still being made while it runs: the
 * first time it needs events[i] it calls wait(ctx, i), which returns once
 * events[i] is there (0) or says why it will not be (<0: the transaction is
 * aborted, nothing is written). `n` is known up front (the map is reserved
 * for it). Used by `docket record` to append while it parses. The wait may
 * also give events[i]'s event_pack_rest() in *rest (it starts empty: none),
 * valid until the append returns: the append then packs the event from it.
 */
typedef int (*ledger_wait_fn)(void *ctx, size_t i, docket_slice *rest);
int ledger_append_stream(docket_ledger *l, docket_event **events, size_t n,
			 docket_append_result *results, ledger_wait_fn wait, void *ctx);



/* ---- import_state.c ---- */


#endif
