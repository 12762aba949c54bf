/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet_internal.h: what the fleet module's files share.
 *
 * conn.c owns the libpq connection and maps its failures to docket errors;
 * schema.c the central schema and its migrations; ship.c sending a local
 * ledger; verify.c the central re-check; query.c reading the central store
 * for the fleet commands; replay.c what a fleet replay reads.
 */
#ifndef DOCKET_FLEET_INTERNAL_H
#define DOCKET_FLEET_INTERNAL_H

#include <libpq-fe.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "fleet/fleet.h"

struct docket_fleet {
	PGconn *conn;
	char *conninfo;
};

/* ---- conn.c ---- */

/* Run `sql` with text parameters; *out holds the tuples (PQclear it).
 * A server error is DOCKET_ESTORAGE (or DOCKET_EINVALID for bad input the
 * server rejected, SQLSTATE class 22), with the server's message. */
int fleet_query(PGresult **out, docket_fleet *f, const char *sql, int n, const char *const *params);
/* The same for a command whose result is not needed. */
int fleet_command(docket_fleet *f, const char *sql, int n, const char *const *params);
/* A parameterless statement (BEGIN, COMMIT, a migration script). */
int fleet_exec(docket_fleet *f, const char *sql);
/* ROLLBACK, ignoring failures (the connection may be gone). */
void fleet_rollback(docket_fleet *f);
/* The docket error for a failed result. */
int fleet_result_error(const PGresult *res, docket_fleet *f, const char *what);

/* ---- ship.c ---- */

/* The decoded columns of docket_events, as read from an event's JSON (the
 * object ledger_event_to_json gives): the shipper sends them, fleet verify
 * compares them with what it derives from the payload (the server derives
 * them the same way, docket_event_row in schema.c). Borrowed from `ev`. */
typedef struct fleet_columns {
	const char *time, *type, *session, *invocation, *tool, *verdict, *status, *actor;
	int has_revision;        /* 0: policy_revision is NULL */
	int32_t revision;
} fleet_columns;

void fleet_event_columns(fleet_columns *out, const json_t *ev);

/* ---- schema.c ---- */

/* What each call's history says (a local ledger's invocation record), one
 * row per call, aggregated from rows of `src` (a FROM item with the columns
 * ledger_id, seq, time, type, session, invocation, verdict, status and
 * result, the settlement's): the approval requests, the last settlement and
 * its result, the first recovery evaluation with a verdict and the first
 * outcome, whether it was dispatched, the first intent's key (seq, time),
 * whether an answer was approved_for_session. The columns of docket_calls
 * (schema 7) in their order: the ingest function keeps it from the rows it
 * derived, migration 7 fills it, fleet verify recomputes it. */
#define FLEET_CALL_TYPES                                                                                   \
	"('tool.intent', 'approval.requested', 'approval.settled', 'recovery.action', 'tool.dispatched',"  \
	" 'tool.completed')"
#define FLEET_CALLS_OF(src)                                                                                \
	"SELECT ledger_id, session, invocation,"                                                           \
	" count(*) FILTER (WHERE type = 'approval.requested')::integer AS requests,"                      \
	" max(seq) FILTER (WHERE type = 'approval.requested') AS last_request,"                           \
	" max(seq) FILTER (WHERE type = 'approval.settled') AS last_settled,"                             \
	" (array_agg(result ORDER BY seq DESC) FILTER (WHERE type = 'approval.settled'))[1] AS result,"    \
	" min(seq) FILTER (WHERE type = 'recovery.action' AND verdict IS NOT NULL) AS evaluated_seq,"      \
	" (array_agg(verdict ORDER BY seq) FILTER (WHERE type = 'recovery.action' AND verdict IS NOT NULL))[1]" \
	" AS evaluated,"                                                                                   \
	" min(seq) FILTER (WHERE type = 'tool.completed') AS outcome_seq,"                                \
	" (array_agg(status ORDER BY seq) FILTER (WHERE type = 'tool.completed'))[1] AS outcome,"          \
	" bool_or(type = 'tool.dispatched') AS dispatched,"                                                \
	" min(seq) FILTER (WHERE type = 'tool.intent') AS intent_seq,"                                    \
	" (array_agg(time ORDER BY seq) FILTER (WHERE type = 'tool.intent'))[1] AS intent_time,"           \
	" bool_or(type = 'approval.settled' AND result IS NOT DISTINCT FROM 'approved_for_session') AS for_session" \
	" FROM " src " WHERE session IS NOT NULL AND invocation IS NOT NULL AND type IN " FLEET_CALL_TYPES  \
	" GROUP BY ledger_id, session, invocation"
/* The events a replay reads (lib/replay: sessions, policies, intents,
 * settlements): the predicate of the partial index docket_events_replayed
 * (schema 7), in seq order by ledger. */
#define FLEET_REPLAYED_TYPES "('session.opened', 'session.closed', 'policy.revised', 'tool.intent', 'approval.settled')"
/* docket_events' rows (those `where` selects) as FLEET_CALLS_OF's source
 * (a settlement's result read from its event) */
#define FLEET_EVENTS_AS_CALL_ROWS(where)                                                                   \
	"(SELECT ledger_id, seq, time, type, session, invocation, verdict, status,"                       \
	" CASE WHEN type = 'approval.settled' THEN event ->> 'result' END AS result FROM docket_events " where ") e"

int fleet_schema_latest(void);
/* 0 when the database has no docket schema. */
int fleet_schema_version(docket_fleet *f, int *out);
/* 0 when the schema is exactly the version this docket knows. */
int fleet_schema_check(docket_fleet *f);

/* ---- query.c ---- */

/* Cursors: one read-only REPEATABLE READ snapshot (fleet_cursor_open
 * begins it and declares docket_cur over `sql`, text parameters; a second
 * cursor in the same snapshot is fleet_cursor_declare after CLOSE
 * docket_cur), FETCHed in chunks of `rows` with binary results (*out:
 * PQclear it),
 * and fleet_cursor_close: COMMIT after `error` (< 0: ROLLBACK), the first
 * error returned. */
int fleet_cursor_open(docket_fleet *f, const char *sql, int n, const char *const *params);
int fleet_cursor_declare(docket_fleet *f, const char *sql, int n, const char *const *params);
int fleet_fetch_chunk(PGresult **out, docket_fleet *f, int rows, const char *what);
int fleet_cursor_close(docket_fleet *f, int error);
typedef int (*fleet_row_cb)(void *ctx, const PGresult *res, int row);
/* `cb` on every row the open cursor has left, fetched `chunk` rows at a
 * time (the cursor stays open). */
int fleet_cursor_rows(docket_fleet *f, int chunk, fleet_row_cb cb, void *ctx);
/* `sql` through a cursor of its own snapshot, `cb` on every row. */
int fleet_cursor_each(docket_fleet *f, const char *sql, int n, const char *const *params, fleet_row_cb cb,
		      void *ctx);
/* A binary int8 column (0 when NULL). */
uint64_t fleet_bin_u64(const PGresult *res, int row, int c);

/* `fn` for every selected ledger, in ledger-id order, after checking the
 * schema version; a non-zero return stops (negative: the error returned,
 * positive: 0 is returned). */
int fleet_each_ledger(docket_fleet *f, const docket_fleet_filter *filter, docket_fleet_ledger_cb fn, void *ctx);

#endif
