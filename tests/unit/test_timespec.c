/* SPDX-License-Identifier: Apache-2.0 */
/* test_timespec.c: the one --since/--until syntax (util/timespec.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/timespec.h"

/* 2026-04-09T13:51:55.771Z */
#define NOW 1775742715771LL

static void test_forms(void **state)
{
	docket_timespec t;

	(void)state;
	assert_int_equal(docket_timespec_parse(&t, "2026-04-01T00:00:00Z", NOW), 0);
	assert_int_equal(t.kind, DOCKET_TIMESPEC_TIME);
	assert_true(t.ms == 1775001600000LL);
	assert_int_equal(docket_timespec_parse(&t, "2026-04-01", NOW), 0);
	assert_true(t.ms == 1775001600000LL);
	assert_int_equal(docket_timespec_parse(&t, "2026-04-01T02:00:00+02:00", NOW), 0);
	assert_true(t.ms == 1775001600000LL);
	assert_int_equal(docket_timespec_parse(&t, "2h", NOW), 0);
	assert_true(t.ms == NOW - 7200000LL);
	assert_int_equal(docket_timespec_parse(&t, "7d", NOW), 0);
	assert_true(t.ms == NOW - 7 * 86400000LL);
	assert_int_equal(docket_timespec_parse(&t, "90s", NOW), 0);
	assert_true(t.ms == NOW - 90000LL);
	assert_int_equal(docket_timespec_parse(&t, "45m", NOW), 0);
	assert_true(t.ms == NOW - 45 * 60000LL);
	assert_int_equal(docket_timespec_parse(&t, "2w", NOW), 0);
	assert_true(t.ms == NOW - 14 * 86400000LL);
	assert_int_equal(docket_timespec_parse(&t, "#123", NOW), 0);
	assert_int_equal(t.kind, DOCKET_TIMESPEC_SEQ);
	assert_true(t.seq == 123);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"", "#", "#0", "#-1", "#12x", "# 1", "0h", "h", "2", "2y", "-2h", "2 h", "2h ",
		"2026-02-30", "2026-13-01", "2026-4-1", "2026-04-01T", "2026-04-01 junk", "yesterday",
		"99999999999999999999d", "9223372036854775807s", "#99999999999999999999", "1000000w", NULL
	};
	docket_timespec t = { DOCKET_TIMESPEC_SEQ, 7, 7 };

	(void)state;
	for (size_t i = 0; bad[i]; i++) {
		if (docket_timespec_parse(&t, bad[i], NOW) == 0)
			fail_msg("'%s' was accepted", bad[i]);
		assert_int_equal(t.kind, DOCKET_TIMESPEC_SEQ);  /* untouched */
		assert_true(t.seq == 7 && t.ms == 7);
	}
	assert_int_equal(docket_timespec_parse(&t, NULL, NOW), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
