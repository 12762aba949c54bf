// SPDX-License-Identifier: Apache-2.0
/*
 * decision.c: the recorded decision, the one builder and its rendering
 * (decision.h).
 *
 * Built: from an evaluation (policy/), as codes, rules (the deciding rule
 * first: readers take rules[0] as "the rule") and the policy revision.
 * Rendered: a code's sentence, naming the rule for "rule" and the revision
 * for "approval_mode"; what is not a known code is shown verbatim, so the
 * texts serve wrote before codes (immutable events) still read as written.
 */
#include "decision.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/reason.h"

/* ---- building ---- */

static int append_str(json_t *a, const char *s)
{
	return json_array_append_new(a, json_string(s)) < 0 ? docket_error_set_oom() : 0;
}

static int has_str(const json_t *a, const char *s)
{
	size_t i;
	const json_t *v;

	json_array_foreach(a, i, v)
		if (strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

static int build_rules(json_t *rules, const docket_policy_result *res)
{
	const char *deciding = docket_policy_result_deciding_rule(res, NULL);
	int error = 0;

	if (deciding)
		error = append_str(rules, deciding);
	for (size_t i = 0; error == 0 && i < docket_policy_result_match_count(res); i++) {
		const char *r = docket_policy_result_match_rule(res, i);

		if (r && !has_str(rules, r))
			error = append_str(rules, r);
	}
	return error;
}

int decision_build(json_t **out, const docket_policy_result *res, uint32_t revision)
{
	json_t *d = json_object(), *reasons = json_array(), *rules = json_array();
	int error = 0;

	*out = NULL;
	if (!d || !reasons || !rules)
		error = docket_error_set_oom();
	for (size_t i = 0; error == 0 && i < docket_policy_result_reason_count(res); i++)
		error = append_str(reasons, docket_policy_result_reason_code(res, i));
	if (error == 0)
		error = build_rules(rules, res);
	if (error == 0 &&
	    (json_object_set_new(d, "verdict",
				 json_string(docket_policy_verdict_name(docket_policy_result_verdict(res)))) < 0 ||
	     json_object_set_new(d, "source", json_string("docket")) < 0 ||
	     json_object_set(d, "reasons", reasons) < 0 || json_object_set(d, "rules", rules) < 0 ||
	     (revision && json_object_set_new(d, "policy_revision", json_integer(revision)) < 0)))
		error = docket_error_set_oom();
	json_decref(reasons);
	json_decref(rules);
	if (error < 0) {
		json_decref(d);
		return error;
	}
	*out = d;
	return 0;
}

/* ---- rendering ---- */

const char *decision_reason_code(size_t i)
{
	static const char *const special[] = { "rule", "approval_mode" };

	if (i < 2)
		return special[i];
	return docket_reason_code_at(i - 2);
}

int decision_reason_is_code(const char *reason)
{
	return reason && (strcmp(reason, "rule") == 0 || strcmp(reason, "approval_mode") == 0 ||
			  docket_reason_sentence(reason) != NULL);
}

static const char *verdict_words(const char *verdict)
{
	if (verdict && strcmp(verdict, "approval_required") == 0)
		return "approval required";
	return verdict && *verdict ? verdict : "decided";
}

int decision_reason_text(docket_buf *out, const char *reason, const char *verdict, const char *rule,
			 uint32_t revision)
{
	const char *s;

	if (!reason)
		return 0;
	if (strcmp(reason, "rule") == 0)
		return rule && *rule ? docket_buf_printf(out, "%s by rule %s", verdict_words(verdict), rule)
				     : docket_buf_printf(out, "%s by a rule of the policy", verdict_words(verdict));
	if (strcmp(reason, "approval_mode") == 0)
		return revision ? docket_buf_printf(out, "approval required, but the approval mode of policy "
						    "revision %u does not ask", revision)
				: docket_buf_puts(out, "approval required, but the policy's approval mode does not ask");
	s = docket_reason_sentence(reason);
	return docket_buf_puts(out, s ? s : reason);
}

int decision_reason_at(docket_buf *out, const json_t *decision, size_t i)
{
	const char *verdict = json_string_value(json_object_get(decision, "verdict"));
	const char *rule = json_string_value(json_array_get(json_object_get(decision, "rules"), 0));
	json_int_t rev = json_integer_value(json_object_get(decision, "policy_revision"));

	return decision_reason_text(out, json_string_value(json_array_get(json_object_get(decision, "reasons"), i)),
				    verdict, rule, rev > 0 && rev <= UINT32_MAX ? (uint32_t)rev : 0);
}

int decision_reasons_text(docket_buf *out, const json_t *decision, const char *sep)
{
	const json_t *r;
	size_t i, n = 0;
	int error = 0;

	json_array_foreach(json_object_get(decision, "reasons"), i, r) {
		if (!json_is_string(r))
			continue;
		if ((n++ && (error = docket_buf_puts(out, sep)) < 0) ||
		    (error = decision_reason_at(out, decision, i)) < 0)
			break;
	}
	return error;
}
