/* SPDX-License-Identifier: Apache-2.0 */
/* timespec.c: --since / --until values (timespec.h). */
#include "util/timespec.h"

#include <string.h>

#include "util/rfc3339.h"

const char docket_timespec_forms[] =
	"an RFC 3339 time (2026-04-01T09:30:00Z), a date (2026-04-01), a relative time (2h, 7d) or a seq (#123)";

/* Digits of s[0..n) as a positive number no larger than `max`; -1 otherwise. */
static int64_t digits(const char *s, size_t n, int64_t max)
{
	int64_t v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (max - (s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int parse_relative(int64_t *out_ms, const char *s, int64_t now_ms)
{
	static const struct {
		char unit;
		int64_t ms;
	} units[] = { { 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 }, { 'd', 86400000 }, { 'w', 604800000 } };
	size_t n = strlen(s);
	int64_t amount;

	if (n < 2)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (s[n - 1] != units[i].unit)
			continue;
		amount = digits(s, n - 1, INT64_MAX / units[i].ms);
		/* digits() bounded amount * unit; before the epoch is refused */
		if (amount <= 0 || amount * units[i].ms > now_ms)
			return -1;
		*out_ms = now_ms - amount * units[i].ms;
		return 0;
	}
	return -1;
}

/* "YYYY-MM-DD": midnight UTC, checked by the RFC 3339 parser. */
static int parse_date(int64_t *out_ms, const char *s)
{
	char full[32];

	if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	memcpy(full, s, 10);
	memcpy(full + 10, "T00:00:00Z", 11);
	return docket_time_parse_ms(full, 0, out_ms);
}

int docket_timespec_parse(docket_timespec *out, const char *s, int64_t now_ms)
{
	int64_t v;

	if (!s || !*s)
		return -1;
	if (s[0] == '#') {
		if ((v = digits(s + 1, strlen(s + 1), INT64_MAX)) <= 0)
			return -1;
		out->kind = DOCKET_TIMESPEC_SEQ;
		out->seq = (uint64_t)v;
		out->ms = 0;
		return 0;
	}
	if (parse_date(&v, s) < 0 && docket_time_parse_ms(s, 0, &v) < 0 && parse_relative(&v, s, now_ms) < 0)
		return -1;
	out->kind = DOCKET_TIMESPEC_TIME;
	out->ms = v;
	out->seq = 0;
	return 0;
}
