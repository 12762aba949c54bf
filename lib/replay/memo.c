/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memo.c: a bounded cache of evaluations. Evaluation is pure (DESIGN §7),
 * so the same policy, context and call always give the same result; recorded
 * sessions repeat calls a lot (`git status`, the test command), and a hit
 * skips parsing the call's JSON and evaluating it.
 *
 * Direct-mapped: MEMO_SLOTS slots, a new entry replaces the one in its slot.
 * The key (context id, policy index, tool, args) is compared in full, so a
 * hash collision never returns a wrong result. Calls bigger than MEMO_MAX_KEY
 * are not cached. Memory: at most MEMO_SLOTS * (entry + MEMO_MAX_KEY).
 */
#include <string.h>

#include "replay_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define MEMO_SLOTS 8192u
#define MEMO_MAX_KEY 2048u

typedef struct memo_entry {
	uint64_t hash;
	uint32_t ctx_id, policy;
	char *key;           /* tool \0 args */
	size_t key_len, key_cap;
	eval_out value;
	int used;
} memo_entry;

struct memo {
	memo_entry slots[MEMO_SLOTS];
};

int memo_new(memo **out)
{
	*out = docket_calloc(1, sizeof(**out));
	return *out ? 0 : docket_error_set_oom();
}

void memo_free(memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < MEMO_SLOTS; i++)
		docket_free(m->slots[i].key);
	docket_free(m);
}

static uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w * 0x9e3779b97f4a7c15ull;
	h = (h << 27 | h >> 37) * 0xc2b2ae3d27d4eb4full;
	return h;
}

static uint64_t hash_bytes(uint64_t h, const char *s, size_t n)
{
	uint64_t w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = mix(h, w);
	}
	w = 0;
	memcpy(&w, s, n);
	return mix(h, w ^ ((uint64_t)n << 56));
}

uint64_t memo_hash(const char *s, size_t n)
{
	return hash_bytes(0x452821e638d01377ull, s, n);
}

void memo_call_init(memo_call *k, const char *tool, const char *args)
{
	k->tool = tool;
	k->args = args;
	k->tl = strlen(tool);
	k->al = strlen(args);
	k->hash = hash_bytes(hash_bytes(0x243f6a8885a308d3ull, tool, k->tl), args, k->al);
}

static uint64_t key_hash(const memo_call *k, uint32_t ctx_id, uint32_t policy)
{
	uint64_t h = mix(k->hash, (uint64_t)ctx_id << 32 | policy);

	return h ^ (h >> 29);
}

static int same_key(const memo_entry *e, uint64_t h, uint32_t ctx_id, uint32_t policy, const memo_call *k)
{
	return e->used && e->hash == h && e->ctx_id == ctx_id && e->policy == policy &&
	       e->key_len == k->tl + 1 + k->al && memcmp(e->key, k->tool, k->tl + 1) == 0 &&
	       memcmp(e->key + k->tl + 1, k->args, k->al) == 0;
}

const eval_out *memo_get(memo *m, const memo_call *k, uint32_t ctx_id, uint32_t policy)
{
	uint64_t h = key_hash(k, ctx_id, policy);
	const memo_entry *e = &m->slots[h & (MEMO_SLOTS - 1)];

	return same_key(e, h, ctx_id, policy, k) ? &e->value : NULL;
}

int memo_put(memo *m, const memo_call *k, uint32_t ctx_id, uint32_t policy, const eval_out *v)
{
	size_t need = k->tl + 1 + k->al;
	uint64_t h = key_hash(k, ctx_id, policy);
	memo_entry *e = &m->slots[h & (MEMO_SLOTS - 1)];

	if (need > MEMO_MAX_KEY)
		return 0;
	if (need > e->key_cap) {
		char *key = docket_realloc(e->key, need);

		if (!key)
			return docket_error_set_oom();
		e->key = key;
		e->key_cap = need;
	}
	memcpy(e->key, k->tool, k->tl + 1);
	memcpy(e->key + k->tl + 1, k->args, k->al);
	e->key_len = need;
	e->hash = h;
	e->ctx_id = ctx_id;
	e->policy = policy;
	e->value = *v;
	e->used = 1;
	return 0;
}
