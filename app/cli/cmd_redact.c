/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_redact.c: `docket redact`: write-time redaction rules of a ledger. */
#include "cli.h"

#include <string.h>

#include "docket/audit.h"
#include "util/alloc.h"
#include "util/error.h"

#define BUILTIN_ONLY "{\"builtin\":true}"

static int show_rules(docket_ledger *ledger)
{
	const char *names[256];
	docket_redactor *r = NULL;
	char *stored = NULL;
	size_t n;
	int error;

	docket_error_clear();
	if ((error = docket_ledger_get_redaction(ledger, &stored)) < 0)
		return cli_fail(error, "cannot read the redaction rules");
	if (!stored) {
		printf("write-time redaction: off\n");
		return CLI_EXIT_OK;
	}
	if ((error = docket_redactor_new(&r, stored, strlen(stored))) < 0) {
		docket_free(stored);
		return cli_fail(error, "the stored redaction rules do not load");
	}
	n = docket_redactor_rules(r, names, sizeof(names) / sizeof(names[0]));
	printf("write-time redaction: on, %zu rule%s\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < sizeof(names) / sizeof(names[0]); i++)
		printf("  %s\n", names[i]);
	n = docket_redactor_keys(r, names, sizeof(names) / sizeof(names[0]));
	printf("secret keys (values under them are redacted): %zu\n", n);
	for (size_t i = 0; i < n && i < sizeof(names) / sizeof(names[0]); i++)
		printf("%s%s", i % 6 ? ", " : i ? ",\n  " : "  ", names[i]);
	if (n)
		printf("\n");
	docket_redactor_free(r);
	docket_free(stored);
	return CLI_EXIT_OK;
}

int cmd_redact(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Sets the rules with which this ledger redacts secrets at write time: every\n"
		"event appended afterwards has its matches replaced by [REDACTED:rule] before\n"
		"it is validated, encoded or written, so the secret never reaches the disk.\n"
		"Events already in the ledger are not changed (the chain forbids it).\n"
		"Values under secret key names (password, token, api_key, authorization, ...,\n"
		"in any spelling: API-KEY, apiKey, GITHUB_TOKEN) are replaced whole, at any\n"
		"depth, and so is a string that is a JSON document's secret (walked as JSON).\n"
		"FILE: {\"builtin\": true, \"rules\": [{\"name\": \"n\", \"pattern\": \"ERE\",\n"
		"\"group\": 0, \"icase\": false}], \"keys\": [\"x-acme-auth\"]} (see docs/audit.md).\n"
		"Without an option, shows the current rules.\n";
	const char *rules = NULL;
	int builtin = 0, off = 0, set = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "set-rules", 0, &rules, "FILE", "redact with the rules in FILE", 0 },
		{ CLI_OPT_SWITCH, "builtin", 0, &builtin, NULL, "redact with the built-in rules only", 0 },
		{ CLI_OPT_SWITCH, "off", 0, &off, NULL, "stop redacting at write time", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	char *text = NULL;
	size_t len = 0;
	docket_ledger *ledger = NULL;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	set = (rules != NULL) + builtin + off;
	if (set > 1) {
		cli_error("give one of --set-rules, --builtin, --off");
		return CLI_EXIT_USAGE;
	}
	docket_error_clear();
	if (rules && (error = docket_redaction_rules_read(&text, &len, rules)) < 0) {
		rc = cli_fail(error, "cannot read the rules");
		goto cleanup;
	}
	if ((rc = cli_open_ledger(&ledger, g, set ? 0 : CLI_OPEN_READ)) != CLI_EXIT_OK)
		goto cleanup;
	if (set) {
		docket_error_clear();
		error = off ? docket_ledger_set_redaction(ledger, NULL, 0)
		    : builtin ? docket_ledger_set_redaction(ledger, BUILTIN_ONLY, strlen(BUILTIN_ONLY))
			      : docket_ledger_set_redaction(ledger, text, len);
		if (error < 0) {
			rc = cli_fail(error, "cannot set the redaction rules");
			goto cleanup;
		}
	}
	rc = show_rules(ledger);
cleanup:
	docket_ledger_free(ledger);
	docket_free(text);
	return rc;
}
