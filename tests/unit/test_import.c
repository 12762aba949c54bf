/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_import.c: the importers on our own fixtures (fixtures/import/).
 *
 * Each mapping rule of docs/import.md is pinned on a hand-written transcript:
 * shell forms and escalations, user rejections (with and without a policy
 * that asks), patches touching several files, MCP names, interrupted turns,
 * results before their call, sidechains and subagent files, policy changes.
 * Then the ledger side: every mapped history is accepted and verifies;
 * importing again adds nothing; a grown file adds only its new part and
 * completes calls left pending; a changed file is mapped again; strict mode
 * writes nothing; a crash between a batch and its progress record is
 * recovered; allocation failures are reported cleanly. The text parsers of
 * importers/tools.c get their negative cases.
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "docket/import.h"
#include "docket/ledger.h"
#include "importers/import_internal.h"
#include "ledger/event.h"
#include "util/alloc.h"
#include "util/crash.h"

/* ---- helpers ---- */

static char *fixture_path(const char *rel)
{
	const char *src = getenv("DOCKET_SOURCE_ROOT");
	char path[4096];

	snprintf(path, sizeof(path), "%s/fixtures/import/%s", src ? src : ".", rel);
	return strdup(path);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s", path);
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

static void spit(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* Every event must pass the ledger's strict codec. */
static int collect(void *ctx, json_t *ev)
{
	docket_event *parsed = NULL;

	if (docket_event_from_json(&parsed, ev) != 0)
		fail_msg("codec refused an imported event: %s", docket_error_last()->message);
	docket_event_free(parsed);
	json_array_append_new(ctx, ev);
	return 0;
}

/* Map a fixture without a ledger; the events in order. */
static json_t *map_fixture(docket_import_format fmt, const char *rel, docket_import_stats *stats)
{
	char *path = fixture_path(rel);
	size_t len;
	char *text = slurp(path, &len);
	json_t *events = json_array();

	memset(stats, 0, sizeof(*stats));
	assert_int_equal(docket_import_buffer(fmt, rel, text, len, NULL, collect, events, stats), 0);
	free(text);
	free(path);
	return events;
}

/* The events about one invocation, in order, as "type[/status|result]" words. */
static void trail(char *out, size_t n, const json_t *events, const char *inv)
{
	size_t i, o = 0;
	json_t *ev;

	out[0] = '\0';
	json_array_foreach(events, i, ev) {
		const char *id = json_string_value(json_object_get(ev, "invocation"));
		const char *type = json_string_value(json_object_get(ev, "type"));
		const char *st = json_string_value(json_object_get(ev, "status"));
		const char *res = json_string_value(json_object_get(ev, "result"));

		if (!id || strcmp(id, inv) != 0)
			continue;
		o += (size_t)snprintf(out + o, n - o, "%s%s%s%s", o ? " " : "", type,
				      st || res ? "/" : "", st ? st : res ? res : "");
		if (o >= n)
			fail_msg("trail too long");
	}
}

static const json_t *find(const json_t *events, const char *type, const char *inv)
{
	size_t i;
	json_t *ev;

	json_array_foreach(events, i, ev) {
		const char *t = json_string_value(json_object_get(ev, "type"));
		const char *id = json_string_value(json_object_get(ev, "invocation"));

		if (strcmp(t, type) == 0 && (!inv || (id && strcmp(id, inv) == 0)))
			return ev;
	}
	fail_msg("no %s for %s", type, inv ? inv : "-");
	return NULL;
}

static void assert_trail(const json_t *events, const char *inv, const char *want)
{
	char got[512];

	trail(got, sizeof(got), events, inv);
	if (strcmp(got, want) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", inv, got, want);
}

static const json_t *args_of(const json_t *events, const char *inv)
{
	return json_object_get(find(events, "tool.intent", inv), "args");
}

static void assert_json(const json_t *got, const char *want)
{
	json_t *w = test_json(want);

	if (!json_equal(got, w)) {
		char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);

		fail_msg("got %s, want %s", g ? g : "?", want);
	}
	json_decref(w);
}

static docket_ledger *new_ledger(const char *dir)
{
	docket_open_options o = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	o.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&l, dir, &o) != 0)
		fail_msg("open %s: %s", dir, docket_error_last()->message);
	return l;
}

static void assert_verifies(docket_ledger *l)
{
	docket_verify_report rep;

	assert_int_equal(docket_ledger_verify(l, &rep), 0);
	if (!rep.ok)
		fail_msg("verify: %s", rep.problem);
}

static int import_path(docket_ledger *l, docket_import_format fmt, const char *path,
		       unsigned flags, docket_import_stats *s)
{
	docket_import_options o = DOCKET_IMPORT_OPTIONS_INIT;

	o.flags = flags;
	memset(s, 0, sizeof(*s));
	return docket_import_file(l, fmt, path, &o, s);
}

static uint64_t ledger_events(docket_ledger *l)
{
	docket_ledger_info info;

	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	return info.events;
}

/* ---- Codex mapping ---- */

static void test_codex_mapping(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CODEX, "codex-basic.jsonl", &s);
	const json_t *open = find(ev, "session.opened", NULL);

	(void)state;
	assert_json(open, "{\"type\":\"session.opened\",\"time\":\"2025-12-01T10:00:00.000Z\","
		    "\"session\":\"fx-codex-1\",\"runtime\":\"codex/0.77.0\",\"platform\":\"linux\","
		    "\"cwd\":\"/home/ana/app\",\"labels\":{\"originator\":\"codex_cli_rs\",\"source\":\"cli\","
		    "\"model_provider\":\"openai\",\"git.branch\":\"main\",\"git.commit_hash\":\"abc123\","
		    "\"import.format\":\"codex\",\"import.end\":\"not recorded\"},"
		    "\"provenance\":{\"file\":\"codex-basic.jsonl\",\"line\":1}}");
	/* shell_command -> bash -lc, exit code parsed */
	assert_trail(ev, "call_ok", "tool.intent tool.dispatched tool.completed/ok");
	assert_json(args_of(ev, "call_ok"), "{\"command\":[\"bash\",\"-lc\",\"git status\"],\"cwd\":\"/home/ana/app\"}");
	assert_int_equal(json_integer_value(json_object_get(find(ev, "tool.completed", "call_ok"), "exit_code")), 0);
	assert_int_equal(json_integer_value(json_object_get(find(ev, "tool.completed", "call_ok"), "duration_ms")), 100);
	/* the rejection: escalation kept, approval asked and denied, no dispatch */
	assert_trail(ev, "call_rejected",
		     "tool.intent approval.requested approval.settled/denied tool.completed/denied");
	assert_json(args_of(ev, "call_rejected"),
		    "{\"command\":[\"bash\",\"-lc\",\"git push\"],\"cwd\":\"/home/ana/app\","
		    "\"sandbox_permissions\":\"require_escalated\",\"justification\":\"Push the fix?\","
		    "\"prefix_rule\":[\"git\",\"push\"]}");
	assert_string_equal(json_string_value(json_object_get(find(ev, "approval.requested", "call_rejected"), "prompt")),
			    "Push the fix?");
	/* a patch touching three files, one of them moved */
	assert_json(args_of(ev, "call_patch"),
		    "{\"changes\":[{\"path\":\"docs/new.md\",\"op\":\"add\"},"
		    "{\"path\":\"src/app.c\",\"op\":\"move\",\"to\":\"src/main.c\"},"
		    "{\"path\":\"src/old.c\",\"op\":\"delete\"}]}");
	assert_trail(ev, "call_patch", "tool.intent tool.dispatched tool.completed/ok");
	assert_int_equal(json_integer_value(json_object_get(find(ev, "tool.completed", "call_patch"), "duration_ms")), 200);
	/* mcp__server__tool */
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.intent", "call_mcp"), "tool")), "mcp");
	assert_json(args_of(ev, "call_mcp"), "{\"server\":\"supabase_local\",\"tool\":\"execute_sql\",\"arguments\":{\"query\":\"select 1\"}}");
	/* exec_command, unified exec output */
	assert_trail(ev, "call_fail", "tool.intent tool.dispatched tool.completed/error");
	assert_int_equal(json_integer_value(json_object_get(find(ev, "tool.completed", "call_fail"), "exit_code")), 2);
	assert_json(args_of(ev, "call_fail"), "{\"command\":[\"bash\",\"-lc\",\"make test\"],\"cwd\":\"/home/ana/app\",\"justification\":\"run the tests\"}");
	/* 0.60 wire form of an escalation */
	assert_string_equal(json_string_value(json_object_get(args_of(ev, "call_escalated"), "sandbox_permissions")),
			    "require_escalated");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.intent", "call_plan"), "tool")), "update_plan");
	/* local_shell_call under the new policy, which never asks */
	assert_trail(ev, "call_local", "tool.intent tool.dispatched tool.completed/ok");
	assert_json(args_of(ev, "call_local"), "{\"command\":[\"ls\",\"-la\"],\"cwd\":\"/home/ana/app\",\"timeout_ms\":10000}");
	/* interrupted turn: cancelled, never dispatched; a call with no output stays pending */
	assert_trail(ev, "call_interrupted", "tool.intent tool.completed/cancelled");
	assert_trail(ev, "call_pending", "tool.intent");
	assert_int_equal(s.sessions, 1);
	assert_int_equal(s.policies, 2);
	assert_int_equal(s.calls, 10);
	assert_int_equal(s.results, 9);
	assert_int_equal(s.denials, 1);
	assert_int_equal(s.approvals, 1);
	assert_int_equal(s.cancelled, 1);
	assert_int_equal(s.malformed + s.unknown, 0);
	json_decref(ev);
}

static void test_codex_policy_revisions(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CODEX, "codex-basic.jsonl", &s);
	size_t i, n = 0;
	json_t *e;

	(void)state;
	json_array_foreach(ev, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "type")), "policy.revised") != 0)
			continue;
		n++;
		assert_int_equal(json_integer_value(json_object_get(e, "revision")), (json_int_t)n);
		assert_string_equal(json_string_value(json_object_get(e, "format")), "codex");
	}
	assert_int_equal(n, 2);
	e = json_array_get(ev, 1);  /* after session.opened: the first turn_context */
	assert_json(json_object_get(e, "policy"),
		    "{\"approval_policy\":\"on-request\",\"sandbox_policy\":{\"type\":\"workspace-write\",\"network_access\":false}}");
	json_decref(ev);
}

static void test_codex_problems(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CODEX, "codex-problems.jsonl", &s);

	(void)state;
	assert_int_equal(s.malformed, 3);
	assert_int_equal(s.unknown, 1);
	assert_non_null(strstr(s.first_problem, "codex-problems.jsonl:3: invalid JSON"));
	/* the rest is imported */
	assert_trail(ev, "call_after_bad", "tool.intent tool.dispatched tool.completed/ok");
	json_decref(ev);
}

/* ---- Claude mapping ---- */

static void test_claude_mapping(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CLAUDE, "claude-basic.jsonl", &s);
	const json_t *side = NULL, *e;
	size_t i;

	(void)state;
	assert_trail(ev, "toolu_bash_ok", "tool.intent tool.dispatched tool.completed/ok");
	assert_json(args_of(ev, "toolu_bash_ok"),
		    "{\"command\":[\"bash\",\"-c\",\"git status\"],\"cwd\":\"/home/ana/app\",\"timeout_ms\":60000}");
	assert_trail(ev, "toolu_edit_rejected",
		     "tool.intent approval.requested approval.settled/denied tool.completed/denied");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.intent", "toolu_edit_rejected"), "tool")),
			    "write_file");
	/* the result came first: the outcome follows the intent, at the intent's line */
	assert_trail(ev, "toolu_read_early", "tool.intent tool.dispatched tool.completed/ok");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(
		find(ev, "tool.completed", "toolu_read_early"), "provenance"), "line")), 9);
	assert_json(args_of(ev, "toolu_read_early"), "{\"path\":\"/home/ana/app/main.c\",\"source_tool\":\"Read\"}");
	assert_json(args_of(ev, "toolu_mcp"),
		    "{\"server\":\"chrome-devtools\",\"tool\":\"take_screenshot\",\"arguments\":{\"format\":\"png\"}}");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.completed", "toolu_mcp"), "output")),
			    "saved\n[image]");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.intent", "toolu_fetch"), "tool")), "network");
	assert_trail(ev, "toolu_fetch", "tool.intent tool.dispatched tool.completed/error");
	assert_int_equal(json_integer_value(json_object_get(find(ev, "tool.completed", "toolu_bash_fail"), "exit_code")), 2);
	/* sidechain: its own session, linked to the parent */
	json_array_foreach(ev, i, e) {
		const char *sid = json_string_value(json_object_get(e, "session"));

		if (strcmp(json_string_value(json_object_get(e, "type")), "session.opened") == 0 &&
		    strcmp(sid, "fx-claude-1/agent-a1b2c3") == 0)
			side = e;
	}
	assert_non_null(side);
	assert_string_equal(json_string_value(json_object_get(side, "parent")), "fx-claude-1");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.intent", "toolu_side_grep"), "session")),
			    "fx-claude-1/agent-a1b2c3");
	assert_json(args_of(ev, "toolu_side_grep"),
		    "{\"path\":\"/home/ana/app\",\"pattern\":\"TODO\",\"source_tool\":\"Grep\"}");
	/* a rule denial: no approval, no dispatch */
	assert_trail(ev, "toolu_side_bash", "tool.intent tool.completed/denied");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.completed", "toolu_side_bash"), "error")),
			    "denied by a permission rule");
	assert_trail(ev, "toolu_task", "tool.intent tool.dispatched tool.completed/ok");
	/* interrupted while running (exit 137): dispatched, then cancelled */
	assert_trail(ev, "toolu_sleep", "tool.intent tool.dispatched tool.completed/cancelled");
	assert_int_equal(json_integer_value(json_object_get(find(ev, "tool.completed", "toolu_sleep"), "exit_code")), 137);
	/* "[Request interrupted by user]" ends the open call; a later one stays pending */
	assert_trail(ev, "toolu_glob", "tool.intent tool.completed/cancelled");
	assert_trail(ev, "toolu_pending", "tool.intent");
	assert_int_equal(s.sessions, 2);
	assert_int_equal(s.policies, 2);  /* default, then acceptEdits */
	assert_int_equal(s.calls, 13);
	assert_int_equal(s.results, 12);
	assert_int_equal(s.malformed + s.unknown + s.orphans, 0);
	json_decref(ev);
}

static void test_claude_subagent_file(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CLAUDE, "claude-basic/subagents/agent-d4e5f6.jsonl", &s);
	const json_t *open = find(ev, "session.opened", NULL);

	(void)state;
	assert_string_equal(json_string_value(json_object_get(open, "session")), "fx-claude-1/agent-d4e5f6");
	assert_string_equal(json_string_value(json_object_get(open, "parent")), "fx-claude-1");
	assert_json(args_of(ev, "toolu_sub_search"), "{\"query\":\"example api\",\"source_tool\":\"WebSearch\"}");
	assert_trail(ev, "toolu_sub_search", "tool.intent tool.completed/denied");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.completed", "toolu_sub_search"), "error")),
			    "denied: don't ask mode");
	assert_string_equal(json_string_value(json_object_get(find(ev, "tool.completed", "toolu_sub_read"), "error")),
			    "auto-denied: prompts unavailable");
	json_decref(ev);
}

static void test_claude_bypass_rejection(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CLAUDE, "claude-bypass.jsonl", &s);

	(void)state;
	/* bypassPermissions never asks: "doesn't want to proceed" is the user
	 * pressing Esc, an interrupt, not a rejected prompt */
	assert_trail(ev, "toolu_byp", "tool.intent tool.completed/cancelled");
	assert_int_equal(s.approvals, 0);
	assert_int_equal(s.denials, 0);
	assert_int_equal(s.cancelled, 1);
	json_decref(ev);
}

static void test_claude_headless_refusals(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CLAUDE, "claude-headless.jsonl", &s);

	(void)state;
	/* claude -p refuses what would need a prompt: denied, never dispatched */
	assert_trail(ev, "toolu_hl_rm", "tool.intent tool.completed/denied");
	assert_trail(ev, "toolu_hl_write", "tool.intent tool.completed/denied");
	assert_trail(ev, "toolu_hl_git", "tool.intent tool.completed/denied");
	assert_trail(ev, "toolu_hl_curl", "tool.intent tool.completed/denied");
	/* an ordinary result still ran */
	assert_trail(ev, "toolu_hl_ok", "tool.intent tool.dispatched tool.completed/ok");
	/* ai-title, atis-latch, api-request-start, queue-operation are known */
	assert_int_equal(s.unknown, 0);
	assert_int_equal(s.malformed, 0);
	assert_int_equal(s.denials, 4);
	json_decref(ev);
}

static void test_codex_0169_lines(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CODEX, "codex-0169.jsonl", &s);

	(void)state;
	assert_int_equal(s.unknown, 0);
	assert_int_equal(s.malformed, 0);
	assert_trail(ev, "call_ls", "tool.intent tool.dispatched tool.completed/ok");
	/* a call a hook blocked leaves only its output: recorded, denied */
	assert_trail(ev, "call_blocked", "tool.intent tool.completed/denied");
	/* 0.171 names the command: the call is a shell call again */
	assert_trail(ev, "call_blocked_cmd", "tool.intent tool.completed/denied");
	assert_int_equal(s.orphans, 0);
	assert_int_equal(s.calls, 3);
	json_decref(ev);
}

static void test_codex_0171_refusals(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CODEX, "codex-0171.jsonl", &s);

	(void)state;
	assert_int_equal(s.unknown, 0);
	/* codex exec (approval never) refuses what needs approval: denied, never dispatched */
	assert_trail(ev, "call_refused", "tool.intent tool.completed/denied");
	/* the user's no, in the same wrapper */
	assert_trail(ev, "call_user_no", "tool.intent tool.completed/denied");
	/* a command that could not start is no refusal: it ran and failed */
	assert_trail(ev, "call_spawn_failed", "tool.intent tool.dispatched tool.completed/error");
	assert_int_equal(s.calls, 3);
	json_decref(ev);
}

static const char *str_of(const json_t *ev, const char *key)
{
	return json_string_value(json_object_get(ev, key));
}

static json_int_t line_of(const json_t *ev)
{
	return json_integer_value(json_object_get(json_object_get(ev, "provenance"), "line"));
}

static void test_codex_aborted_approval(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CODEX, "codex-aborted.jsonl", &s);
	const json_t *req;

	(void)state;
	/* an unanswered prompt of an interrupted turn: aborted, never approved or run */
	assert_trail(ev, "call_push", "tool.intent approval.requested approval.settled/aborted tool.completed/cancelled");
	/* the prompt line is shown: the request is stamped at it */
	req = find(ev, "approval.requested", "call_push");
	assert_string_equal(str_of(req, "time"), "2026-11-20T09:00:02.100Z");
	assert_int_equal(line_of(req), 4);
	/* no prompt line: no approval is invented either way */
	assert_trail(ev, "call_curl", "tool.intent tool.completed/cancelled");
	assert_trail(ev, "call_later", "tool.intent tool.completed/cancelled");
	/* a refusal shows only the answer: the request takes the intent's time and line */
	assert_trail(ev, "call_rm", "tool.intent approval.requested approval.settled/denied tool.completed/denied");
	req = find(ev, "approval.requested", "call_rm");
	assert_string_equal(str_of(req, "time"), str_of(find(ev, "tool.intent", "call_rm"), "time"));
	assert_int_equal(line_of(req), line_of(find(ev, "tool.intent", "call_rm")));
	assert_string_equal(str_of(find(ev, "approval.settled", "call_rm"), "time"), "2026-11-20T09:01:31.000Z");
	/* a command that failed is an error with its exit code, never ok */
	assert_trail(ev, "call_false", "tool.intent tool.dispatched tool.completed/error");
	assert_int_equal(json_integer_value(json_object_get(find(ev, "tool.completed", "call_false"), "exit_code")), 1);
	assert_int_equal(s.cancelled, 3);
	assert_int_equal(s.ok, 0);
	json_decref(ev);
}

static void test_claude_blocked_not_dispatched(void **state)
{
	docket_import_stats s;
	json_t *ev = map_fixture(DOCKET_IMPORT_CLAUDE, "claude-blocked.jsonl", &s);
	const json_t *req;

	(void)state;
	/* the headless refusal and Claude Code's own pre-run block never ran */
	assert_trail(ev, "toolu_bl_rm", "tool.intent tool.completed/denied");
	assert_trail(ev, "toolu_bl_cd", "tool.intent tool.completed/denied");
	assert_string_equal(str_of(find(ev, "tool.completed", "toolu_bl_cd"), "error"),
			    "blocked by Claude Code before it ran");
	/* a command that ran and printed the words is still a run that failed */
	assert_trail(ev, "toolu_bl_fail", "tool.intent tool.dispatched tool.completed/error");
	/* the user's no: the question's time is unknown, so the request has the intent's */
	assert_trail(ev, "toolu_bl_edit", "tool.intent approval.requested approval.settled/denied tool.completed/denied");
	req = find(ev, "approval.requested", "toolu_bl_edit");
	assert_string_equal(str_of(req, "time"), "2026-11-21T08:00:01.000Z");
	assert_int_equal(line_of(req), 2);
	assert_int_equal(s.denials, 3);
	json_decref(ev);
}

static void outcome_is(const char *response, const char *status, int ran, int has_exit, int code)
{
	docket_import_outcome o;
	json_error_t jerr;
	json_t *r = response ? json_loads(response, JSON_DECODE_ANY, &jerr) : NULL;

	if (response && !r)
		fail_msg("bad test JSON: %s", response);
	assert_int_equal(docket_import_codex_outcome(&o, r), 0);
	if (strcmp(o.status, status) != 0 || o.ran != ran || o.has_exit != has_exit ||
	    (has_exit && o.exit_code != code))
		fail_msg("%s: got %s ran %d exit %d/%d", response ? response : "(none)", o.status, o.ran,
			 o.has_exit, (int)o.exit_code);
	json_decref(r);
}

/* A live hook's tool_response gets the importer's rules (one classifier). */
static void test_codex_hook_outcomes(void **state)
{
	(void)state;
	outcome_is("\"Exit code: 0\\nOutput:\\n\"", "ok", 1, 1, 0);
	outcome_is("\"Exit code: 1\\nOutput:\\n\"", "error", 1, 1, 1);
	outcome_is("\"Process exited with code 2\\n\"", "error", 1, 1, 2);
	outcome_is("{\"exit_code\":3,\"stdout\":\"x\"}", "error", 1, 1, 3);
	outcome_is("{\"metadata\":{\"exit_code\":0},\"output\":\"x\"}", "ok", 1, 1, 0);
	outcome_is("{\"content\":[],\"isError\":true}", "error", 1, 0, 0);
	outcome_is("{\"error\":{\"code\":-32001,\"message\":\"denied\"}}", "error", 1, 0, 0);
	outcome_is("\"err: docket policy denied\"", "error", 1, 0, 0);
	outcome_is("\"exec command rejected by user\"", "denied", 0, 0, 0);
	outcome_is("\"aborted by user\"", "cancelled", 0, 0, 0);
	outcome_is("\"Aborted.\"", "cancelled", 0, 0, 0);
	/* no exit code and nothing that says it failed: the call ran */
	outcome_is("\"3 results\"", "ok", 1, 0, 0);
	/* nothing to read: ran, nothing known of its failure (never a denial) */
	outcome_is(NULL, "ok", 1, 0, 0);
	outcome_is("17", "ok", 1, 0, 0);
	/* "aborted" inside a longer text is output, not an interrupt */
	outcome_is("\"aborted by user request: retrying\\nExit code: 0\"", "ok", 1, 1, 0);
}

/* A live call's outcome from the rollout's tail (what 0.171's PostToolUse lacks). */
static void test_codex_rollout_outcome(void **state)
{
	char *dir = test_mkdtemp(), path[4096], big[4096];
	docket_import_outcome o;
	FILE *f;
	int i;

	(void)state;
	snprintf(path, sizeof(path), "%s/rollout.jsonl", dir);
	/* negative: no file, no id */
	assert_int_equal(docket_import_codex_rollout_outcome(&o, path, "call_x"), DOCKET_ENOTFOUND);
	f = fopen(path, "w");
	assert_non_null(f);
	/* more than the MiB read, so the first lines are out of reach */
	fputs("{\"type\":\"event_msg\",\"payload\":{\"type\":\"item_completed\",\"item\":{\"id\":\"call_old\",\"exit_code\":5}}}\n", f);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (i = 0; i < 300; i++)
		fprintf(f, "{\"type\":\"event_msg\",\"payload\":{\"type\":\"agent_message\",\"message\":\"%s\"}}\n", big);
	fputs("{\"type\":\"event_msg\",\"payload\":{\"type\":\"item_completed\",\"item\":{\"id\":\"call_a\",\"exit_code\":1}}}\n", f);
	fputs("{\"type\":\"event_msg\",\"payload\":{\"type\":\"item_completed\",\"item\":{\"id\":\"call_b\",\"exit_code\":0}}}\n", f);
	fputs("{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"call_b\",\"output\":\"exec command rejected by user\"}}\n", f);
	fputs("{\"type\":\"event_msg\",\"payload\":{\"type\":\"item_completed\",\"item\":{\"id\":\"call_c\",\"exit_code\":\"1\"}}}\n", f);
	fputs("{\"type\":\"event_msg\",\"payload\":{\"type\":\"item_completed\",\"item\":{\"id\":\"call_d", f);  /* half a line */
	fclose(f);
	assert_int_equal(docket_import_codex_rollout_outcome(&o, path, "call_a"), 0);
	assert_string_equal(o.status, "error");
	assert_true(o.has_exit && o.exit_code == 1 && o.ran);
	/* the output line wins over the event's exit code */
	assert_int_equal(docket_import_codex_rollout_outcome(&o, path, "call_b"), 0);
	assert_string_equal(o.status, "denied");
	assert_false(o.ran);
	/* an exit code that is no integer, a cut line, a line out of reach, an empty id: not known */
	assert_int_equal(docket_import_codex_rollout_outcome(&o, path, "call_c"), DOCKET_ENOTFOUND);
	assert_int_equal(docket_import_codex_rollout_outcome(&o, path, "call_d"), DOCKET_ENOTFOUND);
	assert_int_equal(docket_import_codex_rollout_outcome(&o, path, "call_old"), DOCKET_ENOTFOUND);
	assert_int_equal(docket_import_codex_rollout_outcome(&o, path, ""), DOCKET_ENOTFOUND);
	unlink(path);
	test_rmdir_free(dir);
}

/* Imported into a ledger, both histories are accepted as they are. */
static void test_refusals_in_ledger(void **state)
{
	char *dir = test_mkdtemp(), *a = fixture_path("codex-aborted.jsonl"), *b = fixture_path("claude-blocked.jsonl");
	docket_import_stats s;
	docket_ledger *l = new_ledger(dir);

	(void)state;
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, a, 0, &s), 0);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CLAUDE, b, 0, &s), 0);
	assert_verifies(l);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	free(a);
	free(b);
}

/* ---- into a ledger ---- */

static void test_ledger_idempotent(void **state)
{
	char *dir = test_mkdtemp(), *codex = fixture_path("codex-basic.jsonl");
	char *claude = fixture_path("claude-basic.jsonl");
	char *sub = fixture_path("claude-basic/subagents/agent-d4e5f6.jsonl");
	char *bypass = fixture_path("claude-bypass.jsonl");
	docket_ledger *l = new_ledger(dir);
	docket_import_stats s;
	uint64_t n;

	(void)state;
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, codex, 0, &s), 0);
	assert_int_equal(s.appended, s.events);
	assert_int_equal(s.appended, 31);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CLAUDE, claude, 0, &s), 0);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CLAUDE, sub, 0, &s), 0);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CLAUDE, bypass, 0, &s), 0);
	n = ledger_events(l);
	assert_verifies(l);
	/* again: nothing new, every line recognised as imported */
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, codex, 0, &s), 0);
	assert_int_equal(s.appended + s.duplicates, 0);
	assert_int_equal(s.lines_resumed, s.lines);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CLAUDE, claude, DOCKET_IMPORT_STRICT, &s), 0);
	assert_int_equal(s.appended, 0);
	assert_int_equal(ledger_events(l), n);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	free(codex);
	free(claude);
	free(sub);
	free(bypass);
}

typedef struct pend {
	char ids[8][64];
	size_t n;
} pend;

static int pend_cb(void *ctx, const docket_pending_info *info)
{
	pend *p = ctx;

	if (p->n < 8)
		snprintf(p->ids[p->n++], sizeof(p->ids[0]), "%s", info->invocation);
	return 0;
}

static void test_grown_file(void **state)
{
	char *dir = test_mkdtemp(), *g1 = fixture_path("codex-grow-1.jsonl");
	char *g2 = fixture_path("codex-grow-2.jsonl"), file[4200];
	docket_ledger *l = new_ledger(dir);
	docket_import_stats s;
	size_t len1, len2;
	char *t1 = slurp(g1, &len1), *t2 = slurp(g2, &len2);
	pend p;

	(void)state;
	snprintf(file, sizeof(file), "%s/rollout.jsonl", dir);
	spit(file, t1, len1);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, file, 0, &s), 0);
	memset(&p, 0, sizeof(p));
	assert_int_equal(docket_ledger_pending(l, NULL, pend_cb, &p), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.ids[0], "call_ok");
	/* the file grows: the pending call completes, the new one is pending */
	spit(file, t2, len2);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, file, 0, &s), 0);
	assert_int_equal(s.lines_resumed, 4);
	assert_int_equal(s.duplicates, 0);
	assert_int_equal(s.appended, 3);  /* dispatched + completed, the next intent */
	memset(&p, 0, sizeof(p));
	assert_int_equal(docket_ledger_pending(l, NULL, pend_cb, &p), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.ids[0], "call_rejected");
	/* half a line being written is left for later, then read whole */
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, file, 0, &s), 0);
	assert_int_equal(s.appended, 0);
	{
		char *longer = malloc(len2 + 32);

		assert_non_null(longer);
		memcpy(longer, t2, len2);
		memcpy(longer + len2, "{\"timestamp\":\"2025-12-01T10:0", 29);
		spit(file, longer, len2 + 29);
		assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, file, 0, &s), 0);
		assert_int_equal(s.incomplete, 1);
		assert_int_equal(s.appended, 0);
		free(longer);
	}
	/* the imported part changed: another history, refused, nothing written */
	spit(file, t2, len2 - 40);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, file, 0, &s), DOCKET_ECONFLICT);
	assert_non_null(strstr(docket_error_last()->message, "changed since it was imported"));
	assert_int_equal(s.appended, 0);
	spit(file, t2, len2);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, file, 0, &s), 0);
	assert_int_equal(s.appended, 0);
	assert_verifies(l);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	free(t1);
	free(t2);
	free(g1);
	free(g2);
}

static void test_strict_writes_nothing(void **state)
{
	char *dir = test_mkdtemp(), *bad = fixture_path("codex-problems.jsonl");
	docket_ledger *l = new_ledger(dir);
	docket_import_stats s;

	(void)state;
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, bad, DOCKET_IMPORT_STRICT, &s), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "codex-problems.jsonl:3:"));
	assert_int_equal(ledger_events(l), 0);
	/* not strict: the good lines go in, the bad ones are counted */
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, bad, 0, &s), 0);
	assert_int_equal(s.malformed, 3);
	assert_int_equal(s.unknown, 1);
	assert_true(ledger_events(l) > 0);
	assert_verifies(l);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	free(bad);
}

static void test_missing_and_unknown(void **state)
{
	char *dir = test_mkdtemp(), missing[4200];
	docket_ledger *l = new_ledger(dir);
	docket_import_stats s;
	docket_import_format f;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/nope.jsonl", dir);
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, missing, 0, &s), DOCKET_ENOTFOUND);
	assert_int_equal(import_path(l, (docket_import_format)9, missing, 0, &s), DOCKET_EINVALID);
	assert_int_equal(docket_import_format_parse(&f, "claude"), 0);
	assert_int_equal(f, DOCKET_IMPORT_CLAUDE);
	assert_int_equal(docket_import_format_parse(&f, "gemini"), DOCKET_EINVALID);
	assert_null(docket_import_format_name((docket_import_format)0));
	docket_ledger_free(l);
	test_rmdir_free(dir);
}

/* A crash after a batch committed but before its progress record was written. */
static void test_crash_between_batch_and_record(void **state)
{
	char *dir = test_mkdtemp(), *src = fixture_path("codex-basic.jsonl");
	docket_import_stats s;
	docket_ledger *l;
	int status;
	pid_t pid;

	(void)state;
	l = new_ledger(dir);
	docket_ledger_free(l);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		docket_import_options o = DOCKET_IMPORT_OPTIONS_INIT;

		o.batch_bytes = 1500;  /* several batches */
		l = new_ledger(dir);
		docket_crash_arm("append.after_commit@2");
		if (docket_import_file(l, DOCKET_IMPORT_CODEX, src, &o, &s) != 0)
			_exit(3);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	l = new_ledger(dir);
	assert_true(ledger_events(l) > 0);
	/* the re-import finds where the batch got to and completes the rest */
	assert_int_equal(import_path(l, DOCKET_IMPORT_CODEX, src, 0, &s), 0);
	assert_int_equal(ledger_events(l), 31);
	assert_verifies(l);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	free(src);
}

/* A ledger whose session fx-codex-1 never asks: the import's approval.requested is refused. */
static docket_ledger *ledger_that_refuses(const char *dir)
{
	docket_ledger *l = new_ledger(dir);
	json_t *evs[2];

	evs[0] = test_json("{\"type\":\"session.opened\",\"session\":\"fx-codex-1\",\"runtime\":\"codex/0.77.0\"}");
	evs[1] = test_json("{\"type\":\"policy.revised\",\"session\":\"fx-codex-1\",\"revision\":1,"
			   "\"format\":\"codex\",\"policy\":{\"approval_policy\":\"never\"}}");
	assert_int_equal(docket_ledger_append_json(l, evs, 2, NULL), 0);
	json_decref(evs[0]);
	json_decref(evs[1]);
	return l;
}

static void test_failed_import_rolls_back(void **state)
{
	char *dir = test_mkdtemp(), *src = fixture_path("codex-basic.jsonl");
	char *other = fixture_path("claude-basic.jsonl");
	docket_import_stats s;
	docket_ledger *l;
	int i;

	(void)state;
	l = ledger_that_refuses(dir);
	/* twice: the second import fails for the true reason, not as "changed" */
	for (i = 0; i < 2; i++) {
		int error = import_path(l, DOCKET_IMPORT_CODEX, src, 0, &s);

		assert_true(error < 0);
		assert_int_not_equal(error, DOCKET_ECONFLICT);
		if (!strstr(docket_error_last()->message, "invariant 2"))
			fail_msg("import %d: %s", i + 1, docket_error_last()->message);
		assert_int_equal(ledger_events(l), 2);  /* the whole file rolled back */
	}
	/* nor does it poison another file's import */
	assert_int_equal(import_path(l, DOCKET_IMPORT_CLAUDE, other, 0, &s), 0);
	assert_true(s.appended > 0);
	assert_verifies(l);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	free(src);
	free(other);
}

/* Killed after the progress record but before the first batch commits: no poison either. */
static void test_crash_before_first_commit(void **state)
{
	char *dir = test_mkdtemp(), *src = fixture_path("codex-basic.jsonl");
	docket_import_stats s;
	docket_ledger *l;
	int status;
	pid_t pid;

	(void)state;
	l = new_ledger(dir);
	docket_ledger_free(l);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		l = new_ledger(dir);
		docket_crash_arm("append.before_commit@1");
		if (docket_import_file(l, DOCKET_IMPORT_CODEX, src, NULL, &s) != 0)
			_exit(3);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	l = new_ledger(dir);
	assert_int_equal(ledger_events(l), 0);
	if (import_path(l, DOCKET_IMPORT_CODEX, src, 0, &s) != 0)
		fail_msg("re-import after the crash: %s", docket_error_last()->message);
	assert_int_equal(ledger_events(l), 31);
	assert_verifies(l);
	docket_ledger_free(l);
	test_rmdir_free(dir);
	free(src);
}

static void detect_text(const char *text, int want)
{
	docket_import_format f = 0;
	int error = docket_import_detect(&f, text, strlen(text));

	if (want == 0) {
		if (error != DOCKET_ENOTFOUND)
			fail_msg("detected %d in: %s", (int)f, text);
		return;
	}
	if (error != 0 || (int)f != want)
		fail_msg("wanted %d, got %d (%d) in: %s", want, (int)f, error, text);
}

static void test_detect_format(void **state)
{
	static const char *const fixtures[] = { "codex-basic.jsonl", "codex-0169.jsonl", "codex-0171.jsonl",
						"claude-basic.jsonl", "claude-headless.jsonl", "claude-bypass.jsonl" };
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		char *path = fixture_path(fixtures[i]), *text = slurp(path, &len);
		docket_import_format f = 0;

		assert_int_equal(docket_import_detect(&f, text, len), 0);
		assert_int_equal(f, fixtures[i][1] == 'o' ? DOCKET_IMPORT_CODEX : DOCKET_IMPORT_CLAUDE);
		free(text);
		free(path);
	}
	/* the oldest rollouts' bare first line; a summary line first */
	detect_text("{\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"instructions\":null}\n", DOCKET_IMPORT_CODEX);
	detect_text("\n{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}\n", DOCKET_IMPORT_CLAUDE);
	/* negative: nothing, not JSON, JSON of neither, a type without what goes with it */
	detect_text("", 0);
	detect_text("root:x:0:0:root:/root:/bin/bash\n", 0);
	detect_text("[1,2]\n\"x\"\n{\"type\":\"message\"}\n", 0);
	detect_text("{\"type\":\"response_item\"}\n{\"type\":\"user\"}\n", 0);
	/* a line both would claim decides nothing; the next one does */
	detect_text("{\"type\":\"user\",\"sessionId\":\"s\",\"payload\":{}}\n"
		    "{\"type\":\"user\",\"sessionId\":\"s\"}\n", DOCKET_IMPORT_CLAUDE);
}

static int stop_at_third(void *ctx, json_t *ev)
{
	int *n = ctx;

	json_decref(ev);
	return ++*n == 3 ? DOCKET_ECONFLICT : 0;
}

static void test_callback_error_stops(void **state)
{
	const char *text = "{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\"}}\n"
			   "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"x\",\"arguments\":\"{}\",\"call_id\":\"c1\"}}\n"
			   "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"x\",\"arguments\":\"{}\",\"call_id\":\"c2\"}}\n"
			   "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"x\",\"arguments\":\"{}\",\"call_id\":\"c3\"}}\n";
	docket_import_stats s;
	int n = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(docket_import_buffer(DOCKET_IMPORT_CODEX, "t", text, strlen(text), NULL,
					      stop_at_third, &n, &s), DOCKET_ECONFLICT);
	assert_int_equal(n, 3);
}

/* Bad ids and arguments are counted, never handed to the ledger. */
static void test_bad_ids_counted(void **state)
{
	const char *text =
		"{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\\u0001\"}}\n"
		"{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\"}}\n"
		"{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"not json\",\"call_id\":\"c1\"}}\n"
		"{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"x\",\"arguments\":\"{}\",\"call_id\":\"c1\"}}\n"
		"{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"nobody\",\"output\":\"x\"}}\n"
		"{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"x\"}}\n"
		"{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"y\"}}\n";
	json_t *ev = json_array();
	docket_import_stats s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(docket_import_buffer(DOCKET_IMPORT_CODEX, "t", text, strlen(text), NULL,
					      collect, ev, &s), 0);
	assert_int_equal(s.malformed, 2);   /* control character in the id; c1 twice */
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.orphans, 2);     /* "nobody" never came; a second output for c1 */
	assert_json(args_of(ev, "c1"), "{\"arguments\":\"not json\"}");
	json_decref(ev);
}

static int keep(void *ctx, json_t *ev)
{
	(void)ctx;
	json_decref(ev);
	return 0;
}

static void test_allocation_failures(void **state)
{
	static const char *const files[] = { "codex-basic.jsonl", "claude-basic.jsonl" };
	static const docket_import_format fmts[] = { DOCKET_IMPORT_CODEX, DOCKET_IMPORT_CLAUDE };
	size_t f;

	(void)state;
	for (f = 0; f < 2; f++) {
		char *path = fixture_path(files[f]);
		size_t len;
		char *text = slurp(path, &len);
		long n;
		int done = 0;

		for (n = 0; !done && n < 100000; n += 7) {
			docket_import_stats s;
			long before = docket_alloc_failures();
			int rc;

			memset(&s, 0, sizeof(s));
			docket_alloc_fail_after(n);
			rc = docket_import_buffer(fmts[f], files[f], text, len, NULL, keep, NULL, &s);
			docket_alloc_fail_reset();
			/* a failure may surface as ENOMEM or as a line jansson could not parse */
			assert_true(rc == 0 || rc == DOCKET_ENOMEM);
			done = rc == 0 && s.malformed == 0 && docket_alloc_failures() == before;
		}
		assert_true(done);
		free(text);
		free(path);
	}
}

/*
 * Every allocation failing in turn over lines whose long numbers and bare
 * words make jansson's lexer grow its token buffer: jansson asserted
 * (abort) when that growth failed; now every refused allocation surfaces
 * as DOCKET_ENOMEM, the import never aborts and never miscounts a line.
 */
static void test_allocation_failures_in_lexer(void **state)
{
	static const char codex[] =
		"{\"timestamp\":\"2025-12-01T10:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\",\"cwd\":\"/w\",\"n\":1234567890123456789}}\n"
		"{\"timestamp\":\"2025-12-01T10:00:03.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":[\\\"ls\\\"],\\\"timeout\\\":0.30000000000000004441}\",\"call_id\":\"c1\"}}\n"
		"{\"timestamp\":\"2025-12-01T10:00:04.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"{\\\"output\\\":\\\"ok\\\",\\\"metadata\\\":{\\\"exit_code\\\":0,\\\"duration_seconds\\\":12345678901234567.5}}\"}}\n"
		"{\"type\":\"x\",\"v\":truefalsetruefalsetrue}\n";
	docket_import_stats clean;
	long n;
	int done = 0, nomem = 0;

	(void)state;
	memset(&clean, 0, sizeof(clean));
	assert_int_equal(docket_import_buffer(DOCKET_IMPORT_CODEX, "t", codex, strlen(codex), NULL, keep, NULL,
					      &clean), 0);
	assert_int_equal(clean.calls, 1);
	for (n = 0; !done && n < 100000; n++) {
		docket_import_stats s;
		int rc;

		memset(&s, 0, sizeof(s));
		docket_alloc_fail_after(n);
		rc = docket_import_buffer(DOCKET_IMPORT_CODEX, "t", codex, strlen(codex), NULL, keep, NULL, &s);
		docket_alloc_fail_reset();
		if (docket_alloc_failures() > 0) {
			assert_int_equal(rc, DOCKET_ENOMEM);
			nomem++;
		} else {
			/* the first run that ran out of nothing counts what a clean run does */
			assert_int_equal(rc, 0);
			assert_int_equal(s.malformed, clean.malformed);
			assert_int_equal(s.calls, clean.calls);
			done = 1;
		}
	}
	assert_true(done);
	assert_true(nomem > 10);
}

/* ---- text parsers (importers/tools.c) ---- */

static void test_parsers(void **state)
{
	json_int_t code = 0;
	json_t *a;

	(void)state;
	assert_true(imp_exit_code("Exit code: 3\n", 13, &code));
	assert_int_equal(code, 3);
	assert_true(imp_exit_code("Exit code -1\n", 13, &code));
	assert_int_equal(code, -1);
	assert_false(imp_exit_code("Exit code: x", 12, &code));
	assert_false(imp_exit_code("Exit code: ", 11, &code));
	assert_false(imp_exit_code(NULL, 0, &code));
	assert_int_equal(imp_wall_ms("Wall time: 1.2345 seconds", 25), 1234);
	assert_int_equal(imp_wall_ms("Wall time: 2 seconds", 20), 2000);
	assert_int_equal(imp_wall_ms("Wall time: .5", 13), -1);
	assert_int_equal(imp_wall_ms("no time", 7), -1);
	assert_int_equal(imp_major_version("0.116.0"), 0);
	assert_int_equal(imp_major_version("2.1.97"), 2);
	assert_int_equal(imp_major_version("v1"), -1);
	assert_string_equal(imp_platform_of("C:\\Users\\a"), "windows");
	assert_string_equal(imp_platform_of("/Users/a"), "macos");
	assert_string_equal(imp_platform_of("/home/a"), "linux");
	assert_null(imp_platform_of("/opt/x"));
	assert_null(imp_platform_of(NULL));
	assert_null(imp_mcp_args("mcp__", NULL));
	assert_null(imp_mcp_args("mcp__srv__", NULL));
	assert_null(imp_mcp_args("mcp____tool", NULL));
	assert_null(imp_mcp_args("shell", NULL));
	a = imp_patch_args("no patch here\n*** Move to: orphan\n*** Add File:   \n");
	assert_json(a, "{\"changes\":[]}");
	json_decref(a);
	a = imp_patch_args("*** Update File: a b.c\r\n*** Add File: x\n");
	assert_json(a, "{\"changes\":[{\"path\":\"a b.c\",\"op\":\"update\"},{\"path\":\"x\",\"op\":\"add\"}]}");
	json_decref(a);
}

static void test_map_growth(void **state)
{
	imp_map m;
	char key[32];
	size_t i, v;

	(void)state;
	memset(&m, 0, sizeof(m));
	assert_false(imp_map_get(&m, "x", &v));
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "call_%zu", i);
		assert_int_equal(imp_map_put(&m, key, i), 0);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "call_%zu", i);
		assert_true(imp_map_get(&m, key, &v));
		assert_int_equal(v, i);
	}
	assert_false(imp_map_get(&m, "call_5000", &v));
	imp_map_dispose(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codex_mapping),
		cmocka_unit_test(test_codex_policy_revisions),
		cmocka_unit_test(test_codex_problems),
		cmocka_unit_test(test_claude_mapping),
		cmocka_unit_test(test_claude_subagent_file),
		cmocka_unit_test(test_claude_bypass_rejection),
		cmocka_unit_test(test_claude_headless_refusals),
		cmocka_unit_test(test_codex_0169_lines),
		cmocka_unit_test(test_codex_0171_refusals),
		cmocka_unit_test(test_codex_aborted_approval),
		cmocka_unit_test(test_claude_blocked_not_dispatched),
		cmocka_unit_test(test_refusals_in_ledger),
		cmocka_unit_test(test_codex_hook_outcomes),
		cmocka_unit_test(test_codex_rollout_outcome),
		cmocka_unit_test(test_ledger_idempotent),
		cmocka_unit_test(test_grown_file),
		cmocka_unit_test(test_strict_writes_nothing),
		cmocka_unit_test(test_missing_and_unknown),
		cmocka_unit_test(test_crash_between_batch_and_record),
		cmocka_unit_test(test_failed_import_rolls_back),
		cmocka_unit_test(test_crash_before_first_commit),
		cmocka_unit_test(test_detect_format),
		cmocka_unit_test(test_callback_error_stops),
		cmocka_unit_test(test_bad_ids_counted),
		cmocka_unit_test(test_allocation_failures),
		cmocka_unit_test(test_allocation_failures_in_lexer),
		cmocka_unit_test(test_parsers),
		cmocka_unit_test(test_map_growth),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
