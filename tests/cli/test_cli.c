/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cli.c: the CLI's own helpers (app/cli/cli_*.c): RFC 3339 parsing with its
 * bounds, durations, call summaries, the option parser, exit-code mapping.
 * The commands themselves are pinned by the golden cases beside this file.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util/alloc.h"

static int64_t t(const char *s)
{
	int64_t ms = -12345;

	assert_int_equal(cli_time_parse(s, &ms), 0);
	return ms;
}

static void bad_time(const char *s)
{
	int64_t ms = 42;

	assert_int_equal(cli_time_parse(s, &ms), -1);
	assert_int_equal(ms, 42); /* untouched on failure */
}

static void test_time_valid(void **state)
{
	(void)state;
	assert_true(t("1970-01-01T00:00:00Z") == 0);
	assert_true(t("1970-01-01T00:00:01.5Z") == 1500);
	assert_true(t("2025-03-14T09:26:53.120Z") == 1741944413120LL);
	assert_true(t("2025-03-14T09:26:53.120999999Z") == 1741944413120LL);
	assert_true(t("2025-03-14t09:26:53z") == 1741944413000LL);
	/* offsets */
	assert_true(t("2025-03-14T10:26:53+01:00") == t("2025-03-14T09:26:53Z"));
	assert_true(t("2025-03-14T04:56:53-04:30") == t("2025-03-14T09:26:53Z"));
	/* leap day, leap second, before 1970 */
	assert_true(t("2024-02-29T00:00:00Z") - t("2024-02-28T00:00:00Z") == 86400000LL);
	assert_true(t("2016-12-31T23:59:60Z") == t("2017-01-01T00:00:00Z"));
	assert_true(t("1969-12-31T23:59:59Z") == -1000);
	assert_true(t("2000-02-29T12:00:00Z") > 0);
}

static void test_time_invalid(void **state)
{
	(void)state;
	bad_time(NULL);
	bad_time("");
	bad_time("2025-03-14");
	bad_time("2025-03-14T09:26:53");          /* no zone */
	bad_time("2025-03-14T09:26:53.Z");        /* empty fraction */
	bad_time("2025-03-14T09:26:53.1234567890Z"); /* > 9 digits */
	bad_time("2025-13-01T00:00:00Z");
	bad_time("2025-00-01T00:00:00Z");
	bad_time("2025-01-00T00:00:00Z");
	bad_time("2025-04-31T00:00:00Z");
	bad_time("2023-02-29T00:00:00Z");         /* not a leap year */
	bad_time("1900-02-29T00:00:00Z");         /* century rule */
	bad_time("2025-01-01T24:00:00Z");
	bad_time("2025-01-01T00:60:00Z");
	bad_time("2025-01-01T00:00:61Z");
	bad_time("2025-01-01T00:00:00+24:00");
	bad_time("2025-01-01T00:00:00+01:60");
	bad_time("2025-01-01T00:00:00+0100");
	bad_time("2025-01-01T00:00:00Zjunk");
	bad_time("2025-01-01X00:00:00Z");
	bad_time("2O25-01-01T00:00:00Z");
	bad_time("2025/01/01T00:00:00Z");
	bad_time("+025-01-01T00:00:00Z");
}

static void test_duration(void **state)
{
	char b[32];

	(void)state;
	cli_duration(b, sizeof(b), -1);
	assert_string_equal(b, "-");
	cli_duration(b, sizeof(b), 0);
	assert_string_equal(b, "0ms");
	cli_duration(b, sizeof(b), 999);
	assert_string_equal(b, "999ms");
	cli_duration(b, sizeof(b), 1250);
	assert_string_equal(b, "1.25s");
	cli_duration(b, sizeof(b), 12650);
	assert_string_equal(b, "12.6s");
	cli_duration(b, sizeof(b), 185000);
	assert_string_equal(b, "3m05s");
	cli_duration(b, sizeof(b), 7440000);
	assert_string_equal(b, "2h04m");
	cli_duration(b, 4, 7440000); /* truncated, still terminated */
	assert_int_equal(strlen(b), 3);
}

static void summary(const char *tool, const char *args_json, size_t max, const char *want)
{
	json_t *args = args_json ? test_json(args_json) : NULL;
	char *s = NULL;

	assert_int_equal(cli_call_summary(&s, tool, args, max), 0);
	assert_non_null(s);
	assert_string_equal(s, want);
	docket_free(s);
	json_decref(args);
}

static void test_call_summary(void **state)
{
	(void)state;
	summary("shell", "{\"command\":[\"bash\",\"-lc\",\"git status && npm test\"]}", 0,
		"git status && npm test");
	summary("shell", "{\"command\":[\"/bin/zsh\",\"-c\",\"ls\"]}", 0, "ls");
	summary("shell", "{\"command\":[\"git\",\"commit\",\"-m\",\"fix it\",\"\"]}", 0,
		"git commit -m 'fix it' ''");
	summary("shell", "{\"command\":\"make  all\"}", 0, "make  all");
	summary("shell", "{\"command\":[\"bash\",\"-lc\",\"a\\nb\\t\\tc\"]}", 0, "a b c");
	summary("shell", "{}", 0, "");
	summary("apply_patch", "{\"changes\":[{\"path\":\"a.c\",\"op\":\"update\"},"
		"{\"path\":\"b.c\",\"op\":\"move\",\"to\":\"c.c\"}]}", 0,
		"update a.c, move b.c -> c.c");
	summary("read_file", "{\"path\":\"/etc/hosts\"}", 0, "/etc/hosts");
	summary("network", "{\"url\":\"https://x.dev/a\"}", 0, "https://x.dev/a");
	summary("network", "{\"host\":\"x.dev\",\"port\":443,\"protocol\":\"https\"}", 0,
		"https://x.dev:443");
	summary("run_code", "{\"language\":\"python\",\"source\":\"print(1)\"}", 0,
		"python: print(1)");
	summary("install_packages", "{\"ecosystem\":\"npm\",\"packages\":[\"left-pad\",\"lodash\"]}",
		0, "npm: left-pad lodash");
	summary("mcp", "{\"server\":\"github\",\"tool\":\"create_issue\",\"arguments\":{}}", 0,
		"github/create_issue");
	summary("WebSearch", "{\"query\":\"docket\"}", 0, "{\"query\":\"docket\"}");
	summary("WebSearch", NULL, 0, "");
	summary(NULL, NULL, 0, "");
	/* cut at max code points, never inside a UTF-8 sequence */
	summary("shell", "{\"command\":\"abcdefghij\"}", 8, "abcde...");
	summary("shell", "{\"command\":\"abcdefgh\"}", 8, "abcdefgh");
	summary("shell", "{\"command\":\"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}",
		8, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
}

/* ---- option parsing ---- */

static int dummy(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	(void)cmd; (void)g; (void)argc; (void)argv;
	return 0;
}

static const cli_command cmd_x = { "x", dummy, "a test command", CLI_FORKED };

typedef struct parsed {
	int json;
	int follow;
	const char *session;
	uint64_t since;
	const char *first;
	cli_args rest;
} parsed;

static int parse(parsed *p, int argc, char **argv)
{
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "session", 's', &p->session, "S", "session", 0 },
		{ CLI_OPT_U64, "since", 0, &p->since, "SEQ", "since", 0 },
		CLI_OPT_JSON(&p->json),
		{ CLI_OPT_SWITCH, "follow", 'f', &p->follow, NULL, "follow", 0 },
		{ CLI_OPT_ARG, "FIRST", 0, &p->first, NULL, "first", CLI_OPT_REQUIRED },
		{ CLI_OPT_ARGS, "REST", 0, &p->rest, NULL, "rest", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	int rc;

	memset(p, 0, sizeof(*p));
	/* usage errors print to stderr; keep the test output readable */
	fflush(stderr);
	rc = cli_parse(&cmd_x, opts, NULL, argc, argv);
	return rc;
}

#define ARGV(...) ((char *[]){ "x", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "x", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(p, ...) parse((p), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

static void test_parse_ok(void **state)
{
	parsed p;

	(void)state;
	assert_int_equal(PARSE(&p, "--json", "-s", "s1", "--since=7", "one", "two", "three"),
			 CLI_PARSE_OK);
	assert_true(p.json);
	assert_false(p.follow);
	assert_string_equal(p.session, "s1");
	assert_true(p.since == 7);
	assert_string_equal(p.first, "one");
	assert_int_equal(p.rest.n, 2);
	assert_string_equal(p.rest.v[0], "two");
	assert_string_equal(p.rest.v[1], "three");

	assert_int_equal(PARSE(&p, "-ss2", "--session", "s3", "-f", "a"), CLI_PARSE_OK);
	assert_string_equal(p.session, "s3"); /* the last one wins */
	assert_true(p.follow);

	/* "-" is a positional, "--" ends the options */
	assert_int_equal(PARSE(&p, "-", "--", "--json"), CLI_PARSE_OK);
	assert_string_equal(p.first, "-");
	assert_false(p.json);
	assert_int_equal(p.rest.n, 1);
	assert_string_equal(p.rest.v[0], "--json");

	assert_int_equal(PARSE(&p, "--since", "18446744073709551615", "a"), CLI_PARSE_OK);
	assert_true(p.since == UINT64_MAX);
}

static void test_parse_errors(void **state)
{
	parsed p;

	(void)state;
	assert_int_equal(PARSE(&p, "--nope", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "-z", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "a", "--session"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "--json=yes", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "-fx", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "--since", "-1", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "--since", "12x", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "--since", "", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "--since", "18446744073709551616", "a"), CLI_PARSE_ERROR);
	assert_int_equal(PARSE(&p, "--json"), CLI_PARSE_ERROR); /* FIRST is required */
	assert_int_equal(PARSE(&p, "--sess", "s1", "a"), CLI_PARSE_ERROR); /* no prefixes */
}

static void test_parse_help(void **state)
{
	parsed p;
	FILE *saved = stdout;
	FILE *sink = fopen("/dev/null", "w");

	(void)state;
	assert_non_null(sink);
	stdout = sink;
	assert_int_equal(PARSE(&p, "a", "--help"), CLI_PARSE_HELP);
	assert_int_equal(PARSE(&p, "-h"), CLI_PARSE_HELP);
	stdout = saved;
	fclose(sink);
	assert_int_equal(CLI_PARSE_EXIT(CLI_PARSE_HELP), CLI_EXIT_OK);
	assert_int_equal(CLI_PARSE_EXIT(CLI_PARSE_ERROR), CLI_EXIT_USAGE);
}

static void test_exit_codes(void **state)
{
	(void)state;
	assert_int_equal(cli_exit_code(DOCKET_OK), 0);
	assert_int_equal(cli_exit_code(DOCKET_EINVALID), 2);
	assert_int_equal(cli_exit_code(DOCKET_ETRANSITION), 2);
	assert_int_equal(cli_exit_code(DOCKET_ESTALE), 2);
	assert_int_equal(cli_exit_code(DOCKET_ECONFLICT), 2);
	assert_int_equal(cli_exit_code(DOCKET_ENOTFOUND), 2);
	assert_int_equal(cli_exit_code(DOCKET_ESTORAGE), 3);
	assert_int_equal(cli_exit_code(DOCKET_ENOMEM), 3);
	assert_int_equal(cli_exit_code(DOCKET_EMAPFULL), 3);
	assert_int_equal(cli_exit_code(DOCKET_EVERSION), 3);
	assert_int_equal(cli_exit_code(DOCKET_ECORRUPT), 3);
	assert_int_equal(cli_exit_code(DOCKET_ERROR), 3);
}

static void test_table(void **state)
{
	cli_table *tb = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(cli_table_new(&tb, 3), 0);
	cli_table_align_right(tb, 1);
	assert_int_equal(cli_table_cell(tb, "NAME"), 0);
	assert_int_equal(cli_table_cell(tb, "N"), 0);
	assert_int_equal(cli_table_cell(tb, "NOTE"), 0);
	assert_int_equal(cli_table_span(tb, NULL, "a heading wider than every column"), 0);
	assert_int_equal(cli_table_cell(tb, "\xc3\xa9t\xc3\xa9"), 0);
	assert_int_equal(cli_table_cellf(tb, "%d", 12345), 0);
	assert_int_equal(cli_table_cell(tb, ""), 0);
	assert_int_equal(cli_table_cell(tb, "x"), 0);
	assert_int_equal(cli_table_cell(tb, "7"), 0);
	assert_int_equal(cli_table_cell_color(tb, CLI_RED, "last"), 0);
	/* a span inside a row is refused */
	assert_int_equal(cli_table_cell(tb, "half"), 0);
	assert_int_not_equal(cli_table_span(tb, NULL, "no"), 0);
	assert_int_equal(cli_table_cell(tb, ""), 0);
	assert_int_equal(cli_table_cell(tb, ""), 0);

	f = open_memstream(&out, &len);
	assert_non_null(f);
	cli_table_print(tb, f, 0, 1);
	fclose(f);
	assert_string_equal(out,
			    "NAME      N  NOTE\n"
			    "a heading wider than every column\n"
			    "\xc3\xa9t\xc3\xa9   12345\n"
			    "x         7  last\n"
			    "half\n");
	free(out);
	cli_table_free(tb);
	cli_table_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_valid),
		cmocka_unit_test(test_time_invalid),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_call_summary),
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_help),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
