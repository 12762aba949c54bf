// SPDX-License-Identifier: Apache-2.0
/*
 * state_lineage.c: lineages (invariant 7, per lineage): each runtime
 * lineage's epoch, the lineage each epoch was issued to, and each session's
 * owner, kept in `meta`.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/* ---- lineages (invariant 7, per lineage) ---- */

/* Key prefixes in `meta`: lineage (be32 uid, name), epoch (be64), session owner (id). */
static const char LIN_LINEAGE[] = "\x01lineage/", LIN_EPOCH[] = "\x01epoch/", LIN_OWNER[] = "\x01owner/";
#define LIN_PREFIX_LEN(p) (sizeof(p) - 1)

static size_t lineage_key(uint8_t *out, size_t cap, uint32_t uid, const char *name)
{
	size_t nlen = strlen(name), n = LIN_PREFIX_LEN(LIN_LINEAGE);

	if (n + 4 + nlen > cap)
		return 0;
	memcpy(out, LIN_LINEAGE, n);
	docket_be32_put(out + n, uid);
	memcpy(out + n + 4, name, nlen);
	return n + 4 + nlen;
}

static size_t epoch_key(uint8_t out[32], uint64_t epoch)
{
	size_t n = LIN_PREFIX_LEN(LIN_EPOCH);

	memcpy(out, LIN_EPOCH, n);
	docket_be64_put(out + n, epoch);
	return n + 8;
}

/* Read a meta record: the transaction's overlay first, then `txn`. 0, DOCKET_ENOTFOUND. */
int state_meta_get(state_txn *st, docket_ledger *l, MDB_txn *txn, const void *k, size_t klen, MDB_val *v)
{
	MDB_val key = { klen, (void *)k };
	int rc;

	if (st && overlay_get(&st->ov, l->dbi.meta, k, klen, v))
		return 0;
	rc = mdb_get(txn, l->dbi.meta, &key, v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	return rc == 0 ? 0 : store_error(rc, "read meta record");
}

/* The lineage record of (uid, name) into out (epoch, seq, time). */
static int lineage_read(state_txn *st, docket_ledger *l, MDB_txn *txn, state_lineage *out)
{
	uint8_t key[LIN_PREFIX_LEN(LIN_LINEAGE) + 4 + STATE_ID_MAX];
	size_t klen = lineage_key(key, sizeof(key), out->uid, out->name);
	MDB_val v;
	int error;

	if (!klen)
		return docket_error_set(DOCKET_EINVALID, "runtime name too long");
	if ((error = state_meta_get(st, l, txn, key, klen, &v)) < 0)
		return error;
	if (v.mv_size < 16 || v.mv_size - 16 >= STATE_TIME_MAX)
		return docket_error_set(DOCKET_ECORRUPT, "bad lineage record of runtime \"%s\"", out->name);
	out->epoch = docket_be64_get(v.mv_data);
	out->seq = docket_be64_get((const uint8_t *)v.mv_data + 8);
	memcpy(out->time, (const uint8_t *)v.mv_data + 16, v.mv_size - 16);
	out->time[v.mv_size - 16] = '\0';
	return 0;
}

static int epoch_lineage(state_txn *st, docket_ledger *l, MDB_txn *txn, uint64_t epoch, state_lineage *out)
{
	uint8_t key[32];
	size_t klen = epoch_key(key, epoch);
	MDB_val v;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = state_meta_get(st, l, txn, key, klen, &v)) < 0)
		return error;
	if (v.mv_size < 4 || v.mv_size - 4 > STATE_ID_MAX)
		return docket_error_set(DOCKET_ECORRUPT, "bad epoch record of epoch %llu", (unsigned long long)epoch);
	out->uid = docket_be32_get(v.mv_data);
	memcpy(out->name, (const uint8_t *)v.mv_data + 4, v.mv_size - 4);
	out->name[v.mv_size - 4] = '\0';
	return lineage_read(st, l, txn, out);
}

int state_lineage_start(state_txn *st, const docket_event *ev, uint64_t seq)
{
	const Docket__V1__RuntimeStarted *b = ev->runtime_started;
	uint8_t key[LIN_PREFIX_LEN(LIN_LINEAGE) + 4 + STATE_ID_MAX], ekey[32];
	uint8_t val[16 + STATE_TIME_MAX];
	uint32_t uid = b->uid_set ? b->uid : LINEAGE_UID_NONE;
	size_t klen = lineage_key(key, sizeof(key), uid, b->runtime ? b->runtime : "");
	size_t tlen = strlen(ev->time), nlen = klen - LIN_PREFIX_LEN(LIN_LINEAGE);
	int error;

	assert(ev->body_case == DOCKET__V1__EVENT__BODY_RUNTIME_STARTED && ev->epoch);
	st->lin_epoch = 0;
	if (!klen || tlen >= STATE_TIME_MAX)
		return docket_error_set(DOCKET_EINVALID, "runtime.started: runtime name or time too long");
	docket_be64_put(val, ev->epoch);
	docket_be64_put(val + 8, seq);
	memcpy(val + 16, ev->time, tlen);
	if ((error = overlay_put(&st->ov, st->l->dbi.meta, key, klen, val, 16 + tlen)) < 0)
		return error;
	/* the epoch record's value is the lineage key without its prefix */
	return overlay_put(&st->ov, st->l->dbi.meta, ekey, epoch_key(ekey, ev->epoch),
			   key + LIN_PREFIX_LEN(LIN_LINEAGE), nlen);
}

int state_epoch_lineage(state_txn *st, uint64_t epoch, state_lineage *out)
{
	int error;

	if (epoch && st->lin_epoch == epoch) {
		*out = st->lin;
		return st->lin_error;
	}
	error = epoch_lineage(st, st->l, st->txn, epoch, out);
	st->lin_epoch = error == 0 || error == DOCKET_ENOTFOUND ? epoch : 0;
	st->lin_error = error;
	st->lin = *out;
	return error;
}

static size_t owner_key(uint8_t *out, size_t cap, const char *session)
{
	size_t n = LIN_PREFIX_LEN(LIN_OWNER), slen = strlen(session);

	if (n + slen > cap)
		return 0;
	memcpy(out, LIN_OWNER, n);
	memcpy(out + n, session, slen);
	return n + slen;
}

int state_session_owner_set(state_txn *st, const char *session, uint64_t epoch)
{
	uint8_t key[LIN_PREFIX_LEN(LIN_OWNER) + STATE_ID_MAX], be[8];
	size_t klen = owner_key(key, sizeof(key), session);

	assert(epoch);
	if (!klen)
		return docket_error_set(DOCKET_EINVALID, "session id too long");
	docket_be64_put(be, epoch);
	return overlay_put(&st->ov, st->l->dbi.meta, key, klen, be, sizeof(be));
}

int state_lineage_same(const state_lineage *a, const state_lineage *b)
{
	return a->uid == b->uid && strcmp(a->name, b->name) == 0;
}

int ledger_epoch_lineage(docket_ledger *l, uint64_t epoch, state_lineage *out)
{
	MDB_txn *txn = NULL;
	int error;

	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	error = epoch_lineage(NULL, l, txn, epoch, out);
	store_txn_abort(l, txn);
	return error;
}

int ledger_session_owner(docket_ledger *l, const char *session, state_lineage *out)
{
	uint8_t key[LIN_PREFIX_LEN(LIN_OWNER) + STATE_ID_MAX];
	size_t klen = owner_key(key, sizeof(key), session);
	MDB_txn *txn = NULL;
	MDB_val v;
	int error;

	memset(out, 0, sizeof(*out));
	if (!klen)
		return DOCKET_ENOTFOUND;
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	error = state_meta_get(NULL, l, txn, key, klen, &v);
	if (error == 0 && v.mv_size != 8)
		error = docket_error_set(DOCKET_ECORRUPT, "bad owner record of session \"%s\"", session);
	if (error == 0)
		error = epoch_lineage(NULL, l, txn, docket_be64_get(v.mv_data), out);
	store_txn_abort(l, txn);
	return error;
}

/* Drop every meta record under `prefix` (reindex rebuilds them). */
int state_meta_drop_prefix(docket_ledger *l, MDB_txn *txn, const char *prefix)
{
	size_t plen = strlen(prefix);
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc = mdb_cursor_open(txn, l->dbi.meta, &cur);

	while (rc == 0) {
		k.mv_size = plen;
		k.mv_data = (void *)prefix;
		if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE)) != 0)
			break;
		if (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)
			break;
		rc = mdb_cursor_del(cur, 0);
	}
	if (cur)
		mdb_cursor_close(cur);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : store_error(rc, "clear meta records");
}


/* Drop every lineage, epoch and owner record (state_clear_projections). */
int state_lineage_clear(docket_ledger *l, MDB_txn *txn)
{
	static const char *const lineage_prefixes[] = { LIN_LINEAGE, LIN_EPOCH, LIN_OWNER };

	for (size_t i = 0; i < sizeof(lineage_prefixes) / sizeof(lineage_prefixes[0]); i++) {
		int error = state_meta_drop_prefix(l, txn, lineage_prefixes[i]);

		if (error < 0)
			return error;
	}
	return 0;
}
