/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_mcp_proxy.c: `docket mcp-proxy --name NAME [--session ID] [--policy SRC]
 * -- SERVER_CMD [ARGS...]`: run an MCP stdio server with docket in between
 * (integrations/mcp_proxy.h, docs/integrations.md). Configure it in the
 * client in place of the server's own command.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "integrations/mcp_proxy.h"
#include "integrations/stdio_relay.h"
#include "util/error.h"

int cmd_mcp_proxy(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	const char *name = NULL, *session = NULL, *source = NULL;
	cli_args server = { NULL, 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "name", 0, &name, "NAME",
		  "the server's name as the client knows it (rules like mcp__NAME__TOOL match it)", 0 },
		{ CLI_OPT_STRING, "session", 0, &session, "ID", "the ledger session (default: mcp-NAME-PID-TIME)", 0 },
		{ CLI_OPT_STRING, "policy", 0, &source, "SRC",
		  "deny or ask (elicitation) what this policy denies or asks about", 0 },
		{ CLI_OPT_ARGS, "-- SERVER_CMD [ARGS...]", 0, &server, NULL, "the MCP server to run", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_mcp_proxy_options mo = DOCKET_MCP_PROXY_OPTIONS_INIT;
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	docket_policy *policy = NULL;
	char sid[320];
	int rc, status = 0;

	if ((rc = cli_parse(cmd, opts,
			    "Runs SERVER_CMD as an MCP server over stdio and records every tools/call\n"
			    "(T0 on the request, T1 when forwarded, T2 on the response); everything else\n"
			    "passes through byte for byte.", argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!name || !*name || server.n == 0) {
		cli_error(!name || !*name ? "--name NAME is required" : "no server command after --");
		return CLI_EXIT_USAGE;
	}
	if (!session) {
		snprintf(sid, sizeof(sid), "mcp-%.200s-%ld-%lld", name, (long)getpid(), (long long)time(NULL));
		session = sid;
	}
	if (source && docket_replay_source_load(&policy, source, NULL) < 0)
		return cli_fail(DOCKET_EINVALID, "cannot load the policy");
	oo.flags = DOCKET_OPEN_CREATE;
	cli_fold_spool(g);  /* it joins calls a hook spooled a moment ago */
	if (docket_ledger_open(&ledger, g->ledger_path, &oo) < 0) {
		rc = cli_fail(docket_error_last()->code, "cannot open the ledger");
		goto done;
	}
	mo.name = name;
	mo.session = session;
	mo.policy = policy;
	if (docket_mcp_proxy_run(ledger, &mo, server.v, &status) < 0)
		rc = cli_fail(docket_error_last()->code, "mcp-proxy failed");
	else
		rc = relay_signal() ? 128 + relay_signal() : status == 0 ? CLI_EXIT_OK : CLI_EXIT_SYSTEM;
done:
	docket_ledger_free(ledger);
	docket_policy_free(policy);
	return rc;
}
