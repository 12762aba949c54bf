/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_migrate.c: `docket migrate` and `docket compact`: rewrite the ledger. */
#include <string.h>

#include "cli.h"

#include "util/buf.h"
#include "util/error.h"

typedef int (*rewrite_fn)(const char *path, size_t map_max, docket_rewrite_report *rep);

static int print_report(const cli_global *g, const char *verb, const docket_rewrite_report *rep, int json)
{
	char hex[65];

	docket_hex(hex, rep->head, sizeof(rep->head));
	if (json) {
		return cli_print_json(json_pack("{s:s, s:b, s:i, s:i, s:I, s:I, s:I, s:I, s:s, s:i}", "ledger",
					 g->ledger_path, "rewritten", rep->rewritten, "from_format",
					 (int)rep->from_format, "to_format", (int)rep->to_format, "events",
					 (json_int_t)rep->events, "segments", (json_int_t)rep->segments,
					 "bytes_before", (json_int_t)rep->bytes_before,
					 "bytes_after", (json_int_t)rep->bytes_after, "head_hash", hex,
					 "leftovers_removed", (int)rep->leftovers));
	}
	if (rep->leftovers)
		printf("removed %u director%s an interrupted rewrite left beside %s\n", rep->leftovers,
		       rep->leftovers == 1 ? "y" : "ies", g->ledger_path);
	if (!rep->rewritten) {
		printf("%s is already in format %u: nothing to do (%llu events, head %.16s)\n", g->ledger_path,
		       rep->to_format, (unsigned long long)rep->events, hex);
		return CLI_EXIT_OK;
	}
	printf("%s %s: format %u -> %u, %llu event%s in %llu segment%s, head %.16s (unchanged)\n", verb,
	       g->ledger_path, rep->from_format, rep->to_format, (unsigned long long)rep->events,
	       rep->events == 1 ? "" : "s", (unsigned long long)rep->segments, rep->segments == 1 ? "" : "s",
	       hex);
	printf("data.mdb: %llu -> %llu bytes\n", (unsigned long long)rep->bytes_before,
	       (unsigned long long)rep->bytes_after);
	return CLI_EXIT_OK;
}

static int run(const cli_command *cmd, const cli_global *g, int argc, char **argv, const char *description,
	       rewrite_fn fn, const char *verb)
{
	int json = 0;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_rewrite_report rep;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	docket_error_clear();
	if ((error = fn(g->ledger_path, g->map_max, &rep)) < 0)
		return cli_fail(error, "the rewrite failed");
	return print_report(g, verb, &rep, json);
}

int cmd_migrate(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Converts a ledger written in format 1 (one frame per event) or format 2\n"
		"(segments in one part) to format 3 (segments whose decisions and outcomes\n"
		"are compressed apart), in place: the events are copied into a new ledger\n"
		"next to it, each checked on the way as `docket verify` does, then the new\n"
		"files replace the old ones atomically. Every seq, time and hash is kept, so\n"
		"checkpoints signed before still verify; checkpoints, import progress and the\n"
		"ledger id are carried over. Stop every writer first. A format-3 ledger is\n"
		"left as is; a format-2 one is read and appended to as it is until then.\n"
		"A crash leaves the old ledger or the new one in place, and at worst a\n"
		"PATH.rewrite-XXXXXX directory beside it, which the next migrate or compact\n"
		"removes.\n";

	return run(cmd, g, argc, argv, description, docket_ledger_migrate, "migrated");
}

int cmd_compact(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Rewrites a ledger into full segments (1,024 events each) with no free\n"
		"pages: `serve` commits small segments, and a file never shrinks by itself.\n"
		"Every seq, time and hash is kept and checked on the way; the new files\n"
		"replace the old ones atomically. Stop every writer first. What an\n"
		"interrupted migrate or compact left beside the ledger (PATH.rewrite-XXXXXX)\n"
		"is removed.\n";

	return run(cmd, g, argc, argv, description, docket_ledger_compact, "compacted");
}
