/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_keygen.c: `docket keygen`: an Ed25519 signing key, or an HMAC key. */
#include "cli.h"

#include "docket/audit.h"
#include "util/error.h"

int cmd_keygen(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Writes a new Ed25519 private key to FILE (PEM, mode 0600) and its public key\n"
		"to FILE.pub, for `docket checkpoint --key FILE` and `docket verify --pubkey\n"
		"FILE.pub`. Keep FILE secret; hand FILE.pub to whoever verifies copies.\n"
		"With --hmac, writes a random key for `docket export --pseudonymize FILE`.\n";
	const char *path = NULL;
	int hmac = 0, force = 0, json = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "output", 'o', &path, "FILE", "the key file to write (required)", 0 },
		{ CLI_OPT_SWITCH, "hmac", 0, &hmac, NULL, "write a pseudonymisation (HMAC) key instead", 0 },
		{ CLI_OPT_SWITCH, "force", 0, &force, NULL, "replace existing files", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	char id[65] = "";
	int rc, error;

	(void)g;
	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!path || !*path) {
		cli_error("keygen needs -o FILE");
		cli_usage_line(stderr, cmd, opts);
		return CLI_EXIT_USAGE;
	}
	docket_error_clear();
	error = hmac ? docket_keygen_hmac(path, force) : docket_keygen(path, force, id);
	if (error < 0)
		return cli_fail(error, "cannot write the key");
	if (json) {
		json_t *j = hmac ? json_pack("{s:s, s:s}", "kind", "hmac", "key", path)
				 : json_pack("{s:s, s:s, s:s+, s:s}", "kind", "ed25519", "key", path,
					     "public_key", path, ".pub", "key_id", id);

		return cli_print_json(j);
	}
	if (hmac) {
		printf("wrote %s (pseudonymisation key, mode 0600)\n", path);
		return CLI_EXIT_OK;
	}
	printf("wrote %s (private, mode 0600) and %s.pub\nkey id: %s\n", path, path, id);
	return CLI_EXIT_OK;
}
