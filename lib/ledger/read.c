/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read.c: readers. Events come back as the JSON of DESIGN §4 plus seq,
 * epoch and hash; sessions and pending invocations come from their
 * projections. Read transactions are kept short: a long scan reopens its
 * transaction every READ_CHUNK events.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define READ_CHUNK 1024

/*
 * A stored event was validated when it was appended: one that does not
 * decode now (bad protobuf, arguments that are not JSON) means the file is
 * damaged, a storage error (exit 3), not bad input (exit 2).
 */
static int stored_damaged(int error)
{
	char msg[sizeof(docket_error_last()->message)];

	if (error != DOCKET_EINVALID)
		return error;
	memcpy(msg, docket_error_last()->message, sizeof(msg));
	return docket_error_set(DOCKET_ECORRUPT, "a stored event does not decode (%s): the data file is "
				"damaged; `docket verify` checks it", msg);
}

/* Decode stored event `seq` through `alloc` (and its chain hash when `hash` is given). */
static int load_event(docket_event **out, ProtobufCAllocator *alloc, uint8_t *hash, ledger_reader *r,
		      uint64_t seq)
{
	const uint8_t *p;
	size_t len;
	int error;

	*out = NULL;
	if ((error = reader_payload(r, seq, &p, &len)) < 0 ||
	    (hash && (error = reader_hash(r, seq, hash)) < 0))
		return error == DOCKET_ENOTFOUND
			? docket_error_set(DOCKET_ECORRUPT, "seq %llu is indexed but missing", (unsigned long long)seq)
			: error;
	return stored_damaged(event_unpack_in(out, alloc, p, len));
}

/* The JSON of a stored event: seq first, then the event, epoch, hash (none
 * when `hash` is NULL). */
int ledger_event_to_json(json_t **out, uint64_t seq, const docket_event *ev, const uint8_t hash[LEDGER_HASH_LEN])
{
	char hex[2 * LEDGER_HASH_LEN + 1] = "";
	docket_event_frame frame = { seq, hex };
	int error;

	if (hash)
		docket_hex(hex, hash, LEDGER_HASH_LEN);
	if ((error = stored_damaged(docket_event_to_json_framed(out, ev, &frame))) < 0 || hash)
		return error;
	json_object_del(*out, "hash");
	return 0;
}

#define EVENT_ARENA ((size_t)64 << 10) /* an event unpacked; a bigger one spills to the heap */

/* A scan's callback, and the arena each event is unpacked in. */
typedef struct event_scan {
	ledger_event_cb cb;
	void *ctx;
	unsigned flags;          /* DOCKET_READ_* */
	docket_arena arena;
	ProtobufCAllocator pb;
	/* ledger_read_events_hashed: the worker, and the segment it hashes
	 * (job_first 0: none; job_seq the first of its events read) */
	ledger_hashes_cb hashes;
	seg_hash *hs;
	uint64_t job_first, job_last, job_seq;
} event_scan;

const uint8_t ledger_hash_pending[LEDGER_HASH_LEN];

/* Hand the segment holding `seq` to the worker, unless it is hashed
 * already or too short (then reader_hash does it here). */
static int job_begin(ledger_reader *r, uint64_t seq, event_scan *es)
{
	const uint8_t *prev;
	int error;

	if (!es->hs || es->job_first || (es->flags & DOCKET_READ_NO_HASH) || !ledger_verify_parallel_min ||
	    reader_seek(r, seq) < 0 || r->hashed || r->count < ledger_verify_parallel_min)
		return 0;  /* a seq that is not there fails in load_event */
	if ((error = reader_chain_prev(r, seq, &prev)) < 0)
		return error;
	if ((error = seg_hash_start(es->hs, r, r->first, r->first + r->count - 1, prev, 0)) == DOCKET_ENOTFOUND)
		return 0;
	if (error < 0)
		return error;
	es->job_first = r->first;
	es->job_last = r->first + r->count - 1;
	es->job_seq = seq;
	return 0;
}

/* Take the segment's hashes: the joint check, then es->hashes. */
static int job_end(ledger_reader *r, event_scan *es)
{
	const uint8_t (*h)[LEDGER_HASH_LEN], (*leaf)[LEDGER_HASH_LEN];
	uint64_t first = es->job_first, last = es->job_last;
	int error;

	if (!first)
		return 0;
	es->job_first = 0;
	if ((error = seg_hash_wait(es->hs, &h, &leaf)) == 0 && (error = reader_chain_joint(r, h[last - first])) < 0)
		docket_error_prefix("seq %llu: ", (unsigned long long)es->job_seq);
	return error < 0 ? error : es->hashes(es->ctx, first, last, h);
}

/* A read that stops inside a hashed segment: the segment's chain error
 * comes first, as it would have when its first event was read. */
static int job_stop(ledger_reader *r, event_scan *es, int error)
{
	int end = job_end(r, es);

	return end < 0 ? end : error;
}

static int emit(ledger_reader *r, uint64_t seq, event_scan *es)
{
	uint8_t hash[LEDGER_HASH_LEN];
	const uint8_t *given = es->flags & DOCKET_READ_NO_HASH ? NULL : hash;
	docket_event *ev = NULL;
	int error;

	if ((error = job_begin(r, seq, es)) == 0 && es->job_first)
		given = ledger_hash_pending;
	if (error < 0 || (error = load_event(&ev, &es->pb, given == hash ? hash : NULL, r, seq)) < 0) {
		docket_error_prefix("seq %llu: ", (unsigned long long)seq);
		return job_stop(r, es, error);
	}
	error = es->cb(es->ctx, seq, ev, given);
	/* all at once, unless a piece spilled to the heap */
	if (!docket_arena_reset(&es->arena))
		docket__v1__event__free_unpacked(ev, &es->pb);
	if (error)
		return job_stop(r, es, error);
	return seq == es->job_last ? job_end(r, es) : 0;
}

/* A protobuf varint at *p: 0 and *p past it, or -1 (no terminating byte
 * before `end`, or more than 64 bits). */
static int wire_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* The session field (3) of a packed docket.v1.Event, without unpacking it:
 * its top-level fields are walked (the last occurrence wins, as protobuf
 * says). Fuzzed against event_unpack by tests/fuzz/fuzz_segment.c. */
int ledger_payload_session_is(const uint8_t *p, size_t len, const char *session, size_t slen)
{
	const uint8_t *end = p + len, *found = NULL;
	uint64_t found_len = 0;

	while (p < end) {
		uint64_t tag, n = 0;

		if (wire_varint(&p, end, &tag) < 0)
			goto bad;
		switch (tag & 7) {
		case 0:
			while (p < end && (*p & 0x80))
				p++;
			if (p++ == end)
				goto bad;
			continue;
		case 1:
			n = 8;
			break;
		case 5:
			n = 4;
			break;
		case 2:
			if (wire_varint(&p, end, &n) < 0)
				goto bad;
			break;
		default:
			goto bad;
		}
		if (n > (uint64_t)(end - p))
			goto bad;
		if (tag >> 3 == 3 && (tag & 7) == 2) {
			found = p;
			found_len = n;
		}
		p += n;
	}
	return found && found_len == slen && memcmp(found, session, slen) == 0;
bad:
	return docket_error_set(DOCKET_ECORRUPT, "stored event is not protobuf");
}

int ledger_session_next(MDB_cursor *cur, ledger_reader *r, const char *session, uint64_t from, uint64_t *seq)
{
	size_t slen = strlen(session);

	*seq = 0;
	for (;;) {
		uint64_t block = from >> SESSION_BLOCK_SHIFT, end;
		uint8_t key[4];
		MDB_val k = { slen, (void *)session }, v = { sizeof(key), key };
		int rc;

		if (block > UINT32_MAX)
			return 0;
		docket_be32_put(key, (uint32_t)block);
		rc = mdb_cursor_get(cur, &k, &v, MDB_GET_BOTH_RANGE);
		if (rc == MDB_NOTFOUND)
			return 0;
		if (rc != 0)
			return store_error(rc, "read events");
		if (v.mv_size != sizeof(key))
			return docket_error_set(DOCKET_ECORRUPT, "bad session index entry");
		if (docket_be32_get(v.mv_data) > block)
			from = (uint64_t)docket_be32_get(v.mv_data) << SESSION_BLOCK_SHIFT;
		end = ((uint64_t)docket_be32_get(v.mv_data) + 1) << SESSION_BLOCK_SHIFT;
		for (; from < end; from++) {
			const uint8_t *p;
			size_t len;
			int error;

			if (from == 0)
				continue;
			/* a kind the reader does not want: its payload (an
			 * outcome's, in a format-3 segment's part B) stays
			 * compressed */
			if (r->want) {
				unsigned kind;

				if ((error = reader_kind(r, from, &kind)) == DOCKET_ENOTFOUND)
					return 0;
				if (error < 0)
					return error;
				if (!r->want(kind))
					continue;
			}
			if ((error = reader_payload(r, from, &p, &len)) == DOCKET_ENOTFOUND)
				return 0;
			if (error < 0 || (error = ledger_payload_session_is(p, len, session, slen)) < 0)
				return error;
			if (error) {
				*seq = from;
				return 0;
			}
		}
	}
}

/* DOCKET_READ_NO_OUTCOMES: 1 when `seq` is an outcome (by the index of
 * its segment: nothing is decompressed). */
static int skip_outcome(ledger_reader *r, uint64_t seq, const event_scan *es)
{
	unsigned kind;
	int error;

	if (!(es->flags & DOCKET_READ_NO_OUTCOMES))
		return 0;
	if ((error = reader_kind(r, seq, &kind)) < 0)
		return error;
	return kind == DOCKET__V1__EVENT__BODY_TOOL_COMPLETED;
}

static int not_outcome(unsigned kind)
{
	return kind != DOCKET__V1__EVENT__BODY_TOOL_COMPLETED;
}

/*
 * One chunk of a scan: up to READ_CHUNK events from *next on, in one read
 * transaction. Sets *next past the last event seen; *done at the end.
 */
static int scan_chunk(docket_ledger *l, const docket_read_options *o, ledger_reader *r, uint64_t *next,
		      uint64_t *left, int *done, event_scan *es)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	int rc, error = 0, n = 0;

	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	reader_set_txn(r, txn);
	if (o->session && (rc = mdb_cursor_open(txn, l->dbi.session_events, &cur)) != 0) {
		error = store_error(rc, "read events");
		goto cleanup;
	}
	*done = 0;
	while (n < READ_CHUNK && *left) {
		uint64_t seq = *next;

		/* the reader leaves a hashed segment only once its job is done */
		if (es->job_first && seq > es->job_last && (error = job_end(r, es)) != 0)
			goto cleanup;
		if (o->session && (error = ledger_session_next(cur, r, o->session, *next, &seq)) < 0)
			goto cleanup;
		if (seq == 0 || (!o->session && (error = reader_seek(r, seq)) == DOCKET_ENOTFOUND)) {
			*done = 1;
			error = 0;
			break;
		}
		if (error < 0 || (error = skip_outcome(r, seq, es)) < 0)
			goto cleanup;
		if (!error && (error = emit(r, seq, es)) != 0)
			goto cleanup;
		*next = seq + 1;
		*left -= !error;
		n++;
		error = 0;
	}
	if (!*left)
		*done = 1;
cleanup:
	if (cur)
		mdb_cursor_close(cur);
	store_txn_abort(l, txn);
	return error;
}

static int read_events(docket_ledger *l, const docket_read_options *opts, event_scan *es);

int ledger_read_events(docket_ledger *l, const docket_read_options *opts, ledger_event_cb cb, void *ctx)
{
	event_scan es;

	memset(&es, 0, sizeof(es));
	es.cb = cb;
	es.ctx = ctx;
	return read_events(l, opts, &es);
}

int ledger_read_events_hashed(docket_ledger *l, const docket_read_options *opts, ledger_event_cb cb,
			      ledger_hashes_cb hashes, void *ctx)
{
	event_scan es;
	int error;

	memset(&es, 0, sizeof(es));
	es.cb = cb;
	es.ctx = ctx;
	es.hashes = hashes;
	if (opts && opts->session)
		return docket_error_set(DOCKET_EINVALID, "a read of one session takes its hashes with its events");
	if ((error = seg_hash_new(&es.hs)) < 0)
		return error;
	error = read_events(l, opts, &es);
	seg_hash_free(es.hs);
	return error;
}

static int read_events(docket_ledger *l, const docket_read_options *opts, event_scan *es)
{
	docket_read_options defaults = DOCKET_READ_OPTIONS_INIT;
	ledger_reader r;
	uint64_t next, left;
	int done = 0, error = 0;

	if (!opts)
		opts = &defaults;
	if (opts->session && (!*opts->session || strlen(opts->session) > STATE_ID_MAX))
		return docket_error_set(DOCKET_EINVALID, "bad session id");
	/* one session's events come from its index */
	if (opts->session && (error = ledger_projections_current(l)) < 0)
		return error;
	es->flags = opts->version >= 2 ? opts->flags : 0;
	if ((error = docket_arena_init(&es->arena, EVENT_ARENA)) < 0)
		return error;
	docket_arena_pb(&es->pb, &es->arena);
	next = opts->since ? opts->since : 1;
	left = opts->limit ? opts->limit : UINT64_MAX;
	reader_init(&r, l, NULL);
	r.scan = 1;
	if (es->flags & DOCKET_READ_NO_OUTCOMES)
		r.want = not_outcome;
	while (!done && error == 0)
		error = scan_chunk(l, opts, &r, &next, &left, &done, es);
	/* a read that stopped (limit, callback) inside a hashed segment */
	if (es->job_first)
		error = job_stop(&r, es, error);
	reader_dispose(&r);
	docket_arena_dispose(&es->arena);
	return error > 0 ? 0 : error;
}

typedef struct json_read {
	docket_json_cb cb;
	void *ctx;
} json_read;

static int json_event(void *vctx, uint64_t seq, const docket_event *ev, const uint8_t hash[LEDGER_HASH_LEN])
{
	json_read *jr = vctx;
	json_t *obj = NULL;
	int error;

	if ((error = ledger_event_to_json(&obj, seq, ev, hash)) < 0)
		return error;
	error = jr->cb(jr->ctx, seq, obj);
	json_decref(obj);
	return error;
}

int docket_ledger_read_json(docket_ledger *l, const docket_read_options *opts,
			    docket_json_cb cb, void *ctx)
{
	json_read jr = { cb, ctx };

	return ledger_read_events(l, opts, json_event, &jr);
}

/* ---- outcomes a read passed over ---- */

#define OUTCOMES_RELEASE 4096 /* lookups between two ledger_map_release */

struct ledger_outcomes {
	docket_ledger *l;
	MDB_txn *txn;
	ledger_reader r;
	docket_event *ev;
	uint32_t since_release;
};

int ledger_outcomes_begin(ledger_outcomes **out, docket_ledger *l)
{
	ledger_outcomes *o;
	int error;

	*out = NULL;
	if ((error = ledger_projections_current(l)) < 0)
		return error;
	if (!(o = docket_calloc(1, sizeof(*o))))
		return docket_error_set_oom();
	if ((error = store_txn_begin(&o->txn, l, MDB_RDONLY)) < 0) {
		docket_free(o);
		return error;
	}
	o->l = l;
	reader_init(&o->r, l, o->txn);
	o->r.scan = 1;
	*out = o;
	return 0;
}

void ledger_outcomes_end(ledger_outcomes *o)
{
	if (!o)
		return;
	docket_event_free(o->ev);
	reader_dispose(&o->r);
	store_txn_abort(o->l, o->txn);
	docket_free(o);
}

int ledger_outcome_of(ledger_outcomes *o, const char *session, const char *invocation, int *status,
		      uint64_t *outcome_seq)
{
	inv_state inv;
	int error;

	*status = 0;
	*outcome_seq = 0;
	/* one lookup a call over the whole index: bound the pages kept resident */
	if (++o->since_release >= OUTCOMES_RELEASE) {
		ledger_map_release(o->l);
		o->since_release = 0;
	}
	if ((error = state_inv_get(&inv, o->l, o->txn, session, invocation)) < 0)
		return error;
	*status = inv.status;
	*outcome_seq = inv.outcome_seq;
	return 0;
}

int ledger_outcome_event(ledger_outcomes *o, uint64_t seq, const docket_event **out)
{
	int error;

	*out = NULL;
	docket_event_free(o->ev);
	o->ev = NULL;
	if ((error = load_event(&o->ev, &docket_pb_allocator, NULL, &o->r, seq)) < 0)
		return error;
	if (o->ev->body_case != DOCKET__V1__EVENT__BODY_TOOL_COMPLETED)
		return docket_error_set(DOCKET_ECORRUPT, "seq %llu is indexed as an outcome but is a %s",
					(unsigned long long)seq, docket_event_type(o->ev));
	*out = o->ev;
	return 0;
}

/* ---- sessions ---- */

static void session_info(docket_session_info *out, const char *id, const sess_state *s)
{
	out->session = id;
	out->runtime = s->runtime;
	out->parent = s->parent;
	out->first_time = s->first_time;
	out->last_time = s->last_time;
	out->policy_format = s->policy_revision ? docket_policy_format_name(s->policy_format) : "";
	if (!out->policy_format)
		out->policy_format = "";
	out->opened_seq = s->opened_seq;
	out->closed_seq = s->closed_seq;
	out->events = s->events;
	out->invocations = s->invocations;
	out->pending = s->pending;
	out->policy_revision = s->policy_revision;
}

static int sessions_scan(docket_ledger *l, const char *only, docket_session_cb cb, void *ctx)
{
	char id[STATE_ID_MAX + 1];
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k = { 0, NULL }, v;
	sess_state s;
	docket_session_info info;
	int rc, error = 0, found = 0;

	if ((error = ledger_projections_current(l)) < 0 || (error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	if ((rc = mdb_cursor_open(txn, l->dbi.sessions, &cur)) != 0) {
		error = store_error(rc, "read sessions");
		goto cleanup;
	}
	if (only) {
		k.mv_data = (void *)only;
		k.mv_size = strlen(only);
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
	} else {
		rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	}
	while (rc == 0) {
		if (k.mv_size > STATE_ID_MAX) {
			error = docket_error_set(DOCKET_ECORRUPT, "session key too long");
			goto cleanup;
		}
		memcpy(id, k.mv_data, k.mv_size);
		id[k.mv_size] = '\0';
		if ((error = sess_state_decode(&s, v.mv_data, v.mv_size)) < 0)
			goto cleanup;
		session_info(&info, id, &s);
		found = 1;
		if ((error = cb(ctx, &info)) != 0)
			goto cleanup;
		if (only)
			break;
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	if (rc != 0 && rc != MDB_NOTFOUND)
		error = store_error(rc, "read sessions");
	else if (only && !found)
		error = docket_error_set(DOCKET_ENOTFOUND, "no session \"%s\"", only);
cleanup:
	if (cur)
		mdb_cursor_close(cur);
	store_txn_abort(l, txn);
	return error > 0 ? 0 : error;
}

int docket_ledger_sessions(docket_ledger *l, docket_session_cb cb, void *ctx)
{
	return sessions_scan(l, NULL, cb, ctx);
}

int docket_ledger_session(docket_ledger *l, const char *session, docket_session_cb cb, void *ctx)
{
	if (!session || !*session || strlen(session) > STATE_ID_MAX)
		return docket_error_set(DOCKET_EINVALID, "bad session id");
	return sessions_scan(l, session, cb, ctx);
}

/* ---- pending ---- */

static int pending_emit(docket_ledger *l, MDB_txn *txn, ledger_reader *r, const MDB_val *key,
			docket_pending_cb cb, void *ctx)
{
	char session[STATE_ID_MAX + 1], invocation[STATE_ID_MAX + 1];
	const char *sep = memchr(key->mv_data, '\0', key->mv_size);
	size_t slen, ilen;
	docket_pending_info info;
	docket_event *ev = NULL;
	inv_state inv;
	int error;

	if (!sep)
		return docket_error_set(DOCKET_ECORRUPT, "bad pending key");
	slen = (size_t)(sep - (const char *)key->mv_data);
	ilen = key->mv_size - slen - 1;
	if (slen > STATE_ID_MAX || ilen > STATE_ID_MAX)
		return docket_error_set(DOCKET_ECORRUPT, "bad pending key");
	memcpy(session, key->mv_data, slen);
	session[slen] = '\0';
	memcpy(invocation, sep + 1, ilen);
	invocation[ilen] = '\0';
	if ((error = state_inv_get(&inv, l, txn, session, invocation)) < 0)
		return error == DOCKET_ENOTFOUND
			? docket_error_set(DOCKET_ECORRUPT, "pending %s/%s has no record", session, invocation)
			: error;
	/* the record does not keep the tool: its intent does */
	if ((error = load_event(&ev, &docket_pb_allocator, NULL, r, inv.intent_seq)) < 0)
		return error;
	if (ev->body_case != DOCKET__V1__EVENT__BODY_TOOL_INTENT) {
		docket_event_free(ev);
		return docket_error_set(DOCKET_ECORRUPT, "pending %s/%s: seq %llu is not its intent", session,
					invocation, (unsigned long long)inv.intent_seq);
	}
	snprintf(inv.tool, sizeof(inv.tool), "%s", ev->tool_intent->tool);
	docket_event_free(ev);
	info.session = session;
	info.invocation = invocation;
	info.tool = inv.tool;
	info.state = inv_pending_state(&inv);
	info.verdict = inv.verdict ? docket_verdict_name(inv.verdict) : "";
	info.recovery = docket_recovery_mode_name(inv.recovery ? inv.recovery
		: DOCKET__V1__RECOVERY_MODE__RECOVERY_MODE_NEVER_AUTO_RETRY);
	info.open_request = inv.open_request;
	info.token = inv.token;
	info.attempts = inv.attempts;
	info.intent_seq = inv.intent_seq;
	info.last_seq = inv.last_seq;
	return cb(ctx, &info);
}

/*
 * The pending invocations of one session (projection version 7): those of
 * its record's recent list without an outcome, and those the index names
 * (their records moved to `invocations` unfinished), as index keys
 * (session NUL invocation) sorted the way the index sorts them.
 */
typedef struct pending_list {
	docket_buf bytes;      /* the keys, one after the other */
	size_t *end;           /* where each ends in `bytes` */
	size_t n, cap;
	const char *session;
	size_t slen;
} pending_list;

static int pending_list_add(void *vp, const char *id, size_t ilen)
{
	pending_list *p = vp;
	int error;

	if (p->n == p->cap) {
		size_t *e = docket_array_grow(p->end, &p->cap, sizeof(*e), 16);

		if (!e)
			return DOCKET_ENOMEM;
		p->end = e;
	}
	if ((error = docket_buf_put(&p->bytes, p->session, p->slen + 1)) < 0 ||
	    (error = docket_buf_put(&p->bytes, id, ilen)) < 0)
		return error;
	p->end[p->n++] = p->bytes.len;
	return 0;
}

/* LMDB's default key order: bytes, then the shorter first. */
static int key_order(const void *a, const void *b)
{
	const MDB_val *x = a, *y = b;
	size_t n = x->mv_size < y->mv_size ? x->mv_size : y->mv_size;
	int c = memcmp(x->mv_data, y->mv_data, n);

	return c ? c : (x->mv_size > y->mv_size) - (x->mv_size < y->mv_size);
}

static int session_pending(docket_ledger *l, MDB_txn *txn, MDB_cursor *idx, ledger_reader *r, const MDB_val *sk,
			   const MDB_val *sv, pending_list *p, docket_pending_cb cb, void *ctx)
{
	char id[STATE_ID_MAX + 1];
	MDB_val k, v, *keys;
	sess_state s;
	int rc, error;

	if (sk->mv_size == 0 || sk->mv_size > STATE_ID_MAX)
		return docket_error_set(DOCKET_ECORRUPT, "bad session key");
	memcpy(id, sk->mv_data, sk->mv_size);
	id[sk->mv_size] = '\0';
	if ((error = sess_state_decode(&s, sv->mv_data, sv->mv_size)) < 0 || !s.pending)
		return error;
	p->n = 0;
	docket_buf_clear(&p->bytes);
	p->session = id;
	p->slen = sk->mv_size;
	if ((error = state_recent_unfinished(&s, pending_list_add, p)) < 0)
		return error;
	k.mv_data = id;
	k.mv_size = p->slen + 1; /* session + NUL: the prefix of its keys */
	for (rc = mdb_cursor_get(idx, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(idx, &k, &v, MDB_NEXT)) {
		if (k.mv_size <= p->slen + 1 || memcmp(k.mv_data, id, p->slen + 1) != 0)
			break;
		if ((error = pending_list_add(p, (const char *)k.mv_data + p->slen + 1, k.mv_size - p->slen - 1)) < 0)
			return error;
	}
	if (rc != 0 && rc != MDB_NOTFOUND)
		return store_error(rc, "read pending");
	if (!(keys = docket_calloc(p->n ? p->n : 1, sizeof(*keys))))
		return docket_error_set_oom();
	for (size_t i = 0; i < p->n; i++) {
		size_t from = i ? p->end[i - 1] : 0;

		keys[i].mv_data = p->bytes.ptr + from;
		keys[i].mv_size = p->end[i] - from;
	}
	qsort(keys, p->n, sizeof(*keys), key_order);
	for (size_t i = 0; i < p->n && error == 0; i++)
		error = pending_emit(l, txn, r, &keys[i], cb, ctx);
	docket_free(keys);
	return error;
}

int docket_ledger_pending(docket_ledger *l, const char *session, docket_pending_cb cb, void *ctx)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL, *idx = NULL;
	MDB_val k = { 0, NULL }, v;
	pending_list p = { DOCKET_BUF_INIT, NULL, 0, 0, NULL, 0 };
	ledger_reader r;
	int rc, error;

	if (session && (!*session || strlen(session) > STATE_ID_MAX))
		return docket_error_set(DOCKET_EINVALID, "bad session id");
	if ((error = ledger_projections_current(l)) < 0 || (error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	reader_init(&r, l, txn);
	if ((rc = mdb_cursor_open(txn, l->dbi.sessions, &cur)) != 0 ||
	    (rc = mdb_cursor_open(txn, l->dbi.pending, &idx)) != 0) {
		error = store_error(rc, "read pending");
		goto cleanup;
	}
	if (session) {
		k.mv_data = (void *)session;
		k.mv_size = strlen(session);
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
	} else {
		rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	}
	while (rc == 0) {
		if ((error = session_pending(l, txn, idx, &r, &k, &v, &p, cb, ctx)) != 0)
			goto cleanup;
		if (session)
			break;
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	if (rc != 0 && rc != MDB_NOTFOUND)
		error = store_error(rc, "read pending");
cleanup:
	if (idx)
		mdb_cursor_close(idx);
	if (cur)
		mdb_cursor_close(cur);
	docket_buf_dispose(&p.bytes);
	docket_free(p.end);
	reader_dispose(&r);
	store_txn_abort(l, txn);
	return error > 0 ? 0 : error;
}

/* ---- facts ---- */

int docket_ledger_info_get(docket_ledger *l, docket_ledger_info *out)
{
	char path[4096];
	struct stat st;
	MDB_txn *txn = NULL;
	MDB_stat ms;
	MDB_val head;
	int error;

	memset(out, 0, sizeof(*out));
	memcpy(out->ledger_id, l->ledger_id, sizeof(out->ledger_id));
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	if ((error = store_meta_get_u64(txn, l, "head_seq", &out->events)) < 0 ||
	    (error = store_meta_get_u64(txn, l, "epoch", &out->epoch)) < 0 ||
	    (error = store_meta_get_u64(txn, l, "payload_bytes", &out->payload_bytes)) < 0 ||
	    (error = store_meta_get_u64(txn, l, "frame_bytes", &out->frame_bytes)) < 0)
		goto cleanup;
	if (store_meta_get(txn, l, "head_hash", &head) == 0 && head.mv_size == LEDGER_HASH_LEN)
		memcpy(out->head, head.mv_data, LEDGER_HASH_LEN);
	if (mdb_stat(txn, l->dbi.sessions, &ms) == 0)
		out->sessions = ms.ms_entries;
	if ((error = state_pending_count(l, txn, &out->pending)) < 0)
		goto cleanup;
	if (mdb_stat(txn, l->dbi.dicts, &ms) == 0)
		out->dictionaries = (uint32_t)ms.ms_entries;
	out->map_size = l->map_size;
	out->format = l->format;
	snprintf(path, sizeof(path), "%s/data.mdb", l->path);
	if (stat(path, &st) == 0)
		out->file_bytes = (uint64_t)st.st_size;
cleanup:
	store_txn_abort(l, txn);
	return error;
}

/* ---- single records (the runtime protocol and recovery use these) ---- */

int ledger_event_json(docket_ledger *l, uint64_t seq, json_t **out)
{
	uint8_t hash[LEDGER_HASH_LEN];
	docket_event *ev = NULL;
	ledger_reader r;
	MDB_txn *txn = NULL;
	int error;

	*out = NULL;
	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	reader_init(&r, l, txn);
	if ((error = load_event(&ev, &docket_pb_allocator, hash, &r, seq)) == 0)
		error = ledger_event_to_json(out, seq, ev, hash);
	docket_event_free(ev);
	reader_dispose(&r);
	store_txn_abort(l, txn);
	return error;
}

int ledger_invocation_get(docket_ledger *l, const char *session, const char *invocation, inv_state *out)
{
	MDB_txn *txn = NULL;
	int error;

	if ((error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	if ((error = state_inv_get(out, l, txn, session, invocation)) == DOCKET_ENOTFOUND)
		error = docket_error_set(DOCKET_ENOTFOUND, "no invocation \"%s\" in session \"%s\"", invocation, session);
	store_txn_abort(l, txn);
	return error;
}

int ledger_session_get(docket_ledger *l, const char *session, sess_state *out, char **policy_json)
{
	MDB_txn *txn = NULL;
	MDB_val k = { strlen(session), (void *)session }, v;
	int rc, error;

	if (policy_json)
		*policy_json = NULL;
	if ((error = ledger_projections_current(l)) < 0 || (error = store_txn_begin(&txn, l, MDB_RDONLY)) < 0)
		return error;
	rc = mdb_get(txn, l->dbi.sessions, &k, &v);
	if (rc == MDB_NOTFOUND)
		error = docket_error_set(DOCKET_ENOTFOUND, "no session \"%s\"", session);
	else if (rc != 0)
		error = store_error(rc, "read session");
	else
		error = sess_state_decode(out, v.mv_data, v.mv_size);
	if (error == 0 && policy_json && out->policy_revision) {
		MDB_val hk = { LEDGER_HASH_LEN, out->policy_hash };

		rc = mdb_get(txn, l->dbi.policies, &hk, &v);
		if (rc != 0)
			error = rc == MDB_NOTFOUND
				? docket_error_set(DOCKET_ECORRUPT, "policy of session \"%s\" is missing", session)
				: store_error(rc, "read policy");
		else if (!(*policy_json = docket_strndup(v.mv_data, v.mv_size)))
			error = docket_error_set_oom();
	}
	store_txn_abort(l, txn);
	return error;
}
