/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parallel.c: replay on two cores. A reader thread runs scan_events (read
 * each frame, decompress, unpack the kinds replay needs) and parses every
 * tool.intent's args; the calling thread evaluates, classifies and reports,
 * as it does alone. The work splits about evenly (docs/replay.md gives the
 * profile), and the output is the single-threaded run's byte for byte:
 * evaluation needs the sessions' state in seq order, so it stays on one
 * thread and sees exactly the same events in exactly the same order; the
 * reader only does what depends on nothing but the event itself.
 *
 * Invariants:
 *   1. batches leave the ring in the order they entered it, and the reader
 *      fills them in seq order;
 *   2. at most PAR_DEPTH full batches wait, plus one being filled and one
 *      being evaluated: memory is bounded whatever the ledger's size;
 *   3. `stop` is set only by the evaluating thread; once set, the reader
 *      frees what it would have queued and its scan ends;
 *   4. the reader's error is taken only when the evaluating thread has used
 *      every event before it, so the error reported is the one a
 *      single-threaded run reports (the earliest in seq order).
 *
 *   reader:  fill --(full)--> push: wait while the ring is full -> ring
 *   caller:  ring --> pop: wait while empty and not done --> evaluate --> free
 */
#include <pthread.h>
#include <string.h>

#include "replay_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define PAR_BATCH 256
#define PAR_DEPTH 8

typedef struct par_item {
	uint64_t seq;
	docket_event *ev;
	json_t *args;
} par_item;

typedef struct par_batch {
	size_t n;
	par_item items[PAR_BATCH];
} par_batch;

typedef struct par {
	docket_ledger *l;
	const char *session;
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	par_batch *ring[PAR_DEPTH];
	size_t head, count;
	int done, stop;
	int error;              /* the reader's, with its message in `err` */
	docket_error err;
	par_batch *fill;        /* the reader's */
} par;

static void batch_free(par_batch *b)
{
	for (size_t i = 0; b && i < b->n; i++) {
		docket_event_free(b->items[i].ev);
		json_decref(b->items[i].args);
	}
	docket_free(b);
}

/* Queue the reader's batch; 1 when the evaluating thread stopped. */
static int push(par *p)
{
	int stopped;

	pthread_mutex_lock(&p->mu);
	while (p->count == PAR_DEPTH && !p->stop)
		pthread_cond_wait(&p->not_full, &p->mu);
	if (!(stopped = p->stop)) {
		p->ring[(p->head + p->count) % PAR_DEPTH] = p->fill;
		p->count++;
		p->fill = NULL;
		pthread_cond_signal(&p->not_empty);
	}
	pthread_mutex_unlock(&p->mu);
	return stopped;
}

static int produce(void *ctx, MDB_txn *txn, ledger_reader *cur, uint64_t seq, docket_event **ev,
		   const docket_event *unused)
{
	par *p = ctx;
	par_item *it;

	(void)txn;
	(void)cur;
	(void)unused;
	if (!p->fill) {
		if (!(p->fill = docket_malloc(sizeof(*p->fill))))
			return docket_error_set(DOCKET_ENOMEM, "out of memory");
		p->fill->n = 0;
	}
	it = &p->fill->items[p->fill->n++];
	memset(it, 0, sizeof(*it));
	it->seq = seq;
	it->ev = *ev;
	*ev = NULL;
	if (it->ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT) {
		const char *a = it->ev->tool_intent->args_json;

		/* a failure is the evaluating thread's to report, if it ever
		 * needs these args (the intent may not be selected) */
		if (docket_json_parse(&it->args, a, strlen(a)) < 0)
			it->args = NULL;
	}
	return p->fill->n == PAR_BATCH ? push(p) : 0;
}

static void *reader(void *arg)
{
	par *p = arg;
	int error = scan_events(p->l, p->session, 1, produce, p);

	/* the events read before an error are evaluated before it is reported
	 * (invariant 4), as they are by a single-threaded run */
	if (p->fill && p->fill->n)
		push(p);
	batch_free(p->fill);
	p->fill = NULL;
	pthread_mutex_lock(&p->mu);
	p->error = error < 0 ? error : 0;
	if (error < 0)
		p->err = *docket_error_last();
	p->done = 1;
	pthread_cond_signal(&p->not_empty);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The next batch in order, NULL when the reader is done. */
static par_batch *pop(par *p)
{
	par_batch *b = NULL;

	pthread_mutex_lock(&p->mu);
	while (!p->count && !p->done)
		pthread_cond_wait(&p->not_empty, &p->mu);
	if (p->count) {
		b = p->ring[p->head];
		p->head = (p->head + 1) % PAR_DEPTH;
		p->count--;
		pthread_cond_signal(&p->not_full);
	}
	pthread_mutex_unlock(&p->mu);
	return b;
}

static int consume(par *p, par_batch *b, par_cb cb, void *ctx)
{
	MDB_txn *txn = NULL;
	int error;

	if ((error = scan_read_begin(&txn, p->l)) < 0)
		return error;
	for (size_t i = 0; i < b->n && error == 0; i++) {
		json_t *args = b->items[i].args;

		b->items[i].args = NULL;
		error = cb(ctx, txn, b->items[i].seq, b->items[i].ev, args);
	}
	scan_read_end(p->l, txn);
	return error;
}

int par_scan(docket_ledger *l, const char *session, par_cb cb, void *ctx)
{
	par p;
	pthread_t thread;
	par_batch *b;
	int error = 0;

	memset(&p, 0, sizeof(p));
	p.l = l;
	p.session = session;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.not_empty, NULL);
	pthread_cond_init(&p.not_full, NULL);
	if (pthread_create(&thread, NULL, reader, &p) != 0) {
		error = docket_error_set(DOCKET_ERROR, "cannot start the replay's reader thread");
		goto cleanup;
	}
	while (error == 0 && (b = pop(&p))) {
		error = consume(&p, b, cb, ctx);
		batch_free(b);
	}
	pthread_mutex_lock(&p.mu);
	p.stop = 1;
	pthread_cond_signal(&p.not_full);
	pthread_mutex_unlock(&p.mu);
	pthread_join(thread, NULL);
	while (p.count) {
		batch_free(p.ring[p.head]);
		p.head = (p.head + 1) % PAR_DEPTH;
		p.count--;
	}
	if (error == 0 && p.error < 0) {
		docket_error_restore(&p.err);
		error = p.error;
	}
cleanup:
	pthread_cond_destroy(&p.not_full);
	pthread_cond_destroy(&p.not_empty);
	pthread_mutex_destroy(&p.mu);
	return error > 0 ? 0 : error;
}
