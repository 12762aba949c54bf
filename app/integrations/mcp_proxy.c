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
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integrations/mcp_proxy.h"
#include "integrations_internal.h"
#include "ledger/spool.h"
#include "policy/policy_doc.h"
#include "stdio_relay.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"
#include "util/tool.h"

#define OUTPUT_MAX (64u << 10)
#define LINE_EXCERPT 512

typedef struct held_call {
	char *key;          /* compact JSON of the request id */
	char *invocation;
	char *line;         /* the request, while an elicitation is open */
	char *elicit_key;   /* id of the elicitation/create we sent */
	char *session;      /* the client's session when joined (see join_of), else NULL: the proxy's */
	int settle_first;   /* joined to a call awaiting approval: the dispatch settles it approved */
	char settle_first_request[257];
	int dispatched;
} held_call;

struct docket_mcp_proxy {
	docket_ledger *ledger;
	const docket_mcp_proxy_options *opts;
	int to_client, to_server;
	int can_elicit;
	uint32_t revision;         /* the revision recording opts->policy in the proxy's session; 0: none */
	unsigned long elicits;
	unsigned long refused;     /* client lines refused (refuse_line) */
	held_call *calls;
	size_t ncalls, capcalls;
};

typedef struct docket_mcp_proxy proxy;

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

/* An event about held call `c`, in its session. */
static json_t *call_ev(const proxy *p, const held_call *c, const char *type)
{
	return hook_event_new(type, c->session ? c->session : p->opts->session, "mcp-proxy", c->invocation);
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
	docket_free(c->session);
	*c = p->calls[--p->ncalls];
}

static held_call *call_add(proxy *p, const char *key, const char *invocation, const char *session)
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
	if (!(c->key = docket_strdup(key)) || !(c->invocation = docket_strdup(invocation)) ||
	    (session && !(c->session = docket_strdup(session)))) {
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
		return docket_error_set_oom();
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
		json_t *evs[2] = { NULL, NULL };
		size_t n = 0;

		c->dispatched = 1;
		if (c->settle_first) {
			evs[n] = call_ev(p, c, "approval.settled");
			if (evs[n] && (json_object_set_new(evs[n], "result", json_string("approved")) < 0 ||
				       json_object_set_new(evs[n], "request", json_string(c->settle_first_request)) < 0 ||
				       json_object_set_new(evs[n], "reason",
							   json_string("inferred: the client made the call")) < 0)) {
				json_decref(evs[n]);
				evs[n] = NULL;
			}
			n++;
		}
		evs[n++] = call_ev(p, c, "tool.dispatched");
		if ((error = append(p, evs, n)) < 0)
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
		return docket_error_set_oom();
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
		return docket_error_set_oom();
	error = write_json_line(p->to_client, msg);
	json_decref(msg);
	return error;
}

/* A JSON-RPC id the proxy can key a call by: a string or an integer. */
static int usable_id(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

/* ---- one record per call: joining the client's own record ----
 *
 * Claude Code names the call it makes in the request's _meta
 * ("claudecode/toolUseId": the tool_use id its hooks and transcript use) and
 * Codex names its call and thread ("callId", "threadId"). When the ledger
 * already holds that call still open (a PreToolUse hook recorded it), the
 * proxy records its dispatch and outcome (or its denial) on that call and
 * writes no intent of its own. When it does not, but the session is known
 * (Codex's threadId; CLAUDE_CODE_SESSION_ID in the proxy's environment),
 * the proxy records the call there under the client's id, so a later hook
 * or import finds it and adds nothing. Otherwise (no _meta: another client)
 * the call is the proxy's own, "mcp:<request id>" in its session.
 */

#define JOIN_ID_MAX 256
/* How long a lookup waits for the writer lock to fold the spool first. */
#define JOIN_FOLD_WAIT_MS 1000

typedef struct join_target {
	char session[JOIN_ID_MAX + 1];
	char invocation[JOIN_ID_MAX + 1];
	char state[32];
	char request[JOIN_ID_MAX + 1];
	int found;             /* the ledger holds the call, without an outcome */
} join_target;

/* An id the ledger takes: 1..256 bytes, no control characters. */
static int join_id_ok(const char *s)
{
	size_t i, n = s ? strlen(s) : 0;

	if (n == 0 || n > JOIN_ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static void copy_id(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

static int join_cb(void *ctx, const docket_pending_info *info)
{
	join_target *t = ctx;

	if (t->found || strcmp(info->invocation, t->invocation) != 0 ||
	    (t->session[0] && strcmp(info->session, t->session) != 0))
		return 0;
	copy_id(t->session, sizeof(t->session), info->session);
	copy_id(t->state, sizeof(t->state), info->state);
	copy_id(t->request, sizeof(t->request), info->open_request);
	t->found = 1;
	return 0;
}

/* 1 and *t when the call can be recorded as the client's own; 0: the proxy's. */
static int join_of(proxy *p, const json_t *params, join_target *t)
{
	const json_t *meta = json_object_get(params, "_meta");
	const char *id, *session = NULL;
	int busy = 0;

	memset(t, 0, sizeof(*t));
	if ((id = json_string_value(json_object_get(meta, "claudecode/toolUseId"))))
		session = getenv("CLAUDE_CODE_SESSION_ID");
	else if ((id = json_string_value(json_object_get(meta, "callId"))))
		session = json_string_value(json_object_get(meta, "threadId"));
	if (!join_id_ok(id))
		return 0;
	copy_id(t->invocation, sizeof(t->invocation), id);
	if (join_id_ok(session))
		copy_id(t->session, sizeof(t->session), session);
	/* the hook that recorded this call a moment ago left it in the spool
	 * (spool first) until its detached fold runs: fold first, or the call
	 * looks unknown and the proxy's own intent for it conflicts with the
	 * hook's once both are in the chain */
	if (docket_spool_fold_all_by(p->ledger, docket_spool_now_ms() + JOIN_FOLD_WAIT_MS, &busy) < 0)
		docket_error_clear();
	if (docket_ledger_pending(p->ledger, NULL, join_cb, t) < 0)
		docket_error_clear();  /* cannot look: the call stays the proxy's own */
	return t->found || t->session[0];
}

/* The client's session, opened by the proxy when no one opened it yet. */
static int join_open(proxy *p, const join_target *t)
{
	if (t->found)
		return 0;
	return hook_open_session(p->ledger, t->session, "mcp-proxy", "mcp-proxy", NULL, NULL,
				 json_pack("{ss ss}", "capture", "mcp-proxy", "mcp.server", p->opts->name));
}

/* The intent `ev` moved to the client's session and id. */
static int retarget(json_t *ev, const join_target *t)
{
	if (json_object_set_new(ev, "session", json_string(t->session)) < 0 ||
	    json_object_set_new(ev, "invocation", json_string(t->invocation)) < 0)
		return docket_error_set_oom();
	return 0;
}

/* A joined call docket denies: settled (when asked) and ended denied, in the client's record. */
static int join_deny(proxy *p, const join_target *t, json_t *intent, const char *reason)
{
	held_call c;
	json_t *evs[3] = { NULL, NULL, NULL };
	size_t n = 0;
	int error;

	memset(&c, 0, sizeof(c));
	c.session = (char *)t->session;
	c.invocation = (char *)t->invocation;
	if ((error = join_open(p, t)) < 0) {
		json_decref(intent);
		return error;
	}
	if (!t->found)
		evs[n++] = intent;
	else
		json_decref(intent);
	if (t->found && strcmp(t->state, "awaiting_approval") == 0) {
		evs[n] = call_ev(p, &c, "approval.settled");
		if (evs[n] && (json_object_set_new(evs[n], "request", json_string(t->request)) < 0 ||
			       json_object_set_new(evs[n], "result", json_string("denied")) < 0 ||
			       json_object_set_new(evs[n], "reason", json_string(reason)) < 0)) {
			json_decref(evs[n]);
			evs[n] = NULL;
		}
		n++;
	}
	evs[n] = call_ev(p, &c, "tool.completed");
	if (evs[n] && (json_object_set_new(evs[n], "status", json_string("denied")) < 0 ||
		       json_object_set_new(evs[n], "error", json_string(reason)) < 0)) {
		json_decref(evs[n]);
		evs[n] = NULL;
	}
	return append(p, evs, n + 1);
}

/* A joined call docket lets through: its record, then the call is held like any other. */
static int join_hold(proxy *p, const join_target *t, json_t *intent, const char *key, held_call **out)
{
	held_call *c;
	int error;

	*out = NULL;
	if ((error = join_open(p, t)) < 0) {
		json_decref(intent);
		return error;
	}
	if (!t->found) {
		if ((error = append1(p, intent)) < 0)
			return error;
	} else {
		json_decref(intent);
	}
	if (!(c = call_add(p, key, t->invocation, t->session)))
		return docket_error_set_oom();
	if (t->found && strcmp(t->state, "awaiting_approval") == 0) {
		c->settle_first = 1;
		copy_id(c->settle_first_request, sizeof(c->settle_first_request), t->request);
	}
	/* dispatched already (the client's own record says so): not twice */
	c->dispatched = t->found && strcmp(t->state, "in_doubt") == 0;
	*out = c;
	return 0;
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
	join_target t;
	int error, ask, enforce = p->opts->policy != NULL;

	memset(&vi, 0, sizeof(vi));
	assert(usable_id(id) && json_is_string(name));  /* refused before (refuse_line) */
	if ((error = docket_json_dump(&key, id)) < 0 ||
	    (error = docket_buf_printf(&inv, "mcp:%s", key.ptr)) < 0)
		goto done;
	evs[0] = ev_new(p, "tool.intent", inv.ptr);
	if (!evs[0] || json_object_set_new(evs[0], "tool", json_string(DOCKET_TOOL_MCP)) < 0 ||
	    json_object_set_new(evs[0], "args", json_pack("{ss sO so}", "server", p->opts->name, "tool", name,
							  "arguments", arguments ? json_incref((json_t *)arguments)
										 : json_object())) < 0) {
		error = docket_error_set_oom();
		goto done;
	}
	if (enforce && (error = hook_evaluate(p->opts->policy, p->revision, evs[0], NULL, NULL, &vi)) < 0)
		goto refuse;
	ask = enforce && vi.verdict == DOCKET_VERDICT_APPROVAL_REQUIRED && p->can_elicit;
	/* an elicitation is the proxy's own question: such a call stays in its session */
	if (!ask && join_of(p, params, &t) && (error = retarget(evs[0], &t)) == 0) {
		if (enforce && vi.verdict != DOCKET_VERDICT_ALLOWED) {
			json_object_set_new(vi.decision, "verdict", json_string("denied"));
			/* the proxy's revision is one of its own session, not the client's */
			json_object_del(vi.decision, "policy_revision");
			json_object_set_new(evs[0], "decision", vi.decision);
			vi.decision = NULL;
			error = join_deny(p, &t, evs[0], vi.reason);
			evs[0] = NULL;
			if (error < 0)
				warn("cannot record the denial");
			error = reply_error(p, id, vi.reason);
			goto done;
		}
		error = join_hold(p, &t, evs[0], key.ptr, &c);
		evs[0] = NULL;
		if (error < 0 && enforce)
			goto refuse;
		if (error < 0) {
			warn("cannot record the call");
			error = forward(p, NULL, line, len);
			goto done;
		}
		error = forward(p, c, line, len);
		goto done;
	}
	if (error < 0)
		goto done;
	if (enforce && vi.verdict != DOCKET_VERDICT_ALLOWED) {
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
		if (error < 0 || !(c = call_add(p, key.ptr, inv.ptr, NULL)))
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
	if (!(c = call_add(p, key.ptr, inv.ptr, NULL))) {
		error = docket_error_set_oom();
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

/* A printable, bounded copy of a refused line for the record (bytes outside ASCII as '?'). */
static json_t *line_excerpt(const char *line, size_t len)
{
	char out[LINE_EXCERPT + 1];
	size_t i, n = len < LINE_EXCERPT ? len : LINE_EXCERPT;

	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	for (i = 0; i < n; i++)
		out[i] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
	out[n] = '\0';
	return json_string(out);
}

/*
 * A client line the proxy cannot parse or check is never forwarded: the
 * server might read it otherwise than docket did (a duplicate key, a lone
 * surrogate, an integer past 64 bits, a batch hiding a call). It is
 * recorded (an intent with the line's excerpt, ended denied), and the
 * client gets a JSON-RPC error (`code`, with the request's id when it has a
 * usable one). Returns 0, or an error writing to the client.
 */
static int refuse_line(proxy *p, const json_t *id, int code, const char *why, const char *line, size_t len)
{
	json_t *evs[2] = { NULL, NULL }, *msg;
	char inv[48];
	int error;

	snprintf(inv, sizeof(inv), "mcp-refused:%lu", ++p->refused);
	evs[0] = ev_new(p, "tool.intent", inv);
	evs[1] = ev_new(p, "tool.completed", inv);
	if (!evs[0] || !evs[1] || json_object_set_new(evs[0], "tool", json_string(DOCKET_TOOL_MCP)) < 0 ||
	    json_object_set_new(evs[0], "args", json_pack("{ss ss s{} so}", "server", p->opts->name, "tool", "",
							  "arguments", "line", line_excerpt(line, len))) < 0 ||
	    json_object_set_new(evs[1], "status", json_string("denied")) < 0 ||
	    json_object_set_new(evs[1], "error", json_string(why)) < 0) {
		json_decref(evs[0]);
		json_decref(evs[1]);
		warn("cannot record a refused line");
	} else if (append(p, evs, 2) < 0) {
		warn("cannot record a refused line");
	}
	msg = json_pack("{ss sO s{si ss s{ss}}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code",
			code, "message", why, "data", "kind", "bad_request");
	if (!msg)
		return docket_error_set_oom();
	error = write_json_line(p->to_client, msg);
	json_decref(msg);
	return error;
}

int docket_mcp_proxy_from_client(docket_mcp_proxy *p, const char *line, size_t len)
{
	json_t *msg = NULL;
	const char *method;
	docket_buf key = DOCKET_BUF_INIT;
	held_call *c;
	const json_t *id;
	int error;

	if (docket_blank_line(line, len))
		return 0;
	if (docket_json_parse(&msg, line, len) < 0) {
		char why[300];

		snprintf(why, sizeof(why), "docket mcp-proxy: not forwarded: the line is not JSON it can check (%.200s)",
			 docket_error_last()->message);
		docket_error_clear();
		return refuse_line(p, NULL, -32700, why, line, len);
	}
	if (!json_is_object(msg)) {
		error = refuse_line(p, NULL, -32600,
				    json_is_array(msg) ? "docket mcp-proxy: not forwarded: JSON-RPC batches are not accepted"
						       : "docket mcp-proxy: not forwarded: a message is a JSON object",
				    line, len);
		json_decref(msg);
		return error;
	}
	method = json_string_value(json_object_get(msg, "method"));
	id = json_object_get(msg, "id");
	if (id && !json_is_null(id) && !usable_id(id)) {
		error = refuse_line(p, NULL, -32600, "docket mcp-proxy: not forwarded: an id is a string or an integer",
				    line, len);
		json_decref(msg);
		return error;
	}
	if (method && strcmp(method, "tools/call") == 0 &&
	    (!usable_id(id) || !json_is_string(json_object_get(json_object_get(msg, "params"), "name")))) {
		error = refuse_line(p, usable_id(id) ? id : NULL, usable_id(id) ? -32602 : -32600,
				    usable_id(id) ? "docket mcp-proxy: not forwarded: tools/call without a string name"
						  : "docket mcp-proxy: not forwarded: tools/call without an id",
				    line, len);
		json_decref(msg);
		return error;
	}
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
		ev = call_ev(p, c, "tool.completed");
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

/*
 * Calls still open when either side went away (EOF) or the proxy was told to
 * stop (SIGTERM, SIGINT): a question no one answered is settled `closed`, a
 * call the server never got ends denied, one it got ends indeterminate (it
 * may have run). Nothing stays awaiting approval or in doubt.
 */
void docket_mcp_proxy_finish(docket_mcp_proxy *p)
{
	char why[96];
	size_t i;

	if (relay_signal())
		snprintf(why, sizeof(why), "docket mcp-proxy was stopped (signal %d) before an answer", relay_signal());
	else
		snprintf(why, sizeof(why), "the connection closed before an answer");
	for (i = 0; i < p->ncalls; i++) {
		held_call *c = &p->calls[i];
		json_t *evs[2] = { NULL, NULL };
		size_t n = 0;

		if (c->elicit_key) {
			evs[n] = call_ev(p, c, "approval.settled");
			if (evs[n] && (json_object_set_new(evs[n], "request", json_string("r1")) < 0 ||
				       json_object_set_new(evs[n], "result", json_string("closed")) < 0 ||
				       json_object_set_new(evs[n], "reason", json_string(why)) < 0)) {
				json_decref(evs[n]);
				evs[n] = NULL;
			}
			n++;
		}
		evs[n] = call_ev(p, c, "tool.completed");
		if (evs[n] && (json_object_set_new(evs[n], "status", json_string(c->dispatched ? "indeterminate"
											       : "denied")) < 0 ||
			       json_object_set_new(evs[n], "error", json_string(why)) < 0)) {
			json_decref(evs[n]);
			evs[n] = NULL;
		}
		if (append(p, evs, n + 1) < 0)
			warn("cannot record an open call");
	}
	while (p->ncalls)
		call_drop(p, &p->calls[0]);
	if (append1(p, ev_new(p, "session.closed", NULL)) < 0)
		warn("cannot close the session");
}

/*
 * The proxy's session: `open` (stolen) and, with a policy, the policy the
 * proxy enforces as its revision 1 (policy_doc_of, as `serve --policy` and
 * the hooks record theirs), in one append; the decisions of the calls that
 * stay in this session name it.
 */
static int open_session(proxy *p, json_t *open)
{
	json_t *evs[2] = { open, NULL }, *doc = NULL;
	int error;

	if (!p->opts->policy)
		return append(p, evs, 1);
	if ((error = policy_doc_of(&doc, p->opts->policy)) < 0) {
		json_decref(open);
		return error;
	}
	evs[1] = hook_revision_fill(ev_new(p, "policy.revised", NULL), 1, "docket", doc, "docket",
				    "the policy docket's MCP proxy enforces");
	json_decref(doc);
	if ((error = append(p, evs, 2)) == 0)
		p->revision = 1;
	return error;
}

int docket_mcp_proxy_new(docket_mcp_proxy **out, docket_ledger *ledger, const docket_mcp_proxy_options *opts,
			 int to_client, int to_server)
{
	proxy *p = docket_calloc(1, sizeof(*p));
	json_t *open;
	int error;

	*out = NULL;
	if (!p)
		return docket_error_set_oom();
	p->ledger = ledger;
	p->opts = opts;
	p->to_client = to_client;
	p->to_server = to_server;
	open = json_pack("{ss ss ss s{ss si} s{ss ss}}", "type", "session.opened", "session", opts->session,
			 "runtime", "mcp-proxy", "provenance", "file", "mcp-proxy", "line", 0, "labels",
			 "capture", "mcp-proxy", "mcp.server", opts->name);
	if ((error = open_session(p, open)) < 0) {
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
