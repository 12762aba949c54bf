/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_serve.c: `docket serve --stdio | --socket PATH`: the runtime protocol. */
#include "cli.h"

#include <grp.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy_doc.h"
#include "serve/server.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

/*
 * Read an operator policy source: PATH (docket YAML), codex:PATH,
 * claude:PATH. It is recorded in every session as docket YAML text
 * (policy_doc_of: what the hooks' --enforce records too).
 */
static int load_operator_policy(const char *src, const char **format, json_t **doc)
{
	docket_policy *p = NULL;
	int error;

	*doc = NULL;
	if ((error = docket_policy_load(&p, src)) < 0)
		return error;
	*format = "docket";
	error = policy_doc_of(doc, p);
	docket_policy_free(p);
	return error;
}

static int parse_mode(const char *s, mode_t *out)
{
	char *end;
	long v = strtol(s, &end, 8);

	if (!*s || *end || v < 0 || v > 0777 || (v & 0007))
		return -1;
	*out = (mode_t)v;
	return 0;
}

typedef struct serving {
	const char *path;   /* NULL: stdio */
	server_writer writer;
} serving;

static void announce(void *ctx)
{
	const serving *on = ctx;

	if (on->path) {
		fprintf(stderr, "docket: serving on %s (%s)\n", on->path,
			on->writer == SERVER_WRITER_THREADS ? "writer and syncer threads" : "commits on the poll loop");
		fflush(stderr);
	}
}

/* DOCKET_SERVE_WRITER: threads or inline (unset or empty: by the CPUs
 * serve may run on, server_writer_for; docs/write-path.md §4). */
static int parse_writer(server_writer *out)
{
	const char *env = getenv("DOCKET_SERVE_WRITER");

	*out = SERVER_WRITER_AUTO;
	if (!env || !*env)
		return 0;
	if (strcmp(env, "threads") == 0)
		*out = SERVER_WRITER_THREADS;
	else if (strcmp(env, "inline") == 0)
		*out = SERVER_WRITER_INLINE;
	else {
		cli_error("DOCKET_SERVE_WRITER: \"%s\" is not threads or inline", env);
		return -1;
	}
	return 0;
}

int cmd_serve(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Speaks newline-delimited JSON-RPC 2.0 (methods: runtime.start, session.open,\n"
		"policy.set, tool.intent, approval.request, approval.settle, tool.dispatch,\n"
		"tool.complete, session.close, recover.plan, recover.apply). A reply is written\n"
		"only after its commit is durable; requests that arrive together share one\n"
		"commit. With --policy every session gets the operator's policy, and a client's\n"
		"policy.set can only narrow it (unless --allow-client-policy). SIGTERM finishes\n"
		"the requests in flight and stops. See docs/protocol.md.\n"
		"\n"
		"Limits on clients: a request line over --max-request bytes (default 1 MiB)\n"
		"gets an error and is skipped; a client with over --max-queued bytes of\n"
		"replies unread (default 4 MiB) is not read until it catches up, and is\n"
		"dropped once it takes none of them for --client-timeout seconds (default 10;\n"
		"also the bound on flushing replies at shutdown); clients beyond\n"
		"--max-clients (default 256, fewer if the descriptor limit is low) are told\n"
		"the server is busy and closed.\n"
		"\n"
		"On 4 or more CPUs (of those it may run on) a writer thread commits each\n"
		"batch while the next is prepared, and a syncer thread syncs it; on fewer,\n"
		"serve commits and syncs each batch itself (its first line says which).\n"
		"DOCKET_SERVE_WRITER=threads or inline overrides that.\n";
	int use_stdio = 0, allow_client = 0;
	uint64_t max_request = 0, max_queued = 0, max_clients = 0, timeout_s = 0;
	const char *socket_path = NULL, *policy_src = NULL, *mode_s = NULL, *group_s = NULL;
	const char *workspaces = NULL, *approvers = NULL, *runtimes = NULL;
	const cli_opt opts[] = {
		{ CLI_OPT_SWITCH, "stdio", 0, &use_stdio, NULL, "serve one client on stdin/stdout", 0 },
		{ CLI_OPT_STRING, "socket", 0, &socket_path, "PATH", "serve clients on a Unix socket (created 0600)", 0 },
		{ CLI_OPT_STRING, "policy", 0, &policy_src, "SRC", "the operator's policy: PATH, codex:PATH or claude:PATH", 0 },
		{ CLI_OPT_SWITCH, "allow-client-policy", 0, &allow_client, NULL, "let clients replace (widen) policies", 0 },
		{ CLI_OPT_STRING, "socket-mode", 0, &mode_s, "MODE", "socket permissions, octal (default 600; never world)", 0 },
		{ CLI_OPT_STRING, "socket-group", 0, &group_s, "GROUP", "group owning the socket (its directory may then be writable by it)", 0 },
		{ CLI_OPT_U64, "max-request", 0, &max_request, "BYTES", "longest request line (default 1048576)", 0 },
		{ CLI_OPT_U64, "max-queued", 0, &max_queued, "BYTES", "unread reply bytes before a client is paused (default 4194304)", 0 },
		{ CLI_OPT_U64, "max-clients", 0, &max_clients, "N", "connections at once (default 256)", 0 },
		{ CLI_OPT_U64, "client-timeout", 0, &timeout_s, "SECONDS", "drop a client that reads no reply for this long (default 10)", 0 },
		{ CLI_OPT_STRING, "workspace", 0, &workspaces, "DIRS", "with --policy: where clients may put cwd, workspace_roots, TMPDIR (A:B)", 0 },
		{ CLI_OPT_STRING, "approvers", 0, &approvers, "UIDS", "peers (uids, comma-separated) that may settle approvals", 0 },
		{ CLI_OPT_STRING, "runtimes", 0, &runtimes, "UIDS", "peers (uids) that are runtimes only, even the server's own (stdio too)", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	server_options so;
	serving on;
	server_stats stats;
	docket_ledger *ledger = NULL;
	json_t *policy = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (use_stdio == (socket_path != NULL)) {
		cli_error("serve: give exactly one of --stdio and --socket PATH");
		return CLI_EXIT_USAGE;
	}
	memset(&so, 0, sizeof(so));
	so.socket_path = socket_path;
	if (parse_writer(&so.writer) < 0)
		return CLI_EXIT_USAGE;
	if (max_request > ((uint64_t)1 << 30) || max_queued > ((uint64_t)1 << 34) || max_clients > 1024 ||
	    timeout_s > 86400) {
		cli_error("serve: limits: --max-request at most 1 GiB, --max-queued 16 GiB, --max-clients 1024, "
			  "--client-timeout 86400");
		return CLI_EXIT_USAGE;
	}
	so.max_request = (size_t)max_request;
	so.max_queued = (size_t)max_queued;
	so.max_clients = (unsigned)max_clients;
	so.client_timeout_ms = (unsigned)timeout_s * 1000u;
	if (mode_s && parse_mode(mode_s, &so.socket_mode) < 0) {
		cli_error("serve: --socket-mode must be octal, at most 770 (no access for others): %s", mode_s);
		return CLI_EXIT_USAGE;
	}
	if (group_s) {
		struct group *gr = getgrnam(group_s);

		if (!gr) {
			cli_error("serve: no group %s", group_s);
			return CLI_EXIT_USAGE;
		}
		so.socket_gid = gr->gr_gid;
		so.socket_gid_set = 1;
	}
	if (policy_src) {
		docket_error_clear();
		if ((error = load_operator_policy(policy_src, &so.proto.operator_format, &policy)) < 0)
			return cli_fail(error, "cannot load the operator policy");
		so.proto.operator_policy = policy;
	}
	so.proto.allow_client_policy = allow_client;
	so.proto.workspaces = workspaces;
	so.approver_uids = approvers;
	so.runtime_uids = runtimes;
	so.writer = server_writer_for(so.writer);
	on.path = socket_path;
	on.writer = so.writer;
	so.ready = announce;
	so.ready_ctx = &on;
	if ((rc = cli_open_ledger(&ledger, g, 0)) != CLI_EXIT_OK)
		goto cleanup;
	docket_error_clear();
	if ((error = server_run(ledger, &so, &stats)) < 0) {
		rc = cli_fail(error, "serve failed");
		goto cleanup;
	}
	if (socket_path)
		fprintf(stderr, "docket: stopped after %llu requests in %llu commits (largest %llu)\n",
			(unsigned long long)stats.requests, (unsigned long long)stats.batches,
			(unsigned long long)stats.max_batch);
	if (stats.refused || stats.dropped || stats.oversized)
		fprintf(stderr, "docket: clients refused %llu, dropped %llu; oversized requests %llu\n",
			(unsigned long long)stats.refused, (unsigned long long)stats.dropped,
			(unsigned long long)stats.oversized);
	rc = CLI_EXIT_OK;
cleanup:
	json_decref(policy);
	docket_ledger_free(ledger);
	return rc;
}
