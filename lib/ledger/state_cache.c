// SPDX-License-Identifier: Apache-2.0
/*
 * state_cache.c: a state transaction's one-entry caches: loading a
 * session's and an invocation's record (overlay, then LMDB) and writing
 * the invocation's back, and the invocation records' keys.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/* Load the session record into the cache; 0 if found, DOCKET_ENOTFOUND if
 * not. The record left is parked decoded (sess_cache.c), not encoded. */
int state_sess_load(state_txn *st, const char *session)
{
	MDB_val k, v;
	size_t len = strlen(session);
	int rc, error;

	if (st->sess_loaded && strcmp(st->sess_id, session) == 0)
		return st->sess.opened_seq ? 0 : DOCKET_ENOTFOUND;
	/* the cached invocation is one of the cached session's: its record
	 * goes into that session's record first */
	if ((error = state_inv_flush(st)) < 0 || (error = sess_cache_park(st)) < 0)
		return error;
	st->inv_loaded = 0;
	st->pending_put_ok = 0;
	st->sess_loaded = 0;
	if (len == 0 || len > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "session id must be 1..%d bytes", STATE_ID_MAX);
	memcpy(st->sess_id, session, len + 1);
	st->sess_loaded = 1;
	st->sess_dirty = 0;
	if (sess_cache_get(st, session, len))
		return st->sess.opened_seq ? 0 : DOCKET_ENOTFOUND;
	memset(&st->sess, 0, offsetof(sess_state, recent));
	k.mv_data = (void *)session;
	k.mv_size = len;
	rc = overlay_get(&st->ov, st->l->dbi.sessions, k.mv_data, k.mv_size, &v) ? 0
		: mdb_get(st->txn, st->l->dbi.sessions, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read session");
	return sess_state_decode(&st->sess, v.mv_data, v.mv_size);
}

/*
 * The key of an invocation record: the session's ordinal, then the
 * invocation id (issue 12: the session id is not repeated in every key).
 * The ordinal is the seq of the session's session.opened, in an
 * order-preserving, prefix-free encoding whose first byte gives its length:
 * 0xxxxxxx (< 2^7), 10xxxxxx +1 byte (< 2^14), 110xxxxx +2 (< 2^21),
 * 1110xxxx +3 (< 2^28), else 0xF0 and 8 bytes big-endian.
 */
size_t state_ordinal_put(uint8_t out[9], uint64_t v)
{
	static const uint8_t tag[] = { 0x00, 0x80, 0xC0, 0xE0 };

	for (size_t n = 1; n <= 4; n++)
		if (v < (uint64_t)1 << (7 * n)) {
			for (size_t i = n; i-- > 0; v >>= 8)
				out[i] = (uint8_t)v;
			out[0] |= tag[n - 1];
			return n;
		}
	out[0] = 0xF0;
	docket_be64_put(out + 1, v);
	return 9;
}

/* Length of the ordinal at the start of a key (its first byte). */
static size_t ordinal_len(uint8_t first)
{
	return first < 0x80 ? 1 : first < 0xC0 ? 2 : first < 0xE0 ? 3 : first < 0xF0 ? 4 : 9;
}

static int inv_key_build(docket_buf *out, uint64_t opened_seq, const char *invocation)
{
	uint8_t ord[9];
	size_t ilen = strlen(invocation);

	docket_buf_clear(out);
	if (ilen == 0 || ilen > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "invocation id must be 1..%d bytes", STATE_ID_MAX);
	return docket_buf_put(out, ord, state_ordinal_put(ord, opened_seq)) < 0 ? DOCKET_ENOMEM
		: docket_buf_put(out, invocation, ilen);
}

/* The invocation id of the cached record (its key past the ordinal). */
const char *state_inv_key_id(const state_txn *st, size_t *len)
{
	size_t n;

	assert(st->inv_loaded && st->inv_key.len);
	n = ordinal_len((uint8_t)st->inv_key.ptr[0]);
	*len = st->inv_key.len - n;
	return st->inv_key.ptr + n;
}

int state_inv_flush(state_txn *st)
{
	int error;

	assert(!st->inv_dirty || (st->inv_loaded && st->sess_loaded));
	if (!st->inv_dirty)
		return 0;
	if ((error = inv_state_encode(&st->scratch, &st->inv)) < 0)
		return error;
	error = st->inv_in_table
		? overlay_put(&st->ov, st->l->dbi.invocations, st->inv_key.ptr, st->inv_key.len, st->scratch.ptr,
			      st->scratch.len)
		: state_recent_put(st);
	if (error < 0)
		return error;
	st->inv_dirty = 0;
	return overlay_full(&st->ov) ? overlay_write(&st->ov, st->txn) : 0;
}

int state_inv_get(inv_state *out, docket_ledger *l, MDB_txn *txn, const char *session, const char *invocation)
{
	MDB_val k = { strlen(session), (void *)session }, v;
	size_t ilen = strlen(invocation), olen;
	uint8_t key[9 + STATE_ID_MAX];
	recent_entry e;
	sess_state *s;
	int rc, error;

	memset(out, 0, sizeof(*out));
	if ((error = ledger_projections_current(l)) < 0)
		return error;
	if (k.mv_size == 0 || k.mv_size > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "session id must be 1..%d bytes", STATE_ID_MAX);
	if (ilen == 0 || ilen > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "invocation id must be 1..%d bytes", STATE_ID_MAX);
	rc = mdb_get(txn, l->dbi.sessions, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read session");
	if (!(s = docket_malloc(sizeof(*s))))
		return docket_error_set_oom();
	if ((error = sess_state_decode(s, v.mv_data, v.mv_size)) < 0)
		goto done;
	if (!s->opened_seq) {
		error = docket_error_set(DOCKET_ECORRUPT, "session \"%s\" has no opening seq", session);
		goto done;
	}
	if ((error = state_recent_find(s, invocation, ilen, &e)) != 0) {
		if (error > 0)
			error = inv_state_decode(out, session, invocation, e.rec, e.rlen);
		goto done;
	}
	olen = state_ordinal_put(key, s->opened_seq);
	memcpy(key + olen, invocation, ilen);
	k.mv_data = key;
	k.mv_size = olen + ilen;
	rc = mdb_get(txn, l->dbi.invocations, &k, &v);
	error = rc == MDB_NOTFOUND ? DOCKET_ENOTFOUND
		: rc != 0 ? store_error(rc, "read invocation")
		: inv_state_decode(out, session, invocation, v.mv_data, v.mv_size);
done:
	docket_free(s);
	return error;
}

/* Callers load the event's session first (state.c: invariant 8 before any
 * invocation event), so st->sess is `session`'s record. */
int state_inv_load(state_txn *st, const char *session, const char *invocation)
{
	size_t slen = strlen(session), ilen = strlen(invocation), clen;
	uint8_t ord[9];
	recent_entry e;
	MDB_val k, v;
	int rc, found, error;

	if (slen + 1 + ilen > 511)
		return docket_error_set(DOCKET_EINVALID,
			"session and invocation ids together must not exceed 510 bytes");
	if ((error = state_sess_load(st, session)) < 0)
		return error == DOCKET_ENOTFOUND
			? docket_error_set(DOCKET_ETRANSITION, "session \"%s\" was never opened", session) : error;
	clen = state_ordinal_put(ord, st->sess.opened_seq);
	if (st->inv_loaded && st->inv_key.len == clen + ilen && memcmp(st->inv_key.ptr, ord, clen) == 0 &&
	    memcmp(st->inv_key.ptr + clen, invocation, ilen) == 0)
		return st->inv.intent_seq ? 0 : DOCKET_ENOTFOUND;
	if ((error = state_inv_flush(st)) < 0)
		return error;
	st->pending_put_ok = 0;
	if ((error = inv_key_build(&st->inv_key, st->sess.opened_seq, invocation)) < 0) {
		st->inv_loaded = 0;
		return error;
	}
	st->inv_loaded = 1;
	st->inv_in_table = 0;
	memset(&st->inv, 0, sizeof(st->inv));
	if ((found = state_recent_find(&st->sess, invocation, ilen, &e)) != 0)
		return found < 0 ? found : inv_state_decode(&st->inv, session, invocation, e.rec, e.rlen);
	k.mv_data = st->inv_key.ptr;
	k.mv_size = st->inv_key.len;
	rc = overlay_get(&st->ov, st->l->dbi.invocations, k.mv_data, k.mv_size, &v) ? 0
		: mdb_get(st->txn, st->l->dbi.invocations, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read invocation");
	st->inv_in_table = 1;
	return inv_state_decode(&st->inv, session, invocation, v.mv_data, v.mv_size);
}
