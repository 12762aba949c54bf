/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_report.c: `docket report -o FILE.html`: the audit report. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "docket/audit.h"
#include "docket/export.h"
#include "util/error.h"

int cmd_report(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Writes one self-contained HTML page (inline CSS and SVG, no script, no\n"
		"external resource) for auditors: sessions, approvals (who, when, how long\n"
		"they waited, the result, the decision source), denials, the policy revision\n"
		"timeline, calls left in doubt or recovered, charts of approval wait times and\n"
		"decisions over time, and the chain head and signed checkpoints.\n";
	const char *path = NULL, *session = NULL, *since = NULL, *pseudo_key = NULL;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "output", 'o', &path, "FILE", "the HTML file to write (required)", 0 },
		{ CLI_OPT_STRING, "session", 's', &session, "S", "only this session", 0 },
		{ CLI_OPT_STRING, "since", 0, &since, "TIME", "only calls at or after this RFC 3339 time", 0 },
		{ CLI_OPT_STRING, "pseudonymize", 0, &pseudo_key, "KEYFILE", "replace identifiers by keyed hashes", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	docket_pseudonymizer *pseudo = NULL;
	docket_ledger *ledger = NULL;
	char *abs = NULL;
	FILE *out = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!path || !*path) {
		cli_error("report needs -o FILE");
		cli_usage_line(stderr, cmd, opts);
		return CLI_EXIT_USAGE;
	}
	if (since && cli_time_parse(since, &o.since_ms) < 0) {
		cli_error("--since wants an RFC 3339 time, not '%s'", since);
		return CLI_EXIT_USAGE;
	}
	docket_error_clear();
	if (pseudo_key && (error = docket_pseudonymizer_load(&pseudo, pseudo_key)) < 0)
		return cli_fail(error, "cannot load the pseudonymisation key");
	o.session = session;
	o.pseudonymizer = pseudo;
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		goto cleanup;
	if (session && (rc = cli_check_session(ledger, session)) != CLI_EXIT_OK)
		goto cleanup;
	if (!(out = fopen(path, "w"))) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		rc = CLI_EXIT_SYSTEM;
		goto cleanup;
	}
	error = docket_report_html(ledger, &o, out);
	if (fclose(out) != 0 && error == 0)
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write %s", path);
	if (error < 0) {
		rc = cli_fail(error, "cannot write the report");
		goto cleanup;
	}
	abs = realpath(path, NULL);
	printf("report written to %s\n", abs ? abs : path);
	rc = CLI_EXIT_OK;
cleanup:
	free(abs);
	docket_ledger_free(ledger);
	docket_pseudonymizer_free(pseudo);
	return rc;
}
