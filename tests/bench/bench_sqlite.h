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
#include <time.h>

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

/*
 * The bulk baseline: `n` lines inserted into a new database at `path` in one
 * transaction. *seconds (wall) and, when cpu is not NULL, *cpu (this thread's
 * CPU) run from the open to the COMMIT, as a bulk `docket record` runs from
 * its start to its commit.
 */
static inline int bench_sqlite_one_txn(const char *path, const char *const *line, const size_t *len, size_t n,
				       double *seconds, double *cpu)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	struct timespec c0, c1;
	double t0 = bench_now_s();
	int error = -1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	if (bench_sqlite_open(path, &db, &ins) < 0 || bench_sql_exec(db, "BEGIN") < 0)
		goto cleanup;
	for (size_t i = 0; i < n; i++)
		if (bench_sqlite_insert(db, ins, i + 1, line[i], len[i]) < 0)
			goto cleanup;
	if (bench_sql_exec(db, "COMMIT") < 0)
		goto cleanup;
	*seconds = bench_now_s() - t0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	if (cpu)
		*cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	error = 0;
cleanup:
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return error;
}

#endif
