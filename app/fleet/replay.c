// SPDX-License-Identifier: Apache-2.0
/*
 * replay.c: what a fleet replay reads, per ledger: the events replay needs
 * in seq order, each with what its call's whole history says (a local
 * ledger's invocation record): how many approval requests, the verdict the
 * history implies (DESIGN §3: a request means approval_required; without
 * one, a recovery evaluation's verdict, else a dispatch means allowed, else
 * a denied or unsupported outcome says so), the result of a settlement
 * that came after the last request, and for an approved_for_session
 * settlement the call's intent (its grant).
 *
 * Two reads in one snapshot. First the ledger's rows of docket_calls
 * (schema 7: each call's history, kept at ingest and derived by the server
 * from the payloads; the server says what it implies) into a hash table of
 * calls (util/htab.h); then the events replay reads (session and policy
 * events, intents, settlements: docket_events_replayed, in seq order), fed
 * to replay as they arrive, a chunk at a time, each intent and settlement
 * with its call's record. Until schema 7 the client read every event of
 * the ledger and folded the histories itself, keeping the replayed events
 * until the read ended; until schema 5 it read the ledger twice, and until
 * schema 4 the server sorted and aggregated every call.
 */
#include <string.h>

#include "fleet_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/htab.h"

/* Each call's history as replay is given it; the intent of a call with an
 * approved_for_session answer (replay reads it only for those). */
static const char calls_sql[] =
	"SELECT c.session, c.invocation, c.requests::int8,"
	" CASE WHEN c.requests > 0 THEN 'approval_required' WHEN c.evaluated IS NOT NULL THEN c.evaluated"
	" WHEN c.dispatched THEN 'allowed' WHEN c.outcome IN ('denied', 'unsupported') THEN c.outcome END,"
	" CASE WHEN c.last_settled > coalesce(c.last_request, 0) THEN c.result END,"
	" CASE WHEN c.for_session THEN (SELECT i.payload FROM docket_events i WHERE i.ledger_id = c.ledger_id"
	" AND i.seq = c.intent_seq AND i.time = c.intent_time) END"
	" FROM docket_calls c WHERE c.ledger_id = $1 AND ($2::text IS NULL OR c.session = $2)";

enum { CALL_SESSION, CALL_INVOCATION, CALL_REQUESTS, CALL_IMPLIED, CALL_LAST_RESULT, CALL_INTENT };

/* The events replay reads, in seq order along the partial index
 * docket_events_replayed (its predicate). When a ledger fills its month
 * the planner costs a scan of the partition and a sort as cheaper; the
 * sort of the rows with their payloads spills to disk and takes the
 * server two to four times the index scan's time (docs/fleet.md), so the
 * replay's snapshot turns sorting off. */
static const char events_sql[] =
	"SELECT seq, payload, session, invocation FROM docket_events"
	" WHERE ledger_id = $1 AND ($2::text IS NULL OR session = $2) AND type IN " FLEET_REPLAYED_TYPES
	" ORDER BY seq";

enum { EV_SEQ, EV_PAYLOAD, EV_SESSION, EV_INVOCATION };

/* Rows a FETCH brings: each is a round trip, which on a loaded machine
 * costs a wait for the CPU on both sides; an event row is its payload (a
 * few hundred bytes) and its call's key. */
#define SCAN_CHUNK 20000

/* The names a history holds (verdicts, statuses, results: enumeration
 * names), each kept once; a call refers to one by its index + 1 (0: none). */
#define NAMES_MAX 255

typedef struct names {
	char *v[NAMES_MAX];
	int n;
} names;

static int name_index(names *ns, const char *s, unsigned char *out)
{
	int i;

	*out = 0;
	if (!s)
		return 0;
	for (i = 0; i < ns->n && strcmp(ns->v[i], s) != 0; i++)
		;
	if (i == ns->n) {
		if (ns->n == NAMES_MAX)
			return docket_error_set(DOCKET_ECORRUPT, "more than %d distinct verdicts, statuses and "
						"results in one ledger", NAMES_MAX);
		if (!(ns->v[ns->n] = docket_strdup(s)))
			return docket_error_set_oom();
		ns->n++;
	}
	*out = (unsigned char)(i + 1);
	return 0;
}

static const char *name_of(const names *ns, unsigned char i)
{
	return i ? ns->v[i - 1] : NULL;
}

/* One call's record. */
typedef struct fleet_call {
	char *key;                 /* session '\0' invocation (owned) */
	size_t klen;
	uint8_t *intent;           /* the first intent's payload, for an approved_for_session answer (owned) */
	size_t intent_len;
	uint32_t requests;
	unsigned char implied, last_result;  /* names' index + 1 (0: none) */
} fleet_call;

typedef struct call_key {
	const char *p;
	size_t len;
} call_key;

static int call_same(const void *slot, const void *key)
{
	const fleet_call *c = slot;
	const call_key *k = key;

	return c->klen == k->len && memcmp(c->key, k->p, k->len) == 0;
}

typedef struct history {
	docket_htab calls;
	names names;
	char *key;                 /* the last key built (key_of) */
	size_t key_cap;
} history;

static void history_dispose(history *h)
{
	for (size_t i = 0; i < h->calls.cap; i++) {
		fleet_call *c = docket_htab_at(&h->calls, i);

		if (c) {
			docket_free(c->key);
			docket_free(c->intent);
		}
	}
	docket_htab_dispose(&h->calls);
	for (int i = 0; i < h->names.n; i++)
		docket_free(h->names.v[i]);
	docket_free(h->key);
}

/* The key of the call of row r (its session in column c, the invocation
 * in c + 1) in h->key. */
static int key_of(history *h, const PGresult *res, int r, int c, call_key *out)
{
	size_t sl = (size_t)PQgetlength(res, r, c), il = (size_t)PQgetlength(res, r, c + 1);

	if (sl + il + 1 > h->key_cap) {
		char *k = docket_realloc(h->key, sl + il + 1);

		if (!k)
			return docket_error_set_oom();
		h->key = k;
		h->key_cap = sl + il + 1;
	}
	memcpy(h->key, PQgetvalue(res, r, c), sl);
	h->key[sl] = '\0';
	memcpy(h->key + sl + 1, PQgetvalue(res, r, c + 1), il);
	out->p = h->key;
	out->len = sl + il + 1;
	return 0;
}

static const char *opt_text(const PGresult *res, int r, int c)
{
	return PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
}

/* A row of calls_sql into the table (a key appears once: the primary key). */
static int on_call_row(void *vctx, const PGresult *res, int r)
{
	history *h = vctx;
	call_key k;
	fleet_call *c;
	uint32_t hash;
	int error;

	if ((error = key_of(h, res, r, CALL_SESSION, &k)) < 0 || (error = docket_htab_reserve(&h->calls)) < 0)
		return error;
	hash = docket_hash(DOCKET_HASH_SEED, k.p, k.len);
	c = docket_htab_find(&h->calls, hash, call_same, &k);
	if (!docket_htab_free_at(&h->calls, c))
		return docket_error_set(DOCKET_ECORRUPT, "docket_calls holds a call twice");
	memset(c, 0, sizeof(*c));
	if (!(c->key = docket_malloc(k.len)))
		return docket_error_set_oom();
	memcpy(c->key, k.p, k.len);
	c->klen = k.len;
	docket_htab_take(&h->calls, c, hash);
	c->requests = (uint32_t)fleet_bin_u64(res, r, CALL_REQUESTS);
	if ((error = name_index(&h->names, opt_text(res, r, CALL_IMPLIED), &c->implied)) < 0 ||
	    (error = name_index(&h->names, opt_text(res, r, CALL_LAST_RESULT), &c->last_result)) < 0 ||
	    PQgetisnull(res, r, CALL_INTENT))
		return error;
	c->intent_len = (size_t)PQgetlength(res, r, CALL_INTENT);
	if (!(c->intent = docket_malloc(c->intent_len + 1)))
		return docket_error_set_oom();
	memcpy(c->intent, PQgetvalue(res, r, CALL_INTENT), c->intent_len);
	return 0;
}

/* The record of row r's call (NULL: the event has no call, or the call
 * no record). */
static int call_of(history *h, const PGresult *res, int r, const fleet_call **out)
{
	call_key k;
	const fleet_call *c;
	int error;

	*out = NULL;
	if (PQgetisnull(res, r, EV_SESSION) || PQgetisnull(res, r, EV_INVOCATION))
		return 0;
	if ((error = key_of(h, res, r, EV_SESSION, &k)) < 0)
		return error;
	c = docket_htab_find(&h->calls, docket_hash(DOCKET_HASH_SEED, k.p, k.len), call_same, &k);
	*out = docket_htab_free_at(&h->calls, c) ? NULL : c;
	return 0;
}

/* Replay pulls the events one at a time, from the chunk at hand. */
typedef struct feed {
	docket_fleet *f;
	history *h;
	PGresult *res;
	int row, rows;
} feed;

static int feed_next(void *vctx, docket_replay_input *in)
{
	feed *fd = vctx;
	const fleet_call *c;
	int r, error;

	if (fd->row == fd->rows) {
		if (fd->res && fd->rows < SCAN_CHUNK)
			return 1;  /* the last chunk is done */
		PQclear(fd->res);
		fd->res = NULL;
		if ((error = fleet_fetch_chunk(&fd->res, fd->f, SCAN_CHUNK, "fleet replay")) < 0)
			return error;
		fd->row = 0;
		if ((fd->rows = PQntuples(fd->res)) == 0)
			return 1;
	}
	r = fd->row++;
	if ((error = call_of(fd->h, fd->res, r, &c)) < 0)
		return error;
	in->seq = fleet_bin_u64(fd->res, r, EV_SEQ);
	in->payload = (const uint8_t *)PQgetvalue(fd->res, r, EV_PAYLOAD);
	in->len = (size_t)PQgetlength(fd->res, r, EV_PAYLOAD);
	in->requests = c ? c->requests : 0;
	in->implied = c ? name_of(&fd->h->names, c->implied) : NULL;
	in->last_result = c ? name_of(&fd->h->names, c->last_result) : NULL;
	in->intent = c ? c->intent : NULL;
	in->intent_len = c ? c->intent_len : 0;
	return 0;
}

/* Each replayed call names its ledger and host. */
typedef struct tag_ctx {
	const docket_fleet_ledger *ledger;
	docket_replay_cb cb;
	void *ctx;
} tag_ctx;

static int tag_call(void *vctx, const docket_replay_call *call)
{
	tag_ctx *t = vctx;
	docket_replay_call c = *call;

	c.ledger = t->ledger->ledger_id;
	c.host = t->ledger->host;
	return t->cb(t->ctx, &c);
}

typedef struct replay_ctx {
	docket_fleet *f;
	const docket_policy *base;
	const docket_policy *const *policies;
	size_t n;
	const docket_replay_options *opts;
	docket_fleet_ledger_cb on_ledger;
	docket_replay_cb cb;
	void *ctx;
} replay_ctx;

/* The calls' records, then the events through replay, in one snapshot. */
static int replay_ledger(void *vctx, const docket_fleet_ledger *l)
{
	replay_ctx *c = vctx;
	const char *params[2] = { l->ledger_id, c->opts ? c->opts->session : NULL };
	history h = { DOCKET_HTAB_INIT(fleet_call), { { NULL }, 0 }, NULL, 0 };
	feed fd = { c->f, &h, NULL, 0, 0 };
	tag_ctx tag = { l, c->cb, c->ctx };
	int error;

	if (c->on_ledger && (error = c->on_ledger(c->ctx, l)) != 0)
		return error;
	if ((error = fleet_cursor_open(c->f, calls_sql, 2, params)) < 0)
		goto cleanup;
	if ((error = fleet_cursor_rows(c->f, SCAN_CHUNK, on_call_row, &h)) == 0 &&
	    (error = fleet_exec(c->f, "CLOSE docket_cur; SET LOCAL enable_sort = off")) == 0 &&
	    (error = fleet_cursor_declare(c->f, events_sql, 2, params)) == 0)
		error = docket_replay_run_input(feed_next, &fd, c->base, c->policies, c->n, c->opts, tag_call, &tag);
	PQclear(fd.res);
	error = fleet_cursor_close(c->f, error);
cleanup:
	history_dispose(&h);
	return error;
}

int docket_fleet_replay(docket_fleet *f, const docket_fleet_filter *filter, const docket_policy *base,
			const docket_policy *const *policies, size_t n, const docket_replay_options *opts,
			docket_fleet_ledger_cb on_ledger, docket_replay_cb cb, void *ctx)
{
	replay_ctx c = { f, base, policies, n, opts, on_ledger, cb, ctx };

	return fleet_each_ledger(f, filter, replay_ledger, &c);
}
