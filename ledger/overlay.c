/* SPDX-License-Identifier: Apache-2.0 */
/*
 * overlay.c: the projection records a state transaction changed, kept in
 * memory and written back once, sorted, when it finishes (issue 12).
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
 */
#include <stdlib.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define OVERLAY_MAX 65536u

struct overlay_entry {
	MDB_dbi dbi;
	uint32_t hash;
	size_t klen, vlen, vcap;
	uint8_t *key;
	uint8_t *val;
};

static uint32_t hash_key(MDB_dbi dbi, const uint8_t *k, size_t len)
{
	uint32_t h = 2166136261u ^ (uint32_t)dbi;

	for (size_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h ? h : 1;
}

static overlay_entry *find(const overlay *o, MDB_dbi dbi, const uint8_t *k, size_t klen, uint32_t h)
{
	if (!o->cap)
		return NULL;
	for (size_t i = h & (o->cap - 1);; i = (i + 1) & (o->cap - 1)) {
		overlay_entry *e = &o->slots[i];

		if (!e->hash || (e->hash == h && e->dbi == dbi && e->klen == klen && !memcmp(e->key, k, klen)))
			return e;
	}
}

static int grow(overlay *o)
{
	size_t ncap = o->cap ? o->cap * 2 : 1024;
	overlay_entry *old = o->slots, *slots = docket_calloc(ncap, sizeof(*slots));

	if (!slots)
		return docket_error_set(DOCKET_ENOMEM, "out of memory (overlay)");
	size_t oldcap = o->cap;

	o->slots = slots;
	o->cap = ncap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].hash)
			*find(o, old[i].dbi, old[i].key, old[i].klen, old[i].hash) = old[i];
	docket_free(old);
	return 0;
}

int overlay_put(overlay *o, MDB_dbi dbi, const void *k, size_t klen, const void *v, size_t vlen)
{
	uint32_t h = hash_key(dbi, k, klen);
	overlay_entry *e;
	int error;

	if ((o->n + 1) * 4 > o->cap * 3 && (error = grow(o)) < 0)
		return error;
	e = find(o, dbi, k, klen, h);
	if (!e->hash) {
		if (!(e->key = docket_malloc(klen ? klen : 1)))
			return docket_error_set(DOCKET_ENOMEM, "out of memory (overlay)");
		memcpy(e->key, k, klen);
		e->klen = klen;
		e->dbi = dbi;
		e->hash = h;
		e->val = NULL;
		e->vcap = 0;
		o->n++;
	}
	if (vlen > e->vcap) {
		uint8_t *nv = docket_realloc(e->val, vlen);

		if (!nv)
			return docket_error_set(DOCKET_ENOMEM, "out of memory (overlay)");
		e->val = nv;
		e->vcap = vlen;
	}
	memcpy(e->val, v, vlen);
	e->vlen = vlen;
	return 0;
}

int overlay_get(const overlay *o, MDB_dbi dbi, const void *k, size_t klen, MDB_val *v)
{
	const overlay_entry *e = find(o, dbi, k, klen, hash_key(dbi, k, klen));

	if (!e || !e->hash)
		return 0;
	v->mv_data = e->val;
	v->mv_size = e->vlen;
	return 1;
}

int overlay_full(const overlay *o)
{
	return o->n >= OVERLAY_MAX;
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

static void release(overlay *o)
{
	for (size_t i = 0; i < o->cap; i++) {
		docket_free(o->slots[i].key);
		docket_free(o->slots[i].val);
	}
	memset(o->slots, 0, o->cap * sizeof(*o->slots));
	o->n = 0;
}

int overlay_write(overlay *o, MDB_txn *txn)
{
	docket_buf last = DOCKET_BUF_INIT;
	overlay_entry **order;
	size_t n = 0;
	int has = 0, error = 0;

	if (!o->n)
		return 0;
	if (!(order = docket_malloc(o->n * sizeof(*order))))
		return docket_error_set(DOCKET_ENOMEM, "out of memory (overlay)");
	for (size_t i = 0; i < o->cap; i++)
		if (o->slots[i].hash)
			order[n++] = &o->slots[i];
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
	if (error == 0)
		release(o);
	return error;
}

void overlay_dispose(overlay *o)
{
	if (o->slots)
		release(o);
	docket_free(o->slots);
	memset(o, 0, sizeof(*o));
}
