/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conn.c: the libpq connection. The connection string (a URI or key=value
 * pairs) and the PG* environment variables are read by libpq itself, TLS
 * included (sslmode, sslrootcert, ...); docket adds nothing to them but an
 * application_name. A string libpq cannot parse is bad input
 * (DOCKET_EINVALID, exit 2); a server that cannot be reached or refuses the
 * login is DOCKET_ESTORAGE (exit 3), with libpq's own message.
 */
#include <stdlib.h>
#include <string.h>

#include "fleet_internal.h"
#include "util/alloc.h"
#include "util/error.h"

static void quiet(void *arg, const char *message);

/* libpq's messages end in a newline (sometimes two lines); keep one line. */
static const char *one_line(char *buf, size_t n, const char *msg)
{
	size_t len;

	snprintf(buf, n, "%s", msg ? msg : "");
	len = strlen(buf);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	return buf;
}

static int check_conninfo(const char *conninfo)
{
	PQconninfoOption *opts;
	char *err = NULL;
	char line[512];
	int error = 0;

	if (!(opts = PQconninfoParse(conninfo, &err))) {
		error = docket_error_set(DOCKET_EINVALID, "bad connection string: %s",
					 err ? one_line(line, sizeof(line), err) : "out of memory");
		PQfreemem(err);
		return error;
	}
	PQconninfoFree(opts);
	return 0;
}

int docket_fleet_connect(docket_fleet **out, const char *conninfo)
{
	static const char *const keys[] = { "dbname", "application_name", "fallback_application_name", NULL };
	const char *values[4];
	docket_fleet *f = NULL;
	char line[512];
	int error;

	*out = NULL;
	if (!conninfo)
		conninfo = "";
	if ((error = check_conninfo(conninfo)) < 0)
		return error;
	if (!(f = docket_calloc(1, sizeof(*f))))
		return docket_error_set_oom();
	/* dbname carries the whole string (expand_dbname): a URI or key=value
	 * pairs, then the PG* variables, then libpq's defaults */
	values[0] = conninfo;
	values[1] = NULL;
	values[2] = "docket";
	values[3] = NULL;
	f->conn = PQconnectdbParams(keys, values, 1);
	if (!f->conn) {
		error = docket_error_set_oom();
		goto fail;
	}
	if (PQstatus(f->conn) != CONNECTION_OK) {
		error = docket_error_set(DOCKET_ESTORAGE, "cannot connect to the fleet database: %s",
					 one_line(line, sizeof(line), PQerrorMessage(f->conn)));
		goto fail;
	}
	PQsetNoticeProcessor(f->conn, quiet, NULL);
	*out = f;
	return 0;
fail:
	docket_fleet_free(f);
	return error;
}

/* Server notices ("relation already exists, skipping") are not for the user. */
static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

void docket_fleet_free(docket_fleet *f)
{
	if (!f)
		return;
	if (f->conn)
		PQfinish(f->conn);
	docket_free(f);
}

int docket_fleet_alive(docket_fleet *f)
{
	return f && f->conn && PQstatus(f->conn) == CONNECTION_OK;
}

int fleet_result_error(const PGresult *res, docket_fleet *f, const char *what)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char line[768];
	int code = DOCKET_ESTORAGE;

	if (!msg)
		msg = PQerrorMessage(f->conn);
	if (state && strncmp(state, "22", 2) == 0)
		code = DOCKET_EINVALID;
	return docket_error_set(code, "%s: %s%s%s%s", what, one_line(line, sizeof(line), msg),
				state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "");
}

int fleet_query(PGresult **out, docket_fleet *f, const char *sql, int n, const char *const *params)
{
	PGresult *res = PQexecParams(f->conn, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	int error;

	*out = NULL;
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		*out = res;
		return 0;
	}
	error = fleet_result_error(res, f, "fleet database");
	PQclear(res);
	return error;
}

int fleet_command(docket_fleet *f, const char *sql, int n, const char *const *params)
{
	PGresult *res = NULL;
	int error = fleet_query(&res, f, sql, n, params);

	PQclear(res);
	return error;
}

int fleet_exec(docket_fleet *f, const char *sql)
{
	PGresult *res = PQexec(f->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int error = 0;

	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
		error = fleet_result_error(res, f, "fleet database");
	PQclear(res);
	return error;
}

void fleet_rollback(docket_fleet *f)
{
	if (f && f->conn && PQstatus(f->conn) == CONNECTION_OK &&
	    PQtransactionStatus(f->conn) != PQTRANS_IDLE)
		PQclear(PQexec(f->conn, "ROLLBACK"));
}
