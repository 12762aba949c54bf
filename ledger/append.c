/* SPDX-License-Identifier: Apache-2.0 */
/*
 * append.c: the one append path.
 *
 * For a batch of events, in one LMDB write transaction:
 *   validate against the state machine (state_apply, which also fills the
 *   fields the ledger assigns), encode (protobuf), chain (SHA-256), frame
 *   (zstd, with the ledger's dictionary when it has one), put the frame and
 *   every projection, then commit durably. Any failure aborts the whole
 *   transaction: the batch is written completely or not at all.
 *
 * MDB_MAP_FULL can come from any put or from the commit; the transaction is
 * then aborted, the map grown and the whole batch replayed from the
 * caller's original events (the fields assigned by the failed attempt are
 * reset first), up to the configured cap.
 */
#include <string.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/crash.h"
#include "util/error.h"

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

static int put_frame(docket_ledger *l, MDB_txn *txn, uint64_t seq, const docket_buf *frame)
{
	uint8_t key[8];
	MDB_val k = { sizeof(key), key }, v = { frame->len, frame->ptr };
	int rc;

	docket_be64_put(key, seq);
	if ((rc = mdb_put(txn, l->dbi.events, &k, &v, MDB_APPEND)) != 0)
		return store_error(rc, "write event");
	return 0;
}

static int append_one(state_txn *st, docket_ledger *l, MDB_txn *txn, docket_event *ev,
		      docket_append_result *res, docket_buf *payload, docket_buf *frame)
{
	uint8_t hash[LEDGER_HASH_LEN];
	uint64_t seq;
	int duplicate, error;

	if ((error = ledger_redact_event(l, txn, ev)) < 0 ||
	    (error = state_apply(st, ev, STATE_APPEND, 0, &seq, &duplicate, res)) < 0)
		return error;
	res->seq = seq;
	res->duplicate = duplicate;
	if (duplicate)
		return 0;
	if ((error = event_pack(payload, ev)) < 0 ||
	    (error = chain_next(hash, state_head_hash(st), seq, (const uint8_t *)payload->ptr, payload->len)) < 0)
		return error;
	docket_buf_clear(frame);
	if ((error = frame_encode(frame, l, txn, (const uint8_t *)payload->ptr, payload->len, hash)) < 0 ||
	    (error = put_frame(l, txn, seq, frame)) < 0)
		return error;
	state_set_head(st, seq, hash);
	state_count_bytes(st, payload->len, frame->len);
	return 0;
}

/* One attempt at the whole batch in one transaction. */
static int append_txn(docket_ledger *l, docket_event **events, size_t n, docket_append_result *results)
{
	docket_buf payload = DOCKET_BUF_INIT, frame = DOCKET_BUF_INIT;
	state_txn *st = NULL;
	MDB_txn *txn = NULL;
	int error;

	if ((error = store_txn_begin(&txn, l, 0)) < 0)
		return error;
	if ((error = state_txn_begin(&st, l, txn)) < 0)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		memset(&results[i], 0, sizeof(results[i]));
		if (i == n / 2 && i > 0)
			docket_crash_point("append.mid_batch");
		if ((error = append_one(st, l, txn, events[i], &results[i], &payload, &frame)) < 0) {
			if (n > 1 && error != DOCKET_EMAPFULL)
				docket_error_prefix("event %zu of %zu: ", i + 1, n);
			docket_error_set_index(i + 1);
			goto cleanup;
		}
	}
	if ((error = state_txn_finish(st)) < 0 ||
	    (error = frame_maybe_train(l, txn, state_head_seq(st))) < 0)
		goto cleanup;
	docket_crash_point("append.before_commit");
	error = store_txn_commit(l, txn);
	txn = NULL;
	if (error == 0)
		docket_crash_point("append.after_commit");
cleanup:
	if (txn)
		store_txn_abort(l, txn);
	state_txn_free(st);
	docket_buf_dispose(&payload);
	docket_buf_dispose(&frame);
	return error;
}

int ledger_append(docket_ledger *l, docket_event **events, size_t n, docket_append_result *results)
{
	docket_append_result *own = NULL;
	assigned *inputs = NULL;
	int error;

	if (l->flags & DOCKET_OPEN_READONLY)
		return docket_error_set(DOCKET_EINVALID, "ledger %s is open read-only", l->path);
	if (n == 0)
		return 0;
	if (!results && !(results = own = docket_calloc(n, sizeof(*own))))
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	if (!(inputs = docket_calloc(n, sizeof(*inputs)))) {
		docket_free(own);
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		remember_input(&inputs[i], events[i]);
	for (;;) {
		error = append_txn(l, events, n, results);
		if (error != DOCKET_EMAPFULL)
			break;
		/* Replay the whole transaction in a bigger map. */
		for (size_t i = 0; i < n; i++)
			reset_assigned(&inputs[i], events[i]);
		pthread_mutex_lock(&l->codec.lock);
		codec_forget(&l->codec);
		pthread_mutex_unlock(&l->codec.lock);
		if ((error = store_grow(l)) < 0)
			break;
	}
	if (error < 0) {
		for (size_t i = 0; i < n; i++)
			reset_assigned(&inputs[i], events[i]);
	}
	docket_free(inputs);
	docket_free(own);
	return error;
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
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
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
