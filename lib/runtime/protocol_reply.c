/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol_reply.c: the reply encoders of the runtime protocol: JSON-RPC
 * results and errors, as jansson trees (proto_reply) or written straight
 * into serve's output buffer (proto_reply_text).
 */
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
