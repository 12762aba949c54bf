/* SPDX-License-Identifier: Apache-2.0 */
/*
 * collect.c: fold events into one record per invocation, per session and
 * per policy revision (see export_internal.h for the fields). The records
 * are jansson objects so that every writer reads the same names.
 */
#include <string.h>

#include "export_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/summary.h"

#define KEY_SEP "\x1f"

int collector_init(collector *c, int64_t since_ms)
{
	memset(c, 0, sizeof(*c));
	c->since_ms = since_ms;
	if (!(c->invocations = json_array()) || !(c->by_key = json_object()) ||
	    !(c->sessions = json_array()) || !(c->session_by_id = json_object()) ||
	    !(c->policies = json_array())) {
		collector_dispose(c);
		return docket_error_set_oom();
	}
	return 0;
}

void collector_dispose(collector *c)
{
	json_decref(c->invocations);
	json_decref(c->by_key);
	json_decref(c->sessions);
	json_decref(c->session_by_id);
	json_decref(c->policies);
	memset(c, 0, sizeof(*c));
}

static int inv_key(docket_buf *key, const json_t *ev)
{
	docket_buf_clear(key);
	return docket_buf_printf(key, "%s" KEY_SEP "%s", jstr(ev, "session"), jstr(ev, "invocation"));
}

json_t *collector_invocation(const collector *c, const json_t *ev)
{
	docket_buf key = DOCKET_BUF_INIT;
	json_t *inv = NULL;

	if (inv_key(&key, ev) == 0)
		inv = json_object_get(c->by_key, key.ptr);
	docket_buf_dispose(&key);
	return inv;
}

json_t *collector_session(const collector *c, const char *session)
{
	return json_object_get(c->session_by_id, session);
}

/* Copy member `from` of `ev` to member `to` of `rec` when present. */
static int copy(json_t *rec, const char *to, const json_t *ev, const char *from)
{
	json_t *v = json_object_get(ev, from);

	if (!v)
		return 0;
	return json_object_set(rec, to, v) == 0 ? 0 : docket_error_set_oom();
}

static int set_str(json_t *rec, const char *key, const char *value)
{
	return json_object_set_new(rec, key, json_string(value)) == 0 ? 0 : docket_error_set_oom();
}

static int set_int(json_t *rec, const char *key, json_int_t value)
{
	return json_object_set_new(rec, key, json_integer(value)) == 0 ? 0 : docket_error_set_oom();
}

static int append_to(json_t *rec, const char *key, json_t *item)
{
	json_t *arr = json_object_get(rec, key);

	if (!item)
		return docket_error_set_oom();
	if (!arr && (json_object_set_new(rec, key, arr = json_array()) < 0 || !arr)) {
		json_decref(item);
		return docket_error_set_oom();
	}
	return json_array_append_new(arr, item) == 0 ? 0 : docket_error_set_oom();
}

/* ---- decisions --------------------------------------------------------- */

int call_granted(const json_t *inv)
{
	const char *r = jstr(inv, "result");

	return strcmp(r, "approved") == 0 || strcmp(r, "approved_for_session") == 0;
}

int call_class(int has_result, int granted, int superseded, int dispatched, int refused, int has_status)
{
	if (has_result && !granted && !superseded)
		return D_REJECTED;
	if (dispatched)
		return granted ? D_APPROVED : D_ALLOWED;
	if (refused)
		return D_DENIED;
	if (!has_status)
		return D_PENDING;
	return D_ALLOWED;
}

int call_decision(const json_t *inv)
{
	const char *status = jstr(inv, "status");

	return call_class(jhas(inv, "result"), call_granted(inv), strcmp(jstr(inv, "result"), "superseded") == 0,
			  jhas(inv, "dispatches"), strcmp(status, "denied") == 0 || strcmp(status, "unsupported") == 0,
			  *status != 0);
}

int call_denied(const json_t *inv)
{
	int d = call_decision(inv);

	return d == D_DENIED || d == D_REJECTED;
}

/* ---- events ------------------------------------------------------------ */

static int on_intent(collector *c, const json_t *ev)
{
	docket_buf key = DOCKET_BUF_INIT, summary = DOCKET_BUF_INIT;
	const json_t *decision = json_object_get(ev, "decision");
	const json_t *args = json_object_get(ev, "args");
	int64_t ms = event_ms(ev);
	json_t *rec = NULL;
	int error;

	if ((error = inv_key(&key, ev)) < 0 || (error = docket_call_summary(&summary, jstr(ev, "tool"), args, 0)) < 0)
		goto cleanup;
	if (json_object_get(c->by_key, key.ptr))
		goto cleanup;
	if (!(rec = json_pack("{s:O, s:O, s:s, s:s, s:I, s:s, s:b}", "session", json_object_get(ev, "session"),
			      "invocation", json_object_get(ev, "invocation"), "tool", jstr(ev, "tool"),
			      "summary", summary.ptr ? summary.ptr : "",
			      "intent_seq", json_integer_value(json_object_get(ev, "seq")),
			      "intent_time", jstr(ev, "time"), "since", c->since_ms <= 0 || ms >= c->since_ms))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = copy(rec, "intent_line", json_object_get(ev, "provenance"), "line")) < 0 ||
	    (error = copy(rec, "args", ev, "args")) < 0 || (error = copy(rec, "turn", ev, "turn")) < 0 ||
	    (error = copy(rec, "recovery_mode", ev, "recovery")) < 0 ||
	    (error = copy(rec, "verdict", decision, "verdict")) < 0 ||
	    (error = copy(rec, "decision_source", decision, "source")) < 0 ||
	    (error = copy(rec, "reasons", decision, "reasons")) < 0 ||
	    (error = copy(rec, "rules", decision, "rules")) < 0 ||
	    (error = copy(rec, "policy_revision", decision, "policy_revision")) < 0)
		goto cleanup;
	if (json_object_set(c->by_key, key.ptr, rec) < 0 || json_array_append(c->invocations, rec) < 0)
		error = docket_error_set_oom();
cleanup:
	json_decref(rec);
	docket_buf_dispose(&key);
	docket_buf_dispose(&summary);
	return error;
}

/* The source line of a call's intent (-1: not imported). */
static int64_t intent_line(const json_t *rec)
{
	const json_t *line = json_object_get(rec, "intent_line");

	return json_is_integer(line) ? (int64_t)json_integer_value(line) : -1;
}

static int on_requested(json_t *rec, const json_t *ev)
{
	int error;

	if ((error = copy(rec, "requested_time", ev, "time")) < 0 ||
	    (error = set_int(rec, "requested_imported", jhas(ev, "provenance"))) < 0 ||
	    (error = set_int(rec, "requested_stamped",
			     docket_request_stamped(jstr(rec, "intent_time"), intent_line(rec), ev))) < 0 ||
	    (error = copy(rec, "reviewer", ev, "reviewer")) < 0 ||
	    (error = copy(rec, "prompt", ev, "prompt")) < 0)
		return error;
	if (!jhas(rec, "verdict") && (error = set_str(rec, "verdict", "approval_required")) < 0)
		return error;
	return json_is_object(json_object_get(ev, "risk"))
		? copy(rec, "risk_level", json_object_get(ev, "risk"), "level") : 0;
}

static int on_settled(json_t *rec, const json_t *ev)
{
	int64_t asked = -1, done = event_ms(ev);
	int error;

	if ((error = copy(rec, "settled_time", ev, "time")) < 0 ||
	    (error = copy(rec, "result", ev, "result")) < 0 ||
	    (error = copy(rec, "actor", ev, "actor")) < 0 ||
	    (error = copy(rec, "settle_reason", ev, "reason")) < 0)
		return error;
	if (docket_time_to_ms(jstr(rec, "requested_time"), &asked) < 0)
		return 0;
	if (docket_wait_known(asked, done, json_integer_value(json_object_get(rec, "requested_imported")) != 0,
			      json_integer_value(json_object_get(rec, "requested_stamped")) != 0))
		return set_int(rec, "wait_ms", (json_int_t)(done - asked));
	return json_object_set_new(rec, "wait_unknown", json_true()) == 0 ? 0 : docket_error_set_oom();
}

static int on_dispatched(json_t *rec, const json_t *ev)
{
	if (!jhas(rec, "verdict") && !jhas(rec, "result") && set_str(rec, "verdict", "allowed") < 0)
		return docket_error_set_oom();
	return append_to(rec, "dispatches", json_pack("{s:s, s:O?, s:O?}", "time", jstr(ev, "time"),
			 "attempt", json_object_get(ev, "attempt"), "token", json_object_get(ev, "token")));
}

/* What the source said when it refused a call ("patch rejected by user"),
 * cut to DENIAL_MESSAGE_MAX bytes on a UTF-8 boundary. */
#define DENIAL_MESSAGE_MAX 300

static int denial_message(json_t *rec, const json_t *ev)
{
	const char *out = jstr(ev, "output");
	size_t n = strlen(out);

	if (!*out)
		return 0;
	if (n > DENIAL_MESSAGE_MAX) {
		n = DENIAL_MESSAGE_MAX;
		while (n > 0 && ((unsigned char)out[n] & 0xc0) == 0x80)
			n--;
	}
	return json_object_set_new(rec, "denial_message", json_stringn(out, n)) == 0 ? 0 : docket_error_set_oom();
}

static int on_completed(json_t *rec, const json_t *ev)
{
	const char *status = jstr(ev, "status");
	int error;

	if ((error = copy(rec, "completed_time", ev, "time")) < 0 ||
	    (error = copy(rec, "status", ev, "status")) < 0 ||
	    (error = copy(rec, "exit_code", ev, "exit_code")) < 0 ||
	    (error = copy(rec, "duration_ms", ev, "duration_ms")) < 0 ||
	    (error = copy(rec, "error", ev, "error")) < 0)
		return error;
	if ((strcmp(status, "denied") == 0 || strcmp(status, "unsupported") == 0) &&
	    (error = denial_message(rec, ev)) < 0)
		return error;
	if (!jhas(rec, "verdict") && !jhas(rec, "dispatches") && !jhas(rec, "result") &&
	    (strcmp(jstr(ev, "status"), "denied") == 0 || strcmp(jstr(ev, "status"), "unsupported") == 0))
		return set_str(rec, "verdict", jstr(ev, "status"));
	return 0;
}

static int on_recovery(json_t *rec, const json_t *ev)
{
	return append_to(rec, "recovery", json_pack("{s:s, s:s, s:s}", "time", jstr(ev, "time"),
			 "action", jstr(ev, "action"), "detail", jstr(ev, "detail")));
}

static int on_session(collector *c, const json_t *ev)
{
	const char *id = jstr(ev, "session");
	json_t *rec;

	if (json_object_get(c->session_by_id, id))
		return 0;
	if (!(rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O?, s:O?, s:s}", "session", id,
			      "runtime", jstr(ev, "runtime"), "platform", jstr(ev, "platform"), "cwd", jstr(ev, "cwd"),
			      "opened_time", jstr(ev, "time"), "parent", jstr(ev, "parent"),
			      "labels", json_object_get(ev, "labels"),
			      "workspace_roots", json_object_get(ev, "workspace_roots"),
			      "home", jstr(json_object_get(ev, "env"), "HOME"))))
		return docket_error_set_oom();
	if (json_object_set(c->session_by_id, id, rec) < 0 || json_array_append(c->sessions, rec) < 0) {
		json_decref(rec);
		return docket_error_set_oom();
	}
	json_decref(rec);
	return 0;
}

static int on_session_closed(collector *c, const json_t *ev)
{
	json_t *rec = json_object_get(c->session_by_id, jstr(ev, "session"));

	return rec ? copy(rec, "closed_time", ev, "time") : 0;
}

static int on_policy(collector *c, const json_t *ev)
{
	return json_array_append_new(c->policies,
		json_pack("{s:s, s:O?, s:s, s:s, s:s, s:s, s:O?}", "session", jstr(ev, "session"),
			  "revision", json_object_get(ev, "revision"), "format", jstr(ev, "format"),
			  "actor", jstr(ev, "actor"), "reason", jstr(ev, "reason"),
			  "time", jstr(ev, "time"), "policy", json_object_get(ev, "policy"))) == 0 ? 0 : docket_error_set_oom();
}

int collector_add(collector *c, const json_t *ev)
{
	static const struct {
		const char *type;
		int (*fn)(json_t *rec, const json_t *ev);
	} per_call[] = {
		{ "approval.requested", on_requested },
		{ "approval.settled", on_settled },
		{ "tool.dispatched", on_dispatched },
		{ "tool.completed", on_completed },
		{ "recovery.action", on_recovery },
	};
	const char *type = jstr(ev, "type");
	json_t *rec;

	if (strcmp(type, "tool.intent") == 0)
		return on_intent(c, ev);
	if (strcmp(type, "session.opened") == 0)
		return on_session(c, ev);
	if (strcmp(type, "session.closed") == 0)
		return on_session_closed(c, ev);
	if (strcmp(type, "policy.revised") == 0)
		return on_policy(c, ev);
	if (!(rec = collector_invocation(c, ev)))
		return 0;
	for (size_t i = 0; i < sizeof(per_call) / sizeof(per_call[0]); i++)
		if (strcmp(per_call[i].type, type) == 0)
			return per_call[i].fn(rec, ev);
	return 0;
}

/* ---- sinks built on the collector ---- */

int collector_sink_make(export_sink **out, size_t size, int64_t since_ms,
			int (*event)(export_sink *s, const json_t *ev, int emit),
			int (*finish)(export_sink *s), void (*free_fn)(export_sink *s))
{
	collector_sink *o = docket_calloc(1, size);
	int error;

	*out = NULL;
	if (!o)
		return docket_error_set_oom();
	if ((error = collector_init(&o->c, since_ms)) < 0) {
		docket_free(o);
		return error;
	}
	o->base.event = event;
	o->base.finish = finish;
	o->base.free = free_fn;
	*out = &o->base;
	return 0;
}

int collector_sink_new(export_sink **out, int64_t since_ms,
		       int (*event)(export_sink *s, const json_t *ev, int emit),
		       int (*finish)(export_sink *s))
{
	return collector_sink_make(out, sizeof(collector_sink), since_ms, event, finish, collector_sink_free);
}

int collector_sink_collect(export_sink *s, const json_t *ev, int emit)
{
	(void)emit;
	return collector_add(&((collector_sink *)s)->c, ev);
}

void collector_sink_free(export_sink *s)
{
	collector_sink *o = (collector_sink *)s;

	collector_dispose(&o->c);
	docket_free(o);
}
