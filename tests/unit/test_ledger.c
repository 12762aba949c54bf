/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ledger.c: the ledger core. Every invariant of DESIGN §3 (and docket's
 * 8-10) with its negative cases, round trips, batches, verify against
 * corruption, reindex, map growth and its cap, allocation failures,
 * dictionaries, file modes.
 */
#include "testutil.h"

#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "docket/audit.h"
#include "docket/export.h"
#include "exporters/export_internal.h"
#include "docket/ledger.h"
#include "ledger/ledger_sys.h"
#include "ledger/state_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct fixture {
	char *dir;
	docket_ledger *l;
} fixture;

static int setup(void **state)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	fixture *f = calloc(1, sizeof(*f));

	f->dir = test_mkdtemp();
	opts.flags = DOCKET_OPEN_CREATE;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	docket_ledger_free(f->l);
	test_rmdir_free(f->dir);
	free(f);
	return 0;
}

/* Append one event given as JSON text; returns the ledger's code. */
static int put(fixture *f, const char *text, docket_append_result *res)
{
	json_t *ev = test_json(text);
	docket_append_result local;
	int rc = docket_ledger_append_json(f->l, &ev, 1, res ? res : &local);

	json_decref(ev);
	return rc;
}

/* Append and require success. */
static uint64_t ok(fixture *f, const char *text)
{
	docket_append_result res;
	int rc = put(f, text, &res);

	if (rc != 0)
		fail_msg("append failed (%d): %s\n  event: %s", rc, docket_error_last()->message, text);
	return res.seq;
}

/* Append and require a failure with this code and invariant. */
static void refused(fixture *f, const char *text, int code, int invariant)
{
	int rc = put(f, text, NULL);

	if (rc != code)
		fail_msg("expected %d, got %d (%s) for %s", code, rc, docket_error_last()->message, text);
	assert_int_equal(docket_error_last()->invariant, invariant);
}

static uint64_t head(fixture *f)
{
	docket_ledger_info info;

	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	return info.events;
}

static void open_session(fixture *f, const char *s)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "{\"type\":\"session.opened\",\"session\":\"%s\",\"runtime\":\"t/1\"}", s);
	ok(f, buf);
}

static void intent(fixture *f, const char *inv, const char *verdict, const char *recovery)
{
	char buf[512], dec[128] = "", rec[96] = "";

	if (verdict)
		snprintf(dec, sizeof(dec), ",\"decision\":{\"verdict\":\"%s\",\"source\":\"runtime\"}", verdict);
	if (recovery)
		snprintf(rec, sizeof(rec), ",\"recovery\":\"%s\"", recovery);
	snprintf(buf, sizeof(buf),
		 "{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"%s\",\"tool\":\"shell\","
		 "\"args\":{\"command\":[\"ls\"]}%s%s}", inv, dec, rec);
	ok(f, buf);
}

#define EV(type, inv, extra) \
	"{\"type\":\"" type "\",\"session\":\"s1\",\"invocation\":\"" inv "\"" extra "}"

static int verify_ok(fixture *f)
{
	docket_verify_report rep;

	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	if (!rep.ok)
		print_message("verify: seq %llu: %s\n", (unsigned long long)rep.first_bad_seq, rep.problem);
	return rep.ok;
}

/* ---- invariant 1 ---- */

static void test_inv1_nothing_before_intent(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r1\""), DOCKET_ETRANSITION, 1);
	refused(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"approved\""), DOCKET_ETRANSITION, 1);
	refused(f, EV("tool.dispatched", "c1", ""), DOCKET_ETRANSITION, 1);
	refused(f, EV("tool.completed", "c1", ",\"status\":\"ok\""), DOCKET_ETRANSITION, 1);
	refused(f, EV("recovery.action", "c1", ",\"action\":\"redispatch\""), DOCKET_ETRANSITION, 1);
	assert_int_equal(head(f), 1);
}

static void test_inv1_intent_idempotent_and_conflict(void **state)
{
	fixture *f = *state;
	const char *a = EV("tool.intent", "c1", ",\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"]}");
	const char *a_later = EV("tool.intent", "c1", ",\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"]},"
				 "\"time\":\"2030-01-01T00:00:00Z\"");
	const char *b = EV("tool.intent", "c1", ",\"tool\":\"shell\",\"args\":{\"command\":[\"rm\"]}");
	docket_append_result r1, r2;

	open_session(f, "s1");
	assert_int_equal(put(f, a, &r1), 0);
	assert_int_equal(r1.duplicate, 0);
	assert_int_equal(put(f, a_later, &r2), 0); /* same content, another time: a re-send */
	assert_int_equal(r2.duplicate, 1);
	assert_int_equal(r2.seq, r1.seq);
	refused(f, b, DOCKET_ECONFLICT, 1);
	assert_int_equal(head(f), 2);
	assert_true(verify_ok(f));
}

/* ---- invariant 2 ---- */

static void test_inv2_request_needs_approval_required(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r1\""), DOCKET_ETRANSITION, 2);
	intent(f, "c2", "denied", NULL);
	refused(f, EV("approval.requested", "c2", ",\"request\":\"r1\""), DOCKET_ETRANSITION, 2);
	intent(f, "c3", "unsupported", NULL);
	refused(f, EV("approval.requested", "c3", ",\"request\":\"r1\""), DOCKET_ETRANSITION, 2);
	intent(f, "c4", "approval_required", NULL);
	ok(f, EV("approval.requested", "c4", ",\"request\":\"r1\""));
	/* one open request at a time */
	refused(f, EV("approval.requested", "c4", ",\"request\":\"r2\""), DOCKET_ETRANSITION, 2);
	/* same request again: idempotent */
	ok(f, EV("approval.requested", "c4", ",\"request\":\"r1\""));
	refused(f, EV("approval.requested", "c4", ",\"request\":\"r1\",\"prompt\":\"other\""), DOCKET_ECONFLICT, 2);
	/* undecided (record mode) may ask */
	intent(f, "c5", NULL, NULL);
	ok(f, EV("approval.requested", "c5", ",\"request\":\"r5\""));
	assert_true(verify_ok(f));
}

static void test_inv2_never_asks(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	ok(f, "{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":1,\"format\":\"codex\","
	      "\"policy\":{\"approval_policy\":\"never\",\"sandbox_policy\":{\"type\":\"danger-full-access\"}}}");
	intent(f, "c1", "approval_required", NULL);
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r1\""), DOCKET_ETRANSITION, 2);
	/* the next revision asks again */
	ok(f, "{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":2,\"format\":\"codex\","
	      "\"policy\":{\"approval_policy\":\"on-request\"}}");
	ok(f, EV("approval.requested", "c1", ",\"request\":\"r1\""));

	open_session(f, "s2");
	ok(f, "{\"type\":\"policy.revised\",\"session\":\"s2\",\"revision\":1,\"format\":\"claude\","
	      "\"policy\":{\"permissions\":{\"defaultMode\":\"bypassPermissions\"}}}");
	ok(f, "{\"type\":\"tool.intent\",\"session\":\"s2\",\"invocation\":\"c1\",\"tool\":\"Bash\"}");
	refused(f, "{\"type\":\"approval.requested\",\"session\":\"s2\",\"invocation\":\"c1\",\"request\":\"r\"}",
		DOCKET_ETRANSITION, 2);
}

static void test_inv2_not_after_dispatch(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	intent(f, "c1", NULL, NULL);
	ok(f, EV("tool.dispatched", "c1", ""));
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r1\""), DOCKET_ETRANSITION, 2);
}

/* ---- invariant 3 ---- */

static void test_inv3_settle_once(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	intent(f, "c1", "approval_required", NULL);
	refused(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"approved\""), DOCKET_ETRANSITION, 3);
	ok(f, EV("approval.requested", "c1", ",\"request\":\"r1\""));
	refused(f, EV("approval.settled", "c1", ",\"request\":\"zz\",\"result\":\"approved\""), DOCKET_ETRANSITION, 3);
	ok(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"approved\",\"actor\":\"user:ana\""));
	/* same again: idempotent */
	uint64_t before = head(f);
	ok(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"approved\",\"actor\":\"user:ana\""));
	assert_int_equal(head(f), before);
	refused(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"denied\",\"actor\":\"user:ana\""),
		DOCKET_ECONFLICT, 3);
}

static void test_inv3_no_outcome_while_open(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	intent(f, "c1", "approval_required", NULL);
	ok(f, EV("approval.requested", "c1", ",\"request\":\"r1\""));
	refused(f, EV("tool.completed", "c1", ",\"status\":\"cancelled\""), DOCKET_ETRANSITION, 3);
	ok(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"aborted\""));
	ok(f, EV("tool.completed", "c1", ",\"status\":\"cancelled\""));
	assert_true(verify_ok(f));
}

/* ---- invariant 4 ---- */

static void test_inv4_dispatchable(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	intent(f, "c1", "approval_required", NULL);
	refused(f, EV("tool.dispatched", "c1", ""), DOCKET_ETRANSITION, 4);
	ok(f, EV("approval.requested", "c1", ",\"request\":\"r1\""));
	refused(f, EV("tool.dispatched", "c1", ""), DOCKET_ETRANSITION, 4);
	ok(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"denied\""));
	refused(f, EV("tool.dispatched", "c1", ""), DOCKET_ETRANSITION, 4);
	ok(f, EV("tool.completed", "c1", ",\"status\":\"denied\""));

	intent(f, "c2", "denied", NULL);
	refused(f, EV("tool.dispatched", "c2", ""), DOCKET_ETRANSITION, 4);
	intent(f, "c3", "unsupported", NULL);
	refused(f, EV("tool.dispatched", "c3", ""), DOCKET_ETRANSITION, 4);

	intent(f, "c4", "approval_required", NULL);
	ok(f, EV("approval.requested", "c4", ",\"request\":\"r4\""));
	ok(f, EV("approval.settled", "c4", ",\"request\":\"r4\",\"result\":\"approved_for_session\""));
	ok(f, EV("tool.dispatched", "c4", ""));
	refused(f, EV("tool.dispatched", "c4", ""), DOCKET_ETRANSITION, 4);
	assert_true(verify_ok(f));
}

static void test_inv4_superseded(void **state)
{
	fixture *f = *state;
	const char *rev = "{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":%d,\"format\":\"opaque\","
			  "\"policy\":{\"r\":%d}}";
	char buf[256];

	open_session(f, "s1");
	intent(f, "c1", "approval_required", NULL);
	ok(f, EV("approval.requested", "c1", ",\"request\":\"r1\""));
	/* only docket supersedes, when a revision changed the verdict: not
	 * while the policy is the one the request was made under */
	refused(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"superseded\","
		      "\"decision\":{\"verdict\":\"allowed\",\"source\":\"docket\",\"policy_revision\":1}"),
		DOCKET_ETRANSITION, 3);
	snprintf(buf, sizeof(buf), rev, 1, 1);
	ok(f, buf);
	/* the decision must name the revision in force, and decide */
	refused(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"superseded\","
		      "\"decision\":{\"verdict\":\"allowed\",\"source\":\"docket\",\"policy_revision\":2}"),
		DOCKET_ETRANSITION, 3);
	refused(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"superseded\","
		      "\"decision\":{\"verdict\":\"approval_required\",\"source\":\"docket\",\"policy_revision\":1}"),
		DOCKET_ETRANSITION, 3);
	ok(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"superseded\","
		 "\"decision\":{\"verdict\":\"allowed\",\"source\":\"docket\",\"policy_revision\":1}"));
	ok(f, EV("tool.dispatched", "c1", ""));
	intent(f, "c2", "approval_required", NULL);
	ok(f, EV("approval.requested", "c2", ",\"request\":\"r2\""));
	snprintf(buf, sizeof(buf), rev, 2, 2);
	ok(f, buf);
	ok(f, EV("approval.settled", "c2", ",\"request\":\"r2\",\"result\":\"superseded\","
		 "\"decision\":{\"verdict\":\"denied\",\"source\":\"docket\",\"policy_revision\":2}"));
	refused(f, EV("tool.dispatched", "c2", ""), DOCKET_ETRANSITION, 4);
	/* a request made under the current revision cannot be superseded by it */
	intent(f, "c3", "approval_required", NULL);
	ok(f, EV("approval.requested", "c3", ",\"request\":\"r3\""));
	refused(f, EV("approval.settled", "c3", ",\"request\":\"r3\",\"result\":\"superseded\","
		      "\"decision\":{\"verdict\":\"allowed\",\"source\":\"docket\",\"policy_revision\":2}"),
		DOCKET_ETRANSITION, 3);
	assert_true(verify_ok(f));
}

static void test_inv4_redispatch_only_through_recovery(void **state)
{
	fixture *f = *state;
	docket_append_result r1, r2;

	open_session(f, "s1");
	/* replay_safe: a new attempt gets a new token */
	intent(f, "c1", "allowed", "replay_safe");
	assert_int_equal(put(f, EV("tool.dispatched", "c1", ""), &r1), 0);
	assert_int_equal(r1.attempt, 1);
	assert_true(strncmp(r1.token, "dt-", 3) == 0);
	refused(f, EV("tool.dispatched", "c1", ""), DOCKET_ETRANSITION, 4);
	/* an explicit re-send of attempt 1 is idempotent (lost reply) */
	char resend[256];
	snprintf(resend, sizeof(resend), EV("tool.dispatched", "c1", ",\"attempt\":1,\"token\":\"%s\""), r1.token);
	assert_int_equal(put(f, resend, &r2), 0);
	assert_int_equal(r2.duplicate, 1);
	assert_string_equal(r2.token, r1.token);
	ok(f, "{\"type\":\"runtime.started\",\"runtime\":\"t/2\"}");
	ok(f, EV("recovery.action", "c1", ",\"action\":\"redispatch\""));
	assert_int_equal(put(f, EV("tool.dispatched", "c1", ""), &r2), 0);
	assert_int_equal(r2.attempt, 2);
	assert_string_not_equal(r2.token, r1.token);
	refused(f, EV("tool.dispatched", "c1", ""), DOCKET_ETRANSITION, 4);

	/* idempotent: same token; a redispatch needs a restart (issue 10) */
	intent(f, "c2", "allowed", "idempotent");
	assert_int_equal(put(f, EV("tool.dispatched", "c2", ""), &r1), 0);
	refused(f, EV("recovery.action", "c2", ",\"action\":\"redispatch\""), DOCKET_ETRANSITION, 4);
	ok(f, "{\"type\":\"runtime.started\",\"runtime\":\"t/3\"}");
	ok(f, EV("recovery.action", "c2", ",\"action\":\"redispatch\""));
	assert_int_equal(put(f, EV("tool.dispatched", "c2", ""), &r2), 0);
	assert_int_equal(r2.attempt, 2);
	assert_string_equal(r2.token, r1.token);

	/* never_auto_retry (and the default) and reconcile never re-dispatch */
	intent(f, "c3", "allowed", "never_auto_retry");
	ok(f, EV("tool.dispatched", "c3", ""));
	refused(f, EV("recovery.action", "c3", ",\"action\":\"redispatch\""), DOCKET_ETRANSITION, 4);
	intent(f, "c4", "allowed", NULL);
	ok(f, EV("tool.dispatched", "c4", ""));
	refused(f, EV("recovery.action", "c4", ",\"action\":\"redispatch\""), DOCKET_ETRANSITION, 4);
	intent(f, "c5", "allowed", "reconcile");
	ok(f, EV("tool.dispatched", "c5", ""));
	refused(f, EV("recovery.action", "c5", ",\"action\":\"redispatch\""), DOCKET_ETRANSITION, 4);
	ok(f, EV("recovery.action", "c5", ",\"action\":\"reconcile\""));
	ok(f, EV("tool.completed", "c5", ",\"status\":\"ok\",\"exit_code\":0"));
	assert_true(verify_ok(f));
}


/* ---- issue 10: authority inside the transaction ---- */

static void policy_rev(fixture *f, int revision, const char *format, const char *policy)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), "{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":%d,"
		 "\"format\":\"%s\",\"policy\":%s}", revision, format, policy);
	ok(f, buf);
}

/* Invariant 2 from the parsed model: YAML text, all_of layers, Claude dontAsk. */
static void test_inv2_never_asks_every_format(void **state)
{
	fixture *f = *state;
	static const struct { const char *format, *policy; int never; } cases[] = {
		{ "docket", "\"version: 1\\napproval: never\\n\"", 1 },
		{ "docket", "\"version: 1\\napproval: on_request\\n\"", 0 },
		{ "docket", "{\"all_of\":[{\"format\":\"docket\",\"policy\":{\"version\":1}},"
			    "{\"format\":\"docket\",\"policy\":{\"version\":1,\"approval\":\"never\"}}]}", 1 },
		{ "docket", "{\"all_of\":[{\"format\":\"docket\",\"policy\":{\"version\":1}},"
			    "{\"format\":\"claude\",\"policy\":{\"permissions\":{\"defaultMode\":\"dontAsk\"}}}]}", 1 },
		{ "claude", "{\"permissions\":{\"defaultMode\":\"dontAsk\"}}", 1 },
		{ "claude", "{\"permissions\":{\"defaultMode\":\"bypassPermissions\"}}", 1 },
		{ "claude", "{\"permissions\":{\"defaultMode\":\"acceptEdits\"}}", 0 },
		{ "codex", "{\"approval_policy\":\"never\"}", 1 },
		{ "codex", "{\"approval_policy\":\"on-request\"}", 0 },
		{ "docket", "{\"version\":1,\"approval\":\"never\"}", 1 },
	};
	char inv[32], buf[512];

	open_session(f, "s1");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		policy_rev(f, (int)i + 1, cases[i].format, cases[i].policy);
		snprintf(inv, sizeof(inv), "c%zu", i);
		intent(f, inv, "approval_required", NULL);
		snprintf(buf, sizeof(buf), "{\"type\":\"approval.requested\",\"session\":\"s1\",\"invocation\":\"%s\","
			 "\"request\":\"r\"}", inv);
		if (cases[i].never) {
			refused(f, buf, DOCKET_ETRANSITION, 2);
		} else {
			ok(f, buf);
			snprintf(buf, sizeof(buf), "{\"type\":\"approval.settled\",\"session\":\"s1\",\"invocation\":\"%s\","
				 "\"request\":\"r\",\"result\":\"denied\"}", inv);
			ok(f, buf);
		}
	}
	assert_true(verify_ok(f));
}

/*
 * The never-asks answer is remembered per (format, document digest): the same
 * text under another format is decided again (Codex's approval_policy means
 * nothing to Claude Code), and a repeat of the document is decided alike.
 */
static void test_inv2_never_asks_remembered(void **state)
{
	fixture *f = *state;
	static const struct { const char *session, *format, *policy; int never; } cases[] = {
		{ "s1", "codex", "{\"approval_policy\":\"never\"}", 1 },
		{ "s2", "claude", "{\"approval_policy\":\"never\"}", 0 },
		{ "s3", "codex", "{\"approval_policy\":\"never\"}", 1 },
		{ "s4", "codex", "{\"approval_policy\":\"on-request\"}", 0 },
		{ "s5", "claude", "{\"approval_policy\":\"never\"}", 0 },
	};
	char buf[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *sess = cases[i].session;

		snprintf(buf, sizeof(buf), "{\"type\":\"session.opened\",\"session\":\"%s\",\"runtime\":\"t/1\"}", sess);
		ok(f, buf);
		snprintf(buf, sizeof(buf), "{\"type\":\"policy.revised\",\"session\":\"%s\",\"revision\":1,"
			 "\"format\":\"%s\",\"policy\":%s}", sess, cases[i].format, cases[i].policy);
		ok(f, buf);
		snprintf(buf, sizeof(buf), "{\"type\":\"tool.intent\",\"session\":\"%s\",\"invocation\":\"c\","
			 "\"tool\":\"shell\",\"decision\":{\"verdict\":\"approval_required\"}}", sess);
		ok(f, buf);
		snprintf(buf, sizeof(buf), "{\"type\":\"approval.requested\",\"session\":\"%s\",\"invocation\":\"c\","
			 "\"request\":\"r\"}", sess);
		if (cases[i].never)
			refused(f, buf, DOCKET_ETRANSITION, 2);
		else
			ok(f, buf);
	}
	assert_true(verify_ok(f));
}

/* A refusing settlement is final (DESIGN §3): no new request, no dispatch. */
static void test_inv3_refusal_is_final(void **state)
{
	fixture *f = *state;
	static const char *const results[] = { "denied", "aborted", "expired", "closed" };
	char inv[16], buf[512];

	open_session(f, "s1");
	for (size_t i = 0; i < 4; i++) {
		snprintf(inv, sizeof(inv), "c%zu", i);
		intent(f, inv, "approval_required", NULL);
		snprintf(buf, sizeof(buf), "{\"type\":\"approval.requested\",\"session\":\"s1\",\"invocation\":\"%s\",\"request\":\"r1\"}", inv);
		ok(f, buf);
		snprintf(buf, sizeof(buf), "{\"type\":\"approval.settled\",\"session\":\"s1\",\"invocation\":\"%s\","
			 "\"request\":\"r1\",\"result\":\"%s\"}", inv, results[i]);
		ok(f, buf);
		snprintf(buf, sizeof(buf), "{\"type\":\"approval.requested\",\"session\":\"s1\",\"invocation\":\"%s\",\"request\":\"r2\"}", inv);
		refused(f, buf, DOCKET_ETRANSITION, 3);
		snprintf(buf, sizeof(buf), "{\"type\":\"tool.dispatched\",\"session\":\"s1\",\"invocation\":\"%s\"}", inv);
		refused(f, buf, DOCKET_ETRANSITION, 4);
		snprintf(buf, sizeof(buf), "{\"type\":\"tool.completed\",\"session\":\"s1\",\"invocation\":\"%s\",\"status\":\"denied\"}", inv);
		ok(f, buf);
	}
	/* granted or superseded results may ask again (a re-decision) */
	intent(f, "c9", "approval_required", NULL);
	ok(f, EV("approval.requested", "c9", ",\"request\":\"r1\""));
	ok(f, EV("approval.settled", "c9", ",\"request\":\"r1\",\"result\":\"approved\""));
	ok(f, EV("tool.dispatched", "c9", ""));
	assert_true(verify_ok(f));
}

/* Duplicates answer with the original seq (settlement, policy revision). */
static void test_duplicates_answer_original_seq(void **state)
{
	fixture *f = *state;
	docket_append_result r;
	const char *pol = "{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":1,\"format\":\"opaque\",\"policy\":{\"a\":1}}";
	const char *settle = EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"approved\"");

	open_session(f, "s1");
	uint64_t pseq = ok(f, pol);
	intent(f, "c1", "approval_required", NULL);
	ok(f, EV("approval.requested", "c1", ",\"request\":\"r1\""));
	uint64_t sseq = ok(f, settle);
	ok(f, EV("tool.dispatched", "c1", ""));
	assert_int_equal(put(f, settle, &r), 0);
	assert_int_equal(r.duplicate, 1);
	assert_int_equal(r.seq, sseq);
	assert_int_equal(put(f, pol, &r), 0);
	assert_int_equal(r.duplicate, 1);
	assert_int_equal(r.seq, pseq);
	/* after session.close: identical re-sends pass, anything new is refused */
	uint64_t cseq = ok(f, EV("tool.completed", "c1", ",\"status\":\"ok\",\"exit_code\":0"));
	ok(f, "{\"type\":\"session.closed\",\"session\":\"s1\"}");
	assert_int_equal(put(f, EV("tool.completed", "c1", ",\"status\":\"ok\",\"exit_code\":0"), &r), 0);
	assert_int_equal(r.duplicate, 1);
	assert_int_equal(r.seq, cseq);
	assert_int_equal(put(f, settle, &r), 0);
	assert_int_equal(r.seq, sseq);
	refused(f, EV("tool.completed", "c1", ",\"status\":\"error\",\"exit_code\":1"), DOCKET_ECONFLICT, 5);
	refused(f, EV("tool.intent", "c2", ",\"tool\":\"t\""), DOCKET_ETRANSITION, 8);
	refused(f, "{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":2,\"format\":\"opaque\",\"policy\":{}}",
		DOCKET_ETRANSITION, 8);
	assert_true(verify_ok(f));
}

/* A revalidated dispatch names its revision and verdict; the append checks both. */
static void test_inv4_revalidation_in_txn(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	policy_rev(f, 1, "opaque", "{\"a\":1}");
	intent(f, "c1", "allowed", NULL);
	policy_rev(f, 2, "opaque", "{\"a\":2}");
	/* decided under revision 1, the session moved on: conflict, ask again */
	refused(f, EV("tool.dispatched", "c1", ",\"policy_revision\":1,\"verdict\":\"allowed\""), DOCKET_ECONFLICT, 4);
	/* the current revision asks: an approval first */
	refused(f, EV("tool.dispatched", "c1", ",\"policy_revision\":2,\"verdict\":\"approval_required\""),
		DOCKET_ETRANSITION, 4);
	refused(f, EV("tool.dispatched", "c1", ",\"policy_revision\":2,\"verdict\":\"denied\""), DOCKET_ETRANSITION, 4);
	/* a re-decision on the request names the current revision */
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r1\",\"decision\":{\"verdict\":\"approval_required\","
		      "\"source\":\"docket\",\"policy_revision\":1}"), DOCKET_ECONFLICT, 2);
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r1\",\"decision\":{\"verdict\":\"allowed\","
		      "\"source\":\"docket\",\"policy_revision\":2}"), DOCKET_ETRANSITION, 2);
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r1\""), DOCKET_ETRANSITION, 2);
	ok(f, EV("approval.requested", "c1", ",\"request\":\"r1\",\"decision\":{\"verdict\":\"approval_required\","
		 "\"source\":\"docket\",\"policy_revision\":2}"));
	ok(f, EV("approval.settled", "c1", ",\"request\":\"r1\",\"result\":\"approved\""));
	ok(f, EV("tool.dispatched", "c1", ",\"policy_revision\":2,\"verdict\":\"approval_required\""));
	assert_true(verify_ok(f));
}

/* An explicit attempt that is not the next one, or a token that is not the ledger's, is refused. */
static void test_inv4_attempt_and_token_checked(void **state)
{
	fixture *f = *state;
	docket_append_result r1, r2;
	char buf[512];

	open_session(f, "s1");
	intent(f, "c1", "allowed", "replay_safe");
	refused(f, EV("tool.dispatched", "c1", ",\"attempt\":2"), DOCKET_ECONFLICT, 4);
	refused(f, EV("tool.dispatched", "c1", ",\"token\":\"dt-00000000000000000000000000000000\""), DOCKET_ECONFLICT, 4);
	assert_int_equal(put(f, EV("tool.dispatched", "c1", ",\"attempt\":1"), &r1), 0);
	/* the duplicate path compares the token too */
	refused(f, EV("tool.dispatched", "c1", ",\"attempt\":1,\"token\":\"dt-00000000000000000000000000000000\""),
		DOCKET_ETRANSITION, 4);
	snprintf(buf, sizeof(buf), EV("tool.dispatched", "c1", ",\"attempt\":1,\"token\":\"%s\""), r1.token);
	assert_int_equal(put(f, buf, &r2), 0);
	assert_int_equal(r2.duplicate, 1);
	assert_true(verify_ok(f));
}

/* ---- invariant 5 ---- */

static void test_inv5_one_outcome(void **state)
{
	fixture *f = *state;
	docket_append_result r;

	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	ok(f, EV("tool.dispatched", "c1", ""));
	uint64_t seq = ok(f, EV("tool.completed", "c1", ",\"status\":\"ok\",\"exit_code\":0"));
	assert_int_equal(put(f, EV("tool.completed", "c1", ",\"status\":\"ok\",\"exit_code\":0"), &r), 0);
	assert_int_equal(r.duplicate, 1);
	assert_int_equal(r.seq, seq);
	refused(f, EV("tool.completed", "c1", ",\"status\":\"error\",\"exit_code\":1"), DOCKET_ECONFLICT, 5);
	refused(f, EV("tool.dispatched", "c1", ""), DOCKET_ETRANSITION, 5);
	refused(f, EV("tool.dispatched", "c1", ",\"attempt\":2"), DOCKET_ETRANSITION, 5);
	/* re-sending the dispatch that happened (attempt 1) is a duplicate */
	assert_int_equal(put(f, EV("tool.dispatched", "c1", ",\"attempt\":1"), &r), 0);
	assert_int_equal(r.duplicate, 1);
	refused(f, EV("recovery.action", "c1", ",\"action\":\"indeterminate\""), DOCKET_ETRANSITION, 5);
	refused(f, EV("approval.requested", "c1", ",\"request\":\"r9\""), DOCKET_ETRANSITION, 5);
}

/* ---- invariant 6 ---- */

static void test_inv6_revisions(void **state)
{
	fixture *f = *state;
	const char *p = "{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":%d,\"format\":\"docket\","
			"\"policy\":{\"rules\":[%d]}}";
	char buf[256];

	open_session(f, "s1");
	snprintf(buf, sizeof(buf), p, 2, 2);
	refused(f, buf, DOCKET_ETRANSITION, 6);
	snprintf(buf, sizeof(buf), p, 1, 1);
	ok(f, buf);
	ok(f, buf); /* identical re-send */
	/* another document at an existing revision is a conflict (issue 10) */
	snprintf(buf, sizeof(buf), p, 1, 5);
	refused(f, buf, DOCKET_ECONFLICT, 6);
	snprintf(buf, sizeof(buf), p, 3, 3);
	refused(f, buf, DOCKET_ETRANSITION, 6);
	snprintf(buf, sizeof(buf), p, 2, 2);
	ok(f, buf);
	assert_int_equal(head(f), 3);
}

/* ---- invariant 7 ---- */

static void test_inv7_epochs(void **state)
{
	fixture *f = *state;
	docket_append_result r;

	assert_int_equal(put(f, "{\"type\":\"runtime.started\",\"runtime\":\"a/1\"}", &r), 0);
	assert_int_equal(r.epoch, 1);
	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	assert_int_equal(put(f, "{\"type\":\"runtime.started\",\"runtime\":\"a/1\"}", &r), 0);
	assert_int_equal(r.epoch, 2);
	/* the zombie runtime of epoch 1 cannot dispatch */
	refused(f, EV("tool.dispatched", "c1", ",\"epoch\":1"), DOCKET_ESTALE, 7);
	refused(f, EV("tool.dispatched", "c1", ",\"epoch\":3"), DOCKET_ESTALE, 7);
	refused(f, "{\"type\":\"runtime.started\",\"runtime\":\"a/1\",\"epoch\":2}", DOCKET_ESTALE, 7);
	assert_int_equal(put(f, EV("tool.dispatched", "c1", ",\"epoch\":2"), &r), 0);
	assert_int_equal(r.epoch, 2);
	assert_true(verify_ok(f));
}

/* Invariant 7 per lineage: another runtime's start fences nobody; the same
 * lineage's fences its earlier instance, and the refusal names it. */
static void test_inv7_lineages(void **state)
{
	fixture *f = *state;
	docket_append_result r;
	const docket_error *e;

	assert_int_equal(put(f, "{\"type\":\"runtime.started\",\"runtime\":\"a\",\"uid\":1000}", &r), 0);
	assert_int_equal(r.epoch, 1);
	ok(f, "{\"type\":\"session.opened\",\"session\":\"s1\",\"epoch\":1}");
	ok(f, EV("tool.intent", "c1", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"},\"epoch\":1"));
	/* runtime b, and runtime a of another uid, are other lineages */
	assert_int_equal(put(f, "{\"type\":\"runtime.started\",\"runtime\":\"b\",\"uid\":1000}", &r), 0);
	assert_int_equal(put(f, "{\"type\":\"runtime.started\",\"runtime\":\"a\",\"uid\":1001}", &r), 0);
	assert_int_equal(r.epoch, 3);
	ok(f, EV("tool.dispatched", "c1", ",\"epoch\":1"));
	/* epoch 2 (b) is still b's current epoch */
	ok(f, EV("tool.intent", "c2", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"},\"epoch\":2"));
	/* a (uid 1000) again: its epoch 1 is fenced, with who and what to do */
	assert_int_equal(put(f, "{\"type\":\"runtime.started\",\"runtime\":\"a\",\"uid\":1000}", &r), 0);
	assert_int_equal(r.epoch, 4);
	refused(f, EV("tool.completed", "c1", ",\"status\":\"ok\",\"epoch\":1"), DOCKET_ESTALE, 7);
	e = docket_error_last();
	assert_non_null(strstr(e->message, "runtime \"a\" (uid 1000) was started again at epoch 4 (seq "));
	assert_non_null(strstr(e->message, "call runtime.start"));
	ok(f, EV("tool.completed", "c1", ",\"status\":\"ok\",\"epoch\":4"));
	ok(f, EV("tool.dispatched", "c2", ",\"epoch\":2"));
	/* a uid is docket's to give: out of range is refused */
	refused(f, "{\"type\":\"runtime.started\",\"runtime\":\"a\",\"uid\":-1}", DOCKET_EINVALID, 0);
	assert_true(verify_ok(f));
	/* reindex rebuilds the lineages: a is still at epoch 4 */
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	refused(f, EV("tool.intent", "c3", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"},\"epoch\":1"), DOCKET_ESTALE, 7);
	ok(f, EV("tool.intent", "c3", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"},\"epoch\":3"));
}

/* Invariant 7 inside one batch: a restart of the lineage fences the
 * epoch the events before it in the same transaction carried (the state
 * keeps the last epoch's lineage between events: the restart drops it). */
static int put_batch(fixture *f, const char *const *text, size_t n)
{
	json_t *ev[8];
	int rc;

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		ev[i] = test_json(text[i]);
	rc = docket_ledger_append_json(f->l, ev, n, NULL);
	for (size_t i = 0; i < n; i++)
		json_decref(ev[i]);
	return rc;
}

static void test_inv7_restart_in_one_batch(void **state)
{
	fixture *f = *state;
	const char *batch[] = {
		"{\"type\":\"runtime.started\",\"runtime\":\"a\",\"uid\":1000}",
		"{\"type\":\"session.opened\",\"session\":\"s1\",\"epoch\":1}",
		EV("tool.intent", "c1", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"},\"epoch\":1"),
		"{\"type\":\"runtime.started\",\"runtime\":\"a\",\"uid\":1000}",
		EV("tool.dispatched", "c1", ",\"epoch\":1"),
	};

	assert_int_equal(put_batch(f, batch, 5), DOCKET_ESTALE);
	assert_int_equal(docket_error_last()->invariant, 7);
	assert_non_null(strstr(docket_error_last()->message, "was started again at epoch 2"));
	assert_int_equal(head(f), 0);
	assert_int_equal(put_batch(f, batch, 4), 0);
	assert_int_equal(head(f), 4);
}

/* ---- invariant 8 ---- */

static void test_inv8_session_lifecycle(void **state)
{
	fixture *f = *state;

	refused(f, EV("tool.intent", "c1", ",\"tool\":\"shell\""), DOCKET_ETRANSITION, 8);
	refused(f, "{\"type\":\"session.closed\",\"session\":\"s1\"}", DOCKET_ETRANSITION, 8);
	open_session(f, "s1");
	open_session(f, "s1"); /* identical: idempotent */
	assert_int_equal(head(f), 1);
	refused(f, "{\"type\":\"session.opened\",\"session\":\"s1\",\"runtime\":\"other\"}", DOCKET_ECONFLICT, 8);
	intent(f, "c1", "allowed", NULL);
	refused(f, "{\"type\":\"session.closed\",\"session\":\"s1\"}", DOCKET_ETRANSITION, 8);
	ok(f, EV("tool.dispatched", "c1", ""));
	ok(f, EV("tool.completed", "c1", ",\"status\":\"ok\""));
	ok(f, "{\"type\":\"session.closed\",\"session\":\"s1\"}");
	ok(f, "{\"type\":\"session.closed\",\"session\":\"s1\"}"); /* idempotent */
	refused(f, EV("tool.intent", "c2", ",\"tool\":\"shell\""), DOCKET_ETRANSITION, 8);
	assert_true(verify_ok(f));
}

/* ---- invariant 9 ---- */

static void test_inv9_outcome_agrees(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	refused(f, EV("tool.completed", "c1", ",\"status\":\"ok\""), DOCKET_ETRANSITION, 9);
	refused(f, EV("tool.completed", "c1", ",\"status\":\"indeterminate\""), DOCKET_ETRANSITION, 9);
	refused(f, EV("tool.completed", "c1", ",\"status\":\"unsupported\""), DOCKET_ETRANSITION, 9);
	ok(f, EV("tool.dispatched", "c1", ""));
	refused(f, EV("tool.completed", "c1", ",\"status\":\"denied\""), DOCKET_ETRANSITION, 9);
	ok(f, EV("tool.completed", "c1", ",\"status\":\"timeout\""));
	intent(f, "c2", "unsupported", NULL);
	ok(f, EV("tool.completed", "c2", ",\"status\":\"unsupported\""));
}

/* ---- invariant 10 ---- */

static void test_inv10_recovery_fits_state(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");
	intent(f, "c1", "allowed", "replay_safe");
	refused(f, EV("recovery.action", "c1", ",\"action\":\"close\""), DOCKET_ETRANSITION, 10);
	refused(f, EV("recovery.action", "c1", ",\"action\":\"redispatch\""), DOCKET_ETRANSITION, 10);
	refused(f, EV("recovery.action", "c1", ",\"action\":\"evaluate\""), DOCKET_ETRANSITION, 10);
	ok(f, EV("recovery.action", "c1", ",\"action\":\"dispatch\""));
	intent(f, "c2", "approval_required", NULL);
	ok(f, EV("approval.requested", "c2", ",\"request\":\"r2\""));
	ok(f, EV("recovery.action", "c2", ",\"action\":\"close\""));
	ok(f, EV("approval.settled", "c2", ",\"request\":\"r2\",\"result\":\"closed\""));
	ok(f, EV("tool.completed", "c2", ",\"status\":\"denied\""));
	intent(f, "c3", NULL, NULL);
	ok(f, EV("recovery.action", "c3", ",\"action\":\"evaluate\""));
	assert_true(verify_ok(f));
}

/* ---- record mode inference and pending states ---- */

typedef struct pending_seen {
	int n;
	char states[16][32];
	char invs[16][32];
	char tools[16][32];
} pending_seen;

static int collect_pending(void *ctx, const docket_pending_info *p)
{
	pending_seen *s = ctx;

	if (s->n < 16) {
		snprintf(s->states[s->n], sizeof(s->states[0]), "%s", p->state);
		snprintf(s->invs[s->n], sizeof(s->invs[0]), "%s", p->invocation);
		snprintf(s->tools[s->n], sizeof(s->tools[0]), "%s", p->tool ? p->tool : "");
		s->n++;
	}
	return 0;
}

static void test_pending_states(void **state)
{
	fixture *f = *state;
	pending_seen seen = { 0 };

	open_session(f, "s1");
	intent(f, "a-undecided", NULL, NULL);
	intent(f, "b-ready", "allowed", NULL);
	intent(f, "c-needs", "approval_required", NULL);
	intent(f, "d-awaiting", "approval_required", NULL);
	ok(f, EV("approval.requested", "d-awaiting", ",\"request\":\"r\""));
	intent(f, "e-doubt", "allowed", NULL);
	ok(f, EV("tool.dispatched", "e-doubt", ""));
	intent(f, "f-refused", "denied", NULL);
	intent(f, "g-done", "allowed", NULL);
	ok(f, EV("tool.dispatched", "g-done", ""));
	ok(f, EV("tool.completed", "g-done", ",\"status\":\"ok\""));
	assert_int_equal(docket_ledger_pending(f->l, "s1", collect_pending, &seen), 0);
	assert_int_equal(seen.n, 6);
	assert_string_equal(seen.states[0], "undecided");
	assert_string_equal(seen.states[1], "ready");
	assert_string_equal(seen.states[2], "needs_approval");
	assert_string_equal(seen.states[3], "awaiting_approval");
	assert_string_equal(seen.states[4], "in_doubt");
	assert_string_equal(seen.states[5], "refused");
	/* another session's pending calls are not listed under s1 */
	open_session(f, "s10");
	ok(f, "{\"type\":\"tool.intent\",\"session\":\"s10\",\"invocation\":\"x\",\"tool\":\"t\"}");
	seen.n = 0;
	assert_int_equal(docket_ledger_pending(f->l, "s1", collect_pending, &seen), 0);
	assert_int_equal(seen.n, 6);
	seen.n = 0;
	assert_int_equal(docket_ledger_pending(f->l, NULL, collect_pending, &seen), 0);
	assert_int_equal(seen.n, 7);
	/* the tool comes from each call's own intent (the record does not keep it) */
	for (int i = 0; i < 6; i++)
		assert_string_equal(seen.tools[i], "shell");
	assert_string_equal(seen.invs[6], "x");
	assert_string_equal(seen.tools[6], "t");
}

static uint64_t pending_index_keys(fixture *f)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	uint64_t n = 0;
	int rc;

	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	assert_int_equal(mdb_cursor_open(txn, f->l->dbi.pending, &cur), 0);
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		n += !state_pending_is_sentinel(k.mv_data, k.mv_size);
	assert_int_equal(rc, MDB_NOTFOUND);
	mdb_cursor_close(cur);
	store_txn_abort(f->l, txn);
	return n;
}

static uint64_t pending_counted(fixture *f)
{
	docket_ledger_info info;

	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	return info.pending;
}

/* The index names only unfinished calls whose records left the session's
 * recent list; the listing merges both in index order; the count is all. */
static void test_pending_index_only_moved(void **state)
{
	fixture *f = *state;
	pending_seen seen = { 0 };
	char id[8];

	open_session(f, "s1");
	intent(f, "c0", "allowed", NULL);
	assert_int_equal(pending_index_keys(f), 0);
	assert_int_equal(pending_counted(f), 1);
	assert_int_equal(docket_ledger_pending(f->l, "s1", collect_pending, &seen), 0);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.invs[0], "c0");
	/* c8 is the ninth: c0..c7 move to the table, c1 finished before */
	ok(f, EV("tool.dispatched", "c0", ""));
	for (int i = 1; i <= 8; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		intent(f, id, "allowed", NULL);
		if (i == 1)
			ok(f, EV("tool.completed", "c1", ",\"status\":\"denied\""));
	}
	assert_int_equal(pending_index_keys(f), 7);
	assert_int_equal(pending_counted(f), 8);
	intent(f, "a9", "allowed", NULL); /* in the recent list, sorts first */
	seen.n = 0;
	assert_int_equal(docket_ledger_pending(f->l, NULL, collect_pending, &seen), 0);
	assert_int_equal(seen.n, 9);
	assert_string_equal(seen.invs[0], "a9");
	assert_string_equal(seen.invs[1], "c0");
	assert_string_equal(seen.states[1], "in_doubt");
	assert_string_equal(seen.invs[2], "c2");
	assert_string_equal(seen.invs[8], "c8");
	/* an outcome takes a moved call out of the index, a recent one out of the list */
	ok(f, EV("tool.completed", "c0", ",\"status\":\"ok\""));
	ok(f, EV("tool.completed", "a9", ",\"status\":\"denied\""));
	assert_int_equal(pending_index_keys(f), 6);
	assert_int_equal(pending_counted(f), 7);
	seen.n = 0;
	assert_int_equal(docket_ledger_pending(f->l, "s1", collect_pending, &seen), 0);
	assert_int_equal(seen.n, 7);
	assert_string_equal(seen.invs[0], "c2");
	assert_string_equal(seen.invs[6], "c8");
	assert_true(verify_ok(f));
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	assert_int_equal(pending_index_keys(f), 6);
	assert_int_equal(pending_counted(f), 7);
	assert_true(verify_ok(f));
}

/* ---- batches: all or nothing ---- */

static void test_batch_all_or_nothing(void **state)
{
	fixture *f = *state;
	const char *lines[] = {
		"{\"type\":\"session.opened\",\"session\":\"s1\"}",
		EV("tool.intent", "c1", ",\"tool\":\"shell\",\"decision\":{\"verdict\":\"allowed\"}"),
		EV("tool.dispatched", "c1", ""),
		EV("tool.dispatched", "c1", ""), /* breaks invariant 4 */
		EV("tool.completed", "c1", ",\"status\":\"ok\""),
	};
	json_t *evs[5];
	docket_append_result res[5];

	for (int i = 0; i < 5; i++)
		evs[i] = test_json(lines[i]);
	assert_int_equal(docket_ledger_append_json(f->l, evs, 5, res), DOCKET_ETRANSITION);
	assert_int_equal(docket_error_last()->event_index, 4);
	assert_non_null(strstr(docket_error_last()->message, "event 4 of 5"));
	assert_non_null(strstr(docket_error_last()->message, "invariant 4"));
	assert_non_null(strstr(docket_error_last()->message, "\"c1\""));
	assert_int_equal(head(f), 0);
	/* the same events without the bad one go in together */
	json_decref(evs[3]);
	evs[3] = evs[4];
	assert_int_equal(docket_ledger_append_json(f->l, evs, 4, res), 0);
	assert_int_equal(res[0].seq, 1);
	assert_int_equal(res[3].seq, 4);
	assert_int_equal(res[2].attempt, 1);
	assert_int_equal(head(f), 4);
	for (int i = 0; i < 4; i++)
		json_decref(evs[i]);
	/* an invalid event (schema) is refused before anything is touched */
	refused(f, "{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c2\",\"tool\":\"x\",\"bogus\":1}",
		DOCKET_EINVALID, 0);
	assert_int_equal(head(f), 4);
}

/* ---- round trip through the ledger ---- */

static int collect_json(void *ctx, uint64_t seq, json_t *ev)
{
	json_t *arr = ctx;

	(void)seq;
	json_array_append(arr, ev);
	return 0;
}

static void test_round_trip_every_type(void **state)
{
	fixture *f = *state;
	const char *lines[] = {
		"{\"type\":\"runtime.started\",\"time\":\"2025-01-02T03:04:05Z\",\"runtime\":\"maka/0.9\"}",
		"{\"type\":\"session.opened\",\"time\":\"2025-01-02T03:04:06.5Z\",\"session\":\"s1\",\"runtime\":\"codex/0.60.1\","
		"\"platform\":\"linux\",\"cwd\":\"/home/u/app\",\"workspace_roots\":[\"/home/u/app\"],\"env\":{\"TMPDIR\":\"/tmp\"}}",
		"{\"type\":\"policy.revised\",\"time\":\"2025-01-02T03:04:07Z\",\"session\":\"s1\",\"revision\":1,\"format\":\"docket\","
		"\"policy\":{\"approval\":\"on_request\",\"rules\":[{\"prefix\":[\"git\"]}]},\"actor\":\"user:ana\",\"reason\":\"initial\"}",
		"{\"type\":\"tool.intent\",\"time\":\"2025-01-02T03:04:08Z\",\"session\":\"s1\",\"invocation\":\"call_1\",\"turn\":\"t1\","
		"\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"git status && npm test\"],\"cwd\":\"/home/u/app\"},"
		"\"recovery\":\"replay_safe\",\"decision\":{\"verdict\":\"approval_required\",\"source\":\"runtime\",\"reasons\":[\"npm\"]}}",
		"{\"type\":\"approval.requested\",\"time\":\"2025-01-02T03:04:09Z\",\"session\":\"s1\",\"invocation\":\"call_1\","
		"\"request\":\"r1\",\"reviewer\":\"user\",\"prompt\":\"run npm test?\",\"risk\":{\"level\":\"low\",\"category\":\"exec\","
		"\"summary\":\"tests\"},\"scope\":[\"npm test\"]}",
		"{\"type\":\"approval.settled\",\"time\":\"2025-01-02T03:04:19Z\",\"session\":\"s1\",\"invocation\":\"call_1\","
		"\"request\":\"r1\",\"result\":\"approved_for_session\",\"actor\":\"user:ana\"}",
		"{\"type\":\"tool.dispatched\",\"time\":\"2025-01-02T03:04:20Z\",\"session\":\"s1\",\"invocation\":\"call_1\"}",
		"{\"type\":\"runtime.started\",\"time\":\"2025-01-02T03:04:20.5Z\",\"runtime\":\"maka/0.9\"}",
		"{\"type\":\"recovery.action\",\"time\":\"2025-01-02T03:04:21Z\",\"session\":\"s1\",\"invocation\":\"call_1\","
		"\"action\":\"redispatch\",\"detail\":\"restart\"}",
		"{\"type\":\"tool.dispatched\",\"time\":\"2025-01-02T03:04:22Z\",\"session\":\"s1\",\"invocation\":\"call_1\"}",
		"{\"type\":\"tool.completed\",\"time\":\"2025-01-02T03:04:23Z\",\"session\":\"s1\",\"invocation\":\"call_1\","
		"\"status\":\"ok\",\"exit_code\":0,\"output\":\"ok\\n\",\"duration_ms\":41}",
		"{\"type\":\"session.closed\",\"time\":\"2025-01-02T03:05:00Z\",\"session\":\"s1\",\"reason\":\"done\"}",
	};
	size_t n = sizeof(lines) / sizeof(lines[0]);
	json_t *out = json_array();

	for (size_t i = 0; i < n; i++)
		ok(f, lines[i]);
	assert_int_equal(docket_ledger_read_json(f->l, NULL, collect_json, out), 0);
	assert_int_equal(json_array_size(out), n);
	for (size_t i = 0; i < n; i++) {
		json_t *in = test_json(lines[i]);
		json_t *got = json_deep_copy(json_array_get(out, i));

		assert_int_equal(json_integer_value(json_object_get(got, "seq")), i + 1);
		assert_int_equal(strlen(json_string_value(json_object_get(got, "hash"))), 64);
		/* a session.opened without an epoch keeps 0: no runtime owns it (invariant 7) */
		assert_int_equal(json_integer_value(json_object_get(got, "epoch")), i == 1 ? 0 : i < 7 ? 1 : 2);
		/* drop what the ledger added; what remains is what went in */
		json_object_del(got, "seq");
		json_object_del(got, "hash");
		json_object_del(got, "epoch");
		if (strcmp(json_string_value(json_object_get(in, "type")), "tool.dispatched") == 0) {
			assert_true(json_integer_value(json_object_get(got, "attempt")) >= 1);
			json_object_del(got, "attempt");
			json_object_del(got, "token");
		}
		if (!json_equal(in, got)) {
			char *a = json_dumps(in, JSON_SORT_KEYS), *b = json_dumps(got, JSON_SORT_KEYS);
			fail_msg("event %zu differs:\n in: %s\nout: %s", i, a, b);
		}
		json_decref(in);
		json_decref(got);
	}
	/* reading one session, and from a seq */
	json_array_clear(out);
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	ro.session = "s1";
	ro.since = 5;
	assert_int_equal(docket_ledger_read_json(f->l, &ro, collect_json, out), 0);
	assert_int_equal(json_array_size(out), n - 5); /* not the second runtime.started */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(out, 0), "seq")), 5);
	json_decref(out);
	assert_true(verify_ok(f));
}


/* ---- the chain formula, checked by a separate implementation ---- */

/*
 * Python's hashlib recomputes h[n] = SHA-256(h[n-1] || be64(n) || payload)
 * from h[0] = 32 zero bytes over every stored payload, and must arrive at
 * every hash the frames store; two fixed vectors check chain_next() itself
 * (the expected digests come from Python, never from docket).
 */
static const char *CHAIN_PY =
	"import hashlib, struct, sys\n"
	"prev = bytes(32)\n"
	"def unhex(x):\n"
	"    return b'' if x == '-' else bytes.fromhex(x)\n"
	"for line in open(sys.argv[1]):\n"
	"    kind, a, b, c, d = (line.split() + [''] * 5)[:5]\n"
	"    if kind == 'v':\n"
	"        h = hashlib.sha256(unhex(a) + struct.pack('>Q', int(b)) + unhex(c)).hexdigest()\n"
	"    else:\n"
	"        h = hashlib.sha256(prev + struct.pack('>Q', int(a)) + unhex(b)).hexdigest()\n"
	"        prev = bytes.fromhex(h)\n"
	"        d = c\n"
	"    if h != d:\n"
	"        sys.exit('mismatch: ' + line.strip() + ' python ' + h)\n"
	"print('ok')\n";

static void hex_line(FILE *fp, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%02x", p[i]);
	if (n == 0)
		fputs("-", fp);
}

static void test_chain_vectors_python(void **state)
{
	fixture *f = *state;
	static const uint8_t payload2[] = "docket";
	uint8_t prev[LEDGER_HASH_LEN], h[LEDGER_HASH_LEN];
	char list[4096], script[4096], cmd[9000], out[256] = "";
	ledger_reader r;
	MDB_txn *txn = NULL;
	FILE *fp, *py;

	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	ok(f, EV("tool.dispatched", "c1", ""));
	ok(f, EV("tool.completed", "c1", ",\"status\":\"ok\",\"exit_code\":0,\"output\":\"hello\""));
	snprintf(list, sizeof(list), "%s/chain.txt", f->dir);
	snprintf(script, sizeof(script), "%s/chain.py", f->dir);
	assert_non_null(fp = fopen(script, "w"));
	fputs(CHAIN_PY, fp);
	fclose(fp);
	assert_non_null(fp = fopen(list, "w"));
	/* the fixed vectors: python's digest must equal chain_next's */
	memset(prev, 0, sizeof(prev));
	assert_int_equal(chain_next(h, prev, 1, NULL, 0), 0);
	fputs("v ", fp); hex_line(fp, prev, sizeof(prev)); fputs(" 1 - ", fp); hex_line(fp, h, sizeof(h)); fputc('\n', fp);
	for (size_t i = 0; i < sizeof(prev); i++)
		prev[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(chain_next(h, prev, ((uint64_t)1 << 40) + 5, payload2, 6), 0);
	fprintf(fp, "v "); hex_line(fp, prev, sizeof(prev));
	fprintf(fp, " %llu ", (unsigned long long)(((uint64_t)1 << 40) + 5));
	hex_line(fp, payload2, 6); fputc(' ', fp); hex_line(fp, h, sizeof(h)); fputc('\n', fp);
	/* every stored event: its payload and the hash the reader gives for it
	 * (recomputed over its segment and checked against the stored one) */
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	reader_init(&r, f->l, txn);
	for (uint64_t seq = 1; seq <= head(f); seq++) {
		const uint8_t *p;
		uint8_t h2[LEDGER_HASH_LEN];
		size_t n;

		assert_int_equal(reader_payload(&r, seq, &p, &n), 0);
		assert_int_equal(reader_hash(&r, seq, h2), 0);
		fprintf(fp, "e %llu ", (unsigned long long)seq);
		hex_line(fp, p, n);
		fputc(' ', fp);
		hex_line(fp, h2, sizeof(h2));
		fputc('\n', fp);
	}
	reader_dispose(&r);
	store_txn_abort(f->l, txn);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s' 2>&1", script, list);
	assert_non_null(py = popen(cmd, "r"));
	if (!fgets(out, sizeof(out), py))
		out[0] = '\0';
	if (pclose(py) != 0 || strcmp(out, "ok\n") != 0)
		fail_msg("python disagrees with the chain: %s", out);
}


/* docket's clock on appends without a time is monotonic per ledger: a clock
 * that is behind the last stamp (stepped back, another writer) does not
 * stamp an event before it. */
static void test_stamp_monotonic(void **state)
{
	fixture *f = *state;
	MDB_txn *txn = NULL;
	json_t *ev = NULL;
	uint64_t later = (uint64_t)4102444800u * 1000000u; /* 2100-01-01T00:00:00Z */

	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(store_meta_put_u64(txn, f->l, "clock_us", later), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	open_session(f, "s1");
	open_session(f, "s2");
	assert_int_equal(ledger_event_json(f->l, head(f) - 1, &ev), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "time")), "2100-01-01T00:00:00.000001Z");
	json_decref(ev);
	assert_int_equal(ledger_event_json(f->l, head(f), &ev), 0);
	assert_string_equal(json_string_value(json_object_get(ev, "time")), "2100-01-01T00:00:00.000002Z");
	json_decref(ev);
	/* a time the input gives is kept as given (imports, record) */
	ok(f, "{\"type\":\"session.opened\",\"session\":\"s3\",\"time\":\"2025-01-01T00:00:00Z\"}");
	assert_true(verify_ok(f));
}

/* ---- verify: corruption is found and named ---- */

/*
 * Flip one byte of the stored frame of `seq`, `at` bytes into it (negative:
 * from its end). The frame is read through LMDB, then found in data.mdb by
 * its bytes (they include a unique chain hash). Copy-on-write leaves stale
 * copies of pages in the file, so every copy is flipped.
 */
static void flip_frame_byte(const char *dir, uint64_t seq, long at)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint8_t key[8];
	MDB_val k = { 8, key }, v;
	char path[4096];
	unsigned char *file, *hit, *frame;
	long size, copies = 0;
	size_t pos;
	FILE *fp;

	docket_be64_put(key, seq);
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
	assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "events", 0, &dbi), 0);
	assert_int_equal(mdb_get(txn, dbi, &k, &v), 0);
	frame = malloc(v.mv_size);
	memcpy(frame, v.mv_data, v.mv_size);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	pos = at >= 0 ? (size_t)at : v.mv_size - (size_t)(-at);

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	size = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	file = malloc((size_t)size);
	assert_int_equal(fread(file, 1, (size_t)size, fp), (size_t)size);
	fclose(fp);
	for (hit = file; (hit = memmem(hit, (size_t)(file + size - hit), frame, v.mv_size)); hit++) {
		hit[pos] ^= 0x20;
		copies++;
	}
	assert_true(copies > 0);
	fp = fopen(path, "r+b");
	assert_non_null(fp);
	assert_int_equal(fwrite(file, 1, (size_t)size, fp), (size_t)size);
	fclose(fp);
	free(file);
	free(frame);
}

static void fill_session(fixture *f, int calls)
{
	char buf[512];

	open_session(f, "s1");
	for (int i = 0; i < calls; i++) {
		snprintf(buf, sizeof(buf), EV("tool.intent", "c%d", ",\"tool\":\"shell\",\"args\":{\"command\":[\"echo\",\"%d\"]},"
			 "\"decision\":{\"verdict\":\"allowed\"}"), i, i);
		ok(f, buf);
		snprintf(buf, sizeof(buf), EV("tool.dispatched", "c%d", ""), i);
		ok(f, buf);
		snprintf(buf, sizeof(buf), EV("tool.completed", "c%d", ",\"status\":\"ok\",\"exit_code\":0,\"output\":\"%d\""), i, i);
		ok(f, buf);
	}
}

/* verify's report, the same at any chunk size (the rebuild's chunks, the
 * tree walk resuming across them, the redo of a chunk). */
static void verify_chunked(fixture *f, docket_verify_report *rep)
{
	uint64_t saved = ledger_verify_chunk;
	docket_verify_report small;

	assert_int_equal(docket_ledger_verify(f->l, rep), 0);
	ledger_verify_chunk = 4;
	assert_int_equal(docket_ledger_verify(f->l, &small), 0);
	ledger_verify_chunk = saved;
	assert_int_equal(small.ok, rep->ok);
	assert_int_equal(small.first_bad_seq, rep->first_bad_seq);
	assert_int_equal(small.events_checked, rep->events_checked);
	assert_string_equal(small.problem, rep->problem);
}

static void test_verify_finds_flipped_byte(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_verify_report rep;

	fill_session(f, 10);
	assert_true(verify_ok(f));
	docket_ledger_free(f->l);
	f->l = NULL;
	/* a byte of the body of event 17 */
	flip_frame_byte(f->dir, 17, -1);
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	verify_chunked(f, &rep);
	assert_false(rep.ok);
	assert_int_equal(rep.first_bad_seq, 17);
	assert_non_null(strstr(rep.problem, "seq 17"));
	docket_ledger_free(f->l);
	f->l = NULL;
	flip_frame_byte(f->dir, 17, -1); /* repair */
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	assert_true(verify_ok(f));
	docket_ledger_free(f->l);
	f->l = NULL;
	/* a byte of the chain hash stored in the header of event 5 */
	flip_frame_byte(f->dir, 5, 20);
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	verify_chunked(f, &rep);
	assert_false(rep.ok);
	assert_int_equal(rep.first_bad_seq, 5);
}

/* `calls` allowed calls (T0, T1, T2) in session s1, appended 300 events per
 * transaction: a big ledger, fast. */
static void fill_bulk(fixture *f, int calls)
{
	json_t *evs[300];
	size_t n = 0;
	char buf[512];

	open_session(f, "s1");
	for (int i = 0; i < calls; i++) {
		snprintf(buf, sizeof(buf), EV("tool.intent", "c%d", ",\"tool\":\"shell\",\"args\":{\"command\":[\"echo\",\"%d\"]},"
			 "\"decision\":{\"verdict\":\"allowed\"}"), i, i);
		evs[n++] = test_json(buf);
		snprintf(buf, sizeof(buf), EV("tool.dispatched", "c%d", ""), i);
		evs[n++] = test_json(buf);
		snprintf(buf, sizeof(buf), EV("tool.completed", "c%d", ",\"status\":\"ok\",\"exit_code\":0"), i);
		evs[n++] = test_json(buf);
		if (n == 300 || i == calls - 1) {
			if (docket_ledger_append_json(f->l, evs, n, NULL) != 0)
				fail_msg("bulk append: %s", docket_error_last()->message);
			for (size_t j = 0; j < n; j++)
				json_decref(evs[j]);
			n = 0;
		}
	}
}

/* ---- verify: the hashing worker gives the serial verdicts (issue 34) ---- */

/* The ledger at `dir` (closed), edited through LMDB: its `events` table. */
typedef struct raw_events {
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
} raw_events;

static void raw_begin(raw_events *e, const char *dir)
{
	assert_int_equal(mdb_env_create(&e->env), 0);
	assert_int_equal(mdb_env_set_maxdbs(e->env, 16), 0);
	assert_int_equal(mdb_env_open(e->env, dir, MDB_NOTLS, 0600), 0);
	assert_int_equal(mdb_txn_begin(e->env, NULL, 0, &e->txn), 0);
	assert_int_equal(mdb_dbi_open(e->txn, "events", 0, &e->dbi), 0);
}

static void raw_end(raw_events *e)
{
	assert_int_equal(mdb_txn_commit(e->txn), 0);
	mdb_env_close(e->env);
}

/* The first seqs of the segments, and the value of one (copied). */
static size_t raw_keys(raw_events *e, uint64_t *keys, size_t max)
{
	MDB_cursor *cur;
	MDB_val k, v;
	size_t n = 0;

	assert_int_equal(mdb_cursor_open(e->txn, e->dbi, &cur), 0);
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && n < max;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		keys[n++] = docket_be64_get(k.mv_data);
	mdb_cursor_close(cur);
	return n;
}

static uint8_t *raw_get(raw_events *e, uint64_t seq, size_t *len)
{
	uint8_t key[8], *copy;
	MDB_val k = { 8, key }, v;

	docket_be64_put(key, seq);
	assert_int_equal(mdb_get(e->txn, e->dbi, &k, &v), 0);
	copy = malloc(v.mv_size);
	memcpy(copy, v.mv_data, v.mv_size);
	*len = v.mv_size;
	return copy;
}

static void raw_put(raw_events *e, uint64_t seq, const uint8_t *p, size_t len)
{
	uint8_t key[8];
	MDB_val k = { 8, key }, v = { len, (void *)p };

	docket_be64_put(key, seq);
	assert_int_equal(mdb_put(e->txn, e->dbi, &k, &v, 0), 0);
}

/* Where a format-3 segment's part A and part B start (its index read by
 * hand: n entries of a kind byte and a LEB128 length, part B's codec, part
 * A's size as LEB128). */
static uint64_t leb_at(const uint8_t *p, size_t *pos)
{
	uint64_t v = 0;

	for (int shift = 0;; shift += 7) {
		uint8_t b = p[(*pos)++];

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static void seg_parts(const uint8_t *seg, size_t len, size_t parts[2])
{
	size_t pos = 38, n = (size_t)seg[4] << 8 | seg[5];
	uint64_t size_a;

	assert_int_equal(seg[0], 3);
	for (size_t i = 0; i < n; i++) {
		pos++;
		(void)leb_at(seg, &pos);
	}
	pos++;
	size_a = leb_at(seg, &pos);
	parts[0] = pos;
	parts[1] = pos + (size_t)size_a;
	assert_true(parts[1] <= len);
}

/*
 * Verify the ledger at f->dir (closed) with the worker off, on for runs of
 * 1 event in chunks of 100 (runs cut by chunks), and on for runs of 64:
 * every report is the serial one (returned in *rep).
 */
static void verify_modes(fixture *f, docket_verify_report *rep)
{
	static const struct {
		uint32_t min;
		uint64_t chunk;
	} modes[] = { { 0, 16384 }, { 1, 100 }, { 64, 16384 } };
	uint32_t saved_min = ledger_verify_parallel_min;
	uint64_t saved_chunk = ledger_verify_chunk;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;

	opts.flags = DOCKET_OPEN_READONLY;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		docket_verify_report got;

		ledger_verify_parallel_min = modes[i].min;
		ledger_verify_chunk = modes[i].chunk;
		assert_int_equal(docket_ledger_verify(f->l, i ? &got : rep), 0);
		if (!i)
			continue;
		assert_int_equal(got.ok, rep->ok);
		assert_int_equal(got.first_bad_seq, rep->first_bad_seq);
		assert_int_equal(got.events_checked, rep->events_checked);
		assert_string_equal(got.problem, rep->problem);
	}
	ledger_verify_parallel_min = saved_min;
	ledger_verify_chunk = saved_chunk;
	docket_ledger_free(f->l);
	f->l = NULL;
}

/* One byte of segment `seq`'s value flipped at `at` (twice: put back). */
static void flip_byte(fixture *f, uint64_t seq, size_t at)
{
	raw_events e;
	size_t len;
	uint8_t *seg;

	raw_begin(&e, f->dir);
	seg = raw_get(&e, seq, &len);
	seg[at % len] ^= 0x20;
	raw_put(&e, seq, seg, len);
	raw_end(&e);
	free(seg);
}

/* ... verified, put back. */
static void flip_verify(fixture *f, uint64_t seq, size_t at, docket_verify_report *rep)
{
	flip_byte(f, seq, at);
	verify_modes(f, rep);
	flip_byte(f, seq, at);
}

static void test_verify_parallel_same_verdicts(void **state)
{
	fixture *f = *state;
	uint64_t keys[16];
	size_t n, len0, len1;
	raw_events e;
	docket_verify_report rep;
	uint8_t *a, *b;

	fill_bulk(f, 400);
	docket_ledger_free(f->l);
	f->l = NULL;
	raw_begin(&e, f->dir);
	n = raw_keys(&e, keys, 16);
	raw_end(&e);
	assert_true(n >= 4);
	verify_modes(f, &rep);
	assert_true(rep.ok);
	assert_int_equal(rep.events_checked, 1201);
	/* a changed byte anywhere in any segment: header, index, either part */
	for (size_t i = 0; i < n; i++) {
		uint64_t last = i + 1 < n ? keys[i + 1] - 1 : 1201;
		size_t parts[2], at[9];

		raw_begin(&e, f->dir);
		a = raw_get(&e, keys[i], &len0);
		raw_end(&e);
		seg_parts(a, len0, parts);
		free(a);
		at[0] = 1, at[1] = 3, at[2] = 6, at[3] = 37;            /* codec, flags, stored hash */
		at[4] = parts[0] + 1, at[5] = (parts[0] + parts[1]) / 2; /* part A */
		at[6] = parts[1] + 1, at[7] = len0 - 1;                  /* part B */
		if (parts[1] == len0)                                    /* none */
			at[6] = parts[0];
		at[8] = 38;                                              /* a kind in the index */
		for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			flip_verify(f, keys[i], at[j], &rep);
			assert_false(rep.ok);
			/* the index's kinds are outside the chain, and readers
			 * skip events by them: verify compares each with its
			 * event, and names the first event's seq */
			if (j == 8) {
				assert_int_equal(rep.first_bad_seq, keys[i]);
				assert_non_null(strstr(rep.problem, "segment index says kind"));
				continue;
			}
			assert_true(rep.first_bad_seq >= keys[i] && rep.first_bad_seq <= last);
			/* the stored chain hash of a segment: found at its joint */
			if (j == 2 || j == 3) {
				assert_int_equal(rep.first_bad_seq, last);
				assert_non_null(strstr(rep.problem, "chain hash does not match"));
			}
		}
	}
	/* a dropped segment: its first seq is missing */
	raw_begin(&e, f->dir);
	a = raw_get(&e, keys[2], &len0);
	{
		uint8_t key[8];
		MDB_val k = { 8, key };

		docket_be64_put(key, keys[2]);
		assert_int_equal(mdb_del(e.txn, e.dbi, &k, NULL), 0);
	}
	raw_end(&e);
	verify_modes(f, &rep);
	assert_false(rep.ok);
	assert_int_equal(rep.first_bad_seq, keys[2]);
	/* two segments of the same size swapped: the first is found at its joint */
	raw_begin(&e, f->dir);
	raw_put(&e, keys[2], a, len0);
	b = raw_get(&e, keys[3], &len1);
	assert_int_equal(keys[3] - keys[2], keys[2] - keys[1]);
	raw_put(&e, keys[2], b, len1);
	raw_put(&e, keys[3], a, len0);
	raw_end(&e);
	verify_modes(f, &rep);
	assert_false(rep.ok);
	assert_true(rep.first_bad_seq >= keys[2] && rep.first_bad_seq < keys[3]);
	/* put back: whole again */
	raw_begin(&e, f->dir);
	raw_put(&e, keys[2], a, len0);
	raw_put(&e, keys[3], b, len1);
	raw_end(&e);
	verify_modes(f, &rep);
	assert_true(rep.ok);
	free(a);
	free(b);
}

/* ---- export: the chain hashed on the worker gives the serial output (issue 34) ---- */

typedef struct export_result {
	int rc;
	char problem[sizeof(docket_error_last()->message)];
	char *out;
	size_t len;
} export_result;

static void export_jsonl(docket_ledger *l, uint64_t since, export_result *got)
{
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	FILE *out = open_memstream(&got->out, &got->len);

	o.since_seq = since;
	docket_error_clear();
	got->rc = docket_export(l, &o, out, NULL);
	snprintf(got->problem, sizeof(got->problem), "%s", got->rc < 0 ? docket_error_last()->message : "");
	assert_int_equal(fclose(out), 0);
}

/*
 * `export --format jsonl` of the ledger at f->dir (closed) from `since`,
 * the worker off (the serial run, in *serial: the caller frees its out),
 * then on for segments of 1 and of 64 events: the same return, message
 * and bytes every time. *jobs: the segments the last run hashed on it.
 */
static void export_modes(fixture *f, uint64_t since, export_result *serial, unsigned long *jobs)
{
	static const uint32_t mins[] = { 0, 1, 64 };
	uint32_t saved = ledger_verify_parallel_min;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;

	opts.flags = DOCKET_OPEN_READONLY;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	for (size_t i = 0; i < sizeof(mins) / sizeof(mins[0]); i++) {
		export_result got = { 0, "", NULL, 0 };
		unsigned long before = atomic_load(&seg_hash_jobs);

		ledger_verify_parallel_min = mins[i];
		export_jsonl(f->l, since, i ? &got : serial);
		*jobs = atomic_load(&seg_hash_jobs) - before;
		if (!i) {
			assert_int_equal(*jobs, 0);
			continue;
		}
		assert_int_equal(got.rc, serial->rc);
		assert_string_equal(got.problem, serial->problem);
		assert_int_equal(got.len, serial->len);
		assert_memory_equal(got.out, serial->out, got.len);
		free(got.out);
	}
	ledger_verify_parallel_min = saved;
	docket_ledger_free(f->l);
	f->l = NULL;
}

/* Events in segment i of the n whose first seqs are keys (the ledger's last seq: `last`). */
static uint64_t seg_events(const uint64_t *keys, size_t n, size_t i, uint64_t last)
{
	return (i + 1 < n ? keys[i + 1] : last + 1) - keys[i];
}

/* fill_bulk(f, 400) (1,201 events), the ledger closed: the first seqs of its segments. */
static size_t bulk_closed(fixture *f, uint64_t *keys, size_t max)
{
	raw_events e;
	size_t n;

	fill_bulk(f, 400);
	docket_ledger_free(f->l);
	f->l = NULL;
	raw_begin(&e, f->dir);
	n = raw_keys(&e, keys, max);
	raw_end(&e);
	return n;
}

static size_t count_lines(const export_result *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->len; i++)
		n += r->out[i] == '\n';
	return n;
}

/* The lines, their hashes and the blocks they are written in are the
 * serial ones, from the start and from inside a segment; every segment of
 * 64 events or more is hashed on the worker. */
static void test_export_hashed_same_bytes(void **state)
{
	fixture *f = *state;
	uint64_t keys[16];
	size_t n, big = 0, big_late = 0;
	export_result r = { 0, "", NULL, 0 };
	unsigned long jobs;

	n = bulk_closed(f, keys, 16);
	for (size_t i = 0; i < n; i++) {
		big += seg_events(keys, n, i, 1201) >= 64;
		big_late += i >= 2 && seg_events(keys, n, i, 1201) >= 64;
	}
	assert_true(big >= 4);
	export_modes(f, 0, &r, &jobs);
	assert_int_equal(r.rc, 0);
	assert_int_equal(count_lines(&r), 1201);
	assert_int_equal(jobs, big);
	assert_non_null(strstr(r.out, "\"hash\":\""));
	assert_null(strstr(r.out, export_hash_pending));
	free(r.out);
	export_modes(f, keys[2] + 5, &r, &jobs);
	assert_int_equal(r.rc, 0);
	assert_int_equal(count_lines(&r), 1201 - (keys[2] + 5) + 1);
	assert_int_equal(jobs, big_late);
	free(r.out);
}

/* A changed byte of a segment (its stored hash, either part, the codec)
 * fails the export as the serial one fails: same message, same lines
 * written before it (none of that segment's). */
static void test_export_hashed_tamper(void **state)
{
	fixture *f = *state;
	uint64_t keys[16];
	size_t n, len;
	raw_events e;
	unsigned long jobs;

	n = bulk_closed(f, keys, 16);
	for (size_t i = 0; i < n; i++) {
		size_t parts[2], at[5];
		uint8_t *seg;

		raw_begin(&e, f->dir);
		seg = raw_get(&e, keys[i], &len);
		raw_end(&e);
		seg_parts(seg, len, parts);
		free(seg);
		at[0] = 6, at[1] = 37;                                   /* the stored hash */
		at[2] = (parts[0] + parts[1]) / 2, at[3] = len - 1;      /* part A, part B */
		at[4] = 1;                                               /* the codec */
		for (size_t j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			export_result r = { 0, "", NULL, 0 };

			flip_byte(f, keys[i], at[j]);
			export_modes(f, 0, &r, &jobs);
			flip_byte(f, keys[i], at[j]);
			assert_true(r.rc < 0);
			if (j < 2) {
				assert_non_null(strstr(r.problem, "chain hash of seqs"));
				assert_true(jobs >= (seg_events(keys, n, i, 1201) >= 64));
			}
			/* nothing of the bad segment or after it */
			for (char *line = r.out; line && line < r.out + r.len; line = strchr(line, '\n') + 1)
				assert_true(strtoull(line + strlen("{\"seq\":"), NULL, 10) < keys[i]);
			free(r.out);
		}
	}
}

/* RssFile of this process, in kB (-1: unknown). */
static long rss_file_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *fp = fopen("/proc/self/status", "r");

	while (fp && fgets(line, sizeof(line), fp))
		if (sscanf(line, "RssFile: %ld", &kb) == 1)
			break;
	if (fp)
		fclose(fp);
	return kb;
}

/* Read every byte of every value of `dbi`: a checksum, and the pages touched. */
static uint64_t touch_table(MDB_txn *txn, MDB_dbi dbi, size_t *bytes)
{
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	uint64_t sum = 0;

	assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		for (size_t i = 0; i < v.mv_size; i++)
			sum = sum * 31 + ((const uint8_t *)v.mv_data)[i];
		*bytes += v.mv_size + k.mv_size;
	}
	mdb_cursor_close(cur);
	return sum;
}

/* Whether `p` lies in the mappings ledger_map_release keeps for `l`. */
static int in_kept_map(const docket_ledger *l, const void *p)
{
	for (size_t i = 0; i < l->map_nranges; i++)
		if ((uintptr_t)p >= l->map_ranges[i][0] && (uintptr_t)p < l->map_ranges[i][1])
			return 1;
	return 0;
}

/* ledger_map_release keeps where the map is, and reads it again after the
 * map is remapped (grown): what it releases is always the map itself. */
static void map_release_follows_remap(fixture *f)
{
	MDB_txn *txn = NULL;
	MDB_val v;

	for (int round = 0; round < 2; round++) {
		ledger_map_release(f->l);
		assert_int_equal(f->l->map_ranges_size, f->l->map_size);
		assert_true(f->l->map_nranges >= 1);
		assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
		assert_int_equal(store_meta_get(txn, f->l, "head_seq", &v), 0);
		assert_true(in_kept_map(f->l, v.mv_data));
		assert_true(in_kept_map(f->l, (const char *)v.mv_data + v.mv_size - 1));
		store_txn_abort(f->l, txn);
		assert_int_equal(store_grow(f->l), 0);
		assert_int_not_equal(f->l->map_ranges_size, f->l->map_size);
	}
}

/* ledger_map_release hands the map's resident pages back (RssFile drops by
 * about what the walk touched) and what the map holds reads the same after. */
static void test_map_release(void **state)
{
	fixture *f = *state;
	MDB_txn *txn = NULL;
	uint64_t before, after;
	size_t bytes = 0, again = 0;
	long touched, released;

	fill_bulk(f, 6000);
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	before = touch_table(txn, f->l->dbi.events, &bytes) ^ touch_table(txn, f->l->dbi.invocations, &bytes);
	if ((touched = rss_file_kb()) < 0) {
		store_txn_abort(f->l, txn);
		skip();
	}
	ledger_map_release(f->l);
	released = rss_file_kb();
	/* the walk kept at least bytes/2 of map resident (pages are at least
	 * half full); most of it must be gone */
	if (touched - released < (long)(bytes / 1024 / 4))
		fail_msg("RssFile %ld kB -> %ld kB after release; the walk read %zu kB", touched, released, bytes / 1024);
	after = touch_table(txn, f->l->dbi.events, &again) ^ touch_table(txn, f->l->dbi.invocations, &again);
	assert_int_equal(after, before);
	assert_int_equal(again, bytes);
	store_txn_abort(f->l, txn);
	map_release_follows_remap(f);
	/* a ledger opened without an environment is a no-op, not a crash */
	ledger_map_release(NULL);
}

/*
 * Issue 11: verify's scratch ledger filling up is the checker's problem, not
 * the data's. With a scratch map far smaller than the rebuild needs, verify
 * grows it and passes; with its cap reached, it fails to run (an error, exit
 * 3 in the CLI) and never reports the honest ledger as FAILED.
 */
static void test_verify_scratch_grows_never_lies(void **state)
{
	fixture *f = *state;
	size_t saved_map = ledger_verify_scratch_map, saved_max = ledger_verify_scratch_max;
	docket_verify_report rep;
	int rc;

	fill_bulk(f, 2000);
	ledger_verify_scratch_map = (size_t)64 << 10;
	assert_true(verify_ok(f));
	assert_int_equal(head(f), 6001);

	/* no room to grow at all: the rebuild needs more than the first map */
	ledger_verify_scratch_max = ledger_verify_scratch_map;
	rc = docket_ledger_verify(f->l, &rep);
	ledger_verify_scratch_map = saved_map;
	ledger_verify_scratch_max = saved_max;
	assert_int_equal(rc, DOCKET_EMAPFULL);
	assert_false(rep.ok);
	assert_int_equal(rep.first_bad_seq, 0);
	assert_non_null(strstr(docket_error_last()->message, "verify could not finish"));
	assert_non_null(strstr(docket_error_last()->message, "size cap"));
}

/* ---- the compact invocation record (issue 12, projection version 4) ---- */

static void assert_round_trip(const inv_state *in)
{
	docket_buf b = DOCKET_BUF_INIT;
	inv_state out, want = *in;

	assert_int_equal(inv_state_encode(&b, in), 0);
	assert_int_equal(inv_state_decode(&out, "s", "i", b.ptr, b.len), 0);
	/* the token is derived on decode, not stored */
	memset(out.token, 0, sizeof(out.token));
	memset(want.token, 0, sizeof(want.token));
	assert_memory_equal(&out, &want, sizeof(out));
	docket_buf_dispose(&b);
}

static void test_inv_record_layout(void **state)
{
	/* intent 1234, allowed, completed, idempotent, ok, dispatched at 1235
	 * (epoch 1), outcome at 1236: varints by hand (docs/file-format.md);
	 * the tool is not stored (the intent event has it) */
	static const uint8_t want[] = { 0xd2, 0x09, 0xc2, 0x0a, 0x01, 0x02, 0x01 };
	docket_buf b = DOCKET_BUF_INIT;
	inv_state s;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.intent_seq = 1234;
	s.verdict = 1;
	s.phase = 4;
	s.recovery = 2;
	s.status = 1;
	s.dispatch_seq = 1235;
	s.outcome_seq = 1236;
	s.last_seq = 1236;
	s.attempts = 1;
	s.dispatch_epoch = 1;
	assert_round_trip(&s);
	memcpy(s.tool, "shell", 6);
	assert_int_equal(inv_state_encode(&b, &s), 0);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.ptr, want, sizeof(want));

	/* awaiting approval: the open request is the last one, not stored twice */
	memset(&s, 0, sizeof(s));
	s.intent_seq = 77;
	s.last_seq = 78;
	s.verdict = 2;
	s.phase = 2;
	s.requests = 1;
	s.request_seq = 78;
	s.request_revision = 3;
	memcpy(s.last_request, "r77", 4);
	memcpy(s.open_request, "r77", 4);
	assert_round_trip(&s);
	/* ... unless it is not (kept as given), enums past 3 bits, last seq and
	 * attempts that the others do not imply, flags, seqs near 2^64 */
	memcpy(s.open_request, "other", 6);
	s.verdict = 9;
	s.last_result = 70000;
	s.attempts = 3;
	s.dispatch_seq = 79;
	s.last_seq = 90;
	s.refused = 1;
	s.redispatch_granted = 1;
	s.dispatch_epoch = UINT64_MAX;
	assert_round_trip(&s);
	s.intent_seq = UINT64_MAX - 10;
	s.last_seq = UINT64_MAX;
	s.dispatch_seq = UINT64_MAX - 1;
	s.request_seq = s.settle_seq = UINT64_MAX - 5;
	assert_round_trip(&s);

	/* a seq before its intent cannot be written */
	s.dispatch_seq = 5;
	assert_int_equal(inv_state_encode(&b, &s), DOCKET_ECORRUPT);
	docket_buf_dispose(&b);
}

static void test_inv_record_refuses_bad_bytes(void **state)
{
	static const uint8_t good[] = { 0xd2, 0x09, 0xc2, 0x0a, 0x01, 0x02, 0x01 };
	/* with an approval: requests 1, no request or settle seq, revision 0,
	 * then the last request's id (a string) */
	static const uint8_t good_approval[] = { 0xd2, 0x09, 0xc3, 0x0a, 0x01, 0x02, 0x01, 0x01, 0x00, 0x00,
						 0x00, 0x02, 'r', '1' };
	const struct {
		const char *what;
		uint8_t bytes[24];
		size_t len;
	} bad[] = {
		{ "empty", { 0 }, 0 },
		{ "truncated", { 0xd2, 0x09, 0xc2, 0x0a, 0x01, 0x02 }, 6 },
		{ "trailing byte", { 0xd2, 0x09, 0xc2, 0x0a, 0x01, 0x02, 0x01, 0 }, 8 },
		{ "no intent", { 0x00, 0xc2, 0x0a, 0x01, 0x02, 0x01 }, 6 },
		{ "unknown mode bit", { 0xd2, 0x09, 0x80, 0x80, 0x80, 0x02, 0x01, 0x02, 0x01 }, 9 },
		{ "wide and packed enums", { 0xd2, 0x09, 0x82, 0x80, 0x10, 1, 1, 1, 1, 1, 0x01, 0x02, 0x01 }, 13 },
		{ "string past the end", { 0xd2, 0x09, 0xc3, 0x0a, 0x01, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x09,
					   'r', '1' }, 14 },
		{ "NUL in a string", { 0xd2, 0x09, 0xc3, 0x0a, 0x01, 0x02, 0x01, 0x01, 0x00, 0x00, 0x00, 0x02, 'r', 0 },
		  14 },
		{ "varint past 64 bits", { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x02 }, 11 },
		{ "delta past 2^64", { 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x05, 0x00,
				       0x00 }, 14 },
	};
	inv_state s;

	(void)state;
	assert_int_equal(inv_state_decode(&s, "s", "i", good, sizeof(good)), 0);
	assert_int_equal(inv_state_decode(&s, "s", "i", good_approval, sizeof(good_approval)), 0);
	assert_string_equal(s.last_request, "r1");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (inv_state_decode(&s, "s", "i", bad[i].bytes, bad[i].len) != DOCKET_ECORRUPT)
			fail_msg("%s: decoded", bad[i].what);
}

/* Rewrite a session record without its recent invocations (the layout
 * before projection version 6). */
static void strip_recent(MDB_txn *txn, docket_ledger *l, const char *session)
{
	MDB_val k = { strlen(session), (void *)session }, v;
	Docket__V1__SessionState *m;
	uint8_t buf[4096];

	assert_int_equal(mdb_get(txn, l->dbi.sessions, &k, &v), 0);
	assert_non_null(m = docket__v1__session_state__unpack(NULL, v.mv_size, v.mv_data));
	assert_true(m->recent.len > 0);
	m->recent.len = 0;
	assert_true(docket__v1__session_state__get_packed_size(m) <= sizeof(buf));
	v.mv_size = docket__v1__session_state__pack(m, buf);
	v.mv_data = buf;
	docket__v1__session_state__free_unpacked(m, NULL);
	assert_int_equal(mdb_put(txn, l->dbi.sessions, &k, &v, 0), 0);
}

/* Projections of the layout before version 4 (protobuf records under a
 * session-id key, a seq per event in session_events) are rebuilt by the
 * first writable open, not by a read-only one. */
static int never_called_session(void *ctx, const docket_session_info *info)
{
	(void)ctx;
	(void)info;
	fail_msg("a session listed from projections of an older layout");
	return -1;
}

static int never_called_pending(void *ctx, const docket_pending_info *info)
{
	(void)ctx;
	(void)info;
	fail_msg("a pending call listed from projections of an older layout");
	return -1;
}

static void test_old_projections_rebuilt(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_verify_report rep;
	static const char old_key[] = "s1\0c1";
	uint8_t seq[8];
	MDB_val k = { sizeof(old_key) - 1, (void *)old_key }, v = { 3, (void *)"\x08\x02\x10" };
	MDB_val sk = { 2, (void *)"s1" }, sv = { sizeof(seq), seq };
	MDB_txn *txn = NULL;
	MDB_stat ms;
	inv_state inv;

	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	/* what a version-3 docket left: its layout, its version */
	docket_be64_put(seq, 2);
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(mdb_drop(txn, f->l->dbi.invocations, 0), 0);
	assert_int_equal(mdb_drop(txn, f->l->dbi.session_events, 0), 0);
	strip_recent(txn, f->l, "s1");
	assert_int_equal(mdb_put(txn, f->l->dbi.invocations, &k, &v, 0), 0);
	assert_int_equal(mdb_put(txn, f->l->dbi.session_events, &sk, &sv, 0), 0);
	assert_int_equal(store_meta_put_u64(txn, f->l, "projection_version", 3), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	docket_ledger_free(f->l);

	opts.flags = DOCKET_OPEN_READONLY;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	/* a read-only open cannot rebuild them: every reader of them names the
	 * command instead of misreading the older layout */
	assert_int_equal(ledger_invocation_get(f->l, "s1", "c1", &inv), DOCKET_EVERSION);
	assert_non_null(strstr(docket_error_last()->message, "projection version 3"));
	assert_non_null(strstr(docket_error_last()->message, "reindex`"));
	assert_int_equal(docket_ledger_sessions(f->l, never_called_session, NULL), DOCKET_EVERSION);
	assert_int_equal(docket_ledger_pending(f->l, NULL, never_called_pending, NULL), DOCKET_EVERSION);
	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	assert_true(rep.old_indexes);
	docket_ledger_free(f->l);

	opts.flags = 0;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	assert_int_equal(ledger_invocation_get(f->l, "s1", "c1", &inv), 0);
	assert_int_equal(inv.intent_seq, 2);
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	assert_int_equal(mdb_stat(txn, f->l->dbi.invocations, &ms), 0);
	assert_int_equal(ms.ms_entries, 0); /* the old key is gone: the record is in the session's */
	assert_int_equal(mdb_get(txn, f->l->dbi.invocations, &k, &v), MDB_NOTFOUND);
	store_txn_abort(f->l, txn);
	assert_true(verify_ok(f));
}

/* The meta records every append rewrites: in LMDB's main table, none in
 * `meta` (one page less per commit); where an older docket left them in
 * `meta`, a read-only open reads them there and a writable open moves them. */
static const char *const hot_names[] = { "head_seq", "head_hash", "clock_us", "payload_bytes", "frame_bytes",
					 "merkle" };

static void hot_meta_where(fixture *f, MDB_dbi want, MDB_dbi other, uint8_t copy[][64], size_t *lens)
{
	MDB_txn *txn = NULL;

	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	for (size_t i = 0; i < sizeof(hot_names) / sizeof(hot_names[0]); i++) {
		MDB_val k = { strlen(hot_names[i]), (void *)hot_names[i] }, v;

		assert_int_equal(mdb_get(txn, other, &k, &v), MDB_NOTFOUND);
		assert_int_equal(mdb_get(txn, want, &k, &v), 0);
		if (lens[i]) {
			assert_int_equal(v.mv_size, lens[i]);
			assert_memory_equal(v.mv_data, copy[i], lens[i]);
		} else {
			assert_true(v.mv_size > 0 && v.mv_size <= 64);
			memcpy(copy[i], v.mv_data, v.mv_size);
			lens[i] = v.mv_size;
		}
	}
	store_txn_abort(f->l, txn);
}

static void test_hot_meta_in_main(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	uint8_t copy[6][64];
	size_t lens[6] = { 0 };
	MDB_txn *txn = NULL;
	MDB_val v;

	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	hot_meta_where(f, f->l->dbi.main, f->l->dbi.meta, copy, lens);
	/* the others stay in meta */
	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	assert_int_equal(mdb_get(txn, f->l->dbi.main, &(MDB_val){ 14, "format_version" }, &v), MDB_NOTFOUND);
	assert_int_equal(mdb_get(txn, f->l->dbi.meta, &(MDB_val){ 14, "format_version" }, &v), 0);
	store_txn_abort(f->l, txn);

	/* what an older docket left: the same records in meta */
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	for (size_t i = 0; i < sizeof(hot_names) / sizeof(hot_names[0]); i++) {
		MDB_val k = { strlen(hot_names[i]), (void *)hot_names[i] }, val = { lens[i], copy[i] };

		assert_int_equal(mdb_del(txn, f->l->dbi.main, &k, NULL), 0);
		assert_int_equal(mdb_put(txn, f->l->dbi.meta, &k, &val, 0), 0);
	}
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	docket_ledger_free(f->l);

	opts.flags = DOCKET_OPEN_READONLY;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	assert_int_equal(head(f), 2);
	assert_true(verify_ok(f));
	hot_meta_where(f, f->l->dbi.meta, f->l->dbi.main, copy, lens);
	docket_ledger_free(f->l);

	opts.flags = 0;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	hot_meta_where(f, f->l->dbi.main, f->l->dbi.meta, copy, lens);
	intent(f, "c2", "allowed", NULL);
	assert_int_equal(head(f), 3);
	assert_true(verify_ok(f));
}

/* The session index names blocks of seqs; a session read filters them. */
static void test_session_index_blocks(void **state)
{
	fixture *f = *state;
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	uint64_t want[8];
	size_t nwant = 0;
	json_t *out = json_array();
	char buf[256];

	open_session(f, "s1");
	open_session(f, "b");
	want[nwant++] = 2;
	open_session(f, "quiet");
	fill_bulk(f, 3000); /* opens s1 again (a duplicate): seqs 4..9003 are s1's */
	snprintf(buf, sizeof(buf), "{\"type\":\"tool.intent\",\"session\":\"b\",\"invocation\":\"x\",\"tool\":\"t\"}");
	want[nwant++] = ok(f, buf);
	assert_true(want[1] >> SESSION_BLOCK_SHIFT >= 2);
	snprintf(buf, sizeof(buf), "{\"type\":\"tool.dispatched\",\"session\":\"b\",\"invocation\":\"x\"}");
	ok(f, "{\"type\":\"runtime.started\",\"runtime\":\"t/2\"}");
	want[nwant++] = ok(f, buf);

	ro.session = "b";
	assert_int_equal(docket_ledger_read_json(f->l, &ro, collect_json, out), 0);
	assert_int_equal(json_array_size(out), nwant);
	for (size_t i = 0; i < nwant; i++)
		assert_int_equal(json_integer_value(json_object_get(json_array_get(out, i), "seq")), want[i]);
	/* from a seq inside a block and past the session's last event */
	json_array_clear(out);
	ro.since = 3;
	assert_int_equal(docket_ledger_read_json(f->l, &ro, collect_json, out), 0);
	assert_int_equal(json_array_size(out), 2);
	json_array_clear(out);
	ro.since = want[2] + 1;
	assert_int_equal(docket_ledger_read_json(f->l, &ro, collect_json, out), 0);
	assert_int_equal(json_array_size(out), 0);
	/* a session with one event, and one that does not exist */
	ro.since = 0;
	ro.session = "quiet";
	assert_int_equal(docket_ledger_read_json(f->l, &ro, collect_json, out), 0);
	assert_int_equal(json_array_size(out), 1);
	json_array_clear(out);
	ro.session = "nobody";
	assert_int_equal(docket_ledger_read_json(f->l, &ro, collect_json, out), 0);
	assert_int_equal(json_array_size(out), 0);
	json_decref(out);
	assert_true(verify_ok(f));
}

/* mdb_reader_list callback: count the slots of pid `*ctx`. */
static int count_pid_slots(const char *msg, void *ctx)
{
	long pid = 0;

	long *want = ctx;

	if (sscanf(msg, "%ld", &pid) == 1 && pid == want[0])
		want[1]++;
	return 0;
}

static long dead_slots(docket_ledger *l, long pid)
{
	long ctx[2] = { pid, 0 };

	assert_true(mdb_reader_list(l->env, count_pid_slots, ctx) >= 0);
	return ctx[1];
}

/* A reader killed inside its read transaction, its slot left behind. */
static long kill_a_reader(const char *dir)
{
	int ready[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(ready), 0);
	if ((pid = fork()) == 0) {
		docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
		docket_ledger *mine = NULL;
		MDB_txn *txn = NULL;

		opts.flags = DOCKET_OPEN_READONLY;
		if (docket_ledger_open(&mine, dir, &opts) != 0 || store_txn_begin(&txn, mine, MDB_RDONLY) != 0)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return (long)pid;
}

/*
 * Issue 11: a long-running writer clears the slots of dead readers now and
 * then, not only when it opens the ledger (a slot pins an old snapshot and
 * the file grows). With the period at 0 the next transaction clears it; with
 * a period not yet over the slot stays (the check is not merely on open).
 */
static void test_reader_check_in_long_runs(void **state)
{
	fixture *f = *state;
	long pid;

	open_session(f, "s1");
	f->l->reader_check_ms = (uint64_t)3600 * 1000;
	pid = kill_a_reader(f->dir);
	ok(f, EV("tool.intent", "c1", ",\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"]}"));
	assert_int_equal(dead_slots(f->l, pid), 1);

	f->l->reader_check_ms = 0;
	ok(f, EV("tool.intent", "c2", ",\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"]}"));
	assert_int_equal(dead_slots(f->l, pid), 0);

	/* what the timed check cleared is reported once by the next explicit
	 * check (serve logs it: cli_serve-stale-reader missed it when the
	 * timed check came first) */
	int dead = -1;
	assert_int_equal(ledger_reader_check(f->l, &dead), 0);
	assert_int_equal(dead, 1);
	assert_int_equal(ledger_reader_check(f->l, &dead), 0);
	assert_int_equal(dead, 0);
}

/* Overwrite `n` bytes at `off` of the ledger's data.mdb (saving the old ones in `old`). */
static void poke(const char *dir, long off, const void *bytes, size_t n, void *old)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	assert_non_null(fp = fopen(path, "r+b"));
	assert_int_equal(fseek(fp, off, SEEK_SET), 0);
	if (old)
		assert_int_equal(fread(old, 1, n, fp), n);
	assert_int_equal(fseek(fp, off, SEEK_SET), 0);
	assert_int_equal(fwrite(bytes, 1, n, fp), n);
	fclose(fp);
}

static int reopen(fixture *f)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;

	docket_ledger_free(f->l);
	f->l = NULL;
	opts.flags = DOCKET_OPEN_READONLY;
	return docket_ledger_open(&f->l, f->dir, &opts);
}

/*
 * Issue 11: the structure LMDB trusts is checked before LMDB maps the file.
 * Each damage to a meta page (LMDB 0.9 layout, host order: the meta starts
 * 16 bytes into pages 0 and 1) is refused as corrupt; undone, the file
 * opens again. A file cut short is refused the same way.
 */

/* ---- format 2 (issue 12) ---- */

/* A handle opened before `docket compact` is refused its next append (the
 * files it holds were replaced), and the compacted ledger holds every event. */
static void test_compact_refuses_stale_writer(void **state)
{
	fixture *f = *state;
	docket_rewrite_report rep;
	docket_ledger *fresh = NULL;

	fill_bulk(f, 50);
	assert_int_equal(docket_ledger_compact(f->dir, 0, &rep), 0);
	assert_true(rep.rewritten);
	assert_int_equal(rep.events, 151);
	assert_int_equal(put(f, "{\"type\":\"session.opened\",\"session\":\"late\"}", NULL), DOCKET_ESTORAGE);
	assert_non_null(strstr(docket_error_last()->message, "was rewritten"));
	assert_int_equal(docket_ledger_open(&fresh, f->dir, NULL), 0);
	docket_ledger_free(f->l);
	f->l = fresh;
	assert_int_equal(head(f), 151);
	assert_true(verify_ok(f));
	ok(f, "{\"type\":\"session.opened\",\"session\":\"late\"}");
	assert_int_equal(head(f), 152);
}

/* Copy the segment at key `from` to key `to` (the table is ordered by key). */
static void move_segment(fixture *f, uint64_t from, uint64_t to, int keep_old)
{
	uint8_t a[8], b[8];
	MDB_val ka = { 8, a }, kb = { 8, b }, v;
	docket_buf copy = DOCKET_BUF_INIT;
	MDB_txn *txn;

	docket_be64_put(a, from);
	docket_be64_put(b, to);
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(mdb_get(txn, f->l->dbi.events, &ka, &v), 0);
	assert_int_equal(docket_buf_put(&copy, v.mv_data, v.mv_size), 0);
	if (!keep_old)
		assert_int_equal(mdb_del(txn, f->l->dbi.events, &ka, NULL), 0);
	v.mv_data = copy.ptr;
	v.mv_size = copy.len;
	assert_int_equal(mdb_put(txn, f->l->dbi.events, &kb, &v, 0), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	docket_buf_dispose(&copy);
}

static void expect_verify_fails(fixture *f, const char *what)
{
	docket_verify_report rep;

	assert_int_equal(docket_ledger_verify(f->l, &rep), 0);
	assert_false(rep.ok);
	if (!strstr(rep.problem, what))
		fail_msg("problem '%s' does not mention '%s'", rep.problem, what);
}

/* Segments keyed where they do not belong: a gap, an overlap. */
static void test_segment_gap_and_overlap(void **state)
{
	fixture *f = *state;

	open_session(f, "s1");              /* seq 1 */
	intent(f, "c1", "allowed", NULL);   /* seq 2 */
	intent(f, "c2", "allowed", NULL);   /* seq 3 */
	/* the segment of seq 3 moved to key 5: seqs 3 and 4 are missing */
	move_segment(f, 3, 5, 0);
	expect_verify_fails(f, "seq 3 is missing from the log");
	move_segment(f, 5, 3, 0);
	assert_true(verify_ok(f));
	/* seqs 4-5 in one segment, seq 6 in the next; a copy of that one at
	 * key 5 overlaps the first */
	{
		json_t *two[2] = {
			test_json("{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c3\","
				  "\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"]}}"),
			test_json("{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c4\","
				  "\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"]}}"),
		};

		assert_int_equal(docket_ledger_append_json(f->l, two, 2, NULL), 0);
		json_decref(two[0]);
		json_decref(two[1]);
	}
	intent(f, "c5", "allowed", NULL);   /* seq 6 */
	assert_true(verify_ok(f));
	move_segment(f, 6, 5, 1);
	expect_verify_fails(f, "overlap");
}

/* The pending index never empties (its sentinel), and is not listed. */
static int count_pending(void *ctx, const docket_pending_info *p)
{
	(void)p;
	(*(int *)ctx)++;
	return 0;
}

static void test_pending_sentinel_not_listed(void **state)
{
	fixture *f = *state;
	docket_ledger_info info;
	int n = 0;

	open_session(f, "s1");
	intent(f, "c1", "allowed", NULL);
	ok(f, EV("tool.dispatched", "c1", ""));
	ok(f, EV("tool.completed", "c1", ",\"status\":\"ok\""));
	assert_int_equal(docket_ledger_pending(f->l, NULL, count_pending, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.pending, 0);
	intent(f, "c2", "allowed", NULL);
	assert_int_equal(docket_ledger_pending(f->l, NULL, count_pending, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.pending, 1);
	assert_true(verify_ok(f));
}

static void test_open_checks_the_data_file(void **state)
{
	static const struct {
		long off;       /* in the meta, from its start */
		uint64_t value;
		size_t len;
	} damage[] = {
		{ 0, 0x12345678, 4 },          /* magic */
		{ 4, 7, 4 },                   /* data version */
		{ 24, 1000, 4 },               /* page size, not a power of two */
		{ 24 + 40, 1u << 30, 8 },      /* free DB root past the last page */
		{ 72 + 40, 1u << 30, 8 },      /* main DB root past the last page */
		{ 120, 1u << 30, 8 },          /* last page past the end of the file */
		{ 16, 4096, 8 },               /* map size below the used size */
	};
	fixture *f = *state;
	uint8_t old[8];
	char path[4096];

	fill_session(f, 20);
	assert_int_equal(reopen(f), 0);
	for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		uint64_t v = damage[i].value;

		docket_ledger_free(f->l);
		f->l = NULL;
		/* both meta pages, so the damaged one is the one LMDB would use */
		for (long page = 0; page < 2; page++)
			poke(f->dir, page * 4096 + 16 + damage[i].off, &v, damage[i].len, page ? NULL : old);
		if (reopen(f) != DOCKET_ECORRUPT)
			fail_msg("damage %zu was not refused: %s", i, docket_error_last()->message);
		assert_non_null(strstr(docket_error_last()->message, "the data file is corrupt"));
		for (long page = 0; page < 2; page++)
			poke(f->dir, page * 4096 + 16 + damage[i].off, old, damage[i].len, NULL);
		if (reopen(f) != 0)
			fail_msg("undone damage %zu: %s", i, docket_error_last()->message);
	}
	assert_true(verify_ok(f));
	docket_ledger_free(f->l);
	f->l = NULL;
	snprintf(path, sizeof(path), "%s/data.mdb", f->dir);
	assert_int_equal(truncate(path, 16384), 0);
	assert_int_equal(reopen(f), DOCKET_ECORRUPT);
	assert_non_null(strstr(docket_error_last()->message, "truncated"));
}

static void test_verify_finds_bad_projection_and_reindex_repairs(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_verify_report rep;
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = { 2, (void *)"s1" };

	fill_session(f, 3);
	intent(f, "pending-one", "allowed", NULL);
	docket_ledger_free(f->l);
	f->l = NULL;
	/* remove the session record behind the ledger's back */
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
	assert_int_equal(mdb_env_open(env, f->dir, MDB_NOTLS, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "sessions", 0, &dbi), 0);
	assert_int_equal(mdb_del(txn, dbi, &k, NULL), 0);
	assert_int_equal(mdb_dbi_open(txn, "pending", 0, &dbi), 0);
	assert_int_equal(mdb_drop(txn, dbi, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);

	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	verify_chunked(f, &rep);
	assert_false(rep.ok);
	assert_string_equal(rep.problem, "projection 'sessions' does not match the events (first difference at "
					 "key \"s1\"); run `docket reindex` to rebuild it");
	assert_int_equal(docket_ledger_reindex(f->l), 0);
	assert_true(verify_ok(f));
	pending_seen seen = { 0 };
	assert_int_equal(docket_ledger_pending(f->l, NULL, collect_pending, &seen), 0);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.invs[0], "pending-one");
}

/* ---- group commit: isolated groups, one commit ---- */

static void test_group_commit_isolates_groups(void **state)
{
	fixture *f = *state;
	const char *texts[3][2] = {
		{ EV("tool.intent", "a", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"}"),
		  EV("tool.dispatched", "a", "") },
		{ EV("tool.intent", "b", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"denied\"}"),
		  EV("tool.dispatched", "b", "") },   /* invariant 4: the whole group goes */
		{ EV("tool.intent", "c", ",\"tool\":\"t\""),
		  EV("tool.completed", "c", ",\"status\":\"denied\"") },
	};
	docket_event *evs[3][2];
	docket_append_result res[3][2];
	ledger_group groups[3];

	open_session(f, "s1");
	for (int g = 0; g < 3; g++) {
		for (int i = 0; i < 2; i++) {
			json_t *j = test_json(texts[g][i]);
			assert_int_equal(docket_event_from_json(&evs[g][i], j), 0);
			json_decref(j);
		}
		groups[g].events = evs[g];
		groups[g].n = 2;
		groups[g].results = res[g];
	}
	assert_int_equal(ledger_append_groups(f->l, groups, 3), 0);
	assert_int_equal(groups[0].error, 0);
	assert_int_equal(groups[1].error, DOCKET_ETRANSITION);
	assert_int_equal(groups[1].err.invariant, 4);
	assert_non_null(strstr(groups[1].err.message, "\"b\""));
	assert_int_equal(groups[2].error, 0);
	assert_int_equal(res[0][1].attempt, 1);
	assert_int_equal(res[0][0].seq, 2);
	assert_int_equal(res[2][0].seq, 4);  /* b took no seq */
	assert_int_equal(head(f), 5);
	for (int g = 0; g < 3; g++)
		for (int i = 0; i < 2; i++)
			docket_event_free(evs[g][i]);
	assert_true(verify_ok(f));
}

/* The groups of one batch, built from JSON texts (each list ends with NULL). */
typedef struct batch {
	docket_event *evs[8][4];
	docket_append_result res[8][4];
	ledger_group g[8];
	size_t n;
} batch;

static void batch_add(batch *b, const char *const *texts)
{
	ledger_group *g = &b->g[b->n];

	memset(g, 0, sizeof(*g));
	g->events = b->evs[b->n];
	g->results = b->res[b->n];
	for (; texts[g->n]; g->n++) {
		json_t *j = test_json(texts[g->n]);

		assert_int_equal(docket_event_from_json(&b->evs[b->n][g->n], j), 0);
		json_decref(j);
	}
	b->n++;
}

static void batch_free(batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		for (size_t k = 0; k < b->g[i].n; k++)
			docket_event_free(b->evs[i][k]);
}

/*
 * A refused group leaves no trace in the batch's one transaction: not its
 * outcome (invariant 5 would refuse the later one), not its policy revision
 * (the document, the session's revision), not its intents (a later intent
 * with the same id is new), not its session (a later event of it is refused),
 * not its pending entries, seqs or session event index (verify).
 */
static void test_group_commit_rolls_back_refused_group(void **state)
{
	fixture *f = *state;
	batch b = { 0 };
	pending_seen seen = { 0 };
	sess_state ss;

	open_session(f, "s1");
	batch_add(&b, (const char *const[]){ EV("tool.intent", "a", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"}"),
					     EV("tool.dispatched", "a", ""), NULL });
	batch_add(&b, (const char *const[]){ EV("tool.completed", "a", ",\"status\":\"ok\""),
		"{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":1,\"format\":\"docket\","
		"\"policy\":{\"rules\":[]}}",
		EV("tool.intent", "x", ",\"tool\":\"t\""),
		"{\"type\":\"policy.revised\",\"session\":\"s1\",\"revision\":3,\"format\":\"docket\","
		"\"policy\":{\"rules\":[]}}", NULL });   /* invariant 6: the whole group goes */
	batch_add(&b, (const char *const[]){ EV("tool.completed", "a", ",\"status\":\"error\""), NULL });
	batch_add(&b, (const char *const[]){ "{\"type\":\"session.opened\",\"session\":\"s9\",\"runtime\":\"t/1\"}",
		"{\"type\":\"tool.intent\",\"session\":\"s9\",\"invocation\":\"q\",\"tool\":\"t\"}",
		"{\"type\":\"tool.completed\",\"session\":\"s9\",\"invocation\":\"q\",\"status\":\"ok\"}",
		NULL });                                 /* invariant 9 */
	batch_add(&b, (const char *const[]){ EV("tool.intent", "x", ",\"tool\":\"other\""), NULL });
	batch_add(&b, (const char *const[]){ "{\"type\":\"tool.intent\",\"session\":\"s9\",\"invocation\":\"q\","
					     "\"tool\":\"t\"}", NULL }); /* invariant 8: s9 was taken back */
	assert_int_equal(ledger_append_groups(f->l, b.g, b.n), 0);
	assert_int_equal(b.g[0].error, 0);
	assert_int_equal(b.g[1].error, DOCKET_ETRANSITION);
	assert_int_equal(b.g[1].err.invariant, 6);
	assert_int_equal(b.g[2].error, 0);
	assert_int_equal(b.g[3].error, DOCKET_ETRANSITION);
	assert_int_equal(b.g[3].err.invariant, 9);
	assert_int_equal(b.g[4].error, 0);
	assert_int_equal(b.g[5].error, DOCKET_ETRANSITION);
	assert_int_equal(b.g[5].err.invariant, 8);
	assert_int_equal(b.res[2][0].seq, 4);  /* the refused groups took no seq */
	assert_int_equal(b.res[4][0].seq, 5);
	assert_int_equal(head(f), 5);
	assert_int_equal(ledger_session_get(f->l, "s1", &ss, NULL), 0);
	assert_int_equal(ss.policy_revision, 0);
	assert_int_equal(ss.invocations, 2);
	assert_int_equal(ss.pending, 1);
	assert_int_equal(ss.events, 5);
	assert_int_equal(ledger_session_get(f->l, "s9", &ss, NULL), DOCKET_ENOTFOUND);
	assert_int_equal(docket_ledger_pending(f->l, NULL, collect_pending, &seen), 0);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.invs[0], "x");
	batch_free(&b);
	assert_true(verify_ok(f));
}

/*
 * Sessions interleaved in one batch: a switch parks the session record it
 * leaves, decoded (ledger/sess_cache.c). A refused group that changed a
 * parked record and the loaded one leaves neither changed; what the groups
 * before it changed is kept.
 */
static void test_group_commit_parked_sessions(void **state)
{
	fixture *f = *state;
	batch b = { 0 };
	sess_state ss;
	inv_state inv;

	open_session(f, "s1");
	batch_add(&b, (const char *const[]){ EV("tool.intent", "a", ",\"tool\":\"t\""),
		"{\"type\":\"session.opened\",\"session\":\"s2\",\"runtime\":\"t/1\"}",
		"{\"type\":\"tool.intent\",\"session\":\"s2\",\"invocation\":\"b\",\"tool\":\"t\"}", NULL });
	batch_add(&b, (const char *const[]){ EV("tool.intent", "c", ",\"tool\":\"t\""),
		"{\"type\":\"tool.intent\",\"session\":\"s2\",\"invocation\":\"d\",\"tool\":\"t\"}",
		EV("tool.completed", "c", ",\"status\":\"ok\""), NULL });   /* invariant 9 */
	batch_add(&b, (const char *const[]){ EV("tool.intent", "c", ",\"tool\":\"other\""),
		"{\"type\":\"tool.intent\",\"session\":\"s2\",\"invocation\":\"d\",\"tool\":\"other\"}",
		EV("tool.completed", "a", ",\"status\":\"denied\""), NULL });
	assert_int_equal(ledger_append_groups(f->l, b.g, b.n), 0);
	assert_int_equal(b.g[0].error, 0);
	assert_int_equal(b.g[1].error, DOCKET_ETRANSITION);
	assert_int_equal(b.g[1].err.invariant, 9);
	assert_int_equal(b.g[2].error, 0);
	assert_int_equal(b.res[2][0].duplicate, 0);
	assert_int_equal(b.res[2][0].seq, 5);
	assert_int_equal(head(f), 7);
	assert_int_equal(ledger_session_get(f->l, "s1", &ss, NULL), 0);
	assert_int_equal(ss.invocations, 2);
	assert_int_equal(ss.pending, 1);
	assert_int_equal(ss.events, 4);
	assert_int_equal(ledger_session_get(f->l, "s2", &ss, NULL), 0);
	assert_int_equal(ss.invocations, 2);
	assert_int_equal(ss.pending, 2);
	assert_int_equal(ss.events, 3);
	assert_int_equal(ledger_invocation_get(f->l, "s1", "a", &inv), 0);
	assert_int_equal(inv.phase, DOCKET__V1__PHASE__PHASE_COMPLETED);
	assert_int_equal(ledger_invocation_get(f->l, "s1", "c", &inv), 0);
	assert_int_equal(inv.intent_seq, 5);
	batch_free(&b);
	assert_true(verify_ok(f));
}

/*
 * An intent's pending entry and its outcome's delete in one log cancel out
 * (overlay_cancel), but only inside one group: an outcome in a refused
 * group leaves the earlier group's entry, and one in a later group deletes
 * it.
 */
static void test_group_commit_pending_cancel(void **state)
{
	fixture *f = *state;
	batch b = { 0 };
	pending_seen seen = { 0 };

	open_session(f, "s1");
	/* p last: the one whose put the next group could wrongly take back */
	batch_add(&b, (const char *const[]){ EV("tool.intent", "q", ",\"tool\":\"t\""),
					     EV("tool.intent", "p", ",\"tool\":\"t\""), NULL });
	batch_add(&b, (const char *const[]){ EV("tool.completed", "p", ",\"status\":\"denied\""),
					     EV("tool.dispatched", "nope", ""), NULL });   /* invariant 1 */
	batch_add(&b, (const char *const[]){ EV("tool.completed", "q", ",\"status\":\"denied\""),
					     EV("tool.intent", "r", ",\"tool\":\"t\""),
					     EV("tool.completed", "r", ",\"status\":\"denied\""), NULL });
	assert_int_equal(ledger_append_groups(f->l, b.g, b.n), 0);
	assert_int_equal(b.g[0].error, 0);
	assert_int_equal(b.g[1].error, DOCKET_ETRANSITION);
	assert_int_equal(b.g[2].error, 0);
	assert_int_equal(docket_ledger_pending(f->l, NULL, collect_pending, &seen), 0);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.invs[0], "p");
	batch_free(&b);
	assert_true(verify_ok(f));
}

/* More sessions in one transaction than the session cache holds: it is
 * written back and emptied on the way, and every record is still right. */
static void test_parked_sessions_overflow(void **state)
{
	fixture *f = *state;
	size_t nsess = SESS_CACHE_MAX + 20, n = 0;
	docket_event **evs = calloc(nsess * 3, sizeof(*evs));
	char text[256];
	sess_state ss;

	assert_non_null(evs);
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < nsess; i++) {
			if (pass == 0)
				snprintf(text, sizeof(text),
					 "{\"type\":\"session.opened\",\"session\":\"s%zu\",\"runtime\":\"t/1\"}", i);
			else
				snprintf(text, sizeof(text),
					 "{\"type\":\"tool.intent\",\"session\":\"s%zu\",\"invocation\":\"i%d\",\"tool\":\"t\"}",
					 i, pass);
			json_t *j = test_json(text);
			assert_int_equal(docket_event_from_json(&evs[n++], j), 0);
			json_decref(j);
		}
	assert_int_equal(ledger_append(f->l, evs, n, NULL), 0);
	for (size_t i = 0; i < n; i++)
		docket_event_free(evs[i]);
	free(evs);
	assert_int_equal(head(f), n);
	snprintf(text, sizeof(text), "s%zu", nsess - 1);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(ledger_session_get(f->l, k ? text : "s0", &ss, NULL), 0);
		assert_int_equal(ss.invocations, 2);
		assert_int_equal(ss.pending, 2);
		assert_int_equal(ss.events, 3);
	}
	assert_int_equal(ledger_session_get(f->l, "s99999", &ss, NULL), DOCKET_ENOTFOUND);
	assert_true(verify_ok(f));
}

static size_t table_entries(fixture *f, MDB_dbi dbi)
{
	MDB_txn *txn = NULL;
	MDB_stat ms;

	assert_int_equal(store_txn_begin(&txn, f->l, MDB_RDONLY), 0);
	assert_int_equal(mdb_stat(txn, dbi, &ms), 0);
	store_txn_abort(f->l, txn);
	return ms.ms_entries;
}

static uint64_t call(fixture *f, const char *inv, int complete)
{
	char buf[512];
	uint64_t seq;

	snprintf(buf, sizeof(buf), EV("tool.intent", "%s", ",\"tool\":\"t\",\"decision\":{\"verdict\":\"allowed\"}"), inv);
	seq = ok(f, buf);
	snprintf(buf, sizeof(buf), EV("tool.dispatched", "%s", ""), inv);
	ok(f, buf);
	snprintf(buf, sizeof(buf), EV("tool.completed", "%s", ",\"status\":\"ok\""), inv);
	if (complete)
		ok(f, buf);
	return seq;
}

/*
 * A session record holds its SESS_RECENT latest invocation records; the
 * next invocation moves them all to `invocations`. Every record reads back
 * from either place, a refused group's move is taken back, and a rebuild
 * (verify) writes the same tables though its commits fall elsewhere.
 */
static void test_recent_invocations(void **state)
{
	fixture *f = *state;
	char id[16];
	uint64_t intent_seq[SESS_RECENT + 1];
	batch b = { 0 };
	pending_seen seen = { 0 };
	sess_state ss;
	inv_state inv;

	open_session(f, "s1");
	for (int i = 0; i < SESS_RECENT; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		intent_seq[i] = call(f, id, 1);
	}
	assert_int_equal(table_entries(f, f->l->dbi.invocations), 0);
	assert_int_equal(ledger_session_get(f->l, "s1", &ss, NULL), 0);
	assert_int_equal(ss.recent_n, SESS_RECENT);
	intent_seq[SESS_RECENT] = call(f, "c8", 0);
	assert_int_equal(table_entries(f, f->l->dbi.invocations), SESS_RECENT);
	assert_int_equal(ledger_session_get(f->l, "s1", &ss, NULL), 0);
	assert_int_equal(ss.recent_n, 1);
	for (int i = 0; i <= SESS_RECENT; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		assert_int_equal(ledger_invocation_get(f->l, "s1", id, &inv), 0);
		assert_int_equal(inv.intent_seq, intent_seq[i]);
		assert_int_equal(inv.phase, i < SESS_RECENT ? DOCKET__V1__PHASE__PHASE_COMPLETED
							    : DOCKET__V1__PHASE__PHASE_DISPATCHED);
	}
	assert_int_equal(ledger_invocation_get(f->l, "s1", "c9", &inv), DOCKET_ENOTFOUND);
	assert_int_equal(docket_ledger_pending(f->l, NULL, collect_pending, &seen), 0);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.invs[0], "c8");

	/* fill the list again, then a refused group whose intent moved it */
	batch_add(&b, (const char *const[]){ EV("tool.intent", "d1", ",\"tool\":\"t\""), EV("tool.intent", "d2", ",\"tool\":\"t\""),
					     EV("tool.intent", "d3", ",\"tool\":\"t\""), EV("tool.intent", "d4", ",\"tool\":\"t\""), NULL });
	batch_add(&b, (const char *const[]){ EV("tool.intent", "d5", ",\"tool\":\"t\""), EV("tool.intent", "d6", ",\"tool\":\"t\""),
					     EV("tool.intent", "d7", ",\"tool\":\"t\""), NULL });
	batch_add(&b, (const char *const[]){ EV("tool.intent", "e1", ",\"tool\":\"t\""),
					     EV("tool.completed", "e1", ",\"status\":\"ok\""), NULL }); /* invariant 9 */
	batch_add(&b, (const char *const[]){ EV("tool.completed", "c8", ",\"status\":\"ok\""), NULL });
	assert_int_equal(ledger_append_groups(f->l, b.g, b.n), 0);
	assert_int_equal(b.g[0].error, 0);
	assert_int_equal(b.g[1].error, 0);
	assert_int_equal(b.g[2].error, DOCKET_ETRANSITION);
	assert_int_equal(b.g[3].error, 0);
	batch_free(&b);
	assert_int_equal(table_entries(f, f->l->dbi.invocations), SESS_RECENT);
	assert_int_equal(ledger_session_get(f->l, "s1", &ss, NULL), 0);
	assert_int_equal(ss.recent_n, SESS_RECENT);
	assert_int_equal(ledger_invocation_get(f->l, "s1", "e1", &inv), DOCKET_ENOTFOUND);
	assert_int_equal(ledger_invocation_get(f->l, "s1", "c8", &inv), 0);
	assert_int_equal(inv.phase, DOCKET__V1__PHASE__PHASE_COMPLETED);
	assert_int_equal(ledger_invocation_get(f->l, "s1", "d7", &inv), 0);
	assert_true(verify_ok(f));
}

/* A recent list that does not parse is damage, not an absent record. */
static void test_recent_invocations_damaged(void **state)
{
	fixture *f = *state;
	static const uint8_t bad[][4] = { { 3, 'a', 'b', 0 }, { 1, 'a', 9, 1 }, { 0, 1, 1, 0 } };
	MDB_val k = { 2, (void *)"s1" }, v;
	Docket__V1__SessionState *m;
	ProtobufCBinaryData saved;
	uint8_t buf[4096];
	MDB_txn *txn = NULL;
	inv_state inv;

	open_session(f, "s1");
	call(f, "c0", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
		assert_int_equal(mdb_get(txn, f->l->dbi.sessions, &k, &v), 0);
		assert_non_null(m = docket__v1__session_state__unpack(NULL, v.mv_size, v.mv_data));
		saved = m->recent;
		m->recent.data = (uint8_t *)bad[i];
		m->recent.len = sizeof(bad[i]);
		v.mv_size = docket__v1__session_state__pack(m, buf);
		v.mv_data = buf;
		m->recent = saved;
		docket__v1__session_state__free_unpacked(m, NULL);
		assert_int_equal(mdb_put(txn, f->l->dbi.sessions, &k, &v, 0), 0);
		assert_int_equal(store_txn_commit(f->l, txn), 0);
		assert_int_equal(ledger_invocation_get(f->l, "s1", "c0", &inv), DOCKET_ECORRUPT);
	}
}

static void test_readonly_open(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *ro = NULL;
	json_t *out = json_array();

	fill_session(f, 2);
	opts.flags = DOCKET_OPEN_READONLY;
	assert_int_equal(docket_ledger_open(&ro, f->dir, &opts), 0);
	assert_int_equal(docket_ledger_read_json(ro, NULL, collect_json, out), 0);
	assert_int_equal(json_array_size(out), 7);
	json_t *ev = test_json("{\"type\":\"session.opened\",\"session\":\"s2\"}");
	assert_int_equal(docket_ledger_append_json(ro, &ev, 1, NULL), DOCKET_EINVALID);
	assert_non_null(strstr(docket_error_last()->message, "read-only"));
	json_decref(ev);
	json_decref(out);
	docket_verify_report rep;
	assert_int_equal(docket_ledger_verify(ro, &rep), 0);
	assert_true(rep.ok);
	docket_ledger_free(ro);
}

/* ---- storage: modes, versions, growth, cap ---- */

static void test_file_modes(void **state)
{
	fixture *f = *state;
	char path[4096];
	struct stat st;

	(void)state;
	docket_ledger_free(f->l);
	f->l = NULL;
	test_rmdir_free(f->dir);
	f->dir = test_mkdtemp();
	snprintf(path, sizeof(path), "%s/ledger", f->dir);
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	opts.flags = DOCKET_OPEN_CREATE;
	mode_t old = umask(0);
	assert_int_equal(docket_ledger_open(&f->l, path, &opts), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/ledger/data.mdb", f->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(path, sizeof(path), "%s/ledger/lock.mdb", f->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

/* ---- write-time redaction by secret key name (issue 28) ---- */

#define R_FIELD "\"[REDACTED:secret-field]\""

/* The stored event at `seq` (1-based), as `log --json` shows it. */
static json_t *stored_event(fixture *f, uint64_t seq)
{
	json_t *all = json_array(), *ev;

	assert_int_equal(docket_ledger_read_json(f->l, NULL, collect_json, all), 0);
	ev = json_incref(json_array_get(all, seq - 1));
	json_decref(all);
	assert_non_null(ev);
	return ev;
}

static void assert_member_json(fixture *f, uint64_t seq, const char *member, const char *want_text)
{
	json_t *ev = stored_event(f, seq), *want = test_json(want_text);

	if (!json_equal(json_object_get(ev, member), want)) {
		char *got = json_dumps(json_object_get(ev, member), JSON_COMPACT);

		fail_msg("seq %llu %s:\n  got  %s\n  want %s", (unsigned long long)seq, member, got, want_text);
	}
	json_decref(want);
	json_decref(ev);
}

static void assert_member_string(fixture *f, uint64_t seq, const char *member, const char *want)
{
	json_t *ev = stored_event(f, seq);
	const char *got = json_string_value(json_object_get(ev, member));

	if (!got || strcmp(got, want) != 0)
		fail_msg("seq %llu %s:\n  got  %s\n  want %s", (unsigned long long)seq, member, got ? got : "(none)", want);
	json_decref(ev);
}

static void test_redact_secret_keys_nested(void **state)
{
	fixture *f = *state;
	const char *builtin = "{\"builtin\":true}";
	const char *intent =
		"{\"type\":\"tool.intent\",\"session\":\"s1\",\"invocation\":\"c1\",\"tool\":\"deploy\","
		"\"decision\":{\"verdict\":\"allowed\"},\"args\":{"
		"\"cfg\":{\"apiKey\":\"k1\",\"nested\":[{\"Client-Secret\":{\"a\":\"s2\"}},"
		"{\"PROXYPASSWORD\":1234,\"password\":true,\"token\":\"\",\"auth\":null}],"
		"\"max_tokens\":5,\"tokenizer\":\"bpe\",\"secret_name\":\"prod\"},"
		"\"X-Api-Key\":\"k3\",\"headers\":{\"Authorization\":\"Basic abc\",\"Cookie\":[\"c1\",\"c2\"]},"
		"\"list\":[[\"deep\",{\"refresh_token\":\"r1\"}]]}}";
	docket_append_result res;
	json_t *ev;
	uint64_t s0, s1, c1, done1, done2;

	/* before the rules are set, a secret under a secret key is stored as given */
	s0 = ok(f, "{\"type\":\"session.opened\",\"session\":\"s0\",\"env\":{\"GITHUB_TOKEN\":\"hunter2\"}}");
	assert_member_json(f, s0, "env", "{\"GITHUB_TOKEN\":\"hunter2\"}");
	assert_int_equal(docket_ledger_set_redaction(f->l, builtin, strlen(builtin)), 0);

	/* env maps: by key name in any spelling, and a secret used as a key */
	s1 = ok(f, "{\"type\":\"session.opened\",\"session\":\"s1\",\"env\":{\"PATH\":\"/bin\",\"GITHUB_TOKEN\":\"hunter2\","
		   "\"db-password\":\"pw1\",\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\":\"1\",\"secret_name\":\"prod\"}}");
	assert_member_json(f, s1, "env", "{\"PATH\":\"/bin\",\"GITHUB_TOKEN\":" R_FIELD ",\"db-password\":" R_FIELD ","
			   "\"[REDACTED:github-token]\":\"1\",\"secret_name\":\"prod\"}");
	/* nested args: objects in arrays in objects; a value of any type is
	 * replaced whole; null, booleans and "" have nothing to hide; names
	 * that only contain a secret word (max_tokens, tokenizer, secret_name) are kept */
	c1 = ok(f, intent);
	assert_member_json(f, c1, "args",
		"{\"cfg\":{\"apiKey\":" R_FIELD ",\"nested\":[{\"Client-Secret\":" R_FIELD "},"
		"{\"PROXYPASSWORD\":" R_FIELD ",\"password\":true,\"token\":\"\",\"auth\":null}],"
		"\"max_tokens\":5,\"tokenizer\":\"bpe\",\"secret_name\":\"prod\"},"
		"\"X-Api-Key\":" R_FIELD ",\"headers\":{\"Authorization\":" R_FIELD ",\"Cookie\":" R_FIELD "},"
		"\"list\":[[\"deep\",{\"refresh_token\":" R_FIELD "}]]}");
	/* the same intent re-sent is redacted the same way: still a duplicate */
	ev = test_json(intent);
	assert_int_equal(docket_ledger_append_json(f->l, &ev, 1, &res), 0);
	assert_true(res.duplicate);
	assert_int_equal(res.seq, c1);
	json_decref(ev);
	/* output that is a JSON document is walked and written back compact;
	 * JSON with nothing to hide and text that is not JSON stay byte for byte */
	ok(f, EV("tool.dispatched", "c1", ""));
	done1 = ok(f, EV("tool.completed", "c1", ",\"status\":\"ok\","
			 "\"output\":\"{\\\"data\\\": [{\\\"access_token\\\": \\\"tok1\\\"}], \\\"n\\\": 1}\""));
	assert_member_string(f, done1, "output", "{\"data\":[{\"access_token\":\"[REDACTED:secret-field]\"}],\"n\":1}");
	ok(f, EV("tool.intent", "c2", ",\"tool\":\"deploy\",\"decision\":{\"verdict\":\"allowed\"}"));
	ok(f, EV("tool.dispatched", "c2", ""));
	done2 = ok(f, EV("tool.completed", "c2", ",\"status\":\"error\",\"output\":\"{ \\\"n\\\": 1 }\","
			 "\"error\":\"{password: not json\""));
	assert_member_string(f, done2, "output", "{ \"n\": 1 }");
	assert_member_string(f, done2, "error", "{password: not json");
	assert_true(verify_ok(f));
}

/* Own key names, the built-ins off; bad "keys" are refused. */
static void test_redact_secret_keys_configured(void **state)
{
	fixture *f = *state;
	const char *own = "{\"builtin\":false,\"keys\":[\"x-acme-auth\"]}";
	const char *bad[] = {
		"{\"keys\":\"password\"}", "{\"keys\":[1]}", "{\"keys\":[\"\"]}", "{\"keys\":[\"--__\"]}",
		"{\"keys\":[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}",
	};
	docket_redactor *r = NULL;
	uint64_t seq;

	assert_int_equal(docket_ledger_set_redaction(f->l, own, strlen(own)), 0);
	seq = ok(f, "{\"type\":\"session.opened\",\"session\":\"s1\",\"env\":{\"X_ACME_AUTH\":\"a1\",\"acmeAuth\":\"a2\","
		    "\"PASSWORD\":\"p1\"}}");
	assert_member_json(f, seq, "env", "{\"X_ACME_AUTH\":" R_FIELD ",\"acmeAuth\":\"a2\",\"PASSWORD\":\"p1\"}");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (docket_redactor_new(&r, bad[i], strlen(bad[i])) != DOCKET_EINVALID)
			fail_msg("accepted: %s", bad[i]);
		assert_null(r);
		assert_int_equal(docket_ledger_set_redaction(f->l, bad[i], strlen(bad[i])), DOCKET_EINVALID);
	}
}

/* ---- who may change the ledger (issue 28): store_check_trust ---- */

/*
 * "Another user": as root, `path` is given to uid 65534 and checked as root;
 * otherwise it stays ours and is checked as a uid that is not ours (nor
 * root). Either way the owner is neither the checking uid nor root.
 */
static uid_t give_away(const char *path)
{
	if (geteuid() == 0) {
		assert_int_equal(lchown(path, 65534, (gid_t)-1), 0);
		return 0;
	}
	return geteuid() + 1;
}

static int open_flags(docket_ledger **l, const char *dir, unsigned flags)
{
	docket_open_options o = DOCKET_OPEN_OPTIONS_INIT;

	o.flags = flags;
	docket_error_clear();
	return docket_ledger_open(l, dir, &o);
}

/* Opening `dir` (writable, and read-only) fails, naming `why`. */
static void open_refused(const char *dir, const char *why)
{
	static const unsigned flags[] = { 0, DOCKET_OPEN_READONLY };
	docket_ledger *l = NULL;

	for (size_t i = 0; i < 2; i++) {
		int rc = open_flags(&l, dir, flags[i]);

		if (rc != DOCKET_ESTORAGE || !strstr(docket_error_last()->message, why))
			fail_msg("open %s (flags %u): %d '%s', expected a refusal naming '%s'", dir, flags[i], rc,
				 docket_error_last()->message, why);
		assert_null(l);
	}
}

static void open_fine(const char *dir)
{
	docket_ledger *l = NULL;

	if (open_flags(&l, dir, 0) != 0)
		fail_msg("open %s: %s", dir, docket_error_last()->message);
	docket_ledger_free(l);
}

static void test_trust_modes_and_links(void **state)
{
	fixture *f = *state;
	char path[4096], link[4096];
	char *other = test_mkdtemp();

	docket_ledger_free(f->l);
	f->l = NULL;
	/* the directory, or a file of it, writable by group or others */
	assert_int_equal(chmod(f->dir, 0770), 0);
	open_refused(f->dir, "is writable by its group (mode 0770)");
	assert_int_equal(chmod(f->dir, 0705), 0);
	open_fine(f->dir);   /* readable by others is fine */
	assert_int_equal(chmod(f->dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/data.mdb", f->dir);
	assert_int_equal(chmod(path, 0602), 0);
	open_refused(f->dir, "data.mdb is writable by others (mode 0602)");
	assert_int_equal(chmod(path, 0600), 0);
	/* a link inside the ledger */
	snprintf(path, sizeof(path), "%s/data.mdb.bak", f->dir);
	assert_int_equal(symlink("/dev/null", path), 0);
	open_refused(f->dir, "data.mdb.bak is a symbolic link");
	assert_int_equal(unlink(path), 0);
	/* my own link to my own ledger is followed */
	snprintf(link, sizeof(link), "%s/ledger", other);
	assert_int_equal(symlink(f->dir, link), 0);
	open_fine(link);
	/* a dangling link is not created through, and nothing is made */
	snprintf(path, sizeof(path), "%s/dangling", other);
	snprintf(link, sizeof(link), "%s/missing", other);
	assert_int_equal(symlink(link, path), 0);
	assert_int_equal(open_flags(&f->l, path, DOCKET_OPEN_CREATE), DOCKET_ESTORAGE);
	assert_non_null(strstr(docket_error_last()->message, "a symbolic link to a directory that does not exist"));
	assert_int_equal(access(link, F_OK), -1);
	open_fine(f->dir);
	test_rmdir_free(other);
}

static void test_trust_parent(void **state)
{
	fixture *f = *state;
	char *d = test_mkdtemp();
	char path[4096];
	uid_t uid;

	docket_ledger_free(f->l);
	f->l = NULL;
	snprintf(path, sizeof(path), "%s/l", d);
	/* a parent anyone can write, no sticky bit: refused, and nothing left there */
	assert_int_equal(chmod(d, 0777), 0);
	assert_int_equal(open_flags(&f->l, path, DOCKET_OPEN_CREATE), DOCKET_ESTORAGE);
	assert_non_null(strstr(docket_error_last()->message, "which anyone can write (mode 0777, no sticky bit)"));
	assert_null(f->l);
	assert_int_equal(access(path, F_OK), -1);
	/* with the sticky bit (as /tmp), others cannot replace what is ours */
	assert_int_equal(chmod(d, 01777), 0);
	assert_int_equal(open_flags(&f->l, path, DOCKET_OPEN_CREATE), 0);
	docket_ledger_free(f->l);
	f->l = NULL;
	assert_int_equal(chmod(d, 0700), 0);
	assert_int_equal(store_check_trust(path, geteuid(), 1), 0);
	/* a parent another user owns: that user can rename the ledger away */
	uid = give_away(d);
	assert_int_equal(store_check_trust(path, uid, 0), DOCKET_ESTORAGE);
	assert_non_null(strstr(docket_error_last()->message, "which uid "));
	assert_non_null(strstr(docket_error_last()->message, "that user can replace the ledger"));
	if (geteuid() == 0)
		assert_int_equal(chown(d, 0, (gid_t)-1), 0);
	test_rmdir_free(d);
}

static void test_trust_other_owner(void **state)
{
	fixture *f = *state;
	char *d = test_mkdtemp();
	char link[4096];
	uid_t uid;

	docket_ledger_free(f->l);
	f->l = NULL;
	assert_int_equal(store_check_trust(f->dir, geteuid(), 1), 0);
	/* a ledger another user owns: refused for writing */
	uid = give_away(f->dir);
	assert_int_equal(store_check_trust(f->dir, uid, 1), DOCKET_ESTORAGE);
	assert_non_null(strstr(docket_error_last()->message, "is owned by uid "));
	assert_non_null(strstr(docket_error_last()->message, "its owner can change the log under you"));
	if (geteuid() == 0)
		assert_int_equal(chown(f->dir, 0, (gid_t)-1), 0);
	/* a link another user owns, to my own ledger: they can re-point it */
	snprintf(link, sizeof(link), "%s/ledger", d);
	assert_int_equal(symlink(f->dir, link), 0);
	assert_int_equal(store_check_trust(link, geteuid(), 1), 0);
	uid = give_away(link);
	assert_int_equal(store_check_trust(link, uid, 0), DOCKET_ESTORAGE);
	assert_non_null(strstr(docket_error_last()->message, "is a symbolic link owned by uid "));
	/* no such path: for the caller to report */
	snprintf(link, sizeof(link), "%s/none", d);
	assert_int_equal(store_check_trust(link, geteuid(), 1), DOCKET_ENOTFOUND);
	test_rmdir_free(d);
}

static void test_open_errors(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;
	char path[4096];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint8_t v[8];
	MDB_val k = { 14, (void *)"format_version" }, val = { 8, v };

	snprintf(path, sizeof(path), "%s/nothing-here", f->dir);
	assert_int_equal(docket_ledger_open(&l, path, &opts), DOCKET_ENOTFOUND);
	assert_null(l);
	assert_non_null(strstr(docket_error_last()->message, "docket init"));

	docket_ledger_free(f->l);
	f->l = NULL;
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
	assert_int_equal(mdb_env_open(env, f->dir, MDB_NOTLS, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
	assert_int_equal(mdb_dbi_open(txn, "meta", 0, &dbi), 0);
	docket_be64_put(v, 99);
	assert_int_equal(mdb_put(txn, dbi, &k, &val, 0), 0);
	assert_int_equal(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	assert_int_equal(docket_ledger_open(&l, f->dir, &opts), DOCKET_EVERSION);
	assert_non_null(strstr(docket_error_last()->message, "version 99"));
}

static void test_map_growth_and_cap(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	char buf[512];
	docket_ledger_info info;
	int rc = 0, i;
	uint64_t before;

	docket_ledger_free(f->l);
	f->l = NULL;
	test_rmdir_free(f->dir);
	f->dir = test_mkdtemp();
	opts.flags = DOCKET_OPEN_CREATE;
	opts.map_size = 64 * 1024;
	opts.map_size_max = 4 * 1024 * 1024;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	open_session(f, "s1");
	/* grow: far more than 64 KiB of events */
	for (i = 0; i < 600; i++) {
		snprintf(buf, sizeof(buf), EV("tool.intent", "g%d", ",\"tool\":\"shell\",\"args\":{\"note\":\"%0200d\"}"), i, i);
		ok(f, buf);
	}
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_true(info.map_size > 64 * 1024);
	assert_int_equal(info.events, 601);
	/* the cap: a clear error, and the ledger intact */
	for (i = 600; i < 200000; i++) {
		snprintf(buf, sizeof(buf), EV("tool.intent", "g%d", ",\"tool\":\"shell\",\"args\":{\"note\":\"%0300d\"}"), i, i);
		before = head(f);
		if ((rc = put(f, buf, NULL)) != 0)
			break;
	}
	assert_int_equal(rc, DOCKET_EMAPFULL);
	assert_non_null(strstr(docket_error_last()->message, "cap"));
	assert_int_equal(head(f), before);
	assert_true(verify_ok(f));
	/* reopened with a higher cap it takes more */
	docket_ledger_free(f->l);
	opts.flags = 0;
	opts.map_size_max = 16 * 1024 * 1024;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	ok(f, buf);
	assert_true(verify_ok(f));
}

static void test_dictionary_trained_and_used(void **state)
{
	fixture *f = *state;
	json_t *evs[256];
	docket_ledger_info info;
	char buf[512];
	int n = 0;

	open_session(f, "s1");
	for (int i = 0; i < 1200; i++) {
		const char *fmt[] = {
			EV("tool.intent", "c%d", ",\"tool\":\"shell\",\"turn\":\"turn-%d\",\"args\":{\"command\":[\"bash\",\"-lc\",\"git status --short\"],"
			   "\"cwd\":\"/home/user/project\"},\"decision\":{\"verdict\":\"allowed\",\"source\":\"runtime\",\"reasons\":[\"known_safe\"]}"),
			EV("tool.dispatched", "c%d", ",\"turn\":\"turn-%d\""),
			EV("tool.completed", "c%d", ",\"turn\":\"turn-%d\",\"status\":\"ok\",\"exit_code\":0,\"output\":\" M src/main.c\\n\","
			   "\"duration_ms\":12"),
		};
		for (int j = 0; j < 3; j++) {
			snprintf(buf, sizeof(buf), fmt[j], i, i / 4);
			evs[n++] = test_json(buf);
			if (n == 255) {
				assert_int_equal(docket_ledger_append_json(f->l, evs, (size_t)n, NULL), 0);
				while (n)
					json_decref(evs[--n]);
			}
		}
	}
	assert_int_equal(docket_ledger_append_json(f->l, evs, (size_t)n, NULL), 0);
	while (n)
		json_decref(evs[--n]);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.events, 3601);
	assert_int_equal(info.dictionaries, 1);
	print_message("payload %llu bytes, frames %llu bytes\n", (unsigned long long)info.payload_bytes,
		      (unsigned long long)info.frame_bytes);
	assert_true(info.frame_bytes < info.payload_bytes);
	/* events written before and after the dictionary read back */
	json_t *out = json_array();
	assert_int_equal(docket_ledger_read_json(f->l, NULL, collect_json, out), 0);
	assert_int_equal(json_array_size(out), 3601);
	assert_string_equal(json_string_value(json_object_get(json_array_get(out, 3600), "output")), " M src/main.c\n");
	json_decref(out);
	/* and a fresh handle (no cached dictionary) reads them too */
	docket_ledger_free(f->l);
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	assert_true(verify_ok(f));
}

/* The training's trial compressions on a handle that compressed nothing
 * before: a serve started after a kill whose first transaction ended on a
 * segment boundary (the segment workers compress with contexts of their
 * own) crashed there once the handle's zstd context was made at first use
 * (torture_long); the training makes it too. */
static void test_dictionary_trained_by_fresh_handle(void **state)
{
	fixture *f = *state;
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger_info info;
	json_t *evs[200];
	char buf[512];
	MDB_txn *txn = NULL;
	size_t n = 0;

	open_session(f, "s1");
	for (int i = 0; i < 600; i++) {
		snprintf(buf, sizeof(buf), EV("tool.intent", "c%d", ",\"tool\":\"shell\",\"args\":{\"command\":"
					       "[\"bash\",\"-lc\",\"git status --short %d\"],\"cwd\":\"/home/user/p\"}"),
			 i, i);
		evs[n++] = test_json(buf);
		if (n == 200) {
			assert_int_equal(docket_ledger_append_json(f->l, evs, n, NULL), 0);
			while (n)
				json_decref(evs[--n]);
		}
	}
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.dictionaries, 1);  /* trained at 512, by the handle that compressed */
	/* untrain: a fresh handle's first write is a training */
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	{
		uint8_t key[4] = { 0, 0, 0, 1 };
		MDB_val k = { sizeof(key), key };

		assert_int_equal(mdb_del(txn, f->l->dbi.dicts, &k, NULL), 0);
	}
	assert_int_equal(store_meta_put_u64(txn, f->l, "dict_active", 0), 0);
	assert_int_equal(store_meta_put_u64(txn, f->l, "dict_next_try", 0), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	docket_ledger_free(f->l);
	assert_int_equal(docket_ledger_open(&f->l, f->dir, &opts), 0);
	assert_int_equal(store_txn_begin(&txn, f->l, 0), 0);
	assert_int_equal(frame_maybe_train(f->l, txn, 601), 0);
	assert_int_equal(store_txn_commit(f->l, txn), 0);
	assert_int_equal(docket_ledger_info_get(f->l, &info), 0);
	assert_int_equal(info.dictionaries, 1);
}

/* ---- allocation failures on the append path ---- */

static void test_alloc_failures_append(void **state)
{
	fixture *f = *state;
	const char *lines[] = {
		EV("tool.intent", "c%d", ",\"tool\":\"shell\",\"args\":{\"command\":[\"ls\"]},\"decision\":{\"verdict\":\"allowed\"}"),
		EV("tool.dispatched", "c%d", ""),
		EV("tool.completed", "c%d", ",\"status\":\"ok\",\"exit_code\":0,\"output\":\"hello\""),
	};
	int failures = 0, attempt = 0;

	open_session(f, "s1");
	for (long n = 0;; n++) {
		json_t *evs[3];
		char buf[256];
		int rc;

		attempt++;
		for (int j = 0; j < 3; j++) {
			snprintf(buf, sizeof(buf), lines[j], 1);
			evs[j] = test_json(buf);
		}
		uint64_t before = head(f);
		docket_alloc_fail_after(n);
		rc = docket_ledger_append_json(f->l, evs, 3, NULL);
		docket_alloc_fail_reset();
		for (int j = 0; j < 3; j++)
			json_decref(evs[j]);
		if (rc == 0)
			break;
		assert_int_equal(rc, DOCKET_ENOMEM);
		assert_int_equal(head(f), before);
		failures++;
		assert_true(n < 10000);
	}
	assert_true(failures > 5);
	assert_int_equal(head(f), 4);
	assert_true(verify_ok(f));
	print_message("append survived %d injected allocation failures\n", failures);
}

/*
 * verify out of memory (the protobuf-c arena, the Merkle check, the scratch
 * ledger): it fails to run with DOCKET_ENOMEM, and never reports an honest
 * ledger as FAILED.
 */
static void test_verify_out_of_memory_never_lies(void **state)
{
	fixture *f = *state;
	int failures = 0;

	fill_session(f, 3);
	for (long n = 0;; n += 1 + n / 8) {
		docket_verify_report rep;
		int rc;

		docket_alloc_fail_after(n);
		rc = docket_ledger_verify(f->l, &rep);
		docket_alloc_fail_reset();
		if (rc == 0) {
			if (!rep.ok)
				fail_msg("allocation %ld failing made verify report: %s", n, rep.problem);
			if (docket_alloc_failures() == 0)
				break;
			continue;
		}
		assert_int_equal(rc, DOCKET_ENOMEM);
		failures++;
		assert_true(n < 100000);
	}
	assert_true(failures > 5);
	assert_true(verify_ok(f));
}

/* The arena verify decodes into (docket_arena through protobuf-c): an event
 * bigger than the arena spills to the heap, the arena starts over once every
 * piece is freed, out of memory is reported as such, garbage as corruption. */
static void test_pb_arena(void **state)
{
	fixture *f = *state;
	docket_buf packed = DOCKET_BUF_INIT;
	docket_arena a;
	ProtobufCAllocator pb;
	docket_event *ev = NULL, *big = NULL;
	char *out = docket_malloc(200001), *text = docket_malloc(200200);
	json_t *j;

	(void)f;
	memset(out, 'x', 200000);
	out[200000] = '\0';
	snprintf(text, 200200, EV("tool.completed", "c1", ",\"status\":\"ok\",\"exit_code\":0,\"output\":\"%s\""), out);
	j = test_json(text);
	assert_int_equal(docket_event_from_json(&big, j), 0);
	json_decref(j);
	assert_int_equal(event_pack(&packed, big), 0);
	assert_int_equal(docket_arena_init(&a, (size_t)64 << 10), 0);
	docket_arena_pb(&pb, &a);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(event_unpack_in(&ev, &pb, (const uint8_t *)packed.ptr, packed.len), 0);
		assert_string_equal(ev->tool_completed->output, out);
		assert_string_equal(ev->invocation, "c1");
		assert_true(a.spilled > 0);   /* the 200 KB output did not fit */
		docket__v1__event__free_unpacked(ev, &pb);
		assert_int_equal(a.live, 0);
		assert_int_equal(a.used, 0);  /* started over */
	}
	/* out of memory is an error of its own, not corruption */
	docket_alloc_fail_after(0);
	assert_int_equal(event_unpack_in(&ev, &pb, (const uint8_t *)packed.ptr, packed.len), DOCKET_ENOMEM);
	docket_alloc_fail_reset();
	/* and garbage is corruption */
	assert_int_equal(event_unpack_in(&ev, &pb, (const uint8_t *)"\xff\xff\xff", 3), DOCKET_ECORRUPT);
	assert_int_equal(a.live, 0);
	docket_arena_dispose(&a);
	docket_event_free(big);
	docket_buf_dispose(&packed);
	docket_free(out);
	docket_free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inv1_nothing_before_intent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv1_intent_idempotent_and_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv2_request_needs_approval_required, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv2_never_asks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv2_not_after_dispatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv3_settle_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv3_no_outcome_while_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv4_dispatchable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv4_superseded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv4_redispatch_only_through_recovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv5_one_outcome, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv6_revisions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv2_never_asks_every_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv2_never_asks_remembered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv3_refusal_is_final, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicates_answer_original_seq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv4_revalidation_in_txn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv4_attempt_and_token_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv7_epochs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv7_lineages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv7_restart_in_one_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv8_session_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv9_outcome_agrees, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inv10_recovery_fits_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_index_only_moved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch_all_or_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_every_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_vectors_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamp_monotonic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_finds_flipped_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_parallel_same_verdicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_hashed_same_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_hashed_tamper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_finds_bad_projection_and_reindex_repairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_scratch_grows_never_lies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_out_of_memory_never_lies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pb_arena, setup, teardown),
		cmocka_unit_test(test_inv_record_layout),
		cmocka_unit_test(test_inv_record_refuses_bad_bytes),
		cmocka_unit_test_setup_teardown(test_hot_meta_in_main, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_index_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_projections_rebuilt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recent_invocations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recent_invocations_damaged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_check_in_long_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_checks_the_data_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_isolates_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_rolls_back_refused_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_parked_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_commit_pending_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parked_sessions_overflow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compact_refuses_stale_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segment_gap_and_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_sentinel_not_listed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redact_secret_keys_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_redact_secret_keys_configured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trust_modes_and_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trust_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trust_other_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_growth_and_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dictionary_trained_and_used, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dictionary_trained_by_fresh_handle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_failures_append, setup, teardown),
	};

	docket_alloc_install_json();
	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
