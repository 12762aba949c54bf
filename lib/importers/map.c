/* SPDX-License-Identifier: Apache-2.0 */
/*
 * map.c: string -> index on the one small hash table (util/htab.h); keys
 * are copied. Sessions and call ids of one file.
 */
#include <string.h>

#include "import_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/htab.h"

/* A slot: the key (owned) and its value. */
typedef struct {
	char *key;
	size_t val;
} map_slot;

static uint32_t hash(const char *s)
{
	return docket_hash(DOCKET_HASH_SEED, s, strlen(s));
}

static int same(const void *slot, const void *key)
{
	return strcmp(((const map_slot *)slot)->key, key) == 0;
}

int imp_map_get(const imp_map *m, const char *key, size_t *out)
{
	const map_slot *s = docket_htab_find(&m->t, hash(key), same, key);

	if (docket_htab_free_at(&m->t, s))
		return 0;
	*out = s->val;
	return 1;
}

int imp_map_put(imp_map *m, const char *key, size_t val)
{
	uint32_t h = hash(key);
	map_slot *s;
	int error;

	m->t.esize = sizeof(map_slot); /* a zeroed map is an empty one */
	if ((error = docket_htab_reserve(&m->t)) < 0)
		return error;
	s = docket_htab_find(&m->t, h, same, key);
	if (!docket_htab_free_at(&m->t, s))
		return docket_error_set(DOCKET_EEXISTS, "duplicate id '%s'", key);
	if (!(s->key = docket_strdup(key)))
		return docket_error_set_oom();
	s->val = val;
	docket_htab_take(&m->t, s, h);
	return 0;
}

void imp_map_dispose(imp_map *m)
{
	for (size_t i = 0; i < m->t.cap; i++) {
		map_slot *s = docket_htab_at(&m->t, i);

		if (s)
			docket_free(s->key);
	}
	docket_htab_dispose(&m->t);
}
