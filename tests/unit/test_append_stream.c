/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_append_stream.c: ledger_append_stream, the append `docket record`
 * runs while its lines are still being parsed. The wait is asked once per
 * event, in order, and only for the events the append reaches (the slots
 * after a failure are NULL here: touching one would crash); a failed wait or
 * a refused event aborts everything; a replay after MDB_MAP_FULL asks for
 * nothing twice and still writes every event once.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/ledger.h"
#include "ledger/ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define N 400

typedef struct source {
	docket_event **events;   /* what the append sees */
	docket_event **made;     /* what the "parser" made */
	size_t asked[N];         /* how often each index was waited for */
	size_t order_errors;     /* waits out of order */
	size_t next;
	size_t fail_at;          /* wait fails here (N: never) */
	docket_buf rest[N];      /* odd indexes: the event packed without time
				  * and epoch, as the parse threads give it */
} source;

static int wait_for(void *ctx, size_t i, docket_slice *rest)
{
	source *s = ctx;

	if (i != s->next)
		s->order_errors++;
	s->next = i + 1;
	s->asked[i]++;
	if (i == s->fail_at)
		return docket_error_set(DOCKET_EINVALID, "line %zu is no event", i + 1);
	s->events[i] = s->made[i];
	rest->ptr = (const uint8_t *)s->rest[i].ptr;
	rest->len = s->rest[i].len;
	return 0;
}

/* Each stored payload is the packing of the event as appended (its time
 * and epoch assigned), whether the append packed it or built it from the
 * packing the wait gave. */
static void check_payloads(docket_ledger *l, docket_event **events)
{
	docket_buf want = DOCKET_BUF_INIT;
	ledger_reader r;
	MDB_txn *txn = NULL;
	const uint8_t *p;
	size_t len;

	assert_int_equal(store_txn_begin(&txn, l, MDB_RDONLY), 0);
	reader_init(&r, l, txn);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(reader_payload(&r, i + 1, &p, &len), 0);
		assert_int_equal(event_pack(&want, events[i]), 0);
		assert_int_equal(len, want.len);
		assert_memory_equal(p, want.ptr, len);
	}
	reader_dispose(&r);
	store_txn_abort(l, txn);
	docket_buf_dispose(&want);
}

/* session.opened, then intents with `note_bytes` of args each; `bad`: the
 * index of a dispatch of an unknown call instead (N: none) */
static void make_events(docket_event **made, size_t note_bytes, size_t bad)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-";
	char *note = malloc(note_bytes + 1), line[16384];
	uint64_t x = 88172645463325252ull;

	assert_non_null(note);
	note[note_bytes] = '\0';
	for (size_t i = 0; i < N; i++) {
		json_t *j;

		for (size_t k = 0; k < note_bytes; k++) { /* xorshift: zstd cannot shrink it much */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			note[k] = alphabet[x & 63];
		}
		if (i == 0)
			snprintf(line, sizeof(line), "{\"type\":\"session.opened\",\"session\":\"s\"}");
		else if (i == bad)
			snprintf(line, sizeof(line), "{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"nope\"}");
		else
			snprintf(line, sizeof(line), "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c%zu\","
				 "\"tool\":\"shell\",\"args\":{\"note\":\"%s%zu\"}}", i, note, i);
		j = test_json(line);
		assert_int_equal(docket_event_from_json(&made[i], j), 0);
		json_decref(j);
	}
	free(note);
}

static docket_ledger *open_small(char **dir)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	*dir = test_mkdtemp();
	opts.flags = DOCKET_OPEN_CREATE;
	opts.map_size = 64 * 1024;   /* far less than the batch: the map grows */
	assert_int_equal(docket_ledger_open(&l, *dir, &opts), 0);
	return l;
}

static uint64_t events_in(docket_ledger *l)
{
	docket_ledger_info info;

	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	return info.events;
}

static void run(size_t note_bytes, size_t bad, size_t fail_at, int want, size_t reached)
{
	docket_event *made[N], *events[N];
	docket_append_result res[N];
	source s;
	char *dir;
	docket_ledger *l = open_small(&dir);

	memset(&s, 0, sizeof(s));
	memset(events, 0, sizeof(events));
	s.events = events;
	s.made = made;
	s.fail_at = fail_at;
	make_events(made, note_bytes, bad);
	for (size_t i = 1; i < N; i += 2)
		assert_int_equal(event_pack_rest(&s.rest[i], made[i]), 0);
	assert_int_equal(ledger_append_stream(l, events, N, res, wait_for, &s), want);
	assert_int_equal(s.order_errors, 0);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(s.asked[i], i < reached ? 1 : 0);
	if (want == 0) {
		docket_verify_report rep;

		assert_int_equal(events_in(l), N);
		assert_int_equal(res[N - 1].seq, N);
		assert_int_equal(docket_ledger_verify(l, &rep), 0);
		check_payloads(l, events);
	} else {
		assert_int_equal(events_in(l), 0);
	}
	for (size_t i = 0; i < N; i++) {
		docket_event_free(made[i]);
		docket_buf_dispose(&s.rest[i]);
	}
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

static void test_all_in_order(void **state)
{
	(void)state;
	run(16, N, N, 0, N);
}

/* 400 events of ~6 KB of incompressible text: more than the map reserved
 * for 400 events, so the append replays after MDB_MAP_FULL, from events it
 * already has */
static void test_replay_after_map_full(void **state)
{
	(void)state;
	run(6000, N, N, 0, N);
}

static void test_wait_fails(void **state)
{
	(void)state;
	run(16, N, 150, DOCKET_EINVALID, 151);
	assert_non_null(strstr(docket_error_last()->message, "line 151 is no event"));
	assert_int_equal(docket_error_last()->event_index, 151);
}

static void test_refused_event_stops_it(void **state)
{
	(void)state;
	run(16, 200, N, DOCKET_ETRANSITION, 201);
	assert_int_equal(docket_error_last()->event_index, 201);
	assert_non_null(strstr(docket_error_last()->message, "invariant 1"));
}

/* ---- ledger_record: the bulk append behind `docket record` ---- */

static docket_ledger *record_ledger(char **dir)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	opts.flags = DOCKET_OPEN_CREATE;
	*dir = test_mkdtemp();
	assert_int_equal(docket_ledger_open(&l, *dir, &opts), 0);
	return l;
}

static uint64_t ledger_events(docket_ledger *l)
{
	docket_ledger_info info;

	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	return info.events;
}

/* Two inputs, blank lines skipped, a re-sent event counted as a duplicate:
 * the report says what was appended, and every event is there. */
static void test_record_inputs(void **state)
{
	static const char a[] =
		"{\"type\":\"session.opened\",\"session\":\"s1\",\"runtime\":\"t\"}\n\n"
		"{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\","
		"\"args\":{\"command\":[\"ls\"]}}\n";
	static const char b[] =
		"   \n{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\","
		"\"args\":{\"command\":[\"ls\"]}}\n"
		"{\"type\":\"tool.dispatched\",\"session\":\"s1\",\"invocation\":\"c1\"}";
	ledger_record_input in[2] = { { "a.jsonl", a, sizeof(a) - 1 }, { "b.jsonl", b, sizeof(b) - 1 } };
	ledger_record_report rep;
	char *dir;
	docket_ledger *l = record_ledger(&dir);

	(void)state;
	assert_int_equal(ledger_record(l, in, 2, NULL, &rep, NULL, NULL), 0);
	assert_int_equal(rep.lines, 4);
	assert_int_equal(rep.added, 3);
	assert_int_equal(rep.duplicates, 1);
	assert_int_equal(rep.first, 1);
	assert_int_equal(rep.last, 3);
	assert_int_equal(rep.bad, 0);
	assert_int_equal(rep.refused, 0);
	assert_int_equal(ledger_events(l), 3);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* Bad lines are all counted, the first ten named file:line, and nothing is
 * written even though good lines came first. */
static void test_record_bad_lines(void **state)
{
	docket_buf text = DOCKET_BUF_INIT;
	ledger_record_input in;
	ledger_record_report rep;
	char *dir;
	docket_ledger *l = record_ledger(&dir);

	(void)state;
	assert_int_equal(docket_buf_puts(&text, "{\"type\":\"session.opened\",\"session\":\"s1\",\"runtime\":\"t\"}\n"), 0);
	for (int i = 0; i < 12; i++)
		assert_int_equal(docket_buf_puts(&text, "{not json\n"), 0);
	assert_int_equal(docket_buf_puts(&text, "[1]\n"), 0);
	in = (ledger_record_input){ "x.jsonl", text.ptr, text.len };
	assert_int_equal(ledger_record(l, &in, 1, NULL, &rep, NULL, NULL), DOCKET_EINVALID);
	assert_int_equal(rep.bad, 13);
	assert_int_equal(rep.nreported, LEDGER_RECORD_REPORTED);
	assert_string_equal(rep.reported[0].file, "x.jsonl");
	assert_int_equal(rep.reported[0].line, 2);
	assert_int_equal(rep.reported[9].line, 11);
	assert_int_equal(rep.added, 0);
	assert_int_equal(ledger_events(l), 0);
	docket_buf_dispose(&text);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* An object that is no event, and an event the ledger refuses, are named
 * by their line in their own input; nothing is written. */
static void test_record_refusals(void **state)
{
	static const char good[] = "{\"type\":\"session.opened\",\"session\":\"s1\",\"runtime\":\"t\"}\n";
	static const char unknown[] = "{\"type\":\"session.opened\",\"session\":\"s2\",\"runtime\":\"t\",\"colour\":1}\n";
	static const char early[] = "\n{\"type\":\"tool.dispatched\",\"session\":\"s1\",\"invocation\":\"nope\"}\n";
	ledger_record_input in[2] = { { "good", good, sizeof(good) - 1 }, { "bad", unknown, sizeof(unknown) - 1 } };
	ledger_record_report rep;
	char *dir;
	docket_ledger *l = record_ledger(&dir);

	(void)state;
	assert_int_equal(ledger_record(l, in, 2, NULL, &rep, NULL, NULL), DOCKET_EINVALID);
	assert_int_equal(rep.bad, 0);
	assert_int_equal(rep.refused, 1);
	assert_string_equal(rep.refusal.file, "bad");
	assert_int_equal(rep.refusal.line, 1);
	assert_non_null(strstr(rep.refusal.message, "colour"));
	assert_int_equal(ledger_events(l), 0);

	in[1] = (ledger_record_input){ "early", early, sizeof(early) - 1 };
	assert_int_equal(ledger_record(l, in, 2, NULL, &rep, NULL, NULL), DOCKET_ETRANSITION);
	assert_int_equal(rep.refused, 1);
	assert_string_equal(rep.refusal.file, "early");
	assert_int_equal(rep.refusal.line, 2);
	/* the ledger's "event I of N: " prefix gives way to file:line */
	assert_null(strstr(rep.refusal.message, "event 2 of 2"));
	assert_non_null(strstr(rep.refusal.message, "invariant"));
	assert_int_equal(ledger_events(l), 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* No input lines: nothing appended, no error. */
static void test_record_empty(void **state)
{
	ledger_record_input in = { "<stdin>", "\n \n", 3 };
	ledger_record_report rep;
	char *dir;
	docket_ledger *l = record_ledger(&dir);

	(void)state;
	assert_int_equal(ledger_record(l, &in, 1, NULL, &rep, NULL, NULL), 0);
	assert_int_equal(rep.lines, 0);
	assert_int_equal(rep.added, 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* The caller's check refuses an event as an object that is no event: named
 * by its line, nothing written. */
static int refuse_mcp(const docket_event *ev)
{
	if (ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT && strcmp(ev->tool_intent->tool, "mcp") == 0)
		return docket_error_set(DOCKET_EINVALID, "no mcp calls here");
	return 0;
}

static void test_record_check(void **state)
{
	static const char text[] =
		"{\"type\":\"session.opened\",\"session\":\"s1\",\"runtime\":\"t\"}\n"
		"{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\","
		"\"args\":{\"command\":[\"ls\"]}}\n"
		"{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c2\",\"tool\":\"mcp\","
		"\"args\":{}}\n";
	ledger_record_input in = { "in", text, sizeof(text) - 1 };
	ledger_record_report rep;
	char *dir;
	docket_ledger *l = record_ledger(&dir);

	(void)state;
	assert_int_equal(ledger_record(l, &in, 1, refuse_mcp, &rep, NULL, NULL), DOCKET_EINVALID);
	assert_int_equal(rep.refused, 1);
	assert_int_equal(rep.refusal.line, 3);
	assert_non_null(strstr(rep.refusal.message, "no mcp calls here"));
	assert_int_equal(ledger_events(l), 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_in_order),
		cmocka_unit_test(test_replay_after_map_full),
		cmocka_unit_test(test_wait_fails),
		cmocka_unit_test(test_refused_event_stops_it),
		cmocka_unit_test(test_record_inputs),
		cmocka_unit_test(test_record_bad_lines),
		cmocka_unit_test(test_record_refusals),
		cmocka_unit_test(test_record_empty),
		cmocka_unit_test(test_record_check),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
