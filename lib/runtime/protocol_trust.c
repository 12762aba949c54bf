/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protocol_trust.c: the trust checks of the runtime protocol.
 *
 * What a client may not say (check_client), which sessions a connection's
 * role and lineage may act on (check_role, check_owner), the context a
 * session's policy reads (check_context, own_context: serve's own process's,
 * never a client's), and what the kernel says about the peer that goes into
 * the record (identify). docs/write-path.md §2, docs/protocol.md.
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

/*
 * What a client may not say (the authorization model, docs/protocol.md):
 * docket's own fields (the time of a live append, the revalidation of a
 * dispatch, a re-decision on a request, a `superseded` settlement, a
 * decision labelled source "docket"), and an epoch other than the one its
 * connection was bound to by runtime.start. A connection that never called
 * runtime.start may not change anything: fencing is not opt-in.
 */
/* Is `path` (absolute, no `..`) inside one of the ':'-separated `roots`? */
static int path_inside(const char *path, const char *roots)
{
	size_t plen = strlen(path);

	if (path[0] != '/' || strstr(path, "/../") || (plen >= 3 && strcmp(path + plen - 3, "/..") == 0))
		return 0;
	for (const char *r = roots; r && *r;) {
		const char *end = strchr(r, ':');
		size_t len = end ? (size_t)(end - r) : strlen(r), n = len;

		while (n > 1 && r[n - 1] == '/')
			n--;
		if (n && strncmp(path, r, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n == 1 && r[0] == '/')))
			return 1;
		r += len + (end ? 1 : 0);
	}
	return 0;
}

/*
 * Under an operator policy, what a session's policy treats as writable
 * (cwd, workspace_roots, env TMPDIR) comes from the operator: a client may
 * name such paths only inside the operator's --workspace directories.
 */
static int check_context(proto_ctx *ctx, proto_call *call)
{
	const json_t *p = call->params, *roots = json_object_get(p, "workspace_roots"), *v;
	const char *cwd = json_string_value(json_object_get(p, "cwd"));
	const char *tmp = json_string_value(json_object_get(json_object_get(p, "env"), "TMPDIR"));
	size_t i;

	if (!ctx->operator_policy || call->conn->trusted)
		return 0;
	if (cwd && !path_inside(cwd, ctx->opts.workspaces))
		return refuse(call, DOCKET_EINVALID, "session.open: cwd %s is outside the operator's workspaces "
			      "(serve --workspace)", cwd);
	if (tmp && !path_inside(tmp, ctx->opts.workspaces))
		return refuse(call, DOCKET_EINVALID, "session.open: env TMPDIR %s is outside the operator's workspaces", tmp);
	json_array_foreach(roots, i, v) {
		if (!json_is_string(v) || !path_inside(json_string_value(v), ctx->opts.workspaces))
			return refuse(call, DOCKET_EINVALID, "session.open: workspace root %s is outside the operator's "
				      "workspaces (serve --workspace)", json_string_value(v) ? json_string_value(v) : "?");
	}
	return 0;
}

/* The lineage a connection writes as: its peer uid and its runtime's name. */
void conn_lineage(const proto_conn *conn, state_lineage *out)
{
	memset(out, 0, sizeof(*out));
	out->uid = conn->peer_uid < 0 || conn->peer_uid >= (long long)LINEAGE_UID_NONE ? LINEAGE_UID_NONE
											: (uint32_t)conn->peer_uid;
	snprintf(out->name, sizeof(out->name), "%s", conn->runtime);
}

/* "uid 1000", or "no uid" for a lineage without one. */
static const char *uid_text(char out[32], uint32_t uid)
{
	if (uid == LINEAGE_UID_NONE)
		snprintf(out, 32, "no uid");
	else
		snprintf(out, 32, "uid %lu", (unsigned long)uid);
	return out;
}

/*
 * Ownership (docs/write-path.md §2): a session belongs to the lineage that
 * opened it (peer uid and runtime name, never the name alone). A session no
 * runtime opened (record, import) has no owner: only the operator drives it.
 */
static int check_owner(proto_ctx *ctx, proto_call *call, const struct method *m, const char *session)
{
	state_lineage own, mine;
	char a[32], b[32];
	int error = ledger_session_owner(ctx->ledger, session, &own);

	if (error == DOCKET_ENOTFOUND)
		return refuse_forbidden(call, "%s: session \"%s\" has no runtime owner (it was opened without an "
					"epoch, by record or import); only an operator drives it", m->name, session);
	if (error < 0)
		return refuse_current(call, error);
	conn_lineage(call->conn, &mine);
	if (!state_lineage_same(&own, &mine))
		return refuse_forbidden(call, "%s: session \"%s\" belongs to runtime \"%s\" (%s), not to this "
					"connection's runtime \"%s\" (%s)", m->name, session, own.name,
					uid_text(a, own.uid), mine.name, uid_text(b, mine.uid));
	return 0;
}

/*
 * A session the ledger does not know yet: only one that an earlier call of
 * this batch opens, from a connection of the same lineage, is this
 * connection's (it is written before this call); any other is refused,
 * since the state machine does not know roles.
 */
static int opened_in_batch(proto_ctx *ctx, const proto_call *call, const char *session)
{
	state_lineage mine, theirs;

	conn_lineage(call->conn, &mine);
	for (size_t i = 0; ctx->batch && i < ctx->batch_i; i++) {
		const proto_call *c = &ctx->batch[i];
		const char *s = json_string_value(json_object_get(c->params, "session"));

		if (c->kind != M_SESSION_OPEN || c->error || c->reply || !s || strcmp(s, session) != 0 || !c->conn)
			continue;
		conn_lineage(c->conn, &theirs);
		if (state_lineage_same(&mine, &theirs))
			return 1;
	}
	return 0;
}

/* Does the role check the session's owner for this method? Operators act on
 * every session, approvers settle approvals on every session. */
static int owner_checked(const proto_conn *conn, const struct method *m)
{
	if (conn->role == PROTO_ROLE_RUNTIME)
		return 1;
	return conn->role == PROTO_ROLE_APPROVER && m->kind != M_APPROVAL_SETTLE;
}

/*
 * Roles and sessions: settling approvals and recover.apply need the
 * approver or operator role; a runtime (and an approver, but for settling)
 * acts only on the sessions its lineage opened; a runtime's recover.plan
 * needs its runtime.start (it sees its own sessions only); under an
 * operator policy no client drives a session that has no trusted policy
 * (opened by `record` or `import`).
 */
int check_role(proto_ctx *ctx, proto_call *call, const struct method *m, sess_state *out, int *have)
{
	const char *session = param_str(call, "session");
	const char *named = param_str(call, "runtime");
	proto_conn *conn = call->conn;
	int checked = owner_checked(conn, m);
	sess_state own, *ss = out ? out : &own; /* read in place: the state is large */

	if (have)
		*have = 0;
	if ((m->kind == M_APPROVAL_SETTLE || m->kind == M_RECOVER_APPLY) && conn->role == PROTO_ROLE_RUNTIME)
		return refuse_forbidden(call, "%s needs the approver or operator role; this connection "
					"(uid %lld) is a runtime (serve --approvers UIDS gives the role)", m->name,
					conn->peer_uid);
	if (m->kind == M_RECOVER_PLAN && conn->role == PROTO_ROLE_RUNTIME && !conn->epoch)
		return refuse(call, DOCKET_ESTALE, "recover.plan: this connection has no runtime; call "
			      "runtime.start first (a runtime sees the calls of its own sessions only)");
	if (!session)
		return 0;
	if (m->kind == M_SESSION_OPEN) {
		if (conn->role == PROTO_ROLE_RUNTIME && named && strcmp(named, conn->runtime) != 0)
			return refuse_forbidden(call, "session.open: runtime \"%s\" is not this connection's (\"%s\")",
						named, conn->runtime);
		return check_context(ctx, call);
	}
	if (!out && !checked && !(ctx->operator_policy && !conn->trusted))
		return 0; /* nothing below applies, and the caller needs no session */
	if (ledger_session_get(ctx->ledger, session, ss, NULL) < 0) {
		if (checked && !opened_in_batch(ctx, call, session))
			return refuse_forbidden(call, "%s: session \"%s\" was not opened by this connection's runtime",
						m->name, session);
		return 0; /* the state machine names what is missing */
	}
	if (out)
		*have = 1;
	if (checked && check_owner(ctx, call, m, session) < 0)
		return call->error;
	if (ctx->operator_policy && !conn->trusted && ss->policy_revision == 0)
		return refuse(call, DOCKET_EINVALID, "%s: session \"%s\" has no trusted policy (it was not opened "
			      "under serve --policy); serve does not drive it", m->name, session);
	return 0;
}

int check_client(proto_call *call, const struct method *m)
{
	docket_jv epoch = param(call, "epoch");
	const char *source = jv_str(call, member(call->pops, param(call, "decision"), "source"));
	const char *result = param_str(call, "result");
	uint64_t bound = call->conn ? call->conn->epoch : 0;

	/* recover.apply writes under the epochs of the lineages it settles */
	if (m->kind == M_RUNTIME_START || m->kind == M_RUNTIME_ATTACH || m->kind == M_RECOVER_PLAN ||
	    m->kind == M_RECOVER_APPLY)
		return 0;
	if (!bound)
		return refuse(call, DOCKET_ESTALE, "%s: this connection has no epoch; call runtime.start first "
			      "(every mutating connection is fenced)", m->name);
	if (epoch.p && (call->pops->type(epoch) != DOCKET_JV_INTEGER || (uint64_t)call->pops->integer(epoch) != bound))
		return refuse(call, DOCKET_ESTALE, "%s: epoch is the connection's (%llu), not the client's",
			      m->name, (unsigned long long)bound);
	if (param(call, "time").p)
		return refuse(call, DOCKET_EINVALID, "%s: \"time\" is docket's clock on live appends", m->name);
	if (m->kind == M_TOOL_DISPATCH &&
	    (param(call, "policy_revision").p || param(call, "verdict").p))
		return refuse(call, DOCKET_EINVALID, "tool.dispatch: docket revalidates the call itself "
			      "(policy_revision and verdict are not a client's to give)");
	if (m->kind == M_APPROVAL_REQUEST && param(call, "decision").p)
		return refuse(call, DOCKET_EINVALID, "approval.request: the decision is docket's");
	if (m->kind == M_APPROVAL_SETTLE && result && strcmp(result, "superseded") == 0)
		return refuse(call, DOCKET_EINVALID, "approval.settle: only docket settles superseded "
			      "(when a policy revision changes the verdict)");
	if (source && strcmp(source, "docket") == 0)
		return refuse(call, DOCKET_EINVALID, "%s: decisions with source \"docket\" are written by docket only",
			      m->name);
	if (m->kind == M_TOOL_INTENT &&
	    call_schema_check(m->name, param_str(call, "tool"), call->pops, param(call, "args")) < 0)
		return refuse_current(call, DOCKET_EINVALID);
	return 0;
}

/*
 * The context a session's policy reads about the machine (platform, HOME,
 * USER) is serve's own process's (issue 26): a client may repeat it, never
 * name another. NULL when the process has none (then a client's is refused).
 */
int own_context_init(proto_ctx *ctx)
{
	struct passwd *pw = getpwuid(geteuid());
	const char *home = getenv("HOME"), *user = getenv("USER");
	struct utsname u;

	ctx->own_platform = uname(&u) == 0 && strcmp(u.sysname, "Darwin") == 0 ? "macos" : "linux";
	if (!home && pw)
		home = pw->pw_dir;
	if (!user && pw)
		user = pw->pw_name;
	if ((home && !(ctx->own_home = docket_strdup(home))) || (user && !(ctx->own_user = docket_strdup(user))))
		return docket_error_set_oom();
	return 0;
}

/* One member of the context: the client's must be ours; ours goes in. */
static int own_member(proto_call *call, json_t *obj, const char *key, const char *where, const char *own)
{
	const json_t *v = json_object_get(obj, key);

	if (v && (!json_is_string(v) || !own || strcmp(json_string_value(v), own) != 0))
		return refuse_forbidden(call, "session.open: %s%s is not this server's (%s); serve records its own "
					"process's (docs/protocol.md, \"Context\")", where, key, own ? own : "unset");
	if (own && json_object_set_new(obj, key, json_string(own)) < 0)
		return refuse_oom(call);
	return 0;
}

static int own_context(proto_ctx *ctx, proto_call *call)
{
	json_t *env = json_object_get(call->params, "env");

	if (call->conn->trusted)
		return 0;
	if (!env) {
		if (!(env = json_object()) || json_object_set_new(call->params, "env", env) < 0)
			return refuse_oom(call);
	} else if (!json_is_object(env)) {
		return refuse(call, DOCKET_EINVALID, "session.open: env must be an object of strings");
	}
	if (own_member(call, call->params, "platform", "", ctx->own_platform) < 0 ||
	    own_member(call, env, "HOME", "env.", ctx->own_home) < 0 ||
	    own_member(call, env, "USER", "env.", ctx->own_user) < 0)
		return call->error;
	return 0;
}

/*
 * What the kernel says about the peer goes into the record: a runtime's
 * runtime.started carries its uid (its lineage; a client cannot name one),
 * its sessions name its runtime, and a settlement's actor carries the uid
 * of the connection that settled it (SO_PEERCRED), whatever the client says.
 */
int identify(proto_ctx *ctx, proto_call *call, const struct method *m)
{
	proto_conn *conn = call->conn;
	const char *actor = json_string_value(json_object_get(call->params, "actor"));
	char who[600];

	if (m->kind == M_RUNTIME_START) {
		if (json_object_get(call->params, "uid"))
			return refuse(call, DOCKET_EINVALID, "runtime.start: \"uid\" is the kernel's word "
				      "(SO_PEERCRED), not a client's");
		if (conn->peer_uid >= 0 && conn->peer_uid < (long long)LINEAGE_UID_NONE &&
		    json_object_set_new(call->params, "uid", json_integer((json_int_t)conn->peer_uid)) < 0)
			return refuse_oom(call);
		return 0;
	}
	if (m->kind == M_SESSION_OPEN) {
		if (conn->role == PROTO_ROLE_RUNTIME && !json_object_get(call->params, "runtime"))
			json_object_set_new(call->params, "runtime", json_string(conn->runtime));
		return own_context(ctx, call);
	}
	if (m->kind != M_APPROVAL_SETTLE || conn->peer_uid < 0)
		return 0;
	if (actor)
		snprintf(who, sizeof(who), "%s (uid %lld)", actor, conn->peer_uid);
	else
		snprintf(who, sizeof(who), "uid %lld", conn->peer_uid);
	json_object_set_new(call->params, "actor", json_string(who));
	return 0;
}
