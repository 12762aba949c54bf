/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_timespec.c: --since/--until values are outside input (every read
 * command's arguments). Parse arbitrary bytes (as a C string) at a fixed and
 * at an extreme "now"; what parses must be a seq >= 1, or a time that the
 * same text parses to again; what fails leaves the output untouched.
 */
#include <stdlib.h>
#include <string.h>

#include "util/timespec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *s, int64_t now)
{
	docket_timespec t = { (docket_timespec_kind)0, -7, 7 }, again;

	if (docket_timespec_parse(&t, s, now) != 0) {
		if (t.kind != 0 || t.ms != -7 || t.seq != 7)
			abort();  /* a failed parse moved the output */
		return;
	}
	if (t.kind == DOCKET_TIMESPEC_SEQ && (t.seq == 0 || s[0] != '#'))
		abort();
	if (t.kind == DOCKET_TIMESPEC_TIME && (s[0] == '#' || t.seq != 0))
		abort();
	if (docket_timespec_parse(&again, s, now) != 0 || again.kind != t.kind || again.ms != t.ms ||
	    again.seq != t.seq)
		abort();  /* not deterministic */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	check(s, 1775742715771LL);
	check(s, 0);
	check(s, INT64_MAX);
	free(s);
	return 0;
}
