/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codex_relay.c: Codex's app-server with docket in between (`docket
 * codex-relay`, docs/integrations.md). Measured against codex-cli 0.171.0
 * (`codex app-server generate-json-schema` and a live run, see
 * tests/realclient/codex_relay.sh): lines are JSON-RPC without the
 * "jsonrpc" field; a command or a patch that needs approval goes
 *
 *   server  item/started {item:{type:commandExecution|fileChange, id, ...}}     T0 tool.intent
 *   server  item/commandExecution/requestApproval {id: R, params:{itemId, ...,
 *           availableDecisions}}  (item/fileChange/requestApproval alike)      P  approval.requested
 *   client  {id: R, result:{decision}}                                          approval.settled
 *                                          (+ T1 tool.dispatched on an accept: the server runs
 *                                           the call only once it has this line)
 *   server  serverRequest/resolved {requestId: R}   (settled aborted if the
 *                                                    client never answered)
 *   server  item/completed {item:{..., status completed|failed|declined}}       T2 tool.completed
 *
 * and a call that needs no approval has no P and its T1 is inferred at T2
 * (the stream does not mark the dispatch moment; the provenance says so).
 * MCP tool calls (item type mcpToolCall) are recorded the same way. The
 * session is the thread id, as the hooks and the rollout importer name it;
 * the invocation is the item id, which is the model's call id.
 *
 * Every line is passed on unchanged after what it means is durable; a line
 * docket cannot parse or record still passes (the error goes to stderr):
 * the relay records, it never decides.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "docket/import.h"
#include "integrations/codex_relay.h"
#include "integrations_internal.h"
#include "policy/policy.h"  /* shell_shlex_split: the command string is Codex's shlex join */
#include "stdio_relay.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/tool.h"

#define PROV "codex-relay"

typedef struct relay_item {
	char *thread, *id;
	char *request;      /* the open approval's JSON-RPC id (compact JSON), or NULL */
	int answered;       /* the client answered a request for it */
	int dispatched;
} relay_item;

struct docket_codex_relay {
	docket_ledger *ledger;
	int to_client, to_server;
	relay_item *items;
	size_t nitems, capitems;
	char **threads;     /* sessions known to be in the ledger */
	size_t nthreads, capthreads;
};


static int set_str(json_t *o, const char *k, const char *v)
{
	if (!o)
		return docket_error_set_oom();
	if (!v || !*v)
		return 0;
	return json_object_set_new(o, k, json_string(v)) < 0 ? docket_error_set_oom() : 0;
}

/* A recording error: reported, never fatal (the line passes anyway). */
static int warned(int error, const char *what)
{
	if (error == DOCKET_ENOMEM)
		return error;
	if (error < 0) {
		fprintf(stderr, "docket codex-relay: %s: %s\n", what, docket_error_last()->message);
		docket_error_clear();
	}
	return 0;
}

static int grow(void **ptr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *np;

	if (n < *cap)
		return 0;
	if (!(np = docket_realloc(*ptr, ncap * elem)))
		return docket_error_set_oom();
	*ptr = np;
	*cap = ncap;
	return 0;
}

/* ---- sessions (threads) ---- */

static int known_thread(const docket_codex_relay *r, const char *thread)
{
	size_t i;

	for (i = 0; i < r->nthreads; i++)
		if (strcmp(r->threads[i], thread) == 0)
			return 1;
	return 0;
}

/* The thread's session, opened on first sight (thread/started, or any item
 * of a thread started before the relay). */
static int ensure_thread(docket_codex_relay *r, const char *thread, const json_t *info)
{
	const json_t *env = json_array_get(json_object_get(info, "environments"), 0);
	const char *cwd = docket_json_str_nonempty(info, "cwd") ? docket_json_str_nonempty(info, "cwd") : docket_json_str_nonempty(env, "cwd");
	json_t *labels;
	int error;

	if (known_thread(r, thread))
		return 0;
	if ((error = grow((void **)&r->threads, &r->capthreads, r->nthreads, sizeof(char *))) < 0)
		return error;
	if (!(r->threads[r->nthreads] = docket_strdup(thread)))
		return docket_error_set_oom();
	r->nthreads++;
	labels = json_pack("{ss}", "capture", PROV);
	if (labels && (set_str(labels, "transcript", docket_json_str_nonempty(info, "path")) < 0 ||
		       set_str(labels, "model", docket_json_str_nonempty(info, "model")) < 0)) {
		json_decref(labels);
		labels = NULL;
	}
	return warned(hook_open_session(r->ledger, thread, "codex", PROV, cwd, NULL, labels),
		      "cannot open the session");
}

/* ---- items ---- */

static relay_item *item_find(docket_codex_relay *r, const char *thread, const char *id)
{
	size_t i;

	for (i = 0; i < r->nitems; i++)
		if (strcmp(r->items[i].id, id) == 0 && (!thread || strcmp(r->items[i].thread, thread) == 0))
			return &r->items[i];
	return NULL;
}

static relay_item *item_by_request(docket_codex_relay *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->nitems; i++)
		if (r->items[i].request && strcmp(r->items[i].request, key) == 0)
			return &r->items[i];
	return NULL;
}

static void item_drop(docket_codex_relay *r, relay_item *it)
{
	docket_free(it->thread);
	docket_free(it->id);
	docket_free(it->request);
	*it = r->items[--r->nitems];
}

/* What a thread item calls: the canonical tool and args the importer and
 * the hooks record for the same call; tool NULL for items that are no call. */
static int shell_args(const char **tool, json_t **args, const char *command, const char *cwd)
{
	shell_split s;
	json_t *input = NULL, *argv = NULL;
	const char *flag = NULL, *script = NULL, **words = NULL;
	size_t i;
	int error = 0;

	shell_split_init(&s);
	if (shell_shlex_split(&s, command) == 0 && s.nwords > 0 &&
	    (words = docket_calloc(s.nwords, sizeof(*words)))) {
		for (i = 0; i < s.nwords; i++)
			words[i] = s.text.ptr + s.word_off[i];
		script = shell_script_of(words, s.nwords, &flag);
	}
	if (script) {  /* [bash -lc SCRIPT] as Codex runs it: the script, as exec_command */
		input = json_pack("{ss sb}", "cmd", script, "login", strcmp(flag, "-lc") == 0);
	} else if (words && (argv = json_array())) {
		for (i = 0; i < s.nwords && error == 0; i++)
			if (json_array_append_new(argv, json_string(words[i])) < 0)
				error = docket_error_set_oom();
		input = error == 0 ? json_pack("{sO}", "command", argv) : NULL;
	} else {       /* not a shlex join: the string as one script */
		input = json_pack("{ss}", "cmd", command);
	}
	if (!input)
		error = docket_error_set_oom();
	if (error == 0)
		error = docket_import_map_tool(tool, args, DOCKET_IMPORT_CODEX,
					       json_object_get(input, "cmd") ? "exec_command" : "shell", input, cwd);
	json_decref(input);
	json_decref(argv);
	docket_free(words);
	shell_split_dispose(&s);
	return error;
}

static int patch_args(json_t **args, const json_t *changes)
{
	static const char *const ops[] = { "add", "delete", "update" };
	json_t *list = json_array();
	size_t i, k;

	if (!list || !(*args = json_pack("{so}", "changes", list)))
		return docket_error_set_oom();
	for (i = 0; i < json_array_size(changes); i++) {
		const json_t *c = json_array_get(changes, i), *kind = json_object_get(c, "kind");
		const char *type = docket_json_str_nonempty(kind, "type"), *to = docket_json_str_nonempty(kind, "move_path"), *op = NULL;
		json_t *o;

		for (k = 0; type && k < sizeof(ops) / sizeof(ops[0]); k++)
			if (strcmp(type, ops[k]) == 0)
				op = to ? "move" : ops[k];
		if (!docket_json_str_nonempty(c, "path") || !op)
			continue;
		if (!(o = json_pack("{ss ss}", "path", docket_json_str_nonempty(c, "path"), "op", op)) || set_str(o, "to", to) < 0 ||
		    json_array_append_new(list, o) < 0)
			return docket_error_set_oom();
	}
	return 0;
}

static int item_call(const char **tool, json_t **args, const json_t *item)
{
	const char *type = docket_json_str_nonempty(item, "type");
	const json_t *a;

	*tool = NULL;
	*args = NULL;
	if (!type)
		return 0;
	if (strcmp(type, "commandExecution") == 0 && docket_json_str_nonempty(item, "command"))
		return shell_args(tool, args, docket_json_str_nonempty(item, "command"), docket_json_str_nonempty(item, "cwd"));
	if (strcmp(type, "fileChange") == 0) {
		*tool = DOCKET_TOOL_APPLY_PATCH;
		return patch_args(args, json_object_get(item, "changes"));
	}
	if (strcmp(type, "mcpToolCall") == 0 && docket_json_str_nonempty(item, "server") && docket_json_str_nonempty(item, "tool")) {
		a = json_object_get(item, "arguments");
		*tool = DOCKET_TOOL_MCP;
		*args = json_pack("{ss ss sO}", "server", docket_json_str_nonempty(item, "server"), "tool", docket_json_str_nonempty(item, "tool"),
				  "arguments", a ? (json_t *)a : json_null());
		return *args ? 0 : docket_error_set_oom();
	}
	return 0;
}

static json_t *ev_new(const relay_item *it, const char *type, const char *prov)
{
	return hook_event_new(type, it->thread, prov ? prov : PROV, it->id);
}

/* T0 for `item` of (thread, turn), on first sight; *out the item (NULL: not a call). */
static int item_open(docket_codex_relay *r, relay_item **out, const char *thread, const char *turn,
		     const json_t *item)
{
	const char *id = docket_json_str_nonempty(item, "id"), *tool;
	json_t *args = NULL, *ev;
	relay_item *it;
	int error;

	*out = NULL;
	if (!id || !thread)
		return 0;
	if ((*out = item_find(r, thread, id)))
		return 0;
	if ((error = item_call(&tool, &args, item)) < 0 || !tool)
		return warned(error, "cannot map the call");
	if ((error = ensure_thread(r, thread, NULL)) < 0 ||
	    (error = grow((void **)&r->items, &r->capitems, r->nitems, sizeof(*r->items))) < 0) {
		json_decref(args);
		return error;
	}
	it = &r->items[r->nitems];
	memset(it, 0, sizeof(*it));
	if (!(it->thread = docket_strdup(thread)) || !(it->id = docket_strdup(id))) {
		docket_free(it->thread);
		json_decref(args);
		return docket_error_set_oom();
	}
	r->nitems++;
	*out = it;
	ev = ev_new(it, "tool.intent", NULL);
	if (set_str(ev, "tool", tool) < 0 || set_str(ev, "turn", turn) < 0 ||
	    json_object_set_new(ev, "args", args) < 0) {
		json_decref(ev);
		return docket_error_set_oom();
	}
	return warned(hook_append(r->ledger, &ev, 1), "cannot record the call");
}

/* ---- approvals ---- */

/* "prompt (offered: accept, cancel)": what the user was shown and could answer. */
static int prompt_text(docket_buf *b, const json_t *params)
{
	const json_t *offered = json_object_get(params, "availableDecisions");
	const char *what = docket_json_str_nonempty(params, "reason") ? docket_json_str_nonempty(params, "reason") : docket_json_str_nonempty(params, "command");
	size_t i;
	int error = docket_buf_puts(b, what ? what : "approval requested");

	for (i = 0; i < json_array_size(offered) && error == 0; i++) {
		const json_t *d = json_array_get(offered, i);
		const char *name = json_is_string(d) ? json_string_value(d) : json_object_iter_key(
			json_object_iter((json_t *)d));

		error = docket_buf_printf(b, "%s%s", i ? ", " : " (offered: ", name ? name : "?");
	}
	if (error == 0 && i)
		error = docket_buf_putc(b, ')');
	return error;
}

static int on_request_approval(docket_codex_relay *r, const json_t *msg, const char *key)
{
	const json_t *params = json_object_get(msg, "params");
	const char *method = docket_json_str_nonempty(msg, "method"), *thread = docket_json_str_nonempty(params, "threadId");
	docket_buf prompt = DOCKET_BUF_INIT;
	relay_item *it = NULL;
	json_t *item, *ev;
	int error;

	/* an approval for an item not seen started: its call from the request */
	item = json_pack("{ss ss}", "type", strstr(method, "fileChange") ? "fileChange" : "commandExecution",
			 "id", docket_json_str_nonempty(params, "itemId") ? docket_json_str_nonempty(params, "itemId") : "");
	if (!item || set_str(item, "command", docket_json_str_nonempty(params, "command")) < 0 ||
	    set_str(item, "cwd", docket_json_str_nonempty(params, "cwd")) < 0) {
		json_decref(item);
		return docket_error_set_oom();
	}
	error = item_open(r, &it, thread, docket_json_str_nonempty(params, "turnId"), item);
	json_decref(item);
	if (error < 0 || !it)
		return error;
	docket_free(it->request);
	if (!(it->request = docket_strdup(key)) || (error = prompt_text(&prompt, params)) < 0) {
		docket_buf_dispose(&prompt);
		return docket_error_set_oom();
	}
	ev = ev_new(it, "approval.requested", NULL);
	if (set_str(ev, "request", key) < 0 || set_str(ev, "reviewer", "user") < 0 ||
	    set_str(ev, "prompt", prompt.ptr) < 0) {
		json_decref(ev);
		ev = NULL;
	}
	docket_buf_dispose(&prompt);
	return warned(hook_append(r->ledger, &ev, 1), "cannot record the approval request");
}

/* Codex's decision -> docket's approval result. */
static const char *decision_result(const json_t *decision)
{
	static const struct { const char *codex, *docket; } map[] = {
		{ "accept", "approved" },
		{ "acceptForSession", "approved_for_session" },
		{ "acceptWithExecpolicyAmendment", "approved_for_session" },  /* and similar commands after it */
		{ "decline", "denied" },
		{ "cancel", "aborted" },                                      /* the turn is interrupted too */
	};
	const char *name = json_is_string(decision) ? json_string_value(decision) : NULL;
	const json_t *net;
	size_t i;

	if (json_is_object(decision) && json_object_size(decision) == 1) {
		name = json_object_iter_key(json_object_iter((json_t *)decision));
		net = json_object_get(json_object_get(decision, "applyNetworkPolicyAmendment"),
				      "network_policy_amendment");
		if (net)
			return docket_json_str_nonempty(net, "action") && strcmp(docket_json_str_nonempty(net, "action"), "allow") == 0 ? "approved"
												 : "denied";
	}
	for (i = 0; name && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(name, map[i].codex) == 0)
			return map[i].docket;
	return NULL;
}

static json_t *settle_event(relay_item *it, const char *result, const char *actor, const char *reason)
{
	json_t *ev = ev_new(it, "approval.settled", NULL);

	if (set_str(ev, "request", it->request) < 0 || set_str(ev, "result", result) < 0 ||
	    set_str(ev, "actor", actor) < 0 || set_str(ev, "reason", reason) < 0) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

/* The client's answer to an approval request: the user's decision. */
static int on_answer(docket_codex_relay *r, relay_item *it, const json_t *msg)
{
	const json_t *decision = json_object_get(json_object_get(msg, "result"), "decision");
	const char *result = decision_result(decision);
	docket_buf reason = DOCKET_BUF_INIT;
	json_t *evs[2] = { NULL, NULL };
	const char *failure = docket_json_str_nonempty(json_object_get(msg, "error"), "message");
	size_t n = 1;
	int error;

	if (json_object_get(msg, "error"))
		error = docket_buf_printf(&reason, "the client answered with an error: %.300s",
					  failure ? failure : "no message");
	else if ((error = docket_buf_puts(&reason, "codex decision: ")) == 0)
		error = decision ? docket_json_dump(&reason, decision) : docket_buf_puts(&reason, "none");
	if (error < 0) {
		docket_buf_dispose(&reason);
		return error;
	}
	if (!result)  /* an error response, or a decision Codex does not know */
		result = "aborted";
	evs[0] = settle_event(it, result, "user", reason.ptr);
	docket_buf_dispose(&reason);
	if (strncmp(result, "approved", 8) == 0) {
		/* T1: the server runs the call once it reads this answer, after this commit */
		evs[n++] = ev_new(it, "tool.dispatched", PROV " (dispatched on approval)");
		it->dispatched = 1;
	}
	docket_free(it->request);
	it->request = NULL;
	it->answered = 1;
	return warned(hook_append(r->ledger, evs, n), "cannot record the decision");
}

/* serverRequest/resolved: a request the client never answered was withdrawn. */
static int on_resolved(docket_codex_relay *r, const json_t *params)
{
	docket_buf key = DOCKET_BUF_INIT;
	relay_item *it = NULL;
	json_t *ev;
	int error = 0;

	if (json_object_get(params, "requestId") &&
	    (error = docket_json_dump(&key, json_object_get(params, "requestId"))) == 0)
		it = item_by_request(r, key.ptr);
	docket_buf_dispose(&key);
	if (error < 0 || !it)
		return error;
	ev = settle_event(it, "aborted", "codex", "resolved by Codex without an answer from the client");
	docket_free(it->request);
	it->request = NULL;
	return warned(hook_append(r->ledger, &ev, 1), "cannot record the withdrawn request");
}

/* ---- outcomes ---- */

static int outcome_fields(json_t *ev, const json_t *item, const char *status)
{
	const json_t *code = json_object_get(item, "exitCode"), *dur = json_object_get(item, "durationMs");
	const json_t *res = json_object_get(item, "result");
	const char *out = docket_json_str_nonempty(item, "aggregatedOutput");
	docket_buf text = DOCKET_BUF_INIT;
	int error = set_str(ev, "status", status);

	if (error == 0 && json_is_integer(code))
		error = json_object_set(ev, "exit_code", (json_t *)code) < 0 ? docket_error_set_oom() : 0;
	if (error == 0 && json_is_integer(dur) && json_integer_value(dur) >= 0)
		error = json_object_set(ev, "duration_ms", (json_t *)dur) < 0 ? docket_error_set_oom() : 0;
	if (error == 0 && !out && json_is_object(res) && (error = mcp_result_text(&text, res)) == 0 && text.len)
		out = text.ptr;
	if (error == 0 && out && json_object_set_new(ev, "output", hook_bounded(out, strlen(out))) < 0)
		error = docket_error_set_oom();
	if (error == 0)
		error = set_str(ev, "error", docket_json_str_nonempty(json_object_get(item, "error"), "message"));
	docket_buf_dispose(&text);
	return error;
}

static int on_item_completed(docket_codex_relay *r, const json_t *params)
{
	static const struct { const char *codex, *docket; } map[] = {
		{ "completed", "ok" }, { "failed", "error" }, { "declined", "denied" },
	};
	const json_t *item = json_object_get(params, "item");
	const char *st = docket_json_str_nonempty(item, "status"), *status = NULL;
	json_t *evs[3] = { NULL, NULL, NULL };
	relay_item *it;
	size_t n = 0, i;
	int error;

	for (i = 0; st && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(st, map[i].codex) == 0)
			status = map[i].docket;
	if (!status)
		return 0;  /* not an end (inProgress), or no status docket knows */
	if ((error = item_open(r, &it, docket_json_str_nonempty(params, "threadId"), docket_json_str_nonempty(params, "turnId"), item)) < 0 || !it)
		return error;
	if (it->request)
		evs[n++] = settle_event(it, "aborted", "codex", "the item ended before an answer");
	if (strcmp(status, "denied") != 0 && !it->dispatched)
		evs[n++] = ev_new(it, "tool.dispatched", PROV " (dispatch inferred)");
	evs[n] = ev_new(it, "tool.completed", NULL);
	if ((error = outcome_fields(evs[n], item, status)) == 0 && strcmp(status, "denied") == 0)
		error = set_str(evs[n], "error", it->answered ? "declined by the user" : "declined by Codex");
	n++;
	item_drop(r, it);
	if (error < 0) {
		for (i = 0; i < n; i++)
			json_decref(evs[i]);
		return error;
	}
	return warned(hook_append(r->ledger, evs, n), "cannot record the outcome");
}

/* ---- lines ---- */

static int parse_line(json_t **msg, const char *line, size_t len)
{
	*msg = NULL;
	if (docket_json_parse(msg, line, len) < 0 || !json_is_object(*msg)) {
		docket_error_clear();
		json_decref(*msg);
		*msg = NULL;
	}
	return 0;
}

static int from_server_msg(docket_codex_relay *r, const json_t *msg)
{
	const char *method = docket_json_str_nonempty(msg, "method");
	const json_t *params = json_object_get(msg, "params"), *id = json_object_get(msg, "id");
	const json_t *thread = json_object_get(params, "thread");
	docket_buf key = DOCKET_BUF_INIT;
	relay_item *it;
	int error = 0;

	if (!method)
		return 0;
	if (id && (strcmp(method, "item/commandExecution/requestApproval") == 0 ||
		   strcmp(method, "item/fileChange/requestApproval") == 0)) {
		if ((error = docket_json_dump(&key, id)) == 0)
			error = on_request_approval(r, msg, key.ptr);
	} else if (id) {
		/* another request to the client (user input, elicitation): not a call */
	} else if (strcmp(method, "thread/started") == 0 && docket_json_str_nonempty(thread, "id")) {
		error = ensure_thread(r, docket_json_str_nonempty(thread, "id"), thread);
	} else if (strcmp(method, "item/started") == 0) {
		error = item_open(r, &it, docket_json_str_nonempty(params, "threadId"), docket_json_str_nonempty(params, "turnId"),
				  json_object_get(params, "item"));
	} else if (strcmp(method, "item/completed") == 0) {
		error = on_item_completed(r, params);
	} else if (strcmp(method, "serverRequest/resolved") == 0) {
		error = on_resolved(r, params);
	}
	docket_buf_dispose(&key);
	return error;
}

int docket_codex_relay_from_server(docket_codex_relay *r, const char *line, size_t len)
{
	json_t *msg;
	int error = parse_line(&msg, line, len);

	if (error == 0 && msg)
		error = from_server_msg(r, msg);
	json_decref(msg);
	/* T0..T2 are durable before the client sees the line */
	return error < 0 ? error : relay_write_all(r->to_client, line, len);
}

int docket_codex_relay_from_client(docket_codex_relay *r, const char *line, size_t len)
{
	docket_buf key = DOCKET_BUF_INIT;
	relay_item *it;
	json_t *msg;
	int error = parse_line(&msg, line, len);

	if (error == 0 && msg && !json_object_get(msg, "method") && json_object_get(msg, "id") &&
	    (json_object_get(msg, "result") || json_object_get(msg, "error")) &&
	    (error = docket_json_dump(&key, json_object_get(msg, "id"))) == 0 &&
	    (it = item_by_request(r, key.ptr)))
		error = on_answer(r, it, msg);
	docket_buf_dispose(&key);
	json_decref(msg);
	/* the decision (and T1) are durable before the server sees the line */
	return error < 0 ? error : relay_write_all(r->to_server, line, len);
}

/* ---- the connection ---- */

int docket_codex_relay_new(docket_codex_relay **out, docket_ledger *ledger, int to_client, int to_server)
{
	docket_codex_relay *r = docket_calloc(1, sizeof(*r));

	*out = r;
	if (!r)
		return docket_error_set_oom();
	r->ledger = ledger;
	r->to_client = to_client;
	r->to_server = to_server;
	return 0;
}

void docket_codex_relay_finish(docket_codex_relay *r)
{
	const char *why = "the app-server ended before an outcome";

	while (r->nitems) {
		relay_item *it = &r->items[r->nitems - 1];
		json_t *evs[2] = { NULL, NULL };
		size_t n = 0;

		if (it->request)
			evs[n++] = settle_event(it, "closed", "codex", why);
		evs[n] = ev_new(it, "tool.completed", NULL);
		if (set_str(evs[n], "status", it->dispatched ? "indeterminate" : "denied") < 0 ||
		    set_str(evs[n], "error", why) < 0) {
			json_decref(evs[n]);
			evs[n] = NULL;
		}
		(void)warned(hook_append(r->ledger, evs, n + 1), "cannot record an open call");
		item_drop(r, it);
	}
}

void docket_codex_relay_free(docket_codex_relay *r)
{
	size_t i;

	if (!r)
		return;
	while (r->nitems)
		item_drop(r, &r->items[0]);
	for (i = 0; i < r->nthreads; i++)
		docket_free(r->threads[i]);
	docket_free(r->threads);
	docket_free(r->items);
	docket_free(r);
}

static int relay_from_client(void *ctx, const char *line, size_t len)
{
	return docket_codex_relay_from_client(ctx, line, len);
}

static int relay_from_server(void *ctx, const char *line, size_t len)
{
	return docket_codex_relay_from_server(ctx, line, len);
}

int docket_codex_relay_run(docket_ledger *ledger, char *const *argv, int *server_status)
{
	docket_codex_relay *r = NULL;
	relay_ends ends;
	int error;

	if ((error = docket_codex_relay_new(&r, ledger, STDOUT_FILENO, -1)) < 0)
		return error;
	if ((error = relay_spawn(&ends, argv, "codex-relay")) < 0) {
		docket_codex_relay_free(r);
		return error;
	}
	r->to_server = ends.to_server;
	error = relay_run(&ends, r, relay_from_client, relay_from_server, server_status);
	docket_codex_relay_finish(r);
	docket_codex_relay_free(r);
	return error;
}
