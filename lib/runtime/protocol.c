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
 *
 * This file prepares the methods' events; the text request path is in
 * protocol_text.c, the trust checks in protocol_trust.c, batch execution
 * (prepare, commit) in protocol_batch.c, the reply encoders in
 * protocol_reply.c (protocol_internal.h: what they share).
 */
#include "protocol.h"

#include "protocol_internal.h"

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

static const struct method methods[] = {
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

const struct method *method_find(const char *name)
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

/* ---- preparing: params -> events ---- */

int refuse(proto_call *call, int code, const char *fmt, ...)
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

/* Refuse the call as out of memory (docket_error_set_oom's message). */
int refuse_oom(proto_call *call)
{
	return refuse_current(call, docket_error_set_oom());
}

/* Keep the current error as the call's refusal. */
int refuse_current(proto_call *call, int code)
{
	call->error = code;
	call->err = *docket_error_last();
	return code;
}

/* A refusal of the role or ownership check: data.kind "forbidden". */
int refuse_forbidden(proto_call *call, const char *fmt, ...)
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
int reserve_event(proto_call *call)
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
			return refuse_oom(call);
		call->results = res;
		call->cap = cap;
	}
	return 0;
}

/* Add the event a conversion made (room reserved), or keep its error as the refusal. */
int push_event(proto_call *call, int error, docket_event *ev)
{
	if (error < 0)
		return refuse_current(call, error);
	call->events[call->n++] = ev;
	return 0;
}

/* Build an event of `type` from `obj` (consumed) and add it to the call. */
int add_event(proto_call *call, const char *type, json_t *obj)
{
	docket_event *ev = NULL;
	int error;

	if (!obj)
		return refuse_oom(call);
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
json_t *params_event(const json_t *params, const char *const *options)
{
	json_t *obj = json_deep_copy(params);

	for (size_t i = 0; obj && options && options[i]; i++)
		json_object_del(obj, options[i]);
	return obj;
}

/* A member of an object read through `ops`; absent when `obj` is not an object. */
docket_jv member(const docket_jv_ops *ops, docket_jv obj, const char *key)
{
	docket_jv none = { NULL, 0 };

	return ops->type(obj) == DOCKET_JV_OBJECT ? ops->get(obj, key) : none;
}

docket_jv param(const proto_call *call, const char *key)
{
	return member(call->pops, call->pv, key);
}

/* The string `v` is, or NULL (json_string_value). */
const char *jv_str(const proto_call *call, docket_jv v)
{
	size_t len;

	return call->pops->type(v) == DOCKET_JV_STRING ? call->pops->string(v, &len) : NULL;
}

const char *param_str(const proto_call *call, const char *key)
{
	return jv_str(call, param(call, key));
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
		return refuse_oom(call);
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
		return refuse_oom(call);
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
			return error < 0 ? refuse_current(call, error) : refuse_oom(call);
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
int recorded_decision(proto_ctx *ctx, json_t *ev)
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

const char *const intent_options[] = { "dispatch_if_allowed", NULL };

/*
 * An intent that asked dispatch_if_allowed and was decided allowed is
 * dispatched in the same group: attempt 1 named, so a re-sent intent gets
 * its original dispatch back (attempt and token); docket's decision names
 * its revision. The intent's event is built: session and invocation are
 * its strings.
 */
int dispatch_if_allowed(proto_ctx *ctx, proto_call *call)
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
		return refuse_oom(call);
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
	return call->result ? 0 : refuse_oom(call);
}

int prepare(proto_ctx *ctx, proto_call *call)
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
