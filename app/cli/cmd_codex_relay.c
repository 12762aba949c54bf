/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_codex_relay.c: `docket codex-relay -- codex app-server [ARGS...]`: run
 * Codex's app-server with docket in between (integrations/codex_relay.h,
 * docs/integrations.md). Configure it in the app-server's client in place
 * of the `codex app-server` command.
 */
#include "cli.h"

#include "integrations/codex_relay.h"
#include "integrations/stdio_relay.h"
#include "util/error.h"

int cmd_codex_relay(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	cli_args server = { NULL, 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_ARGS, "-- codex app-server [ARGS...]", 0, &server, NULL, "the app-server to run", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	int rc, status = 0;

	if ((rc = cli_parse(cmd, opts,
			    "Runs codex app-server between its client and docket: every JSON-RPC line\n"
			    "passes through unchanged; each command, patch and MCP call of the stream is\n"
			    "recorded (T0 at item/started, the approval request and the user's decision,\n"
			    "T1, T2 at item/completed) under the thread's id as the session.",
			    argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (server.n == 0) {
		cli_error("no app-server command after --");
		return CLI_EXIT_USAGE;
	}
	oo.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&ledger, g->ledger_path, &oo) < 0)
		return cli_fail(docket_error_last()->code, "cannot open the ledger");
	if (docket_codex_relay_run(ledger, server.v, &status) < 0)
		rc = cli_fail(docket_error_last()->code, "codex-relay failed");
	else
		rc = relay_signal() ? 128 + relay_signal() : status == 0 ? CLI_EXIT_OK : CLI_EXIT_SYSTEM;
	docket_ledger_free(ledger);
	return rc;
}
