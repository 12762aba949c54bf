/* SPDX-License-Identifier: Apache-2.0 */
/*
 * map.c: string -> index, open addressing with linear probing (FNV-1a).
 * Kept at most half full; keys are copied. Sessions and call ids of one file.
 */
#include <string.h>

#include "import_internal.h"
#include "util/alloc.h"
#include "util/error.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

int imp_map_get(const imp_map *m, const char *key, size_t *out)
{
	size_t i;

	if (m->cap == 0)
		return 0;
	for (i = hash(key) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (strcmp(m->keys[i], key) == 0) {
			*out = m->vals[i];
			return 1;
		}
	}
	return 0;
}

static void place(char **keys, size_t *vals, size_t cap, char *key, size_t val)
{
	size_t i = hash(key) & (cap - 1);

	while (keys[i])
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	vals[i] = val;
}

static int grow(imp_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	char **keys;
	size_t *vals;

	if (cap > SIZE_MAX / sizeof(*vals))
		return docket_error_set(DOCKET_ENOMEM, "too many ids");
	keys = docket_calloc(cap, sizeof(*keys));
	vals = docket_calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		docket_free(keys);
		docket_free(vals);
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	}
	for (i = 0; i < m->cap; i++)
		if (m->keys[i])
			place(keys, vals, cap, m->keys[i], m->vals[i]);
	docket_free(m->keys);
	docket_free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int imp_map_put(imp_map *m, const char *key, size_t val)
{
	char *copy;
	int error;

	if ((m->n + 1) * 2 > m->cap && (error = grow(m)) < 0)
		return error;
	if (!(copy = docket_strdup(key)))
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	place(m->keys, m->vals, m->cap, copy, val);
	m->n++;
	return 0;
}

void imp_map_dispose(imp_map *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		docket_free(m->keys[i]);
	docket_free(m->keys);
	docket_free(m->vals);
	memset(m, 0, sizeof(*m));
}
