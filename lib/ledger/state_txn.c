// SPDX-License-Identifier: Apache-2.0
/*
 * state_txn.c: the state transaction's lifecycle: begin, finish (write
 * back the caches, head, epoch, clock and byte counters), free, the head
 * of the chain, where stored events are read back, the re-send checks
 * against them, and dropping every projection (reindex, verify). The
 * transitions and their numbered invariants are in state.c.
 */
#include <stddef.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/*
 * Digest of an event as the sender gave it: time and epoch excluded, so a
 * re-send that was stamped differently is still recognised. That is the
 * SHA-256 of the packing of the event with time and epoch cleared, which is
 * the packed event (kept in st->payload for append.c, see state_payload())
 * without its time/epoch prefix. Handlers call this only once the event is
 * final: time and epoch are assigned before the handlers run, and no
 * handler that digests changes the event.
 */
int state_event_digest(uint8_t out[LEDGER_HASH_LEN], state_txn *st, docket_event *ev)
{
	char *time = ev->time;
	uint64_t epoch = ev->epoch;
	size_t prefix;
	int error;

	if (!st->payload_ok) {
		if ((error = event_pack(&st->payload, ev)) < 0)
			return error;
		st->payload_ok = 1;
	}
	prefix = event_time_epoch_prefix(ev, (const uint8_t *)st->payload.ptr, st->payload.len);
	if (prefix != (size_t)-1)
		return state_sha256(out, st->payload.ptr + prefix, st->payload.len - prefix);
	/* not reached with protobuf-c's packing; pack the cleared event */
	ev->time = (char *)protobuf_c_empty_string;
	ev->epoch = 0;
	error = event_pack(&st->scratch, ev);
	ev->time = time;
	ev->epoch = epoch;
	return error < 0 ? error : state_sha256(out, st->scratch.ptr, st->scratch.len);
}

/*
 * The payload of event `seq`: from the segments of `st->txn`, or from the
 * writer's buffer when it is part of this commit and not yet written.
 */
static int stored_payload(state_txn *st, uint64_t seq, ledger_reader *r, const uint8_t **p, size_t *len)
{
	int error = st->writer ? seg_writer_payload(st->writer, seq, p, len) : DOCKET_ENOTFOUND;

	return error == DOCKET_ENOTFOUND ? reader_payload(r, seq, p, len) : error;
}

/*
 * Whether the event stored at `seq` has the re-send digest `digest`. The
 * invocation records keep the seqs of its events, not their digests (issue
 * 12: 136 bytes per invocation): a re-send is rare, and the stored payload
 * is what state_event_digest() hashed when it was appended.
 */
int state_stored_matches(state_txn *st, uint64_t seq, const uint8_t digest[LEDGER_HASH_LEN])
{
	uint8_t stored[LEDGER_HASH_LEN];
	docket_event *ev = NULL;
	ledger_reader r;
	const uint8_t *p;
	size_t len, prefix;
	int error;

	if (st->no_source)
		return 1; /* a rebuild from a log this one cannot read back: a repeat */
	reader_init(&r, st->src ? st->src : st->l, st->src ? st->src_txn : st->txn);
	if ((error = stored_payload(st, seq, &r, &p, &len)) == 0 && (error = event_unpack(&ev, p, len)) == 0) {
		prefix = event_time_epoch_prefix(ev, p, len);
		error = prefix == (size_t)-1
			? docket_error_set(DOCKET_ECORRUPT, "stored event %llu is not packed canonically",
					   (unsigned long long)seq)
			: state_sha256(stored, p + prefix, len - prefix);
	}
	if (error == DOCKET_ENOTFOUND)
		error = docket_error_set(DOCKET_ECORRUPT, "seq %llu is indexed but missing", (unsigned long long)seq);
	docket_event_free(ev);
	reader_dispose(&r);
	if (error < 0)
		return error;
	return memcmp(stored, digest, LEDGER_HASH_LEN) == 0;
}

void state_set_writer(state_txn *st, const seg_writer *w)
{
	st->writer = w;
}

void state_set_source(state_txn *st, docket_ledger *l, MDB_txn *txn)
{
	st->src = l;
	st->src_txn = txn;
	st->no_source = l == NULL;
}

/* ---- transaction ---- */

int state_txn_begin(state_txn **out, docket_ledger *l, MDB_txn *txn)
{
	state_txn *st;
	MDB_val head;
	int error;

	*out = NULL;
	if (!(st = docket_calloc(1, sizeof(*st))))
		return docket_error_set_oom();
	st->l = l;
	st->txn = txn;
	sess_cache_init(&st->cache);
	overlay_init(&st->ov);
	if ((error = store_meta_get_u64(txn, l, "head_seq", &st->head_seq)) < 0 ||
	    (error = store_meta_get_u64(txn, l, "epoch", &st->epoch)) < 0 ||
	    (error = store_meta_get_u64(txn, l, "clock_us", &st->clock_us)) < 0)
		goto fail;
	st->start_clock_us = st->clock_us;
	error = store_meta_get(txn, l, "head_hash", &head);
	if (error == 0 && head.mv_size == LEDGER_HASH_LEN)
		memcpy(st->head_hash, head.mv_data, LEDGER_HASH_LEN);
	else if (error != DOCKET_ENOTFOUND && error < 0)
		goto fail;
	else if (error == 0) {
		error = docket_error_set(DOCKET_ECORRUPT, "bad chain head in meta");
		goto fail;
	}
	st->start_seq = st->head_seq;
	st->start_epoch = st->epoch;
	*out = st;
	return 0;
fail:
	state_txn_free(st);
	return error;
}

int state_txn_finish(state_txn *st)
{
	int error;

	/* the invocation first: its record may go into the session's */
	if ((error = state_inv_flush(st)) < 0 || (error = sess_cache_park(st)) < 0 ||
	    (error = sess_cache_flush(st)) < 0 || (error = overlay_write(&st->ov, st->txn)) < 0)
		return error;
	if (st->head_seq != st->start_seq) {
		if ((error = store_meta_put_u64(st->txn, st->l, "head_seq", st->head_seq)) < 0 ||
		    (error = store_meta_put(st->txn, st->l, "head_hash", st->head_hash, LEDGER_HASH_LEN)) < 0)
			return error;
	}
	if (st->epoch != st->start_epoch &&
	    (error = store_meta_put_u64(st->txn, st->l, "epoch", st->epoch)) < 0)
		return error;
	if (st->clock_us != st->start_clock_us &&
	    (error = store_meta_put_u64(st->txn, st->l, "clock_us", st->clock_us)) < 0)
		return error;
	if (st->payload_bytes || st->frame_bytes) {
		uint64_t payload, frame;

		if ((error = store_meta_get_u64(st->txn, st->l, "payload_bytes", &payload)) < 0 ||
		    (error = store_meta_get_u64(st->txn, st->l, "frame_bytes", &frame)) < 0 ||
		    (error = store_meta_put_u64(st->txn, st->l, "payload_bytes", payload + st->payload_bytes)) < 0 ||
		    (error = store_meta_put_u64(st->txn, st->l, "frame_bytes", frame + st->frame_bytes)) < 0)
			return error;
	}
	return 0;
}

void state_count_bytes(state_txn *st, size_t payload, size_t frame)
{
	st->payload_bytes += payload;
	st->frame_bytes += frame;
}

void state_txn_free(state_txn *st)
{
	if (!st)
		return;
	docket_buf_dispose(&st->inv_key);
	docket_buf_dispose(&st->scratch);
	docket_buf_dispose(&st->payload);
	sess_cache_dispose(&st->cache);
	overlay_dispose(&st->ov);
	state_mark_free(st->mark);
	docket_free(st);
}

const docket_buf *state_payload(const state_txn *st)
{
	return st->payload_ok ? &st->payload : NULL;
}

uint64_t state_head_seq(const state_txn *st)
{
	return st->head_seq;
}

const uint8_t *state_head_hash(const state_txn *st)
{
	return st->head_hash;
}

void state_set_head(state_txn *st, uint64_t seq, const uint8_t hash[LEDGER_HASH_LEN])
{
	st->head_seq = seq;
	memcpy(st->head_hash, hash, LEDGER_HASH_LEN);
}

int state_clear_projections(docket_ledger *l, MDB_txn *txn)
{
	MDB_dbi dbis[] = { l->dbi.sessions, l->dbi.session_events, l->dbi.invocations,
			   l->dbi.pending, l->dbi.policies };
	static const char *const meta[] = { "head_seq", "head_hash", "epoch", "payload_bytes", "frame_bytes",
					    "pending_count" };
	int error;

	for (size_t i = 0; i < sizeof(dbis) / sizeof(dbis[0]); i++) {
		int rc = mdb_drop(txn, dbis[i], 0);

		if (rc != 0)
			return store_error(rc, "clear projection");
	}
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		if ((error = store_meta_del(txn, l, meta[i])) < 0)
			return error;
	}
	if ((error = state_lineage_clear(l, txn)) < 0)
		return error;
	return state_incident_clear(l, txn);
}
