/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report_json.c: one row of the JSON report (a changed or undecided call),
 * written straight into a buffer instead of built as a jansson tree and
 * dumped. The bytes are exactly what json_dumpf(JSON_COMPACT |
 * JSON_ENCODE_ANY) gave for the same row (test_replay_json compares the two
 * on the golden cases and on hostile strings):
 *   - strings are written by docket_json_write_string (util/json_write.c),
 *     which escapes as jansson does and refuses what is not valid UTF-8, as
 *     json_string() refuses it;
 *   - `args` is copied as stored: the ledger stored it as jansson's compact
 *     dump (ledger/event.c store_json_text), replay has parsed it to evaluate
 *     it, and dumping a parsed dump gives the same bytes again.
 */
#include <string.h>

#include "report_internal.h"
#include "util/error.h"
#include "util/json_write.h"

int report_json_string(docket_buf *out, const char *str)
{
	int error;

	if (!str)
		return docket_buf_put(out, "null", 4);
	if ((error = docket_json_write_string(out, str, strlen(str))) == DOCKET_EINVALID)
		return docket_error_set(DOCKET_ECORRUPT, "a recorded string is not valid UTF-8");
	return error;
}

static int key(docket_buf *out, const char *k)
{
	int error;

	if ((error = docket_buf_put(out, ",\"", 2)) < 0 || (error = docket_buf_puts(out, k)) < 0)
		return error;
	return docket_buf_put(out, "\":", 2);
}

static int str_member(docket_buf *out, const char *k, const char *v)
{
	int error = key(out, k);

	return error < 0 ? error : report_json_string(out, v);
}

static int raw_member(docket_buf *out, const char *k, const char *v)
{
	int error = key(out, k);

	return error < 0 ? error : docket_buf_puts(out, v);
}

static const char *verdict(int v)
{
	return docket_policy_verdict_name((docket_verdict)v);
}

int report_json_row(docket_buf *out, const char *commit, const report_row *row)
{
	const char *reason = row->s[RS_REASON] && *row->s[RS_REASON] ? row->s[RS_REASON] : NULL;
	int undecided = row->fx.cls == DOCKET_REPLAY_UNDECIDED, error;

	if ((error = docket_buf_printf(out, "{\"seq\":%llu", (unsigned long long)row->fx.seq)) < 0 ||
	    (error = str_member(out, "session", row->s[RS_SESSION])) < 0 ||
	    (error = str_member(out, "invocation", row->s[RS_INVOCATION])) < 0 ||
	    (error = str_member(out, "time", row->s[RS_TIME])) < 0 ||
	    (error = str_member(out, "tool", row->s[RS_TOOL])) < 0 ||
	    (error = raw_member(out, "args", row->s[RS_ARGS])) < 0 ||
	    (error = str_member(out, "target", row->s[RS_TARGET])) < 0 ||
	    (error = str_member(out, "was", undecided ? NULL : verdict(row->fx.was))) < 0 ||
	    (error = str_member(out, "baseline",
				docket_replay_baseline_name((docket_replay_baseline)row->fx.baseline))) < 0 ||
	    (error = str_member(out, "now", verdict(row->fx.now))) < 0 ||
	    (error = str_member(out, "class", docket_replay_class_name((docket_replay_class)row->fx.cls))) < 0 ||
	    (error = raw_member(out, "human_denied", row->fx.human_denied ? "true" : "false")) < 0 ||
	    (error = str_member(out, "rule", row->s[RS_RULE])) < 0)
		return error;
	if (row->s[RS_RULE] && row->fx.rule_line)
		error = docket_buf_printf(out, ",\"rule_line\":%u", row->fx.rule_line);
	else
		error = raw_member(out, "rule_line", "null");
	if (error < 0 || (error = str_member(out, "reason", reason)) < 0 ||
	    (error = str_member(out, "commit", commit)) < 0)
		return error;
	/* both verdicts when they differ (docs/policy.md "Two verdicts") */
	if (row->s[RS_EWHY] && ((error = str_member(out, "enforced", verdict(row->fx.enforced))) < 0 ||
				(error = str_member(out, "enforced_reason", row->s[RS_EWHY])) < 0))
		return error;
	/* a fleet replay's call: which machine's ledger it came from */
	if (row->s[RS_LEDGER] && ((error = str_member(out, "ledger", row->s[RS_LEDGER])) < 0 ||
				  (error = str_member(out, "host", row->s[RS_HOST] ? row->s[RS_HOST] : "")) < 0))
		return error;
	return docket_buf_put(out, "}", 1);
}
