/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.c: the C API of include/docket/runtime.h, as calls of the protocol
 * (one owner of the methods' semantics: protocol.c).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "docket/runtime.h"
#include "protocol.h"
#include "util/alloc.h"
#include "util/error.h"

struct docket_runtime {
	docket_ledger *ledger;
	proto_ctx *ctx;
	proto_conn conn;
};

static int run(docket_runtime *rt, const char *method, json_t *params, json_t **result)
{
	proto_call call;
	json_t *reply = NULL;
	int error;

	if (result)
		*result = NULL;
	if (!params)
		return docket_error_set_oom();
	memset(&call, 0, sizeof(call));
	call.method = method;
	call.params = params;
	call.conn = &rt->conn;
	call.id = json_integer(1);
	if ((error = proto_execute(rt->ctx, &call, 1)) == 0 && call.error) {
		docket_error_restore(&call.err);
		error = call.error;
	}
	if (error == 0 && call.refused_outcome) {
		reply = proto_reply(rt->ctx, &call);
		error = docket_error_set(DOCKET_ETRANSITION, "%s", json_string_value(json_object_get(
			json_object_get(reply, "error"), "message")));
	} else if (error == 0) {
		reply = proto_reply(rt->ctx, &call);
		if (result)
			*result = json_incref(json_object_get(reply, "result"));
	}
	json_decref(reply);
	json_decref(call.id);
	proto_call_dispose(&call);
	json_decref(params);
	return error;
}

/* The in-process caller is the operator, with this process's uid (its lineage). */
static int runtime_new(docket_runtime **out, docket_ledger *l)
{
	proto_options opts;
	docket_runtime *rt;
	int error;

	*out = NULL;
	memset(&opts, 0, sizeof(opts));
	if (!(rt = docket_calloc(1, sizeof(*rt))))
		return docket_error_set_oom();
	rt->ledger = l;
	rt->conn.trusted = 1;
	rt->conn.role = PROTO_ROLE_OPERATOR;
	rt->conn.peer_uid = (long long)getuid();
	if ((error = proto_ctx_new(&rt->ctx, l, &opts)) < 0) {
		docket_runtime_free(rt);
		return error;
	}
	*out = rt;
	return 0;
}

int docket_runtime_operator(docket_runtime **out, docket_ledger *l)
{
	return runtime_new(out, l);
}

int docket_runtime_start(docket_runtime **out, docket_ledger *l, const char *name)
{
	docket_runtime *rt = NULL;
	int error;

	if ((error = runtime_new(&rt, l)) < 0)
		return error;
	if ((error = run(rt, "runtime.start", json_pack("{s:s}", "runtime", name), NULL)) < 0) {
		docket_runtime_free(rt);
		return error;
	}
	*out = rt;
	return 0;
}

uint64_t docket_runtime_epoch(const docket_runtime *rt)
{
	return rt->conn.epoch;
}

void docket_runtime_free(docket_runtime *rt)
{
	if (!rt)
		return;
	proto_ctx_free(rt->ctx);
	docket_free(rt);
}

int docket_runtime_call(docket_runtime *rt, const char *method, const json_t *params, json_t **result)
{
	return run(rt, method, params ? json_deep_copy(params) : json_object(), result);
}

int docket_session_open(docket_runtime *rt, const char *session, const char *cwd)
{
	json_t *p = json_pack("{s:s}", "session", session);

	if (p && cwd)
		json_object_set_new(p, "cwd", json_string(cwd));
	return run(rt, "session.open", p, NULL);
}

int docket_policy_set(docket_runtime *rt, const char *session, const char *format,
		      const json_t *policy, uint32_t *revision)
{
	json_t *res = NULL;
	int error = run(rt, "policy.set", json_pack("{s:s, s:s, s:O}", "session", session,
						    "format", format, "policy", policy), &res);

	if (error == 0 && revision)
		*revision = (uint32_t)json_integer_value(json_object_get(res, "revision"));
	json_decref(res);
	return error;
}

int docket_tool_intent(docket_runtime *rt, const char *session, const char *invocation,
		       const char *tool, const json_t *args, const char *recovery,
		       const char *verdict, int dispatch_if_allowed, docket_intent_result *out)
{
	json_t *p = json_pack("{s:s, s:s, s:s}", "session", session, "invocation", invocation, "tool", tool);
	json_t *res = NULL;
	int error;

	if (p && args)
		json_object_set(p, "args", (json_t *)args);
	if (p && recovery)
		json_object_set_new(p, "recovery", json_string(recovery));
	if (p && verdict)
		json_object_set_new(p, "decision", json_pack("{s:s, s:s}", "verdict", verdict, "source", "runtime"));
	if (p && dispatch_if_allowed)
		json_object_set_new(p, "dispatch_if_allowed", json_true());
	error = run(rt, "tool.intent", p, &res);
	if (error == 0 && out) {
		const char *v = json_string_value(json_object_get(res, "verdict"));
		const char *t = json_string_value(json_object_get(res, "token"));

		memset(out, 0, sizeof(*out));
		out->seq = (uint64_t)json_integer_value(json_object_get(res, "seq"));
		snprintf(out->verdict, sizeof(out->verdict), "%s", v ? v : "undecided");
		out->dispatched = json_is_true(json_object_get(res, "dispatched"));
		out->attempt = (uint32_t)json_integer_value(json_object_get(res, "attempt"));
		snprintf(out->token, sizeof(out->token), "%s", t ? t : "");
	}
	json_decref(res);
	return error;
}

int docket_approval_request(docket_runtime *rt, const char *session, const char *invocation,
			    const char *request)
{
	return run(rt, "approval.request", json_pack("{s:s, s:s, s:s}", "session", session,
						     "invocation", invocation, "request", request), NULL);
}

int docket_approval_settle(docket_runtime *rt, const char *session, const char *invocation,
			   const char *request, const char *result, const char *actor)
{
	json_t *p = json_pack("{s:s, s:s, s:s, s:s}", "session", session, "invocation", invocation,
			      "request", request, "result", result);

	if (p && actor)
		json_object_set_new(p, "actor", json_string(actor));
	return run(rt, "approval.settle", p, NULL);
}

int docket_tool_dispatch(docket_runtime *rt, const char *session, const char *invocation,
			 uint32_t *attempt, char token[48])
{
	json_t *res = NULL;
	int error = run(rt, "tool.dispatch", json_pack("{s:s, s:s}", "session", session,
						       "invocation", invocation), &res);

	if (error == 0) {
		const char *t = json_string_value(json_object_get(res, "token"));

		if (attempt)
			*attempt = (uint32_t)json_integer_value(json_object_get(res, "attempt"));
		if (token)
			snprintf(token, 48, "%s", t ? t : "");
	}
	json_decref(res);
	return error;
}

int docket_tool_complete(docket_runtime *rt, const char *session, const char *invocation,
			 const char *status, int exit_code, const char *output)
{
	json_t *p = json_pack("{s:s, s:s, s:s}", "session", session, "invocation", invocation, "status", status);

	if (p && exit_code >= 0)
		json_object_set_new(p, "exit_code", json_integer(exit_code));
	if (p && output)
		json_object_set_new(p, "output", json_string(output));
	return run(rt, "tool.complete", p, NULL);
}

int docket_session_close(docket_runtime *rt, const char *session)
{
	return run(rt, "session.close", json_pack("{s:s}", "session", session), NULL);
}

int docket_runtime_recover(docket_runtime *rt, const docket_recover_options *opts, int apply, json_t **plan)
{
	json_t *p = json_pack("{s:s}", "approvals", opts && opts->close_approvals ? "close" : "reprompt");

	if (p && opts && opts->reconcile)
		json_object_set(p, "reconcile", (json_t *)opts->reconcile);
	if (p && opts && opts->runtime)
		json_object_set_new(p, "runtime", json_string(opts->runtime));
	proto_set_reconcile_cb(rt->ctx, opts ? opts->reconcile_cb : NULL, opts ? opts->reconcile_ctx : NULL);
	return run(rt, apply ? "recover.apply" : "recover.plan", p, plan);
}
