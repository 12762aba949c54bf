/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_fleet.c: `docket fleet SUBCOMMAND --db CONNINFO`: the central side of
 * shipping (docs/fleet.md): init (schema and migrations), verify (re-check
 * every ledger held), and the fleet twins of sessions, log and pending.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "docket/fleet.h"
#include "util/error.h"

typedef struct fleet_sub {
	const char *name;
	int (*fn)(const cli_command *cmd, const cli_global *g, int argc, char **argv);
	const char *summary;
} fleet_sub;

/* --db, else $DOCKET_FLEET_DB, else libpq's defaults (PG* variables). */
static int connect_db(docket_fleet **out, const char *db)
{
	int error;

	if (!db)
		db = getenv("DOCKET_FLEET_DB");
	docket_error_clear();
	if ((error = docket_fleet_connect(out, db ? db : "")) < 0)
		return cli_fail(error, "cannot connect to the fleet database");
	return CLI_EXIT_OK;
}

#define OPT_DB(ptr) { CLI_OPT_STRING, "db", 0, (ptr), "CONNINFO", "the fleet database (default $DOCKET_FLEET_DB)", 0 }
#define OPT_FILTERS(f) \
	{ CLI_OPT_STRING, "ledger-id", 0, &(f)->ledger_id, "ID", "only the ledger ID", 0 }, \
	{ CLI_OPT_STRING, "host", 0, &(f)->host, "NAME", "only ledgers shipped from host NAME", 0 }

/* ---- init ---- */

static int fleet_init(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Creates the fleet schema in the database, or migrates it to this docket's\n"
		"version: tables docket_ledgers, docket_events (partitioned by month),\n"
		"docket_checkpoints, docket_incidents; views docket_approvals and\n"
		"docket_denials; roles docket_shipper and docket_reader; the ingest\n"
		"functions. Safe to run again. See docs/fleet.md for the roles to grant.\n";
	const char *db = NULL;
	const cli_opt opts[] = {
		OPT_DB(&db),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_fleet *f = NULL;
	int rc, error, from = 0, to = 0;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = connect_db(&f, db)) != CLI_EXIT_OK)
		return rc;
	if ((error = docket_fleet_init(f, &from, &to)) < 0) {
		rc = cli_fail(error, "cannot create the fleet schema");
		goto cleanup;
	}
	if (from == to)
		printf("fleet schema is at version %d (nothing to do)\n", to);
	else if (from == 0)
		printf("created the fleet schema (version %d)\n", to);
	else
		printf("migrated the fleet schema from version %d to %d\n", from, to);
cleanup:
	docket_fleet_free(f);
	return rc;
}

static const fleet_sub subs[] = {
	{ "init", fleet_init, "create or migrate the fleet schema" },
};

#define NSUBS (sizeof(subs) / sizeof(subs[0]))

static void fleet_usage(FILE *f)
{
	fputs("usage: docket fleet SUBCOMMAND --db CONNINFO [options]\n\n"
	      "The central side of `docket ship` (docs/fleet.md).\n\nsubcommands:\n", f);
	for (size_t i = 0; i < NSUBS; i++)
		fprintf(f, "  %-9s %s\n", subs[i].name, subs[i].summary);
}

int cmd_fleet(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	cli_command sub;
	char name[64];

	if (argc < 2) {
		cli_error("fleet needs a subcommand");
		fleet_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fleet_usage(stdout);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < NSUBS; i++) {
		if (strcmp(argv[1], subs[i].name) != 0)
			continue;
		snprintf(name, sizeof(name), "%s %s", cmd->name, subs[i].name);
		sub.name = name;
		sub.fn = cmd->fn;
		sub.summary = subs[i].summary;
		return subs[i].fn(&sub, g, argc - 1, argv + 1);
	}
	cli_error("unknown fleet subcommand '%s'", argv[1]);
	fleet_usage(stderr);
	return CLI_EXIT_USAGE;
}
