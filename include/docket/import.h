/* SPDX-License-Identifier: Apache-2.0 */
/*
 * import.h: agent transcripts become ledger sessions.
 *
 * Two formats: OpenAI Codex rollout files (~/.codex/sessions/.../rollout-*.jsonl)
 * and Claude Code session transcripts (~/.claude/projects/<project>/<id>.jsonl,
 * subagents in <id>/subagents/agent-*.jsonl). Each line is mapped to the
 * events of DESIGN §4 (session.opened, policy.revised, tool.intent,
 * approval.*, tool.dispatched, tool.completed) carrying the line's original
 * time and a provenance {file, line}; docs/import.md has the mapping tables.
 *
 * Imports are idempotent and incremental: the ledger remembers, per source
 * file, how far it was imported (and a hash of that prefix), so importing the
 * same file again adds nothing and importing a grown file appends only what
 * the new lines say. Malformed lines, unknown line types and unknown format
 * versions are counted and skipped; DOCKET_IMPORT_STRICT turns them into an
 * error before anything is written.
 */
#ifndef DOCKET_IMPORT_H
#define DOCKET_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "docket/common.h"
#include "docket/ledger.h"

typedef enum docket_import_format {
	DOCKET_IMPORT_CODEX = 1,   /* Codex CLI rollout JSONL */
	DOCKET_IMPORT_CLAUDE = 2   /* Claude Code transcript JSONL */
} docket_import_format;

/* "codex" / "claude"; NULL for other values. */
DOCKET_EXTERN const char *docket_import_format_name(docket_import_format format);
/* 0 and *out set, or DOCKET_EINVALID for an unknown name. */
DOCKET_EXTERN int docket_import_format_parse(docket_import_format *out, const char *name) DOCKET_MUST_USE;

/*
 * What a Codex tool output says about its call: the rollout's
 * function_call_output `output`, or a live PostToolUse hook's
 * `tool_response` (a string, or an object with an exit code, isError,
 * success). The same rules as the importer (docs/import.md): exit codes,
 * the user's rejection, Codex's own refusal, "aborted".
 */
typedef struct docket_import_outcome {
	const char *status;      /* ok error timeout denied cancelled (static) */
	int ran;                 /* the call was dispatched */
	int user_denied;         /* denied: the user said no at a prompt */
	int has_exit;
	json_int_t exit_code;
	int64_t duration_ms;     /* <0: unknown */
	const char *error;       /* a short static reason, or NULL */
} docket_import_outcome;

DOCKET_EXTERN int docket_import_codex_outcome(docket_import_outcome *out, const json_t *response) DOCKET_MUST_USE;

/*
 * The outcome of call `call_id` as the Codex rollout at `path` records it
 * (its function_call_output, else the exit code of its item_completed
 * event), from the last MiB of the file: what a live hook cannot see
 * (0.171's PostToolUse gives a shell call's output without its exit code).
 * DOCKET_ENOTFOUND when the rollout does not say it (yet).
 */
DOCKET_EXTERN int docket_import_codex_rollout_outcome(docket_import_outcome *out, const char *path,
						      const char *call_id) DOCKET_MUST_USE;

/*
 * The format of a transcript, from its first lines that are JSON objects (up
 * to 64 lines or 1 MiB): 0 and *out, or DOCKET_ENOTFOUND when no line is one
 * that only a Codex rollout or only a Claude Code transcript writes.
 */
DOCKET_EXTERN int docket_import_detect(docket_import_format *out, const char *data, size_t len) DOCKET_MUST_USE;

enum {
	/* Any malformed line, unknown line type or unknown version is an error
	 * (DOCKET_EINVALID naming the first one) and nothing is written. */
	DOCKET_IMPORT_STRICT = 1u << 0
};

/* Progress of a file being imported (for a progress line on a TTY). */
typedef void (*docket_import_progress_cb)(void *ctx, const char *file,
					  uint64_t done_bytes, uint64_t total_bytes);

typedef struct docket_import_options {
	unsigned int version;
	unsigned int flags;             /* DOCKET_IMPORT_* */
	size_t batch_bytes;             /* input bytes per transaction; 0: 16 MiB */
	docket_import_progress_cb progress;
	void *progress_ctx;
} docket_import_options;

#define DOCKET_IMPORT_OPTIONS_VERSION 1
#define DOCKET_IMPORT_OPTIONS_INIT { DOCKET_IMPORT_OPTIONS_VERSION, 0, 0, NULL, NULL }

/*
 * What an import did. Counters accumulate over calls (one stats for many
 * files). Calls, results and the outcome counters count what this import
 * mapped, i.e. the lines after the ones an earlier import already took.
 */
typedef struct docket_import_stats {
	uint64_t files;
	uint64_t bytes;            /* input bytes read */
	uint64_t lines;            /* lines read */
	uint64_t lines_resumed;    /* lines an earlier import had already taken */
	uint64_t sessions;         /* sessions opened */
	uint64_t policies;         /* policy revisions */
	uint64_t calls;            /* tool.intent */
	uint64_t results;          /* calls that got their outcome */
	uint64_t ok, errors, approvals, denials, cancelled;
	uint64_t orphans;          /* results whose call is unknown or already complete */
	uint64_t events;           /* events mapped */
	uint64_t appended;         /* events the ledger wrote */
	uint64_t duplicates;       /* events the ledger already had */
	uint64_t malformed;        /* lines that are not JSON objects or lack what they need */
	uint64_t unknown;          /* lines of unknown type, or of an unknown version */
	uint64_t incomplete;       /* a last line without newline that does not parse yet */
	char first_problem[512];   /* "file:line: why" of the first malformed/unknown line */
} docket_import_stats;

/*
 * Import one file into the ledger. Returns 0 (problems counted in `stats`),
 * DOCKET_EINVALID (strict mode with a problem: nothing written),
 * DOCKET_ENOTFOUND (no such file), DOCKET_ECONFLICT (the part imported earlier
 * changed: nothing written), a ledger error when the ledger refused a batch
 * (earlier batches of the file stay written; the message names file:line),
 * or DOCKET_ESTORAGE/DOCKET_ENOMEM.
 */
DOCKET_EXTERN int docket_import_file(docket_ledger *ledger, docket_import_format format, const char *path,
				     const docket_import_options *opts, docket_import_stats *stats) DOCKET_MUST_USE;

/*
 * Map `len` bytes of a transcript to events without a ledger (dry runs,
 * tests, fuzzing). `name` becomes provenance.file. `cb` receives each event
 * (a new reference the callback owns) and returns 0 to go on or <0 to stop
 * (that value is returned).
 */
typedef int (*docket_import_event_cb)(void *ctx, json_t *event);

DOCKET_EXTERN int docket_import_buffer(docket_import_format format, const char *name, const char *data,
				       size_t len, const docket_import_options *opts,
				       docket_import_event_cb cb, void *ctx, docket_import_stats *stats) DOCKET_MUST_USE;

/*
 * The canonical tool and args (DESIGN §4) an import records for one tool
 * call, for live capture to record the same: Claude Code's tool name and
 * input (DOCKET_IMPORT_CLAUDE), or a Codex hook's tool_name and tool_input
 * (DOCKET_IMPORT_CODEX: "Bash" with the script in "command", "apply_patch"
 * with the patch text in "command", MCP tools "mcp__SERVER__TOOL"). Other
 * tools keep their name and input. *tool is static or `name`; *args is a new
 * object. Errors: DOCKET_EINVALID (no name), DOCKET_ENOMEM.
 */
DOCKET_EXTERN int docket_import_map_tool(const char **tool, json_t **args, docket_import_format format,
			   const char *name, const json_t *input, const char *cwd) DOCKET_MUST_USE;

#endif
