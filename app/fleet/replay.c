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
 * Two reads in one snapshot. The first streams the few columns of every
 * event of a call (no order, no aggregate on the server) into a hash table
 * of calls (util/htab.h) that holds what the history says; the second
 * streams the events replay reads, in seq order along the primary key (no
 * sort), and each takes its call's record from the table. Schema 4 and
 * before did both on the server (a sort and an aggregate per call, a merge
 * join, a sort by seq) before the first row came back.
 */
#include <string.h>

#include "fleet_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/htab.h"

/* the columns of every event of a call, in no order */
static const char history_sql[] =
	"SELECT session, invocation, seq, type, verdict, status,"
	" CASE WHEN type = 'approval.settled' THEN event ->> 'result' END"
	" FROM docket_events WHERE ledger_id = $1 AND ($2::text IS NULL OR session = $2)"
	" AND session IS NOT NULL AND invocation IS NOT NULL"
	" AND type IN ('approval.requested', 'approval.settled', 'recovery.action', 'tool.dispatched',"
	" 'tool.completed')";

/* the events replay reads, in seq order; an approved_for_session
 * settlement with its call's (first) intent */
static const char events_sql[] =
	"SELECT e.seq, e.payload, e.type, e.session, e.invocation,"
	" CASE WHEN e.type = 'approval.settled' AND e.event ->> 'result' = 'approved_for_session' THEN"
	"  (SELECT i.payload FROM docket_events i WHERE i.ledger_id = $1 AND i.session = e.session"
	"    AND i.invocation = e.invocation AND i.type = 'tool.intent' ORDER BY i.seq LIMIT 1) END"
	" FROM docket_events e WHERE e.ledger_id = $1 AND ($2::text IS NULL OR e.session = $2)"
	" AND e.type IN ('session.opened', 'session.closed', 'policy.revised', 'tool.intent', 'approval.settled')"
	" ORDER BY e.seq";

/* Rows a FETCH brings: each is a round trip, which on a loaded machine
 * costs a wait for the CPU on both sides; a history row is about 40
 * bytes, an event row the payload of an intent, a settlement or a session
 * event (a few hundred bytes). */
#define HISTORY_CHUNK 100000
#define EVENTS_CHUNK 20000

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

/* One call's history. Seqs are 0 when the call has no such event. */
typedef struct fleet_call {
	char *key;                 /* session '\0' invocation (owned) */
	size_t klen;
	uint64_t last_req, last_settle, evaluated_seq, outcome_seq;
	uint32_t requests;
	unsigned char dispatched;
	unsigned char result;      /* of the last settlement */
	unsigned char evaluated;   /* the first recovery evaluation's verdict */
	unsigned char outcome;     /* the first outcome's status */
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

		if (c)
			docket_free(c->key);
	}
	docket_htab_dispose(&h->calls);
	for (int i = 0; i < h->names.n; i++)
		docket_free(h->names.v[i]);
	docket_free(h->key);
}

/* The key of row r's call (columns 3 and 4 of events_sql, 0 and 1 of
 * history_sql: session_col and session_col + 1) in h->key. */
static int key_of(history *h, const PGresult *res, int r, int session_col, call_key *out)
{
	size_t sl = (size_t)PQgetlength(res, r, session_col), il = (size_t)PQgetlength(res, r, session_col + 1);

	if (sl + il + 1 > h->key_cap) {
		char *k = docket_realloc(h->key, sl + il + 1);

		if (!k)
			return docket_error_set_oom();
		h->key = k;
		h->key_cap = sl + il + 1;
	}
	memcpy(h->key, PQgetvalue(res, r, session_col), sl);
	h->key[sl] = '\0';
	memcpy(h->key + sl + 1, PQgetvalue(res, r, session_col + 1), il);
	out->p = h->key;
	out->len = sl + il + 1;
	return 0;
}

static const fleet_call *history_find(const history *h, const call_key *k)
{
	const fleet_call *c = docket_htab_find(&h->calls, docket_hash(DOCKET_HASH_SEED, k->p, k->len), call_same, k);

	return docket_htab_free_at(&h->calls, c) ? NULL : c;
}

/* The call of key k, added when absent. */
static int history_call(history *h, const call_key *k, fleet_call **out)
{
	uint32_t hash = docket_hash(DOCKET_HASH_SEED, k->p, k->len);
	fleet_call *c;
	int error;

	if ((error = docket_htab_reserve(&h->calls)) < 0)
		return error;
	c = docket_htab_find(&h->calls, hash, call_same, k);
	if (docket_htab_free_at(&h->calls, c)) {
		memset(c, 0, sizeof(*c));
		if (!(c->key = docket_malloc(k->len)))
			return docket_error_set_oom();
		memcpy(c->key, k->p, k->len);
		c->klen = k->len;
		docket_htab_take(&h->calls, c, hash);
	}
	*out = c;
	return 0;
}

static const char *opt_text(const PGresult *res, int r, int c)
{
	return PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
}

/* One row of history_sql into its call's record. */
static int on_history_row(void *vctx, const PGresult *res, int r)
{
	history *h = vctx;
	uint64_t seq = fleet_bin_u64(res, r, 2);
	const char *type = PQgetvalue(res, r, 3);
	call_key k;
	fleet_call *c = NULL;
	int error;

	if ((error = key_of(h, res, r, 0, &k)) < 0 || (error = history_call(h, &k, &c)) < 0)
		return error;
	if (strcmp(type, "approval.requested") == 0) {
		c->requests++;
		if (seq > c->last_req)
			c->last_req = seq;
	} else if (strcmp(type, "approval.settled") == 0) {
		if (seq > c->last_settle) {
			c->last_settle = seq;
			error = name_index(&h->names, opt_text(res, r, 6), &c->result);
		}
	} else if (strcmp(type, "recovery.action") == 0) {
		if (!PQgetisnull(res, r, 4) && (c->evaluated_seq == 0 || seq < c->evaluated_seq)) {
			c->evaluated_seq = seq;
			error = name_index(&h->names, PQgetvalue(res, r, 4), &c->evaluated);
		}
	} else if (strcmp(type, "tool.dispatched") == 0) {
		c->dispatched = 1;
	} else if (strcmp(type, "tool.completed") == 0) {
		if (c->outcome_seq == 0 || seq < c->outcome_seq) {
			c->outcome_seq = seq;
			error = name_index(&h->names, opt_text(res, r, 5), &c->outcome);
		}
	}
	return error;
}

/* What the call's history says, into in (a call without a record, or an
 * event of another type, says nothing). */
static void history_say(const history *h, const fleet_call *c, docket_replay_input *in)
{
	const char *outcome;

	in->requests = 0;
	in->implied = in->last_result = NULL;
	if (!c)
		return;
	in->requests = c->requests;
	outcome = name_of(&h->names, c->outcome);
	if (c->requests > 0)
		in->implied = "approval_required";
	else if (c->evaluated)
		in->implied = name_of(&h->names, c->evaluated);
	else if (c->dispatched)
		in->implied = "allowed";
	else if (outcome && (strcmp(outcome, "denied") == 0 || strcmp(outcome, "unsupported") == 0))
		in->implied = outcome;
	if (c->last_settle > c->last_req)
		in->last_result = name_of(&h->names, c->result);
}

/* The cursor pushes rows; replay pulls them: a chunk is kept and handed
 * out one row at a time. */
typedef struct feed {
	docket_fleet *f;
	history *h;
	PGresult *res;
	int row, rows, done;
} feed;

static int feed_next(void *vctx, docket_replay_input *in)
{
	feed *fd = vctx;
	const PGresult *res;
	const char *type;
	const fleet_call *c = NULL;
	call_key k;
	int r, error;

	if (fd->row >= fd->rows) {
		PQclear(fd->res);
		fd->res = NULL;
		fd->row = fd->rows = 0;
		if (fd->done)
			return 1;
		if ((error = fleet_fetch_chunk(&fd->res, fd->f, EVENTS_CHUNK, "fleet replay")) < 0)
			return error;
		fd->rows = PQntuples(fd->res);
		if (fd->rows == 0) {
			fd->done = 1;
			return 1;
		}
	}
	res = fd->res;
	r = fd->row++;
	in->seq = fleet_bin_u64(res, r, 0);
	in->payload = (const uint8_t *)PQgetvalue(res, r, 1);
	in->len = (size_t)PQgetlength(res, r, 1);
	type = PQgetvalue(res, r, 2);
	if ((strcmp(type, "tool.intent") == 0 || strcmp(type, "approval.settled") == 0) &&
	    !PQgetisnull(res, r, 3) && !PQgetisnull(res, r, 4)) {
		if ((error = key_of(fd->h, res, r, 3, &k)) < 0)
			return error;
		c = history_find(fd->h, &k);
	}
	history_say(fd->h, c, in);
	in->intent = PQgetisnull(res, r, 5) ? NULL : (const uint8_t *)PQgetvalue(res, r, 5);
	in->intent_len = (size_t)PQgetlength(res, r, 5);
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

/* The first read, whole, into h; docket_cur is closed after it. */
static int read_history(docket_fleet *f, history *h)
{
	PGresult *res = NULL;
	int rows, error;

	do {
		if ((error = fleet_fetch_chunk(&res, f, HISTORY_CHUNK, "fleet replay")) < 0)
			return error;
		rows = PQntuples(res);
		for (int i = 0; i < rows && error == 0; i++)
			error = on_history_row(h, res, i);
		PQclear(res);
	} while (error == 0 && rows > 0);
	return error < 0 ? error : fleet_exec(f, "CLOSE docket_cur");
}

static int replay_ledger(void *vctx, const docket_fleet_ledger *l)
{
	replay_ctx *c = vctx;
	const char *params[2] = { l->ledger_id, c->opts ? c->opts->session : NULL };
	history h = { DOCKET_HTAB_INIT(fleet_call), { { NULL }, 0 }, NULL, 0 };
	feed fd = { c->f, &h, NULL, 0, 0, 0 };
	tag_ctx tag = { l, c->cb, c->ctx };
	int error;

	if (c->on_ledger && (error = c->on_ledger(c->ctx, l)) != 0)
		return error;
	if ((error = fleet_cursor_open(c->f, history_sql, 2, params)) < 0)
		return error;
	if ((error = read_history(c->f, &h)) == 0 &&
	    (error = fleet_cursor_declare(c->f, events_sql, 2, params)) == 0)
		error = docket_replay_run_input(feed_next, &fd, c->base, c->policies, c->n, c->opts, tag_call, &tag);
	PQclear(fd.res);
	history_dispose(&h);
	return fleet_cursor_close(c->f, error);
}

int docket_fleet_replay(docket_fleet *f, const docket_fleet_filter *filter, const docket_policy *base,
			const docket_policy *const *policies, size_t n, const docket_replay_options *opts,
			docket_fleet_ledger_cb on_ledger, docket_replay_cb cb, void *ctx)
{
	replay_ctx c = { f, base, policies, n, opts, on_ledger, cb, ctx };

	return fleet_each_ledger(f, filter, replay_ledger, &c);
}
