/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otel.c: OTLP/JSON traces (one ExportTraceServiceRequest per line, one
 * line per session), following the OpenTelemetry GenAI conventions:
 *   - one trace per top-level session; a subagent's session (one with a
 *     parent) belongs to its parent's trace;
 *   - a session span `invoke_agent RUNTIME` (gen_ai.operation.name
 *     invoke_agent, gen_ai.agent.name, gen_ai.conversation.id) from the
 *     session's opening to its close (or its last call); a subagent's
 *     session span is a child of the parent's call that started it (the
 *     Task/Agent call running when it opened) and links to it, else a child
 *     of the parent's session span;
 *   - one `execute_tool TOOL` span per invocation, a child of its session
 *     span (gen_ai.operation.name execute_tool, gen_ai.tool.name,
 *     gen_ai.tool.call.id, gen_ai.conversation.id = the session), from the
 *     intent to the outcome; the approval wait, its settlement, each
 *     dispatch and each recovery action are span events; an outcome other
 *     than ok sets status ERROR with the reason as message.
 * Trace ids derive from the ledger and the top-level session, span ids from
 * session and invocation (SHA-256), so re-exports give the same ids.
 */
#include <string.h>

#include <openssl/evp.h>

#include "export_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define SPAN_KIND_INTERNAL 1
#define PARENT_DEPTH_MAX 16
#define SESSION_SPAN "\x1esession"
#define STATUS_OK 1
#define STATUS_ERROR 2

typedef collector_sink otel_sink;

/* hex of the first `bytes` bytes of SHA-256(a "\x1f" b). */
static int derive_id(char *out, size_t bytes, const char *a, const char *b)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	docket_buf msg = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_buf_printf(&msg, "%s\x1f%s", a, b)) < 0)
		return error;
	if (EVP_Digest(msg.ptr, msg.len, md, &len, EVP_sha256(), NULL) != 1 || len < bytes)
		error = docket_error_set(DOCKET_ERROR, "SHA-256 failed");
	else
		docket_hex(out, md, bytes);
	docket_buf_dispose(&msg);
	return error;
}

static json_t *nanos(const char *rfc3339)
{
	char text[32];
	int64_t ms;

	if (docket_time_to_ms(rfc3339, &ms) < 0)
		ms = 0;
	snprintf(text, sizeof(text), "%lld000000", (long long)ms);
	return json_string(ms ? text : "0");
}

/* ---- attributes -------------------------------------------------------- */

static int attr_str(json_t *attrs, const char *key, const char *value)
{
	if (!value || !*value)
		return 0;
	return json_array_append_new(attrs, json_pack("{s:s, s:{s:s}}", "key", key,
				     "value", "stringValue", value)) == 0 ? 0 : docket_error_set_oom();
}

static int attr_int(json_t *attrs, const char *key, const json_t *value)
{
	char text[32];

	if (!json_is_integer(value))
		return 0;
	snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(value));
	return json_array_append_new(attrs, json_pack("{s:s, s:{s:s}}", "key", key,
				     "value", "intValue", text)) == 0 ? 0 : docket_error_set_oom();
}

static json_t *span_attributes(const json_t *inv)
{
	const json_t *dispatches = json_object_get(inv, "dispatches");
	json_t *attrs = json_array(), *attempts = json_integer((json_int_t)json_array_size(dispatches));
	int error = attrs && attempts ? 0 : docket_error_set_oom();

	if (!error) error = attr_str(attrs, "gen_ai.operation.name", "execute_tool");
	if (!error) error = attr_str(attrs, "gen_ai.tool.name", jstr(inv, "tool"));
	if (!error) error = attr_str(attrs, "gen_ai.tool.call.id", jstr(inv, "invocation"));
	if (!error) error = attr_str(attrs, "gen_ai.tool.type", "function");
	if (!error) error = attr_str(attrs, "gen_ai.conversation.id", jstr(inv, "session"));
	if (!error) error = attr_str(attrs, "docket.call.summary", jstr(inv, "summary"));
	if (!error) error = attr_str(attrs, "docket.verdict", jstr(inv, "verdict"));
	if (!error) error = attr_str(attrs, "docket.decision.source", jstr(inv, "decision_source"));
	if (!error) error = attr_str(attrs, "docket.approval.result", jstr(inv, "result"));
	if (!error) error = attr_str(attrs, "docket.approval.actor", jstr(inv, "actor"));
	if (!error) error = attr_int(attrs, "docket.approval.wait_ms", json_object_get(inv, "wait_ms"));
	if (!error) error = attr_str(attrs, "docket.status", jstr(inv, "status"));
	if (!error) error = attr_int(attrs, "docket.exit_code", json_object_get(inv, "exit_code"));
	if (!error) error = attr_int(attrs, "docket.attempts", attempts);
	if (!error) error = attr_int(attrs, "docket.intent_seq", json_object_get(inv, "intent_seq"));
	if (!error) error = attr_str(attrs, "docket.rule",
				     json_string_value(json_array_get(json_object_get(inv, "rules"), 0)));
	if (!error && call_denied(inv)) {
		docket_buf reason = DOCKET_BUF_INIT;

		if ((error = audit_denial_reason(&reason, inv)) == 0)
			error = attr_str(attrs, "docket.reason", reason.ptr);
		docket_buf_dispose(&reason);
	}
	json_decref(attempts);
	if (error < 0) {
		json_decref(attrs);
		return NULL;
	}
	return attrs;
}

/* ---- span events ------------------------------------------------------- */

static int span_event(json_t *events, const char *name, const char *time, json_t *attrs)
{
	if (!attrs)
		return docket_error_set_oom();
	if (!time || !*time) {
		json_decref(attrs);
		return 0;
	}
	return json_array_append_new(events, json_pack("{s:s, s:o, s:o}", "name", name,
				     "timeUnixNano", nanos(time), "attributes", attrs)) == 0 ? 0 : docket_error_set_oom();
}

static json_t *attrs2(const char *k1, const char *v1, const char *k2, const char *v2)
{
	json_t *attrs = json_array();

	if (attrs && (attr_str(attrs, k1, v1) < 0 || attr_str(attrs, k2, v2) < 0)) {
		json_decref(attrs);
		return NULL;
	}
	return attrs;
}

static int dispatch_events(json_t *events, const json_t *inv)
{
	const json_t *item;
	size_t i;
	int error = 0;

	json_array_foreach(json_object_get(inv, "dispatches"), i, item) {
		char attempt[24];

		snprintf(attempt, sizeof(attempt), "%lld",
			 (long long)json_integer_value(json_object_get(item, "attempt")));
		if ((error = span_event(events, "tool.dispatched", jstr(item, "time"),
					attrs2("docket.attempt", attempt, "docket.token",
					       jstr(item, "token")))) < 0)
			break;
	}
	return error;
}

static int recovery_events(json_t *events, const json_t *inv)
{
	const json_t *item;
	size_t i;
	int error = 0;

	json_array_foreach(json_object_get(inv, "recovery"), i, item)
		if ((error = span_event(events, "recovery.action", jstr(item, "time"),
					attrs2("docket.recovery.action", jstr(item, "action"),
					       "docket.detail", jstr(item, "detail")))) < 0)
			break;
	return error;
}

static json_t *span_events(const json_t *inv)
{
	json_t *events = json_array();
	int error = events ? 0 : docket_error_set_oom();

	if (!error) error = span_event(events, "approval.requested", jstr(inv, "requested_time"),
				       attrs2("docket.reviewer", jstr(inv, "reviewer"),
					      "docket.risk.level", jstr(inv, "risk_level")));
	if (!error) error = span_event(events, "approval.settled", jstr(inv, "settled_time"),
				       attrs2("docket.approval.result", jstr(inv, "result"),
					      "docket.approval.actor", jstr(inv, "actor")));
	if (!error) error = dispatch_events(events, inv);
	if (!error) error = recovery_events(events, inv);
	if (error < 0) {
		json_decref(events);
		return NULL;
	}
	return events;
}

static json_t *span_status(const json_t *inv)
{
	const char *status = jstr(inv, "status");
	docket_buf reason = DOCKET_BUF_INIT;
	json_t *out;

	if (!*status)
		return json_object();
	if (strcmp(status, "ok") == 0)
		return json_pack("{s:i}", "code", STATUS_OK);
	if (audit_denial_reason(&reason, inv) < 0)
		return NULL;
	out = json_pack("{s:i, s:s}", "code", STATUS_ERROR, "message",
			reason.len ? reason.ptr : *jstr(inv, "error") ? jstr(inv, "error") : status);
	docket_buf_dispose(&reason);
	return out;
}

/* ---- traces and parents ------------------------------------------------ */

/* The top-level session of `session` (itself when it has no known parent). */
static const char *root_session(const collector *c, const char *session)
{
	for (int depth = 0; depth < PARENT_DEPTH_MAX; depth++) {
		const json_t *s = collector_session(c, session);
		const char *parent = jstr(s, "parent");

		if (!*parent || !collector_session(c, parent) || strcmp(parent, session) == 0)
			break;
		session = parent;
	}
	return session;
}

static int trace_id(char out[33], const otel_sink *o, const char *session)
{
	return derive_id(out, 16, o->base.ledger_id, root_session(&o->c, session));
}

static int is_spawn_tool(const char *tool)
{
	return strcmp(tool, "Task") == 0 || strcmp(tool, "Agent") == 0 || strcmp(tool, "task") == 0 ||
	       strcmp(tool, "spawn_agent") == 0;
}

/* The parent's call that started a subagent session opened at `opened_ms`:
 * the last spawning call of the parent whose intent precedes it and that had
 * not ended before it. NULL when none is known. */
static const json_t *spawning_call(const collector *c, const char *parent, int64_t opened_ms)
{
	const json_t *inv, *best = NULL;
	int64_t start, end;
	size_t i;

	json_array_foreach(c->invocations, i, inv) {
		if (strcmp(jstr(inv, "session"), parent) != 0 || !is_spawn_tool(jstr(inv, "tool")) ||
		    docket_time_to_ms(jstr(inv, "intent_time"), &start) < 0 || start > opened_ms)
			continue;
		if (docket_time_to_ms(jstr(inv, "completed_time"), &end) == 0 && end < opened_ms)
			continue;
		best = inv;
	}
	return best;
}

static json_t *span(const otel_sink *o, const json_t *inv)
{
	char trace[33], span_id[17], parent[17];
	docket_buf name = DOCKET_BUF_INIT;
	const char *end = jstr(inv, "completed_time");
	json_t *s;

	if (trace_id(trace, o, jstr(inv, "session")) < 0 ||
	    derive_id(span_id, 8, jstr(inv, "session"), jstr(inv, "invocation")) < 0 ||
	    derive_id(parent, 8, jstr(inv, "session"), SESSION_SPAN) < 0 ||
	    docket_buf_printf(&name, "execute_tool %s", jstr(inv, "tool")) < 0)
		return NULL;
	if (!*end)
		end = jstr(inv, "settled_time");
	if (!*end)
		end = jstr(inv, "intent_time");
	s = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o}", "traceId", trace, "spanId", span_id,
		      "parentSpanId", parent, "name", name.ptr, "kind", SPAN_KIND_INTERNAL,
		      "startTimeUnixNano", nanos(jstr(inv, "intent_time")), "endTimeUnixNano", nanos(end),
		      "attributes", span_attributes(inv), "events", span_events(inv),
		      "status", span_status(inv));
	docket_buf_dispose(&name);
	return s;
}

/* The session span's times: its opening (else its first call) to its close
 * (else the last time any of its calls recorded). */
static void session_times(const otel_sink *o, const json_t *sess, const char *session, const char **start,
			  const char **end)
{
	static const char *const times[] = { "intent_time", "settled_time", "completed_time" };
	int64_t best = INT64_MIN, ms;
	const json_t *inv;
	size_t i, k;

	*start = jstr(sess, "opened_time");
	*end = jstr(sess, "closed_time");
	json_array_foreach(o->c.invocations, i, inv) {
		if (strcmp(jstr(inv, "session"), session) != 0)
			continue;
		if (!**start)
			*start = jstr(inv, "intent_time");
		for (k = 0; k < sizeof(times) / sizeof(times[0]) && !*jstr(sess, "closed_time"); k++)
			if (docket_time_to_ms(jstr(inv, times[k]), &ms) == 0 && ms > best) {
				best = ms;
				*end = jstr(inv, times[k]);
			}
	}
	if (!**end)
		*end = *start;
}

/* The parent span of a session span ("" for a top-level session), and the
 * link to the parent's call that started it, if known. */
static int session_parent(const otel_sink *o, const json_t *sess, char parent[17], json_t *links)
{
	const char *p = jstr(sess, "parent");
	const json_t *call;
	char trace[33];
	int64_t opened;

	parent[0] = '\0';
	if (!*p || !collector_session(&o->c, p))
		return 0;
	call = docket_time_to_ms(jstr(sess, "opened_time"), &opened) == 0 ? spawning_call(&o->c, p, opened) : NULL;
	if (!call)
		return derive_id(parent, 8, p, SESSION_SPAN);
	if (derive_id(parent, 8, p, jstr(call, "invocation")) < 0 || trace_id(trace, o, p) < 0)
		return -1;
	return json_array_append_new(links, json_pack("{s:s, s:s, s:[{s:s, s:{s:s}}]}", "traceId", trace,
				     "spanId", parent, "attributes", "key", "docket.link",
				     "value", "stringValue", "spawned by")) == 0 ? 0 : docket_error_set_oom();
}

static json_t *session_span(const otel_sink *o, const char *session)
{
	const json_t *sess = collector_session(&o->c, session);
	char trace[33], span_id[17], parent[17];
	const char *start, *end;
	docket_buf name = DOCKET_BUF_INIT;
	json_t *attrs = json_array(), *links = json_array(), *s = NULL;
	int error = attrs && links ? 0 : docket_error_set_oom();

	session_times(o, sess, session, &start, &end);
	if (!error) error = trace_id(trace, o, session);
	if (!error) error = derive_id(span_id, 8, session, SESSION_SPAN);
	if (!error) error = session_parent(o, sess, parent, links);
	if (!error) error = docket_buf_printf(&name, "invoke_agent %s", *jstr(sess, "runtime") ? jstr(sess, "runtime")
										    : "agent");
	if (!error) error = attr_str(attrs, "gen_ai.operation.name", "invoke_agent");
	if (!error) error = attr_str(attrs, "gen_ai.agent.name", jstr(sess, "runtime"));
	if (!error) error = attr_str(attrs, "gen_ai.conversation.id", session);
	if (!error) error = attr_str(attrs, "docket.cwd", jstr(sess, "cwd"));
	if (!error) error = attr_str(attrs, "docket.platform", jstr(sess, "platform"));
	if (!error) error = attr_str(attrs, "docket.parent_session", jstr(sess, "parent"));
	if (error == 0)
		s = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o, s:o, s:O, s:[], s:O, s:{}}", "traceId", trace,
			      "spanId", span_id, "parentSpanId", parent, "name", name.ptr, "kind", SPAN_KIND_INTERNAL,
			      "startTimeUnixNano", nanos(start), "endTimeUnixNano", nanos(end),
			      "attributes", attrs, "events", "links", links, "status");
	if (s && !*parent)
		json_object_del(s, "parentSpanId");
	json_decref(attrs);
	json_decref(links);
	docket_buf_dispose(&name);
	return s;
}

/* ---- per session ------------------------------------------------------- */

static json_t *resource(const otel_sink *o, const json_t *sess, const char *session)
{
	json_t *attrs = json_array();

	if (attrs && (attr_str(attrs, "service.name", "docket") < 0 ||
		      attr_str(attrs, "docket.ledger_id", o->base.ledger_id) < 0 ||
		      attr_str(attrs, "docket.session", session) < 0 ||
		      attr_str(attrs, "docket.runtime", sess ? jstr(sess, "runtime") : "") < 0)) {
		json_decref(attrs);
		return NULL;
	}
	return attrs ? json_pack("{s:o}", "attributes", attrs) : NULL;
}

static int write_session(otel_sink *o, const char *session, json_t *spans)
{
	json_t *doc, *root = session_span(o, session);
	int error;

	if (!root || json_array_insert_new(spans, 0, root) < 0)
		return docket_error_set_oom();
	o->base.stats->records++;
	doc = json_pack("{s:[{s:o, s:[{s:{s:s, s:s}, s:O}]}]}", "resourceSpans",
				"resource", resource(o, collector_session(&o->c, session), session),
				"scopeSpans", "scope", "name", "docket", "version", DOCKET_EXPORT_VERSION,
				"spans", spans);
	if (!doc)
		return docket_error_set_oom();
	error = export_json_line(o->base.out, doc);
	json_decref(doc);
	return error;
}

/* Spans grouped by session, sessions in the order of their first call. */
static int group_spans(otel_sink *o, json_t *groups, json_t *order)
{
	const json_t *inv;
	size_t i;

	json_array_foreach(o->c.invocations, i, inv) {
		const char *session = jstr(inv, "session");
		json_t *list = json_object_get(groups, session), *s;

		if (!json_is_true(json_object_get(inv, "since")))
			continue;
		if (!list && (json_object_set_new(groups, session, list = json_array()) < 0 || !list ||
			      json_array_append_new(order, json_string(session)) < 0))
			return docket_error_set_oom();
		if (!(s = span(o, inv)) || json_array_append_new(list, s) < 0)
			return docket_error_set_oom();
		o->base.stats->records++;
	}
	/* a subagent's parent session span must be there, calls or not */
	for (i = 0; i < json_array_size(order); i++) {
		const char *parent = jstr(collector_session(&o->c, json_string_value(json_array_get(order, i))),
					  "parent");
		json_t *empty;

		if (!*parent || !collector_session(&o->c, parent) || json_object_get(groups, parent))
			continue;
		if (!(empty = json_array()) || json_object_set_new(groups, parent, empty) < 0 ||
		    json_array_append_new(order, json_string(parent)) < 0)
			return docket_error_set_oom();
	}
	return 0;
}

static int otel_finish(export_sink *s)
{
	otel_sink *o = (otel_sink *)s;
	json_t *groups = json_object(), *order = json_array();
	const json_t *name;
	size_t i;
	int error = groups && order ? group_spans(o, groups, order) : docket_error_set_oom();

	json_array_foreach(order, i, name) {
		if (error < 0)
			break;
		error = write_session(o, json_string_value(name),
				      json_object_get(groups, json_string_value(name)));
	}
	json_decref(groups);
	json_decref(order);
	return error;
}

int sink_otel_new(export_sink **out, int64_t since_ms)
{
	return collector_sink_new(out, since_ms, collector_sink_collect, otel_finish);
}
