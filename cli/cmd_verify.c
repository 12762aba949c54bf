/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_verify.c: `docket verify`: check chain, frames and projections. */
#include "cli.h"

#include <string.h>

#include "util/error.h"

int cmd_verify(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Recomputes the hash chain over every event, decodes every frame, rebuilds\n"
		"every index in memory and compares it with the stored one. Exit 0 when\n"
		"everything checks out, 1 when something does not (naming the first bad seq),\n"
		"3 when the ledger cannot be read at all.\n";
	int json = 0;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_verify_report report;
	docket_ledger *ledger = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;

	memset(&report, 0, sizeof(report));
	docket_error_clear();
	if ((error = docket_ledger_verify(ledger, &report)) < 0) {
		rc = cli_fail(error, "verify could not run");
		goto cleanup;
	}
	report.problem[sizeof(report.problem) - 1] = '\0';
	if (json) {
		json_t *j = json_pack("{s:b, s:I, s:o, s:o}",
				      "ok", report.ok,
				      "events_checked", (json_int_t)report.events_checked,
				      "first_bad_seq", report.first_bad_seq
					      ? json_integer((json_int_t)report.first_bad_seq)
					      : json_null(),
				      "problem", report.ok ? json_null() : json_string(report.problem));

		if (!j || cli_json_pretty(stdout, j) < 0) {
			json_decref(j);
			rc = cli_fail(DOCKET_ENOMEM, "cannot write output");
			goto cleanup;
		}
		json_decref(j);
	} else if (report.ok) {
		cli_put_color(stdout, g->color_out, CLI_GREEN, "ok");
		printf(": %llu event%s verified (hash chain, frames, indexes)\n",
		       (unsigned long long)report.events_checked,
		       report.events_checked == 1 ? "" : "s");
	} else {
		cli_put_color(stdout, g->color_out, CLI_RED, "FAILED");
		if (report.first_bad_seq)
			printf(" at seq %llu", (unsigned long long)report.first_bad_seq);
		printf(": %s\n", report.problem[0] ? report.problem : "verification failed");
		if (report.events_checked > 0)
			printf("%llu event%s checked\n", (unsigned long long)report.events_checked,
			       report.events_checked == 1 ? "" : "s");
	}
	rc = report.ok ? CLI_EXIT_OK : CLI_EXIT_FOUND;

cleanup:
	docket_ledger_free(ledger);
	return rc;
}
