/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp_proxy.h: an MCP stdio server with docket in between (integrations/
 * mcp_proxy.c): every tools/call is recorded T0/T1/T2 under the tool "mcp"
 * with {server, tool, arguments}; with a policy docket denies or asks (MCP
 * elicitation) before the server sees the call. Everything else passes
 * through byte for byte.
 */
#ifndef DOCKET_MCP_PROXY_H
#define DOCKET_MCP_PROXY_H

#include <stddef.h>

#include "docket/common.h"
#include "docket/ledger.h"
#include "docket/policy.h"

typedef struct docket_mcp_proxy_options {
	unsigned int version;
	const char *name;             /* the server's name as the client knows it */
	const char *session;          /* the ledger session of this connection */
	const docket_policy *policy;  /* NULL: record only */
} docket_mcp_proxy_options;

#define DOCKET_MCP_PROXY_OPTIONS_VERSION 1
#define DOCKET_MCP_PROXY_OPTIONS_INIT { DOCKET_MCP_PROXY_OPTIONS_VERSION, NULL, NULL, NULL }

/*
 * Run the server `argv` (NULL-terminated) between stdin/stdout and its own
 * pipes until either side closes. *server_status gets its exit status.
 */
int docket_mcp_proxy_run(docket_ledger *ledger, const docket_mcp_proxy_options *opts,
			 char *const *argv, int *server_status) DOCKET_MUST_USE;

/*
 * The message handling alone, for tests and fuzzing: a proxy that writes
 * what the client gets to `to_client` and what the server gets to
 * `to_server` (file descriptors the caller owns). _new opens the ledger
 * session; each _from_* call handles one line (with its newline) and fails
 * only when it cannot write or is out of memory; _finish ends the calls
 * still open and closes the session; _free accepts NULL.
 */
typedef struct docket_mcp_proxy docket_mcp_proxy;

int docket_mcp_proxy_new(docket_mcp_proxy **out, docket_ledger *ledger, const docket_mcp_proxy_options *opts,
			 int to_client, int to_server) DOCKET_MUST_USE;
int docket_mcp_proxy_from_client(docket_mcp_proxy *p, const char *line, size_t len) DOCKET_MUST_USE;
int docket_mcp_proxy_from_server(docket_mcp_proxy *p, const char *line, size_t len) DOCKET_MUST_USE;
void docket_mcp_proxy_finish(docket_mcp_proxy *p);
void docket_mcp_proxy_free(docket_mcp_proxy *p);

#endif
