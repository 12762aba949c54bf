/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_rpc.c: `docket serve` requests are outside input. Each input is one
 * JSON-RPC line; its method and params go through the protocol (prepare,
 * authority decisions, recovery plans, group commit, reply) against a
 * scratch ledger that has a runtime, a session under a docket policy, and
 * a few calls in every state. Nothing may crash or leak, every refusal
 * must be a proper reply, and the ledger must stay valid. tool.intent and
 * tool.complete go through the server's text path (simdjson's tape of the
 * line, protocol.h) for inputs of odd length, the jansson tree otherwise.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/protocol.h"
#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static docket_ledger *ledger;
static proto_ctx *ctx;
static proto_conn conn = { .epoch = 0, .trusted = 0, .peer_pid = 0, .peer_uid = -1 };
static char dir[256];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	proto_ctx_free(ctx);
	docket_ledger_free(ledger);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void call(const char *method, const char *params)
{
	proto_call c;
	json_t *reply;

	memset(&c, 0, sizeof(c));
	c.method = method;
	c.params = json_loads(params, 0, NULL);
	c.conn = &conn;
	c.id = json_integer(1);
	if (!c.params || proto_execute(ctx, &c, 1) != 0)
		abort();
	reply = proto_reply(ctx, &c);
	json_decref(reply);
	json_decref(c.id);
	json_decref(c.params);
	proto_call_dispose(&c);
}

static void seed(void)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	proto_options po;
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/docket-fuzz-rpc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	opts.flags = DOCKET_OPEN_CREATE;
	memset(&po, 0, sizeof(po));
	if (docket_ledger_open(&ledger, dir, &opts) != 0 || proto_ctx_new(&ctx, ledger, &po) != 0)
		abort();
	atexit(cleanup);
	call("runtime.start", "{\"runtime\":\"fuzz/1\"}");
	call("session.open", "{\"session\":\"s\",\"cwd\":\"/w\"}");
	call("policy.set", "{\"session\":\"s\",\"format\":\"docket\",\"policy\":{\"version\":1,"
	     "\"commands\":[{\"pattern\":[\"git\"],\"decision\":\"allow\"},{\"pattern\":[\"rm\"],\"decision\":\"ask\"}]}}");
	call("tool.intent", "{\"session\":\"s\",\"invocation\":\"a\",\"tool\":\"shell\",\"args\":{\"command\":[\"git\",\"log\"]},"
	     "\"recovery\":\"replay_safe\",\"dispatch_if_allowed\":true}");
	call("tool.intent", "{\"session\":\"s\",\"invocation\":\"b\",\"tool\":\"shell\",\"args\":{\"command\":[\"rm\",\"x\"]}}");
	call("approval.request", "{\"session\":\"s\",\"invocation\":\"b\",\"request\":\"r\"}");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *req = NULL, *reply;
	proto_call c;
	int text;

	if (!ledger)
		seed();
	if (docket_json_parse(&req, (const char *)data, size) != 0)
		return 0;
	memset(&c, 0, sizeof(c));
	c.method = json_string_value(json_object_get(req, "method"));
	c.params = json_object_get(req, "params");
	c.id = json_object_get(req, "id");
	c.conn = &conn;
	/* odd sizes: the server's text path for its methods (the tree path
	 * gets what it hands over); even sizes: the tree path */
	text = (size & 1) && c.method && proto_text_method(c.method) && json_is_object(c.params) &&
	       !memchr(data, '\0', size);
	if (text) {
		const char *session = json_string_value(json_object_get(c.params, "session"));

		if (proto_call_set_line(&c, proto_text_method(c.method), (const char *)data, size, session,
					session ? strlen(session) : 0) < 0)
			abort();
		c.params = NULL;
	}
	if (c.method && (text || json_is_object(c.params))) {
		if (proto_execute(ctx, &c, 1) == 0) {
			reply = proto_reply(ctx, &c);
			/* a call that has an id always gets a reply */
			if (c.id && !reply)
				abort();
			json_decref(reply);
		}
		proto_call_dispose(&c);
	}
	json_decref(req);
	return 0;
}
