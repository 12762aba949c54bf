/* SPDX-License-Identifier: Apache-2.0 */
#include "alloc.h"

#include <assert.h>
#include <jansson.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

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

void *docket_array_grow(void *v, size_t *cap, size_t elem, size_t first)
{
	size_t ncap = *cap ? *cap * 2 : first;
	void *nv;

	if (ncap < *cap || ncap > SIZE_MAX / elem || !(nv = docket_realloc(v, ncap * elem))) {
		docket_error_set_oom();
		return NULL;
	}
	*cap = ncap;
	return nv;
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
static _Thread_local docket_arena *json_arena;
static _Thread_local int json_arena_armed;

static void *arena_json(docket_arena *a, size_t size);

static void *json_malloc(size_t size)
{
	void *p = json_arena_armed ? arena_json(json_arena, size) : docket_malloc(size);

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

static int arena_owns(const docket_arena *a, const void *p)
{
	uintptr_t x = (uintptr_t)p, lo = (uintptr_t)a->base;

	return a->base && x >= lo && x - lo < a->cap;
}

static void json_free(void *ptr)
{
	if (json_arena && arena_owns(json_arena, ptr))
		docket_arena_free(json_arena, ptr);
	else
		docket_free(ptr);
}

void docket_alloc_install_json(void)
{
	json_set_alloc_funcs(json_malloc, json_free);
}

void docket_alloc_json_arena(docket_arena *a)
{
	json_arena = a;
	json_arena_armed = 0;
}

void docket_alloc_json_arena_arm(int on)
{
	json_arena_armed = on && json_arena;
}

#define ARENA_ALIGN 16u

int docket_arena_init(docket_arena *a, size_t cap)
{
	memset(a, 0, sizeof(*a));
	cap = (cap + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (!(a->base = docket_malloc(cap)))
		return docket_error_set_oom();
	a->cap = cap;
	return 0;
}

void docket_arena_dispose(docket_arena *a)
{
	assert(a->live == 0);
	docket_free(a->base);
	memset(a, 0, sizeof(*a));
}

/* `size` bytes inside the arena, counted live; NULL when they do not fit. */
static void *arena_bump(docket_arena *a, size_t size)
{
	size_t n = size ? (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1) : ARENA_ALIGN;
	void *p;

	if (n < size || !a->base || n > a->cap - a->used)
		return NULL;
	p = a->base + a->used;
	a->used += n;
	a->live++;
	return p;
}

void *docket_arena_alloc(docket_arena *a, size_t size)
{
	void *p;

	if (alloc_should_fail())
		return NULL;
	if ((p = arena_bump(a, size)))
		return p;
	if (!(p = malloc(size ? size : 1))) {
		alloc_failed = 1;
		return NULL;
	}
	a->spilled++;
	a->live++;
	return p;
}

/* jansson's: what does not fit is not the arena's (its free cannot say
 * whose a pointer outside is), so it is a plain allocation. */
static void *arena_json(docket_arena *a, size_t size)
{
	void *p;

	if (alloc_should_fail())
		return NULL;
	if ((p = arena_bump(a, size)))
		return p;
	if (!(p = malloc(size ? size : 1)))
		alloc_failed = 1;
	return p;
}

void docket_arena_free(docket_arena *a, void *ptr)
{
	if (!ptr)
		return;
	assert(a->live > 0);
	if (!arena_owns(a, ptr)) {
		assert(a->spilled > 0);
		a->spilled--;
		free(ptr);
	}
	if (--a->live == 0)
		a->used = 0;
}

int docket_arena_reset(docket_arena *a)
{
	if (a->spilled)
		return 0;
	a->live = a->used = 0;
	return 1;
}

static void *arena_pb_alloc(void *data, size_t size)
{
	return docket_arena_alloc(data, size);
}

static void arena_pb_free(void *data, void *ptr)
{
	docket_arena_free(data, ptr);
}

void docket_arena_pb(ProtobufCAllocator *out, docket_arena *a)
{
	out->alloc = arena_pb_alloc;
	out->free = arena_pb_free;
	out->allocator_data = a;
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

