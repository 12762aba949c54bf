/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_store.c: the storage side of the state machine: the projection
 * records (InvocationState, SessionState) and their protobuf encoding, the
 * one-entry caches written back at the end of a transaction, the pending
 * index, event packing and re-send digests, and the state transaction's
 * head, epoch, clock and byte counters. The transitions and their numbered
 * invariants are in state.c.
 */
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/* ---- projection records <-> protobuf ---- */

/* protobuf-c returns NULL for bad bytes and for a failed allocation alike. */
static int unpack_error(const char *what)
{
	if (docket_alloc_take_failure())
		return docket_error_set(DOCKET_ENOMEM, "out of memory decoding %s", what);
	return docket_error_set(DOCKET_ECORRUPT, "%s does not decode", what);
}

static void digest_field(ProtobufCBinaryData *out, const uint8_t *d)
{
	static const uint8_t zero[LEDGER_HASH_LEN];

	if (memcmp(d, zero, LEDGER_HASH_LEN) == 0) {
		out->data = NULL;
		out->len = 0;
	} else {
		out->data = (uint8_t *)d;
		out->len = LEDGER_HASH_LEN;
	}
}

static void digest_copy(uint8_t *out, const ProtobufCBinaryData *in)
{
	memset(out, 0, LEDGER_HASH_LEN);
	if (in->len == LEDGER_HASH_LEN)
		memcpy(out, in->data, LEDGER_HASH_LEN);
}

void state_str_copy(char *out, size_t cap, const char *in)
{
	size_t n = in ? strnlen(in, cap - 1) : 0;

	if (n)
		memcpy(out, in, n);
	out[n] = '\0';
}

static int inv_state_encode(docket_buf *out, const inv_state *s)
{
	Docket__V1__InvocationState m = DOCKET__V1__INVOCATION_STATE__INIT;
	size_t n;
	int error;

	m.intent_seq = s->intent_seq;
	m.verdict = s->verdict;
	m.phase = s->phase;
	m.recovery = s->recovery;
	m.open_request = (char *)s->open_request;
	m.last_result = s->last_result;
	m.last_request = (char *)s->last_request;
	m.attempts = s->attempts;
	m.last_seq = s->last_seq;
	m.redispatch_granted = s->redispatch_granted;
	m.tool = (char *)s->tool;
	m.dispatch_seq = s->dispatch_seq;
	m.outcome_seq = s->outcome_seq;
	m.status = s->status;
	m.requests = s->requests;
	m.request_seq = s->request_seq;
	m.settle_seq = s->settle_seq;
	m.request_revision = s->request_revision;
	m.dispatch_epoch = s->dispatch_epoch;
	m.refused = s->refused;
	n = docket__v1__invocation_state__get_packed_size(&m);
	docket_buf_clear(out);
	if ((error = docket_buf_reserve(out, n)) < 0)
		return error;
	out->len = docket__v1__invocation_state__pack(&m, (uint8_t *)out->ptr);
	return 0;
}

int state_dispatch_token(char out[48], const char *session, const char *invocation, uint64_t intent_seq,
			 uint32_t attempt)
{
	docket_buf in = DOCKET_BUF_INIT;
	uint8_t be[12], digest[LEDGER_HASH_LEN];
	int error;

	docket_be64_put(be, intent_seq);
	docket_be32_put(be + 8, attempt);
	if ((error = docket_buf_put(&in, session, strlen(session) + 1)) < 0 ||
	    (error = docket_buf_put(&in, invocation, strlen(invocation) + 1)) < 0 ||
	    (error = docket_buf_put(&in, be, sizeof(be))) < 0 ||
	    (error = state_sha256(digest, in.ptr, in.len)) < 0) {
		docket_buf_dispose(&in);
		return error;
	}
	docket_buf_dispose(&in);
	memcpy(out, "dt-", 3);
	docket_hex(out + 3, digest, 16);
	return 0;
}

int inv_state_decode(inv_state *out, const char *session, const char *invocation, const void *data, size_t len)
{
	Docket__V1__InvocationState *m;
	int error;

	docket_alloc_take_failure();
	m = docket__v1__invocation_state__unpack(&docket_pb_allocator, len, data);

	memset(out, 0, sizeof(*out));
	if (!m)
		return unpack_error("invocation record");
	out->intent_seq = m->intent_seq;
	out->verdict = m->verdict;
	out->phase = m->phase;
	out->recovery = m->recovery;
	state_str_copy(out->open_request, sizeof(out->open_request), m->open_request);
	out->last_result = m->last_result;
	state_str_copy(out->last_request, sizeof(out->last_request), m->last_request);
	out->attempts = m->attempts;
	out->last_seq = m->last_seq;
	out->redispatch_granted = m->redispatch_granted;
	state_str_copy(out->tool, sizeof(out->tool), m->tool);
	out->dispatch_seq = m->dispatch_seq;
	out->outcome_seq = m->outcome_seq;
	out->status = m->status;
	out->requests = m->requests;
	out->request_seq = m->request_seq;
	out->settle_seq = m->settle_seq;
	out->request_revision = m->request_revision;
	out->dispatch_epoch = m->dispatch_epoch;
	out->refused = m->refused;
	docket__v1__invocation_state__free_unpacked(m, &docket_pb_allocator);
	/* the token of the last dispatch is derived, not stored (issue 12):
	 * idempotent mode keeps the first attempt's */
	if (!out->attempts)
		return 0;
	error = state_dispatch_token(out->token, session, invocation, out->intent_seq,
				     out->recovery == DOCKET__V1__RECOVERY_MODE__RECOVERY_MODE_IDEMPOTENT ? 1
												   : out->attempts);
	return error;
}

static int sess_state_encode(docket_buf *out, const sess_state *s)
{
	Docket__V1__SessionState m = DOCKET__V1__SESSION_STATE__INIT;
	size_t n;
	int error;

	m.opened_seq = s->opened_seq;
	m.closed_seq = s->closed_seq;
	m.policy_revision = s->policy_revision;
	m.policy_format = s->policy_format;
	digest_field(&m.policy_hash, s->policy_hash);
	m.never_asks = s->never_asks;
	m.events = s->events;
	m.invocations = s->invocations;
	m.pending = s->pending;
	m.first_time = (char *)s->first_time;
	m.last_time = (char *)s->last_time;
	m.runtime = (char *)s->runtime;
	digest_field(&m.opened_digest, s->opened_digest);
	m.parent = (char *)s->parent;
	m.grants = s->grants;
	m.policy_seq = s->policy_seq;
	n = docket__v1__session_state__get_packed_size(&m);
	docket_buf_clear(out);
	if ((error = docket_buf_reserve(out, n)) < 0)
		return error;
	out->len = docket__v1__session_state__pack(&m, (uint8_t *)out->ptr);
	return 0;
}

int sess_state_decode(sess_state *out, const void *data, size_t len)
{
	Docket__V1__SessionState *m;

	docket_alloc_take_failure();
	m = docket__v1__session_state__unpack(&docket_pb_allocator, len, data);

	memset(out, 0, sizeof(*out));
	if (!m)
		return unpack_error("session record");
	out->opened_seq = m->opened_seq;
	out->closed_seq = m->closed_seq;
	out->policy_revision = m->policy_revision;
	out->policy_format = m->policy_format;
	digest_copy(out->policy_hash, &m->policy_hash);
	out->never_asks = m->never_asks;
	out->events = m->events;
	out->invocations = m->invocations;
	out->pending = m->pending;
	state_str_copy(out->first_time, sizeof(out->first_time), m->first_time);
	state_str_copy(out->last_time, sizeof(out->last_time), m->last_time);
	state_str_copy(out->runtime, sizeof(out->runtime), m->runtime);
	digest_copy(out->opened_digest, &m->opened_digest);
	state_str_copy(out->parent, sizeof(out->parent), m->parent);
	out->grants = m->grants;
	out->policy_seq = m->policy_seq;
	docket__v1__session_state__free_unpacked(m, &docket_pb_allocator);
	return 0;
}

const char *inv_pending_state(const inv_state *inv)
{
	int granted = inv->last_result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_APPROVED ||
		      inv->last_result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_APPROVED_FOR_SESSION;

	switch (inv->phase) {
	case DOCKET__V1__PHASE__PHASE_AWAITING_APPROVAL:
		return "awaiting_approval";
	case DOCKET__V1__PHASE__PHASE_DISPATCHED:
		return "in_doubt";
	case DOCKET__V1__PHASE__PHASE_COMPLETED:
		return "completed";
	default:
		break;
	}
	switch (inv->verdict) {
	case DOCKET__V1__VERDICT__VERDICT_ALLOWED:
		return "ready";
	case DOCKET__V1__VERDICT__VERDICT_DENIED:
	case DOCKET__V1__VERDICT__VERDICT_UNSUPPORTED:
		return "refused";
	case DOCKET__V1__VERDICT__VERDICT_APPROVAL_REQUIRED:
		if (granted)
			return "ready";
		return inv->last_result && inv->last_result != DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_SUPERSEDED
			? "refused" : "needs_approval";
	default:
		if (granted)
			return "ready";
		return inv->last_result ? "refused" : "undecided";
	}
}

/* ---- packing and digests ---- */

int event_pack(docket_buf *out, const docket_event *ev)
{
	size_t n = docket__v1__event__get_packed_size(ev);
	int error;

	docket_buf_clear(out);
	if ((error = docket_buf_reserve(out, n)) < 0)
		return error;
	out->len = docket__v1__event__pack(ev, (uint8_t *)out->ptr);
	return 0;
}

int event_unpack(docket_event **out, const uint8_t *data, size_t len)
{
	docket_alloc_take_failure();
	*out = docket__v1__event__unpack(&docket_pb_allocator, len, data);
	if (!*out)
		return unpack_error("event payload");
	if ((*out)->body_case == DOCKET__V1__EVENT__BODY__NOT_SET) {
		docket_event_free(*out);
		*out = NULL;
		return docket_error_set(DOCKET_ECORRUPT, "event has no body");
	}
	return 0;
}

int state_sha256(uint8_t out[LEDGER_HASH_LEN], const void *data, size_t len)
{
	return ledger_sha256(out, data, len);
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Length of the packing of `time` (field 1) and `epoch` (field 2) at the
 * start of the packed event, or (size_t)-1 if the bytes are not what is
 * expected. protobuf-c packs fields in field-number order and leaves out
 * proto3 fields holding their default, so the packing of the event with
 * time and epoch cleared is exactly the rest of the payload.
 */
static size_t time_epoch_prefix(const docket_event *ev, const uint8_t *p, size_t len)
{
	size_t n = 0, tlen = ev->time ? strlen(ev->time) : 0;

	if (tlen) {
		if (len < 1 || p[0] != (1 << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED))
			return (size_t)-1;
		n = 1 + varint_len(tlen) + tlen;
	}
	if (ev->epoch) {
		if (n >= len || p[n] != (2 << 3 | PROTOBUF_C_WIRE_TYPE_VARINT))
			return (size_t)-1;
		n += 1 + varint_len(ev->epoch);
	}
	return n <= len ? n : (size_t)-1;
}

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
	prefix = time_epoch_prefix(ev, (const uint8_t *)st->payload.ptr, st->payload.len);
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
	const seg_writer *w = st->writer;

	if (w && w->count && seq >= w->first && seq - w->first < w->count)
		return seg_writer_payload(w, seq, p, len);
	return reader_payload(r, seq, p, len);
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
		prefix = time_epoch_prefix(ev, p, len);
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

/* ---- cache: session and invocation records ---- */

static int sess_flush(state_txn *st)
{
	int error;

	if (!st->sess_dirty)
		return 0;
	if ((error = sess_state_encode(&st->scratch, &st->sess)) < 0)
		return error;
	if ((error = overlay_put(&st->ov, st->l->dbi.sessions, st->sess_id, strlen(st->sess_id), st->scratch.ptr,
				 st->scratch.len)) < 0)
		return error;
	st->sess_dirty = 0;
	return overlay_full(&st->ov) ? overlay_write(&st->ov, st->txn) : 0;
}

/* Load the session record into the cache; 0 if found, DOCKET_ENOTFOUND if not. */
int state_sess_load(state_txn *st, const char *session)
{
	MDB_val k, v;
	size_t len = strlen(session);
	int rc, error;

	if (st->sess_loaded && strcmp(st->sess_id, session) == 0)
		return st->sess.opened_seq ? 0 : DOCKET_ENOTFOUND;
	if ((error = sess_flush(st)) < 0)
		return error;
	if (len == 0 || len > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "session id must be 1..%d bytes", STATE_ID_MAX);
	memcpy(st->sess_id, session, len + 1);
	st->sess_loaded = 1;
	memset(&st->sess, 0, sizeof(st->sess));
	k.mv_data = (void *)session;
	k.mv_size = len;
	rc = overlay_get(&st->ov, st->l->dbi.sessions, k.mv_data, k.mv_size, &v) ? 0
		: mdb_get(st->txn, st->l->dbi.sessions, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read session");
	return sess_state_decode(&st->sess, v.mv_data, v.mv_size);
}

static int inv_flush(state_txn *st)
{
	int error;

	if (!st->inv_dirty)
		return 0;
	if ((error = inv_state_encode(&st->scratch, &st->inv)) < 0)
		return error;
	if ((error = overlay_put(&st->ov, st->l->dbi.invocations, st->inv_key.ptr, st->inv_key.len,
				 st->scratch.ptr, st->scratch.len)) < 0)
		return error;
	st->inv_dirty = 0;
	return overlay_full(&st->ov) ? overlay_write(&st->ov, st->txn) : 0;
}

int state_inv_load(state_txn *st, const char *session, const char *invocation)
{
	size_t slen = strlen(session), ilen = strlen(invocation);
	MDB_val k, v;
	int rc, error;

	if (slen + 1 + ilen > 511)
		return docket_error_set(DOCKET_EINVALID,
			"session and invocation ids together must not exceed 510 bytes");
	if (st->inv_loaded && st->inv_key.len == slen + 1 + ilen &&
	    memcmp(st->inv_key.ptr, session, slen + 1) == 0 &&
	    memcmp(st->inv_key.ptr + slen + 1, invocation, ilen) == 0)
		return st->inv.intent_seq ? 0 : DOCKET_ENOTFOUND;
	if ((error = inv_flush(st)) < 0)
		return error;
	docket_buf_clear(&st->inv_key);
	if ((error = docket_buf_put(&st->inv_key, session, slen + 1)) < 0 ||
	    (error = docket_buf_put(&st->inv_key, invocation, ilen)) < 0) {
		st->inv_loaded = 0;
		return error;
	}
	st->inv_loaded = 1;
	memset(&st->inv, 0, sizeof(st->inv));
	k.mv_data = st->inv_key.ptr;
	k.mv_size = st->inv_key.len;
	rc = overlay_get(&st->ov, st->l->dbi.invocations, k.mv_data, k.mv_size, &v) ? 0
		: mdb_get(st->txn, st->l->dbi.invocations, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read invocation");
	return inv_state_decode(&st->inv, session, invocation, v.mv_data, v.mv_size);
}

/*
 * The pending index holds one more key, a single NUL byte (no session id
 * can start with one), so that it never becomes empty: LMDB frees the root
 * page of a tree that empties and allocates a fresh one at the next put, so
 * a tree emptied once per invocation burned a page per call (issue 12).
 */
static const char pending_sentinel[1] = { 0 };

int state_pending_set(state_txn *st, int present)
{
	MDB_dbi dbi = st->l->dbi.pending;
	int error;

	/* deferred (overlay.c): the sentinel sorts first, so it is in place
	 * before any delete */
	if (present)
		return overlay_defer(&st->ov, dbi, OV_PUT, st->inv_key.ptr, st->inv_key.len, NULL, 0);
	if ((error = overlay_defer(&st->ov, dbi, OV_PUT_NEW, pending_sentinel, sizeof(pending_sentinel), NULL, 0)) < 0)
		return error;
	return overlay_defer(&st->ov, dbi, OV_DEL, st->inv_key.ptr, st->inv_key.len, NULL, 0);
}

int state_pending_is_sentinel(const void *key, size_t len)
{
	return len == sizeof(pending_sentinel) && memcmp(key, pending_sentinel, len) == 0;
}

int state_pending_count(docket_ledger *l, MDB_txn *txn, uint64_t *out)
{
	MDB_val k = { sizeof(pending_sentinel), (void *)pending_sentinel }, v;
	MDB_stat ms;
	int rc;

	*out = 0;
	if ((rc = mdb_stat(txn, l->dbi.pending, &ms)) != 0)
		return store_error(rc, "read pending");
	*out = ms.ms_entries;
	if ((rc = mdb_get(txn, l->dbi.pending, &k, &v)) == 0 && *out)
		(*out)--;
	else if (rc != 0 && rc != MDB_NOTFOUND)
		return store_error(rc, "read pending");
	return 0;
}

/* ---- transaction ---- */

int state_txn_begin(state_txn **out, docket_ledger *l, MDB_txn *txn)
{
	state_txn *st;
	MDB_val head;
	int error;

	*out = NULL;
	if (!(st = docket_calloc(1, sizeof(*st))))
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	st->l = l;
	st->txn = txn;
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

	if ((error = sess_flush(st)) < 0 || (error = inv_flush(st)) < 0 ||
	    (error = overlay_write(&st->ov, st->txn)) < 0)
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
	static const char *const meta[] = { "head_seq", "head_hash", "epoch", "payload_bytes", "frame_bytes" };

	for (size_t i = 0; i < sizeof(dbis) / sizeof(dbis[0]); i++) {
		int rc = mdb_drop(txn, dbis[i], 0);

		if (rc != 0)
			return store_error(rc, "clear projection");
	}
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		MDB_val k = { strlen(meta[i]), (void *)meta[i] };
		int rc = mdb_del(txn, l->dbi.meta, &k, NULL);

		if (rc != 0 && rc != MDB_NOTFOUND)
			return store_error(rc, "clear meta");
	}
	return 0;
}
