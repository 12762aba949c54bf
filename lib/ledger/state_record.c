// SPDX-License-Identifier: Apache-2.0
/*
 * state_record.c: the projection records' bytes: the compact invocation
 * record and the session record (protobuf) encoded and decoded, the dispatch
 * token derived from a record, and the pending state a record shows. Where
 * the records live (caches, recent list, tables) is state_cache.c and
 * state_recent.c; every projection's owner is listed in state.c.
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

void state_rec_varint(rec_writer *w, uint64_t v)
{
	do {
		*w->p++ = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void rec_string(rec_writer *w, const char *s)
{
	size_t n = strlen(s);

	state_rec_varint(w, n);
	memcpy(w->p, s, n);
	w->p += n;
}

/* seq as a delta from the intent's: every event of an invocation follows
 * its intent (0: none, unless zero_ok, where it is the intent itself) */
static int rec_delta(rec_writer *w, uint64_t intent, uint64_t seq, int zero_ok)
{
	if (!seq && !zero_ok) {
		state_rec_varint(w, 0);
		return 0;
	}
	if (seq < intent || (seq == intent && !zero_ok))
		return docket_error_set(DOCKET_ECORRUPT, "invocation record: seq %llu does not follow its intent (%llu)",
					(unsigned long long)seq, (unsigned long long)intent);
	state_rec_varint(w, seq - intent);
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
	state_rec_varint(&w, s->intent_seq);
	state_rec_varint(&w, mode);
	if (wide) {
		state_rec_varint(&w, (uint64_t)s->verdict);
		state_rec_varint(&w, (uint64_t)s->phase);
		state_rec_varint(&w, (uint64_t)s->recovery);
		state_rec_varint(&w, (uint64_t)s->status);
		state_rec_varint(&w, (uint64_t)s->last_result);
	}
	if ((error = rec_delta(&w, s->intent_seq, s->dispatch_seq, 0)) < 0 ||
	    (error = rec_delta(&w, s->intent_seq, s->outcome_seq, 0)) < 0)
		return error;
	state_rec_varint(&w, s->dispatch_epoch);
	if (approval) {
		state_rec_varint(&w, s->requests);
		if ((error = rec_delta(&w, s->intent_seq, s->request_seq, 0)) < 0 ||
		    (error = rec_delta(&w, s->intent_seq, s->settle_seq, 0)) < 0)
			return error;
		state_rec_varint(&w, s->request_revision);
		rec_string(&w, s->last_request);
	}
	if (last && (error = rec_delta(&w, s->intent_seq, s->last_seq, 1)) < 0)
		return error;
	if (attempts)
		state_rec_varint(&w, s->attempts);
	if (open)
		rec_string(&w, s->open_request);
	out->len = (size_t)(w.p - (uint8_t *)out->ptr);
	return 0;
}

uint64_t state_rec_get(rec_reader *r)
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
	uint64_t v = state_rec_get(r);

	if (v > UINT32_MAX)
		r->bad = 1;
	return (uint32_t)v;
}

static int rec_get_enum(rec_reader *r)
{
	uint64_t v = state_rec_get(r);

	if (v > INT32_MAX)
		r->bad = 1;
	return (int)v;
}

/* intent + delta; a delta of 0 is "none" unless zero_ok */
static uint64_t rec_get_seq(rec_reader *r, uint64_t intent, int zero_ok)
{
	uint64_t d = state_rec_get(r);

	if (!d && !zero_ok)
		return 0;
	if (d > UINT64_MAX - intent)
		r->bad = 1;
	return intent + d;
}

static void rec_get_string(rec_reader *r, char *out, size_t cap)
{
	uint64_t n = state_rec_get(r);

	out[0] = '\0';
	if (r->bad || n >= cap || n > (uint64_t)(r->end - r->p) || memchr(r->p, '\0', (size_t)n)) {
		r->bad = 1;
		return;
	}
	memcpy(out, r->p, (size_t)n);
	out[n] = '\0';
	r->p += n;
}

int inv_record_decode(inv_state *out, const void *data, size_t len)
{
	rec_reader r = { data, (const uint8_t *)data + len, 0 };
	uint64_t mode;

	memset(out, 0, sizeof(*out));
	out->intent_seq = state_rec_get(&r);
	mode = state_rec_get(&r);
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
	out->dispatch_epoch = state_rec_get(&r);
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
	uint8_t be[12], digest[LEDGER_HASH_LEN];
	docket_slice v[3] = { { (const uint8_t *)session, strlen(session) + 1 },
			      { (const uint8_t *)invocation, strlen(invocation) + 1 },
			      { be, sizeof(be) } };
	int error;

	docket_be64_put(be, intent_seq);
	docket_be32_put(be + 8, attempt);
	if ((error = ledger_sha256_v(digest, v, 3)) < 0)
		return error;
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
	error = state_recent_adopt(out, m->recent.data, m->recent.len);
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

int state_sha256(uint8_t out[LEDGER_HASH_LEN], const void *data, size_t len)
{
	return ledger_sha256(out, data, len);
}
