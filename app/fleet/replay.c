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
 * One read, in seq order along the primary key: the few columns of every
 * event of a call fold into a hash table of calls (util/htab.h) that holds
 * what the history says, and the events replay reads are kept (their
 * payloads and call keys, in one buffer) until the read ends; then replay
 * runs over the kept events, each given its call's record. Until schema 5
 * this was two reads of the ledger (the history, then the events), and
 * until schema 4 a sort and an aggregate per call on the server.
 */
#include <string.h>

#include "fleet_internal.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/htab.h"

/* Every event of the ledger, in seq order: the columns of a call's
 * history (SCAN_*), and the payload of the events replay reads. No filter
 * on the type (comparing it took a third of the server's time): a type
 * neither reads (runtime.started) says nothing (history_add). */
static const char scan_sql[] =
	"SELECT seq, type, session, invocation, verdict, status,"
	" CASE WHEN type = 'approval.settled' THEN event ->> 'result' END,"
	" CASE WHEN type IN ('session.opened', 'session.closed', 'policy.revised', 'tool.intent',"
	" 'approval.settled') THEN payload END"
	" FROM docket_events WHERE ledger_id = $1 AND ($2::text IS NULL OR session = $2)"
	" ORDER BY seq";

enum { SCAN_SEQ, SCAN_TYPE, SCAN_SESSION, SCAN_INVOCATION, SCAN_VERDICT, SCAN_STATUS, SCAN_RESULT, SCAN_PAYLOAD };

/* Rows a FETCH brings: each is a round trip, which on a loaded machine
 * costs a wait for the CPU on both sides; a row is about 40 bytes, or
 * the payload of an intent, a settlement or a session event (a few
 * hundred bytes). */
#define SCAN_CHUNK 50000

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
	size_t intent_at;          /* the first intent's payload: its offset in the kept events + 1 (0: none) */
	uint32_t intent_len;
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
	docket_buf kept;           /* the events replay reads: kept_event, payload, call key; ... */
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
	docket_buf_dispose(&h->kept);
}

/* The key of row r's call in h->key. */
static int key_of(history *h, const PGresult *res, int r, call_key *out)
{
	const int session_col = SCAN_SESSION;
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

/* A row of a call's history into the call's record c. */
static int history_add(history *h, fleet_call *c, const PGresult *res, int r)
{
	uint64_t seq = fleet_bin_u64(res, r, SCAN_SEQ);
	const char *type = PQgetvalue(res, r, SCAN_TYPE);
	int error = 0;

	if (strcmp(type, "approval.requested") == 0) {
		c->requests++;
		if (seq > c->last_req)
			c->last_req = seq;
	} else if (strcmp(type, "approval.settled") == 0) {
		if (seq > c->last_settle) {
			c->last_settle = seq;
			error = name_index(&h->names, opt_text(res, r, SCAN_RESULT), &c->result);
		}
	} else if (strcmp(type, "recovery.action") == 0) {
		if (!PQgetisnull(res, r, SCAN_VERDICT) && (c->evaluated_seq == 0 || seq < c->evaluated_seq)) {
			c->evaluated_seq = seq;
			error = name_index(&h->names, PQgetvalue(res, r, SCAN_VERDICT), &c->evaluated);
		}
	} else if (strcmp(type, "tool.dispatched") == 0) {
		c->dispatched = 1;
	} else if (strcmp(type, "tool.completed") == 0) {
		if (c->outcome_seq == 0 || seq < c->outcome_seq) {
			c->outcome_seq = seq;
			error = name_index(&h->names, opt_text(res, r, SCAN_STATUS), &c->outcome);
		}
	}
	return error;
}

/* What replay reads of an event, kept until the read ends: this header,
 * then the payload, then the call key (tool.intent and approval.settled of
 * a call). Read back with memcpy (the buffer keeps no alignment). */
typedef struct kept_event {
	uint64_t seq;
	uint32_t len;              /* payload bytes */
	uint32_t klen;             /* call key bytes (0: the event has no call) */
	unsigned char for_session; /* an approved_for_session settlement: replay is given the call's intent */
} kept_event;

static int keep(history *h, const PGresult *res, int r, const call_key *k, fleet_call *c)
{
	const char *type = PQgetvalue(res, r, SCAN_TYPE);
	const char *result = opt_text(res, r, SCAN_RESULT);
	kept_event e;
	int error;

	memset(&e, 0, sizeof(e));
	e.seq = fleet_bin_u64(res, r, SCAN_SEQ);
	e.len = (uint32_t)PQgetlength(res, r, SCAN_PAYLOAD);
	e.klen = c ? (uint32_t)k->len : 0;
	e.for_session = c && result && strcmp(result, "approved_for_session") == 0;
	if (c && c->intent_at == 0 && strcmp(type, "tool.intent") == 0) {
		c->intent_at = h->kept.len + sizeof(e) + 1;
		c->intent_len = e.len;
	}
	if ((error = docket_buf_put(&h->kept, &e, sizeof(e))) < 0 ||
	    (error = docket_buf_put(&h->kept, PQgetvalue(res, r, SCAN_PAYLOAD), e.len)) < 0)
		return error;
	return c ? docket_buf_put(&h->kept, k->p, k->len) : 0;
}

/* One row of scan_sql: into its call's record, and kept when replay reads
 * it. */
static int on_scan_row(history *h, const PGresult *res, int r)
{
	const char *type = PQgetvalue(res, r, SCAN_TYPE);
	int replayed = !PQgetisnull(res, r, SCAN_PAYLOAD), settled = strcmp(type, "approval.settled") == 0;
	call_key k = { NULL, 0 };
	fleet_call *c = NULL;
	int error;

	if (!PQgetisnull(res, r, SCAN_SESSION) && !PQgetisnull(res, r, SCAN_INVOCATION)) {
		if ((error = key_of(h, res, r, &k)) < 0 || (error = history_call(h, &k, &c)) < 0 ||
		    (error = history_add(h, c, res, r)) < 0)
			return error;
		if (!settled && strcmp(type, "tool.intent") != 0)
			c = NULL;  /* replay reads no call of the other events */
	}
	return replayed ? keep(h, res, r, &k, c) : 0;
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

/* Replay pulls the kept events, one at a time. */
typedef struct feed {
	const history *h;
	size_t at;
} feed;

static int feed_next(void *vctx, docket_replay_input *in)
{
	feed *fd = vctx;
	const char *p = fd->h->kept.ptr + fd->at;
	const fleet_call *c = NULL;
	kept_event e;
	call_key k;

	if (fd->at >= fd->h->kept.len)
		return 1;
	memcpy(&e, p, sizeof(e));
	in->seq = e.seq;
	in->payload = (const uint8_t *)p + sizeof(e);
	in->len = e.len;
	fd->at += sizeof(e) + e.len + e.klen;
	if (e.klen) {
		k.p = p + sizeof(e) + e.len;
		k.len = e.klen;
		c = history_find(fd->h, &k);
	}
	history_say(fd->h, c, in);
	in->intent = NULL;
	in->intent_len = 0;
	if (e.for_session && c && c->intent_at) {
		in->intent = (const uint8_t *)fd->h->kept.ptr + c->intent_at - 1;
		in->intent_len = c->intent_len;
	}
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

/* The ledger's one read, whole, into h, in its own snapshot. */
static int read_ledger(docket_fleet *f, history *h, const char *const *params)
{
	PGresult *res = NULL;
	int rows, error;

	if ((error = fleet_cursor_open(f, scan_sql, 2, params)) < 0)
		return error;
	do {
		if ((error = fleet_fetch_chunk(&res, f, SCAN_CHUNK, "fleet replay")) < 0)
			break;
		rows = PQntuples(res);
		for (int i = 0; i < rows && error == 0; i++)
			error = on_scan_row(h, res, i);
		PQclear(res);
		res = NULL;
	} while (error == 0 && rows == SCAN_CHUNK);  /* fewer: the last chunk */
	PQclear(res);
	return fleet_cursor_close(f, error);
}

static int replay_ledger(void *vctx, const docket_fleet_ledger *l)
{
	replay_ctx *c = vctx;
	const char *params[2] = { l->ledger_id, c->opts ? c->opts->session : NULL };
	history h = { DOCKET_HTAB_INIT(fleet_call), { { NULL }, 0 }, DOCKET_BUF_INIT, NULL, 0 };
	feed fd = { &h, 0 };
	tag_ctx tag = { l, c->cb, c->ctx };
	int error;

	if (c->on_ledger && (error = c->on_ledger(c->ctx, l)) != 0)
		return error;
	if ((error = read_ledger(c->f, &h, params)) == 0)
		error = docket_replay_run_input(feed_next, &fd, c->base, c->policies, c->n, c->opts, tag_call, &tag);
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
