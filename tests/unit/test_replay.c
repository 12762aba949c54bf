/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_replay.c: replay (issue 5) over fixtures/replay: every transition
 * class, the baseline inferred from each kind of history, grants on and off,
 * the human-denied flag, --compare, filters, the four report formats,
 * determinism, --fail-on, and the negative twins (unknown session, bad
 * policy, a failing callback, allocation failure). Git sources are in
 * test_replay_git.c.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docket/ledger.h"
#include "docket/replay.h"
#include "replay/replay_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/jv.h"

#define MAX_CALLS 32

typedef struct seen {
	char inv[32];
	docket_replay_class cls;
	docket_replay_baseline baseline;
	docket_verdict was, now;
	int human_denied;
	size_t changed_at;
	char rule[128];
	char recorded[24], assumed[24], from[16];   /* "" for NULL */
} seen;

typedef struct collect {
	seen calls[MAX_CALLS];
	size_t n;
	int stop_after;   /* >0: return 1 after this many; <0: return an error */
} collect;

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

/* A ledger holding fixtures/replay/sessions.jsonl. */
static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	char *path = src_path("fixtures/replay/sessions.jsonl"), line[8192];
	json_t *events[64];
	size_t n = 0;
	FILE *in = fopen(path, "r");

	assert_non_null(in);
	while (fgets(line, sizeof(line), in) && n < 64)
		events[n++] = test_json(line);
	fclose(in);
	free(path);
	f->dir = test_mkdtemp();
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&f->ledger, f->dir, &oo), 0);
	if (docket_ledger_append_json(f->ledger, events, n, NULL) < 0)
		fail_msg("append: %s", docket_error_last()->message);
	for (size_t i = 0; i < n; i++)
		json_decref(events[i]);
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

static int on_call(void *ctx, const docket_replay_call *c)
{
	collect *col = ctx;
	seen *s;

	if (col->stop_after < 0)
		return docket_error_set(DOCKET_EINVALID, "stop");
	assert_true(col->n < MAX_CALLS);
	s = &col->calls[col->n++];
	snprintf(s->inv, sizeof(s->inv), "%s", c->invocation);
	s->cls = c->cls;
	s->baseline = c->baseline;
	s->was = c->was;
	s->now = c->now;
	s->human_denied = c->human_denied;
	s->changed_at = c->changed_at;
	snprintf(s->rule, sizeof(s->rule), "%s", c->rule ? c->rule : "");
	snprintf(s->recorded, sizeof(s->recorded), "%s", c->sandbox_recorded ? c->sandbox_recorded : "");
	snprintf(s->assumed, sizeof(s->assumed), "%s", c->sandbox_assumed ? c->sandbox_assumed : "");
	snprintf(s->from, sizeof(s->from), "%s", c->sandbox_from ? c->sandbox_from : "");
	return col->stop_after > 0 && (int)col->n >= col->stop_after;
}

static const seen *find(const collect *col, const char *inv)
{
	for (size_t i = 0; i < col->n; i++)
		if (strcmp(col->calls[i].inv, inv) == 0)
			return &col->calls[i];
	fail_msg("no call %s", inv);
	return NULL;
}

static void run(fixture *f, const docket_policy *base, const char *name, const docket_replay_options *o,
		collect *col)
{
	docket_policy *p = policy(name);
	const docket_policy *ps[1] = { p };

	memset(col, 0, sizeof(*col));
	if (docket_replay_run(f->ledger, base, ps, 1, o, on_call, col) < 0)
		fail_msg("replay: %s", docket_error_last()->message);
	docket_policy_free(p);
}

static void expect(const collect *col, const char *inv, docket_replay_class cls, docket_verdict was,
		   docket_verdict now)
{
	const seen *s = find(col, inv);

	if (s->cls != cls || (cls != DOCKET_REPLAY_UNDECIDED && s->was != was) || s->now != now)
		fail_msg("%s: %s %s -> %s, expected %s %s -> %s", inv, docket_replay_class_name(s->cls),
			 docket_policy_verdict_name(s->was), docket_policy_verdict_name(s->now),
			 docket_replay_class_name(cls), docket_policy_verdict_name(was), docket_policy_verdict_name(now));
}

/* ---- classification ---- */

static void test_classify_order(void **state)
{
	(void)state;
	assert_int_equal(replay_classify(DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_APPROVAL_REQUIRED), DOCKET_REPLAY_TIGHTENED);
	assert_int_equal(replay_classify(DOCKET_VERDICT_APPROVAL_REQUIRED, DOCKET_VERDICT_DENIED), DOCKET_REPLAY_TIGHTENED);
	assert_int_equal(replay_classify(DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_UNSUPPORTED), DOCKET_REPLAY_TIGHTENED);
	assert_int_equal(replay_classify(DOCKET_VERDICT_DENIED, DOCKET_VERDICT_ALLOWED), DOCKET_REPLAY_LOOSENED);
	assert_int_equal(replay_classify(DOCKET_VERDICT_UNSUPPORTED, DOCKET_VERDICT_APPROVAL_REQUIRED), DOCKET_REPLAY_LOOSENED);
	/* denied and unsupported both refuse outright: same rank */
	assert_int_equal(replay_classify(DOCKET_VERDICT_DENIED, DOCKET_VERDICT_UNSUPPORTED), DOCKET_REPLAY_UNCHANGED);
	assert_int_equal(replay_classify(DOCKET_VERDICT_UNSUPPORTED, DOCKET_VERDICT_DENIED), DOCKET_REPLAY_UNCHANGED);
	assert_int_equal(replay_classify(DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_ALLOWED), DOCKET_REPLAY_UNCHANGED);
	assert_string_equal(docket_replay_class_name(DOCKET_REPLAY_LOOSENED), "loosened");
	assert_string_equal(docket_replay_class_name((docket_replay_class)9), "unknown");
	assert_string_equal(docket_replay_baseline_name(DOCKET_REPLAY_BASE_INFERRED), "inferred");
}

static void test_tightened(void **state)
{
	collect col;

	run(*state, NULL, "strict.yaml", NULL, &col);
	assert_int_equal(col.n, 12);
	expect(&col, "c4", DOCKET_REPLAY_TIGHTENED, DOCKET_VERDICT_APPROVAL_REQUIRED, DOCKET_VERDICT_DENIED);
	expect(&col, "c6", DOCKET_REPLAY_TIGHTENED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_DENIED);
	expect(&col, "i1", DOCKET_REPLAY_TIGHTENED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_APPROVAL_REQUIRED);
	/* a platform that cannot sandbox: allowed -> unsupported */
	expect(&col, "w1", DOCKET_REPLAY_TIGHTENED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_UNSUPPORTED);
	expect(&col, "c1", DOCKET_REPLAY_UNCHANGED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_ALLOWED);
	assert_string_equal(find(&col, "c4")->rule, "command [rm, -rf] -> deny");
	assert_string_equal(find(&col, "w1")->rule, "");
}

static void test_loosened_human_denied(void **state)
{
	collect col;

	run(*state, NULL, "loose.yaml", NULL, &col);
	expect(&col, "c2", DOCKET_REPLAY_LOOSENED, DOCKET_VERDICT_APPROVAL_REQUIRED, DOCKET_VERDICT_ALLOWED);
	expect(&col, "c4", DOCKET_REPLAY_LOOSENED, DOCKET_VERDICT_APPROVAL_REQUIRED, DOCKET_VERDICT_ALLOWED);
	assert_true(find(&col, "c4")->human_denied);     /* settled denied by user:dev */
	assert_false(find(&col, "c2")->human_denied);    /* approved_for_session */
	expect(&col, "i3", DOCKET_REPLAY_LOOSENED, DOCKET_VERDICT_DENIED, DOCKET_VERDICT_ALLOWED);
	assert_false(find(&col, "i3")->human_denied);    /* denied with no request: not a human */
	expect(&col, "c5", DOCKET_REPLAY_UNCHANGED, DOCKET_VERDICT_DENIED, DOCKET_VERDICT_DENIED);
}

/* ---- baselines ---- */

static void test_baseline_inferred(void **state)
{
	collect col;

	run(*state, NULL, "base.yaml", NULL, &col);
	/* dispatch with no request -> allowed */
	assert_int_equal(find(&col, "i1")->baseline, DOCKET_REPLAY_BASE_INFERRED);
	assert_int_equal(find(&col, "i1")->was, DOCKET_VERDICT_ALLOWED);
	/* an approval request -> approval_required */
	assert_int_equal(find(&col, "i2")->baseline, DOCKET_REPLAY_BASE_INFERRED);
	assert_int_equal(find(&col, "i2")->was, DOCKET_VERDICT_APPROVAL_REQUIRED);
	/* denied outcome with no request -> denied */
	assert_int_equal(find(&col, "i3")->baseline, DOCKET_REPLAY_BASE_INFERRED);
	assert_int_equal(find(&col, "i3")->was, DOCKET_VERDICT_DENIED);
	/* nothing yet -> undecided, reported apart */
	assert_int_equal(find(&col, "i4")->baseline, DOCKET_REPLAY_BASE_NONE);
	assert_int_equal(find(&col, "i4")->cls, DOCKET_REPLAY_UNDECIDED);
	/* recorded decisions win */
	assert_int_equal(find(&col, "c1")->baseline, DOCKET_REPLAY_BASE_RECORDED);
}

static void test_grants(void **state)
{
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	collect col;

	/* c2 was approved_for_session: the same push (c3) is granted */
	run(*state, NULL, "base.yaml", NULL, &col);
	expect(&col, "c3", DOCKET_REPLAY_UNCHANGED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_ALLOWED);
	expect(&col, "c2", DOCKET_REPLAY_UNCHANGED, DOCKET_VERDICT_APPROVAL_REQUIRED, DOCKET_VERDICT_APPROVAL_REQUIRED);
	o.approvals = DOCKET_REPLAY_APPROVALS_NONE;
	run(*state, NULL, "base.yaml", &o, &col);
	expect(&col, "c3", DOCKET_REPLAY_TIGHTENED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_APPROVAL_REQUIRED);
	assert_string_equal(find(&col, "c3")->rule, "command [git, push] -> ask");
}

static void test_compare(void **state)
{
	docket_policy *base = policy("strict.yaml");
	collect col;

	run(*state, base, "loose.yaml", NULL, &col);
	assert_int_equal(col.n, 12);
	for (size_t i = 0; i < col.n; i++)
		assert_int_equal(col.calls[i].baseline, DOCKET_REPLAY_BASE_POLICY);
	/* strict denies rm -rf, loose allows it; a human had denied c4 */
	expect(&col, "c4", DOCKET_REPLAY_LOOSENED, DOCKET_VERDICT_DENIED, DOCKET_VERDICT_ALLOWED);
	assert_true(find(&col, "c4")->human_denied);
	/* no undecided calls when the baseline is a policy */
	expect(&col, "i4", DOCKET_REPLAY_UNCHANGED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_ALLOWED);
	docket_policy_free(base);
}

static void test_history_changed_at(void **state)
{
	docket_policy *a = policy("base.yaml"), *b = policy("strict.yaml"), *c = policy("loose.yaml");
	const docket_policy *ps[2] = { b, c };
	collect col = { 0 };

	/* base -> strict -> loose: rm -rf changes first at strict (index 0),
	 * git push first at loose (index 1) */
	assert_int_equal(docket_replay_run(((fixture *)*state)->ledger, a, ps, 2, NULL, on_call, &col), 0);
	assert_int_equal(find(&col, "c4")->cls, DOCKET_REPLAY_LOOSENED);
	assert_int_equal(find(&col, "c4")->changed_at, 0);
	assert_int_equal(find(&col, "c2")->changed_at, 1);
	assert_int_equal(find(&col, "c1")->changed_at, SIZE_MAX);
	docket_policy_free(a);
	docket_policy_free(b);
	docket_policy_free(c);
}

/* ---- filters ---- */

static void test_filters(void **state)
{
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	collect col;

	o.session = "s-import";
	run(*state, NULL, "base.yaml", &o, &col);
	assert_int_equal(col.n, 4);
	assert_string_equal(col.calls[0].inv, "i1");
	o.session = NULL;
	o.has_since = 1;
	assert_int_equal(replay_time_ms("2025-04-01T10:05:00Z", &o.since_ms), 0);
	o.has_until = 1;
	assert_int_equal(replay_time_ms("2025-04-02T09:01:00Z", &o.until_ms), 0);
	run(*state, NULL, "base.yaml", &o, &col);
	/* c3 (10:05:00, inclusive) .. i1; i2 at 09:01:00 is excluded */
	assert_int_equal(col.n, 5);
	assert_string_equal(col.calls[0].inv, "c3");
	assert_string_equal(col.calls[4].inv, "i1");
	/* a filtered replay still applies the grants recorded before */
	expect(&col, "c3", DOCKET_REPLAY_UNCHANGED, DOCKET_VERDICT_ALLOWED, DOCKET_VERDICT_ALLOWED);
}

static void test_filters_negative(void **state)
{
	fixture *f = *state;
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	docket_policy *p = policy("base.yaml");
	const docket_policy *ps[1] = { p };
	collect col = { 0 };
	int64_t ms;

	o.session = "no-such-session";
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, &o, on_call, &col), DOCKET_ENOTFOUND);
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 0, NULL, on_call, &col), DOCKET_EINVALID);
	/* the callback stops early, or fails */
	col.stop_after = 2;
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, NULL, on_call, &col), 0);
	assert_int_equal(col.n, 2);
	col.stop_after = -1;
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, NULL, on_call, &col), DOCKET_EINVALID);
	/* times */
	assert_int_equal(replay_time_ms("1970-01-01T00:00:01.5Z", &ms), 0);
	assert_int_equal(ms, 1500);
	assert_int_equal(replay_time_ms("2025-04-01T10:05:00", &ms), -1);
	assert_int_equal(replay_time_ms("2025-04-01 10:05:00Z", &ms), -1);
	assert_int_equal(replay_time_ms("2025-04-01T10:05:00Zx", &ms), -1);
	assert_int_equal(replay_time_ms(NULL, &ms), -1);
	docket_policy_free(p);
}

/* The assumptions each call carries: the sandbox the runtime had (Claude
 * Code: none; a Codex session with no recorded sandbox: not known), the one
 * the policy assumed and why; --assume-sandbox overrides it; an unknown mode
 * is refused before anything is read, and an options struct older than
 * version 3 has no such field to read. */
static void test_assumptions(void **state)
{
	fixture *f = *state;
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	docket_policy *p = policy("strict.yaml");
	const docket_policy *ps[1] = { p };
	collect col = { 0 };
	const seen *s;

	assert_true(docket_replay_sandbox_valid("read_only"));
	assert_true(docket_replay_sandbox_valid("none"));
	assert_false(docket_replay_sandbox_valid("workspace-write"));
	assert_false(docket_replay_sandbox_valid(""));
	assert_false(docket_replay_sandbox_valid(NULL));
	run(f, NULL, "strict.yaml", NULL, &col);
	s = find(&col, "i1");      /* s-import: claude-code/2.0.1 */
	assert_string_equal(s->recorded, "none");
	assert_string_equal(s->assumed, "workspace_write");
	assert_string_equal(s->from, "policy");
	s = find(&col, "c1");      /* s-codex: no sandbox recorded */
	assert_string_equal(s->recorded, "");
	o.assume_sandbox = "read_only";
	run(f, NULL, "strict.yaml", &o, &col);
	s = find(&col, "i1");
	assert_string_equal(s->assumed, "read_only");
	assert_string_equal(s->from, "assumed");
	assert_string_equal(s->recorded, "none");
	o.assume_sandbox = "sandboxed";
	memset(&col, 0, sizeof(col));
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, &o, on_call, &col), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "sandboxed"));
	assert_int_equal(col.n, 0);
	o.version = 2;   /* the field is not there: ignored */
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, &o, on_call, &col), 0);
	assert_string_equal(find(&col, "i1")->from, "policy");
	docket_policy_free(p);
}

/* Stored arguments that do not fit their tool (a damaged file, or a call
 * recorded before docket checked arguments) are the ledger's problem:
 * DOCKET_ECORRUPT naming the call and the field, never a usage error. */
static void test_stored_args_unfit(void **state)
{
	fixture *f = *state;
	docket_policy *p = policy("base.yaml");
	const docket_policy *ps[1] = { p };
	json_t *ev[2] = {
		test_json("{\"type\":\"session.opened\",\"session\":\"odd\",\"runtime\":\"t\"}"),
		test_json("{\"type\":\"tool.intent\",\"session\":\"odd\",\"invocation\":\"c\",\"tool\":\"shell\","
			  "\"args\":{\"command\":[1,2]}}"),
	};
	docket_replay_options o = DOCKET_REPLAY_OPTIONS_INIT;
	collect col = { 0 };
	int error = docket_ledger_append_json(f->ledger, ev, 2, NULL);

	json_decref(ev[0]);
	json_decref(ev[1]);
	if (error == DOCKET_EINVALID) {
		/* the ledger checks arguments itself: nothing odd can be stored */
		docket_policy_free(p);
		skip();
	}
	assert_int_equal(error, 0);
	o.session = "odd";
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, &o, on_call, &col), DOCKET_ECORRUPT);
	assert_non_null(strstr(docket_error_last()->message, "invocation c"));
	assert_non_null(strstr(docket_error_last()->message, "command[0] must be a string"));
	docket_policy_free(p);
}

/* ---- sources ---- */

static void test_sources_negative(void **state)
{
	docket_policy *p = NULL;
	char *bad = src_path("fixtures/replay/malformed.yaml");

	(void)state;
	assert_int_equal(docket_replay_source_load(&p, bad, NULL), DOCKET_EINVALID);
	assert_null(p);
	assert_int_equal(docket_replay_source_load(&p, "/no/such/policy.yaml", NULL), DOCKET_ENOTFOUND);
	if (docket_replay_has_git()) {
		assert_int_equal(docket_replay_source_load(&p, "git:HEAD", NULL), DOCKET_EINVALID);
		assert_int_equal(docket_replay_source_load(&p, "git::policy.yaml", NULL), DOCKET_EINVALID);
	} else {
		assert_int_equal(docket_replay_source_load(&p, "git:HEAD:policy.yaml", NULL), DOCKET_ERROR);
	}
	free(bad);
}

/* ---- reports ---- */

static char *report(fixture *f, docket_replay_format format, const char *name, unsigned fail_on, int *failed)
{
	docket_replay_report_info info = DOCKET_REPLAY_REPORT_INFO_INIT;
	docket_replay_report *r = NULL;
	docket_policy *p = policy(name);
	const docket_policy *ps[1] = { p };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	info.format = format;
	info.policy = name;
	info.fail_on = fail_on;
	assert_int_equal(docket_replay_report_new(&r, &info), 0);
	assert_int_equal(docket_replay_run(f->ledger, NULL, ps, 1, NULL, docket_replay_report_add, r), 0);
	assert_int_equal(docket_replay_report_finish(r, out), 0);
	fclose(out);
	*failed = docket_replay_report_failed(r, fail_on);
	docket_replay_report_free(r);
	docket_policy_free(p);
	return text;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_report_formats(void **state)
{
	int failed;
	char *table = report(*state, DOCKET_REPLAY_TABLE, "loose.yaml", 0, &failed);
	char *json = report(*state, DOCKET_REPLAY_JSON, "loose.yaml", 0, &failed);
	char *junit = report(*state, DOCKET_REPLAY_JUNIT, "loose.yaml", DOCKET_REPLAY_FAIL_LOOSENED, &failed);
	int junit_failed = failed;
	char *md = report(*state, DOCKET_REPLAY_MARKDOWN, "loose.yaml", 0, &failed);
	json_t *doc = test_json(json);

	assert_non_null(strstr(table, "loosened, human denied"));
	assert_non_null(strstr(table, "(1 denied by a human when recorded)"));
	assert_string_equal(json_string_value(json_object_get(doc, "schema")), "docket.replay/v1");
	assert_int_equal(json_array_size(json_object_get(doc, "changes")), 4);
	assert_int_equal(json_array_size(json_object_get(doc, "undecided")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "totals"), "loosened")), 4);
	assert_int_equal(count(junit, "<testcase "), 4);
	assert_int_equal(count(junit, "<failure "), 4);
	assert_non_null(strstr(junit, "failures=\"4\""));
	assert_true(junit_failed);
	assert_false(failed);
	assert_int_equal(count(md, "| **loosened** |"), 5);   /* the count row and 4 calls */
	json_decref(doc);
	free(table);
	free(json);
	free(junit);
	free(md);
}

static void test_report_determinism_and_fail_on(void **state)
{
	int failed;
	char *a = report(*state, DOCKET_REPLAY_JSON, "strict.yaml", DOCKET_REPLAY_FAIL_LOOSENED, &failed);
	char *b;

	assert_false(failed);   /* strict only tightens */
	b = report(*state, DOCKET_REPLAY_JSON, "strict.yaml", DOCKET_REPLAY_FAIL_TIGHTENED, &failed);
	assert_true(failed);
	assert_string_equal(a, b);
	free(b);
	b = report(*state, DOCKET_REPLAY_JUNIT, "strict.yaml", DOCKET_REPLAY_FAIL_CHANGED, &failed);
	assert_true(failed);
	assert_int_equal(count(b, "<failure "), 4);
	free(b);
	/* no change at all: one passing testcase, no failure */
	b = report(*state, DOCKET_REPLAY_JUNIT, "base.yaml", DOCKET_REPLAY_FAIL_TIGHTENED, &failed);
	assert_false(failed);
	assert_int_equal(count(b, "<failure "), 0);
	free(a);
	free(b);
}

/* replay_target (jansson) and, when the tape takes the text, replay_target_jv
 * over the tape: the same bytes. */
static int target_both(docket_buf *b, const char *text)
{
	docket_json_tape *tape = docket_json_tape_new();
	docket_buf t = DOCKET_BUF_INIT;
	docket_jv_doc d;
	int error = replay_target(b, text);

	assert_non_null(tape);
	if (docket_jv_parse(&d, tape, text, strlen(text)) == 0 && d.ops == &docket_jv_tape) {
		assert_int_equal(replay_target_jv(&t, d.ops, d.root), 0);
		assert_int_equal(t.len, b->len);
		assert_memory_equal(t.ptr, b->ptr, t.len);
	}
	docket_jv_doc_dispose(&d);
	docket_buf_dispose(&t);
	docket_json_tape_free(tape);
	return error;
}

static void test_target(void **state)
{
	docket_buf b = DOCKET_BUF_INIT;
	char big[400];

	(void)state;
	assert_int_equal(target_both(&b, "{\"command\":[\"bash\",\"-lc\",\"a\\nb\"]}"), 0);
	assert_string_equal(b.ptr, "a b");
	assert_int_equal(target_both(&b, "{\"command\":[\"git\",\"push\"]}"), 0);
	assert_string_equal(b.ptr, "git push");
	assert_int_equal(target_both(&b, "{\"changes\":[{\"path\":\"a\"},{\"path\":\"b\"}]}"), 0);
	assert_string_equal(b.ptr, "a, b");
	assert_int_equal(target_both(&b, "{\"server\":\"gh\",\"tool\":\"list\"}"), 0);
	assert_string_equal(b.ptr, "gh/list");
	assert_int_equal(target_both(&b, "{\"ecosystem\":\"npm\",\"packages\":[\"a\",\"b\"]}"), 0);
	assert_string_equal(b.ptr, "npm: a b");
	assert_int_equal(target_both(&b, "not json"), 0);
	assert_string_equal(b.ptr, "not json");
	memset(big, 'x', sizeof(big));
	memcpy(big, "{\"path\":\"", 9);
	memcpy(big + sizeof(big) - 3, "\"}", 3);
	assert_int_equal(target_both(&b, big), 0);
	assert_int_equal(b.len, 120);
	assert_string_equal(b.ptr + 117, "...");
	/* what no rule names: the args as jansson dumps them, from either view */
	assert_int_equal(target_both(&b, "{\"q\" : [1, 2.5, -0, 1e3, \"\\u00e9\\t\\u2028\"], \"n\":null}"), 0);
	assert_string_equal(b.ptr, "{\"q\":[1,2.5,0,1000.0,\"\xc3\xa9\\t\xe2\x80\xa8\"],\"n\":null}");
	assert_int_equal(target_both(&b, "{\"command\":[\"bash\",\"-c\",\"x\",\"y\"]}"), 0);
	assert_string_equal(b.ptr, "bash -c x y");
	assert_int_equal(target_both(&b, "{\"host\":\"h\",\"url\":7}"), 0);
	assert_string_equal(b.ptr, "h");
	docket_buf_dispose(&b);
}

/* Allocation failure anywhere in a replay is an error, never a crash or a leak. */
static void test_alloc_failure(void **state)
{
	fixture *f = *state;
	docket_policy *p = policy("strict.yaml");
	const docket_policy *ps[1] = { p };
	int failures = 0;

	for (long n = 1; n < 100000; n++) {
		docket_replay_report_info info = DOCKET_REPLAY_REPORT_INFO_INIT;
		docket_replay_report *r = NULL;
		FILE *out = fopen("/dev/null", "w");
		int error;

		docket_alloc_fail_after(n);
		error = docket_replay_report_new(&r, &info);
		if (error == 0)
			error = docket_replay_run(f->ledger, NULL, ps, 1, NULL, docket_replay_report_add, r);
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
	assert_true(failures > 10);
	docket_policy_free(p);
}


/* ---- sessions.c: context ids and the revision cache ---- */

static docket_event *event_of(const char *text)
{
	json_t *obj = json_loads(text, 0, NULL);
	docket_event *ev = NULL;

	assert_non_null(obj);
	assert_int_equal(docket_event_from_json(&ev, obj), 0);
	json_decref(obj);
	return ev;
}

#define OPENED(S, CWD, HOME) "{\"type\":\"session.opened\",\"session\":\"" S "\",\"runtime\":\"claude-code/2.1\"," \
	"\"platform\":\"linux\",\"cwd\":\"" CWD "\",\"workspace_roots\":[\"/w\"],\"env\":{\"HOME\":\"" HOME "\"}," \
	"\"time\":\"2025-04-01T10:00:01Z\"}"
#define REVISED(S, FMT, POLICY) "{\"type\":\"policy.revised\",\"session\":\"" S "\",\"revision\":1,\"format\":\"" \
	FMT "\",\"policy\":" POLICY ",\"time\":\"2025-04-01T10:00:02Z\"}"

static rsession *open_one(rsessions *t, const char *id, const char *text)
{
	docket_event *ev = event_of(text);
	rsession *s = NULL;

	assert_int_equal(rsessions_open(&s, t, id, ev), 0);
	docket_event_free(ev);
	return s;
}

static void revise(rsessions *t, rsession *s, const char *text)
{
	docket_event *ev = event_of(text);

	assert_int_equal(rsession_policy(t, s, ev), 0);
	docket_event_free(ev);
}

/* Equal recorded contexts share an id; one field apart does not; Codex
 * settings join the context. */
static void test_context_ids(void **state)
{
	rsessions t;
	rsession *a, *b, *c, *d, *e;

	(void)state;
	memset(&t, 0, sizeof(t));
	a = open_one(&t, "a", OPENED("a", "/w", "/h"));
	b = open_one(&t, "b", OPENED("b", "/w", "/h"));
	c = open_one(&t, "c", OPENED("c", "/w", "/g"));
	d = open_one(&t, "d", OPENED("d", "/v", "/h"));
	e = open_one(&t, "e", OPENED("e", "/w", "/h"));
	assert_int_equal(a->ctx_id, b->ctx_id);
	assert_int_equal(a->ctx_id, e->ctx_id);
	assert_int_not_equal(a->ctx_id, c->ctx_id);
	assert_int_not_equal(a->ctx_id, d->ctx_id);
	assert_int_not_equal(c->ctx_id, d->ctx_id);
	/* Codex settings join the context: a new id, equal settings share it */
	revise(&t, b, REVISED("b", "codex", "{\"approval_policy\":\"never\",\"sandbox_policy\":\"read-only\"}"));
	revise(&t, e, REVISED("e", "codex", "{\"approval_policy\":\"never\",\"sandbox_policy\":\"read-only\"}"));
	assert_int_not_equal(a->ctx_id, b->ctx_id);
	assert_int_equal(b->ctx_id, e->ctx_id);
	revise(&t, e, REVISED("e", "codex", "{\"approval_policy\":\"on-request\",\"sandbox_policy\":\"read-only\"}"));
	assert_int_not_equal(b->ctx_id, e->ctx_id);
	rsessions_dispose(&t);
}

/* A revision text is parsed once per format: the cache answers the next
 * sessions with the same result, and the format is part of its key. */
static void test_revision_cache(void **state)
{
	static const char *sandboxed = "{\"sandbox\":{\"enabled\":true}}";
	char text[512];
	rsessions t;
	rsession *s[3];

	(void)state;
	memset(&t, 0, sizeof(t));
	for (int i = 0; i < 3; i++) {
		char id[2] = { (char)('a' + i), 0 };

		s[i] = open_one(&t, id, OPENED("x", "/w", "/h"));
		snprintf(text, sizeof(text), REVISED("%s", "claude", "%s"), id, sandboxed);
		revise(&t, s[i], text);
		assert_true(s[i]->claude_sandbox);
		assert_null(s[i]->codex);
	}
	assert_int_equal(t.revs_parsed, 1);
	/* the same text as Codex settings: parsed again, read as Codex's */
	snprintf(text, sizeof(text), REVISED("a", "codex", "%s"), "{\"sandbox_policy\":\"read-only\"}");
	revise(&t, s[0], text);
	snprintf(text, sizeof(text), REVISED("b", "claude", "%s"), "{\"sandbox_policy\":\"read-only\"}");
	revise(&t, s[1], text);
	assert_int_equal(t.revs_parsed, 3);
	assert_non_null(s[0]->codex);
	assert_null(s[1]->codex);
	assert_false(s[1]->claude_sandbox);
	/* settings without a sandbox turn it off, cached or not */
	snprintf(text, sizeof(text), REVISED("c", "claude", "%s"), "{\"sandbox_policy\":\"read-only\"}");
	revise(&t, s[2], text);
	assert_false(s[2]->claude_sandbox);
	assert_int_equal(t.revs_parsed, 3);
	rsessions_dispose(&t);
}


/* ---- intent_decode.c against protobuf-c ---- */

/* The packing of a message (a test buffer: events here are small). */
static size_t pack_of(const docket_event *ev, uint8_t *buf, size_t cap)
{
	size_t n = docket__v1__event__get_packed_size(ev);

	assert_true(n <= cap);
	return docket__v1__event__pack(ev, buf);
}

/* 1 when intent_decode handed the bytes back, 0 when it decoded them to
 * exactly what protobuf-c unpacks (compared by packing both), and -1 when
 * protobuf-c refuses bytes it decoded (a failure of the test). */
static int decode_both(const uint8_t *p, size_t len)
{
	static uint8_t a[4096], b[4096];
	docket_event *fast = NULL, *slow = NULL;
	int rc = intent_decode(&fast, &docket_pb_allocator, p, len);

	assert_true(rc == 0 || rc == 1);
	if (rc == 1) {
		assert_null(fast);
		return 1;
	}
	if (!(slow = docket__v1__event__unpack(&docket_pb_allocator, len, p))) {
		docket_event_free(fast);
		return -1;
	}
	assert_int_equal(pack_of(fast, a, sizeof(a)), pack_of(slow, b, sizeof(b)));
	assert_memory_equal(a, b, pack_of(fast, a, sizeof(a)));
	assert_int_equal(fast->body_case, slow->body_case);
	docket_event_free(fast);
	docket_event_free(slow);
	return 0;
}

static void test_intent_decode(void **state)
{
	static const char *const intents[] = {
		"{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c1\",\"tool\":\"shell\","
		"\"args\":{\"command\":[\"bash\",\"-lc\",\"git status\"]},\"time\":\"2025-04-01T10:00:02Z\"}",
		"{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c2\",\"turn\":\"t9\",\"tool\":\"Read\","
		"\"args\":{\"file_path\":\"/a\"},\"recovery\":\"replay_safe\",\"decision\":{\"verdict\":\"denied\","
		"\"source\":\"docket\",\"reasons\":[\"r1\",\"r2\"],\"rules\":[\"Read(./a)\"],\"policy_revision\":7},"
		"\"time\":\"2025-04-01T10:00:03Z\"}",
		"{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c3\",\"tool\":\"x\",\"args\":{},"
		"\"decision\":{\"verdict\":\"allowed\"},\"provenance\":{\"file\":\"t.jsonl\",\"line\":3},"
		"\"time\":\"2025-04-01T10:00:04Z\"}",
	};
	static const char *opened = OPENED("s", "/w", "/h");
	uint8_t buf[4096], bad[4096];
	size_t fast = 0, refused = 0;

	(void)state;
	for (size_t k = 0; k < sizeof(intents) / sizeof(intents[0]); k++) {
		docket_event *ev = event_of(intents[k]);
		size_t n = pack_of(ev, buf, sizeof(buf));

		docket_event_free(ev);
		assert_int_equal(decode_both(buf, n), 0);
		/* every truncation and every byte changed: handed back or the same */
		for (size_t cut = 0; cut < n; cut++) {
			int rc = decode_both(buf, cut);

			assert_int_not_equal(rc, -1);
			refused += rc == 1;
		}
		for (size_t i = 0; i < n; i++)
			for (unsigned x = 1; x < 256; x <<= 1) {
				int rc;

				memcpy(bad, buf, n);
				bad[i] ^= (uint8_t)x;
				assert_int_not_equal(rc = decode_both(bad, n), -1);
				fast += rc == 0;
			}
	}
	assert_true(fast > 0);
	assert_true(refused > 0);
	/* not a tool.intent: handed back, never decoded */
	{
		docket_event *ev = event_of(opened);
		size_t n = pack_of(ev, buf, sizeof(buf));

		docket_event_free(ev);
		assert_int_equal(decode_both(buf, n), 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_order),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_sources_negative),
		cmocka_unit_test(test_context_ids),
		cmocka_unit_test(test_revision_cache),
		cmocka_unit_test(test_intent_decode),
		cmocka_unit_test_setup_teardown(test_tightened, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loosened_human_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_inferred, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stored_args_unfit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history_changed_at, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filters_negative, setup, teardown),
		cmocka_unit_test_setup_teardown(test_assumptions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_formats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_determinism_and_fail_on, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_failure, setup, teardown),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
