/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parallel.c: replay on two cores. A reader thread runs scan_events (read
 * each frame, decompress, unpack the kinds replay needs), builds each
 * tool.intent's policy call and target from its parsed args and reads the
 * intent each session approval answers; the calling thread keeps the
 * sessions, evaluates, classifies and reports, as it does alone. The output
 * is the single-threaded run's byte for byte: the calling thread sees
 * exactly the same events in exactly the same order; what the reader
 * prepares depends on nothing but the event itself, the ledger (which does
 * not change) and the events before it (`ahead`, below), and what it could
 * not do the evaluating thread does again, so that a failure is reported
 * where a single-threaded run reports it. The reader builds the
 * calls only while the evaluating thread has batches waiting: when that
 * thread waits instead, it builds them itself, so the work splits about
 * evenly whatever the mix of calls (docs/replay.md gives the figures).
 *
 * The caller's `ahead` runs on the reader after each event is prepared, with
 * the same rule: replay.c follows the sessions there with state of its own
 * and, while the evaluating thread has batches waiting, evaluates the calls
 * ahead of it. `all` (tests: replay.c's DOCKET_REPLAY_AHEAD) makes the
 * reader do everything it can for every event whether or not that thread
 * waits.
 *
 * Memory crosses the threads in batches: a batch's events, targets,
 * intents and evaluations done ahead live in the batch's arena, and a batch
 * the evaluating thread is done with goes back to the reader through a free
 * list, so neither thread frees what the other allocated piece by piece
 * (only a piece too big for the arena, and the policy calls, which the
 * evaluating thread frees).
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
 *      single-threaded run reports (the earliest in seq order);
 *   5. the reader always holds a batch to fill (`fill`) while it scans: the
 *      scan unpacks each event into that batch's arena.
 *
 *   reader:  fill --(full)--> push: wait while the ring is full -> ring
 *   caller:  ring --> pop: wait while empty and not done --> evaluate --> free list
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "replay_internal.h"
#include "policy/policy.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define PAR_BATCH 256
#define PAR_DEPTH 32
#define PAR_ARENA (256u << 10)   /* a batch's events; bigger ones spill to the heap */
#define PAR_ARGS_ARENA (64u << 10)

typedef struct par_item {
	uint64_t seq;
	docket_event *ev;
	par_prep pre;
} par_item;

typedef struct par_batch {
	struct par_batch *next;   /* on the free list */
	size_t n;
	docket_arena arena;
	ProtobufCAllocator pb;    /* over `arena` */
	par_item items[PAR_BATCH];
} par_batch;

typedef struct par {
	docket_ledger *l;
	const char *session;
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	par_batch *ring[PAR_DEPTH];
	size_t head, count;
	atomic_size_t queued;   /* `count`, for the reader to read without the lock */
	par_batch *spare;       /* the free list */
	par_ahead_cb ahead;     /* run by the reader after each event, or NULL */
	void *ctx;              /* the callbacks' */
	int all;                /* prepare every event (tests) */
	int done, stop;
	int error;              /* the reader's, with its message in `err` */
	docket_error err;
	/* the reader's */
	par_batch *fill;
	ProtobufCAllocator pb;  /* into fill's arena */
	ledger_reader at;       /* intents outside the scan's segment */
	docket_buf scratch, target;
	docket_json_tape *tape; /* each call's args are parsed with this */
} par;

/* Free what the batch holds and start its arena over. */
static void batch_clear(par_batch *b)
{
	int walk = b->arena.spilled != 0;

	for (size_t i = 0; i < b->n; i++) {
		par_item *it = &b->items[i];

		docket_policy_call_free(it->pre.call);
		if (walk) {
			docket__v1__event__free_unpacked(it->ev, &b->pb);
			if (it->pre.intent)
				docket__v1__event__free_unpacked((docket_event *)it->pre.intent, &b->pb);
			docket_arena_free(&b->arena, (void *)it->pre.target);
			docket_arena_free(&b->arena, (void *)it->pre.outs);
		}
	}
	if (!walk)
		docket_arena_reset(&b->arena);
	b->n = 0;
}

static void batch_free(par_batch *b)
{
	if (!b)
		return;
	batch_clear(b);
	docket_arena_dispose(&b->arena);
	docket_free(b);
}

/* A batch for the reader to fill: a spare one, or a new one. */
static int batch_get(par_batch **out, par *p)
{
	par_batch *b;

	pthread_mutex_lock(&p->mu);
	if ((b = p->spare))
		p->spare = b->next;
	pthread_mutex_unlock(&p->mu);
	if (!b) {
		if (!(b = docket_calloc(1, sizeof(*b))))
			return docket_error_set_oom();
		if (docket_arena_init(&b->arena, PAR_ARENA) < 0) {
			docket_free(b);
			return docket_error_set_oom();
		}
		docket_arena_pb(&b->pb, &b->arena);
	}
	b->n = 0;
	b->next = NULL;
	*out = b;
	return 0;
}

/* The evaluating thread is done with `b`: back to the reader. */
static void batch_put(par *p, par_batch *b)
{
	batch_clear(b);
	pthread_mutex_lock(&p->mu);
	b->next = p->spare;
	p->spare = b;
	pthread_mutex_unlock(&p->mu);
}

/* The scan's allocator: into the arena of the batch being filled. */
static void *fill_alloc(void *data, size_t size)
{
	return docket_arena_alloc(&((par *)data)->fill->arena, size);
}

static void fill_release(void *data, void *ptr)
{
	docket_arena_free(&((par *)data)->fill->arena, ptr);
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
		atomic_store_explicit(&p->queued, p->count, memory_order_relaxed);
		p->fill = NULL;
		pthread_cond_signal(&p->not_empty);
	}
	pthread_mutex_unlock(&p->mu);
	return stopped;
}

/* A tool.intent's call and target, built as the evaluating thread would;
 * on any failure nothing (that thread builds them again and says why). */
static void prep_intent(par *p, par_item *it)
{
	const Docket__V1__ToolIntent *ti = it->ev->tool_intent;
	docket_jv_doc args;
	char *t;

	if (replay_args_parse(&args, p->tape, it->ev) == 0 &&
	    docket_policy_call_from_jv(&it->pre.call, ti->tool, args.ops, args.root) == 0 &&
	    replay_target_jv(&p->target, args.ops, args.root) == 0 &&
	    (t = docket_arena_alloc(&p->fill->arena, p->target.len + 1))) {
		memcpy(t, p->target.ptr ? p->target.ptr : "", p->target.len);
		t[p->target.len] = '\0';
		it->pre.target = t;
	} else {
		docket_policy_call_free(it->pre.call);
		it->pre.call = NULL;
	}
	docket_jv_doc_dispose(&args);
}

/* The intent an approved_for_session answer grants (failures: as above). */
static void prep_settled(par *p, par_item *it, MDB_txn *txn, ledger_reader *cur)
{
	const docket_event *ev = it->ev;
	docket_event *intent = NULL;
	inv_state st;

	if (ev->approval_settled->result != DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_APPROVED_FOR_SESSION ||
	    scan_invocation(&st, p->l, txn, ev->session, ev->invocation, &p->scratch) < 0)
		return;
	if (scan_event_in(&intent, cur, &p->at, txn, st.intent_seq, &p->pb) == 0)
		it->pre.intent = intent;
}

static int produce(void *ctx, MDB_txn *txn, ledger_reader *cur, uint64_t seq, docket_event *ev)
{
	par *p = ctx;
	par_item *it = &p->fill->items[p->fill->n++];
	/* the calls are built here while the evaluating thread has batches
	 * waiting; when it waits for this thread, it builds them itself (the
	 * two share the work whatever its mix) */
	int busy = p->all || atomic_load_explicit(&p->queued, memory_order_relaxed) > 0;
	int error;

	memset(it, 0, sizeof(*it));
	it->seq = seq;
	it->ev = ev;
	if (ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT && busy)
		prep_intent(p, it);
	else if (ev->body_case == DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED)
		prep_settled(p, it, txn, cur);
	if (p->ahead)
		p->ahead(p->ctx, ev, &it->pre, busy, &p->fill->arena);
	if (p->fill->n < PAR_BATCH)
		return 0;
	if (push(p))
		return 1;
	return (error = batch_get(&p->fill, p)) < 0 ? error : 0;
}

static void *reader(void *arg)
{
	par *p = arg;
	docket_arena args;
	int error;

	reader_init(&p->at, p->l, NULL);
	p->at.scan = 1;
	p->pb.alloc = fill_alloc;
	p->pb.free = fill_release;
	p->pb.allocator_data = p;
	if (!(p->tape = docket_json_tape_new()))
		error = docket_error_set_oom();
	else if ((error = docket_arena_init(&args, PAR_ARGS_ARENA)) == 0) {
		docket_alloc_json_arena(&args);
		if ((error = batch_get(&p->fill, p)) == 0)
			error = scan_events(p->l, p->session, &p->pb, produce, p);
		docket_alloc_json_arena(NULL);
		docket_arena_dispose(&args);
	}
	/* the events read before an error are evaluated before it is reported
	 * (invariant 4), as they are by a single-threaded run */
	if (p->fill && p->fill->n)
		push(p);
	batch_free(p->fill);
	p->fill = NULL;
	reader_dispose(&p->at);
	docket_json_tape_free(p->tape);
	p->tape = NULL;
	docket_buf_dispose(&p->scratch);
	docket_buf_dispose(&p->target);
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
		atomic_store_explicit(&p->queued, p->count, memory_order_relaxed);
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
	for (size_t i = 0; i < b->n && error == 0; i++)
		error = cb(ctx, txn, b->items[i].seq, b->items[i].ev, &b->items[i].pre);
	scan_read_end(p->l, txn);
	return error;
}

int par_scan(docket_ledger *l, const char *session, par_cb cb, par_ahead_cb ahead, int all, void *ctx)
{
	par p;
	pthread_t thread;
	par_batch *b;
	int error = 0;

	memset(&p, 0, sizeof(p));
	p.l = l;
	p.session = session;
	p.ahead = ahead;
	p.ctx = ctx;
	p.all = all;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.not_empty, NULL);
	pthread_cond_init(&p.not_full, NULL);
	if (pthread_create(&thread, NULL, reader, &p) != 0) {
		error = docket_error_set(DOCKET_ERROR, "cannot start the replay's reader thread");
		goto cleanup;
	}
	while (error == 0 && (b = pop(&p))) {
		error = consume(&p, b, cb, ctx);
		batch_put(&p, b);
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
	while ((b = p.spare)) {
		p.spare = b->next;
		batch_free(b);
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
