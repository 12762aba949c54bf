/* SPDX-License-Identifier: Apache-2.0 */
/*
 * append.c: the one append path.
 *
 * For a batch of events, in one LMDB write transaction:
 *   validate against the state machine (state_apply, which also fills the
 *   fields the ledger assigns), encode (protobuf), chain (SHA-256), buffer
 *   in a segment writer (segment.c: a segment of up to SEG_TARGET_EVENTS is
 *   compressed and put with MDB_APPEND), write every projection, then commit
 *   durably. Any failure aborts the whole transaction: the batch is written
 *   completely or not at all.
 *
 * The map is grown before the first attempt to fit the batch with room to
 * spare (store_reserve), so a bulk append does not run out of map halfway.
 * MDB_MAP_FULL can still come from any put or from the commit; the
 * transaction is then aborted, the map grown and the whole batch replayed
 * from the caller's original events (the fields assigned by the failed
 * attempt are reset first), up to the configured cap.
 *
 * ledger_append_stream is ledger_append for events that are still being
 * made while it runs (`docket record` parses on other threads): the first
 * time it needs events[i] it waits for it; a wait that fails aborts the
 * transaction like any other error.
 */
#include <string.h>

#include "ledger_internal.h"
#include "spool_internal.h"
#include "util/alloc.h"
#include "util/crash.h"
#include "util/error.h"

int ledger_seg_parallel = 1;

/* Which ledger-assigned fields an attempt filled in, so a replay starts from
 * the caller's events as given. */
typedef struct assigned {
	unsigned time : 1;
	unsigned epoch : 1;
	unsigned attempt : 1;
	unsigned token : 1;
} assigned;

static void remember_input(assigned *a, const docket_event *ev)
{
	a->time = !*ev->time;
	a->epoch = ev->epoch == 0;
	a->attempt = ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED &&
		     ev->tool_dispatched->attempt == 0;
	a->token = ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED &&
		   !*ev->tool_dispatched->token;
}

static void reset_assigned(const assigned *a, docket_event *ev)
{
	if (a->time && *ev->time) {
		docket_free(ev->time);
		ev->time = (char *)protobuf_c_empty_string;
	}
	if (a->epoch)
		ev->epoch = 0;
	if (ev->body_case != DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED)
		return;
	if (a->attempt)
		ev->tool_dispatched->attempt = 0;
	if (a->token && *ev->tool_dispatched->token) {
		docket_free(ev->tool_dispatched->token);
		ev->tool_dispatched->token = (char *)protobuf_c_empty_string;
	}
}

/* Events that arrive while the append runs (ledger_append_stream). */
typedef struct stream_src {
	ledger_wait_fn wait;
	void *ctx;
	assigned *inputs;   /* of the one group */
	docket_slice *rests; /* what the wait gave: each event's event_pack_rest() */
	size_t seen;        /* events waited for, their input remembered */
} stream_src;

/* What the events of one transaction share. */
typedef struct append_ctx {
	state_txn *st;
	docket_ledger *l;
	MDB_txn *txn;
	seg_writer *w;
	docket_buf payload;
	int redact;         /* the ledger has redaction rules */
} append_ctx;

/* Before events[i] is first read: wait for it, remember what it was given. */
static int stream_wait(stream_src *src, ledger_group *g, size_t i)
{
	int error;

	if (!src || i < src->seen)
		return 0;
	if ((error = src->wait(src->ctx, i, &src->rests[i])) < 0)
		return error;
	remember_input(&src->inputs[i], g->events[i]);
	src->seen = i + 1;
	return 0;
}

static void reset_assigned_all(const ledger_group *g, const assigned *a)
{
	for (size_t i = 0; i < g->n; i++)
		reset_assigned(&a[i], g->events[i]);
}

/* The event as it is stored: from its packing without time and epoch when
 * the parse made one and nothing else changed since (a redaction, or the
 * attempt and token a dispatch is given), else packed whole. */
static int pack(append_ctx *a, docket_event *ev, const docket_slice *rest, const docket_buf **out)
{
	int error;

	/* state_apply packed the event already when it needed its digest */
	if ((*out = state_payload(a->st)))
		return 0;
	*out = &a->payload;
	if (rest && rest->len && !a->redact && ev->body_case != DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED)
		return event_pack_onto(&a->payload, ev, rest->ptr, rest->len);
	if ((error = event_pack(&a->payload, ev)) < 0)
		return error;
	return 0;
}

static int append_one(append_ctx *a, docket_event *ev, const docket_slice *rest, docket_append_result *res)
{
	uint8_t hash[LEDGER_HASH_LEN];
	const docket_buf *packed;
	uint64_t seq;
	int duplicate, error;

	if ((a->redact && (error = ledger_redact_event(a->l, a->txn, ev)) < 0) ||
	    (error = state_apply(a->st, ev, STATE_APPEND, 0, &seq, &duplicate, res)) < 0)
		return error;
	res->seq = seq;
	res->duplicate = duplicate;
	if (duplicate)
		return 0;
	if ((error = pack(a, ev, rest, &packed)) < 0 ||
	    (error = chain_next(hash, state_head_hash(a->st), seq, (const uint8_t *)packed->ptr, packed->len)) < 0 ||
	    (error = seg_add(a->w, seq, (unsigned)ev->body_case, (const uint8_t *)packed->ptr, packed->len, hash)) < 0)
		return error;
	state_set_head(a->st, seq, hash);
	state_count_bytes(a->st, packed->len, 0);
	return 0;
}

/* Append the events of one group to `txn`; prefixes errors with the index. */
static int append_events(append_ctx *a, ledger_group *g, int flush, stream_src *src)
{
	int error;

	for (size_t i = 0; i < g->n; i++) {
		memset(&g->results[i], 0, sizeof(g->results[i]));
		if (i == g->n / 2 && i > 0)
			docket_crash_point("append.mid_batch");
		if ((error = stream_wait(src, g, i)) == 0 &&
		    (error = append_one(a, g->events[i], src ? &src->rests[i] : NULL, &g->results[i])) == 0 &&
		    flush && seg_full(a->w))
			error = seg_close(a->w, a->txn);
		if (error < 0) {
			if (g->n > 1 && error != DOCKET_EMAPFULL)
				docket_error_prefix("event %zu of %zu: ", i + 1, g->n);
			docket_error_set_index(i + 1);
			return error;
		}
	}
	return 0;
}

/*
 * One group under a checkpoint of the batch's state transaction: on failure
 * only the group's changes are taken back (state_rollback, seg_rollback) and
 * its error kept; MDB_MAP_FULL and storage errors fail all. No nested LMDB
 * transaction: nothing of a group reaches LMDB before it is accepted.
 */
static int append_isolated(append_ctx *a, ledger_group *g)
{
	seg_mark mark;
	int error;

	seg_mark_get(a->w, &mark);
	if ((error = state_checkpoint(a->st)) < 0)
		return error;
	if ((error = append_events(a, g, 0, NULL)) == 0) {
		g->error = 0;
		/* segments are written between groups only: a refused group
		 * takes back just its own buffered events */
		return seg_full(a->w) ? seg_close(a->w, a->txn) : 0;
	}
	state_rollback(a->st);
	seg_rollback(a->w, &mark);
	if (error == DOCKET_EMAPFULL || error == DOCKET_ESTORAGE || error == DOCKET_ECORRUPT)
		return error;
	/* the group is refused; the others go on */
	g->error = error;
	g->err = *docket_error_last();
	return 0;
}

/*
 * The spool first (docs/write-path.md §3): each entry its own isolated
 * group, in name order; a refused entry (or one that is not an event) is
 * appended as its ledger.incident instead; each is marked folded in this
 * transaction (spool.c). Its files go after the commit.
 */
static int fold_spool(append_ctx *a, spool_batch **out)
{
	spool_batch *b;
	ledger_group *g;
	int error;

	if ((error = spool_load(out, a->l, a->txn)) < 0 || !(b = *out))
		return error;
	for (size_t i = 0; i < spool_size(b) && error == 0; i++) {
		if (spool_entry_done(b, i))
			continue;
		g = spool_entry_group(b, i);
		if (g && (error = append_isolated(a, g)) < 0)
			break;
		if (!g || g->error) {
			if (!(g = spool_incident_group(b, i, g ? &g->err : NULL)))
				return docket_error_last()->code ? docket_error_last()->code : DOCKET_ENOMEM;
			if ((error = append_isolated(a, g)) < 0)
				break;
			if (g->error) {
				docket_error_restore(&g->err);
				return g->error;
			}
		}
		error = spool_mark(b, i, a->l, a->txn);
	}
	return error;
}

/*
 * One attempt at all groups in one write transaction and one state
 * transaction. Not isolated: the first error aborts everything. Isolated:
 * each group is accepted or taken back on its own (a checkpoint), and the
 * transaction commits once.
 */
static int append_txn(docket_ledger *l, ledger_group *groups, size_t ngroups, int isolate, stream_src *src)
{
	append_ctx a = { NULL, l, NULL, NULL, DOCKET_BUF_INIT, 0 };
	spool_batch *spool = NULL;
	seg_writer w;
	uint64_t head = 0;
	int error;

	seg_writer_init(&w, l);
	w.parallel = ledger_seg_parallel;
	a.w = &w;
	if ((error = store_txn_begin(&a.txn, l, 0)) < 0)
		return error;
	if ((error = spool_gate_pass()) < 0)
		goto cleanup;
	if ((error = ledger_redact_configured(l, a.txn)) >= 0) {
		a.redact = error;
		error = state_txn_begin(&a.st, l, a.txn);
	}
	if (error == 0) {
		state_set_writer(a.st, &w);
		error = fold_spool(&a, &spool);
		for (size_t i = 0; isolate && i < ngroups && error == 0; i++)
			error = append_isolated(&a, &groups[i]);
		if (!isolate && error == 0)
			error = append_events(&a, &groups[0], 1, src);
		if (error == 0)
			error = state_txn_finish(a.st);
		head = state_head_seq(a.st);
	}
	if (error < 0 || (error = seg_flush(&w, a.txn)) < 0 ||
	    (error = frame_maybe_train(l, a.txn, head)) < 0)
		goto cleanup;
	docket_crash_point("append.before_commit");
	error = store_txn_commit(l, a.txn);
	a.txn = NULL;
	if (error == 0) {
		docket_crash_point("append.after_commit");
		/* a spool file goes only once its fold is durable (serve defers
		 * the meta sync: store_defer_meta_sync); kept, it is refolded */
		if (spool && store_sync(l) < 0)
			docket_error_clear();
		else
			spool_unlink_folded(spool);
	}
cleanup:
	if (a.txn)
		store_txn_abort(l, a.txn);
	spool_batch_free(spool);
	state_txn_free(a.st);
	seg_writer_dispose(&w);
	docket_buf_dispose(&a.payload);
	return error;
}

/* Map room a batch may need: its events and their projections, generously
 * (the map is address space; only the pages used reach the file). */
static size_t reserve_bytes(const ledger_group *groups, size_t ngroups)
{
	size_t n = 0;

	for (size_t g = 0; g < ngroups; g++)
		n += groups[g].n;
	return n * 2048;
}

/* Reset what the attempt assigned (of a stream: in the events it reached). */
static void reset_groups(ledger_group *groups, size_t ngroups, assigned *const *inputs, const stream_src *src)
{
	for (size_t g = 0; g < ngroups; g++)
		for (size_t i = 0; i < (src ? src->seen : groups[g].n); i++)
			reset_assigned(&inputs[g][i], groups[g].events[i]);
}

static int append_groups(docket_ledger *l, ledger_group *groups, size_t ngroups, int isolate, stream_src *src)
{
	assigned **inputs = NULL;
	int error = 0;

	if (l->flags & DOCKET_OPEN_READONLY)
		return docket_error_set(DOCKET_EINVALID, "ledger %s is open read-only", l->path);
	if (!(inputs = docket_calloc(ngroups ? ngroups : 1, sizeof(*inputs))))
		return docket_error_set_oom();
	for (size_t g = 0; g < ngroups && error == 0; g++) {
		if (!(inputs[g] = docket_calloc(groups[g].n ? groups[g].n : 1, sizeof(**inputs))))
			error = docket_error_set_oom();
		for (size_t i = 0; error == 0 && !src && i < groups[g].n; i++)
			remember_input(&inputs[g][i], groups[g].events[i]);
	}
	if (src && error == 0) {
		src->inputs = inputs[0];
		if (!(src->rests = docket_calloc(groups[0].n ? groups[0].n : 1, sizeof(*src->rests))))
			error = docket_error_set_oom();
	}
	if (error == 0)
		error = store_reserve(l, reserve_bytes(groups, ngroups));
	while (error == 0) {
		error = append_txn(l, groups, ngroups, isolate, src);
		if (error != DOCKET_EMAPFULL)
			break;
		/* Replay the whole transaction in a bigger map. */
		reset_groups(groups, ngroups, inputs, src);
		pthread_mutex_lock(&l->codec.lock);
		codec_forget(&l->codec);
		pthread_mutex_unlock(&l->codec.lock);
		error = store_grow(l);
	}
	if (inputs[0] && error < 0)
		reset_groups(groups, ngroups, inputs, src);
	else if (inputs[0])
		for (size_t g = 0; g < ngroups; g++)
			if (groups[g].error)
				reset_assigned_all(&groups[g], inputs[g]);
	for (size_t g = 0; g < ngroups; g++)
		docket_free(inputs[g]);
	docket_free(inputs);
	if (src)
		docket_free(src->rests);
	return error;
}

/* A write transaction with nothing of its own: the spool folded alone. */
int ledger_fold_only(docket_ledger *l)
{
	return append_groups(l, NULL, 0, 1, NULL);
}

int ledger_append_groups(docket_ledger *l, ledger_group *groups, size_t ngroups)
{
	int error;

	for (size_t g = 0; g < ngroups; g++)
		groups[g].error = 0;
	if (ngroups == 0)
		return 0;
	error = append_groups(l, groups, ngroups, 1, NULL);
	if (error < 0) {
		docket_error saved = *docket_error_last();

		for (size_t g = 0; g < ngroups; g++) {
			groups[g].error = error;
			groups[g].err = saved;
		}
	}
	return error;
}

static int append_one_group(docket_ledger *l, docket_event **events, size_t n, docket_append_result *results,
			    stream_src *src)
{
	docket_append_result *own = NULL;
	ledger_group group;
	int error;

	if (n == 0)
		return 0;
	if (!results && !(results = own = docket_calloc(n, sizeof(*own))))
		return docket_error_set_oom();
	memset(&group, 0, sizeof(group));
	group.events = events;
	group.n = n;
	group.results = results;
	error = append_groups(l, &group, 1, 0, src);
	docket_free(own);
	return error;
}

int ledger_append(docket_ledger *l, docket_event **events, size_t n, docket_append_result *results)
{
	return append_one_group(l, events, n, results, NULL);
}

int ledger_append_stream(docket_ledger *l, docket_event **events, size_t n, docket_append_result *results,
			 ledger_wait_fn wait, void *ctx)
{
	stream_src src = { wait, ctx, NULL, NULL, 0 };

	return append_one_group(l, events, n, results, &src);
}

int docket_ledger_append_json(docket_ledger *l, json_t *const *json, size_t n,
			      docket_append_result *results)
{
	docket_event **events;
	size_t built = 0;
	int error = 0;

	if (n == 0)
		return 0;
	if (!(events = docket_calloc(n, sizeof(*events))))
		return docket_error_set_oom();
	for (; built < n; built++) {
		if ((error = docket_event_from_json(&events[built], json[built])) < 0) {
			if (n > 1)
				docket_error_prefix("event %zu of %zu: ", built + 1, n);
			docket_error_set_index(built + 1);
			goto cleanup;
		}
	}
	error = ledger_append(l, events, n, results);
cleanup:
	for (size_t i = 0; i < built; i++)
		docket_event_free(events[i]);
	docket_free(events);
	return error;
}
