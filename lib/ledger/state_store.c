/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_store.c: the storage side of the state machine: the projection
 * records (InvocationState, SessionState) and their protobuf encoding, the
 * one-entry caches written back at the end of a transaction, the pending
 * index, event packing and re-send digests, and the state transaction's
 * head, epoch, clock and byte counters. The transitions and their numbered
 * invariants are in state.c.
 */
#include <stddef.h>
#include <string.h>

#include "state_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/* ---- projection records <-> protobuf ---- */

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

/*
 * The invocation record (issue 12, projection version 4): unsigned LEB128
 * varints, no field tags, no digests, no token (all recomputed from the
 * stored events or derived):
 *
 *   intent_seq
 *   mode       bit 0 INV_APPROVAL, bits 1-3 verdict, 4-6 phase, 7-9
 *              recovery, 10-12 status, 13-15 last_result, 16 refused,
 *              17 redispatch_granted, then the flags INV_WIDE, INV_OPEN,
 *              INV_LAST, INV_ATTEMPTS (the common states fit two bytes)
 *   [INV_WIDE: verdict, phase, recovery, status, last_result, one varint
 *              each, when one of them does not fit its 3 bits]
 *   dispatch_seq - intent_seq (0: none), outcome_seq - intent_seq (0: none)
 *   dispatch_epoch
 *   [INV_APPROVAL: requests, request_seq - intent_seq (0: none),
 *              settle_seq - intent_seq (0: none), request_revision,
 *              last_request (length, bytes)]
 *   [INV_LAST: last_seq - intent_seq; without it last_seq is the latest of
 *              the seqs above]
 *   [INV_ATTEMPTS: attempts; without it 1 if dispatched, else 0]
 *   [INV_OPEN: open_request (length, bytes); without it the last request
 *              while awaiting approval, else empty]
 *
 * The tool is not stored (projection version 6): it is the intent event's
 * (the pending listing reads it there, ledger/read.c). 7 bytes for a
 * completed call without approval (was ~40 of protobuf).
 */
#define INV_APPROVAL (1u << 0)
#define INV_REFUSED (1u << 16)
#define INV_GRANTED (1u << 17)
#define INV_WIDE (1u << 18)
#define INV_OPEN (1u << 19)
#define INV_LAST (1u << 20)
#define INV_ATTEMPTS (1u << 21)
#define INV_ENUMS 0xfffeu
#define INV_MODE_KNOWN ((1u << 22) - 1)
#define INV_REC_MAX (10 * 16 + 3 * (2 + STATE_ID_MAX))

typedef struct rec_writer {
	uint8_t *p;
} rec_writer;

static void rec_varint(rec_writer *w, uint64_t v)
{
	do {
		*w->p++ = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void rec_string(rec_writer *w, const char *s)
{
	size_t n = strlen(s);

	rec_varint(w, n);
	memcpy(w->p, s, n);
	w->p += n;
}

/* seq as a delta from the intent's: every event of an invocation follows
 * its intent (0: none, unless zero_ok, where it is the intent itself) */
static int rec_delta(rec_writer *w, uint64_t intent, uint64_t seq, int zero_ok)
{
	if (!seq && !zero_ok) {
		rec_varint(w, 0);
		return 0;
	}
	if (seq < intent || (seq == intent && !zero_ok))
		return docket_error_set(DOCKET_ECORRUPT, "invocation record: seq %llu does not follow its intent (%llu)",
					(unsigned long long)seq, (unsigned long long)intent);
	rec_varint(w, seq - intent);
	return 0;
}

static int enum_fits(int v)
{
	return v >= 0 && v < 8;
}

static uint64_t seq_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* last_seq when the record does not say (INV_LAST) */
static uint64_t implied_last(const inv_state *s)
{
	return seq_max(seq_max(s->intent_seq, s->dispatch_seq),
		       seq_max(s->outcome_seq, seq_max(s->request_seq, s->settle_seq)));
}

int inv_state_encode(docket_buf *out, const inv_state *s)
{
	int wide = !enum_fits(s->verdict) || !enum_fits(s->phase) || !enum_fits(s->recovery) ||
		   !enum_fits(s->last_result) || !enum_fits(s->status);
	const char *derived_open = s->phase == DOCKET__V1__PHASE__PHASE_AWAITING_APPROVAL ? s->last_request : "";
	int open = strcmp(s->open_request, derived_open) != 0;
	int approval = s->requests || s->request_seq || s->settle_seq || s->request_revision || s->last_request[0];
	int last = s->last_seq != implied_last(s), attempts = s->attempts != (s->dispatch_seq ? 1u : 0u);
	uint32_t mode = 0;
	rec_writer w;
	int error;

	docket_buf_clear(out);
	if ((error = docket_buf_reserve(out, INV_REC_MAX)) < 0)
		return error;
	if (s->verdict < 0 || s->phase < 0 || s->recovery < 0 || s->last_result < 0 || s->status < 0)
		return docket_error_set(DOCKET_EINVALID, "invocation record: negative enumeration");
	if (!wide)
		mode = (uint32_t)s->verdict << 1 | (uint32_t)s->phase << 4 | (uint32_t)s->recovery << 7 |
		       (uint32_t)s->status << 10 | (uint32_t)s->last_result << 13;
	mode |= (approval ? INV_APPROVAL : 0) | (s->refused ? INV_REFUSED : 0) |
		(s->redispatch_granted ? INV_GRANTED : 0) | (wide ? INV_WIDE : 0) | (open ? INV_OPEN : 0) |
		(last ? INV_LAST : 0) | (attempts ? INV_ATTEMPTS : 0);
	w.p = (uint8_t *)out->ptr;
	rec_varint(&w, s->intent_seq);
	rec_varint(&w, mode);
	if (wide) {
		rec_varint(&w, (uint64_t)s->verdict);
		rec_varint(&w, (uint64_t)s->phase);
		rec_varint(&w, (uint64_t)s->recovery);
		rec_varint(&w, (uint64_t)s->status);
		rec_varint(&w, (uint64_t)s->last_result);
	}
	if ((error = rec_delta(&w, s->intent_seq, s->dispatch_seq, 0)) < 0 ||
	    (error = rec_delta(&w, s->intent_seq, s->outcome_seq, 0)) < 0)
		return error;
	rec_varint(&w, s->dispatch_epoch);
	if (approval) {
		rec_varint(&w, s->requests);
		if ((error = rec_delta(&w, s->intent_seq, s->request_seq, 0)) < 0 ||
		    (error = rec_delta(&w, s->intent_seq, s->settle_seq, 0)) < 0)
			return error;
		rec_varint(&w, s->request_revision);
		rec_string(&w, s->last_request);
	}
	if (last && (error = rec_delta(&w, s->intent_seq, s->last_seq, 1)) < 0)
		return error;
	if (attempts)
		rec_varint(&w, s->attempts);
	if (open)
		rec_string(&w, s->open_request);
	out->len = (size_t)(w.p - (uint8_t *)out->ptr);
	return 0;
}

/* A reader of a stored record: every read is bounds-checked; `bad` sticks. */
typedef struct rec_reader {
	const uint8_t *p, *end;
	int bad;
} rec_reader;

static uint64_t rec_get(rec_reader *r)
{
	uint64_t v = 0;

	for (int shift = 0; !r->bad && r->p < r->end && shift < 64; shift += 7) {
		uint8_t b = *r->p++;

		if (shift == 63 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static uint32_t rec_get32(rec_reader *r)
{
	uint64_t v = rec_get(r);

	if (v > UINT32_MAX)
		r->bad = 1;
	return (uint32_t)v;
}

static int rec_get_enum(rec_reader *r)
{
	uint64_t v = rec_get(r);

	if (v > INT32_MAX)
		r->bad = 1;
	return (int)v;
}

/* intent + delta; a delta of 0 is "none" unless zero_ok */
static uint64_t rec_get_seq(rec_reader *r, uint64_t intent, int zero_ok)
{
	uint64_t d = rec_get(r);

	if (!d && !zero_ok)
		return 0;
	if (d > UINT64_MAX - intent)
		r->bad = 1;
	return intent + d;
}

static void rec_get_string(rec_reader *r, char *out, size_t cap)
{
	uint64_t n = rec_get(r);

	out[0] = '\0';
	if (r->bad || n >= cap || n > (uint64_t)(r->end - r->p) || memchr(r->p, '\0', (size_t)n)) {
		r->bad = 1;
		return;
	}
	memcpy(out, r->p, (size_t)n);
	out[n] = '\0';
	r->p += n;
}

static int inv_record_decode(inv_state *out, const void *data, size_t len)
{
	rec_reader r = { data, (const uint8_t *)data + len, 0 };
	uint64_t mode;

	memset(out, 0, sizeof(*out));
	out->intent_seq = rec_get(&r);
	mode = rec_get(&r);
	if (!out->intent_seq || mode > INV_MODE_KNOWN || ((mode & INV_WIDE) && (mode & INV_ENUMS)))
		r.bad = 1;
	if (mode & INV_WIDE) {
		out->verdict = rec_get_enum(&r);
		out->phase = rec_get_enum(&r);
		out->recovery = rec_get_enum(&r);
		out->status = rec_get_enum(&r);
		out->last_result = rec_get_enum(&r);
	} else {
		out->verdict = (int)(mode >> 1 & 7);
		out->phase = (int)(mode >> 4 & 7);
		out->recovery = (int)(mode >> 7 & 7);
		out->status = (int)(mode >> 10 & 7);
		out->last_result = (int)(mode >> 13 & 7);
	}
	out->refused = !!(mode & INV_REFUSED);
	out->redispatch_granted = !!(mode & INV_GRANTED);
	out->dispatch_seq = rec_get_seq(&r, out->intent_seq, 0);
	out->outcome_seq = rec_get_seq(&r, out->intent_seq, 0);
	out->dispatch_epoch = rec_get(&r);
	if (mode & INV_APPROVAL) {
		out->requests = rec_get32(&r);
		out->request_seq = rec_get_seq(&r, out->intent_seq, 0);
		out->settle_seq = rec_get_seq(&r, out->intent_seq, 0);
		out->request_revision = rec_get32(&r);
		rec_get_string(&r, out->last_request, sizeof(out->last_request));
	}
	out->last_seq = mode & INV_LAST ? rec_get_seq(&r, out->intent_seq, 1) : implied_last(out);
	out->attempts = mode & INV_ATTEMPTS ? rec_get32(&r) : out->dispatch_seq ? 1 : 0;
	if (mode & INV_OPEN)
		rec_get_string(&r, out->open_request, sizeof(out->open_request));
	else if (out->phase == DOCKET__V1__PHASE__PHASE_AWAITING_APPROVAL)
		memcpy(out->open_request, out->last_request, sizeof(out->open_request));
	if (r.bad || r.p != r.end) {
		memset(out, 0, sizeof(*out));
		return docket_error_set(DOCKET_ECORRUPT, "invocation record does not decode");
	}
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
	int error = inv_record_decode(out, data, len);

	/* the token of the last dispatch is derived, not stored (issue 12):
	 * idempotent mode keeps the first attempt's */
	if (error < 0 || !out->attempts)
		return error;
	return state_dispatch_token(out->token, session, invocation, out->intent_seq,
				    out->recovery == DOCKET__V1__RECOVERY_MODE__RECOVERY_MODE_IDEMPOTENT ? 1
												  : out->attempts);
}

/*
 * Recent invocations (issue 12, projection version 6). A session record
 * carries the records of the session's latest SESS_RECENT invocations, in
 * the order they began: per entry the invocation id and its compact record
 * (inv_state_encode), each after its LEB128 length. Serve commits touch
 * every busy session's record anyway; with the records of live calls in
 * them, a commit no longer writes one `invocations` leaf per session.
 *
 * When an invocation begins and the list is full, every entry moves to
 * `invocations` (one sorted run under the session's ordinal: one leaf per
 * SESS_RECENT calls of a session) and the list restarts with it. Whether a
 * record is in the list or in the table then depends only on the order in
 * which the session's invocations began, never on where commits fall, so a
 * rebuild (reindex, verify) writes the same tables.
 */
typedef struct recent_entry {
	const uint8_t *id, *rec;
	size_t ilen, rlen;
	size_t off, end;        /* the entry's bytes in the list */
} recent_entry;

/* The entry at `off` of a list of `len` bytes: 1, 0 at the end, <0 damaged. */
static int recent_next(const uint8_t *list, size_t len, size_t off, recent_entry *e)
{
	rec_reader r = { list + off, list + len, 0 };

	/* every field set on every path: callers read e only after a 1, which
	 * gcc -O3 cannot prove (docket_error_set's result is not known to be
	 * negative) */
	*e = (recent_entry){ NULL, NULL, 0, 0, off, off };
	if (off >= len)
		return 0;
	e->ilen = (size_t)rec_get(&r);
	if (r.bad || e->ilen == 0 || e->ilen > STATE_ID_MAX || e->ilen > (size_t)(r.end - r.p))
		return docket_error_set(DOCKET_ECORRUPT, "session record: bad recent invocation list");
	e->id = r.p;
	r.p += e->ilen;
	e->rlen = (size_t)rec_get(&r);
	if (r.bad || e->rlen == 0 || e->rlen > (size_t)(r.end - r.p))
		return docket_error_set(DOCKET_ECORRUPT, "session record: bad recent invocation list");
	e->rec = r.p;
	e->end = (size_t)(r.p + e->rlen - list);
	return 1;
}

/* Take a stored list into `out`, checking its structure. */
static int recent_adopt(sess_state *out, const uint8_t *list, size_t len)
{
	recent_entry e;
	size_t off = 0;
	int rc;

	out->recent_len = 0;
	out->recent_n = 0;
	if (len > sizeof(out->recent))
		return docket_error_set(DOCKET_ECORRUPT, "session record: recent invocation list too long");
	while ((rc = recent_next(list, len, off, &e)) > 0) {
		off = e.end;
		if (++out->recent_n > SESS_RECENT)
			return docket_error_set(DOCKET_ECORRUPT, "session record: too many recent invocations");
	}
	if (rc < 0)
		return rc;
	if (len)
		memcpy(out->recent, list, len);
	out->recent_len = len;
	return 0;
}

/* The entry of `id` in the session's list: 1 found, 0 not, <0 damaged. */
static int recent_find(const sess_state *s, const char *id, size_t ilen, recent_entry *e)
{
	size_t off = 0;
	int rc;

	while ((rc = recent_next(s->recent, s->recent_len, off, e)) > 0) {
		if (e->ilen == ilen && memcmp(e->id, id, ilen) == 0)
			return 1;
		off = e->end;
	}
	return rc;
}

/* Write the entry (id, rec) at `at` of `out` (capacity checked by callers). */
static size_t recent_entry_put(uint8_t *at, const char *id, size_t ilen, const void *rec, size_t rlen)
{
	rec_writer w = { at };

	rec_varint(&w, ilen);
	memcpy(w.p, id, ilen);
	w.p += ilen;
	rec_varint(&w, rlen);
	memcpy(w.p, rec, rlen);
	w.p += rlen;
	return (size_t)(w.p - at);
}

int sess_state_encode(docket_buf *out, const sess_state *s)
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
	m.parent = (char *)s->parent;
	m.grants = s->grants;
	m.policy_seq = s->policy_seq;
	m.last_seq = s->last_seq;
	m.recent.data = s->recent_len ? (uint8_t *)s->recent : NULL;
	m.recent.len = s->recent_len;
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
	int error;

	docket_alloc_take_failure();
	m = docket__v1__session_state__unpack(&docket_pb_allocator, len, data);

	memset(out, 0, offsetof(sess_state, recent));
	if (!m)
		return ledger_unpack_error("session record");
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
	state_str_copy(out->parent, sizeof(out->parent), m->parent);
	out->grants = m->grants;
	out->policy_seq = m->policy_seq;
	out->last_seq = m->last_seq;
	error = recent_adopt(out, m->recent.data, m->recent.len);
	docket__v1__session_state__free_unpacked(m, &docket_pb_allocator);
	return error;
}

void sess_state_copy(sess_state *dst, const sess_state *src)
{
	memcpy(dst, src, offsetof(sess_state, recent) + src->recent_len);
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

/* ---- digests ---- */

int state_sha256(uint8_t out[LEDGER_HASH_LEN], const void *data, size_t len)
{
	return ledger_sha256(out, data, len);
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

/* ---- cache: session and invocation records ---- */

static int inv_flush(state_txn *st);

/* Load the session record into the cache; 0 if found, DOCKET_ENOTFOUND if
 * not. The record left is parked decoded (sess_cache.c), not encoded. */
int state_sess_load(state_txn *st, const char *session)
{
	MDB_val k, v;
	size_t len = strlen(session);
	int rc, error;

	if (st->sess_loaded && strcmp(st->sess_id, session) == 0)
		return st->sess.opened_seq ? 0 : DOCKET_ENOTFOUND;
	/* the cached invocation is one of the cached session's: its record
	 * goes into that session's record first */
	if ((error = inv_flush(st)) < 0 || (error = sess_cache_park(st)) < 0)
		return error;
	st->inv_loaded = 0;
	st->pending_put_ok = 0;
	st->sess_loaded = 0;
	if (len == 0 || len > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "session id must be 1..%d bytes", STATE_ID_MAX);
	memcpy(st->sess_id, session, len + 1);
	st->sess_loaded = 1;
	st->sess_dirty = 0;
	if (sess_cache_get(st, session, len))
		return st->sess.opened_seq ? 0 : DOCKET_ENOTFOUND;
	memset(&st->sess, 0, offsetof(sess_state, recent));
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

/*
 * The key of an invocation record: the session's ordinal, then the
 * invocation id (issue 12: the session id is not repeated in every key).
 * The ordinal is the seq of the session's session.opened, in an
 * order-preserving, prefix-free encoding whose first byte gives its length:
 * 0xxxxxxx (< 2^7), 10xxxxxx +1 byte (< 2^14), 110xxxxx +2 (< 2^21),
 * 1110xxxx +3 (< 2^28), else 0xF0 and 8 bytes big-endian.
 */
static size_t ordinal_put(uint8_t out[9], uint64_t v)
{
	static const uint8_t tag[] = { 0x00, 0x80, 0xC0, 0xE0 };

	for (size_t n = 1; n <= 4; n++)
		if (v < (uint64_t)1 << (7 * n)) {
			for (size_t i = n; i-- > 0; v >>= 8)
				out[i] = (uint8_t)v;
			out[0] |= tag[n - 1];
			return n;
		}
	out[0] = 0xF0;
	docket_be64_put(out + 1, v);
	return 9;
}

/* Length of the ordinal at the start of a key (its first byte). */
static size_t ordinal_len(uint8_t first)
{
	return first < 0x80 ? 1 : first < 0xC0 ? 2 : first < 0xE0 ? 3 : first < 0xF0 ? 4 : 9;
}

static int inv_key_build(docket_buf *out, uint64_t opened_seq, const char *invocation)
{
	uint8_t ord[9];
	size_t ilen = strlen(invocation);

	docket_buf_clear(out);
	if (ilen == 0 || ilen > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "invocation id must be 1..%d bytes", STATE_ID_MAX);
	return docket_buf_put(out, ord, ordinal_put(ord, opened_seq)) < 0 ? DOCKET_ENOMEM
		: docket_buf_put(out, invocation, ilen);
}

/* The invocation id of the cached record (its key past the ordinal). */
static const char *inv_key_id(const state_txn *st, size_t *len)
{
	size_t n = ordinal_len((uint8_t)st->inv_key.ptr[0]);

	*len = st->inv_key.len - n;
	return st->inv_key.ptr + n;
}

/*
 * The pending index lists only the unfinished invocations whose records are
 * in `invocations`: one still in its session's recent list is listed from
 * its record there (docket_ledger_pending), so the common call, whose
 * outcome comes before eight more calls of its session begin, never writes
 * the index (a page less for the commits of its intent and its outcome).
 * An unfinished record that moves to the table gets its key here.
 */
static int pending_key(uint8_t *out, const char *session, const char *id, size_t ilen)
{
	size_t slen = strlen(session);

	memcpy(out, session, slen + 1);
	memcpy(out + slen + 1, id, ilen);
	return (int)(slen + 1 + ilen);
}

static int pending_index_evicted(state_txn *st, const recent_entry *e)
{
	uint8_t key[2 * STATE_ID_MAX + 1];
	inv_state inv;
	int error;

	if ((error = inv_record_decode(&inv, e->rec, e->rlen)) < 0)
		return error;
	if (inv.phase == DOCKET__V1__PHASE__PHASE_COMPLETED)
		return 0;
	return overlay_defer(&st->ov, st->l->dbi.pending, OV_PUT, key,
			     (size_t)pending_key(key, st->sess_id, (const char *)e->id, e->ilen), NULL, 0);
}

int state_recent_unfinished(const sess_state *s, int (*fn)(void *ctx, const char *id, size_t ilen), void *ctx)
{
	recent_entry e;
	size_t off = 0;
	int rc, error;

	while ((rc = recent_next(s->recent, s->recent_len, off, &e)) > 0) {
		inv_state inv;

		if ((error = inv_record_decode(&inv, e.rec, e.rlen)) < 0)
			return error;
		if (inv.phase != DOCKET__V1__PHASE__PHASE_COMPLETED && (error = fn(ctx, (const char *)e.id, e.ilen)) != 0)
			return error;
		off = e.end;
	}
	return rc;
}

/* Move every recent invocation of the cached session to `invocations`. */
static int recent_evict(state_txn *st)
{
	uint8_t key[9 + STATE_ID_MAX];
	size_t olen = ordinal_put(key, st->sess.opened_seq), off = 0;
	recent_entry e;
	int rc, error;

	while ((rc = recent_next(st->sess.recent, st->sess.recent_len, off, &e)) > 0) {
		memcpy(key + olen, e.id, e.ilen);
		if ((error = overlay_put(&st->ov, st->l->dbi.invocations, key, olen + e.ilen, e.rec, e.rlen)) < 0 ||
		    (error = pending_index_evicted(st, &e)) < 0)
			return error;
		off = e.end;
	}
	if (rc < 0)
		return rc;
	st->sess.recent_len = 0;
	st->sess.recent_n = 0;
	st->sess_dirty = 1;
	return 0;
}

/* Put the cached invocation's record (encoded in st->scratch) into its
 * session's recent list: in place of its entry, or as a new one (the list
 * moved to the table first when it is full). */
static int recent_put(state_txn *st)
{
	sess_state *s = &st->sess;
	size_t ilen, at, old_len = 0;
	const char *id = inv_key_id(st, &ilen);
	uint8_t entry[SESS_RECENT_ENTRY];
	size_t elen;
	recent_entry e;
	int found, error;

	if (st->scratch.len > SESS_RECENT_ENTRY - 4 - ilen)
		return docket_error_set(DOCKET_EINVALID, "invocation record too large");
	if ((found = recent_find(s, id, ilen, &e)) < 0)
		return found;
	if (!found && s->recent_n == SESS_RECENT && (error = recent_evict(st)) < 0)
		return error;
	elen = recent_entry_put(entry, id, ilen, st->scratch.ptr, st->scratch.len);
	at = found ? e.off : s->recent_len;
	if (found)
		old_len = e.end - e.off;
	if (s->recent_len - old_len + elen > sizeof(s->recent))
		return docket_error_set(DOCKET_EINVALID, "recent invocations of session \"%s\" too large", st->sess_id);
	memmove(s->recent + at + elen, s->recent + at + old_len, s->recent_len - at - old_len);
	memcpy(s->recent + at, entry, elen);
	s->recent_len = s->recent_len - old_len + elen;
	if (!found)
		s->recent_n++;
	st->sess_dirty = 1;
	return 0;
}

static int inv_flush(state_txn *st)
{
	int error;

	if (!st->inv_dirty)
		return 0;
	if ((error = inv_state_encode(&st->scratch, &st->inv)) < 0)
		return error;
	error = st->inv_in_table
		? overlay_put(&st->ov, st->l->dbi.invocations, st->inv_key.ptr, st->inv_key.len, st->scratch.ptr,
			      st->scratch.len)
		: recent_put(st);
	if (error < 0)
		return error;
	st->inv_dirty = 0;
	return overlay_full(&st->ov) ? overlay_write(&st->ov, st->txn) : 0;
}

int state_inv_get(inv_state *out, docket_ledger *l, MDB_txn *txn, const char *session, const char *invocation)
{
	MDB_val k = { strlen(session), (void *)session }, v;
	size_t ilen = strlen(invocation), olen;
	uint8_t key[9 + STATE_ID_MAX];
	recent_entry e;
	sess_state *s;
	int rc, error;

	memset(out, 0, sizeof(*out));
	if ((error = ledger_projections_current(l)) < 0)
		return error;
	if (k.mv_size == 0 || k.mv_size > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "session id must be 1..%d bytes", STATE_ID_MAX);
	if (ilen == 0 || ilen > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "invocation id must be 1..%d bytes", STATE_ID_MAX);
	rc = mdb_get(txn, l->dbi.sessions, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read session");
	if (!(s = docket_malloc(sizeof(*s))))
		return docket_error_set_oom();
	if ((error = sess_state_decode(s, v.mv_data, v.mv_size)) < 0)
		goto done;
	if (!s->opened_seq) {
		error = docket_error_set(DOCKET_ECORRUPT, "session \"%s\" has no opening seq", session);
		goto done;
	}
	if ((error = recent_find(s, invocation, ilen, &e)) != 0) {
		if (error > 0)
			error = inv_state_decode(out, session, invocation, e.rec, e.rlen);
		goto done;
	}
	olen = ordinal_put(key, s->opened_seq);
	memcpy(key + olen, invocation, ilen);
	k.mv_data = key;
	k.mv_size = olen + ilen;
	rc = mdb_get(txn, l->dbi.invocations, &k, &v);
	error = rc == MDB_NOTFOUND ? DOCKET_ENOTFOUND
		: rc != 0 ? store_error(rc, "read invocation")
		: inv_state_decode(out, session, invocation, v.mv_data, v.mv_size);
done:
	docket_free(s);
	return error;
}

/* Callers load the event's session first (state.c: invariant 8 before any
 * invocation event), so st->sess is `session`'s record. */
int state_inv_load(state_txn *st, const char *session, const char *invocation)
{
	size_t slen = strlen(session), ilen = strlen(invocation), clen;
	uint8_t ord[9];
	recent_entry e;
	MDB_val k, v;
	int rc, found, error;

	if (slen + 1 + ilen > 511)
		return docket_error_set(DOCKET_EINVALID,
			"session and invocation ids together must not exceed 510 bytes");
	if ((error = state_sess_load(st, session)) < 0)
		return error == DOCKET_ENOTFOUND
			? docket_error_set(DOCKET_ETRANSITION, "session \"%s\" was never opened", session) : error;
	clen = ordinal_put(ord, st->sess.opened_seq);
	if (st->inv_loaded && st->inv_key.len == clen + ilen && memcmp(st->inv_key.ptr, ord, clen) == 0 &&
	    memcmp(st->inv_key.ptr + clen, invocation, ilen) == 0)
		return st->inv.intent_seq ? 0 : DOCKET_ENOTFOUND;
	if ((error = inv_flush(st)) < 0)
		return error;
	st->pending_put_ok = 0;
	if ((error = inv_key_build(&st->inv_key, st->sess.opened_seq, invocation)) < 0) {
		st->inv_loaded = 0;
		return error;
	}
	st->inv_loaded = 1;
	st->inv_in_table = 0;
	memset(&st->inv, 0, sizeof(st->inv));
	if ((found = recent_find(&st->sess, invocation, ilen, &e)) != 0)
		return found < 0 ? found : inv_state_decode(&st->inv, session, invocation, e.rec, e.rlen);
	k.mv_data = st->inv_key.ptr;
	k.mv_size = st->inv_key.len;
	rc = overlay_get(&st->ov, st->l->dbi.invocations, k.mv_data, k.mv_size, &v) ? 0
		: mdb_get(st->txn, st->l->dbi.invocations, &k, &v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	if (rc != 0)
		return store_error(rc, "read invocation");
	st->inv_in_table = 1;
	return inv_state_decode(&st->inv, session, invocation, v.mv_data, v.mv_size);
}

/*
 * The pending index holds one more key, a single NUL byte (no session id
 * can start with one), so that it never becomes empty: LMDB frees the root
 * page of a tree that empties and allocates a fresh one at the next put, so
 * a tree emptied once per invocation burned a page per call (issue 12).
 */
static const char pending_sentinel[1] = { 0 };

/* The count of unfinished invocations (meta "pending_count", in the main
 * table), kept through the overlay so that a checkpoint takes it back. */
static int pending_count_add(state_txn *st, int delta)
{
	static const char name[] = "pending_count";
	MDB_val k = { sizeof(name) - 1, (void *)name }, v;
	uint8_t be[8];
	uint64_t n = 0;
	int rc = overlay_get(&st->ov, st->l->dbi.main, k.mv_data, k.mv_size, &v) ? 0
		: mdb_get(st->txn, st->l->dbi.main, &k, &v);

	if (rc != 0 && rc != MDB_NOTFOUND)
		return store_error(rc, "read pending count");
	if (rc == 0 && v.mv_size != 8)
		return docket_error_set(DOCKET_ECORRUPT, "meta pending_count: bad length %zu", v.mv_size);
	if (rc == 0)
		n = docket_be64_get(v.mv_data);
	if (delta < 0 && n == 0)
		return docket_error_set(DOCKET_ECORRUPT, "meta pending_count: below zero");
	docket_be64_put(be, delta < 0 ? n - 1 : n + 1);
	return overlay_put(&st->ov, st->l->dbi.main, k.mv_data, k.mv_size, be, sizeof(be));
}

int state_pending_set(state_txn *st, int present)
{
	MDB_dbi dbi = st->l->dbi.pending;
	size_t ilen;
	const char *id = inv_key_id(st, &ilen);
	int error;

	if ((error = pending_count_add(st, present ? 1 : -1)) < 0)
		return error;
	/* in its session's recent list: listed from its record there */
	if (!st->inv_in_table)
		return 0;
	/* pending keys name the session (listing by session is a prefix scan) */
	docket_buf_clear(&st->scratch);
	if ((error = docket_buf_put(&st->scratch, st->sess_id, strlen(st->sess_id) + 1)) < 0 ||
	    (error = docket_buf_put(&st->scratch, id, ilen)) < 0)
		return error;
	/* deferred (overlay.c): the sentinel sorts first, so it is in place
	 * before any delete */
	if (present) {
		if ((error = overlay_defer(&st->ov, dbi, OV_PUT, st->scratch.ptr, st->scratch.len, NULL, 0)) < 0)
			return error;
		st->pending_put = overlay_last(&st->ov);
		st->pending_put_ok = 1;
		return 0;
	}
	/* the sentinel once per log (a rollback or a write-back starts a new
	 * one): it is put once and stays */
	if (!st->sentinel_ok || st->sentinel_epoch != st->ov.ops_epoch) {
		if ((error = overlay_defer(&st->ov, dbi, OV_PUT_NEW, pending_sentinel, sizeof(pending_sentinel),
					   NULL, 0)) < 0)
			return error;
		st->sentinel_epoch = st->ov.ops_epoch;
		st->sentinel_ok = 1;
	}
	/* the intent's put still in the log: the key was absent before it
	 * (invariant 1), so taking the put back is the delete */
	if (st->pending_put_ok && overlay_cancel(&st->ov, st->pending_put)) {
		st->pending_put_ok = 0;
		return 0;
	}
	return overlay_defer(&st->ov, dbi, OV_DEL, st->scratch.ptr, st->scratch.len, NULL, 0);
}

int state_pending_is_sentinel(const void *key, size_t len)
{
	return len == sizeof(pending_sentinel) && memcmp(key, pending_sentinel, len) == 0;
}

int state_pending_count(docket_ledger *l, MDB_txn *txn, uint64_t *out)
{
	MDB_val k = { sizeof(pending_sentinel), (void *)pending_sentinel }, v;
	MDB_stat ms;
	int rc, error;

	*out = 0;
	if ((error = store_meta_get(txn, l, "pending_count", &v)) == 0) {
		if (v.mv_size != 8)
			return docket_error_set(DOCKET_ECORRUPT, "meta pending_count: bad length %zu", v.mv_size);
		*out = docket_be64_get(v.mv_data);
		return 0;
	}
	if (error != DOCKET_ENOTFOUND)
		return error;
	/* none yet, or projections older than version 7: the index holds
	 * every unfinished invocation */
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
	if ((error = inv_flush(st)) < 0 || (error = sess_cache_park(st)) < 0 ||
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

/* ---- lineages (invariant 7, per lineage) ---- */

/* Key prefixes in `meta`: lineage (be32 uid, name), epoch (be64), session owner (id). */
static const char LIN_LINEAGE[] = "\x01lineage/", LIN_EPOCH[] = "\x01epoch/", LIN_OWNER[] = "\x01owner/";
#define LIN_PREFIX_LEN(p) (sizeof(p) - 1)

static size_t lineage_key(uint8_t *out, size_t cap, uint32_t uid, const char *name)
{
	size_t nlen = strlen(name), n = LIN_PREFIX_LEN(LIN_LINEAGE);

	if (n + 4 + nlen > cap)
		return 0;
	memcpy(out, LIN_LINEAGE, n);
	docket_be32_put(out + n, uid);
	memcpy(out + n + 4, name, nlen);
	return n + 4 + nlen;
}

static size_t epoch_key(uint8_t out[32], uint64_t epoch)
{
	size_t n = LIN_PREFIX_LEN(LIN_EPOCH);

	memcpy(out, LIN_EPOCH, n);
	docket_be64_put(out + n, epoch);
	return n + 8;
}

/* Read a meta record: the transaction's overlay first, then `txn`. 0, DOCKET_ENOTFOUND. */
static int lin_get(state_txn *st, docket_ledger *l, MDB_txn *txn, const void *k, size_t klen, MDB_val *v)
{
	MDB_val key = { klen, (void *)k };
	int rc;

	if (st && overlay_get(&st->ov, l->dbi.meta, k, klen, v))
		return 0;
	rc = mdb_get(txn, l->dbi.meta, &key, v);
	if (rc == MDB_NOTFOUND)
		return DOCKET_ENOTFOUND;
	return rc == 0 ? 0 : store_error(rc, "read lineage");
}

/* The lineage record of (uid, name) into out (epoch, seq, time). */
static int lineage_read(state_txn *st, docket_ledger *l, MDB_txn *txn, state_lineage *out)
{
	uint8_t key[LIN_PREFIX_LEN(LIN_LINEAGE) + 4 + STATE_ID_MAX];
	size_t klen = lineage_key(key, sizeof(key), out->uid, out->name);
	MDB_val v;
	int error;

	if (!klen)
		return docket_error_set(DOCKET_EINVALID, "runtime name too long");
	if ((error = lin_get(st, l, txn, key, klen, &v)) < 0)
		return error;
	if (v.mv_size < 16 || v.mv_size - 16 >= STATE_TIME_MAX)
		return docket_error_set(DOCKET_ECORRUPT, "bad lineage record of runtime \"%s\"", out->name);
	out->epoch = docket_be64_get(v.mv_data);
	out->seq = docket_be64_get((const uint8_t *)v.mv_data + 8);
	memcpy(out->time, (const uint8_t *)v.mv_data + 16, v.mv_size - 16);
	out->time[v.mv_size - 16] = '\0';
	return 0;
}

static int epoch_lineage(state_txn *st, docket_ledger *l, MDB_txn *txn, uint64_t epoch, state_lineage *out)
{
	uint8_t key[32];
	size_t klen = epoch_key(key, epoch);
	MDB_val v;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = lin_get(st, l, txn, key, klen, &v)) < 0)
		return error;
	if (v.mv_size < 4 || v.mv_size - 4 > STATE_ID_MAX)
		return docket_error_set(DOCKET_ECORRUPT, "bad epoch record of epoch %llu", (unsigned long long)epoch);
	out->uid = docket_be32_get(v.mv_data);
	memcpy(out->name, (const uint8_t *)v.mv_data + 4, v.mv_size - 4);
	out->name[v.mv_size - 4] = '\0';
	return lineage_read(st, l, txn, out);
}

int state_lineage_start(state_txn *st, const docket_event *ev, uint64_t seq)
{
	const Docket__V1__RuntimeStarted *b = ev->runtime_started;
	uint8_t key[LIN_PREFIX_LEN(LIN_LINEAGE) + 4 + STATE_ID_MAX], ekey[32];
	uint8_t val[16 + STATE_TIME_MAX];
	uint32_t uid = b->uid_set ? b->uid : LINEAGE_UID_NONE;
	size_t klen = lineage_key(key, sizeof(key), uid, b->runtime ? b->runtime : "");
	size_t tlen = strlen(ev->time), nlen = klen - LIN_PREFIX_LEN(LIN_LINEAGE);
	int error;

	if (!klen || tlen >= STATE_TIME_MAX)
		return docket_error_set(DOCKET_EINVALID, "runtime.started: runtime name or time too long");
	docket_be64_put(val, ev->epoch);
	docket_be64_put(val + 8, seq);
	memcpy(val + 16, ev->time, tlen);
	if ((error = overlay_put(&st->ov, st->l->dbi.meta, key, klen, val, 16 + tlen)) < 0)
		return error;
	/* the epoch record's value is the lineage key without its prefix */
	return overlay_put(&st->ov, st->l->dbi.meta, ekey, epoch_key(ekey, ev->epoch),
			   key + LIN_PREFIX_LEN(LIN_LINEAGE), nlen);
}

int state_epoch_lineage(state_txn *st, uint64_t epoch, state_lineage *out)
{
	return epoch_lineage(st, st->l, st->txn, epoch, out);
}

static size_t owner_key(uint8_t *out, size_t cap, const char *session)
{
	size_t n = LIN_PREFIX_LEN(LIN_OWNER), slen = strlen(session);

	if (n + slen > cap)
		return 0;
	memcpy(out, LIN_OWNER, n);
	memcpy(out + n, session, slen);
	return n + slen;
}

int state_session_owner_set(state_txn *st, const char *session, uint64_t epoch)
{
	uint8_t key[LIN_PREFIX_LEN(LIN_OWNER) + STATE_ID_MAX], be[8];
	size_t klen = owner_key(key, sizeof(key), session);

	if (!klen)
		return docket_error_set(DOCKET_EINVALID, "session id too long");
	docket_be64_put(be, epoch);
	return overlay_put(&st->ov, st->l->dbi.meta, key, klen, be, sizeof(be));
}

int state_lineage_same(const state_lineage *a, const state_lineage *b)
{
	return a->uid == b->uid && strcmp(a->name, b->name) == 0;
}

int ledger_epoch_lineage(docket_ledger *l, uint64_t epoch, state_lineage *out)
{
	MDB_txn *txn = NULL;
	int error;

	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	error = epoch_lineage(NULL, l, txn, epoch, out);
	store_txn_abort(l, txn);
	return error;
}

int ledger_session_owner(docket_ledger *l, const char *session, state_lineage *out)
{
	uint8_t key[LIN_PREFIX_LEN(LIN_OWNER) + STATE_ID_MAX];
	size_t klen = owner_key(key, sizeof(key), session);
	MDB_txn *txn = NULL;
	MDB_val v;
	int error;

	memset(out, 0, sizeof(*out));
	if (!klen)
		return DOCKET_ENOTFOUND;
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	error = lin_get(NULL, l, txn, key, klen, &v);
	if (error == 0 && v.mv_size != 8)
		error = docket_error_set(DOCKET_ECORRUPT, "bad owner record of session \"%s\"", session);
	if (error == 0)
		error = epoch_lineage(NULL, l, txn, docket_be64_get(v.mv_data), out);
	store_txn_abort(l, txn);
	return error;
}

/* Drop every meta record under `prefix` (reindex rebuilds them). */
static int meta_drop_prefix(docket_ledger *l, MDB_txn *txn, const char *prefix)
{
	size_t plen = strlen(prefix);
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	int rc = mdb_cursor_open(txn, l->dbi.meta, &cur);

	while (rc == 0) {
		k.mv_size = plen;
		k.mv_data = (void *)prefix;
		if ((rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE)) != 0)
			break;
		if (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)
			break;
		rc = mdb_cursor_del(cur, 0);
	}
	if (cur)
		mdb_cursor_close(cur);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : store_error(rc, "clear lineages");
}

int state_clear_projections(docket_ledger *l, MDB_txn *txn)
{
	static const char *const lineage_prefixes[] = { LIN_LINEAGE, LIN_EPOCH, LIN_OWNER };
	MDB_dbi dbis[] = { l->dbi.sessions, l->dbi.session_events, l->dbi.invocations,
			   l->dbi.pending, l->dbi.policies };
	static const char *const meta[] = { "head_seq", "head_hash", "epoch", "payload_bytes", "frame_bytes",
					    "pending_count" };

	for (size_t i = 0; i < sizeof(dbis) / sizeof(dbis[0]); i++) {
		int rc = mdb_drop(txn, dbis[i], 0);

		if (rc != 0)
			return store_error(rc, "clear projection");
	}
	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
		int error = store_meta_del(txn, l, meta[i]);

		if (error < 0)
			return error;
	}
	for (size_t i = 0; i < sizeof(lineage_prefixes) / sizeof(lineage_prefixes[0]); i++) {
		int error = meta_drop_prefix(l, txn, lineage_prefixes[i]);

		if (error < 0)
			return error;
	}
	return 0;
}
