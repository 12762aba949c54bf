/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record.c: `docket record`'s bulk append (ledger_sys.h: ledger_record).
 *
 * All or nothing, in one transaction: the inputs' non-blank lines are
 * parsed on two threads (simdjson; jansson for the lines it cannot decide
 * and to say what is wrong with a bad one) while the caller's thread
 * appends the events in order as they become ready (ledger_append_stream).
 * A line that is no event stops the append and aborts the transaction; then
 * every line is judged: bad lines first (up to LEDGER_RECORD_REPORTED
 * named), else the first object that is no event, else the ledger's
 * refusal, each named file:line, and nothing is written.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define PROGRESS_MIN 100000 /* lines: a record this large reports progress */

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
static int collect_lines(line_jobs *jobs, const char *name, const char *text, size_t size)
{
	size_t pos = 0, line = 0;

	while (pos < size) {
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - start) : size - pos;

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

/* The caller's check of a parsed event (ledger_record_check: the call
 * schema, docs/call.schema.json), run on the parse thread. */
static void check_event(line_job *j, ledger_record_check check)
{
	int error;

	if (check && (error = check(j->ev)) < 0) {
		docket_event_free(j->ev);
		refuse_job(j, error);
	}
}

/* One line through simdjson (`tape`, NULL: none), or, when simdjson cannot
 * decide it (not JSON, not an object, a text jansson reads differently),
 * through jansson, which also says what is wrong with a bad line. */
static void parse_job(line_job *j, docket_json_tape *tape, ledger_record_check check)
{
	json_t *ev = NULL;
	int error;

	docket_error_clear();
	if (tape && (error = docket_event_from_text(&j->ev, tape, j->text, j->len)) <= 0) {
		if (error < 0)
			refuse_job(j, error);
		else
			check_event(j, check);
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
		check_event(j, check);
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
	ledger_record_check check;  /* the caller's check of each event, or NULL */
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

			parse_job(j, tape, p->check);
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

static int pool_start(parse_pool *p, line_jobs *jobs, ledger_record_check check)
{
	memset(p, 0, sizeof(*p));
	p->check = check;
	p->jobs = jobs->v;
	p->n = jobs->n;
	p->nchunks = (jobs->n + CHUNK - 1) / CHUNK;
	if (!(p->done = docket_calloc(p->nchunks, 1)) || !(p->events = docket_calloc(p->n, sizeof(*p->events))) ||
	    !(p->packed = docket_calloc(p->nchunks, sizeof(*p->packed)))) {
		docket_free(p->done);
		docket_free(p->events);
		return docket_error_set_oom();
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

/* A line named file:line with what is wrong with it. */
static void problem_set(ledger_record_problem *p, const line_job *j, const char *message)
{
	p->file = j->file;
	p->line = j->line;
	snprintf(p->message, sizeof(p->message), "%s", message);
}

/* What the parse found wrong, in input order: bad lines (the first
 * LEDGER_RECORD_REPORTED named), else the first object that is no event. */
static int judge_lines(ledger_record_report *rep, const line_jobs *jobs)
{
	const line_job *refused = NULL;
	int error = 0;

	for (size_t i = 0; i < jobs->n; i++) {
		const line_job *j = &jobs->v[i];

		if (error == 0 && j->error < 0)
			error = j->error;
		if (j->why) {
			if (rep->nreported < LEDGER_RECORD_REPORTED)
				problem_set(&rep->reported[rep->nreported++], j, j->why);
			rep->bad++;
		}
		if (j->refused && !refused)
			refused = j;
	}
	if (error < 0)
		return docket_error_set(error, "out of memory");
	if (rep->bad > 0)
		return docket_error_set(DOCKET_EINVALID, "%zu bad line%s", rep->bad, rep->bad == 1 ? "" : "s");
	if (refused) {
		rep->refused = 1;
		problem_set(&rep->refusal, refused, refused->refused);
		return docket_error_set(refused->refused_error, "%s", refused->refused);
	}
	return 0;
}

/*
 * The ledger names the event it refused by its 1-based index in the batch
 * (docket_error.event_index) and starts its message with "event I of N: ".
 * The report names file:line instead, so that prefix is dropped.
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

/* Every line, its event and its seq: the report of an append that went through. */
static void count_results(ledger_record_report *rep, const docket_append_result *results, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (results[i].duplicate) {
			rep->duplicates++;
			continue;
		}
		if (rep->added == 0 || results[i].seq < rep->first)
			rep->first = results[i].seq;
		if (rep->added == 0 || results[i].seq > rep->last)
			rep->last = results[i].seq;
		rep->added++;
	}
}

/* The ledger refused event `appended->event_index`: name its line. */
static int name_refusal(ledger_record_report *rep, const line_jobs *jobs, const docket_error *appended, int error)
{
	const char *msg = appended->message[0] ? appended->message : "the ledger refused the input";
	size_t idx = appended->event_index;

	rep->refused = 1;
	if (idx >= 1 && idx <= jobs->n) {
		problem_set(&rep->refusal, &jobs->v[idx - 1], strip_event_prefix(msg));
	} else {
		rep->refusal.file = NULL;
		snprintf(rep->refusal.message, sizeof(rep->refusal.message), "%s", msg);
	}
	docket_error_restore(appended);
	return error;
}

int ledger_record(docket_ledger *l, const ledger_record_input *in, size_t n, ledger_record_check check,
		  ledger_record_report *rep, ledger_record_progress progress, void *ctx)
{
	docket_append_result *results = NULL;
	line_jobs jobs = { NULL, 0, 0 };
	docket_error appended;
	parse_pool pool;
	int error = 0, pooled = 0;

	memset(rep, 0, sizeof(*rep));
	for (size_t i = 0; i < n && error == 0; i++)
		error = collect_lines(&jobs, in[i].name, in[i].text, in[i].len);
	if (error < 0 || (rep->lines = jobs.n) == 0)
		goto cleanup;
	if (!(results = docket_calloc(jobs.n, sizeof(*results)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = pool_start(&pool, &jobs, check)) < 0)
		goto cleanup;
	pooled = 1;
	if (progress && jobs.n >= PROGRESS_MIN)
		progress(ctx, jobs.n);
	docket_error_clear();
	error = ledger_append_stream(l, pool.events, jobs.n, results, wait_line, &pool);
	appended = *docket_error_last();
	if (progress && jobs.n >= PROGRESS_MIN)
		progress(ctx, 0);
	pool_finish(&pool);
	pooled = 0;
	/* a line that is no event stopped the append: say what the lines are */
	{
		int judged = judge_lines(rep, &jobs);

		if (judged < 0)
			error = judged;
		else if (error < 0)
			error = name_refusal(rep, &jobs, &appended, error);
		else
			count_results(rep, results, jobs.n);
	}

cleanup:
	if (pooled)
		pool_finish(&pool);
	jobs_dispose(&jobs);
	docket_free(results);
	return error;
}
