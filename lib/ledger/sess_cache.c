/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sess_cache.c: the decoded session records of one state transaction.
 *
 * The state machine works on one session record at a time (st->sess). Calls
 * of many sessions interleave (a bulk record of 200 sessions switches at
 * every call), and each switch used to encode the record it left into the
 * overlay and decode the next one from it: a protobuf pack and unpack (with
 * an allocation per string) per call, 15% of the append. Now a switch parks
 * the record it leaves here, decoded, and takes the next one from here when
 * it was seen before in the transaction: every session is decoded at most
 * once per transaction and encoded once, at write-back (sess_cache_flush:
 * state_txn_finish, a checkpoint, or a full cache).
 *
 * Invariants:
 *   1. A slot holds the session's record as the transaction has it, unless
 *      the session is the one loaded in st->sess, which is newer.
 *   2. A clean slot equals the record in the overlay (or LMDB); a dirty one
 *      is the only copy of the change and is put into the overlay before
 *      the transaction finishes.
 *   3. While a checkpoint is set (state_checkpoint) every slot that was
 *      dirty at the checkpoint has been flushed; a rollback drops every
 *      slot (sess_cache_drop), and the overlay's own rollback restores what
 *      the next load reads.
 * A slot records an absent session too (opened_seq 0): it becomes present
 * only through st->sess, and so through a park.
 */
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/htab.h"

struct sess_slot {
	uint32_t hash;
	int dirty;
	size_t idlen;
	char id[STATE_ID_MAX + 1];
	sess_state s;
};

/* What a lookup compares a slot (a pointer to a sess_slot) against. */
typedef struct {
	const char *id;
	size_t len;
} sess_key;

static int same_id(const void *slot, const void *key)
{
	const sess_slot *s = *(sess_slot *const *)slot;
	const sess_key *k = key;

	return s->idlen == k->len && memcmp(s->id, k->id, k->len) == 0;
}

static sess_slot **find(const sess_cache *c, const char *id, size_t len, uint32_t h)
{
	sess_key key = { id, len };

	return docket_htab_find(&c->t, h, same_id, &key);
}

void sess_cache_init(sess_cache *c)
{
	docket_htab t = DOCKET_HTAB_INIT(sess_slot *);

	c->t = t;
}

int sess_cache_get(state_txn *st, const char *session, size_t len)
{
	sess_cache *c = &st->cache;
	sess_slot *slot;

	sess_slot **p;

	if (!c->t.n)
		return 0;
	if (!(p = find(c, session, len, docket_hash(DOCKET_HASH_SEED, session, len))) || !(slot = *p))
		return 0;
	sess_state_copy(&st->sess, &slot->s);
	return 1;
}

int sess_cache_park(state_txn *st)
{
	sess_cache *c = &st->cache;
	size_t len = strlen(st->sess_id);
	uint32_t h = docket_hash(DOCKET_HASH_SEED, st->sess_id, len);
	sess_slot **p;
	int error;

	if (!st->sess_loaded)
		return 0;
	if (c->t.n >= SESS_CACHE_MAX && docket_htab_free_at(&c->t, find(c, st->sess_id, len, h))) {
		if ((error = sess_cache_flush(st)) < 0)
			return error;
		sess_cache_drop(c);
	}
	if ((error = docket_htab_reserve(&c->t)) < 0)
		return error;
	if (docket_htab_free_at(&c->t, p = find(c, st->sess_id, len, h))) {
		if (!(*p = docket_malloc(sizeof(**p))))
			return docket_error_set_oom();
		(*p)->hash = h;
		(*p)->dirty = 0;
		(*p)->idlen = len;
		memcpy((*p)->id, st->sess_id, len + 1);
		docket_htab_take(&c->t, p, h);
	}
	sess_state_copy(&(*p)->s, &st->sess);
	(*p)->dirty |= st->sess_dirty;
	st->sess_dirty = 0;
	return 0;
}

int sess_cache_flush(state_txn *st)
{
	sess_cache *c = &st->cache;
	int error;

	for (size_t i = 0; c->t.n && i < c->t.cap; i++) {
		sess_slot **p = docket_htab_at(&c->t, i), *slot = p ? *p : NULL;

		if (!slot || !slot->dirty)
			continue;
		if ((error = sess_state_encode(&st->scratch, &slot->s)) < 0 ||
		    (error = overlay_put(&st->ov, st->l->dbi.sessions, slot->id, slot->idlen, st->scratch.ptr,
					 st->scratch.len)) < 0)
			return error;
		slot->dirty = 0;
	}
	return 0;
}

void sess_cache_drop(sess_cache *c)
{
	for (size_t i = 0; c->t.n && i < c->t.cap; i++) {
		sess_slot **p = docket_htab_at(&c->t, i);

		if (p)
			docket_free(*p);
	}
	docket_htab_clear(&c->t);
}

void sess_cache_dispose(sess_cache *c)
{
	sess_cache_drop(c);
	docket_htab_dispose(&c->t);
}
