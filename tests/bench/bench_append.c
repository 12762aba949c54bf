/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_append.c: durable append throughput and bytes per event, docket
 * against raw LMDB and SQLite, side by side in one process run (issue 2).
 *
 * One realistic event stream (gen_mix.c) is generated as JSON lines and
 * parsed into json_t once, before anything is timed. Then, for 1, 16 and 256
 * events per commit, each configuration appends a prefix of that stream to a
 * fresh store in its own directory on the same file system:
 *
 *   docket (JSON)        docket_ledger_append_json: validation included
 *   docket (pre-parsed)  ledger_append on events converted beforehand with
 *                        docket_event_from_json (conversion not timed)
 *   raw LMDB             put(be64 seq -> the event's JSON line), MDB_APPEND,
 *                        default durable commit, same batches
 *   SQLite WAL FULL      journal_mode=WAL, synchronous=FULL, one table
 *                        (seq INTEGER PRIMARY KEY, body BLOB), BEGIN/COMMIT
 *                        per batch, prepared INSERT
 *
 * Every configuration runs `--rounds` times on fresh stores, the order
 * reversed every other round (A B C D, D C B A) so that drift of the disk
 * (fsync latency, page cache, other load) cancels out of the ratios. A
 * configuration's figure is its total events over its total time.
 *
 * Bytes per event are measured on the largest docket ledger (the whole
 * stream) against the same events as JSON lines, and that file compressed
 * whole with zstd -3 (as the zstd command does: level 3, with checksum).
 *
 * Checks (exit 1 when one fails; speed is never checked): every store holds
 * exactly the events appended to it, and docket_ledger_verify passes on every
 * docket ledger of the first round.
 */
#include <errno.h>
#include <jansson.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#if DOCKET_BENCH_SQLITE
#include "bench_sqlite.h"
#endif

#include "bench_util.h"
#include "docket/ledger.h"
#include "gen_mix.h"
#include "ledger/event.h"
#include "ledger/ledger_internal.h"
#include "util/buf.h"

#define MAP_SIZE ((size_t)1 << 30)   /* same initial map for docket and LMDB */
#define MAX_ROUNDS 16

/* ---- configurations ---- */

enum config { C_DOCKET_JSON, C_DOCKET_PRE, C_LMDB, C_SQLITE, C_COUNT };

static const char *const config_name[C_COUNT] = {
	"docket (JSON)", "docket (pre-parsed)", "raw LMDB", "SQLite WAL FULL",
};
static const char *const config_key[C_COUNT] = { "docket_json", "docket_preparsed", "lmdb", "sqlite" };

#define NBATCH 3
static const size_t batch_sizes[NBATCH] = { 1, 16, 256 };

typedef struct options {
	size_t events;         /* the stream, and the 256-per-commit runs */
	size_t events1;        /* 1 per commit */
	size_t events16;       /* 16 per commit */
	unsigned rounds;
	const char *dir;
	const char *dump;
	const char *only;      /* run just this configuration (config_key) */
	uint64_t seed;
	int quick;
	int keep;              /* leave the stores on disk (inspection) */
} options;

typedef struct result {
	int ran;
	size_t events;
	size_t commits;
	uint64_t wall_ns;
	uint64_t cpu_ns;
	uint64_t sys_ns;       /* the kernel's part of cpu_ns */
	bench_lat lat;         /* per-commit latencies */
} result;

typedef struct mix {
	docket_buf text;       /* JSON lines */
	size_t n;
	const char **line;     /* start of each line in text */
	size_t *len;           /* its length without '\n' */
	json_t **json;
	gen_mix_stats stats;
} mix;

typedef struct bytes_report {
	int have;
	size_t events;
	uint64_t jsonl, jsonl_zstd, docket_log_json;
	docket_ledger_info info;
	uint64_t docket_file, lmdb_file, sqlite_file;
	uint32_t dictionaries;
} bytes_report;

static double rate(const result *r)
{
	return r->wall_ns ? (double)r->events * 1e9 / (double)r->wall_ns : 0;
}

/* When a timed run started: wall, CPU and system time. */
typedef struct run_start {
	uint64_t wall, cpu, sys;
} run_start;

static void run_begin(run_start *s)
{
	s->wall = bench_now_ns();
	s->cpu = bench_cpu_ns();
	s->sys = bench_cpu_sys_ns();
}

/* A timed run of n events that started at `s` is over. */
static void run_done(result *res, size_t n, const run_start *s)
{
	res->cpu_ns += bench_cpu_ns() - s->cpu;
	res->sys_ns += bench_cpu_sys_ns() - s->sys;
	res->wall_ns += bench_now_ns() - s->wall;
	res->events += n;
	res->ran = 1;
}

/* ---- the event stream ---- */

static int mix_build(mix *m, const options *o)
{
	size_t cap = 0, pos = 0;
	json_error_t jerr;

	memset(m, 0, sizeof(*m));
	if (gen_mix(&m->text, o->events, o->seed, &m->stats) < 0) {
		fprintf(stderr, "bench_append: cannot generate the event mix\n");
		return -1;
	}
	while (pos < m->text.len) {
		const char *nl = memchr(m->text.ptr + pos, '\n', m->text.len - pos);
		size_t len = nl ? (size_t)(nl - (m->text.ptr + pos)) : m->text.len - pos;

		if (m->n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			const char **l = realloc(m->line, ncap * sizeof(*l));
			size_t *ln;
			json_t **j;

			if (l)
				m->line = l;
			ln = realloc(m->len, ncap * sizeof(*ln));
			if (ln)
				m->len = ln;
			j = realloc(m->json, ncap * sizeof(*j));
			if (j)
				m->json = j;
			if (!l || !ln || !j)
				return -1;
			cap = ncap;
		}
		m->line[m->n] = m->text.ptr + pos;
		m->len[m->n] = len;
		if (!(m->json[m->n] = json_loadb(m->text.ptr + pos, len, 0, &jerr))) {
			fprintf(stderr, "bench_append: generated line %zu does not parse: %s\n", m->n + 1, jerr.text);
			return -1;
		}
		m->n++;
		pos += len + 1;
	}
	return 0;
}

static void mix_dispose(mix *m)
{
	for (size_t i = 0; i < m->n; i++)
		json_decref(m->json[i]);
	free(m->json);
	free(m->line);
	free(m->len);
	docket_buf_dispose(&m->text);
}

/* ---- docket ---- */

static int count_log_json(void *ctx, uint64_t seq, json_t *ev)
{
	uint64_t *total = ctx;
	size_t n = json_dumpb(ev, NULL, 0, JSON_COMPACT);

	(void)seq;
	*total += n + 1;
	return 0;
}

static int run_docket(const mix *m, int pre, size_t batch, size_t n, const char *dir,
		      result *res, int check, bytes_report *bytes)
{
	docket_open_options oo = DOCKET_OPEN_OPTIONS_INIT;
	docket_append_result *ar = calloc(batch, sizeof(*ar));
	docket_event **events = NULL;
	docket_ledger *l = NULL;
	docket_ledger_info info;
	char *path = bench_path_join(dir, "ledger");
	run_start rs;
	uint64_t t;
	int error = -1;

	if (!ar || !path)
		goto cleanup;
	oo.flags = DOCKET_OPEN_CREATE;
	oo.map_size = MAP_SIZE;
	if (docket_ledger_open(&l, path, &oo) < 0) {
		bench_docket_fail("docket_ledger_open");
		goto cleanup;
	}
	if (pre) {
		if (!(events = calloc(n, sizeof(*events))))
			goto cleanup;
		for (size_t i = 0; i < n; i++) {
			if (docket_event_from_json(&events[i], m->json[i]) < 0) {
				bench_docket_fail("docket_event_from_json");
				goto cleanup;
			}
		}
	}
	run_begin(&rs);
	for (size_t i = 0; i < n; i += batch) {
		size_t k = n - i < batch ? n - i : batch;
		int rc;

		t = bench_now_ns();
		rc = pre ? ledger_append(l, events + i, k, ar)
			 : docket_ledger_append_json(l, m->json + i, k, ar);
		bench_lat_push(&res->lat, bench_now_ns() - t);
		if (rc < 0) {
			bench_docket_fail(pre ? "ledger_append" : "docket_ledger_append_json");
			goto cleanup;
		}
		for (size_t j = 0; j < k; j++) {
			if (ar[j].duplicate || ar[j].seq != i + j + 1) {
				bench_fail("docket append", "an event was not appended at the expected seq");
				goto cleanup;
			}
		}
		res->commits++;
	}
	run_done(res, n, &rs);
	if (docket_ledger_info_get(l, &info) < 0) {
		bench_docket_fail("docket_ledger_info_get");
		goto cleanup;
	}
	if (info.events != n) {
		bench_fail("docket ledger", "does not hold every appended event");
		goto cleanup;
	}
	if (check) {
		docket_verify_report rep;

		if (docket_ledger_verify(l, &rep) < 0) {
			bench_docket_fail("docket_ledger_verify");
			goto cleanup;
		}
		if (!rep.ok || rep.events_checked != n) {
			bench_fail("docket_ledger_verify", rep.problem);
			goto cleanup;
		}
	}
	if (bytes) {
		char *data = bench_path_join(path, "data.mdb");

		bytes->info = info;
		bytes->docket_file = data ? bench_file_size(data) : 0;
		free(data);
		bytes->docket_log_json = 0;
		if (docket_ledger_read_json(l, NULL, count_log_json, &bytes->docket_log_json) < 0) {
			bench_docket_fail("docket_ledger_read_json");
			goto cleanup;
		}
	}
	error = 0;
cleanup:
	if (events) {
		for (size_t i = 0; i < n; i++)
			docket_event_free(events[i]);
		free(events);
	}
	docket_ledger_free(l);
	free(path);
	free(ar);
	return error;
}

/* ---- raw LMDB ---- */

static int lmdb_fail(const char *what, int rc)
{
	bench_fail(what, mdb_strerror(rc));
	return -1;
}

static int run_lmdb(const mix *m, size_t batch, size_t n, const char *dir, result *res,
		    bytes_report *bytes)
{
	MDB_env *env = NULL;
	MDB_txn *txn = NULL;
	MDB_dbi dbi;
	MDB_stat st;
	run_start rs;
	uint64_t t;
	int rc, error = -1;

	if ((rc = mdb_env_create(&env)) != 0)
		return lmdb_fail("mdb_env_create", rc);
	if ((rc = mdb_env_set_mapsize(env, MAP_SIZE)) != 0 ||
	    (rc = mdb_env_open(env, dir, MDB_NOTLS, 0600)) != 0) {
		lmdb_fail("mdb_env_open", rc);
		goto cleanup;
	}
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0 ||
	    (rc = mdb_dbi_open(txn, NULL, 0, &dbi)) != 0 ||
	    (rc = mdb_txn_commit(txn)) != 0) {
		txn = NULL;
		lmdb_fail("mdb_dbi_open", rc);
		goto cleanup;
	}
	txn = NULL;
	run_begin(&rs);
	for (size_t i = 0; i < n; i += batch) {
		size_t k = n - i < batch ? n - i : batch;

		t = bench_now_ns();
		if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) != 0) {
			txn = NULL;
			lmdb_fail("mdb_txn_begin", rc);
			goto cleanup;
		}
		for (size_t j = i; j < i + k; j++) {
			uint8_t key[8];
			MDB_val kv = { sizeof(key), key }, vv = { m->len[j], (void *)m->line[j] };

			docket_be64_put(key, j + 1);
			if ((rc = mdb_put(txn, dbi, &kv, &vv, MDB_APPEND)) != 0) {
				lmdb_fail("mdb_put", rc);
				goto cleanup;
			}
		}
		rc = mdb_txn_commit(txn);
		txn = NULL;
		bench_lat_push(&res->lat, bench_now_ns() - t);
		if (rc != 0) {
			lmdb_fail("mdb_txn_commit", rc);
			goto cleanup;
		}
		res->commits++;
	}
	run_done(res, n, &rs);
	if ((rc = mdb_env_stat(env, &st)) != 0) {
		lmdb_fail("mdb_env_stat", rc);
		goto cleanup;
	}
	if (st.ms_entries != n) {
		bench_fail("raw LMDB", "does not hold every appended event");
		goto cleanup;
	}
	if (bytes) {
		char *data = bench_path_join(dir, "data.mdb");

		bytes->lmdb_file = data ? bench_file_size(data) : 0;
		free(data);
	}
	error = 0;
cleanup:
	if (txn)
		mdb_txn_abort(txn);
	mdb_env_close(env);
	return error;
}

/* ---- SQLite ---- */

#if DOCKET_BENCH_SQLITE
static int run_sqlite(const mix *m, size_t batch, size_t n, const char *dir, result *res,
		      bytes_report *bytes)
{
	char *path = bench_path_join(dir, "bench.db");
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL, *cnt = NULL;
	run_start rs;
	uint64_t t;
	int error = -1;

	if (!path)
		return -1;
	if (bench_sqlite_open(path, &db, &ins) < 0)
		goto cleanup;
	run_begin(&rs);
	for (size_t i = 0; i < n; i += batch) {
		size_t k = n - i < batch ? n - i : batch;

		t = bench_now_ns();
		if (bench_sql_exec(db, "BEGIN") < 0)
			goto cleanup;
		for (size_t j = i; j < i + k; j++)
			if (bench_sqlite_insert(db, ins, j + 1, m->line[j], m->len[j]) < 0)
				goto cleanup;
		if (bench_sql_exec(db, "COMMIT") < 0)
			goto cleanup;
		bench_lat_push(&res->lat, bench_now_ns() - t);
		res->commits++;
	}
	run_done(res, n, &rs);
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM events", -1, &cnt, NULL) != SQLITE_OK ||
	    sqlite3_step(cnt) != SQLITE_ROW || (size_t)sqlite3_column_int64(cnt, 0) != n) {
		bench_fail("SQLite", "does not hold every appended event");
		goto cleanup;
	}
	sqlite3_finalize(cnt);
	cnt = NULL;
	if (bytes) {
		if (bench_sql_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)") < 0)
			goto cleanup;
		bytes->sqlite_file = bench_file_size(path);
	}
	error = 0;
cleanup:
	sqlite3_finalize(cnt);
	sqlite3_finalize(ins);
	sqlite3_close(db);
	free(path);
	return error;
}
#endif

/* ---- one configuration, one round ---- */

static int run_one(const options *o, const mix *m, enum config c, size_t batch, size_t n,
		   result *res, int first_round, bytes_report *bytes)
{
	char *dir = bench_tempdir(o->dir, "docket-bench-XXXXXX");
	int error = -1;
	bytes_report *b = first_round && batch == batch_sizes[NBATCH - 1] ? bytes : NULL;

	if (!dir)
		return -1;
	bench_settle_disk(o->dir);
	switch (c) {
	case C_DOCKET_JSON:
		error = run_docket(m, 0, batch, n, dir, res, first_round, b);
		break;
	case C_DOCKET_PRE:
		error = run_docket(m, 1, batch, n, dir, res, first_round, NULL);
		break;
	case C_LMDB:
		error = run_lmdb(m, batch, n, dir, res, b);
		break;
	case C_SQLITE:
#if DOCKET_BENCH_SQLITE
		error = run_sqlite(m, batch, n, dir, res, b);
#else
		error = 0;
#endif
		break;
	default:
		break;
	}
	return error;
}

/* ---- report ---- */

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_ratio(double r)
{
	if (r > 0)
		printf(" %8.2fx", r);
	else
		printf(" %9s", "-");
}

static const char *met(int ok)
{
	return ok ? "MET" : "MISSED";
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_append [--events N] [--events-1 N] [--events-16 N] [--rounds R]\n"
		"                    [--dir DIR] [--seed S] [--dump FILE] [--only CONFIG] [--keep] [--quick]\n"
		"  --events N     events in the mix, appended at 256 per commit and measured\n"
		"                 for bytes per event (default 50000)\n"
		"  --events-1 N   events appended at 1 per commit (default 500)\n"
		"  --events-16 N  events appended at 16 per commit (default 3200)\n"
		"  --rounds R     fresh stores per configuration, order reversed each round (default 2)\n"
		"  --dir DIR      where the stores go (default $TMPDIR, else /tmp)\n"
		"  --dump FILE    also write the event mix as JSON lines to FILE\n"
		"  --only CONFIG  run one configuration: docket_json, docket_preparsed, lmdb\n"
		"                 or sqlite (for profiling)\n"
		"  --keep         leave the stores on disk and name them (inspection)\n"
		"  --quick        tiny sizes, one round: a smoke test\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_args(options *o, int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	size_t v;

	o->events = 50000;
	o->events1 = 500;
	o->events16 = 3200;
	o->rounds = 2;
	o->dir = tmp && *tmp ? tmp : "/tmp";
	o->seed = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (bench_common_flag(a, &o->quick, &o->keep))
			continue;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (!val) {
			usage(stderr);
			return -1;
		}
		i++;
		if (strcmp(a, "--dir") == 0)
			o->dir = val;
		else if (strcmp(a, "--dump") == 0)
			o->dump = val;
		else if (strcmp(a, "--only") == 0)
			o->only = val;
		else if (parse_size(val, &v) < 0) {
			fprintf(stderr, "bench_append: %s wants a positive number\n", a);
			return -1;
		} else if (strcmp(a, "--events") == 0)
			o->events = v;
		else if (strcmp(a, "--events-1") == 0)
			o->events1 = v;
		else if (strcmp(a, "--events-16") == 0)
			o->events16 = v;
		else if (strcmp(a, "--rounds") == 0)
			o->rounds = v > MAX_ROUNDS ? MAX_ROUNDS : (unsigned)v;
		else if (strcmp(a, "--seed") == 0)
			o->seed = v;
		else {
			usage(stderr);
			return -1;
		}
	}
	if (o->quick) {
		o->events = 700;
		o->events1 = 20;
		o->events16 = 160;
		o->rounds = 1;
	}
	return 0;
}

static uint64_t zstd_file_size(const mix *m)
{
	size_t bound = ZSTD_compressBound(m->text.len), n;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	void *dst = malloc(bound);
	uint64_t out = 0;

	if (cctx && dst &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3)) &&
	    !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1))) {
		n = ZSTD_compress2(cctx, dst, bound, m->text.ptr, m->text.len);
		if (!ZSTD_isError(n))
			out = n;
	}
	free(dst);
	ZSTD_freeCCtx(cctx);
	return out;
}

int main(int argc, char **argv)
{
	static result res[C_COUNT][NBATCH];
	bytes_report bytes;
	options o;
	mix m;
	size_t counts[NBATCH];
	uint64_t t_start = bench_now_ns();
	int have_sqlite = DOCKET_BENCH_SQLITE;

	bench_init("bench_append");
	memset(&o, 0, sizeof(o));
	memset(&bytes, 0, sizeof(bytes));
	if (parse_args(&o, argc, argv) < 0)
		return 2;
	if (mix_build(&m, &o) < 0)
		return 1;
	if (o.dump) {
		FILE *f = fopen(o.dump, "w");

		if (!f || fwrite(m.text.ptr, 1, m.text.len, f) != m.text.len || fclose(f) != 0) {
			fprintf(stderr, "bench_append: cannot write %s\n", o.dump);
			return 1;
		}
	}
	counts[0] = o.events1 < m.n ? o.events1 : m.n;
	counts[1] = o.events16 < m.n ? o.events16 : m.n;
	counts[2] = m.n;
	bytes.events = m.n;
	bytes.jsonl = m.text.len;
	bytes.jsonl_zstd = zstd_file_size(&m);

	for (int b = 0; b < NBATCH; b++) {
		for (unsigned r = 0; r < o.rounds; r++) {
			for (int k = 0; k < C_COUNT; k++) {
				enum config c = (enum config)(r % 2 ? C_COUNT - 1 - k : k);

				if ((c == C_SQLITE && !have_sqlite) || (o.only && strcmp(o.only, config_key[c]) != 0))
					continue;
				if (run_one(&o, &m, c, batch_sizes[b], counts[b], &res[c][b], r == 0, &bytes) < 0)
					bench_fail(config_name[c], "run failed");
			}
		}
	}
	bytes.have = bytes.info.events == m.n;

	/* ---- the table ---- */
	const gen_mix_stats *s = &m.stats;
	double calls = s->calls ? (double)s->calls : 1;

	printf("docket bench_append: %zu events of a realistic mix (seed %llu): %zu sessions, %zu tool calls\n",
	       m.n, (unsigned long long)o.seed, s->sessions, s->calls);
	printf("  verdicts: %.1f%% allowed, %.1f%% approval_required (%zu granted, %zu refused), %.1f%% denied;"
	       " %zu dispatched calls failed\n",
	       100.0 * (double)s->allowed / calls, 100.0 * (double)s->approval_required / calls,
	       s->approved, s->approval_refused, 100.0 * (double)s->denied / calls, s->failed);
	printf("  stores in %s; %u round%s per configuration (order reversed each round); map size %zu MiB\n",
	       o.dir, o.rounds, o.rounds == 1 ? "" : "s", MAP_SIZE >> 20);
	if (!have_sqlite)
		printf("  SQLite baseline NOT BUILT: sqlite3 was not found by pkg-config at configure time\n");
	printf("\nDurable appends (events/s = events / wall time; p50/p99: one commit's latency; cpu: user+sys\n"
	       "of this process per event (sys: the kernel's part) and as a share of wall time; ratios are\n"
	       "this row over the baseline, >1 is faster)\n");
	printf("%5s  %-20s %7s %7s %10s %8s %8s %9s %6s %5s %9s %9s\n", "batch", "configuration", "events",
	       "commits", "events/s", "p50 ms", "p99 ms", "cpu us/ev", "sys", "cpu%", "vs LMDB", "vs SQLite");
	for (int b = 0; b < NBATCH; b++) {
		for (int c = 0; c < C_COUNT; c++) {
			result *r = &res[c][b];

			if (!r->ran)
				continue;
			printf("%5zu  %-20s %7zu %7zu %10.0f %8.3f %8.3f %9.1f %6.1f %4.0f%%", batch_sizes[b],
			       config_name[c], r->events, r->commits, rate(r), bench_lat_ms(&r->lat, 50), bench_lat_ms(&r->lat, 99),
			       (double)r->cpu_ns / 1e3 / (double)r->events, (double)r->sys_ns / 1e3 / (double)r->events,
			       100.0 * (double)r->cpu_ns / (double)(r->wall_ns ? r->wall_ns : 1));
			print_ratio(c == C_LMDB ? 0 : ratio(rate(r), rate(&res[C_LMDB][b])));
			print_ratio(c == C_SQLITE || !res[C_SQLITE][b].ran ? 0 : ratio(rate(r), rate(&res[C_SQLITE][b])));
			printf("\n");
		}
	}

	double ev = bytes.events ? (double)bytes.events : 1;
	double jl = (double)bytes.jsonl / ev;

	printf("\nBytes per event (all %zu events; ratio = this row / JSON lines)\n", bytes.events);
	printf("  %-44s %10.1f %8.3f\n", "JSON lines (the input events)", jl, 1.0);
	printf("  %-44s %10.1f %8.3f\n", "JSON lines, whole file zstd -3", (double)bytes.jsonl_zstd / ev,
	       (double)bytes.jsonl_zstd / ev / jl);
	if (bytes.have) {
		double pl = (double)bytes.info.payload_bytes / ev, fr = (double)bytes.info.frame_bytes / ev;
		double df = (double)bytes.docket_file / ev;

		printf("  %-44s %10.1f %8.3f\n", "docket log --json lines (+seq,epoch,hash)",
		       (double)bytes.docket_log_json / ev, (double)bytes.docket_log_json / ev / jl);
		printf("  %-44s %10.1f %8.3f\n", "docket payload (protobuf, before zstd)", pl, pl / jl);
		printf("  %-44s %10.1f %8.3f\n", "docket frames (header+hash+zstd body)", fr, fr / jl);
		printf("  %-44s %10.1f %8.3f\n", "docket data.mdb (events+projections+B-tree)", df, df / jl);
		printf("  (docket: %u trained dictionar%s; frame = payload x %.3f)\n", bytes.info.dictionaries,
		       bytes.info.dictionaries == 1 ? "y" : "ies", pl > 0 ? fr / pl : 0);
	}
	if (bytes.lmdb_file)
		printf("  %-44s %10.1f %8.3f\n", "raw LMDB data.mdb (JSON values)", (double)bytes.lmdb_file / ev,
		       (double)bytes.lmdb_file / ev / jl);
	if (bytes.sqlite_file)
		printf("  %-44s %10.1f %8.3f\n", "SQLite database file (JSON blobs)", (double)bytes.sqlite_file / ev,
		       (double)bytes.sqlite_file / ev / jl);

	double g1 = ratio(rate(&res[C_DOCKET_JSON][0]), rate(&res[C_LMDB][0]));
	double g1p = ratio(rate(&res[C_DOCKET_PRE][0]), rate(&res[C_LMDB][0]));
	double g256 = rate(&res[C_DOCKET_JSON][2]), g256p = rate(&res[C_DOCKET_PRE][2]);
	double gb = bytes.have ? (double)bytes.docket_file / (double)bytes.jsonl : 0;
	double gbf = bytes.have ? (double)bytes.info.frame_bytes / (double)bytes.jsonl : 0;

	printf("\nGoals (issue 2)%s\n", o.quick ? " -- --quick sizes, not meaningful" : "");
	printf("  1 event/commit within 10%% of raw LMDB:  JSON %.2fx, pre-parsed %.2fx of LMDB   %s\n",
	       g1, g1p, met(g1 >= 0.9));
	printf("  >= 200k events/s at 256/commit:         JSON %.0f/s, pre-parsed %.0f/s   %s\n",
	       g256, g256p, met(g256 >= 200000));
	printf("  <= 1/4 the bytes of JSON lines:         data.mdb %.3f, frames %.3f   %s (data.mdb), %s (frames)\n",
	       gb, gbf, met(bytes.have && gb <= 0.25), met(bytes.have && gbf <= 0.25));
	printf("  checks: every store holds all its events%s: %s; total run %.1f s\n",
	       ", docket_ledger_verify on every first-round docket ledger",
	       bench_failures() ? "FAILED" : "ok", (double)(bench_now_ns() - t_start) / 1e9);

	/* ---- one machine-readable line ---- */
	json_t *out = json_pack("{s:s,s:I,s:I,s:i,s:b,s:b}", "bench", "append", "events", (json_int_t)m.n,
				"seed", (json_int_t)o.seed, "rounds", (int)o.rounds, "sqlite", have_sqlite,
				"quick", o.quick);
	json_t *runs = json_array(), *goals;

	for (int b = 0; b < NBATCH; b++) {
		for (int c = 0; c < C_COUNT; c++) {
			result *r = &res[c][b];

			if (!r->ran)
				continue;
			json_array_append_new(runs, json_pack("{s:s,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
				"config", config_key[c], "batch", (json_int_t)batch_sizes[b],
				"events", (json_int_t)r->events, "commits", (json_int_t)r->commits,
				"events_per_s", rate(r), "commit_ms_p50", bench_lat_ms(&r->lat, 50),
				"commit_ms_p99", bench_lat_ms(&r->lat, 99), "cpu_us_per_event", (double)r->cpu_ns / 1e3 / (double)r->events,
				"sys_us_per_event", (double)r->sys_ns / 1e3 / (double)r->events,
				"vs_lmdb", c == C_LMDB ? 1.0 : ratio(rate(r), rate(&res[C_LMDB][b])),
				"vs_sqlite", res[C_SQLITE][b].ran ? ratio(rate(r), rate(&res[C_SQLITE][b])) : 0.0));
		}
	}
	json_object_set_new(out, "runs", runs);
	json_object_set_new(out, "bytes_per_event", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
		"jsonl", jl, "jsonl_zstd3", (double)bytes.jsonl_zstd / ev,
		"docket_log_json", (double)bytes.docket_log_json / ev,
		"docket_payload", (double)bytes.info.payload_bytes / ev,
		"docket_frames", (double)bytes.info.frame_bytes / ev,
		"docket_data_mdb", (double)bytes.docket_file / ev,
		"lmdb_data_mdb", (double)bytes.lmdb_file / ev, "sqlite_db", (double)bytes.sqlite_file / ev));
	goals = json_pack("{s:f,s:b,s:f,s:b,s:f,s:f,s:b}", "one_per_commit_vs_lmdb", g1, "one_per_commit_met", g1 >= 0.9,
			  "batch256_events_per_s", g256, "batch256_met", g256 >= 200000,
			  "data_mdb_vs_jsonl", gb, "frames_vs_jsonl", gbf, "bytes_met", bytes.have && gb <= 0.25);
	json_object_set_new(out, "goals", goals);
	bench_print_result(out);
	for (int c = 0; c < C_COUNT; c++)
		for (int b = 0; b < NBATCH; b++)
			bench_lat_dispose(&res[c][b].lat);
	bench_tempdirs_dispose(o.keep);
	mix_dispose(&m);
	return bench_failures() ? 1 : 0;
}
