/* SPDX-License-Identifier: Apache-2.0 */
/*
 * url.c: the host, port and path of a URL as the WHATWG URL standard (and
 * so Claude Code's `new URL()` and the fetch that follows) finds them, not
 * as a naive split would (issue 26):
 *   - tabs and newlines anywhere are removed, C0 and spaces trimmed;
 *   - in http(s)/ws(s)/ftp URLs `\` is a `/`: `https://evil.com\@good.com/`
 *     fetches evil.com;
 *   - the host is after the last `@` of the authority, before the first `:`;
 *   - the host is percent-decoded, lower-cased, full-width letters and the
 *     ideographic and full-width dots are mapped to ASCII (the UTS 46 steps
 *     that matter for rule matching), numeric hosts become dotted IPv4.
 * Anything else non-ASCII stays as UTF-8 (no Punycode here): no ASCII rule
 * matches it, so the call is judged as an unknown host.
 */
#include <string.h>

#include "policy.h"

#include "util/error.h"

static bool special_scheme(const char *s)
{
	return strcmp(s, "http") == 0 || strcmp(s, "https") == 0 || strcmp(s, "ws") == 0 ||
	       strcmp(s, "wss") == 0 || strcmp(s, "ftp") == 0;
}

static int hexv(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* WHATWG forbidden domain code points (ASCII part). */
static bool forbidden(unsigned char c)
{
	return c <= 0x20 || c == 0x7F || strchr("#%/:<>?@[\\]^|", c) != NULL;
}

/* One UTF-8 code point at s[*i] (bounds-checked); -1: invalid. */
static long utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	unsigned char c = s[*i];
	size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
	long cp;

	if (len == 0 || *i + len > n)
		return -1;
	cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
	for (size_t k = 1; k < len; k++) {
		if ((s[*i + k] & 0xC0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[*i + k] & 0x3F);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*i += len;
	return cp;
}

/* One IPv4 part (decimal, 0x hex, 0 octal); -1: not a number. */
static long long ipv4_part(const char *s, size_t n)
{
	int base = 10;
	long long v = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		n -= 2;
	} else if (n >= 2 && s[0] == '0') {
		base = 8;
		s++;
		n--;
	}
	if (n == 0)
		return base == 10 ? -1 : 0;
	for (size_t i = 0; i < n; i++) {
		int d = hexv((unsigned char)s[i]);

		if (d < 0 || d >= base)
			return -1;
		v = v * base + d;
		if (v > 0xFFFFFFFFll)
			return 1ll << 33;   /* too large: failure below */
	}
	return v;
}

/* A host whose last label is a number is IPv4 (WHATWG "ends in a number"). */
static int ipv4(docket_buf *host, const char *url)
{
	char *h = host->ptr;
	size_t n = host->len, parts = 0, start = 0;
	long long v[4];
	unsigned long long addr = 0;
	const char *last;

	if (n && h[n - 1] == '.')
		n--;
	last = memrchr(h, '.', n);
	last = last ? last + 1 : h;
	if (ipv4_part(last, (size_t)(h + n - last)) < 0)
		return 0;   /* not a number: a domain */
	for (size_t i = 0; i <= n; i++) {
		if (i < n && h[i] != '.')
			continue;
		if (parts == 4 || (v[parts] = ipv4_part(h + start, i - start)) < 0)
			return docket_error_set(DOCKET_EINVALID, "network url %s has a bad IPv4 host", url);
		parts++;
		start = i + 1;
	}
	for (size_t i = 0; i + 1 < parts; i++) {
		if (v[i] > 255)
			return docket_error_set(DOCKET_EINVALID, "network url %s has a bad IPv4 host", url);
		addr = (addr << 8) | (unsigned long long)v[i];
	}
	if (v[parts - 1] >= (1ll << (8 * (5 - parts))))
		return docket_error_set(DOCKET_EINVALID, "network url %s has a bad IPv4 host", url);
	addr = (addr << (8 * (5 - parts))) | (unsigned long long)v[parts - 1];
	docket_buf_clear(host);
	return docket_buf_printf(host, "%llu.%llu.%llu.%llu", (addr >> 24) & 255, (addr >> 16) & 255,
				 (addr >> 8) & 255, addr & 255);
}

/* Percent-decode, map and check the host bytes [h, h+n) into out. */
static int host_of(docket_buf *out, const char *h, size_t n, const char *url)
{
	docket_buf dec = DOCKET_BUF_INIT;
	const unsigned char *s;
	size_t i = 0;
	int error = 0;

	docket_buf_clear(out);
	for (size_t k = 0; k < n && error == 0; k++) {
		int a, b;

		if (h[k] == '%' && k + 2 < n && (a = hexv((unsigned char)h[k + 1])) >= 0 &&
		    (b = hexv((unsigned char)h[k + 2])) >= 0) {
			error = docket_buf_putc(&dec, (char)(a * 16 + b));
			k += 2;
		} else {
			error = docket_buf_putc(&dec, h[k]);
		}
	}
	if (error < 0)
		goto done;
	s = (const unsigned char *)(dec.ptr ? dec.ptr : "");
	while (i < dec.len) {
		long cp = utf8_next(s, dec.len, &i);

		if (cp < 0) {
			error = docket_error_set(DOCKET_EINVALID, "network url %s has a host that is not UTF-8", url);
			goto done;
		}
		if (cp == 0x3002 || cp == 0xFF0E || cp == 0xFF61)
			cp = '.';
		else if (cp >= 0xFF01 && cp <= 0xFF5E)
			cp -= 0xFEE0;   /* full-width ASCII */
		else if (cp == 0xAD || cp == 0x200B || cp == 0x200C || cp == 0x200D || cp == 0x2060 || cp == 0xFEFF)
			continue;       /* UTS 46 maps these to nothing */
		if (cp < 0x80) {
			unsigned char c = (unsigned char)cp;

			if (forbidden(c)) {
				error = docket_error_set(DOCKET_EINVALID, "network url %s has a forbidden host character", url);
				goto done;
			}
			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c - 'A' + 'a');
			if ((error = docket_buf_putc(out, (char)c)) < 0)
				goto done;
		} else {
			/* non-ASCII, kept as UTF-8 (no rule written in ASCII matches it) */
			char u[4];
			size_t ul = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;

			if (ul == 2) {
				u[0] = (char)(0xC0 | (cp >> 6));
				u[1] = (char)(0x80 | (cp & 0x3F));
			} else if (ul == 3) {
				u[0] = (char)(0xE0 | (cp >> 12));
				u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
				u[2] = (char)(0x80 | (cp & 0x3F));
			} else {
				u[0] = (char)(0xF0 | (cp >> 18));
				u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
				u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
				u[3] = (char)(0x80 | (cp & 0x3F));
			}
			if ((error = docket_buf_put(out, u, ul)) < 0)
				goto done;
		}
	}
	if (out->len == 0) {
		error = docket_error_set(DOCKET_EINVALID, "network url %s has no host", url);
		goto done;
	}
	error = ipv4(out, url);
done:
	docket_buf_dispose(&dec);
	return error;
}

int pol_url_parse(pol_url *u, const char *url)
{
	docket_buf clean = DOCKET_BUF_INIT;
	const char *s, *p, *end, *auth, *auth_end, *at, *h, *he;
	size_t n = strlen(url), sl;
	bool special;
	int error = 0;

	docket_buf_clear(&u->host);
	docket_buf_clear(&u->path);
	u->port = 0;
	u->has_port = false;
	/* trim C0 and spaces, drop tabs and newlines */
	while (n && (unsigned char)url[0] <= 0x20)
		url++, n--;
	while (n && (unsigned char)url[n - 1] <= 0x20)
		n--;
	for (size_t i = 0; i < n && error == 0; i++)
		if (url[i] != '\t' && url[i] != '\n' && url[i] != '\r')
			error = docket_buf_putc(&clean, url[i]);
	if (error == 0)
		error = docket_buf_putc(&clean, '\0');
	if (error < 0)
		goto done;
	s = clean.ptr;
	/* scheme */
	p = s;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
		error = docket_error_set(DOCKET_EINVALID, "network url %s has no scheme", url);
		goto done;
	}
	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '+' ||
	       *p == '-' || *p == '.')
		p++;
	sl = (size_t)(p - s);
	if (*p != ':' || sl >= sizeof(u->scheme)) {
		error = docket_error_set(DOCKET_EINVALID, "network url %s has no scheme", url);
		goto done;
	}
	for (size_t i = 0; i < sl; i++)
		u->scheme[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
	u->scheme[sl] = '\0';
	special = special_scheme(u->scheme);
	p++;
	if (special) {
		while (*p == '/' || *p == '\\')
			p++;
	} else if (p[0] == '/' && p[1] == '/') {
		p += 2;
	} else {
		error = docket_error_set(DOCKET_EINVALID, "network url %s has no host", url);
		goto done;
	}
	/* authority: up to / ? # (and \ in special URLs); the host after its last @ */
	auth = p;
	end = s + strlen(s);
	auth_end = auth;
	while (auth_end < end && *auth_end != '/' && *auth_end != '?' && *auth_end != '#' &&
	       !(special && *auth_end == '\\'))
		auth_end++;
	for (at = NULL, h = auth; h < auth_end; h++)
		if (*h == '@')
			at = h;
	h = at ? at + 1 : auth;
	if (h < auth_end && *h == '[') {
		const char *close = memchr(h, ']', (size_t)(auth_end - h));

		if (!close) {
			error = docket_error_set(DOCKET_EINVALID, "network url %s has a bad IPv6 host", url);
			goto done;
		}
		for (const char *q = h + 1; q < close && error == 0; q++)
			error = docket_buf_putc(&u->host, (char)((*q >= 'A' && *q <= 'Z') ? *q - 'A' + 'a' : *q));
		if (error == 0 && u->host.len == 0)
			error = docket_error_set(DOCKET_EINVALID, "network url %s has a bad IPv6 host", url);
		if (error < 0)
			goto done;
		he = close + 1;
		if (he < auth_end && *he != ':') {
			error = docket_error_set(DOCKET_EINVALID, "network url %s has a bad IPv6 host", url);
			goto done;
		}
	} else {
		he = h;
		while (he < auth_end && *he != ':')
			he++;
		if ((error = host_of(&u->host, h, (size_t)(he - h), url)) < 0)
			goto done;
	}
	if (he < auth_end && *he == ':') {
		unsigned port = 0;

		for (he++; he < auth_end; he++) {
			if (*he < '0' || *he > '9' || (port = port * 10 + (unsigned)(*he - '0')) > 65535) {
				error = docket_error_set(DOCKET_EINVALID, "network url %s has a bad port", url);
				goto done;
			}
			u->has_port = true;
		}
		u->port = port;
	}
	/* the path, without query or fragment; `\` is `/` in special URLs */
	for (p = auth_end; p < end && *p != '?' && *p != '#' && error == 0; p++)
		error = docket_buf_putc(&u->path, special && *p == '\\' ? '/' : *p);
	if (error == 0)
		error = docket_buf_putc(&u->path, '\0');
	if (error == 0)
		u->path.len--;
	if (error == 0 && (error = docket_buf_putc(&u->host, '\0')) == 0)
		u->host.len--;
done:
	docket_buf_dispose(&clean);
	return error;
}

void pol_url_dispose(pol_url *u)
{
	docket_buf_dispose(&u->host);
	docket_buf_dispose(&u->path);
}

/* ---- IDNA: equivalence without Punycode (docs/policy.md "Hosts") ---- */

static bool ascii_only(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return false;
	return true;
}

static bool ieq_n(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] + 32) : a[i];
		char y = b[i] >= 'A' && b[i] <= 'Z' ? (char)(b[i] + 32) : b[i];

		if (x != y)
			return false;
	}
	return true;
}

/*
 * One label of a rule against one of a host. Equal text is equal. A
 * non-ASCII label (left after url.c's mapping) may map onto any other
 * under full UTS 46, and an ACE label (xn--) onto a Unicode one: unknown.
 * An ACE label never equals a plain ASCII one (its Unicode form is not
 * ASCII), nor a different ACE label.
 */
static int label_equiv(const char *r, size_t rn, const char *h, size_t hn)
{
	bool ra = ascii_only(r, rn), ha = ascii_only(h, hn);

	if (rn == hn && ieq_n(r, h, rn))
		return POL_HOST_EQUAL;
	if (!ra || !ha)
		return POL_HOST_UNKNOWN;
	return POL_HOST_UNEQUAL;
}

int pol_host_equivalence(const char *rule, size_t rlen, const char *host)
{
	size_t hlen = strlen(host);
	bool wild = rlen > 2 && rule[0] == '*' && rule[1] == '.';
	int result = POL_HOST_EQUAL;

	if (wild) {
		rule += 2;
		rlen -= 2;
	}
	while (rlen > 0 && hlen > 0) {
		/* the last label of each */
		size_t rs = rlen, hs = hlen;
		int e;

		while (rs > 0 && rule[rs - 1] != '.')
			rs--;
		while (hs > 0 && host[hs - 1] != '.')
			hs--;
		e = label_equiv(rule + rs, rlen - rs, host + hs, hlen - hs);
		if (e == POL_HOST_UNEQUAL)
			return POL_HOST_UNEQUAL;
		if (e == POL_HOST_UNKNOWN)
			result = POL_HOST_UNKNOWN;
		rlen = rs ? rs - 1 : 0;
		hlen = hs ? hs - 1 : 0;
		if ((rs == 0) != (hs == 0)) {
			/* one ran out: a wildcard rule covers the host's deeper labels */
			return wild && rs == 0 ? result : POL_HOST_UNEQUAL;
		}
		if (rs == 0)
			return wild ? POL_HOST_UNEQUAL : result;   /* *.x.com does not match x.com */
	}
	return POL_HOST_UNEQUAL;
}
