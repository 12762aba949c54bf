/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_runtime.c: the runtime protocol and the C API: record mode, fused
 * T0+T1, fencing, authority mode (decide, revalidate, supersede), trust
 * (narrowing layers), group commit isolation, and the recovery engine for
 * every pending state and recovery mode.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "docket/recover.h"
#include "docket/runtime.h"
#include "runtime/protocol.h"

typedef struct fixture {
	char *dir;
	docket_ledger *l;
	docket_runtime *rt;
} fixture;

static int setup(void **state)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	fixture *f = calloc(1, sizeof(*f));

	f->dir = test_mkdtemp();
	opts.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	assert_int_equal(docket_runtime_start(&f->rt, f->l, "test/1"), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	docket_runtime_free(f->rt);
	docket_ledger_free(f->l);
	test_rmdir_free(f->dir);
	free(f);
	return 0;
}

static const char *DEMO_POLICY =
	"{\"version\":1,\"sandbox\":\"workspace_write\",\"approval\":\"on_request\","
	"\"filesystem\":{\"writable\":[\"/w\"]},"
	"\"commands\":[{\"pattern\":[\"git\",\"status\"],\"decision\":\"allow\"},"
	"{\"pattern\":[\"rm\"],\"decision\":\"ask\"},{\"pattern\":[\"curl\"],\"decision\":\"deny\"}]}";

static json_t *argv_args(const char *a, const char *b)
{
	return b ? json_pack("{s:[s,s]}", "command", a, b) : json_pack("{s:[s]}", "command", a);
}

static void intent_ok(fixture *f, const char *inv, const char *a, const char *b, const char *recovery,
		      const char *verdict, int fuse, docket_intent_result *r)
{
	json_t *args = argv_args(a, b);
	int rc = docket_tool_intent(f->rt, "s1", inv, "shell", args, recovery, verdict, fuse, r);

	json_decref(args);
	if (rc != 0)
		fail_msg("intent %s: %s", inv, docket_error_last()->message);
}

/* ---- record mode ---- */

static void test_record_mode_lifecycle(void **state)
{
	fixture *f = *state;
	docket_intent_result r;
	uint32_t attempt;
	char token[48];

	assert_int_equal(docket_runtime_epoch(f->rt), 1);
	assert_int_equal(docket_session_open(f->rt, "s1", "/w"), 0);
	intent_ok(f, "c1", "ls", NULL, "replay_safe", "allowed", 1, &r);
	assert_true(r.dispatched);
	assert_int_equal(r.attempt, 1);
	assert_true(strncmp(r.token, "dt-", 3) == 0);
	assert_string_equal(r.verdict, "allowed");
	assert_int_equal(docket_tool_complete(f->rt, "s1", "c1", "ok", 0, "x"), 0);

	/* fused dispatch only when allowed */
	intent_ok(f, "c2", "rm", "x", NULL, "approval_required", 1, &r);
	assert_false(r.dispatched);
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c2", &attempt, token), DOCKET_ETRANSITION);
	assert_int_equal(docket_error_last()->invariant, 4);
	assert_int_equal(docket_approval_request(f->rt, "s1", "c2", "r1"), 0);
	assert_int_equal(docket_approval_settle(f->rt, "s1", "c2", "r1", "approved", "user:ana"), 0);
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c2", &attempt, token), 0);
	assert_int_equal(attempt, 1);
	assert_int_equal(docket_tool_complete(f->rt, "s1", "c2", "ok", 0, NULL), 0);
	assert_int_equal(docket_session_close(f->rt, "s1"), 0);
	/* unknown method, bad params */
	json_t *p = json_pack("{s:s}", "session", "s1");
	assert_int_equal(docket_runtime_call(f->rt, "tool.nope", p, NULL), DOCKET_ENOTFOUND);
	json_decref(p);
	p = json_pack("{s:s, s:s, s:s, s:i}", "session", "s1", "invocation", "c9", "tool", "t", "bogus", 1);
	assert_int_equal(docket_runtime_call(f->rt, "tool.intent", p, NULL), DOCKET_EINVALID);
	json_decref(p);
}

/* Invariant 7 per lineage: another runtime's start fences nobody; the same
 * runtime (name and uid) starting again fences its earlier instance. */
static void test_fencing_stale_runtime(void **state)
{
	fixture *f = *state;
	docket_runtime *other = NULL, *newer = NULL;
	docket_intent_result r;
	uint32_t attempt;
	char token[48];

	assert_int_equal(docket_session_open(f->rt, "s1", NULL), 0);
	intent_ok(f, "c1", "ls", NULL, NULL, "allowed", 0, &r);
	intent_ok(f, "c2", "ls", NULL, NULL, "allowed", 0, &r);
	assert_int_equal(docket_runtime_start(&other, f->l, "test/2"), 0);
	assert_int_equal(docket_runtime_epoch(other), 2);
	/* test/2 fenced nobody: test/1 goes on */
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c1", &attempt, token), 0);
	assert_int_equal(docket_runtime_start(&newer, f->l, "test/1"), 0);
	assert_int_equal(docket_runtime_epoch(newer), 3);
	/* the zombie of test/1 cannot dispatch; the refusal names who took over and what to do */
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c2", &attempt, token), DOCKET_ESTALE);
	assert_int_equal(docket_error_last()->invariant, 7);
	assert_non_null(strstr(docket_error_last()->message, "runtime \"test/1\""));
	assert_non_null(strstr(docket_error_last()->message, "was started again at epoch 3 (seq "));
	assert_non_null(strstr(docket_error_last()->message, "call runtime.start, then recover.plan"));
	assert_int_equal(docket_tool_dispatch(newer, "s1", "c2", &attempt, token), 0);
	docket_runtime_free(newer);
	docket_runtime_free(other);
}

/* ---- authority mode ---- */

static void set_policy(fixture *f, const char *text)
{
	json_t *pol = test_json(text);
	uint32_t rev = 0;

	if (docket_policy_set(f->rt, "s1", "docket", pol, &rev) != 0)
		fail_msg("policy.set: %s", docket_error_last()->message);
	assert_true(rev >= 1);
	json_decref(pol);
}

static void test_authority_decides(void **state)
{
	fixture *f = *state;
	docket_intent_result r;

	assert_int_equal(docket_session_open(f->rt, "s1", "/w"), 0);
	set_policy(f, DEMO_POLICY);
	intent_ok(f, "c1", "git", "status", NULL, NULL, 1, &r);
	assert_string_equal(r.verdict, "allowed");
	assert_true(r.dispatched);
	intent_ok(f, "c2", "rm", "-rf", NULL, NULL, 1, &r);
	assert_string_equal(r.verdict, "approval_required");
	assert_false(r.dispatched);
	intent_ok(f, "c3", "curl", "x", NULL, NULL, 1, &r);
	assert_string_equal(r.verdict, "denied");
	/* a client's looser decision does not win */
	intent_ok(f, "c4", "curl", "y", NULL, "allowed", 1, &r);
	assert_string_equal(r.verdict, "denied");
	assert_false(r.dispatched);
	/* a stricter one does */
	intent_ok(f, "c5", "git", "status", NULL, "denied", 1, &r);
	assert_string_equal(r.verdict, "denied");

	/* the recorded decision names docket and the revision */
	json_t *ev = NULL;
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	(void)ro;
	assert_int_equal(ledger_event_json(f->l, 4, &ev), 0); /* c1's intent */
	assert_string_equal(json_string_value(json_object_get(ev, "invocation")), "c1");
	json_t *d = json_object_get(ev, "decision");
	assert_string_equal(json_string_value(json_object_get(d, "source")), "docket");
	assert_int_equal(json_integer_value(json_object_get(d, "policy_revision")), 1);
	json_decref(ev);
}

static void test_authority_revalidates_dispatch(void **state)
{
	fixture *f = *state;
	docket_intent_result r;
	uint32_t attempt;
	char token[48];

	assert_int_equal(docket_session_open(f->rt, "s1", "/w"), 0);
	set_policy(f, DEMO_POLICY);
	intent_ok(f, "c1", "git", "status", NULL, NULL, 0, &r);
	assert_string_equal(r.verdict, "allowed");
	/* the policy changes before the runtime dispatches */
	set_policy(f, "{\"version\":1,\"approval\":\"on_request\",\"commands\":[{\"pattern\":[\"git\"],\"decision\":\"deny\"}]}");
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c1", &attempt, token), DOCKET_ETRANSITION);
	assert_non_null(strstr(docket_error_last()->message, "revalidation"));
	/* the outcome was recorded: nothing pending */
	docket_ledger_info info;
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.pending, 0);
}

static void test_authority_supersedes_open_approvals(void **state)
{
	fixture *f = *state;
	docket_intent_result r;
	uint32_t attempt;
	char token[48];

	assert_int_equal(docket_session_open(f->rt, "s1", "/w"), 0);
	set_policy(f, DEMO_POLICY);
	intent_ok(f, "ask-then-allowed", "rm", "a", NULL, NULL, 0, &r);
	intent_ok(f, "ask-then-denied", "rm", "-rf", NULL, NULL, 0, &r);
	intent_ok(f, "ask-still", "rm", "b", NULL, NULL, 0, &r);
	assert_string_equal(r.verdict, "approval_required");
	assert_int_equal(docket_approval_request(f->rt, "s1", "ask-then-allowed", "r1"), 0);
	assert_int_equal(docket_approval_request(f->rt, "s1", "ask-then-denied", "r2"), 0);
	assert_int_equal(docket_approval_request(f->rt, "s1", "ask-still", "r3"), 0);
	/* revision 2: `rm a` allowed, `rm -rf` denied, `rm b` still asks
	 * (every matching rule counts and the strictest wins, so no catch-all) */
	set_policy(f, "{\"version\":1,\"approval\":\"on_request\",\"commands\":["
		      "{\"pattern\":[\"rm\",\"a\"],\"decision\":\"allow\"},"
		      "{\"pattern\":[\"rm\",\"-rf\"],\"decision\":\"deny\"},"
		      "{\"pattern\":[\"rm\",\"b\"],\"decision\":\"ask\"}]}");
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "ask-then-allowed", &attempt, token), 0);
	/* superseded as denied: the dispatch is refused and its outcome recorded */
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "ask-then-denied", &attempt, token), DOCKET_ETRANSITION);
	assert_int_equal(docket_tool_complete(f->rt, "s1", "ask-then-denied", "denied", -1, NULL), DOCKET_ECONFLICT);
	/* the third still waits for its answer */
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "ask-still", &attempt, token), DOCKET_ETRANSITION);
	assert_int_equal(docket_approval_settle(f->rt, "s1", "ask-still", "r3", "approved", "user:ana"), 0);
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "ask-still", &attempt, token), 0);
	docket_verify_report rep;
	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	assert_true(rep.ok);
}

/* ---- trust: an untrusted client narrows only ---- */

static void test_untrusted_policy_set_narrows(void **state)
{
	fixture *f = *state;
	proto_options po;
	proto_ctx *ctx = NULL;
	proto_conn conn = { .epoch = 1, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	proto_call call;
	json_t *op = test_json(DEMO_POLICY);

	memset(&po, 0, sizeof(po));
	po.operator_format = "docket";
	po.operator_policy = op;
	po.workspaces = "/w";
	assert_int_equal(proto_ctx_new(&ctx, f->l, &po), 0);

	/* session.open over serve gets the operator's policy as revision 1 */
	memset(&call, 0, sizeof(call));
	call.method = "session.open";
	call.params = test_json("{\"session\":\"s2\",\"cwd\":\"/w\"}");
	call.conn = &conn;
	assert_int_equal(proto_execute(ctx, &call, 1), 0);
	assert_int_equal(call.error, 0);
	json_decref(call.params);
	proto_call_dispose(&call);

	/* the client tries to allow curl: recorded as a layer, curl stays denied */
	memset(&call, 0, sizeof(call));
	call.method = "policy.set";
	call.params = test_json("{\"session\":\"s2\",\"format\":\"docket\",\"policy\":{\"version\":1,"
				"\"approval\":\"never\",\"commands\":[{\"pattern\":[\"curl\"],\"decision\":\"allow\"},"
				"{\"pattern\":[\"git\"],\"decision\":\"deny\"}]}}");
	call.conn = &conn;
	assert_int_equal(proto_execute(ctx, &call, 1), 0);
	assert_int_equal(call.error, 0);
	json_decref(call.params);
	proto_call_dispose(&call);

	const char *cases[][2] = { { "curl", "denied" }, { "git", "denied" } };
	for (int i = 0; i < 2; i++) {
		char params[256];

		snprintf(params, sizeof(params), "{\"session\":\"s2\",\"invocation\":\"k%d\",\"tool\":\"shell\","
			 "\"args\":{\"command\":[\"%s\",\"status\"]}}", i, cases[i][0]);
		memset(&call, 0, sizeof(call));
		call.method = "tool.intent";
		call.params = test_json(params);
		call.conn = &conn;
		call.id = json_integer(i);
		assert_int_equal(proto_execute(ctx, &call, 1), 0);
		assert_int_equal(call.error, 0);
		json_t *reply = proto_reply(ctx, &call);
		const char *v = json_string_value(json_object_get(json_object_get(reply, "result"), "verdict"));
		if (!v || strcmp(v, cases[i][1]) != 0)
			fail_msg("%s: expected %s, got %s", cases[i][0], cases[i][1], v ? v : "(none)");
		json_decref(reply);
		json_decref(call.id);
		json_decref(call.params);
		proto_call_dispose(&call);
	}
	proto_ctx_free(ctx);
	json_decref(op);
}

/* ---- group commit through the protocol ---- */

static void test_batch_isolates_calls(void **state)
{
	fixture *f = *state;
	proto_options po;
	proto_ctx *ctx = NULL;
	proto_conn conn = { .epoch = 1, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	proto_call calls[3];
	const char *params[3] = {
		"{\"session\":\"s1\",\"invocation\":\"a\",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"},\"dispatch_if_allowed\":true}",
		"{\"session\":\"s1\",\"invocation\":\"zzz\"}",
		"{\"session\":\"s1\",\"invocation\":\"b\",\"tool\":\"t\"}",
	};
	const char *meth[3] = { "tool.intent", "tool.dispatch", "tool.intent" };

	assert_int_equal(docket_session_open(f->rt, "s1", NULL), 0);
	memset(&po, 0, sizeof(po));
	assert_int_equal(proto_ctx_new(&ctx, f->l, &po), 0);
	memset(calls, 0, sizeof(calls));
	for (int i = 0; i < 3; i++) {
		calls[i].method = meth[i];
		calls[i].params = test_json(params[i]);
		calls[i].conn = &conn;
		calls[i].id = json_integer(i);
	}
	assert_int_equal(proto_execute(ctx, calls, 3), 0);
	assert_int_equal(calls[0].error, 0);
	assert_int_equal(calls[1].error, DOCKET_ETRANSITION);
	assert_int_equal(calls[2].error, 0);
	json_t *reply = proto_reply(ctx, &calls[1]);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(reply, "error"), "data"), "kind")),
			    "invalid_transition");
	json_decref(reply);
	reply = proto_reply(ctx, &calls[0]);
	assert_true(json_is_true(json_object_get(json_object_get(reply, "result"), "dispatched")));
	json_decref(reply);
	for (int i = 0; i < 3; i++) {
		json_decref(calls[i].params);
		json_decref(calls[i].id);
		proto_call_dispose(&calls[i]);
	}
	proto_ctx_free(ctx);
}

/* ---- recovery ---- */

typedef struct answer_ctx {
	const char *token;
	int asked;
} answer_ctx;

static int executor(void *ctx, const char *session, const char *invocation, const char *token, json_t **answer)
{
	answer_ctx *a = ctx;

	(void)session;
	(void)invocation;
	a->asked++;
	if (a->token && strcmp(token, a->token) == 0)
		*answer = json_pack("{s:s, s:i}", "status", "ok", "exit_code", 0);
	return 0;
}

static json_t *plan_item(json_t *plan, const char *inv)
{
	size_t i;
	json_t *item;

	json_array_foreach(json_object_get(plan, "items"), i, item)
		if (strcmp(json_string_value(json_object_get(item, "invocation")), inv) == 0)
			return item;
	fail_msg("no plan item for %s", inv);
	return NULL;
}

static const char *item_str(json_t *plan, const char *inv, const char *key)
{
	return json_string_value(json_object_get(plan_item(plan, inv), key));
}

static void test_recovery_every_state(void **state)
{
	fixture *f = *state;
	docket_intent_result r;
	docket_runtime *rt2 = NULL;
	docket_recover_options o = DOCKET_RECOVER_OPTIONS_INIT;
	answer_ctx ans = { NULL, 0 };
	json_t *plan = NULL;
	char tok_reconcile_ok[48];

	assert_int_equal(docket_session_open(f->rt, "s1", "/w"), 0);
	intent_ok(f, "undecided", "x", NULL, NULL, NULL, 0, &r);
	intent_ok(f, "needs", "x", NULL, NULL, "approval_required", 0, &r);
	intent_ok(f, "awaiting", "x", NULL, NULL, "approval_required", 0, &r);
	assert_int_equal(docket_approval_request(f->rt, "s1", "awaiting", "q1"), 0);
	intent_ok(f, "ready", "x", NULL, NULL, "allowed", 0, &r);
	intent_ok(f, "refused", "x", NULL, NULL, "denied", 0, &r);
	intent_ok(f, "doubt-replay", "x", NULL, "replay_safe", "allowed", 1, &r);
	intent_ok(f, "doubt-idem", "x", NULL, "idempotent", "allowed", 1, &r);
	char tok_idem[48];
	snprintf(tok_idem, sizeof(tok_idem), "%s", r.token);
	intent_ok(f, "doubt-rec-ok", "x", NULL, "reconcile", "allowed", 1, &r);
	snprintf(tok_reconcile_ok, sizeof(tok_reconcile_ok), "%s", r.token);
	intent_ok(f, "doubt-rec-unknown", "x", NULL, "reconcile", "allowed", 1, &r);
	intent_ok(f, "doubt-never", "x", NULL, "never_auto_retry", "allowed", 1, &r);
	intent_ok(f, "doubt-default", "x", NULL, NULL, "allowed", 1, &r);
	intent_ok(f, "done", "x", NULL, NULL, "allowed", 1, &r);
	assert_int_equal(docket_tool_complete(f->rt, "s1", "done", "ok", 0, NULL), 0);

	/* crash; a new runtime takes over */
	assert_int_equal(docket_runtime_start(&rt2, f->l, "test/2"), 0);
	ans.token = tok_reconcile_ok;
	o.reconcile_cb = executor;
	o.reconcile_ctx = &ans;
	assert_int_equal(docket_runtime_recover(rt2, &o, 0, &plan), 0);
	assert_int_equal(json_integer_value(json_object_get(plan, "pending")), 11);
	assert_string_equal(item_str(plan, "undecided", "action"), "evaluate");
	assert_string_equal(item_str(plan, "undecided", "runtime"), "decide");
	assert_string_equal(item_str(plan, "needs", "runtime"), "ask_approval");
	assert_string_equal(item_str(plan, "awaiting", "action"), "reprompt");
	assert_string_equal(item_str(plan, "ready", "action"), "dispatch");
	assert_string_equal(item_str(plan, "refused", "action"), "outcome");
	assert_string_equal(item_str(plan, "doubt-replay", "action"), "redispatch");
	assert_string_equal(item_str(plan, "doubt-idem", "action"), "redispatch");
	assert_string_equal(item_str(plan, "doubt-rec-ok", "action"), "reconcile");
	assert_string_equal(item_str(plan, "doubt-rec-unknown", "action"), "park");
	assert_string_equal(item_str(plan, "doubt-never", "action"), "indeterminate");
	assert_string_equal(item_str(plan, "doubt-default", "action"), "indeterminate");
	json_decref(plan);

	/* apply it */
	assert_int_equal(docket_runtime_recover(rt2, &o, 1, &plan), 0);
	size_t i;
	json_t *item;
	json_array_foreach(json_object_get(plan, "items"), i, item) {
		if (json_array_size(json_object_get(item, "events")) == 0)
			continue;
		if (!json_is_true(json_object_get(item, "applied")))
			fail_msg("%s not applied: %s", json_string_value(json_object_get(item, "invocation")),
				 json_string_value(json_object_get(item, "error")));
	}
	json_decref(plan);

	/* what is left pending, and the runtime's next steps work */
	uint32_t attempt;
	char token[48];
	assert_int_equal(docket_tool_dispatch(rt2, "s1", "doubt-replay", &attempt, token), 0);
	assert_int_equal(attempt, 2);
	assert_int_equal(docket_tool_dispatch(rt2, "s1", "doubt-idem", &attempt, token), 0);
	assert_int_equal(attempt, 2);
	assert_string_equal(token, tok_idem);
	assert_int_equal(docket_tool_dispatch(rt2, "s1", "ready", &attempt, token), 0);
	/* never_auto_retry got its outcome: no second dispatch, ever */
	assert_int_equal(docket_tool_dispatch(rt2, "s1", "doubt-never", &attempt, token), DOCKET_ETRANSITION);
	assert_int_equal(docket_tool_dispatch(rt2, "s1", "doubt-rec-unknown", &attempt, token), DOCKET_ETRANSITION);

	/* a second plan: only what still needs the runtime */
	o.close_approvals = 1;
	assert_int_equal(docket_runtime_recover(rt2, &o, 1, &plan), 0);
	assert_string_equal(item_str(plan, "awaiting", "action"), "close");
	assert_string_equal(item_str(plan, "doubt-rec-unknown", "action"), "park");
	json_decref(plan);
	docket_verify_report rep;
	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	assert_true(rep.ok);
	docket_runtime_free(rt2);
}

static void test_recovery_authority_evaluates(void **state)
{
	fixture *f = *state;
	docket_intent_result r;
	json_t *plan = NULL;
	docket_recover_options o = DOCKET_RECOVER_OPTIONS_INIT;

	assert_int_equal(docket_session_open(f->rt, "s1", "/w"), 0);
	/* intents recorded before the policy existed are undecided */
	intent_ok(f, "u-git", "git", "status", NULL, NULL, 0, &r);
	intent_ok(f, "u-curl", "curl", "x", NULL, NULL, 0, &r);
	intent_ok(f, "u-rm", "rm", "x", NULL, NULL, 0, &r);
	assert_string_equal(r.verdict, "undecided");
	set_policy(f, DEMO_POLICY);
	assert_int_equal(docket_runtime_recover(f->rt, &o, 1, &plan), 0);
	assert_string_equal(item_str(plan, "u-git", "runtime"), "dispatch");
	assert_string_equal(item_str(plan, "u-curl", "runtime"), "none");
	assert_string_equal(item_str(plan, "u-rm", "runtime"), "ask_approval");
	json_decref(plan);
	/* curl got its outcome; git became dispatchable */
	uint32_t attempt;
	char token[48];
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "u-git", &attempt, token), 0);
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "u-curl", &attempt, token), DOCKET_ETRANSITION);
}


/* ---- issue 10: every request split across batches, and merged into one ---- */

typedef struct step {
	const char *method, *params;
	const char *kind;      /* the data.kind expected, or NULL for success */
} step;

/* Run `steps` through the protocol on `conn`: one batch each (split) or all
 * in one batch (merged); check each outcome and that the log holds
 * `events` events and verifies. */
static void run_steps_in(fixture *f, proto_ctx *ctx, proto_conn *conn, const step *steps, size_t n, int merged,
			 uint64_t events)
{
	proto_call *calls = calloc(n, sizeof(*calls));
	json_t **replies = calloc(n, sizeof(*replies));
	docket_ledger_info info;
	docket_verify_report rep;

	for (size_t i = 0; i < n; i++) {
		calls[i].method = steps[i].method;
		calls[i].params = test_json(steps[i].params);
		calls[i].conn = conn;
		calls[i].id = json_integer((json_int_t)i);
	}
	/* as the server does: the replies of a batch after its commit */
	if (merged) {
		assert_int_equal(proto_execute(ctx, calls, n), 0);
		for (size_t i = 0; i < n; i++)
			replies[i] = proto_reply(ctx, &calls[i]);
	} else {
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(proto_execute(ctx, &calls[i], 1), 0);
			replies[i] = proto_reply(ctx, &calls[i]);
		}
	}
	for (size_t i = 0; i < n; i++) {
		json_t *reply = replies[i];
		const char *kind = json_string_value(json_object_get(json_object_get(json_object_get(reply, "error"), "data"), "kind"));

		if ((steps[i].kind == NULL) != (kind == NULL) || (kind && strcmp(kind, steps[i].kind) != 0))
			fail_msg("%s step %zu (%s): want %s, got %s (%s)", merged ? "merged" : "split", i, steps[i].method,
				 steps[i].kind ? steps[i].kind : "success", kind ? kind : "success", calls[i].err.message);
		json_decref(reply);
		json_decref(calls[i].params);
		json_decref(calls[i].id);
		proto_call_dispose(&calls[i]);
	}
	free(replies);
	free(calls);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.events, events);
	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	assert_true(rep.ok);
}

static void run_steps(fixture *f, proto_conn *conn, const step *steps, size_t n, int merged, uint64_t events)
{
	proto_options po;
	proto_ctx *ctx = NULL;

	memset(&po, 0, sizeof(po));
	assert_int_equal(proto_ctx_new(&ctx, f->l, &po), 0);
	run_steps_in(f, ctx, conn, steps, n, merged, events);
	proto_ctx_free(ctx);
}

/* Prepare a session under DEMO_POLICY (`rm` asks): 3 events with runtime.started. */
static void demo_session(fixture *f)
{
	assert_int_equal(docket_session_open(f->rt, "s1", "/w"), 0);
	set_policy(f, DEMO_POLICY);
}

#define ASK_INTENT "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\",\"args\":{\"command\":[\"rm\",\"x\"]}}"

/* Defect 1: a forged superseded settlement and a dispatch behind it, in one batch or not. */
static void forged_supersede(void **state, int merged)
{
	fixture *f = *state;
	proto_conn conn = { .epoch = 1, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	const step steps[] = {
		{ "tool.intent", ASK_INTENT, NULL },
		{ "approval.request", "{\"session\":\"s1\",\"invocation\":\"c1\",\"request\":\"r1\"}", NULL },
		{ "approval.settle", "{\"session\":\"s1\",\"invocation\":\"c1\",\"request\":\"r1\",\"result\":\"superseded\","
		  "\"decision\":{\"verdict\":\"allowed\",\"source\":\"docket\",\"policy_revision\":1}}", "bad_request" },
		{ "tool.dispatch", "{\"session\":\"s1\",\"invocation\":\"c1\"}", "invalid_transition" },
	};

	demo_session(f);
	run_steps(f, &conn, steps, 4, merged, 5);
}

static void test_forged_supersede_split(void **state) { forged_supersede(state, 0); }
static void test_forged_supersede_merged(void **state) { forged_supersede(state, 1); }

/*
 * A forged supersede the ledger alone would take: after a real narrowing
 * revision (the call still asks, so its request stays open and docket
 * settles nothing), a client's "superseded" naming the new revision and
 * deciding "allowed" passes invariant 3's checks (a newer revision, the
 * current one, a decision). Only the protocol's rule that docket alone
 * settles superseded stops it (mutant client-superseded).
 */
static void forged_supersede_after_revision(void **state, int merged)
{
	fixture *f = *state;
	proto_conn conn = { .epoch = 1, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	const step steps[] = {
		{ "tool.intent", ASK_INTENT, NULL },
		{ "approval.request", "{\"session\":\"s1\",\"invocation\":\"c1\",\"request\":\"r1\"}", NULL },
		{ "policy.set", "{\"session\":\"s1\",\"format\":\"docket\",\"policy\":{\"version\":1,"
		  "\"commands\":[{\"pattern\":[\"curl\"],\"decision\":\"deny\"}]}}", NULL },
		{ "approval.settle", "{\"session\":\"s1\",\"invocation\":\"c1\",\"request\":\"r1\",\"result\":\"superseded\","
		  "\"decision\":{\"verdict\":\"allowed\",\"source\":\"runtime\",\"policy_revision\":2}}", "bad_request" },
		{ "tool.dispatch", "{\"session\":\"s1\",\"invocation\":\"c1\"}", "invalid_transition" },
	};

	demo_session(f);
	/* 3 + intent, request, revision 2: no settlement of any kind */
	run_steps(f, &conn, steps, 5, merged, 6);
}

static void test_forged_supersede_after_revision_split(void **state) { forged_supersede_after_revision(state, 0); }
static void test_forged_supersede_after_revision_merged(void **state) { forged_supersede_after_revision(state, 1); }

/* Defect 2: a policy revision that lands between the authority's check
 * and the append (here: earlier in the same transaction) is caught. */
static void revision_race(void **state, int merged)
{
	fixture *f = *state;
	proto_conn conn = { .epoch = 1, .trusted = 1, .peer_pid = 0, .peer_uid = -1 };
	const step steps[] = {
		{ "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\",\"args\":{\"command\":[\"git\",\"status\"]}}", NULL },
		{ "policy.set", "{\"session\":\"s1\",\"format\":\"docket\",\"policy\":{\"version\":1,\"commands\":[{\"pattern\":[\"git\"],\"decision\":\"ask\"}]}}", NULL },
		{ "tool.dispatch", "{\"session\":\"s1\",\"invocation\":\"c1\"}", merged ? "conflict" : "invalid_transition" },
	};

	demo_session(f);
	run_steps(f, &conn, steps, 3, merged, 5);
}

static void test_revision_race_split(void **state) { revision_race(state, 0); }
static void test_revision_race_merged(void **state) { revision_race(state, 1); }

/* Defect 4: a connection without runtime.start, or naming an epoch, is fenced. */
static void unbound_connection(void **state, int merged)
{
	fixture *f = *state;
	proto_conn none = { .epoch = 0, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	const step steps[] = {
		{ "tool.intent", ASK_INTENT, "stale_epoch" },
		{ "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"t\",\"epoch\":1}", "stale_epoch" },
		{ "runtime.attach", "{\"epoch\":1}", "stale_epoch" },
		/* an operator's recover.apply writes under the settled lineages'
		 * epochs, not its own; with nothing to settle it writes nothing */
		{ "recover.apply", "{}", NULL },
	};

	demo_session(f);
	run_steps(f, &none, steps, 4, merged, 3);
}

static void test_unbound_connection_split(void **state) { unbound_connection(state, 0); }
static void test_unbound_connection_merged(void **state) { unbound_connection(state, 1); }

/* Defect 7: re-sent intent with its fused dispatch, settlement, outcome after close. */
static void resends(void **state, int merged)
{
	fixture *f = *state;
	proto_conn conn = { .epoch = 1, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	const char *git = "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\",\"args\":{\"command\":[\"git\",\"status\"]},"
			  "\"dispatch_if_allowed\":true}";
	const char *done = "{\"session\":\"s1\",\"invocation\":\"c1\",\"status\":\"ok\",\"exit_code\":0}";
	const step steps[] = {
		{ "tool.intent", git, NULL }, { "tool.intent", git, NULL },
		{ "tool.complete", done, NULL }, { "session.close", "{\"session\":\"s1\"}", NULL },
		{ "tool.complete", done, NULL }, { "tool.intent", git, NULL },
	};

	demo_session(f);
	run_steps(f, &conn, steps, 6, merged, 7);
}

static void test_resends_split(void **state) { resends(state, 0); }
static void test_resends_merged(void **state) { resends(state, 1); }

/* Defect 5 through the C API: allowed under revision 1, revision 2 asks. */
static void test_stuck_call_can_ask(void **state)
{
	fixture *f = *state;
	docket_intent_result r;
	uint32_t attempt;
	char token[48];
	json_t *plan = NULL;

	demo_session(f);
	intent_ok(f, "c1", "git", "status", NULL, NULL, 0, &r);
	assert_string_equal(r.verdict, "allowed");
	set_policy(f, "{\"version\":1,\"commands\":[{\"pattern\":[\"git\"],\"decision\":\"ask\"}]}");
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c1", &attempt, token), DOCKET_ETRANSITION);
	assert_int_equal(docket_error_last()->invariant, 4);
	assert_int_equal(docket_runtime_recover(f->rt, NULL, 0, &plan), 0);
	assert_string_equal(item_str(plan, "c1", "runtime"), "ask_approval");
	json_decref(plan);
	assert_int_equal(docket_approval_request(f->rt, "s1", "c1", "r1"), 0);
	assert_int_equal(docket_approval_settle(f->rt, "s1", "c1", "r1", "approved", "user:ana"), 0);
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c1", &attempt, token), 0);
	assert_int_equal(attempt, 1);
}

/* Defect 4: recover --apply fences; a second apply grants no redispatch to the old runtime. */
static void test_recover_apply_fences(void **state)
{
	fixture *f = *state;
	docket_intent_result r;
	uint32_t attempt;
	char token[48];
	json_t *report = NULL;
	docket_ledger_info info;

	assert_int_equal(docket_session_open(f->rt, "s1", NULL), 0);
	intent_ok(f, "c1", "ls", NULL, "replay_safe", "allowed", 1, &r);
	assert_int_equal(docket_recover_apply(f->l, NULL, &report), 0);
	json_decref(report);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.epoch, 2);
	/* the runtime that dispatched attempt 1 is fenced */
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c1", &attempt, token), DOCKET_ESTALE);
	assert_int_equal(docket_recover_apply(f->l, NULL, &report), 0);
	json_decref(report);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.epoch, 3);
	assert_int_equal(docket_tool_complete(f->rt, "s1", "c1", "ok", 0, NULL), DOCKET_ESTALE);
}


/* runtime.attach binds another connection of the process that started the epoch, no other */
static void test_attach_same_peer_only(void **state)
{
	fixture *f = *state;
	proto_conn starter = { .peer_pid = 4242, .peer_uid = 1000 };
	proto_conn sibling = { .peer_pid = 4242, .peer_uid = 1000 };
	proto_conn other = { .peer_pid = 777, .peer_uid = 1000 };
	const step start[] = { { "runtime.start", "{\"runtime\":\"agent/1\"}", NULL } };
	const step attach_ok[] = { { "runtime.attach", "{\"epoch\":2}", NULL },
				   { "session.open", "{\"session\":\"s9\"}", NULL } };
	const step attach_bad[] = { { "runtime.attach", "{\"epoch\":2}", "stale_epoch" },
				    { "runtime.attach", "{\"epoch\":1}", "stale_epoch" },
				    { "session.open", "{\"session\":\"s8\"}", "stale_epoch" } };

	proto_options po;
	proto_ctx *ctx = NULL;

	memset(&po, 0, sizeof(po));
	assert_int_equal(proto_ctx_new(&ctx, f->l, &po), 0);
	run_steps_in(f, ctx, &starter, start, 1, 0, 2);
	run_steps_in(f, ctx, &other, attach_bad, 3, 0, 2);
	run_steps_in(f, ctx, &sibling, attach_ok, 2, 0, 3);
	assert_int_equal(sibling.epoch, 2);
	assert_int_equal(other.epoch, 0);
	proto_ctx_free(ctx);
}


/* Roles: a runtime settles no approvals, applies no recovery, touches only its
 * own sessions; a settlement's actor carries the peer's uid. */
static void roles(void **state, int merged)
{
	fixture *f = *state;
	proto_options po;
	proto_ctx *ctx = NULL;
	proto_conn rt_a = { .peer_pid = 11, .peer_uid = 2001, .role = PROTO_ROLE_RUNTIME };
	proto_conn rt_b = { .peer_pid = 12, .peer_uid = 2002, .role = PROTO_ROLE_RUNTIME };
	proto_conn approver = { .peer_pid = 13, .peer_uid = 3001, .role = PROTO_ROLE_APPROVER };
	const step start_a[] = { { "runtime.start", "{\"runtime\":\"agent-a\"}", NULL } };
	const step a[] = {
		{ "session.open", "{\"session\":\"sa\"}", NULL },
		{ "session.open", "{\"session\":\"sx\",\"runtime\":\"agent-b\"}", "forbidden" },
		{ "tool.intent", "{\"session\":\"sa\",\"invocation\":\"c1\",\"tool\":\"t\",\"decision\":{\"verdict\":\"approval_required\"}}", NULL },
		{ "approval.request", "{\"session\":\"sa\",\"invocation\":\"c1\",\"request\":\"r1\"}", NULL },
		{ "approval.settle", "{\"session\":\"sa\",\"invocation\":\"c1\",\"request\":\"r1\",\"result\":\"approved\",\"actor\":\"user:ana\"}", "forbidden" },
		{ "recover.apply", "{}", "forbidden" },
	};
	const step start_b[] = { { "runtime.start", "{\"runtime\":\"agent-b\"}", NULL } };
	const step b[] = {
		{ "tool.intent", "{\"session\":\"sa\",\"invocation\":\"c2\",\"tool\":\"t\"}", "forbidden" },
		{ "session.close", "{\"session\":\"sa\"}", "forbidden" },
	};
	const step settle[] = {
		{ "runtime.attach", "{\"epoch\":3}", "stale_epoch" },
	};
	json_t *ev = NULL;
	docket_ledger_info info;

	memset(&po, 0, sizeof(po));
	assert_int_equal(proto_ctx_new(&ctx, f->l, &po), 0);
	run_steps_in(f, ctx, &rt_a, start_a, 1, 0, 2);
	run_steps_in(f, ctx, &rt_a, a, 6, merged, 5);
	run_steps_in(f, ctx, &rt_b, start_b, 1, 0, 6);
	run_steps_in(f, ctx, &rt_b, b, 2, merged, 6);
	run_steps_in(f, ctx, &approver, settle, 1, 0, 6);
	/* the approver (bound through the C API's epoch, as an operator tool would) settles */
	approver.epoch = 3;
	const step ok_settle[] = {
		{ "approval.settle", "{\"session\":\"sa\",\"invocation\":\"c1\",\"request\":\"r1\",\"result\":\"approved\",\"actor\":\"user:ana\"}", NULL },
	};
	run_steps_in(f, ctx, &approver, ok_settle, 1, merged, 7);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(ledger_event_json(f->l, info.events, &ev), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "actor")), "user:ana (uid 3001)");
	json_decref(ev);
	proto_ctx_free(ctx);
}

static void test_roles_split(void **state) { roles(state, 0); }
static void test_roles_merged(void **state) { roles(state, 1); }

/* Under an operator policy: a client's context cannot widen it, and a
 * session without a trusted policy is not driven through serve. */
static void operator_context(void **state, int merged)
{
	fixture *f = *state;
	proto_options po;
	proto_ctx *ctx = NULL;
	json_t *op = test_json(DEMO_POLICY);
	proto_conn conn = { .epoch = 1 };
	const step steps[] = {
		{ "session.open", "{\"session\":\"w1\",\"cwd\":\"/\"}", "bad_request" },
		{ "session.open", "{\"session\":\"w2\",\"cwd\":\"/w/app\",\"workspace_roots\":[\"/\"]}", "bad_request" },
		{ "session.open", "{\"session\":\"w3\",\"cwd\":\"/w/app\",\"env\":{\"TMPDIR\":\"/etc\"}}", "bad_request" },
		{ "session.open", "{\"session\":\"w4\",\"cwd\":\"/w/../etc\"}", "bad_request" },
		{ "session.open", "{\"session\":\"w5\",\"cwd\":\"/wx\"}", "bad_request" },
		{ "session.open", "{\"session\":\"w6\",\"cwd\":\"/w/app\",\"workspace_roots\":[\"/w/app\"],\"env\":{\"TMPDIR\":\"/w/tmp\"}}", NULL },
		{ "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\",\"args\":{\"command\":[\"rm\",\"-rf\",\"/\"]},"
		  "\"decision\":{\"verdict\":\"allowed\"}}", "bad_request" },
		{ "policy.set", "{\"session\":\"s1\",\"format\":\"docket\",\"policy\":{\"version\":1}}", "bad_request" },
	};

	/* s1: opened by the C API (as record or import would), no policy */
	assert_int_equal(docket_session_open(f->rt, "s1", "/"), 0);
	memset(&po, 0, sizeof(po));
	po.operator_policy = op;
	po.operator_format = "docket";
	po.workspaces = "/srv:/w/";
	assert_int_equal(proto_ctx_new(&ctx, f->l, &po), 0);
	run_steps_in(f, ctx, &conn, steps, 8, merged, 4);
	proto_ctx_free(ctx);
	json_decref(op);
}

static void test_operator_context_split(void **state) { operator_context(state, 0); }
static void test_operator_context_merged(void **state) { operator_context(state, 1); }


/* ---- issue 28: runtimes by identity, recovery, the call schema ---- */

/* One call on `conn`; its reply (new reference). */
static json_t *call_one(proto_ctx *ctx, proto_conn *conn, const char *method, const char *params)
{
	proto_call c;
	json_t *reply;

	memset(&c, 0, sizeof(c));
	c.method = method;
	c.params = test_json(params);
	c.conn = conn;
	c.id = json_integer(1);
	assert_int_equal(proto_execute(ctx, &c, 1), 0);
	reply = proto_reply(ctx, &c);
	json_decref(c.params);
	json_decref(c.id);
	proto_call_dispose(&c);
	return reply;
}

static const char *reply_kind(const json_t *r)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(r, "error"), "data"), "kind"));
}

static const char *reply_message(const json_t *r)
{
	return json_string_value(json_object_get(json_object_get(r, "error"), "message"));
}

/* Expect `kind` (NULL: success) and, when given, `text` in the message. */
static void expect(proto_ctx *ctx, proto_conn *conn, const char *method, const char *params, const char *kind,
		   const char *text)
{
	json_t *r = call_one(ctx, conn, method, params);
	const char *k = reply_kind(r), *msg = reply_message(r);

	if ((kind == NULL) != (k == NULL) || (kind && strcmp(kind, k) != 0))
		fail_msg("%s %s: want %s, got %s (%s)", method, params, kind ? kind : "success", k ? k : "success",
			 msg ? msg : "");
	if (text && (!msg || !strstr(msg, text)))
		fail_msg("%s: message \"%s\" lacks \"%s\"", method, msg ? msg : "", text);
	json_decref(r);
}

static proto_ctx *plain_ctx(fixture *f)
{
	proto_options po;
	proto_ctx *ctx = NULL;

	memset(&po, 0, sizeof(po));
	assert_int_equal(proto_ctx_new(&ctx, f->l, &po), 0);
	return ctx;
}

/* A process of another uid claiming the same runtime name records nothing
 * on the first runtime's session, and fences nobody. */
static void test_same_name_other_uid(void **state)
{
	fixture *f = *state;
	proto_ctx *ctx = plain_ctx(f);
	proto_conn a = { .peer_pid = 11, .peer_uid = 2001, .role = PROTO_ROLE_RUNTIME };
	proto_conn impostor = { .peer_pid = 12, .peer_uid = 2002, .role = PROTO_ROLE_RUNTIME };
	json_t *ev = NULL;

	expect(ctx, &a, "runtime.start", "{\"runtime\":\"agent\"}", NULL, NULL);
	expect(ctx, &a, "session.open", "{\"session\":\"sa\"}", NULL, NULL);
	expect(ctx, &a, "tool.intent", "{\"session\":\"sa\",\"invocation\":\"c1\",\"tool\":\"t\","
	       "\"decision\":{\"verdict\":\"allowed\"},\"dispatch_if_allowed\":true}", NULL, NULL);
	/* runtime.started records the kernel's uid; a client cannot name one */
	assert_int_equal(ledger_event_json(f->l, 2, &ev), 0);
	assert_int_equal(json_integer_value(json_object_get(ev, "uid")), 2001);
	json_decref(ev);
	expect(ctx, &impostor, "runtime.start", "{\"runtime\":\"agent\",\"uid\":2001}", "bad_request", "kernel");
	expect(ctx, &impostor, "runtime.start", "{\"runtime\":\"agent\"}", NULL, NULL);
	expect(ctx, &impostor, "tool.complete", "{\"session\":\"sa\",\"invocation\":\"c1\",\"status\":\"ok\"}",
	       "forbidden", "belongs to runtime \"agent\" (uid 2001), not to this connection's runtime \"agent\" (uid 2002)");
	expect(ctx, &impostor, "session.close", "{\"session\":\"sa\"}", "forbidden", NULL);
	/* the impostor's start fenced nobody: the owner completes */
	expect(ctx, &a, "tool.complete", "{\"session\":\"sa\",\"invocation\":\"c1\",\"status\":\"ok\"}", NULL, NULL);
	/* one batch: a opens sb and records on it; the impostor's call on sb,
	 * not yet in the ledger when it is prepared, is refused all the same */
	{
		proto_call c[3];
		const char *methods[] = { "session.open", "tool.intent", "tool.intent" };
		const char *params[] = { "{\"session\":\"sb\"}",
					 "{\"session\":\"sb\",\"invocation\":\"x1\",\"tool\":\"t\"}",
					 "{\"session\":\"sb\",\"invocation\":\"x2\",\"tool\":\"t\"}" };
		proto_conn *who[] = { &a, &a, &impostor };

		memset(c, 0, sizeof(c));
		for (int i = 0; i < 3; i++) {
			c[i].method = methods[i];
			c[i].params = test_json(params[i]);
			c[i].conn = who[i];
			c[i].id = json_integer(i);
		}
		assert_int_equal(proto_execute(ctx, c, 3), 0);
		for (int i = 0; i < 3; i++) {
			json_t *r = proto_reply(ctx, &c[i]);

			if (i < 2)
				assert_null(reply_kind(r));
			else
				assert_string_equal(reply_kind(r), "forbidden");
			json_decref(r);
			json_decref(c[i].params);
			json_decref(c[i].id);
			proto_call_dispose(&c[i]);
		}
	}
	proto_ctx_free(ctx);
}

/* A runtime's recover.plan needs its runtime.start and shows its own
 * sessions only; an operator sees all. */
static void test_recover_plan_own_sessions(void **state)
{
	fixture *f = *state;
	proto_ctx *ctx = plain_ctx(f);
	proto_conn a = { .peer_pid = 11, .peer_uid = 2001, .role = PROTO_ROLE_RUNTIME };
	proto_conn b = { .peer_pid = 12, .peer_uid = 2002, .role = PROTO_ROLE_RUNTIME };
	proto_conn op = { .peer_uid = 0, .role = PROTO_ROLE_OPERATOR };
	json_t *r;

	expect(ctx, &b, "recover.plan", "{}", "stale_epoch", "call runtime.start first");
	expect(ctx, &a, "runtime.start", "{\"runtime\":\"agent-a\"}", NULL, NULL);
	expect(ctx, &a, "session.open", "{\"session\":\"sa\"}", NULL, NULL);
	expect(ctx, &a, "tool.intent", "{\"session\":\"sa\",\"invocation\":\"c1\",\"tool\":\"t\","
	       "\"decision\":{\"verdict\":\"allowed\"},\"dispatch_if_allowed\":true}", NULL, NULL);
	expect(ctx, &b, "runtime.start", "{\"runtime\":\"agent-b\"}", NULL, NULL);
	r = call_one(ctx, &b, "recover.plan", "{}");
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "items")), 0);
	json_decref(r);
	r = call_one(ctx, &a, "recover.plan", "{}");
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "items")), 1);
	json_decref(r);
	r = call_one(ctx, &op, "recover.plan", "{}");
	/* the fixture's own (C API) runtime has nothing pending: one item, a's, with its owner */
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "result"), "items")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(json_object_get(
		json_object_get(r, "result"), "items"), 0), "owner"), "runtime")), "agent-a");
	json_decref(r);
	proto_ctx_free(ctx);
}

/* recover --apply: nothing to settle writes nothing; otherwise it fences
 * the lineages it settles and no other. */
static void test_recover_apply_per_lineage(void **state)
{
	fixture *f = *state;
	docket_runtime *b = NULL;
	docket_intent_result r;
	docket_ledger_info before, after;
	json_t *report = NULL;
	uint32_t attempt;
	char token[48];

	/* one call, settled: nothing is pending */
	assert_int_equal(docket_session_open(f->rt, "s1", NULL), 0);
	intent_ok(f, "c1", "ls", NULL, "replay_safe", "allowed", 0, &r);
	assert_int_equal(docket_tool_dispatch(f->rt, "s1", "c1", &attempt, token), 0);
	assert_int_equal(docket_tool_complete(f->rt, "s1", "c1", "ok", 0, NULL), 0);
	assert_int_equal(docket_ledger_info_get(f->l, &before), 0);
	assert_int_equal(docket_recover_apply(f->l, NULL, &report), 0);
	assert_int_equal(json_array_size(json_object_get(report, "fenced")), 0);
	json_decref(report);
	assert_int_equal(docket_ledger_info_get(f->l, &after), 0);
	assert_int_equal(after.events, before.events);
	assert_int_equal(after.epoch, before.epoch);
	/* runtime b healthy, test/1 with a call in doubt */
	assert_int_equal(docket_runtime_start(&b, f->l, "test/b"), 0);
	assert_int_equal(docket_session_open(b, "sb", NULL), 0);
	intent_ok(f, "c2", "ls", NULL, "replay_safe", "allowed", 1, &r);
	assert_int_equal(docket_recover_apply(f->l, NULL, &report), 0);
	assert_int_equal(json_array_size(json_object_get(report, "fenced")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(report, "fenced"), 0),
							      "runtime")), "test/1");
	json_decref(report);
	/* test/1 is fenced, test/b is not */
	assert_int_equal(docket_tool_complete(f->rt, "s1", "c2", "ok", 0, NULL), DOCKET_ESTALE);
	assert_int_equal(docket_session_close(b, "sb"), 0);
	docket_runtime_free(b);
}

/* serve's context is its own process's: a client naming another is refused. */
static void test_context_from_process(void **state)
{
	fixture *f = *state;
	proto_ctx *ctx = plain_ctx(f);
	proto_conn conn = { .epoch = 1, .peer_uid = -1 };
	json_t *ev = NULL;
	docket_ledger_info info;
	const char *home = getenv("HOME");

	expect(ctx, &conn, "session.open", "{\"session\":\"p1\",\"platform\":\"windows\"}", "forbidden", "platform");
	expect(ctx, &conn, "session.open", "{\"session\":\"p2\",\"env\":{\"HOME\":\"/nonexistent/other\"}}",
	       "forbidden", "env.HOME");
	expect(ctx, &conn, "session.open", "{\"session\":\"p3\",\"env\":{\"USER\":\"somebody-else\"}}",
	       "forbidden", "env.USER");
	expect(ctx, &conn, "session.open", "{\"session\":\"p4\",\"env\":{\"TMPDIR\":\"/tmp\"}}", NULL, NULL);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(ledger_event_json(f->l, info.events, &ev), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "platform")), "linux");
	if (home)
		assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "env"), "HOME")), home);
	assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "env"), "TMPDIR")), "/tmp");
	json_decref(ev);
	proto_ctx_free(ctx);
}

/* Canonical args follow docs/call.schema.json in every mode. */
static void test_call_schema_refuses(void **state)
{
	fixture *f = *state;
	proto_ctx *ctx = plain_ctx(f);
	proto_conn conn = { .epoch = 1, .peer_uid = -1 };

	assert_int_equal(docket_session_open(f->rt, "s1", NULL), 0);
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\","
	       "\"args\":{\"command\":\"ls -la\"}}", "bad_request", "args.command must be an array of strings");
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\","
	       "\"args\":{\"cwd\":\"/w\"}}", "bad_request", "needs args.command");
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"read_file\","
	       "\"args\":{\"path\":[\"a\"]}}", "bad_request", "args.path must be a string");
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"network\","
	       "\"args\":{\"port\":70000,\"host\":\"x\"}}", "bad_request", "args.port");
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"apply_patch\","
	       "\"args\":{\"changes\":[{\"path\":\"a\",\"op\":\"rename\"}]}}", "bad_request", "args.changes");
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\","
	       "\"args\":{\"command\":[\"ls\"],\"sandbox_permissions\":\"root\"}}", "bad_request", "sandbox_permissions");
	/* a tool the schema does not name is recorded as it is */
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"Bash\","
	       "\"args\":{\"command\":\"ls -la\"}}", NULL, NULL);
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c2\",\"tool\":\"shell\","
	       "\"args\":{\"command\":[\"ls\",\"-la\"],\"timeout_ms\":5}}", NULL, NULL);
	proto_ctx_free(ctx);
}

/* Smaller defects: the method's name in a conversion error, no invocation
 * "" in a session.close refusal, and record-mode dispatch_if_allowed. */
static void test_small_messages(void **state)
{
	fixture *f = *state;
	proto_ctx *ctx = plain_ctx(f);
	proto_conn conn = { .epoch = 1, .peer_uid = -1 };
	json_t *r;

	assert_int_equal(docket_session_open(f->rt, "s1", NULL), 0);
	expect(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"shell\","
	       "\"args\":{\"command\":[\"ls\"]},\"decision\":{\"verdict\":\"allowed\"},\"dispatch_if_allowed\":true}",
	       NULL, NULL);
	expect(ctx, &conn, "tool.complete", "{\"session\":\"s1\",\"invocation\":\"c1\",\"status\":\"fine\"}",
	       "bad_request", "tool.complete: ");
	r = call_one(ctx, &conn, "session.close", "{\"session\":\"s1\"}");
	assert_string_equal(reply_kind(r), "invalid_transition");
	assert_null(strstr(reply_message(r), "invocation \"\""));
	assert_non_null(strstr(reply_message(r), "(session \"s1\")"));
	json_decref(r);
	/* record mode: no policy and no decision: recorded undecided, never dispatched */
	r = call_one(ctx, &conn, "tool.intent", "{\"session\":\"s1\",\"invocation\":\"c2\",\"tool\":\"shell\","
		     "\"args\":{\"command\":[\"ls\"]},\"dispatch_if_allowed\":true}");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"), "verdict")), "undecided");
	assert_true(json_is_false(json_object_get(json_object_get(r, "result"), "dispatched")));
	json_decref(r);
	proto_ctx_free(ctx);
}

/* ---- the server's text path against the tree path ---- */

/*
 * One request line through `ctx`: on the text path (what `serve` does for
 * tool.intent and tool.complete) or on jansson's tree; its reply line goes
 * to `out`. Returns whether the call ended on the tree (call.tree is set
 * when the text path handed it over).
 */
static int run_line(proto_ctx *ctx, proto_conn *conn, const char *line, int text, docket_buf *out)
{
	json_t *req = test_json(line), *params = json_object_get(req, "params"), *id = json_object_get(req, "id");
	const char *method = json_string_value(json_object_get(req, "method"));
	const char *session = json_string_value(json_object_get(params, "session"));
	proto_call c;
	int tree;

	memset(&c, 0, sizeof(c));
	c.conn = conn;
	c.id = id;
	if (text && proto_text_method(method)) {
		assert_int_equal(proto_call_set_line(&c, proto_text_method(method), line, strlen(line), session,
						     session ? strlen(session) : 0), 0);
	} else {
		c.method = method;
		c.params = params;
	}
	assert_int_equal(proto_execute(ctx, &c, 1), 0);
	tree = c.params != NULL;
	assert_int_equal(proto_reply_text(ctx, &c, out), 0);
	assert_int_equal(docket_buf_putc(out, '\n'), 0);
	proto_call_dispose(&c);
	json_decref(req);
	return tree;
}

/* Every event of `l` as JSON without its time and hash (which differ between ledgers). */
static json_t *events_without_time(docket_ledger *l)
{
	docket_ledger_info info;
	json_t *all = json_array();

	assert_int_equal(docket_ledger_info_get(l, &info), 0);
	for (uint64_t seq = 1; seq <= info.events; seq++) {
		json_t *ev = NULL;

		assert_int_equal(ledger_event_json(l, seq, &ev), 0);
		json_object_del(ev, "time");
		json_object_del(ev, "hash");
		json_array_append_new(all, ev);
	}
	return all;
}

static void test_text_path_matches_tree_path(void **state)
{
	fixture *f = *state;
	static const struct {
		const char *line;
		int tree; /* the text path hands it to the tree path */
	} reqs[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.open\",\"params\":{\"session\":\"s1\",\"cwd\":\"/w\"}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"a\","
		  "\"tool\":\"shell\",\"args\":{\"command\":[\"echo\",\"a\"]},\"recovery\":\"idempotent\","
		  "\"decision\":{\"verdict\":\"allowed\",\"source\":\"runtime\"},\"dispatch_if_allowed\":true}}", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"three\",\"method\":\"tool.complete\",\"params\":{\"session\":\"s1\",\"invocation\":\"a\","
		  "\"status\":\"ok\",\"exit_code\":0,\"output\":\"a\\n\\u00e9\"}}", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tool.complete\",\"params\":{\"session\":\"s1\",\"invocation\":\"a\","
		  "\"status\":\"ok\",\"exit_code\":0,\"output\":\"a\\n\\u00e9\"}}", 0 },
		/* args of every JSON kind, spacing and escapes jansson writes otherwise */
		{ "{ \"jsonrpc\" : \"2.0\", \"id\":5, \"method\":\"tool.intent\", \"params\":{ \"session\":\"s1\", \"invocation\":\"b\","
		  "\"tool\":\"t\", \"args\":{\"r\":1.5e3, \"n\":[true,false,null,{},[]], \"s\":\"\\/\\u0041\\t\", \"z\":-0}}}", 0 },
		/* re-sent without a decision: the recorded one (tree) */
		{ "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"b\","
		  "\"tool\":\"t\",\"args\":{\"r\":1.5e3,\"n\":[true,false,null,{},[]],\"s\":\"/A\\t\",\"z\":-0}}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"c\",\"tool\":\"t\",\"bogus\":1}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tool.complete\",\"params\":{\"session\":\"s1\",\"invocation\":\"b\",\"status\":\"ok\",\"type\":\"x\"}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"d\",\"tool\":\"t\",\"epoch\":2}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"d\",\"tool\":\"t\",\"epoch\":1}}", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"e\",\"tool\":\"t\",\"time\":\"2026-01-01T00:00:00Z\"}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"e\",\"tool\":\"t\","
		  "\"decision\":{\"verdict\":\"allowed\",\"source\":\"docket\"}}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tool.complete\",\"params\":{\"session\":\"nope\",\"invocation\":\"a\",\"status\":\"ok\"}}", 0 }, /* the state machine refuses it */
		{ "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"f\",\"tool\":\"t\","
		  "\"decision\":{\"verdict\":\"denied\",\"source\":\"runtime\"},\"dispatch_if_allowed\":true}}", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"g\",\"tool\":\"t\","
		  "\"decision\":{\"verdict\":\"allowed\"},\"dispatch_if_allowed\":1}}", 0 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"tool.intent\",\"params\":{\"session\":\"s1\",\"invocation\":\"h\",\"tool\":\"t\","
		  "\"decision\":\"allowed\"}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"tool.complete\",\"params\":{\"session\":\"s1\",\"invocation\":\"g\",\"status\":\"error\"}}", 0 },
		/* authority mode: docket decides on the tree */
		{ "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"session.open\",\"params\":{\"session\":\"s2\",\"cwd\":\"/w\"}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"policy.set\",\"params\":{\"session\":\"s2\",\"format\":\"docket\",\"policy\":"
		  "{\"version\":1,\"commands\":[{\"pattern\":[\"git\"],\"decision\":\"allow\"}]}}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"tool.intent\",\"params\":{\"session\":\"s2\",\"invocation\":\"a\",\"tool\":\"shell\","
		  "\"args\":{\"command\":[\"git\",\"log\"]},\"dispatch_if_allowed\":true}}", 1 },
		{ "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tool.complete\",\"params\":{\"session\":\"s2\",\"invocation\":\"a\",\"status\":\"ok\"}}", 0 },
	};
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	char *dir2 = test_mkdtemp();
	docket_ledger *l2 = NULL;
	docket_runtime *rt2 = NULL;
	proto_options po;
	proto_ctx *text_ctx = NULL, *tree_ctx = NULL;
	proto_conn text_conn = { .epoch = 1, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
	proto_conn tree_conn = text_conn;
	docket_buf text_out = DOCKET_BUF_INIT, tree_out = DOCKET_BUF_INIT;
	json_t *a, *b;

	opts.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&l2, dir2, &opts), 0);
	assert_int_equal(docket_runtime_start(&rt2, l2, "test/1"), 0);
	memset(&po, 0, sizeof(po));
	assert_int_equal(proto_ctx_new(&text_ctx, f->l, &po), 0);
	assert_int_equal(proto_ctx_new(&tree_ctx, l2, &po), 0);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		size_t at = text_out.len;

		if (run_line(text_ctx, &text_conn, reqs[i].line, 1, &text_out) != reqs[i].tree)
			fail_msg("request %zu: %s the tree path", i, reqs[i].tree ? "expected" : "did not expect");
		assert_int_equal(run_line(tree_ctx, &tree_conn, reqs[i].line, 0, &tree_out), 1);
		if (strcmp(text_out.ptr, tree_out.ptr) != 0)
			fail_msg("request %zu: text path replied %s", i, text_out.ptr + at);
	}
	a = events_without_time(f->l);
	b = events_without_time(l2);
	assert_true(json_array_size(a) > 10);
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	docket_buf_dispose(&text_out);
	docket_buf_dispose(&tree_out);
	proto_ctx_free(text_ctx);
	proto_ctx_free(tree_ctx);
	docket_runtime_free(rt2);
	docket_ledger_free(l2);
	test_rmdir_free(dir2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_mode_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fencing_stale_runtime, setup, teardown),
		cmocka_unit_test_setup_teardown(test_authority_decides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_authority_revalidates_dispatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_authority_supersedes_open_approvals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_policy_set_narrows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_isolates_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_path_matches_tree_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recovery_every_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recovery_authority_evaluates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_supersede_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_supersede_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_supersede_after_revision_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_supersede_after_revision_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revision_race_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revision_race_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unbound_connection_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unbound_connection_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resends_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resends_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_call_can_ask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_apply_fences, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attach_same_peer_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roles_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roles_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_operator_context_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_operator_context_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_name_other_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_plan_own_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_apply_per_lineage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_context_from_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_call_schema_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_messages, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
