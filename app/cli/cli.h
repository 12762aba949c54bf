/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h: what every docket subcommand shares (libgit2 src/cli style).
 *
 * main.c parses the global options into a cli_global and dispatches to one
 * command from its table; each command lives in cli/cmd_<name>.c, declares
 * its options as a cli_opt array and lets cli_parse() handle them, including
 * --help. Errors go to stderr as "docket: <message>"; commands return one of
 * the exit codes of DESIGN §9 below.
 */
#ifndef DOCKET_CLI_H
#define DOCKET_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "docket/docket.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/timespec.h"

/* Exit codes (DESIGN §9). */
enum {
	CLI_EXIT_OK = 0,      /* success */
	CLI_EXIT_FOUND = 1,   /* a check found something (verify failed) */
	CLI_EXIT_USAGE = 2,   /* usage or bad input; nothing was written */
	CLI_EXIT_SYSTEM = 3   /* storage or system error */
};

/* Global options, resolved once by main.c. */
typedef struct cli_global {
	const char *ledger_path;  /* -L, else $DOCKET_LEDGER, else ./.docket */
	size_t map_max;           /* --map-max, else $DOCKET_MAP_MAX; 0: the library's default */
	int color_out;            /* colour on stdout (a TTY and no NO_COLOR) */
	int color_err;            /* colour on stderr */
} cli_global;

typedef struct cli_command cli_command;

/*
 * Where cli_run runs a command. CLI_FORKED: in a guarded child, so that a
 * crash on a damaged ledger is reported as such. CLI_IN_PROCESS: in docket's
 * own process: serve is long-lived and is stopped by its pid (a parent in
 * between would leave it running after a SIGKILL); verify runs its reading
 * part in a child of its own and reports a crash there as corruption
 * (cmd_verify.c); help needs no guard.
 */
typedef enum { CLI_FORKED = 0, CLI_IN_PROCESS = 1 } cli_where;

/* argv[0] is the command's name; argv[argc] is NULL. Returns an exit code. */
typedef int (*cli_command_fn)(const cli_command *cmd, const cli_global *g,
			      int argc, char **argv);

struct cli_command {
	const char *name;
	cli_command_fn fn;
	const char *summary;  /* one line, for `docket --help` and `docket CMD --help` */
	cli_where where;
};

/*
 * The commands. Adding one: a cli/cmd_<name>.c defining cmd_<name>(), its
 * prototype here, its row in the table of main.c, its file in cli/meson.build.
 */
int cmd_init(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_record(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_log(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_sessions(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_show(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_pending(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_verify(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_reindex(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_migrate(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_compact(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_stats(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_import(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_keygen(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_checkpoint(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_prove(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_verify_receipt(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_witness(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_export(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_report(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_audit(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_redact(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_policy(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_replay(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_serve(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_recover(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_hook(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_integrate(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_mcp_proxy(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_codex_relay(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_ship(const cli_command *cmd, const cli_global *g, int argc, char **argv);
int cmd_fleet(const cli_command *cmd, const cli_global *g, int argc, char **argv);

/* ---- option parsing ---------------------------------------------------- */

typedef enum cli_opt_type {
	CLI_OPT_END = 0,
	CLI_OPT_SWITCH,   /* --name / -x: sets *(int *)value to 1 */
	CLI_OPT_STRING,   /* --name V / --name=V / -x V: *(const char **)value */
	CLI_OPT_U64,      /* like STRING, parsed as an unsigned decimal into *(uint64_t *)value */
	CLI_OPT_ARG,      /* one positional argument: *(const char **)value */
	CLI_OPT_ARGS,     /* the remaining positionals: *(cli_args *)value */
	CLI_OPT_LIST      /* like STRING, repeatable: appended to *(cli_list *)value */
} cli_opt_type;

enum {
	CLI_OPT_REQUIRED = 1u << 0  /* a positional that must be given */
};

typedef struct cli_opt {
	cli_opt_type type;
	const char *name;        /* long name without "--", or a positional's placeholder */
	char alias;              /* short option letter, 0 if none */
	void *value;
	const char *value_name;  /* for STRING/U64: "S", "SEQ", ... */
	const char *help;
	unsigned int flags;
} cli_opt;

/* The positionals collected by CLI_OPT_ARGS (pointers into argv). */
typedef struct cli_args {
	char **v;
	int n;
} cli_args;

/* The values of a repeatable option (CLI_OPT_LIST), in the order given. */
#define CLI_LIST_MAX 16
typedef struct cli_list {
	const char *v[CLI_LIST_MAX];
	size_t n;
} cli_list;

/* The standard --json switch of read commands. */
#define CLI_OPT_JSON(ptr) \
	{ CLI_OPT_SWITCH, "json", 0, (ptr), NULL, "write JSON instead of a table", 0 }

enum {
	CLI_PARSE_OK = 0,
	CLI_PARSE_HELP = 1,   /* --help was given and printed: exit 0 */
	CLI_PARSE_ERROR = 2   /* a usage message was printed: exit 2 */
};

/*
 * Parse argv[1..] of a command against `opts` (terminated by CLI_OPT_END).
 * `description` (may be NULL) is printed under the usage line by --help.
 */
int cli_parse(const cli_command *cmd, const cli_opt *opts, const char *description,
	      int argc, char **argv);

/* What a command returns after cli_parse() did not return CLI_PARSE_OK. */
#define CLI_PARSE_EXIT(rc) ((rc) == CLI_PARSE_HELP ? CLI_EXIT_OK : CLI_EXIT_USAGE)

/* "usage: docket NAME [options] ..." for `opts`, to `f`. */
void cli_usage_line(FILE *f, const cli_command *cmd, const cli_opt *opts);

/* ---- errors ------------------------------------------------------------ */

/* "docket: <message>" on stderr. */
void cli_error(const char *fmt, ...) DOCKET_PRINTF(1, 2);

/* The exit code for a DOCKET_E* code (DESIGN §9). */
int cli_exit_code(int code);

/*
 * Print docket_error_last() (or `fallback` when the library left no message)
 * as "docket: <message>" and return the exit code for `code`.
 */
int cli_fail(int code, const char *fallback);
/* cli_fail of an allocation that failed (docket_error_set_oom). */
int cli_fail_oom(void);

/*
 * Open the ledger of `g`. A missing ledger is exit 3 with a hint to run
 * `docket init`. Returns an exit code (0 on success).
 */
int cli_open_ledger(docket_ledger **out, const cli_global *g, unsigned int flags);

/* Readers fold first (docs/write-path.md §3): fold the ledger's spool when
 * it holds records, waiting a moment for the writer lock; when it cannot,
 * say on stderr how many records are not in the chain yet. cli_open_ledger
 * calls it for CLI_OPEN_READ. */
void cli_fold_spool(const cli_global *g);

/* Report why docket_ledger_open() failed with `error`; the exit code (3). */
int cli_open_failed(const cli_global *g, int error);

/*
 * Run `cmd` (issue 11): in a child process that docket waits for, so that a
 * crash while reading a damaged data file (LMDB trusts its pages) ends as a
 * clear error and exit 3 instead of a signal. Stop signals are passed on and
 * a child stopped by one makes docket stop the same way. serve and verify
 * run in process (see cli_run.c). Flushes stdout: a lost write is exit 3.
 */
int cli_run(const cli_command *cmd, const cli_global *g, int argc, char **argv);

/* A byte size: digits with an optional K, M, G or T (powers of 1024, "MiB"
 * and "MB" read the same). 0 or -1 when it is not one. */
int cli_size_parse(const char *s, size_t *out);

/* The flags read commands open the ledger with. */
#define CLI_OPEN_READ DOCKET_OPEN_READONLY

/* 1 when `session` exists, 0 when not, <0 on a read error. */
int cli_session_exists(docket_ledger *ledger, const char *session);

/*
 * Resolve a SESSION argument: the id itself, or the one session whose id
 * starts with it, or whose subagent sessions ("ID/agent-x") are the only
 * other matches (*session then points to *owned, a copy to docket_free).
 * No match, or several ("ambiguous", the first candidates listed): an error
 * and CLI_EXIT_USAGE. NULL *session: nothing to do.
 */
int cli_session_arg(docket_ledger *ledger, const char **session, char **owned);

/* --since/--until ARG in the syntax of util/timespec.h (relative to now);
 * CLI_EXIT_USAGE with a message naming `option` when it is not. */
int cli_timespec_arg(const char *option, const char *arg, docket_timespec *out);
/* --since ARG of an export, report or audit: a time sets since_ms (earlier
 * events still feed what later ones need), #seq since_seq (reading starts
 * there). */
int cli_since(const char *arg, docket_export_options *opts);

/*
 * The OpenTelemetry export (OTLP/JSON, one request per session) POSTed to
 * `url`, an OTLP/HTTP traces endpoint (http or https only), with libcurl
 * (otlp_http.c). *posted counts the requests the endpoint accepted (2xx).
 * Errors: DOCKET_EINVALID (not an http(s) URL, or docket built without
 * libcurl), DOCKET_ESTORAGE (no connection, a timeout, a reply other than
 * 2xx: the message says which).
 */
int cli_export_otlp_http(docket_ledger *ledger, const docket_export_options *opts, const char *url,
			 docket_export_stats *stats, uint64_t *posted);

/* Exit 0 when `session` exists, else print why and return the exit code
 * (a missing session is a usage error: 2). */
int cli_check_session(docket_ledger *ledger, const char *session);

/* ---- output ------------------------------------------------------------ */

/* Colour on `f`: a TTY, NO_COLOR unset or empty, TERM not "dumb". */
int cli_want_color(FILE *f);

#define CLI_BOLD   "1"
#define CLI_RED    "31"
#define CLI_GREEN  "32"
#define CLI_YELLOW "33"
#define CLI_BLUE   "34"
#define CLI_DIM    "2"

/* Write `s` to `f`, wrapped in the SGR `color` when `on` and color != NULL. */
void cli_put_color(FILE *f, int on, const char *color, const char *s);

/* The colour conventionally used for an outcome status / verdict / result. */
const char *cli_status_color(const char *word);

/*
 * An aligned table: cells are copied; widths are computed at print time
 * (on the text without colour). Columns are separated by two spaces; the
 * last column is not padded. Right-aligned columns suit numbers.
 */
typedef struct cli_table cli_table;

int cli_table_new(cli_table **out, size_t columns);
/* Mark column `col` right-aligned. */
void cli_table_align_right(cli_table *t, size_t col);
/* Append a cell to the current row; a row ends after `columns` cells. */
int cli_table_cell(cli_table *t, const char *text);
int cli_table_cell_color(cli_table *t, const char *color, const char *text);
int cli_table_cellf(cli_table *t, const char *fmt, ...) DOCKET_PRINTF(2, 3);
/* A row of one text that spans the table and does not count for the widths
 * (a heading); call it only between rows. */
int cli_table_span(cli_table *t, const char *color, const char *text);
/* The first row is the header (printed bold with colour) when `header`. */
void cli_table_print(const cli_table *t, FILE *f, int color, int header);

/* The width of UTF-8 text in terminal columns (one per code point). */
size_t cli_text_width(const char *s);
void cli_table_free(cli_table *t);

/* Write one JSON value compactly and a newline; -1 on failure. */
int cli_json_line(FILE *f, const json_t *value);
/* Same, indented, for one-object outputs. */
int cli_json_pretty(FILE *f, const json_t *value);

/*
 * Print `value` (owned; NULL means it could not be built) indented to
 * stdout. Returns CLI_EXIT_OK, or the exit code for "cannot write output".
 */
int cli_print_json(json_t *value);
/*
 * Write `value` (owned; NULL: out of memory) as one line to stdout, from a
 * ledger callback: 0, or a DOCKET_E* code with the message set.
 */
int cli_put_json_line(json_t *value);

/* A JSON string, or null for NULL and "". */
json_t *cli_json_nonempty(const char *s);
/* `s`, or "-" for NULL and "" (a table cell with nothing in it). */
const char *cli_or_dash(const char *s);

/* ---- listings ------------------------------------------------------------ */

/*
 * A command that lists records from a ledger callback (pending, sessions):
 * with --json one object per line as they come, else a table with a header
 * row printed at the end, or a "none" line when there was nothing.
 */
typedef struct cli_listing {
	int json;
	cli_table *table;  /* NULL with json */
	size_t count;      /* records seen */
} cli_listing;

/* Start a listing; the table gets `columns` and the header row. Returns an
 * exit code (0 on success); cli_listing_dispose() in any case. */
int cli_listing_begin(cli_listing *l, int json, const char *const *header, size_t columns);
/* Print the table, or `none` when no record came (nothing with json). */
void cli_listing_end(const cli_listing *l, int color, const char *none);
void cli_listing_dispose(cli_listing *l);

/* ---- sessions and pending calls (cmd_sessions.c, cmd_pending.c) ----------- */

/*
 * The rows of `docket sessions` and `docket pending`, shared with their
 * fleet twins. `origin` (NULL for a local ledger) names the ledger a row
 * comes from: --json rows get "ledger" and "host", tables a HOST column.
 */
typedef struct cli_origin {
	const char *ledger;
	const char *host;
} cli_origin;

/* Start the listing (exit code); `fleet`: with the HOST column. */
int cli_sessions_begin(cli_listing *l, int json, int fleet);
int cli_sessions_row(cli_listing *l, const docket_session_info *s, const cli_origin *origin);
int cli_pending_begin(cli_listing *l, int json, int fleet);
int cli_pending_row(cli_listing *l, const docket_pending_info *p, const cli_origin *origin);

/* Events for a printer: `read` hands each to `cb` in order (a local ledger,
 * or the fleet database). */
typedef int (*cli_event_read)(void *rctx, docket_json_cb cb, void *cbctx);

/*
 * `docket show` of one session (cmd_show.c; `fleet show` reads it from the
 * fleet database). Returns an exit code.
 */
int cli_show_session(cli_event_read read, void *rctx, const char *session, int json, int color,
		     const cli_origin *origin);

/*
 * `docket log`'s lines (cmd_log.c): --json as the events come, else a table
 * (`read` is called twice: once to measure the columns, once to print);
 * `with_host` adds a HOST column from each event's "host" (fleet log).
 * Returns 0 or the DOCKET_E* code of `read`.
 */
int cli_log_print(cli_event_read read, void *rctx, int json, int color, int with_host);

/* ---- time -------------------------------------------------------------- */

/*
 * Parse an RFC 3339 timestamp ("2025-03-14T09:26:53.120Z", offsets allowed)
 * into milliseconds since the Unix epoch, with range checks on every field.
 * Returns 0 or -1 when `s` is not a valid timestamp.
 */
int cli_time_parse(const char *s, int64_t *out_ms);

/* A human duration: "41ms", "1.25s", "12.4s", "3m05s", "2h04m", "-" when < 0. */
void cli_duration(char *out, size_t n, int64_t ms);

/* ---- small JSON accessors (NULL/"" safe) ------------------------------- */

int cli_jint(const json_t *obj, const char *key, int64_t *out); /* 0 if present */

/*
 * A one-line summary of what a tool call does: "git status" for a shell
 * call, the paths of an apply_patch, the URL of a network call ... at most
 * `max` columns (ending in "...").
 */
int cli_call_summary(char **out, const char *tool, const json_t *args, size_t max);

/* What to check about a call in doubt: dispatched with no outcome, or let
 * through by a live hook with none (docket_recover_let_through); `pending`
 * and `show` say it. */
#define CLI_IN_DOUBT_CHECK "dispatched and no outcome came: check whether it ran " \
	"(docket recover decides by its recovery mode)"
#define CLI_LET_THROUGH_CHECK "a hook let it through at PreToolUse and no outcome came: check whether it ran " \
	"(docket recover settles it)"

#endif
