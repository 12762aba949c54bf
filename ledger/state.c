/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c: the invocation state machine and every projection.
 *
 * Every event goes through state_apply() inside the write transaction that
 * appends it (STATE_APPEND), and again when reindex or verify rebuild the
 * projections from the log (STATE_REBUILD). One code path decides what is
 * legal, so a history that was accepted once is accepted again, and a log
 * edited behind the ledger's back is caught by verify.
 *
 * Invariants (DESIGN §3, numbered as there; 8-10 are docket's additions,
 * see docs/architecture.md):
 *
 *   1. Nothing about an invocation precedes its tool.intent; intents are
 *      unique per session; an identical re-send is idempotent, a different
 *      intent with the same id is a conflict.
 *   2. approval.requested only when the verdict is approval_required or
 *      undecided, at most one open request, never while the session's
 *      policy never asks, never after dispatch.
 *   3. approval.settled settles the open request exactly once (same result
 *      again: idempotent; different: conflict); an outcome cannot be
 *      recorded while a request is open.
 *   4. tool.dispatched only when dispatchable (allowed, or approved) and not
 *      yet dispatched; another attempt only after a recovery `redispatch`
 *      action and only in modes replay_safe/idempotent; unsupported never.
 *   5. Exactly one tool.completed per invocation; nothing after it.
 *   6. Policy revisions of a session are 1, 2, 3 ... without gaps.
 *   7. runtime.started raises the epoch; an event with an older epoch is
 *      stale, one with an epoch not yet issued is refused.
 *   8. A session's events follow its session.opened (unique per session)
 *      and precede its session.closed, which needs every invocation of the
 *      session to have its outcome.
 *   9. The outcome agrees with the history: ok/error/timeout/indeterminate
 *      need a dispatch, denied/unsupported need none, unsupported needs an
 *      unsupported (or undecided) verdict.
 *  10. A recovery.action matches the invocation's state (redispatch,
 *      reconcile, park, indeterminate: in doubt; reprompt, close: awaiting
 *      approval; dispatch: dispatchable; evaluate: undecided).
 *
 * States of an invocation (phase) and the events that move it:
 *
 *                tool.intent
 *                    |
 *                    v
 *   +-----------> DECIDING ----------- tool.completed (denied, unsupported,
 *   |              |    |                               cancelled) --+
 *   | approval.    |    | tool.dispatched                           |
 *   | settled      |    v                                           |
 *   |   approval.  |  DISPATCHED --- tool.completed ---------------->+
 *   |   requested  |    ^    |                                      v
 *   |              v    +----+ recovery.action redispatch       COMPLETED
 *   +---- AWAITING_APPROVAL       + tool.dispatched (attempt+1)
 *
 * handle_*() below perform the transitions; each names the invariant it
 * enforces in its error.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ledger_internal.h"
#include "policy_doc.h"
#include "util/alloc.h"
#include "util/error.h"

struct state_txn {
	docket_ledger *l;
	MDB_txn *txn;
	uint64_t head_seq;
	uint8_t head_hash[LEDGER_HASH_LEN];
	uint64_t epoch;
	uint64_t start_seq;
	uint64_t start_epoch;
	uint64_t payload_bytes;   /* added by this transaction */
	uint64_t frame_bytes;

	/* one-entry caches, written back on switch and at finish */
	char sess_id[STATE_ID_MAX + 1];
	int sess_loaded, sess_dirty;
	sess_state sess;
	docket_buf inv_key;
	int inv_loaded, inv_dirty;
	inv_state inv;

	docket_buf scratch;
	/* The event of the current state_apply() packed as it will be stored,
	 * when event_digest() needed it (valid while payload_ok). */
	docket_buf payload;
	int payload_ok;
};

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

static void str_copy(char *out, size_t cap, const char *in)
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
	m.token = (char *)s->token;
	digest_field(&m.intent_digest, s->intent_digest);
	m.last_seq = s->last_seq;
	m.redispatch_granted = s->redispatch_granted;
	m.tool = (char *)s->tool;
	m.dispatch_seq = s->dispatch_seq;
	m.outcome_seq = s->outcome_seq;
	m.status = s->status;
	m.requests = s->requests;
	digest_field(&m.settle_digest, s->settle_digest);
	digest_field(&m.request_digest, s->request_digest);
	m.request_seq = s->request_seq;
	digest_field(&m.outcome_digest, s->outcome_digest);
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

int inv_state_decode(inv_state *out, const void *data, size_t len)
{
	Docket__V1__InvocationState *m;

	docket_alloc_take_failure();
	m = docket__v1__invocation_state__unpack(&docket_pb_allocator, len, data);

	memset(out, 0, sizeof(*out));
	if (!m)
		return unpack_error("invocation record");
	out->intent_seq = m->intent_seq;
	out->verdict = m->verdict;
	out->phase = m->phase;
	out->recovery = m->recovery;
	str_copy(out->open_request, sizeof(out->open_request), m->open_request);
	out->last_result = m->last_result;
	str_copy(out->last_request, sizeof(out->last_request), m->last_request);
	out->attempts = m->attempts;
	str_copy(out->token, sizeof(out->token), m->token);
	digest_copy(out->intent_digest, &m->intent_digest);
	out->last_seq = m->last_seq;
	out->redispatch_granted = m->redispatch_granted;
	str_copy(out->tool, sizeof(out->tool), m->tool);
	out->dispatch_seq = m->dispatch_seq;
	out->outcome_seq = m->outcome_seq;
	out->status = m->status;
	out->requests = m->requests;
	digest_copy(out->settle_digest, &m->settle_digest);
	digest_copy(out->request_digest, &m->request_digest);
	out->request_seq = m->request_seq;
	digest_copy(out->outcome_digest, &m->outcome_digest);
	out->settle_seq = m->settle_seq;
	out->request_revision = m->request_revision;
	out->dispatch_epoch = m->dispatch_epoch;
	out->refused = m->refused;
	docket__v1__invocation_state__free_unpacked(m, &docket_pb_allocator);
	return 0;
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
	str_copy(out->first_time, sizeof(out->first_time), m->first_time);
	str_copy(out->last_time, sizeof(out->last_time), m->last_time);
	str_copy(out->runtime, sizeof(out->runtime), m->runtime);
	digest_copy(out->opened_digest, &m->opened_digest);
	str_copy(out->parent, sizeof(out->parent), m->parent);
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

static int sha256(uint8_t out[LEDGER_HASH_LEN], const void *data, size_t len)
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
static int event_digest(uint8_t out[LEDGER_HASH_LEN], state_txn *st, docket_event *ev)
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
		return sha256(out, st->payload.ptr + prefix, st->payload.len - prefix);
	/* not reached with protobuf-c's packing; pack the cleared event */
	ev->time = (char *)protobuf_c_empty_string;
	ev->epoch = 0;
	error = event_pack(&st->scratch, ev);
	ev->time = time;
	ev->epoch = epoch;
	return error < 0 ? error : sha256(out, st->scratch.ptr, st->scratch.len);
}

/* ---- cache: session and invocation records ---- */

static int sess_flush(state_txn *st)
{
	MDB_val k, v;
	int rc, error;

	if (!st->sess_dirty)
		return 0;
	if ((error = sess_state_encode(&st->scratch, &st->sess)) < 0)
		return error;
	k.mv_data = st->sess_id;
	k.mv_size = strlen(st->sess_id);
	v.mv_data = st->scratch.ptr;
	v.mv_size = st->scratch.len;
	if ((rc = mdb_put(st->txn, st->l->dbi.sessions, &k, &v, 0)) != 0)
		return store_error(rc, "write session");
	st->sess_dirty = 0;
	return 0;
}

/* Load the session record into the cache; 0 if found, DOCKET_ENOTFOUND if not. */
static int sess_load(state_txn *st, const char *session)
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
	rc = mdb_get(st->txn, st->l->dbi.sessions, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read session");
	return sess_state_decode(&st->sess, v.mv_data, v.mv_size);
}

static int inv_flush(state_txn *st)
{
	MDB_val k, v;
	int rc, error;

	if (!st->inv_dirty)
		return 0;
	if ((error = inv_state_encode(&st->scratch, &st->inv)) < 0)
		return error;
	k.mv_data = st->inv_key.ptr;
	k.mv_size = st->inv_key.len;
	v.mv_data = st->scratch.ptr;
	v.mv_size = st->scratch.len;
	if ((rc = mdb_put(st->txn, st->l->dbi.invocations, &k, &v, 0)) != 0)
		return store_error(rc, "write invocation");
	st->inv_dirty = 0;
	return 0;
}

static int inv_load(state_txn *st, const char *session, const char *invocation)
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
	rc = mdb_get(st->txn, st->l->dbi.invocations, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read invocation");
	return inv_state_decode(&st->inv, v.mv_data, v.mv_size);
}

static int pending_set(state_txn *st, int present)
{
	MDB_val k = { st->inv_key.len, st->inv_key.ptr }, v = { 0, NULL };
	int rc = present ? mdb_put(st->txn, st->l->dbi.pending, &k, &v, 0)
			 : mdb_del(st->txn, st->l->dbi.pending, &k, NULL);

	if (rc != 0 && !(rc == MDB_NOTFOUND && !present))
		return store_error(rc, "update pending index");
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
	    (error = store_meta_get_u64(txn, l, "epoch", &st->epoch)) < 0)
		goto fail;
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

	if ((error = sess_flush(st)) < 0 || (error = inv_flush(st)) < 0)
		return error;
	if (st->head_seq != st->start_seq) {
		if ((error = store_meta_put_u64(st->txn, st->l, "head_seq", st->head_seq)) < 0 ||
		    (error = store_meta_put(st->txn, st->l, "head_hash", st->head_hash, LEDGER_HASH_LEN)) < 0)
			return error;
	}
	if (st->epoch != st->start_epoch &&
	    (error = store_meta_put_u64(st->txn, st->l, "epoch", st->epoch)) < 0)
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

/* ---- helpers for the handlers ---- */

#define V(x) DOCKET__V1__VERDICT__VERDICT_##x
#define PH(x) DOCKET__V1__PHASE__PHASE_##x
#define AR(x) DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_##x
#define OS(x) DOCKET__V1__OUTCOME_STATUS__OUTCOME_STATUS_##x
#define RM(x) DOCKET__V1__RECOVERY_MODE__RECOVERY_MODE_##x
#define RA(x) DOCKET__V1__RECOVERY_ACTION_KIND__RECOVERY_ACTION_##x

/* The per-event context handed to the handlers. */
typedef struct apply_ctx {
	state_txn *st;
	docket_event *ev;
	state_mode mode;
	uint64_t seq;          /* the seq this event gets if it is written */
	uint64_t *seq_out;
	int *duplicate;
	docket_append_result *res;
	int closed;            /* the session is closed: only an identical re-send passes */
} apply_ctx;

static int refuse(const apply_ctx *c, int code, int invariant, const char *fmt, ...) DOCKET_PRINTF(4, 5);

/* Error naming the invariant, the event type, the session and the invocation. */
static int refuse(const apply_ctx *c, int code, int invariant, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (invariant)
		return docket_error_invariant(code, invariant,
			"invariant %d: %s rejected (session \"%s\", invocation \"%s\"): %s",
			invariant, docket_event_type(c->ev), c->ev->session, c->ev->invocation, what);
	return docket_error_set(code, "%s rejected (session \"%s\", invocation \"%s\"): %s",
				docket_event_type(c->ev), c->ev->session, c->ev->invocation, what);
}

static int mark_duplicate(const apply_ctx *c, uint64_t seq)
{
	*c->duplicate = 1;
	*c->seq_out = seq;
	return 0;
}

static int is_granted(int result)
{
	return result == AR(APPROVED) || result == AR(APPROVED_FOR_SESSION);
}

/* DESIGN §3: these settlements end in tool.completed(denied); nothing re-opens them. */
static int is_refusal(int result)
{
	return result == AR(DENIED) || result == AR(ABORTED) || result == AR(EXPIRED) || result == AR(CLOSED);
}

static const char *verdict_str(int v)
{
	const char *s = docket_verdict_name(v);

	return v == 0 || !s ? "undecided" : s;
}

static int dispatch_token(char out[48], const char *session, const char *invocation,
			  uint64_t intent_seq, uint32_t attempt)
{
	docket_buf in = DOCKET_BUF_INIT;
	uint8_t be[12], digest[LEDGER_HASH_LEN];
	int error;

	docket_be64_put(be, intent_seq);
	docket_be32_put(be + 8, attempt);
	if ((error = docket_buf_put(&in, session, strlen(session) + 1)) < 0 ||
	    (error = docket_buf_put(&in, invocation, strlen(invocation) + 1)) < 0 ||
	    (error = docket_buf_put(&in, be, sizeof(be))) < 0 ||
	    (error = sha256(digest, in.ptr, in.len)) < 0) {
		docket_buf_dispose(&in);
		return error;
	}
	docket_buf_dispose(&in);
	memcpy(out, "dt-", 3);
	docket_hex(out + 3, digest, 16);
	return 0;
}

/* ---- handlers, one per event type ---- */

static int handle_session_opened(apply_ctx *c)
{
	state_txn *st = c->st;
	Docket__V1__SessionOpened *b = c->ev->session_opened;
	uint8_t digest[LEDGER_HASH_LEN];
	int error = sess_load(st, c->ev->session);

	if (error < 0 && error != DOCKET_ENOTFOUND)
		return error;
	if (error == 0) {
		if ((error = event_digest(digest, st, c->ev)) < 0)
			return error;
		if (memcmp(digest, st->sess.opened_digest, LEDGER_HASH_LEN) == 0)
			return mark_duplicate(c, st->sess.opened_seq);
		return refuse(c, DOCKET_ECONFLICT, 8, "session was already opened at seq %llu with other content",
			      (unsigned long long)st->sess.opened_seq);
	}
	if ((error = event_digest(st->sess.opened_digest, st, c->ev)) < 0)
		return error;
	st->sess.opened_seq = c->seq;
	str_copy(st->sess.runtime, sizeof(st->sess.runtime), b->runtime);
	str_copy(st->sess.parent, sizeof(st->sess.parent), b->parent);
	st->sess_dirty = 1;
	return 0;
}

/* Every event of a session other than session.opened: invariant 8. */
static int require_open_session(apply_ctx *c)
{
	int error = sess_load(c->st, c->ev->session);

	if (error == DOCKET_ENOTFOUND)
		return refuse(c, DOCKET_ETRANSITION, 8, "session was never opened");
	if (error < 0)
		return error;
	if (c->st->sess.closed_seq) {
		if (c->ev->body_case == DOCKET__V1__EVENT__BODY_SESSION_CLOSED)
			return mark_duplicate(c, c->st->sess.closed_seq);
		c->closed = 1; /* the handler may still find an identical re-send */
	}
	return 0;
}

static int handle_session_closed(apply_ctx *c)
{
	sess_state *s = &c->st->sess;

	if (s->pending)
		return refuse(c, DOCKET_ETRANSITION, 8,
			      "%llu invocation(s) of the session have no outcome yet",
			      (unsigned long long)s->pending);
	s->closed_seq = c->seq;
	c->st->sess_dirty = 1;
	return 0;
}

static int handle_policy_revised(apply_ctx *c)
{
	state_txn *st = c->st;
	Docket__V1__PolicyRevised *b = c->ev->policy_revised;
	uint8_t hash[LEDGER_HASH_LEN];
	size_t len = strlen(b->policy_json);
	MDB_val k = { sizeof(hash), hash }, v = { len, b->policy_json };
	int rc, error;

	if ((error = sha256(hash, b->policy_json, len)) < 0)
		return error;
	if (b->revision != 0 && b->revision <= st->sess.policy_revision) {
		if (b->revision == st->sess.policy_revision &&
		    b->format == (uint32_t)st->sess.policy_format &&
		    memcmp(hash, st->sess.policy_hash, sizeof(hash)) == 0)
			return mark_duplicate(c, st->sess.policy_seq);
		return refuse(c, DOCKET_ECONFLICT, 6, "revision %u already exists with other content "
			      "(the session is at revision %u)", b->revision, st->sess.policy_revision);
	}
	if (b->revision != st->sess.policy_revision + 1)
		return refuse(c, DOCKET_ETRANSITION, 6, "revision %u does not follow revision %u",
			      b->revision, st->sess.policy_revision);
	if ((rc = mdb_put(st->txn, st->l->dbi.policies, &k, &v, 0)) != 0)
		return store_error(rc, "write policy");
	st->sess.policy_revision = b->revision;
	st->sess.policy_format = b->format;
	memcpy(st->sess.policy_hash, hash, sizeof(hash));
	if ((error = policy_doc_never_asks(docket_policy_format_name(b->format), b->policy_json)) < 0)
		return error;
	st->sess.never_asks = error;
	st->sess.policy_seq = c->seq;
	st->sess_dirty = 1;
	return 0;
}

static int handle_intent(apply_ctx *c)
{
	state_txn *st = c->st;
	Docket__V1__ToolIntent *b = c->ev->tool_intent;
	uint8_t digest[LEDGER_HASH_LEN];
	int error = inv_load(st, c->ev->session, c->ev->invocation);

	if (error < 0 && error != DOCKET_ENOTFOUND)
		return error;
	if ((error = event_digest(digest, st, c->ev)) < 0)
		return error;
	if (st->inv.intent_seq) {
		if (memcmp(digest, st->inv.intent_digest, sizeof(digest)) == 0)
			return mark_duplicate(c, st->inv.intent_seq);
		return refuse(c, DOCKET_ECONFLICT, 1, "another intent with this id exists (seq %llu)",
			      (unsigned long long)st->inv.intent_seq);
	}
	if (strlen(b->tool) > STATE_ID_MAX)
		return refuse(c, DOCKET_EINVALID, 0, "tool name longer than %d bytes", STATE_ID_MAX);
	memcpy(st->inv.intent_digest, digest, sizeof(digest));
	st->inv.intent_seq = c->seq;
	st->inv.verdict = b->decision ? (int)b->decision->verdict : V(UNSPECIFIED);
	st->inv.phase = PH(DECIDING);
	st->inv.recovery = b->recovery;
	str_copy(st->inv.tool, sizeof(st->inv.tool), b->tool);
	st->inv_dirty = 1;
	st->sess.invocations++;
	st->sess.pending++;
	st->sess_dirty = 1;
	return pending_set(st, 1);
}

/* Every invocation event but the intent: invariants 1 and 5. */
static int require_invocation(apply_ctx *c)
{
	int error = inv_load(c->st, c->ev->session, c->ev->invocation);

	if (error == DOCKET_ENOTFOUND)
		return refuse(c, DOCKET_ETRANSITION, 1, "no tool.intent for this invocation");
	return error;
}

static int require_not_completed(apply_ctx *c)
{
	if (c->st->inv.phase == PH(COMPLETED))
		return refuse(c, DOCKET_ETRANSITION, 5, "the invocation already has its outcome (seq %llu)",
			      (unsigned long long)c->st->inv.outcome_seq);
	return 0;
}

/*
 * An approval request may carry docket's re-decision: a call decided
 * allowed under an earlier revision that the current revision asks about
 * (revalidation). It only narrows, and it must name the current revision.
 */
static int check_redecision(apply_ctx *c)
{
	const Docket__V1__Decision *d = c->ev->approval_requested->decision;
	uint32_t current = c->st->sess.policy_revision;

	if (!d)
		return 0;
	if (d->verdict != V(APPROVAL_REQUIRED))
		return refuse(c, DOCKET_ETRANSITION, 2, "a request's decision must be approval_required, not %s",
			      verdict_str(d->verdict));
	if (d->policy_revision != current)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 2,
			      "decided under policy revision %u, the session is at revision %u",
			      d->policy_revision, current);
	return 0;
}

static int handle_approval_requested(apply_ctx *c)
{
	inv_state *inv = &c->st->inv;
	const char *req = c->ev->approval_requested->request;
	uint8_t digest[LEDGER_HASH_LEN];
	int error;

	if ((error = event_digest(digest, c->st, c->ev)) < 0)
		return error;
	if ((inv->phase == PH(AWAITING_APPROVAL) && strcmp(inv->open_request, req) == 0) ||
	    (inv->request_seq && strcmp(inv->last_request, req) == 0)) {
		if (memcmp(digest, inv->request_digest, sizeof(digest)) == 0)
			return mark_duplicate(c, inv->request_seq);
		return refuse(c, DOCKET_ECONFLICT, 2, "request \"%s\" already exists with other content", req);
	}
	if ((error = require_not_completed(c)) < 0)
		return error;
	if (inv->phase == PH(AWAITING_APPROVAL))
		return refuse(c, DOCKET_ETRANSITION, 2, "request \"%s\" is still open", inv->open_request);
	if (inv->phase == PH(DISPATCHED))
		return refuse(c, DOCKET_ETRANSITION, 2, "the invocation was already dispatched");
	if (inv->refused)
		return refuse(c, DOCKET_ETRANSITION, 3, "request \"%s\" was settled %s: only the outcome denied may follow",
			      inv->last_request, docket_approval_result_name(inv->last_result));
	if ((error = check_redecision(c)) < 0)
		return error;
	if (inv->verdict != V(APPROVAL_REQUIRED) && inv->verdict != V(UNSPECIFIED) && !c->ev->approval_requested->decision)
		return refuse(c, DOCKET_ETRANSITION, 2, "verdict is %s, not approval_required",
			      verdict_str(inv->verdict));
	if (c->st->sess.never_asks)
		return refuse(c, DOCKET_ETRANSITION, 2,
			      "the session's policy (revision %u) never asks for approval",
			      c->st->sess.policy_revision);
	if (strlen(req) > STATE_ID_MAX)
		return refuse(c, DOCKET_EINVALID, 0, "request id longer than %d bytes", STATE_ID_MAX);
	inv->verdict = V(APPROVAL_REQUIRED);
	inv->phase = PH(AWAITING_APPROVAL);
	str_copy(inv->open_request, sizeof(inv->open_request), req);
	str_copy(inv->last_request, sizeof(inv->last_request), req);
	memcpy(inv->request_digest, digest, sizeof(digest));
	inv->request_seq = c->seq;
	inv->request_revision = c->st->sess.policy_revision;
	inv->last_result = AR(UNSPECIFIED);
	inv->requests++;
	return 0;
}

/*
 * `superseded` is docket's own settlement: the policy was revised while the
 * request was open and the new revision decides outright. So its decision
 * must name the session's current revision, that revision must be newer
 * than the one the request was made under, and it must decide (allowed,
 * denied, unsupported), not ask again.
 */
static int check_supersede(apply_ctx *c)
{
	const Docket__V1__Decision *d = c->ev->approval_settled->decision;
	uint32_t current = c->st->sess.policy_revision;

	if (!d)
		return refuse(c, DOCKET_EINVALID, 3, "a superseded settlement needs the new decision");
	if (current <= c->st->inv.request_revision)
		return refuse(c, DOCKET_ETRANSITION, 3,
			      "superseded, but the policy was not revised since the request (revision %u)",
			      c->st->inv.request_revision);
	if (d->policy_revision != current)
		return refuse(c, DOCKET_ETRANSITION, 3,
			      "superseded by revision %u, but the session is at revision %u",
			      d->policy_revision, current);
	if (d->verdict == V(APPROVAL_REQUIRED) || d->verdict == V(UNSPECIFIED))
		return refuse(c, DOCKET_ETRANSITION, 3, "a superseded settlement must decide, not ask (%s)",
			      verdict_str(d->verdict));
	return 0;
}

static int handle_approval_settled(apply_ctx *c)
{
	inv_state *inv = &c->st->inv;
	Docket__V1__ApprovalSettled *b = c->ev->approval_settled;
	uint8_t digest[LEDGER_HASH_LEN];
	int error;

	if ((error = event_digest(digest, c->st, c->ev)) < 0)
		return error;
	if (inv->phase != PH(AWAITING_APPROVAL) || strcmp(inv->open_request, b->request) != 0) {
		if (inv->last_result && strcmp(inv->last_request, b->request) == 0) {
			if (memcmp(digest, inv->settle_digest, sizeof(digest)) == 0)
				return mark_duplicate(c, inv->settle_seq);
			return refuse(c, DOCKET_ECONFLICT, 3, "request \"%s\" was already settled as %s",
				      b->request, docket_approval_result_name(inv->last_result));
		}
		if ((error = require_not_completed(c)) < 0)
			return error;
		return refuse(c, DOCKET_ETRANSITION, 3, "no open request \"%s\"", b->request);
	}
	if (b->result == AR(SUPERSEDED) && (error = check_supersede(c)) < 0)
		return error;
	inv->phase = PH(DECIDING);
	inv->open_request[0] = '\0';
	inv->last_result = b->result;
	inv->settle_seq = c->seq;
	inv->refused = is_refusal(b->result);
	if (b->result == AR(APPROVED_FOR_SESSION)) {
		c->st->sess.grants++;
		c->st->sess_dirty = 1;
	}
	memcpy(inv->settle_digest, digest, sizeof(digest));
	if (b->result == AR(SUPERSEDED))
		inv->verdict = b->decision->verdict;
	return 0;
}

static int dispatchable(const inv_state *inv)
{
	if (inv->phase != PH(DECIDING) || inv->attempts)
		return 0;
	switch (inv->verdict) {
	case V(ALLOWED):
		return 1;
	case V(APPROVAL_REQUIRED):
		return is_granted(inv->last_result);
	case V(UNSPECIFIED):
		/* record mode: a dispatch with no approval implies allowed */
		return inv->requests == 0 || is_granted(inv->last_result);
	default:
		return 0;
	}
}

/*
 * Authority mode: docket revalidated the call under the session's policy
 * and the dispatch carries that revision and verdict. Both are checked
 * here, inside the transaction that appends the dispatch: a revision that
 * is no longer current is a conflict (the runtime asks again and docket
 * decides under the new one), and the revalidated verdict can only narrow
 * what the ledger's own state allows.
 */
static int check_revalidation(apply_ctx *c)
{
	const Docket__V1__ToolDispatched *b = c->ev->tool_dispatched;
	const inv_state *inv = &c->st->inv;

	if (b->policy_revision && b->policy_revision != c->st->sess.policy_revision)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 4,
			      "revalidated under policy revision %u, the session is at revision %u: decide again",
			      b->policy_revision, c->st->sess.policy_revision);
	if (b->verdict == V(DENIED) || b->verdict == V(UNSUPPORTED))
		return refuse(c, DOCKET_ETRANSITION, 4, "revalidation refused the call (%s)", verdict_str(b->verdict));
	if (b->verdict == V(APPROVAL_REQUIRED) && inv->phase == PH(DECIDING) && !is_granted(inv->last_result))
		return refuse(c, DOCKET_ETRANSITION, 4,
			      "the current policy (revision %u) requires an approval; ask for one first",
			      c->st->sess.policy_revision);
	return 0;
}

static int handle_dispatched(apply_ctx *c)
{
	state_txn *st = c->st;
	inv_state *inv = &st->inv;
	Docket__V1__ToolDispatched *b = c->ev->tool_dispatched;
	uint32_t attempt;
	char token[48];
	int error;

	/* a re-send naming the current attempt (a lost reply, a re-import) is
	 * the same dispatch, also after the outcome */
	if ((inv->phase == PH(DISPATCHED) || inv->phase == PH(COMPLETED)) && b->attempt &&
	    b->attempt == inv->attempts &&
	    (!*b->token || strcmp(b->token, inv->token) == 0) && c->mode == STATE_APPEND) {
		c->res->attempt = inv->attempts;
		str_copy(c->res->token, sizeof(c->res->token), inv->token);
		return mark_duplicate(c, inv->dispatch_seq);
	}
	if ((error = require_not_completed(c)) < 0)
		return error;
	if (inv->verdict == V(UNSUPPORTED))
		return refuse(c, DOCKET_ETRANSITION, 4, "an unsupported call is never dispatchable");
	if (inv->phase == PH(AWAITING_APPROVAL))
		return refuse(c, DOCKET_ETRANSITION, 4, "approval request \"%s\" is still open", inv->open_request);
	if ((error = check_revalidation(c)) < 0)
		return error;
	if (inv->phase == PH(DISPATCHED)) {
		if (!inv->redispatch_granted)
			return refuse(c, DOCKET_ETRANSITION, 4,
				      "already dispatched (attempt %u); another attempt needs a recovery redispatch",
				      inv->attempts);
	} else if (!dispatchable(inv)) {
		return refuse(c, DOCKET_ETRANSITION, 4, "not dispatchable: verdict %s, approval %s",
			      verdict_str(inv->verdict),
			      inv->last_result ? docket_approval_result_name(inv->last_result) : "none");
	}
	attempt = inv->attempts + 1;
	/* idempotent mode keeps the first token: the executor dedups on it */
	if ((error = dispatch_token(token, c->ev->session, c->ev->invocation, inv->intent_seq,
				    inv->recovery == RM(IDEMPOTENT) ? 1 : attempt)) < 0)
		return error;
	if (b->attempt && b->attempt != attempt)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 4,
			      "attempt %u given, the next attempt is %u", b->attempt, attempt);
	if (*b->token && strcmp(b->token, token) != 0)
		return refuse(c, c->mode == STATE_APPEND ? DOCKET_ECONFLICT : DOCKET_ECORRUPT, 4,
			      "token \"%s\" given, the ledger's token is \"%s\"", b->token, token);
	if (c->mode == STATE_APPEND) {
		if (!*b->token) {
			char *dup = docket_strdup(token);

			if (!dup)
				return docket_error_set(DOCKET_ENOMEM, "out of memory");
			b->token = dup;
		}
		b->attempt = attempt;
	} else if (!b->attempt || !*b->token) {
		return refuse(c, DOCKET_ECORRUPT, 4, "stored dispatch lacks its attempt or token");
	}
	if (inv->verdict == V(UNSPECIFIED) && inv->requests == 0)
		inv->verdict = V(ALLOWED);
	inv->attempts = attempt;
	inv->redispatch_granted = 0;
	inv->phase = PH(DISPATCHED);
	inv->dispatch_seq = c->seq;
	inv->dispatch_epoch = c->ev->epoch;
	str_copy(inv->token, sizeof(inv->token), token);
	c->res->attempt = attempt;
	str_copy(c->res->token, sizeof(c->res->token), token);
	return 0;
}

static int handle_completed(apply_ctx *c)
{
	state_txn *st = c->st;
	inv_state *inv = &st->inv;
	int status = c->ev->tool_completed->status;
	uint8_t digest[LEDGER_HASH_LEN];
	int error;

	if ((error = event_digest(digest, st, c->ev)) < 0)
		return error;
	if (inv->phase == PH(COMPLETED)) {
		if (memcmp(digest, inv->outcome_digest, sizeof(digest)) == 0)
			return mark_duplicate(c, inv->outcome_seq);
		return refuse(c, DOCKET_ECONFLICT, 5, "the invocation already has its outcome (seq %llu, %s)",
			      (unsigned long long)inv->outcome_seq, docket_outcome_status_name(inv->status));
	}
	if (inv->phase == PH(AWAITING_APPROVAL))
		return refuse(c, DOCKET_ETRANSITION, 3, "approval request \"%s\" is still open; settle it first",
			      inv->open_request);
	switch (status) {
	case OS(OK):
	case OS(ERROR):
	case OS(TIMEOUT):
	case OS(INDETERMINATE):
		if (inv->phase != PH(DISPATCHED))
			return refuse(c, DOCKET_ETRANSITION, 9, "status %s needs a dispatch first",
				      docket_outcome_status_name(status));
		break;
	case OS(UNSUPPORTED):
		if (inv->verdict != V(UNSUPPORTED) && inv->verdict != V(UNSPECIFIED))
			return refuse(c, DOCKET_ETRANSITION, 9, "status unsupported for a call with verdict %s",
				      verdict_str(inv->verdict));
		/* fall through */
	case OS(DENIED):
		if (inv->attempts)
			return refuse(c, DOCKET_ETRANSITION, 9, "status %s after a dispatch",
				      docket_outcome_status_name(status));
		break;
	default:
		break;
	}
	if (inv->verdict == V(UNSPECIFIED) && inv->requests == 0) {
		if (status == OS(DENIED))
			inv->verdict = V(DENIED);
		else if (status == OS(UNSUPPORTED))
			inv->verdict = V(UNSUPPORTED);
	}
	memcpy(inv->outcome_digest, digest, sizeof(digest));
	inv->phase = PH(COMPLETED);
	inv->status = status;
	inv->outcome_seq = c->seq;
	inv->redispatch_granted = 0;
	st->sess.pending--;
	st->sess_dirty = 1;
	return pending_set(st, 0);
}

static int handle_recovery_action(apply_ctx *c)
{
	inv_state *inv = &c->st->inv;
	int action = c->ev->recovery_action->action;
	int ok;
	int error;

	if ((error = require_not_completed(c)) < 0)
		return error;
	switch (action) {
	case RA(REDISPATCH):
		if (inv->phase == PH(DISPATCHED) && inv->recovery != RM(REPLAY_SAFE) &&
		    inv->recovery != RM(IDEMPOTENT))
			return refuse(c, DOCKET_ETRANSITION, 4,
				      "recovery mode %s never re-dispatches",
				      inv->recovery ? docket_recovery_mode_name(inv->recovery) : "never_auto_retry");
		ok = inv->phase == PH(DISPATCHED);
		if (ok && c->ev->epoch <= inv->dispatch_epoch)
			return refuse(c, DOCKET_ETRANSITION, 4,
				      "attempt %u was dispatched at epoch %llu: a redispatch needs a newer runtime (runtime.started)",
				      inv->attempts, (unsigned long long)inv->dispatch_epoch);
		break;
	case RA(RECONCILE):
	case RA(PARK):
	case RA(INDETERMINATE):
		ok = inv->phase == PH(DISPATCHED);
		break;
	case RA(REPROMPT):
	case RA(CLOSE):
		ok = inv->phase == PH(AWAITING_APPROVAL);
		break;
	case RA(DISPATCH):
		ok = dispatchable(inv);
		break;
	case RA(EVALUATE):
		ok = inv->phase == PH(DECIDING) && inv->verdict == V(UNSPECIFIED);
		break;
	default:
		ok = 0;
	}
	if (!ok)
		return refuse(c, DOCKET_ETRANSITION, 10, "action %s does not fit state %s",
			      docket_recovery_action_name(action), inv_pending_state(inv));
	if (action == RA(REDISPATCH))
		inv->redispatch_granted = 1;
	if (action == RA(EVALUATE) && c->ev->recovery_action->decision)
		inv->verdict = c->ev->recovery_action->decision->verdict;
	return 0;
}

/* ---- the entry point ---- */

static int stamp_time(docket_event *ev)
{
	struct timespec ts;
	struct tm tm;
	char buf[96];
	char *dup;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 ts.tv_nsec / 1000);
	if (!(dup = docket_strdup(buf)))
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	ev->time = dup;
	return 0;
}

/* Invariant 7: fencing by epoch. */
static int check_epoch(apply_ctx *c)
{
	state_txn *st = c->st;
	docket_event *ev = c->ev;

	if (ev->body_case == DOCKET__V1__EVENT__BODY_RUNTIME_STARTED) {
		uint64_t next = st->epoch + 1;

		if (ev->epoch && ev->epoch != next)
			return refuse(c, c->mode == STATE_APPEND ? DOCKET_ESTALE : DOCKET_ECORRUPT, 7,
				      "runtime.started carries epoch %llu, the next epoch is %llu",
				      (unsigned long long)ev->epoch, (unsigned long long)next);
		ev->epoch = next;
		st->epoch = next;
		if (c->res)
			c->res->epoch = next;
		return 0;
	}
	if (c->mode == STATE_APPEND && ev->epoch == 0)
		ev->epoch = st->epoch;
	if (ev->epoch < st->epoch)
		return refuse(c, DOCKET_ESTALE, 7, "stale epoch %llu: the ledger is at epoch %llu",
			      (unsigned long long)ev->epoch, (unsigned long long)st->epoch);
	if (ev->epoch > st->epoch)
		return refuse(c, DOCKET_ESTALE, 7, "epoch %llu has not been issued (the ledger is at epoch %llu)",
			      (unsigned long long)ev->epoch, (unsigned long long)st->epoch);
	if (c->res)
		c->res->epoch = ev->epoch;
	return 0;
}

static int session_event_handler(apply_ctx *c);

static int dispatch_handler(apply_ctx *c)
{
	int error;

	switch (c->ev->body_case) {
	case DOCKET__V1__EVENT__BODY_RUNTIME_STARTED:
		return 0;
	case DOCKET__V1__EVENT__BODY_SESSION_OPENED:
		return handle_session_opened(c);
	default:
		break;
	}
	if ((error = require_open_session(c)) < 0 || *c->duplicate)
		return error;
	if ((error = session_event_handler(c)) < 0 || !c->closed || *c->duplicate)
		return error;
	/* whatever the handler did is discarded with the refused append */
	return refuse(c, DOCKET_ETRANSITION, 8, "session was closed at seq %llu",
		      (unsigned long long)c->st->sess.closed_seq);
}

static int session_event_handler(apply_ctx *c)
{
	int error;

	switch (c->ev->body_case) {
	case DOCKET__V1__EVENT__BODY_SESSION_CLOSED:
		return handle_session_closed(c);
	case DOCKET__V1__EVENT__BODY_POLICY_REVISED:
		return handle_policy_revised(c);
	case DOCKET__V1__EVENT__BODY_TOOL_INTENT:
		return handle_intent(c);
	default:
		break;
	}
	if ((error = require_invocation(c)) < 0)
		return error;
	switch (c->ev->body_case) {
	case DOCKET__V1__EVENT__BODY_APPROVAL_REQUESTED:
		return handle_approval_requested(c);
	case DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED:
		return handle_approval_settled(c);
	case DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED:
		return handle_dispatched(c);
	case DOCKET__V1__EVENT__BODY_TOOL_COMPLETED:
		return handle_completed(c);
	case DOCKET__V1__EVENT__BODY_RECOVERY_ACTION:
		return handle_recovery_action(c);
	default:
		return refuse(c, DOCKET_EINVALID, 0, "event has no known type");
	}
}

/* Projection updates every written event of a session shares. */
static int record_session_event(state_txn *st, const docket_event *ev, uint64_t seq)
{
	uint8_t be[8];
	MDB_val k = { strlen(ev->session), ev->session }, v = { sizeof(be), be };
	int rc;

	docket_be64_put(be, seq);
	if ((rc = mdb_put(st->txn, st->l->dbi.session_events, &k, &v, MDB_APPENDDUP)) != 0 &&
	    (rc != MDB_KEYEXIST || (rc = mdb_put(st->txn, st->l->dbi.session_events, &k, &v, 0)) != 0))
		return store_error(rc, "write session index");
	st->sess.events++;
	if (!st->sess.first_time[0])
		str_copy(st->sess.first_time, sizeof(st->sess.first_time), ev->time);
	str_copy(st->sess.last_time, sizeof(st->sess.last_time), ev->time);
	st->sess_dirty = 1;
	return 0;
}

int state_apply(state_txn *st, docket_event *ev, state_mode mode, uint64_t seq,
		uint64_t *seq_out, int *duplicate, docket_append_result *res)
{
	docket_append_result scratch;
	apply_ctx c;
	int error;

	memset(&scratch, 0, sizeof(scratch));
	st->payload_ok = 0;
	c.st = st;
	c.ev = ev;
	c.mode = mode;
	c.seq = st->head_seq + 1;
	c.seq_out = seq_out;
	c.duplicate = duplicate;
	c.res = res ? res : &scratch;
	c.closed = 0;
	*duplicate = 0;
	*seq_out = c.seq;
	if (mode == STATE_REBUILD && seq != c.seq)
		return docket_error_set(DOCKET_ECORRUPT, "seq %llu follows seq %llu",
					(unsigned long long)seq, (unsigned long long)st->head_seq);
	if (!*ev->time) {
		if (mode == STATE_REBUILD)
			return refuse(&c, DOCKET_ECORRUPT, 0, "stored event has no time");
		if ((error = stamp_time(ev)) < 0)
			return error;
	}
	if ((error = check_epoch(&c)) < 0)
		return error;
	if ((error = dispatch_handler(&c)) < 0)
		return error;
	if (ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED)
		st->payload_ok = 0; /* the handler assigned attempt and token */
	if (*duplicate) {
		if (*seq_out == 0)
			*seq_out = c.seq - 1; /* no better answer: the head */
		return 0;
	}
	if (st->inv_loaded && ev->invocation && *ev->invocation) {
		st->inv.last_seq = c.seq;
		st->inv_dirty = 1;
	}
	if (ev->session && *ev->session)
		return record_session_event(st, ev, c.seq);
	return 0;
}
