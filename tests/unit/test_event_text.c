/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_event_text.c: `docket record`'s simdjson line parser
 * (docket_event_from_text) against the jansson path it replaced
 * (docket_json_parse + docket_event_from_json): the same event (packed
 * bytes) or the same error (code and message) for every line, or simdjson
 * declines and the line goes to jansson as before (event_text_diff.h).
 * Inputs: the generated streams of the benchmarks, every JSON and JSON-lines
 * file of fixtures/ and of ../shared/corpus (skipped when absent), the
 * event fuzz corpora, and hostile lines built here.
 */
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/gen_format2.h"
#include "../bench/gen_mix.h"
#include "../fuzz/event_text_diff.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/json.h"

typedef struct tally {
	size_t n[4];
	char first_diff[800];
} tally;

static docket_json_tape *tape;

static void one(tally *t, const char *text, size_t len)
{
	char why[600];
	event_text_result r = event_text_diff(tape, text, len, why, sizeof(why));

	t->n[r]++;
	if (r == TEXT_DIFFER && !t->first_diff[0])
		snprintf(t->first_diff, sizeof(t->first_diff), "%.*s: %s", len > 120 ? 120 : (int)len, text, why);
}

static void lines(tally *t, const char *text, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *p = text + pos, *nl = memchr(p, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - p) : len - pos;

		if (n > 0)
			one(t, p, n);
		pos += n + 1;
	}
}

static void assert_no_difference(const tally *t)
{
	if (t->n[TEXT_DIFFER])
		fail_msg("%zu lines differ; first: %s", t->n[TEXT_DIFFER], t->first_diff);
}

static void test_generated_streams(void **state)
{
	docket_buf f2 = DOCKET_BUF_INIT, mix = DOCKET_BUF_INIT;
	tally t = { { 0 }, "" };
	size_t events;

	(void)state;
	assert_int_equal(gen_format2(&f2, 600, 20, &events), 0);
	assert_int_equal(gen_mix(&mix, 4000, 7, NULL), 0);
	lines(&t, f2.ptr, f2.len);
	lines(&t, mix.ptr, mix.len);
	assert_no_difference(&t);
	/* every line of them is an event, and simdjson decided every one */
	assert_int_equal(t.n[TEXT_SAME_ERROR] + t.n[TEXT_DECLINED], 0);
	assert_true(t.n[TEXT_SAME_EVENT] > events + 4000);
	docket_buf_dispose(&f2);
	docket_buf_dispose(&mix);
}

/* ---- files ---- */

static tally *walk_tally;
static int walk_whole; /* every file whole (fuzz corpora), not only .json/.jsonl by line */

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	docket_buf text = DOCKET_BUF_INIT;
	int json = has_suffix(path, ".json"), jsonl = has_suffix(path, ".jsonl");
	FILE *f;

	(void)st;
	(void)ftw;
	if (flag != FTW_F || (!walk_whole && !json && !jsonl) || !(f = fopen(path, "rb")))
		return 0;
	if (docket_buf_read_stream(&text, f) == 0 && text.len > 0) {
		if (walk_whole || json)
			one(walk_tally, text.ptr, text.len);
		if (!walk_whole)
			lines(walk_tally, text.ptr, text.len);
	}
	fclose(f);
	docket_buf_dispose(&text);
	return 0;
}

static void walk(tally *t, const char *dir, int whole)
{
	walk_tally = t;
	walk_whole = whole;
	assert_int_equal(nftw(dir, visit, 16, FTW_PHYS), 0);
}

static char *source_path(const char *rel)
{
	const char *src = getenv("DOCKET_SOURCE_ROOT");
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", rel);
	return strdup(path);
}

static void test_fixtures(void **state)
{
	char *dir = source_path("fixtures");
	tally t = { { 0 }, "" };

	(void)state;
	walk(&t, dir, 0);
	assert_no_difference(&t);
	/* the fixtures hold events and refused lines both: the comparison saw each */
	assert_true(t.n[TEXT_SAME_EVENT] > 100);
	assert_true(t.n[TEXT_SAME_ERROR] > 10);
	free(dir);
}

static void test_fuzz_corpora(void **state)
{
	char *event = source_path("tests/fuzz/corpus/event"), *text = source_path("tests/fuzz/corpus/event_text");
	tally t = { { 0 }, "" };

	(void)state;
	walk(&t, event, 1);
	walk(&t, text, 1);
	assert_no_difference(&t);
	assert_true(t.n[TEXT_SAME_EVENT] > 10 && t.n[TEXT_SAME_ERROR] > 10 && t.n[TEXT_DECLINED] > 10);
	free(event);
	free(text);
}

static void test_shared_corpus(void **state)
{
	char *dir = test_shared_path("");
	tally t = { { 0 }, "" };

	(void)state;
	if (!dir)
		skip();
	walk(&t, dir, 0);
	assert_no_difference(&t);
	/* transcripts are JSON objects that are no docket events: refused alike */
	assert_true(t.n[TEXT_SAME_ERROR] > 100);
	free(dir);
}

/* ---- hostile lines ---- */

#define INTENT "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\","

static const struct hostile {
	const char *text;
	event_text_result want;
} hostile[] = {
	/* what jansson reads differently: left to it */
	{ "{\"type\":\"session.closed\",\"session\":\"s\",\"session\":\"t\"}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"a\":1,\"b\":{\"c\":1,\"c\":2}}}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"a\":1,\"\\u0061\":2}}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"a\\u0000\":1}}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"n\":9223372036854775808}}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"n\":18446744073709551616}}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"n\":1e400}}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"n\":123456789012345678901234567890}}", TEXT_DECLINED },
	/* not JSON, or not an object: jansson says why, with the column */
	{ INTENT "\"args\":{\"s\":\"\\ud800\"}}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"s\":\"\\udc00x\"}}", TEXT_DECLINED },
	{ "{\"type\":\"session.closed\",\"session\":\"s\xff\"}", TEXT_DECLINED },
	{ "{\"type\":\"session.closed\",\"session\":\"\xc0\xaf\"}", TEXT_DECLINED },
	{ "{\"type\":\"session.closed\",\"session\":\"\xed\xa0\x80\"}", TEXT_DECLINED },
	{ "{\"type\":\"session.closed\",\"session\":\"\xf4\x90\x80\x80\"}", TEXT_DECLINED },
	{ "\xef\xbb\xbf{\"type\":\"session.closed\",\"session\":\"s\"}", TEXT_DECLINED },
	{ "{\"type\":\"session.closed\",\"session\":\"s\"} x", TEXT_DECLINED },
	{ "{\"type\":\"session.closed\",\"session\":\"s\"}{}", TEXT_DECLINED },
	{ "{\"type\":\"session.closed\",\"session\":\"a\x01\"}", TEXT_DECLINED },
	{ INTENT "\"args\":{\"a\":[1,", TEXT_DECLINED },
	{ "[{\"type\":\"session.closed\"}]", TEXT_DECLINED },
	{ "\"session.closed\"", TEXT_DECLINED },
	{ "", TEXT_DECLINED },
	/* decided by simdjson, identically */
	{ INTENT "\"args\":{\"s\":\"x\\u0000y\"}}", TEXT_SAME_EVENT },
	{ INTENT "\"args\":{\"r\":[0.1,-0.0,-0,1e-400,1.5e300,2E10,1e22,5e-324,1.7976931348623157e308]}}",
	  TEXT_SAME_EVENT },
	{ INTENT "\"args\":{\"n\":[-9223372036854775808,9223372036854775807,0,-1]}}", TEXT_SAME_EVENT },
	{ INTENT "\"args\":{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\\u00e9\\u2028\\ud83d\\ude00\"}}",
	  TEXT_SAME_EVENT },
	{ INTENT "\"args\":{\"k\":\"\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80\x7f\",\"\xc3\xa9\":[true,false,null,{},[]]}}",
	  TEXT_SAME_EVENT },
	{ " \t\r\n{ \"type\" : \"session.closed\" , \"session\" : \"s\" } \r\n", TEXT_SAME_EVENT },
	{ "{\"type\":\"policy.revised\",\"session\":\"s\",\"revision\":1,\"format\":\"docket\","
	  "\"policy\":[1.0,true,false,null,\"x\",{}]}", TEXT_SAME_EVENT },
	{ "{\"type\":\"policy.revised\",\"session\":\"s\",\"revision\":1,\"format\":\"docket\",\"policy\":\"r\"}",
	  TEXT_SAME_EVENT },
	{ "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\\u0000\"}", TEXT_SAME_ERROR },
	{ "{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\",\"exit_code\":1.5}",
	  TEXT_SAME_ERROR },
	{ "{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\",\"duration_ms\":-1}",
	  TEXT_SAME_ERROR },
	{ "{\"type\":\"session.closed\",\"session\":\"s\u2028\"}", TEXT_SAME_ERROR },
	{ "{\"type\":\"session.closed\",\"session\":\"s\",\"typo\":1}", TEXT_SAME_ERROR },
	{ "{\"type\":\"nope\"}", TEXT_SAME_ERROR },
	{ "{\"type\":1}", TEXT_SAME_ERROR },
	{ "{}", TEXT_SAME_ERROR },
	{ INTENT "\"args\":[]}", TEXT_SAME_ERROR },
	{ INTENT "\"decision\":{\"verdict\":\"maybe\"}}", TEXT_SAME_ERROR },
	{ "{\"type\":\"session.opened\",\"session\":\"s\",\"env\":{\"A\":1}}", TEXT_SAME_ERROR },
	{ "{\"type\":\"session.opened\",\"session\":\"s\",\"workspace_roots\":[\"a\",2]}", TEXT_SAME_ERROR },
	{ "{\"type\":\"session.closed\",\"session\":\"s\",\"time\":\"2025-02-30T00:00:00Z\"}", TEXT_SAME_ERROR },
};

static void test_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char why[600];
		const char *text = hostile[i].text;
		event_text_result r = event_text_diff(tape, text, strlen(text), why, sizeof(why));

		if (r != hostile[i].want)
			fail_msg("case %zu (%s): got %d, want %d %s", i, text, (int)r, (int)hostile[i].want, why);
	}
}

/* n levels of arrays around the args value: simdjson takes up to 1,024 */
static void nested(docket_buf *b, size_t n)
{
	docket_buf_clear(b);
	assert_int_equal(docket_buf_puts(b, INTENT "\"args\":{\"a\":"), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(docket_buf_put(b, "[", 1), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(docket_buf_put(b, "]", 1), 0);
	assert_int_equal(docket_buf_puts(b, "}}"), 0);
}

static void test_deep_nesting(void **state)
{
	docket_buf b = DOCKET_BUF_INIT;

	(void)state;
	nested(&b, 1000);
	assert_int_equal(event_text_diff(tape, b.ptr, b.len, NULL, 0), TEXT_SAME_EVENT);
	nested(&b, 1100);   /* jansson takes it (up to 2,048): simdjson leaves it to jansson */
	assert_int_equal(event_text_diff(tape, b.ptr, b.len, NULL, 0), TEXT_DECLINED);
	nested(&b, 5000);   /* neither: jansson's message */
	assert_int_equal(event_text_diff(tape, b.ptr, b.len, NULL, 0), TEXT_DECLINED);
	docket_buf_dispose(&b);
}

/* Every prefix of a valid line: never an event, never a difference. */
static void test_truncated(void **state)
{
	static const char line[] = INTENT "\"args\":{\"command\":[\"git\",\"status\"],\"n\":1.25},"
		"\"recovery\":\"idempotent\",\"decision\":{\"verdict\":\"allowed\",\"reasons\":[\"r\"]}}";
	tally t = { { 0 }, "" };

	(void)state;
	for (size_t n = 0; n < sizeof(line) - 1; n++)
		one(&t, line, n);
	assert_no_difference(&t);
	assert_int_equal(t.n[TEXT_SAME_EVENT], 0);
	one(&t, line, sizeof(line) - 1);
	assert_int_equal(t.n[TEXT_SAME_EVENT], 1);
}

/* The comparison itself tells events apart (it is not always "same"). */
static void test_events_differ(void **state)
{
	static const char a[] = INTENT "\"args\":{\"n\":1}}", b[] = INTENT "\"args\":{\"n\":2}}";
	docket_event *ea = NULL, *eb = NULL, *ea2 = NULL;

	(void)state;
	assert_int_equal(docket_event_from_text(&ea, tape, a, strlen(a)), 0);
	assert_int_equal(docket_event_from_text(&eb, tape, b, strlen(b)), 0);
	assert_int_equal(docket_event_from_text(&ea2, tape, a, strlen(a)), 0);
	assert_false(event_text_same(ea, eb));
	assert_true(event_text_same(ea, ea2));
	assert_string_equal(ea->tool_intent->args_json, "{\"n\":1}");
	docket_event_free(ea);
	docket_event_free(eb);
	docket_event_free(ea2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated_streams),
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_fuzz_corpora),
		cmocka_unit_test(test_shared_corpus),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_events_differ),
	};
	int rc;

	docket_alloc_install_json();
	if (!(tape = docket_json_tape_new()))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	docket_json_tape_free(tape);
	return rc;
}
