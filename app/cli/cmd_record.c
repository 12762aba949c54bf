/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_record.c: `docket record [FILE...]`: append JSON-lines events.
 *
 * All or nothing, in one transaction: every input is read whole, then
 * ledger_record (lib/ledger/record.c) parses its lines on two threads while
 * it appends; a bad line or a refused event is named file:line and nothing
 * is written.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger/ledger_sys.h"
#include "runtime/call_schema.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

/* Read one input whole into `text`, named `in` (a path, or "<stdin>"). */
static int read_input(const char *path, int *stdin_used, docket_buf *text, ledger_record_input *in)
{
	const char *name = path;
	struct stat st;
	FILE *f;
	int error;

	if (strcmp(path, "-") == 0) {
		if (*stdin_used) {
			cli_error("standard input can be read only once");
			return CLI_EXIT_USAGE;
		}
		*stdin_used = 1;
		f = stdin;
		name = "<stdin>";
	} else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		cli_error("%s: is a directory", path);
		return CLI_EXIT_USAGE;
	} else if (!(f = fopen(path, "rb"))) {
		cli_error("%s: %s", path, strerror(errno));
		return errno == ENOENT || errno == EISDIR ? CLI_EXIT_USAGE : CLI_EXIT_SYSTEM;
	}
	error = docket_buf_read_stream(text, f);
	if (f != stdin)
		fclose(f);
	if (error < 0) {
		cli_error("%s: %s", name, docket_error_last()->message);
		return cli_exit_code(error);
	}
	in->name = name;
	in->text = text->ptr;
	in->len = text->len;
	return CLI_EXIT_OK;
}

/* A canonical tool's args must fit docs/call.schema.json, as serve checks
 * them (issue 28). */
static int record_check(const docket_event *ev)
{
	return call_schema_check_event("tool.intent", ev);
}

static void record_progress(void *ctx, size_t lines)
{
	(void)ctx;
	if (lines > 0)
		fprintf(stderr, "\rdocket: recording %zu lines in one transaction...\033[K", lines);
	else
		fputs("\r\033[K", stderr);
}

/* Why nothing was recorded, each line named file:line. */
static int report_refusal(const ledger_record_report *rep, int error)
{
	for (size_t i = 0; i < rep->nreported; i++)
		cli_error("%s:%zu: %s", rep->reported[i].file, rep->reported[i].line, rep->reported[i].message);
	if (rep->bad > 0) {
		if (rep->bad > rep->nreported)
			cli_error("... and %zu more bad lines", rep->bad - rep->nreported);
		cli_error("%zu bad line%s: nothing recorded", rep->bad, rep->bad == 1 ? "" : "s");
		return CLI_EXIT_USAGE;
	}
	if (!rep->refused)
		return cli_fail(error, "cannot record the input");
	if (rep->refusal.file)
		cli_error("%s:%zu: %s", rep->refusal.file, rep->refusal.line, rep->refusal.message);
	else
		cli_error("%s", rep->refusal.message);
	cli_error("nothing recorded");
	return cli_exit_code(error);
}

int cmd_record(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Reads events, one JSON object per line, from each FILE in turn\n"
		"or from standard input (no FILE, or '-'). Blank lines are skipped. The\n"
		"whole input is checked first and appended in one transaction: a bad line\n"
		"or an event the ledger refuses (an invariant, a stale epoch, an unknown\n"
		"field) is reported as file:line and nothing is written (exit 2).\n"
		"Re-sending events that are already recorded is harmless: they are counted\n"
		"as duplicates.\n";
	cli_args files = { NULL, 0 };
	const cli_opt opts[] = {
		{ CLI_OPT_ARGS, "FILE", 0, &files, NULL, "JSON-lines files ('-': standard input)", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	static char stdin_name[] = "-";
	char *stdin_argv[1] = { stdin_name };
	docket_ledger *ledger = NULL;
	docket_buf *texts = NULL;
	ledger_record_input *inputs = NULL;
	ledger_record_report rep;
	size_t i;
	int rc, error, stdin_used = 0;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (files.n == 0) {
		files.v = stdin_argv;
		files.n = 1;
	}
	if ((rc = cli_open_ledger(&ledger, g, 0)) != CLI_EXIT_OK)
		return rc;
	if (!(texts = docket_calloc((size_t)files.n, sizeof(*texts))) ||
	    !(inputs = docket_calloc((size_t)files.n, sizeof(*inputs)))) {
		cli_error("out of memory");
		rc = CLI_EXIT_SYSTEM;
		goto cleanup;
	}
	for (i = 0; i < (size_t)files.n; i++)
		if ((rc = read_input(files.v[i], &stdin_used, &texts[i], &inputs[i])) != CLI_EXIT_OK)
			goto cleanup;
	if ((error = ledger_record(ledger, inputs, (size_t)files.n, record_check, &rep,
				   isatty(fileno(stderr)) ? record_progress : NULL, NULL)) < 0) {
		rc = report_refusal(&rep, error);
		goto cleanup;
	}
	printf("recorded %zu event%s", rep.added, rep.added == 1 ? "" : "s");
	if (rep.added > 0 && rep.first == rep.last)
		printf(" (seq %llu)", (unsigned long long)rep.first);
	else if (rep.added > 0)
		printf(" (seq %llu..%llu)", (unsigned long long)rep.first, (unsigned long long)rep.last);
	if (rep.duplicates > 0)
		printf(", %zu duplicate%s already recorded", rep.duplicates, rep.duplicates == 1 ? "" : "s");
	putchar('\n');
	rc = CLI_EXIT_OK;

cleanup:
	for (i = 0; texts && i < (size_t)files.n; i++)
		docket_buf_dispose(&texts[i]);
	docket_free(texts);
	docket_free(inputs);
	docket_ledger_free(ledger);
	return rc;
}
