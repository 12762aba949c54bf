/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol.h: the runtime protocol (DESIGN §4 `docket serve` methods), one
 * implementation shared by `docket serve` (JSON-RPC 2.0) and the C API.
 *
 * A batch of calls is executed as: prepare each (validate params, decide in
 * authority mode, build its events), append all of them with group commit
 * (each call atomic and isolated, one durable commit for the batch), then
 * build each reply. A reply exists only after its commit is durable.
 */
#ifndef DOCKET_RUNTIME_PROTOCOL_H
#define DOCKET_RUNTIME_PROTOCOL_H

#include <jansson.h>

#include "docket/ledger.h"
#include "ledger/ledger_sys.h"
#include "util/jv.h"

#define PROTO_MAX_EVENTS 256   /* events one call may append */

typedef struct proto_options {
	/* The operator's trusted policy (serve --policy), or NULL. */
	const char *operator_format;     /* "docket", "codex", "claude" */
	const json_t *operator_policy;
	/* Clients may replace (widen) a session's policy. */
	int allow_client_policy;
	/* Under an operator policy: the directories a client's session may
	 * name as cwd, workspace_roots and env TMPDIR ("A:B", NULL: none). */
	const char *workspaces;
} proto_options;

/* Roles (docs/protocol.md): what a connection may do. */
enum proto_role {
	PROTO_ROLE_OPERATOR = 0,  /* everything (stdio, the C API, the server's own uid) */
	PROTO_ROLE_APPROVER,      /* a runtime's rights, plus settling approvals and recover.apply */
	PROTO_ROLE_RUNTIME        /* its own sessions only; no approvals, no recover.apply */
};

typedef struct proto_ctx proto_ctx;

int proto_ctx_new(proto_ctx **out, docket_ledger *l, const proto_options *opts);
void proto_ctx_free(proto_ctx *ctx);

/* The executor callback recover.apply uses for reconcile-mode calls. */
struct json_t;
void proto_set_reconcile_cb(proto_ctx *ctx,
			    int (*cb)(void *, const char *, const char *, const char *, json_t **),
			    void *cb_ctx);

/* Per connection (or per C API handle). */
typedef struct proto_conn {
	uint64_t epoch;    /* from this connection's runtime.start (or attach); 0: none yet */
	int trusted;       /* 1: may replace policies (in-process API) */
	long long peer_pid; /* the peer's pid from SO_PEERCRED; 0: unknown (stdio, in-process) */
	long long peer_uid; /* the peer's uid from SO_PEERCRED; -1: unknown */
	int role;          /* enum proto_role */
	char runtime[257]; /* the runtime name of its runtime.start: with peer_uid, its lineage,
			      which owns the sessions it opens (docs/write-path.md §2) */
} proto_conn;

/* One call of a batch. Fill id/method/params; the rest is the protocol's. */
typedef struct proto_call {
	json_t *id;                      /* JSON-RPC id; NULL: a notification */
	const char *method;
	json_t *params;
	proto_conn *conn;

	int kind;
	int barrier;                     /* the batch must end after this call */
	int error;                       /* refused: code and message */
	docket_error err;
	docket_event **events;           /* n events (cap allocated) */
	docket_append_result *results;
	size_t n, cap;
	json_t *decision;                /* the decision docket recorded (intent) */
	json_t *result;                  /* a result that needs no append */
	int refused_outcome;             /* dispatch refused by revalidation */
	int forbidden;                   /* refused by the role or ownership check (data.kind "forbidden") */
	json_t *reply;                   /* server: answered before execution (parse error) */

	/*
	 * The text path (the server's tool.intent and tool.complete): params is
	 * NULL and `line` (owned, freed by proto_call_dispose) is the request,
	 * which simdjson reads again when the call is prepared; its events are
	 * built from the params' text without a jansson tree. Whatever that path
	 * does not take (authority mode, a re-sent intent, any refusal) is
	 * prepared again on jansson's tree of the line (`tree`), so replies and
	 * refusals are the tree path's. `session` (in the same block as `line`)
	 * is the params' session string, for the server's batching.
	 */
	char *line;
	size_t line_len;
	const char *session;
	json_t *tree;
	/* the params as prepare() reads them (either path) */
	const docket_jv_ops *pops;
	docket_jv pv;
} proto_call;

/*
 * The method table's name for `method` when the text path takes it
 * (tool.intent, tool.complete), else NULL.
 */
const char *proto_text_method(const char *method);

/*
 * Give `call` (zeroed but for conn) the request `line` for the text path:
 * `method` from proto_text_method, `session` the params' session string or
 * NULL. DOCKET_ENOMEM.
 */
int proto_call_set_line(proto_call *call, const char *method, const char *line, size_t len,
			const char *session, size_t session_len) DOCKET_MUST_USE;

/* Is this method a barrier (policy.set, runtime.start, recover.*)? */
int proto_method_is_barrier(const char *method);

/*
 * Execute calls[0..n) as one batch (at most one barrier, at the end); a
 * call whose `reply` is set (answered before execution) is left alone.
 * Every other call gets a reply from proto_reply(). Returns <0 only when
 * the commit itself failed; then every call carries that error.
 */
int proto_execute(proto_ctx *ctx, proto_call *calls, size_t n);

/*
 * proto_execute in two steps, for a server that commits one batch while it
 * prepares the next (app/serve: the writer thread). proto_batch_prepare
 * prepares calls[from..n) on the caller's thread (reading committed state
 * only; from 0 starts the batch, a later call adds to it; dispose the
 * batch even when it fails); proto_batch_commit appends and commits them and may run on
 * another thread, concurrently with proto_batch_prepare of another batch
 * on the same ctx (it touches only the ledger and its own batch). The
 * calls' replies are built (proto_reply_text) after the commit, on the
 * preparing thread. Returns as proto_execute.
 */
typedef struct proto_batch {
	proto_call *calls;
	size_t n;
	ledger_group *groups;
	size_t ngroups, cap;
	size_t *group_of;      /* call -> its group, SIZE_MAX: none */
	proto_call *rec;       /* a recover.apply: its plan's groups follow from rec_first */
	size_t rec_first;
} proto_batch;

int proto_batch_prepare(proto_ctx *ctx, proto_batch *b, proto_call *calls, size_t from, size_t n) DOCKET_MUST_USE;
int proto_batch_commit(proto_ctx *ctx, proto_batch *b);
void proto_batch_dispose(proto_batch *b);

/*
 * The JSON-RPC response of an executed call appended to `out` as one line
 * without its newline (nothing for a notification); a reply also binds the
 * connection (runtime.start, runtime.attach). 0, or DOCKET_ENOMEM with `out`
 * as it was.
 */
int proto_reply_text(proto_ctx *ctx, proto_call *call, docket_buf *out) DOCKET_MUST_USE;

/* The same reply as a JSON value (NULL for a notification or out of memory). */
json_t *proto_reply(proto_ctx *ctx, proto_call *call);

void proto_call_dispose(proto_call *call);

/* A JSON-RPC error response with docket's data.kind. */
json_t *proto_error_response(json_t *id, int code, const char *message, const docket_error *err);

/* JSON-RPC error codes. */
enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_DOCKET_ERROR = -32000
};

#endif
