/* SPDX-License-Identifier: Apache-2.0 */
/* utf8.c: strict UTF-8 validation. */
#include "utf8.h"

#include <stdint.h>

size_t docket_utf8_seq(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 2;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 3;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (avail - 1 < n)
		return 0;
	for (size_t k = 1; k <= n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[k] & 0x3f);
	}
	if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n + 1;
}

size_t docket_utf8_check(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		size_t n = p[i] < 0x80 ? 1 : docket_utf8_seq(p + i, len - i);

		if (!n)
			return i;
		i += n;
	}
	return len;
}
