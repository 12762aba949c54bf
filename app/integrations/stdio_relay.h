/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stdio_relay.h: a child program between a client's stdin/stdout and its
 * own pipes, line by line (newline-delimited JSON-RPC: MCP's stdio
 * transport, Codex's app-server). The shared core of `docket mcp-proxy`
 * and `docket codex-relay` (integrations/stdio_relay.c).
 *
 * Either end closing closes the other: the child dies with docket
 * (PR_SET_PDEATHSIG), the child sees EOF when the client closes, and the
 * client sees EOF when the child ends or docket dies (docket holds the only
 * write end of the client's input), so a crash never leaves a side hanging.
 */
#ifndef DOCKET_STDIO_RELAY_H
#define DOCKET_STDIO_RELAY_H

#include <stddef.h>
#include <sys/types.h>

#include "docket/common.h"

typedef struct relay_ends {
	int client_out;             /* to the client (stdout) */
	int client_in;              /* from the client (stdin) */
	int to_server, from_server; /* the child's stdin and stdout; -1 when closed */
	pid_t child;
	const char *who;            /* "mcp-proxy", "codex-relay": for messages */
} relay_ends;

/* One whole line (with its newline, unless it is the last one at EOF). */
typedef int (*relay_line_fn)(void *ctx, const char *line, size_t len);

/* Write all `n` bytes; DOCKET_ESTORAGE on failure (EPIPE included). */
int relay_write_all(int fd, const char *p, size_t n) DOCKET_MUST_USE;

/* Start `argv` (NULL-terminated) with its stdin/stdout on pipes; e->client_*
 * are set to STDIN/STDOUT. */
int relay_spawn(relay_ends *e, char *const *argv, const char *who) DOCKET_MUST_USE;

/*
 * Hand every line from the client to `from_client` and every line from the
 * child to `from_server` until the child closes its output (or a callback
 * fails), then close every end, stop the child if it is still running and
 * reap it: *status gets its exit status (128 + signal when killed).
 */
int relay_run(relay_ends *e, void *ctx, relay_line_fn from_client, relay_line_fn from_server,
	      int *status) DOCKET_MUST_USE;

/* The SIGTERM or SIGINT that ended the last relay_run (it returns 0 then), or 0. */
int relay_signal(void);

#endif
