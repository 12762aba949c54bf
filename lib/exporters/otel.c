/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otel.c: OTLP/JSON traces (one ExportTraceServiceRequest per line, one
 * line per session), following the OpenTelemetry GenAI conventions: one
 * `execute_tool` span per invocation (gen_ai.operation.name, gen_ai.tool.name,
 * gen_ai.tool.call.id, gen_ai.conversation.id = the session) from the intent
 * to the outcome; the approval wait, its settlement, each dispatch and each
 * recovery action are span events; an outcome other than ok sets status
 * ERROR with the status as message. Trace ids derive from the ledger and
 * session, span ids from session and invocation (SHA-256), so re-exports
 * give the same ids.
 */
#include <string.h>

#include <openssl/evp.h>

#include "export_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define SPAN_KIND_INTERNAL 1
#define STATUS_OK 1
#define STATUS_ERROR 2

typedef collector_sink otel_sink;

static int nomem(void)
{
	return docket_error_set(DOCKET_ENOMEM, "out of memory");
}

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
				     "value", "stringValue", value)) == 0 ? 0 : nomem();
}

static int attr_int(json_t *attrs, const char *key, const json_t *value)
{
	char text[32];

	if (!json_is_integer(value))
		return 0;
	snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(value));
	return json_array_append_new(attrs, json_pack("{s:s, s:{s:s}}", "key", key,
				     "value", "intValue", text)) == 0 ? 0 : nomem();
}

static json_t *span_attributes(const json_t *inv)
{
	const json_t *dispatches = json_object_get(inv, "dispatches");
	json_t *attrs = json_array(), *attempts = json_integer((json_int_t)json_array_size(dispatches));
	int error = attrs && attempts ? 0 : nomem();

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
		return nomem();
	if (!time || !*time) {
		json_decref(attrs);
		return 0;
	}
	return json_array_append_new(events, json_pack("{s:s, s:o, s:o}", "name", name,
				     "timeUnixNano", nanos(time), "attributes", attrs)) == 0 ? 0 : nomem();
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
	int error = events ? 0 : nomem();

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

	if (!*status)
		return json_object();
	if (strcmp(status, "ok") == 0)
		return json_pack("{s:i}", "code", STATUS_OK);
	return json_pack("{s:i, s:s}", "code", STATUS_ERROR, "message",
			 *jstr(inv, "error") ? jstr(inv, "error") : status);
}

static json_t *span(const otel_sink *o, const json_t *inv)
{
	char trace[33], span_id[17];
	docket_buf name = DOCKET_BUF_INIT;
	const char *end = jstr(inv, "completed_time");
	json_t *s;

	if (derive_id(trace, 16, o->base.ledger_id, jstr(inv, "session")) < 0 ||
	    derive_id(span_id, 8, jstr(inv, "session"), jstr(inv, "invocation")) < 0 ||
	    docket_buf_printf(&name, "execute_tool %s", jstr(inv, "tool")) < 0)
		return NULL;
	if (!*end)
		end = jstr(inv, "settled_time");
	if (!*end)
		end = jstr(inv, "intent_time");
	s = json_pack("{s:s, s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o}", "traceId", trace, "spanId", span_id,
		      "name", name.ptr, "kind", SPAN_KIND_INTERNAL,
		      "startTimeUnixNano", nanos(jstr(inv, "intent_time")), "endTimeUnixNano", nanos(end),
		      "attributes", span_attributes(inv), "events", span_events(inv),
		      "status", span_status(inv));
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
	json_t *doc = json_pack("{s:[{s:o, s:[{s:{s:s, s:s}, s:O}]}]}", "resourceSpans",
				"resource", resource(o, collector_session(&o->c, session), session),
				"scopeSpans", "scope", "name", "docket", "version", DOCKET_EXPORT_VERSION,
				"spans", spans);
	int error;

	if (!doc)
		return nomem();
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
			return nomem();
		if (!(s = span(o, inv)) || json_array_append_new(list, s) < 0)
			return nomem();
		o->base.stats->records++;
	}
	return 0;
}

static int otel_finish(export_sink *s)
{
	otel_sink *o = (otel_sink *)s;
	json_t *groups = json_object(), *order = json_array();
	const json_t *name;
	size_t i;
	int error = groups && order ? group_spans(o, groups, order) : nomem();

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
