/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_write.c: JSON text as jansson's compact dump writes it (json_write.h).
 *
 * Strings are scanned eight bytes at a time: a word with no byte below 0x20,
 * no '"', no '\\' and no byte >= 0x80 is copied as it is (the common case:
 * tool output is mostly ASCII), so a multi-KB output costs a few compares per
 * word and one memcpy per run between escapes. Bytes >= 0x80 are checked as
 * UTF-8 sequences (docket_utf8_seq, jansson's rules) and copied too.
 *
 * tests/unit/test_json_write.c compares every function here with jansson:
 * every byte value, every escape, invalid UTF-8, long strings; and
 * tests/fuzz/fuzz_json_dump.c checks docket_json_is_dump against
 * json_loadb + json_dump on arbitrary input.
 */
#include "json_write.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "error.h"
#include "utf8.h"

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Does any byte of w need a look: < 0x20, '"', '\\' or >= 0x80? (exact) */
static int word_special(uint64_t w)
{
	uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');

	return ((w | ((w - ONES * 0x20) & ~w) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS) != 0;
}

static int byte_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The first index >= i whose byte is not plain ASCII, or len. */
static size_t plain_run(const unsigned char *s, size_t i, size_t len)
{
	while (len - i >= 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if (word_special(w))
			break;
		i += 8;
	}
	while (i < len && byte_plain(s[i]))
		i++;
	return i;
}

/* jansson's escape of a byte below 0x20, '"' or '\\' into o (2 or 6 bytes). */
static size_t escape(char *o, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";
	char e;

	switch (c) {
	case '"': e = '"'; break;
	case '\\': e = '\\'; break;
	case '\b': e = 'b'; break;
	case '\f': e = 'f'; break;
	case '\n': e = 'n'; break;
	case '\r': e = 'r'; break;
	case '\t': e = 't'; break;
	default:
		memcpy(o, "\\u00", 4);
		o[4] = hex[c >> 4];
		o[5] = hex[c & 15];
		return 6;
	}
	o[0] = '\\';
	o[1] = e;
	return 2;
}

/*
 * Copy the plain ASCII run of s[i..len) to o while scanning it, a block at a
 * time (each block is stored before it is looked at; it never passes the
 * end of the input, so the room the caller keeps for the rest of the input
 * suffices); returns the index of the first byte that is not plain, or len.
 * The bytes stored past that index are overwritten by the caller.
 */
static size_t copy_run(char *o, const unsigned char *s, size_t i, size_t len)
{
	size_t from = i;

#if defined(__SSE2__)
	const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');

	while (len - i >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		/* signed: bytes >= 0x80 are negative, so they are below ' ' too */
		__m128i m = _mm_or_si128(_mm_cmpgt_epi8(space, v),
					 _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
		int bits = _mm_movemask_epi8(m);

		_mm_storeu_si128((__m128i *)(void *)(o + (i - from)), v);
		if (bits)
			return i + (size_t)__builtin_ctz((unsigned)bits);
		i += 16;
	}
#endif
	while (len - i >= 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		memcpy(o + (i - from), &w, 8);
		if (word_special(w))
			break;
		i += 8;
	}
	while (i < len && byte_plain(s[i])) {
		o[i - from] = (char)s[i];
		i++;
	}
	return i;
}

static int refuse(docket_buf *out, size_t start, int error)
{
	out->len = start;
	out->ptr[start] = '\0';
	return error == DOCKET_EINVALID ? docket_error_set(DOCKET_EINVALID, "string is not valid UTF-8") : error;
}

/*
 * Invariant of the loop: the buffer has room for the rest of the input
 * copied as it is, the closing quote and the NUL; each escape reserves its
 * extra bytes before it is written, unless the room for the string escaped
 * whole (6 bytes a byte) was reserved at the start, as it is for strings of
 * up to WHOLE_MAX bytes.
 */
#define WHOLE_MAX ((size_t)64 * 1024)

int docket_json_write_string(docket_buf *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t start = out->len, i = 0;
	int whole = len <= WHOLE_MAX, error;

	if (len > SIZE_MAX / 2)
		return docket_error_set(DOCKET_ENOMEM, "string too long");
	if ((error = docket_buf_reserve(out, (whole ? 6 * len : len) + 2)) < 0)
		return error;
	out->ptr[out->len++] = '"';
	for (;;) {
		size_t end = copy_run(out->ptr + out->len, s, i, len);

		out->len += end - i;
		i = end;
		if (i == len)
			break;
		if (s[i] >= 0x80) {
			size_t n = docket_utf8_seq(s + i, len - i);

			if (!n)
				return refuse(out, start, DOCKET_EINVALID);
			memcpy(out->ptr + out->len, s + i, n);
			out->len += n;
			i += n;
			continue;
		}
		if (!whole && (error = docket_buf_reserve(out, len - i + 6)) < 0)
			return refuse(out, start, error);
		out->len += escape(out->ptr + out->len, s[i]);
		i++;
	}
	out->ptr[out->len++] = '"';
	out->ptr[out->len] = '\0';
	return 0;
}

int docket_json_write_int(docket_buf *out, int64_t n)
{
	char tmp[24];
	size_t o = sizeof(tmp);
	uint64_t u = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;

	do {
		tmp[--o] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (n < 0)
		tmp[--o] = '-';
	return docket_buf_put(out, tmp + o, sizeof(tmp) - o);
}

/* ---- the recognizer of jansson's compact dumps ---- */

#define DUMP_MAX_DEPTH 32
#define DUMP_MAX_KEYS 32

typedef struct dump_scan {
	const unsigned char *p, *end;
	int depth;
} dump_scan;

static int scan_value(dump_scan *d);

static int upper_hex(unsigned char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* \u00XX as jansson writes it: only for bytes below 0x20 without a short form. */
static int scan_u_escape(dump_scan *d, int key)
{
	const unsigned char *p = d->p;
	int hi, lo, v;

	if (d->end - p < 6 || p[2] != '0' || p[3] != '0' || (hi = upper_hex(p[4])) < 0 || hi > 1 ||
	    (lo = upper_hex(p[5])) < 0)
		return 0;
	v = hi << 4 | lo;
	if (v == '\b' || v == '\f' || v == '\n' || v == '\r' || v == '\t' || (key && v == 0))
		return 0; /* jansson writes the short form; it refuses NUL in keys */
	d->p += 6;
	return 1;
}

/* A string from its opening quote; `key`: no NUL allowed. */
static int scan_string(dump_scan *d, int key)
{
	size_t len = (size_t)(d->end - d->p);
	const unsigned char *s = d->p;
	size_t i = 1;

	for (;;) {
		unsigned char c;

		i = plain_run(s, i, len);
		if (i == len)
			return 0;
		c = s[i];
		if (c == '"') {
			d->p = s + i + 1;
			return 1;
		}
		if (c >= 0x80) {
			size_t n = docket_utf8_seq(s + i, len - i);

			if (!n)
				return 0;
			i += n;
			continue;
		}
		if (c != '\\' || i + 1 == len)
			return 0; /* a raw control byte */
		switch (s[i + 1]) {
		case '"': case '\\': case 'b': case 'f': case 'n': case 'r': case 't':
			i += 2;
			continue;
		case 'u':
			d->p = s + i;
			if (!scan_u_escape(d, key))
				return 0;
			i += 6;
			continue;
		default:
			return 0; /* "\/" and the like: jansson never writes them */
		}
	}
}

/* -?(0|[1-9][0-9]{0,17}), "-0" excluded (jansson writes it as 0). */
static int scan_integer(dump_scan *d)
{
	const unsigned char *p = d->p, *digits;

	if (*p == '-')
		p++;
	digits = p;
	if (p == d->end || *p < '0' || *p > '9')
		return 0;
	if (*p == '0') {
		p++;
		if (digits != d->p)
			return 0;
	} else {
		while (p < d->end && *p >= '0' && *p <= '9' && p - digits < 18)
			p++;
	}
	if (p < d->end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E'))
		return 0; /* too long, or a real: left to jansson */
	d->p = p;
	return 1;
}

static int scan_literal(dump_scan *d, const char *word, size_t n)
{
	if ((size_t)(d->end - d->p) < n || memcmp(d->p, word, n) != 0)
		return 0;
	d->p += n;
	return 1;
}

/* Keys are compared as written: the canonical form of a string is unique. */
static int scan_object(dump_scan *d)
{
	const unsigned char *key[DUMP_MAX_KEYS];
	size_t klen[DUMP_MAX_KEYS], n = 0;

	d->p++;
	if (d->p < d->end && *d->p == '}') {
		d->p++;
		return 1;
	}
	for (;;) {
		const unsigned char *k = d->p;

		if (n == DUMP_MAX_KEYS || d->p == d->end || *d->p != '"' || !scan_string(d, 1))
			return 0;
		key[n] = k;
		klen[n] = (size_t)(d->p - k);
		for (size_t i = 0; i < n; i++)
			if (klen[i] == klen[n] && memcmp(key[i], k, klen[n]) == 0)
				return 0; /* jansson keeps the last value at the first place */
		n++;
		if (d->p == d->end || *d->p++ != ':' || !scan_value(d) || d->p == d->end)
			return 0;
		if (*d->p == '}') {
			d->p++;
			return 1;
		}
		if (*d->p++ != ',')
			return 0;
	}
}

static int scan_array(dump_scan *d)
{
	d->p++;
	if (d->p < d->end && *d->p == ']') {
		d->p++;
		return 1;
	}
	for (;;) {
		if (!scan_value(d) || d->p == d->end)
			return 0;
		if (*d->p == ']') {
			d->p++;
			return 1;
		}
		if (*d->p++ != ',')
			return 0;
	}
}

static int scan_value(dump_scan *d)
{
	int ok;

	if (d->p == d->end)
		return 0;
	switch (*d->p) {
	case '"': return scan_string(d, 0);
	case 't': return scan_literal(d, "true", 4);
	case 'f': return scan_literal(d, "false", 5);
	case 'n': return scan_literal(d, "null", 4);
	case '{':
	case '[':
		if (++d->depth > DUMP_MAX_DEPTH)
			return 0;
		ok = *d->p == '{' ? scan_object(d) : scan_array(d);
		d->depth--;
		return ok;
	default:
		return scan_integer(d);
	}
}

int docket_json_is_dump(const char *text, size_t len)
{
	dump_scan d = { (const unsigned char *)text, (const unsigned char *)text + len, 0 };

	return text && scan_value(&d) && d.p == d.end;
}
