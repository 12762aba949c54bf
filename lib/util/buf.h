/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buf.h: borrowed byte slices and owned, growable buffers.
 *
 * A slice borrows; a buffer owns. Buffers stay NUL-terminated so they can be
 * used as C strings. Every size computation is overflow-checked.
 */
#ifndef DOCKET_UTIL_BUF_H
#define DOCKET_UTIL_BUF_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "docket/common.h"

typedef struct docket_slice {
	const uint8_t *ptr;
	size_t len;
} docket_slice;

typedef struct docket_buf {
	char *ptr;
	size_t len;
	size_t cap;
} docket_buf;

#define DOCKET_BUF_INIT { NULL, 0, 0 }

/* Make room for `extra` more bytes (plus the terminating NUL). */
int docket_buf_reserve(docket_buf *buf, size_t extra) DOCKET_MUST_USE;
int docket_buf_put(docket_buf *buf, const void *data, size_t len) DOCKET_MUST_USE;
int docket_buf_puts(docket_buf *buf, const char *s) DOCKET_MUST_USE;
int docket_buf_putc(docket_buf *buf, char c) DOCKET_MUST_USE;
int docket_buf_printf(docket_buf *buf, const char *fmt, ...) DOCKET_PRINTF(2, 3) DOCKET_MUST_USE;
/* Append everything `f` holds (the buffer stays NUL-terminated);
 * DOCKET_ESTORAGE on a read error. */
int docket_buf_read_stream(docket_buf *out, FILE *f) DOCKET_MUST_USE;
/* The same for a file; DOCKET_ENOTFOUND when it (or a directory on its path)
 * does not exist. */
int docket_buf_read_path(docket_buf *out, const char *path) DOCKET_MUST_USE;
void docket_buf_clear(docket_buf *buf);
void docket_buf_dispose(docket_buf *buf);

/* Big-endian fixed-width integers. */
void docket_be64_put(uint8_t out[8], uint64_t v);
uint64_t docket_be64_get(const uint8_t in[8]);
void docket_be32_put(uint8_t out[4], uint32_t v);
uint32_t docket_be32_get(const uint8_t in[4]);

/* Lower-case hex of `len` bytes into `out` (2*len+1 bytes). */
void docket_hex(char *out, const uint8_t *data, size_t len);
/* Parse exactly 2*len hex digits; -1 on any bad digit. */
int docket_unhex(uint8_t *out, size_t len, const char *hex);

/* 1 when s[0..len) holds only spaces, tabs and CRs (a blank JSONL line). */
int docket_blank_line(const char *s, size_t len);

#endif
