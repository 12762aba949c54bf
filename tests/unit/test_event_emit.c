/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_event_emit.c: the direct JSON writer (docket_event_write_json,
 * util/json_write.c) against jansson, byte for byte.
 *
 * The oracle is always jansson: docket_json_dump of the tree the other
 * backend builds (docket_event_to_json_framed), json_stringn + dump for a
 * string, json_loadb + dump for a stored JSON text. Sources: every JSON line
 * under fixtures/, ledgers recorded from the fixtures the CLI cases seed and
 * from generated mixes (tests/bench/gen_mix.c), read back as stored, and
 * hand-made hostile events (every byte value, invalid UTF-8, 200 KB strings,
 * tampered stored JSON, repeated map keys, out-of-range values). Errors must
 * be the same code and the same message, and leave the buffer as it was.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/export.h"
#include "docket/ledger.h"
#include "exporters/export_internal.h"
#include "ledger/event.h"
#include "ledger/ledger_internal.h"
#include "test_audit_util.h"
#include "tests/bench/gen_mix.h"
#include "util/error.h"
#include "util/json.h"
#include "util/json_write.h"

static const char hash_hex[] = "00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff";

/* Both backends on one event: same code, same message, same bytes. */
static int same_bytes(const docket_event *ev, const docket_event_frame *f)
{
	docket_buf a = DOCKET_BUF_INIT, b = DOCKET_BUF_INIT;
	char msg[sizeof(docket_error_last()->message)];
	json_t *tree = NULL;
	int e1, e2;

	docket_error_clear();
	e1 = docket_event_to_json_framed(&tree, ev, f);
	memcpy(msg, docket_error_last()->message, sizeof(msg));
	assert_int_equal(docket_buf_puts(&b, "before"), 0);
	docket_error_clear();
	e2 = docket_event_write_json(&b, ev, f);
	assert_int_equal(e1, e2);
	if (e1 < 0) {
		assert_string_equal(msg, docket_error_last()->message);
		assert_string_equal(b.ptr, "before");
		assert_int_equal(b.len, 6);
	} else {
		assert_int_equal(docket_json_dump(&a, tree), 0);
		if (a.len != b.len - 6 || memcmp(a.ptr, b.ptr + 6, a.len) != 0)
			fail_msg("writer differs from jansson:\n%s\n%s", a.ptr, b.ptr + 6);
		for (size_t i = 6; i < b.len; i++)
			assert_true((unsigned char)b.ptr[i] >= 0x20); /* one line: no raw control byte */
	}
	json_decref(tree);
	docket_buf_dispose(&a);
	docket_buf_dispose(&b);
	return e1;
}

static int same_both(const docket_event *ev, uint64_t seq)
{
	docket_event_frame f = { seq, hash_hex };
	int e = same_bytes(ev, &f);

	assert_int_equal(same_bytes(ev, NULL), e);
	return e;
}

/* ---- every JSON line under fixtures/ ---- */

static size_t jsonl_file(const char *path)
{
	docket_buf text = DOCKET_BUF_INIT;
	size_t n = 0, lineno = 0;
	char *line, *save = NULL;

	assert_int_equal(docket_buf_read_path(&text, path), 0);
	for (line = text.ptr ? strtok_r(text.ptr, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		json_t *obj = NULL;
		docket_event *ev = NULL;

		lineno++;
		if (docket_json_parse(&obj, line, strlen(line)) == 0 && docket_event_from_json(&ev, obj) == 0) {
			same_both(ev, lineno);
			n++;
		}
		docket_event_free(ev);
		json_decref(obj);
	}
	docket_buf_dispose(&text);
	return n;
}

static size_t walk(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[4096];
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			n += walk(path);
		else if ((len > 6 && strcmp(de->d_name + len - 6, ".jsonl") == 0) ||
			 (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0))
			n += jsonl_file(path);
	}
	closedir(d);
	return n;
}

static void test_fixture_lines(void **state)
{
	char dir[4096];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/fixtures", getenv("DOCKET_SOURCE_ROOT"));
	assert_true(walk(dir) > 100);
}

/* ---- ledgers, read back as stored ---- */

typedef struct read_check {
	size_t events;
	size_t json_texts; /* stored args/policy texts seen */
	int64_t last_ms;   /* the time of the last event read */
} read_check;

static int check_stored(void *ctx, uint64_t seq, const docket_event *ev, const uint8_t hash[LEDGER_HASH_LEN])
{
	read_check *rc = ctx;
	char hex[2 * LEDGER_HASH_LEN + 1];
	docket_event_frame f = { seq, hex };
	const char *text = ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT ? ev->tool_intent->args_json
			   : ev->body_case == DOCKET__V1__EVENT__BODY_POLICY_REVISED ? ev->policy_revised->policy_json
										      : NULL;

	docket_hex(hex, hash, LEDGER_HASH_LEN);
	assert_int_equal(same_bytes(ev, &f), 0);
	/* what docket stored is its own dump: the writer copies it, never re-parses */
	if (text) {
		assert_true(docket_json_is_dump(text, strlen(text)));
		rc->json_texts++;
	}
	rc->events++;
	assert_int_equal(docket_time_to_ms(ev->time, &rc->last_ms), 0);
	return 0;
}

/* The export's lines == docket_ledger_read_json's objects, dumped. */
typedef struct tree_lines {
	docket_buf text;
	docket_export_stats st;
	int64_t since_ms;
} tree_lines;

static int tree_line(void *ctx, uint64_t seq, json_t *ev)
{
	tree_lines *t = ctx;
	const char *type = json_string_value(json_object_get(ev, "type"));
	int64_t ms;

	t->st.head_seq = seq;
	if (t->since_ms > 0 &&
	    (docket_time_to_ms(json_string_value(json_object_get(ev, "time")), &ms) < 0 || ms < t->since_ms))
		return 0;
	t->st.events++;
	t->st.records++;
	t->st.approvals += strcmp(type, "approval.settled") == 0;
	t->st.invocations += strcmp(type, "tool.intent") == 0;
	assert_int_equal(docket_json_dump(&t->text, ev), 0);
	assert_int_equal(docket_buf_putc(&t->text, '\n'), 0);
	return 0;
}

static void export_matches_tree(docket_ledger *l, const char *session, uint64_t since, int64_t since_ms)
{
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	tree_lines t = { DOCKET_BUF_INIT, { 0 }, since_ms };
	docket_export_stats st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ro.session = session;
	ro.since = since;
	assert_int_equal(docket_ledger_read_json(l, &ro, tree_line, &t), 0);
	o.format = DOCKET_EXPORT_JSONL;
	o.session = session;
	o.since_seq = since;
	o.since_ms = since_ms;
	assert_non_null(f);
	assert_int_equal(docket_export(l, &o, f, &st), 0);
	fclose(f);
	assert_int_equal(len, t.text.len);
	assert_memory_equal(buf, t.text.ptr, len);
	assert_int_equal(st.records, t.st.records);
	assert_int_equal(st.events, t.st.events);
	assert_int_equal(st.approvals, t.st.approvals);
	assert_int_equal(st.invocations, t.st.invocations);
	assert_int_equal(st.head_seq, t.st.head_seq);
	free(buf);
	docket_buf_dispose(&t.text);
}

static void check_ledger(docket_ledger *l, size_t min_events)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	read_check rc = { 0, 0, 0 };

	assert_int_equal(ledger_read_events(l, &ro, check_stored, &rc), 0);
	assert_true(rc.events >= min_events);
	assert_true(rc.json_texts > 0);
	export_matches_tree(l, NULL, 0, 0);
	export_matches_tree(l, NULL, rc.events / 2, 0);
	/* --since: the time of the event in the middle */
	ro.since = rc.events / 2;
	ro.limit = 1;
	assert_int_equal(ledger_read_events(l, &ro, check_stored, &rc), 0);
	export_matches_tree(l, NULL, 0, rc.last_ms);
}

static void test_fixture_ledgers(void **state)
{
	static const char *const seeds[] = { "sessions/demo-basic.jsonl", "sessions/open-pending.jsonl",
					     "replay/sessions.jsonl" };
	char *dir;
	docket_ledger *l;

	(void)state;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		l = audit_new_ledger(&dir);
		audit_record_fixture(l, seeds[i]);
		check_ledger(l, 3);
		docket_ledger_free(l);
		test_rmdir_free(dir);
	}
}

static void test_generated_mix(void **state)
{
	docket_buf text = DOCKET_BUF_INIT;
	char *dir;
	docket_ledger *l = audit_new_ledger(&dir);

	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		docket_buf_clear(&text);
		assert_int_equal(gen_mix(&text, 1500, seed, NULL), 0);
		audit_record_text(l, text.ptr);
	}
	check_ledger(l, 4500);
	export_matches_tree(l, "nonexistent-session", 0, 0);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	docket_buf_dispose(&text);
}

/* ---- hostile events, built by hand ---- */

static void completed(docket_event *ev, Docket__V1__ToolCompleted *b, char *output)
{
	docket__v1__event__init(ev);
	docket__v1__tool_completed__init(b);
	ev->body_case = DOCKET__V1__EVENT__BODY_TOOL_COMPLETED;
	ev->tool_completed = b;
	ev->time = (char *)"2026-01-01T00:00:00Z";
	ev->session = (char *)"s";
	ev->invocation = (char *)"i";
	b->status = DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_OK;
	b->output = output;
}

static int output_is(const char *s, size_t len)
{
	docket_event ev;
	Docket__V1__ToolCompleted b;
	char *copy = malloc(len + 1);
	int e;

	assert_non_null(copy);
	memcpy(copy, s, len);
	copy[len] = '\0';
	completed(&ev, &b, copy);
	e = same_both(&ev, 7);
	free(copy);
	return e;
}

static void test_hostile_strings(void **state)
{
	static const char *const bad[] = {
		"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok\xe2\x80", "\xe2\x80ok", "\xff", "\x80",
		"\xf8\x88\x80\x80\x80", "a\xc2", "\xe0\x80\x80",
	};
	static const char *const good[] = {
		"\xe2\x80\xa8 \xe2\x80\xa9", "\"\\\"\\\\", "\x7f", "\xf0\x9f\x98\x80", "\xef\xbf\xbf", "\xc2\x80",
		"a/b", "\\u0041", "\x01\x1f\b\f\n\r\t",
	};
	char all[128];
	char *big;

	(void)state;
	for (int c = 1; c < 256; c++) {
		char s[4] = { 'x', (char)c, 'y', 0 };

		assert_int_equal(output_is(s, 3), c < 0x80 ? 0 : DOCKET_ECORRUPT);
	}
	for (int c = 1; c < 128; c++)
		all[c - 1] = (char)c;
	assert_int_equal(output_is(all, 127), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(output_is(bad[i], strlen(bad[i])), DOCKET_ECORRUPT);
		assert_string_equal(docket_error_last()->message, "tool.completed: field \"output\": not valid UTF-8");
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(output_is(good[i], strlen(good[i])), 0);
	/* 200 KB: long runs, an escape every 61 bytes, multibyte text, then one bad byte at the end */
	assert_non_null(big = malloc(200 * 1024 + 1));
	for (size_t i = 0; i < 200 * 1024; i++)
		big[i] = i % 61 == 60 ? '\n' : i % 97 == 3 ? '"' : (char)('a' + i % 26);
	memcpy(big + 1000, "\xe2\x82\xac\xf0\x9f\x98\x80", 7);
	assert_int_equal(output_is(big, 200 * 1024), 0);
	big[200 * 1024 - 1] = '\xc3';
	assert_int_equal(output_is(big, 200 * 1024), DOCKET_ECORRUPT);
	free(big);
}

static void test_random_strings(void **state)
{
	static const char pieces[][8] = { "a", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x80\xa8",
					  "\xf0\x9f\x98\x80", "\xc3", "\xa9", "\xed\xa0\x80", "/", " ", "zzzzzzz" };
	uint64_t r = 42;
	int ok = 0, refused = 0;

	(void)state;
	for (int n = 0; n < 3000; n++) {
		char s[512];
		size_t len = 0;
		int parts;

		r = r * 6364136223846793005ull + 1442695040888963407ull;
		parts = (int)(r >> 58);
		for (int p = 0; p < parts; p++) {
			const char *piece;

			r = r * 6364136223846793005ull + 1442695040888963407ull;
			piece = pieces[(r >> 33) % (sizeof(pieces) / sizeof(pieces[0]))];
			memcpy(s + len, piece, strlen(piece));
			len += strlen(piece);
		}
		if (output_is(s, len) == 0)
			ok++;
		else
			refused++;
	}
	assert_true(ok > 100 && refused > 100);
}

static void intent(docket_event *ev, Docket__V1__ToolIntent *b, const char *args)
{
	docket__v1__event__init(ev);
	docket__v1__tool_intent__init(b);
	ev->body_case = DOCKET__V1__EVENT__BODY_TOOL_INTENT;
	ev->tool_intent = b;
	ev->time = (char *)"2026-01-01T00:00:00Z";
	ev->session = (char *)"s";
	ev->invocation = (char *)"i";
	b->tool = (char *)"Bash";
	b->args_json = (char *)args;
}

/* A stored args text through both backends; the line must stay one object with its own keys. */
static int args_are(const char *args)
{
	docket_event ev;
	Docket__V1__ToolIntent b;
	docket_buf line = DOCKET_BUF_INIT;
	docket_event_frame f = { 9, hash_hex };
	json_t *obj = NULL;
	int e;

	intent(&ev, &b, args);
	if ((e = same_both(&ev, 9)) == 0) {
		const char *key;
		json_t *v;

		assert_int_equal(docket_event_write_json(&line, &ev, &f), 0);
		assert_int_equal(docket_json_parse(&obj, line.ptr, line.len), 0);
		json_object_foreach(obj, key, v) {
			assert_true(strstr(",seq,type,time,epoch,session,invocation,tool,args,hash,", key) != NULL);
			(void)v;
		}
		json_decref(obj);
	}
	docket_buf_dispose(&line);
	return e;
}

static void test_stored_json(void **state)
{
	static const char *const parsed[] = {
		/* valid JSON that jansson re-dumps differently: the writer must not copy it */
		"{\"a\": 1}", " {\"a\":1}", "{\"a\":1} ", "{\"a\":1.0}", "{\"a\":1e5}", "{\"a\":-0}",
		"{\"a\":\"\\u0041\"}", "{\"a\":\"\\/\"}", "{\"a\":\"\\u001f\"}", "{\"a\":\"\\u000A\"}",
		"{\"a\":1,\"a\":2}", "{\"a\":{\"b\":1,\"b\":[]}}", "{\"a\":\"\\u0000\"}", "{\"a\":\"\\u00e9\"}",
		"{\"a\":\"\\ud83d\\ude00\"}", "{\"a\":1234567890123456789}",
		"{\"a\":[1,2.5,true,false,null,\"x\"]}", "[1,2]", "\"text\"", "7", "null", "{ }",
		"{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,"
		"\"k10\":0,\"k11\":1,\"k12\":2,\"k13\":3,\"k14\":4,\"k15\":5,\"k16\":6,\"k17\":7,\"k18\":8,\"k19\":9,"
		"\"k20\":0,\"k21\":1,\"k22\":2,\"k23\":3,\"k24\":4,\"k25\":5,\"k26\":6,\"k27\":7,\"k28\":8,\"k29\":9,"
		"\"k30\":0,\"k31\":1,\"k32\":2}",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
		"{\"a\":1,\"b\":{\"c\":[\"\\n\",\"\xe2\x80\xa8\"]},\"d\":-12,\"e\":0}", "{}",
	};
	static const char *const refused[] = {
		/* not JSON, or more than one value: a tampered ledger must not inject a line or a field */
		"{\"a\":1}\n{\"b\":2}", "{\"a\":1},\"hash\":\"x\"", "{\"a\":1}}", "{\"a\":\"x\ny\"}",
		"{\"a\":\"\x01\"}", "{\"a\":\"\xc3\"}", "{\"a\":1", "{\"a\"}", "{\"\\u0000\":1}", "{a:1}",
		"{\"a\":01}", "{\"a\":12345678901234567890123}", "{\"a\":\"\\x\"}", "{\"a\":1,}", "[1,]", "tru", "{\"a\":1}x",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(parsed) / sizeof(parsed[0]); i++)
		if (args_are(parsed[i]) != 0)
			fail_msg("%s: %s", parsed[i], docket_error_last()->message);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(args_are(refused[i]), DOCKET_ECORRUPT);
		assert_non_null(strstr(docket_error_last()->message, "tool.intent: field \"args\": stored JSON is invalid"));
	}
}

static void test_maps_and_values(void **state)
{
	Docket__V1__KeyValue kv[80], *items[80];
	Docket__V1__SessionOpened so;
	docket_event ev;
	char keys[80][8];

	(void)state;
	docket__v1__event__init(&ev);
	docket__v1__session_opened__init(&so);
	ev.body_case = DOCKET__V1__EVENT__BODY_SESSION_OPENED;
	ev.session_opened = &so;
	ev.session = (char *)"s";
	for (int i = 0; i < 80; i++) {
		docket__v1__key_value__init(&kv[i]);
		snprintf(keys[i], sizeof(keys[i]), "k%d", i % 70);
		kv[i].key = keys[i];
		kv[i].value = (char *)(i % 2 ? "v\n" : "w");
		items[i] = &kv[i];
	}
	so.env = items;
	for (size_t n = 0; n <= 80; n += 5) { /* repeats from 75 on; more than 64 goes through jansson */
		so.n_env = n;
		assert_int_equal(same_both(&ev, 1), 0);
	}
	so.n_env = 3;
	kv[0].key = (char *)"k1"; /* a repeated key below the scan limit */
	assert_int_equal(same_both(&ev, 1), 0);
	kv[1].key = NULL;          /* "" */
	kv[2].value = NULL;
	assert_int_equal(same_both(&ev, 1), 0);
	kv[2].key = (char *)"\xc3";
	assert_int_equal(same_both(&ev, 1), DOCKET_ECORRUPT);
	assert_string_equal(docket_error_last()->message, "session.opened: field \"env\": key not valid UTF-8");
	kv[2].key = (char *)"k2";
	kv[2].value = (char *)"\xff";
	assert_int_equal(same_both(&ev, 1), DOCKET_ECORRUPT);
	so.n_env = 0;
	so.platform = (Docket__V1__Platform)99;
	assert_int_equal(same_both(&ev, 1), DOCKET_ECORRUPT);
	assert_string_equal(docket_error_last()->message, "session.opened: field \"platform\": value outside its enumeration");
	so.platform = DOCKET__V1__PLATFORM__PLATFORM_LINUX;
	ev.epoch = (uint64_t)INT64_MAX + 1;
	assert_int_equal(same_both(&ev, 1), DOCKET_ECORRUPT);
	assert_string_equal(docket_error_last()->message, "session.opened: field \"epoch\": integer too large for JSON");
	ev.epoch = (uint64_t)INT64_MAX;
	assert_int_equal(same_both(&ev, 1), 0);
	ev.epoch = 0; /* no time: the reader adds no epoch either */
	assert_int_equal(same_both(&ev, (uint64_t)INT64_MAX), 0);
	ev.time = (char *)"2026-01-01T00:00:00Z";
	assert_int_equal(same_both(&ev, 1), 0);
	ev.body_case = DOCKET__V1__EVENT__BODY__NOT_SET;
	assert_int_equal(same_both(&ev, 1), DOCKET_ECORRUPT);
	assert_string_equal(docket_error_last()->message, "event has no body");
}

static void test_completed_integers(void **state)
{
	docket_event ev;
	Docket__V1__ToolCompleted b;

	(void)state;
	completed(&ev, &b, (char *)"");
	b.exit_code_set = 1;
	b.duration_ms_set = 1;
	for (int i = 0; i < 4; i++) {
		static const int32_t codes[] = { 0, -1, INT32_MIN, INT32_MAX };

		b.exit_code = codes[i];
		b.duration_ms = i == 3 ? (uint64_t)INT64_MAX : (uint64_t)i;
		assert_int_equal(same_both(&ev, (uint64_t)i * 1000003u), 0);
	}
	b.duration_ms = UINT64_MAX;
	assert_int_equal(same_both(&ev, 1), DOCKET_ECORRUPT);
	b.duration_ms = 0;
	b.status = (Docket__V1__OutcomeStatus)-3;
	assert_int_equal(same_both(&ev, 1), DOCKET_ECORRUPT);
}

/* The JSONL sink: a corrupt event fails with the codec's message, and the
 * lines before it still reach the stream; one before --since is not written. */
static void test_sink_failure(void **state)
{
	docket_event good, bad;
	Docket__V1__ToolCompleted gb, bb;
	docket_export_stats st = { 0 };
	export_sink *sink = NULL;
	docket_buf want = DOCKET_BUF_INIT;
	docket_event_frame f = { 1, hash_hex };
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	completed(&good, &gb, (char *)"fine\n");
	completed(&bad, &bb, (char *)"bad \xc3(");
	assert_int_equal(sink_jsonl_new(&sink, 0), 0);
	assert_non_null(sink->out = open_memstream(&buf, &len));
	sink->stats = &st;
	assert_int_equal(sink->stored(sink, 1, &good, hash_hex, 1), 0);
	assert_int_equal(sink->stored(sink, 2, &good, hash_hex, 0), 0);
	assert_int_equal(sink->stored(sink, 3, &bad, hash_hex, 1), DOCKET_ECORRUPT);
	assert_string_equal(docket_error_last()->message, "tool.completed: field \"output\": not valid UTF-8");
	assert_int_equal(sink->stored(sink, 4, &bad, hash_hex, 0), DOCKET_ECORRUPT); /* checked before --since too */
	fclose(sink->out);
	assert_int_equal(docket_event_write_json(&want, &good, &f), 0);
	assert_int_equal(docket_buf_putc(&want, '\n'), 0);
	assert_int_equal(len, want.len);
	assert_memory_equal(buf, want.ptr, len);
	assert_int_equal(st.records, 1);
	sink->free(sink);
	free(buf);
	docket_buf_dispose(&want);
}

/* ---- util/json_write.c on its own ---- */

static void test_write_int(void **state)
{
	static const int64_t v[] = { 0, 1, -1, 9, 10, -10, 1234567890123, INT64_MAX, INT64_MIN, INT64_MIN + 1 };

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		docket_buf a = DOCKET_BUF_INIT, b = DOCKET_BUF_INIT;
		json_t *j = json_integer(v[i]);

		assert_int_equal(docket_json_dump(&a, j), 0);
		assert_int_equal(docket_json_write_int(&b, v[i]), 0);
		assert_string_equal(a.ptr, b.ptr);
		json_decref(j);
		docket_buf_dispose(&a);
		docket_buf_dispose(&b);
	}
}

static void test_is_dump(void **state)
{
	static const char *const yes[] = {
		"{}", "[]", "\"\"", "0", "-1", "123456789012345678", "true", "false", "null",
		"{\"a\":[1,{\"b\":\"\\n\\u0001\\u001F\\\"\\\\\"}],\"\":\"\xe2\x80\xa8\x7f\"}", "\"\\u0000\"",
	};
	static const char *const no[] = {
		"", " 0", "0 ", "-0", "01", "1.0", "1e2", "1234567890123456789", "\"\\u001f\"", "\"\\u0008\"",
		"\"\\/\"", "\"\\u0041\"", "{\"a\":1,\"a\":1}", "{\"\\u0000\":1}", "\"\x01\"", "\"\xc3\"", "[1,]",
		"{\"a\" :1}", "nul", "\"abc", "{\"a\":1}{}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!docket_json_is_dump(yes[i], strlen(yes[i])))
			fail_msg("refused: %s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (docket_json_is_dump(no[i], strlen(no[i])))
			fail_msg("accepted: %s", no[i]);
	/* every accepted text is what jansson writes for what it reads from it */
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		json_error_t jerr;
		json_t *v = json_loadb(yes[i], strlen(yes[i]), JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
		docket_buf d = DOCKET_BUF_INIT;

		assert_non_null(v);
		assert_int_equal(docket_json_dump(&d, v), 0);
		assert_string_equal(d.ptr, yes[i]);
		json_decref(v);
		docket_buf_dispose(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_lines),
		cmocka_unit_test(test_fixture_ledgers),
		cmocka_unit_test(test_generated_mix),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_random_strings),
		cmocka_unit_test(test_stored_json),
		cmocka_unit_test(test_maps_and_values),
		cmocka_unit_test(test_completed_integers),
		cmocka_unit_test(test_sink_failure),
		cmocka_unit_test(test_write_int),
		cmocka_unit_test(test_is_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
