/* SPDX-License-Identifier: Apache-2.0 */
/* test_event.c: the event codec (ledger/event.c), JSON <-> docket.v1.Event. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/event.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

/* One event of every type with every field populated, keys in canonical order. */
static const char *const full_events[] = {
	"{\"type\":\"runtime.started\",\"time\":\"2025-11-17T15:30:28Z\",\"epoch\":3,"
	"\"turn\":\"t0\",\"runtime\":\"maka/0.9\","
	"\"provenance\":{\"file\":\"rollout.jsonl\",\"line\":1}}",

	"{\"type\":\"session.opened\",\"time\":\"2025-11-17T15:30:28.123456Z\",\"epoch\":1,"
	"\"session\":\"s1\",\"turn\":\"turn-1\",\"runtime\":\"codex/0.60.1\",\"platform\":\"linux\","
	"\"cwd\":\"/home/u/app\",\"workspace_roots\":[\"/home/u/app\",\"/tmp/x\"],"
	"\"env\":{\"TMPDIR\":\"/tmp\",\"A\":\"\",\"LANG\":\"C.UTF-8\"},\"parent\":\"s0\","
	"\"labels\":{\"branch\":\"main\",\"title\":\"fix tests\"},"
	"\"provenance\":{\"file\":\"\",\"line\":0}}",

	"{\"type\":\"policy.revised\",\"time\":\"2025-11-17T15:30:29Z\",\"epoch\":1,"
	"\"session\":\"s1\",\"turn\":\"t\",\"revision\":2,\"format\":\"docket\","
	"\"policy\":{\"sandbox\":\"workspace_write\",\"rules\":[{\"prefix\":[\"git\",\"status\"],"
	"\"decision\":\"allow\"}],\"n\":1.5,\"neg\":-7,\"ok\":true,\"none\":null},"
	"\"actor\":\"user:ana\",\"reason\":\"initial\","
	"\"provenance\":{\"file\":\"p.yaml\",\"line\":42}}",

	"{\"type\":\"tool.intent\",\"time\":\"2025-11-17T15:30:30.5Z\",\"epoch\":2,"
	"\"session\":\"s1\",\"invocation\":\"call_1\",\"turn\":\"turn-1\",\"tool\":\"shell\","
	"\"args\":{\"command\":[\"bash\",\"-lc\",\"git status && npm test\"],\"cwd\":\"/home/u/app\","
	"\"timeout_ms\":1000,\"nested\":{\"a\":[],\"b\":{}}},"
	"\"recovery\":\"replay_safe\",\"decision\":{\"verdict\":\"allowed\",\"source\":\"runtime\","
	"\"reasons\":[\"known_safe\",\"prefix_rule\"],\"rules\":[\"r1\"],\"policy_revision\":2},"
	"\"provenance\":{\"file\":\"f\",\"line\":9}}",

	"{\"type\":\"approval.requested\",\"time\":\"2025-11-17T15:30:31Z\",\"epoch\":2,"
	"\"session\":\"s1\",\"invocation\":\"call_2\",\"turn\":\"turn-2\",\"request\":\"r1\","
	"\"reviewer\":\"auto_review\",\"prompt\":\"Allow npm install?\","
	"\"risk\":{\"level\":\"high\",\"category\":\"network\",\"summary\":\"downloads code\"},"
	"\"scope\":[\"npm install\",\"/home/u/app\"],\"provenance\":{\"file\":\"f\",\"line\":10}}",

	"{\"type\":\"approval.settled\",\"time\":\"2025-11-17T15:30:32Z\",\"epoch\":2,"
	"\"session\":\"s1\",\"invocation\":\"call_2\",\"turn\":\"turn-2\",\"request\":\"r1\","
	"\"result\":\"superseded\",\"actor\":\"docket\",\"reason\":\"policy revised\","
	"\"decision\":{\"verdict\":\"denied\",\"source\":\"docket\",\"reasons\":[\"deny_rule\"],"
	"\"rules\":[\"net.deny\"],\"policy_revision\":3},\"provenance\":{\"file\":\"f\",\"line\":11}}",

	"{\"type\":\"tool.dispatched\",\"time\":\"2025-11-17T15:30:33Z\",\"epoch\":2,"
	"\"session\":\"s1\",\"invocation\":\"call_1\",\"turn\":\"turn-1\",\"attempt\":2,"
	"\"token\":\"tok-abc\",\"provenance\":{\"file\":\"f\",\"line\":12}}",

	"{\"type\":\"tool.completed\",\"time\":\"2025-11-17T15:30:34Z\",\"epoch\":2,"
	"\"session\":\"s1\",\"invocation\":\"call_1\",\"turn\":\"turn-1\",\"status\":\"error\","
	"\"exit_code\":-2,\"output\":\"line1\\nline2\\t\\u00e9\",\"duration_ms\":41,"
	"\"error\":\"exit status 254\",\"provenance\":{\"file\":\"f\",\"line\":13}}",

	"{\"type\":\"session.closed\",\"time\":\"2025-11-17T15:30:35Z\",\"epoch\":2,"
	"\"session\":\"s1\",\"turn\":\"turn-9\",\"reason\":\"user exit\","
	"\"provenance\":{\"file\":\"f\",\"line\":14}}",

	"{\"type\":\"recovery.action\",\"time\":\"2025-11-17T15:30:36Z\",\"epoch\":4,"
	"\"session\":\"s1\",\"invocation\":\"call_3\",\"turn\":\"turn-3\",\"action\":\"park\","
	"\"detail\":\"executor could not tell\",\"provenance\":{\"file\":\"f\",\"line\":15}}",
};

#define N_FULL (sizeof(full_events) / sizeof(full_events[0]))

static json_t *parse(const char *text)
{
	json_t *v = NULL;

	if (docket_json_parse(&v, text, strlen(text)) < 0)
		fail_msg("bad test JSON (%s): %s", docket_error_last()->message, text);
	return v;
}

static char *dump(const json_t *v)
{
	docket_buf b = DOCKET_BUF_INIT;

	assert_int_equal(docket_json_dump(&b, v), 0);
	return b.ptr;
}

/* from_json must succeed; returns the event. */
static docket_event *must_parse(const char *text)
{
	json_t *in = parse(text);
	docket_event *ev = NULL;
	int rc = docket_event_from_json(&ev, in);

	if (rc != 0)
		fail_msg("from_json(%s) = %d: %s", text, rc, docket_error_last()->message);
	json_decref(in);
	return ev;
}

/* to_json(from_json(in)) must serialise exactly as `expected` (same key order). */
static void assert_roundtrip_to(const char *in_text, const char *expected)
{
	docket_event *ev = must_parse(in_text);
	json_t *out = NULL, *want = parse(expected);
	char *got, *want_text;

	assert_int_equal(docket_event_to_json(&out, ev), 0);
	got = dump(out);
	want_text = dump(want);
	if (!json_equal(out, want))
		fail_msg("round trip differs:\n in:   %s\n got:  %s\n want: %s", in_text, got, expected);
	/* canonical key order: compact dumps are byte-identical */
	if (strcmp(got, want_text) != 0)
		fail_msg("key order differs:\n got:  %s\n want: %s", got, want_text);
	docket_free(got);
	docket_free(want_text);
	json_decref(out);
	json_decref(want);
	docket_event_free(ev);
}

static void assert_roundtrip(const char *text)
{
	assert_roundtrip_to(text, text);
}

/* from_json must fail with EINVALID and a message containing `needle`. */
static void assert_rejects(const char *text, const char *needle)
{
	json_t *in = parse(text);
	docket_event *ev = (docket_event *)&ev; /* poison: must be reset to NULL */
	int rc = docket_event_from_json(&ev, in);

	if (rc != DOCKET_EINVALID)
		fail_msg("from_json(%s) = %d, want EINVALID", text, rc);
	assert_null(ev);
	if (!strstr(docket_error_last()->message, needle))
		fail_msg("message \"%s\" lacks \"%s\" (input %s)", docket_error_last()->message,
			 needle, text);
	json_decref(in);
}

static void assert_rejects_json(json_t *in, const char *needle)
{
	docket_event *ev = NULL;
	int rc = docket_event_from_json(&ev, in);

	if (rc != DOCKET_EINVALID)
		fail_msg("from_json = %d, want EINVALID (%s)", rc, needle);
	assert_null(ev);
	if (!strstr(docket_error_last()->message, needle))
		fail_msg("message \"%s\" lacks \"%s\"", docket_error_last()->message, needle);
	json_decref(in);
}

/* ---- positive ---- */

static void test_roundtrip_full(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FULL; i++)
		assert_roundtrip(full_events[i]);
}

static void test_roundtrip_minimal(void **state)
{
	static const char *const minimal[] = {
		"{\"type\":\"runtime.started\",\"runtime\":\"r\"}",
		"{\"type\":\"session.opened\",\"session\":\"s\"}",
		"{\"type\":\"policy.revised\",\"session\":\"s\",\"revision\":1,\"format\":\"opaque\",\"policy\":\"text\"}",
		"{\"type\":\"policy.revised\",\"session\":\"s\",\"revision\":1,\"format\":\"codex\",\"policy\":{}}",
		"{\"type\":\"policy.revised\",\"session\":\"s\",\"revision\":1,\"format\":\"claude\",\"policy\":[]}",
		"{\"type\":\"policy.revised\",\"session\":\"s\",\"revision\":4294967295,\"format\":\"docket\",\"policy\":0}",
		"{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"read_file\"}",
		"{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\",\"decision\":{\"verdict\":\"unsupported\"}}",
		"{\"type\":\"approval.requested\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\"}",
		"{\"type\":\"approval.requested\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\",\"risk\":{}}",
		"{\"type\":\"approval.settled\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\",\"result\":\"approved\"}",
		"{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"i\"}",
		"{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\"}",
		"{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\",\"exit_code\":0,\"duration_ms\":0}",
		"{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\",\"exit_code\":-9223372036854775808,\"duration_ms\":9223372036854775807}",
		"{\"type\":\"session.closed\",\"session\":\"s\"}",
		"{\"type\":\"recovery.action\",\"session\":\"s\",\"invocation\":\"i\",\"action\":\"evaluate\"}",
		"{\"type\":\"runtime.started\",\"epoch\":9223372036854775807,\"runtime\":\"r\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(minimal) / sizeof(minimal[0]); i++)
		assert_roundtrip(minimal[i]);
}

/* The documented exceptions: explicitly empty optional values are dropped. */
static void test_roundtrip_empty_optionals(void **state)
{
	(void)state;
	assert_roundtrip_to(
		"{\"type\":\"session.opened\",\"session\":\"s\",\"runtime\":\"\",\"cwd\":\"\","
		"\"workspace_roots\":[],\"env\":{},\"labels\":{}}",
		"{\"type\":\"session.opened\",\"session\":\"s\"}");
	assert_roundtrip_to(
		"{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\",\"args\":{},"
		"\"decision\":{\"verdict\":\"denied\",\"source\":\"\",\"reasons\":[],\"rules\":[],\"policy_revision\":0}}",
		"{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\","
		"\"decision\":{\"verdict\":\"denied\"}}");
	assert_roundtrip_to(
		"{\"type\":\"approval.requested\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\","
		"\"prompt\":\"\",\"risk\":{\"level\":\"\"},\"scope\":[]}",
		"{\"type\":\"approval.requested\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\",\"risk\":{}}");
	assert_roundtrip_to(
		"{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\",\"output\":\"\",\"error\":\"\"}",
		"{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\"}");
	/* keys given out of order come back in canonical order */
	assert_roundtrip_to(
		"{\"tool\":\"t\",\"invocation\":\"i\",\"session\":\"s\",\"type\":\"tool.intent\",\"time\":\"2025-01-01T00:00:00Z\"}",
		"{\"type\":\"tool.intent\",\"time\":\"2025-01-01T00:00:00Z\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\"}");
	/* strings in arrays and maps keep empty members */
	assert_roundtrip("{\"type\":\"session.opened\",\"session\":\"s\",\"workspace_roots\":[\"\"],\"env\":{\"\":\"\"}}");
}

static void test_fields_in_memory(void **state)
{
	docket_event *ev;

	(void)state;
	ev = must_parse(full_events[3]);
	assert_int_equal(ev->body_case, DOCKET__V1__EVENT__BODY_TOOL_INTENT);
	assert_string_equal(docket_event_type(ev), "tool.intent");
	assert_string_equal(ev->session, "s1");
	assert_string_equal(ev->invocation, "call_1");
	assert_int_equal(ev->epoch, 2);
	assert_string_equal(ev->tool_intent->tool, "shell");
	assert_string_equal(ev->tool_intent->args_json,
			    "{\"command\":[\"bash\",\"-lc\",\"git status && npm test\"],"
			    "\"cwd\":\"/home/u/app\",\"timeout_ms\":1000,\"nested\":{\"a\":[],\"b\":{}}}");
	assert_int_equal(ev->tool_intent->recovery, DOCKET__V1__RECOVERY_MODE__RECOVERY_MODE_REPLAY_SAFE);
	assert_int_equal(ev->tool_intent->decision->verdict, DOCKET__V1__VERDICT__VERDICT_ALLOWED);
	assert_int_equal(ev->tool_intent->decision->n_reasons, 2);
	assert_string_equal(ev->tool_intent->decision->reasons[1], "prefix_rule");
	assert_int_equal(ev->tool_intent->decision->policy_revision, 2);
	assert_int_equal(ev->provenance->line, 9);
	docket_event_free(ev);

	/* absent args are stored as "{}", absent decision stays NULL */
	ev = must_parse("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\"}");
	assert_string_equal(ev->tool_intent->args_json, "{}");
	assert_null(ev->tool_intent->decision);
	assert_int_equal(ev->tool_intent->recovery, 0);
	assert_string_equal(ev->time, "");
	docket_event_free(ev);

	ev = must_parse(full_events[1]);
	assert_int_equal(ev->session_opened->n_env, 3);
	assert_string_equal(ev->session_opened->env[0]->key, "TMPDIR");
	assert_string_equal(ev->session_opened->env[1]->key, "A");
	assert_string_equal(ev->session_opened->env[1]->value, "");
	assert_string_equal(ev->session_opened->env[2]->value, "C.UTF-8");
	assert_int_equal(ev->session_opened->platform, DOCKET__V1__PLATFORM__PLATFORM_LINUX);
	docket_event_free(ev);

	ev = must_parse(full_events[7]);
	assert_true(ev->tool_completed->exit_code_set);
	assert_int_equal(ev->tool_completed->exit_code, -2);
	assert_true(ev->tool_completed->duration_ms_set);
	assert_int_equal(ev->tool_completed->duration_ms, 41);
	docket_event_free(ev);

	ev = must_parse("{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\"}");
	assert_false(ev->tool_completed->exit_code_set);
	assert_false(ev->tool_completed->duration_ms_set);
	docket_event_free(ev);

	ev = must_parse("{\"type\":\"approval.requested\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\",\"reviewer\":\"user\"}");
	assert_string_equal(ev->approval_requested->reviewer, "user");
	docket_event_free(ev);
}

/* Every enum value parses to its proto value and serialises back. */
static void check_enum(const char *pre, const char *post, const char *const *names, size_t n,
		       int enum_count,
		       const char *(*name_fn)(int), int (*value_of)(const docket_event *))
{
	for (size_t i = 1; i < n; i++) {
		char text[512];
		docket_event *ev;

		snprintf(text, sizeof(text), "%s%s%s", pre, names[i], post);
		assert_roundtrip(text);
		ev = must_parse(text);
		assert_int_equal(value_of(ev), (int)i);
		assert_string_equal(name_fn((int)i), names[i]);
		docket_event_free(ev);
	}
	assert_null(name_fn(enum_count));
	assert_null(name_fn(-1));
	assert_string_equal(name_fn(0), "unspecified");
}

static const char *verdict_fn(int v) { return docket_verdict_name((Docket__V1__Verdict)v); }
static const char *result_fn(int v) { return docket_approval_result_name((Docket__V1__ApprovalResult)v); }
static const char *status_fn(int v) { return docket_outcome_status_name((Docket__V1__OutcomeStatus)v); }
static const char *mode_fn(int v) { return docket_recovery_mode_name((Docket__V1__RecoveryMode)v); }
static const char *format_fn(int v) { return docket_policy_format_name((Docket__V1__PolicyFormat)v); }
static const char *platform_fn(int v) { return docket_platform_name((Docket__V1__Platform)v); }
static const char *action_fn(int v) { return docket_recovery_action_name((Docket__V1__RecoveryActionKind)v); }

static int verdict_of(const docket_event *ev) { return (int)ev->tool_intent->decision->verdict; }
static int result_of(const docket_event *ev) { return (int)ev->approval_settled->result; }
static int status_of(const docket_event *ev) { return (int)ev->tool_completed->status; }
static int mode_of(const docket_event *ev) { return (int)ev->tool_intent->recovery; }
static int format_of(const docket_event *ev) { return (int)ev->policy_revised->format; }
static int platform_of(const docket_event *ev) { return (int)ev->session_opened->platform; }
static int action_of(const docket_event *ev) { return (int)ev->recovery_action->action; }

static void test_enums(void **state)
{
	static const char *const verdicts[] = { NULL, "allowed", "approval_required", "denied", "unsupported" };
	static const char *const results[] = { NULL, "approved", "approved_for_session", "denied",
		"aborted", "expired", "closed" }; /* superseded below: needs a decision */
	static const char *const statuses[] = { NULL, "ok", "error", "timeout", "cancelled", "denied",
		"unsupported", "indeterminate" };
	static const char *const modes[] = { NULL, "replay_safe", "idempotent", "reconcile", "never_auto_retry" };
	static const char *const formats[] = { NULL, "docket", "codex", "claude", "opaque" };
	static const char *const platforms[] = { NULL, "linux", "macos", "windows" };
	static const char *const actions[] = { NULL, "evaluate", "reprompt", "close", "dispatch",
		"redispatch", "reconcile", "park", "indeterminate" };
	docket_event *ev;

	(void)state;
	check_enum("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\","
		   "\"decision\":{\"verdict\":\"", "\"}}", verdicts, 5, 5, verdict_fn, verdict_of);
	check_enum("{\"type\":\"approval.settled\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\","
		   "\"result\":\"", "\"}", results, 7, 8, result_fn, result_of);
	assert_string_equal(docket_approval_result_name(DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_SUPERSEDED),
			    "superseded");
	assert_null(docket_approval_result_name((Docket__V1__ApprovalResult)8));
	check_enum("{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"", "\"}",
		   statuses, 8, 8, status_fn, status_of);
	check_enum("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\","
		   "\"recovery\":\"", "\"}", modes, 5, 5, mode_fn, mode_of);
	check_enum("{\"type\":\"policy.revised\",\"session\":\"s\",\"revision\":1,\"format\":\"", "\",\"policy\":{}}",
		   formats, 5, 5, format_fn, format_of);
	check_enum("{\"type\":\"session.opened\",\"session\":\"s\",\"platform\":\"", "\"}",
		   platforms, 4, 4, platform_fn, platform_of);
	check_enum("{\"type\":\"recovery.action\",\"session\":\"s\",\"invocation\":\"i\",\"action\":\"", "\"}",
		   actions, 9, 9, action_fn, action_of);

	ev = must_parse(full_events[5]);
	assert_int_equal(ev->approval_settled->result, DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_SUPERSEDED);
	assert_int_equal(ev->approval_settled->decision->verdict, DOCKET__V1__VERDICT__VERDICT_DENIED);
	docket_event_free(ev);
}

static void test_event_type_names(void **state)
{
	static const char *const types[] = {
		"runtime.started", "session.opened", "policy.revised", "tool.intent",
		"approval.requested", "approval.settled", "tool.dispatched", "tool.completed",
		"session.closed", "recovery.action",
	};
	docket_event empty = DOCKET__V1__EVENT__INIT;

	(void)state;
	for (size_t i = 0; i < N_FULL; i++) {
		docket_event *ev = must_parse(full_events[i]);

		assert_string_equal(docket_event_type(ev), types[i]);
		docket_event_free(ev);
	}
	assert_string_equal(docket_event_type(&empty), "unknown");
	assert_string_equal(docket_event_type(NULL), "unknown");
	docket_event_free(NULL);
}

static void test_time_valid(void **state)
{
	static const char *const good[] = {
		"2025-11-17T15:30:28Z", "2025-11-17T15:30:28.1Z", "2025-11-17T15:30:28.123456789Z",
		"2024-02-29T00:00:00Z", "2000-02-29T23:59:60Z", "0001-01-01T00:00:00Z",
		"9999-12-31T23:59:59.999Z",
	};
	static const char *const bad[] = {
		"", "2025", "2025-11-17", "2025-11-17T15:30:28", "2025-11-17T15:30:28+00:00",
		"2025-11-17T15:30:28z", "2025-11-17t15:30:28Z", "2025-11-17 15:30:28Z",
		"2025-13-17T15:30:28Z", "2025-00-17T15:30:28Z", "2025-11-00T15:30:28Z",
		"2025-11-32T15:30:28Z", "2025-02-29T15:30:28Z", "1900-02-29T00:00:00Z",
		"2025-04-31T00:00:00Z", "2025-11-17T24:00:00Z", "2025-11-17T15:60:28Z",
		"2025-11-17T15:30:61Z", "2025-11-17T15:30:28.Z", "2025-11-17T15:30:28.1234567890Z",
		"2025-11-17T15:30:28ZZ", "2025-11-17T15:30:28Z ", " 2025-11-17T15:30:28Z",
		"+025-11-17T15:30:28Z", "2025-1-17T15:30:28Z", "2025-11-17T15:30:2aZ",
		"2025-11-17T15:30:28.12a4Z", "2025/11/17T15:30:28Z",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!docket_time_valid(good[i]))
			fail_msg("rejected %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (docket_time_valid(bad[i]))
			fail_msg("accepted \"%s\"", bad[i]);
	assert_false(docket_time_valid(NULL));
}

/* ---- negative twins ---- */

#define INTENT "\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"t\""
#define SETTLE "\"type\":\"approval.settled\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\""
#define DONE "\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"ok\""
#define ASK "\"type\":\"approval.requested\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"r\""
#define OPEN "\"type\":\"session.opened\",\"session\":\"s\""
#define POLICY "\"type\":\"policy.revised\",\"session\":\"s\""

static void test_reject_structure(void **state)
{
	json_t *arr;

	(void)state;
	arr = parse("[1]");
	assert_rejects_json(arr, "expected object, got array");
	assert_rejects("{}", "missing required field \"type\"");
	assert_rejects("{\"type\":7}", "field \"type\": expected string, got integer");
	assert_rejects("{\"type\":\"tool.intended\"}", "unknown event type \"tool.intended\"");
	assert_rejects("{\"type\":\"\"}", "unknown event type");
	/* unknown fields, top level and nested */
	assert_rejects("{\"type\":\"session.opened\",\"sesion\":\"s\"}", "unknown field \"sesion\"");
	assert_rejects("{" INTENT ",\"runtime\":\"r\"}", "tool.intent: unknown field \"runtime\"");
	assert_rejects("{" INTENT ",\"seq\":1}", "unknown field \"seq\"");
	assert_rejects("{" INTENT ",\"decision\":{\"verdict\":\"allowed\",\"why\":1}}",
		       "unknown field \"decision.why\"");
	assert_rejects("{" ASK ",\"risk\":{\"level\":\"x\",\"severity\":\"y\"}}",
		       "unknown field \"risk.severity\"");
	assert_rejects("{" OPEN ",\"provenance\":{\"file\":\"f\",\"line\":1,\"col\":2}}",
		       "unknown field \"provenance.col\"");
	assert_rejects("{" OPEN ",\"\\u0001bad\":1}", "unknown field \"?bad\"");
}

/* Messages quote outside text truncated, without splitting a UTF-8 character. */
static void test_error_message_utf8(void **state)
{
	char text[512];
	size_t o = 0;
	json_t *msg;

	(void)state;
	o += (size_t)snprintf(text, sizeof(text), "{" INTENT ",\"recovery\":\"a");
	for (int i = 0; i < 60; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\\u00e9");
	snprintf(text + o, sizeof(text) - o, "\"}");
	assert_rejects(text, "...\" (expected replay_safe");
	msg = json_string(docket_error_last()->message);
	assert_non_null(msg); /* NULL if the message were not valid UTF-8 */
	json_decref(msg);
	assert_rejects(text, "unknown value \"a\xc3\xa9");
}

static void test_reject_required_forbidden(void **state)
{
	(void)state;
	/* missing required */
	assert_rejects("{\"type\":\"tool.intent\",\"session\":\"s\",\"tool\":\"t\"}",
		       "missing required field \"invocation\"");
	assert_rejects("{\"type\":\"tool.intent\",\"invocation\":\"i\",\"tool\":\"t\"}",
		       "missing required field \"session\"");
	assert_rejects("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\"}",
		       "missing required field \"tool\"");
	assert_rejects("{\"type\":\"runtime.started\"}", "missing required field \"runtime\"");
	assert_rejects("{" POLICY ",\"format\":\"docket\",\"policy\":{}}", "missing required field \"revision\"");
	assert_rejects("{" POLICY ",\"revision\":1,\"policy\":{}}", "missing required field \"format\"");
	assert_rejects("{" POLICY ",\"revision\":1,\"format\":\"docket\"}", "missing required field \"policy\"");
	assert_rejects("{\"type\":\"approval.requested\",\"session\":\"s\",\"invocation\":\"i\"}",
		       "missing required field \"request\"");
	assert_rejects("{" SETTLE "}", "missing required field \"result\"");
	assert_rejects("{" SETTLE ",\"result\":\"superseded\"}", "missing required field \"decision\"");
	assert_rejects("{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\"}",
		       "missing required field \"status\"");
	assert_rejects("{\"type\":\"recovery.action\",\"session\":\"s\",\"invocation\":\"i\"}",
		       "missing required field \"action\"");
	assert_rejects("{" INTENT ",\"decision\":{\"source\":\"runtime\"}}",
		       "missing required field \"decision.verdict\"");
	assert_rejects("{" OPEN ",\"provenance\":{\"file\":\"f\"}}",
		       "missing required field \"provenance.line\"");
	assert_rejects("{" OPEN ",\"provenance\":{\"line\":1}}",
		       "missing required field \"provenance.file\"");
	assert_rejects("{\"type\":\"session.closed\"}", "missing required field \"session\"");
	assert_rejects("{\"type\":\"tool.dispatched\",\"session\":\"s\"}", "missing required field \"invocation\"");
	/* forbidden */
	assert_rejects("{\"type\":\"runtime.started\",\"session\":\"s\",\"runtime\":\"r\"}",
		       "field \"session\": not allowed on runtime.started");
	assert_rejects("{\"type\":\"runtime.started\",\"invocation\":\"i\",\"runtime\":\"r\"}",
		       "field \"invocation\": not allowed on runtime.started");
	assert_rejects("{" OPEN ",\"invocation\":\"i\"}", "field \"invocation\": not allowed on session.opened");
	assert_rejects("{" POLICY ",\"invocation\":\"i\",\"revision\":1,\"format\":\"docket\",\"policy\":{}}",
		       "not allowed on policy.revised");
	assert_rejects("{\"type\":\"session.closed\",\"session\":\"s\",\"invocation\":\"i\"}",
		       "not allowed on session.closed");
	assert_rejects("{" SETTLE ",\"result\":\"approved\",\"decision\":{\"verdict\":\"allowed\"}}",
		       "field \"decision\": not allowed with result \"approved\"");
	assert_rejects("{" SETTLE ",\"result\":\"denied\",\"decision\":{\"verdict\":\"denied\"}}",
		       "not allowed with result \"denied\"");
}

static void test_reject_types(void **state)
{
	(void)state;
	assert_rejects("{" INTENT ",\"args\":\"ls\"}", "field \"args\": expected object, got string");
	assert_rejects("{" INTENT ",\"args\":[\"ls\"]}", "field \"args\": expected object, got array");
	assert_rejects("{" INTENT ",\"args\":null}", "field \"args\": expected object, got null");
	assert_rejects("{" INTENT ",\"decision\":\"allowed\"}", "field \"decision\": expected object, got string");
	assert_rejects("{" INTENT ",\"recovery\":1}", "field \"recovery\": expected string, got integer");
	assert_rejects("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":true}",
		       "field \"tool\": expected string, got boolean");
	assert_rejects("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"i\",\"tool\":\"\"}",
		       "field \"tool\": must not be empty");
	assert_rejects("{\"type\":\"runtime.started\",\"runtime\":\"\"}", "field \"runtime\": must not be empty");
	assert_rejects("{\"type\":\"session.opened\",\"session\":5}", "field \"session\": expected string, got integer");
	assert_rejects("{" OPEN ",\"workspace_roots\":\"/a\"}", "field \"workspace_roots\": expected array, got string");
	assert_rejects("{" OPEN ",\"workspace_roots\":[\"/a\",3]}", "field \"workspace_roots\": item 1: expected string, got integer");
	assert_rejects("{" OPEN ",\"env\":[]}", "field \"env\": expected object, got array");
	assert_rejects("{" OPEN ",\"env\":{\"A\":1}}", "field \"env\": entry \"A\": expected string, got integer");
	assert_rejects("{" OPEN ",\"labels\":{\"A\":null}}", "field \"labels\": entry \"A\": expected string, got null");
	assert_rejects("{" OPEN ",\"provenance\":[]}", "field \"provenance\": expected object, got array");
	assert_rejects("{" OPEN ",\"provenance\":{\"file\":1,\"line\":1}}", "field \"provenance.file\": expected string");
	assert_rejects("{" OPEN ",\"time\":1763393428}", "field \"time\": expected string, got integer");
	assert_rejects("{" OPEN ",\"epoch\":\"1\"}", "field \"epoch\": expected integer, got string");
	assert_rejects("{" ASK ",\"risk\":\"high\"}", "field \"risk\": expected object, got string");
	assert_rejects("{" ASK ",\"risk\":{\"level\":3}}", "field \"risk.level\": expected string, got integer");
	assert_rejects("{" ASK ",\"scope\":{}}", "field \"scope\": expected array, got object");
	assert_rejects("{" INTENT ",\"decision\":{\"verdict\":\"allowed\",\"reasons\":\"x\"}}",
		       "field \"decision.reasons\": expected array, got string");
	assert_rejects("{" INTENT ",\"decision\":{\"verdict\":\"allowed\",\"rules\":[null]}}",
		       "field \"decision.rules\": item 0: expected string, got null");
	assert_rejects("{" INTENT ",\"decision\":{\"verdict\":\"allowed\",\"source\":[]}}",
		       "field \"decision.source\": expected string, got array");
	assert_rejects("{" DONE ",\"exit_code\":\"0\"}", "field \"exit_code\": expected integer, got string");
	assert_rejects("{" DONE ",\"output\":{}}", "field \"output\": expected string, got object");
	assert_rejects("{" POLICY ",\"revision\":1,\"format\":\"docket\",\"policy\":null}",
		       "field \"policy\": must not be null");
	assert_rejects("{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"i\",\"token\":1}",
		       "field \"token\": expected string, got integer");
}

static void test_reject_integers(void **state)
{
	(void)state;
	/* reals where integers are expected, even integral ones */
	assert_rejects("{" OPEN ",\"epoch\":1.0}", "field \"epoch\": expected integer, got number");
	assert_rejects("{" DONE ",\"duration_ms\":4.5}", "field \"duration_ms\": expected integer, got number");
	assert_rejects("{" DONE ",\"exit_code\":1e2}", "field \"exit_code\": expected integer, got number");
	assert_rejects("{" POLICY ",\"revision\":1.0,\"format\":\"docket\",\"policy\":{}}",
		       "field \"revision\": expected integer, got number");
	/* ranges */
	assert_rejects("{" OPEN ",\"epoch\":0}", "field \"epoch\": 0 out of range");
	assert_rejects("{" OPEN ",\"epoch\":-1}", "field \"epoch\": -1 out of range");
	assert_rejects("{" DONE ",\"duration_ms\":-1}", "field \"duration_ms\": -1 out of range");
	assert_rejects("{" POLICY ",\"revision\":0,\"format\":\"docket\",\"policy\":{}}", "field \"revision\": 0 out of range");
	assert_rejects("{" POLICY ",\"revision\":4294967296,\"format\":\"docket\",\"policy\":{}}",
		       "field \"revision\": 4294967296 out of range");
	assert_rejects("{\"type\":\"tool.dispatched\",\"session\":\"s\",\"invocation\":\"i\",\"attempt\":0}",
		       "field \"attempt\": 0 out of range");
	assert_rejects("{" INTENT ",\"decision\":{\"verdict\":\"allowed\",\"policy_revision\":-1}}",
		       "field \"decision.policy_revision\": -1 out of range");
	assert_rejects("{" OPEN ",\"provenance\":{\"file\":\"f\",\"line\":-3}}",
		       "field \"provenance.line\": -3 out of range");
}

static void test_reject_enums(void **state)
{
	(void)state;
	assert_rejects("{" INTENT ",\"recovery\":\"maybe\"}",
		       "tool.intent: field \"recovery\": unknown value \"maybe\" "
		       "(expected replay_safe, idempotent, reconcile, never_auto_retry)");
	assert_rejects("{" INTENT ",\"recovery\":\"REPLAY_SAFE\"}", "unknown value \"REPLAY_SAFE\"");
	assert_rejects("{" INTENT ",\"recovery\":\"\"}", "unknown value \"\"");
	assert_rejects("{" INTENT ",\"recovery\":\"unspecified\"}", "unknown value \"unspecified\"");
	assert_rejects("{" INTENT ",\"decision\":{\"verdict\":\"allow\"}}",
		       "field \"decision.verdict\": unknown value \"allow\" (expected allowed, approval_required, denied, unsupported)");
	assert_rejects("{" SETTLE ",\"result\":\"ok\"}", "field \"result\": unknown value \"ok\"");
	assert_rejects("{\"type\":\"tool.completed\",\"session\":\"s\",\"invocation\":\"i\",\"status\":\"success\"}",
		       "field \"status\": unknown value \"success\"");
	assert_rejects("{" POLICY ",\"revision\":1,\"format\":\"yaml\",\"policy\":{}}",
		       "field \"format\": unknown value \"yaml\" (expected docket, codex, claude, opaque)");
	assert_rejects("{" OPEN ",\"platform\":\"freebsd\"}", "field \"platform\": unknown value \"freebsd\"");
	assert_rejects("{\"type\":\"recovery.action\",\"session\":\"s\",\"invocation\":\"i\",\"action\":\"retry\"}",
		       "field \"action\": unknown value \"retry\"");
	assert_rejects("{" ASK ",\"reviewer\":\"guardian\"}",
		       "field \"reviewer\": unknown value \"guardian\" (expected user, auto_review)");
}

static void test_reject_times(void **state)
{
	static const char *const bad[] = {
		"2025-11-17", "2025-11-17T15:30:28", "2025-11-17T15:30:28+01:00",
		"2025-11-17 15:30:28Z", "2025-13-01T00:00:00Z", "2025-11-17T25:00:00Z",
		"yesterday", "",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];

		snprintf(text, sizeof(text), "{" OPEN ",\"time\":\"%s\"}", bad[i]);
		assert_rejects(text, "field \"time\": \"");
		assert_rejects(text, "is not an RFC 3339 UTC time");
	}
}

static void test_reject_strings(void **state)
{
	char id[300];
	json_t *obj;

	(void)state;
	/* NUL inside strings */
	assert_rejects("{" OPEN ",\"cwd\":\"/a\\u0000b\"}", "field \"cwd\": string contains NUL");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"s\\u0000\"}", "field \"session\": string contains NUL");
	assert_rejects("{" DONE ",\"output\":\"\\u0000\"}", "field \"output\": string contains NUL");
	assert_rejects("{" OPEN ",\"env\":{\"A\":\"x\\u0000\"}}", "field \"env\": entry \"A\": string contains NUL");
	assert_rejects("{" ASK ",\"scope\":[\"a\",\"\\u0000\"]}", "field \"scope\": item 1: string contains NUL");
	assert_rejects("{\"type\":\"tool.intent\\u0000\"}", "string contains NUL");
	/* but NUL inside args values is plain JSON content */
	assert_roundtrip("{" INTENT ",\"args\":{\"k\":\"a\\u0000b\"}}");

	/* ids: empty, too long, control characters */
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"\"}", "field \"session\": id must be 1..256 bytes, got 0");
	assert_rejects("{" INTENT ",\"turn\":\"\"}", "field \"turn\": id must be 1..256 bytes");
	assert_rejects("{" OPEN ",\"parent\":\"\"}", "field \"parent\": id must be 1..256 bytes");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"a\\nb\"}",
		       "field \"session\": id contains a control, line-separator or bidi character at byte 1");
	assert_rejects("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"\\u007f\",\"tool\":\"t\"}",
		       "field \"invocation\": id contains a control, line-separator or bidi character");
	assert_rejects("{" ASK ",\"turn\":\"x\\u0085\"}", "field \"turn\": id contains a control, line-separator or bidi character");
	assert_rejects("{\"type\":\"approval.settled\",\"session\":\"s\",\"invocation\":\"i\",\"request\":\"\\t\",\"result\":\"approved\"}",
		       "field \"request\": id contains a control, line-separator or bidi character");
	/* line separators and bidi controls spoof `docket log` (issue 10) */
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"ab\u2028c\"}",
		       "field \"session\": id contains a control, line-separator or bidi character at byte 2");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"x\u2029\"}", "line-separator or bidi");
	assert_rejects("{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"a\u202eb\",\"tool\":\"t\"}",
		       "field \"invocation\": id contains a control, line-separator or bidi character at byte 1");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"\u202a\"}", "bidi");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"\u200f\"}", "bidi");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"a\u2066\"}", "bidi");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"a\u2069\"}", "bidi");
	assert_rejects("{\"type\":\"session.opened\",\"session\":\"a\u061c\"}", "bidi");
	/* their neighbours are ordinary characters */
	assert_roundtrip("{\"type\":\"session.opened\",\"session\":\"a\u2027\u2030\u2065\u206a\u200d\u061b\"}");

	memset(id, 'x', sizeof(id));
	id[256] = '\0';
	obj = parse("{\"type\":\"session.opened\"}");
	assert_int_equal(json_object_set_new(obj, "session", json_string(id)), 0);
	{
		docket_event *ev = NULL;

		assert_int_equal(docket_event_from_json(&ev, obj), 0);
		assert_int_equal(strlen(ev->session), 256);
		docket_event_free(ev);
	}
	id[257] = '\0';
	id[256] = 'y';
	assert_int_equal(json_object_set_new(obj, "session", json_string(id)), 0);
	assert_rejects_json(obj, "field \"session\": id must be 1..256 bytes, got 257");
	/* non-ASCII ids are fine */
	assert_roundtrip("{\"type\":\"session.opened\",\"session\":\"s\\u00e9\\u4e2d\"}");
}

static void test_reject_limits(void **state)
{
	json_t *obj, *arr;

	(void)state;
	/* 65536 items pass, 65537 do not */
	obj = parse("{" ASK "}");
	arr = json_array();
	for (int i = 0; i < 65536; i++)
		assert_int_equal(json_array_append_new(arr, json_string("k")), 0);
	assert_int_equal(json_object_set(obj, "scope", arr), 0);
	{
		docket_event *ev = NULL;

		assert_int_equal(docket_event_from_json(&ev, obj), 0);
		assert_int_equal(ev->approval_requested->n_scope, 65536);
		docket_event_free(ev);
	}
	assert_int_equal(json_array_append_new(arr, json_string("k")), 0);
	json_decref(arr);
	assert_rejects_json(obj, "field \"scope\": more than 65536 items");

	/* a string over 16 MiB */
	{
		size_t len = (size_t)16 * 1024 * 1024 + 1;
		char *big = malloc(len + 1);

		assert_non_null(big);
		memset(big, 'a', len);
		big[len] = '\0';
		obj = parse("{" DONE "}");
		assert_int_equal(json_object_set_new(obj, "output", json_stringn(big, len)), 0);
		free(big);
		assert_rejects_json(obj, "field \"output\": string longer than 16777216 bytes");
	}
}

/* ---- to_json of events no valid input produces ---- */

static void test_to_json_corrupt(void **state)
{
	docket_event *ev;
	json_t *out = (json_t *)&out;
	docket_event empty = DOCKET__V1__EVENT__INIT;
	char bad_utf8[] = { 'a', (char)0xff, '\0' };
	char *saved;

	(void)state;
	assert_int_equal(docket_event_to_json(&out, &empty), DOCKET_ECORRUPT);
	assert_null(out);
	assert_int_equal(docket_event_to_json(&out, NULL), DOCKET_EINVALID);

	ev = must_parse("{" DONE "}");
	ev->tool_completed->status = (Docket__V1__OutcomeStatus)99;
	assert_int_equal(docket_event_to_json(&out, ev), DOCKET_ECORRUPT);
	assert_non_null(strstr(docket_error_last()->message, "field \"status\": value outside its enumeration"));
	assert_null(out);
	ev->tool_completed->status = DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_OK;
	saved = ev->session;
	ev->session = bad_utf8;
	assert_int_equal(docket_event_to_json(&out, ev), DOCKET_ECORRUPT);
	assert_non_null(strstr(docket_error_last()->message, "field \"session\": not valid UTF-8"));
	ev->session = saved;
	ev->epoch = UINT64_MAX;
	assert_int_equal(docket_event_to_json(&out, ev), DOCKET_ECORRUPT);
	docket_event_free(ev);

	ev = must_parse("{" INTENT ",\"args\":{\"a\":1}}");
	ev->tool_intent->args_json[1] = '[';
	assert_int_equal(docket_event_to_json(&out, ev), DOCKET_ECORRUPT);
	assert_non_null(strstr(docket_error_last()->message, "field \"args\": stored JSON is invalid"));
	assert_null(out);
	docket_event_free(ev);

	ev = must_parse("{" INTENT ",\"decision\":{\"verdict\":\"allowed\"}}");
	ev->tool_intent->decision->verdict = (Docket__V1__Verdict)-3;
	assert_int_equal(docket_event_to_json(&out, ev), DOCKET_ECORRUPT);
	assert_non_null(strstr(docket_error_last()->message, "field \"decision.verdict\""));
	docket_event_free(ev);
}

/* Events survive the protobuf encoding the ledger stores them in. */
static void test_protobuf_roundtrip(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FULL; i++) {
		docket_event *ev = must_parse(full_events[i]), *back;
		size_t len = docket__v1__event__get_packed_size(ev);
		uint8_t *bytes = malloc(len ? len : 1);
		json_t *out = NULL, *want = parse(full_events[i]);

		assert_non_null(bytes);
		assert_int_equal(docket__v1__event__pack(ev, bytes), len);
		back = docket__v1__event__unpack(&docket_pb_allocator, len, bytes);
		assert_non_null(back);
		assert_int_equal(docket_event_to_json(&out, back), 0);
		assert_true(json_equal(out, want));
		json_decref(out);
		json_decref(want);
		docket_event_free(back);
		docket_event_free(ev);
		free(bytes);
	}
}

/* ---- allocation failure ---- */

static void test_alloc_failure_from_json(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FULL; i++) {
		json_t *in = parse(full_events[i]);
		long n;

		for (n = 0; n < 10000; n++) {
			docket_event *ev = (docket_event *)&ev;
			int rc;

			docket_alloc_fail_after(n);
			rc = docket_event_from_json(&ev, in);
			docket_alloc_fail_reset();
			if (rc == 0) {
				docket_event_free(ev);
				break;
			}
			if (rc != DOCKET_ENOMEM)
				fail_msg("event %zu, fail after %ld: rc %d (%s)", i, n, rc,
					 docket_error_last()->message);
			assert_null(ev);
		}
		assert_true(n > 0 && n < 10000);
		json_decref(in);
	}
}

static void test_alloc_failure_to_json(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_FULL; i++) {
		docket_event *ev = must_parse(full_events[i]);
		json_t *want = parse(full_events[i]);
		long n;

		for (n = 0; n < 10000; n++) {
			json_t *out = (json_t *)&out;
			int rc;

			docket_alloc_fail_after(n);
			rc = docket_event_to_json(&out, ev);
			docket_alloc_fail_reset();
			if (rc == 0) {
				assert_true(json_equal(out, want));
				json_decref(out);
				break;
			}
			if (rc != DOCKET_ENOMEM)
				fail_msg("event %zu, fail after %ld: rc %d (%s)", i, n, rc,
					 docket_error_last()->message);
			assert_null(out);
		}
		assert_true(n > 0 && n < 10000);
		json_decref(want);
		docket_event_free(ev);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_full),
		cmocka_unit_test(test_roundtrip_minimal),
		cmocka_unit_test(test_roundtrip_empty_optionals),
		cmocka_unit_test(test_fields_in_memory),
		cmocka_unit_test(test_enums),
		cmocka_unit_test(test_event_type_names),
		cmocka_unit_test(test_time_valid),
		cmocka_unit_test(test_reject_structure),
		cmocka_unit_test(test_error_message_utf8),
		cmocka_unit_test(test_reject_required_forbidden),
		cmocka_unit_test(test_reject_types),
		cmocka_unit_test(test_reject_integers),
		cmocka_unit_test(test_reject_enums),
		cmocka_unit_test(test_reject_times),
		cmocka_unit_test(test_reject_strings),
		cmocka_unit_test(test_reject_limits),
		cmocka_unit_test(test_to_json_corrupt),
		cmocka_unit_test(test_protobuf_roundtrip),
		cmocka_unit_test(test_alloc_failure_from_json),
		cmocka_unit_test(test_alloc_failure_to_json),
	};

	docket_alloc_install_json();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
