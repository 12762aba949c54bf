/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scan.c: replay's reader. Events come back as protobuf messages, not JSON,
 * and only the kinds replay needs are unpacked: a cheap look at the payload's
 * wire format finds the body's field number first. Read transactions are
 * short (SCAN_CHUNK events each), as in ledger/read.c.
 */
#include <string.h>

#include "replay_internal.h"
#include "util/error.h"

#define SCAN_CHUNK 1024

/* Body field numbers of docket.v1.Event (schema/docket.proto). */
enum {
	BODY_SESSION_OPENED = 17,
	BODY_POLICY_REVISED = 18,
	BODY_TOOL_INTENT = 19,
	BODY_APPROVAL_SETTLED = 21,
	BODY_SESSION_CLOSED = 24
};

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/*
 * The field number of the event's body (the first field >= 16), or 0 when
 * the payload does not parse that far (then it is unpacked and the unpacker
 * reports what is wrong).
 */
static unsigned body_field(const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	uint64_t tag, n;

	while (p < end) {
		if (varint(&p, end, &tag) < 0)
			return 0;
		if ((tag >> 3) >= 16)
			return (unsigned)(tag >> 3);
		switch (tag & 7) {
		case 0:
			if (varint(&p, end, &n) < 0)
				return 0;
			break;
		case 1:
			n = 8;
			goto skip;
		case 5:
			n = 4;
			goto skip;
		case 2:
			if (varint(&p, end, &n) < 0)
				return 0;
skip:
			if (n > (uint64_t)(end - p))
				return 0;
			p += n;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

static int wanted(unsigned field)
{
	switch (field) {
	case 0:  /* unknown: let the unpacker judge */
	case BODY_SESSION_OPENED:
	case BODY_POLICY_REVISED:
	case BODY_TOOL_INTENT:
	case BODY_APPROVAL_SETTLED:
	case BODY_SESSION_CLOSED:
		return 1;
	default:
		return 0;
	}
}

/* Decode a frame; *out NULL when its kind is not wanted. */
static int decode(docket_event **out, docket_ledger *l, MDB_txn *txn, uint64_t seq,
		  const MDB_val *frame, docket_buf *payload, int all)
{
	frame_header hdr;
	int error;

	*out = NULL;
	if ((error = frame_decode(payload, &hdr, l, txn, frame->mv_data, frame->mv_size)) == 0 &&
	    (all || wanted(body_field((const uint8_t *)payload->ptr, payload->len))))
		error = event_unpack(out, (const uint8_t *)payload->ptr, payload->len);
	if (error < 0)
		docket_error_prefix("seq %llu: ", (unsigned long long)seq);
	return error;
}

int scan_event_at(docket_event **out, docket_ledger *l, MDB_txn *txn, uint64_t seq, docket_buf *scratch)
{
	MDB_val frame;
	int error;

	*out = NULL;
	if ((error = ledger_frame_get(txn, l, seq, &frame)) < 0)
		return error;
	return decode(out, l, txn, seq, &frame, scratch, 1);
}

int scan_invocation(inv_state *out, docket_ledger *l, MDB_txn *txn, const char *session,
		    const char *invocation, docket_buf *scratch)
{
	MDB_val k, v;
	int rc, error;

	docket_buf_clear(scratch);
	if ((error = docket_buf_put(scratch, session, strlen(session) + 1)) < 0 ||
	    (error = docket_buf_puts(scratch, invocation)) < 0)
		return error;
	k.mv_data = scratch->ptr;
	k.mv_size = scratch->len;
	rc = mdb_get(txn, l->dbi.invocations, &k, &v);
	if (rc == MDB_NOTFOUND)
		return docket_error_set(DOCKET_ECORRUPT, "no invocation record for \"%s\" in session \"%s\"",
					invocation, session);
	if (rc != 0)
		return store_error(rc, "read invocation");
	return inv_state_decode(out, v.mv_data, v.mv_size);
}

typedef struct scan_state {
	docket_ledger *l;
	const char *session;
	uint64_t next;
	int done;
	docket_buf payload;
	scan_cb cb;
	void *ctx;
} scan_state;

static int cursor_first(scan_state *s, MDB_cursor *cur, MDB_val *k, MDB_val *v, uint8_t key[8])
{
	docket_be64_put(key, s->next);
	if (s->session) {
		k->mv_data = (void *)s->session;
		k->mv_size = strlen(s->session);
		v->mv_data = key;
		v->mv_size = 8;
		return mdb_cursor_get(cur, k, v, MDB_GET_BOTH_RANGE);
	}
	k->mv_data = key;
	k->mv_size = 8;
	return mdb_cursor_get(cur, k, v, MDB_SET_RANGE);
}

/* One event under the cursor: its frame, decoded, handed to the callback. */
static int scan_one(scan_state *s, MDB_txn *txn, const MDB_val *k, const MDB_val *v)
{
	docket_event *ev = NULL;
	MDB_val frame = *v;
	uint64_t seq;
	int error;

	seq = docket_be64_get(s->session ? v->mv_data : k->mv_data);
	if (s->session && (error = ledger_frame_get(txn, s->l, seq, &frame)) < 0)
		return error;
	if ((error = decode(&ev, s->l, txn, seq, &frame, &s->payload, 0)) < 0)
		return error;
	s->next = seq + 1;
	if (!ev)
		return 0;
	error = s->cb(s->ctx, txn, seq, &ev);
	docket_event_free(ev);   /* NULL when the callback took it */
	return error;
}

static int scan_chunk(scan_state *s)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	uint8_t key[8];
	MDB_val k, v;
	int rc, error = 0, n = 0;

	if ((error = store_txn_begin(&txn, s->l, MDB_RDONLY)) < 0)
		return error;
	rc = mdb_cursor_open(txn, s->session ? s->l->dbi.session_events : s->l->dbi.events, &cur);
	if (rc == 0)
		rc = cursor_first(s, cur, &k, &v, key);
	while (rc == 0 && n++ < SCAN_CHUNK) {
		if ((error = scan_one(s, txn, &k, &v)) != 0)
			goto cleanup;
		rc = mdb_cursor_get(cur, &k, &v, s->session ? MDB_NEXT_DUP : MDB_NEXT);
	}
	if (rc == MDB_NOTFOUND)
		s->done = 1;
	else if (rc != 0)
		error = store_error(rc, "read events");
cleanup:
	if (cur)
		mdb_cursor_close(cur);
	store_txn_abort(s->l, txn);
	return error;
}

int scan_read_begin(MDB_txn **out, docket_ledger *l)
{
	return store_txn_begin(out, l, MDB_RDONLY);
}

void scan_read_end(docket_ledger *l, MDB_txn *txn)
{
	if (txn)
		store_txn_abort(l, txn);
}

int scan_events(docket_ledger *l, const char *session, scan_cb cb, void *ctx)
{
	scan_state s = { l, session, 1, 0, DOCKET_BUF_INIT, cb, ctx };
	int error = 0;

	while (!s.done && error == 0)
		error = scan_chunk(&s);
	docket_buf_dispose(&s.payload);
	return error > 0 ? 0 : error;
}
