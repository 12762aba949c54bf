/* SPDX-License-Identifier: Apache-2.0 */
/*
 * htab.c: growing and clearing the one small hash table (htab.h).
 */
#include "htab.h"

#include <string.h>

#include "alloc.h"
#include "error.h"

int docket_htab_reserve(docket_htab *t)
{
	size_t ncap, oldcap = t->cap;
	unsigned char *old = t->slots, *slots;
	uint32_t *oldtags = t->tags, *tags;

	if ((t->n + 1) * 2 <= t->cap)
		return 0;
	ncap = t->cap ? t->cap * 2 : 64;
	if (ncap > SIZE_MAX / (t->esize > 4 ? t->esize : 4))
		return docket_error_set(DOCKET_ENOMEM, "out of memory (hash table of %zu slots)", ncap);
	slots = docket_calloc(ncap, t->esize);
	tags = docket_calloc(ncap, sizeof(*tags));
	if (!slots || !tags) {
		docket_free(slots);
		docket_free(tags);
		return docket_error_set(DOCKET_ENOMEM, "out of memory (hash table of %zu slots)", ncap);
	}
	for (size_t i = 0; i < oldcap; i++) {
		size_t k;

		if (!oldtags[i])
			continue;
		for (k = oldtags[i] & (ncap - 1); tags[k]; k = (k + 1) & (ncap - 1))
			;
		tags[k] = oldtags[i];
		memcpy(slots + k * t->esize, old + i * t->esize, t->esize);
	}
	docket_free(old);
	docket_free(oldtags);
	t->slots = slots;
	t->tags = tags;
	t->cap = ncap;
	return 0;
}

void docket_htab_clear(docket_htab *t)
{
	if (t->cap) {
		memset(t->slots, 0, t->cap * t->esize);
		memset(t->tags, 0, t->cap * sizeof(*t->tags));
	}
	t->n = 0;
}

void docket_htab_dispose(docket_htab *t)
{
	docket_free(t->slots);
	docket_free(t->tags);
	t->slots = NULL;
	t->tags = NULL;
	t->cap = t->n = 0;
}
