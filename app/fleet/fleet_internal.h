/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fleet_internal.h: what the fleet module's files share.
 *
 * conn.c owns the libpq connection and maps its failures to docket errors;
 * schema.c the central schema and its migrations; ship.c sending a local
 * ledger; verify.c the central re-check; query.c reading the central store
 * for the fleet commands and replay.
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

int fleet_schema_latest(void);
/* 0 when the database has no docket schema. */
int fleet_schema_version(docket_fleet *f, int *out);
/* 0 when the schema is exactly the version this docket knows. */
int fleet_schema_check(docket_fleet *f);

/* ---- query.c ---- */

/* `fn` for every selected ledger, in ledger-id order, after checking the
 * schema version; a non-zero return stops (negative: the error returned,
 * positive: 0 is returned). */
int fleet_each_ledger(docket_fleet *f, const docket_fleet_filter *filter, docket_fleet_ledger_cb fn, void *ctx);

#endif
