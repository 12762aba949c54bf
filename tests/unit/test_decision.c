// SPDX-License-Identifier: Apache-2.0
/*
 * test_decision.c: the recorded decision (ledger/decision.c): built as
 * codes with the deciding rule first and the revision, every allocation
 * failure reported and nothing leaked; rendered from code + rule +
 * revision, and a reason that is no code (an older ledger's text, a
 * runtime's words) shown as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "docket/policy.h"
#include "ledger/decision.h"
#include "util/alloc.h"
#include "testutil.h"
#include "util/error.h"

/* A script whose first segment an allow rule matches and whose second a
 * deny rule decides: the deny rule is the deciding one. */
static const char policy_yaml[] =
	"version: 1\n"
	"commands:\n"
	"  - pattern: [git, status]\n"
	"    decision: allow\n"
	"  - pattern: [rm]\n"
	"    decision: deny\n";

static docket_policy_result *evaluate(docket_policy **policy, const char *call_json)
{
	docket_policy_result *res = NULL;
	docket_policy_call *call = NULL;
	json_t *c = json_loads(call_json, 0, NULL);

	assert_non_null(c);
	assert_int_equal(docket_policy_load_buffer(policy, DOCKET_POLICY_DOCKET, "p.yaml", policy_yaml,
						   strlen(policy_yaml)), 0);
	assert_int_equal(docket_policy_call_from_json(&call, c), 0);
	assert_int_equal(docket_policy_result_new(&res), 0);
	assert_int_equal(docket_policy_eval(res, *policy, call, NULL), 0);
	docket_policy_call_free(call);
	json_decref(c);
	return res;
}

static const char script_call[] =
	"{\"tool\":\"shell\",\"args\":{\"command\":[\"bash\",\"-lc\",\"git status && rm -rf build\"]}}";

static void test_build_codes_deciding_rule_first(void **state)
{
	docket_policy *policy = NULL;
	docket_policy_result *res = evaluate(&policy, script_call);
	json_t *d = NULL, *want = json_loads("{\"verdict\":\"denied\",\"source\":\"docket\",\"reasons\":[\"rule\"],"
					     "\"rules\":[\"command [rm] -> deny\",\"command [git, status] -> allow\"],"
					     "\"policy_revision\":3}", 0, NULL);

	(void)state;
	/* the evaluator matched the allow rule first */
	assert_string_equal(docket_policy_result_match_rule(res, 0), "command [git, status] -> allow");
	assert_int_equal(decision_build(&d, res, 3), 0);
	if (!json_equal(d, want)) {
		char *got = json_dumps(d, JSON_COMPACT);

		fail_msg("got %s", got);
	}
	json_decref(d);
	/* revision 0: a policy the ledger does not hold, no key */
	assert_int_equal(decision_build(&d, res, 0), 0);
	assert_null(json_object_get(d, "policy_revision"));
	json_decref(d);
	json_decref(want);
	docket_policy_result_free(res);
	docket_policy_free(policy);
}

/* Every allocation that fails is DOCKET_ENOMEM with *out NULL (ASan and
 * valgrind see the leaks, if any). */
static void test_build_out_of_memory(void **state)
{
	docket_policy *policy = NULL;
	docket_policy_result *res = evaluate(&policy, script_call);
	json_t *d = NULL;
	int failed = 0;

	(void)state;
	docket_alloc_install_json();
	for (long n = 0; n < 200; n++) {
		int rc;

		docket_alloc_fail_after(n);
		rc = decision_build(&d, res, 1);
		docket_alloc_fail_reset();
		if (rc == 0) {
			json_decref(d);
			break;
		}
		assert_int_equal(rc, DOCKET_ENOMEM);
		assert_null(d);
		failed++;
	}
	assert_true(failed > 0);
	docket_policy_result_free(res);
	docket_policy_free(policy);
}

static char *render(const char *reason, const char *verdict, const char *rule, uint32_t revision)
{
	static char text[512];
	docket_buf b = DOCKET_BUF_INIT;

	assert_int_equal(decision_reason_text(&b, reason, verdict, rule, revision), 0);
	snprintf(text, sizeof(text), "%s", b.ptr ? b.ptr : "");
	docket_buf_dispose(&b);
	return text;
}

static void test_render(void **state)
{
	(void)state;
	assert_string_equal(render("rule", "denied", "command [rm] -> deny", 1), "denied by rule command [rm] -> deny");
	assert_string_equal(render("rule", "approval_required", "Bash(git push:*)", 0),
			    "approval required by rule Bash(git push:*)");
	assert_string_equal(render("rule", "denied", NULL, 0), "denied by a rule of the policy");
	assert_string_equal(render("approval_mode", "denied", NULL, 2),
			    "approval required, but the approval mode of policy revision 2 does not ask");
	assert_string_equal(render("approval_mode", "denied", NULL, 0),
			    "approval required, but the policy's approval mode does not ask");
	assert_string_equal(render("known_safe", "allowed", NULL, 0), "known safe (read-only) command");
	assert_string_equal(render("no_sandbox", "approval_required", NULL, 1),
			    "the engine would run this in a sandbox; this client does not sandbox it");
	/* not a code: shown as written (texts serve stored before codes, a runtime's own) */
	assert_string_equal(render("`rm -rf build` requires approval by policy", "approval_required", "command [rm] -> ask", 1),
			    "`rm -rf build` requires approval by policy");
	assert_string_equal(render("prefix_rule: curl is forbidden", "denied", NULL, 0), "prefix_rule: curl is forbidden");
	assert_string_equal(render("destructive", "approval_required", NULL, 0), "destructive");
	assert_string_equal(render("", "denied", NULL, 0), "");
	assert_string_equal(render(NULL, "denied", NULL, 0), "");
	assert_true(decision_reason_is_code("rule"));
	assert_true(decision_reason_is_code("sandboxed"));
	assert_false(decision_reason_is_code("destructive"));
	assert_false(decision_reason_is_code(NULL));
}

/* A whole decision, as stored: non-strings skipped, a revision out of range ignored. */
static void test_render_decision(void **state)
{
	json_t *d = json_loads("{\"verdict\":\"denied\",\"reasons\":[\"rule\",7,\"approval_mode\",\"a text\"],"
			       "\"rules\":[\"R\"],\"policy_revision\":4}", 0, NULL);
	json_t *bad = json_loads("{\"verdict\":\"denied\",\"reasons\":[\"approval_mode\"],\"policy_revision\":-1}", 0, NULL);
	docket_buf b = DOCKET_BUF_INIT;

	(void)state;
	assert_int_equal(decision_reasons_text(&b, d, "; "), 0);
	assert_string_equal(b.ptr, "denied by rule R; approval required, but the approval mode of policy revision 4 "
			    "does not ask; a text");
	docket_buf_clear(&b);
	assert_int_equal(decision_reasons_text(&b, bad, "; "), 0);
	assert_string_equal(b.ptr, "approval required, but the policy's approval mode does not ask");
	docket_buf_clear(&b);
	assert_int_equal(decision_reasons_text(&b, NULL, "; "), 0);
	assert_true(b.len == 0);
	docket_buf_dispose(&b);
	json_decref(d);
	json_decref(bad);
}

/* docs/protocol.md lists every code the rendering knows, and no other. */
static void test_codes_documented(void **state)
{
	const char *start, *end;
	char *doc = test_doc_block("docs/protocol.md", "reason-codes", &start, &end);
	size_t nlisted = 0, i;

	(void)state;
	for (const char *p = start; (p = memchr(p, '`', (size_t)(end - p)));) {
		const char *q = memchr(p + 1, '`', (size_t)(end - p - 1));
		char code[64];

		assert_non_null(q);
		snprintf(code, sizeof(code), "%.*s", (int)(q - p - 1), p + 1);
		if (strcmp(code, "reasons") != 0) {
			if (!decision_reason_is_code(code))
				fail_msg("docs/protocol.md lists `%s`, which is no code decision.c knows", code);
			nlisted++;
		}
		p = q + 1;
	}
	for (i = 0; decision_reason_code(i); i++) {
		char quoted[80];
		size_t n = (size_t)snprintf(quoted, sizeof(quoted), "`%s`", decision_reason_code(i));

		if (!memmem(start, (size_t)(end - start), quoted, n))
			fail_msg("code %s is not listed in docs/protocol.md", decision_reason_code(i));
	}
	assert_int_equal(nlisted, i);  /* each listed once */
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_codes_deciding_rule_first),
		cmocka_unit_test(test_build_out_of_memory),
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_render_decision),
		cmocka_unit_test(test_codes_documented),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
