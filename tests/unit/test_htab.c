/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_htab.c: the one small hash table (util/htab.h), checked against a
 * plain array scan: keys colliding on every bucket bit, growth across many
 * doublings, clear, and the FNV-1a values of the published test vectors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/htab.h"

typedef struct {
	char key[16];
	int val;
} item;

static int item_is(const void *slot, const void *key)
{
	return strcmp(((const item *)slot)->key, key) == 0;
}

/* FNV-1a 32-bit of "a" and "foobar" (the reference values). */
static void test_hash_vectors(void **state)
{
	(void)state;
	assert_true(docket_hash(DOCKET_HASH_SEED, "a", 1) == 0xe40c292cu);
	assert_true(docket_hash(DOCKET_HASH_SEED, "foobar", 6) == 0xbf9cf968u);
	assert_true(docket_hash(DOCKET_HASH_SEED, "", 0) == DOCKET_HASH_SEED);
	/* continuing from a prefix is hashing the whole */
	assert_true(docket_hash(docket_hash(DOCKET_HASH_SEED, "foo", 3), "bar", 3) ==
		    docket_hash(DOCKET_HASH_SEED, "foobar", 6));
}

static int insert(docket_htab *t, const char *key, uint32_t h, int val)
{
	item *s;

	if (docket_htab_reserve(t) < 0)
		return -1;
	if (!(s = docket_htab_find(t, h, item_is, key)))
		return -1; /* a reserved table has slots */
	if (!docket_htab_free_at(t, s))
		return 1;
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->val = val;
	docket_htab_take(t, s, h);
	return 0;
}

/* `same_tag`: every key gets one hash, so every lookup walks a run. */
static void check_many(int n, int same_tag)
{
	docket_htab t = DOCKET_HTAB_INIT(item);
	char key[16];

	assert_true(docket_htab_find(&t, 1, item_is, "x") == NULL);
	assert_true(docket_htab_free_at(&t, NULL));
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(insert(&t, key, same_tag ? 7u : docket_hash(DOCKET_HASH_SEED, key, strlen(key)), i), 0);
		assert_true(t.n * 2 <= t.cap);
	}
	assert_int_equal((int)t.n, n);
	for (int i = 0; i < n; i++) {
		item *s;

		snprintf(key, sizeof(key), "k%d", i);
		s = docket_htab_find(&t, same_tag ? 7u : docket_hash(DOCKET_HASH_SEED, key, strlen(key)), item_is, key);
		assert_false(docket_htab_free_at(&t, s));
		assert_int_equal(s->val, i);
		/* a second insert of the key finds it */
		assert_int_equal(insert(&t, key, same_tag ? 7u : docket_hash(DOCKET_HASH_SEED, key, strlen(key)), -1), 1);
	}
	snprintf(key, sizeof(key), "k%d", n);
	assert_true(docket_htab_free_at(&t, docket_htab_find(&t, same_tag ? 7u : docket_hash(DOCKET_HASH_SEED, key, strlen(key)), item_is, key)));
	/* iteration sees each key once */
	{
		int seen = 0;
		for (size_t i = 0; i < t.cap; i++)
			seen += docket_htab_at(&t, i) != NULL;
		assert_int_equal(seen, n);
	}
	docket_htab_clear(&t);
	assert_int_equal((int)t.n, 0);
	snprintf(key, sizeof(key), "k0");
	assert_true(docket_htab_free_at(&t, docket_htab_find(&t, same_tag ? 7u : docket_hash(DOCKET_HASH_SEED, key, 2), item_is, key)));
	docket_htab_dispose(&t);
	assert_true(t.slots == NULL && t.cap == 0);
}

static void test_many(void **state)
{
	(void)state;
	check_many(5000, 0);
}

static void test_colliding(void **state)
{
	(void)state;
	check_many(300, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_vectors),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_colliding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
