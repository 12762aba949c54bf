/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_record.c: `docket record [FILE...]`: append JSON-lines events.
 *
 * All or nothing: every line of every input is parsed first; only when all
 * of them are JSON objects are the events handed to the ledger, in one call,
 * which appends them in one transaction or rejects them all. Every error
 * names file:line. The work is linear in the input: each file is read once
 * into one buffer, each line parsed once (simdjson; jansson for the lines it
 * cannot decide and to say what is wrong with a bad one) and turned into its
 * event (on two threads for a large input), the events kept in one array.
 */
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger/ledger_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define MAX_REPORTED 10

typedef struct origin {
	const char *file;  /* display name, borrowed from argv (or "<stdin>") */
	size_t line;       /* 1-based */
} origin;

/* The first line that parsed but is not an event (reported only when every
 * line parses, as the ledger would have refused it). */
typedef struct refusal {
	int error;         /* 0: none */
	char *why;         /* malloc'd */
	origin where;
} refusal;

typedef struct record_input {
	docket_event **events;
	origin *where;
	size_t n;
	size_t cap;
	size_t bad;        /* lines that did not parse */
	refusal refused;
	int progress;      /* show progress on stderr (a TTY) */
} record_input;

#define PROGRESS_EVERY 100000
#define PARALLEL_MIN 4096   /* lines: below this, parse on one thread */

static int input_push(record_input *in, docket_event *ev, const char *file, size_t line)
{
	if (in->n == in->cap) {
		size_t ncap = in->cap ? in->cap * 2 : 1024;
		docket_event **nev;
		origin *nwhere;

		if (ncap > SIZE_MAX / sizeof(origin))
			return docket_error_set(DOCKET_ENOMEM, "too many events");
		nev = docket_realloc(in->events, ncap * sizeof(*nev));
		if (!nev)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		in->events = nev;
		nwhere = docket_realloc(in->where, ncap * sizeof(origin));
		if (!nwhere)
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		in->where = nwhere;
		in->cap = ncap;
	}
	in->events[in->n] = ev;
	in->where[in->n].file = file;
	in->where[in->n].line = line;
	in->n++;
	return 0;
}

static void input_dispose(record_input *in)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		docket_event_free(in->events[i]);
	docket_free(in->events);
	docket_free(in->where);
	docket_free(in->refused.why);
}

static void report_bad(record_input *in, const char *file, size_t line, const char *why)
{
	if (in->bad < MAX_REPORTED) {
		if (in->progress)
			fputs("\r\033[K", stderr);
		cli_error("%s:%zu: %s", file, line, why);
	}
	in->bad++;
}

static int is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* One non-blank input line, and what parsing made of it. */
typedef struct line_job {
	const char *text;
	size_t len;
	const char *file;
	size_t line;
	docket_event *ev;  /* its event, or NULL */
	char *why;         /* why it is not a JSON object (malloc'd), or NULL */
	char *refused;     /* why the object is not an event (malloc'd), or NULL */
	int refused_error; /* and the error code of that */
	int error;         /* <0: a system error (out of memory) */
} line_job;

typedef struct line_jobs {
	line_job *v;
	size_t n, cap;
} line_jobs;

/* The non-blank lines of one input, in order. */
static int collect_lines(line_jobs *jobs, const char *name, const docket_buf *text)
{
	size_t pos = 0, line = 0;

	while (pos < text->len) {
		const char *start = text->ptr + pos;
		const char *nl = memchr(start, '\n', text->len - pos);
		size_t len = nl ? (size_t)(nl - start) : text->len - pos;

		line++;
		pos += len + (nl ? 1 : 0);
		if (is_blank(start, len))
			continue;
		if (jobs->n == jobs->cap) {
			size_t ncap = jobs->cap ? jobs->cap * 2 : 1024;
			line_job *nv = docket_realloc(jobs->v, ncap * sizeof(*nv));

			if (!nv)
				return docket_error_set(DOCKET_ENOMEM, "out of memory");
			jobs->v = nv;
			jobs->cap = ncap;
		}
		memset(&jobs->v[jobs->n], 0, sizeof(jobs->v[0]));
		jobs->v[jobs->n].text = start;
		jobs->v[jobs->n].len = len;
		jobs->v[jobs->n].file = name;
		jobs->v[jobs->n++].line = line;
	}
	return 0;
}

/* What the object is not, when it is not an event. */
static void refuse_job(line_job *j, int error)
{
	j->ev = NULL;
	j->refused_error = error;
	if (!(j->refused = docket_strdup(docket_error_last()->message)))
		j->error = DOCKET_ENOMEM;
}

/* One line through simdjson (`tape`, NULL: none), or, when simdjson cannot
 * decide it (not JSON, not an object, a text jansson reads differently),
 * through jansson, which also says what is wrong with a bad line. */
static void parse_job(line_job *j, docket_json_tape *tape)
{
	json_t *ev = NULL;
	int error;

	docket_error_clear();
	if (tape && (error = docket_event_from_text(&j->ev, tape, j->text, j->len)) <= 0) {
		if (error < 0)
			refuse_job(j, error);
		return;
	}
	if ((error = docket_json_parse(&ev, j->text, j->len)) < 0) {
		if (error != DOCKET_EINVALID)
			j->error = error;
		else if (!(j->why = docket_strdup(docket_error_last()->message)))
			j->error = DOCKET_ENOMEM;
		return;
	}
	if (!json_is_object(ev)) {
		char why[64];

		snprintf(why, sizeof(why), "an event is a JSON object, not %s %s",
			 json_is_array(ev) || json_is_integer(ev) ? "an" : "a", docket_json_type_name(ev));
		json_decref(ev);
		if (!(j->why = docket_strdup(why)))
			j->error = DOCKET_ENOMEM;
		return;
	}
	docket_error_clear();
	if ((error = docket_event_from_json(&j->ev, ev)) < 0)
		refuse_job(j, error);
	json_decref(ev);
}

typedef struct parse_part {
	line_job *v;
	size_t n;
} parse_part;

static void *parse_part_main(void *arg)
{
	parse_part *p = arg;
	docket_json_tape *tape = docket_json_tape_new();

	for (size_t i = 0; i < p->n; i++)
		parse_job(&p->v[i], tape);
	docket_json_tape_free(tape);
	return NULL;
}

/*
 * Parse every line, on two threads when the input is large enough to pay:
 * each thread a contiguous half, so the results stay in input order. Lines
 * go through simdjson (no tree is built; docs/performance.md has the
 * figures), the few it cannot decide through jansson.
 */
static void parse_lines(line_jobs *jobs)
{
	parse_part second = { jobs->v + jobs->n / 2, jobs->n - jobs->n / 2 };
	parse_part first = { jobs->v, jobs->n / 2 };
	pthread_t th;

	/* jansson seeds its hash function at the first object: do that here,
	 * before there are two threads */
	json_decref(json_object());
	if (jobs->n < PARALLEL_MIN || pthread_create(&th, NULL, parse_part_main, &second) != 0) {
		first.n = jobs->n;
		parse_part_main(&first);
		return;
	}
	parse_part_main(&first);
	pthread_join(th, NULL);
}

/* The parsed lines into `in`, in order; bad ones reported and counted.
 * Returns <0 only for system errors. Frees what it does not keep. */
static int take_lines(record_input *in, line_jobs *jobs)
{
	int error = 0;

	for (size_t i = 0; i < jobs->n; i++) {
		line_job *j = &jobs->v[i];

		if (error == 0 && j->error < 0)
			error = docket_error_set(j->error, "out of memory");
		if (error == 0 && j->why)
			report_bad(in, j->file, j->line, j->why);
		docket_free(j->why);
		if (j->refused && !in->refused.error) {
			in->refused.error = j->refused_error;
			in->refused.why = j->refused;
			in->refused.where.file = j->file;
			in->refused.where.line = j->line;
		} else {
			docket_free(j->refused);
		}
		if (j->ev && (error < 0 || in->bad > 0 || in->refused.error)) {
			/* the input is refused anyway: parsed only to report */
			docket_event_free(j->ev);
		} else if (j->ev && (error = input_push(in, j->ev, j->file, j->line)) < 0) {
			docket_event_free(j->ev);
		}
	}
	jobs->n = 0;
	return error;
}

/* Parse the lines of one input (`text`, alive until this returns). Returns
 * <0 only for system errors; bad lines are reported and counted. */
static int parse_input(record_input *in, line_jobs *jobs, const char *name, const docket_buf *text)
{
	int error;

	if ((error = collect_lines(jobs, name, text)) < 0)
		return error;
	if (in->progress && jobs->n >= PROGRESS_EVERY)
		fprintf(stderr, "\rdocket: reading %s: %zu lines", name, jobs->n);
	parse_lines(jobs);
	return take_lines(in, jobs);
}

/*
 * The ledger names the event it refused by its 1-based index in the batch
 * (docket_error.event_index) and starts its message with "event I of N: ".
 * The CLI names file:line instead, so that prefix is dropped.
 */
static const char *strip_event_prefix(const char *msg)
{
	const char *p = msg;

	if (strncmp(p, "event ", 6) != 0)
		return msg;
	p += 6;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, " of ", 4) != 0)
		return msg;
	p += 4;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, ": ", 2) != 0)
		return msg;
	return p + 2;
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
	record_input in = { NULL, NULL, 0, 0, 0, { 0, NULL, { NULL, 0 } }, 0 };
	docket_append_result *results = NULL;
	docket_ledger *ledger = NULL;
	docket_buf text = DOCKET_BUF_INIT;
	line_jobs jobs = { NULL, 0, 0 };
	uint64_t first = 0, last = 0;
	size_t i, dups = 0, added = 0;
	int rc, error, stdin_used = 0;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (files.n == 0) {
		files.v = stdin_argv;
		files.n = 1;
	}
	if ((rc = cli_open_ledger(&ledger, g, 0)) != CLI_EXIT_OK)
		return rc;
	in.progress = isatty(fileno(stderr));

	for (i = 0; i < (size_t)files.n; i++) {
		const char *path = files.v[i];
		const char *name = path;
		struct stat st;
		FILE *f;

		if (strcmp(path, "-") == 0) {
			if (stdin_used) {
				cli_error("standard input can be read only once");
				rc = CLI_EXIT_USAGE;
				goto cleanup;
			}
			stdin_used = 1;
			f = stdin;
			name = "<stdin>";
		} else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			cli_error("%s: is a directory", path);
			rc = CLI_EXIT_USAGE;
			goto cleanup;
		} else if (!(f = fopen(path, "rb"))) {
			cli_error("%s: %s", path, strerror(errno));
			rc = errno == ENOENT || errno == EISDIR ? CLI_EXIT_USAGE : CLI_EXIT_SYSTEM;
			goto cleanup;
		}
		docket_buf_clear(&text);
		error = docket_buf_read_stream(&text, f);
		if (f != stdin)
			fclose(f);
		if (error < 0) {
			cli_error("%s: %s", name, docket_error_last()->message);
			rc = cli_exit_code(error);
			goto cleanup;
		}
		error = text.len > 0 ? parse_input(&in, &jobs, name, &text) : 0;
		if (in.progress && text.len > 0)
			fputs("\r\033[K", stderr);
		if (error < 0) {
			rc = cli_fail(error, "cannot read the input");
			goto cleanup;
		}
	}
	docket_buf_dispose(&text);

	if (in.bad > 0) {
		if (in.bad > MAX_REPORTED)
			cli_error("... and %zu more bad lines", in.bad - MAX_REPORTED);
		cli_error("%zu bad line%s: nothing recorded", in.bad, in.bad == 1 ? "" : "s");
		rc = CLI_EXIT_USAGE;
		goto cleanup;
	}
	if (in.refused.error) {
		/* what docket_ledger_append_json says of an object that is no event */
		cli_error("%s:%zu: %s", in.refused.where.file, in.refused.where.line, in.refused.why);
		cli_error("nothing recorded");
		rc = cli_exit_code(in.refused.error);
		goto cleanup;
	}
	if (in.n == 0) {
		printf("recorded 0 events\n");
		rc = CLI_EXIT_OK;
		goto cleanup;
	}

	if (!(results = docket_calloc(in.n, sizeof(*results)))) {
		cli_error("out of memory");
		rc = CLI_EXIT_SYSTEM;
		goto cleanup;
	}
	if (in.progress && in.n >= PROGRESS_EVERY)
		fprintf(stderr, "\rdocket: appending %zu events in one transaction...\033[K", in.n);
	docket_error_clear();
	error = ledger_append(ledger, in.events, in.n, results);
	if (in.progress && in.n >= PROGRESS_EVERY)
		fputs("\r\033[K", stderr);
	if (error < 0) {
		const docket_error *e = docket_error_last();
		const char *msg = e->message[0] ? e->message : "the ledger refused the input";
		size_t idx = e->event_index;

		if (idx >= 1 && idx <= in.n)
			cli_error("%s:%zu: %s", in.where[idx - 1].file, in.where[idx - 1].line,
				  strip_event_prefix(msg));
		else
			cli_error("%s", msg);
		cli_error("nothing recorded");
		rc = cli_exit_code(error);
		goto cleanup;
	}

	for (i = 0; i < in.n; i++) {
		if (results[i].duplicate) {
			dups++;
			continue;
		}
		if (added == 0 || results[i].seq < first)
			first = results[i].seq;
		if (added == 0 || results[i].seq > last)
			last = results[i].seq;
		added++;
	}
	printf("recorded %zu event%s", added, added == 1 ? "" : "s");
	if (added > 0 && first == last)
		printf(" (seq %llu)", (unsigned long long)first);
	else if (added > 0)
		printf(" (seq %llu..%llu)", (unsigned long long)first, (unsigned long long)last);
	if (dups > 0)
		printf(", %zu duplicate%s already recorded", dups, dups == 1 ? "" : "s");
	putchar('\n');
	rc = CLI_EXIT_OK;

cleanup:
	docket_buf_dispose(&text);
	docket_free(jobs.v);
	docket_free(results);
	input_dispose(&in);
	docket_ledger_free(ledger);
	return rc;
}
