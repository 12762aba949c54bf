/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: `docket [-L PATH] COMMAND ...`: global options, then one command
 * from the table below (libgit2 src/cli style). Each command lives in
 * cli/cmd_<name>.c; see cli.h for how to add one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/alloc.h"

#define DEFAULT_LEDGER "./.docket"

static int cmd_help(const cli_command *cmd, const cli_global *g, int argc, char **argv);

/* The command table: name, function, one-line summary, where it runs
 * (cli_run: CLI_FORKED in a guarded child, or CLI_IN_PROCESS). Keep it in the order
 * `docket --help` should list the commands. */
static const cli_command commands[] = {
	{ "init",     cmd_init,     "create a ledger", CLI_FORKED },
	{ "record",   cmd_record,   "append events from JSON lines (all or nothing)", CLI_FORKED },
	{ "log",      cmd_log,      "list events, one line each", CLI_FORKED },
	{ "sessions", cmd_sessions, "list sessions", CLI_FORKED },
	{ "show",     cmd_show,     "show a session as a timeline per tool call", CLI_FORKED },
	{ "pending",  cmd_pending,  "list tool calls that have no outcome yet", CLI_FORKED },
	{ "verify",   cmd_verify,   "check the hash chain, every segment and every index", 1 },
	{ "reindex",  cmd_reindex,  "rebuild every index from the events", CLI_FORKED },
	{ "migrate",  cmd_migrate,  "convert a format-1 or -2 ledger to format 3 in place", CLI_FORKED },
	{ "compact",  cmd_compact,  "rewrite the ledger into full segments, no free pages", CLI_FORKED },
	{ "stats",    cmd_stats,    "show ledger size, compression and chain head", CLI_FORKED },
	{ "import",   cmd_import,   "import Codex or Claude Code transcripts as sessions", CLI_FORKED },
	{ "keygen",   cmd_keygen,   "write a signing key pair (or a pseudonymisation key)", CLI_FORKED },
	{ "checkpoint", cmd_checkpoint, "sign the chain head and tree; consistency proofs; list", CLI_FORKED },
	{ "witness",  cmd_witness,  "co-sign a checkpoint that extends the last one seen", CLI_FORKED },
	{ "prove",    cmd_prove,    "write a receipt: one tool call's events with inclusion proofs", CLI_FORKED },
	{ "verify-receipt", cmd_verify_receipt, "check a receipt offline against the log's public key", CLI_FORKED },
	{ "export",   cmd_export,   "export events as JSONL, OCSF, OpenTelemetry, CSV, git or tlog-tiles", CLI_FORKED },
	{ "report",   cmd_report,   "write the HTML audit report", CLI_FORKED },
	{ "audit",    cmd_audit,    "what should worry an auditor: risky modes, escalations, denials", CLI_FORKED },
	{ "redact",   cmd_redact,   "set the secrets this ledger redacts at write time", CLI_FORKED },
	{ "serve",    cmd_serve,    "serve the runtime protocol (JSON-RPC over stdio or a socket)", 1 },
	{ "recover",  cmd_recover,  "plan or apply the recovery of pending calls after a crash", CLI_FORKED },
	{ "policy",   cmd_policy,   "check, evaluate, explain or convert a policy", CLI_FORKED },
	{ "replay",   cmd_replay,   "replay recorded calls against a policy; show what would change", CLI_FORKED },
	{ "hook",     cmd_hook,     "record one Claude Code or Codex hook event (live capture)", CLI_FORKED },
	{ "integrate", cmd_integrate, "install docket's hooks in Claude Code or Codex", CLI_FORKED },
	{ "mcp-proxy", cmd_mcp_proxy, "run an MCP stdio server with every tools/call recorded", CLI_FORKED },
	{ "codex-relay", cmd_codex_relay, "run codex app-server with every call and approval recorded", CLI_FORKED },
	{ "ship",     cmd_ship,     "send the ledger to the fleet database (PostgreSQL)", CLI_FORKED },
	{ "fleet",    cmd_fleet,    "the fleet database: init, verify, sessions, log, pending", CLI_FORKED },
	{ "help",     cmd_help,     "show help for a command", 1 },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const cli_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	size_t i, width = 0;

	fputs("usage: docket [-L PATH] COMMAND [ARGS...]\n"
	      "       docket COMMAND --help\n"
	      "\n"
	      "An audit-first, hash-chained ledger of AI-agent tool calls.\n"
	      "\n"
	      "options:\n"
	      "  -L, --ledger PATH   the ledger directory (default: $DOCKET_LEDGER, else "
	      DEFAULT_LEDGER ")\n"
	      "      --map-max SIZE  the most the ledger's file may grow to, e.g. 512M, 64G\n"
	      "                      (default: $DOCKET_MAP_MAX, else 1T)\n"
	      "  -h, --help          show this help\n"
	      "      --version       show the version\n"
	      "\n"
	      "commands:\n", f);
	for (i = 0; i < NCOMMANDS; i++)
		if (strlen(commands[i].name) > width)
			width = strlen(commands[i].name);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-*s  %s\n", (int)width, commands[i].name, commands[i].summary);
	fputs("\n"
	      "exit codes: 0 ok, 1 a check found something, 2 usage or bad input (nothing\n"
	      "written), 3 storage or system error.\n", f);
}

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "docket: %s%s%s%s\n", what, arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
	fputs("usage: docket [-L PATH] COMMAND [ARGS...]\n"
	      "Try 'docket --help' for the list of commands.\n", stderr);
	return CLI_EXIT_USAGE;
}

/* `docket help [COMMAND]` is `docket COMMAND --help`. */
static int cmd_help(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	const char *name = NULL;
	const cli_opt opts[] = {
		{ CLI_OPT_ARG, "COMMAND", 0, &name, NULL, "the command to explain", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	const cli_command *target;
	char *help_argv[3];
	char help_flag[] = "--help";
	int rc;

	if ((rc = cli_parse(cmd, opts, NULL, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (!name) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!(target = find_command(name)))
		return usage_error("unknown command", name);
	help_argv[0] = (char *)(uintptr_t)target->name;
	help_argv[1] = help_flag;
	help_argv[2] = NULL;
	return target->fn(target, g, 2, help_argv);
}

int main(int argc, char **argv)
{
	cli_global g;
	const cli_command *cmd;
	const char *env;
	const char *map_max = NULL;
	int i;

	docket_alloc_install_json();
	memset(&g, 0, sizeof(g));

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		if (strcmp(a, "--version") == 0) {
			printf("docket %s (ledger format %u)\n", DOCKET_VERSION, DOCKET_FORMAT_VERSION);
			return CLI_EXIT_OK;
		}
		if (strcmp(a, "-L") == 0 || strcmp(a, "--ledger") == 0) {
			if (i + 1 >= argc)
				return usage_error("a path must follow", a);
			g.ledger_path = argv[++i];
		} else if (strncmp(a, "--ledger=", 9) == 0) {
			g.ledger_path = a + 9;
		} else if (strncmp(a, "-L", 2) == 0) {
			g.ledger_path = a + 2;
		} else if (strcmp(a, "--map-max") == 0) {
			if (i + 1 >= argc)
				return usage_error("a size must follow", a);
			map_max = argv[++i];
			continue;
		} else if (strncmp(a, "--map-max=", 10) == 0) {
			map_max = a + 10;
			continue;
		} else {
			return usage_error("unknown option", a);
		}
		if (!*g.ledger_path)
			return usage_error("the ledger path is empty", NULL);
	}
	if (i >= argc)
		return usage_error("no command given", NULL);
	if (!g.ledger_path) {
		env = getenv("DOCKET_LEDGER");
		g.ledger_path = (env && *env) ? env : DEFAULT_LEDGER;
	}
	if (!map_max && (env = getenv("DOCKET_MAP_MAX")) && *env)
		map_max = env;
	if (map_max && (cli_size_parse(map_max, &g.map_max) < 0 || g.map_max < ((size_t)1 << 20)))
		return usage_error("the map cap must be a size of at least 1M (e.g. 512M, 64G)", map_max);
	g.color_out = cli_want_color(stdout);
	g.color_err = cli_want_color(stderr);

	if (!(cmd = find_command(argv[i])))
		return usage_error("unknown command", argv[i]);
	return cli_run(cmd, &g, argc - i, argv + i);
}
