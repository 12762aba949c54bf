/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol_text.c: the text request path of the runtime protocol.
 *
 * tool.complete, and tool.intent in record mode, are prepared from
 * simdjson's tape of the request line without building a jansson tree: the
 * event's JSON text is written here (event_text_*, add_params_text) and the
 * call falls back to the tree path (text_to_tree) for anything the tree path
 * would refuse, decide or look up differently (docs/architecture.md, "serve
 * requests").
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

/*
 * The event a JSON text (in `text`, written by this file) describes, added
 * to the call: simdjson reads it, jansson when simdjson cannot decide.
 */
int add_event_text(proto_ctx *ctx, proto_call *call, const docket_buf *text)
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
int event_text_begin(proto_ctx *ctx, const char *type)
{
	int error;

	docket_buf_clear(&ctx->text);
	if ((error = docket_buf_puts(&ctx->text, "{\"type\":")) < 0)
		return error;
	return docket_json_write_string(&ctx->text, type, strlen(type));
}

/* ,"KEY": */
int event_text_key(proto_ctx *ctx, const char *key)
{
	int error;

	if ((error = docket_buf_putc(&ctx->text, ',')) < 0 ||
	    (error = docket_json_write_string(&ctx->text, key, strlen(key))) < 0)
		return error;
	return docket_buf_putc(&ctx->text, ':');
}

/* Close it, with the connection's epoch unless it names one (add_event's rule). */
int event_text_end(proto_ctx *ctx, const proto_call *call, const char *type, int names_epoch)
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

/*
 * The text path (tool.complete, tool.intent in record mode): 0 and the call
 * prepared from simdjson's tape of its line; 1 when the tree path must
 * prepare it instead (it then gives the reply or the refusal). Anything
 * the tree path would refuse, decide or look up differently goes there.
 */
int prepare_text(proto_ctx *ctx, proto_call *call, const struct method *m)
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
int text_to_tree(proto_call *call)
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
