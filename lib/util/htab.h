/* SPDX-License-Identifier: Apache-2.0 */
/*
 * htab.h: the one small hash table: open addressing with linear probing,
 * at most half full, FNV-1a hashes.
 *
 * A table is `cap` slots of `esize` bytes that the caller lays out (an
 * entry inline, a pointer, an index into its own array) and a tag per slot:
 * the hash of the slot's key, 0 for a free slot (docket_hash never returns
 * 0). Probes read the tags and look at a slot only when its tag matches, so
 * a lookup touches one cache line of tags in the common case. There is no
 * removal: a table is cleared or disposed as a whole.
 *
 * Use: h = docket_hash(...); docket_htab_reserve() before an insert;
 * slot = docket_htab_find(); a free slot (docket_htab_free_at) is filled by
 * the caller and then claimed with docket_htab_take().
 *
 * Invariants: cap is 0 or a power of two; n * 2 <= cap; the tags of the
 * used slots are the hashes of their keys, and each used slot is reached
 * from tag & (cap - 1) by a run of used slots.
 */
#ifndef DOCKET_UTIL_HTAB_H
#define DOCKET_UTIL_HTAB_H

#include <stddef.h>
#include <stdint.h>

#include "docket/common.h"

typedef struct docket_htab {
	unsigned char *slots;
	uint32_t *tags;
	size_t cap, n, esize;
} docket_htab;

#define DOCKET_HTAB_INIT(type) { NULL, NULL, 0, 0, sizeof(type) }

#define DOCKET_HASH_SEED 2166136261u

/* FNV-1a of `len` bytes, continuing from `h` (DOCKET_HASH_SEED to start).
 * The result is never 0 (0 tags a free slot). */
static inline uint32_t docket_hash(uint32_t h, const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * 16777619u;
	return h ? h : 1;
}

/* Whether `slot` holds `key` (the tag already matched). */
typedef int (*docket_htab_eq)(const void *slot, const void *key);

/*
 * The slot holding `key` (hash `h`), or the free slot where it goes; NULL
 * when the table has no slots yet. Inline, so that `eq` is inlined too.
 */
static inline void *docket_htab_find(const docket_htab *t, uint32_t h, docket_htab_eq eq, const void *key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		void *slot = t->slots + i * t->esize;

		if (!t->tags[i] || (t->tags[i] == h && eq(slot, key)))
			return slot;
	}
}

/* Whether the slot `find` returned is free (the key is absent). */
static inline int docket_htab_free_at(const docket_htab *t, const void *slot)
{
	return !slot || !t->tags[((const unsigned char *)slot - t->slots) / t->esize];
}

/* Claim the free `slot` (just filled by the caller) for a key of hash `h`. */
static inline void docket_htab_take(docket_htab *t, void *slot, uint32_t h)
{
	t->tags[((unsigned char *)slot - t->slots) / t->esize] = h;
	t->n++;
}

/* The i-th slot (0 <= i < cap) when it is used, else NULL: iteration. */
static inline void *docket_htab_at(const docket_htab *t, size_t i)
{
	return t->tags[i] ? t->slots + i * t->esize : NULL;
}

/* Room for one more key: doubles the table (from 64 slots) and moves every
 * used slot by its tag when it would be more than half full. Slots move:
 * pointers into the table are invalid after a reserve that grew it. */
int docket_htab_reserve(docket_htab *t) DOCKET_MUST_USE;

/* Every slot free; the memory is kept (the caller frees what slots own). */
void docket_htab_clear(docket_htab *t);

void docket_htab_dispose(docket_htab *t);

#endif
