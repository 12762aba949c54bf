/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_sqlite.h: the SQLite baseline the storage benchmarks share: a
 * database in WAL mode with synchronous=FULL, one table (seq INTEGER
 * PRIMARY KEY, body BLOB), a prepared INSERT. Failures go to bench_fail.
 */
#ifndef DOCKET_BENCH_SQLITE_H
#define DOCKET_BENCH_SQLITE_H

#include <sqlite3.h>
#include <stdint.h>

#include "bench_util.h"

static inline int bench_sql_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		bench_fail(sql, msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Open `path` as the baseline store; *db and *ins to be closed/finalized
 * by the caller (also on failure). */
static inline int bench_sqlite_open(const char *path, sqlite3 **db, sqlite3_stmt **ins)
{
	*ins = NULL;
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		bench_fail("sqlite3_open_v2", *db ? sqlite3_errmsg(*db) : "out of memory");
		return -1;
	}
	if (bench_sql_exec(*db, "PRAGMA journal_mode=WAL") < 0 || bench_sql_exec(*db, "PRAGMA synchronous=FULL") < 0 ||
	    bench_sql_exec(*db, "CREATE TABLE events (seq INTEGER PRIMARY KEY, body BLOB NOT NULL)") < 0)
		return -1;
	if (sqlite3_prepare_v2(*db, "INSERT INTO events (seq, body) VALUES (?, ?)", -1, ins, NULL) != SQLITE_OK) {
		bench_fail("sqlite3_prepare_v2", sqlite3_errmsg(*db));
		return -1;
	}
	return 0;
}

/* One row (seq, body) through the prepared INSERT. */
static inline int bench_sqlite_insert(sqlite3 *db, sqlite3_stmt *ins, uint64_t seq, const void *body, size_t len)
{
	int ok = sqlite3_bind_int64(ins, 1, (sqlite3_int64)seq) == SQLITE_OK &&
		 sqlite3_bind_blob(ins, 2, body, (int)len, SQLITE_STATIC) == SQLITE_OK &&
		 sqlite3_step(ins) == SQLITE_DONE;

	sqlite3_reset(ins);
	if (!ok)
		bench_fail("sqlite insert", sqlite3_errmsg(db));
	return ok ? 0 : -1;
}

#endif
