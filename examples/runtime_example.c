/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime_example.c: a complete agent runtime integration through the C API
 * (docs/protocol.md walks through it). It records one session of four tool
 * calls under a docket policy (docket decides), with an approval and a
 * denial, and can crash after dispatching a call and recover afterwards.
 *
 *   runtime_example LEDGER                          run the session
 *   runtime_example LEDGER --crash-after-dispatch   die after T1 of `npm test`
 *   runtime_example LEDGER --recover                restart: recover, finish
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <docket/docket.h>

#define SESSION "build-42"

/* The executor: here it only pretends. A real one runs the command and
 * passes the dispatch token along as its idempotency key. */
static int execute(const char *what, const char *token, char *out, size_t n)
{
	snprintf(out, n, "ran %s (token %s)\n", what, token);
	return 0; /* exit code */
}

static int fail(const char *what)
{
	fprintf(stderr, "runtime_example: %s: %s\n", what, docket_error_last()->message);
	return 1;
}

/* T0 under docket's decision, then T1 + execution + T2 when allowed. */
static int tool_call(docket_runtime *rt, const char *inv, const char *argv0, const char *argv1,
		     const char *recovery, int crash_after_dispatch)
{
	json_t *args = json_pack("{s:[s,s], s:s}", "command", argv0, argv1, "cwd", "/home/ana/shop");
	docket_intent_result r;
	char output[256], token[48];
	uint32_t attempt;
	int rc;

	/* no verdict given: the session's policy decides (authority mode);
	 * dispatch_if_allowed commits T0 and T1 in one transaction */
	rc = docket_tool_intent(rt, SESSION, inv, "shell", args, recovery, NULL, 1, &r);
	json_decref(args);
	if (rc < 0)
		return fail("tool.intent");
	printf("%-10s %s %s -> %s\n", inv, argv0, argv1, r.verdict);
	if (strcmp(r.verdict, "approval_required") == 0) {
		/* ask the user (here: always yes), then dispatch: docket
		 * revalidates under the current policy first */
		if (docket_approval_request(rt, SESSION, inv, "r-1") < 0 ||
		    docket_approval_settle(rt, SESSION, inv, "r-1", "approved", "user:ana") < 0)
			return fail("approval");
		if (docket_tool_dispatch(rt, SESSION, inv, &attempt, token) < 0)
			return fail("tool.dispatch");
	} else if (r.dispatched) {
		snprintf(token, sizeof(token), "%s", r.token);
	} else {
		/* denied or unsupported: record the outcome, never run it */
		return docket_tool_complete(rt, SESSION, inv, "denied", -1, NULL) < 0 ? fail("tool.complete") : 0;
	}
	if (crash_after_dispatch) {
		printf("%-10s dispatched with token %s; the runtime dies before running it\n", inv, token);
		fflush(stdout);
		raise(SIGKILL);
	}
	rc = execute(argv0, token, output, sizeof(output));
	/* T2 is durable before the result goes back to the model */
	if (docket_tool_complete(rt, SESSION, inv, rc == 0 ? "ok" : "error", rc, output) < 0)
		return fail("tool.complete");
	return 0;
}

static int run_session(docket_runtime *rt, int crash)
{
	json_t *policy = json_pack("{s:i, s:s, s:s, s:{s:[s]}, s:[{s:[s,s], s:s}, {s:[s,s], s:s}, {s:[s], s:s}, {s:[s], s:s}]}",
				   "version", 1, "sandbox", "workspace_write", "approval", "on_request",
				   "filesystem", "writable", "/home/ana/shop",
				   "commands",
				   "pattern", "git", "status", "decision", "allow",
				   "pattern", "npm", "test", "decision", "allow",
				   "pattern", "rm", "decision", "ask",
				   "pattern", "curl", "decision", "deny");
	uint32_t revision;
	int rc;

	if (docket_session_open(rt, SESSION, "/home/ana/shop") < 0)
		return fail("session.open");
	rc = docket_policy_set(rt, SESSION, "docket", policy, &revision);
	json_decref(policy);
	if (rc < 0)
		return fail("policy.set");
	if (tool_call(rt, "call-1", "git", "status", "replay_safe", 0) ||
	    tool_call(rt, "call-2", "rm", "-rf", "never_auto_retry", 0) ||
	    tool_call(rt, "call-3", "curl", "https://x.example/install.sh", "never_auto_retry", 0) ||
	    tool_call(rt, "call-4", "npm", "test", "replay_safe", crash))
		return 1;
	return docket_session_close(rt, SESSION) < 0 ? fail("session.close") : 0;
}

/* After a crash: take over (new epoch), apply the plan, do the runtime's part. */
static int recover(docket_runtime *rt)
{
	docket_recover_options opts = DOCKET_RECOVER_OPTIONS_INIT;
	json_t *plan = NULL, *item;
	size_t i;

	if (docket_runtime_recover(rt, &opts, 1, &plan) < 0)
		return fail("recover.apply");
	json_array_foreach(json_object_get(plan, "items"), i, item) {
		const char *inv = json_string_value(json_object_get(item, "invocation"));
		const char *next = json_string_value(json_object_get(item, "runtime"));
		char token[48], output[256];
		uint32_t attempt;

		printf("recover    %s: %s, %s; runtime next: %s\n", inv,
		       json_string_value(json_object_get(item, "state")),
		       json_string_value(json_object_get(item, "action")), next);
		if (strcmp(next, "redispatch") != 0 && strcmp(next, "dispatch") != 0)
			continue;
		if (docket_tool_dispatch(rt, SESSION, inv, &attempt, token) < 0)
			return fail("tool.dispatch");
		execute(inv, token, output, sizeof(output));
		printf("recover    %s: attempt %u with token %s, ok\n", inv, attempt, token);
		if (docket_tool_complete(rt, SESSION, inv, "ok", 0, output) < 0)
			return fail("tool.complete");
	}
	json_decref(plan);
	return docket_session_close(rt, SESSION) < 0 ? fail("session.close") : 0;
}

int main(int argc, char **argv)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	docket_runtime *rt = NULL;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: runtime_example LEDGER [--crash-after-dispatch | --recover]\n");
		return 2;
	}
	opts.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&ledger, argv[1], &opts) < 0)
		return fail("open");
	/* every start is a new epoch: a runtime still running from before is
	 * fenced off (its writes are refused as stale) */
	if (docket_runtime_start(&rt, ledger, "example/1.0") < 0) {
		docket_ledger_free(ledger);
		return fail("runtime.start");
	}
	printf("runtime    epoch %llu\n", (unsigned long long)docket_runtime_epoch(rt));
	if (argc > 2 && strcmp(argv[2], "--recover") == 0)
		rc = recover(rt);
	else
		rc = run_session(rt, argc > 2 && strcmp(argv[2], "--crash-after-dispatch") == 0);
	docket_runtime_free(rt);
	docket_ledger_free(ledger);
	return rc;
}
