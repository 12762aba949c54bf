/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codex_relay.h: `docket codex-relay -- codex app-server [ARGS...]`
 * (integrations/codex_relay.c): a client of Codex's app-server (an IDE, a
 * desktop app) talks to it through docket, which passes every JSON-RPC line
 * through unchanged in both directions and records each tool call of the
 * stream: T0 at item/started, P at item/(commandExecution|fileChange)/requestApproval, the user's
 * decision from the client's response, T1 when an approval is passed on
 * (or inferred at the end), T2 at item/completed. Record mode only: docket
 * never answers for the user.
 */
#ifndef DOCKET_CODEX_RELAY_H
#define DOCKET_CODEX_RELAY_H

#include <stddef.h>

#include "docket/common.h"
#include "docket/ledger.h"

typedef struct docket_codex_relay docket_codex_relay;

/*
 * A relay that writes what the client gets to `to_client` and what the
 * server gets to `to_server` (descriptors the caller owns). Each _from_*
 * call handles one line (with its newline): it is written on unchanged
 * after what it means is durable; a line docket cannot record is still
 * passed on (the error goes to stderr). They fail only when the line cannot
 * be written or memory runs out. _finish ends the calls still open (their
 * app-server is gone); _free accepts NULL.
 */
int docket_codex_relay_new(docket_codex_relay **out, docket_ledger *ledger, int to_client,
			   int to_server) DOCKET_MUST_USE;
int docket_codex_relay_from_client(docket_codex_relay *r, const char *line, size_t len) DOCKET_MUST_USE;
int docket_codex_relay_from_server(docket_codex_relay *r, const char *line, size_t len) DOCKET_MUST_USE;
void docket_codex_relay_finish(docket_codex_relay *r);
void docket_codex_relay_free(docket_codex_relay *r);

/* Run `argv` (NULL-terminated: codex app-server ...) between stdin/stdout
 * and its pipes until it ends; *server_status gets its exit status. */
int docket_codex_relay_run(docket_ledger *ledger, char *const *argv, int *server_status) DOCKET_MUST_USE;

#endif
