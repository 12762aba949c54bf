/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol.c: the methods of the runtime protocol (DESIGN §4).
 *
 *   method            events appended (one group, atomic)     reply
 *   runtime.start     runtime.started                         epoch, seq
 *   session.open      session.opened [+ operator policy r1]   seq
 *   policy.set        policy.revised [+ superseded settles]   revision, seq
 *   tool.intent       tool.intent [+ tool.dispatched]         verdict, decision, seq, dispatched,
 *                                                             attempt, token
 *   approval.request  approval.requested                      seq
 *   approval.settle   approval.settled                        seq
 *   tool.dispatch     tool.dispatched (after revalidation)    attempt, token, seq
 *   tool.complete     tool.completed                          seq
 *   session.close     session.closed                          seq
 *   recover.plan      -                                       the plan
 *   recover.apply     every item's events (one group each)    the plan, applied
 *
 * Params are the event's own fields (DESIGN §4) plus a few method options
 * (dispatch_if_allowed, approvals, reconcile); unknown fields are refused.
 * Each event carries the connection's epoch (from its runtime.start) unless
 * it names one: a zombie runtime's connection is fenced (invariant 7).
 *
 * Trust: a session's deciding policy comes from the ledger's own policy
 * revisions. The operator's policy (serve --policy) becomes revision 1 of
 * every session opened. A client's policy.set is recorded as a layer on top
 * of the session's current policy ({"all_of":[...]}: the strictest verdict
 * wins), so it can narrow but never widen, unless the operator allowed
 * clients to replace policies. In authority mode a decision carried by an
 * intent can only make docket's own verdict stricter.
 */
#include "protocol.h"

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "authority.h"
#include "call_schema.h"
#include "ledger/ledger_sys.h"
#include "recover.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/json_write.h"

struct proto_ctx {
	docket_ledger *ledger;
	authority *auth;
	proto_options opts;
	json_t *operator_policy;
	char *operator_format;
	docket_reconcile_cb reconcile_cb;
	void *reconcile_ctx;
	docket_json_tape *tape;  /* the text path's parser of request lines */
	docket_json_tape *event_tape; /* ... of the event texts built from them */
	docket_buf text;         /* an event's JSON text being built */
	/* the last epoch this context issued, and the peer that asked for it
	 * (runtime.attach binds more connections of that same process) */
	uint64_t started_epoch;
	long long started_pid;
	char started_runtime[257];
	/* the batch being prepared: calls[0..batch_i) are before the current one */
	const proto_call *batch;
	size_t batch_i;
	/* serve's own context (own_context_init) */
	const char *own_platform;
	char *own_home, *own_user;
};

enum method_kind {
	M_UNKNOWN = 0,
	M_RUNTIME_START,
	M_RUNTIME_ATTACH,
	M_SESSION_OPEN,
	M_POLICY_SET,
	M_TOOL_INTENT,
	M_APPROVAL_REQUEST,
	M_APPROVAL_SETTLE,
	M_TOOL_DISPATCH,
	M_TOOL_COMPLETE,
	M_SESSION_CLOSE,
	M_RECOVER_PLAN,
	M_RECOVER_APPLY
};

static const struct method {
	const char *name;
	int kind;
	const char *event_type;  /* the event the params describe, or NULL */
	int barrier;
} methods[] = {
	{ "runtime.start", M_RUNTIME_START, "runtime.started", 1 },
	{ "runtime.attach", M_RUNTIME_ATTACH, NULL, 0 },
	{ "session.open", M_SESSION_OPEN, "session.opened", 0 },
	{ "policy.set", M_POLICY_SET, "policy.revised", 1 },
	{ "tool.intent", M_TOOL_INTENT, "tool.intent", 0 },
	{ "approval.request", M_APPROVAL_REQUEST, "approval.requested", 0 },
	{ "approval.settle", M_APPROVAL_SETTLE, "approval.settled", 0 },
	{ "tool.dispatch", M_TOOL_DISPATCH, "tool.dispatched", 0 },
	{ "tool.complete", M_TOOL_COMPLETE, "tool.completed", 0 },
	{ "session.close", M_SESSION_CLOSE, "session.closed", 0 },
	{ "recover.plan", M_RECOVER_PLAN, NULL, 1 },
	{ "recover.apply", M_RECOVER_APPLY, NULL, 1 },
};

static int own_context_init(proto_ctx *ctx);
static void conn_lineage(const proto_conn *conn, state_lineage *out);

static const struct method *method_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

int proto_method_is_barrier(const char *method)
{
	const struct method *m = method_find(method);

	return m ? m->barrier : 0;
}

int proto_ctx_new(proto_ctx **out, docket_ledger *l, const proto_options *opts)
{
	proto_ctx *c;
	int error;

	*out = NULL;
	if (!(c = docket_calloc(1, sizeof(*c))))
		return docket_error_set_oom();
	c->ledger = l;
	c->opts = *opts;
	if ((error = authority_new(&c->auth, l)) < 0) {
		docket_free(c);
		return error;
	}
	if ((error = own_context_init(c)) < 0) {
		proto_ctx_free(c);
		return error;
	}
	if (!(c->tape = docket_json_tape_new()) || !(c->event_tape = docket_json_tape_new())) {
		proto_ctx_free(c);
		return docket_error_set_oom();
	}
	if (opts->operator_policy) {
		c->operator_policy = json_deep_copy(opts->operator_policy);
		c->operator_format = docket_strdup(opts->operator_format ? opts->operator_format : "docket");
		if (!c->operator_policy || !c->operator_format) {
			proto_ctx_free(c);
			return docket_error_set_oom();
		}
	}
	*out = c;
	return 0;
}

void proto_ctx_free(proto_ctx *c)
{
	if (!c)
		return;
	authority_free(c->auth);
	docket_json_tape_free(c->tape);
	docket_json_tape_free(c->event_tape);
	docket_buf_dispose(&c->text);
	json_decref(c->operator_policy);
	docket_free(c->operator_format);
	docket_free(c->own_home);
	docket_free(c->own_user);
	docket_free(c);
}

void proto_set_reconcile_cb(proto_ctx *c, docket_reconcile_cb cb, void *cb_ctx)
{
	c->reconcile_cb = cb;
	c->reconcile_ctx = cb_ctx;
}

void proto_call_dispose(proto_call *call)
{
	for (size_t i = 0; i < call->n; i++)
		docket_event_free(call->events[i]);
	docket_free(call->events);
	docket_free(call->results);
	call->events = NULL;
	call->results = NULL;
	call->n = call->cap = 0;
	json_decref(call->decision);
	json_decref(call->result);
	call->decision = NULL;
	call->result = NULL;
	docket_free(call->line);
	json_decref(call->tree);
	call->line = NULL;
	call->session = NULL;
	call->tree = NULL;
}

const char *proto_text_method(const char *method)
{
	const struct method *m = method_find(method);

	return m && (m->kind == M_TOOL_INTENT || m->kind == M_TOOL_COMPLETE) ? m->name : NULL;
}

int proto_call_set_line(proto_call *call, const char *method, const char *line, size_t len,
			const char *session, size_t session_len)
{
	char *block = docket_malloc(len + 1 + (session ? session_len + 1 : 0));

	if (!block)
		return docket_error_set_oom();
	memcpy(block, line, len);
	block[len] = '\0';
	if (session) {
		memcpy(block + len + 1, session, session_len);
		block[len + 1 + session_len] = '\0';
		call->session = block + len + 1;
	}
	call->line = block;
	call->line_len = len;
	call->method = method;
	return 0;
}

/* ---- preparing: params -> events ---- */

static int refuse(proto_call *call, int code, const char *fmt, ...) DOCKET_PRINTF(3, 4);

static int refuse(proto_call *call, int code, const char *fmt, ...)
{
	char msg[sizeof(call->err.message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	docket_error_set(code, "%s", msg);
	call->error = code;
	call->err = *docket_error_last();
	return code;
}

/* Keep the current error as the call's refusal. */
static int refuse_current(proto_call *call, int code)
{
	call->error = code;
	call->err = *docket_error_last();
	return code;
}

static int refuse_forbidden(proto_call *call, const char *fmt, ...) DOCKET_PRINTF(2, 3);

/* A refusal of the role or ownership check: data.kind "forbidden". */
static int refuse_forbidden(proto_call *call, const char *fmt, ...)
{
	char msg[sizeof(call->err.message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	call->forbidden = 1;
	return refuse(call, DOCKET_EINVALID, "%s", msg);
}

/*
 * An event the call's params did not convert to: the converter names the
 * event type ("tool.completed: ..."); the client sent the method
 * ("tool.complete: ..."), so the refusal names that.
 */
static int refuse_conversion(proto_call *call, int error, const char *type)
{
	const char *msg = docket_error_last()->message;
	size_t tlen = strlen(type);

	if (call->method && strcmp(call->method, type) != 0 && strncmp(msg, type, tlen) == 0 && msg[tlen] == ':')
		return refuse(call, error, "%s%s", call->method, msg + tlen);
	return refuse_current(call, error);
}

/* Room for one more event in the call. */
static int reserve_event(proto_call *call)
{
	if (call->n == PROTO_MAX_EVENTS)
		return refuse(call, DOCKET_EINVALID, "%s: more than %d events for one call", call->method,
			      PROTO_MAX_EVENTS);
	if (call->n == call->cap) {
		size_t cap = call->cap ? call->cap * 2 : 2;
		docket_event **evs = docket_realloc(call->events, cap * sizeof(*evs));
		docket_append_result *res;

		if (evs)
			call->events = evs;
		res = evs ? docket_realloc(call->results, cap * sizeof(*res)) : NULL;
		if (!res)
			return refuse(call, DOCKET_ENOMEM, "out of memory");
		call->results = res;
		call->cap = cap;
	}
	return 0;
}

/* Add the event a conversion made (room reserved), or keep its error as the refusal. */
static int push_event(proto_call *call, int error, docket_event *ev)
{
	if (error < 0)
		return refuse_current(call, error);
	call->events[call->n++] = ev;
	return 0;
}

/* Build an event of `type` from `obj` (consumed) and add it to the call. */
static int add_event(proto_call *call, const char *type, json_t *obj)
{
	docket_event *ev = NULL;
	int error;

	if (!obj)
		return refuse(call, DOCKET_ENOMEM, "out of memory");
	if ((error = reserve_event(call)) < 0) {
		json_decref(obj);
		return error;
	}
	json_object_set_new(obj, "type", json_string(type));
	if (call->conn && call->conn->epoch && !json_object_get(obj, "epoch") &&
	    strcmp(type, "runtime.started") != 0)
		json_object_set_new(obj, "epoch", json_integer((json_int_t)call->conn->epoch));
	error = docket_event_from_json(&ev, obj);
	json_decref(obj);
	if (error < 0)
		return refuse_conversion(call, error, type);
	return push_event(call, error, ev);
}

/* The params as an event object: a copy without the method's own options. */
static json_t *params_event(const json_t *params, const char *const *options)
{
	json_t *obj = json_deep_copy(params);

	for (size_t i = 0; obj && options && options[i]; i++)
		json_object_del(obj, options[i]);
	return obj;
}

/* A member of an object read through `ops`; absent when `obj` is not an object. */
static docket_jv member(const docket_jv_ops *ops, docket_jv obj, const char *key)
{
	docket_jv none = { NULL, 0 };

	return ops->type(obj) == DOCKET_JV_OBJECT ? ops->get(obj, key) : none;
}

static docket_jv param(const proto_call *call, const char *key)
{
	return member(call->pops, call->pv, key);
}

/* The string `v` is, or NULL (json_string_value). */
static const char *jv_str(const proto_call *call, docket_jv v)
{
	size_t len;

	return call->pops->type(v) == DOCKET_JV_STRING ? call->pops->string(v, &len) : NULL;
}

static const char *param_str(const proto_call *call, const char *key)
{
	return jv_str(call, param(call, key));
}

/*
 * The event a JSON text (in `text`, written by this file) describes, added
 * to the call: simdjson reads it, jansson when simdjson cannot decide.
 */
static int add_event_text(proto_ctx *ctx, proto_call *call, const docket_buf *text)
{
	docket_event *ev = NULL;
	json_t *obj = NULL;
	int error;

	if ((error = reserve_event(call)) < 0)
		return error;
	if ((error = docket_event_from_text(&ev, ctx->event_tape, text->ptr, text->len)) == 1) {
		if ((error = docket_json_parse(&obj, text->ptr, text->len)) == 0)
			error = docket_event_from_json(&ev, obj);
		json_decref(obj);
	}
	return push_event(call, error, ev);
}

/* Open an event's text in ctx->text: {"type":TYPE */
static int event_text_begin(proto_ctx *ctx, const char *type)
{
	int error;

	docket_buf_clear(&ctx->text);
	if ((error = docket_buf_puts(&ctx->text, "{\"type\":")) < 0)
		return error;
	return docket_json_write_string(&ctx->text, type, strlen(type));
}

/* ,"KEY": */
static int event_text_key(proto_ctx *ctx, const char *key)
{
	int error;

	if ((error = docket_buf_putc(&ctx->text, ',')) < 0 ||
	    (error = docket_json_write_string(&ctx->text, key, strlen(key))) < 0)
		return error;
	return docket_buf_putc(&ctx->text, ':');
}

/* Close it, with the connection's epoch unless it names one (add_event's rule). */
static int event_text_end(proto_ctx *ctx, const proto_call *call, const char *type, int names_epoch)
{
	int error;

	if (call->conn && call->conn->epoch && !names_epoch && strcmp(type, "runtime.started") != 0 &&
	    ((error = event_text_key(ctx, "epoch")) < 0 ||
	     (error = docket_json_write_int(&ctx->text, (int64_t)call->conn->epoch)) < 0))
		return error;
	return docket_buf_putc(&ctx->text, '}');
}

static int listed(const char *key, const char *const *list)
{
	for (size_t i = 0; list && list[i]; i++)
		if (strcmp(key, list[i]) == 0)
			return 1;
	return 0;
}

/*
 * The text path's params_event + add_event: an event of `type` from the
 * params' members but `options`, each value as jansson dumps it.
 */
static int add_params_text(proto_ctx *ctx, proto_call *call, const char *type, const char *const *options)
{
	docket_jv_iter it;
	const char *key;
	docket_jv v;
	int error;

	if ((error = event_text_begin(ctx, type)) < 0)
		return refuse_current(call, error);
	call->pops->iter(call->pv, &it);
	while (call->pops->next(&it, &key, &v)) {
		if (listed(key, options))
			continue;
		if ((error = event_text_key(ctx, key)) < 0 || (error = call->pops->dump(&ctx->text, v)) < 0)
			return refuse_current(call, error);
	}
	if ((error = event_text_end(ctx, call, type, param(call, "epoch").p != NULL)) < 0)
		return refuse_current(call, error);
	return add_event_text(ctx, call, &ctx->text);
}

static int prepare_session_open(proto_ctx *ctx, proto_call *call)
{
	json_t *policy;
	int error;

	if ((error = add_event(call, "session.opened", params_event(call->params, NULL))) < 0)
		return error;
	if (!ctx->operator_policy)
		return 0;
	policy = json_pack("{s:O?, s:i, s:s, s:O, s:s, s:s}", "session",
			   json_object_get(call->params, "session"), "revision", 1,
			   "format", ctx->operator_format, "policy", ctx->operator_policy,
			   "actor", "operator", "reason", "serve --policy");
	return add_event(call, "policy.revised", policy);
}

/* The session's current policy as a list of all_of layers (borrowed into `layers`). */
static int current_layers(proto_ctx *ctx, const char *session, json_t *layers)
{
	sess_state ss;
	char *text = NULL;
	json_t *doc = NULL, *all;
	int error;

	if ((error = ledger_session_get(ctx->ledger, session, &ss, &text)) < 0)
		return error;
	if (!text)
		return 0;
	if ((error = docket_json_parse(&doc, text, strlen(text))) == 0) {
		all = json_object_get(doc, "all_of");
		if (all && json_is_array(all) && json_object_size(doc) == 1)
			json_array_extend(layers, all);
		else
			json_array_append_new(layers, json_pack("{s:s, s:O}", "format",
				docket_policy_format_name(ss.policy_format), "policy", doc));
	}
	json_decref(doc);
	docket_free(text);
	return error;
}

typedef struct awaiting {
	json_t *items;    /* [{invocation, request, intent_seq}] */
} awaiting;

static int collect_awaiting(void *ctx, const docket_pending_info *p)
{
	awaiting *a = ctx;

	if (strcmp(p->state, "awaiting_approval") != 0)
		return 0;
	return json_array_append_new(a->items, json_pack("{s:s, s:s, s:I}", "invocation", p->invocation,
				     "request", p->open_request, "intent_seq", (json_int_t)p->intent_seq)) < 0
		? docket_error_set_oom() : 0;
}

/*
 * A revised policy re-evaluates the session's open approvals (authority
 * mode): a call the new revision allows or refuses outright has its request
 * settled `superseded`, with the new decision; one that still needs an
 * approval keeps waiting.
 */
static int supersede_open_approvals(proto_ctx *ctx, proto_call *call, const char *session,
				    const json_t *ev, uint32_t revision)
{
	awaiting a = { json_array() };
	authority_layers ls;
	docket_buf text = DOCKET_BUF_INIT;
	json_t *item;
	size_t i;
	int error;

	memset(&ls, 0, sizeof(ls));
	if (!a.items)
		return refuse(call, DOCKET_ENOMEM, "out of memory");
	if ((error = docket_ledger_pending(ctx->ledger, session, collect_awaiting, &a)) < 0 ||
	    json_array_size(a.items) == 0)
		goto done;
	if ((error = docket_json_dump(&text, json_object_get(ev, "policy"))) < 0 ||
	    (error = authority_load_layers(&ls, json_string_value(json_object_get(ev, "format")), text.ptr)) < 0)
		goto done;
	json_array_foreach(a.items, i, item) {
		json_t *intent = NULL, *decision = NULL;
		const char *v;

		if ((error = ledger_event_json(ctx->ledger, (uint64_t)json_integer_value(json_object_get(item, "intent_seq")),
					       &intent)) < 0 ||
		    (error = authority_decide_under(ctx->auth, session, &ls, revision, intent, &decision)) < 0) {
			json_decref(intent);
			break;
		}
		json_decref(intent);
		v = decision ? json_string_value(json_object_get(decision, "verdict")) : NULL;
		if (v && strcmp(v, "approval_required") != 0)
			error = add_event(call, "approval.settled",
					  json_pack("{s:s, s:O, s:O, s:s, s:s, s:s, s:o}", "session", session,
						    "invocation", json_object_get(item, "invocation"),
						    "request", json_object_get(item, "request"),
						    "result", "superseded", "actor", "docket",
						    "reason", "the policy was revised", "decision", decision));
		else
			json_decref(decision);
		if (error < 0)
			break;
	}
done:
	authority_layers_dispose(&ls);
	docket_buf_dispose(&text);
	json_decref(a.items);
	return error < 0 && !call->error ? refuse_current(call, error) : error;
}

/*
 * Is this policy.set a re-send of the one that made the current revision?
 * Then `ev` becomes that revision's event as recorded (the ledger finds it
 * identical and answers with its seq). The client's part of a layered
 * revision is its last all_of layer.
 */
static int resent_policy(proto_ctx *ctx, const sess_state *ss, json_t *ev)
{
	json_t *stored = NULL, *client, *layers;
	int same;

	if (!ss->policy_seq || ledger_event_json(ctx->ledger, ss->policy_seq, &stored) < 0)
		return 0;
	layers = json_object_get(json_object_get(stored, "policy"), "all_of");
	client = json_is_array(layers) && json_string_value(json_object_get(ev, "format")) &&
		 strcmp(json_string_value(json_object_get(stored, "format")), "docket") == 0 &&
		 !json_equal(json_object_get(stored, "policy"), json_object_get(ev, "policy"))
		? json_array_get(layers, json_array_size(layers) - 1) : stored;
	same = json_equal(json_object_get(client, "format"), json_object_get(ev, "format")) &&
	       json_equal(json_object_get(client, "policy"), json_object_get(ev, "policy"));
	for (const char *const *k = (const char *const[]){ "actor", "reason", NULL }; same && *k; k++) {
		json_t *a = json_object_get(stored, *k), *b = json_object_get(ev, *k);

		same = (!a && !b) || (a && b && json_equal(a, b));
	}
	if (same) {
		json_object_set(ev, "format", json_object_get(stored, "format"));
		json_object_set(ev, "policy", json_object_get(stored, "policy"));
		json_object_set_new(ev, "revision", json_integer(ss->policy_revision));
	}
	json_decref(stored);
	return same;
}

static int prepare_policy_set(proto_ctx *ctx, proto_call *call)
{
	static const char *const options[] = { "revision", NULL };
	const char *session = param_str(call, "session");
	json_t *ev, *layers;
	sess_state ss;
	int error;

	if (!session)
		return refuse(call, DOCKET_EINVALID, "policy.set: missing \"session\"");
	if ((error = ledger_session_get(ctx->ledger, session, &ss, NULL)) < 0)
		return refuse_current(call, error);
	if (!(ev = params_event(call->params, options)))
		return refuse(call, DOCKET_ENOMEM, "out of memory");
	if (resent_policy(ctx, &ss, ev)) {
		error = add_event(call, "policy.revised", ev);
		return error;
	}
	json_object_set_new(ev, "revision", json_integer(ss.policy_revision + 1));
	if (!call->conn->trusted && !ctx->opts.allow_client_policy && ss.policy_revision) {
		/* narrow only: the client's policy is a layer on the current one */
		if (!(layers = json_array()) || (error = current_layers(ctx, session, layers)) < 0) {
			json_decref(layers);
			json_decref(ev);
			return error < 0 ? refuse_current(call, error) : refuse(call, DOCKET_ENOMEM, "out of memory");
		}
		json_array_append_new(layers, json_pack("{s:O?, s:O?}", "format", json_object_get(ev, "format"),
							"policy", json_object_get(ev, "policy")));
		json_object_set_new(ev, "format", json_string("docket"));
		json_object_set_new(ev, "policy", json_pack("{s:o}", "all_of", layers));
	}
	json_incref(ev);
	if ((error = add_event(call, "policy.revised", ev)) == 0)
		error = supersede_open_approvals(ctx, call, session, ev, ss.policy_revision + 1);
	json_decref(ev);
	return error;
}

/* Decide in authority mode; record the stricter of docket's and the client's. */
static int decide_intent(proto_ctx *ctx, proto_call *call, json_t *ev)
{
	const char *session = json_string_value(json_object_get(ev, "session"));
	json_t *given = json_object_get(ev, "decision"), *mine = NULL;
	const char *gv, *mv;
	int error;

	if (!session)
		return 0; /* the codec reports it */
	if ((error = authority_decide(ctx->auth, session, ev, &mine)) < 0)
		return error == DOCKET_ENOTFOUND ? 0 : error;
	if (!mine)
		return 0; /* record mode: the runtime's decision, or none */
	gv = json_string_value(json_object_get(given, "verdict"));
	mv = json_string_value(json_object_get(mine, "verdict"));
	if (given && gv && strcmp(authority_stricter(gv, mv), gv) == 0 && strcmp(gv, mv) != 0) {
		/* the client is stricter: it may narrow */
		json_decref(mine);
		return 0;
	}
	json_object_set_new(ev, "decision", mine);
	return 0;
}

/*
 * A re-sent intent keeps the decision docket recorded the first time (the
 * policy may have been revised since), so the ledger recognises it as the
 * same intent and the reply is the original one. 1: `ev` now carries it.
 */
static int recorded_decision(proto_ctx *ctx, json_t *ev)
{
	const char *session = json_string_value(json_object_get(ev, "session"));
	const char *inv = json_string_value(json_object_get(ev, "invocation"));
	const char *source;
	json_t *stored = NULL, *d;
	inv_state st;
	int error;

	if (!session || !inv || json_object_get(ev, "decision") ||
	    ledger_invocation_get(ctx->ledger, session, inv, &st) < 0)
		return 0;
	if ((error = ledger_event_json(ctx->ledger, st.intent_seq, &stored)) < 0)
		return error;
	d = json_object_get(stored, "decision");
	source = json_string_value(json_object_get(d, "source"));
	error = d && source && strcmp(source, "docket") == 0 ? 1 : 0;
	if (error)
		json_object_set(ev, "decision", d);
	json_decref(stored);
	return error;
}

static const char *const intent_options[] = { "dispatch_if_allowed", NULL };

/*
 * An intent that asked dispatch_if_allowed and was decided allowed is
 * dispatched in the same group: attempt 1 named, so a re-sent intent gets
 * its original dispatch back (attempt and token); docket's decision names
 * its revision. The intent's event is built: session and invocation are
 * its strings.
 */
static int dispatch_if_allowed(proto_ctx *ctx, proto_call *call)
{
	static const char *const ids[] = { "session", "invocation", NULL };
	json_int_t revision = json_integer_value(json_object_get(call->decision, "policy_revision"));
	int error = 0;

	if (call->pops->type(param(call, "dispatch_if_allowed")) != DOCKET_JV_TRUE || !call->decision ||
	    strcmp(json_string_value(json_object_get(call->decision, "verdict")), "allowed") != 0)
		return 0;
	if ((error = event_text_begin(ctx, "tool.dispatched")) < 0)
		return refuse_current(call, error);
	for (size_t i = 0; ids[i] && error == 0; i++) {
		const char *v = param_str(call, ids[i]);

		if (v && (error = event_text_key(ctx, ids[i])) == 0)
			error = docket_json_write_string(&ctx->text, v, strlen(v));
	}
	if (error == 0 && (error = event_text_key(ctx, "attempt")) == 0)
		error = docket_buf_putc(&ctx->text, '1');
	if (error == 0 && revision > 0 && (error = event_text_key(ctx, "policy_revision")) == 0 &&
	    (error = docket_json_write_int(&ctx->text, revision)) == 0)
		error = docket_buf_puts(&ctx->text, ",\"verdict\":\"allowed\"");
	if (error < 0 || (error = event_text_end(ctx, call, "tool.dispatched", 0)) < 0)
		return refuse_current(call, error);
	return add_event_text(ctx, call, &ctx->text);
}

static int prepare_intent(proto_ctx *ctx, proto_call *call)
{
	json_t *ev = params_event(call->params, intent_options);
	const json_t *d;
	int error;

	if (!ev)
		return refuse(call, DOCKET_ENOMEM, "out of memory");
	if ((error = recorded_decision(ctx, ev)) < 0 || (error == 0 && (error = decide_intent(ctx, call, ev)) < 0)) {
		json_decref(ev);
		return refuse_current(call, error);
	}
	if ((d = json_object_get(ev, "decision")))
		call->decision = json_deep_copy(d);
	if ((error = add_event(call, "tool.intent", ev)) < 0)
		return error;
	return dispatch_if_allowed(ctx, call);
}

/*
 * approval.request in authority mode: a call decided allowed under an
 * earlier revision that the current revision asks about (revalidation
 * refused its dispatch for want of an approval) may ask; the request
 * carries docket's re-decision, which the ledger checks names the
 * current revision (invariant 2).
 */
static int prepare_request(proto_ctx *ctx, proto_call *call)
{
	const char *session = param_str(call, "session"), *inv = param_str(call, "invocation");
	json_t *ev = params_event(call->params, NULL), *intent = NULL, *decision = NULL;
	const char *v;
	inv_state st;
	int error = 0;

	if (ev && session && inv && ledger_invocation_get(ctx->ledger, session, inv, &st) == 0 &&
	    st.verdict == DOCKET__V1__VERDICT__VERDICT_ALLOWED &&
	    st.phase == DOCKET__V1__PHASE__PHASE_DECIDING &&
	    (error = ledger_event_json(ctx->ledger, st.intent_seq, &intent)) == 0 &&
	    (error = authority_decide(ctx->auth, session, intent, &decision)) == 0) {
		v = decision ? json_string_value(json_object_get(decision, "verdict")) : NULL;
		if (v && strcmp(v, "approval_required") == 0)
			json_object_set(ev, "decision", decision);
	}
	json_decref(intent);
	json_decref(decision);
	if (error < 0) {
		json_decref(ev);
		return refuse_current(call, error);
	}
	return add_event(call, "approval.requested", ev);
}

/*
 * A dispatch whose intent is not committed yet (it is earlier in the same
 * batch, or missing): in authority mode the intent is decided under the
 * revision current now, so the dispatch names that revision and the append
 * refuses it if another revision landed in between.
 */
static int dispatch_before_intent(proto_ctx *ctx, proto_call *call, const char *session)
{
	json_t *ev = params_event(call->params, NULL);
	sess_state ss;
	int active = authority_is_active(ctx->auth, session);

	if (ev && active > 0 && ledger_session_get(ctx->ledger, session, &ss, NULL) == 0)
		json_object_set_new(ev, "policy_revision", json_integer(ss.policy_revision));
	return add_event(call, "tool.dispatched", ev);
}

/*
 * tool.dispatch in authority mode revalidates the call under the current
 * policy, whatever phase the committed state shows (earlier requests of the
 * same batch may move it): a call the policy now refuses gets its outcome
 * instead; otherwise the dispatch carries the revision and verdict of the
 * revalidation, and the ledger checks them inside the transaction that
 * appends it (a revision no longer current is a conflict, a verdict that
 * asks needs a granted approval: invariant 4).
 */
static int prepare_dispatch(proto_ctx *ctx, proto_call *call)
{
	const char *session = param_str(call, "session"), *inv = param_str(call, "invocation");
	json_t *intent = NULL, *decision = NULL, *ev;
	const char *v;
	inv_state st;
	int error;

	if (!session || !inv)
		return add_event(call, "tool.dispatched", params_event(call->params, NULL));
	if (ledger_invocation_get(ctx->ledger, session, inv, &st) < 0)
		return dispatch_before_intent(ctx, call, session);
	if ((error = ledger_event_json(ctx->ledger, st.intent_seq, &intent)) < 0 ||
	    (error = authority_decide(ctx->auth, session, intent, &decision)) < 0) {
		json_decref(intent);
		return refuse_current(call, error);
	}
	json_decref(intent);
	v = decision ? json_string_value(json_object_get(decision, "verdict")) : NULL;
	if (v && (strcmp(v, "denied") == 0 || strcmp(v, "unsupported") == 0) &&
	    st.phase != DOCKET__V1__PHASE__PHASE_COMPLETED) {
		call->refused_outcome = 1;
		call->decision = decision;
		return add_event(call, "tool.completed",
				 json_pack("{s:s, s:s, s:s, s:s}", "session", session, "invocation", inv,
					   "status", strcmp(v, "denied") == 0 ? "denied" : "unsupported",
					   "error", "revalidation under the current policy refused the call"));
	}
	ev = params_event(call->params, NULL);
	if (ev && v) {
		json_object_set(ev, "policy_revision", json_object_get(decision, "policy_revision"));
		json_object_set_new(ev, "verdict", json_string(v));
	}
	json_decref(decision);
	return add_event(call, "tool.dispatched", ev);
}

static int recover_options(proto_ctx *ctx, proto_call *call, docket_recover_options *o)
{
	const char *approvals = param_str(call, "approvals");
	const json_t *rec = json_object_get(call->params, "reconcile"), *rt = json_object_get(call->params, "runtime");
	const char *key;
	json_t *v;

	json_object_foreach(call->params, key, v) {
		if (strcmp(key, "approvals") != 0 && strcmp(key, "reconcile") != 0 && strcmp(key, "runtime") != 0)
			return refuse(call, DOCKET_EINVALID, "%s: unknown field \"%s\"", call->method, key);
	}
	if (rt && !json_is_string(rt))
		return refuse(call, DOCKET_EINVALID, "%s: runtime must be a runtime's name", call->method);
	o->runtime = json_string_value(rt);
	if (approvals && strcmp(approvals, "reprompt") != 0 && strcmp(approvals, "close") != 0)
		return refuse(call, DOCKET_EINVALID, "%s: approvals must be reprompt or close", call->method);
	if (rec && !json_is_object(rec))
		return refuse(call, DOCKET_EINVALID, "%s: reconcile must be an object token -> outcome",
			      call->method);
	o->close_approvals = approvals && strcmp(approvals, "close") == 0;
	o->reconcile = rec;
	o->reconcile_cb = ctx->reconcile_cb;
	o->reconcile_ctx = ctx->reconcile_ctx;
	return 0;
}

static int prepare_recover(proto_ctx *ctx, proto_call *call, int apply)
{
	docket_recover_options o = DOCKET_RECOVER_OPTIONS_INIT;
	state_lineage mine;
	int error;

	if ((error = recover_options(ctx, call, &o)) < 0)
		return error;
	/* a runtime sees the calls of its own sessions only (check_role: bound) */
	if (call->conn->role == PROTO_ROLE_RUNTIME)
		conn_lineage(call->conn, &mine);
	if ((error = recover_plan(&call->result, ctx->ledger, ctx->auth, &o,
				  call->conn->role == PROTO_ROLE_RUNTIME ? &mine : NULL)) < 0)
		return refuse_current(call, error);
	(void)apply;
	return 0;
}

/*
 * What a client may not say (the authorization model, docs/protocol.md):
 * docket's own fields (the time of a live append, the revalidation of a
 * dispatch, a re-decision on a request, a `superseded` settlement, a
 * decision labelled source "docket"), and an epoch other than the one its
 * connection was bound to by runtime.start. A connection that never called
 * runtime.start may not change anything: fencing is not opt-in.
 */
/* Is `path` (absolute, no `..`) inside one of the ':'-separated `roots`? */
static int path_inside(const char *path, const char *roots)
{
	size_t plen = strlen(path);

	if (path[0] != '/' || strstr(path, "/../") || (plen >= 3 && strcmp(path + plen - 3, "/..") == 0))
		return 0;
	for (const char *r = roots; r && *r;) {
		const char *end = strchr(r, ':');
		size_t len = end ? (size_t)(end - r) : strlen(r), n = len;

		while (n > 1 && r[n - 1] == '/')
			n--;
		if (n && strncmp(path, r, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n == 1 && r[0] == '/')))
			return 1;
		r += len + (end ? 1 : 0);
	}
	return 0;
}

/*
 * Under an operator policy, what a session's policy treats as writable
 * (cwd, workspace_roots, env TMPDIR) comes from the operator: a client may
 * name such paths only inside the operator's --workspace directories.
 */
static int check_context(proto_ctx *ctx, proto_call *call)
{
	const json_t *p = call->params, *roots = json_object_get(p, "workspace_roots"), *v;
	const char *cwd = json_string_value(json_object_get(p, "cwd"));
	const char *tmp = json_string_value(json_object_get(json_object_get(p, "env"), "TMPDIR"));
	size_t i;

	if (!ctx->operator_policy || call->conn->trusted)
		return 0;
	if (cwd && !path_inside(cwd, ctx->opts.workspaces))
		return refuse(call, DOCKET_EINVALID, "session.open: cwd %s is outside the operator's workspaces "
			      "(serve --workspace)", cwd);
	if (tmp && !path_inside(tmp, ctx->opts.workspaces))
		return refuse(call, DOCKET_EINVALID, "session.open: env TMPDIR %s is outside the operator's workspaces", tmp);
	json_array_foreach(roots, i, v) {
		if (!json_is_string(v) || !path_inside(json_string_value(v), ctx->opts.workspaces))
			return refuse(call, DOCKET_EINVALID, "session.open: workspace root %s is outside the operator's "
				      "workspaces (serve --workspace)", json_string_value(v) ? json_string_value(v) : "?");
	}
	return 0;
}

/* The lineage a connection writes as: its peer uid and its runtime's name. */
static void conn_lineage(const proto_conn *conn, state_lineage *out)
{
	memset(out, 0, sizeof(*out));
	out->uid = conn->peer_uid < 0 || conn->peer_uid >= (long long)LINEAGE_UID_NONE ? LINEAGE_UID_NONE
											: (uint32_t)conn->peer_uid;
	snprintf(out->name, sizeof(out->name), "%s", conn->runtime);
}

/* "uid 1000", or "no uid" for a lineage without one. */
static const char *uid_text(char out[32], uint32_t uid)
{
	if (uid == LINEAGE_UID_NONE)
		snprintf(out, 32, "no uid");
	else
		snprintf(out, 32, "uid %lu", (unsigned long)uid);
	return out;
}

/*
 * Ownership (docs/write-path.md §2): a session belongs to the lineage that
 * opened it (peer uid and runtime name, never the name alone). A session no
 * runtime opened (record, import) has no owner: only the operator drives it.
 */
static int check_owner(proto_ctx *ctx, proto_call *call, const struct method *m, const char *session)
{
	state_lineage own, mine;
	char a[32], b[32];
	int error = ledger_session_owner(ctx->ledger, session, &own);

	if (error == DOCKET_ENOTFOUND)
		return refuse_forbidden(call, "%s: session \"%s\" has no runtime owner (it was opened without an "
					"epoch, by record or import); only an operator drives it", m->name, session);
	if (error < 0)
		return refuse_current(call, error);
	conn_lineage(call->conn, &mine);
	if (!state_lineage_same(&own, &mine))
		return refuse_forbidden(call, "%s: session \"%s\" belongs to runtime \"%s\" (%s), not to this "
					"connection's runtime \"%s\" (%s)", m->name, session, own.name,
					uid_text(a, own.uid), mine.name, uid_text(b, mine.uid));
	return 0;
}

/*
 * A session the ledger does not know yet: only one that an earlier call of
 * this batch opens, from a connection of the same lineage, is this
 * connection's (it is written before this call); any other is refused,
 * since the state machine does not know roles.
 */
static int opened_in_batch(proto_ctx *ctx, const proto_call *call, const char *session)
{
	state_lineage mine, theirs;

	conn_lineage(call->conn, &mine);
	for (size_t i = 0; ctx->batch && i < ctx->batch_i; i++) {
		const proto_call *c = &ctx->batch[i];
		const char *s = json_string_value(json_object_get(c->params, "session"));

		if (c->kind != M_SESSION_OPEN || c->error || c->reply || !s || strcmp(s, session) != 0 || !c->conn)
			continue;
		conn_lineage(c->conn, &theirs);
		if (state_lineage_same(&mine, &theirs))
			return 1;
	}
	return 0;
}

/* Does the role check the session's owner for this method? Operators act on
 * every session, approvers settle approvals on every session. */
static int owner_checked(const proto_conn *conn, const struct method *m)
{
	if (conn->role == PROTO_ROLE_RUNTIME)
		return 1;
	return conn->role == PROTO_ROLE_APPROVER && m->kind != M_APPROVAL_SETTLE;
}

/*
 * Roles and sessions: settling approvals and recover.apply need the
 * approver or operator role; a runtime (and an approver, but for settling)
 * acts only on the sessions its lineage opened; a runtime's recover.plan
 * needs its runtime.start (it sees its own sessions only); under an
 * operator policy no client drives a session that has no trusted policy
 * (opened by `record` or `import`).
 */
static int check_role(proto_ctx *ctx, proto_call *call, const struct method *m, sess_state *out, int *have)
{
	const char *session = param_str(call, "session");
	const char *named = param_str(call, "runtime");
	proto_conn *conn = call->conn;
	int checked = owner_checked(conn, m);
	sess_state ss;

	if (have)
		*have = 0;
	if ((m->kind == M_APPROVAL_SETTLE || m->kind == M_RECOVER_APPLY) && conn->role == PROTO_ROLE_RUNTIME)
		return refuse_forbidden(call, "%s needs the approver or operator role; this connection "
					"(uid %lld) is a runtime (serve --approvers UIDS gives the role)", m->name,
					conn->peer_uid);
	if (m->kind == M_RECOVER_PLAN && conn->role == PROTO_ROLE_RUNTIME && !conn->epoch)
		return refuse(call, DOCKET_ESTALE, "recover.plan: this connection has no runtime; call "
			      "runtime.start first (a runtime sees the calls of its own sessions only)");
	if (!session)
		return 0;
	if (m->kind == M_SESSION_OPEN) {
		if (conn->role == PROTO_ROLE_RUNTIME && named && strcmp(named, conn->runtime) != 0)
			return refuse_forbidden(call, "session.open: runtime \"%s\" is not this connection's (\"%s\")",
						named, conn->runtime);
		return check_context(ctx, call);
	}
	if (!out && !checked && !(ctx->operator_policy && !conn->trusted))
		return 0; /* nothing below applies, and the caller needs no session */
	if (ledger_session_get(ctx->ledger, session, &ss, NULL) < 0) {
		if (checked && !opened_in_batch(ctx, call, session))
			return refuse_forbidden(call, "%s: session \"%s\" was not opened by this connection's runtime",
						m->name, session);
		return 0; /* the state machine names what is missing */
	}
	if (out) {
		*out = ss;
		*have = 1;
	}
	if (checked && check_owner(ctx, call, m, session) < 0)
		return call->error;
	if (ctx->operator_policy && !conn->trusted && ss.policy_revision == 0)
		return refuse(call, DOCKET_EINVALID, "%s: session \"%s\" has no trusted policy (it was not opened "
			      "under serve --policy); serve does not drive it", m->name, session);
	return 0;
}

static int check_client(proto_call *call, const struct method *m)
{
	docket_jv epoch = param(call, "epoch");
	const char *source = jv_str(call, member(call->pops, param(call, "decision"), "source"));
	const char *result = param_str(call, "result");
	uint64_t bound = call->conn ? call->conn->epoch : 0;

	/* recover.apply writes under the epochs of the lineages it settles */
	if (m->kind == M_RUNTIME_START || m->kind == M_RUNTIME_ATTACH || m->kind == M_RECOVER_PLAN ||
	    m->kind == M_RECOVER_APPLY)
		return 0;
	if (!bound)
		return refuse(call, DOCKET_ESTALE, "%s: this connection has no epoch; call runtime.start first "
			      "(every mutating connection is fenced)", m->name);
	if (epoch.p && (call->pops->type(epoch) != DOCKET_JV_INTEGER || (uint64_t)call->pops->integer(epoch) != bound))
		return refuse(call, DOCKET_ESTALE, "%s: epoch is the connection's (%llu), not the client's",
			      m->name, (unsigned long long)bound);
	if (param(call, "time").p)
		return refuse(call, DOCKET_EINVALID, "%s: \"time\" is docket's clock on live appends", m->name);
	if (m->kind == M_TOOL_DISPATCH &&
	    (param(call, "policy_revision").p || param(call, "verdict").p))
		return refuse(call, DOCKET_EINVALID, "tool.dispatch: docket revalidates the call itself "
			      "(policy_revision and verdict are not a client's to give)");
	if (m->kind == M_APPROVAL_REQUEST && param(call, "decision").p)
		return refuse(call, DOCKET_EINVALID, "approval.request: the decision is docket's");
	if (m->kind == M_APPROVAL_SETTLE && result && strcmp(result, "superseded") == 0)
		return refuse(call, DOCKET_EINVALID, "approval.settle: only docket settles superseded "
			      "(when a policy revision changes the verdict)");
	if (source && strcmp(source, "docket") == 0)
		return refuse(call, DOCKET_EINVALID, "%s: decisions with source \"docket\" are written by docket only",
			      m->name);
	if (m->kind == M_TOOL_INTENT &&
	    call_schema_check(m->name, param_str(call, "tool"), call->pops, param(call, "args")) < 0)
		return refuse_current(call, DOCKET_EINVALID);
	return 0;
}

/*
 * runtime.attach {epoch}: bind another connection of the runtime process
 * that started `epoch` (same peer pid, from SO_PEERCRED) to it, while it is
 * the ledger's current epoch. Nothing else can name an epoch: a zombie that
 * says "epoch": 2 is refused (stale_epoch).
 */
static int prepare_attach(proto_ctx *ctx, proto_call *call)
{
	const json_t *e = json_object_get(call->params, "epoch");
	docket_ledger_info info;
	int error;

	if (!json_is_integer(e) || json_object_size(call->params) != 1)
		return refuse(call, DOCKET_EINVALID, "runtime.attach: params are {\"epoch\": N}");
	if ((error = docket_ledger_info_get(ctx->ledger, &info)) < 0)
		return refuse_current(call, error);
	if ((uint64_t)json_integer_value(e) != info.epoch || info.epoch != ctx->started_epoch ||
	    !call->conn || !call->conn->peer_pid || call->conn->peer_pid != ctx->started_pid)
		return refuse(call, DOCKET_ESTALE, "runtime.attach: epoch %lld is not the current epoch of this "
			      "peer's runtime (the ledger is at epoch %llu); call runtime.start",
			      (long long)json_integer_value(e), (unsigned long long)info.epoch);
	call->result = json_pack("{s:I}", "epoch", (json_int_t)info.epoch);
	return call->result ? 0 : refuse(call, DOCKET_ENOMEM, "out of memory");
}

/*
 * The context a session's policy reads about the machine (platform, HOME,
 * USER) is serve's own process's (issue 26): a client may repeat it, never
 * name another. NULL when the process has none (then a client's is refused).
 */
static int own_context_init(proto_ctx *ctx)
{
	struct passwd *pw = getpwuid(geteuid());
	const char *home = getenv("HOME"), *user = getenv("USER");
	struct utsname u;

	ctx->own_platform = uname(&u) == 0 && strcmp(u.sysname, "Darwin") == 0 ? "macos" : "linux";
	if (!home && pw)
		home = pw->pw_dir;
	if (!user && pw)
		user = pw->pw_name;
	if ((home && !(ctx->own_home = docket_strdup(home))) || (user && !(ctx->own_user = docket_strdup(user))))
		return docket_error_set_oom();
	return 0;
}

/* One member of the context: the client's must be ours; ours goes in. */
static int own_member(proto_call *call, json_t *obj, const char *key, const char *where, const char *own)
{
	const json_t *v = json_object_get(obj, key);

	if (v && (!json_is_string(v) || !own || strcmp(json_string_value(v), own) != 0))
		return refuse_forbidden(call, "session.open: %s%s is not this server's (%s); serve records its own "
					"process's (docs/protocol.md, \"Context\")", where, key, own ? own : "unset");
	if (own && json_object_set_new(obj, key, json_string(own)) < 0)
		return refuse(call, DOCKET_ENOMEM, "out of memory");
	return 0;
}

static int own_context(proto_ctx *ctx, proto_call *call)
{
	json_t *env = json_object_get(call->params, "env");

	if (call->conn->trusted)
		return 0;
	if (!env) {
		if (!(env = json_object()) || json_object_set_new(call->params, "env", env) < 0)
			return refuse(call, DOCKET_ENOMEM, "out of memory");
	} else if (!json_is_object(env)) {
		return refuse(call, DOCKET_EINVALID, "session.open: env must be an object of strings");
	}
	if (own_member(call, call->params, "platform", "", ctx->own_platform) < 0 ||
	    own_member(call, env, "HOME", "env.", ctx->own_home) < 0 ||
	    own_member(call, env, "USER", "env.", ctx->own_user) < 0)
		return call->error;
	return 0;
}

/*
 * What the kernel says about the peer goes into the record: a runtime's
 * runtime.started carries its uid (its lineage; a client cannot name one),
 * its sessions name its runtime, and a settlement's actor carries the uid
 * of the connection that settled it (SO_PEERCRED), whatever the client says.
 */
static int identify(proto_ctx *ctx, proto_call *call, const struct method *m)
{
	proto_conn *conn = call->conn;
	const char *actor = json_string_value(json_object_get(call->params, "actor"));
	char who[600];

	if (m->kind == M_RUNTIME_START) {
		if (json_object_get(call->params, "uid"))
			return refuse(call, DOCKET_EINVALID, "runtime.start: \"uid\" is the kernel's word "
				      "(SO_PEERCRED), not a client's");
		if (conn->peer_uid >= 0 && conn->peer_uid < (long long)LINEAGE_UID_NONE &&
		    json_object_set_new(call->params, "uid", json_integer((json_int_t)conn->peer_uid)) < 0)
			return refuse(call, DOCKET_ENOMEM, "out of memory");
		return 0;
	}
	if (m->kind == M_SESSION_OPEN) {
		if (conn->role == PROTO_ROLE_RUNTIME && !json_object_get(call->params, "runtime"))
			json_object_set_new(call->params, "runtime", json_string(conn->runtime));
		return own_context(ctx, call);
	}
	if (m->kind != M_APPROVAL_SETTLE || conn->peer_uid < 0)
		return 0;
	if (actor)
		snprintf(who, sizeof(who), "%s (uid %lld)", actor, conn->peer_uid);
	else
		snprintf(who, sizeof(who), "uid %lld", conn->peer_uid);
	json_object_set_new(call->params, "actor", json_string(who));
	return 0;
}

/*
 * The text path (tool.complete, tool.intent in record mode): 0 and the call
 * prepared from simdjson's tape of its line; 1 when the tree path must
 * prepare it instead (it then gives the reply or the refusal). Anything
 * the tree path would refuse, decide or look up differently goes there.
 */
static int prepare_text(proto_ctx *ctx, proto_call *call, const struct method *m)
{
	docket_tape_doc doc;
	docket_jv root, decision;
	docket_buf text = DOCKET_BUF_INIT;
	const char *session, *inv;
	sess_state ss;
	inv_state st;
	int have = 0, error;

	if (docket_json_tape_parse(ctx->tape, call->line, call->line_len, &doc) < 0 ||
	    docket_jv_tape_root(&doc, &root) < 0)
		return 1;
	call->pops = &docket_jv_tape;
	call->pv = member(call->pops, root, "params");
	if (call->pops->type(call->pv) != DOCKET_JV_OBJECT || param(call, "type").p ||
	    check_client(call, m) < 0 ||
	    check_role(ctx, call, m, m->kind == M_TOOL_INTENT ? &ss : NULL, &have) < 0)
		return 1;
	if (m->kind == M_TOOL_COMPLETE)
		return add_params_text(ctx, call, m->event_type, NULL) < 0;
	session = param_str(call, "session");
	inv = param_str(call, "invocation");
	decision = param(call, "decision");
	/* authority mode decides on the tree; so does a re-sent intent (recorded_decision) */
	if (!have || ss.policy_revision || !session || !inv ||
	    (!decision.p && ledger_invocation_get(ctx->ledger, session, inv, &st) == 0))
		return 1;
	if (decision.p) {
		error = call->pops->dump(&text, decision);
		if (error == 0)
			error = docket_json_parse(&call->decision, text.ptr, text.len);
		docket_buf_dispose(&text);
		if (error < 0)
			return 1;
	}
	if (add_params_text(ctx, call, m->event_type, intent_options) < 0)
		return 1;
	return dispatch_if_allowed(ctx, call) < 0;
}

/* Undo what the text path prepared and hand the call to the tree path. */
static int text_to_tree(proto_call *call)
{
	json_error_t jerr;
	char *line = call->line;
	const char *session = call->session;
	json_t *params;
	int error;

	call->line = NULL;
	proto_call_dispose(call);
	call->line = line;
	call->session = session;
	call->error = 0;
	call->forbidden = 0;
	call->refused_outcome = 0;
	memset(&call->err, 0, sizeof(call->err));
	if ((error = docket_json_load(&call->tree, line, call->line_len, JSON_REJECT_DUPLICATES, &jerr)) < 0)
		return refuse_current(call, error);
	params = json_object_get(call->tree, "params");
	if (!json_is_object(params))
		return refuse(call, DOCKET_EINVALID, "%s: params must be an object", call->method);
	call->params = params;
	return 0;
}

static int prepare(proto_ctx *ctx, proto_call *call)
{
	const struct method *m = method_find(call->method);
	int error;

	call->kind = m ? m->kind : M_UNKNOWN;
	call->barrier = m ? m->barrier : 0;
	if (!m)
		return refuse(call, DOCKET_ENOTFOUND, "method not found: %s", call->method ? call->method : "");
	if (!call->params && call->line && proto_text_method(m->name)) {
		if (prepare_text(ctx, call, m) == 0)
			return 0;
		if ((error = text_to_tree(call)) < 0)
			return error;
	}
	if (!json_is_object(call->params))
		return refuse(call, DOCKET_EINVALID, "%s: params must be an object", m->name);
	call->pops = &docket_jv_jansson;
	call->pv = docket_jv_of_json(call->params);
	if (check_client(call, m) < 0 || check_role(ctx, call, m, NULL, NULL) < 0 ||
	    identify(ctx, call, m) < 0)
		return call->error;
	switch (m->kind) {
	case M_SESSION_OPEN:
		return prepare_session_open(ctx, call);
	case M_POLICY_SET:
		return prepare_policy_set(ctx, call);
	case M_TOOL_INTENT:
		return prepare_intent(ctx, call);
	case M_TOOL_DISPATCH:
		return prepare_dispatch(ctx, call);
	case M_APPROVAL_REQUEST:
		return prepare_request(ctx, call);
	case M_RUNTIME_ATTACH:
		return prepare_attach(ctx, call);
	case M_RECOVER_PLAN:
		return prepare_recover(ctx, call, 0);
	case M_RECOVER_APPLY:
		return prepare_recover(ctx, call, 1);
	default:
		return add_event(call, m->event_type, params_event(call->params, NULL));
	}
}

/* ---- executing a batch ---- */

/*
 * recover.apply, per lineage (docs/write-path.md §2): the items of each
 * lineage follow a runtime.started of that lineage (its own group), and
 * their events carry no epoch, so each is written under the epoch that
 * start just raised: the runtime that dispatched them is fenced, no other.
 * A lineage that is this connection's own, at its current epoch, needs no
 * start: its items carry the connection's epoch. Items of sessions no
 * runtime owns go under one "docket recover" lineage (the connection's own
 * when it is bound). Each item is its own group (isolated).
 */
static ledger_group *group_new(ledger_group **groups, size_t *ngroups, size_t *cap, size_t n)
{
	ledger_group *g;

	if (*ngroups == *cap) {
		ledger_group *ng = docket_array_grow(*groups, cap, sizeof(*ng), 16);

		if (!ng)
			return NULL;
		*groups = ng;
	}
	g = &(*groups)[(*ngroups)++];
	memset(g, 0, sizeof(*g));
	g->events = docket_calloc(n ? n : 1, sizeof(*g->events));
	g->results = docket_calloc(n ? n : 1, sizeof(*g->results));
	if (!g->events || !g->results) {
		docket_error_set_oom();
		return NULL;
	}
	return g;
}

/* The events (a JSON array) as group g, each under `epoch` (0: the ledger's current). */
static int group_fill(ledger_group *g, json_t *events, uint64_t epoch)
{
	json_t *ev;
	size_t j;

	json_array_foreach(events, j, ev) {
		int error;

		if (epoch)
			json_object_set_new(ev, "epoch", json_integer((json_int_t)epoch));
		else
			json_object_del(ev, "epoch");
		if ((error = docket_event_from_json(&g->events[g->n], ev)) < 0)
			return error;
		g->n++;
	}
	return 0;
}

/* The lineage owning an item's session: 1, or 0 when none. */
static int item_owner(const json_t *item, state_lineage *out)
{
	const json_t *o = json_object_get(item, "owner"), *uid = json_object_get(o, "uid");
	const char *name = json_string_value(json_object_get(o, "runtime"));

	memset(out, 0, sizeof(*out));
	if (!name)
		return 0;
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->uid = json_is_integer(uid) ? (uint32_t)json_integer_value(uid) : LINEAGE_UID_NONE;
	return 1;
}

/* The lineage an item is applied under, and the epoch its events carry (0: a new start's);
 * 0 when its session has no owner. */
static int item_lineage(const proto_call *call, const json_t *item, state_lineage *out, uint64_t *epoch)
{
	state_lineage mine;

	conn_lineage(call->conn, &mine);
	*epoch = 0;
	if (!item_owner(item, out)) {
		*out = mine;
		if (call->conn->epoch)
			*epoch = call->conn->epoch;
		else
			snprintf(out->name, sizeof(out->name), "docket recover");
		return 0;
	}
	if (call->conn->epoch && state_lineage_same(out, &mine))
		*epoch = call->conn->epoch;
	return 1;
}

/* A runtime.started of `lin` as its own group; its index noted in `fenced`. */
static int group_start(ledger_group **groups, size_t *ngroups, size_t *cap, const state_lineage *lin,
		       int owner, json_t *fenced)
{
	json_t *ev = json_pack("{s:s, s:s}", "type", "runtime.started", "runtime", lin->name);
	json_t *note = json_pack("{s:s, s:b, s:I}", "runtime", lin->name, "owner", owner,
				 "group", (json_int_t)*ngroups);
	json_t *events = json_array();
	ledger_group *g;
	int error = 0;

	if (ev && lin->uid != LINEAGE_UID_NONE)
		json_object_set_new(ev, "uid", json_integer((json_int_t)lin->uid));
	if (note && lin->uid != LINEAGE_UID_NONE)
		json_object_set_new(note, "uid", json_integer((json_int_t)lin->uid));
	if (!ev || !note || !events || json_array_append(events, ev) < 0 || json_array_append(fenced, note) < 0)
		error = docket_error_set_oom();
	else if (!(g = group_new(groups, ngroups, cap, 1)))
		error = docket_error_last()->code;
	else
		error = group_fill(g, events, 0);
	json_decref(ev);
	json_decref(note);
	json_decref(events);
	return error;
}

static int recover_groups(proto_call *call, ledger_group **groups, size_t *ngroups, size_t *cap)
{
	json_t *items = json_object_get(call->result, "items"), *item, *other;
	json_t *fenced = json_array();
	size_t i, j;
	int error = 0;

	if (!fenced || json_object_set_new(call->result, "fenced", fenced) < 0)
		return docket_error_set_oom();
	json_array_foreach(items, i, item) {
		state_lineage lin, lin2;
		uint64_t epoch, epoch2;
		int owned;

		if (json_array_size(json_object_get(item, "events")) == 0 || json_object_get(item, "group"))
			continue;
		owned = item_lineage(call, item, &lin, &epoch);
		if (!epoch && (error = group_start(groups, ngroups, cap, &lin, owned, fenced)) < 0)
			return error;
		/* this item and every later one of the same lineage */
		for (j = i; j < json_array_size(items) && error == 0; j++) {
			json_t *events;
			ledger_group *g;

			other = json_array_get(items, j);
			events = json_object_get(other, "events");
			if (json_array_size(events) == 0 || json_object_get(other, "group"))
				continue;
			(void)item_lineage(call, other, &lin2, &epoch2);
			if (!state_lineage_same(&lin, &lin2) || epoch2 != epoch)
				continue;
			json_object_set_new(other, "group", json_integer((json_int_t)*ngroups));
			if (!(g = group_new(groups, ngroups, cap, json_array_size(events))))
				return docket_error_last()->code;
			error = group_fill(g, events, epoch);
		}
		if (error < 0)
			return error;
	}
	return 0;
}

static void free_recover_groups(ledger_group *groups, size_t first, size_t n)
{
	for (size_t g = first; g < n; g++) {
		for (size_t i = 0; i < groups[g].n; i++)
			docket_event_free(groups[g].events[i]);
		docket_free(groups[g].events);
		docket_free(groups[g].results);
	}
}

/* Mark each plan item with whether its group went in, and each lineage
 * fenced with the epoch its runtime.started raised (or its error). */
static void recover_report(proto_call *call, const ledger_group *groups)
{
	json_t *items = json_object_get(call->result, "items"), *item;
	json_t *fenced = json_object_get(call->result, "fenced");
	size_t i;

	json_array_foreach(fenced, i, item) {
		const ledger_group *g = &groups[(size_t)json_integer_value(json_object_get(item, "group"))];

		json_object_del(item, "group");
		if (g->error)
			json_object_set_new(item, "error", json_string(g->err.message));
		else
			json_object_set_new(item, "epoch", json_integer((json_int_t)g->results[0].epoch));
	}
	json_array_foreach(items, i, item) {
		json_t *gi = json_object_get(item, "group");
		const ledger_group *g;

		if (!gi) {
			json_object_set_new(item, "applied", json_false());
			continue;
		}
		g = &groups[(size_t)json_integer_value(gi)];
		json_object_del(item, "group");
		json_object_set_new(item, "applied", json_boolean(g->error == 0));
		if (g->error)
			json_object_set_new(item, "error", json_string(g->err.message));
		else if (g->n)
			json_object_set_new(item, "seq", json_integer((json_int_t)g->results[g->n - 1].seq));
	}
}

/* Room in b for n calls and the groups of n calls (and one more). */
static int batch_reserve(proto_batch *b, size_t n)
{
	size_t *o = docket_realloc(b->group_of, (n ? n : 1) * sizeof(*o));
	size_t cap = b->cap ? b->cap : 16;
	ledger_group *g;

	if (!o)
		return docket_error_set_oom();
	b->group_of = o;
	if (n + 1 <= b->cap)
		return 0;
	while (cap < n + 1)
		cap *= 2;
	if (!(g = docket_realloc(b->groups, cap * sizeof(*g))))
		return docket_error_set_oom();
	b->groups = g;
	b->cap = cap;
	return 0;
}

/*
 * Prepare calls[from..n) of the batch (validate, check, decide, build their
 * events) and add their groups; from 0 starts the batch, a later `from`
 * adds calls to it (serve gathers more while the writer commits another
 * batch), each prepared seeing calls[0..i) before it. A recover.apply (the
 * batch's last call) adds its plan's groups. Reads only committed state
 * (read transactions). DOCKET_ENOMEM: calls[from..n) are not in the batch.
 */
int proto_batch_prepare(proto_ctx *ctx, proto_batch *b, proto_call *calls, size_t from, size_t n)
{
	int error;

	if (from == 0) {
		memset(b, 0, sizeof(*b));
		b->calls = calls;
	}
	if ((error = batch_reserve(b, n)) < 0)
		return error;
	b->n = n;
	for (size_t i = from; i < n; i++) {
		proto_call *c = &calls[i];

		b->group_of[i] = SIZE_MAX;
		if (c->reply)
			continue; /* answered before execution */
		c->error = 0;
		c->forbidden = 0;
		ctx->batch = calls;
		ctx->batch_i = i;
		if (prepare(ctx, c) < 0 || c->n == 0)
			continue;
		b->group_of[i] = b->ngroups;
		memset(&b->groups[b->ngroups], 0, sizeof(b->groups[0]));
		b->groups[b->ngroups].events = c->events;
		b->groups[b->ngroups].n = c->n;
		b->groups[b->ngroups].results = c->results;
		b->ngroups++;
	}
	ctx->batch = NULL;
	/* a recover.apply ends its batch: its plan items follow as groups */
	if (n > from && calls[n - 1].kind == M_RECOVER_APPLY && !calls[n - 1].error) {
		b->rec = &calls[n - 1];
		b->rec_first = b->ngroups;
		if ((error = recover_groups(b->rec, &b->groups, &b->ngroups, &b->cap)) < 0)
			refuse_current(b->rec, error);
	}
	return 0;
}

/*
 * Append the prepared groups in one write transaction and one durable
 * commit, then give each call its group's outcome. Touches only the
 * ledger and the batch: serve runs it on its writer thread while the next
 * batch is prepared on the same context.
 */
int proto_batch_commit(proto_ctx *ctx, proto_batch *b)
{
	proto_call *calls = b->calls;
	int error = 0;

	if (b->ngroups && !(b->rec && b->rec->error))
		error = ledger_append_groups(ctx->ledger, b->groups, b->ngroups);
	for (size_t i = 0; i < b->n; i++) {
		if (b->group_of[i] != SIZE_MAX && b->groups[b->group_of[i]].error) {
			calls[i].error = b->groups[b->group_of[i]].error;
			calls[i].err = b->groups[b->group_of[i]].err;
		}
	}
	if (b->rec && !b->rec->error)
		recover_report(b->rec, b->groups);
	return error < 0 ? error : 0;
}

void proto_batch_dispose(proto_batch *b)
{
	if (b->rec)
		free_recover_groups(b->groups, b->rec_first, b->ngroups);
	docket_free(b->group_of);
	docket_free(b->groups);
	memset(b, 0, sizeof(*b));
}

int proto_execute(proto_ctx *ctx, proto_call *calls, size_t n)
{
	proto_batch b;
	int error;

	memset(&b, 0, sizeof(b));
	if ((error = proto_batch_prepare(ctx, &b, calls, 0, n)) < 0) {
		proto_batch_dispose(&b);
		return error;
	}
	error = proto_batch_commit(ctx, &b);
	proto_batch_dispose(&b);
	return error;
}

/* ---- replies ---- */

json_t *proto_error_response(json_t *id, int code, const char *message, const docket_error *err)
{
	json_t *e = json_pack("{s:i, s:s}", "code", code, "message", message);

	if (e && err) {
		json_t *data = json_pack("{s:s}", "kind", docket_error_kind(err->code));

		if (data && err->invariant)
			json_object_set_new(data, "invariant", json_integer(err->invariant));
		json_object_set_new(e, "data", data);
	}
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", e);
}

static int rpc_code(int error)
{
	switch (error) {
	case DOCKET_EINVALID:
		return RPC_INVALID_PARAMS;
	default:
		return RPC_DOCKET_ERROR;
	}
}

static const char *verdict_of(const proto_call *call)
{
	const char *v = json_string_value(json_object_get(call->decision, "verdict"));

	return v ? v : "undecided";
}

/* ,"KEY": */
static int put_key(docket_buf *b, const char *key)
{
	int error;

	if ((error = docket_buf_putc(b, ',')) < 0 || (error = docket_json_write_string(b, key, strlen(key))) < 0)
		return error;
	return docket_buf_putc(b, ':');
}

static int put_int_member(docket_buf *b, const char *key, int64_t v)
{
	int error = put_key(b, key);

	return error < 0 ? error : docket_json_write_int(b, v);
}

static int put_string_member(docket_buf *b, const char *key, const char *v)
{
	int error;

	if (!v)
		return 0; /* json_string(NULL): no member */
	if ((error = put_key(b, key)) < 0)
		return error;
	return docket_json_write_string(b, v, strlen(v));
}

/* The result of a call that appended (or needed nothing), as jansson would dump it. */
static int result_text(const proto_call *call, docket_buf *b)
{
	const docket_append_result *first, *last;
	int error;

	if (!call->n)
		return docket_buf_puts(b, "{}");
	first = &call->results[0];
	last = &call->results[call->n - 1];
	if ((error = docket_buf_puts(b, "{\"seq\":")) < 0 || (error = docket_json_write_int(b, (int64_t)first->seq)) < 0 ||
	    (first->duplicate && (error = docket_buf_puts(b, ",\"duplicate\":true")) < 0))
		return error;
	switch (call->kind) {
	case M_RUNTIME_START:
		error = put_int_member(b, "epoch", (int64_t)first->epoch);
		break;
	case M_POLICY_SET:
		error = put_int_member(b, "revision", call->events[0]->policy_revised->revision);
		break;
	case M_TOOL_INTENT:
		if ((error = put_string_member(b, "verdict", verdict_of(call))) < 0 ||
		    (call->decision && ((error = put_key(b, "decision")) < 0 ||
					(error = docket_json_dump(b, call->decision)) < 0)) ||
		    (error = docket_buf_puts(b, call->n > 1 ? ",\"dispatched\":true" : ",\"dispatched\":false")) < 0)
			break;
		if (call->n > 1 && (error = put_int_member(b, "attempt", last->attempt)) == 0)
			error = put_string_member(b, "token", last->token);
		break;
	case M_TOOL_DISPATCH:
		if ((error = put_int_member(b, "attempt", first->attempt)) == 0)
			error = put_string_member(b, "token", first->token);
		break;
	default:
		break;
	}
	return error < 0 ? error : docket_buf_putc(b, '}');
}

/* What a reply tells the connection: the epoch (and runtime) it is bound to. */
static void reply_binds(proto_ctx *ctx, proto_call *call)
{
	if (!call->error && call->kind == M_RUNTIME_START && call->conn) {
		const char *name = call->events[0]->runtime_started->runtime;

		call->conn->epoch = call->results[0].epoch;
		ctx->started_epoch = call->conn->epoch;
		ctx->started_pid = call->conn->peer_pid;
		snprintf(call->conn->runtime, sizeof(call->conn->runtime), "%s", name ? name : "");
		snprintf(ctx->started_runtime, sizeof(ctx->started_runtime), "%s", call->conn->runtime);
	}
	if (!call->error && call->kind == M_RUNTIME_ATTACH && call->conn) {
		call->conn->epoch = (uint64_t)json_integer_value(json_object_get(call->result, "epoch"));
		snprintf(call->conn->runtime, sizeof(call->conn->runtime), "%s", ctx->started_runtime);
	}
}

/* The reply of a refused call, or of one whose result is a JSON value. */
static json_t *reply_json(proto_call *call)
{
	if (call->error) {
		int code = call->kind == M_UNKNOWN && call->error == DOCKET_ENOTFOUND ? RPC_METHOD_NOT_FOUND
										       : rpc_code(call->error);

		json_t *r = proto_error_response(call->id, code, call->err.message, &call->err);

		if (r && call->forbidden)
			json_object_set_new(json_object_get(json_object_get(r, "error"), "data"), "kind",
					    json_string("forbidden"));
		return r;
	}
	if (call->refused_outcome) {
		docket_error e;

		memset(&e, 0, sizeof(e));
		e.code = DOCKET_ETRANSITION;
		snprintf(e.message, sizeof(e.message),
			 "revalidation under the current policy refused the call (%s); its outcome was recorded at seq %llu",
			 verdict_of(call), (unsigned long long)call->results[0].seq);
		return proto_error_response(call->id, RPC_DOCKET_ERROR, e.message, &e);
	}
	return json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", call->id, "result", call->result);
}

int proto_reply_text(proto_ctx *ctx, proto_call *call, docket_buf *out)
{
	size_t start = out->len;
	json_t *r;
	int error;

	reply_binds(ctx, call);
	if (!call->id)
		return 0;
	if (call->error || call->refused_outcome || call->result) {
		r = reply_json(call);
		error = r ? docket_json_dump(out, r) : docket_error_set_oom();
		json_decref(r);
	} else if ((error = docket_buf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":")) == 0 &&
		   (error = docket_json_dump(out, call->id)) == 0 &&
		   (error = docket_buf_puts(out, ",\"result\":")) == 0 &&
		   (error = result_text(call, out)) == 0) {
		error = docket_buf_putc(out, '}');
	}
	if (error < 0 && out->ptr) {
		out->len = start;
		out->ptr[start] = '\0';
	}
	return error;
}

json_t *proto_reply(proto_ctx *ctx, proto_call *call)
{
	docket_buf text = DOCKET_BUF_INIT;
	json_t *reply = NULL;

	if (proto_reply_text(ctx, call, &text) == 0 && text.len &&
	    docket_json_parse(&reply, text.ptr, text.len) < 0)
		reply = NULL;
	docket_buf_dispose(&text);
	return reply;
}
