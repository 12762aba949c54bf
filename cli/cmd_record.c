/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_record.c: `docket record [FILE...]`: append JSON-lines events.
 *
 * All or nothing, in one transaction: every input is read whole, its lines
 * parsed on two threads (simdjson; jansson for the lines it cannot decide and
 * to say what is wrong with a bad one) while the command's thread appends
 * the events in order as they become ready (ledger_append_stream). A line
 * that is no event stops the append and aborts the transaction; then every
 * line is judged as before: bad lines first (up to ten reported), else the
 * first object that is no event, else the ledger's refusal, each named
 * file:line, and nothing is written.
 */
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger/ledger_internal.h"
#include "runtime/call_schema.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define MAX_REPORTED 10
#define PROGRESS_EVERY 100000
#define PARALLEL_MIN 4096   /* lines: below this, parse on this thread first */
#define CHUNK 1024          /* lines a parse thread takes at a time */
#define PARSERS 2

/* One non-blank input line, and what parsing made of it. */
typedef struct line_job {
	const char *text;
	size_t len;
	const char *file;  /* display name, borrowed from argv (or "<stdin>") */
	size_t line;       /* 1-based */
	docket_event *ev;  /* its event, or NULL */
	size_t rest_off, rest_len; /* its event_pack_rest() in its chunk's buffer */
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
		if (docket_blank_line(start, len))
			continue;
		if (jobs->n == jobs->cap) {
			line_job *nv = docket_array_grow(jobs->v, &jobs->cap, sizeof(*nv), 1024);

			if (!nv)
				return DOCKET_ENOMEM;
			jobs->v = nv;
		}
		memset(&jobs->v[jobs->n], 0, sizeof(jobs->v[0]));
		jobs->v[jobs->n].text = start;
		jobs->v[jobs->n].len = len;
		jobs->v[jobs->n].file = name;
		jobs->v[jobs->n++].line = line;
	}
	return 0;
}

typedef struct job_range {
	line_job *v;
	size_t n;
} job_range;

static void *jobs_free_range(void *arg)
{
	job_range *r = arg;

	for (size_t i = 0; i < r->n; i++) {
		docket_event_free(r->v[i].ev);
		docket_free(r->v[i].why);
		docket_free(r->v[i].refused);
	}
	return NULL;
}

/* The events are freed on two threads when there are many (freeing 200k
 * events was 5% of a bulk record's wall time on one). */
static void jobs_dispose(line_jobs *jobs)
{
	job_range half = { jobs->v, jobs->n / 2 }, rest = { jobs->v + jobs->n / 2, jobs->n - jobs->n / 2 };
	pthread_t th;
	int threaded = jobs->n >= PARALLEL_MIN && pthread_create(&th, NULL, jobs_free_range, &half) == 0;

	if (!threaded)
		rest = (job_range){ jobs->v, jobs->n };
	jobs_free_range(&rest);
	if (threaded)
		pthread_join(th, NULL);
	docket_free(jobs->v);
}

/* What the object is not, when it is not an event. */
static void refuse_job(line_job *j, int error)
{
	j->ev = NULL;
	j->refused_error = error;
	if (!(j->refused = docket_strdup(docket_error_last()->message)))
		j->error = DOCKET_ENOMEM;
}

/* A canonical tool's args must fit docs/call.schema.json (issue 28). */
static void check_call_schema(line_job *j)
{
	int error;

	if ((error = call_schema_check_event("tool.intent", j->ev)) < 0) {
		docket_event_free(j->ev);
		refuse_job(j, error);
	}
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
		else
			check_call_schema(j);
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
	else
		check_call_schema(j);
	json_decref(ev);
}

/*
 * The parse threads and the append meet here: the threads take chunks of
 * CHUNK lines in order and mark each done; the append (on the command's
 * thread, ledger_append_stream) waits for the chunk of the event it needs.
 * So the lines are parsed on both cores while the transaction is written.
 */
typedef struct parse_pool {
	line_job *jobs;
	size_t n;
	docket_event **events;   /* events[i]: jobs[i].ev, once the append reached it */
	size_t nchunks, next;    /* next chunk to take */
	unsigned char *done;     /* per chunk */
	docket_buf *packed;      /* per chunk: its events packed without time and
				  * epoch, so the append does not pack them */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t th[PARSERS];
	int nthreads;
} parse_pool;

static void *parse_main(void *arg)
{
	parse_pool *p = arg;
	docket_json_tape *tape = docket_json_tape_new();

	for (;;) {
		size_t c, end;

		pthread_mutex_lock(&p->lock);
		c = p->next < p->nchunks ? p->next++ : p->nchunks;
		pthread_mutex_unlock(&p->lock);
		if (c == p->nchunks)
			break;
		end = (c + 1) * CHUNK < p->n ? (c + 1) * CHUNK : p->n;
		for (size_t i = c * CHUNK; i < end; i++) {
			line_job *j = &p->jobs[i];

			parse_job(j, tape);
			j->rest_off = p->packed[c].len;
			/* on failure the append packs it, as it does a dispatch
			 * (it assigns the attempt and the token) */
			if (j->ev && j->ev->body_case != DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED &&
			    event_pack_rest(&p->packed[c], j->ev) == 0)
				j->rest_len = p->packed[c].len - j->rest_off;
		}
		pthread_mutex_lock(&p->lock);
		p->done[c] = 1;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
	docket_json_tape_free(tape);
	return NULL;
}

/* ledger_wait_fn: events[i] once its line is parsed; <0 if it is no event
 * (the append stops, the input is refused: reported from the jobs). */
static int wait_line(void *ctx, size_t i, docket_slice *rest)
{
	parse_pool *p = ctx;
	size_t c = i / CHUNK;

	pthread_mutex_lock(&p->lock);
	while (!p->done[c])
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (!p->jobs[i].ev)
		return docket_error_set(DOCKET_EINVALID, "%s:%zu: not an event", p->jobs[i].file, p->jobs[i].line);
	p->events[i] = p->jobs[i].ev;
	rest->ptr = (const uint8_t *)p->packed[c].ptr + p->jobs[i].rest_off;
	rest->len = p->jobs[i].rest_len;
	return 0;
}

static int pool_start(parse_pool *p, line_jobs *jobs)
{
	memset(p, 0, sizeof(*p));
	p->jobs = jobs->v;
	p->n = jobs->n;
	p->nchunks = (jobs->n + CHUNK - 1) / CHUNK;
	if (!(p->done = docket_calloc(p->nchunks, 1)) || !(p->events = docket_calloc(p->n, sizeof(*p->events))) ||
	    !(p->packed = docket_calloc(p->nchunks, sizeof(*p->packed)))) {
		docket_free(p->done);
		docket_free(p->events);
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* jansson seeds its hash function at the first object: do that here,
	 * before there are more threads */
	json_decref(json_object());
	for (int t = 0; t < PARSERS && p->n >= PARALLEL_MIN; t++)
		if (pthread_create(&p->th[p->nthreads], NULL, parse_main, p) == 0)
			p->nthreads++;
	if (p->nthreads == 0)
		parse_main(p); /* a small input (or no threads): parse it all first */
	return 0;
}

/* Every line parsed (the threads joined); then the pool's memory goes. */
static void pool_finish(parse_pool *p)
{
	for (int t = 0; t < p->nthreads; t++)
		pthread_join(p->th[t], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	docket_free(p->done);
	docket_free(p->events);
	for (size_t c = 0; c < p->nchunks; c++)
		docket_buf_dispose(&p->packed[c]);
	docket_free(p->packed);
}

/* What the parse found wrong, in input order. */
typedef struct verdict {
	size_t bad;            /* lines that are no JSON object */
	const line_job *refused; /* the first object that is no event */
	int error;             /* <0: a system error */
} verdict;

static void judge_lines(verdict *v, const line_jobs *jobs, int progress)
{
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < jobs->n; i++) {
		const line_job *j = &jobs->v[i];

		if (v->error == 0 && j->error < 0)
			v->error = docket_error_set(j->error, "out of memory");
		if (j->why) {
			if (v->bad < MAX_REPORTED) {
				if (progress)
					fputs("\r\033[K", stderr);
				cli_error("%s:%zu: %s", j->file, j->line, j->why);
			}
			v->bad++;
		}
		if (j->refused && !v->refused)
			v->refused = j;
	}
}

/* Read one input whole into `text`; its lines join `jobs`. */
static int read_input(const char *path, int *stdin_used, docket_buf *text, line_jobs *jobs)
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
	if ((error = collect_lines(jobs, name, text)) < 0)
		return cli_fail(error, "cannot read the input");
	return CLI_EXIT_OK;
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
	docket_append_result *results = NULL;
	docket_ledger *ledger = NULL;
	docket_buf *texts = NULL;
	line_jobs jobs = { NULL, 0, 0 };
	parse_pool pool;
	verdict v;
	uint64_t first = 0, last = 0;
	size_t i, dups = 0, added = 0;
	int rc, error, stdin_used = 0, progress, pooled = 0;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (files.n == 0) {
		files.v = stdin_argv;
		files.n = 1;
	}
	if ((rc = cli_open_ledger(&ledger, g, 0)) != CLI_EXIT_OK)
		return rc;
	progress = isatty(fileno(stderr));
	if (!(texts = docket_calloc((size_t)files.n, sizeof(*texts)))) {
		cli_error("out of memory");
		rc = CLI_EXIT_SYSTEM;
		goto cleanup;
	}
	for (i = 0; i < (size_t)files.n; i++)
		if ((rc = read_input(files.v[i], &stdin_used, &texts[i], &jobs)) != CLI_EXIT_OK)
			goto cleanup;
	if (jobs.n == 0) {
		printf("recorded 0 events\n");
		rc = CLI_EXIT_OK;
		goto cleanup;
	}
	if (!(results = docket_calloc(jobs.n, sizeof(*results))) || pool_start(&pool, &jobs) < 0) {
		cli_error("out of memory");
		rc = CLI_EXIT_SYSTEM;
		goto cleanup;
	}
	pooled = 1;
	if (progress && jobs.n >= PROGRESS_EVERY)
		fprintf(stderr, "\rdocket: recording %zu lines in one transaction...\033[K", jobs.n);
	docket_error_clear();
	error = ledger_append_stream(ledger, pool.events, jobs.n, results, wait_line, &pool);
	if (progress && jobs.n >= PROGRESS_EVERY)
		fputs("\r\033[K", stderr);
	pool_finish(&pool);
	pooled = 0;
	{
		docket_error appended = *docket_error_last();

		/* a line that is no event stopped the append: say what the lines are */
		judge_lines(&v, &jobs, progress);
		if (v.error < 0) {
			rc = cli_fail(v.error, "cannot read the input");
			goto cleanup;
		}
		if (v.bad > 0) {
			if (v.bad > MAX_REPORTED)
				cli_error("... and %zu more bad lines", v.bad - MAX_REPORTED);
			cli_error("%zu bad line%s: nothing recorded", v.bad, v.bad == 1 ? "" : "s");
			rc = CLI_EXIT_USAGE;
			goto cleanup;
		}
		if (v.refused) {
			/* what docket_ledger_append_json says of an object that is no event */
			cli_error("%s:%zu: %s", v.refused->file, v.refused->line, v.refused->refused);
			cli_error("nothing recorded");
			rc = cli_exit_code(v.refused->refused_error);
			goto cleanup;
		}
		if (error < 0) {
			const char *msg = appended.message[0] ? appended.message : "the ledger refused the input";
			size_t idx = appended.event_index;

			if (idx >= 1 && idx <= jobs.n)
				cli_error("%s:%zu: %s", jobs.v[idx - 1].file, jobs.v[idx - 1].line,
					  strip_event_prefix(msg));
			else
				cli_error("%s", msg);
			cli_error("nothing recorded");
			rc = cli_exit_code(error);
			goto cleanup;
		}
	}

	for (i = 0; i < jobs.n; i++) {
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
	if (pooled)
		pool_finish(&pool);
	for (i = 0; texts && i < (size_t)files.n; i++)
		docket_buf_dispose(&texts[i]);
	docket_free(texts);
	jobs_dispose(&jobs);
	docket_free(results);
	docket_ledger_free(ledger);
	return rc;
}
