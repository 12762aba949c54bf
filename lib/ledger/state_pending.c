// SPDX-License-Identifier: Apache-2.0
/*
 * state_pending.c: the pending index (`pending`: the unfinished
 * invocations whose records are in the `invocations` table), its sentinel
 * and the count of unfinished invocations (meta "pending_count").
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/*
 * The pending index lists only the unfinished invocations whose records are
 * in `invocations`: one still in its session's recent list is listed from
 * its record there (docket_ledger_pending), so the common call, whose
 * outcome comes before eight more calls of its session begin, never writes
 * the index (a page less for the commits of its intent and its outcome).
 * An unfinished record that moves to the table gets its key here.
 */
static int pending_key(uint8_t *out, const char *session, const char *id, size_t ilen)
{
	size_t slen = strlen(session);

	memcpy(out, session, slen + 1);
	memcpy(out + slen + 1, id, ilen);
	return (int)(slen + 1 + ilen);
}

int state_pending_evicted(state_txn *st, const recent_entry *e)
{
	uint8_t key[2 * STATE_ID_MAX + 1];
	inv_state inv;
	int error;

	if ((error = inv_record_decode(&inv, e->rec, e->rlen)) < 0)
		return error;
	if (inv.phase == DOCKET__V1__PHASE__PHASE_COMPLETED)
		return 0;
	return overlay_defer(&st->ov, st->l->dbi.pending, OV_PUT, key,
			     (size_t)pending_key(key, st->sess_id, (const char *)e->id, e->ilen), NULL, 0);
}


/*
 * The pending index holds one more key, a single NUL byte (no session id
 * can start with one), so that it never becomes empty: LMDB frees the root
 * page of a tree that empties and allocates a fresh one at the next put, so
 * a tree emptied once per invocation burned a page per call (issue 12).
 */
static const char pending_sentinel[1] = { 0 };

/* The count of unfinished invocations (meta "pending_count", in the main
 * table), kept through the overlay so that a checkpoint takes it back. */
static int pending_count_add(state_txn *st, int delta)
{
	static const char name[] = "pending_count";
	MDB_val k = { sizeof(name) - 1, (void *)name }, v;
	uint8_t be[8];
	uint64_t n = 0;
	int rc = overlay_get(&st->ov, st->l->dbi.main, k.mv_data, k.mv_size, &v) ? 0
		: mdb_get(st->txn, st->l->dbi.main, &k, &v);

	if (rc != 0 && rc != MDB_NOTFOUND)
		return store_error(rc, "read pending count");
	if (rc == 0 && v.mv_size != 8)
		return docket_error_set(DOCKET_ECORRUPT, "meta pending_count: bad length %zu", v.mv_size);
	if (rc == 0)
		n = docket_be64_get(v.mv_data);
	if (delta < 0 && n == 0)
		return docket_error_set(DOCKET_ECORRUPT, "meta pending_count: below zero");
	docket_be64_put(be, delta < 0 ? n - 1 : n + 1);
	return overlay_put(&st->ov, st->l->dbi.main, k.mv_data, k.mv_size, be, sizeof(be));
}

int state_pending_set(state_txn *st, int present)
{
	MDB_dbi dbi = st->l->dbi.pending;
	size_t ilen;
	const char *id = state_inv_key_id(st, &ilen);
	int error;

	assert(st->sess_loaded && st->inv_loaded);
	if ((error = pending_count_add(st, present ? 1 : -1)) < 0)
		return error;
	/* in its session's recent list: listed from its record there */
	if (!st->inv_in_table)
		return 0;
	/* pending keys name the session (listing by session is a prefix scan) */
	docket_buf_clear(&st->scratch);
	if ((error = docket_buf_put(&st->scratch, st->sess_id, strlen(st->sess_id) + 1)) < 0 ||
	    (error = docket_buf_put(&st->scratch, id, ilen)) < 0)
		return error;
	/* deferred (overlay.c): the sentinel sorts first, so it is in place
	 * before any delete */
	if (present) {
		if ((error = overlay_defer(&st->ov, dbi, OV_PUT, st->scratch.ptr, st->scratch.len, NULL, 0)) < 0)
			return error;
		st->pending_put = overlay_last(&st->ov);
		st->pending_put_ok = 1;
		return 0;
	}
	/* the sentinel once per log (a rollback or a write-back starts a new
	 * one): it is put once and stays */
	if (!st->sentinel_ok || st->sentinel_epoch != st->ov.ops_epoch) {
		if ((error = overlay_defer(&st->ov, dbi, OV_PUT_NEW, pending_sentinel, sizeof(pending_sentinel),
					   NULL, 0)) < 0)
			return error;
		st->sentinel_epoch = st->ov.ops_epoch;
		st->sentinel_ok = 1;
	}
	/* the intent's put still in the log: the key was absent before it
	 * (invariant 1), so taking the put back is the delete */
	if (st->pending_put_ok && overlay_cancel(&st->ov, st->pending_put)) {
		st->pending_put_ok = 0;
		return 0;
	}
	return overlay_defer(&st->ov, dbi, OV_DEL, st->scratch.ptr, st->scratch.len, NULL, 0);
}

int state_pending_is_sentinel(const void *key, size_t len)
{
	return len == sizeof(pending_sentinel) && memcmp(key, pending_sentinel, len) == 0;
}

int state_pending_count(docket_ledger *l, MDB_txn *txn, uint64_t *out)
{
	MDB_val k = { sizeof(pending_sentinel), (void *)pending_sentinel }, v;
	MDB_stat ms;
	int rc, error;

	*out = 0;
	if ((error = store_meta_get(txn, l, "pending_count", &v)) == 0) {
		if (v.mv_size != 8)
			return docket_error_set(DOCKET_ECORRUPT, "meta pending_count: bad length %zu", v.mv_size);
		*out = docket_be64_get(v.mv_data);
		return 0;
	}
	if (error != DOCKET_ENOTFOUND)
		return error;
	/* none yet, or projections older than version 7: the index holds
	 * every unfinished invocation */
	if ((rc = mdb_stat(txn, l->dbi.pending, &ms)) != 0)
		return store_error(rc, "read pending");
	*out = ms.ms_entries;
	if ((rc = mdb_get(txn, l->dbi.pending, &k, &v)) == 0 && *out)
		(*out)--;
	else if (rc != 0 && rc != MDB_NOTFOUND)
		return store_error(rc, "read pending");
	return 0;
}
