/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp_proxy.c: an MCP server over stdio with docket in between
 * (`docket mcp-proxy`, docs/integrations.md).
 *
 *   client --line--> proxy --line--> server
 *   client <--line-- proxy <--line-- server
 *
 * Messages are newline-delimited JSON-RPC (MCP's stdio transport). Every
 * line passes through byte for byte, except:
 *
 *   tools/call request   T0 tool.intent (tool "mcp", {server, tool,
 *                        arguments}); with a policy, docket's verdict:
 *                          denied  -> tool.completed denied and a JSON-RPC
 *                                     error to the client; the server never
 *                                     sees the call
 *                          ask     -> elicitation/create to the client when it
 *                                     declared the capability (approval.requested,
 *                                     approval.settled from its answer), else
 *                                     denied with the reason
 *                        T1 tool.dispatched once the line is written to the server
 *   its response         T2 tool.completed (ok; error for isError or a JSON-RPC
 *                        error), then passed on
 *
 * A recording error denies the call when a policy is enforced (fail closed)
 * and is reported on stderr otherwise. The server runs as a child that dies
 * with the proxy (PR_SET_PDEATHSIG), and the proxy exits when either end
 * closes, so a crash of either side never leaves the other hanging.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integrations/mcp_proxy.h"
#include "integrations_internal.h"
#include "stdio_relay.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define OUTPUT_MAX (64u << 10)

typedef struct held_call {
	char *key;          /* compact JSON of the request id */
	char *invocation;
	char *line;         /* the request, while an elicitation is open */
	char *elicit_key;   /* id of the elicitation/create we sent */
	int dispatched;
} held_call;

struct docket_mcp_proxy {
	docket_ledger *ledger;
	const docket_mcp_proxy_options *opts;
	int to_client, to_server;
	int can_elicit;
	unsigned long elicits;
	held_call *calls;
	size_t ncalls, capcalls;
};

typedef struct docket_mcp_proxy proxy;

static int nomem(void)
{
	return docket_error_set(DOCKET_ENOMEM, "out of memory");
}

static int write_json_line(int fd, const json_t *msg)
{
	docket_buf b = DOCKET_BUF_INIT;
	int error = docket_json_dump(&b, msg);

	if (error == 0)
		error = docket_buf_putc(&b, '\n');
	if (error == 0)
		error = relay_write_all(fd, b.ptr, b.len);
	docket_buf_dispose(&b);
	return error;
}

/* ---- the ledger ---- */

static json_t *ev_new(const proxy *p, const char *type, const char *invocation)
{
	return hook_event_new(type, p->opts->session, "mcp-proxy", invocation);
}

static int append(proxy *p, json_t **evs, size_t n)
{
	return hook_append(p->ledger, evs, n);
}

static int append1(proxy *p, json_t *ev)
{
	return append(p, &ev, 1);
}

static void warn(const char *what)
{
	fprintf(stderr, "docket mcp-proxy: %s: %s\n", what, docket_error_last()->message);
}

/* ---- held calls ---- */

static held_call *call_find(proxy *p, const char *key, int elicit)
{
	size_t i;

	for (i = 0; i < p->ncalls; i++) {
		const char *k = elicit ? p->calls[i].elicit_key : p->calls[i].key;

		if (k && strcmp(k, key) == 0)
			return &p->calls[i];
	}
	return NULL;
}

static void call_drop(proxy *p, held_call *c)
{
	docket_free(c->key);
	docket_free(c->invocation);
	docket_free(c->line);
	docket_free(c->elicit_key);
	*c = p->calls[--p->ncalls];
}

static held_call *call_add(proxy *p, const char *key, const char *invocation)
{
	held_call *c;

	if (p->ncalls == p->capcalls) {
		size_t cap = p->capcalls ? p->capcalls * 2 : 8;

		if (!(c = docket_realloc(p->calls, cap * sizeof(*c))))
			return NULL;
		p->calls = c;
		p->capcalls = cap;
	}
	c = &p->calls[p->ncalls];
	memset(c, 0, sizeof(*c));
	if (!(c->key = docket_strdup(key)) || !(c->invocation = docket_strdup(invocation))) {
		docket_free(c->key);
		docket_free(c->invocation);
		return NULL;
	}
	p->ncalls++;
	return c;
}

/* ---- client -> server ---- */

static int reply_error(proxy *p, const json_t *id, const char *message)
{
	json_t *msg = json_pack("{ss sO s{si ss s{ss}}}", "jsonrpc", "2.0", "id", id, "error", "code", -32001,
				"message", message, "data", "kind", "denied");
	int error;

	if (!msg)
		return nomem();
	error = write_json_line(p->to_client, msg);
	json_decref(msg);
	return error;
}

static int forward(proxy *p, held_call *c, const char *line, size_t len)
{
	int error = relay_write_all(p->to_server, line, len);

	if (error < 0)
		return error;
	if (c && !c->dispatched) {
		c->dispatched = 1;
		if ((error = append1(p, ev_new(p, "tool.dispatched", c->invocation))) < 0)
			warn("cannot record the dispatch");
	}
	return 0;
}

static int ask_client(proxy *p, held_call *c, const char *reason, const char *line, size_t len)
{
	char key[64];
	json_t *msg, *ev;
	int error;

	snprintf(key, sizeof(key), "\"docket-elicit-%lu\"", ++p->elicits);
	if (!(c->elicit_key = docket_strdup(key)) || !(c->line = docket_strndup(line, len)))
		return nomem();
	ev = ev_new(p, "approval.requested", c->invocation);
	if (ev && (json_object_set_new(ev, "request", json_string("r1")) < 0 ||
		   json_object_set_new(ev, "reviewer", json_string("user")) < 0 ||
		   json_object_set_new(ev, "prompt", json_string(reason)) < 0)) {
		json_decref(ev);
		ev = NULL;
	}
	if (append1(p, ev) < 0)
		return 1;  /* not recorded: the caller refuses the call */
	snprintf(key, sizeof(key), "docket-elicit-%lu", p->elicits);
	msg = json_pack("{ss ss ss s{ss s{ss s{}}}}", "jsonrpc", "2.0", "id", key, "method", "elicitation/create",
			"params", "message", reason, "requestedSchema", "type", "object", "properties");
	if (!msg)
		return nomem();
	error = write_json_line(p->to_client, msg);
	json_decref(msg);
	return error;
}

/* A tools/call: T0, docket's verdict, then forward, ask or refuse. */
static int on_tools_call(proxy *p, const json_t *msg, const char *line, size_t len)
{
	const json_t *id = json_object_get(msg, "id"), *params = json_object_get(msg, "params");
	const json_t *name = json_object_get(params, "name"), *arguments = json_object_get(params, "arguments");
	docket_buf key = DOCKET_BUF_INIT, inv = DOCKET_BUF_INIT;
	hook_verdict vi;
	json_t *evs[2] = { NULL, NULL };
	held_call *c;
	int error, enforce = p->opts->policy != NULL;

	memset(&vi, 0, sizeof(vi));
	if (!id || !json_is_string(name))
		return forward(p, NULL, line, len);  /* not a call we can name: the server answers it */
	if ((error = docket_json_dump(&key, id)) < 0 ||
	    (error = docket_buf_printf(&inv, "mcp:%s", key.ptr)) < 0)
		goto done;
	evs[0] = ev_new(p, "tool.intent", inv.ptr);
	if (!evs[0] || json_object_set_new(evs[0], "tool", json_string("mcp")) < 0 ||
	    json_object_set_new(evs[0], "args", json_pack("{ss sO so}", "server", p->opts->name, "tool", name,
							  "arguments", arguments ? json_incref((json_t *)arguments)
										 : json_object())) < 0) {
		error = nomem();
		goto done;
	}
	if (enforce && (error = hook_evaluate(p->opts->policy, evs[0], NULL, NULL, &vi)) < 0)
		goto refuse;
	if (enforce && vi.verdict != DOCKET_VERDICT_ALLOWED) {
		int ask = vi.verdict == DOCKET_VERDICT_APPROVAL_REQUIRED && p->can_elicit;

		if (!ask)
			json_object_set_new(vi.decision, "verdict", json_string("denied"));
		json_object_set_new(evs[0], "decision", vi.decision);
		vi.decision = NULL;
		if (!ask) {
			evs[1] = ev_new(p, "tool.completed", inv.ptr);
			if (evs[1] && (json_object_set_new(evs[1], "status", json_string("denied")) < 0 ||
				       json_object_set_new(evs[1], "error", json_string(vi.reason)) < 0)) {
				json_decref(evs[1]);
				evs[1] = NULL;
			}
			error = append(p, evs, 2);
			evs[0] = evs[1] = NULL;
			if (error < 0)
				warn("cannot record the denial");
			error = reply_error(p, id, vi.reason);
			goto done;
		}
		error = append(p, evs, 1);
		evs[0] = NULL;
		if (error < 0 || !(c = call_add(p, key.ptr, inv.ptr)))
			goto refuse;
		if ((error = ask_client(p, c, vi.reason, line, len)) > 0) {
			call_drop(p, c);
			goto refuse;
		}
		goto done;
	}
	error = append(p, evs, 1);
	evs[0] = NULL;
	if (error < 0 && enforce)
		goto refuse;
	if (error < 0)
		warn("cannot record the call");
	if (!(c = call_add(p, key.ptr, inv.ptr))) {
		error = nomem();
		goto done;
	}
	error = forward(p, c, line, len);
	goto done;
refuse:
	/* enforce mode fails closed: a call docket cannot record or judge is refused */
	snprintf(vi.reason, sizeof(vi.reason), "docket could not record or evaluate the call: %.400s",
		 docket_error_last()->message);
	error = reply_error(p, id, vi.reason);
done:
	json_decref(evs[0]);
	json_decref(vi.decision);
	docket_buf_dispose(&key);
	docket_buf_dispose(&inv);
	return error;
}

/* The client's answer to our elicitation/create. */
static int on_elicit_answer(proxy *p, held_call *c, const json_t *msg)
{
	const char *action = json_string_value(json_object_get(json_object_get(msg, "result"), "action"));
	int yes = action && strcmp(action, "accept") == 0;
	json_t *req = NULL, *ev = ev_new(p, "approval.settled", c->invocation);
	int error;

	if (ev && (json_object_set_new(ev, "request", json_string("r1")) < 0 ||
		   json_object_set_new(ev, "result", json_string(yes ? "approved" : "denied")) < 0 ||
		   json_object_set_new(ev, "actor", json_string("user")) < 0)) {
		json_decref(ev);
		ev = NULL;
	}
	if ((error = append1(p, ev)) < 0)
		warn("cannot record the answer");
	docket_free(c->elicit_key);
	c->elicit_key = NULL;
	if (yes && error == 0) {
		error = forward(p, c, c->line, strlen(c->line));
		docket_free(c->line);
		c->line = NULL;
		return error;
	}
	ev = ev_new(p, "tool.completed", c->invocation);
	if (ev && (json_object_set_new(ev, "status", json_string("denied")) < 0 ||
		   json_object_set_new(ev, "error", json_string("declined by the user")) < 0)) {
		json_decref(ev);
		ev = NULL;
	}
	if (append1(p, ev) < 0)
		warn("cannot record the denial");
	if (docket_json_parse(&req, c->line, strlen(c->line)) == 0)
		error = reply_error(p, json_object_get(req, "id"),
				    yes ? "docket could not record the approval" : "declined by the user");
	json_decref(req);
	call_drop(p, c);
	return error;
}

int docket_mcp_proxy_from_client(docket_mcp_proxy *p, const char *line, size_t len)
{
	json_t *msg = NULL;
	const char *method;
	docket_buf key = DOCKET_BUF_INIT;
	held_call *c;
	int error;

	if (docket_json_parse(&msg, line, len) < 0 || !json_is_object(msg)) {
		docket_error_clear();
		json_decref(msg);
		return forward(p, NULL, line, len);
	}
	method = json_string_value(json_object_get(msg, "method"));
	if (method && strcmp(method, "initialize") == 0)
		p->can_elicit = json_object_get(json_object_get(json_object_get(msg, "params"), "capabilities"),
						"elicitation") != NULL;
	if (method && strcmp(method, "tools/call") == 0) {
		error = on_tools_call(p, msg, line, len);
	} else if (!method && json_object_get(msg, "id") &&
		   docket_json_dump(&key, json_object_get(msg, "id")) == 0 &&
		   (c = call_find(p, key.ptr, 1))) {
		error = on_elicit_answer(p, c, msg);  /* ours: the server never sees it */
	} else {
		error = forward(p, NULL, line, len);
	}
	docket_buf_dispose(&key);
	json_decref(msg);
	return error;
}

/* ---- server -> client ---- */

int mcp_result_text(docket_buf *out, const json_t *result)
{
	const json_t *content = json_object_get(result, "content");
	size_t i;
	int error = 0;

	for (i = 0; i < json_array_size(content) && error == 0 && out->len < OUTPUT_MAX; i++) {
		const char *t = json_string_value(json_object_get(json_array_get(content, i), "text"));

		if (t)
			error = docket_buf_printf(out, "%s%.*s", out->len ? "\n" : "", (int)(OUTPUT_MAX - out->len), t);
	}
	return error;
}

int docket_mcp_proxy_from_server(docket_mcp_proxy *p, const char *line, size_t len)
{
	json_t *msg = NULL, *ev;
	docket_buf key = DOCKET_BUF_INIT, text = DOCKET_BUF_INIT;
	const json_t *result;
	held_call *c = NULL;
	int error;

	if (docket_json_parse(&msg, line, len) == 0 && json_is_object(msg) && !json_object_get(msg, "method") &&
	    json_object_get(msg, "id") && docket_json_dump(&key, json_object_get(msg, "id")) == 0)
		c = call_find(p, key.ptr, 0);
	docket_error_clear();
	if (c) {
		int failed = json_object_get(msg, "error") != NULL;

		result = json_object_get(msg, "result");
		failed |= json_is_true(json_object_get(result, "isError"));
		ev = ev_new(p, "tool.completed", c->invocation);
		if (ev && (json_object_set_new(ev, "status", json_string(failed ? "error" : "ok")) < 0 ||
			   mcp_result_text(&text, failed && !result ? json_object_get(msg, "error") : result) < 0 ||
			   (text.len && json_object_set_new(ev, "output", json_stringn(text.ptr, text.len)) < 0) ||
			   (json_object_get(msg, "error") &&
			    json_object_set_new(ev, "error", json_string(json_string_value(json_object_get(
				    json_object_get(msg, "error"), "message")) ? json_string_value(json_object_get(
				    json_object_get(msg, "error"), "message")) : "JSON-RPC error")) < 0))) {
			json_decref(ev);
			ev = NULL;
		}
		if (append1(p, ev) < 0)
			warn("cannot record the result");
		call_drop(p, c);
	}
	/* T2 is durable before the result is released to the client */
	error = relay_write_all(p->to_client, line, len);
	json_decref(msg);
	docket_buf_dispose(&key);
	docket_buf_dispose(&text);
	return error;
}

/* ---- the connection ---- */

/* Calls still open when either side went away. */
void docket_mcp_proxy_finish(docket_mcp_proxy *p)
{
	size_t i;

	for (i = 0; i < p->ncalls; i++) {
		json_t *ev = ev_new(p, "tool.completed", p->calls[i].invocation);

		if (ev && (json_object_set_new(ev, "status", json_string(p->calls[i].dispatched ? "indeterminate"
											  : "denied")) < 0 ||
			   json_object_set_new(ev, "error", json_string("the connection closed before an answer")) < 0)) {
			json_decref(ev);
			ev = NULL;
		}
		if (append1(p, ev) < 0)
			warn("cannot record an open call");
	}
	while (p->ncalls)
		call_drop(p, &p->calls[0]);
	if (append1(p, ev_new(p, "session.closed", NULL)) < 0)
		warn("cannot close the session");
}

int docket_mcp_proxy_new(docket_mcp_proxy **out, docket_ledger *ledger, const docket_mcp_proxy_options *opts,
			 int to_client, int to_server)
{
	proxy *p = docket_calloc(1, sizeof(*p));
	json_t *open;
	int error;

	*out = NULL;
	if (!p)
		return nomem();
	p->ledger = ledger;
	p->opts = opts;
	p->to_client = to_client;
	p->to_server = to_server;
	open = json_pack("{ss ss ss s{ss si} s{ss ss}}", "type", "session.opened", "session", opts->session,
			 "runtime", "mcp-proxy", "provenance", "file", "mcp-proxy", "line", 0, "labels",
			 "capture", "mcp-proxy", "mcp.server", opts->name);
	if ((error = append1(p, open)) < 0) {
		docket_free(p);
		return error;
	}
	*out = p;
	return 0;
}

void docket_mcp_proxy_free(docket_mcp_proxy *p)
{
	if (!p)
		return;
	while (p->ncalls)
		call_drop(p, &p->calls[0]);
	docket_free(p->calls);
	docket_free(p);
}

static int relay_from_client(void *ctx, const char *line, size_t len)
{
	return docket_mcp_proxy_from_client(ctx, line, len);
}

static int relay_from_server(void *ctx, const char *line, size_t len)
{
	return docket_mcp_proxy_from_server(ctx, line, len);
}

int docket_mcp_proxy_run(docket_ledger *ledger, const docket_mcp_proxy_options *opts, char *const *argv,
			 int *server_status)
{
	relay_ends ends;
	proxy *p = NULL;
	int error;

	/* the session is opened before the server runs: nothing runs unrecorded */
	if ((error = docket_mcp_proxy_new(&p, ledger, opts, STDOUT_FILENO, -1)) < 0)
		return error;
	if ((error = relay_spawn(&ends, argv, "mcp-proxy")) < 0) {
		docket_mcp_proxy_free(p);
		return error;
	}
	p->to_server = ends.to_server;
	error = relay_run(&ends, p, relay_from_client, relay_from_server, server_status);
	docket_mcp_proxy_finish(p);
	docket_mcp_proxy_free(p);
	return error;
}
