/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_reindex.c: `docket reindex`: rebuild every projection from events. */
#include "cli.h"

#include "util/error.h"

int cmd_reindex(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Rebuilds every index (sessions, invocation states, pending calls, policy\n"
		"documents) from the events, in one transaction. The events themselves are\n"
		"not touched.\n";
	const cli_opt opts[] = {
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_ledger_info info;
	docket_ledger *ledger = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, 0)) != CLI_EXIT_OK)
		return rc;
	docket_error_clear();
	if ((error = docket_ledger_reindex(ledger)) < 0) {
		rc = cli_fail(error, "reindex failed");
		goto cleanup;
	}
	docket_error_clear();
	if ((error = docket_ledger_info_get(ledger, &info)) < 0) {
		rc = cli_fail(error, "cannot read the ledger facts");
		goto cleanup;
	}
	printf("reindexed %llu event%s: %llu session%s, %llu pending\n",
	       (unsigned long long)info.events, info.events == 1 ? "" : "s",
	       (unsigned long long)info.sessions, info.sessions == 1 ? "" : "s",
	       (unsigned long long)info.pending);
	rc = CLI_EXIT_OK;

cleanup:
	docket_ledger_free(ledger);
	return rc;
}
