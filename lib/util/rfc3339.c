/* SPDX-License-Identifier: Apache-2.0 */
#include "rfc3339.h"

#include <string.h>

static int digits(const char *s, size_t n, int *out)
{
	int v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int docket_time_parse_ms(const char *s, unsigned int flags, int64_t *out_ms)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int year, mon, day, hour, min, sec, ms = 0;
	int64_t off_min = 0, total;
	size_t len, i;

	if (!s)
		return -1;
	len = strlen(s);
	/* YYYY-MM-DDTHH:MM:SS is 19 characters, then fraction and zone */
	if (len < 20)
		return -1;
	if (digits(s, 4, &year) < 0 || s[4] != '-' || digits(s + 5, 2, &mon) < 0 ||
	    s[7] != '-' || digits(s + 8, 2, &day) < 0 ||
	    (s[10] != 'T' && ((flags & DOCKET_TIME_UTC_ONLY) || (s[10] != 't' && s[10] != ' '))) ||
	    digits(s + 11, 2, &hour) < 0 || s[13] != ':' || digits(s + 14, 2, &min) < 0 ||
	    s[16] != ':' || digits(s + 17, 2, &sec) < 0)
		return -1;
	if (mon < 1 || mon > 12 || day < 1 || hour > 23 || min > 59 || sec > 60)
		return -1;
	{
		int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
		int dim = mdays[mon - 1] + (mon == 2 && leap);

		if (day > dim)
			return -1;
	}
	i = 19;
	if (s[i] == '.') {
		size_t start = ++i;
		int scale = 100;

		while (i < len && s[i] >= '0' && s[i] <= '9') {
			if (scale > 0) {
				ms += (s[i] - '0') * scale;
				scale /= 10;
			}
			i++;
		}
		if (i == start || i - start > 9)
			return -1;
	}
	if (i >= len)
		return -1;
	if (s[i] == 'Z' || (s[i] == 'z' && !(flags & DOCKET_TIME_UTC_ONLY))) {
		i++;
	} else if ((s[i] == '+' || s[i] == '-') && !(flags & DOCKET_TIME_UTC_ONLY)) {
		int oh, om;

		if (len - i != 6 || digits(s + i + 1, 2, &oh) < 0 || s[i + 3] != ':' ||
		    digits(s + i + 4, 2, &om) < 0 || oh > 23 || om > 59)
			return -1;
		off_min = (int64_t)oh * 60 + om;
		if (s[i] == '-')
			off_min = -off_min;
		i += 6;
	} else {
		return -1;
	}
	if (i != len)
		return -1;
	total = days_from_civil(year, mon, day) * 86400 + (int64_t)hour * 3600 +
		(int64_t)min * 60 + sec - off_min * 60;
	*out_ms = total * 1000 + ms;
	return 0;
}
