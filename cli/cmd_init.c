/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_init.c: `docket init`: create the ledger. */
#include "cli.h"

#include "util/error.h"

int cmd_init(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Creates the ledger directory (mode 0700, files 0600) at the path given by\n"
		"-L, else $DOCKET_LEDGER, else ./.docket. An existing ledger is left as it is.\n";
	const cli_opt opts[] = {
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_open_options o = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);

	/* An existing ledger is fine: say so and leave it alone. */
	docket_error_clear();
	error = docket_ledger_open(&ledger, g->ledger_path, &o);
	if (error == 0) {
		docket_ledger_free(ledger);
		printf("ledger already exists at %s\n", g->ledger_path);
		return CLI_EXIT_OK;
	}
	if (error != DOCKET_ENOTFOUND) {
		cli_error("cannot open ledger '%s': %s", g->ledger_path,
			  docket_error_last()->message[0] ? docket_error_last()->message : "error");
		return CLI_EXIT_SYSTEM;
	}

	o.flags = DOCKET_OPEN_CREATE;
	docket_error_clear();
	if ((error = docket_ledger_open(&ledger, g->ledger_path, &o)) < 0) {
		cli_error("cannot create ledger '%s': %s", g->ledger_path,
			  docket_error_last()->message[0] ? docket_error_last()->message : "error");
		return CLI_EXIT_SYSTEM;
	}
	docket_ledger_free(ledger);
	printf("created ledger at %s\n", g->ledger_path);
	return CLI_EXIT_OK;
}
