/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seg_stage.c: the worker stage of a parallel segment writer (issue 34).
 *
 * A bulk append closes a segment every SEG_TARGET_EVENTS events. What a
 * closed segment still needs that depends on nothing after it — the Merkle
 * leaf hash of each event and the subtrees they complete (merkle_piece), and
 * the compression of its parts (seg_encode) — is done here, on worker
 * threads, while the append thread goes on with the next events. What must
 * stay in order stays on the append thread: the chain (hashed as each event
 * is appended), the state machine, and, per segment in seq order (the
 * ordered hand-off), joining its subtrees to the tree, the LMDB puts and the
 * byte counter (seg_stage_reap). A worker touches neither the ledger nor the
 * transaction: it reads its slot's batch and writes its slot's results.
 *
 * Slots are a ring of SEG_STAGE_SLOTS; counters, not flags, say where each
 * segment is:
 *
 *   reaped <= started <= submitted,  submitted - reaped <= SEG_STAGE_SLOTS
 *
 *   slot of n:   FREE --submit--> QUEUED --a worker--> RUNNING --> DONE --reap--> FREE
 *                (n = submitted)           (n = started)                (n = reaped)
 *
 * A worker takes slot `started` (FIFO); the append thread writes slot
 * `reaped` once it is DONE, so segments are written in seq order whatever
 * order the workers finish in. A slot's batch does not change from submit
 * to reap, so the state machine may read a payload in flight from it
 * (seg_stage_payload) while a worker reads it too. The mutex orders every
 * hand-off; a failed worker's error (and message) is returned by the reap
 * of its slot, so the transaction is aborted as if the append thread had
 * failed there. seg_stage_free stops the workers (a running segment is
 * finished, queued ones dropped) and frees the slots.
 */
#include <string.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define SEG_STAGE_WORKERS 2
#define SEG_STAGE_SLOTS 4

uint64_t seg_stage_fail_at;

typedef enum { SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE } slot_state;

typedef struct seg_slot {
	seg_batch b;              /* the segment's events (the writer's buffers, swapped in) */
	seg_coder coder;          /* its version, level and dictionary (cc: the worker's) */
	int merkle;               /* fold its leaves (the ledger keeps a tree) */
	merkle_piece piece;
	docket_buf out, zpart;    /* the encoded segment */
	int error;
	docket_error err;
	slot_state state;
} seg_slot;

struct seg_stage {
	pthread_mutex_t mu;
	pthread_cond_t work;      /* a slot was queued, or stop */
	pthread_cond_t done;      /* a slot is DONE */
	pthread_t threads[SEG_STAGE_WORKERS];
	unsigned nthreads;
	int stop;
	uint64_t submitted, started, reaped;
	seg_slot slots[SEG_STAGE_SLOTS];
	uint64_t ran;             /* segments a worker took, for seg_stage_fail_at */
};

static int leaf(void *ctx, const uint8_t *p, size_t len)
{
	return merkle_piece_leaf(ctx, p, len);
}

/* A worker's share of one segment. */
static int slot_run(seg_slot *s, codec_cctx *cc)
{
	int error;

	s->coder.cc = cc;
	if (s->merkle) {
		merkle_piece_begin(&s->piece, s->b.first - 1, s->b.count);
		if ((error = seg_batch_each(&s->b, leaf, &s->piece)) < 0)
			return error;
	}
	return seg_encode(&s->coder, &s->b, &s->out, &s->zpart);
}

static void *worker(void *arg)
{
	seg_stage *st = arg;
	codec_cctx cc = { ZSTD_createCCtx(), 0, NULL };

	pthread_mutex_lock(&st->mu);
	for (;;) {
		seg_slot *s;
		uint64_t nth;

		while (!st->stop && st->started == st->submitted)
			pthread_cond_wait(&st->work, &st->mu);
		if (st->stop)
			break;
		s = &st->slots[st->started++ % SEG_STAGE_SLOTS];
		s->state = SLOT_RUNNING;
		nth = ++st->ran;
		pthread_mutex_unlock(&st->mu);
		docket_error_clear();
		if (nth == seg_stage_fail_at)
			s->error = docket_error_set(DOCKET_ERROR, "segment stage: failure injected in segment %llu",
						    (unsigned long long)nth);
		else
			s->error = cc.cctx ? slot_run(s, &cc)
					   : docket_error_set(DOCKET_ENOMEM, "cannot create a zstd context");
		if (s->error < 0)
			s->err = *docket_error_last();
		pthread_mutex_lock(&st->mu);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&st->done);
	}
	pthread_mutex_unlock(&st->mu);
	codec_cctx_dispose(&cc);
	return NULL;
}

static void stage_stop(seg_stage *st)
{
	pthread_mutex_lock(&st->mu);
	st->stop = 1;
	pthread_cond_broadcast(&st->work);
	pthread_mutex_unlock(&st->mu);
	for (unsigned i = 0; i < st->nthreads; i++)
		pthread_join(st->threads[i], NULL);
	st->nthreads = 0;
}

void seg_stage_free(seg_stage *st)
{
	if (!st)
		return;
	stage_stop(st);
	for (unsigned i = 0; i < SEG_STAGE_SLOTS; i++) {
		seg_batch_dispose(&st->slots[i].b);
		merkle_piece_dispose(&st->slots[i].piece);
		docket_buf_dispose(&st->slots[i].out);
		docket_buf_dispose(&st->slots[i].zpart);
	}
	pthread_cond_destroy(&st->work);
	pthread_cond_destroy(&st->done);
	pthread_mutex_destroy(&st->mu);
	docket_free(st);
}

/* The workers, started; NULL (and no error) when not one could start. */
static seg_stage *stage_new(void)
{
	seg_stage *st = docket_calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->work, NULL);
	pthread_cond_init(&st->done, NULL);
	for (unsigned i = 0; i < SEG_STAGE_WORKERS; i++) {
		if (pthread_create(&st->threads[i], NULL, worker, st) != 0)
			break;
		st->nthreads++;
	}
	if (st->nthreads)
		return st;
	seg_stage_free(st);
	return NULL;
}

/* Write the oldest segment in flight once its worker is done: 1 (nothing
 * written) when it is not and `wait` is 0. */
static int reap_one(seg_writer *w, MDB_txn *txn, int wait)
{
	seg_stage *st = w->stage;
	seg_slot *s = &st->slots[st->reaped % SEG_STAGE_SLOTS];
	int error;

	pthread_mutex_lock(&st->mu);
	while (s->state != SLOT_DONE && wait)
		pthread_cond_wait(&st->done, &st->mu);
	error = s->state == SLOT_DONE ? 0 : 1;
	pthread_mutex_unlock(&st->mu);
	if (error)
		return 1;
	if (s->error < 0) {
		docket_error_restore(&s->err);
		return s->error;
	}
	if ((s->merkle && (error = merkle_piece_add(w->l, txn, &s->piece)) < 0) ||
	    (error = seg_put(w, txn, s->b.first, &s->out)) < 0)
		return error;
	/* the slot is free only now: its batch was readable until written */
	pthread_mutex_lock(&st->mu);
	s->state = SLOT_FREE;
	st->reaped++;
	pthread_mutex_unlock(&st->mu);
	return 0;
}

int seg_stage_drain(seg_writer *w, MDB_txn *txn)
{
	int error;

	while (w->stage && w->stage->reaped < w->stage->submitted)
		if ((error = reap_one(w, txn, 1)) < 0)
			return error;
	return 0;
}

/* Move the writer's batch into slot `s` (its old buffers, emptied, go back
 * to the writer: no payload is copied). */
static void batch_hand_over(seg_writer *w, seg_slot *s)
{
	seg_batch spare = s->b;

	s->b = w->b;
	w->b = spare;
	w->b.first = s->b.first + s->b.count;
	w->b.count = 0;
	docket_buf_clear(&w->b.index);
	docket_buf_clear(&w->b.part[0]);
	docket_buf_clear(&w->b.part[1]);
}

int seg_stage_submit(seg_writer *w, MDB_txn *txn)
{
	seg_stage *st;
	seg_slot *s;
	int error = 0;

	if (!w->stage && !(w->stage = stage_new()))
		return seg_flush(w, txn);   /* no thread: the serial path */
	st = w->stage;
	if (st->submitted - st->reaped == SEG_STAGE_SLOTS && (error = reap_one(w, txn, 1)) < 0)
		return error;
	s = &st->slots[st->submitted % SEG_STAGE_SLOTS];
	memset(&s->coder, 0, sizeof(s->coder));
	s->coder.level = w->level;
	s->coder.version = w->version;
	/* a small part compresses with the ledger's dictionary: looked up here,
	 * where the transaction may be read */
	if (seg_batch_wants_dict(&w->b) &&
	    (error = codec_active_dict(w->l, txn, &s->coder.cdict, &s->coder.dict_id)) < 0)
		return error;
	s->merkle = !w->l->merkle_off;
	s->error = 0;
	batch_hand_over(w, s);
	pthread_mutex_lock(&st->mu);
	s->state = SLOT_QUEUED;
	st->submitted++;
	pthread_cond_signal(&st->work);
	pthread_mutex_unlock(&st->mu);
	/* write what is done already, in order, without waiting */
	while (st->reaped < st->submitted && (error = reap_one(w, txn, 0)) == 0)
		;
	return error < 0 ? error : 0;
}

int seg_stage_payload(const seg_stage *st, uint64_t seq, const uint8_t **p, size_t *len)
{
	/* only the append thread moves `reaped` and `submitted`: no lock */
	for (uint64_t n = st->reaped; n < st->submitted; n++) {
		const seg_batch *b = &st->slots[n % SEG_STAGE_SLOTS].b;

		if (seq >= b->first && seq - b->first < b->count)
			return seg_batch_payload(b, seq, p, len);
	}
	return DOCKET_ENOTFOUND;
}
