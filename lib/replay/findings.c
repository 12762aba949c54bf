/* SPDX-License-Identifier: Apache-2.0 */
/*
 * findings.c: what replay finds that no engine gives: a recorded call that
 * ran (was dispatched) although a deny rule of the replayed policy names it
 * under docket's enforcement (docs/replay.md, "Calls that ran although a
 * deny rule names them"). The engine verdict may even allow it (Codex would
 * have run it sandboxed); the enforced verdict is denied by a rule.
 */
#include <string.h>

#include "replay_internal.h"
#include "docket/replay.h"
#include "util/error.h"

int docket_replay_ran_despite_deny(const docket_replay_call *c)
{
	return c->deny_rule != NULL && c->enforced == DOCKET_VERDICT_DENIED && c->ran == 1;
}

static int set(json_t *o, const char *k, json_t *v)
{
	return v && json_object_set_new(o, k, v) == 0 ? 0 : docket_error_set_oom();
}

int docket_replay_finding_json(json_t **out, const docket_replay_call *c)
{
	docket_buf target = DOCKET_BUF_INIT;
	json_t *o = json_object();
	int error;

	*out = NULL;
	if (!o)
		return docket_error_set_oom();
	if (!c->target && (error = replay_target(&target, c->args_json)) < 0)
		goto done;
	if ((error = set(o, "seq", json_integer((json_int_t)c->seq))) < 0 ||
	    (error = set(o, "session", json_string(c->session))) < 0 ||
	    (error = set(o, "invocation", json_string(c->invocation))) < 0 ||
	    (error = set(o, "time", json_string(c->time ? c->time : ""))) < 0 ||
	    (error = set(o, "tool", json_string(c->tool))) < 0 ||
	    (error = set(o, "target", json_string(c->target ? c->target : target.ptr ? target.ptr : ""))) < 0 ||
	    (error = set(o, "engine", json_string(docket_policy_verdict_name(c->now)))) < 0 ||
	    (error = set(o, "enforced", json_string(docket_policy_verdict_name(c->enforced)))) < 0 ||
	    (error = set(o, "rule", json_string(c->deny_rule))) < 0 ||
	    (error = set(o, "rule_line", c->deny_line ? json_integer(c->deny_line) : json_null())) < 0 ||
	    (error = set(o, "reason", c->enforced_why ? json_string(c->enforced_why) : json_null())) < 0)
		goto done;
	if (c->ledger && ((error = set(o, "ledger", json_string(c->ledger))) < 0 ||
			  (error = set(o, "host", json_string(c->host ? c->host : ""))) < 0))
		goto done;
	*out = o;
	o = NULL;
done:
	json_decref(o);
	docket_buf_dispose(&target);
	return error;
}
