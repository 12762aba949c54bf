/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_replay_stream.c: replay at speed (issue 15).
 *   - the JSON row writer (replay/report_json.c) against jansson, the oracle:
 *     every string jansson writes, byte for byte (control characters, DEL,
 *     U+2028, quotes, backslashes, long strings, random bytes), and every
 *     string jansson refuses (invalid UTF-8) refused too; every row of the
 *     reports of the fixture ledger and of a generated one, re-dumped by
 *     jansson, gives the same bytes;
 *   - two threads give the same bytes as one, in every format, on a
 *     generated ledger with grants, denials and filters, the reader
 *     evaluating ahead as it chooses or every call it can; the second
 *     thread really ran; a failing callback and failing allocations stop a
 *     two-thread replay with their error;
 *   - the memo: a hit only for the same call, context and policy; an
 *     oversized call is not kept.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/ledger.h"
#include "docket/replay.h"
#include "replay/report_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define COPIES 400   /* of fixtures/replay/sessions.jsonl: ~16,000 events */

typedef struct fixture {
	char *dir;
	docket_ledger *ledger;
} fixture;

static char *src_path(const char *rel)
{
	const char *root = getenv("DOCKET_SOURCE_ROOT");
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", root ? root : ".", rel);
	return strdup(buf);
}

static docket_policy *policy(const char *name)
{
	char rel[256], *path;
	docket_policy *p = NULL;

	snprintf(rel, sizeof(rel), "fixtures/replay/%s", name);
	path = src_path(rel);
	if (docket_replay_source_load(&p, path, NULL) < 0)
		fail_msg("load %s: %s", path, docket_error_last()->message);
	free(path);
	return p;
}

/* ---- strings: the writer against jansson ---- */

/* jansson's bytes for `s` as a JSON string, or NULL when it refuses it. */
static char *jansson_string(const char *s)
{
	json_t *v = json_string(s);
	char *out = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(v);
	return out;
}

static void same_as_jansson(const char *s)
{
	docket_buf b = DOCKET_BUF_INIT;
	char *want = jansson_string(s);
	int error = report_json_string(&b, s);

	if (!want) {
		if (error != DOCKET_ECORRUPT)
			fail_msg("jansson refuses a string the writer took (%d)", error);
	} else {
		assert_int_equal(error, 0);
		assert_int_equal(b.len, strlen(want));
		assert_memory_equal(b.ptr, want, b.len);
	}
	free(want);
	docket_buf_dispose(&b);
}

static void test_strings_like_jansson(void **state)
{
	static const char *const cases[] = {
		"", "plain", "\"quoted\"", "back\\slash", "a/b", "tab\there", "\b\f\n\r\t", "\x01\x1f\x7f",
		"caf\xc3\xa9", "line\xe2\x80\xa8sep\xe2\x80\xa9", "\xf0\x9f\x98\x80", "\xef\xbb\xbf", "\xf4\x8f\xbf\xbf",
		/* refused: overlong, surrogate, above U+10FFFF, stray continuation, truncated, F5 */
		"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80", "a\xe2\x82",
		"\xf5\x80\x80\x80", "ok\xff", "\xf0\x8f\xbf\xbf",
	};
	char c[2] = { 0, 0 }, *lng;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		same_as_jansson(cases[i]);
	for (int ch = 1; ch < 256; ch++) {
		c[0] = (char)ch;
		same_as_jansson(c);
	}
	lng = malloc(200001);
	for (size_t i = 0; i < 200000; i++)
		lng[i] = "ab\"\\\n\x01\xc3\xa9z"[i % 9];
	lng[200000] = '\0';
	same_as_jansson(lng);
	/* random short byte strings: valid and invalid UTF-8 alike */
	for (int n = 0; n < 20000; n++) {
		size_t len = 1 + n % 12;

		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			lng[i] = (char)((x & 0xff) ? x & 0xff : 'x');
			if (n % 3 == 0)
				lng[i] = (char)(0x80 | (x & 0x7f));
		}
		lng[len] = '\0';
		same_as_jansson(lng);
	}
	free(lng);
}

/* The writer refuses a row holding invalid UTF-8, as json_pack does. */
static void test_row_invalid_utf8(void **state)
{
	docket_buf b = DOCKET_BUF_INIT;
	report_row row;

	(void)state;
	memset(&row, 0, sizeof(row));
	row.s[RS_SESSION] = "s\xc0\x80";
	row.s[RS_INVOCATION] = row.s[RS_TIME] = row.s[RS_TOOL] = row.s[RS_TARGET] = "x";
	row.s[RS_ARGS] = "{}";
	assert_int_equal(report_json_row(&b, NULL, &row), DOCKET_ECORRUPT);
	row.s[RS_SESSION] = "s";
	assert_int_equal(report_json_row(&b, NULL, &row), 0);
	docket_buf_dispose(&b);
}

/* ---- ledgers ---- */

static void append_all(docket_ledger *l, json_t **ev, size_t *n)
{
	if (*n && docket_ledger_append_json(l, ev, *n, NULL) < 0)
		fail_msg("append: %s", docket_error_last()->message);
	for (size_t i = 0; i < *n; i++)
		json_decref(ev[i]);
	*n = 0;
}

/* fixtures/replay/sessions.jsonl `copies` times, each copy's sessions renamed. */
static int make_ledger(fixture *f, int copies)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	char *path = src_path("fixtures/replay/sessions.jsonl"), line[8192], name[256];
	json_t *src[64], *batch[512];
	size_t n = 0, nb = 0;
	FILE *in = fopen(path, "r");

	assert_non_null(in);
	while (fgets(line, sizeof(line), in) && n < 64)
		src[n++] = test_json(line);
	fclose(in);
	free(path);
	f->dir = test_mkdtemp();
	oo.flags = DOCKET_OPEN_CREATE;
	oo.map_size = (size_t)256 << 20;
	assert_int_equal(docket_ledger_open(&f->ledger, f->dir, &oo), 0);
	for (int k = 0; k < copies; k++) {
		for (size_t i = 0; i < n; i++) {
			const char *s = json_string_value(json_object_get(src[i], "session"));
			json_t *e;

			if (!s && k > 0)
				continue;   /* runtime.started: once */
			e = json_deep_copy(src[i]);
			if (s && k > 0) {
				snprintf(name, sizeof(name), "%s-%d", s, k);
				json_object_set_new(e, "session", json_string(name));
			}
			batch[nb++] = e;
			if (nb == 512)
				append_all(f->ledger, batch, &nb);
		}
	}
	append_all(f->ledger, batch, &nb);
	for (size_t i = 0; i < n; i++)
		json_decref(src[i]);
	return 0;
}

static int setup_small(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	make_ledger(f, 1);
	*state = f;
	return 0;
}

static int setup_large(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	make_ledger(f, COPIES);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	docket_ledger_free(f->ledger);
	test_rmdir_free(f->dir);
	free(f);
	return 0;
}

/* ---- reports ---- */

static int tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

typedef struct counting {
	docket_replay_report *r;
	int max_tasks;
} counting;

/* docket_replay_report_add, noting how many threads the process has. */
static int add_counting(void *ctx, const docket_replay_call *c)
{
	counting *k = ctx;
	int t = tasks();

	if (t > k->max_tasks)
		k->max_tasks = t;
	return docket_replay_report_add(k->r, c);
}

static char *report(fixture *f, docket_replay_format format, const char *name, const docket_replay_options *o,
		    int *max_tasks)
{
	docket_replay_report_info info = DOCKET_REPLAY_REPORT_INFO_INIT;
	docket_policy *p = policy(name);
	const docket_policy *ps[1] = { p };
	counting k = { NULL, 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	info.format = format;
	info.policy = name;
	info.fail_on = DOCKET_REPLAY_FAIL_CHANGED;
	assert_int_equal(docket_replay_report_new(&k.r, &info), 0);
	if (docket_replay_run(f->ledger, NULL, ps, 1, o, add_counting, &k) < 0)
		fail_msg("replay: %s", docket_error_last()->message);
	assert_int_equal(docket_replay_report_finish(k.r, out), 0);
	fclose(out);
	docket_replay_report_free(k.r);
	docket_policy_free(p);
	if (max_tasks)
		*max_tasks = k.max_tasks;
	return text;
}

/* Every row line of a JSON report is what jansson dumps of it. */
static size_t rows_like_jansson(const char *text)
{
	const char *line = text;
	size_t rows = 0;

	while ((line = strstr(line, "\n    {"))) {
		const char *start = line + 5, *end = strchr(start, '\n');
		size_t len = (size_t)(end - start) - (end[-1] == ',');
		json_error_t jerr;
		json_t *v = json_loadb(start, len, 0, &jerr);
		char *again;

		if (!v)
			fail_msg("row does not parse: %s", jerr.text);
		again = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		assert_int_equal(strlen(again), len);
		assert_memory_equal(again, start, len);
		free(again);
		json_decref(v);
		rows++;
		line = end;
	}
	return rows;
}

static void test_rows_like_jansson(void **state)
{
	fixture *f = *state;
	char *a = report(f, DOCKET_REPLAY_JSON, "loose.yaml", NULL, NULL);
	char *b = report(f, DOCKET_REPLAY_JSON, "strict.yaml", NULL, NULL);

	assert_true(rows_like_jansson(a) > 0);
	assert_true(rows_like_jansson(b) > 0);
	free(a);
	free(b);
}

/* One thread and two give the same bytes, with the reader evaluating ahead
 * as it chooses and with it evaluating every call it can (DOCKET_REPLAY_AHEAD);
 * `both`: the two really ran at once (a replay of one session reads too
 * little for the reader to outlive it). */
static void same_bytes(fixture *f, docket_replay_format format, const char *name, docket_replay_options *o,
		       int both)
{
	char *one, *two, *all;
	int t1 = 0, t2 = 0;

	o->threads = 1;
	one = report(f, format, name, o, &t1);
	o->threads = 2;
	two = report(f, format, name, o, &t2);
	setenv("DOCKET_REPLAY_AHEAD", "all", 1);
	all = report(f, format, name, o, NULL);
	unsetenv("DOCKET_REPLAY_AHEAD");
	assert_int_equal(t1, 1);        /* one thread: nobody else */
	assert_true(!both || t2 >= 2);  /* two: the reader ran beside the callbacks */
	assert_true(strlen(one) > (both ? 10000u : 100u));
	assert_string_equal(one, two);
	assert_string_equal(one, all);
	free(one);
	free(two);
	free(all);
}

static void test_threads_same_bytes(void **state)
{
	fixture *f = *state;
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	docket_replay_format formats[] = { DOCKET_REPLAY_TABLE, DOCKET_REPLAY_JSON, DOCKET_REPLAY_JUNIT,
					   DOCKET_REPLAY_MARKDOWN };
	char *loose, *strict;

	for (size_t i = 0; i < 4; i++)
		same_bytes(f, formats[i], "loose.yaml", &o, 1);
	same_bytes(f, DOCKET_REPLAY_JSON, "strict.yaml", &o, 1);
	o.approvals = DOCKET_REPLAY_APPROVALS_NONE;
	same_bytes(f, DOCKET_REPLAY_JSON, "loose.yaml", &o, 1);
	o.approvals = DOCKET_REPLAY_APPROVALS_RECORDED;
	o.session = "s-codex-7";
	same_bytes(f, DOCKET_REPLAY_TABLE, "loose.yaml", &o, 0);
	/* the comparison can fail: another policy gives other bytes */
	o.session = NULL;
	o.threads = 2;
	loose = report(f, DOCKET_REPLAY_JSON, "loose.yaml", &o, NULL);
	strict = report(f, DOCKET_REPLAY_JSON, "strict.yaml", &o, NULL);
	assert_string_not_equal(loose, strict);
	assert_true(rows_like_jansson(loose) > 1000);
	free(loose);
	free(strict);
}

typedef struct stopper {
	int calls, stop_at, fail;
} stopper;

static int stop_cb(void *ctx, const docket_replay_call *c)
{
	stopper *s = ctx;

	(void)c;
	if (++s->calls < s->stop_at)
		return 0;
	return s->fail ? docket_error_set(DOCKET_EINVALID, "stopped at call %d", s->calls) : 1;
}

/* A callback's stop and error end a two-thread replay at once, with its error. */
static void test_threads_stop(void **state)
{
	fixture *f = *state;
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	docket_policy *p = policy("loose.yaml");
	const docket_policy *ps[1] = { p };
	stopper s = { 0, 3000, 0 };

	o.threads = 2;
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, &o, stop_cb, &s), 0);
	assert_int_equal(s.calls, 3000);
	s.calls = 0;
	s.fail = 1;
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, &o, stop_cb, &s), DOCKET_EINVALID);
	assert_int_equal(s.calls, 3000);
	assert_string_equal(docket_error_last()->message, "stopped at call 3000");
	docket_policy_free(p);
}

/* Allocation failure on either thread is DOCKET_ENOMEM, never a crash, hang
 * or leak: with the reader evaluating ahead as it chooses, and evaluating
 * every call it can (`ahead`: DOCKET_REPLAY_AHEAD=all). */
static void alloc_failure(fixture *f, const char *ahead)
{
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	docket_policy *p = policy("strict.yaml");
	const docket_policy *ps[1] = { p };
	int failures = 0;

	o.threads = 2;
	if (ahead)
		setenv("DOCKET_REPLAY_AHEAD", ahead, 1);
	for (long n = 1; n < 100000; n++) {
		docket_replay_report_info info = DOCKET_REPLAY_REPORT_INFO_INIT;
		docket_replay_report *r = NULL;
		FILE *out = fopen("/dev/null", "w");
		int error;

		info.format = DOCKET_REPLAY_JSON;
		docket_alloc_fail_after(n);
		error = docket_replay_report_new(&r, &info);
		if (error == 0)
			error = docket_replay_run(f->ledger, NULL, ps, 1, &o, docket_replay_report_add, r);
		if (error == 0)
			error = docket_replay_report_finish(r, out);
		docket_alloc_fail_reset();
		docket_replay_report_free(r);
		fclose(out);
		if (error == 0)
			break;
		if (error != DOCKET_ENOMEM)
			fail_msg("allocation %ld: %d %s", n, error, docket_error_last()->message);
		failures++;
	}
	unsetenv("DOCKET_REPLAY_AHEAD");
	assert_true(failures > 10);
	docket_policy_free(p);
}

static void test_threads_alloc_failure(void **state)
{
	alloc_failure(*state, NULL);
	alloc_failure(*state, "all");
}

/* ---- memo ---- */

static void test_memo(void **state)
{
	memo *m = NULL;
	memo_call k, other;
	eval_out v = { DOCKET_VERDICT_DENIED, NULL, 0, "rule", DOCKET_VERDICT_DENIED, NULL, 0, "" };
	char *big = malloc(5000);

	(void)state;
	assert_int_equal(memo_new(&m), 0);
	memo_call_init(&k, "shell", "{\"command\":[\"git\",\"status\"]}");
	memo_call_init(&other, "shell", "{\"command\":[\"git\",\"push\"]}");
	assert_null(memo_get(m, &k, 1, 0));
	assert_int_equal(memo_put(m, &k, 1, 0, &v), 0);
	assert_non_null(memo_get(m, &k, 1, 0));
	assert_int_equal(memo_get(m, &k, 1, 0)->verdict, DOCKET_VERDICT_DENIED);
	assert_null(memo_get(m, &k, 2, 0));       /* another context */
	assert_null(memo_get(m, &k, 1, 1));       /* another policy */
	assert_null(memo_get(m, &other, 1, 0));   /* another call */
	memset(big, 'a', 4999);
	big[4999] = '\0';
	memo_call_init(&k, "shell", big);
	assert_int_equal(memo_put(m, &k, 1, 0, &v), 0);
	assert_null(memo_get(m, &k, 1, 0));       /* too big to keep */
	memo_free(m);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings_like_jansson),
		cmocka_unit_test(test_row_invalid_utf8),
		cmocka_unit_test(test_memo),
		cmocka_unit_test_setup_teardown(test_rows_like_jansson, setup_small, teardown),
		cmocka_unit_test_setup_teardown(test_threads_same_bytes, setup_large, teardown),
		cmocka_unit_test_setup_teardown(test_threads_stop, setup_large, teardown),
		cmocka_unit_test_setup_teardown(test_threads_alloc_failure, setup_small, teardown),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
