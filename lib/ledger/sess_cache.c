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

struct sess_slot {
	uint32_t hash;
	int dirty;
	size_t idlen;
	char id[STATE_ID_MAX + 1];
	sess_state s;
};

static uint32_t id_hash(const char *id, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)id[i]) * 16777619u;
	return h ? h : 1; /* 0 tags a free slot */
}

/* The slot of `id`, or the free place it goes (cap is a power of two). */
/* The slot of `id`, or the free place it goes (cap is a power of two);
 * the probes read the tags, a slot only when its tag matches. */
static sess_slot **find(const sess_cache *c, const char *id, size_t len, uint32_t h)
{
	for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		sess_slot **p = &c->slots[i];

		if (!c->tags[i] || (c->tags[i] == h && (*p)->idlen == len && memcmp((*p)->id, id, len) == 0))
			return p;
	}
}

/* Put `slot` where find() looks for it. */
static void place(sess_cache *c, sess_slot *slot)
{
	sess_slot **p = find(c, slot->id, slot->idlen, slot->hash);

	*p = slot;
	c->tags[p - c->slots] = slot->hash;
}

static int grow(sess_cache *c)
{
	size_t ncap = c->cap ? c->cap * 2 : 64, oldcap = c->cap;
	sess_slot **old = c->slots, **slots = docket_calloc(ncap, sizeof(*slots));
	uint32_t *oldtags = c->tags, *tags = docket_calloc(ncap, sizeof(*tags));

	if (!slots || !tags) {
		docket_free(slots);
		docket_free(tags);
		return docket_error_set(DOCKET_ENOMEM, "out of memory (session cache)");
	}
	c->slots = slots;
	c->tags = tags;
	c->cap = ncap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			place(c, old[i]);
	docket_free(old);
	docket_free(oldtags);
	return 0;
}

int sess_cache_get(state_txn *st, const char *session, size_t len)
{
	sess_cache *c = &st->cache;
	sess_slot *slot;

	if (!c->n)
		return 0;
	if (!(slot = *find(c, session, len, id_hash(session, len))))
		return 0;
	sess_state_copy(&st->sess, &slot->s);
	return 1;
}

int sess_cache_park(state_txn *st)
{
	sess_cache *c = &st->cache;
	size_t len = strlen(st->sess_id);
	uint32_t h = id_hash(st->sess_id, len);
	sess_slot **p;
	int error;

	if (!st->sess_loaded)
		return 0;
	if (c->n >= SESS_CACHE_MAX && !*find(c, st->sess_id, len, h)) {
		if ((error = sess_cache_flush(st)) < 0)
			return error;
		sess_cache_drop(c);
	}
	if ((c->n + 1) * 2 > c->cap && (error = grow(c)) < 0)
		return error;
	if (!*(p = find(c, st->sess_id, len, h))) {
		if (!(*p = docket_malloc(sizeof(**p))))
			return docket_error_set(DOCKET_ENOMEM, "out of memory (session cache)");
		(*p)->hash = h;
		(*p)->dirty = 0;
		(*p)->idlen = len;
		memcpy((*p)->id, st->sess_id, len + 1);
		c->tags[p - c->slots] = h;
		c->n++;
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

	for (size_t i = 0; c->n && i < c->cap; i++) {
		sess_slot *slot = c->slots[i];

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
	for (size_t i = 0; c->n && i < c->cap; i++) {
		docket_free(c->slots[i]);
		c->slots[i] = NULL;
		c->tags[i] = 0;
	}
	c->n = 0;
}

void sess_cache_dispose(sess_cache *c)
{
	sess_cache_drop(c);
	docket_free(c->slots);
	docket_free(c->tags);
	memset(c, 0, sizeof(*c));
}
