/* SPDX-License-Identifier: Apache-2.0 */
/*
 * query.c: reading the central store for the fleet commands and replay.
 *
 * Large reads go through a server-side cursor in one REPEATABLE READ, READ
 * ONLY transaction (one consistent snapshot, memory of one chunk), with
 * binary results (payloads come back as the bytes that were shipped).
 * Events are rebuilt from their stored payloads with the ledger's own
 * decoder, so `fleet log --json` prints exactly what `docket log --json`
 * printed on the machine.
 */
#include <string.h>

#include "fleet_internal.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define FETCH_CHUNK 5000

int fleet_each_ledger(docket_fleet *f, const docket_fleet_filter *filter, docket_fleet_ledger_cb fn, void *ctx)
{
	static const char sql[] =
		"SELECT ledger_id, host, owner, high_seq, checkpoints, encode(head, 'hex') FROM docket_ledgers"
		" WHERE ($1::text IS NULL OR ledger_id = $1) AND ($2::text IS NULL OR host = $2)"
		" ORDER BY ledger_id";
	const char *params[2] = { filter ? filter->ledger_id : NULL, filter ? filter->host : NULL };
	PGresult *res = NULL;
	int error;

	if ((error = fleet_schema_check(f)) < 0 || (error = fleet_query(&res, f, sql, 2, params)) < 0)
		return error;
	for (int i = 0; i < PQntuples(res) && error == 0; i++) {
		docket_fleet_ledger l;

		l.ledger_id = PQgetvalue(res, i, 0);
		l.host = PQgetvalue(res, i, 1);
		l.owner = PQgetvalue(res, i, 2);
		l.high_seq = strtoull(PQgetvalue(res, i, 3), NULL, 10);
		l.checkpoints = strtoull(PQgetvalue(res, i, 4), NULL, 10);
		l.head = PQgetvalue(res, i, 5);
		error = fn(ctx, &l);
	}
	PQclear(res);
	return error > 0 ? 0 : error;
}

int docket_fleet_ledgers(docket_fleet *f, const docket_fleet_filter *filter, docket_fleet_ledger_cb cb,
			 void *ctx)
{
	return fleet_each_ledger(f, filter, cb, ctx);
}

/* ---- cursors ---- */

int fleet_cursor_declare(docket_fleet *f, const char *sql, int n, const char *const *params)
{
	docket_buf decl = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_buf_printf(&decl, "DECLARE docket_cur NO SCROLL CURSOR FOR %s", sql)) < 0)
		return error;
	error = fleet_command(f, decl.ptr, n, params);
	docket_buf_dispose(&decl);
	return error;
}

int fleet_cursor_open(docket_fleet *f, const char *sql, int n, const char *const *params)
{
	int error;

	/* one round trip for both (on a loaded machine each is a wait) */
	if ((error = fleet_exec(f, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY;"
				" SET LOCAL cursor_tuple_fraction = 1")) < 0 ||
	    (error = fleet_cursor_declare(f, sql, n, params)) < 0)
		fleet_rollback(f);
	return error;
}

int fleet_fetch_chunk(PGresult **out, docket_fleet *f, int rows, const char *what)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "FETCH %d FROM docket_cur", rows);
	*out = PQexecParams(f->conn, sql, 0, NULL, NULL, NULL, NULL, 1);
	if (PQresultStatus(*out) == PGRES_TUPLES_OK)
		return 0;
	return fleet_result_error(*out, f, what);
}

int fleet_cursor_close(docket_fleet *f, int error)
{
	if (error >= 0)
		error = fleet_exec(f, "COMMIT") < 0 ? docket_error_last()->code : error;
	if (error < 0)
		fleet_rollback(f);
	return error;
}

int fleet_cursor_rows(docket_fleet *f, int chunk, fleet_row_cb cb, void *ctx)
{
	PGresult *res = NULL;
	int rows, error;

	do {
		if ((error = fleet_fetch_chunk(&res, f, chunk, "fleet database")) < 0)
			break;
		rows = PQntuples(res);
		for (int i = 0; i < rows && error == 0; i++)
			error = cb(ctx, res, i);
		PQclear(res);
		res = NULL;
	} while (error == 0 && rows == chunk);  /* fewer: the last chunk */
	PQclear(res);
	return error;
}

int fleet_cursor_each(docket_fleet *f, const char *sql, int n, const char *const *params, fleet_row_cb cb,
		      void *ctx)
{
	int error;

	if ((error = fleet_cursor_open(f, sql, n, params)) < 0)
		return error;
	return fleet_cursor_close(f, fleet_cursor_rows(f, FETCH_CHUNK, cb, ctx));
}

uint64_t fleet_bin_u64(const PGresult *res, int row, int c)
{
	return PQgetisnull(res, row, c) || PQgetlength(res, row, c) != 8
		? 0 : docket_be64_get((const uint8_t *)PQgetvalue(res, row, c));
}

/* ---- events ---- */

typedef struct events_ctx {
	docket_fleet *f;
	const char *session;
	const docket_fleet_ledger *ledger;
	docket_fleet_event_cb cb;
	void *ctx;
} events_ctx;

static int on_event_row(void *vctx, const PGresult *res, int row)
{
	events_ctx *c = vctx;
	docket_event *ev = NULL;
	json_t *obj = NULL;
	uint64_t seq = fleet_bin_u64(res, row, 0);
	int error;

	if (PQgetlength(res, row, 2) != LEDGER_HASH_LEN)
		return docket_error_set(DOCKET_ECORRUPT, "ledger %s, seq %llu: bad stored hash",
					c->ledger->ledger_id, (unsigned long long)seq);
	if ((error = event_unpack(&ev, (const uint8_t *)PQgetvalue(res, row, 1),
				  (size_t)PQgetlength(res, row, 1))) == 0 &&
	    (error = ledger_event_to_json(&obj, seq, ev, (const uint8_t *)PQgetvalue(res, row, 2))) == 0)
		error = c->cb(c->ctx, c->ledger, seq, obj);
	if (error < 0 && error != DOCKET_ENOMEM)
		docket_error_prefix("ledger %s, seq %llu: ", c->ledger->ledger_id, (unsigned long long)seq);
	json_decref(obj);
	docket_event_free(ev);
	return error;
}

static int ledger_events(void *vctx, const docket_fleet_ledger *l)
{
	static const char sql[] =
		"SELECT seq, payload, hash FROM docket_events WHERE ledger_id = $1"
		" AND ($2::text IS NULL OR session = $2) ORDER BY seq";
	events_ctx *c = vctx;
	const char *params[2] = { l->ledger_id, c->session };

	c->ledger = l;
	return fleet_cursor_each(c->f, sql, 2, params, on_event_row, c);
}

int docket_fleet_events(docket_fleet *f, const docket_fleet_filter *filter, const char *session,
			docket_fleet_event_cb cb, void *ctx)
{
	events_ctx c = { f, session, NULL, cb, ctx };

	return fleet_each_ledger(f, filter, ledger_events, &c);
}

/* ---- sessions and pending calls, from the events ---- */

/*
 * A local ledger keeps these as projections (its sessions and pending
 * indexes); centrally they are aggregates over the events, per ledger, in
 * the order the local indexes have (byte order of the keys).
 */
static const char sessions_sql[] =
	"SELECT session,"
	" coalesce((array_agg(event ->> 'runtime') FILTER (WHERE type = 'session.opened'))[1], ''),"
	" coalesce((array_agg(event ->> 'parent') FILTER (WHERE type = 'session.opened'))[1], ''),"
	" (array_agg(event ->> 'time' ORDER BY seq))[1], (array_agg(event ->> 'time' ORDER BY seq DESC))[1],"
	" coalesce((array_agg(event ->> 'format' ORDER BY seq DESC) FILTER (WHERE type = 'policy.revised'))[1], ''),"
	" coalesce(min(seq) FILTER (WHERE type = 'session.opened'), 0),"
	" coalesce(max(seq) FILTER (WHERE type = 'session.closed'), 0),"
	" count(*), count(*) FILTER (WHERE type = 'tool.intent'),"
	" count(*) FILTER (WHERE type = 'tool.intent') - count(*) FILTER (WHERE type = 'tool.completed'),"
	" coalesce(max(policy_revision) FILTER (WHERE type = 'policy.revised'), 0)"
	" FROM docket_events WHERE ledger_id = $1 AND session IS NOT NULL AND ($2::text IS NULL OR session = $2)"
	" GROUP BY session ORDER BY session COLLATE \"C\"";

/*
 * The pending state as the ledger names it (ledger.h): the open request
 * first, then a dispatch without outcome, then by the verdict the call has
 * now (the last one an event gave it: the intent's decision, an approval
 * request, a superseding settlement, a recovery evaluation; a dispatch
 * with none of these means allowed) and the answer to its last request.
 */
static const char pending_sql[] =
	"WITH c AS ("
	" SELECT session, invocation,"
	"  min(seq) FILTER (WHERE type = 'tool.intent') AS intent_seq, max(seq) AS last_seq,"
	"  (array_agg(tool) FILTER (WHERE type = 'tool.intent'))[1] AS tool,"
	"  (array_agg(event ->> 'recovery') FILTER (WHERE type = 'tool.intent'))[1] AS recovery,"
	"  (array_agg(CASE WHEN type = 'approval.requested' THEN 'approval_required' ELSE verdict END ORDER BY seq DESC)"
	"    FILTER (WHERE type = 'approval.requested' OR (verdict IS NOT NULL AND type IN"
	"      ('tool.intent', 'approval.settled', 'recovery.action'))))[1] AS given,"
	"  max(seq) FILTER (WHERE type = 'approval.requested') AS last_req,"
	"  max(seq) FILTER (WHERE type = 'approval.settled') AS last_settle,"
	"  (array_agg(event ->> 'request' ORDER BY seq DESC) FILTER (WHERE type = 'approval.requested'))[1] AS req,"
	"  (array_agg(event ->> 'result' ORDER BY seq DESC) FILTER (WHERE type = 'approval.settled'))[1] AS result,"
	"  count(*) FILTER (WHERE type = 'tool.dispatched') AS attempts,"
	"  (array_agg(event ->> 'token' ORDER BY seq DESC) FILTER (WHERE type = 'tool.dispatched'))[1] AS token,"
	"  bool_or(type = 'tool.completed') AS done"
	" FROM docket_events WHERE ledger_id = $1 AND invocation IS NOT NULL AND ($2::text IS NULL OR session = $2)"
	" GROUP BY session, invocation),"
	" v AS (SELECT *, coalesce(given, CASE WHEN attempts > 0 THEN 'allowed' END) AS verdict,"
	"  CASE WHEN last_settle > coalesce(last_req, 0) THEN result END AS answer,"
	"  last_req > coalesce(last_settle, 0) AS open FROM c WHERE NOT done AND intent_seq IS NOT NULL)"
	" SELECT session, invocation, coalesce(tool, ''),"
	"  CASE WHEN open THEN 'awaiting_approval'"
	"       WHEN attempts > 0 THEN 'in_doubt'"
	"       WHEN verdict = 'allowed' THEN 'ready'"
	"       WHEN verdict IN ('denied', 'unsupported') THEN 'refused'"
	"       WHEN answer IN ('approved', 'approved_for_session') THEN 'ready'"
	"       WHEN verdict = 'approval_required' THEN"
	"         CASE WHEN answer IS NOT NULL AND answer <> 'superseded' THEN 'refused' ELSE 'needs_approval' END"
	"       WHEN answer IS NOT NULL THEN 'refused' ELSE 'undecided' END,"
	"  coalesce(verdict, ''), coalesce(recovery, 'never_auto_retry'),"
	"  CASE WHEN open THEN req ELSE '' END, coalesce(token, ''), attempts, intent_seq, last_seq"
	" FROM v ORDER BY session COLLATE \"C\", invocation COLLATE \"C\"";

typedef struct rows_ctx {
	docket_fleet *f;
	const char *session;
	const char *sql;
	fleet_row_cb each;
	const docket_fleet_ledger *ledger;
	docket_fleet_session_cb on_session;
	docket_fleet_pending_cb on_pending;
	void *ctx;
} rows_ctx;

static uint64_t text_u64(const PGresult *res, int row, int c)
{
	return strtoull(PQgetvalue(res, row, c), NULL, 10);
}

static int on_session_row(void *vctx, const PGresult *res, int r)
{
	rows_ctx *c = vctx;
	docket_session_info s;

	s.session = PQgetvalue(res, r, 0);
	s.runtime = PQgetvalue(res, r, 1);
	s.parent = PQgetvalue(res, r, 2);
	s.first_time = PQgetvalue(res, r, 3);
	s.last_time = PQgetvalue(res, r, 4);
	s.policy_format = PQgetvalue(res, r, 5);
	s.opened_seq = text_u64(res, r, 6);
	s.closed_seq = text_u64(res, r, 7);
	s.events = text_u64(res, r, 8);
	s.invocations = text_u64(res, r, 9);
	s.pending = text_u64(res, r, 10);
	s.policy_revision = (uint32_t)text_u64(res, r, 11);
	return c->on_session(c->ctx, c->ledger, &s);
}

static int on_pending_row(void *vctx, const PGresult *res, int r)
{
	rows_ctx *c = vctx;
	docket_pending_info p;

	p.session = PQgetvalue(res, r, 0);
	p.invocation = PQgetvalue(res, r, 1);
	p.tool = PQgetvalue(res, r, 2);
	p.state = PQgetvalue(res, r, 3);
	p.verdict = PQgetvalue(res, r, 4);
	p.recovery = PQgetvalue(res, r, 5);
	p.open_request = PQgetvalue(res, r, 6);
	p.token = PQgetvalue(res, r, 7);
	p.attempts = (uint32_t)text_u64(res, r, 8);
	p.intent_seq = text_u64(res, r, 9);
	p.last_seq = text_u64(res, r, 10);
	return c->on_pending(c->ctx, c->ledger, &p);
}

/* c->sql with ($1 ledger, $2 session) for one ledger, c->each on its rows. */
static int ledger_rows(void *vctx, const docket_fleet_ledger *l)
{
	rows_ctx *c = vctx;
	const char *params[2] = { l->ledger_id, c->session };
	PGresult *rows = NULL;
	int error;

	c->ledger = l;
	if ((error = fleet_query(&rows, c->f, c->sql, 2, params)) < 0)
		return error;
	for (int r = 0; r < PQntuples(rows) && error == 0; r++)
		error = c->each(c, rows, r);
	PQclear(rows);
	return error;
}

int docket_fleet_sessions(docket_fleet *f, const docket_fleet_filter *filter, const char *session,
			  docket_fleet_session_cb cb, void *ctx)
{
	rows_ctx c = { f, session, sessions_sql, on_session_row, NULL, cb, NULL, ctx };

	return fleet_each_ledger(f, filter, ledger_rows, &c);
}

int docket_fleet_pending(docket_fleet *f, const docket_fleet_filter *filter, const char *session,
			 docket_fleet_pending_cb cb, void *ctx)
{
	rows_ctx c = { f, session, pending_sql, on_pending_row, NULL, NULL, cb, ctx };

	return fleet_each_ledger(f, filter, ledger_rows, &c);
}
