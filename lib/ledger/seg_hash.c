/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seg_hash.c: the hashing of a run of one segment's events on a worker
 * thread (issue 34), for the readers that hash every payload twice: verify
 * and reindex (verify.c, the chain and the RFC 6962 leaves). The chain is
 * serial inside a run, h[n] = SHA-256(h[n-1] || be64(n) || payload[n]), but
 * the run's first h[n-1] is known when the caller reaches it, so the worker
 * hashes the run while the caller decodes and rebuilds the same events,
 * and the caller takes the hashes when it reaches the run's last event
 * (where the serial check compares the chain with the segment's stored
 * hash). Nothing else moves: the caller still reads, decompresses, checks
 * and reports every event in seq order, so every verdict is the serial
 * one.
 *
 * One job at a time; the worker only reads the payloads the caller's
 * reader holds (both parts decompressed, reader_decode_parts) and writes
 * the job's own arrays, which the caller reads only after seg_hash_wait:
 *
 *   caller:  seg_hash_start -> (decode, rebuild) -> seg_hash_wait -> next run
 *   worker:         idle -> hash the run -> done -> idle
 *
 * Invariants: (1) between start and wait the caller does not load another
 * segment into the reader nor free it; (2) every start is followed by a
 * wait before the next start or seg_hash_free (rebuild_run in verify.c
 * waits on every path out).
 */
#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "ledger_internal.h"
#include "docket/tlog.h"
#include "util/alloc.h"
#include "util/error.h"

atomic_ulong seg_hash_jobs;

typedef enum job_state { JOB_IDLE, JOB_RUN, JOB_DONE, JOB_QUIT } job_state;

struct seg_hash {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int started;                       /* the thread runs */
	job_state state;
	/* the job: events [from, from + n) of `r`'s loaded segment */
	const ledger_reader *r;
	uint64_t from;
	uint32_t n;
	int leaves;                        /* also the Merkle leaves */
	uint8_t head[LEDGER_HASH_LEN];     /* h[from - 1] */
	int error;                         /* the worker's: SHA-256 failed */
	uint32_t cap;
	uint8_t (*hashes)[LEDGER_HASH_LEN];
	uint8_t (*leaf)[LEDGER_HASH_LEN];
};

/* The job, on the worker: no docket_error_set here (its message is
 * thread-local); the caller names the failure. */
static int hash_run(seg_hash *h)
{
	const ledger_reader *r = h->r;
	const uint8_t *prev = h->head;
	uint32_t at = (uint32_t)(h->from - r->first);

	for (uint32_t i = 0; i < h->n; i++) {
		const uint8_t *p = reader_payload_at(r, at + i);

		if (chain_next(h->hashes[i], prev, h->from + i, p, r->lens[at + i]) < 0)
			return -1;
		if (h->leaves)
			docket_tlog_leaf_hash(h->leaf[i], p, r->lens[at + i]);
		prev = h->hashes[i];
	}
	return 0;
}

static void *worker_main(void *arg)
{
	seg_hash *h = arg;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (h->state == JOB_IDLE || h->state == JOB_DONE)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->state == JOB_QUIT)
			break;
		pthread_mutex_unlock(&h->lock);
		int error = hash_run(h);
		pthread_mutex_lock(&h->lock);
		h->error = error;
		h->state = JOB_DONE;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

int seg_hash_new(seg_hash **out)
{
	seg_hash *h = docket_calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return docket_error_set_oom();
	if (pthread_mutex_init(&h->lock, NULL) != 0) {
		docket_free(h);
		return docket_error_set(DOCKET_ERROR, "cannot create a lock");
	}
	if (pthread_cond_init(&h->cond, NULL) != 0) {
		pthread_mutex_destroy(&h->lock);
		docket_free(h);
		return docket_error_set(DOCKET_ERROR, "cannot create a condition variable");
	}
	*out = h;
	return 0;
}

void seg_hash_free(seg_hash *h)
{
	if (!h)
		return;
	if (h->started) {
		pthread_mutex_lock(&h->lock);
		h->state = JOB_QUIT;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
	}
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	docket_free(h->hashes);
	docket_free(h->leaf);
	docket_free(h);
}

static int reserve(seg_hash *h, uint32_t n)
{
	uint8_t (*hashes)[LEDGER_HASH_LEN], (*leaf)[LEDGER_HASH_LEN];

	if (n <= h->cap)
		return 0;
	if ((hashes = docket_realloc(h->hashes, (size_t)n * LEDGER_HASH_LEN)))
		h->hashes = hashes;
	if ((leaf = docket_realloc(h->leaf, (size_t)n * LEDGER_HASH_LEN)))
		h->leaf = leaf;
	if (!hashes || !leaf)
		return docket_error_set_oom();
	h->cap = n;
	return 0;
}

int seg_hash_start(seg_hash *h, const ledger_reader *r, uint64_t from, uint64_t to,
		   const uint8_t head[LEDGER_HASH_LEN], int leaves)
{
	int error;

	assert(h->state == JOB_IDLE && r->first && from >= r->first && to >= from &&
	       to - r->first < r->count && r->decoded == 3);
	if ((error = reserve(h, (uint32_t)(to - from + 1))) < 0)
		return error;
	if (!h->started) {
		if (pthread_create(&h->thread, NULL, worker_main, h) != 0)
			return DOCKET_ENOTFOUND;  /* no thread: the caller hashes */
		h->started = 1;
	}
	pthread_mutex_lock(&h->lock);
	h->r = r;
	h->from = from;
	h->n = (uint32_t)(to - from + 1);
	h->leaves = leaves;
	memcpy(h->head, head, LEDGER_HASH_LEN);
	h->error = 0;
	h->state = JOB_RUN;
	atomic_fetch_add_explicit(&seg_hash_jobs, 1, memory_order_relaxed);
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

int seg_hash_wait(seg_hash *h, const uint8_t (**hashes)[LEDGER_HASH_LEN],
		  const uint8_t (**leaf)[LEDGER_HASH_LEN])
{
	int error;

	pthread_mutex_lock(&h->lock);
	while (h->state == JOB_RUN)
		pthread_cond_wait(&h->cond, &h->lock);
	error = h->error;
	h->state = JOB_IDLE;
	pthread_mutex_unlock(&h->lock);
	*hashes = (const uint8_t (*)[LEDGER_HASH_LEN])h->hashes;
	*leaf = (const uint8_t (*)[LEDGER_HASH_LEN])h->leaf;
	return error < 0 ? docket_error_set(DOCKET_ERROR, "SHA-256 failed") : 0;
}
