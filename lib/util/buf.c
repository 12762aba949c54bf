/* SPDX-License-Identifier: Apache-2.0 */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

int docket_buf_reserve(docket_buf *buf, size_t extra)
{
	size_t need, cap;
	char *ptr;

	if (extra > SIZE_MAX - buf->len - 1)
		return docket_error_set(DOCKET_ENOMEM, "buffer size overflow");
	need = buf->len + extra + 1;
	if (need <= buf->cap)
		return 0;
	cap = buf->cap ? buf->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	ptr = docket_realloc(buf->ptr, cap);
	if (!ptr)
		return docket_error_set(DOCKET_ENOMEM, "out of memory (%zu bytes)", cap);
	buf->ptr = ptr;
	buf->cap = cap;
	return 0;
}

int docket_buf_put(docket_buf *buf, const void *data, size_t len)
{
	int error;

	if ((error = docket_buf_reserve(buf, len)) < 0)
		return error;
	if (len)
		memcpy(buf->ptr + buf->len, data, len);
	buf->len += len;
	buf->ptr[buf->len] = '\0';
	return 0;
}

int docket_buf_puts(docket_buf *buf, const char *s)
{
	return docket_buf_put(buf, s, strlen(s));
}

int docket_buf_putc(docket_buf *buf, char c)
{
	return docket_buf_put(buf, &c, 1);
}

int docket_buf_printf(docket_buf *buf, const char *fmt, ...)
{
	va_list ap;
	int n, error;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return docket_error_set(DOCKET_ERROR, "bad format string");
	if ((error = docket_buf_reserve(buf, (size_t)n)) < 0)
		return error;
	va_start(ap, fmt);
	vsnprintf(buf->ptr + buf->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf->len += (size_t)n;
	return 0;
}

void docket_buf_clear(docket_buf *buf)
{
	buf->len = 0;
	if (buf->ptr)
		buf->ptr[0] = '\0';
}

void docket_buf_dispose(docket_buf *buf)
{
	docket_free(buf->ptr);
	buf->ptr = NULL;
	buf->len = buf->cap = 0;
}

void docket_be64_put(uint8_t out[8], uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		out[i] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
}

uint64_t docket_be64_get(const uint8_t in[8])
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | in[i];
	return v;
}

void docket_be32_put(uint8_t out[4], uint32_t v)
{
	for (int i = 3; i >= 0; i--) {
		out[i] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
}

uint32_t docket_be32_get(const uint8_t in[4])
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = (v << 8) | in[i];
	return v;
}

void docket_hex(char *out, const uint8_t *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[data[i] >> 4];
		out[2 * i + 1] = digits[data[i] & 0xf];
	}
	out[2 * len] = '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int docket_unhex(uint8_t *out, size_t len, const char *hex)
{
	for (size_t i = 0; i < len; i++) {
		int hi = hex_digit(hex[2 * i]);
		int lo = hi < 0 ? -1 : hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return hex[2 * len] == '\0' ? 0 : -1;
}

int docket_buf_read_stream(docket_buf *out, FILE *f)
{
	int error;

	for (;;) {
		size_t got;

		if ((error = docket_buf_reserve(out, 65536)) < 0)
			return error;
		got = fread(out->ptr + out->len, 1, out->cap - out->len - 1, f);
		out->len += got;
		out->ptr[out->len] = '\0';
		if (got == 0) {
			if (ferror(f))
				return docket_error_set(DOCKET_ESTORAGE, "read error: %s",
							strerror(errno));
			return 0;
		}
	}
}

int docket_buf_read_path(docket_buf *out, const char *path)
{
	FILE *f = fopen(path, "rb");
	int error;

	if (!f)
		return docket_error_set(errno == ENOENT || errno == ENOTDIR ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE, "%s: %s", path,
					strerror(errno));
	error = docket_buf_read_stream(out, f);
	fclose(f);
	if (error < 0)
		docket_error_prefix("%s: ", path);
	return error;
}

int docket_blank_line(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}
