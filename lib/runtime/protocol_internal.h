/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol_internal.h: what the files of the runtime protocol share (private
 * to lib/runtime): the context, the method table's entries and the helpers
 * each file offers the others. protocol.c prepares the methods,
 * protocol_text.c the text request path, protocol_trust.c the trust
 * checks, protocol_batch.c executes batches, protocol_reply.c encodes
 * replies.
 */
#ifndef DOCKET_RUNTIME_PROTOCOL_INTERNAL_H
#define DOCKET_RUNTIME_PROTOCOL_INTERNAL_H

#include "protocol.h"

#include "authority.h"
#include "docket/recover.h"
#include "ledger/ledger_sys.h"
#include "util/buf.h"
#include "util/json.h"

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

struct method {
	const char *name;
	int kind;
	const char *event_type;  /* the event the params describe, or NULL */
	int barrier;
};

/* protocol.c */
extern const char *const intent_options[];
const struct method *method_find(const char *name);
int refuse(proto_call *call, int code, const char *fmt, ...) DOCKET_PRINTF(3, 4);
int refuse_current(proto_call *call, int code);
int refuse_oom(proto_call *call);
int refuse_forbidden(proto_call *call, const char *fmt, ...) DOCKET_PRINTF(2, 3);
int reserve_event(proto_call *call);
int push_event(proto_call *call, int error, docket_event *ev);
int add_event(proto_call *call, const char *type, json_t *obj);
json_t *params_event(const json_t *params, const char *const *options);
docket_jv member(const docket_jv_ops *ops, docket_jv obj, const char *key);
docket_jv param(const proto_call *call, const char *key);
const char *jv_str(const proto_call *call, docket_jv v);
const char *param_str(const proto_call *call, const char *key);
int recorded_decision(proto_ctx *ctx, json_t *ev);
int dispatch_if_allowed(proto_ctx *ctx, proto_call *call);
int prepare(proto_ctx *ctx, proto_call *call);

/* protocol_text.c */
int add_event_text(proto_ctx *ctx, proto_call *call, const docket_buf *text);
int event_text_begin(proto_ctx *ctx, const char *type);
int event_text_key(proto_ctx *ctx, const char *key);
int event_text_end(proto_ctx *ctx, const proto_call *call, const char *type, int names_epoch);
int prepare_text(proto_ctx *ctx, proto_call *call, const struct method *m);
int text_to_tree(proto_call *call);

/* protocol_trust.c */
void conn_lineage(const proto_conn *conn, state_lineage *out);
int check_role(proto_ctx *ctx, proto_call *call, const struct method *m, sess_state *out, int *have);
int check_client(proto_call *call, const struct method *m);
int own_context_init(proto_ctx *ctx);
int identify(proto_ctx *ctx, proto_call *call, const struct method *m);

#endif
