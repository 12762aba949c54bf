/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scan.c: replay's reader. Events come back as protobuf messages, not JSON,
 * and only the kinds replay needs are unpacked: the segment's index gives
 * each event's kind, and a segment with none of them is not decompressed. Read transactions are
 * short (SCAN_CHUNK events each), as in ledger/read.c.
 */
#include <string.h>

#include "replay_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define SCAN_CHUNK 1024
#define SCAN_ARENA (64u << 10)   /* an event unpacked; a bigger one spills to the heap */

/* Body field numbers of docket.v1.Event (schema/docket.proto). */
enum {
	BODY_SESSION_OPENED = 17,
	BODY_POLICY_REVISED = 18,
	BODY_TOOL_INTENT = 19,
	BODY_APPROVAL_SETTLED = 21,
	BODY_SESSION_CLOSED = 24
};

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

/* Unpack stored event `seq` through `alloc`; *out NULL when its kind is not
 * wanted (then nothing is decompressed). */
static int decode(docket_event **out, ledger_reader *r, uint64_t seq, int all, ProtobufCAllocator *alloc)
{
	const uint8_t *p;
	unsigned kind;
	size_t len;
	int error;

	*out = NULL;
	if ((error = reader_kind(r, seq, &kind)) == 0 && (all || wanted(kind)) &&
	    (error = reader_payload(r, seq, &p, &len)) == 0 &&
	    (kind != BODY_TOOL_INTENT || (error = intent_decode(out, alloc, p, len)) == 1))
		error = event_unpack_in(out, alloc, p, len);
	if (error == DOCKET_ENOTFOUND)
		error = docket_error_set(DOCKET_ECORRUPT, "seq %llu is indexed but missing",
					 (unsigned long long)seq);
	if (error < 0)
		docket_error_prefix("seq %llu: ", (unsigned long long)seq);
	return error;
}

int scan_event_at(docket_event **out, ledger_reader *cur, ledger_reader *r, MDB_txn *txn, uint64_t seq)
{
	return scan_event_in(out, cur, r, txn, seq, &docket_pb_allocator);
}

int scan_event_in(docket_event **out, ledger_reader *cur, ledger_reader *r, MDB_txn *txn, uint64_t seq,
		  ProtobufCAllocator *alloc)
{
	/* an approval comes soon after its intent: mostly in the segment the
	 * scan holds decompressed */
	if (cur && cur->first && seq >= cur->first && seq - cur->first < cur->count)
		r = cur;
	else
		reader_set_txn(r, txn);
	return decode(out, r, seq, 1, alloc);
}

int scan_invocation(inv_state *out, docket_ledger *l, MDB_txn *txn, const char *session,
		    const char *invocation, docket_buf *scratch)
{
	int error = state_inv_get(out, l, txn, session, invocation);

	(void)scratch;
	return error == DOCKET_ENOTFOUND
		? docket_error_set(DOCKET_ECORRUPT, "no invocation record for \"%s\" in session \"%s\"",
				   invocation, session) : error;
}

typedef struct scan_state {
	docket_ledger *l;
	const char *session;
	uint64_t next;
	int done;
	ledger_reader r;
	scan_cb cb;
	void *ctx;
	ProtobufCAllocator *alloc; /* the callback's, or &pb */
	docket_arena arena;       /* without one, each event is unpacked in here */
	ProtobufCAllocator pb;
} scan_state;

/* The next seq to scan (from the session's index when there is one); 0 at
 * the end. */
static int next_seq(scan_state *s, MDB_cursor *cur, uint64_t *seq)
{
	int error;

	*seq = 0;
	if (s->session)
		return ledger_session_next(cur, &s->r, s->session, s->next, seq);
	if ((error = reader_seek(&s->r, s->next)) == DOCKET_ENOTFOUND)
		return 0;
	*seq = s->next;
	return error;
}

/* One event: decoded when replay wants its kind, handed to the callback. */
static int scan_one(scan_state *s, MDB_txn *txn, uint64_t seq)
{
	docket_event *ev = NULL;
	int error;

	if ((error = decode(&ev, &s->r, seq, 0, s->alloc)) < 0)
		return error;
	s->next = seq + 1;
	if (!ev)
		return 0;
	error = s->cb(s->ctx, txn, &s->r, seq, ev);
	/* the scan's arena: all at once unless a piece spilled to the heap */
	if (s->alloc == &s->pb && !docket_arena_reset(&s->arena))
		docket__v1__event__free_unpacked(ev, &s->pb);
	return error;
}

static int scan_chunk(scan_state *s)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	uint64_t seq = 0;
	int rc, error = 0;

	if ((error = store_txn_begin(&txn, s->l, MDB_RDONLY)) < 0)
		return error;
	reader_set_txn(&s->r, txn);
	if (s->session && (rc = mdb_cursor_open(txn, ledger_table_dbi(s->l, LEDGER_TABLE_SESSION_EVENTS), &cur)) != 0) {
		error = store_error(rc, "read events");
		goto cleanup;
	}
	for (int n = 0; n < SCAN_CHUNK; n++) {
		if ((error = next_seq(s, cur, &seq)) < 0)
			goto cleanup;
		if (!seq) {
			s->done = 1;
			break;
		}
		if ((error = scan_one(s, txn, seq)) != 0)
			goto cleanup;
	}
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

int scan_events(docket_ledger *l, const char *session, ProtobufCAllocator *alloc, scan_cb cb, void *ctx)
{
	scan_state s;
	int error = 0;

	memset(&s, 0, sizeof(s));
	s.l = l;
	s.session = session;
	s.next = 1;
	s.cb = cb;
	s.ctx = ctx;
	s.alloc = alloc ? alloc : &s.pb;
	reader_init(&s.r, l, NULL);
	s.r.scan = 1;
	s.r.want = wanted;   /* a session's outcomes stay compressed (format 3) */
	if (!alloc && (error = docket_arena_init(&s.arena, SCAN_ARENA)) == 0)
		docket_arena_pb(&s.pb, &s.arena);
	while (error == 0 && !s.done)
		error = scan_chunk(&s);
	reader_dispose(&s.r);
	docket_arena_dispose(&s.arena);
	return error > 0 ? 0 : error;
}
