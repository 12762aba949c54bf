/* SPDX-License-Identifier: Apache-2.0 */
#include "alloc.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* -1: no injection. Otherwise the number of allocations still allowed. */
static _Atomic long fail_countdown = -1;
static _Atomic long fail_count = 0;
static _Thread_local int alloc_failed;

int docket_alloc_take_failure(void)
{
	int failed = alloc_failed;

	alloc_failed = 0;
	return failed;
}

static int alloc_should_fail(void)
{
	long n = atomic_load(&fail_countdown);

	if (n < 0)
		return 0;
	while (n > 0) {
		if (atomic_compare_exchange_weak(&fail_countdown, &n, n - 1))
			return 0;
		if (n < 0)
			return 0;
	}
	atomic_fetch_add(&fail_count, 1);
	alloc_failed = 1;
	return 1;
}

void docket_alloc_fail_after(long n)
{
	atomic_store(&fail_count, 0);
	atomic_store(&fail_countdown, n);
}

void docket_alloc_fail_reset(void)
{
	atomic_store(&fail_countdown, -1);
}

long docket_alloc_failures(void)
{
	return atomic_load(&fail_count);
}

void *docket_malloc(size_t size)
{
	if (alloc_should_fail())
		return NULL;
	void *p = malloc(size ? size : 1);

	if (!p)
		alloc_failed = 1;
	return p;
}

void *docket_calloc(size_t n, size_t size)
{
	if (alloc_should_fail())
		return NULL;
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		alloc_failed = 1;
	return p;
}

void *docket_realloc(void *ptr, size_t size)
{
	if (alloc_should_fail())
		return NULL;
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		alloc_failed = 1;
	return p;
}

void docket_free(void *ptr)
{
	free(ptr);
}

char *docket_strndup(const char *s, size_t n)
{
	char *out = docket_malloc(n + 1);

	if (!out)
		return NULL;
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

char *docket_strdup(const char *s)
{
	return docket_strndup(s, strlen(s));
}

/*
 * jansson 2.14 asserts (aborts) when an allocation fails in its lexer: a
 * token byte it could not save is popped anyway on unget ("c == d"), and a
 * truncated escape trips decode_unicode_escape. So while a parse runs
 * (docket_alloc_json_parse_begin/end), an allocation docket refuses is
 * served by the system allocator instead, and the parse is failed with
 * DOCKET_ENOMEM once jansson returns. Only malloc() itself returning NULL
 * mid-lex could still reach the assertion.
 */
static _Thread_local int json_parsing, json_parse_refused;

static void *json_malloc(size_t size)
{
	void *p = docket_malloc(size);

	if (!p && json_parsing) {
		json_parse_refused = 1;
		p = malloc(size ? size : 1);
	}
	return p;
}

void docket_alloc_json_parse_begin(void)
{
	json_parsing++;
	json_parse_refused = 0;
}

int docket_alloc_json_parse_end(void)
{
	int refused = json_parse_refused;

	json_parsing--;
	json_parse_refused = 0;
	return refused;
}

void docket_alloc_install_json(void)
{
	json_set_alloc_funcs(json_malloc, docket_free);
}

static void *pb_alloc(void *data, size_t size)
{
	(void)data;
	return docket_malloc(size);
}

static void pb_free(void *data, void *ptr)
{
	(void)data;
	docket_free(ptr);
}

ProtobufCAllocator docket_pb_allocator = { pb_alloc, pb_free, NULL };

/* ---- the arena ---- */

#define PB_ARENA_FIRST ((size_t)64 << 10)
#define PB_ARENA_ALIGN 16

struct docket_pb_block {
	docket_pb_block *next;
	size_t cap;
	_Alignas(PB_ARENA_ALIGN) unsigned char data[];
};

static void *arena_alloc(void *data, size_t size)
{
	docket_pb_arena *a = data;
	docket_pb_block *b = a->blocks;
	size_t need = (size + PB_ARENA_ALIGN - 1) & ~(size_t)(PB_ARENA_ALIGN - 1), cap;

	if (need < size)
		return NULL;
	if (!b || b->cap - a->used < need) {
		cap = b ? b->cap * 2 : PB_ARENA_FIRST;
		if (cap < need)
			cap = need;
		if (cap > SIZE_MAX - sizeof(*b) || !(b = docket_malloc(sizeof(*b) + cap)))
			return NULL;
		b->cap = cap;
		b->next = a->blocks;
		a->blocks = b;
		a->used = 0;
	}
	a->used += need;
	return b->data + a->used - need;
}

static void arena_free(void *data, void *ptr)
{
	(void)data;
	(void)ptr;
}

void docket_pb_arena_init(docket_pb_arena *a)
{
	a->alloc.alloc = arena_alloc;
	a->alloc.free = arena_free;
	a->alloc.allocator_data = a;
	a->blocks = NULL;
	a->used = 0;
}

void docket_pb_arena_reset(docket_pb_arena *a)
{
	docket_pb_block *b = a->blocks ? a->blocks->next : NULL;

	while (b) {
		docket_pb_block *next = b->next;

		docket_free(b);
		b = next;
	}
	if (a->blocks)
		a->blocks->next = NULL;
	a->used = 0;
}

void docket_pb_arena_dispose(docket_pb_arena *a)
{
	docket_pb_arena_reset(a);
	docket_free(a->blocks);
	a->blocks = NULL;
}
