/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_init.c: `docket init`: create the ledger. */
#include "cli.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "util/alloc.h"
#include "util/error.h"

/* Create the directories above `path` (like mkdir -p of its parent), so that
 * `docket -L ~/ledgers/app init` works on a fresh machine. */
static int make_parents(const char *path)
{
	char *copy = docket_strdup(path);
	char *p;

	if (!copy) {
		cli_error("out of memory");
		return CLI_EXIT_SYSTEM;
	}
	p = strrchr(copy, '/');
	if (!p || p == copy) {
		docket_free(copy);
		return CLI_EXIT_OK;
	}
	*p = '\0';
	for (p = copy + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		{
			char c = *p;

			*p = '\0';
			if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
				cli_error("cannot create %s: %s", copy, strerror(errno));
				docket_free(copy);
				return CLI_EXIT_SYSTEM;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	docket_free(copy);
	return CLI_EXIT_OK;
}

int cmd_init(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Creates the ledger directory (mode 0700, files 0600) at the path given by\n"
		"-L, else $DOCKET_LEDGER, else ./.docket, and any missing directory above it.\n"
		"An existing ledger is left as it is.\n"
		"A ledger someone else could change or replace is refused, here and at every\n"
		"open (hooks included), with the reason: a directory or file writable by group\n"
		"or others, one owned by another user (root is trusted), a symbolic link to it\n"
		"owned by another user, a link inside it, a parent directory another user owns\n"
		"or anyone can write without the sticky bit. A link to a directory that does\n"
		"not exist is not created through.\n";
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

	if ((rc = make_parents(g->ledger_path)) != CLI_EXIT_OK)
		return rc;
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
