/* SPDX-License-Identifier: Apache-2.0 */
/*
 * overlay.c: the projection records a state transaction changed, kept in
 * memory and written back once, sorted, when it finishes (issue 12); and
 * the checkpoints that let one transaction hold many isolated groups.
 *
 * The state machine's one-entry caches used to put a record every time they
 * switched to another session or invocation: with calls interleaved across
 * sessions, a bulk append put every session record once per event and the
 * invocation records in an order that left their leaves half full. Now a
 * switch puts the record here; reads look here first; state_txn_finish()
 * writes every record once, in key order, and with MDB_APPEND where the key
 * sorts after every key the table holds (a fresh ledger's tables then fill
 * their pages completely). Past OVERLAY_MAX records the overlay is written
 * early (memory stays bounded on any batch).
 *
 * Writes to the tables the state machine never reads back inside its
 * transaction (the pending index, the per-session event index, policy
 * documents) are deferred too (overlay_defer): a log in arrival order,
 * applied in key order at write-back (the last write of a key wins; every
 * duplicate of a DUPSORT table is added). An invocation that starts and
 * ends in one transaction then never touches the pending index.
 *
 * Checkpoints (state_checkpoint, state_rollback): serve commits a batch of
 * requests in one transaction, and a refused request must leave no trace.
 * A checkpoint copies the state transaction's scalars and caches; from then
 * on the first change of each overlay record saves its old value (or its
 * absence), and the deferred log and its arena remember their length.
 * Rolling back restores those and cuts the log; nothing reached LMDB in
 * between, because no early write-back happens while a checkpoint is set.
 * That replaces one nested LMDB transaction (and one state begin/finish,
 * with their meta reads and writes) per request.
 */
#include <stdlib.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/htab.h"

#define OVERLAY_MAX 65536u
/* Deferred writes kept before they are applied alone (~150 B each): apart
 * from the records, so that a bulk append still writes each record once. */
#define OVERLAY_OPS_MAX 65536u

struct overlay_entry {
	MDB_dbi dbi;
	uint32_t hash;           /* 0: a free slot */
	uint32_t gen;            /* the checkpoint its old value was saved for */
	int live;                /* 0: taken back by a rollback (reads as absent) */
	size_t klen, vlen, vcap;
	uint8_t *key;
	uint8_t *val;
};

struct overlay_op {
	MDB_dbi dbi;
	overlay_op_kind kind;
	size_t koff, klen, voff, vlen;
	size_t order;
};

/* A record as it was at the checkpoint: absent, or its value in o->old. */
struct overlay_undo {
	MDB_dbi dbi;
	uint32_t hash;
	const uint8_t *key;      /* the entry's own copy (entries are never freed
				  * before the write-back) */
	size_t klen;
	int had;
	size_t off, len;
};

static uint32_t hash_key(MDB_dbi dbi, const uint8_t *k, size_t len)
{
	return docket_hash(DOCKET_HASH_SEED ^ (uint32_t)dbi, k, len);
}

/* What a lookup compares an entry against. */
typedef struct {
	MDB_dbi dbi;
	const uint8_t *k;
	size_t klen;
} entry_key;

static int entry_is(const void *slot, const void *key)
{
	const overlay_entry *e = slot;
	const entry_key *x = key;

	return e->dbi == x->dbi && e->klen == x->klen && !memcmp(e->key, x->k, x->klen);
}

/* The entry of (dbi, k), or the free slot where it goes; NULL before the
 * first put. */
static overlay_entry *find(const overlay *o, MDB_dbi dbi, const uint8_t *k, size_t klen, uint32_t h)
{
	entry_key key = { dbi, k, klen };

	return docket_htab_find(&o->t, h, entry_is, &key);
}

/* Before the first change of `e` since the checkpoint: remember it. */
static int save_old(overlay *o, overlay_entry *e, MDB_dbi dbi, const uint8_t *k, size_t klen, uint32_t h)
{
	overlay_undo *u;
	int error;

	if (!o->marked || (e->hash && e->gen == o->gen))
		return 0;
	if (o->nundo == o->undo_cap) {
		size_t ncap = o->undo_cap ? o->undo_cap * 2 : 16;
		overlay_undo *nu = docket_realloc(o->undo, ncap * sizeof(*nu));

		if (!nu)
			return docket_error_set_oom();
		o->undo = nu;
		o->undo_cap = ncap;
	}
	u = &o->undo[o->nundo];
	u->dbi = dbi;
	u->hash = h;
	u->key = e->hash ? e->key : k; /* a new entry: fixed up once its key is copied */
	u->klen = klen;
	u->had = e->hash && e->live;
	u->off = o->old.len;
	u->len = u->had ? e->vlen : 0;
	if (u->had && (error = docket_buf_put(&o->old, e->val, e->vlen)) < 0)
		return error;
	o->nundo++;
	return 0;
}

void overlay_init(overlay *o)
{
	docket_htab t = DOCKET_HTAB_INIT(overlay_entry);

	o->t = t;
}

int overlay_put(overlay *o, MDB_dbi dbi, const void *k, size_t klen, const void *v, size_t vlen)
{
	uint32_t h = hash_key(dbi, k, klen);
	overlay_entry *e;
	int error;

	if ((error = docket_htab_reserve(&o->t)) < 0)
		return error;
	e = find(o, dbi, k, klen, h);
	if ((error = save_old(o, e, dbi, k, klen, h)) < 0)
		return error;
	if (!e->hash) {
		if (!(e->key = docket_malloc(klen ? klen : 1))) {
			if (o->marked)
				o->nundo--; /* nothing changed */
			return docket_error_set_oom();
		}
		memcpy(e->key, k, klen);
		e->klen = klen;
		e->dbi = dbi;
		e->hash = h;
		e->val = NULL;
		e->vcap = 0;
		e->vlen = 0;
		e->live = 0;
		docket_htab_take(&o->t, e, h);
		if (o->marked)
			o->undo[o->nundo - 1].key = e->key;
	}
	e->gen = o->gen;
	if (vlen > e->vcap) {
		uint8_t *nv = docket_realloc(e->val, vlen);

		if (!nv)
			return docket_error_set_oom();
		e->val = nv;
		e->vcap = vlen;
	}
	memcpy(e->val, v, vlen);
	e->vlen = vlen;
	e->live = 1;
	return 0;
}

int overlay_defer(overlay *o, MDB_dbi dbi, overlay_op_kind kind, const void *k, size_t klen,
		  const void *v, size_t vlen)
{
	overlay_op *op;
	size_t koff = o->arena.len;
	int error;

	if (o->nops == o->ops_cap) {
		size_t ncap = o->ops_cap ? o->ops_cap * 2 : 64;
		overlay_op *nops = docket_realloc(o->ops, ncap * sizeof(*nops));

		if (!nops)
			return docket_error_set_oom();
		o->ops = nops;
		o->ops_cap = ncap;
	}
	if ((error = docket_buf_put(&o->arena, k, klen)) < 0 || (error = docket_buf_put(&o->arena, v, vlen)) < 0) {
		o->arena.len = koff;
		return error;
	}
	op = &o->ops[o->nops];
	op->dbi = dbi;
	op->kind = kind;
	op->koff = koff;
	op->klen = klen;
	op->voff = koff + klen;
	op->vlen = vlen;
	op->order = o->nops++;
	return 0;
}

overlay_ref overlay_last(const overlay *o)
{
	overlay_ref r = { o->ops_epoch, o->nops - 1 };

	return r;
}

int overlay_cancel(overlay *o, overlay_ref ref)
{
	if (ref.epoch != o->ops_epoch || ref.index >= o->nops || (o->marked && ref.index < o->ops_mark) ||
	    o->ops[ref.index].kind != OV_PUT)
		return 0;
	o->ops[ref.index].kind = OV_NONE;
	return 1;
}

int overlay_get(const overlay *o, MDB_dbi dbi, const void *k, size_t klen, MDB_val *v)
{
	const overlay_entry *e = find(o, dbi, k, klen, hash_key(dbi, k, klen));

	if (!e || !e->hash || !e->live)
		return 0;
	v->mv_data = e->val;
	v->mv_size = e->vlen;
	return 1;
}

int overlay_full(const overlay *o)
{
	return !o->marked && o->t.n >= OVERLAY_MAX;
}

/* LMDB's default key order: bytes, then length. */
static int key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

static int entry_cmp(const void *pa, const void *pb)
{
	const overlay_entry *a = *(overlay_entry *const *)pa, *b = *(overlay_entry *const *)pb;

	if (a->dbi != b->dbi)
		return a->dbi < b->dbi ? -1 : 1;
	return key_cmp(a->key, a->klen, b->key, b->klen);
}

/* The last key of `dbi` (copied into `last`); *has 0 when it is empty. */
static int last_key(MDB_txn *txn, MDB_dbi dbi, docket_buf *last, int *has)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc;

	*has = 0;
	docket_buf_clear(last);
	if ((rc = mdb_cursor_open(txn, dbi, &cur)) != 0)
		return store_error(rc, "open cursor");
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	mdb_cursor_close(cur);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return store_error(rc, "read index");
	*has = 1;
	return docket_buf_put(last, k.mv_data, k.mv_size);
}

static void ops_release(overlay *o)
{
	o->ops_epoch++;
	o->nops = o->ops_mark = 0;
	docket_buf_clear(&o->arena);
	o->arena_mark = 0;
}

static void release(overlay *o)
{
	for (size_t i = 0; o->t.n && i < o->t.cap; i++) {
		overlay_entry *e = docket_htab_at(&o->t, i);

		if (e) {
			docket_free(e->key);
			docket_free(e->val);
		}
	}
	if (o->t.n)
		docket_htab_clear(&o->t);
	o->nundo = 0;
	docket_buf_clear(&o->old);
	ops_release(o);
}

static int records_write(overlay *o, MDB_txn *txn)
{
	docket_buf last = DOCKET_BUF_INIT;
	overlay_entry **order;
	size_t n = 0;
	int has = 0, error = 0;

	if (!o->t.n)
		return 0;
	if (!(order = docket_malloc(o->t.n * sizeof(*order))))
		return docket_error_set_oom();
	for (size_t i = 0; i < o->t.cap; i++) {
		overlay_entry *e = docket_htab_at(&o->t, i);

		if (e && e->live)
			order[n++] = e;
	}
	qsort(order, n, sizeof(*order), entry_cmp);
	for (size_t i = 0; i < n && error == 0; i++) {
		overlay_entry *e = order[i];
		MDB_val k = { e->klen, e->key }, v = { e->vlen, e->val };
		unsigned flags = 0;
		int rc;

		if ((i == 0 || order[i - 1]->dbi != e->dbi) && (error = last_key(txn, e->dbi, &last, &has)) < 0)
			break;
		if (!has || key_cmp(e->key, e->klen, (const uint8_t *)last.ptr, last.len) > 0) {
			flags = MDB_APPEND;
			has = 1;
			docket_buf_clear(&last);
			if ((error = docket_buf_put(&last, e->key, e->klen)) < 0)
				break;
		}
		if ((rc = mdb_put(txn, e->dbi, &k, &v, flags)) != 0)
			error = store_error(rc, "write index");
	}
	docket_free(order);
	docket_buf_dispose(&last);
	return error;
}

/* Deferred writes in key order; a key's writes in arrival order. */
static int op_cmp_in(const overlay *o, const overlay_op *a, const overlay_op *b)
{
	int c;

	if (a->dbi != b->dbi)
		return a->dbi < b->dbi ? -1 : 1;
	c = key_cmp((const uint8_t *)o->arena.ptr + a->koff, a->klen, (const uint8_t *)o->arena.ptr + b->koff, b->klen);
	if (c)
		return c;
	return (a->order > b->order) - (a->order < b->order);
}

typedef struct op_ref {
	const overlay *o;
	const overlay_op *op;
} op_ref;

static int op_cmp(const void *pa, const void *pb)
{
	const op_ref *a = pa, *b = pb;

	return op_cmp_in(a->o, a->op, b->op);
}

static int same_key(const overlay *o, const overlay_op *a, const overlay_op *b)
{
	return a->dbi == b->dbi && a->klen == b->klen &&
	       memcmp(o->arena.ptr + a->koff, o->arena.ptr + b->koff, a->klen) == 0;
}

static int op_apply(const overlay *o, const overlay_op *op, MDB_txn *txn)
{
	MDB_val k = { op->klen, o->arena.ptr + op->koff }, v = { op->vlen, o->arena.ptr + op->voff };
	int rc;

	switch (op->kind) {
	case OV_PUT:
		rc = mdb_put(txn, op->dbi, &k, &v, 0);
		break;
	case OV_PUT_NEW:
		rc = mdb_put(txn, op->dbi, &k, &v, MDB_NOOVERWRITE);
		rc = rc == MDB_KEYEXIST ? 0 : rc;
		break;
	case OV_DEL:
		rc = mdb_del(txn, op->dbi, &k, NULL);
		rc = rc == MDB_NOTFOUND ? 0 : rc;
		break;
	default: /* OV_ADD_DUP */
		if ((rc = mdb_put(txn, op->dbi, &k, &v, MDB_APPENDDUP)) == MDB_KEYEXIST)
			rc = mdb_put(txn, op->dbi, &k, &v, 0);
		break;
	}
	return rc ? store_error(rc, "write index") : 0;
}

static int ops_write(overlay *o, MDB_txn *txn)
{
	op_ref *order;
	size_t n = 0;
	int error = 0;

	if (!o->nops)
		return 0;
	if (!(order = docket_malloc(o->nops * sizeof(*order))))
		return docket_error_set_oom();
	for (size_t i = 0; i < o->nops; i++) {
		if (o->ops[i].kind == OV_NONE)
			continue; /* taken back (overlay_cancel) */
		order[n].o = o;
		order[n++].op = &o->ops[i];
	}
	qsort(order, n, sizeof(*order), op_cmp);
	for (size_t i = 0; i < n && error == 0; i++) {
		const overlay_op *op = order[i].op;

		/* of a key's puts and deletes only the last counts */
		if (op->kind != OV_ADD_DUP && i + 1 < n && same_key(o, op, order[i + 1].op))
			continue;
		error = op_apply(o, op, txn);
	}
	docket_free(order);
	return error;
}

int overlay_write(overlay *o, MDB_txn *txn)
{
	int error;

	if ((error = records_write(o, txn)) < 0 || (error = ops_write(o, txn)) < 0)
		return error;
	release(o);
	return 0;
}

int overlay_write_due(overlay *o, MDB_txn *txn)
{
	int error;

	if (o->marked)
		return 0;
	if (overlay_full(o))
		return overlay_write(o, txn);
	if (o->nops < OVERLAY_OPS_MAX)
		return 0;
	if ((error = ops_write(o, txn)) < 0)
		return error;
	ops_release(o);
	return 0;
}

void overlay_dispose(overlay *o)
{
	if (o->t.slots)
		release(o);
	docket_htab_dispose(&o->t);
	docket_free(o->ops);
	docket_free(o->undo);
	docket_buf_dispose(&o->arena);
	docket_buf_dispose(&o->old);
	memset(o, 0, sizeof(*o));
}

/* ---- checkpoints ---- */

/* Set a checkpoint (writing back first when the overlay is full). */
static int overlay_mark(overlay *o, MDB_txn *txn)
{
	int error;

	o->marked = 0;
	if ((error = overlay_write_due(o, txn)) < 0)
		return error;
	o->marked = 1;
	if (++o->gen == 0)
		o->gen = 1;
	o->nundo = 0;
	docket_buf_clear(&o->old);
	o->ops_mark = o->nops;
	o->arena_mark = o->arena.len;
	return 0;
}

static void overlay_rollback(overlay *o)
{
	for (size_t i = o->nundo; i-- > 0;) {
		const overlay_undo *u = &o->undo[i];
		overlay_entry *e = find(o, u->dbi, u->key, u->klen, u->hash);

		e->live = u->had;
		e->gen = 0;
		if (u->had) {
			if (u->len) /* it fitted then: vcap only grows */
				memcpy(e->val, o->old.ptr + u->off, u->len);
			e->vlen = u->len;
		}
	}
	o->nundo = 0;
	docket_buf_clear(&o->old);
	o->nops = o->ops_mark;
	o->arena.len = o->arena_mark;
	o->ops_epoch++;
}

struct state_mark {
	uint64_t head_seq, epoch, clock_us, payload_bytes, frame_bytes;
	uint8_t head_hash[LEDGER_HASH_LEN];
	char sess_id[STATE_ID_MAX + 1];
	int sess_loaded, sess_dirty, inv_loaded, inv_dirty, inv_in_table;
	sess_state sess;
	inv_state inv;
	docket_buf inv_key;
};

int state_checkpoint(state_txn *st)
{
	state_mark *m = st->mark;
	int error;

	if (!m && !(m = st->mark = docket_calloc(1, sizeof(*m))))
		return docket_error_set_oom();
	docket_buf_clear(&m->inv_key);
	if ((error = docket_buf_put(&m->inv_key, st->inv_key.ptr, st->inv_key.len)) < 0)
		return error;
	m->head_seq = st->head_seq;
	memcpy(m->head_hash, st->head_hash, LEDGER_HASH_LEN);
	m->epoch = st->epoch;
	m->clock_us = st->clock_us;
	m->payload_bytes = st->payload_bytes;
	m->frame_bytes = st->frame_bytes;
	memcpy(m->sess_id, st->sess_id, sizeof(m->sess_id));
	m->sess_loaded = st->sess_loaded;
	m->sess_dirty = st->sess_dirty;
	sess_state_copy(&m->sess, &st->sess);
	m->inv_loaded = st->inv_loaded;
	m->inv_dirty = st->inv_dirty;
	m->inv_in_table = st->inv_in_table;
	m->inv = st->inv;
	/* the parked records into the overlay, whose rollback then covers
	 * them (sess_cache.c, invariant 3) */
	if ((error = sess_cache_flush(st)) < 0)
		return error;
	return overlay_mark(&st->ov, st->txn);
}

void state_rollback(state_txn *st)
{
	state_mark *m = st->mark;
	docket_buf key;

	if (!m || !st->ov.marked)
		return;
	st->head_seq = m->head_seq;
	memcpy(st->head_hash, m->head_hash, LEDGER_HASH_LEN);
	st->epoch = m->epoch;
	st->clock_us = m->clock_us;
	st->payload_bytes = m->payload_bytes;
	st->frame_bytes = m->frame_bytes;
	memcpy(st->sess_id, m->sess_id, sizeof(st->sess_id));
	st->sess_loaded = m->sess_loaded;
	st->sess_dirty = m->sess_dirty;
	sess_state_copy(&st->sess, &m->sess);
	st->inv_loaded = m->inv_loaded;
	st->inv_dirty = m->inv_dirty;
	st->inv_in_table = m->inv_in_table;
	st->inv = m->inv;
	key = st->inv_key; /* a swap: rolling back allocates nothing */
	st->inv_key = m->inv_key;
	m->inv_key = key;
	st->payload_ok = 0;
	st->lin_epoch = 0;
	sess_cache_drop(&st->cache);
	overlay_rollback(&st->ov);
}

void state_mark_free(state_mark *m)
{
	if (!m)
		return;
	docket_buf_dispose(&m->inv_key);
	docket_free(m);
}
