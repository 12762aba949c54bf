/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_import_corpus.c: every real transcript of ../shared/corpus imports.
 *
 * For each file an independent count is made here, straight from the JSON
 * lines (not through the importer): the tool calls (Codex: response items
 * function_call/custom_tool_call/local_shell_call; Claude: tool_use blocks)
 * and which of them have a result in the file. The count must match the
 * corpus MANIFEST, the importer must report the same number of calls, every
 * call with a result must have its outcome in the ledger (none of them is
 * pending), and a call is pending only if the file has no result for it.
 * Then the ledger verifies, and importing everything again adds nothing.
 * Skipped when ../shared is absent; a failure when ../shared is there but
 * the corpus directory is missing or holds no transcript.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "docket/import.h"
#include "docket/ledger.h"
#include "util/alloc.h"

/* Tool calls per file, from ../shared/corpus/MANIFEST.md. */
static const struct {
	const char *file;
	size_t calls;
} manifest[] = {
	{ "rtchess-exported-session.jsonl", 298 },
	{ "acidicsoil-codex-session-view-rollout-019a93b9.jsonl", 39 },
	{ "pratham124-Lab2-rollout-019c1713-exec-rejected.jsonl", 6 },
	{ "matthewlai12-ece493-cms-rollout-019c4531-untrusted-patch-rejected-NULcorrupt.jsonl", 78 },
	{ "0h-n0-local-voice-assistant-rollout-019b55c1-escalations.jsonl", 303 },
	{ "hoper-j-cpolar-connect-rollout-9cd28a74-v036-readonly.jsonl", 51 },
	{ "dimicheck4-rollout-019d19cb-v0116-full-access.jsonl", 19 },
	{ "fegor-basic-rootkit-rollout-019a7206-policy-switch.jsonl", 43 },
	{ "leroysalih-planner-004-rollout-019a39f9-mcp.jsonl", 61 },
	{ "spotter-4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 150 },
	{ "spotter-4d5611e5.subagent-a2898e3.jsonl", 33 },
	{ "spotter-4d5611e5.subagent-acompact-e1f845.jsonl", 0 },
	{ "spotter-short-rejections.jsonl", 2 },
	{ "alicoding-claude-parser-3a7770b4-aba3-46dd-b677-8fc2d71d4e06.jsonl", 19 },
	{ "daaain-claude-code-log-sidechain_integrated.jsonl", 2 },
	{ "omarchy-44ef5cbf-plan-mode-rejections.jsonl", 13 },
	{ "omarchy-44ef5cbf.subagent-a71969c1296961234.jsonl", 13 },
	{ "omarchy-1fb5e404-acceptEdits-auto.jsonl", 153 },
	{ "omarchy-1fb5e404.subagent-aa9b6813c05338fac.jsonl", 56 },
	{ "awesumsawz-c32d9760-mcp-ado.jsonl", 50 },
	{ "awesumsawz-c32d9760.subagent-afa860289b496e95b-dontask-denied.jsonl", 14 },
	{ "awesumsawz-03541da3.jsonl", 24 },
	{ "awesumsawz-03541da3.subagent-a39422be8b054413a-bash-denied.jsonl", 5 },
	{ "awesumsawz-e1c2091f.subagent-aab36f9-auto-denied.jsonl", 32 },
	{ "bradymholt-30128756-mcp-chrome-devtools.jsonl", 7 },
	{ "dphaener-5c6d01a5-v1.0.58-rejection.jsonl", 20 },
	{ "aduson-noisemaker-439a9b22-interrupt.jsonl", 3 },
};

/* The independent count: call ids, and whether the file has a result for each. */
typedef struct count {
	json_t *calls;   /* id -> true (has a result) / false */
	size_t ncalls;
	size_t paired;
} count;

static void see_call(count *c, const char *id)
{
	if (id && !json_object_get(c->calls, id)) {
		json_object_set_new(c->calls, id, json_false());
		c->ncalls++;
	}
}

/* Results may precede their call (Claude Code): resolved after all lines. */
static void pair_results(count *c, const json_t *results)
{
	size_t i;

	for (i = 0; i < json_array_size(results); i++) {
		const char *id = json_string_value(json_array_get(results, i));
		json_t *v = json_object_get(c->calls, id);

		if (v && json_is_false(v)) {
			json_object_set_new(c->calls, id, json_true());
			c->paired++;
		}
	}
}

static void count_codex_line(count *c, json_t *results, const json_t *o)
{
	const json_t *p = json_object_get(o, "payload");
	const char *type = json_string_value(json_object_get(p, "type"));
	const char *id = json_string_value(json_object_get(p, "call_id"));

	if (!json_is_object(p) || !type ||
	    strcmp(json_string_value(json_object_get(o, "type")) ? json_string_value(json_object_get(o, "type")) : "",
		   "response_item") != 0)
		return;
	if (strcmp(type, "function_call") == 0 || strcmp(type, "custom_tool_call") == 0 ||
	    strcmp(type, "local_shell_call") == 0)
		see_call(c, id);
	else if ((strcmp(type, "function_call_output") == 0 || strcmp(type, "custom_tool_call_output") == 0) && id)
		json_array_append_new(results, json_string(id));
}

static void count_claude_line(count *c, json_t *results, const json_t *o)
{
	const json_t *content = json_object_get(json_object_get(o, "message"), "content");
	size_t i;

	for (i = 0; i < json_array_size(content); i++) {
		const json_t *b = json_array_get(content, i);
		const char *type = json_string_value(json_object_get(b, "type"));

		if (type && strcmp(type, "tool_use") == 0)
			see_call(c, json_string_value(json_object_get(b, "id")));
		else if (type && strcmp(type, "tool_result") == 0 &&
			 json_string_value(json_object_get(b, "tool_use_id")))
			json_array_append_new(results, json_string(json_string_value(json_object_get(b, "tool_use_id"))));
	}
}

static void count_file(count *c, const char *path, docket_import_format fmt)
{
	FILE *f = fopen(path, "rb");
	json_t *results = json_array();
	char *buf, *p, *end;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	c->calls = json_object();
	c->ncalls = c->paired = 0;
	for (p = buf, end = buf + n; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *o = json_loadb(p, len, 0, NULL);

		if (json_is_object(o)) {
			if (fmt == DOCKET_IMPORT_CODEX)
				count_codex_line(c, results, o);
			else
				count_claude_line(c, results, o);
		}
		json_decref(o);
		p += len + 1;
	}
	pair_results(c, results);
	json_decref(results);
	free(buf);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* `import` without FORMAT finds the format the corpus says the file has. */
static void assert_detected(const char *path, docket_import_format fmt)
{
	docket_import_format got = 0;
	size_t len;
	char *text = slurp(path, &len);

	if (docket_import_detect(&got, text, len) != 0 || got != fmt)
		fail_msg("%s: detected %d, the corpus says %d", path, (int)got, (int)fmt);
	free(text);
}

typedef struct pending_check {
	const json_t *paired_ids;  /* every id that has a result somewhere */
	size_t n;
	size_t bad;
} pending_check;

static int pending_cb(void *ctx, const docket_pending_info *info)
{
	pending_check *p = ctx;

	p->n++;
	if (json_is_true(json_object_get(p->paired_ids, info->invocation))) {
		print_message("%s: %s has a result in its file but is pending\n", info->session, info->invocation);
		p->bad++;
	}
	return 0;
}

static size_t manifest_calls(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(manifest) / sizeof(manifest[0]); i++)
		if (strcmp(manifest[i].file, name) == 0)
			return manifest[i].calls;
	fail_msg("%s is not in the manifest table", name);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is ../shared there at all? (Then its corpus must be too.) */
static int shared_present(void)
{
	const char *src = getenv("DOCKET_SOURCE_ROOT");
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/../shared", src ? src : ".");
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void run_corpus(const char *sub, docket_import_format fmt)
{
	char *root = test_shared_path(sub), *dir, *names[64], path[4096];
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_import_options io = DOCKET_IMPORT_OPTIONS_INIT;
	json_t *paired_ids = json_object();
	size_t nnames = 0, i, calls = 0, results = 0;
	pending_check pc = { NULL, 0, 0 };
	docket_verify_report rep;
	docket_ledger *l = NULL;
	struct dirent *e;
	DIR *d;

	if (!root) {
		json_decref(paired_ids);
		if (shared_present())
			fail_msg("../shared is present but has no corpus/%s: the corpus test would prove nothing", sub);
		skip();
	}
	dir = test_mkdtemp();
	assert_non_null(d = opendir(root));
	while ((e = readdir(d)) && nnames < 64)
		if (strstr(e->d_name, ".jsonl"))
			names[nnames++] = strdup(e->d_name);
	closedir(d);
	if (nnames == 0)
		fail_msg("%s holds no .jsonl transcript: the corpus test would prove nothing", root);
	qsort(names, nnames, sizeof(names[0]), by_name);
	oo.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l, dir, &oo), 0);
	for (i = 0; i < nnames; i++) {
		docket_import_stats s;
		count c;
		const char *key;
		json_t *v;

		snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		assert_detected(path, fmt);
		count_file(&c, path, fmt);
		assert_int_equal(c.ncalls, manifest_calls(names[i]));
		memset(&s, 0, sizeof(s));
		if (docket_import_file(l, fmt, path, &io, &s) != 0)
			fail_msg("%s: %s", names[i], docket_error_last()->message);
		if (s.calls != c.ncalls || s.results < c.paired || s.results > s.calls)
			fail_msg("%s: importer %llu calls / %llu results, independent count %zu calls / %zu paired",
				 names[i], (unsigned long long)s.calls, (unsigned long long)s.results,
				 c.ncalls, c.paired);
		assert_int_equal(s.appended, s.events);
		calls += s.calls;
		results += s.results;
		json_object_foreach(c.calls, key, v)
			if (json_is_true(v))
				json_object_set(paired_ids, key, v);
		json_decref(c.calls);
	}
	/* nothing that has a result is pending; pending = calls without an outcome */
	pc.paired_ids = paired_ids;
	assert_int_equal(docket_ledger_pending(l, NULL, pending_cb, &pc), 0);
	assert_int_equal(pc.bad, 0);
	assert_int_equal(pc.n, calls - results);
	assert_int_equal(docket_ledger_verify(l, &rep), 0);
	if (!rep.ok)
		fail_msg("verify: %s", rep.problem);
	/* again: nothing new */
	for (i = 0; i < nnames; i++) {
		docket_import_stats s;

		snprintf(path, sizeof(path), "%s/%s", root, names[i]);
		memset(&s, 0, sizeof(s));
		assert_int_equal(docket_import_file(l, fmt, path, &io, &s), 0);
		assert_int_equal(s.appended + s.duplicates, 0);
		free(names[i]);
	}
	docket_ledger_free(l);
	json_decref(paired_ids);
	test_rmdir_free(dir);
	free(root);
}

static void test_codex_corpus(void **state)
{
	(void)state;
	run_corpus("codex", DOCKET_IMPORT_CODEX);
}

static void test_claude_corpus(void **state)
{
	(void)state;
	run_corpus("claude", DOCKET_IMPORT_CLAUDE);
}

static int collect(void *ctx, json_t *ev)
{
	json_array_append_new(ctx, ev);
	return 0;
}

static const json_t *event_of(const json_t *events, const char *type, const char *inv)
{
	size_t i;
	json_t *ev;

	json_array_foreach(events, i, ev)
		if (strcmp(json_string_value(json_object_get(ev, "type")), type) == 0 &&
		    json_string_value(json_object_get(ev, "invocation")) &&
		    strcmp(json_string_value(json_object_get(ev, "invocation")), inv) == 0)
			return ev;
	return NULL;
}

/*
 * issue 29: the real rejection (pratham124: "exec command rejected by user")
 * shows only the answer; the request must not be stamped at the answer (a
 * 0 ms wait), but carry its intent's time and line (docs/import.md, "When a
 * question was asked").
 */
static void test_codex_rejection_wait(void **state)
{
	char *root = test_shared_path("codex"), path[4096];
	docket_import_stats s;
	json_t *events = json_array();
	const json_t *ev, *req = NULL, *intent, *settled;
	size_t len, i;
	char *text;

	(void)state;
	if (!root) {
		json_decref(events);
		skip();
	}
	snprintf(path, sizeof(path), "%s/pratham124-Lab2-rollout-019c1713-exec-rejected.jsonl", root);
	text = slurp(path, &len);
	memset(&s, 0, sizeof(s));
	assert_int_equal(docket_import_buffer(DOCKET_IMPORT_CODEX, "p.jsonl", text, len, NULL, collect, events, &s), 0);
	json_array_foreach(events, i, ev)
		if (strcmp(json_string_value(json_object_get(ev, "type")), "approval.requested") == 0)
			req = ev;
	assert_non_null(req);
	intent = event_of(events, "tool.intent", json_string_value(json_object_get(req, "invocation")));
	settled = event_of(events, "approval.settled", json_string_value(json_object_get(req, "invocation")));
	assert_non_null(intent);
	assert_non_null(settled);
	assert_string_equal(json_string_value(json_object_get(req, "time")),
			    json_string_value(json_object_get(intent, "time")));
	assert_true(json_equal(json_object_get(req, "provenance"), json_object_get(intent, "provenance")));
	assert_string_not_equal(json_string_value(json_object_get(req, "time")),
				json_string_value(json_object_get(settled, "time")));
	json_decref(events);
	free(text);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codex_corpus),
		cmocka_unit_test(test_claude_corpus),
		cmocka_unit_test(test_codex_rejection_wait),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
