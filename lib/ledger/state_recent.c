// SPDX-License-Identifier: Apache-2.0
/*
 * state_recent.c: the recent list, the latest invocations' records kept
 * in their session's record, and their move to the `invocations` table.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/*
 * Recent invocations (issue 12, projection version 6). A session record
 * carries the records of the session's latest SESS_RECENT invocations, in
 * the order they began: per entry the invocation id and its compact record
 * (inv_state_encode), each after its LEB128 length. Serve commits touch
 * every busy session's record anyway; with the records of live calls in
 * them, a commit no longer writes one `invocations` leaf per session.
 *
 * When an invocation begins and the list is full, every entry moves to
 * `invocations` (one sorted run under the session's ordinal: one leaf per
 * SESS_RECENT calls of a session) and the list restarts with it. Whether a
 * record is in the list or in the table then depends only on the order in
 * which the session's invocations began, never on where commits fall, so a
 * rebuild (reindex, verify) writes the same tables.
 */
/* The entry at `off` of a list of `len` bytes: 1, 0 at the end, <0 damaged. */
static int recent_next(const uint8_t *list, size_t len, size_t off, recent_entry *e)
{
	rec_reader r = { list + off, list + len, 0 };

	/* every field set on every path: callers read e only after a 1, which
	 * gcc -O3 cannot prove (docket_error_set's result is not known to be
	 * negative) */
	*e = (recent_entry){ NULL, NULL, 0, 0, off, off };
	if (off >= len)
		return 0;
	e->ilen = (size_t)state_rec_get(&r);
	if (r.bad || e->ilen == 0 || e->ilen > STATE_ID_MAX || e->ilen > (size_t)(r.end - r.p))
		return docket_error_set(DOCKET_ECORRUPT, "session record: bad recent invocation list");
	e->id = r.p;
	r.p += e->ilen;
	e->rlen = (size_t)state_rec_get(&r);
	if (r.bad || e->rlen == 0 || e->rlen > (size_t)(r.end - r.p))
		return docket_error_set(DOCKET_ECORRUPT, "session record: bad recent invocation list");
	e->rec = r.p;
	e->end = (size_t)(r.p + e->rlen - list);
	return 1;
}

/* Take a stored list into `out`, checking its structure. */
int state_recent_adopt(sess_state *out, const uint8_t *list, size_t len)
{
	recent_entry e;
	size_t off = 0;
	int rc;

	out->recent_len = 0;
	out->recent_n = 0;
	if (len > sizeof(out->recent))
		return docket_error_set(DOCKET_ECORRUPT, "session record: recent invocation list too long");
	while ((rc = recent_next(list, len, off, &e)) > 0) {
		off = e.end;
		if (++out->recent_n > SESS_RECENT)
			return docket_error_set(DOCKET_ECORRUPT, "session record: too many recent invocations");
	}
	if (rc < 0)
		return rc;
	if (len)
		memcpy(out->recent, list, len);
	out->recent_len = len;
	return 0;
}

/* The entry of `id` in the session's list: 1 found, 0 not, <0 damaged. */
int state_recent_find(const sess_state *s, const char *id, size_t ilen, recent_entry *e)
{
	size_t off = 0;
	int rc;

	while ((rc = recent_next(s->recent, s->recent_len, off, e)) > 0) {
		if (e->ilen == ilen && memcmp(e->id, id, ilen) == 0)
			return 1;
		off = e->end;
	}
	return rc;
}

/* Write the entry (id, rec) at `at` of `out` (capacity checked by callers). */
static size_t recent_entry_put(uint8_t *at, const char *id, size_t ilen, const void *rec, size_t rlen)
{
	rec_writer w = { at };

	state_rec_varint(&w, ilen);
	memcpy(w.p, id, ilen);
	w.p += ilen;
	state_rec_varint(&w, rlen);
	memcpy(w.p, rec, rlen);
	w.p += rlen;
	return (size_t)(w.p - at);
}

int state_recent_unfinished(const sess_state *s, int (*fn)(void *ctx, const char *id, size_t ilen), void *ctx)
{
	recent_entry e;
	size_t off = 0;
	int rc, error;

	while ((rc = recent_next(s->recent, s->recent_len, off, &e)) > 0) {
		inv_state inv;

		if ((error = inv_record_decode(&inv, e.rec, e.rlen)) < 0)
			return error;
		if (inv.phase != DOCKET__V1__PHASE__PHASE_COMPLETED && (error = fn(ctx, (const char *)e.id, e.ilen)) != 0)
			return error;
		off = e.end;
	}
	return rc;
}

/* Move every recent invocation of the cached session to `invocations`. */
static int recent_evict(state_txn *st)
{
	uint8_t key[9 + STATE_ID_MAX];
	size_t olen = state_ordinal_put(key, st->sess.opened_seq), off = 0;
	recent_entry e;
	int rc, error;

	while ((rc = recent_next(st->sess.recent, st->sess.recent_len, off, &e)) > 0) {
		memcpy(key + olen, e.id, e.ilen);
		if ((error = overlay_put(&st->ov, st->l->dbi.invocations, key, olen + e.ilen, e.rec, e.rlen)) < 0 ||
		    (error = state_pending_evicted(st, &e)) < 0)
			return error;
		off = e.end;
	}
	if (rc < 0)
		return rc;
	st->sess.recent_len = 0;
	st->sess.recent_n = 0;
	st->sess_dirty = 1;
	return 0;
}

/* Put the cached invocation's record (encoded in st->scratch) into its
 * session's recent list: in place of its entry, or as a new one (the list
 * moved to the table first when it is full). */
int state_recent_put(state_txn *st)
{
	sess_state *s = &st->sess;
	size_t ilen, at, old_len = 0;
	const char *id = state_inv_key_id(st, &ilen);
	uint8_t entry[SESS_RECENT_ENTRY];
	size_t elen;
	recent_entry e;
	int found, error;

	assert(st->sess_loaded && st->inv_loaded && !st->inv_in_table);
	if (st->scratch.len > SESS_RECENT_ENTRY - 4 - ilen)
		return docket_error_set(DOCKET_EINVALID, "invocation record too large");
	if ((found = state_recent_find(s, id, ilen, &e)) < 0)
		return found;
	if (!found && s->recent_n == SESS_RECENT && (error = recent_evict(st)) < 0)
		return error;
	elen = recent_entry_put(entry, id, ilen, st->scratch.ptr, st->scratch.len);
	at = found ? e.off : s->recent_len;
	if (found)
		old_len = e.end - e.off;
	if (s->recent_len - old_len + elen > sizeof(s->recent))
		return docket_error_set(DOCKET_EINVALID, "recent invocations of session \"%s\" too large", st->sess_id);
	memmove(s->recent + at + elen, s->recent + at + old_len, s->recent_len - at - old_len);
	memcpy(s->recent + at, entry, elen);
	s->recent_len = s->recent_len - old_len + elen;
	if (!found)
		s->recent_n++;
	st->sess_dirty = 1;
	return 0;
}
