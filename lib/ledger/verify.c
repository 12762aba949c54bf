/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verify.c: verify and reindex, both built on rebuild_range(), which reads
 * stored events in seq order, checks each segment (header, decompression,
 * contiguity, the chain hash it stores) and feeds every event through the
 * state machine in STATE_REBUILD mode.
 *
 *  - reindex: drops every projection and rebuilds it in place, in one write
 *    transaction (all or nothing).
 *  - verify: rebuilds the projections into a scratch ledger in a temporary
 *    directory (the real one is only read), checking the stored Merkle tree
 *    in the same pass (merkle_check_*: each segment is decompressed once),
 *    then compares every projection and the chain head record by record,
 *    then the rest of the tree. It proves the chain is unbroken, every
 *    frame decodes, the history obeys every invariant, the projections say
 *    what the events say, and the tree is the tree of the events. The
 *    scratch ledger commits without fsync (it is thrown away) and events
 *    are decoded into a protobuf-c arena (docket_arena), which starts over
 *    once each event is freed.
 *
 * Both hash every payload twice (the chain; verify also the Merkle leaf):
 * a segment's run of events is hashed on a worker thread (seg_hash.c) from
 * the chain value before it while this thread decodes and applies the same
 * events, and the chain is compared with the segment's stored hash at the
 * run's last event, before that event is applied, as the serial check does:
 * every verdict, message and first bad seq is the serial one (a segment
 * that does not load or decompress whole, or a short run, is checked on
 * this thread, event by event).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define VERIFY_COMPARE_RELEASE 4096  /* records compared between two ledger_map_release */
#define VERIFY_ARENA ((size_t)64 << 10)  /* one event decoded; a bigger one spills to the heap */

/* Events rebuilt per scratch transaction (tests make it small to cross
 * chunk boundaries on small ledgers). */
uint64_t ledger_verify_chunk = 16384;
uint32_t ledger_verify_parallel_min = 64;

/* The scratch ledger's first map; it grows (doubling) as the rebuild needs. */
size_t ledger_verify_scratch_map = (size_t)4 << 20;
size_t ledger_verify_scratch_max;

/*
 * Whether a failed rebuild of one event is a verdict about the data (the
 * event, its frame or the history is wrong) or a failure of the checker
 * itself (the scratch ledger ran out of map, disk or memory): only the first
 * may ever be reported as "FAILED at seq N".
 */
static int is_verdict(int error)
{
	switch (error) {
	case DOCKET_ESTORAGE:
	case DOCKET_ENOMEM:
	case DOCKET_EMAPFULL:
	case DOCKET_ERROR:
		return 0;
	default:
		return 1;
	}
}

/* state_apply_stored(), decoding into allocator `a` (the event is freed
 * through it before this returns: state_apply keeps no pointer into it);
 * when `a` allocates from `arena`, the arena starts over in one step
 * instead, unless a piece spilled to the heap. */
static int apply_stored(state_txn *st, ProtobufCAllocator *a, docket_arena *arena, uint64_t seq, const uint8_t *p,
			size_t len, unsigned *kind)
{
	docket_event *ev = NULL;
	uint64_t out_seq;
	int dup, error;

	if ((error = event_unpack_in(&ev, a, p, len)) == 0 &&
	    (error = state_apply(st, ev, STATE_REBUILD, seq, &out_seq, &dup, NULL)) == 0 && dup)
		error = docket_error_set(DOCKET_ECORRUPT, "event repeats an earlier one");
	if (error == 0 && kind)
		*kind = (unsigned)ev->body_case;
	if (ev && !(arena && docket_arena_reset(arena)))
		docket__v1__event__free_unpacked(ev, a);
	return error;
}

int state_apply_stored(state_txn *st, uint64_t seq, const uint8_t *p, size_t len, unsigned *kind)
{
	return apply_stored(st, &docket_pb_allocator, NULL, seq, p, len, kind);
}

/* The rebuild of one pass: where it applies, its arena, the tree it checks
 * (verify; NULL: reindex) and the worker that hashes (NULL: none). */
typedef struct rebuild {
	state_txn *st;
	ledger_reader *r;
	merkle_check *mc;
	seg_hash *hs;
	ProtobufCAllocator pb;
	docket_arena *arena;        /* pb's */
	uint64_t bad_seq;
} rebuild;

/* Stored event `seq` (read, chained from `hash`, checked at its segment's
 * end) through the state machine and the tree check, on the caller. */
static int rebuild_one(rebuild *b, uint64_t seq, uint8_t hash[LEDGER_HASH_LEN])
{
	const uint8_t *p;
	unsigned kind = 0;
	size_t len;
	int error;

	if ((error = reader_check(b->r, seq, hash, &p, &len)) == 0 &&
	    (error = apply_stored(b->st, &b->pb, b->arena, seq, p, len, &kind)) == 0)
		error = reader_check_kind(b->r, seq, kind);
	if (error < 0) {
		b->bad_seq = seq;
		return error;
	}
	/* a tree that cannot be read is no verdict on the event */
	if (b->mc && (error = merkle_check_leaf(b->mc, p, len)) < 0)
		return error;
	state_set_head(b->st, seq, hash);
	state_count_bytes(b->st, len, seq == b->r->first ? b->r->stored : 0);
	return 0;
}

/* Event i of the loaded segment through the state machine, its chain hash
 * still being computed: the head's hash is set when the run ends (the
 * rebuild reads only its seq meanwhile). */
static int apply_at(rebuild *b, uint64_t seq, const uint8_t hash[LEDGER_HASH_LEN])
{
	uint32_t i = (uint32_t)(seq - b->r->first);
	unsigned kind = 0;
	int error;

	if ((error = apply_stored(b->st, &b->pb, b->arena, seq, reader_payload_at(b->r, i), b->r->lens[i],
				  &kind)) < 0 ||
	    (error = reader_check_kind(b->r, seq, kind)) < 0) {
		b->bad_seq = seq;
		return error;
	}
	state_set_head(b->st, seq, hash);
	state_count_bytes(b->st, b->r->lens[i], seq == b->r->first ? b->r->stored : 0);
	return 0;
}

/*
 * Events [from, to] of the loaded segment, their hashes computed by b->hs
 * meanwhile: the same checks in the same order as rebuild_one's, the chain
 * compared with the segment's stored hash at its last event before that
 * event is applied. Waits for the worker on every path out.
 */
static int rebuild_run(rebuild *b, uint64_t from, uint64_t to, uint8_t hash[LEDGER_HASH_LEN])
{
	const uint8_t (*hashes)[LEDGER_HASH_LEN], (*leaf)[LEDGER_HASH_LEN];
	ledger_reader *r = b->r;
	uint64_t seq = from;
	int error = 0, hash_error;

	for (; seq < to && error == 0; seq++)
		error = apply_at(b, seq, hash);
	hash_error = seg_hash_wait(b->hs, &hashes, &leaf);
	if (error < 0)
		return error;
	if (hash_error < 0) {
		b->bad_seq = 0;
		return hash_error;
	}
	memcpy(hash, hashes[to - from], LEDGER_HASH_LEN);
	if (to == r->first + r->count - 1 && memcmp(hash, r->last, LEDGER_HASH_LEN) != 0) {
		b->bad_seq = to;
		return docket_error_set(DOCKET_ECORRUPT, "chain hash does not match the events of seqs %llu-%llu",
					(unsigned long long)r->first, (unsigned long long)to);
	}
	if ((error = apply_at(b, to, hash)) < 0)
		return error;
	for (uint64_t i = 0; b->mc && i <= to - from; i++)
		if ((error = merkle_check_leaf_hash(b->mc, leaf[i])) < 0)
			return error;
	return 0;
}

/*
 * Whether the events from `seq` on are a run for the worker: its segment
 * loads and decompresses whole, and holds at least ledger_verify_parallel_min
 * of them up to `to`. *end is the run's last seq. Anything wrong is left to
 * rebuild_one, which reports it where the serial check always has.
 */
static int run_start(rebuild *b, uint64_t seq, uint64_t to, const uint8_t hash[LEDGER_HASH_LEN], uint64_t *end)
{
	ledger_reader *r = b->r;

	if (!b->hs || !ledger_verify_parallel_min || reader_seek(r, seq) < 0)
		return 0;
	*end = r->first + r->count - 1 < to ? r->first + r->count - 1 : to;
	if (*end - seq + 1 < ledger_verify_parallel_min || reader_decode_parts(r) < 0)
		return 0;
	return seg_hash_start(b->hs, r, seq, *end, hash, b->mc != NULL) == 0;
}

/*
 * Apply stored events [from, to] of `src` (read through `r`) to `st`, and
 * (verify) to the Merkle check `mc`. On a bad event returns its error with
 * *bad_seq set to its seq; an error reading the stored tree leaves it 0.
 * Runs of a segment's events are hashed by `hs` (when given) beside the
 * rebuild.
 */
static int rebuild_range(state_txn *st, ledger_reader *r, uint64_t from, uint64_t to, merkle_check *mc,
			 seg_hash *hs, uint64_t *bad_seq)
{
	uint8_t hash[LEDGER_HASH_LEN];
	docket_arena arena;
	rebuild b = { st, r, mc, hs, { 0 }, &arena, 0 };
	int error;

	*bad_seq = 0;
	memcpy(hash, state_head_hash(st), LEDGER_HASH_LEN);
	/* each event is decoded into the arena and dropped before the next:
	 * no malloc and free per field */
	if ((error = docket_arena_init(&arena, VERIFY_ARENA)) < 0)
		return error;
	docket_arena_pb(&b.pb, &arena);
	for (uint64_t seq = from, end; seq <= to && error == 0; seq++) {
		if (run_start(&b, seq, to, hash, &end)) {
			error = rebuild_run(&b, seq, end, hash);
			seq = end;
		} else {
			error = rebuild_one(&b, seq, hash);
		}
	}
	if (error < 0 && b.bad_seq) {
		*bad_seq = b.bad_seq;
		docket_error_prefix("seq %llu: ", (unsigned long long)b.bad_seq);
	}
	docket_arena_dispose(&arena);
	return error;
}

static int read_head(docket_ledger *l, MDB_txn *txn, uint64_t *out)
{
	return store_meta_get_u64(txn, l, "head_seq", out);
}

/* ---- reindex ---- */

static int reindex_txn(docket_ledger *l)
{
	MDB_txn *txn = NULL;
	state_txn *st = NULL;
	seg_hash *hs = NULL;
	ledger_reader r;
	uint64_t head, bad;
	int error;

	if ((error = store_txn_begin(&txn, l, 0)) < 0)
		return error;
	reader_init(&r, l, txn);
	/* without the worker, the rebuild hashes on this thread */
	if (seg_hash_new(&hs) < 0)
		hs = NULL;
	if ((error = reader_last_seq(&r, &head)) < 0 ||
	    (error = state_clear_projections(l, txn)) < 0 ||
	    (error = state_txn_begin(&st, l, txn)) < 0 ||
	    (error = rebuild_range(st, &r, 1, head, NULL, hs, &bad)) < 0 ||
	    (error = state_txn_finish(st)) < 0 || (error = merkle_rebuild(l, txn)) < 0 ||
	    (error = store_meta_put_u64(txn, l, "projection_version", DOCKET_PROJECTION_VERSION)) < 0)
		goto cleanup;
	error = store_txn_commit(l, txn);
	txn = NULL;
	if (error == 0)
		l->projection_version = DOCKET_PROJECTION_VERSION;
cleanup:
	state_txn_free(st);
	seg_hash_free(hs);
	reader_dispose(&r);
	if (txn)
		store_txn_abort(l, txn);
	return error;
}

int docket_ledger_reindex(docket_ledger *l)
{
	int error;

	if (l->flags & DOCKET_OPEN_READONLY)
		return docket_error_set(DOCKET_EINVALID, "ledger %s is open read-only", l->path);
	while ((error = reindex_txn(l)) == DOCKET_EMAPFULL) {
		if ((error = store_grow(l)) < 0)
			break;
	}
	return error;
}

/* ---- verify ---- */

/* Rebuild events (scratch head, to] of `l` into the scratch ledger, and
 * check the Merkle tree over them. */
static int verify_chunk(docket_ledger *scratch, docket_ledger *l, ledger_reader *r, merkle_check *mc,
			seg_hash *hs, uint64_t to, docket_verify_report *rep)
{
	MDB_txn *src = NULL, *dst = NULL;
	state_txn *st = NULL;
	uint64_t bad = 0;
	int error;

	if ((error = store_txn_begin(&src, l, MDB_RDONLY)) < 0)
		return error;
	reader_set_txn(r, src);
	merkle_check_txn(mc, src);
	merkle_check_mark(mc);
	if ((error = store_txn_begin(&dst, scratch, 0)) < 0)
		goto cleanup;
	if ((error = state_txn_begin(&st, scratch, dst)) < 0)
		goto cleanup;
	state_set_source(st, l, src);
	uint64_t from = state_head_seq(st) + 1;
	if (to - from + 1 > ledger_verify_chunk)
		to = from + ledger_verify_chunk - 1;
	if ((error = rebuild_range(st, r, from, to, mc, hs, &bad)) < 0) {
		if (bad && is_verdict(error)) {
			rep->first_bad_seq = bad;
			rep->events_checked = bad - 1;
			memcpy(rep->problem, docket_error_last()->message, sizeof(rep->problem));
			rep->problem[sizeof(rep->problem) - 1] = '\0';
			error = 1;
		}
		goto cleanup;
	}
	/* counted once committed: a full scratch map at finish or commit
	 * redoes the chunk */
	if ((error = state_txn_finish(st)) < 0)
		goto cleanup;
	error = store_txn_commit(scratch, dst);
	dst = NULL;
	if (error == 0)
		rep->events_checked = to;
	/* the rebuild reads the scratch B-trees through the map: bound RSS */
	ledger_map_release(scratch);
cleanup:
	state_txn_free(st);
	if (dst)
		store_txn_abort(scratch, dst);
	/* a chunk not committed is redone (or verify ends): its leaves go too */
	if (error != 0)
		merkle_check_rollback(mc);
	merkle_check_txn(mc, NULL);
	store_txn_abort(l, src);
	return error;
}

/* Compare one table of both ledgers record by record; 1 and a problem on a difference. */
static int compare_dbi(docket_ledger *la, MDB_txn *a_txn, MDB_dbi a, docket_ledger *lb, MDB_txn *b_txn,
		       MDB_dbi b, int dupsort, const char *name, docket_verify_report *rep)
{
	MDB_cursor *ca = NULL, *cb = NULL;
	MDB_val ka, va, kb, vb;
	MDB_cursor_op op = dupsort ? MDB_NEXT_DUP : MDB_NEXT;
	uint64_t walked = 0;
	int ra, rb, error = 0;

	(void)op;
	if ((ra = mdb_cursor_open(a_txn, a, &ca)) != 0 || (rb = mdb_cursor_open(b_txn, b, &cb)) != 0) {
		if (ca)
			mdb_cursor_close(ca);
		return store_error(ra ? ra : rb, "open cursor");
	}
	ra = mdb_cursor_get(ca, &ka, &va, MDB_FIRST);
	rb = mdb_cursor_get(cb, &kb, &vb, MDB_FIRST);
	while (ra == 0 && rb == 0) {
		if (ka.mv_size != kb.mv_size || memcmp(ka.mv_data, kb.mv_data, ka.mv_size) != 0 ||
		    va.mv_size != vb.mv_size || memcmp(va.mv_data, vb.mv_data, va.mv_size) != 0)
			break;
		ra = mdb_cursor_get(ca, &ka, &va, MDB_NEXT);
		rb = mdb_cursor_get(cb, &kb, &vb, MDB_NEXT);
		/* both tables are walked whole: bound the pages kept resident */
		if (++walked % VERIFY_COMPARE_RELEASE == 0) {
			ledger_map_release(la);
			ledger_map_release(lb);
		}
	}
	if (ra == MDB_NOTFOUND && rb == MDB_NOTFOUND)
		error = 0;
	else if ((ra != 0 && ra != MDB_NOTFOUND) || (rb != 0 && rb != MDB_NOTFOUND))
		error = store_error(ra ? ra : rb, name);
	else {
		const MDB_val *key = ra == 0 ? &ka : &kb;
		char shown[96];
		size_t n = key->mv_size < 40 ? key->mv_size : 40;

		for (size_t i = 0; i < n; i++) {
			char ch = ((const char *)key->mv_data)[i];
			shown[i] = (ch >= 32 && ch < 127) ? ch : '.';
		}
		shown[n] = '\0';
		snprintf(rep->problem, sizeof(rep->problem),
			 "projection '%s' does not match the events (first difference at key \"%s\"); "
			 "run `docket reindex` to rebuild it", name, shown);
		error = 1;
	}
	mdb_cursor_close(ca);
	mdb_cursor_close(cb);
	return error;
}

static int compare_meta(MDB_txn *a_txn, docket_ledger *a, MDB_txn *b_txn, docket_ledger *b,
			docket_verify_report *rep)
{
	static const char *const names[] = { "head_seq", "head_hash", "epoch", "payload_bytes", "frame_bytes",
					     "pending_count" };
	/* an older projection did not count (the last name) */
	size_t n = sizeof(names) / sizeof(names[0]) - (a->projection_version < DOCKET_PROJECTION_VERSION);

	for (size_t i = 0; i < n; i++) {
		MDB_val va = { 0, NULL }, vb = { 0, NULL };
		int ea = store_meta_get(a_txn, a, names[i], &va);
		int eb = store_meta_get(b_txn, b, names[i], &vb);

		if (ea < 0 && ea != DOCKET_ENOTFOUND)
			return ea;
		if (eb < 0 && eb != DOCKET_ENOTFOUND)
			return eb;
		if (va.mv_size != vb.mv_size || (va.mv_size && memcmp(va.mv_data, vb.mv_data, va.mv_size) != 0)) {
			snprintf(rep->problem, sizeof(rep->problem),
				 "ledger record '%s' does not match the events", names[i]);
			return 1;
		}
	}
	return 0;
}

/* With both ledgers at the same head, compare everything derived. 1: mismatch. */
static int verify_compare(docket_ledger *scratch, docket_ledger *l, MDB_txn *src, docket_verify_report *rep)
{
	MDB_txn *dst = NULL;
	const struct {
		const char *name;
		size_t offset;
		int dupsort;
	} tables[] = {
		{ "sessions", offsetof(ledger_dbis, sessions), 0 },
		{ "session_events", offsetof(ledger_dbis, session_events), 1 },
		{ "invocations", offsetof(ledger_dbis, invocations), 0 },
		{ "pending", offsetof(ledger_dbis, pending), 0 },
		{ "policies", offsetof(ledger_dbis, policies), 0 },
	};
	int error;

	if ((error = store_txn_begin(&dst, scratch, MDB_RDONLY)) < 0)
		return error;
	error = compare_meta(src, l, dst, scratch, rep);
	/* projections written by an older docket (a read-only open does not
	 * upgrade them) have another layout: derived data, not compared */
	for (size_t i = 0; error == 0 && l->projection_version == DOCKET_PROJECTION_VERSION &&
			   i < sizeof(tables) / sizeof(tables[0]); i++) {
		MDB_dbi a = *(MDB_dbi *)((char *)&l->dbi + tables[i].offset);
		MDB_dbi b = *(MDB_dbi *)((char *)&scratch->dbi + tables[i].offset);

		error = compare_dbi(l, src, a, scratch, dst, b, tables[i].dupsort, tables[i].name, rep);
	}
	store_txn_abort(scratch, dst);
	return error;
}

/* A failure of the checker: exit 3 material, naming the scratch ledger. */
static int scratch_error(const char *dir, int error)
{
	docket_error_prefix("verify could not finish (nothing is known to be wrong with the ledger): "
			    "its scratch copy in %s (TMPDIR puts it elsewhere): ", dir);
	return error;
}

static int verify_run(docket_ledger *scratch, docket_ledger *l, ledger_reader *r, merkle_check *mc,
		      seg_hash *hs, docket_verify_report *rep)
{
	for (;;) {
		MDB_txn *src = NULL;
		uint64_t head = 0, last = 0;
		int error;

		/* The log decides what there is to verify, not the meta record. */
		if ((error = store_txn_begin(&src, l, MDB_RDONLY)) < 0)
			return error;
		reader_set_txn(r, src);
		if ((error = read_head(l, src, &head)) < 0 || (error = reader_last_seq(r, &last)) < 0) {
			store_txn_abort(l, src);
			if (error == DOCKET_ECORRUPT) {
				memcpy(rep->problem, docket_error_last()->message, sizeof(rep->problem));
				rep->problem[sizeof(rep->problem) - 1] = '\0';
				rep->first_bad_seq = rep->events_checked + 1;
				return 1;
			}
			return error;
		}
		if (last > head)
			head = last;
		if (rep->events_checked >= head) {
			if ((error = verify_compare(scratch, l, src, rep)) == 0)
				error = merkle_check_finish(mc, src, rep);
			store_txn_abort(l, src);
			return error;
		}
		store_txn_abort(l, src);
		while (rep->events_checked < head) {
			error = verify_chunk(scratch, l, r, mc, hs, head, rep);
			/* the scratch map is full: grow it and redo the chunk */
			if (error == DOCKET_EMAPFULL)
				error = store_grow(scratch);
			if (error < 0)
				return scratch_error(scratch->path, error);
			if (error > 0)
				return error;
		}
	}
}

int docket_ledger_verify(docket_ledger *l, docket_verify_report *rep)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *scratch = NULL;
	merkle_check *mc = NULL;
	seg_hash *hs = NULL;
	ledger_reader r;
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	int error;

	memset(rep, 0, sizeof(*rep));
	snprintf(dir, sizeof(dir), "%s/docket-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return docket_error_set(DOCKET_ESTORAGE, "cannot create a scratch directory: %s", strerror(errno));
	opts.flags = DOCKET_OPEN_CREATE;
	opts.map_size = ledger_verify_scratch_map;
	opts.map_size_max = ledger_verify_scratch_max;
	if ((error = docket_ledger_open(&scratch, dir, &opts)) < 0)
		scratch_error(dir, error);
	/* the scratch copy is thrown away: its commits need not be durable */
	else if ((error = mdb_env_set_flags(scratch->env, MDB_NOSYNC, 1)) != 0)
		error = scratch_error(dir, store_error(error, "scratch ledger"));
	else if ((error = merkle_check_new(&mc, l)) == 0 && (error = seg_hash_new(&hs)) == 0) {
		reader_init(&r, l, NULL);
		r.scan = 1;
		error = verify_run(scratch, l, &r, mc, hs, rep);
		reader_dispose(&r);
	}
	seg_hash_free(hs);
	merkle_check_free(mc);
	docket_ledger_free(scratch);
	store_remove_tree(dir);
	if (error < 0)
		return error;
	rep->ok = error == 0;
	rep->old_indexes = l->projection_version < DOCKET_PROJECTION_VERSION;
	return 0;
}
