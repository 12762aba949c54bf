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
 * A protobuf-c allocator that bumps a pointer through blocks taken from
 * docket_malloc and frees nothing until docket_pb_arena_reset(): for a loop
 * that unpacks one message after another and drops each before the next
 * (verify). Pass &arena.alloc to the unpack; freeing a message unpacked in
 * it (with the same allocator) does nothing, the reset frees it. The reset
 * keeps the largest block, so a steady loop allocates nothing.
 */
typedef struct docket_pb_block docket_pb_block;
typedef struct docket_pb_arena {
	ProtobufCAllocator alloc;
	docket_pb_block *blocks;   /* the newest (and largest) first */
	size_t used;               /* bytes taken from the newest block */
} docket_pb_arena;

void docket_pb_arena_init(docket_pb_arena *a);
void docket_pb_arena_reset(docket_pb_arena *a);
void docket_pb_arena_dispose(docket_pb_arena *a);

#endif
