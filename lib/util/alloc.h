/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc.h: the one allocator every docket module uses.
 *
 * All heap memory docket owns goes through these functions, including the
 * memory protobuf-c, zstd and jansson allocate for us, so that a test can make
 * the Nth allocation fail (SQLite test_malloc.c style) and check that every
 * path reports DOCKET_ENOMEM cleanly, leaks nothing and writes nothing.
 */
#ifndef DOCKET_UTIL_ALLOC_H
#define DOCKET_UTIL_ALLOC_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "docket/common.h"   /* docket_free is public API */

void *docket_malloc(size_t size);
void *docket_calloc(size_t n, size_t size);
void *docket_realloc(void *ptr, size_t size);
void docket_free(void *ptr);
char *docket_strdup(const char *s);
char *docket_strndup(const char *s, size_t n);
/*
 * An array of `elem`-byte items at `v` with room for *cap, grown to twice
 * that (or `first` when empty): the new block, *cap updated; NULL with
 * DOCKET_ENOMEM set (and `v` and *cap untouched) when it cannot grow.
 */
void *docket_array_grow(void *v, size_t *cap, size_t elem, size_t first);

/*
 * Fault injection (tests only). After `n` more successful allocations every
 * allocation fails until docket_alloc_fail_reset(); n < 0 disables.
 * docket_alloc_failures() counts the allocations refused so far.
 */
void docket_alloc_fail_after(long n);
void docket_alloc_fail_reset(void);
long docket_alloc_failures(void);

/*
 * 1 if an allocation failed on this thread since the last call (and clear
 * the flag). Lets a caller tell "out of memory" from "bad input" when a
 * library (protobuf-c unpack) reports both as NULL.
 */
int docket_alloc_take_failure(void);

/* Route jansson's allocations through docket_malloc (call once at start). */
void docket_alloc_install_json(void);
/*
 * Bracket one jansson parse (util/json.c docket_json_load): an allocation
 * refused meanwhile does not reach jansson (whose lexer asserts on some);
 * _end() returns 1 if one was refused, so the parse must fail with ENOMEM.
 */
void docket_alloc_json_parse_begin(void);
int docket_alloc_json_parse_end(void);

/* protobuf-c allocator that uses docket_malloc. */
extern ProtobufCAllocator docket_pb_allocator;

/*
 * A bump arena for short-lived trees that are allocated and freed piece by
 * piece (one event's protobuf unpack, one call's parsed args): an
 * allocation is a pointer bump inside `cap` bytes, a free inside the arena
 * only counts, and once every allocation is freed the arena starts over. An
 * allocation that does not fit comes from docket_malloc (and its free goes
 * to docket_free), so nothing ever fails for size; fault injection applies
 * to every allocation as to docket_malloc's.
 */
typedef struct docket_arena {
	unsigned char *base;
	size_t cap, used;
	size_t live;     /* allocations not freed yet, inside or spilled */
	size_t spilled;  /* of those, the ones docket_malloc served */
} docket_arena;

int docket_arena_init(docket_arena *a, size_t cap);
/* Accepts an arena never initialised (all zero). */
void docket_arena_dispose(docket_arena *a);
void *docket_arena_alloc(docket_arena *a, size_t size);
void docket_arena_free(docket_arena *a, void *ptr);
/*
 * Forget every allocation at once when none was spilled: 1. Otherwise 0
 * and nothing changes: the tree must be freed piece by piece (which starts
 * the arena over when the last piece goes).
 */
int docket_arena_reset(docket_arena *a);
/* protobuf-c allocator over the arena in its allocator_data. */
void docket_arena_pb(ProtobufCAllocator *out, docket_arena *a);

/*
 * This thread's jansson values come from `a` while armed, and a jansson free
 * of a pointer inside `a` goes to it, until docket_alloc_json_arena(NULL).
 * Every value allocated from `a` must be freed on this thread before that
 * (replay.c arms it around the parse of one call's args).
 */
void docket_alloc_json_arena(docket_arena *a);
void docket_alloc_json_arena_arm(int on);

#endif
